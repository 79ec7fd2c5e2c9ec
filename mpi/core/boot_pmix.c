/*
 * boot_pmix.c - boot.c's PMIx interface (boot_pmi.h): OpenPMIx's client library,
 * loaded with dlopen when a launcher asks for PMIx (srun --mpi=pmix, Open MPI's
 * mpirun/prterun, Loom's plugin with LOOM_MPI_PMI=pmix), so that libmpi needs no
 * libpmix to be installed to run under PMI-2 or alone.
 *
 * Owns: every PMIx_* call libmpi makes.
 * Notes:
 *   - Only types and constants come from <pmix.h> at build time; every function is
 *     looked up with dlsym, and none of the header's helper macros that call into the
 *     library is used (values are built and freed by hand).  Without libpmix-dev at
 *     configure time this file builds an interface whose init says so.
 *   - The library: LOOM_MPI_PMIX_LIB if set, else libpmix.so.2 (OpenPMIx 4 and 5),
 *     else libpmix.so.
 *   - Rank and job size from PMIx_Init and PMIX_JOB_SIZE; appnum, universe and spawned
 *     from PMIX_APPNUM, PMIX_UNIV_SIZE, PMIX_SPAWNED when the server has them (their
 *     integer types differ between servers: any is taken).  The node map comes from
 *     PMIx_Resolve_nodes and PMIx_Resolve_peers (local reads of the job data); a
 *     server without them leaves boot.c to its hostname fallback.
 *   - Cards: PMIx_Put(PMIX_GLOBAL) + PMIx_Commit, and a fence that collects every
 *     rank's data (LOOM_MPI_PMIX_COLLECT=0: a fence without data, each get of a remote
 *     key is then a request to that rank's server: direct modex).  After a collecting
 *     fence gets are marked PMIX_OPTIONAL (a missing key is an answer, not a wait);
 *     direct-modex gets carry a PMIX_TIMEOUT (LOOM_MPI_PMI_TIMEOUT, default 60 s).
 *   - A server that accepts and never answers holds PMIx_Init for ever (OpenPMIx 4.2):
 *     PMIX_MCA_ptl_base_handshake_wait_time (set to LOOM_MPI_PMI_TIMEOUT unless the
 *     user set it) makes libpmix give up, and a watch thread ends the process 5 s after
 *     that with a message if it still has not returned.
 *   - A get of a key nobody put waits (2 s by default, PMIX_TIMEOUT otherwise) unless
 *     marked PMIX_OPTIONAL; PMIX_OPTIONAL finds remote keys only after a collecting
 *     fence, and only where the client keeps the collected data itself (not with
 *     PMIX_MCA_gds=hash), so a miss is asked of the server once more (pmix_get).
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot_launch.h"
#include "boot_pmi.h"

#ifndef HAVE_PMIX

static int pmix_init(struct xm_pmi_job *job, char *why, size_t len)
{
    (void)job;
    snprintf(why, len, "this libmpi was built without PMIx support (configure found no "
                       "libpmix-dev); rebuild it with libpmix-dev installed");
    return -ENOSYS;
}

static int pmix_node_map(int size, int *node_of)
{
    (void)size;
    (void)node_of;
    return -ENOSYS;
}

static int pmix_put(const char *key, const char *val)
{
    (void)key;
    (void)val;
    return -ENOSYS;
}

static int pmix_fence(void)
{
    return -ENOSYS;
}

static int pmix_get(int rank, const char *key, char *buf, int len)
{
    (void)rank;
    (void)key;
    (void)buf;
    (void)len;
    return -ENOSYS;
}

static int pmix_finalize(void)
{
    return 0;
}

static __attribute__((noreturn)) void pmix_abort(int code, const char *msg)
{
    (void)msg;
    _exit(code ? code : 1);
}

#else /* HAVE_PMIX */

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include <pmix.h>

static struct {
    void *lib;
    __typeof__(PMIx_Init) *init;
    __typeof__(PMIx_Finalize) *finalize;
    __typeof__(PMIx_Abort) *abort;
    __typeof__(PMIx_Put) *put;
    __typeof__(PMIx_Commit) *commit;
    __typeof__(PMIx_Fence) *fence;
    __typeof__(PMIx_Get) *get;
    __typeof__(PMIx_Error_string) *errstr;
    __typeof__(PMIx_Resolve_nodes) *resolve_nodes;
    __typeof__(PMIx_Resolve_peers) *resolve_peers;
    void (*value_free)(pmix_value_t *v, size_t n); /* PMIx_Value_free, if it has one */
    pmix_proc_t me, all;
    int collect, timeout, fenced;
    int collected_elsewhere; /* optional gets miss collected data (see pmix_get) */
} P;

