/* pmi2_api.c - libpmi2.so.0: the PMI-2 client API (include/pmi2.h).
 *
 * Contract:
 *   A clean-room implementation of the API and ABI of Slurm's libpmi2
 *   (contribs/pmi2): the 22 functions listed in doc/clients.md, speaking the
 *   PMI-2 wire protocol to the server found through PMI_FD or PMI_PORT, or
 *   answering locally as a singleton (rank 0 of 1, appnum -1) when neither
 *   is set.  Behaviour that programs may depend on follows Slurm's library:
 *   PMI2_Abort exits with `flag`, PMI2_KVS_Get reports truncation with a
 *   negative *vallen, PMI2_Info_GetSize is the job size, PMI2_Job_GetRank is
 *   PMI_RANK (else the rank the server gave).
 *
 * Notes:
 *   - Wire sequence of PMI2_Init: the PMI-1 line
 *     "cmd=init pmi_version=2 pmi_subversion=0", the PMI-1 reply
 *     response_to_init (rc must be 0, the version 2 if given), then the
 *     record "fullinit" with pmijobid (PMI_JOBID, if set), srcid (PMI_ID) or
 *     else pmirank (PMI_RANK, if set), and threaded=FALSE, exactly like
 *     Slurm's library, so Slurm's server accepts us.
 *   - Every reply must carry an integer rc; a missing rc, a reply to another
 *     command, a malformed record or EOF is an error return (PMI2_ERR_OTHER),
 *     never a hang or a crash.  rc != 0 is PMI2_ERR_OTHER too; errmsg is
 *     printed when PMI2_DEBUG/PMI_DEBUG is set.
 *   - Thread safety: one process-wide mutex (call_lock) is held around
 *     every request/response exchange and around the cached state, so any
 *     function may be called from any thread; calls are serialised (a
 *     thread waiting in PMI2_KVS_Fence blocks the others).  We therefore
 *     send threaded=FALSE and no thrid.  PMI2_Abort takes only the write
 *     lock of the connection so it is never stuck behind a fence.
 *   - Global state (the connection and the cached rank/size) is unavoidable:
 *     the PMI-2 API has no handle.
 *   - Singleton mode keeps puts, node attributes and published names in a
 *     local store so a one-process program behaves as the only rank of a
 *     job; spawn and job connection fail (no process manager).
 *
 * Caveats:
 *   - Values are sent with ';' escaped as ";;" (the codec does it) like
 *     Slurm's library; Slurm's server does not unescape, so values with ';'
 *     are not portable to it.
 *
 * See also: include/pmi2.h, libpmi2/pcli.h, doc/wire.md, doc/clients.md
 *
 * One piece (about 880 lines): the 22 functions of one handle-less API share
 * the one connection, its lock, the cached job state and the singleton's local
 * store; each section (session, job, KVS, attributes, name service) is a few
 * short request/reply exchanges over pcli.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcli.h"
#include "pmi2.h"

enum state { ST_NONE = 0, ST_SINGLETON, ST_CONNECTED };

static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    enum state state;
    struct pcli c;
    int rank; /* PMI2_Job_GetRank */
    int size; /* PMI2_Info_GetSize */
    int appnum;
    int spawned;
} G;

#define LOCK() pthread_mutex_lock(&call_lock)
#define UNLOCK() pthread_mutex_unlock(&call_lock)

/* Send o (freed here) and read the reply `expect` into *m.  Returns
 * PMI2_SUCCESS with *m owned by the caller, or an error code with *m empty.
 * rc != 0 is printed if loud or debugging (a failed get is routine: MPICH's
 * barrier idiom asks for a key that does not exist). */
