/*
 * rma.c - MPI-3.1 chapter 11 (one-sided communication) entry points:
 *         argument checks, rank/group translation, the window's error handler; the
 *         work is done by mpi/rma/.
 * One piece (about 970 lines): the checked entry points of one chapter, each a few
 *   lines over the same window lookup and epoch checks; split, they would only scatter
 *   those checks.
 *
 * Contract: every bad argument returns its error class through the window's error
 *   handler (MPI_ERRORS_ARE_FATAL unless set): MPI_ERR_WIN, RANK, COUNT, TYPE, OP,
 *   SIZE, DISP, LOCKTYPE, ASSERT, GROUP, RMA_SYNC (operation or synchronization
 *   outside a matching epoch), RMA_RANGE (target bytes outside the target's window),
 *   RMA_FLAVOR, RMA_ATTACH.  MPI_PROC_NULL targets are no-ops.
 * Window error handlers live here: a table of functions with handles of kind ERRH in
 *   an index range of their own (WEH_BASE), never reused.
 * Request-based operations: Rput/Raccumulate complete when issued (the data is copied
 *   into the request messages); Rget/Rget_accumulate wait for their reply before they
 *   return a completed request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xm.h"
#include "../core/comm.h"
#include "../coll/coll.h"
#include "../dt/dtype.h"
#include "../rma/rma.h"

XM_WEAK(MPI_Win_create)
XM_WEAK(MPI_Win_allocate)
XM_WEAK(MPI_Win_allocate_shared)
XM_WEAK(MPI_Win_shared_query)
XM_WEAK(MPI_Win_create_dynamic)
XM_WEAK(MPI_Win_attach)
XM_WEAK(MPI_Win_detach)
XM_WEAK(MPI_Win_free)
XM_WEAK(MPI_Win_get_group)
XM_WEAK(MPI_Win_set_info)
XM_WEAK(MPI_Win_get_info)
XM_WEAK(MPI_Win_get_attr)
XM_WEAK(MPI_Win_set_attr)
XM_WEAK(MPI_Win_delete_attr)
XM_WEAK(MPI_Win_set_name)
XM_WEAK(MPI_Win_get_name)
XM_WEAK(MPI_Win_create_errhandler)
XM_WEAK(MPI_Win_set_errhandler)
XM_WEAK(MPI_Win_get_errhandler)
XM_WEAK(MPI_Win_call_errhandler)
XM_WEAK(MPI_Put)
XM_WEAK(MPI_Get)
XM_WEAK(MPI_Accumulate)
XM_WEAK(MPI_Get_accumulate)
XM_WEAK(MPI_Fetch_and_op)
XM_WEAK(MPI_Compare_and_swap)
XM_WEAK(MPI_Rput)
XM_WEAK(MPI_Rget)
XM_WEAK(MPI_Raccumulate)
XM_WEAK(MPI_Rget_accumulate)
XM_WEAK(MPI_Win_fence)
XM_WEAK(MPI_Win_post)
XM_WEAK(MPI_Win_start)
XM_WEAK(MPI_Win_complete)
XM_WEAK(MPI_Win_wait)
XM_WEAK(MPI_Win_test)
XM_WEAK(MPI_Win_lock)
XM_WEAK(MPI_Win_unlock)
XM_WEAK(MPI_Win_lock_all)
XM_WEAK(MPI_Win_unlock_all)
XM_WEAK(MPI_Win_flush)
XM_WEAK(MPI_Win_flush_all)
XM_WEAK(MPI_Win_flush_local)
XM_WEAK(MPI_Win_flush_local_all)
XM_WEAK(MPI_Win_sync)
XM_WEAK(MPI_Win_c2f)
XM_WEAK(MPI_Win_f2c)

/* ---- error handling ------------------------------------------------------------ */

#define WEH_BASE 0x400000
static MPI_Win_errhandler_function **weh;
static int nweh;

