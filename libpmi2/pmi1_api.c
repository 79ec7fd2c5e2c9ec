/* pmi1_api.c - libpmi.so.0: the PMI-1 client API (include/pmi.h).
 *
 * Contract:
 *   The 33 PMI_* functions of MPICH's simple PMI / Slurm's <slurm/pmi.h>,
 *   speaking the PMI-1 wire protocol (v1.1) to the server found through
 *   PMI_FD, else PMI_PORT, or answering locally as a singleton (rank 0 of 1,
 *   appnum -1) when neither is set.
 *
 * Notes:
 *   - PMI_Init sends "cmd=init pmi_version=1 pmi_subversion=1" then
 *     "cmd=get_maxes", like MPICH's client.  Rank and size come from
 *     PMI_RANK/PMI_SIZE (defaults 0 and 1), or, when connected through
 *     PMI_PORT with PMI_ID set, from the server's initack/set lines.
 *     PMI_SPAWNED gives *spawned.
 *   - Every reply must be the expected command; an rc that is present must
 *     be an integer.  A reply without rc counts as rc=0, as MPICH >= 4.1's
 *     client reads it, because real servers omit it: Debian's Hydra 4.0.2
 *     answers "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024".
 *     Name-service replies may carry info=ok|fail instead (Slurm's server).
 *     Any other deviation, EOF or a malformed line is an error return, never
 *     a hang or a crash.  (PMI-2 replies, in libpmi2, must carry rc.)
 *   - PMI_KVS_Get: rc != 0 or found=FALSE is PMI_FAIL; a value that does
 *     not fit is truncated and reported as PMI_ERR_INVALID_VAL_LENGTH.
 *   - PMI_KVS_Put refuses keys and values the line grammar cannot carry
 *     (space, newline, '=' in keys) instead of letting them be mangled.
 *   - PMI_Get_clique_*: node of every rank from the job's
 *     PMI_process_mapping (fetched with get once and cached); without a
 *     usable mapping the clique is the caller alone.
 *   - Thread safety: one process-wide mutex around every exchange and the
 *     cached state.  PMI_Abort only takes the connection's write lock.
 *   - Global state is unavoidable: the PMI-1 API has no handle.
 *
 * See also: include/pmi.h, libpmi2/pcli.h, doc/wire.md, doc/clients.md
 *
 * One piece (about 1000 lines): the 33 functions of one handle-less API share
 * the one connection, its lock and the cached identity; each section (session,
 * name service, identity, barrier and clique, KVS, spawn) is a few short
 * request/reply exchanges over pcli.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcli.h"
#include "pmi.h"

#define PORT_NAME_MAX 256 /* bytes PMI_Lookup_name writes (MPI_MAX_PORT_NAME) */

enum state { ST_NONE = 0, ST_SINGLETON, ST_CONNECTED };

static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    enum state state;
    struct pcli c;
    int rank, size, spawned;
    int kvsname_max, keylen_max, vallen_max;
    char kvsname[PMI_MAX_KVSNAME + 1]; /* "" until known */
    int iter_next;                     /* PMI_KVS_Iter_next index */
    int *clique;                       /* NULL until computed */
    int clique_n;
} G;

#define LOCK() pthread_mutex_lock(&call_lock)
#define UNLOCK() pthread_mutex_unlock(&call_lock)

/* Finish and send o (freed here), read the reply `expect` into *m and its
 * status into *rc (absent rc: info=ok|fail if given, else 0).  Returns 0
 * with *m owned by the caller, or -errno. */
static int exchange(struct pmi_out *o, const char *expect, struct pmi_msg *m, int *rc)
{
    int r = pcli_send(&G.c, o);

    pmi_out_free(o);
    memset(m, 0, sizeof(*m));
    if (r == 0)
        r = pcli_recv(&G.c, PMI_V1, m);
    if (r == 0 && strcmp(pmi_msg_cmd(m), expect) != 0) {
        pcli_log(&G.c, "expected %s, server sent %s", expect, pmi_msg_cmd(m));
        r = -EPROTO;
    }
    if (r == 0 && pmi_msg_get(m, "rc") == NULL) {
        const char *info = pmi_msg_get(m, "info");
        *rc = info && strcmp(info, "ok") != 0 ? 1 : 0;
    } else if (r == 0 && pmi_msg_get_int(m, "rc", rc) < 0) {
        pcli_log(&G.c, "%s with a malformed rc", expect);
        r = -EPROTO;
    }
    if (r < 0) {
        if (r != -EPROTO)
            pcli_log(&G.c, "%s: %s", expect,
                     r == -EPIPE ? "connection to the PMI server closed" : strerror(-r));
        pmi_msg_free(m);
        memset(m, 0, sizeof(*m));
    }
    return r;
}