static int request_ex(struct pmi_out *o, const char *expect, struct pmi_msg *m, bool loud)
{
    int rc = 0;
    int r = pcli_call(&G.c, o, PMI_V2, expect, m, &rc);

    pmi_out_free(o);
    if (r < 0) {
        pcli_log(&G.c, "%s: %s", expect,
                 r == -EPIPE ? "connection to the PMI server closed" : strerror(-r));
        return PMI2_ERR_OTHER;
    }
    if (rc != 0) {
        if (loud || G.c.debug) {
            const char *e = pmi_msg_get(m, "errmsg");
            pcli_log(&G.c, "%s: rc=%d%s%s", expect, rc, e ? " " : "", e ? e : "");
        }
        pmi_msg_free(m);
        return PMI2_ERR_OTHER;
    }
    return PMI2_SUCCESS;
}

static int request(struct pmi_out *o, const char *expect, struct pmi_msg *m)
{
    return request_ex(o, expect, m, false);
}

/* "found" of a get-style reply: the boolean if present, else whether a
 * value came.  -1 if found is not a boolean. */
static int reply_found(const struct pmi_msg *m)
{
    bool b;
    int r = pmi_msg_get_bool(m, "found", &b);

    if (r == 0)
        return b;
    if (r == -ENOENT)
        return pmi_msg_get(m, "value") != NULL;
    return -1;
}

static int check_kv(const char *key, const char *value)
{
    if (!key || !*key)
        return PMI2_ERR_INVALID_KEY;
    if (strlen(key) > PMI2_MAX_KEYLEN)
        return PMI2_ERR_INVALID_KEY_LENGTH;
    if (!value)
        return PMI2_ERR_INVALID_VAL;
    if (strlen(value) > PMI2_MAX_VALLEN)
        return PMI2_ERR_INVALID_VAL_LENGTH;
    return PMI2_SUCCESS;
}

/* Singleton store keys: one-letter space prefix + name. */
static char *skey(char buf[], size_t len, char space, const char *name)
{
    snprintf(buf, len, "%c:%s", space, name);
    return buf;
}

/* ---- session ------------------------------------------------------------ */

static int handshake(void)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, v, r;
    const char *s;

    pmi_out_begin(&o, PMI_V1, "init");
    pmi_out_add(&o, "pmi_version", "2");
    pmi_out_add(&o, "pmi_subversion", "0");
    r = pcli_call(&G.c, &o, PMI_V1, "response_to_init", &m, &rc);
    pmi_out_free(&o);
    if (r < 0) {
        pcli_log(&G.c, "PMI2_Init: no valid answer to init (%s)",
                 r == -EPIPE ? "connection closed" : strerror(-r));
        return PMI2_ERR_OTHER;
    }
    r = pmi_msg_get_int(&m, "pmi_version", &v);
    pmi_msg_free(&m);
    if (rc != 0 || (r == 0 && v != 2)) {
        pcli_log(&G.c, "PMI2_Init: server refused PMI version 2.0 (rc=%d)", rc);
        return PMI2_ERR_OTHER;
    }

    pmi_out_begin(&o, PMI_V2, FULLINIT_CMD);
    if ((s = getenv("PMI_JOBID")))
        pmi_out_add(&o, PMIJOBID_KEY, s);
    if ((s = getenv("PMI_ID")))
        pmi_out_add(&o, SRCID_KEY, s);
    else if ((s = getenv("PMI_RANK")))
        pmi_out_add(&o, PMIRANK_KEY, s);
    pmi_out_add(&o, THREADED_KEY, FALSE_VAL);
    if ((r = request_ex(&o, FULLINITRESP_CMD, &m, true)) != PMI2_SUCCESS)
        return r;

    int rank, size, appnum, envrank;
    bool verbose = false;
    r = PMI2_SUCCESS;
    if (pmi_msg_get_int(&m, RANK_KEY, &rank) < 0 ||
        pmi_msg_get_int(&m, SIZE_KEY, &size) < 0 || size <= 0 || rank < 0 ||
        rank >= size) {
        pcli_log(&G.c, "PMI2_Init: fullinit-response without a valid rank and size");
        r = PMI2_ERR_OTHER;
    }
    if (pmi_msg_get_int(&m, PMIVERSION_KEY, &v) == 0 && v != 2) {
        pcli_log(&G.c, "PMI2_Init: server answered pmi-version=%d", v);
        r = PMI2_ERR_OTHER;
    }
    if (pmi_msg_get_int(&m, APPNUM_KEY, &appnum) < 0)
        appnum = -1;
    if (pmi_msg_get_bool(&m, PMIVERBOSE_KEY, &verbose) == 0 && verbose)
        G.c.debug = 1;
    G.spawned = pmi_msg_get(&m, SPAWNERJOBID_KEY) != NULL;
    pmi_msg_free(&m);
    if (r != PMI2_SUCCESS)
        return r;
    /* Like Slurm's library, PMI2_Job_GetRank reports PMI_RANK when that is
     * what we identified ourselves with; otherwise (PMI_ID, or no PMI_RANK)
     * the server's rank, where Slurm's would report 0. */
    G.rank =
        !getenv("PMI_ID") && pcli_env_int("PMI_RANK", &envrank) == 0 ? envrank : rank;
    G.c.rank = rank;
    G.size = size;
    G.appnum = appnum;
    return PMI2_SUCCESS;
}