static MPI_Win_errhandler_function *weh_fn(MPI_Errhandler eh)
{
    if (!(eh & XM_H_VALID) || XM_H_KIND(eh) != XM_K_ERRH || !(eh & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(eh) - WEH_BASE;
    return i >= 0 && i < nweh ? weh[i] : NULL;
}

static int werr(struct xm_win *w, int cls, const char *fn)
{
    if (cls == MPI_SUCCESS)
        return cls;
    if (!w)
        return xm_err(NULL, cls, fn);
    if (w->errh == MPI_ERRORS_RETURN)
        return cls;
    MPI_Win_errhandler_function *f = weh_fn(w->errh);
    if (f) {
        MPI_Win h = w->handle;
        int code = cls;
        f(&h, &code, fn);
        return cls;
    }
    struct xm_comm fatal = {.errh = MPI_ERRORS_ARE_FATAL, .handle = MPI_COMM_NULL};
    return xm_err(&fatal, cls, fn);
}

#define GETWIN(h, fn)                                                                  \
    struct xm_win *w = xm_win_get(h);                                                  \
    if (!w)                                                                            \
        return xm_err(NULL, MPI_ERR_WIN, fn);

static struct xm_comm *usable_comm(MPI_Comm h)
{
    struct xm_comm *c = xm_comm_get(h);
    return c && c->rank >= 0 ? c : NULL;
}

/* ---- info hints (MPI-3.1 11.2.1) --------------------------------------------------
 * The window keeps the hints of the standard (and alloc_shared_noncontig) that were
 * given with a valid value, and Win_get_info reports each one: the value set, else
 * its default.  Keys it does not know are ignored, as the standard allows.  The
 * engine takes no shortcut from them (no_locks=true still serves locks), so a hint
 * never changes what a correct program sees. */
enum { H_VALUE_MAX = 31 };
static const struct {
    const char *key, *dflt;
    int kind; /* 0 boolean, 1 accumulate_ordering, 2 accumulate_ops */
} hint_tab[] = {
    {"no_locks", "false", 0},       {"accumulate_ordering", "rar,raw,war,waw", 1},
    {"accumulate_ops", "same_op_no_op", 2}, {"same_size", "false", 0},
    {"same_disp_unit", "false", 0}, {"alloc_shared_noncontig", "false", 0},
};
#define NHINTS ((int)(sizeof(hint_tab) / sizeof(hint_tab[0])))
_Static_assert(NHINTS <= (int)(sizeof(((struct xm_win *)0)->hints) /
                               sizeof(((struct xm_win *)0)->hints[0])), "hints");
_Static_assert(H_VALUE_MAX < sizeof(((struct xm_win *)0)->hints[0]), "hint value");

static int hint_valid(int kind, const char *v)
{
    if (kind == 0)
        return !strcmp(v, "true") || !strcmp(v, "false");
    if (kind == 2)
        return !strcmp(v, "same_op") || !strcmp(v, "same_op_no_op");
    if (!strcmp(v, "none"))
        return 1;
    /* a comma-separated list of rar, raw, war, waw */
    for (const char *p = v;; p += 4) {
        if (strncmp(p, "rar", 3) && strncmp(p, "raw", 3) && strncmp(p, "war", 3) &&
            strncmp(p, "waw", 3))
            return 0;
        if (p[3] == 0)
            return 1;
        if (p[3] != ',')
            return 0;
    }
}

/* take the known hints of info (MPI_INFO_NULL: none); 0 / error class */
static int hints_take(struct xm_win *w, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < NHINTS; i++) {
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (PMPI_Info_get(info, hint_tab[i].key, MPI_MAX_INFO_VAL, v, &flag) != MPI_SUCCESS)
            return MPI_ERR_INFO;
        if (flag && strlen(v) <= H_VALUE_MAX && hint_valid(hint_tab[i].kind, v))
            snprintf(w->hints[i], sizeof(w->hints[i]), "%s", v);
    }
    return MPI_SUCCESS;
}

/* ---- windows ---------------------------------------------------------------------- */

static int create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                  int flavor, void *baseptr, MPI_Win *win, const char *fn)
{
    struct xm_comm *c = usable_comm(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, fn);
    if (!win)
        return xm_err(c, MPI_ERR_ARG, fn);
    if (size < 0)
        return xm_err(c, MPI_ERR_SIZE, fn);
    if (disp_unit <= 0)
        return xm_err(c, MPI_ERR_DISP, fn);
    if (flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && !baseptr)
        return xm_err(c, MPI_ERR_ARG, fn);
    struct xm_win *w;
    int rc = xm_win_create(base, size, disp_unit, c, flavor, &w);
    if (rc)
        return xm_err(c, rc, fn);
    hints_take(w, info); /* an unreadable info only loses hints */
    if (baseptr)
        *(void **)baseptr = w->base;
    *win = w->handle;
    return MPI_SUCCESS;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return create(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, NULL, win,
                  "MPI_Win_create");
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                      void *baseptr, MPI_Win *win)
{
    return create(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, baseptr, win,
                  "MPI_Win_allocate");
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    struct xm_comm *c = usable_comm(comm);
    if (c && xm_g.node_of) {
        int me = xm_g.node_of[xm_g.rank];
        for (int i = 0; i < c->size; i++)
            if (xm_g.node_of[xm_comm_world_rank(c, i)] != me)
                return xm_err(c, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared");
    }
    return create(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, baseptr, win,
                  "MPI_Win_allocate_shared");
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create(NULL, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, win,
                  "MPI_Win_create_dynamic");
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                          void *baseptr)
{
    static const char fn[] = "MPI_Win_shared_query";
    GETWIN(win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return werr(w, MPI_ERR_RMA_FLAVOR, fn);
    if (!size || !disp_unit || !baseptr)
        return werr(w, MPI_ERR_ARG, fn);
    if (rank == MPI_PROC_NULL) { /* the first rank with memory */
        for (rank = 0; rank < w->comm->size - 1 && w->sizes[rank] == 0; rank++)
            ;
    }
    if (rank < 0 || rank >= w->comm->size)
        return werr(w, MPI_ERR_RANK, fn);
    *size = w->sizes[rank];
    *disp_unit = w->units[rank];
    /* a rank without memory has no base (as MPICH and Open MPI answer) */
    *(void **)baseptr = w->sizes[rank] ? xm_win_shared_base(w, rank) : NULL;
    return MPI_SUCCESS;
}

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fn[] = "MPI_Win_attach";
    GETWIN(win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return werr(w, MPI_ERR_RMA_FLAVOR, fn);
    if (size < 0)
        return werr(w, MPI_ERR_SIZE, fn);
    for (int i = 0; i < w->nregs; i++) /* attached regions may not overlap */
        if ((uintptr_t)base < w->regs[i].base + w->regs[i].len &&
            w->regs[i].base < (uintptr_t)base + (size_t)size)
            return werr(w, MPI_ERR_RMA_ATTACH, fn);
    return werr(w, xm_win_attach(w, base, size), fn);
}

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char fn[] = "MPI_Win_detach";
    GETWIN(win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return werr(w, MPI_ERR_RMA_FLAVOR, fn);
    return werr(w, xm_win_detach(w, base), fn);
}

int PMPI_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    if (!win)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    GETWIN(*win, fn);
    if (w->lock_all || w->started || w->posted)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    for (int i = 0; i < w->comm->size; i++)
        if (w->locked[i])
            return werr(w, MPI_ERR_RMA_SYNC, fn);
    int rc = xm_win_attr_delete_all(w); /* user attributes go first (MPI-3.1 6.7.3) */
    if (rc != MPI_SUCCESS)
        return werr(w, rc, fn);
    rc = xm_win_free(w);
    *win = MPI_WIN_NULL;
    return rc ? xm_err(NULL, rc, fn) : MPI_SUCCESS;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char fn[] = "MPI_Win_get_group";
    GETWIN(win, fn);
    if (!group)
        return werr(w, MPI_ERR_ARG, fn);
    int n = w->comm->size;
    int *m = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!m)
        return werr(w, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < n; i++)
        m[i] = xm_comm_world_rank(w->comm, i);
    struct xm_group *g = xm_group_new(n, m);
    if (!g)
        return werr(w, MPI_ERR_NO_MEM, fn);
    *group = g->handle;
    return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char fn[] = "MPI_Win_set_info";
    GETWIN(win, fn);
    return werr(w, hints_take(w, info), fn);
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Win_get_info";
    GETWIN(win, fn);
    if (!info_used)
        return werr(w, MPI_ERR_ARG, fn);
    int rc = PMPI_Info_create(info_used);
    for (int i = 0; i < NHINTS && rc == MPI_SUCCESS; i++)
        rc = PMPI_Info_set(*info_used, hint_tab[i].key,
                           w->hints[i][0] ? w->hints[i] : hint_tab[i].dflt);
    /* where the memory is: in a node-shared mapping or not (as MPICH's alloc_shm) */
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info_used, "alloc_shm", w->map ? "true" : "false");
    return werr(w, rc, fn);
}

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attr_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    GETWIN(win, fn);
    if (!attr_val || !flag)
        return werr(w, MPI_ERR_ARG, fn);
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE:
        *(void **)attr_val = w->base;
        break;
    case MPI_WIN_SIZE:
        *(MPI_Aint **)attr_val = &w->size; /* the standard hands out pointers */
        break;
    case MPI_WIN_DISP_UNIT:
        *(int **)attr_val = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        *(int **)attr_val = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        *(int **)attr_val = &w->model;
        break;
    default:
        return werr(w, xm_win_attr_get(w, keyval, attr_val, flag), fn);
    }
    return MPI_SUCCESS;
}

