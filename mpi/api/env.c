/*
 * env.c - MPI environment: Init/Finalize, queries, timers, Abort, error reporting.
 *
 * Contract: MPI_Init = boot through PMI-2, PMIx or none (core/boot.c; a launch it
 *   cannot wire up ends the process with boot's message, exit 1) -> shm and tcp
 *   put_card -> one fence
 *   -> shm/tcp connect -> p2p engine; COMM_WORLD ctx 0, COMM_SELF ctx 2.  Finalize =
 *   barrier on COMM_WORLD (every rank's sends drained before anyone unmaps) ->
 *   transport finalize -> the process manager's finalize.  MPI_THREAD_MULTIPLE is provided (core/mt.h).
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../coll/coll.h"
#include "../core/boot.h"
#include "../core/comm.h"
#include "../core/mt.h"
#include "../core/p2p.h"
#include "../core/proc.h"
#include "../core/transport.h"
#include "../dt/dtype.h"
#include "../rma/rma.h"
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

/* User error handlers: a table of functions, handle kind ERRH with
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

static const char *code_text(int code);

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
    const char *s = code_text(cls);
    if (s && *s)
        xm_die("%s: %s", fn, s);
    xm_die("%s: MPI error %d", fn, cls);
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

/* testing switch LOOM_MPI_TEST_EXTRA_PROCS=n: n pretend processes of another job join
 * the process table (core/proc.h) at once, half before the netmod and p2p start and
 * half after, so a test runs the engine on per-peer arrays sized at start for more than
 * the world and then grown by their hooks.  Nothing ever sends to them. */
static void grow_some(int from, int to)
{
    for (int i = from; i < to; i++) {
        struct xm_dyn_card c;
        memset(&c, 0, sizeof(c));
        snprintf(c.jobid, sizeof(c.jobid), "loom-test-extra");
        c.rank = i;
        c.addrs.naddr = 1;
        c.addrs.ip[0] = 0x0100007fu; /* 127.0.0.1 in network order (little-endian) */
        c.addrs.port[0] = 1;
        int rc = xm_proc_add(&c);
        if (rc < 0)
            xm_die("LOOM_MPI_TEST_EXTRA_PROCS: adding process %d: %s", i, strerror(-rc));
    }
}

static void grow_for_tests(void)
{
    int n = xm_env_int("LOOM_MPI_TEST_EXTRA_PROCS", 0);
    if (n > 0)
        grow_some(n / 2, n);
}

/* MPI-4 sessions (api/session.c) share the engine with the world model: it boots once,
 * on the first of MPI_Init(_thread) and MPI_Session_init, and cannot boot again (PMI,
 * the segment, the TCP listener and job secret are one-time), so it stays up while
 * either model may use it.  It ends in MPI_Finalize when no process of the job has a
 * session open then (one allreduce decides, it is also Finalize's barrier), else at
 * process exit (exit_teardown), as in a program that uses sessions only. */
static int world_state;   /* 0: MPI_Init not called, 1: world model active, 2: finalized */
static int engine_by_session; /* booted by MPI_Session_init */
static int sessions_live; /* MPI_Session_init minus MPI_Session_finalize */

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
    /* the process table (core/proc.h): the world's ids, grown by connections to other
     * jobs; the node map grows with it */
    if (xm_proc_init(xm_g.jobid, xm_g.size) < 0 || xm_proc_on_grow(xm_boot_proc_grow) < 0)
        xm_die("process table of %d ranks", xm_g.size);
    if (xm_env_int("LOOM_MPI_TEST_EXTRA_PROCS", 0) > 0)
        grow_some(0, xm_env_int("LOOM_MPI_TEST_EXTRA_PROCS", 0) / 2);
    xm_g.initialized = 1;
    xm_mt_main_set(); /* MPI_Is_thread_main */
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
    grow_for_tests();

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
    /* Context ids are agreed in rounds (core/idup.c) by every rank as soon as one rank
     * runs MULTIPLE (its threads may construct at once), by one allreduce otherwise:
     * the two protocols do not meet, so the job settles which one here (one small
     * allreduce; Init_thread turned the lock on before init_common). */
    xm_g.ctx_rounds = xm_mt.on || engine_by_session; /* a session may ask MULTIPLE later */
    if (xm_g.size > 1 &&
        (rc = xm_coll_allreduce(MPI_IN_PLACE, &xm_g.ctx_rounds, 1, MPI_INT, MPI_MAX,
                                xm_g.world)) < 0)
        xm_die("agreeing on the thread level: %s", strerror(-rc));
    xm_dyn_init_parent(); /* a spawned job connects to its parents */
    return MPI_SUCCESS;
}

