/*
 * topo_basic.c - process topologies and neighbor collectives: Dims_create, a periodic
 *   2-D Cartesian grid (get/rank/coords/shift/sub/map, Cartdim_get, Topo_test, kept by
 *   Comm_dup), a non-periodic 1-D line (MPI_PROC_NULL ends), a periodic dimension of
 *   size 2 and 1 (the -1 and +1 neighbours are one rank: the block sent towards -1 must
 *   land in the neighbour's +1 slot), a ring graph (Graph_*), distributed graphs built
 *   both ways (Dist_graph_create_adjacent with weights, Dist_graph_create from edges
 *   given by other ranks), and every Neighbor_* / Ineighbor_* call checked block by
 *   block against what the neighbours sent.  Any number of ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int me, np;
/* through a volatile: GCC takes MPI_UNWEIGHTED ((int *)1 here) for a zero-size array */
static int *volatile unweighted = MPI_UNWEIGHTED;

/* the value rank `from` sends in its block `blk` (element e) */
static int val(int from, int blk, int e)
{
    return from * 10000 + blk * 100 + e;
}

/* Neighbor_alltoall (blocking or not) with m ints per block on comm whose in/out
 * neighbour lists are in[] and out[] (as the standard orders them); sblk_of_in[i] is
 * the block index in-neighbour i used for me. */
static void check_alltoall(MPI_Comm comm, int indeg, const int *in, const int *sblk_of_in,
                           int outdeg, int m, int nb, const char *what)
{
    int *s = malloc((size_t)(outdeg * m + 1) * sizeof(int));
    int *r = malloc((size_t)(indeg * m + 1) * sizeof(int));
    int rank;
    MPI_Comm_rank(comm, &rank);
    for (int k = 0; k < outdeg; k++)
        for (int e = 0; e < m; e++)
            s[k * m + e] = val(rank, k, e);
    for (int i = 0; i < indeg * m; i++)
        r[i] = -7;
    if (nb) {
        MPI_Request q;
        TEST_ASSERT(MPI_Ineighbor_alltoall(s, m, MPI_INT, r, m, MPI_INT, comm, &q) ==
                    MPI_SUCCESS);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        TEST_ASSERT(MPI_Neighbor_alltoall(s, m, MPI_INT, r, m, MPI_INT, comm) ==
                    MPI_SUCCESS);
    }
    for (int i = 0; i < indeg; i++)
        for (int e = 0; e < m; e++) {
            int want = in[i] == MPI_PROC_NULL ? -7 : val(in[i], sblk_of_in[i], e);
            TEST_ASSERT_MSG(r[i * m + e] == want, "%s%s: block %d elem %d is %d, want %d",
                            nb ? "I" : "", what, i, e, r[i * m + e], want);
        }
    free(s);
    free(r);
}

/* Cartesian: the block I get in slot 2d (from my -1 neighbour) is the one that
 * neighbour sent towards +1 (its block 2d+1), and slot 2d+1 holds its block 2d. */
static void cart_checks(MPI_Comm cart, int nd)
{
    int in[16], blk[16];
    for (int d = 0; d < nd; d++) {
        MPI_Cart_shift(cart, d, 1, &in[2 * d], &in[2 * d + 1]);
        blk[2 * d] = 2 * d + 1;
        blk[2 * d + 1] = 2 * d;
    }
    for (int nb = 0; nb < 2; nb++) {
        check_alltoall(cart, 2 * nd, in, blk, 2 * nd, 3, nb, "cart alltoall");
        check_alltoall(cart, 2 * nd, in, blk, 2 * nd, 5000, nb, "cart alltoall big");
    }
    /* allgather: every in-neighbour's one block */
    int rank, r[16], sv;
    MPI_Comm_rank(cart, &rank);
    sv = rank * 3 + 1;
    for (int i = 0; i < 2 * nd; i++)
        r[i] = -7;
    MPI_Neighbor_allgather(&sv, 1, MPI_INT, r, 1, MPI_INT, cart);
    for (int i = 0; i < 2 * nd; i++)
        TEST_ASSERT_MSG(r[i] == (in[i] == MPI_PROC_NULL ? -7 : in[i] * 3 + 1),
                        "allgather slot %d = %d (from %d)", i, r[i], in[i]);
    /* allgatherv into reversed slots with a gap, nonblocking */
    int cnt[16], dis[16], rv[40];
    for (int i = 0; i < 2 * nd; i++) {
        cnt[i] = 1;
        dis[i] = 2 * (2 * nd - 1 - i);
    }
    for (int i = 0; i < 40; i++)
        rv[i] = -7;
    MPI_Request q;
    MPI_Ineighbor_allgatherv(&sv, 1, MPI_INT, rv, cnt, dis, MPI_INT, cart, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * nd; i++)
        TEST_ASSERT_MSG(rv[dis[i]] == (in[i] == MPI_PROC_NULL ? -7 : in[i] * 3 + 1) &&
                            rv[dis[i] + 1] == -7,
                        "allgatherv slot %d", i);
}