int PMPI_Win_set_attr(MPI_Win win, int keyval, void *attr_val)
{
    static const char fn[] = "MPI_Win_set_attr";
    GETWIN(win, fn);
    return werr(w, xm_win_attr_set(w, keyval, attr_val), fn);
}

int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    static const char fn[] = "MPI_Win_delete_attr";
    GETWIN(win, fn);
    return werr(w, xm_win_attr_delete(w, keyval), fn);
}

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    static const char fn[] = "MPI_Win_set_name";
    GETWIN(win, fn);
    if (!name)
        return werr(w, MPI_ERR_ARG, fn);
    strncpy(w->name, name, sizeof(w->name) - 1);
    w->name[sizeof(w->name) - 1] = 0;
    return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    static const char fn[] = "MPI_Win_get_name";
    GETWIN(win, fn);
    if (!name || !resultlen)
        return werr(w, MPI_ERR_ARG, fn);
    strcpy(name, w->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *f, MPI_Errhandler *eh)
{
    static const char fn[] = "MPI_Win_create_errhandler";
    if (!f || !eh)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    MPI_Win_errhandler_function **n = realloc(weh, sizeof(*n) * (size_t)(nweh + 1));
    if (!n)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    weh = n;
    weh[nweh] = f;
    *eh = XM_H_MAKE(XM_K_ERRH, 1, WEH_BASE + nweh);
    nweh++;
    return MPI_SUCCESS;
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler eh)
{
    static const char fn[] = "MPI_Win_set_errhandler";
    GETWIN(win, fn);
    if (eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL && !weh_fn(eh))
        return werr(w, MPI_ERR_ARG, fn);
    w->errh = eh;
    return MPI_SUCCESS;
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *eh)
{
    static const char fn[] = "MPI_Win_get_errhandler";
    GETWIN(win, fn);
    if (!eh)
        return werr(w, MPI_ERR_ARG, fn);
    *eh = w->errh;
    return MPI_SUCCESS;
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    static const char fn[] = "MPI_Win_call_errhandler";
    GETWIN(win, fn);
    werr(w, errorcode, fn);
    return MPI_SUCCESS;
}