int PMI2_Init(int *spawned, int *size, int *rank, int *appnum)
{
    int r = PMI2_SUCCESS, envrank;

    LOCK();
    if (G.state == ST_NONE) {
        pcli_init(&G.c, "pmi2");
        G.c.debug = pcli_env_debug();
        if (pcli_env_int("PMI_RANK", &envrank) == 0)
            G.c.rank = envrank;
        int e = pcli_connect(&G.c);
        if (e < 0) {
            pcli_log(&G.c, "PMI2_Init: cannot reach the PMI server through %s: %s",
                     getenv("PMI_FD") ? "PMI_FD" : "PMI_PORT", strerror(-e));
            r = PMI2_ERR_OTHER;
        } else if (G.c.fd < 0) {
            pcli_singleton_check(&G.c);
            G.state = ST_SINGLETON;
            G.rank = 0;
            G.size = 1;
            G.appnum = -1;
            G.spawned = 0;
        } else {
            r = handshake();
            if (r == PMI2_SUCCESS)
                G.state = ST_CONNECTED;
        }
        if (r != PMI2_SUCCESS)
            pcli_close(&G.c);
    }
    if (r == PMI2_SUCCESS) {
        if (spawned)
            *spawned = G.spawned;
        if (size)
            *size = G.size;
        if (rank)
            *rank = G.state == ST_CONNECTED ? G.c.rank : 0;
        if (appnum)
            *appnum = G.appnum;
    }
    UNLOCK();
    return r;
}

int PMI2_Finalize(void)
{
    int r = PMI2_SUCCESS;

    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else {
        if (G.state == ST_CONNECTED) {
            struct pmi_out o;
            struct pmi_msg m;
            pmi_out_begin(&o, PMI_V2, FINALIZE_CMD);
            r = request(&o, FINALIZERESP_CMD, &m);
            if (r == PMI2_SUCCESS)
                pmi_msg_free(&m);
        }
        pcli_close(&G.c);
        G.state = ST_NONE;
    }
    UNLOCK();
    return r;
}

int PMI2_Initialized(void)
{
    LOCK();
    int r = G.state != ST_NONE;
    UNLOCK();
    return r;
}

int PMI2_Abort(int flag, const char msg[])
{
    /* No call_lock: another thread may be blocked in a fence holding it.
     * pcli_write's own lock keeps the record whole. */
    if (G.state == ST_CONNECTED) {
        struct pmi_out o;
        pmi_out_begin(&o, PMI_V2, ABORT_CMD);
        pmi_out_add(&o, ISWORLD_KEY, flag ? TRUE_VAL : FALSE_VAL);
        pmi_out_add(&o, MSG_KEY, msg ? msg : "");
        if (pcli_send(&G.c, &o) < 0 && msg)
            fprintf(stderr, "PMI2_Abort: %s\n", msg);
        pmi_out_free(&o);
        if (G.c.debug && msg)
            pcli_log(&G.c, "aborting job: %s", msg);
    } else if (msg && *msg) {
        fprintf(stderr, "PMI2_Abort: %s\n", msg);
    }
    exit(flag);
}