static void test_dims(void)
{
    int d[3] = {0, 0, 0};
    MPI_Dims_create(16, 2, d);
    TEST_ASSERT(d[0] == 4 && d[1] == 4);
    d[0] = d[1] = d[2] = 0;
    MPI_Dims_create(12, 3, d);
    TEST_ASSERT(d[0] == 3 && d[1] == 2 && d[2] == 2);
    d[0] = 0;
    d[1] = 3;
    MPI_Dims_create(12, 2, d);
    TEST_ASSERT(d[0] == 4 && d[1] == 3);
    d[0] = d[1] = 0; /* most balanced, not the greedy 12 x 6 */
    MPI_Dims_create(72, 2, d);
    TEST_ASSERT_MSG(d[0] == 9 && d[1] == 8, "72 in 2-D: %d x %d", d[0], d[1]);
    d[0] = d[1] = d[2] = 0; /* equal spreads (20 x 18 x 14): larger small entries win */
    MPI_Dims_create(5040, 3, d);
    TEST_ASSERT_MSG(d[0] == 21 && d[1] == 16 && d[2] == 15, "5040 in 3-D: %d %d %d", d[0],
                    d[1], d[2]);
    d[0] = d[1] = 0;
    MPI_Dims_create(7, 2, d);
    TEST_ASSERT(d[0] == 7 && d[1] == 1);
    d[0] = 5;
    d[1] = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Dims_create(12, 2, d);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_DIMS, "Dims_create(12, {5,0}) class %d", cls);
}

