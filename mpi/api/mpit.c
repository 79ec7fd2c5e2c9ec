/*
 * mpit.c - the MPI tool information interface (MPI_T_*, MPI-3.1 chapter 14): control
 *          variables describing Loom's LOOM_MPI_* settings, performance variables read
 *          from the p2p engine's request table, categories and one enumeration.
 *
 * Contract:
 *   - MPI_T_init_thread/MPI_T_finalize nest (a counter) and work before MPI_Init and
 *     after MPI_Finalize; every other MPI_T call outside them returns
 *     MPI_T_ERR_NOT_INITIALIZED.  MPI_T calls return their error codes and never call
 *     an error handler (§14.3).  MPI_THREAD_MULTIPLE, as the library (its calls take libmpi's lock).
 *   - Control variables: one per setting the library reads from the environment
 *     (table below).  They are read once, at MPI_Init or when first needed, so all are
 *     MPI_T_SCOPE_READONLY: MPI_T_cvar_write answers MPI_T_ERR_CVAR_SET_NEVER.  Their
 *     value is the environment's text (MPI_CHAR, count XM_T_STRLEN; "" when unset: the
 *     default the description names applies), except LOOM_MPI_NETMOD, an MPI_INT with
 *     the enumeration "loom_netmod" (0 auto, 1 tcp).
 *   - Performance variables: continuous, read-only levels computed when read by walking
 *     the request table (core/obj.c), so the engine pays nothing for them: unexpected
 *     messages and their bytes, posted receives, sends in progress, live requests.
 *     Start/stop answer MPI_T_ERR_PVAR_NO_STARTSTOP, write/reset
 *     MPI_T_ERR_PVAR_NO_WRITE.  Values are MPI_UNSIGNED_LONG_LONG.
 *   - Categories group the variables by component (boot, p2p, shm, tcp, coll, bind).
 * Caveats: no per-transport message or byte counters yet (they would sit on the send
 *   path of core/p2p.c); no variables bound to MPI objects (all MPI_T_BIND_NO_OBJECT).
 */
#include <stdlib.h>
#include <string.h>

#include "../core/p2p.h"
#include "../core/xm.h"

XM_WEAK(MPI_T_init_thread)
XM_WEAK(MPI_T_finalize)
XM_WEAK(MPI_T_enum_get_info)
XM_WEAK(MPI_T_enum_get_item)
XM_WEAK(MPI_T_cvar_get_num)
XM_WEAK(MPI_T_cvar_get_info)
XM_WEAK(MPI_T_cvar_get_index)
XM_WEAK(MPI_T_cvar_handle_alloc)
XM_WEAK(MPI_T_cvar_handle_free)
XM_WEAK(MPI_T_cvar_read)
XM_WEAK(MPI_T_cvar_write)
XM_WEAK(MPI_T_pvar_get_num)
XM_WEAK(MPI_T_pvar_get_info)
XM_WEAK(MPI_T_pvar_get_index)
XM_WEAK(MPI_T_pvar_session_create)
XM_WEAK(MPI_T_pvar_session_free)
XM_WEAK(MPI_T_pvar_handle_alloc)
XM_WEAK(MPI_T_pvar_handle_free)
XM_WEAK(MPI_T_pvar_start)
XM_WEAK(MPI_T_pvar_stop)
XM_WEAK(MPI_T_pvar_read)
XM_WEAK(MPI_T_pvar_write)
XM_WEAK(MPI_T_pvar_reset)
XM_WEAK(MPI_T_pvar_readreset)
XM_WEAK(MPI_T_category_get_num)
XM_WEAK(MPI_T_category_get_info)
XM_WEAK(MPI_T_category_get_index)
XM_WEAK(MPI_T_category_get_cvars)
XM_WEAK(MPI_T_category_get_pvars)
XM_WEAK(MPI_T_category_get_categories)
XM_WEAK(MPI_T_category_changed)

#define XM_T_STRLEN 256 /* count of a string control variable (bytes, with the NUL) */

