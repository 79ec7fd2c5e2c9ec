/*
 * comm.c - context ids, communicator construction/destruction, the group table
 *          (contract in comm.h).
 *
 * Context ids: id k <-> ctx 2k (ctx|1 is the collective context).  Ids 0 and 1 are
 *   COMM_WORLD and COMM_SELF.  Each process keeps a bitmap of the ids it uses; a new
 *   communicator takes the lowest id free at every rank of the parent (one allreduce of
 *   the free mask with BAND).  Disjoint communicators from one split may share an id:
 *   they never exchange messages.
 * Notes: XM_NCTX ids (2048) per process; running out is MPI_ERR_INTERN (-ENOSPC).
 *   The tables are process state, like the other handle tables (one MPI library state
 *   per process).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "comm.h"
#include "mt.h"
#include "xsec.h"

#define XM_NCTX_WORDS 64
/* ids 0 (world), 1 (self), 2 (bootstrap of Comm_create_group, see api/comm.c),
 * 3 (XM_SESS_CTX: Comm_create_from_group's agreement, core/sessboot.c);
 * the last id (XM_DYN_CTX: accept/connect/join, api/dynproc.c) */
static uint32_t ctx_used[XM_NCTX_WORDS] = {15u, [XM_NCTX_WORDS - 1] = 1u << 31};

int xm_ctx_alloc(struct xm_comm *parent, uint32_t *ctx)
{
    /* not xm_mt.on: a rank of a job where another rank runs MULTIPLE must take ids
     * the same way as that rank, whatever its own thread level */
    if (__builtin_expect(xm_g.ctx_rounds, 0))
        return xm_ctx_agree(parent, ctx); /* core/idup.c */
    uint32_t mask[XM_NCTX_WORDS];
    xm_ctx_offer(mask);
    int rc = xm_icoll_allreduce(MPI_IN_PLACE, mask, XM_NCTX_WORDS, MPI_UINT32_T, MPI_BAND,
                                parent, NULL);
    if (rc < 0)
        return rc;
    return xm_ctx_take(mask, ctx);
}

/* ---- nonblocking agreements (MPI_Comm_idup: core/idup.c) ---- */
_Static_assert(XM_NCTX_WORDS == XM_CTX_MASK_WORDS, "comm.h mask size");
uint32_t xm_ctx_reserved[XM_NCTX_WORDS];

void xm_ctx_offer(uint32_t *mask)
{
    for (int i = 0; i < XM_NCTX_WORDS; i++)
        mask[i] = ~ctx_used[i] & ~xm_ctx_reserved[i];
}

void xm_ctx_release(uint32_t ctx)
{
    uint32_t id = ctx / 2;
    if (id > 1 && id < XM_NCTX_WORDS * 32)
        ctx_used[id / 32] &= ~(1u << (id % 32));
}

struct inv { /* world rank -> comm rank, sorted pairs for bsearch */
    int n;
    int (*pair)[2];
};

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

int xm_comm_rank_of(struct xm_comm *c, int wrank)
{
    if (!c->w)
        return wrank >= 0 && wrank < c->size ? wrank : -1;
    if (c->size <= 8) {
        for (int i = 0; i < c->size; i++)
            if (c->w[i] == wrank)
                return i;
        return -1;
    }
    struct inv *v = c->coll_priv; /* coll_priv is this file's: the inverse map */
    if (!v) {
        v = malloc(sizeof(*v));
        if (!v)
            goto linear;
        v->pair = malloc((size_t)c->size * sizeof(*v->pair));
        if (!v->pair) {
            free(v);
            goto linear;
        }
        v->n = c->size;
        for (int i = 0; i < c->size; i++) {
            v->pair[i][0] = c->w[i];
            v->pair[i][1] = i;
        }
        qsort(v->pair, (size_t)v->n, sizeof(*v->pair), cmp_pair);
        c->coll_priv = v;
    }
    int key[2] = {wrank, 0};
    int(*hit)[2] = bsearch(key, v->pair, (size_t)v->n, sizeof(*v->pair), cmp_pair);
    return hit ? (*hit)[1] : -1;
linear:
    for (int i = 0; i < c->size; i++)
        if (c->w[i] == wrank)
            return i;
    return -1;
}

