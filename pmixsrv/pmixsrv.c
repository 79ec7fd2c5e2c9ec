/* pmixsrv.c - the OpenPMIx server module and its hand-off to the owner's loop
 * (contract in pmixsrv.h).
 *
 * Notes:
 *   - Every libpmix upcall copies what it needs into a struct job, appends it
 *     to a mutex-protected queue and writes the eventfd; it returns
 *     PMIX_SUCCESS (we will call cbfunc) or an error at once.  Nothing else
 *     runs on libpmix's thread except the dmodex answer of
 *     PMIx_server_dmodex_request, which is queued the same way.
 *   - A fence or a direct-modex request in flight is a struct job whose
 *     address is the psrv id; it is on the `pending` list until psrv answers.
 *   - Data handed to a libpmix modex callback stays ours until libpmix calls
 *     the release function we pass with it.
 *   - The node topology that libpmix shares with its clients (hwloc shared
 *     memory) is loaded here, without I/O devices, and handed over as
 *     PMIX_TOPOLOGY2: left to itself libpmix discovers it with every PCI
 *     device, which was most of the cost of PMIx_server_init (lstopo: 13 ms
 *     with I/O, 5 ms without) for every step, PMIx client or not.
 *   - The server's directory (common/safefs): made by us with a fresh random
 *     name (mkdirat, never an existing path), in a base that no other user can
 *     write (strict when root serves another uid: no /tmp), through fds only.
 *     It stays ours (0700) while libpmix creates its files in it (init,
 *     namespace registration, fork env), and is handed to the job's user by
 *     fchown only then.  At destroy it is taken back and removed (frozen top
 *     down, fds only) BEFORE PMIx_server_finalize: libpmix removes its store
 *     directories by path, following whatever symlink the user swapped in, so
 *     it must find nothing left to remove.
 *
 * One piece (about 1350 lines): the only file that sees OpenPMIx's headers;
 *   the upcalls, the queue they feed, the answers and the job data handed to
 *   libpmix all use its types and the struct job hand-off, so a split would
 *   spread those headers and that struct over several files.
 */
#define _GNU_SOURCE
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>
#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#include "cpus.h"
#include "pmixsrv.h"
#include "safefs.h"

enum job_type {
    J_CONNECTED = 1,
    J_FINALIZED,
    J_ABORT,
    J_FENCE,
    J_DMODEX,
    J_DMDX_ANSWER, /* libpmix answered a dmodex request we serve */
    J_NS,          /* publish / unpublish / lookup: j->ns */
};

struct nsop; /* one publish/unpublish/lookup: one psrv_ns_request per key */
struct nsitem {
    struct nsop *op;
    int idx;
};
struct nsop {
    int op; /* PSRV_NS_* */
    int n;
    char **keys, **vals;
    struct nsitem *items;
    int pending, err;
    pmix_op_cbfunc_t opcb;
    pmix_lookup_cbfunc_t lcb;
    void *cbdata;
    pmix_pdata_t *pd; /* lookup answer, kept until destroy */
    struct nsop *next;
};

struct job {
    enum job_type type;
    int rank;
    int status;
    char *msg;
    char *data;
    size_t len;
    uint64_t handle; /* J_DMDX_ANSWER */
    pmix_op_cbfunc_t opcb;
    pmix_modex_cbfunc_t mcb;
    void *cbdata;
    struct nsop *ns;         /* J_NS */
    struct job *next, *prev; /* queue, then pending list */
};

struct pmixsrv {
    struct psrv *srv;
    struct pmixsrv_ops ops;
    void *arg;
    enum psrv_log_level log_level;
    char nspace[PMIX_MAX_NSLEN + 1];
    int size, local_count;
    int *local_ranks;
    int *client_of; /* [size] local client index of a rank, or -1 */
    char ***env;    /* [local_count] */
    char *state;    /* [local_count] bits: 1 connected, 2 finalized, 4 gone */
    char *tmpdir;   /* dir.path */
    int efd;
    struct safefs_dir dir; /* the server's directory */
    pthread_mutex_t mu;
    struct job *qhead, *qtail; /* from libpmix's thread */
    struct job *pending;       /* fences and dmodex requests in flight */
    struct nsop *nsops;        /* name service operations, in flight or answered */
    bool inited;
    bool oversubscribed; /* more local ranks than CPUs this process may use */
#ifdef HAVE_HWLOC
    hwloc_topology_t topo; /* shared with the clients through libpmix, or NULL */
#endif
};

#ifdef HAVE_HWLOC
extern char **environ;

/* hwloc dlopen()s its plugins when the process's first topology is created,
 * and keeps them while one exists.  Those we never need here (OpenCL, GL,
 * libxml2, PCI: the topology we share has no I/O devices) bring about 18
 * libraries with them (X11, ICU, libstdc++...): 3 ms to load, and about 90
 * more mappings that every later fork() of this process copies (64 fork+exec:
 * 32 ms against 25).  hwloc reads HWLOC_PLUGINS_BLACKLIST with getenv() at
 * that moment.  setenv() is not safe while other threads may call getenv()
 * (slurmstepd has several): it may free the array they walk.  So the variable
 * is shown through a copy of environ swapped in by one pointer store and out
 * by another; a copy is never freed, since a reader may still hold it (one
 * per server started, normally one per process).  A blacklist the user set
 * is left alone. */
static hwloc_topology_t topology_init_without_plugins(void)
{
    static char var[] =
        "HWLOC_PLUGINS_BLACKLIST=hwloc_opencl,hwloc_gl,hwloc_xml_libxml,hwloc_pci";
    static char **copy; /* the last one (still reachable) */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    char **saved = NULL;
    hwloc_topology_t t;
    size_t n = 0;

    pthread_mutex_lock(&mu);
    if (!getenv("HWLOC_PLUGINS_BLACKLIST")) {
        while (environ && environ[n])
            n++;
        if ((copy = malloc((n + 2) * sizeof(*copy))) != NULL) {
            copy[0] = var;
            memcpy(copy + 1, environ, n * sizeof(*copy));
            copy[n + 1] = NULL;
            saved = environ;
            environ = copy;
        }
    }
    int rc = hwloc_topology_init(&t);
    if (saved)
        environ = saved;
    pthread_mutex_unlock(&mu);
    return rc < 0 ? NULL : t;
}