enum { CAT_BOOT, CAT_P2P, CAT_SHM, CAT_TCP, CAT_COLL, CAT_BIND, NCAT };
static const struct {
    const char *name, *desc;
} cats[NCAT] = {
    {"loom_boot", "start-up: process-manager interface, node map, debugging output"},
    {"loom_p2p", "point-to-point engine: eager limits, waiting policy, queues"},
    {"loom_shm", "shared-memory transport and single-copy transfers"},
    {"loom_tcp", "TCP netmod"},
    {"loom_coll", "collectives"},
    {"loom_bind", "process binding"},
};

static const struct cvar {
    const char *name;
    int cat, verbosity;
    const char *desc;
} cvars[] = {
    {"LOOM_MPI_NETMOD", CAT_P2P, MPI_T_VERBOSITY_USER_BASIC,
     "0 (auto, default): TCP only to other nodes; 1 (tcp): every peer over TCP"},
    {"LOOM_MPI_PMI", CAT_BOOT, MPI_T_VERBOSITY_USER_BASIC,
     "process-manager interface: auto (default), pmi2, pmix or singleton"},
    {"LOOM_MPI_PMIX_COLLECT", CAT_BOOT, MPI_T_VERBOSITY_TUNER_DETAIL,
     "0: PMIx fence without data collection (direct modex); default 1"},
    {"LOOM_MPI_PMIX_LIB", CAT_BOOT, MPI_T_VERBOSITY_USER_DETAIL,
     "OpenPMIx client library to load (default libpmix.so.2, then libpmix.so)"},
    {"LOOM_MPI_PMI_TIMEOUT", CAT_BOOT, MPI_T_VERBOSITY_USER_DETAIL,
     "seconds PMIx_Init and PMIx gets may take (default 60)"},
    {"LOOM_MPI_DEBUG", CAT_BOOT, MPI_T_VERBOSITY_USER_DETAIL,
     "set: each rank prints its waiting policy at MPI_Init"},
    {"LOOM_MPI_FAKE_NODES", CAT_BOOT, MPI_T_VERBOSITY_MPIDEV_BASIC,
     "k: pretend the ranks of one machine sit on k nodes (tests)"},
    {"LOOM_MPI_EAGER_MAX", CAT_P2P, MPI_T_VERBOSITY_TUNER_BASIC,
     "bytes sent eagerly between ranks of a node (default 32768)"},
    {"LOOM_MPI_EAGER_ACCEPT", CAT_P2P, MPI_T_VERBOSITY_TUNER_DETAIL,
     "longest eager message taken from a peer (default 16 MiB)"},
    {"LOOM_MPI_SPIN", CAT_P2P, MPI_T_VERBOSITY_TUNER_DETAIL,
     "polls before a waiting rank yields (default 2000; 16 when oversubscribed)"},
    {"LOOM_MPI_YIELD", CAT_P2P, MPI_T_VERBOSITY_TUNER_DETAIL,
     "sched_yields before a waiting rank sleeps (default 64; 8 when oversubscribed)"},
    {"LOOM_MPI_SPIN_US", CAT_P2P, MPI_T_VERBOSITY_TUNER_DETAIL,
     "microseconds a waiting rank spins when every rank has a CPU (default 100000)"},
    {"LOOM_MPI_SPIN_ADAPT", CAT_P2P, MPI_T_VERBOSITY_TUNER_DETAIL,
     "0: keep the spin budget fixed (default 1: adaptive)"},
    {"LOOM_MPI_CMA", CAT_SHM, MPI_T_VERBOSITY_TUNER_BASIC,
     "1/0: single-copy (process_vm_readv) large messages on/off (default: if allowed)"},
    {"LOOM_SHM_LMT", CAT_SHM, MPI_T_VERBOSITY_TUNER_BASIC,
     "cma or copy: large-message transfer between ranks of a node"},
    {"LOOM_MPI_COOP", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "0/1: sender helps copy large messages (default on unless oversubscribed)"},
    {"LOOM_MPI_COOP_MIN", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "smallest message copied by both sides (default 65536)"},
    {"LOOM_MPI_COOP_PARTS", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "chunks a shared copy is cut into (default 2)"},
    {"LOOM_MPI_COOP_CHUNK", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "smallest chunk of a shared copy (default 32 KiB)"},
    {"LOOM_MPI_COOP_CHUNK_MAX", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "largest chunk of a shared copy (default 1 MiB)"},
    {"LOOM_MPI_SHM_CELL", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "bytes per shared-memory cell (default 16384)"},
    {"LOOM_MPI_SHM_CELLS", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "cells per rank (default 64; 32 above 8 local ranks)"},
    {"LOOM_MPI_SHM_FBOX", CAT_SHM, MPI_T_VERBOSITY_TUNER_DETAIL,
     "fastbox bytes (default 4096; 2048 above 16 local ranks)"},
    {"LOOM_MPI_SHM_COLL_SLOTS", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "shared-memory collective slots (default 16; 8 above 16 local ranks)"},
    {"LOOM_MPI_SHM_COLL_BUF", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "bytes of a rank's reduction buffer in a slot (default 64 KiB, less for many ranks)"},
    {"LOOM_MPI_SHM_COLL_CHUNK", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "broadcast ring chunk bytes (default 16 KiB)"},
    {"LOOM_MPI_COLL_SHM", CAT_COLL, MPI_T_VERBOSITY_TUNER_BASIC,
     "0: no shared-memory collectives (default 1)"},
    {"LOOM_MPI_COLL_SHM_MAX", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "largest Bcast/reduction done in the segment (default 65536)"},
    {"LOOM_MPI_COLL_SPIN_US", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "microseconds a collective waiter spins (default 100000; 0 oversubscribed)"},
    {"LOOM_MPI_COLL_YIELD", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "yields of an oversubscribed collective waiter (default 4 per local rank)"},
    {"LOOM_MPI_COLL_YIELD_SLOW_US", CAT_COLL, MPI_T_VERBOSITY_TUNER_DETAIL,
     "a yield longer than this halves the yield budget (default 1000)"},
    {"LOOM_MPI_COLL_NODES", CAT_COLL, MPI_T_VERBOSITY_MPIDEV_BASIC,
     "k: collectives treat the job as k nodes (tests)"},
    {"LOOM_MPI_COLL_TREE", CAT_COLL, MPI_T_VERBOSITY_MPIDEV_BASIC,
     "tree shape of the p2p collectives (developers)"},
    {"LOOM_MPI_TCP_IF", CAT_TCP, MPI_T_VERBOSITY_USER_BASIC,
     "interface name or subnet whose addresses TCP advertises"},
    {"LOOM_MPI_TCP_EAGER_MAX", CAT_TCP, MPI_T_VERBOSITY_TUNER_BASIC,
     "bytes sent eagerly over TCP (default 262144)"},
    {"LOOM_MPI_TCP_ZCOPY_MIN", CAT_TCP, MPI_T_VERBOSITY_TUNER_DETAIL,
     "eager TCP sends from this size go from the user buffer (default 65536)"},
    {"LOOM_MPI_TCP_TIMEOUT", CAT_TCP, MPI_T_VERBOSITY_USER_DETAIL,
     "seconds a connection may stay silent before the peer counts as lost (default 60)"},
    {"LOOM_MPI_TCP_HANDSHAKE_TIMEOUT", CAT_TCP, MPI_T_VERBOSITY_TUNER_DETAIL,
     "seconds an accepted connection may take to prove itself (default 10)"},
    {"LOOM_MPI_TCP_MAX_PENDING", CAT_TCP, MPI_T_VERBOSITY_TUNER_DETAIL,
     "accepted connections in their handshake at once (default 64)"},
    {"LOOM_MPI_TCP_SNDBUF", CAT_TCP, MPI_T_VERBOSITY_TUNER_DETAIL,
     "socket send buffer bytes (default 128 KiB, 512 KiB over loopback)"},
    {"LOOM_MPI_TCP_RCVBUF", CAT_TCP, MPI_T_VERBOSITY_TUNER_DETAIL,
     "socket receive buffer bytes (default: kernel autotuning)"},
    {"LOOM_BIND", CAT_BIND, MPI_T_VERBOSITY_USER_BASIC,
     "core, ... : bind each rank (default: no binding by the library)"},
    {"LOOM_REPORT_BINDINGS", CAT_BIND, MPI_T_VERBOSITY_USER_DETAIL,
     "set: print each rank's binding"},
};
#define NCVAR ((int)(sizeof(cvars) / sizeof(cvars[0])))
#define CVAR_NETMOD 0