/* exchange() for replies that carry only a status: PMI code. */
static int simple(struct pmi_out *o, const char *expect)
{
    struct pmi_msg m;
    int rc, r = exchange(o, expect, &m, &rc);

    if (r < 0)
        return PMI_FAIL;
    if (rc != 0 && G.c.debug) {
        const char *msg = pmi_msg_get(&m, "msg");
        pcli_log(&G.c, "%s: rc=%d%s%s", expect, rc, msg ? " " : "", msg ? msg : "");
    }
    pmi_msg_free(&m);
    return rc == 0 ? PMI_SUCCESS : PMI_FAIL;
}

static bool has_any(const char *s, const char *set)
{
    return strpbrk(s, set) != NULL;
}

static int not_ready(void)
{
    return G.state == ST_NONE ? PMI_ERR_INIT : PMI_SUCCESS;
}

/* ---- session -------------------------------------------------------------- */

/* PMI_PORT + PMI_ID: the server tells size, rank and debug. */
static int initack(const char *id)
{
    struct pmi_out o;
    struct pmi_msg m;
    int r;

    pmi_out_begin(&o, PMI_V1, "initack");
    pmi_out_add(&o, "pmiid", id);
    r = pcli_send(&G.c, &o);
    pmi_out_free(&o);
    if (r == 0)
        r = pcli_recv(&G.c, PMI_V1, &m);
    if (r < 0)
        return r;
    r = strcmp(pmi_msg_cmd(&m), "initack") == 0 ? 0 : -EPROTO;
    pmi_msg_free(&m);
    for (int i = 0; i < 3 && r == 0; i++) {
        int v;
        r = pcli_recv(&G.c, PMI_V1, &m);
        if (r < 0)
            break;
        if (strcmp(pmi_msg_cmd(&m), "set") != 0)
            r = -EPROTO;
        else if (pmi_msg_get_int(&m, "size", &v) == 0)
            G.size = v;
        else if (pmi_msg_get_int(&m, "rank", &v) == 0)
            G.rank = v;
        else if (pmi_msg_get_int(&m, "debug", &v) == 0)
            G.c.debug |= v != 0;
        else
            r = -EPROTO;
        pmi_msg_free(&m);
    }
    return r;
}

static int handshake(bool port_mode)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r, v;
    const char *id = getenv("PMI_ID");

    G.rank = 0;
    G.size = 1;
    if (port_mode && id) {
        if ((r = initack(id)) < 0) {
            pcli_log(&G.c, "PMI_Init: initack handshake failed: %s", strerror(-r));
            return PMI_FAIL;
        }
    } else {
        if (pcli_env_int("PMI_RANK", &v) == 0)
            G.rank = v;
        if (pcli_env_int("PMI_SIZE", &v) == 0)
            G.size = v;
    }
    if (G.size <= 0 || G.rank < 0 || G.rank >= G.size) {
        pcli_log(&G.c, "PMI_Init: invalid rank %d / size %d", G.rank, G.size);
        return PMI_FAIL;
    }
    G.c.rank = G.rank;

    pmi_out_begin(&o, PMI_V1, "init");
    pmi_out_add(&o, "pmi_version", "1");
    pmi_out_add(&o, "pmi_subversion", "1");
    if (exchange(&o, "response_to_init", &m, &rc) < 0)
        return PMI_FAIL;
    pmi_msg_free(&m);
    if (rc != 0) {
        pcli_log(&G.c, "PMI_Init: server refused PMI version 1.1 (rc=%d)", rc);
        return PMI_FAIL;
    }

    pmi_out_begin(&o, PMI_V1, "get_maxes");
    if (exchange(&o, "maxes", &m, &rc) < 0)
        return PMI_FAIL;
    r = PMI_SUCCESS;
    if (rc != 0 || pmi_msg_get_int(&m, "kvsname_max", &G.kvsname_max) < 0 ||
        pmi_msg_get_int(&m, "keylen_max", &G.keylen_max) < 0 ||
        pmi_msg_get_int(&m, "vallen_max", &G.vallen_max) < 0 || G.kvsname_max <= 0 ||
        G.keylen_max <= 0 || G.vallen_max <= 0) {
        pcli_log(&G.c, "PMI_Init: bad maxes reply");
        r = PMI_FAIL;
    }
    pmi_msg_free(&m);
    return r;
}