/* This node's topology for the clients: cores, caches and NUMA nodes, no I/O
 * devices (their discovery scans every PCI device).  NULL if hwloc fails:
 * libpmix then discovers it itself. */
static hwloc_topology_t load_topology(void)
{
    hwloc_topology_t t = topology_init_without_plugins();

    if (!t)
        return NULL;
    if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
        hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}
#endif

/* Open MPI busy-polls while it waits unless told that its node is
 * oversubscribed.  Its own mpirun tells it through this variable; under srun
 * nobody does, and 64 spinning ranks on 2 cores slow each other down (Open MPI
 * hello, srun -n 64: 2.7 s, 2.0 s with the variable).  Open MPI 5 reads
 * PMIX_NODE_OVERSUBSCRIBED instead, which register_job provides. */
static char *const oversubscribed_env[] = {"OMPI_MCA_mpi_yield_when_idle=1", NULL};

static struct pmixsrv *g_px; /* libpmix has one server per process */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void pxlog(struct pmixsrv *px, enum psrv_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pxlog(struct pmixsrv *px, enum psrv_log_level lvl, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (!px->ops.log || lvl > px->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    px->ops.log(px->arg, lvl, buf);
}

/* ---- libpmix's thread: queue and wake ----------------------------------- */

static struct pmixsrv *current(void)
{
    struct pmixsrv *px;
    pthread_mutex_lock(&g_mu);
    px = g_px;
    pthread_mutex_unlock(&g_mu);
    return px;
}

static pmix_status_t post(struct job *j)
{
    struct pmixsrv *px = current();
    uint64_t one = 1;

    if (!px) {
        free(j->data);
        free(j->msg);
        free(j);
        return PMIX_ERR_INIT;
    }
    pthread_mutex_lock(&px->mu);
    j->next = NULL;
    if (px->qtail)
        px->qtail->next = j;
    else
        px->qhead = j;
    px->qtail = j;
    pthread_mutex_unlock(&px->mu);
    if (write(px->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        return PMIX_ERROR; /* cannot happen with an eventfd */
    return PMIX_SUCCESS;
}

static struct job *new_job(enum job_type t, const pmix_proc_t *proc)
{
    struct job *j = calloc(1, sizeof(*j));
    if (j) {
        j->type = t;
        j->rank = proc ? (int)proc->rank : -1;
    }
    return j;
}

static pmix_status_t up_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
                                  void *cbdata)
{
    (void)obj;
    struct job *j = new_job(J_CONNECTED, proc);
    if (!j)
        return PMIX_ERR_NOMEM;
    j->opcb = cb;
    j->cbdata = cbdata;
    return post(j);
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
                                  void *cbdata)
{
    (void)obj;
    struct job *j = new_job(J_FINALIZED, proc);
    if (!j)
        return PMIX_ERR_NOMEM;
    j->opcb = cb;
    j->cbdata = cbdata;
    return post(j);
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *obj, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cb, void *cbdata)
{
    (void)obj;
    (void)procs;
    (void)nprocs; /* a subset still ends the whole job */
    struct job *j = new_job(J_ABORT, proc);
    if (!j)
        return PMIX_ERR_NOMEM;
    j->status = status;
    j->msg = strdup(msg ? msg : "");
    j->opcb = cb;
    j->cbdata = cbdata;
    return post(j);
}

/* Is the participant set the whole namespace? */
static bool whole_job(const pmix_proc_t procs[], size_t nprocs)
{
    struct pmixsrv *px = current();
    if (!px)
        return false;
    if (nprocs == 1 && procs[0].rank == PMIX_RANK_WILDCARD &&
        strncmp(procs[0].nspace, px->nspace, PMIX_MAX_NSLEN) == 0)
        return true;
    if (nprocs != (size_t)px->size)
        return false;
    for (size_t i = 0; i < nprocs; i++)
        if (procs[i].rank == PMIX_RANK_WILDCARD ||
            procs[i].rank >= (pmix_rank_t)px->size ||
            strncmp(procs[i].nspace, px->nspace, PMIX_MAX_NSLEN) != 0)
            return false;
    /* n distinct ranks of 0..n-1: the whole job (duplicates would be odd). */
    return true;
}

static pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data,
                              size_t ndata, pmix_modex_cbfunc_t cb, void *cbdata)
{
    (void)info;
    (void)ninfo;
    if (!whole_job(procs, nprocs))
        return PMIX_ERR_NOT_SUPPORTED;
    struct job *j = new_job(J_FENCE, NULL);
    if (!j || (ndata && !(j->data = malloc(ndata)))) {
        free(j);
        return PMIX_ERR_NOMEM;
    }
    if (ndata)
        memcpy(j->data, data, ndata);
    j->len = ndata;
    j->mcb = cb;
    j->cbdata = cbdata;
    return post(j);
}

static pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_modex_cbfunc_t cb, void *cbdata)
{
    (void)info;
    (void)ninfo;
    struct pmixsrv *px = current();
    if (!px || strncmp(proc->nspace, px->nspace, PMIX_MAX_NSLEN) != 0 ||
        proc->rank >= (pmix_rank_t)px->size)
        return PMIX_ERR_NOT_FOUND;
    struct job *j = new_job(J_DMODEX, proc);
    if (!j)
        return PMIX_ERR_NOMEM;
    j->mcb = cb;
    j->cbdata = cbdata;
    return post(j);
}

/* libpmix's answer to PMIx_server_dmodex_request (any thread). */
static void dmdx_answer(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    struct job *j = new_job(J_DMDX_ANSWER, NULL);
    if (!j)
        return; /* the requester times out */
    j->handle = (uint64_t)(uintptr_t)cbdata;
    j->status = status;
    if (sz && status == PMIX_SUCCESS && (j->data = malloc(sz))) {
        memcpy(j->data, data, sz);
        j->len = sz;
    } else if (sz && status == PMIX_SUCCESS) {
        j->status = PMIX_ERR_NOMEM;
    }
    (void)post(j);
}

static void nsop_free(struct nsop *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++) {
        free(o->keys ? o->keys[i] : NULL);
        free(o->vals ? o->vals[i] : NULL);
    }
    free(o->keys);
    free(o->vals);
    free(o->items);
    if (o->pd)
        PMIX_PDATA_FREE(o->pd, (size_t)o->n);
    free(o);
}