enum { PV_UNEXP, PV_UNEXP_BYTES, PV_POSTED, PV_SENDS, PV_REQS, NPVAR };
static const struct {
    const char *name;
    int cls;
    const char *desc;
} pvars[NPVAR] = {
    {"loom_unexpected_messages", MPI_T_PVAR_CLASS_LEVEL,
     "messages that arrived before a matching receive and wait in the unexpected queue"},
    {"loom_unexpected_bytes", MPI_T_PVAR_CLASS_SIZE,
     "bytes of the messages in the unexpected queue (senders' lengths)"},
    {"loom_posted_receives", MPI_T_PVAR_CLASS_LEVEL,
     "receives posted and not complete"},
    {"loom_pending_sends", MPI_T_PVAR_CLASS_LEVEL, "sends started and not complete"},
    {"loom_requests", MPI_T_PVAR_CLASS_LEVEL,
     "live request objects (user requests and the engine's own)"},
};

static int t_inits; /* MPI_T_init_thread minus MPI_T_finalize calls */

struct xm_t_enum {
    const char *name;
    int n;
    const char *const *items;
};
static const char *const netmod_items[] = {"auto", "tcp"};
static struct xm_t_enum netmod_enum = {"loom_netmod", 2, netmod_items};

struct xm_t_cvar_handle {
    int index;
};
struct xm_t_pvar_handle {
    int index;
    struct xm_t_pvar_handle *next; /* the session's handles */
};
struct xm_t_pvar_session {
    struct xm_t_pvar_handle *handles;
};