int PMI_Init(int *spawned)
{
    int r = PMI_SUCCESS, v;

    LOCK();
    if (G.state == ST_NONE) {
        bool port_mode = getenv("PMI_FD") == NULL && getenv("PMI_PORT") != NULL;
        pcli_init(&G.c, "pmi");
        G.c.debug = pcli_env_debug();
        if (pcli_env_int("PMI_RANK", &v) == 0)
            G.c.rank = v;
        G.kvsname[0] = '\0';
        G.kvsname_max = PMI_MAX_KVSNAME;
        G.keylen_max = PMI_MAX_KEYLEN;
        G.vallen_max = PMI_MAX_VALLEN;
        G.spawned = pcli_env_int("PMI_SPAWNED", &v) == 0 && v != 0;
        int e = pcli_connect(&G.c);
        if (e < 0) {
            pcli_log(&G.c, "PMI_Init: cannot reach the PMI server through %s: %s",
                     port_mode ? "PMI_PORT" : "PMI_FD", strerror(-e));
            r = PMI_FAIL;
        } else if (G.c.fd < 0) {
            pcli_singleton_check(&G.c);
            G.state = ST_SINGLETON;
            G.rank = 0;
            G.size = 1;
            G.spawned = 0;
            snprintf(G.kvsname, sizeof(G.kvsname), "%ld.0", (long)getpid());
        } else {
            r = handshake(port_mode);
            if (r == PMI_SUCCESS)
                G.state = ST_CONNECTED;
        }
        if (r != PMI_SUCCESS)
            pcli_close(&G.c);
    }
    if (r == PMI_SUCCESS && spawned)
        *spawned = G.spawned ? PMI_TRUE : PMI_FALSE;
    UNLOCK();
    return r;
}

int PMI_Initialized(PMI_BOOL *initialized)
{
    if (!initialized)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    *initialized = G.state != ST_NONE ? PMI_TRUE : PMI_FALSE;
    UNLOCK();
    return PMI_SUCCESS;
}

int PMI_Finalize(void)
{
    struct pmi_out o;
    int r = PMI_SUCCESS;

    LOCK();
    if (G.state == ST_NONE) {
        r = PMI_ERR_INIT;
    } else {
        if (G.state == ST_CONNECTED) {
            pmi_out_begin(&o, PMI_V1, "finalize");
            r = simple(&o, "finalize_ack");
        }
        pcli_close(&G.c);
        free(G.clique);
        G.clique = NULL;
        G.state = ST_NONE;
    }
    UNLOCK();
    return r;
}

int PMI_Get_size(int *size)
{
    if (!size)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        *size = G.size;
    UNLOCK();
    return r;
}

int PMI_Get_rank(int *rank)
{
    if (!rank)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        *rank = G.rank;
    UNLOCK();
    return r;
}