static struct nsop *nsop_new(int op, int n)
{
    struct nsop *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->op = op;
    o->n = n;
    o->keys = calloc((size_t)n, sizeof(char *));
    o->vals = calloc((size_t)n, sizeof(char *));
    o->items = calloc((size_t)n, sizeof(*o->items));
    if (!o->keys || !o->vals || !o->items) {
        nsop_free(o);
        return NULL;
    }
    return o;
}

static pmix_status_t post_ns(struct nsop *o)
{
    struct job *j = new_job(J_NS, NULL);
    if (!j) {
        nsop_free(o);
        return PMIX_ERR_NOMEM;
    }
    j->ns = o;
    return post(j);
}

/* PMIx keys of the form "pmix.*" in a publish are directives (range,
 * persistence, ...), not data. */
static bool directive(const char *key)
{
    return strncmp(key, "pmix.", 5) == 0;
}

static pmix_status_t up_publish(const pmix_proc_t *proc, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cb, void *cbdata)
{
    int n = 0;
    (void)proc;
    for (size_t i = 0; i < ninfo; i++) {
        if (directive(info[i].key))
            continue;
        if (info[i].value.type != PMIX_STRING || !info[i].value.data.string)
            return PMIX_ERR_NOT_SUPPORTED; /* only string values are kept */
        n++;
    }
    if (n == 0)
        return PMIX_ERR_BAD_PARAM;
    struct nsop *o = nsop_new(PSRV_NS_PUBLISH, n);
    if (!o)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0, k = 0; i < ninfo; i++) {
        if (directive(info[i].key))
            continue;
        o->keys[k] = strdup(info[i].key);
        o->vals[k] = strdup(info[i].value.data.string);
        if (!o->keys[k] || !o->vals[k]) {
            nsop_free(o);
            return PMIX_ERR_NOMEM;
        }
        k++;
    }
    o->opcb = cb;
    o->cbdata = cbdata;
    return post_ns(o);
}

static pmix_status_t keys_op(int op, char **keys, pmix_op_cbfunc_t opcb,
                             pmix_lookup_cbfunc_t lcb, void *cbdata)
{
    int n = 0;
    while (keys && keys[n])
        n++;
    if (n == 0)
        return PMIX_ERR_NOT_SUPPORTED; /* "everything this proc published" */
    struct nsop *o = nsop_new(op, n);
    if (!o)
        return PMIX_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        if (!(o->keys[i] = strdup(keys[i]))) {
            nsop_free(o);
            return PMIX_ERR_NOMEM;
        }
    o->opcb = opcb;
    o->lcb = lcb;
    o->cbdata = cbdata;
    return post_ns(o);
}

static pmix_status_t up_lookup(const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo,
                               pmix_lookup_cbfunc_t cb, void *cbdata)
{
    (void)proc;
    (void)info;
    (void)ninfo; /* PMIX_WAIT is not supported: a missing key is not found */
    return keys_op(PSRV_NS_LOOKUP, keys, NULL, cb, cbdata);
}

static pmix_status_t up_unpublish(const pmix_proc_t *proc, char **keys,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cb, void *cbdata)
{
    (void)proc;
    (void)info;
    (void)ninfo;
    return keys_op(PSRV_NS_UNPUBLISH, keys, cb, NULL, cbdata);
}

static pmix_server_module_t module = {
    .client_connected = up_connected,
    .client_finalized = up_finalized,
    .abort = up_abort,
    .fence_nb = up_fence,
    .direct_modex = up_dmodex,
    .publish = up_publish,
    .lookup = up_lookup,
    .unpublish = up_unpublish,
    /* spawn, connect, disconnect, ...: NULL, libpmix answers
     * PMIX_ERR_NOT_SUPPORTED to the client at once. */
};

/* ---- owner's thread ---------------------------------------------------- */

static void pending_add(struct pmixsrv *px, struct job *j)
{
    j->prev = NULL;
    j->next = px->pending;
    if (px->pending)
        px->pending->prev = j;
    px->pending = j;
}

static void pending_del(struct pmixsrv *px, struct job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        px->pending = j->next;
    if (j->next)
        j->next->prev = j->prev;
}

static struct job *pending_find(struct pmixsrv *px, uint64_t id)
{
    for (struct job *j = px->pending; j; j = j->next)
        if ((uint64_t)(uintptr_t)j == id)
            return j;
    return NULL;
}

static void nsop_free(struct nsop *o);

static void free_job(struct job *j)
{
    nsop_free(j->ns);
    free(j->data);
    free(j->msg);
    free(j);
}

static void release_buf(void *cbdata)
{
    free(cbdata);
}

/* Hand data (copied) to a libpmix modex callback. */
static void modex_reply(pmix_modex_cbfunc_t cb, void *cbdata, pmix_status_t st,
                        const void *data, size_t len)
{
    char *copy = NULL;
    if (st == PMIX_SUCCESS && len) {
        if (!(copy = malloc(len))) {
            cb(PMIX_ERR_NOMEM, NULL, 0, cbdata, NULL, NULL);
            return;
        }
        memcpy(copy, data, len);
    }
    cb(st, copy, st == PMIX_SUCCESS ? len : 0, cbdata, copy ? release_buf : NULL, copy);
}

static int client_of(struct pmixsrv *px, int rank)
{
    return rank >= 0 && rank < px->size ? px->client_of[rank] : -1;
}