#define NEED_INIT()                                                                      \
    do {                                                                                 \
        if (t_inits <= 0)                                                                \
            return MPI_T_ERR_NOT_INITIALIZED;                                            \
    } while (0)

/* MPI-3.1 §14.3.3: *len 0 asks for the length (with the NUL); else copy what fits */
static void strout(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    int n = (int)strlen(s);
    if (*len <= 0 || !buf) {
        *len = n + 1;
        return;
    }
    if (n > *len - 1)
        n = *len - 1;
    memcpy(buf, s, (size_t)n);
    buf[n] = '\0';
    *len = n + 1;
}

int PMPI_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    t_inits++;
    *provided = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                : required < MPI_THREAD_SINGLE  ? MPI_THREAD_SINGLE
                                                 : required;
    return MPI_SUCCESS;
}

int PMPI_T_finalize(void)
{
    NEED_INIT();
    t_inits--;
    return MPI_SUCCESS;
}

int PMPI_T_enum_get_info(MPI_T_enum e, int *num, char *name, int *name_len)
{
    NEED_INIT();
    if (e != &netmod_enum)
        return MPI_T_ERR_INVALID_HANDLE;
    if (num)
        *num = e->n;
    strout(e->name, name, name_len);
    return MPI_SUCCESS;
}

int PMPI_T_enum_get_item(MPI_T_enum e, int index, int *value, char *name, int *name_len)
{
    NEED_INIT();
    if (e != &netmod_enum)
        return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || index >= e->n)
        return MPI_T_ERR_INVALID_ITEM;
    if (value)
        *value = index;
    strout(e->items[index], name, name_len);
    return MPI_SUCCESS;
}

/* ---- control variables ------------------------------------------------------------ */