static const char *perr(pmix_status_t st)
{
    const char *s = P.errstr ? P.errstr(st) : NULL;
    return s ? s : "unknown PMIx status";
}

static int load(char *why, size_t len)
{
    const char *name = getenv("LOOM_MPI_PMIX_LIB");
    const char *tried = name && *name ? name : "libpmix.so.2";
    P.lib = dlopen(tried, RTLD_NOW | RTLD_GLOBAL);
    if (!P.lib && !(name && *name)) {
        P.lib = dlopen("libpmix.so", RTLD_NOW | RTLD_GLOBAL);
    }
    if (!P.lib) {
        const char *e = dlerror();
        snprintf(why, len,
                 "OpenPMIx's client library could not be loaded (%s); install it "
                 "(Debian: libpmix2) or name it in LOOM_MPI_PMIX_LIB",
                 e ? e : tried);
        return -ENOENT;
    }
#define SYM(field, sym)                                                                  \
    do {                                                                                 \
        *(void **)&P.field = dlsym(P.lib, #sym);                                         \
        if (!P.field) {                                                                  \
            snprintf(why, len, "OpenPMIx's client library has no %s", #sym);             \
            return -ENOENT;                                                              \
        }                                                                                \
    } while (0)
    SYM(init, PMIx_Init);
    SYM(finalize, PMIx_Finalize);
    SYM(abort, PMIx_Abort);
    SYM(put, PMIx_Put);
    SYM(commit, PMIx_Commit);
    SYM(fence, PMIx_Fence);
    SYM(get, PMIx_Get);
    SYM(errstr, PMIx_Error_string);
    SYM(resolve_nodes, PMIx_Resolve_nodes);
    SYM(resolve_peers, PMIx_Resolve_peers);
#undef SYM
    *(void **)&P.value_free = dlsym(P.lib, "PMIx_Value_free");
    return 0;
}

static void value_release(pmix_value_t *v)
{
    if (!v)
        return;
    if (P.value_free) {
        P.value_free(v, 1);
        return;
    }
    if (v->type == PMIX_STRING)
        free(v->data.string);
    else if (v->type == PMIX_BYTE_OBJECT)
        free(v->data.bo.bytes);
    free(v);
}

/* An integer value of any of the integer types servers use for counts and ids. */
static int value_int(const pmix_value_t *v, long *out)
{
    switch (v->type) {
    case PMIX_INT: *out = v->data.integer; return 0;
    case PMIX_INT8: *out = v->data.int8; return 0;
    case PMIX_INT16: *out = v->data.int16; return 0;
    case PMIX_INT32: *out = v->data.int32; return 0;
    case PMIX_INT64: *out = (long)v->data.int64; return 0;
    case PMIX_UINT: *out = (long)v->data.uint; return 0;
    case PMIX_UINT8: *out = v->data.uint8; return 0;
    case PMIX_UINT16: *out = v->data.uint16; return 0;
    case PMIX_UINT32: *out = (long)v->data.uint32; return 0;
    case PMIX_UINT64: *out = (long)v->data.uint64; return 0;
    case PMIX_SIZE: *out = (long)v->data.size; return 0;
    case PMIX_PROC_RANK: *out = (long)v->data.rank; return 0;
    case PMIX_BOOL: *out = v->data.flag; return 0;
    default: return -EPROTO;
    }
}

static void info_bool(pmix_info_t *i, const char *key, bool val)
{
    memset(i, 0, sizeof(*i));
    snprintf(i->key, sizeof(i->key), "%s", key);
    i->value.type = PMIX_BOOL;
    i->value.data.flag = val;
}

static void info_int(pmix_info_t *i, const char *key, int val)
{
    memset(i, 0, sizeof(*i));
    snprintf(i->key, sizeof(i->key), "%s", key);
    i->value.type = PMIX_INT;
    i->value.data.integer = val;
}

/* A key of proc (rank, or PMIX_RANK_WILDCARD for the job) as a long; optional: a
 * missing key is -ENOENT at once. */
static int get_long(pmix_rank_t rank, const char *key, long *out)
{
    pmix_proc_t p = P.me;
    pmix_info_t opt;
    pmix_value_t *v = NULL;
    p.rank = rank;
    info_bool(&opt, PMIX_OPTIONAL, true);
    pmix_status_t st = P.get(&p, key, &opt, 1, &v);
    if (st != PMIX_SUCCESS || !v) {
        value_release(v);
        return -ENOENT;
    }
    int rc = value_int(v, out);
    value_release(v);
    return rc;
}

/* ---- the watch over PMIx_Init ------------------------------------------------ */

static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cv = PTHREAD_COND_INITIALIZER;
static int watch_done;
static char watch_what[640];

static void *watch(void *arg)
{
    (void)arg;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += P.timeout + 5;
    pthread_mutex_lock(&watch_mu);
    int rc = 0;
    while (!watch_done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&watch_cv, &watch_mu, &t);
    int late = !watch_done;
    pthread_mutex_unlock(&watch_mu);
    if (late) {
        fprintf(stderr,
                "loom-mpi: MPI_Init: %s, but PMIx_Init had no answer from the server in "
                "%d s (LOOM_MPI_PMI_TIMEOUT=%d, and 5 s more for libpmix to give up); is "
                "PMIX_SERVER_URI* right?\n",
                watch_what, P.timeout + 5, P.timeout);
        _exit(1);
    }
    return NULL;
}

static int env_seconds(const char *name, int dflt)
{
    const char *s = getenv(name);
    char *end;
    long v = s && *s ? strtol(s, &end, 10) : -1;
    return s && *s && !*end && v > 0 && v <= 86400 ? (int)v : dflt;
}

static int pmix_init(struct xm_pmi_job *job, char *why, size_t len)
{
    int rc = load(why, len);
    if (rc < 0)
        return rc;
    P.timeout = env_seconds("LOOM_MPI_PMI_TIMEOUT", 60);
    const char *c = getenv("LOOM_MPI_PMIX_COLLECT");
    P.collect = !(c && strcmp(c, "0") == 0);

    xm_launch_pmix_seen(xm_launch_getenv, NULL, watch_what, sizeof(watch_what));
    /* libpmix's own bound on a server that accepts and never answers (its default is
     * to wait for ever); the watch below is the backstop */
    char secs[16];
    snprintf(secs, sizeof(secs), "%d", P.timeout);
    setenv("PMIX_MCA_ptl_base_handshake_wait_time", secs, 0);
    pthread_t th;
    int watching = pthread_create(&th, NULL, watch, NULL) == 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pmix_status_t st = P.init(&P.me, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (watching) {
        pthread_mutex_lock(&watch_mu);
        watch_done = 1;
        pthread_cond_signal(&watch_cv);
        pthread_mutex_unlock(&watch_mu);
        pthread_join(th, NULL);
    }
    if (st != PMIX_SUCCESS) {
        /* libpmix's handshake wait ran out: say so, its status word alone ("UNREACH")
         * reads as if nothing had answered the connection */
        if (t1.tv_sec - t0.tv_sec >= P.timeout)
            snprintf(why, len,
                     "PMIx_Init had no answer from the server in %d s "
                     "(LOOM_MPI_PMI_TIMEOUT=%d; libpmix: %s); is PMIX_SERVER_URI* right?",
                     P.timeout, P.timeout, perr(st));
        else
            snprintf(why, len, "PMIx_Init: %s", perr(st));
        return -EIO;
    }
    P.all = P.me;
    P.all.rank = PMIX_RANK_WILDCARD;

    long size = 0, v = 0;
    if (get_long(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size) < 0 || size < 1 ||
        size > 1 << 30 || P.me.rank >= (pmix_rank_t)size) {
        snprintf(why, len, "the PMIx server gave no usable job size (%s: %ld, rank %u)",
                 PMIX_JOB_SIZE, size, (unsigned)P.me.rank);
        P.finalize(NULL, 0);
        return -EPROTO;
    }
    memset(job, 0, sizeof(*job));
    job->rank = (int)P.me.rank;
    job->size = (int)size;
    job->appnum = get_long(P.me.rank, PMIX_APPNUM, &v) == 0 ? (int)v : 0;
    job->universe =
        get_long(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &v) == 0 && v >= size ? (int)v
                                                                          : (int)size;
    job->spawned = get_long(PMIX_RANK_WILDCARD, PMIX_SPAWNED, &v) == 0 && v;
    /* the namespace, cut to fit: every rank cuts it the same way */
    memcpy(job->jobid, P.me.nspace, sizeof(job->jobid) - 1);
    job->jobid[sizeof(job->jobid) - 1] = 0;
    return 0;
}

/* Every rank's node: the job's nodes (PMIx_Resolve_nodes) and each one's ranks
 * (PMIx_Resolve_peers), one local call per node.  Per-rank PMIX_NODEID is no use here:
 * Slurm's server (and Loom's) give it only for ranks of the caller's node. */
static int pmix_node_map(int size, int *node_of)
{
    char *nodes = NULL, *save = NULL;
    int idx = 0, rc = 0;
    for (int r = 0; r < size; r++)
        node_of[r] = -1;
    if (P.resolve_nodes(P.me.nspace, &nodes) != PMIX_SUCCESS || !nodes) {
        free(nodes);
        return -ENOENT;
    }
    for (char *h = strtok_r(nodes, ",", &save); h && idx < size;
         h = strtok_r(NULL, ",", &save), idx++) {
        pmix_proc_t *procs = NULL;
        size_t n = 0;
        if (P.resolve_peers(h, P.me.nspace, &procs, &n) == PMIX_SUCCESS && procs)
            for (size_t i = 0; i < n; i++)
                if (procs[i].rank < (pmix_rank_t)size &&
                    strncmp(procs[i].nspace, P.me.nspace, PMIX_MAX_NSLEN) == 0)
                    node_of[procs[i].rank] = idx;
        free(procs);
    }
    free(nodes);
    for (int r = 0; r < size; r++)
        if (node_of[r] < 0)
            rc = -ENOENT; /* a rank on no node: boot.c asks for hostnames instead */
    return rc;
}

static int pmix_put(const char *key, const char *val)
{
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_STRING;
    v.data.string = (char *)val;
    return P.put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS ? 0 : -EIO;
}

static int pmix_fence(void)
{
    pmix_info_t info[2];
    size_t n = 0;
    if (P.commit() != PMIX_SUCCESS)
        return -EIO;
    info_bool(&info[n++], PMIX_COLLECT_DATA, P.collect);
    const char *t = getenv("LOOM_MPI_PMI_TIMEOUT");
    if (t && *t)
        info_int(&info[n++], PMIX_TIMEOUT, P.timeout);
    pmix_status_t st = P.fence(&P.all, 1, info, n);
    if (st != PMIX_SUCCESS) {
        fprintf(stderr, "loom-mpi: rank %u: PMIx_Fence: %s\n", (unsigned)P.me.rank,
                perr(st));
        return -EIO;
    }
    P.fenced = 1;
    return 0;
}

/* One get; 0 with the value in buf, -ENOENT otherwise.  optional: PMIX_OPTIONAL (a
 * missing key is an answer at once), else PMIX_TIMEOUT (the server is asked). */
static int get_string(int rank, const char *key, int optional, char *buf, int len)
{
    pmix_proc_t p = P.me;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    p.rank = (pmix_rank_t)rank;
    if (optional)
        info_bool(&info, PMIX_OPTIONAL, true);
    else
        info_int(&info, PMIX_TIMEOUT, P.timeout);
    pmix_status_t st = P.get(&p, key, &info, 1, &v);
    int rc = -ENOENT;
    if (st == PMIX_SUCCESS && v && v->type == PMIX_STRING && v->data.string &&
        (int)strlen(v->data.string) < len) {
        strcpy(buf, v->data.string);
        rc = 0;
    }
    value_release(v);
    return rc;
}

/* After a collecting fence every rank's data is local and an optional get finds it,
 * except where the client keeps no copy (PMIX_MCA_gds=hash, a common site setting):
 * a remote key an optional get misses is asked of the server, and once that finds
 * one, every later remote get goes there directly. */
static int pmix_get(int rank, const char *key, char *buf, int len)
{
    if ((pmix_rank_t)rank == P.me.rank)
        return get_string(rank, key, 1, buf, len);
    if (P.collect && !P.collected_elsewhere) {
        if (get_string(rank, key, 1, buf, len) == 0)
            return 0;
        if (get_string(rank, key, 0, buf, len) < 0)
            return -ENOENT;
        P.collected_elsewhere = 1;
        return 0;
    }
    return get_string(rank, key, 0, buf, len);
}

static int pmix_finalize(void)
{
    return P.finalize(NULL, 0) == PMIX_SUCCESS ? 0 : -EIO;
}

static __attribute__((noreturn)) void pmix_abort(int code, const char *msg)
{
    P.abort(code ? code : 1, msg, NULL, 0);
    _exit(code ? code : 1);
}

#endif /* HAVE_PMIX */

const struct xm_pmi xm_pmi_pmix = {
    .name = "PMIx",
    .init = pmix_init,
    .node_map = pmix_node_map,
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .finalize = pmix_finalize,
    .abort = pmix_abort,
};