/* get_universe_size / get_appnum: one integer answer. */
static int get_int(const char *cmd, const char *resp, const char *key, int single,
                   int *out)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r;

    if (!out)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        *out = single;
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, cmd);
        if (exchange(&o, resp, &m, &rc) < 0) {
            r = PMI_FAIL;
        } else {
            if (rc != 0 || pmi_msg_get_int(&m, key, out) < 0)
                r = PMI_FAIL;
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

int PMI_Get_universe_size(int *size)
{
    return get_int("get_universe_size", "universe_size", "size", 1, size);
}

int PMI_Get_appnum(int *appnum)
{
    return get_int("get_appnum", "appnum", "appnum", -1, appnum);
}

int PMI_Abort(int exit_code, const char error_msg[])
{
    /* No call_lock: another thread may wait in a barrier holding it. */
    if (G.state == ST_CONNECTED) {
        struct pmi_out o;
        pmi_out_begin(&o, PMI_V1, "abort");
        pmi_out_addint(&o, "exitcode", exit_code);
        if (error_msg && *error_msg)
            pmi_out_add(&o, "message", error_msg); /* spaces become '_' */
        if (pcli_send(&G.c, &o) < 0 && error_msg)
            fprintf(stderr, "PMI_Abort: %s\n", error_msg);
        pmi_out_free(&o);
        if (G.c.debug && error_msg)
            pcli_log(&G.c, "aborting job: %s", error_msg);
    } else if (error_msg && *error_msg) {
        fprintf(stderr, "PMI_Abort: %s\n", error_msg);
    }
    exit(exit_code);
}

/* ---- name service ----------------------------------------------------------- */

int PMI_Publish_name(const char service_name[], const char port[])
{
    struct pmi_out o;
    int r;

    if (!service_name || !*service_name || !port || has_any(service_name, " \n=") ||
        has_any(port, " \n"))
        return PMI_ERR_INVALID_ARG;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        char k[PORT_NAME_MAX + 4];
        snprintf(k, sizeof(k), "s:%s", service_name);
        r = pcli_store_get(&G.c, k)             ? PMI_FAIL
            : pcli_store_put(&G.c, k, port) < 0 ? PMI_ERR_NOMEM
                                                : PMI_SUCCESS;
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "publish_name");
        pmi_out_add(&o, "service", service_name);
        pmi_out_add(&o, "port", port);
        r = simple(&o, "publish_result");
    }
    UNLOCK();
    return r;
}

int PMI_Unpublish_name(const char service_name[])
{
    struct pmi_out o;
    int r;

    if (!service_name || !*service_name || has_any(service_name, " \n="))
        return PMI_ERR_INVALID_ARG;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        char k[PORT_NAME_MAX + 4];
        snprintf(k, sizeof(k), "s:%s", service_name);
        r = pcli_store_del(&G.c, k) < 0 ? PMI_FAIL : PMI_SUCCESS;
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "unpublish_name");
        pmi_out_add(&o, "service", service_name);
        r = simple(&o, "unpublish_result");
    }
    UNLOCK();
    return r;
}

int PMI_Lookup_name(const char service_name[], char port[])
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r;

    if (!service_name || !*service_name || !port || has_any(service_name, " \n="))
        return PMI_ERR_INVALID_ARG;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        char k[PORT_NAME_MAX + 4];
        snprintf(k, sizeof(k), "s:%s", service_name);
        const char *v = pcli_store_get(&G.c, k);
        r = v ? PMI_SUCCESS : PMI_FAIL;
        if (v)
            pcli_copy(port, PORT_NAME_MAX, v);
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "lookup_name");
        pmi_out_add(&o, "service", service_name);
        if (exchange(&o, "lookup_result", &m, &rc) < 0) {
            r = PMI_FAIL;
        } else {
            const char *v = pmi_msg_get(&m, "port");
            if (!v)
                v = pmi_msg_get(&m, "value");
            if (rc != 0 || !v)
                r = PMI_FAIL;
            else
                pcli_copy(port, PORT_NAME_MAX, v);
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

/* ---- identity ------------------------------------------------------------------ */

/* Fill G.kvsname if not yet known.  Caller holds call_lock. */
static int my_kvsname(void)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r = PMI_SUCCESS;

    if (G.kvsname[0])
        return PMI_SUCCESS;
    pmi_out_begin(&o, PMI_V1, "get_my_kvsname");
    if (exchange(&o, "my_kvsname", &m, &rc) < 0)
        return PMI_FAIL;
    const char *k = pmi_msg_get(&m, "kvsname");
    if (rc != 0 || !k || !*k || pcli_copy(G.kvsname, sizeof(G.kvsname), k)) {
        G.kvsname[0] = '\0';
        r = PMI_FAIL;
    }
    pmi_msg_free(&m);
    return r;
}