/* ---- job ------------------------------------------------------------------ */

int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[],
                   const int maxprocs[], const int info_keyval_sizes[],
                   const struct MPID_Info *info_keyval_vectors[], int preput_keyval_size,
                   const struct MPID_Info *preput_keyval_vector[], char jobId[],
                   int jobIdSize, int errors[])
{
    struct pmi_out o;
    struct pmi_msg m;
    int r, total = 0;

    if (count <= 0 || !cmds || !maxprocs ||
        (preput_keyval_size > 0 && !preput_keyval_vector))
        return PMI2_ERR_INVALID_ARG;
    for (int i = 0; i < count; i++) {
        if (!cmds[i] || maxprocs[i] < 0 ||
            (argcs && argcs[i] > 0 && (!argvs || !argvs[i])))
            return PMI2_ERR_INVALID_ARG;
        total += maxprocs[i];
    }
    LOCK();
    if (G.state != ST_CONNECTED) {
        r = G.state == ST_NONE ? PMI2_ERR_INIT : PMI2_ERR_OTHER;
        if (r == PMI2_ERR_OTHER)
            pcli_log(&G.c, "PMI2_Job_Spawn: no process manager (singleton)");
        UNLOCK();
        return r;
    }
    pmi_out_begin(&o, PMI_V2, "spawn");
    pmi_out_addint(&o, "ncmds", count);
    pmi_out_addint(&o, "preputcount", preput_keyval_size);
    for (int i = 0; i < preput_keyval_size; i++) {
        const struct MPID_Info *pp = preput_keyval_vector[i];
        char k[32];
        snprintf(k, sizeof(k), "ppkey%d", i);
        pmi_out_add(&o, k, pp && pp->key ? pp->key : "");
        snprintf(k, sizeof(k), "ppval%d", i);
        pmi_out_add(&o, k, pp && pp->value ? pp->value : "");
    }
    for (int i = 0; i < count; i++) {
        int argc = argcs ? argcs[i] : 0;
        pmi_out_add(&o, "subcmd", cmds[i]);
        pmi_out_addint(&o, "maxprocs", maxprocs[i]);
        pmi_out_addint(&o, "argc", argc);
        for (int j = 0; j < argc; j++) {
            char k[32];
            snprintf(k, sizeof(k), "argv%d", j);
            pmi_out_add(&o, k, argvs[i][j] ? argvs[i][j] : "");
        }
        if (info_keyval_sizes) {
            int n = info_keyval_sizes[i];
            pmi_out_addint(&o, INFOKEYCOUNT_KEY, n);
            for (int j = 0; j < n && info_keyval_vectors && info_keyval_vectors[i]; j++) {
                const struct MPID_Info *in = &info_keyval_vectors[i][j];
                char k[32];
                snprintf(k, sizeof(k), "infokey%d", j);
                pmi_out_add(&o, k, in->key ? in->key : "");
                snprintf(k, sizeof(k), "infoval%d", j);
                pmi_out_add(&o, k, in->value ? in->value : "");
            }
        }
    }
    r = request_ex(&o, "spawn-response", &m, true); /* the refusal reaches the user */
    if (r == PMI2_SUCCESS) {
        const char *jid = pmi_msg_get(&m, JOBID_KEY);
        const char *codes = pmi_msg_get(&m, "errcodes");
        if (jobId && jobIdSize > 0)
            pcli_copy(jobId, jobIdSize, jid ? jid : "");
        if (errors) {
            int n = 0;
            if (!codes || !*codes) {
                memset(errors, 0, sizeof(int) * (size_t)total);
            } else if (pcli_parse_intlist(codes, errors, total, &n) < 0 || n != total) {
                pcli_log(&G.c, "PMI2_Job_Spawn: bad errcodes '%s'", codes);
                r = PMI2_ERR_OTHER;
            }
        }
        pmi_msg_free(&m);
    }
    UNLOCK();
    return r;
}