MPI_Fint PMPI_Win_c2f(MPI_Win win)
{
    return (MPI_Fint)win;
}

MPI_Win PMPI_Win_f2c(MPI_Fint win)
{
    return (MPI_Win)win;
}

/* ---- operations --------------------------------------------------------------------- */

static int in_epoch(struct xm_win *w, int t)
{
    if (w->fence_open || w->lock_all || w->locked[t])
        return 1;
    if (w->started)
        for (int i = 0; i < w->naccess; i++)
            if (w->access[i] == t)
                return 1;
    return 0;
}

static int type_ok(MPI_Datatype h, struct xm_dtype **out)
{
    struct xm_dtype *t = xm_dt_get(h);
    if (!t || (!XM_DT_IS_PREDEF(h) && !t->committed) || h == MPI_LB || h == MPI_UB)
        return 0;
    if (out)
        *out = t;
    return 1;
}

/* target rank, counts, types, sizes, epoch: MPI_SUCCESS, -1 (PROC_NULL) or a class */
static int check_op(struct xm_win *w, int ocount, MPI_Datatype odt, int trank, int tcount,
                    MPI_Datatype tdt, int need_origin)
{
    struct xm_dtype *o = NULL, *t;
    if (trank == MPI_PROC_NULL)
        return -1;
    if (trank < 0 || trank >= w->comm->size)
        return MPI_ERR_RANK;
    if (tcount < 0 || (need_origin && ocount < 0))
        return MPI_ERR_COUNT;
    if (!type_ok(tdt, &t) || (need_origin && !type_ok(odt, &o)))
        return MPI_ERR_TYPE;
    if (need_origin && (size_t)ocount * o->size != (size_t)tcount * t->size)
        return MPI_ERR_TYPE; /* the signatures cannot match */
    if (!in_epoch(w, trank))
        return MPI_ERR_RMA_SYNC;
    return MPI_SUCCESS;
}