int PMI_KVS_Get_my_name(char kvsname[], int length)
{
    if (!kvsname || length <= 0)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        r = my_kvsname();
    if (r == PMI_SUCCESS && pcli_copy(kvsname, length, G.kvsname))
        r = PMI_ERR_INVALID_LENGTH;
    UNLOCK();
    return r;
}

int PMI_Get_id(char id_str[], int length)
{
    return PMI_KVS_Get_my_name(id_str, length);
}

int PMI_Get_kvs_domain_id(char id_str[], int length)
{
    return PMI_KVS_Get_my_name(id_str, length);
}

/* One of the cached maxima. */
static int get_max(const int *which, int *length)
{
    if (!length)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        *length = *which;
    UNLOCK();
    return r;
}

int PMI_Get_id_length_max(int *length)
{
    return get_max(&G.kvsname_max, length);
}

int PMI_KVS_Get_name_length_max(int *length)
{
    return get_max(&G.kvsname_max, length);
}

int PMI_KVS_Get_key_length_max(int *length)
{
    return get_max(&G.keylen_max, length);
}

int PMI_KVS_Get_value_length_max(int *length)
{
    return get_max(&G.vallen_max, length);
}

/* ---- barrier and clique --------------------------------------------------------- */

int PMI_Barrier(void)
{
    struct pmi_out o;

    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_CONNECTED) {
        pmi_out_begin(&o, PMI_V1, "barrier_in");
        r = simple(&o, "barrier_out");
    }
    UNLOCK();
    return r;
}

/* KVS get of `key` in our own space into value[len].  PMI code. */
static int kvs_get_locked(const char *kvsname, const char *key, char *value, int len);

/* Compute G.clique from PMI_process_mapping.  Caller holds call_lock. */
static int clique(void)
{
    char map[PMI_MAX_VALLEN + 1];
    int *node = NULL, n = 0;

    if (G.clique)
        return PMI_SUCCESS;
    if (G.state == ST_CONNECTED && my_kvsname() == PMI_SUCCESS &&
        kvs_get_locked(G.kvsname, "PMI_process_mapping", map, sizeof(map)) ==
            PMI_SUCCESS) {
        node = malloc(sizeof(int) * (size_t)G.size);
        if (node && loom_pmap_parse(map, G.size, node) < 0) {
            if (G.c.debug)
                pcli_log(&G.c, "unusable PMI_process_mapping '%s'", map);
            free(node);
            node = NULL;
        }
    }
    G.clique = malloc(sizeof(int) * (size_t)G.size);
    if (!G.clique) {
        free(node);
        return PMI_ERR_NOMEM;
    }
    if (node) {
        for (int i = 0; i < G.size; i++)
            if (node[i] == node[G.rank])
                G.clique[n++] = i;
    } else {
        G.clique[n++] = G.rank; /* unknown layout: only ourselves */
    }
    G.clique_n = n;
    free(node);
    return PMI_SUCCESS;
}

int PMI_Get_clique_size(int *size)
{
    if (!size)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        r = clique();
    if (r == PMI_SUCCESS)
        *size = G.clique_n;
    UNLOCK();
    return r;
}

int PMI_Get_clique_ranks(int ranks[], int length)
{
    if (!ranks)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        r = clique();
    if (r == PMI_SUCCESS && length < G.clique_n)
        r = PMI_ERR_INVALID_LENGTH;
    if (r == PMI_SUCCESS)
        memcpy(ranks, G.clique, sizeof(int) * (size_t)G.clique_n);
    UNLOCK();
    return r;
}

/* ---- key-value space ------------------------------------------------------------- */