int PMI2_Job_GetId(char jobid[], int jobid_size)
{
    struct pmi_out o;
    struct pmi_msg m;
    int r;

    if (!jobid || jobid_size <= 0)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        char id[32];
        snprintf(id, sizeof(id), "%ld.0", (long)getpid());
        pcli_copy(jobid, jobid_size, id);
        r = PMI2_SUCCESS;
    } else {
        pmi_out_begin(&o, PMI_V2, JOBGETID_CMD);
        r = request(&o, JOBGETIDRESP_CMD, &m);
        if (r == PMI2_SUCCESS) {
            const char *id = pmi_msg_get(&m, JOBID_KEY);
            if (id)
                pcli_copy(jobid, jobid_size, id);
            else
                r = PMI2_ERR_OTHER;
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

int PMI2_Job_GetRank(int *rank)
{
    if (!rank)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    int r = G.state == ST_NONE ? PMI2_ERR_INIT : PMI2_SUCCESS;
    if (r == PMI2_SUCCESS)
        *rank = G.rank;
    UNLOCK();
    return r;
}

int PMI2_Info_GetSize(int *size)
{
    if (!size)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    int r = G.state == ST_NONE ? PMI2_ERR_INIT : PMI2_SUCCESS;
    if (r == PMI2_SUCCESS)
        *size = G.size;
    UNLOCK();
    return r;
}

/* job-connect / job-disconnect: ask, report the server's answer. */
static int job_link(const char *cmd, const char *resp, const char jobid[], bool connect)
{
    struct pmi_out o;
    struct pmi_msg m;
    int r;

    if (!jobid)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state != ST_CONNECTED) {
        r = G.state == ST_NONE ? PMI2_ERR_INIT : PMI2_ERR_OTHER;
    } else {
        pmi_out_begin(&o, PMI_V2, cmd);
        pmi_out_add(&o, JOBID_KEY, jobid);
        r = request(&o, resp, &m);
        if (r == PMI2_SUCCESS) {
            bool copy;
            /* kvscopy=TRUE would need a KVS copy protocol nobody defines. */
            if (connect && (pmi_msg_get_bool(&m, KVSCOPY_KEY, &copy) < 0 || copy))
                r = PMI2_ERR_OTHER;
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn)
{
    (void)conn;
    return job_link(JOBCONNECT_CMD, JOBCONNECTRESP_CMD, jobid, true);
}

int PMI2_Job_Disconnect(const char jobid[])
{
    return job_link(JOBDISCONNECT_CMD, JOBDISCONNECTRESP_CMD, jobid, false);
}

int PMIX_Ring(const char value[], int *rank, int *ranks, char left[], char right[],
              int maxvalue)
{
    struct pmi_out o;
    struct pmi_msg m;
    int r;

    if (!value || !rank || !ranks)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        *rank = 0;
        *ranks = 1;
        pcli_copy(left, maxvalue, value);
        pcli_copy(right, maxvalue, value);
        r = PMI2_SUCCESS;
    } else {
        pmi_out_begin(&o, PMI_V2, RING_CMD);
        pmi_out_add(&o, RING_COUNT_KEY, "1");
        pmi_out_add(&o, RING_LEFT_KEY, value);
        pmi_out_add(&o, RING_RIGHT_KEY, value);
        r = request(&o, RINGRESP_CMD, &m);
        if (r == PMI2_SUCCESS) {
            const char *lv = pmi_msg_get(&m, RING_LEFT_KEY);
            const char *rv = pmi_msg_get(&m, RING_RIGHT_KEY);
            int count;
            if (pmi_msg_get_int(&m, RING_COUNT_KEY, &count) < 0 || !lv || !rv) {
                r = PMI2_ERR_OTHER;
            } else {
                *rank = count;
                *ranks = G.size;
                pcli_copy(left, maxvalue, lv);
                pcli_copy(right, maxvalue, rv);
            }
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

/* ---- KVS ------------------------------------------------------------------ */

/* A request whose reply carries nothing but rc. */
static int simple_request(struct pmi_out *o, const char *resp)
{
    struct pmi_msg m;
    int r = request(o, resp, &m);

    if (r == PMI2_SUCCESS)
        pmi_msg_free(&m);
    return r;
}

/* kvs-put and info-putnodeattr. */
static int put(const char *cmd, const char *resp, char space, const char key[],
               const char value[])
{
    struct pmi_out o;
    int r = check_kv(key, value);

    if (r != PMI2_SUCCESS)
        return r;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        char k[PMI2_MAX_KEYLEN + 4];
        r = pcli_store_put(&G.c, skey(k, sizeof(k), space, key), value) < 0
                ? PMI2_ERR_NOMEM
                : PMI2_SUCCESS;
    } else {
        pmi_out_begin(&o, PMI_V2, cmd);
        pmi_out_add(&o, KEY_KEY, key);
        pmi_out_add(&o, VALUE_KEY, value);
        r = simple_request(&o, resp);
    }
    UNLOCK();
    return r;
}

int PMI2_KVS_Put(const char key[], const char value[])
{
    return put(KVSPUT_CMD, KVSPUTRESP_CMD, 'k', key, value);
}

int PMI2_KVS_Fence(void)
{
    struct pmi_out o;
    int r;

    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        r = PMI2_SUCCESS;
    } else {
        pmi_out_begin(&o, PMI_V2, KVSFENCE_CMD);
        r = simple_request(&o, KVSFENCERESP_CMD);
    }
    UNLOCK();
    return r;
}

int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[],
                 int maxvalue, int *vallen)
{
    struct pmi_out o;
    struct pmi_msg m;
    const char *v = NULL;
    int r;

    if (!key || !*key)
        return PMI2_ERR_INVALID_KEY;
    if (!value && maxvalue > 0)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        char k[PMI2_MAX_KEYLEN + 4];
        v = strlen(key) <= PMI2_MAX_KEYLEN
                ? pcli_store_get(&G.c, skey(k, sizeof(k), 'k', key))
                : NULL;
        r = v ? PMI2_SUCCESS : PMI2_ERR_OTHER;
        if (v) {
            int len = (int)strlen(v);
            bool trunc = pcli_copy(value, maxvalue, v);
            if (vallen)
                *vallen = trunc ? -len : len;
        }
    } else {
        pmi_out_begin(&o, PMI_V2, KVSGET_CMD);
        pmi_out_add(&o, JOBID_KEY, jobid ? jobid : "");
        pmi_out_addint(&o, SRCID_KEY, src_pmi_id);
        pmi_out_add(&o, KEY_KEY, key);
        r = request(&o, KVSGETRESP_CMD, &m);
        if (r == PMI2_SUCCESS) {
            int found = reply_found(&m);
            v = pmi_msg_get(&m, VALUE_KEY);
            if (found <= 0 || !v) {
                if (G.c.debug)
                    pcli_log(&G.c, "PMI2_KVS_Get: key %s not found", key);
                r = PMI2_ERR_OTHER;
            } else {
                int len = (int)strlen(v);
                bool trunc = pcli_copy(value, maxvalue, v);
                if (vallen)
                    *vallen = trunc ? -len : len;
            }
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

/* ---- node and job attributes ---------------------------------------------- */

/* Singleton answers for the attributes a one-process job has. */
static const char *singleton_attr(char space, const char *name)
{
    if (space == 'j') {
        if (strcmp(name, "PMI_process_mapping") == 0)
            return "(vector,(0,1,1))";
        if (strcmp(name, "universeSize") == 0)
            return "1";
        return NULL;
    }
    if (strcmp(name, "localRanksCount") == 0)
        return "1";
    if (strcmp(name, "localRanks") == 0)
        return "0";
    char k[PMI2_MAX_KEYLEN + 4];
    return strlen(name) <= PMI2_MAX_KEYLEN
               ? pcli_store_get(&G.c, skey(k, sizeof(k), 'n', name))
               : NULL;
}

/* Fetch attribute `name` (space 'n' node, 'j' job) and hand its value to
 * take(); *found tells whether it exists.  Caller holds call_lock. */
static int get_attr(char space, const char *name, bool wait, int *found,
                    int (*take)(const char *v, void *arg), void *arg)
{
    struct pmi_out o;
    struct pmi_msg m;
    int r;

    if (G.state == ST_NONE)
        return PMI2_ERR_INIT;
    if (G.state == ST_SINGLETON) {
        const char *v = singleton_attr(space, name);
        *found = v != NULL;
        if (!v && wait) {
            pcli_log(&G.c, "node attribute %s can never appear in a singleton", name);
            return PMI2_ERR_OTHER;
        }
        return v ? take(v, arg) : PMI2_SUCCESS;
    }
    if (space == 'n') {
        pmi_out_begin(&o, PMI_V2, GETNODEATTR_CMD);
        pmi_out_add(&o, KEY_KEY, name);
        pmi_out_add(&o, WAIT_KEY, wait ? TRUE_VAL : FALSE_VAL);
        r = request(&o, GETNODEATTRRESP_CMD, &m);
    } else {
        pmi_out_begin(&o, PMI_V2, GETJOBATTR_CMD);
        pmi_out_add(&o, KEY_KEY, name);
        r = request(&o, GETJOBATTRRESP_CMD, &m);
    }
    if (r != PMI2_SUCCESS)
        return r;
    int f = reply_found(&m);
    const char *v = pmi_msg_get(&m, VALUE_KEY);
    if (f < 0 || (f && !v)) {
        r = PMI2_ERR_OTHER;
    } else {
        *found = f;
        if (f)
            r = take(v, arg);
    }
    pmi_msg_free(&m);
    return r;
}

struct strdst {
    char *buf;
    int len;
};

static int take_str(const char *v, void *arg)
{
    struct strdst *d = arg;
    pcli_copy(d->buf, d->len, v);
    return PMI2_SUCCESS;
}

struct intdst {
    int *array;
    int len;
    int *outlen;
};

static int take_ints(const char *v, void *arg)
{
    struct intdst *d = arg;
    int n = 0;
    if (pcli_parse_intlist(v, d->array, d->len > 0 ? d->len : 0, &n) < 0)
        return PMI2_ERR_OTHER;
    if (d->outlen)
        *d->outlen = n;
    return PMI2_SUCCESS;
}

/* The four attribute getters: argument checks, the lock, and *found. */
static int locked_attr(char space, const char *name, bool wait, int *found,
                       int (*take)(const char *, void *), void *dst)
{
    int f = 0, r;

    if (!name || !*name)
        return PMI2_ERR_INVALID_KEY;
    LOCK();
    r = get_attr(space, name, wait, &f, take, dst);
    UNLOCK();
    if (found)
        *found = f;
    return r;
}

int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found,
                          int waitfor)
{
    struct strdst d = {value, valuelen};
    return locked_attr('n', name, waitfor != 0, found, take_str, &d);
}

int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen,
                                  int *outlen, int *found)
{
    struct intdst d = {array, arraylen, outlen};
    if (!array && arraylen > 0)
        return PMI2_ERR_INVALID_ARG;
    return locked_attr('n', name, false, found, take_ints, &d);
}

int PMI2_Info_PutNodeAttr(const char name[], const char value[])
{
    return put(PUTNODEATTR_CMD, PUTNODEATTRRESP_CMD, 'n', name, value);
}

int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found)
{
    struct strdst d = {value, valuelen};
    return locked_attr('j', name, false, found, take_str, &d);
}

int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen,
                                 int *outlen, int *found)
{
    struct intdst d = {array, arraylen, outlen};
    if (!array && arraylen > 0)
        return PMI2_ERR_INVALID_ARG;
    return locked_attr('j', name, false, found, take_ints, &d);
}

