/*
 * xm.h - libmpi object model: handles, communicators, groups, requests, ops,
 *        error handlers, keyvals, and the process-wide state (struct xm_state).
 *
 * Owns: the in-memory representation of every MPI object and the handle <-> object
 * mapping.  Everything else in mpi/ includes this header.
 * Contract:
 *   - Handles are ints (see include/mpi.h): bit 30 valid, bits 24..29 kind (enum
 *     xm_kind), bit 23 dynamic, low 23 bits index.  xm_*_get() turn a handle into an
 *     object pointer or NULL (wrong kind, freed, out of range); they never crash.
 *   - Predefined datatypes carry their byte size in the handle (XM_DT_SIZE()).
 *   - Communicators: ctx is even; ctx is the point-to-point context, ctx|1 the
 *     collective context (so a collective never matches user p2p traffic).  A comm maps
 *     comm rank -> world rank through w[] (NULL = identity, i.e. COMM_WORLD); "world
 *     rank" is a process id of core/proc.h, which equals the world rank for the world's
 *     processes and continues past the world size for other jobs' processes.
 *   - Requests live in a slab table (pointers stay valid until xm_req_free()).  A send
 *     or receive request made with a communicator holds a reference on it until then,
 *     so MPI_Comm_free before MPI_Wait leaves the status translation a live comm.
 *     A request is complete when ->done is non-zero; ->status is then filled.
 * Where the types live: struct xm_req, xm_state and xm_req_* (p2p engine, core/p2p.c,
 *   core/obj.c); struct xm_comm, xm_group, keyvals/attributes, context ids (core/comm.c,
 *   core/attr.c), topologies (core/topo.c), info objects (core/info.c); struct
 *   xm_dtype (mpi/dt/dtype.h) and ops (mpi/coll/op.c).
 * Caveats: no locks of its own: under MPI_THREAD_MULTIPLE one global lock (core/mt.h)
 *   serializes every MPI call, so the engine still sees one thread at a time.
 */
#ifndef XM_H
#define XM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "mpi.h"

#define XM_EXPORT __attribute__((visibility("default")))
/* Define PMPI_name (exported) and MPI_name as a weak alias of it: write
 *   XM_WEAK(MPI_Send)  then  int PMPI_Send(...) { ... }  in an api/ file. */