static void exit_teardown(void);

/* boot the engine if it is not up: MPI_SUCCESS or an MPI error class (no handler run) */
static int engine_up(int by_session)
{
    if (xm_g.initialized && !xm_g.finalized)
        return MPI_SUCCESS;
    if (xm_g.finalized)
        return MPI_ERR_OTHER; /* ended by MPI_Finalize: it cannot boot again */
    engine_by_session = by_session;
    int rc = init_common();
    if (rc == MPI_SUCCESS)
        atexit(exit_teardown);
    return rc;
}

static void engine_down(void)
{
    if (xm_g.net)
        xm_g.net->finalize(xm_g.net);
    xm_g.net = NULL;
    if (xm_g.shm)
        xm_g.shm->finalize(xm_g.shm);
    xm_g.shm = NULL;
    xm_p2p_finalize();
    xm_boot_finalize();
    xm_proc_finalize();
    xm_g.finalized = 1;
}

/* at exit, when the engine outlived the world model or served sessions only: every
 * process of the job ends here, so the barrier (sends drained before anyone unmaps)
 * is met.  A process that exits with the world model active (no MPI_Finalize) is
 * left as before: its peers may be inside MPI_Finalize's own collective. */
static void exit_teardown(void)
{
    if (!xm_g.initialized || xm_g.finalized || world_state == 1)
        return;
    if (xm_mt.on)
        xm_mt_enter();
    if (xm_coll_barrier(xm_g.world) == 0)
        engine_down();
    if (xm_mt.on)
        xm_mt_exit();
}

/* the world model's start (MPI_Init, MPI_Init_thread at `level`) */
static int world_init(int level, const char *fn)
{
    if (world_state)
        return xm_err(NULL, MPI_ERR_OTHER, world_state == 1 ? "MPI_Init (called twice)" : fn);
    if (!xm_g.initialized) {
        /* MULTIPLE turns the global lock on (core/mt.h) before anything else can run;
         * the transports see xm_mt.on from their first block() */
        if (level == MPI_THREAD_MULTIPLE)
            xm_mt_init();
    } else if (level == MPI_THREAD_MULTIPLE && !xm_mt.on) {
        /* the engine runs already (a session started it): the lock can be turned on
         * now if the job takes context ids by agreement rounds, else less is given */
        if (xm_g.ctx_rounds)
            xm_mt_init();
        else
            level = MPI_THREAD_SERIALIZED;
    }
    int rc = engine_up(0);
    if (rc != MPI_SUCCESS)
        return xm_err(NULL, rc, fn);
    xm_mt_main_set(); /* MPI_Is_thread_main: the thread that started the world model */
    xm_g.thread_level = level;
    world_state = 1;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return world_init(MPI_THREAD_SINGLE, "MPI_Init");
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                : required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                                               : required;
    int rc = world_init(level, "MPI_Init_thread");
    if (provided)
        *provided = xm_g.thread_level;
    return rc;
}

int PMPI_Finalize(void)
{
    if (world_state != 1)
        return xm_err(NULL, MPI_ERR_OTHER, "MPI_Finalize");
    /* MPI-3.1 8.7.1: COMM_SELF's attributes are deleted first, so libraries can hang
     * their clean-up on it. */
    xm_attr_delete_all(xm_g.self);
    /* every rank's sends drained before anyone unmaps: this allreduce is the barrier,
     * and it tells whether some process keeps a session open past it */
    int live = sessions_live > 0;
    int rc = xm_coll_allreduce(MPI_IN_PLACE, &live, 1, MPI_INT, MPI_MAX, xm_g.world);
    if (rc < 0)
        return xm_err(NULL, xm_errno_to_class(rc), "MPI_Finalize");
    world_state = 2;
    if (!live)
        engine_down();
    return MPI_SUCCESS;
}