struct xm_comm *xm_comm_new(int size, int *w, uint32_t ctx, struct xm_comm *parent)
{
    struct xm_comm *c = calloc(1, sizeof(*c));
    if (!c) {
        free(w);
        errno = ENOMEM;
        return NULL;
    }
    c->refs = 1;
    c->ctx = ctx;
    c->size = size;
    c->w = w;
    c->rank = -1;
    for (int i = 0; i < size; i++) {
        if (w[i] == xm_g.rank)
            c->rank = i;
        if (w[i] >= xm_g.size)
            c->xjob = 1;
    }
    c->errh = parent ? parent->errh : MPI_ERRORS_ARE_FATAL;
    if (xm_comm_register(c) < 0) {
        free(w);
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    if (xm_xsec_add(c) < 0) { /* other jobs' packets on ctx are checked against it */
        xm_comm_unregister(c);
        free(w);
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    return c;
}

void xm_comm_release(struct xm_comm *c)
{
    if (c == xm_g.world || c == xm_g.self || !(c->handle & XM_H_DYN))
        return; /* predefined (or a temporary on the stack): never freed here */
    xm_ctx_release(c->ctx);
    xm_xsec_del(c);
    xm_comm_unregister(c);
    struct inv *v = c->coll_priv;
    if (v)
        free(v->pair);
    free(v);
    free(c->w);
    free(c->local_w); /* intercommunicator's local group */
    free(c->coll_tmp[0]);
    free(c->coll_tmp[1]);
    xm_topo_free(c->topo);
    free(c);
}

/* ---- groups ---------------------------------------------------------------------- */
static struct xm_group **groups;
static int ngroups;
static struct xm_group empty_group = {
    .handle = MPI_GROUP_EMPTY, .refs = 1, .rank = MPI_UNDEFINED};

void xm_comm_unref(struct xm_comm *c)
{
    if (--c->refs == 0)
        xm_comm_release(c);
}

struct xm_group *xm_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &empty_group;
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_GROUP || !(h & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(h);
    return i < ngroups ? groups[i] : NULL;
}

struct xm_group *xm_group_new(int size, int *w)
{
    struct xm_group *g = calloc(1, sizeof(*g));
    int i;
    if (!g)
        goto fail;
    for (i = 0; i < ngroups; i++)
        if (!groups[i])
            break;
    if (i == ngroups) {
        struct xm_group **n = realloc(groups, (size_t)(ngroups + 16) * sizeof(*n));
        if (!n)
            goto fail;
        groups = n;
        memset(groups + ngroups, 0, 16 * sizeof(*n));
        ngroups += 16;
    }
    groups[i] = g;
    g->handle = XM_H_MAKE(XM_K_GROUP, 1, i);
    g->refs = 1;
    g->size = size;
    g->w = w;
    g->rank = MPI_UNDEFINED;
    for (int k = 0; k < size; k++)
        if (w[k] == xm_g.rank)
            g->rank = k;
    return g;
fail:
    free(g);
    free(w);
    errno = ENOMEM;
    return NULL;
}

void xm_group_unref(struct xm_group *g)
{
    if (!g || g == &empty_group || --g->refs > 0)
        return;
    groups[XM_H_INDEX(g->handle)] = NULL;
    free(g->w);
    free(g);
}

/* ---- context ids agreed between two groups (intercommunicators) ------------
 * xm_ctx_free_mask() gives this process's free-id mask; the groups AND their masks
 * together (api/intercomm.c) and xm_ctx_take() claims the lowest id free in both. */
void xm_ctx_free_mask(uint32_t *mask)
{
    xm_ctx_offer(mask); /* minus the ids an idup round offers meanwhile (core/idup.c) */
}

int xm_ctx_take(const uint32_t *mask, uint32_t *ctx)
{
    for (int i = 0; i < XM_NCTX_WORDS; i++)
        if (mask[i]) {
            int b = __builtin_ctz(mask[i]);
            ctx_used[i] |= 1u << b;
            *ctx = (uint32_t)(i * 32 + b) * 2u;
            return 0;
        }
    return -ENOSPC;
}

/* ---- MPI-4 sessions (core/sessboot.c) ---- */
int xm_ctx_claim(uint32_t ctx)
{
    uint32_t id = ctx / 2, bit = 1u << (id % 32);
    if ((ctx & 1) || id < 4 || id >= XM_NCTX_WORDS * 32)
        return -EINVAL;
    if ((ctx_used[id / 32] | xm_ctx_reserved[id / 32]) & bit)
        return -EBUSY;
    ctx_used[id / 32] |= bit;
    return 0;
}