int PMPI_T_cvar_get_num(int *num)
{
    NEED_INIT();
    if (!num)
        return MPI_T_ERR_INVALID;
    *num = NCVAR;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_info(int i, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *scope)
{
    NEED_INIT();
    if (i < 0 || i >= NCVAR)
        return MPI_T_ERR_INVALID_INDEX;
    strout(cvars[i].name, name, name_len);
    strout(cvars[i].desc, desc, desc_len);
    if (verbosity)
        *verbosity = cvars[i].verbosity;
    if (datatype)
        *datatype = i == CVAR_NETMOD ? MPI_INT : MPI_CHAR;
    if (enumtype)
        *enumtype = i == CVAR_NETMOD ? &netmod_enum : MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_index(const char *name, int *index)
{
    NEED_INIT();
    if (!name || !index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NCVAR; i++)
        if (strcmp(cvars[i].name, name) == 0) {
            *index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_cvar_handle_alloc(int i, void *obj, MPI_T_cvar_handle *h, int *count)
{
    NEED_INIT();
    (void)obj; /* no variable is bound to an object */
    if (i < 0 || i >= NCVAR)
        return MPI_T_ERR_INVALID_INDEX;
    if (!h || !count)
        return MPI_T_ERR_INVALID;
    struct xm_t_cvar_handle *c = malloc(sizeof(*c));
    if (!c)
        return MPI_T_ERR_MEMORY;
    c->index = i;
    *h = c;
    *count = i == CVAR_NETMOD ? 1 : XM_T_STRLEN;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *h)
{
    NEED_INIT();
    if (!h || *h == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*h);
    *h = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle h, void *buf)
{
    NEED_INIT();
    if (h == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const char *v = getenv(cvars[h->index].name);
    if (h->index == CVAR_NETMOD) {
        *(int *)buf = v && strcmp(v, "tcp") == 0;
        return MPI_SUCCESS;
    }
    int len = XM_T_STRLEN;
    strout(v ? v : "", buf, &len);
    return MPI_SUCCESS;
}

int PMPI_T_cvar_write(MPI_T_cvar_handle h, const void *buf)
{
    NEED_INIT();
    if (h == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    (void)buf;
    return MPI_T_ERR_CVAR_SET_NEVER; /* every setting is read at start-up only */
}

/* ---- performance variables ---------------------------------------------------------- */

struct pv_sum {
    unsigned long long v[NPVAR];
};

static void pv_count(struct xm_req *r, void *arg)
{
    struct pv_sum *s = arg;
    s->v[PV_REQS]++;
    if (r->kind == XM_REQ_UNEXP && !r->match) {
        s->v[PV_UNEXP]++;
        s->v[PV_UNEXP_BYTES] += r->total;
    } else if (r->kind == XM_REQ_RECV && !r->done) {
        s->v[PV_POSTED]++;
    } else if (r->kind == XM_REQ_SEND && !r->done) {
        s->v[PV_SENDS]++;
    }
}

int PMPI_T_pvar_get_num(int *num)
{
    NEED_INIT();
    if (!num)
        return MPI_T_ERR_INVALID;
    *num = NPVAR;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_info(int i, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *continuous,
                         int *atomic)
{
    NEED_INIT();
    if (i < 0 || i >= NPVAR)
        return MPI_T_ERR_INVALID_INDEX;
    strout(pvars[i].name, name, name_len);
    strout(pvars[i].desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (var_class)
        *var_class = pvars[i].cls;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 1;
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_index(const char *name, int var_class, int *index)
{
    NEED_INIT();
    if (!name || !index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NPVAR; i++)
        if (strcmp(pvars[i].name, name) == 0 && pvars[i].cls == var_class) {
            *index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *s)
{
    NEED_INIT();
    if (!s)
        return MPI_T_ERR_INVALID;
    if (!(*s = calloc(1, sizeof(**s))))
        return MPI_T_ERR_MEMORY;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *s)
{
    NEED_INIT();
    if (!s || *s == MPI_T_PVAR_SESSION_NULL)
        return MPI_T_ERR_INVALID_SESSION;
    while ((*s)->handles) {
        struct xm_t_pvar_handle *h = (*s)->handles;
        (*s)->handles = h->next;
        free(h);
    }
    free(*s);
    *s = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

/* h is one of session s's handles (not ALL_HANDLES) */
static int pv_check(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    if (s == MPI_T_PVAR_SESSION_NULL)
        return MPI_T_ERR_INVALID_SESSION;
    for (struct xm_t_pvar_handle *p = s->handles; p; p = p->next)
        if (p == h)
            return MPI_SUCCESS;
    return MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session s, int i, void *obj, MPI_T_pvar_handle *h,
                             int *count)
{
    NEED_INIT();
    (void)obj;
    if (s == MPI_T_PVAR_SESSION_NULL)
        return MPI_T_ERR_INVALID_SESSION;
    if (i < 0 || i >= NPVAR)
        return MPI_T_ERR_INVALID_INDEX;
    if (!h || !count)
        return MPI_T_ERR_INVALID;
    struct xm_t_pvar_handle *p = malloc(sizeof(*p));
    if (!p)
        return MPI_T_ERR_MEMORY;
    p->index = i;
    p->next = s->handles;
    s->handles = p;
    *h = p;
    *count = 1;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session s, MPI_T_pvar_handle *h)
{
    NEED_INIT();
    if (!h)
        return MPI_T_ERR_INVALID;
    int rc = pv_check(s, *h);
    if (rc)
        return rc;
    for (struct xm_t_pvar_handle **pp = &s->handles; *pp; pp = &(*pp)->next)
        if (*pp == *h) {
            *pp = (*h)->next;
            break;
        }
    free(*h);
    *h = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* all variables are continuous: ALL_HANDLES touches none of them, one handle is refused */
int PMPI_T_pvar_start(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    NEED_INIT();
    if (h == MPI_T_PVAR_ALL_HANDLES)
        return s ? MPI_SUCCESS : MPI_T_ERR_INVALID_SESSION;
    int rc = pv_check(s, h);
    return rc ? rc : MPI_T_ERR_PVAR_NO_STARTSTOP;
}

int PMPI_T_pvar_stop(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    return PMPI_T_pvar_start(s, h);
}

int PMPI_T_pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h, void *buf)
{
    NEED_INIT();
    int rc = pv_check(s, h);
    if (rc)
        return rc;
    if (!buf)
        return MPI_T_ERR_INVALID;
    struct pv_sum sum = {{0}};
    if (xm_g.initialized && !xm_g.finalized)
        xm_req_foreach(pv_count, &sum);
    *(unsigned long long *)buf = sum.v[h->index];
    return MPI_SUCCESS;
}

int PMPI_T_pvar_write(MPI_T_pvar_session s, MPI_T_pvar_handle h, const void *buf)
{
    NEED_INIT();
    (void)buf;
    if (h == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    int rc = pv_check(s, h);
    return rc ? rc : MPI_T_ERR_PVAR_NO_WRITE;
}

int PMPI_T_pvar_reset(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    NEED_INIT();
    if (h == MPI_T_PVAR_ALL_HANDLES) /* resets every writable one: there are none */
        return s ? MPI_SUCCESS : MPI_T_ERR_INVALID_SESSION;
    int rc = pv_check(s, h);
    return rc ? rc : MPI_T_ERR_PVAR_NO_WRITE;
}

int PMPI_T_pvar_readreset(MPI_T_pvar_session s, MPI_T_pvar_handle h, void *buf)
{
    NEED_INIT();
    (void)buf;
    if (h == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    int rc = pv_check(s, h);
    return rc ? rc : MPI_T_ERR_PVAR_NO_WRITE;
}

/* ---- categories --------------------------------------------------------------------- */

static int pvar_cat(int i)
{
    (void)i;
    return CAT_P2P; /* every performance variable describes the p2p engine's queues */
}

int PMPI_T_category_get_num(int *num)
{
    NEED_INIT();
    if (!num)
        return MPI_T_ERR_INVALID;
    *num = NCAT;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_info(int c, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    NEED_INIT();
    if (c < 0 || c >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    strout(cats[c].name, name, name_len);
    strout(cats[c].desc, desc, desc_len);
    int nc = 0, np = 0;
    for (int i = 0; i < NCVAR; i++)
        nc += cvars[i].cat == c;
    for (int i = 0; i < NPVAR; i++)
        np += pvar_cat(i) == c;
    if (num_cvars)
        *num_cvars = nc;
    if (num_pvars)
        *num_pvars = np;
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_index(const char *name, int *index)
{
    NEED_INIT();
    if (!name || !index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NCAT; i++)
        if (strcmp(cats[i].name, name) == 0) {
            *index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_category_get_cvars(int c, int len, int indices[])
{
    NEED_INIT();
    if (c < 0 || c >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    for (int i = 0, k = 0; i < NCVAR && k < len; i++)
        if (cvars[i].cat == c)
            indices[k++] = i;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_pvars(int c, int len, int indices[])
{
    NEED_INIT();
    if (c < 0 || c >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    for (int i = 0, k = 0; i < NPVAR && k < len; i++)
        if (pvar_cat(i) == c)
            indices[k++] = i;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_categories(int c, int len, int indices[])
{
    NEED_INIT();
    (void)indices;
    if (c < 0 || c >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS; /* no sub-categories */
}

int PMPI_T_category_changed(int *stamp)
{
    NEED_INIT();
    if (!stamp)
        return MPI_T_ERR_INVALID;
    *stamp = 0; /* the set of variables and categories never changes */
    return MPI_SUCCESS;
}