/* ---- MPI-4 sessions: the engine's side (api/session.c calls these) ---- */
int xm_engine_session_start(int level, int *provided)
{
    if (!xm_g.initialized && level == MPI_THREAD_MULTIPLE)
        xm_mt_init();
    int rc = engine_up(1);
    if (rc != MPI_SUCCESS)
        return rc;
    if (level == MPI_THREAD_MULTIPLE && !xm_mt.on && xm_g.ctx_rounds)
        xm_mt_init(); /* see world_init */
    int have = xm_mt.on ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
    *provided = level > have ? have : xm_mt.on ? MPI_THREAD_MULTIPLE : level;
    sessions_live++;
    return MPI_SUCCESS;
}

void xm_engine_session_end(void)
{
    if (sessions_live > 0)
        sessions_live--;
}

int PMPI_Initialized(int *flag)
{
    *flag = world_state != 0; /* the world model (MPI-4.0 11.2): sessions do not count */
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    *flag = world_state == 2;
    return MPI_SUCCESS;
}

int PMPI_Query_thread(int *provided)
{
    *provided = xm_g.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    *flag = xm_mt_is_main();
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
                          "Loom MPI %s (MPI %d.%d; shared memory and TCP)", LOOM_MPI_VERSION,
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
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_SPAWN] = "error spawning processes",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_SERVICE] = "invalid service name",
    [MPI_ERR_NAME] = "invalid service name (not published)",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_SIZE] = "invalid size argument",
    [MPI_ERR_DISP] = "invalid displacement argument",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_ASSERT] = "invalid assert argument",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "wrong synchronization of RMA calls",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_NOT_SAME] = "collective argument not identical on all processes",
    [MPI_ERR_AMODE] = "invalid file access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported (yet) by Loom MPI",
    [MPI_ERR_NO_SUCH_FILE] = "file does not exist",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "file in use",
    [MPI_ERR_DUP_DATAREP] = "data representation already defined",
    [MPI_ERR_CONVERSION] = "data conversion failed",
    [MPI_ERR_IO] = "I/O error",
    [MPI_ERR_RMA_RANGE] = "RMA target out of the window",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached to the window",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
    [MPI_T_ERR_INVALID] = "invalid use of the tool interface",
    [MPI_T_ERR_MEMORY] = "tool interface: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] = "tool interface not initialized",
    [MPI_T_ERR_CANNOT_INIT] = "tool interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "tool interface: invalid index",
    [MPI_T_ERR_INVALID_ITEM] = "tool interface: invalid item index",
    [MPI_T_ERR_INVALID_HANDLE] = "tool interface: invalid handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "tool interface: no more handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "tool interface: no more sessions",
    [MPI_T_ERR_INVALID_SESSION] = "tool interface: invalid session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "control variable cannot be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "performance variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "performance variable cannot be written",
    [MPI_T_ERR_PVAR_NO_ATOMIC] =
        "performance variable cannot be read and reset atomically",
    [MPI_T_ERR_INVALID_NAME] = "tool interface: no variable or category of that name",
    [MPI_ERR_SESSION] = "invalid session handle",
};
_Static_assert(sizeof(err_text) / sizeof(err_text[0]) == XM_ERR_LAST_PREDEFINED + 1,
               "a text for every predefined error class");

/* User error classes and codes (MPI_Add_error_class/code/string): entry k has the
 * value MPI_ERR_LASTCODE + 1 + k and belongs to class cls (a class is its own class).
 * Entries are never removed (the standard has no call to remove one). */
struct user_err {
    int cls;
    char *text; /* NULL: "" (MPI-3.1 §8.5: no string given yet) */
};
XM_WEAK(MPI_Add_error_class)
XM_WEAK(MPI_Add_error_code)
XM_WEAK(MPI_Add_error_string)

static struct user_err *uerr;
static int n_uerr;
#define UERR_BASE (MPI_ERR_LASTCODE + 1)

static struct user_err *uerr_get(int code)
{
    if (code < UERR_BASE || code - UERR_BASE >= n_uerr)
        return NULL;
    return &uerr[code - UERR_BASE];
}