int PMI_KVS_Create(char kvsname[], int length)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r;

    if (!kvsname || length <= 0)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        r = PMI_FAIL; /* one process, one space */
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "create_kvs");
        if (exchange(&o, "newkvs", &m, &rc) < 0) {
            r = PMI_FAIL;
        } else {
            const char *k = pmi_msg_get(&m, "kvsname");
            if (rc != 0 || !k)
                r = PMI_FAIL;
            else if (pcli_copy(kvsname, length, k))
                r = PMI_ERR_INVALID_LENGTH;
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

int PMI_KVS_Destroy(const char kvsname[])
{
    struct pmi_out o;
    int r;

    if (!kvsname || !*kvsname)
        return PMI_ERR_INVALID_ARG;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        r = PMI_FAIL;
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "destroy_kvs");
        pmi_out_add(&o, "kvsname", kvsname);
        r = simple(&o, "kvs_destroyed");
    }
    UNLOCK();
    return r;
}

int PMI_KVS_Put(const char kvsname[], const char key[], const char value[])
{
    struct pmi_out o;
    int r;

    if (!kvsname || has_any(kvsname, " \n"))
        return PMI_ERR_INVALID_KVS;
    if (!key || !*key || has_any(key, " \n="))
        return PMI_ERR_INVALID_KEY;
    if (!value || has_any(value, " \n"))
        return PMI_ERR_INVALID_VAL;
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && (int)strlen(key) > G.keylen_max)
        r = PMI_ERR_INVALID_KEY_LENGTH;
    else if (r == PMI_SUCCESS && (int)strlen(value) > G.vallen_max)
        r = PMI_ERR_INVALID_VAL_LENGTH;
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        char k[PMI_MAX_KEYLEN + 4];
        snprintf(k, sizeof(k), "k:%s", key);
        r = pcli_store_put(&G.c, k, value) < 0 ? PMI_ERR_NOMEM : PMI_SUCCESS;
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "put");
        pmi_out_add(&o, "kvsname", kvsname);
        pmi_out_add(&o, "key", key);
        pmi_out_add(&o, "value", value);
        r = simple(&o, "put_result");
    }
    UNLOCK();
    return r;
}

int PMI_KVS_Commit(const char kvsname[])
{
    (void)kvsname;
    LOCK();
    int r = not_ready(); /* puts are sent at once; the barrier commits */
    UNLOCK();
    return r;
}

static int kvs_get_locked(const char *kvsname, const char *key, char *value, int len)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r = PMI_SUCCESS;
    const char *v;

    if (G.state == ST_SINGLETON) {
        char k[PMI_MAX_KEYLEN + 4];
        if (strcmp(key, "PMI_process_mapping") == 0) {
            v = "(vector,(0,1,1))";
        } else if (strlen(key) > PMI_MAX_KEYLEN) {
            v = NULL;
        } else {
            snprintf(k, sizeof(k), "k:%s", key);
            v = pcli_store_get(&G.c, k);
        }
        if (!v)
            return PMI_FAIL;
        return pcli_copy(value, len, v) ? PMI_ERR_INVALID_VAL_LENGTH : PMI_SUCCESS;
    }
    pmi_out_begin(&o, PMI_V1, "get");
    pmi_out_add(&o, "kvsname", kvsname);
    pmi_out_add(&o, "key", key);
    if (exchange(&o, "get_result", &m, &rc) < 0)
        return PMI_FAIL;
    bool found = true;
    v = pmi_msg_get(&m, "value");
    if (pmi_msg_get_bool(&m, "found", &found) == -EINVAL)
        found = false;
    if (rc != 0 || !found || !v) {
        if (G.c.debug)
            pcli_log(&G.c, "PMI_KVS_Get: key %s not found (rc=%d)", key, rc);
        r = PMI_FAIL;
    } else if (pcli_copy(value, len, v)) {
        r = PMI_ERR_INVALID_VAL_LENGTH;
    }
    pmi_msg_free(&m);
    return r;
}

int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length)
{
    if (!kvsname || has_any(kvsname, " \n"))
        return PMI_ERR_INVALID_KVS;
    if (!key || !*key || has_any(key, " \n="))
        return PMI_ERR_INVALID_KEY;
    if (!value || length <= 0)
        return PMI_ERR_INVALID_LENGTH;
    LOCK();
    int r = not_ready();
    if (r == PMI_SUCCESS)
        r = kvs_get_locked(kvsname, key, value, length);
    UNLOCK();
    return r;
}

