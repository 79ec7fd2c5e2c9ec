/*
 * env.c - MPI environment: Init/Finalize, queries, timers, Abort, error reporting.
 *
 * Contract: MPI_Init = boot through PMI-2, PMIx or none (core/boot.c; a launch it
 *   cannot wire up ends the process with boot's message, exit 1) -> shm and tcp
 *   put_card -> one fence
 *   -> shm/tcp connect -> p2p engine; COMM_WORLD ctx 0, COMM_SELF ctx 2.  Finalize =
 *   barrier on COMM_WORLD (every rank's sends drained before anyone unmaps) ->
 *   transport finalize -> the process manager's finalize.  MPI_THREAD_SERIALIZED is the highest level.
 *   Transports: shm reaches the ranks of my node, the TCP netmod the others; with
 *   LOOM_MPI_NETMOD=tcp every peer goes through TCP (shm unused; tests, comparisons).
 *   TCP listens (and puts its card) only when some rank may be remote: the node map
 *   says so, or it is unknown before the fence (hostname fallback), or TCP is forced.
 *   Errors: xm_err() applies the communicator's handler (ERRORS_ARE_FATAL by default:
 *   message on stderr and the process manager's abort of the job).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../coll/coll.h"
#include "../core/boot.h"
#include "../core/comm.h"
#include "../core/p2p.h"
#include "../core/transport.h"
#include "../dt/dtype.h"
#include "../shm/shm.h"

static struct xm_comm world_comm, self_comm;
static int self_w;

XM_WEAK(MPI_Init)
XM_WEAK(MPI_Init_thread)
XM_WEAK(MPI_Finalize)
XM_WEAK(MPI_Initialized)
XM_WEAK(MPI_Finalized)
XM_WEAK(MPI_Query_thread)
XM_WEAK(MPI_Is_thread_main)
XM_WEAK(MPI_Abort)
XM_WEAK(MPI_Wtime)
XM_WEAK(MPI_Wtick)
XM_WEAK(MPI_Get_processor_name)
XM_WEAK(MPI_Get_version)
XM_WEAK(MPI_Get_library_version)
XM_WEAK(MPI_Error_string)
XM_WEAK(MPI_Error_class)
XM_WEAK(MPI_Comm_set_errhandler)
XM_WEAK(MPI_Comm_get_errhandler)
XM_WEAK(MPI_Errhandler_free)
XM_WEAK(MPI_Comm_create_errhandler)
XM_WEAK(MPI_Comm_call_errhandler)
XM_WEAK(MPI_Errhandler_set)
XM_WEAK(MPI_Errhandler_get)
XM_WEAK(MPI_Pcontrol)
XM_WEAK(MPI_Alloc_mem)
XM_WEAK(MPI_Free_mem)

void xm_die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "loom-mpi: rank %d: %s\n", xm_g.rank, msg);
    if (xm_g.initialized)
        xm_boot_abort(1, msg);
    _exit(1);
}

int xm_env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 0);
    return (*end || v < 0 || v > 1 << 30) ? dflt : (int)v;
}

int xm_errno_to_class(int e)
{
    switch (-e) {
    case 0: return MPI_SUCCESS;
    case ENOMEM: return MPI_ERR_NO_MEM;
    case EMSGSIZE: return MPI_ERR_TRUNCATE;
    case EINVAL: return MPI_ERR_ARG;
    case ENOSYS: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return MPI_ERR_OTHER;
    }
}

/* User error handlers (communicator area): a table of functions, handle kind ERRH with
 * the dynamic bit.  Slots are never reused, so a handle stays valid for communicators
 * that still use it after Errhandler_free (the standard allows that use). */
static MPI_Comm_errhandler_function **user_eh;
static int n_user_eh;

