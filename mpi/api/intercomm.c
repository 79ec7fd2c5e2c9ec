/*
 * intercomm.c - intercommunicators: Intercomm_create/merge, Comm_test_inter,
 *               Comm_remote_size/group, and the intercommunicator forms of Comm_dup,
 *               Comm_split, Comm_create and Comm_group (called from api/comm.c).
 *
 * Representation (core/xm.h): size/w of an intercommunicator are the REMOTE group, so
 *   the point-to-point path (api/p2p.c, core/p2p.c) addresses remote ranks and
 *   translates status sources back without knowing about intercommunicators; rank,
 *   local_size and local_w describe my own group.  Collectives: coll/inter.c.
 * Context ids: a new intercommunicator (or the merged intracommunicator) needs an id
 *   free at every process of both groups.  Each group ANDs its free masks (an allreduce
 *   over the local communicator, or, from an existing intercommunicator, a reduction to
 *   the local leader), the leaders swap and AND the two masks, and each leader hands
 *   the result to its group; xm_ctx_take() then claims the lowest id.
 * Intercomm_create: the leaders talk over peer_comm's point-to-point context with the
 *   caller's tag (the standard's reason for the tag argument).
 * Intercomm_merge: the group that passed high = 0 comes first; if both passed the same
 *   value, the group whose leader has the lower world rank comes first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "../core/p2p.h"
#include "../core/proc.h"
#include "intercomm.h"

XM_WEAK(MPI_Intercomm_create)
XM_WEAK(MPI_Intercomm_merge)
XM_WEAK(MPI_Comm_test_inter)
XM_WEAK(MPI_Comm_remote_size)
XM_WEAK(MPI_Comm_remote_group)

#define W XM_CTX_MASK_WORDS
#define LOC(r) ((r) | XM_SCHED_LOCAL)

#define GET(c, comm, fn)                                                                 \
    struct xm_comm *c = xm_comm_get(comm);                                               \
    if (!c)                                                                              \
    return xm_err(NULL, MPI_ERR_COMM, fn)

static int fail(struct xm_comm *c, int rc, const char *fn)
{
    return xm_err(c, rc == -ENOSPC ? MPI_ERR_INTERN : xm_errno_to_class(rc), fn);
}

static int *copy_ints(const int *a, int n)
{
    int *b = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (b && n > 0)
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

/* An intercommunicator over local group lw[0..ln-1] and remote group rw[0..rn-1]
 * (both consumed), context ctx, error handler from parent. */
static struct xm_comm *inter_new(int ln, int *lw, int rn, int *rw, uint32_t ctx,
                                 struct xm_comm *parent)
{
    if (!lw || !rw) {
        free(lw);
        free(rw);
        return NULL;
    }
    struct xm_comm *n = xm_comm_new(rn, rw, ctx, parent);
    if (!n) {
        free(lw);
        return NULL;
    }
    n->inter = 1;
    n->local_size = ln;
    n->local_w = lw;
    n->rank = -1;
    for (int i = 0; i < ln; i++)
        if (lw[i] == xm_g.rank)
            n->rank = i;
    return n;
}

/* ---- helpers on an existing intercommunicator (blocking schedules, coll/inter.c's
 * conventions: every process of both groups runs each of them in the same order) ---- */

/* The local leader swaps (mine, mn) for the remote leader's (theirs, tn) and passes
 * theirs on to its group. */
static int swap_bcast(struct xm_comm *c, const void *mine, int mn, void *theirs, int tn)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    if (c->rank == 0) {
        xm_sched_send(s, mine, mn, MPI_INT, 0);
        xm_sched_recv(s, theirs, tn, MPI_INT, 0);
        xm_sched_wait(s);
        for (int i = 1; i < c->local_size; i++)
            xm_sched_send(s, theirs, tn, MPI_INT, LOC(i));
    } else {
        xm_sched_recv(s, theirs, tn, MPI_INT, LOC(0));
    }
    return xm_sched_start(s, NULL);
}