#define XM_WEAK(name) \
    extern __typeof__(P##name) name __attribute__((weak, alias("P" #name)));
/* MPI_THREAD_MULTIPLE, core/mt.h: in libmpi the exported PMPI_X and
 * MPI_X are generated wrappers (gen_mt.py, api/mt_wrap.c) that take the global lock;
 * mt_names.h renames the definition above to the hidden xmi_PMPI_X, which internal
 * calls of PMPI_X reach directly.  (Files built outside libmpi keep the alias.) */
#ifdef XM_MT_WRAP
#undef XM_WEAK
#define XM_WEAK(name)
#include "../api/mt_names.h"
#endif

/* ---- handles --------------------------------------------------------------- */
enum xm_kind {
    XM_K_COMM = 1, XM_K_GROUP = 2, XM_K_DTYPE = 3, XM_K_OP = 5, XM_K_ERRH = 6,
    XM_K_REQ = 7, XM_K_INFO = 8, XM_K_KEYVAL = 9, XM_K_MSG = 10, XM_K_WIN = 11,
    XM_K_SESSION = 12, /* MPI-4 sessions (api/session.c) */
};
#define XM_H_VALID 0x40000000
#define XM_H_DYN 0x00800000
#define XM_H_KIND(h) (((unsigned)(h) >> 24) & 0x3f)
#define XM_H_INDEX(h) ((unsigned)(h) & 0x007fffff)
#define XM_H_MAKE(kind, dyn, idx) \
    ((int)(XM_H_VALID | ((unsigned)(kind) << 24) | ((dyn) ? XM_H_DYN : 0) | (unsigned)(idx)))
/* predefined datatype: dyn bit clear, size in bits 8..15, index in bits 0..7 */
#define XM_DT_IS_PREDEF(h) (((h) & 0xff800000) == 0x43000000)
#define XM_DT_SIZE(h) (((unsigned)(h) >> 8) & 0xff)
#define XM_DT_IDX(h) ((unsigned)(h) & 0xff)

/* ---- groups ---------------------------------------------- */
struct xm_group {
    int handle;
    int refs;
    int size;
    int rank;   /* my rank in the group or MPI_UNDEFINED */
    int *w;     /* group rank -> world rank (size entries) */
};

/* ---- attributes and keyvals ------------------------------- */
struct xm_attr {
    struct xm_attr *next;
    int keyval;
    void *val;  /* C-set: the pointer; Fortran-set: the value itself */
    int lang;   /* XM_ATTR_C / _FAINT / _FINT: the call that set it (issue 22) */
    union {     /* Fortran-set: what a C reader gets a pointer to (MPI-3.1 17.2.7) */
        MPI_Aint a;
        MPI_Fint i;
    } box;
};

/* Attribute language (MPI-3.1 17.2.7).  The Fortran bindings (libmpifort) set the
 * thread-local mpipriv_attr_lang just before calling a set/get/create_keyval function
 * and clear it after; the attribute store takes it (reads and clears) on entry, so a
 * callback run from inside sees C semantics again.  A Fortran-set attribute stores the
 * value; C readers and C callbacks get a pointer to it (box).  Fortran readers and
 * Fortran keyvals' callbacks (bindings/fkeyval.c) get val as is: the value, or a C
 * pointer converted to an integer. */
enum { XM_ATTR_C = 0, XM_ATTR_FAINT = 1, XM_ATTR_FINT = 2 };
extern __thread int mpipriv_attr_lang;
static inline int xm_attr_lang_take(void)
{
    int l = mpipriv_attr_lang;
    mpipriv_attr_lang = XM_ATTR_C;
    return l == XM_ATTR_FAINT || l == XM_ATTR_FINT ? l : XM_ATTR_C;
}
static inline void xm_attr_store(struct xm_attr *a, void *val, int lang)
{
    a->val = val;
    a->lang = lang;
    a->box.a = 0;
    if (lang == XM_ATTR_FINT)
        a->box.i = (MPI_Fint)(MPI_Aint)val;
    else
        a->box.a = (MPI_Aint)val;
}
/* the value a reader (or a keyval's callbacks) of language flang (0: C) sees */
static inline void *xm_attr_view(struct xm_attr *a, int flang)
{
    return flang || a->lang == XM_ATTR_C ? a->val : (void *)&a->box;
}
/* store in n the copy made by a callback of language flang from o, out its output */
static inline void xm_attr_copied(struct xm_attr *n, struct xm_attr *o, void *out, int flang)
{
    if (o->lang != XM_ATTR_C && (flang || out == (void *)&o->box))
        xm_attr_store(n, flang ? out : o->val, o->lang);
    else
        xm_attr_store(n, out, XM_ATTR_C);
}

/* ---- error handlers --------------------------------------------------------- */
struct xm_errh {
    int handle;
    int refs;
    MPI_Comm_errhandler_function *fn; /* NULL for the predefined ones */
};

/* ---- communicators ---------------------------------------- */
struct xm_comm {
    int handle;
    int refs;
    uint32_t ctx;       /* even; p2p uses ctx, collectives ctx|1 */
    int rank, size;
    int *w;             /* comm rank -> world rank; NULL = identity (COMM_WORLD) */
    MPI_Errhandler errh;
    struct xm_attr *attrs;
    uint32_t coll_seq;  /* collective sequence number (for nonblocking collectives' tags) */
    char name[MPI_MAX_OBJECT_NAME];
    void *coll_priv;    /* owned by mpi/coll/: cached trees, node maps */
    /* coll/shmcoll.c's grow-only scratch under MPI_THREAD_MULTIPLE (a collective's
     * waits let other threads run collectives on other communicators, so each
     * communicator has its own); freed with the communicator */
    char *coll_tmp[2];
    size_t coll_tmp_cap[2];
    /* intercommunicators and topologies (api/intercomm.c, api/topo.c).
     * An intercommunicator keeps the REMOTE group in size/w, so point-to-point
     * addresses remote ranks and status sources translate back unchanged; rank is my
     * rank in the local group, local_size/local_w describe the local group. */
    int inter;
    int local_size;
    int *local_w;            /* local group rank -> world rank (inter only) */
    struct xm_topo *topo;    /* Cartesian / graph / dist-graph topology or NULL */
    /* members of more than one job (an id >= world size, core/proc.h): node
     * numbers of another job's processes mean nothing here, so node-aware code treats
     * every member as a node of its own (set by xm_comm_new) */
    int xjob;
};

/* process topology of a communicator (object: core/topo.c; MPI calls: api/topo.c);
 * neighbor collectives (coll/neighbor.c) read the in/out lists: comm ranks or
 * MPI_PROC_NULL, in the order the standard gives (Cartesian: per dimension the -1 then
 * the +1 neighbour). */
struct xm_topo {
    int kind;                /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int ndims, *dims, *periods;      /* Cartesian */
    int nnodes, *index, *edges;      /* graph (index[nnodes], edges[index[nnodes-1]]) */
    int indeg, outdeg, *in, *out;    /* neighbours of this rank (every kind) */
    int *inw, *outw;                 /* dist graph weights or NULL (MPI_UNWEIGHTED) */
    int weighted;
};
struct xm_topo *xm_topo_dup(const struct xm_topo *t);   /* NULL for NULL (or no memory) */
void xm_topo_free(struct xm_topo *t);
/* a malloc'ed copy of a[0..n-1] (NULL: no memory) */
int *xm_ints_dup(const int *a, int n);
/* MPI-4 persistent collectives (api/pcoll.c): a persistent holder with
 * pkind == XM_REQ_COLL keeps its arguments in ->tmp; MPI_Start calls this to start the
 * nonblocking collective as its ->inner request.  Returns an MPI error code. */
struct xm_req;
int xm_pcoll_start(struct xm_req *r);

static inline int xm_comm_world_rank(const struct xm_comm *c, int r)
{
    return c->w ? c->w[r] : r;
}

/* ---- requests ---------------------------------------------------- */
enum xm_req_kind {
    XM_REQ_SEND, XM_REQ_RECV, XM_REQ_UNEXP, /* unexpected message held by the matcher */
    XM_REQ_COLL,  /* nonblocking collective: ->coll_step() drives it */
    XM_REQ_GREQ,  /* generalized / already complete */
};
struct xm_dtype;
struct xm_req {
    int handle;
    enum xm_req_kind kind;
    volatile int done;           /* set once, by the progress engine */
    int persistent;              /* MPI_*_init request (not freed by Wait) */
    int cancelled;
    MPI_Status status;           /* filled when done; count in bytes (xm_status_*) */
    /* message envelope: world ranks, context */
    int peer;                    /* world rank (or MPI_ANY_SOURCE for a posted recv) */
    int tag;
    uint32_t ctx;
    struct xm_comm *comm;        /* for error handler + rank translation in status */
    /* user buffer */
    void *buf;
    int count;
    MPI_Datatype dt;
    size_t bytes;                /* packed size of (count, dt) */
    size_t pos;                  /* bytes transferred so far */
    size_t total;                /* message length (recv: sender's length) */
    unsigned flags;              /* XM_PKT_F_* of the message */
    /* matcher / send queues */
    struct xm_req *next;
    struct xm_req *prev;
    void *tmp;                   /* UNEXP: malloc'ed payload; SEND: staging */
    struct xm_req *match;        /* UNEXP -> RECV link while fragments still arrive */
    uint64_t cookie_ack;         /* UNEXP: sender's cookie for XM_PKT_SSEND_ACK */
    /* nonblocking collectives (coll area) */
    int (*coll_step)(struct xm_req *r);  /* 1 = finished, 0 = pending, <0 = -errno */
    void *coll_state;
    /* rendezvous and persistent requests */
    uint64_t rdv_pid, rdv_addr;  /* UNEXP from an RTS: where the sender's bytes are */
    struct xm_req *inner;        /* persistent request: the active send/recv, or NULL */
    int pkind;                   /* persistent: XM_REQ_SEND or XM_REQ_RECV */
    unsigned pflags;             /* persistent send: XM_PKT_F_* (plus API-level flags) */
    /* (issue 21) a generalized request's callbacks
     * (api/greq.c), NULL for every other request */
    void *greq;
    /* an XM_REQ_GREQ request's own release (generalized requests: runs free_fn,
     * api/greq.c; persistent collectives: drops what *_init held, api/pcoll.c), run by
     * xm_req_free; NULL for every other request */
    void (*release)(struct xm_req *r);
    /* the rendezvous sends' helper list (core/p2p.c lmtq): links of their own, since
     * a send parked on the send queue (next/prev) joins it when its RTS leaves */
    struct xm_req *lmt_next, *lmt_prev;
    /* compound requests (MPI_Isendrecv, a cancelled Ibsend): a parent completes when
     * its last child does (xm_req_complete()); it owns (frees) the children in kid[] */
    struct xm_req *parent;       /* child: the request waiting for it */
    struct xm_req *kid[2];       /* parent: children freed with it */
    int kids_due;                /* parent: children not complete yet */
    /* parent: called instead of the above when a child completes (MPI_Comm_idup's
     * rounds, core/idup.c); the child is no longer linked to it */
    void (*kid_done)(struct xm_req *p, struct xm_req *c);
};

/* ---- process-wide state ------------------------------------------- */
struct xm_transport;
struct xm_state {
    int initialized, finalized;
    int thread_level;
    int rank, size, appnum, universe;
    int spawned;
    char jobid[64];
    char host[MPI_MAX_PROCESSOR_NAME];
    /* node-local view, from boot.c */
    int nlocal;          /* ranks on my node */
    int local_rank;      /* my index among them */
    int *local_ranks;    /* local index -> world rank */
    int *local_index;    /* world rank -> local index or -1 (size entries) */
    int *node_of;        /* world rank -> node id */
    int ncpus;           /* CPUs this process may run on (affinity) */
    int node_cpus;       /* CPUs my node's ranks may run on together (boot.c, shm.c) */
    int machine_ranks;   /* ranks on my machine: nlocal plus other nodes' on it */
    int oversubscribed;  /* machine_ranks > node_cpus: waits yield and sleep, never spin */
    /* rank 0's view (boot.c): some node holds more ranks than it has CPUs; for choices
     * every rank must make alike (collective algorithms), where oversubscribed, a fact
     * about my node only, would split the job between two algorithms */
    int any_oversubscribed;
    struct xm_transport *shm; /* transport reaching node-local peers (NULL if alone) */
    struct xm_transport *net; /* netmod (later) */
    struct xm_comm *world, *self;
    /* mixed thread levels (issue 21, mpifix): 1 when some rank of the job runs with
     * MPI_THREAD_MULTIPLE, agreed at Init (api/env.c); then every rank's blocking
     * constructors take their context id by agreement rounds (core/idup.c) */
    int ctx_rounds;
};
extern struct xm_state xm_g;   /* the one global (an MPI process has one library state) */

/* ---- object tables (core/obj.c) -------------------------------------------------- */
struct xm_comm *xm_comm_get(MPI_Comm h);
int xm_comm_register(struct xm_comm *c);            /* assigns c->handle; 0 / -ENOMEM */
void xm_comm_unregister(struct xm_comm *c);
struct xm_req *xm_req_new(enum xm_req_kind kind);   /* NULL + errno */
struct xm_req *xm_req_get(MPI_Request h);
void xm_req_free(struct xm_req *r);
void xm_req_complete(struct xm_req *r);             /* done = 1, after status is set */
/* (issue 21) completions so far: lets rma.c skip its scan of every window's posted
 * receives when nothing completed since the last one (1000 live windows) */
extern unsigned long xm_req_completions;
/* Compound requests: p waits for c too (p->kids_due counts it, unless c is complete
 * already: then its outcome is taken now); own = p frees c.  A child's completion
 * hands the parent its status if it is a receive, its error if it has one, its
 * cancelled flag; the last one completes the parent.  Start a parent with
 * kids_due = 1 and end the adoptions with xm_req_adopt_end(p). */
void xm_req_adopt(struct xm_req *p, struct xm_req *c, int own);
void xm_req_adopt_end(struct xm_req *p);

/* status helpers: count is stored in bytes */
static inline void xm_status_set(MPI_Status *s, int src, int tag, int err, size_t bytes)
{
    s->MPI_SOURCE = src;
    s->MPI_TAG = tag;
    s->MPI_ERROR = err;
    s->xm_count_lo = (int)(bytes & 0xffffffffu);
    s->xm_count_hi_cncl = (int)((bytes >> 32) << 1);
}
static inline size_t xm_status_bytes(const MPI_Status *s)
{
    return (size_t)(unsigned)s->xm_count_lo |
           ((size_t)((unsigned)s->xm_count_hi_cncl >> 1) << 32);
}

/* ---- info objects (core/info.c; MPI calls: api/info.c) ---------------------------- */
struct xm_info;
/* NULL: no such object (MPI_INFO_ENV is one: empty, and xm_info_free leaves it) */
struct xm_info *xm_info_get(MPI_Info h);
/* new objects, empty or a copy: 0 / -ENOMEM */
int xm_info_new(MPI_Info *out);
int xm_info_dup(const struct xm_info *in, MPI_Info *out);
void xm_info_free(MPI_Info h);
/* the value of key (NULL: not set); set: 0 / -ENOMEM; delete: 0 / -ENOENT */
const char *xm_info_value(struct xm_info *in, const char *key);
int xm_info_set(struct xm_info *in, const char *key, const char *value);
int xm_info_delete(struct xm_info *in, const char *key);
/* the number of keys; key n in insertion order (NULL: no key n) */
int xm_info_nkeys(const struct xm_info *in);
const char *xm_info_nthkey(const struct xm_info *in, int n);

/* ---- errors (api/err.c): MPI error classes are produced only in mpi/api/ ------------- */
int xm_err(struct xm_comm *c, int errclass, const char *fn); /* runs the error handler */
int xm_errno_to_class(int neg_errno);
/* api/dynproc.c: MPI_Init of a spawned job connects to its parents */
void xm_dyn_init_parent(void);
/* core/util.c: the fatal exit and the LOOM_MPI_* tunables (xm_errno_to_class too) */
void xm_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
int xm_env_int(const char *name, int dflt);         /* LOOM_MPI_* tunables */
/* (issue 21) the largest error class/code in use
 * (MPI_LASTUSEDCODE; api/env.c) */
int xm_err_last_used(void);
/* generalized requests (api/greq.c): hooks for requests whose ->greq is set */
void xm_greq_cancel(struct xm_req *r);       /* MPI_Cancel */
int xm_greq_request_free(struct xm_req *r);  /* MPI_Request_free; 0 */

/* ---- MPI-4 sessions (api/env.c, api/session.c) ---- */
/* start/leave the engine for a session wanting thread level `level`: MPI_SUCCESS and
 * the level given, or an MPI error class (the engine ended in MPI_Finalize) */
int xm_engine_session_start(int level, int *provided);
void xm_engine_session_end(void);
/* user error handlers (api/env.c): create one; the function of a user handle or NULL */
int xm_errh_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh);
MPI_Comm_errhandler_function *xm_errh_user_fn(MPI_Errhandler eh);

#endif /* XM_H */