/* Every key of o answered: answer libpmix. */
static void ns_finish(struct pmixsrv *px, struct nsop *o)
{
    pmix_status_t st = o->err == 0   ? PMIX_SUCCESS
                       : o->err == 1 ? (o->op == PSRV_NS_PUBLISH ? PMIX_ERR_DUPLICATE_KEY
                                                                 : PMIX_ERR_NOT_FOUND)
                                     : PMIX_ERROR;
    if (o->op != PSRV_NS_LOOKUP) {
        if (o->opcb)
            o->opcb(st, o->cbdata);
        return;
    }
    if (st != PMIX_SUCCESS) {
        o->lcb(st, NULL, 0, o->cbdata);
        return;
    }
    PMIX_PDATA_CREATE(o->pd, (size_t)o->n);
    if (!o->pd) {
        o->lcb(PMIX_ERR_NOMEM, NULL, 0, o->cbdata);
        return;
    }
    for (int i = 0; i < o->n; i++) {
        pmix_proc_t who;
        PMIX_PROC_CONSTRUCT(&who);
        snprintf(who.nspace, sizeof(who.nspace), "%s", px->nspace);
        who.rank = PMIX_RANK_UNDEF; /* the publisher is not recorded */
        PMIX_PDATA_LOAD(&o->pd[i], &who, o->keys[i], o->vals[i], PMIX_STRING);
    }
    o->lcb(PMIX_SUCCESS, o->pd, (size_t)o->n, o->cbdata);
}

void pmixsrv_ns_done(struct pmixsrv *px, uint64_t id, int rc, const char *value)
{
    if (!px)
        return;
    for (struct nsop *o = px->nsops; o; o = o->next) {
        if (id < (uint64_t)(uintptr_t)o->items ||
            id >= (uint64_t)(uintptr_t)(o->items + o->n) || o->pending <= 0)
            continue;
        struct nsitem *it = (struct nsitem *)(uintptr_t)id;
        if (rc != 0 && o->err == 0)
            o->err = rc;
        if (rc == 0 && value && !o->vals[it->idx])
            o->vals[it->idx] = strdup(value);
        if (rc == 0 && o->op == PSRV_NS_LOOKUP && !o->vals[it->idx] && o->err == 0)
            o->err = 2;
        if (--o->pending == 0)
            ns_finish(px, o);
        return;
    }
}

static void run_ns(struct pmixsrv *px, struct nsop *o)
{
    o->next = px->nsops;
    px->nsops = o;
    o->pending = o->n;
    for (int i = 0; i < o->n; i++) {
        o->items[i].op = o;
        o->items[i].idx = i;
    }
    for (int i = 0; i < o->n && o->pending > 0; i++) {
        int rc = psrv_ns_request(px->srv, (uint64_t)(uintptr_t)&o->items[i], o->op,
                                 o->keys[i], o->vals[i]);
        if (rc < 0) { /* no callback comes for this key */
            if (o->err == 0)
                o->err = 2;
            if (--o->pending == 0)
                ns_finish(px, o);
        }
    }
}

static void run(struct pmixsrv *px, struct job *j)
{
    int rc;

    switch (j->type) {
    case J_CONNECTED:
        pxlog(px, PSRV_LOG_DEBUG, "PMIx: rank %d connected", j->rank);
        if (client_of(px, j->rank) >= 0)
            px->state[client_of(px, j->rank)] |= 1;
        if (px->ops.client_connected && client_of(px, j->rank) >= 0)
            px->ops.client_connected(px->arg, client_of(px, j->rank));
        if (j->opcb)
            j->opcb(PMIX_SUCCESS, j->cbdata);
        break;
    case J_FINALIZED:
        pxlog(px, PSRV_LOG_DEBUG, "PMIx: rank %d finalized", j->rank);
        if (client_of(px, j->rank) >= 0) {
            px->state[client_of(px, j->rank)] |= 2;
            psrv_client_finalized(px->srv, client_of(px, j->rank));
        }
        if (j->opcb)
            j->opcb(PMIX_SUCCESS, j->cbdata);
        break;
    case J_ABORT: {
        char text[1100];
        snprintf(text, sizeof(text), "rank %d called PMIx_Abort (status %d): %s", j->rank,
                 j->status, j->msg && *j->msg ? j->msg : "(no message)");
        psrv_abort(px->srv, j->rank, j->status ? j->status : 1, text);
        if (j->opcb)
            j->opcb(PMIX_SUCCESS, j->cbdata);
        break;
    }
    case J_FENCE:
        pending_add(px, j);
        rc = psrv_coll_contribute(px->srv, (uint64_t)(uintptr_t)j, j->data, j->len);
        if (rc < 0) {
            pending_del(px, j);
            modex_reply(j->mcb, j->cbdata, PMIX_ERR_NOMEM, NULL, 0);
            break;
        }
        return; /* answered by pmixsrv_coll_done */
    case J_DMODEX:
        pending_add(px, j);
        rc = psrv_dmdx_request(px->srv, (uint64_t)(uintptr_t)j, j->rank, NULL, 0);
        if (rc < 0) {
            pending_del(px, j);
            pxlog(px, PSRV_LOG_WARN, "PMIx: direct modex for rank %d: %s", j->rank,
                  strerror(-rc));
            modex_reply(j->mcb, j->cbdata, PMIX_ERROR, NULL, 0);
            break;
        }
        return; /* answered by pmixsrv_dmdx_done */
    case J_NS:
        run_ns(px, j->ns);
        j->ns = NULL; /* on px->nsops now */
        break;
    case J_DMDX_ANSWER:
        rc = psrv_dmdx_reply(px->srv, j->handle, j->status == PMIX_SUCCESS ? 0 : -EIO,
                             j->data, j->status == PMIX_SUCCESS ? j->len : 0);
        if (rc < 0)
            pxlog(px, PSRV_LOG_WARN, "PMIx: cannot answer direct modex %llu: %s",
                  (unsigned long long)j->handle, strerror(-rc));
        break;
    }
    free_job(j);
}