/* all[i*n .. i*n+n-1] = rank i's mine, for every rank i of my group */
static int local_allgather(struct xm_comm *c, const int *mine, int n, int *all)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    int ln = c->local_size;
    if (c->rank == 0) {
        memcpy(all, mine, (size_t)n * sizeof(int));
        for (int i = 1; i < ln; i++)
            xm_sched_recv(s, all + (size_t)i * n, n, MPI_INT, LOC(i));
        xm_sched_wait(s);
        for (int i = 1; i < ln; i++)
            xm_sched_send(s, all, n * ln, MPI_INT, LOC(i));
    } else {
        xm_sched_send(s, mine, n, MPI_INT, LOC(0));
        xm_sched_recv(s, all, n * ln, MPI_INT, LOC(0));
    }
    return xm_sched_start(s, NULL);
}

/* A context id free at every process of both groups of c. */
static int inter_ctx(struct xm_comm *c, uint32_t *ctx)
{
    uint32_t mask[W], theirs[W];
    xm_ctx_free_mask(mask);
    int ln = c->local_size;
    uint32_t *all = malloc((size_t)ln * W * sizeof(uint32_t));
    if (!all)
        return -ENOMEM;
    int rc = local_allgather(c, (const int *)mask, W, (int *)all);
    for (int i = 1; i < ln && rc == 0; i++)
        for (int k = 0; k < W; k++)
            mask[k] &= all[(size_t)i * W + k];
    free(all);
    if (rc == 0)
        rc = swap_bcast(c, mask, W, theirs, W);
    if (rc < 0)
        return rc;
    for (int k = 0; k < W; k++)
        mask[k] &= theirs[k];
    return xm_ctx_take(mask, ctx);
}

/* ---- MPI entry points -------------------------------------------------------------- */
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    GET(c, comm, "MPI_Comm_test_inter");
    *flag = c->inter;
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    GET(c, comm, "MPI_Comm_remote_size");
    if (!c->inter)
        return xm_err(c, MPI_ERR_COMM, "MPI_Comm_remote_size");
    *size = c->size;
    return MPI_SUCCESS;
}

int xm_intercomm_group(struct xm_comm *c, int remote, MPI_Group *group, const char *fn)
{
    int *w = remote ? copy_ints(c->w, c->size) : copy_ints(c->local_w, c->local_size);
    struct xm_group *g = w ? xm_group_new(remote ? c->size : c->local_size, w) : NULL;
    if (!g)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    *group = g->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    GET(c, comm, "MPI_Comm_remote_group");
    if (!c->inter)
        return xm_err(c, MPI_ERR_COMM, "MPI_Comm_remote_group");
    return xm_intercomm_group(c, 1, group, "MPI_Comm_remote_group");
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    GET(l, local_comm, fn);
    if (l->inter)
        return xm_err(l, MPI_ERR_COMM, fn);
    if (local_leader < 0 || local_leader >= l->size)
        return xm_err(l, MPI_ERR_RANK, fn);
    if (tag < 0)
        return xm_err(l, MPI_ERR_TAG, fn);
    struct xm_comm *p = NULL;
    if (l->rank == local_leader) { /* peer_comm is significant at the leader only */
        p = xm_comm_get(peer_comm);
        if (!p || p->inter)
            return xm_err(l, MPI_ERR_COMM, fn);
        if (remote_leader < 0 || remote_leader >= p->size)
            return xm_err(l, MPI_ERR_RANK, fn);
    }
    int rc = xm_intercomm_build(l, local_leader,
                                l->rank == local_leader ? xm_comm_world_rank(p, remote_leader)
                                                        : -1,
                                tag, p ? p->ctx : 0, 0, newintercomm);
    return rc < 0 ? fail(l, rc, fn) : MPI_SUCCESS;
}

/* The body of Intercomm_create, shared with the dynamic-process code (api/dynproc.c):
 * the leaders talk to each other (world rank `peer`) on context pctx with `tag`; a
 * leader that comes with lrc < 0 skips the exchange and its whole group returns lrc.
 * 0 or -errno (the leader's errno at every process of its group). */