static MPI_Comm_errhandler_function *user_eh_fn(MPI_Errhandler eh)
{
    if (!(eh & XM_H_VALID) || XM_H_KIND(eh) != XM_K_ERRH || !(eh & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(eh);
    return i < n_user_eh ? user_eh[i] : NULL;
}

int xm_err(struct xm_comm *c, int cls, const char *fn)
{
    if (cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (!c)
        c = xm_g.world;
    MPI_Errhandler eh = c ? c->errh : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    MPI_Comm_errhandler_function *uf = user_eh_fn(eh);
    if (uf) {
        MPI_Comm h = c->handle;
        int code = cls;
        uf(&h, &code, fn);
        return cls;
    }
    char s[MPI_MAX_ERROR_STRING];
    int len;
    PMPI_Error_string(cls, s, &len);
    xm_die("%s: %s", fn, s);
}

/* LOOM_MPI_DEBUG: what the wait policy was chosen from (mpi/README.md) */
static void report_idle_policy(void)
{
    char mach[48] = "";
    if (xm_g.machine_ranks > xm_g.nlocal) /* other nodes on this machine */
        snprintf(mach, sizeof(mach), ", %d rank(s) on this machine", xm_g.machine_ranks);
    fprintf(
        stderr,
        "loom-mpi: rank %d: %d rank(s) on this node share %d CPU(s)%s%s; rank 0: %s\n",
        xm_g.rank, xm_g.nlocal, xm_g.node_cpus, mach,
        xm_g.oversubscribed ? ": oversubscribed" : "",
        xm_g.any_oversubscribed ? "some node oversubscribed" : "no node oversubscribed");
}

static int init_common(void)
{
    if (xm_g.initialized || xm_g.finalized)
        return xm_err(NULL, MPI_ERR_OTHER, "MPI_Init (called twice)");
    /* a process that cannot wire up ends here, as MPI_ERRORS_ARE_FATAL would: a caller
     * that ignored the error would go on as a job of its own */
    char why[1024];
    int rc = xm_boot_init(why, sizeof(why));
    if (rc < 0) {
        fprintf(stderr, "loom-mpi: %s\n", why);
        _exit(1);
    }
    xm_g.initialized = 1;
    int have_map = xm_boot_have_map();
    const char *nm = getenv("LOOM_MPI_NETMOD");
    int force_tcp = nm && strcmp(nm, "tcp") == 0;
    if (nm && *nm && !force_tcp && strcmp(nm, "auto") != 0)
        xm_die("LOOM_MPI_NETMOD=%s: expected tcp or auto", nm);
    struct xm_transport *shm = &xm_shm_transport, *tcp = &xm_tcp_transport;
    int want_tcp = xm_g.size > 1 && (force_tcp || !have_map || xm_g.nlocal < xm_g.size);
    if ((rc = shm->init(shm)) < 0)
        xm_die("shm init: %s", strerror(-rc));
    if (want_tcp && ((rc = tcp->init(tcp)) < 0 || (rc = tcp->put_card(tcp)) < 0))
        xm_die("TCP netmod: %s", strerror(-rc));
    if (have_map && !force_tcp && (rc = shm->put_card(shm)) < 0)
        xm_die("creating the shared segment: %s", strerror(-rc));
    if ((rc = xm_boot_fence()) < 0)
        xm_die("PMI fence: %s", strerror(-rc));
    if (!have_map) { /* hostname fallback: map known only now, second fence */
        if (!force_tcp && (rc = shm->put_card(shm)) < 0)
            xm_die("creating the shared segment: %s", strerror(-rc));
        if ((rc = xm_boot_fence()) < 0)
            xm_die("PMI fence: %s", strerror(-rc));
    }
    xm_bind_init(); /* before attaching the segment and allocating queues */
    if (!force_tcp && (rc = shm->connect(shm)) < 0)
    {
        if (rc == -ENOKEY)
            xm_die("attaching the shared segment: rank %d (this node's leader) published "
                   "no segment name in the KVS", xm_g.local_ranks[0]);
        xm_die("attaching the shared segment of rank %d: %s", xm_g.local_ranks[0],
               strerror(-rc));
    }
    if (!force_tcp)
        xm_boot_set_node_cpus(xm_shm_node_cpus()); /* before p2p picks its wait policy */
    if (getenv("LOOM_MPI_DEBUG"))
        report_idle_policy();
    xm_g.shm = !force_tcp && xm_g.nlocal > 1 ? shm : NULL;
    int need_net = force_tcp ? xm_g.size > 1 : xm_g.nlocal < xm_g.size;
    if (need_net) {
        if ((rc = tcp->connect(tcp)) < 0)
            xm_die("TCP netmod: %s", strerror(-rc));
        xm_g.net = tcp;
    } else if (want_tcp) {
        tcp->finalize(tcp); /* everyone is on my node after all */
    }
    if ((rc = xm_p2p_init()) < 0)
        xm_die("p2p init: %s", strerror(-rc));

    world_comm = (struct xm_comm){.handle = MPI_COMM_WORLD, .refs = 1, .ctx = 0,
                                  .rank = xm_g.rank, .size = xm_g.size,
                                  .errh = MPI_ERRORS_ARE_FATAL};
    snprintf(world_comm.name, sizeof(world_comm.name), "MPI_COMM_WORLD");
    self_w = xm_g.rank;
    self_comm = (struct xm_comm){.handle = MPI_COMM_SELF, .refs = 1, .ctx = 2, .rank = 0,
                                 .size = 1, .w = &self_w, .errh = MPI_ERRORS_ARE_FATAL};
    snprintf(self_comm.name, sizeof(self_comm.name), "MPI_COMM_SELF");
    xm_g.world = &world_comm;
    xm_g.self = &self_comm;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    xm_g.thread_level = MPI_THREAD_SINGLE;
    return init_common();
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = init_common();
    xm_g.thread_level = required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
                        : required < MPI_THREAD_SINGLE  ? MPI_THREAD_SINGLE
                                                         : required;
    if (provided)
        *provided = xm_g.thread_level;
    return rc;
}

int PMPI_Finalize(void)
{
    if (!xm_g.initialized || xm_g.finalized)
        return xm_err(NULL, MPI_ERR_OTHER, "MPI_Finalize");
    /* MPI-3.1 8.7.1: COMM_SELF's attributes are deleted first, so libraries can hang
     * their clean-up on it. */
    xm_attr_delete_all(xm_g.self);
    int rc = xm_coll_barrier(xm_g.world);
    if (rc < 0)
        return xm_err(NULL, xm_errno_to_class(rc), "MPI_Finalize");
    if (xm_g.net)
        xm_g.net->finalize(xm_g.net);
    xm_g.net = NULL;
    if (xm_g.shm)
        xm_g.shm->finalize(xm_g.shm);
    xm_g.shm = NULL;
    xm_p2p_finalize();
    xm_boot_finalize();
    xm_g.finalized = 1;
    return MPI_SUCCESS;
}

int PMPI_Initialized(int *flag)
{
    *flag = xm_g.initialized;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    *flag = xm_g.finalized;
    return MPI_SUCCESS;
}

int PMPI_Query_thread(int *provided)
{
    *provided = xm_g.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    *flag = 1;
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "MPI_Abort(errorcode %d) called by rank %d", errorcode,
             xm_g.rank);
    fprintf(stderr, "loom-mpi: %s\n", msg);
    if (xm_g.initialized && !xm_g.finalized)
        xm_boot_abort(errorcode, msg);
    _exit(errorcode ? errorcode : 1);
}

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!xm_g.host[0] && gethostname(xm_g.host, sizeof(xm_g.host)) != 0)
        snprintf(xm_g.host, sizeof(xm_g.host), "localhost");
    xm_g.host[MPI_MAX_PROCESSOR_NAME - 1] = 0;
    *resultlen = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", xm_g.host);
    return MPI_SUCCESS;
}

int PMPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *resultlen)
{
    *resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                          "Loom MPI %s (MPI %d.%d, shared memory)", LOOM_MPI_VERSION,
                          MPI_VERSION, MPI_SUBVERSION);
    return MPI_SUCCESS;
}

static const char *const err_text[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduce operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_KEYVAL] = "invalid keyval",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported (yet) by Loom MPI",
};

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *s = NULL;
    if (errorcode >= 0 && errorcode < (int)(sizeof(err_text) / sizeof(err_text[0])))
        s = err_text[errorcode];
    if (s)
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
    else
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "MPI error %d", errorcode);
    return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (errorcode < 0 || errorcode > MPI_T_ERR_INVALID)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Error_class");
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_errhandler");
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN && !user_eh_fn(eh))
        return xm_err(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler");
    c->errh = eh;
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_errhandler");
    *eh = c->errh;
    return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
    *eh = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
    if (!fn)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler");
    MPI_Comm_errhandler_function **n = realloc(user_eh, (size_t)(n_user_eh + 1) * sizeof(*n));
    if (!n)
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler");
    user_eh = n;
    user_eh[n_user_eh] = fn;
    *eh = XM_H_MAKE(XM_K_ERRH, 1, n_user_eh);
    n_user_eh++;
    return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_call_errhandler");
    xm_err(c, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler eh)
{
    return PMPI_Comm_set_errhandler(comm, eh);
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *eh)
{
    return PMPI_Comm_get_errhandler(comm, eh);
}

/* Comm_get_attr / Attr_get (predefined and user keyvals): api/attr.c */

int PMPI_Pcontrol(const int level, ...)
{
    return MPI_SUCCESS;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