void pmixsrv_dispatch(struct pmixsrv *px)
{
    uint64_t n;
    struct job *list;

    if (!px)
        return;
    if (read(px->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
        pxlog(px, PSRV_LOG_WARN, "PMIx: eventfd read: %s", strerror(errno));
    pthread_mutex_lock(&px->mu);
    list = px->qhead;
    px->qhead = px->qtail = NULL;
    pthread_mutex_unlock(&px->mu);
    while (list) {
        struct job *j = list;
        list = j->next;
        run(px, j);
    }
}

void pmixsrv_client_gone(struct pmixsrv *px, int client)
{
    char text[160];

    if (!px || client < 0 || client >= px->local_count || (px->state[client] & 4))
        return;
    px->state[client] |= 4;
    if ((px->state[client] & 3) != 1)
        return;
    int rank = -1;
    for (int r = 0; r < px->size; r++)
        if (px->client_of[r] == client)
            rank = r;
    snprintf(text, sizeof(text), "rank %d exited without PMIx_Finalize", rank);
    psrv_abort(px->srv, rank, 1, text);
}

void pmixsrv_coll_done(struct pmixsrv *px, uint64_t id, int rc, const void *data,
                       size_t len, const char *msg)
{
    struct job *j;
    if (!px || !(j = pending_find(px, id)) || j->type != J_FENCE)
        return;
    pending_del(px, j);
    if (rc < 0)
        pxlog(px, PSRV_LOG_DEBUG, "PMIx: fence failed: %s", msg ? msg : strerror(-rc));
    modex_reply(j->mcb, j->cbdata, rc == 0 ? PMIX_SUCCESS : PMIX_ERROR, data, len);
    free_job(j);
}

void pmixsrv_dmdx_done(struct pmixsrv *px, uint64_t id, int rc, const void *data,
                       size_t len, const char *msg)
{
    struct job *j;
    if (!px || !(j = pending_find(px, id)) || j->type != J_DMODEX)
        return;
    pending_del(px, j);
    if (rc < 0)
        pxlog(px, PSRV_LOG_WARN, "PMIx: direct modex for rank %d failed: %s", j->rank,
              msg ? msg : strerror(-rc));
    modex_reply(j->mcb, j->cbdata,
                rc == 0            ? PMIX_SUCCESS
                : rc == -ETIMEDOUT ? PMIX_ERR_TIMEOUT
                                   : PMIX_ERROR,
                data, len);
    free_job(j);
}

void pmixsrv_dmdx_request(struct pmixsrv *px, uint64_t handle, int rank, const void *info,
                          size_t len)
{
    pmix_proc_t proc;
    pmix_status_t st;

    (void)info;
    (void)len;
    if (!px)
        return;
    PMIX_PROC_CONSTRUCT(&proc);
    snprintf(proc.nspace, sizeof(proc.nspace), "%s", px->nspace);
    proc.rank = (pmix_rank_t)rank;
    st = PMIx_server_dmodex_request(&proc, dmdx_answer, (void *)(uintptr_t)handle);
    if (st != PMIX_SUCCESS) {
        pxlog(px, PSRV_LOG_WARN, "PMIx: dmodex request for rank %d: %s", rank,
              PMIx_Error_string(st));
        (void)psrv_dmdx_reply(px->srv, handle, -EIO, NULL, 0);
    }
}

/* ---- set-up -------------------------------------------------------------- */

struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int left;
    pmix_status_t st;
};

static void op_done(pmix_status_t st, void *cbdata)
{
    struct waiter *w = cbdata;
    pthread_mutex_lock(&w->mu);
    if (st != PMIX_SUCCESS)
        w->st = st;
    w->left--;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Wait for every registration callback, at most 30 s. */
static pmix_status_t wait_all(struct waiter *w)
{
    struct timespec ts;
    pmix_status_t st;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    pthread_mutex_lock(&w->mu);
    while (w->left > 0)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT) {
            w->st = PMIX_ERR_TIMEOUT;
            break;
        }
    st = w->st;
    pthread_mutex_unlock(&w->mu);
    return st;
}

/* A growable string. */
struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
};