/* ---- name service ---------------------------------------------------------- */

int PMI2_Nameserv_publish(const char service_name[], const struct MPID_Info *info_ptr,
                          const char port[])
{
    struct pmi_out o;
    int r;

    (void)info_ptr;
    if (!service_name || !*service_name || !port)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        char k[PMI2_MAX_VALLEN + 4];
        skey(k, sizeof(k), 's', service_name);
        r = pcli_store_get(&G.c, k)             ? PMI2_ERR_OTHER
            : pcli_store_put(&G.c, k, port) < 0 ? PMI2_ERR_NOMEM
                                                : PMI2_SUCCESS;
    } else {
        pmi_out_begin(&o, PMI_V2, NAMEPUBLISH_CMD);
        pmi_out_add(&o, NAME_KEY, service_name);
        pmi_out_add(&o, PORT_KEY, port);
        pmi_out_add(&o, INFOKEYCOUNT_KEY, "0");
        r = simple_request(&o, NAMEPUBLISHRESP_CMD);
    }
    UNLOCK();
    return r;
}

int PMI2_Nameserv_lookup(const char service_name[], const struct MPID_Info *info_ptr,
                         char port[], int portLen)
{
    struct pmi_out o;
    struct pmi_msg m;
    int r;

    (void)info_ptr;
    if (!service_name || !*service_name || !port || portLen <= 0)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        char k[PMI2_MAX_VALLEN + 4];
        const char *v = pcli_store_get(&G.c, skey(k, sizeof(k), 's', service_name));
        r = v ? PMI2_SUCCESS : PMI2_ERR_OTHER;
        if (v)
            pcli_copy(port, portLen, v);
    } else {
        pmi_out_begin(&o, PMI_V2, NAMELOOKUP_CMD);
        pmi_out_add(&o, NAME_KEY, service_name);
        pmi_out_add(&o, INFOKEYCOUNT_KEY, "0");
        r = request(&o, NAMELOOKUPRESP_CMD, &m);
        if (r == PMI2_SUCCESS) {
            /* Slurm's server answers in "value", the MPICH text says "port". */
            const char *v = pmi_msg_get(&m, VALUE_KEY);
            if (!v)
                v = pmi_msg_get(&m, PORT_KEY);
            if (v)
                pcli_copy(port, portLen, v);
            else
                r = PMI2_ERR_OTHER;
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

int PMI2_Nameserv_unpublish(const char service_name[], const struct MPID_Info *info_ptr)
{
    struct pmi_out o;
    int r;

    (void)info_ptr;
    if (!service_name || !*service_name)
        return PMI2_ERR_INVALID_ARG;
    LOCK();
    if (G.state == ST_NONE) {
        r = PMI2_ERR_INIT;
    } else if (G.state == ST_SINGLETON) {
        char k[PMI2_MAX_VALLEN + 4];
        r = pcli_store_del(&G.c, skey(k, sizeof(k), 's', service_name)) < 0
                ? PMI2_ERR_OTHER
                : PMI2_SUCCESS;
    } else {
        pmi_out_begin(&o, PMI_V2, NAMEUNPUBLISH_CMD);
        pmi_out_add(&o, NAME_KEY, service_name);
        pmi_out_add(&o, INFOKEYCOUNT_KEY, "0");
        r = simple_request(&o, NAMEUNPUBLISHRESP_CMD);
    }
    UNLOCK();
    return r;
}
