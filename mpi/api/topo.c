/*
 * topo.c - process topologies: Cartesian (Cart_*, Dims_create), graph (Graph_*),
 *          distributed graph (Dist_graph_*), Topo_test, and the neighbor collective
 *          entry points (MPI_Neighbor_* / MPI_Ineighbor_*; algorithm in
 *          coll/neighbor.c).
 * One piece (about 950 lines): three topology kinds share the neighbour-list store and
 *   the constructors' context-id allocation, and the neighbor collective entry points
 *   read those lists; each function is short.
 *
 * Contract: a topology is a struct xm_topo hung on the communicator (core/xm.h); it
 *   stores each rank's in/out neighbour lists, so the neighbor collectives never
 *   recompute them.  Constructors are collective over the parent and allocate the
 *   context id with xm_ctx_alloc() also on ranks that get MPI_COMM_NULL.  reorder is
 *   accepted and ignored (rank i of the new communicator is rank i of the old), so
 *   Cart_map/Graph_map are the identity.  Comm_dup copies the topology (api/comm.c)
 *   with xm_topo_dup() (core/topo.c, which owns the object's storage).
 *   Topologies on intercommunicators are MPI_ERR_COMM.
 * Errors: bad dimensions MPI_ERR_DIMS, bad ranks MPI_ERR_RANK, a query of the wrong
 *   topology kind MPI_ERR_TOPOLOGY, other bad arguments MPI_ERR_ARG.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "../core/comm.h"
#include "../dt/dtype.h"
#include "coll_api.h"

XM_WEAK(MPI_Topo_test)
XM_WEAK(MPI_Dims_create)
XM_WEAK(MPI_Cart_create)
XM_WEAK(MPI_Cartdim_get)
XM_WEAK(MPI_Cart_get)
XM_WEAK(MPI_Cart_rank)
XM_WEAK(MPI_Cart_coords)
XM_WEAK(MPI_Cart_shift)
XM_WEAK(MPI_Cart_sub)
XM_WEAK(MPI_Cart_map)
XM_WEAK(MPI_Graph_create)
XM_WEAK(MPI_Graphdims_get)
XM_WEAK(MPI_Graph_get)
XM_WEAK(MPI_Graph_neighbors_count)
XM_WEAK(MPI_Graph_neighbors)
XM_WEAK(MPI_Graph_map)
XM_WEAK(MPI_Dist_graph_create_adjacent)
XM_WEAK(MPI_Dist_graph_create)
XM_WEAK(MPI_Dist_graph_neighbors_count)
XM_WEAK(MPI_Dist_graph_neighbors)
XM_WEAK(MPI_Neighbor_allgather)
XM_WEAK(MPI_Neighbor_allgatherv)
XM_WEAK(MPI_Neighbor_alltoall)
XM_WEAK(MPI_Neighbor_alltoallv)
XM_WEAK(MPI_Neighbor_alltoallw)
XM_WEAK(MPI_Ineighbor_allgather)
XM_WEAK(MPI_Ineighbor_allgatherv)
XM_WEAK(MPI_Ineighbor_alltoall)
XM_WEAK(MPI_Ineighbor_alltoallv)
XM_WEAK(MPI_Ineighbor_alltoallw)

#define GET(c, comm, fn)                                                                 \
    struct xm_comm *c = xm_comm_get(comm);                                               \
    if (!c)                                                                              \
    return xm_err(NULL, MPI_ERR_COMM, fn)

/* topology of kind `kind` (0: any) or NULL after reporting the error */
static struct xm_topo *topo_of(struct xm_comm *c, int kind, const char *fn)
{
    if (!c->topo || (kind && c->topo->kind != kind)) {
        xm_err(c, MPI_ERR_TOPOLOGY, fn);
        return NULL;
    }
    return c->topo;
}
#define TOPO(t, c, kind, fn)                                                             \
    struct xm_topo *t = topo_of(c, kind, fn);                                            \
    if (!t)                                                                              \
    return MPI_ERR_TOPOLOGY

/* New communicator over ranks map[0..n-1] of c (comm ranks), carrying topology t
 * (consumed).  Collective over c: every rank calls it, members or not. */