int xm_intercomm_build(struct xm_comm *l, int local_leader, int peer, int tag,
                       uint32_t pctx, int lrc, MPI_Comm *newintercomm)
{
    return xm_intercomm_build_ids(l, local_leader, peer, tag, pctx, lrc, 0, NULL,
                                  newintercomm);
}

int xm_intercomm_build_ids(struct xm_comm *l, int local_leader, int peer, int tag,
                           uint32_t pctx, int lrc, int rn, const int *rids,
                           MPI_Comm *newintercomm)
{
    /* hdr: free mask of my group, then my group's size */
    int hdr[W + 1], rhdr[W + 1];
    xm_ctx_free_mask((uint32_t *)hdr);
    int rc = xm_icoll_allreduce(MPI_IN_PLACE, hdr, W, MPI_UINT32_T, MPI_BAND, l, NULL);
    hdr[W] = l->size;
    int *lw = malloc((size_t)l->size * sizeof(int)), *rw = NULL;
    if (!lw)
        rc = rc < 0 ? rc : -ENOMEM;
    for (int i = 0; lw && i < l->size; i++)
        lw[i] = xm_comm_world_rank(l, i);
    rhdr[W] = -1;
    if (l->rank == local_leader && rc == 0 && lrc < 0)
        rc = lrc;
    if (l->rank == local_leader && rc == 0) {
        rc = xm_sendrecv(hdr, W + 1, MPI_INT, peer, rhdr, W + 1, MPI_INT, peer, tag,
                         pctx);
        if (rc == 0 && (rhdr[W] <= 0 || rhdr[W] > (rids ? rn : xm_g.size)))
            rc = -EPROTO; /* the other side is not a matching Intercomm_create */
        if (rc == 0 && !(rw = malloc((size_t)rhdr[W] * sizeof(int))))
            rc = -ENOMEM;
        if (rc == 0 && rids) /* ids of the remote group known here already */
            memcpy(rw, rids, (size_t)rn * sizeof(int));
        else if (rc == 0)
            rc = xm_sendrecv(lw, l->size, MPI_INT, peer, rw, rhdr[W], MPI_INT, peer, tag,
                             pctx);
        for (int i = 0; !rids && rc == 0 && i < rhdr[W]; i++) /* world ranks only */
            if (rw[i] < 0 || rw[i] >= xm_g.size)
                rc = -EPROTO;
        if (rc < 0)
            rhdr[W] = rc > -4096 ? rc : -EIO; /* tell the group why */
        else
            for (int k = 0; k < W; k++)
                rhdr[k] &= hdr[k];
    }
    /* everyone in my group, even after a failure at the leader, takes part in both
     * broadcasts so that no one waits for ever; a negative size carries the leader's
     * errno */
    if (xm_icoll_bcast(rhdr, W + 1, MPI_INT, local_leader, l, NULL) < 0)
        rhdr[W] = -EIO;
    if (rhdr[W] > 0 && l->rank != local_leader &&
        !(rw = malloc((size_t)rhdr[W] * sizeof(int))))
        rc = -ENOMEM;
    if (rhdr[W] > 0 && rids) {
        if (rhdr[W] != rn)
            rc = rc < 0 ? rc : -EPROTO;
        else if (rw && l->rank != local_leader)
            memcpy(rw, rids, (size_t)rn * sizeof(int));
    } else if (rhdr[W] > 0) {
        int brc = xm_icoll_bcast(rw ? rw : lw, rw ? rhdr[W] : 0, MPI_INT, local_leader, l,
                                 NULL);
        if (brc < 0 && rc == 0)
            rc = brc;
    } else if (rc == 0) {
        rc = rhdr[W] < 0 ? rhdr[W] : -EIO;
    }
    uint32_t ctx = 0;
    if (rc == 0)
        rc = xm_ctx_take((uint32_t *)rhdr, &ctx);
    if (rc < 0) {
        free(lw);
        free(rw);
        return rc;
    }
    struct xm_comm *n = inter_new(l->size, lw, rhdr[W], rw, ctx, l);
    if (!n) {
        xm_ctx_release(ctx);
        return -ENOMEM;
    }
    *newintercomm = n->handle;
    return 0;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    GET(c, intercomm, fn);
    if (!c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    int mine = high != 0, theirs = 0;
    int rc = swap_bcast(c, &mine, 1, &theirs, 1);
    uint32_t ctx = 0;
    if (rc == 0)
        rc = inter_ctx(c, &ctx);
    if (rc < 0)
        return fail(c, rc, fn);
    /* equal flags: the group whose first process is lower in (job id, rank) goes first,
     * which both groups see alike also when they are different jobs */
    int first = mine != theirs ? !mine : xm_proc_cmp(c->local_w[0], c->w[0]) < 0;
    int ln = c->local_size, rn = c->size;
    int *w = malloc((size_t)(ln + rn) * sizeof(int));
    if (w) {
        memcpy(w + (first ? 0 : rn), c->local_w, (size_t)ln * sizeof(int));
        memcpy(w + (first ? ln : 0), c->w, (size_t)rn * sizeof(int));
    }
    struct xm_comm *n = w ? xm_comm_new(ln + rn, w, ctx, c) : NULL;
    if (!n) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    *newintracomm = n->handle;
    return MPI_SUCCESS;
}

int xm_intercomm_dup(struct xm_comm *c, MPI_Comm *newcomm, const char *fn)
{
    uint32_t ctx;
    int rc = inter_ctx(c, &ctx);
    if (rc < 0)
        return fail(c, rc, fn);
    struct xm_comm *n = inter_new(c->local_size, copy_ints(c->local_w, c->local_size),
                                  c->size, copy_ints(c->w, c->size), ctx, c);
    if (!n) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    rc = xm_attr_copy_all(c, n);
    if (rc != MPI_SUCCESS) {
        xm_attr_delete_all(n);
        xm_comm_release(n);
        return xm_err(c, rc, fn);
    }
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

/* New intercommunicator between my group's members lsel[0..ln-1] and the remote
 * group's rsel[0..rn-1] (indices into local_w / w), or MPI_COMM_NULL when I am not
 * selected or the other side is empty.  Collective over both groups (the id). */
static int make_sub(struct xm_comm *c, const int *lsel, int ln, int in, const int *rsel,
                    int rn, MPI_Comm *newcomm, const char *fn)
{
    uint32_t ctx;
    int rc = inter_ctx(c, &ctx);
    if (rc < 0)
        return fail(c, rc, fn);
    *newcomm = MPI_COMM_NULL;
    if (!in || !ln || !rn) {
        xm_ctx_release(ctx);
        return MPI_SUCCESS;
    }
    int *lw = malloc((size_t)ln * sizeof(int)), *rw = malloc((size_t)rn * sizeof(int));
    for (int i = 0; lw && i < ln; i++)
        lw[i] = c->local_w[lsel[i]];
    for (int i = 0; rw && i < rn; i++)
        rw[i] = c->w[rsel[i]];
    struct xm_comm *n = inter_new(ln, lw, rn, rw, ctx, c);
    if (!n) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

struct ck {
    int key, rank;
};

static int cmp_ck(const void *a, const void *b)
{
    const struct ck *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* indices of the ranks of color `color` in ck pairs all[2i] = color, all[2i+1] = key,
 * ordered by key then rank; returns how many */
static int select_color(const int *all, int n, int color, int *sel, struct ck *tmp)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (all[2 * i] == color)
            tmp[k++] = (struct ck){all[2 * i + 1], i};
    qsort(tmp, (size_t)k, sizeof(*tmp), cmp_ck);
    for (int i = 0; i < k; i++)
        sel[i] = tmp[i].rank;
    return k;
}

int xm_intercomm_split(struct xm_comm *c, int color, int key, MPI_Comm *newcomm,
                       const char *fn)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return xm_err(c, MPI_ERR_ARG, fn);
    int ln = c->local_size, rn = c->size, mine[2] = {color, key};
    int *la = malloc(2 * (size_t)ln * sizeof(int)),
        *ra = malloc(2 * (size_t)rn * sizeof(int));
    int *lsel = calloc((size_t)ln + 1, sizeof(int)),
        *rsel = calloc((size_t)rn + 1, sizeof(int));
    struct ck *tmp = malloc((size_t)(ln > rn ? ln : rn) * sizeof(*tmp));
    int rc = la && ra && lsel && rsel && tmp ? 0 : -ENOMEM;
    /* every process runs the same steps even without memory, so that the schedules'
     * sequence numbers stay in step; the failure is reported after */
    int dummy[2];
    int r2 = local_allgather(c, mine, 2, la ? la : dummy);
    if (!rc)
        rc = r2;
    r2 =
        swap_bcast(c, la ? la : dummy, la ? 2 * ln : 0, ra ? ra : dummy, ra ? 2 * rn : 0);
    if (!rc)
        rc = r2;
    int nl = 0, nr = 0;
    if (!rc && color != MPI_UNDEFINED) {
        nl = select_color(la, ln, color, lsel, tmp);
        nr = select_color(ra, rn, color, rsel, tmp);
    }
    /* a local failure still takes part in the id agreement (as a non-member) */
    r2 = make_sub(c, lsel, nl, !rc && color != MPI_UNDEFINED, rsel, nr, newcomm, fn);
    rc = rc ? fail(c, rc, fn) : r2;
    free(la);
    free(ra);
    free(lsel);
    free(rsel);
    free(tmp);
    return rc;
}

/* Comm_create on an intercommunicator: g is a subgroup of my local group (the same at
 * every process of my group); the leaders swap their groups' member lists. */
int xm_intercomm_create_sub(struct xm_comm *c, struct xm_group *g, MPI_Comm *newcomm,
                            const char *fn)
{
    int ln = c->local_size, rn = c->size;
    int *lsel = calloc((size_t)ln + 1, sizeof(int));
    int *rsel = calloc((size_t)rn + 1, sizeof(int));
    int *rlist = malloc((size_t)(rn + 1) * sizeof(int));
    int nl = 0, nr = 0, rc = lsel && rsel && rlist ? 0 : -ENOMEM;
    for (int i = 0; !rc && i < g->size; i++) { /* group ranks -> local indices */
        int k = 0;
        while (k < ln && c->local_w[k] != g->w[i])
            k++;
        if (k == ln) {
            rc = -EINVAL; /* not a subgroup of my group */
            break;
        }
        lsel[nl++] = k;
    }
    int gsize = rc ? 0 : g->size, rsize = 0;
    int r2 = swap_bcast(c, &gsize, 1, &rsize, 1);
    if (!rc)
        rc = r2;
    if (rsize < 0 || rsize > rn)
        rsize = 0;
    int dummy = 0;
    r2 = swap_bcast(c, gsize ? g->w : &dummy, gsize, rlist ? rlist : &dummy,
                    rlist ? rsize : 0);
    if (!rc)
        rc = r2;
    for (int i = 0; !rc && i < rsize; i++) {
        int k = 0;
        while (k < rn && c->w[k] != rlist[i])
            k++;
        if (k == rn) {
            rc = -EPROTO;
            break;
        }
        rsel[nr++] = k;
    }
    r2 = make_sub(c, lsel, rc ? 0 : nl, !rc && g->rank != MPI_UNDEFINED, rsel,
                  rc ? 0 : nr, newcomm, fn);
    rc = rc ? xm_err(c, rc == -EINVAL ? MPI_ERR_GROUP : xm_errno_to_class(rc), fn) : r2;
    free(lsel);
    free(rsel);
    free(rlist);
    return rc;
}