/* getbyidx idx=G.iter_next; end of space -> empty key. */
static int iter(const char kvsname[], char key[], int key_len, char val[], int val_len,
                bool first)
{
    struct pmi_out o;
    struct pmi_msg m;
    int rc, r;

    if (!kvsname || has_any(kvsname, " \n"))
        return PMI_ERR_INVALID_KVS;
    if (!key || key_len <= 0 || !val || val_len <= 0)
        return PMI_ERR_INVALID_LENGTH;
    LOCK();
    r = not_ready();
    if (first)
        G.iter_next = 0;
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        int i = 0;
        const struct pcli_item *it;
        key[0] = val[0] = '\0';
        for (it = G.c.store; it; it = it->next) {
            if (strncmp(it->key, "k:", 2) != 0)
                continue;
            if (i++ == G.iter_next) {
                if (pcli_copy(key, key_len, it->key + 2) ||
                    pcli_copy(val, val_len, it->val))
                    r = PMI_ERR_INVALID_LENGTH;
                G.iter_next++;
                break;
            }
        }
    } else if (r == PMI_SUCCESS) {
        pmi_out_begin(&o, PMI_V1, "getbyidx");
        pmi_out_add(&o, "kvsname", kvsname);
        pmi_out_addint(&o, "idx", G.iter_next);
        if (exchange(&o, "getbyidx_results", &m, &rc) < 0) {
            r = PMI_FAIL;
        } else {
            const char *k = pmi_msg_get(&m, "key"), *v = pmi_msg_get(&m, "val");
            const char *reason = pmi_msg_get(&m, "reason");
            int next;
            if (rc != 0 && reason && strcmp(reason, "no_more_keyvals") == 0) {
                key[0] = val[0] = '\0';
            } else if (rc != 0 || !k || !v || pmi_msg_get_int(&m, "nextidx", &next) < 0) {
                r = PMI_FAIL;
            } else {
                G.iter_next = next;
                if (pcli_copy(key, key_len, k) || pcli_copy(val, val_len, v))
                    r = PMI_ERR_INVALID_LENGTH;
            }
            pmi_msg_free(&m);
        }
    }
    UNLOCK();
    return r;
}

int PMI_KVS_Iter_first(const char kvsname[], char key[], int key_len, char val[],
                       int val_len)
{
    return iter(kvsname, key, key_len, val, val_len, true);
}

int PMI_KVS_Iter_next(const char kvsname[], char key[], int key_len, char val[],
                      int val_len)
{
    return iter(kvsname, key, key_len, val, val_len, false);
}

/* ---- spawn ------------------------------------------------------------------------ */

static bool line_ok(const char *s)
{
    return s && !strchr(s, '\n');
}