static int make_comm(struct xm_comm *c, const int *map, int n, int member,
                     struct xm_topo *t, MPI_Comm *newcomm, const char *fn)
{
    uint32_t ctx;
    *newcomm = MPI_COMM_NULL;
    int rc = xm_ctx_alloc(c, &ctx);
    if (rc < 0) {
        xm_topo_free(t);
        return xm_err(c, rc == -ENOSPC ? MPI_ERR_INTERN : xm_errno_to_class(rc), fn);
    }
    if (!member) {
        xm_ctx_release(ctx);
        xm_topo_free(t);
        return MPI_SUCCESS;
    }
    int *w = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (w)
        for (int i = 0; i < n; i++)
            w[i] = xm_comm_world_rank(c, map ? map[i] : i);
    struct xm_comm *nc = w ? xm_comm_new(n, w, ctx, c) : NULL;
    if (!nc) {
        xm_ctx_release(ctx);
        xm_topo_free(t);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    nc->topo = t;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* ---- Cartesian --------------------------------------------------------------------- */
static void cart_coords(const struct xm_topo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

/* rank of coords (wrapped in periodic dimensions) or MPI_PROC_NULL if off the grid */
static int cart_rank(const struct xm_topo *t, const int *coords)
{
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int x = coords[d], n = t->dims[d];
        if (x < 0 || x >= n) {
            if (!t->periods[d])
                return MPI_PROC_NULL;
            x %= n;
            if (x < 0)
                x += n;
        }
        r = r * n + x;
    }
    return r;
}

static void cart_shift(const struct xm_topo *t, int me, int d, int disp, int *src,
                       int *dst)
{
    int co[t->ndims > 0 ? t->ndims : 1];
    cart_coords(t, me, co);
    int x = co[d];
    co[d] = x + disp;
    *dst = cart_rank(t, co);
    co[d] = x - disp;
    *src = cart_rank(t, co);
}

/* Cartesian topology for my rank `me` (-1: not a member; no neighbour lists) */
static struct xm_topo *cart_new(int ndims, const int *dims, const int *periods, int me)
{
    struct xm_topo *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = xm_ints_dup(dims, ndims);
    t->periods = malloc((size_t)(ndims > 0 ? ndims : 1) * sizeof(int));
    t->in = malloc((size_t)(ndims > 0 ? 2 * ndims : 1) * sizeof(int));
    t->out = malloc((size_t)(ndims > 0 ? 2 * ndims : 1) * sizeof(int));
    if (!t->dims || !t->periods || !t->in || !t->out) {
        xm_topo_free(t);
        return NULL;
    }
    for (int d = 0; d < ndims; d++)
        t->periods[d] = periods[d] != 0;
    t->indeg = t->outdeg = 2 * ndims;
    for (int d = 0; d < ndims && me >= 0; d++) {
        cart_shift(t, me, d, 1, &t->in[2 * d], &t->in[2 * d + 1]);
        t->out[2 * d] = t->in[2 * d];
        t->out[2 * d + 1] = t->in[2 * d + 1];
    }
    return t;
}

/* 0, or the MPI error class for bad dimensions; *n = number of grid points */
static int check_dims(int ndims, const int *dims, long *n)
{
    *n = 1;
    if (ndims < 0)
        return MPI_ERR_DIMS;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return MPI_ERR_DIMS;
        *n *= dims[d];
        if (*n > 0x7fffffffL)
            return MPI_ERR_DIMS;
    }
    return 0;
}

int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    (void)reorder;
    const char *fn = "MPI_Cart_create";
    GET(c, comm, fn);
    if (c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    long n;
    int cls = check_dims(ndims, dims, &n);
    if (!cls && n > c->size)
        cls = MPI_ERR_DIMS;
    if (cls)
        return xm_err(c, cls, fn);
    int member = c->rank < n;
    struct xm_topo *t = cart_new(ndims, dims, periods, member ? c->rank : -1);
    if (!t)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    return make_comm(c, NULL, (int)n, member, t, comm_cart, fn);
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                  int *newrank)
{
    (void)periods;
    GET(c, comm, "MPI_Cart_map");
    long n;
    int cls = check_dims(ndims, dims, &n);
    if (!cls && n > c->size)
        cls = MPI_ERR_DIMS;
    if (cls)
        return xm_err(c, cls, "MPI_Cart_map");
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    GET(c, comm, "MPI_Cartdim_get");
    TOPO(t, c, MPI_CART, "MPI_Cartdim_get");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    GET(c, comm, "MPI_Cart_get");
    TOPO(t, c, MPI_CART, "MPI_Cart_get");
    if (maxdims < t->ndims)
        return xm_err(c, MPI_ERR_ARG, "MPI_Cart_get");
    int co[t->ndims > 0 ? t->ndims : 1];
    cart_coords(t, c->rank, co);
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = co[d];
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    GET(c, comm, "MPI_Cart_rank");
    TOPO(t, c, MPI_CART, "MPI_Cart_rank");
    for (int d = 0; d < t->ndims; d++)
        if (!t->periods[d] && (coords[d] < 0 || coords[d] >= t->dims[d]))
            return xm_err(c, MPI_ERR_ARG, "MPI_Cart_rank");
    *rank = cart_rank(t, coords);
    return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    GET(c, comm, "MPI_Cart_coords");
    TOPO(t, c, MPI_CART, "MPI_Cart_coords");
    if (rank < 0 || rank >= c->size)
        return xm_err(c, MPI_ERR_RANK, "MPI_Cart_coords");
    if (maxdims < t->ndims)
        return xm_err(c, MPI_ERR_ARG, "MPI_Cart_coords");
    cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
                    int *rank_dest)
{
    GET(c, comm, "MPI_Cart_shift");
    TOPO(t, c, MPI_CART, "MPI_Cart_shift");
    if (direction < 0 || direction >= t->ndims)
        return xm_err(c, MPI_ERR_ARG, "MPI_Cart_shift");
    cart_shift(t, c->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

/* Members: every rank whose coordinates equal mine in the dimensions dropped, in rank
 * order (row-major numbering keeps the sub-grid's own row-major order). */
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    const char *fn = "MPI_Cart_sub";
    GET(c, comm, fn);
    TOPO(t, c, MPI_CART, fn);
    int nd = t->ndims, k = 0, n = 0;
    int mine[nd > 0 ? nd : 1], co[nd > 0 ? nd : 1], dims[nd > 0 ? nd : 1],
        per[nd > 0 ? nd : 1];
    for (int d = 0; d < nd; d++)
        if (remain_dims[d]) {
            dims[k] = t->dims[d];
            per[k++] = t->periods[d];
        }
    if (k == 0) {
        /* MPI-3.1 7.5.7: keeping no dimension gives a zero-dimensional Cartesian
         * topology, i.e. what Cart_create(comm, 0, ...) gives: a grid of one process
         * (rank 0 of comm), MPI_COMM_NULL at the others (as MPICH does) */
        int zero = 0;
        struct xm_topo *sub = cart_new(0, dims, per, c->rank == 0 ? 0 : -1);
        if (!sub)
            return xm_err(c, MPI_ERR_NO_MEM, fn);
        return make_comm(c, &zero, 1, c->rank == 0, sub, newcomm, fn);
    }
    cart_coords(t, c->rank, mine);
    int *map = malloc((size_t)c->size * sizeof(int)), me = -1;
    if (!map)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    for (int r = 0; r < c->size; r++) {
        cart_coords(t, r, co);
        int same = 1;
        for (int d = 0; d < nd; d++)
            if (!remain_dims[d] && co[d] != mine[d])
                same = 0;
        if (same) {
            if (r == c->rank)
                me = n;
            map[n++] = r;
        }
    }
    struct xm_topo *sub = cart_new(k, dims, per, me);
    if (!sub) {
        free(map);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    int rc = make_comm(c, map, n, 1, sub, newcomm, fn);
    free(map);
    return rc;
}

/* Most balanced factorisation (the standard: "as close to each other as possible"): of
 * all non-increasing sequences of nfree divisors whose product is m, the one with the
 * smallest spread (largest - smallest), then the larger entries counted from the
 * smallest one (MPICH makes the same choice: 5040 in 3-D is 21 x 16 x 15).  Depth first
 * over the divisors of m: the next entry divides what is left, is at most the previous
 * one and at least the k-th root of what is left (it is the largest of the k still to
 * choose); a branch stops once its spread cannot beat the best so far. */
struct dsearch {
    const int *div;
    int ndiv;
    int *cur, *best;
    int n, have, bspread;
};

static long ipow(long b, int k, long cap)
{
    long r = 1;
    while (k-- > 0 && r <= cap)
        r *= b;
    return r;
}

static void dsearch(struct dsearch *s, int depth, int m, int mx)
{
    int k = s->n - depth;
    if (k == 1) {
        if (m > mx)
            return;
        s->cur[depth] = m;
        int spread = s->cur[0] - m, better = !s->have || spread < s->bspread;
        for (int i = s->n - 1; !better && spread == s->bspread && i >= 0; i--)
            if (s->cur[i] != s->best[i]) { /* tie: larger entries from the end win */
                better = s->cur[i] > s->best[i];
                break;
            }
        if (better) {
            s->have = 1;
            s->bspread = spread;
            memcpy(s->best, s->cur, (size_t)s->n * sizeof(int));
        }
        return;
    }
    for (int i = 0; i < s->ndiv; i++) {
        int d = s->div[i];
        if (d > mx || d > m)
            break;
        if (m % d || ipow(d, k, m) < m)
            continue;
        if (depth && s->have && s->cur[0] - d > s->bspread)
            continue; /* the last entry is at most d: spread at least cur[0] - d */
        s->cur[depth] = d;
        dsearch(s, depth + 1, m / d, d);
    }
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    const char *fn = "MPI_Dims_create";
    if (nnodes <= 0 || ndims < 0)
        return xm_err(NULL, nnodes <= 0 ? MPI_ERR_ARG : MPI_ERR_DIMS, fn);
    int m = nnodes, nfree = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return xm_err(NULL, MPI_ERR_DIMS, fn);
        if (dims[d] > 0) {
            if (m % dims[d])
                return xm_err(NULL, MPI_ERR_DIMS, fn);
            m /= dims[d];
        } else
            nfree++;
    }
    if (!nfree)
        return m == 1 ? MPI_SUCCESS : xm_err(NULL, MPI_ERR_DIMS, fn);
    int ndiv = 0, cap = 64, *div = malloc((size_t)cap * sizeof(int));
    for (long d = 1; div && d * d <= m; d++) /* divisors up to sqrt(m), ascending */
        if (m % d == 0) {
            if (2 * (ndiv + 1) > cap) {
                int *n = realloc(div, (size_t)(cap *= 2) * sizeof(int));
                if (!n) {
                    free(div);
                    div = NULL;
                    break;
                }
                div = n;
            }
            div[ndiv++] = (int)d;
        }
    for (int i = ndiv - 1; div && i >= 0; i--) /* then their cofactors, ascending */
        if ((long)div[i] * div[i] != m)
            div[ndiv++] = m / div[i];
    int *cur = malloc(2 * (size_t)nfree * sizeof(int));
    if (!div || !cur) {
        free(div);
        free(cur);
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    }
    struct dsearch s = {
        .div = div, .ndiv = ndiv, .cur = cur, .best = cur + nfree, .n = nfree};
    dsearch(&s, 0, m, m);
    for (int d = 0, k = 0; d < ndims; d++)
        if (!dims[d])
            dims[d] = s.best[k++];
    free(div);
    free(cur);
    return MPI_SUCCESS;
}

/* ---- graph ------------------------------------------------------------------------- */
int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    (void)reorder;
    const char *fn = "MPI_Graph_create";
    GET(c, comm, fn);
    if (c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    if (nnodes < 0 || nnodes > c->size)
        return xm_err(c, MPI_ERR_ARG, fn);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < 0 || (i && index[i] < index[i - 1]))
            return xm_err(c, MPI_ERR_ARG, fn);
    int ne = nnodes ? index[nnodes - 1] : 0;
    for (int i = 0; i < ne; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return xm_err(c, MPI_ERR_ARG, fn);
    int member = c->rank < nnodes;
    struct xm_topo *t = calloc(1, sizeof(*t));
    if (t) {
        t->kind = MPI_GRAPH;
        t->nnodes = nnodes;
        t->index = xm_ints_dup(index, nnodes);
        t->edges = xm_ints_dup(edges, ne);
        if (member) {
            int lo = c->rank ? index[c->rank - 1] : 0, hi = index[c->rank];
            t->indeg = t->outdeg = hi - lo;
            t->in = xm_ints_dup(edges + lo, hi - lo);
            t->out = xm_ints_dup(edges + lo, hi - lo);
        }
        if (!t->index || !t->edges || (member && (!t->in || !t->out))) {
            xm_topo_free(t);
            t = NULL;
        }
    }
    if (!t)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    return make_comm(c, NULL, nnodes, member, t, comm_graph, fn);
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                   int *newrank)
{
    (void)index;
    (void)edges;
    GET(c, comm, "MPI_Graph_map");
    if (nnodes < 0 || nnodes > c->size)
        return xm_err(c, MPI_ERR_ARG, "MPI_Graph_map");
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    GET(c, comm, "MPI_Graphdims_get");
    TOPO(t, c, MPI_GRAPH, "MPI_Graphdims_get");
    *nnodes = t->nnodes;
    *nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    GET(c, comm, "MPI_Graph_get");
    TOPO(t, c, MPI_GRAPH, "MPI_Graph_get");
    int ne = t->nnodes ? t->index[t->nnodes - 1] : 0;
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = t->index[i];
    for (int i = 0; i < ne && i < maxedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    GET(c, comm, "MPI_Graph_neighbors_count");
    TOPO(t, c, MPI_GRAPH, "MPI_Graph_neighbors_count");
    if (rank < 0 || rank >= t->nnodes)
        return xm_err(c, MPI_ERR_RANK, "MPI_Graph_neighbors_count");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    GET(c, comm, "MPI_Graph_neighbors");
    TOPO(t, c, MPI_GRAPH, "MPI_Graph_neighbors");
    if (rank < 0 || rank >= t->nnodes)
        return xm_err(c, MPI_ERR_RANK, "MPI_Graph_neighbors");
    int lo = rank ? t->index[rank - 1] : 0;
    for (int i = lo; i < t->index[rank] && i - lo < maxneighbors; i++)
        neighbors[i - lo] = t->edges[i];
    return MPI_SUCCESS;
}

/* ---- distributed graph ------------------------------------------------------------- */
static struct xm_topo *dist_new(int indeg, const int *src, const int *sw, int outdeg,
                                const int *dst, const int *dw, int weighted)
{
    struct xm_topo *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = MPI_DIST_GRAPH;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = weighted;
    t->in = xm_ints_dup(src, indeg);
    t->out = xm_ints_dup(dst, outdeg);
    if (weighted) {
        t->inw = xm_ints_dup(sw, indeg);
        t->outw = xm_ints_dup(dw, outdeg);
    }
    if (!t->in || !t->out || (weighted && (!t->inw || !t->outw))) {
        xm_topo_free(t);
        return NULL;
    }
    return t;
}

static int real_weights(const int *w)
{
    return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder;
    const char *fn = "MPI_Dist_graph_create_adjacent";
    GET(c, comm, fn);
    if (c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    if (indegree < 0 || outdegree < 0)
        return xm_err(c, MPI_ERR_ARG, fn);
    for (int i = 0; i < indegree; i++)
        if (sources[i] < 0 || sources[i] >= c->size)
            return xm_err(c, MPI_ERR_RANK, fn);
    for (int i = 0; i < outdegree; i++)
        if (destinations[i] < 0 || destinations[i] >= c->size)
            return xm_err(c, MPI_ERR_RANK, fn);
    int weighted = sourceweights != MPI_UNWEIGHTED;
    if ((weighted && indegree && !real_weights(sourceweights)) ||
        (weighted && outdegree && !real_weights(destweights)))
        return xm_err(c, MPI_ERR_ARG, fn);
    struct xm_topo *t = dist_new(indegree, sources, sourceweights, outdegree,
                                 destinations, destweights, weighted);
    if (!t)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    return make_comm(c, NULL, c->size, 1, t, comm_dist_graph, fn);
}

/* Every edge (s -> d, w) given anywhere is sent to s as an out-edge and to d as an
 * in-edge: one alltoall of counts, one alltoallv of (kind, peer, weight) triples. */
int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder;
    const char *fn = "MPI_Dist_graph_create";
    GET(c, comm, fn);
    if (c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    if (n < 0)
        return xm_err(c, MPI_ERR_ARG, fn);
    int p = c->size, weighted = weights != MPI_UNWEIGHTED, ne = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return xm_err(c, MPI_ERR_ARG, fn);
        if (sources[i] < 0 || sources[i] >= p)
            return xm_err(c, MPI_ERR_RANK, fn);
        ne += degrees[i];
    }
    for (int i = 0; i < ne; i++)
        if (destinations[i] < 0 || destinations[i] >= p)
            return xm_err(c, MPI_ERR_RANK, fn);
    if (weighted && ne && !real_weights(weights))
        return xm_err(c, MPI_ERR_ARG, fn);
    int *cnt = calloc(4 * (size_t)p, sizeof(int)), rc = MPI_SUCCESS;
    int *scnt = cnt, *sdis = cnt + p, *rcnt = cnt + 2 * p, *rdis = cnt + 3 * p;
    int *sb = malloc((size_t)(2 * ne + 1) * 3 * sizeof(int)), *rb = NULL, *pos = NULL;
    struct xm_topo *t = NULL;
    if (!cnt || !sb)
        goto nomem;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scnt[sources[i]] += 3;
            scnt[destinations[e]] += 3;
        }
    for (int r = 1; r < p; r++)
        sdis[r] = sdis[r - 1] + scnt[r - 1];
    if (!(pos = xm_ints_dup(sdis, p)))
        goto nomem;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 1;
            int *o = sb + pos[s];
            o[0] = 1; /* out-edge of s */
            o[1] = d;
            o[2] = w;
            pos[s] += 3;
            o = sb + pos[d];
            o[0] = 0; /* in-edge of d */
            o[1] = s;
            o[2] = w;
            pos[d] += 3;
        }
    int *ones = malloc(2 * (size_t)p * sizeof(int));
    if (!ones)
        goto nomem;
    for (int r = 0; r < p; r++) {
        ones[r] = 1;
        ones[p + r] = r;
    }
    rc = xm_icoll_alltoallv(scnt, ones, ones + p, MPI_INT, rcnt, ones, ones + p, MPI_INT,
                            c, NULL);
    free(ones);
    if (rc < 0)
        goto fail;
    int tot = 0;
    for (int r = 0; r < p; r++) {
        rdis[r] = tot;
        tot += rcnt[r];
    }
    if (!(rb = malloc((size_t)(tot + 1) * sizeof(int))))
        goto nomem;
    rc = xm_icoll_alltoallv(sb, scnt, sdis, MPI_INT, rb, rcnt, rdis, MPI_INT, c, NULL);
    if (rc < 0)
        goto fail;
    int indeg = 0, outdeg = 0;
    for (int i = 0; i < tot; i += 3)
        rb[i] ? outdeg++ : indeg++;
    t = calloc(1, sizeof(*t));
    if (!t)
        goto nomem;
    t->kind = MPI_DIST_GRAPH;
    t->weighted = weighted;
    t->in = malloc((size_t)(indeg + 1) * sizeof(int));
    t->out = malloc((size_t)(outdeg + 1) * sizeof(int));
    t->inw = malloc((size_t)(indeg + 1) * sizeof(int));
    t->outw = malloc((size_t)(outdeg + 1) * sizeof(int));
    if (!t->in || !t->out || !t->inw || !t->outw)
        goto nomem;
    for (int i = 0; i < tot; i += 3) {
        if (rb[i]) {
            t->outw[t->outdeg] = rb[i + 2];
            t->out[t->outdeg++] = rb[i + 1];
        } else {
            t->inw[t->indeg] = rb[i + 2];
            t->in[t->indeg++] = rb[i + 1];
        }
    }
    if (!weighted) {
        free(t->inw);
        free(t->outw);
        t->inw = t->outw = NULL;
    }
    free(cnt);
    free(sb);
    free(rb);
    free(pos);
    return make_comm(c, NULL, p, 1, t, comm_dist_graph, fn);
nomem:
    rc = -ENOMEM;
fail:
    free(cnt);
    free(sb);
    free(rb);
    free(pos);
    xm_topo_free(t);
    return xm_err(c, xm_errno_to_class(rc), fn);
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                    int *weighted)
{
    GET(c, comm, "MPI_Dist_graph_neighbors_count");
    TOPO(t, c, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors_count");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree, int destinations[],
                              int destweights[])
{
    GET(c, comm, "MPI_Dist_graph_neighbors");
    TOPO(t, c, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors");
    for (int i = 0; i < t->indeg && i < maxindegree; i++) {
        sources[i] = t->in[i];
        if (t->weighted && real_weights(sourceweights))
            sourceweights[i] = t->inw[i];
    }
    for (int i = 0; i < t->outdeg && i < maxoutdegree; i++) {
        destinations[i] = t->out[i];
        if (t->weighted && real_weights(destweights))
            destweights[i] = t->outw[i];
    }
    return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    GET(c, comm, "MPI_Topo_test");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- neighbor collectives ---------------------------------------------------------- */
/* Checks, then the per-neighbour arrays of the w-form (struct xm_nb_args: coll_api.h). */
int xm_capi_neighbor(const struct xm_nb_args *a, MPI_Comm comm, MPI_Request *req,
                     const char *fn)
{
    GET(c, comm, fn);
    if (c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    TOPO(t, c, 0, fn);
    if (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE)
        return xm_err(c, MPI_ERR_BUFFER, fn);
    int no = t->outdeg, ni = t->indeg;
    int *sc = malloc((size_t)(no + ni + 1) * sizeof(int));
    MPI_Aint *sd = malloc((size_t)(no + ni + 1) * sizeof(MPI_Aint));
    MPI_Datatype *st = malloc((size_t)(no + ni + 1) * sizeof(MPI_Datatype));
    if (!sc || !sd || !st) {
        free(sc);
        free(sd);
        free(st);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    int *rc_ = sc + no;
    MPI_Aint *rd = sd + no;
    MPI_Datatype *rt = st + no;
    int cls = 0;
    for (int i = 0; i < no && !cls; i++) {
        st[i] = a->sdts ? a->sdts[i] : a->sdt;
        sc[i] = a->scounts ? a->scounts[i] : a->scount;
        struct xm_dtype *d = xm_dt_get(st[i]);
        if (!d)
            cls = MPI_ERR_TYPE;
        else if (sc[i] < 0)
            cls = MPI_ERR_COUNT;
        else
            sd[i] = a->sdispls_b   ? a->sdispls_b[i]
                    : a->sdispls_i ? (MPI_Aint)a->sdispls_i[i] * d->extent
                                   : (MPI_Aint)i * a->sblocks * sc[i] * d->extent;
    }
    for (int i = 0; i < ni && !cls; i++) {
        rt[i] = a->rdts ? a->rdts[i] : a->rdt;
        rc_[i] = a->rcounts ? a->rcounts[i] : a->rcount;
        struct xm_dtype *d = xm_dt_get(rt[i]);
        if (!d)
            cls = MPI_ERR_TYPE;
        else if (rc_[i] < 0)
            cls = MPI_ERR_COUNT;
        else
            rd[i] = a->rdispls_b   ? a->rdispls_b[i]
                    : a->rdispls_i ? (MPI_Aint)a->rdispls_i[i] * d->extent
                                   : (MPI_Aint)i * rc_[i] * d->extent;
    }
    struct xm_req *r = NULL;
    int rc = cls ? 0
                 : xm_neighbor_alltoallw(a->sbuf, sc, sd, st, a->rbuf, rc_, rd, rt, c,
                                         req ? &r : NULL);
    free(sc);
    free(sd);
    free(st);
    if (cls)
        return xm_err(c, cls, fn);
    if (rc < 0)
        return xm_err(c, rc == -EMSGSIZE ? MPI_ERR_TRUNCATE : xm_errno_to_class(rc), fn);
    if (req)
        *req = r->handle;
    return MPI_SUCCESS;
}

#define NB_ALLGATHER                                                                     \
    struct xm_nb_args a = {.sbuf = sbuf,                                                 \
                           .scount = scount,                                             \
                           .sdt = sdt,                                                   \
                           .rbuf = rbuf,                                                 \
                           .rcount = rcount,                                             \
                           .rdt = rdt}
#define NB_ALLGATHERV                                                                    \
    struct xm_nb_args a = {.sbuf = sbuf,                                                 \
                           .scount = scount,                                             \
                           .sdt = sdt,                                                   \
                           .rbuf = rbuf,                                                 \
                           .rcounts = rcounts,                                           \
                           .rdispls_i = displs,                                          \
                           .rdt = rdt}
#define NB_ALLTOALL                                                                      \
    struct xm_nb_args a = {.sbuf = sbuf,                                                 \
                           .scount = scount,                                             \
                           .sdt = sdt,                                                   \
                           .sblocks = 1,                                                 \
                           .rbuf = rbuf,                                                 \
                           .rcount = rcount,                                             \
                           .rdt = rdt}
#define NB_ALLTOALLV                                                                     \
    struct xm_nb_args a = {.sbuf = sbuf,                                                 \
                           .scounts = scounts,                                           \
                           .sdispls_i = sdispls,                                         \
                           .sdt = sdt,                                                   \
                           .rbuf = rbuf,                                                 \
                           .rcounts = rcounts,                                           \
                           .rdispls_i = rdispls,                                         \
                           .rdt = rdt}
#define NB_ALLTOALLW                                                                     \
    struct xm_nb_args a = {.sbuf = sbuf,                                                 \
                           .scounts = scounts,                                           \
                           .sdispls_b = sdispls,                                         \
                           .sdts = sdts,                                                 \
                           .rbuf = rbuf,                                                 \
                           .rcounts = rcounts,                                           \
                           .rdispls_b = rdispls,                                         \
                           .rdts = rdts}

int PMPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                            int rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    NB_ALLGATHER;
    return xm_capi_neighbor(&a, comm, NULL, "MPI_Neighbor_allgather");
}

int PMPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                             int rcount, MPI_Datatype rdt, MPI_Comm comm,
                             MPI_Request *req)
{
    NB_ALLGATHER;
    return xm_capi_neighbor(&a, comm, req, "MPI_Ineighbor_allgather");
}

int PMPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                             const int rcounts[], const int displs[], MPI_Datatype rdt,
                             MPI_Comm comm)
{
    NB_ALLGATHERV;
    return xm_capi_neighbor(&a, comm, NULL, "MPI_Neighbor_allgatherv");
}

int PMPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                              const int rcounts[], const int displs[], MPI_Datatype rdt,
                              MPI_Comm comm, MPI_Request *req)
{
    NB_ALLGATHERV;
    return xm_capi_neighbor(&a, comm, req, "MPI_Ineighbor_allgatherv");
}

int PMPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                           int rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    NB_ALLTOALL;
    return xm_capi_neighbor(&a, comm, NULL, "MPI_Neighbor_alltoall");
}

int PMPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                            int rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    NB_ALLTOALL;
    return xm_capi_neighbor(&a, comm, req, "MPI_Ineighbor_alltoall");
}

int PMPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                            MPI_Datatype sdt, void *rbuf, const int rcounts[],
                            const int rdispls[], MPI_Datatype rdt, MPI_Comm comm)
{
    NB_ALLTOALLV;
    return xm_capi_neighbor(&a, comm, NULL, "MPI_Neighbor_alltoallv");
}

int PMPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                             MPI_Datatype sdt, void *rbuf, const int rcounts[],
                             const int rdispls[], MPI_Datatype rdt, MPI_Comm comm,
                             MPI_Request *req)
{
    NB_ALLTOALLV;
    return xm_capi_neighbor(&a, comm, req, "MPI_Ineighbor_alltoallv");
}

int PMPI_Neighbor_alltoallw(const void *sbuf, const int scounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sdts[],
                            void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rdts[], MPI_Comm comm)
{
    NB_ALLTOALLW;
    return xm_capi_neighbor(&a, comm, NULL, "MPI_Neighbor_alltoallw");
}

int PMPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sdts[],
                             void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype rdts[], MPI_Comm comm, MPI_Request *req)
{
    NB_ALLTOALLW;
    return xm_capi_neighbor(&a, comm, req, "MPI_Ineighbor_alltoallw");
}