static int check_acc(MPI_Op op, MPI_Datatype odt, MPI_Datatype tdt, int tcount,
                     int need_origin)
{
    size_t es;
    struct xm_dtype *t = xm_dt_get(tdt), *o = need_origin ? xm_dt_get(odt) : NULL;
    if (!xm_rma_acc_ok(op, MPI_INT, &es))
        return MPI_ERR_OP;
    if (tcount == 0 || t->size == 0)
        return MPI_SUCCESS; /* no element moves: the types need not agree (MPICH's
                             * badrma: a zero-size type at one end, any at the others) */
    if (!xm_rma_acc_ok(op, t->basic, &es))
        return MPI_ERR_TYPE; /* elements of one predefined type only */
    if (o && o->size && o->basic != t->basic)
        return MPI_ERR_TYPE;
    if (op != MPI_REPLACE && op != MPI_NO_OP && t->size) {
        long double a[4] = {0}, b[4] = {0};
        if (xm_op_apply(op, a, b, 1, t->basic) < 0)
            return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

/* (issue 21) the same predefined type and count at both ends, a valid rank in an open
 * epoch, on a node-shared window: the engine's fast paths may take it whole */
#define FAST_OK(w, ocount, odt, tcount, tdt, trank)                                      \
    (((w)->offs || (w)->direct) && (odt) == (tdt) && (ocount) == (tcount) &&             \
     XM_DT_IS_PREDEF(tdt) && (trank) >= 0 && (trank) < (w)->comm->size &&                \
     in_epoch((w), (trank)))

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win)
{
    static const char fn[] = "MPI_Put";
    GETWIN(win, fn);
    if (FAST_OK(w, origin_count, origin_datatype, target_count, target_datatype,
                target_rank) &&
        xm_rma_copy_fast(w, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                         target_disp, 1))
        return MPI_SUCCESS;
    int rc = check_op(w, origin_count, origin_datatype, target_rank, target_count,
                      target_datatype, 1);
    if (rc < 0)
        return MPI_SUCCESS;
    if (!rc)
        rc = xm_rma_put(w, origin_addr, origin_count, origin_datatype, target_rank,
                        target_disp, target_count, target_datatype);
    return werr(w, rc, fn);
}

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win)
{
    static const char fn[] = "MPI_Get";
    GETWIN(win, fn);
    if (FAST_OK(w, origin_count, origin_datatype, target_count, target_datatype,
                target_rank) &&
        xm_rma_copy_fast(w, origin_addr, origin_count, origin_datatype, target_rank,
                         target_disp, 0))
        return MPI_SUCCESS;
    int rc = check_op(w, origin_count, origin_datatype, target_rank, target_count,
                      target_datatype, 1);
    if (rc < 0)
        return MPI_SUCCESS;
    if (!rc)
        rc = xm_rma_get(w, origin_addr, origin_count, origin_datatype, target_rank,
                        target_disp, target_count, target_datatype);
    return werr(w, rc, fn);
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    static const char fn[] = "MPI_Accumulate";
    GETWIN(win, fn);
    if (FAST_OK(w, origin_count, origin_datatype, target_count, target_datatype,
                target_rank) &&
        xm_rma_acc_fast(w, origin_addr, NULL, origin_count, origin_datatype, target_rank,
                        target_disp, op))
        return MPI_SUCCESS;
    int rc = check_op(w, origin_count, origin_datatype, target_rank, target_count,
                      target_datatype, 1);
    if (rc < 0)
        return MPI_SUCCESS;
    if (!rc)
        rc = check_acc(op, origin_datatype, target_datatype, target_count, 1);
    if (!rc)
        rc = xm_rma_acc(w, origin_addr, origin_count, origin_datatype, NULL, 0,
                        MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                        target_datatype, op, 0);
    return werr(w, rc, fn);
}