int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[],
                       const int maxprocs[], const int info_keyval_sizesp[],
                       const PMI_keyval_t *info_keyval_vectors[], int preput_keyval_size,
                       const PMI_keyval_t preput_keyval_vector[], int errors[])
{
    char *blk = NULL;
    size_t blen = 0;
    int r, total = 0;

    if (count <= 0 || !cmds || !maxprocs ||
        (preput_keyval_size > 0 && !preput_keyval_vector))
        return PMI_ERR_INVALID_ARG;
    for (int i = 0; i < count; i++) {
        if (!line_ok(cmds[i]) || maxprocs[i] < 0)
            return PMI_ERR_INVALID_ARG;
        total += maxprocs[i];
    }
    LOCK();
    r = not_ready();
    if (r == PMI_SUCCESS && G.state == ST_SINGLETON) {
        pcli_log(&G.c, "PMI_Spawn_multiple: no process manager (singleton)");
        r = PMI_FAIL;
    }
    if (r != PMI_SUCCESS)
        goto out;

    /* The mcmd form: one "key=value" per line, values may hold spaces. */
    FILE *f = open_memstream(&blk, &blen);
    if (!f) {
        r = PMI_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < count && r == PMI_SUCCESS; i++) {
        int argc = 0;
        fprintf(f, "mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\n",
                maxprocs[i], cmds[i], count, i + 1);
        for (; argvs && argvs[i] && argvs[i][argc]; argc++) {
            if (!line_ok(argvs[i][argc]))
                r = PMI_ERR_INVALID_ARG;
            fprintf(f, "arg%d=%s\n", argc + 1, argvs[i][argc]);
        }
        fprintf(f, "argcnt=%d\npreput_num=%d\n", argc, preput_keyval_size);
        for (int j = 0; j < preput_keyval_size; j++) {
            const PMI_keyval_t *kv = &preput_keyval_vector[j];
            if (!line_ok(kv->key) || !line_ok(kv->val))
                r = PMI_ERR_INVALID_ARG;
            fprintf(f, "preput_key_%d=%s\npreput_val_%d=%s\n", j, kv->key ? kv->key : "",
                    j, kv->val ? kv->val : "");
        }
        int ninfo = info_keyval_sizesp ? info_keyval_sizesp[i] : 0;
        fprintf(f, "info_num=%d\n", ninfo);
        for (int j = 0; j < ninfo && info_keyval_vectors && info_keyval_vectors[i]; j++) {
            const PMI_keyval_t *kv = &info_keyval_vectors[i][j];
            if (!line_ok(kv->key) || !line_ok(kv->val))
                r = PMI_ERR_INVALID_ARG;
            fprintf(f, "info_key_%d=%s\ninfo_val_%d=%s\n", j, kv->key ? kv->key : "", j,
                    kv->val ? kv->val : "");
        }
        fprintf(f, "endcmd\n");
    }
    if (fclose(f) != 0 || !blk) {
        r = PMI_ERR_NOMEM;
        goto out;
    }
    if (r != PMI_SUCCESS)
        goto out;
    if (G.c.debug)
        pcli_log(&G.c, "> %s", blk);
    if (pcli_write(&G.c, blk, blen) < 0) {
        pcli_log(&G.c, "PMI_Spawn_multiple: connection to the PMI server lost");
        r = PMI_FAIL;
        goto out;
    }
    struct pmi_msg m;
    int rc;
    if (pcli_recv(&G.c, PMI_V1, &m) < 0) {
        pcli_log(&G.c, "PMI_Spawn_multiple: no valid reply");
        r = PMI_FAIL;
        goto out;
    }
    if (strcmp(pmi_msg_cmd(&m), "spawn_result") != 0 ||
        pmi_msg_get_int(&m, "rc", &rc) < 0 || rc != 0) {
        r = PMI_FAIL;
    } else if (errors) {
        const char *codes = pmi_msg_get(&m, "errcodes");
        int n = 0;
        if (!codes || !*codes)
            memset(errors, 0, sizeof(int) * (size_t)total);
        else if (pcli_parse_intlist(codes, errors, total, &n) < 0 || n != total)
            r = PMI_FAIL;
    }
    pmi_msg_free(&m);
out:
    free(blk);
    UNLOCK();
    return r;
}

/* ---- launcher helpers (no PMI-specific options exist) ---------------------------- */

int PMI_Parse_option(int num_args, char *args[], int *num_parsed, PMI_keyval_t **keyvalp,
                     int *size)
{
    if (num_args < 0 || (num_args > 0 && !args) || !num_parsed || !keyvalp || !size)
        return PMI_ERR_INVALID_ARG;
    *num_parsed = 0;
    *keyvalp = NULL;
    *size = 0;
    return PMI_SUCCESS;
}

int PMI_Args_to_keyval(int *argcp, char *((*argvp)[]), PMI_keyval_t **keyvalp, int *size)
{
    if (!argcp || !argvp || !keyvalp || !size)
        return PMI_ERR_INVALID_ARG;
    *keyvalp = NULL;
    *size = 0;
    return PMI_SUCCESS;
}

int PMI_Free_keyvals(PMI_keyval_t keyvalp[], int size)
{
    if (size < 0 || (size > 0 && !keyvalp))
        return PMI_ERR_INVALID_ARG;
    for (int i = 0; i < size; i++) {
        free(keyvalp[i].key);
        free(keyvalp[i].val);
    }
    free(keyvalp);
    return PMI_SUCCESS;
}

int PMI_Get_options(char *str, int *length)
{
    if (!str || !length || *length < 1)
        return PMI_ERR_INVALID_ARG;
    str[0] = '\0';
    *length = 0;
    return PMI_SUCCESS;
}