int xm_err_last_used(void)
{
    /* MPI-3.1 §8.5: at least MPI_ERR_LASTCODE */
    return n_uerr ? UERR_BASE + n_uerr - 1 : MPI_ERR_LASTCODE;
}

static int uerr_add(int cls, int *out)
{
    if (n_uerr >= 0x3fffffff - XM_ERR_LAST_PREDEFINED) /* values stay positive ints */
        return MPI_ERR_OTHER;
    struct user_err *n = realloc(uerr, (size_t)(n_uerr + 1) * sizeof(*n));
    if (!n)
        return MPI_ERR_NO_MEM;
    uerr = n;
    int v = UERR_BASE + n_uerr;
    uerr[n_uerr++] = (struct user_err){cls < 0 ? v : cls, NULL};
    *out = v;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    if (!errorclass)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Add_error_class");
    int rc = uerr_add(-1, errorclass);
    return rc ? xm_err(NULL, rc, "MPI_Add_error_class") : MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    struct user_err *u = uerr_get(errorclass);
    int is_class = (errorclass >= 0 && errorclass <= XM_ERR_LAST_PREDEFINED) ||
                   (u && u->cls == errorclass);
    if (!is_class || !errorcode)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
    int rc = uerr_add(errorclass, errorcode);
    return rc ? xm_err(NULL, rc, "MPI_Add_error_code") : MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char *string)
{
    struct user_err *u = uerr_get(errorcode);
    if (!u || !string || strlen(string) >= MPI_MAX_ERROR_STRING)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
    char *t = strdup(string);
    if (!t)
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string");
    free(u->text);
    u->text = t;
    return MPI_SUCCESS;
}

/* the text of a predefined or user class/code, or NULL if there is no such code */
static const char *code_text(int code)
{
    struct user_err *u = uerr_get(code);
    if (code >= 0 && code <= XM_ERR_LAST_PREDEFINED)
        return err_text[code];
    return u ? (u->text ? u->text : "") : NULL;
}

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Error_string");
    const char *s = code_text(errorcode);
    if (!s) {
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "MPI error %d", errorcode);
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Error_string");
    }
    *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
    return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
    struct user_err *u = uerr_get(errorcode);
    if (!errorclass ||
        (!u && (errorcode < 0 || errorcode > XM_ERR_LAST_PREDEFINED)))
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Error_class");
    *errorclass = u ? u->cls : errorcode;
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

int xm_errh_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
    MPI_Comm_errhandler_function **n = realloc(user_eh, (size_t)(n_user_eh + 1) * sizeof(*n));
    if (!n)
        return MPI_ERR_NO_MEM;
    user_eh = n;
    user_eh[n_user_eh] = fn;
    *eh = XM_H_MAKE(XM_K_ERRH, 1, n_user_eh);
    n_user_eh++;
    return MPI_SUCCESS;
}

MPI_Comm_errhandler_function *xm_errh_user_fn(MPI_Errhandler eh)
{
    return user_eh_fn(eh);
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
    if (!fn)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler");
    int rc = xm_errh_create(fn, eh);
    return rc ? xm_err(NULL, rc, "MPI_Comm_create_errhandler") : MPI_SUCCESS;
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

/* ---- handle conversion: Info/Errhandler/Message/Status c2f and f2c are in api/fint.c,
 * MPI_File's in api/file.c, MPI_Win's in api/rma.c.  A Fortran status is the C struct's
 * five ints in order (MPI_F_SOURCE etc. index it). */
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status size");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint), "src");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint), "tag");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint), "err");

int PMPI_Pcontrol(const int level, ...)
{
    return MPI_SUCCESS;
}

/* blocks other ranks of the node can map (rma/allocmem.c): Win_create over them
 * works by loads and stores */
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    (void)info;
    if (size < 0)
        return xm_err(NULL, MPI_ERR_SIZE, "MPI_Alloc_mem");
    if (!baseptr)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Alloc_mem");
    void *p = xm_mem_alloc((size_t)size);
    if (!p)
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int PMPI_Free_mem(void *base)
{
    int rc = xm_mem_free(base);
    return rc ? xm_err(NULL, rc, "MPI_Free_mem") : MPI_SUCCESS;
}