static void test_cart2d(void)
{
    int dims[2] = {0, 0}, per[2] = {1, 1}, t = -1;
    MPI_Dims_create(np, 2, dims);
    MPI_Comm cart, dup, row, col;
    TEST_ASSERT(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart) == MPI_SUCCESS);
    MPI_Topo_test(cart, &t);
    TEST_ASSERT(t == MPI_CART);
    MPI_Topo_test(MPI_COMM_WORLD, &t);
    TEST_ASSERT(t == MPI_UNDEFINED);
    int nd = -1, gd[2], gp[2], gc[2], rank, r2;
    MPI_Cartdim_get(cart, &nd);
    TEST_ASSERT(nd == 2);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_get(cart, 2, gd, gp, gc);
    TEST_ASSERT(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 1);
    TEST_ASSERT(gc[0] == rank / dims[1] && gc[1] == rank % dims[1]);
    MPI_Cart_rank(cart, gc, &r2);
    TEST_ASSERT(r2 == rank);
    int co[2] = {gc[0] + dims[0], gc[1] - dims[1]}; /* wraps in periodic dims */
    MPI_Cart_rank(cart, co, &r2);
    TEST_ASSERT(r2 == rank);
    MPI_Cart_coords(cart, np - 1, 2, co);
    TEST_ASSERT(co[0] == dims[0] - 1 && co[1] == dims[1] - 1);
    int src, dst;
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    TEST_ASSERT(src == gc[0] * dims[1] + (gc[1] + dims[1] - 1) % dims[1]);
    TEST_ASSERT(dst == gc[0] * dims[1] + (gc[1] + 1) % dims[1]);
    MPI_Cart_map(MPI_COMM_WORLD, 2, dims, per, &r2);
    TEST_ASSERT(r2 == me);
    cart_checks(cart, 2);
    /* the topology survives Comm_dup */
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &t);
    TEST_ASSERT(t == MPI_CART);
    cart_checks(dup, 2);
    /* rows and columns */
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0}, sz;
    MPI_Cart_sub(cart, keep_row, &row);
    MPI_Cart_sub(cart, keep_col, &col);
    MPI_Comm_size(row, &sz);
    TEST_ASSERT(sz == dims[1]);
    MPI_Comm_rank(row, &r2);
    TEST_ASSERT(r2 == gc[1]);
    MPI_Comm_size(col, &sz);
    TEST_ASSERT(sz == dims[0]);
    MPI_Comm_rank(col, &r2);
    TEST_ASSERT(r2 == gc[0]);
    MPI_Cartdim_get(row, &nd);
    TEST_ASSERT(nd == 1);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row); /* a row's ranks */
    TEST_ASSERT(sum == gc[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
}

/* 1-D line (non-periodic: both ends have a PROC_NULL side), then periodic dims of
 * size 2 and 1 (the same rank on both sides) */
static void test_cart_edges(void)
{
    int d1 = np, p0 = 0;
    MPI_Comm line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p0, 0, &line);
    int src, dst;
    MPI_Cart_shift(line, 0, 1, &src, &dst);
    TEST_ASSERT(src == (me == 0 ? MPI_PROC_NULL : me - 1));
    TEST_ASSERT(dst == (me == np - 1 ? MPI_PROC_NULL : me + 1));
    cart_checks(line, 1);
    MPI_Comm_free(&line);
    if (np >= 2) { /* 2 x 1 periodic grid over the first two ranks */
        int d2[2] = {2, 1}, p2[2] = {1, 1};
        MPI_Comm small;
        MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &small);
        TEST_ASSERT((small == MPI_COMM_NULL) == (me >= 2));
        if (small != MPI_COMM_NULL) {
            MPI_Cart_shift(small, 0, 1, &src, &dst);
            TEST_ASSERT(src == 1 - me && dst == 1 - me);
            MPI_Cart_shift(small, 1, 1, &src, &dst);
            TEST_ASSERT(src == me && dst == me); /* itself (its rank in small is me) */
            cart_checks(small, 2);
            MPI_Comm_free(&small);
        }
    }
}

static void test_graph(void)
{
    /* ring with a chord 0 <-> np/2 */
    int n = np, *index = malloc((size_t)n * sizeof(int)),
        *edges = malloc(4 * (size_t)n * sizeof(int));
    int ne = 0;
    for (int i = 0; i < n; i++) {
        if (n > 1) {
            edges[ne++] = (i + n - 1) % n;
            edges[ne++] = (i + 1) % n;
        }
        if (n > 3 && (i == 0 || i == n / 2))
            edges[ne++] = i == 0 ? n / 2 : 0;
        index[i] = ne;
    }
    MPI_Comm g;
    TEST_ASSERT(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g) == MPI_SUCCESS);
    int t, nn, nedge, cnt, nbr[4];
    MPI_Topo_test(g, &t);
    TEST_ASSERT(t == MPI_GRAPH);
    MPI_Graphdims_get(g, &nn, &nedge);
    TEST_ASSERT(nn == n && nedge == ne);
    MPI_Graph_neighbors_count(g, me, &cnt);
    int lo = me ? index[me - 1] : 0;
    TEST_ASSERT(cnt == index[me] - lo);
    MPI_Graph_neighbors(g, me, 4, nbr);
    for (int i = 0; i < cnt; i++)
        TEST_ASSERT(nbr[i] == edges[lo + i]);
    int *gi = malloc((size_t)n * sizeof(int)),
        *ge = malloc((size_t)(ne + 1) * sizeof(int));
    MPI_Graph_get(g, n, ne, gi, ge);
    TEST_ASSERT(!memcmp(gi, index, (size_t)n * sizeof(int)));
    TEST_ASSERT(!memcmp(ge, edges, (size_t)ne * sizeof(int)));
    /* block sent to neighbour k: which block of its list does my in-neighbour i use? */
    int blk[4];
    for (int i = 0; i < cnt; i++) {
        int o = nbr[i], olo = o ? index[o - 1] : 0, j = olo;
        while (edges[j] != me)
            j++;
        blk[i] =
            j - olo; /* first edge back to me (a ring of 2 has two: order pairs them) */
        if (i > 0 && nbr[i] == nbr[i - 1])
            blk[i] = blk[i - 1] + 1;
    }
    for (int nb = 0; nb < 2; nb++)
        check_alltoall(g, cnt, nbr, blk, cnt, 4, nb, "graph alltoall");
    MPI_Comm_free(&g);
    free(index);
    free(edges);
    free(gi);
    free(ge);
}