static void sb_add(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = b->s ? vsnprintf(b->s + b->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (n >= 0 && cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
}

static void info_str(pmix_info_t *i, const char *key, const char *v)
{
    PMIX_INFO_LOAD(i, key, v, PMIX_STRING);
}

static void info_u32(pmix_info_t *i, const char *key, uint32_t v)
{
    PMIX_INFO_LOAD(i, key, &v, PMIX_UINT32);
}

static void info_u16(pmix_info_t *i, const char *key, uint16_t v)
{
    PMIX_INFO_LOAD(i, key, &v, PMIX_UINT16);
}

static void info_rank(pmix_info_t *i, const char *key, pmix_rank_t v)
{
    PMIX_INFO_LOAD(i, key, &v, PMIX_PROC_RANK);
}

static void info_bool(pmix_info_t *i, const char *key, bool v)
{
    PMIX_INFO_LOAD(i, key, &v, PMIX_BOOL);
}

static int app_of(const struct pmixsrv_config *cfg, int r)
{
    return cfg->rank_appnum ? cfg->rank_appnum[r] : 0;
}

/* Per-rank PMIX_PROC_DATA. */
static int proc_data(struct pmixsrv *px, const struct pmixsrv_config *cfg, int r,
                     const int *app_ldr, const int *local_idx, pmix_info_t *out)
{
    pmix_data_array_t *da;
    pmix_info_t *a;
    size_t n = 0, max = 10;

    PMIX_DATA_ARRAY_CREATE(da, max, PMIX_INFO);
    if (!da)
        return -ENOMEM;
    a = da->array;
    int app = app_of(cfg, r);
    info_rank(&a[n++], PMIX_RANK, (pmix_rank_t)r);
    info_u32(&a[n++], PMIX_APPNUM, (uint32_t)app);
    info_rank(&a[n++], PMIX_APPLDR, (pmix_rank_t)app_ldr[app]);
    info_rank(&a[n++], PMIX_GLOBAL_RANK, (pmix_rank_t)r);
    info_rank(&a[n++], PMIX_APP_RANK, (pmix_rank_t)(r - app_ldr[app]));
    info_str(&a[n++], PMIX_HOSTNAME, cfg->node_names[cfg->rank_node[r]]);
    info_u32(&a[n++], PMIX_NODEID, (uint32_t)cfg->rank_node[r]);
    if (local_idx[r] >= 0) {
        info_u16(&a[n++], PMIX_LOCAL_RANK, (uint16_t)local_idx[r]);
        info_u16(&a[n++], PMIX_NODE_RANK, (uint16_t)local_idx[r]);
    }
    da->size = n;
    (void)px;
    PMIX_INFO_CONSTRUCT(out);
    snprintf(out->key, sizeof(out->key), "%s", PMIX_PROC_DATA);
    out->value.type = PMIX_DATA_ARRAY;
    out->value.data.darray = da;
    return 0;
}

static int register_job(struct pmixsrv *px, const struct pmixsrv_config *cfg)
{
    struct sbuf nodes = {0}, ppn = {0}, peers = {0};
    char *node_regex = NULL, *ppn_regex = NULL, nsdir[4200];
    int *local_idx = NULL, *app_ldr = NULL, *node_cnt = NULL, napps = 1;
    pmix_info_t *info = NULL;
    size_t ninfo = 0, max;
    pmix_status_t st;
    int rc = -ENOMEM, lldr = cfg->size;

    local_idx = malloc((size_t)cfg->size * sizeof(int));
    node_cnt = calloc((size_t)cfg->nnodes, sizeof(int));
    for (int r = 0; r < cfg->size; r++)
        if (app_of(cfg, r) + 1 > napps)
            napps = app_of(cfg, r) + 1;
    app_ldr = malloc((size_t)napps * sizeof(int));
    if (!local_idx || !node_cnt || !app_ldr)
        goto out;
    for (int a = 0; a < napps; a++)
        app_ldr[a] = 0;
    for (int r = cfg->size - 1; r >= 0; r--)
        app_ldr[app_of(cfg, r)] = r;
    for (int r = 0; r < cfg->size; r++)
        local_idx[r] = -1;
    for (int i = 0; i < cfg->local_count; i++) {
        local_idx[cfg->local_ranks[i]] = i;
        sb_add(&peers, "%s%d", i ? "," : "", cfg->local_ranks[i]);
        if (cfg->local_ranks[i] < lldr)
            lldr = cfg->local_ranks[i];
    }
    for (int k = 0; k < cfg->nnodes; k++)
        sb_add(&nodes, "%s%s", k ? "," : "", cfg->node_names[k]);
    /* Ranks per node, in node order: "0,1;2,3". */
    for (int k = 0; k < cfg->nnodes; k++) {
        int first = 1;
        if (k)
            sb_add(&ppn, ";");
        for (int r = 0; r < cfg->size; r++)
            if (cfg->rank_node[r] == k) {
                sb_add(&ppn, first ? "%d" : ",%d", r);
                first = 0;
                node_cnt[k]++;
            }
    }
    if (nodes.oom || ppn.oom || peers.oom)
        goto out;
    if ((st = PMIx_generate_regex(nodes.s, &node_regex)) != PMIX_SUCCESS ||
        (st = PMIx_generate_ppn(ppn.s, &ppn_regex)) != PMIX_SUCCESS) {
        pxlog(px, PSRV_LOG_ERROR, "PMIx: cannot encode the node/proc map: %s",
              PMIx_Error_string(st));
        rc = -EIO;
        goto out;
    }
    snprintf(nsdir, sizeof(nsdir), "%s/%s", px->tmpdir, cfg->nspace);

    max = 24 + (size_t)cfg->size;
    PMIX_INFO_CREATE(info, max);
    if (!info)
        goto out;
    uint32_t usize = (uint32_t)(cfg->universe_size > 0 ? cfg->universe_size : cfg->size);
    info_str(&info[ninfo++], PMIX_JOBID, cfg->jobid);
    info_bool(&info[ninfo++], PMIX_SPAWNED, false);
    info_u32(&info[ninfo++], PMIX_UNIV_SIZE, usize);
    info_u32(&info[ninfo++], PMIX_JOB_SIZE, (uint32_t)cfg->size);
    info_u32(&info[ninfo++], PMIX_MAX_PROCS, usize);
    info_u32(&info[ninfo++], PMIX_NUM_NODES, (uint32_t)cfg->nnodes);
    info_u32(&info[ninfo++], PMIX_NODEID, (uint32_t)cfg->nodeid);
    info_u32(&info[ninfo++], PMIX_LOCAL_SIZE, (uint32_t)cfg->local_count);
    info_u32(&info[ninfo++], PMIX_NODE_SIZE, (uint32_t)cfg->local_count);
    info_str(&info[ninfo++], PMIX_LOCAL_PEERS, peers.s);
    info_rank(&info[ninfo++], PMIX_LOCALLDR, (pmix_rank_t)lldr);
    info_str(&info[ninfo++], PMIX_NODE_MAP, node_regex);
    info_str(&info[ninfo++], PMIX_PROC_MAP, ppn_regex);
    if (cfg->anl_map)
        info_str(&info[ninfo++], PMIX_ANL_MAP, cfg->anl_map);
    info_str(&info[ninfo++], PMIX_TMPDIR, px->tmpdir);
    info_str(&info[ninfo++], PMIX_NSDIR, nsdir);
    if (napps == 1)
        info_u32(&info[ninfo++], PMIX_APP_SIZE, (uint32_t)cfg->size);
#ifdef PMIX_NODE_OVERSUBSCRIBED
    if (px->oversubscribed) /* Open MPI 5 takes the key's presence as "true" */
        info_bool(&info[ninfo++], PMIX_NODE_OVERSUBSCRIBED, true);
#endif
    for (int r = 0; r < cfg->size; r++)
        if ((rc = proc_data(px, cfg, r, app_ldr, local_idx, &info[ninfo++])) < 0)
            goto out;

    struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1,
                       PMIX_SUCCESS};
    st = PMIx_server_register_nspace(cfg->nspace, cfg->local_count, info, ninfo, op_done,
                                     &w);
    if (st == PMIX_OPERATION_SUCCEEDED)
        op_done(PMIX_SUCCESS, &w);
    else if (st != PMIX_SUCCESS)
        op_done(st, &w);
    for (int i = 0; i < cfg->local_count; i++) {
        pmix_proc_t proc;
        PMIX_PROC_CONSTRUCT(&proc);
        snprintf(proc.nspace, sizeof(proc.nspace), "%s", cfg->nspace);
        proc.rank = (pmix_rank_t)cfg->local_ranks[i];
        pthread_mutex_lock(&w.mu);
        w.left++;
        pthread_mutex_unlock(&w.mu);
        st = PMIx_server_register_client(&proc, cfg->uid, cfg->gid, NULL, op_done, &w);
        if (st == PMIX_OPERATION_SUCCEEDED)
            op_done(PMIX_SUCCESS, &w);
        else if (st != PMIX_SUCCESS)
            op_done(st, &w);
    }
    st = wait_all(&w);
    if (st != PMIX_SUCCESS) {
        pxlog(px, PSRV_LOG_ERROR, "PMIx: cannot register namespace %s: %s", cfg->nspace,
              PMIx_Error_string(st));
        rc = -EIO;
        goto out;
    }
    rc = 0;
out:
    if (info)
        PMIX_INFO_FREE(info, max);
    free(node_regex);
    free(ppn_regex);
    free(nodes.s);
    free(ppn.s);
    free(peers.s);
    free(local_idx);
    free(app_ldr);
    free(node_cnt);
    return rc;
}

/* Make the server's directory: cfg->tmpdir is BASE/PREFIX; we make
 * BASE/PREFIX.<random> (safefs_mkdtemp), strict when root serves another uid.
 * 0, or -errno (logged). */
static int make_dir(struct pmixsrv *px, const struct pmixsrv_config *cfg)
{
    char base[SAFEFS_PATH_MAX], err[SAFEFS_PATH_MAX + 200];
    const char *slash = strrchr(cfg->tmpdir, '/');
    size_t bl = slash ? (size_t)(slash - cfg->tmpdir) : 0;
    uid_t me = geteuid();

    if (!slash || !slash[1] || bl >= sizeof(base)) {
        pxlog(px, PSRV_LOG_ERROR, "PMIx: bad server directory %s (expected BASE/PREFIX)",
              cfg->tmpdir);
        return -EINVAL;
    }
    if (me != 0 && cfg->uid != me) {
        pxlog(px, PSRV_LOG_ERROR, "PMIx: cannot make a directory for uid %u as uid %u",
              (unsigned)cfg->uid, (unsigned)me);
        return -EPERM;
    }
    memcpy(base, cfg->tmpdir, bl);
    base[bl] = '\0';
    if (!bl)
        snprintf(base, sizeof(base), "/");
    int strict = me == 0 && cfg->uid != 0 ? SAFEFS_STRICT : 0;
    if (safefs_mkdtemp(&px->dir, base, strict,
                       cfg->base_owner ? cfg->base_owner : (uid_t)-1, slash + 1, err,
                       sizeof(err)) < 0) {
        int e = errno;
        pxlog(px, PSRV_LOG_ERROR, "PMIx: cannot make the server's directory: %s%s", err,
              strict && e == EPERM ? " (root makes it for the job's user only in a "
                                     "directory no other user can write: check "
                                     "SlurmdSpoolDir)"
                                   : "");
        return -e;
    }
    if (!(px->tmpdir = strdup(px->dir.path))) {
        safefs_remove(&px->dir, NULL, 0);
        return -ENOMEM;
    }
    return 0;
}

/* Take the directory back and remove it (before libpmix's own path-based
 * cleanup, see the notes at the top). */
static void remove_dir(struct pmixsrv *px)
{
    char err[SAFEFS_PATH_MAX + 200];
    if (px->dir.fd >= 0 && safefs_remove(&px->dir, err, sizeof(err)) < 0)
        pxlog(px, PSRV_LOG_WARN, "PMIx: %s", err);
}

struct pmixsrv *pmixsrv_create(const struct pmixsrv_config *cfg, struct psrv *srv,
                               const struct pmixsrv_ops *ops, void *arg)
{
    struct pmixsrv *px;
    pmix_info_t *info = NULL;
    pmix_status_t st;
    int err = ENOMEM;

    if (!cfg || !srv || !cfg->nspace || !cfg->jobid || !cfg->tmpdir || !cfg->node_names ||
        !cfg->rank_node || !cfg->local_ranks || cfg->size < 1 || cfg->nnodes < 1 ||
        cfg->local_count < 1 || strlen(cfg->nspace) > PMIX_MAX_NSLEN) {
        errno = EINVAL;
        return NULL;
    }
    if (current()) {
        errno = EBUSY;
        return NULL;
    }
    if (!(px = calloc(1, sizeof(*px))))
        return NULL;
    px->srv = srv;
    if (ops)
        px->ops = *ops;
    px->arg = arg;
    px->log_level = cfg->log_level;
    px->efd = -1;
    safefs_dir_init(&px->dir);
    pthread_mutex_init(&px->mu, NULL);
    snprintf(px->nspace, sizeof(px->nspace), "%s", cfg->nspace);
    px->size = cfg->size;
    px->local_count = cfg->local_count;
    px->oversubscribed = cpus_oversubscribed(cfg->local_count, cfg->node_cpus);
    px->client_of = malloc((size_t)cfg->size * sizeof(int));
    px->env = calloc((size_t)cfg->local_count, sizeof(char **));
    px->state = calloc((size_t)cfg->local_count, 1);
    if (!px->client_of || !px->env || !px->state)
        goto fail;
    for (int r = 0; r < cfg->size; r++)
        px->client_of[r] = -1;
    for (int i = 0; i < cfg->local_count; i++) {
        int r = cfg->local_ranks[i];
        if (r < 0 || r >= cfg->size) {
            err = EINVAL;
            goto fail;
        }
        px->client_of[r] = i;
    }
    if ((px->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        err = errno;
        goto fail;
    }
    int mrc = make_dir(px, cfg);
    if (mrc < 0) {
        err = -mrc;
        goto fail;
    }
    /* libpmix's plugins resolve its symbols globally; we may be a module
     * dlopen()ed without RTLD_GLOBAL (a Slurm plugin). */
    (void)dlopen("libpmix.so.2", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);

    pthread_mutex_lock(&g_mu);
    if (g_px) {
        pthread_mutex_unlock(&g_mu);
        err = EBUSY;
        goto fail;
    }
    g_px = px;
    pthread_mutex_unlock(&g_mu);

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t ninfo = 6;
    PMIX_INFO_CREATE(info, 7);
    uint32_t uid = (uint32_t)cfg->uid, gid = (uint32_t)cfg->gid;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, px->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, px->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_USERID, &uid, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_GRPID, &gid, PMIX_UINT32);
    bool no = false, share = true; /* clients adopt our hwloc topology */
    PMIX_INFO_LOAD(&info[4], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[5], PMIX_SERVER_SHARE_TOPOLOGY, &share, PMIX_BOOL);
#ifdef HAVE_HWLOC
    pmix_topology_t topo = {.source = "hwloc:" HWLOC_VERSION};
    if ((topo.topology = px->topo = load_topology()) != NULL) {
        /* by hand, not PMIX_INFO_LOAD: libpmix keeps the pointer, and freeing the
         * info must not destroy the topology it refers to (type reset below) */
        PMIX_LOAD_KEY(info[6].key, PMIX_TOPOLOGY2);
        info[6].value.type = PMIX_TOPO;
        info[6].value.data.topo = &topo;
        ninfo = 7;
    }
#endif
    st = PMIx_server_init(&module, info, ninfo);
    info[6].value.type = PMIX_UNDEF;
    PMIX_INFO_FREE(info, 7);
    if (st != PMIX_SUCCESS) {
        pxlog(px, PSRV_LOG_ERROR, "PMIx: PMIx_server_init: %s", PMIx_Error_string(st));
        err = EIO;
        goto fail_global;
    }
    px->inited = true;
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (register_job(px, cfg) < 0) {
        err = EIO;
        goto fail_global;
    }
    for (int i = 0; i < cfg->local_count; i++) {
        pmix_proc_t proc;
        PMIX_PROC_CONSTRUCT(&proc);
        snprintf(proc.nspace, sizeof(proc.nspace), "%s", cfg->nspace);
        proc.rank = (pmix_rank_t)cfg->local_ranks[i];
        st = PMIx_server_setup_fork(&proc, &px->env[i]);
        if (st != PMIX_SUCCESS) {
            pxlog(px, PSRV_LOG_ERROR, "PMIx: setup_fork for rank %d: %s", proc.rank,
                  PMIx_Error_string(st));
            err = EIO;
            goto fail_global;
        }
    }
    /* libpmix has made its files: only now may the job's user enter.  Its copy
     * of the topology for the clients (hwloc shared memory) is root's 0600: the
     * job's user may read it (Open MPI adopts it), never write it (hwloc maps
     * it at a fixed address, pointers included). */
    int tfd = openat(px->dir.fd, "hwloc.sm", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (tfd >= 0) {
        struct stat tst;
        if (fstat(tfd, &tst) == 0 && S_ISREG(tst.st_mode) && tst.st_uid == geteuid())
            (void)fchmod(tfd, 0644);
        close(tfd);
    }
    char gerr[SAFEFS_PATH_MAX + 200];
    if (geteuid() == 0 &&
        safefs_give(&px->dir, cfg->uid, cfg->gid, 0700, gerr, sizeof(gerr)) < 0) {
        err = errno;
        pxlog(px, PSRV_LOG_ERROR, "PMIx: %s", gerr);
        goto fail_global;
    }
    struct timespec t2;
    clock_gettime(CLOCK_MONOTONIC, &t2);
    pxlog(px, PSRV_LOG_DEBUG,
          "PMIx: serving namespace %s (%d local ranks%s) from %s; server init %.1f ms "
          "(topology %s), registration and fork env %.1f ms",
          cfg->nspace, cfg->local_count, px->oversubscribed ? ", oversubscribed" : "",
          px->tmpdir, (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
#ifdef HAVE_HWLOC
          px->topo ? "ours, without I/O devices" : "libpmix's own",
#else
          "libpmix's own",
#endif
          (t2.tv_sec - t1.tv_sec) * 1e3 + (t2.tv_nsec - t1.tv_nsec) / 1e6);
    return px;
fail_global:
    pmixsrv_destroy(px);
    errno = err;
    return NULL;
fail:
    remove_dir(px);
    if (px->efd >= 0)
        close(px->efd);
    free(px->client_of);
    free(px->env);
    free(px->tmpdir);
    free(px->state);
    pthread_mutex_destroy(&px->mu);
    free(px);
    errno = err;
    return NULL;
}

void pmixsrv_destroy(struct pmixsrv *px)
{
    if (!px)
        return;
    remove_dir(px); /* first: see the notes at the top */
    if (px->inited)
        PMIx_server_finalize(); /* joins libpmix's thread: no upcall after */
#ifdef HAVE_HWLOC
    if (px->topo)
        hwloc_topology_destroy(px->topo); /* libpmix leaves a given topology alone */
#endif
    pthread_mutex_lock(&g_mu);
    if (g_px == px)
        g_px = NULL;
    pthread_mutex_unlock(&g_mu);
    while (px->qhead) {
        struct job *j = px->qhead;
        px->qhead = j->next;
        free_job(j);
    }
    while (px->pending) {
        struct job *j = px->pending;
        px->pending = j->next;
        free_job(j);
    }
    while (px->nsops) {
        struct nsop *o = px->nsops;
        px->nsops = o->next;
        nsop_free(o);
    }
    for (int i = 0; px->env && i < px->local_count; i++) {
        for (char **e = px->env[i]; e && *e; e++)
            free(*e);
        free(px->env[i]);
    }
    if (px->efd >= 0)
        close(px->efd);
    free(px->client_of);
    free(px->env);
    free(px->tmpdir);
    free(px->state);
    pthread_mutex_destroy(&px->mu);
    free(px);
}

int pmixsrv_fd(const struct pmixsrv *px)
{
    return px ? px->efd : -1;
}

char *const *pmixsrv_task_env(const struct pmixsrv *px, int client)
{
    if (!px || client < 0 || client >= px->local_count)
        return NULL;
    return px->env[client];
}

char *const *pmixsrv_task_env_defaults(const struct pmixsrv *px)
{
    return px && px->oversubscribed ? oversubscribed_env : NULL;
}