static int get_acc(struct xm_win *w, const void *origin_addr, int origin_count,
                   MPI_Datatype origin_datatype, void *result_addr, int result_count,
                   MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_datatype, MPI_Op op)
{
    int with_origin = op != MPI_NO_OP;
    int rc = check_op(w, origin_count, origin_datatype, target_rank, target_count,
                      target_datatype, with_origin);
    if (rc)
        return rc;
    rc = check_op(w, result_count, result_datatype, target_rank, target_count,
                  target_datatype, 1);
    if (rc)
        return rc;
    rc = check_acc(op, origin_datatype, target_datatype, target_count, with_origin);
    if (!rc && target_count && xm_dt_get(target_datatype)->size &&
        xm_dt_get(result_datatype)->basic != xm_dt_get(target_datatype)->basic)
        rc = MPI_ERR_TYPE;
    if (!rc)
        rc = xm_rma_acc(w, origin_addr, origin_count, origin_datatype, result_addr,
                        result_count, result_datatype, target_rank, target_disp,
                        target_count, target_datatype, op, 1);
    return rc;
}

int PMPI_Get_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void *result_addr, int result_count,
                        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op,
                        MPI_Win win)
{
    static const char fn[] = "MPI_Get_accumulate";
    GETWIN(win, fn);
    int rc = get_acc(w, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                     result_datatype, target_rank, target_disp, target_count,
                     target_datatype, op);
    return rc < 0 ? MPI_SUCCESS : werr(w, rc, fn);
}

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    static const char fn[] = "MPI_Fetch_and_op";
    GETWIN(win, fn);
    if (!XM_DT_IS_PREDEF(datatype))
        return werr(w, MPI_ERR_TYPE, fn);
    if (FAST_OK(w, 1, datatype, 1, datatype, target_rank) &&
        xm_rma_acc_fast(w, origin_addr, result_addr, 1, datatype, target_rank, target_disp,
                        op))
        return MPI_SUCCESS;
    int rc = get_acc(w, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                     target_disp, 1, datatype, op);
    return rc < 0 ? MPI_SUCCESS : werr(w, rc, fn);
}

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                          void *result_addr, MPI_Datatype datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Win win)
{
    static const char fn[] = "MPI_Compare_and_swap";
    GETWIN(win, fn);
    size_t es;
    if (!XM_DT_IS_PREDEF(datatype) || !xm_rma_acc_ok(MPI_REPLACE, datatype, &es))
        return werr(w, MPI_ERR_TYPE, fn);
    int rc = check_op(w, 1, datatype, target_rank, 1, datatype, 1);
    if (rc < 0)
        return MPI_SUCCESS;
    if (!rc)
        rc = xm_rma_cas(w, origin_addr, compare_addr, result_addr, datatype, target_rank,
                        target_disp);
    return werr(w, rc, fn);
}