static void test_dist_graph(void)
{
    /* adjacent: I receive from me-1 and me-2, send to me+1 and me+2 (mod np), weighted */
    int src[2] = {(me + np - 1) % np, (me + np - 2) % np};
    int dst[2] = {(me + 1) % np, (me + 2) % np};
    int sw[2] = {10, 20}, dw[2] = {10, 20};
    MPI_Comm dg;
    TEST_ASSERT(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw,
                                               MPI_INFO_NULL, 0, &dg) == MPI_SUCCESS);
    int t, indeg, outdeg, wtd, gs[2], gsw[2], gd[2], gdw[2];
    MPI_Topo_test(dg, &t);
    TEST_ASSERT(t == MPI_DIST_GRAPH);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &wtd);
    TEST_ASSERT(indeg == 2 && outdeg == 2 && wtd);
    MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw);
    TEST_ASSERT(gs[0] == src[0] && gs[1] == src[1] && gd[0] == dst[0] && gd[1] == dst[1]);
    TEST_ASSERT(gsw[1] == 20 && gdw[0] == 10);
    /* in-neighbour me-1 sent me its block 0, me-2 its block 1 */
    int blk[2] = {0, 1}; /* (me-1)+1 == me and (me-2)+2 == me, whatever np is */
    for (int nb = 0; nb < 2; nb++)
        check_alltoall(dg, 2, src, blk, 2, 7, nb, "dist graph alltoall");
    /* alltoallv / alltoallw: block k is k+1 ints at a gap */
    int sc[2] = {1, 2}, sd[2] = {0, 4}, rc[2], rd[2] = {0, 8}, s[8], r[16];
    for (int i = 0; i < 8; i++)
        s[i] = me * 100 + i;
    for (int i = 0; i < 2; i++)
        rc[i] = blk[i] + 1; /* what in-neighbour i sends me */
    for (int w = 0; w < 2; w++)
        for (int nb = 0; nb < 2; nb++) {
            for (int i = 0; i < 16; i++)
                r[i] = -7;
            MPI_Request q = MPI_REQUEST_NULL;
            if (w) {
                MPI_Aint sdb[2] = {0, 16}, rdb[2] = {0, 32};
                MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
                if (nb)
                    MPI_Ineighbor_alltoallw(s, sc, sdb, ty, r, rc, rdb, ty, dg, &q);
                else
                    MPI_Neighbor_alltoallw(s, sc, sdb, ty, r, rc, rdb, ty, dg);
            } else if (nb) {
                MPI_Ineighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, dg, &q);
            } else {
                MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, dg);
            }
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            for (int i = 0; i < 2; i++)
                for (int e = 0; e < rc[i]; e++)
                    TEST_ASSERT_MSG(r[rd[i] + e] == src[i] * 100 + sd[blk[i]] + e,
                                    "alltoall%c nb=%d: slot %d elem %d = %d",
                                    w ? 'w' : 'v', nb, i, e, r[rd[i] + e]);
        }
    MPI_Comm_free(&dg);

    /* general form: rank k declares the edge (k+1 -> k) for its successor's sake, so
     * every edge is given by a rank that is not its source */
    int s1 = (me + 1) % np, deg = 1, d1 = me;
    TEST_ASSERT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s1, &deg, &d1, unweighted,
                                      MPI_INFO_NULL, 0, &dg) == MPI_SUCCESS);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &wtd);
    TEST_ASSERT(indeg == 1 && outdeg == 1 && !wtd);
    MPI_Dist_graph_neighbors(dg, 1, gs, unweighted, 1, gd, unweighted);
    TEST_ASSERT(gs[0] == (me + 1) % np && gd[0] == (me + np - 1) % np);
    int zero = 0;
    check_alltoall(dg, 1, gs, &zero, 1, 2, 1, "dist graph (general) alltoall");
    MPI_Comm_free(&dg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    test_dims();
    test_cart2d();
    test_cart_edges();
    test_graph();
    test_dist_graph();
    return test_finish();
}