/* request-based operations: hand back a request that is already complete */
static int done_req(MPI_Request *request)
{
    struct xm_req *r = xm_req_new(XM_REQ_GREQ);
    if (!r)
        return MPI_ERR_NO_MEM;
    xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    xm_req_complete(r);
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    static const char fn[] = "MPI_Rput";
    GETWIN(win, fn);
    if (!request)
        return werr(w, MPI_ERR_ARG, fn);
    if (!w->lock_all && (target_rank < 0 || target_rank >= w->comm->size ||
                         !w->locked[target_rank]) && target_rank != MPI_PROC_NULL)
        return werr(w, MPI_ERR_RMA_SYNC, fn); /* passive target epochs only */
    int rc = PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win);
    return rc ? rc : werr(w, done_req(request), fn);
}

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    static const char fn[] = "MPI_Rget";
    GETWIN(win, fn);
    if (!request)
        return werr(w, MPI_ERR_ARG, fn);
    if (!w->lock_all && (target_rank < 0 || target_rank >= w->comm->size ||
                         !w->locked[target_rank]) && target_rank != MPI_PROC_NULL)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    int rc = PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win);
    if (!rc)
        rc = xm_rma_flush_local(w, target_rank);
    return rc ? rc : werr(w, done_req(request), fn);
}

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    static const char fn[] = "MPI_Raccumulate";
    GETWIN(win, fn);
    if (!request)
        return werr(w, MPI_ERR_ARG, fn);
    if (!w->lock_all && (target_rank < 0 || target_rank >= w->comm->size ||
                         !w->locked[target_rank]) && target_rank != MPI_PROC_NULL)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    int rc = PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank,
                             target_disp, target_count, target_datatype, op, win);
    return rc ? rc : werr(w, done_req(request), fn);
}

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, void *result_addr, int result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win, MPI_Request *request)
{
    static const char fn[] = "MPI_Rget_accumulate";
    GETWIN(win, fn);
    if (!request)
        return werr(w, MPI_ERR_ARG, fn);
    if (!w->lock_all && (target_rank < 0 || target_rank >= w->comm->size ||
                         !w->locked[target_rank]) && target_rank != MPI_PROC_NULL)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    int rc = PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                 result_count, result_datatype, target_rank, target_disp,
                                 target_count, target_datatype, op, win);
    if (!rc)
        rc = xm_rma_flush_local(w, target_rank);
    return rc ? rc : werr(w, done_req(request), fn);
}

/* ---- synchronization ------------------------------------------------------------------ */

#define ASSERT_BITS (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | \
                     MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

int PMPI_Win_fence(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_fence";
    GETWIN(win, fn);
    if (assert & ~ASSERT_BITS)
        return werr(w, MPI_ERR_ASSERT, fn);
    if (w->lock_all || w->started || w->posted)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_fence(w, assert), fn);
}

/* group (world ranks) -> window ranks; malloc'ed array in *out */
static int group_ranks(struct xm_win *w, MPI_Group group, int **out, int *n)
{
    struct xm_group *g = xm_group_get(group);
    if (!g)
        return MPI_ERR_GROUP;
    int *r = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1));
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < g->size; i++)
        if ((r[i] = xm_comm_rank_of(w->comm, g->w[i])) < 0) {
            free(r);
            return MPI_ERR_GROUP;
        }
    *out = r;
    *n = g->size;
    return 0;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_post";
    GETWIN(win, fn);
    if (assert & ~ASSERT_BITS)
        return werr(w, MPI_ERR_ASSERT, fn);
    if (w->posted)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    int *r, n;
    int rc = group_ranks(w, group, &r, &n);
    if (!rc) {
        rc = xm_rma_post(w, r, n, assert);
        free(r);
    }
    return werr(w, rc, fn);
}

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_start";
    GETWIN(win, fn);
    if (assert & ~ASSERT_BITS)
        return werr(w, MPI_ERR_ASSERT, fn);
    if (w->started || w->lock_all)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    int *r, n;
    int rc = group_ranks(w, group, &r, &n);
    if (!rc) {
        rc = xm_rma_start(w, r, n, assert);
        free(r);
    }
    return werr(w, rc, fn);
}

int PMPI_Win_complete(MPI_Win win)
{
    static const char fn[] = "MPI_Win_complete";
    GETWIN(win, fn);
    if (!w->started)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_complete(w), fn);
}

int PMPI_Win_wait(MPI_Win win)
{
    static const char fn[] = "MPI_Win_wait";
    GETWIN(win, fn);
    if (!w->posted)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    int flag;
    return werr(w, xm_rma_wait(w, 1, &flag), fn);
}

int PMPI_Win_test(MPI_Win win, int *flag)
{
    static const char fn[] = "MPI_Win_test";
    GETWIN(win, fn);
    if (!flag)
        return werr(w, MPI_ERR_ARG, fn);
    if (!w->posted)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_wait(w, 0, flag), fn);
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock";
    GETWIN(win, fn);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return werr(w, MPI_ERR_LOCKTYPE, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->comm->size)
        return werr(w, MPI_ERR_RANK, fn);
    if (assert & ~MPI_MODE_NOCHECK)
        return werr(w, MPI_ERR_ASSERT, fn);
    if (w->locked[rank] || w->lock_all)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_lock(w, lock_type, rank, assert), fn);
}

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock";
    GETWIN(win, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->comm->size)
        return werr(w, MPI_ERR_RANK, fn);
    if (!w->locked[rank])
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_unlock(w, rank), fn);
}

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock_all";
    GETWIN(win, fn);
    if (assert & ~MPI_MODE_NOCHECK)
        return werr(w, MPI_ERR_ASSERT, fn);
    if (w->lock_all)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    for (int i = 0; i < w->comm->size; i++)
        if (w->locked[i])
            return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_lock_all(w, assert), fn);
}

int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock_all";
    GETWIN(win, fn);
    if (!w->lock_all)
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_unlock_all(w), fn);
}

static int passive_check(struct xm_win *w, int rank)
{
    if (rank == MPI_PROC_NULL)
        return -1;
    if (rank < 0 || rank >= w->comm->size)
        return MPI_ERR_RANK;
    if (!w->lock_all && !w->locked[rank])
        return MPI_ERR_RMA_SYNC;
    return 0;
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush";
    GETWIN(win, fn);
    int rc = passive_check(w, rank);
    if (rc < 0)
        return MPI_SUCCESS;
    return werr(w, rc ? rc : xm_rma_flush(w, rank), fn);
}

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_local";
    GETWIN(win, fn);
    int rc = passive_check(w, rank);
    if (rc < 0)
        return MPI_SUCCESS;
    return werr(w, rc ? rc : xm_rma_flush_local(w, rank), fn);
}

static int any_passive(struct xm_win *w)
{
    if (w->lock_all)
        return 1;
    for (int i = 0; i < w->comm->size; i++)
        if (w->locked[i])
            return 1;
    return 0;
}

int PMPI_Win_flush_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_all";
    GETWIN(win, fn);
    if (!any_passive(w))
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_flush(w, -1), fn);
}

int PMPI_Win_flush_local_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_local_all";
    GETWIN(win, fn);
    if (!any_passive(w))
        return werr(w, MPI_ERR_RMA_SYNC, fn);
    return werr(w, xm_rma_flush_local(w, -1), fn);
}

int PMPI_Win_sync(MPI_Win win)
{
    GETWIN(win, "MPI_Win_sync");
    (void)w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}
