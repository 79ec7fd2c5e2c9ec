/*
 * coll_basic.c - every blocking collective against a serial reference computed locally.
 *
 * Each rank's contribution is a function of (rank, index), so every rank can compute
 * what the result must be.  Runs on MPI_COMM_WORLD and on a communicator of the odd
 * ranks in reverse order (non-identity rank map), for counts 0, 1, 7 and a large one,
 * every root, the in-place variants, MINLOC/MAXLOC, complex sums, bitwise ops, and a
 * non-commutative user op that detects any change of operand order.
 * Rank 0 prints "No Errors" when every rank found none.
 */
#include <complex.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            if (errs++ < 10) {                             \
                fprintf(stderr, "[%d] %s:%d: ", wrank, __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);              \
                fputc('\n', stderr);                       \
            }                                              \
        }                                                  \
    } while (0)

static int wrank;

static int val(int r, int i)
{
    return (r + 1) * 1000 + i % 997;
}

/* non-commutative: (a, b) ranges of consecutive ranks; in is the lower range */
static void range_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    (void)dt;
    for (int k = 0; k < *len; k++) {
        int *x = a + 2 * k, *y = b + 2 * k;
        if (x[0] < 0 || y[0] < 0 || x[1] + 1 != y[0])
            y[0] = y[1] = -1000000;
        else
            y[0] = x[0];
    }
}

static void run(MPI_Comm comm, int big)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int counts[] = {0, 1, 7, big};
    MPI_Op range;
    MPI_Op_create(range_op, 0, &range);
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int n = counts[ci];
        int *sb = malloc(((size_t)n * p + 1) * sizeof(int));
        int *rb = malloc(((size_t)n * p + 1) * sizeof(int));
        for (int i = 0; i < n; i++)
            sb[i] = val(me, i);
        /* bcast / reduce / gather / scatter: every root */
        for (int root = 0; root < p; root++) {
            for (int i = 0; i < n; i++)
                rb[i] = me == root ? val(root, i) : -1;
            MPI_Bcast(rb, n, MPI_INT, root, comm);
            for (int i = 0; i < n; i++)
                CHECK(rb[i] == val(root, i), "bcast n=%d root=%d i=%d", n, root, i);

            for (int i = 0; i < n; i++)
                rb[i] = -1;
            MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, root, comm);
            if (me == root)
                for (int i = 0; i < n; i++) {
                    long e = 0;
                    for (int r = 0; r < p; r++)
                        e += val(r, i);
                    CHECK(rb[i] == e, "reduce n=%d root=%d i=%d %d!=%ld", n, root, i, rb[i], e);
                }
            /* in-place reduce at the root */
            for (int i = 0; i < n; i++)
                rb[i] = val(me, i);
            MPI_Reduce(me == root ? MPI_IN_PLACE : rb, me == root ? rb : NULL, n, MPI_INT,
                       MPI_MAX, root, comm);
            if (me == root)
                for (int i = 0; i < n; i++)
                    CHECK(rb[i] == val(p - 1, i), "reduce in-place max n=%d", n);

            /* non-commutative reduce, result must be the whole range [0, p-1] */
            if (n <= 7) {
                int pr[14], out[14];
                for (int i = 0; i < n; i++) {
                    pr[2 * i] = me;
                    pr[2 * i + 1] = me;
                    out[2 * i] = out[2 * i + 1] = -5;
                }
                MPI_Reduce(pr, out, n, MPI_2INT, range, root, comm);
                if (me == root)
                    for (int i = 0; i < n; i++)
                        CHECK(out[2 * i] == 0 && out[2 * i + 1] == p - 1,
                              "noncommutative reduce root=%d got (%d,%d)", root, out[2 * i],
                              out[2 * i + 1]);
            }

            for (int i = 0; i < n * p; i++)
                rb[i] = -1;
            MPI_Gather(sb, n, MPI_INT, rb, n, MPI_INT, root, comm);
            if (me == root)
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < n; i++)
                        CHECK(rb[r * n + i] == val(r, i), "gather n=%d root=%d", n, root);
            /* scatter from the gathered data back */
            int *back = malloc(((size_t)n + 1) * sizeof(int));
            MPI_Scatter(rb, n, MPI_INT, back, n, MPI_INT, root, comm);
            for (int i = 0; i < n; i++)
                CHECK(back[i] == val(me, i), "scatter n=%d root=%d", n, root);
            /* in-place gather at root */
            if (me == root)
                for (int i = 0; i < n; i++)
                    rb[me * n + i] = val(me, i);
            MPI_Gather(me == root ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, root, comm);
            if (me == root)
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < n; i++)
                        CHECK(rb[r * n + i] == val(r, i), "gather in place n=%d", n);
            free(back);
        }
        /* gatherv/scatterv with rank-dependent counts (r % 3) * n / 2, reversed displs */
        {
            int *rc = malloc(p * sizeof(int)), *dp = malloc(p * sizeof(int)), tot = 0;
            for (int r = p - 1; r >= 0; r--) {
                rc[r] = (r % 3) * n / 2;
                dp[r] = tot;
                tot += rc[r];
            }
            int *g = malloc(((size_t)tot + 1) * sizeof(int));
            for (int root = 0; root < p; root++) {
                for (int i = 0; i < tot; i++)
                    g[i] = -1;
                MPI_Gatherv(sb, rc[me], MPI_INT, g, rc, dp, MPI_INT, root, comm);
                if (me == root)
                    for (int r = 0; r < p; r++)
                        for (int i = 0; i < rc[r]; i++)
                            CHECK(g[dp[r] + i] == val(r, i), "gatherv n=%d", n);
                for (int i = 0; i < n; i++)
                    rb[i] = -1;
                MPI_Scatterv(g, rc, dp, MPI_INT, rb, rc[me], MPI_INT, root, comm);
                for (int i = 0; i < rc[me]; i++)
                    CHECK(rb[i] == val(me, i), "scatterv n=%d", n);
            }
            /* allgatherv (and in place) */
            for (int ip = 0; ip < 2; ip++) {
                for (int i = 0; i < tot; i++)
                    g[i] = -1;
                if (ip)
                    for (int i = 0; i < rc[me]; i++)
                        g[dp[me] + i] = val(me, i);
                MPI_Allgatherv(ip ? MPI_IN_PLACE : sb, rc[me], MPI_INT, g, rc, dp, MPI_INT,
                               comm);
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < rc[r]; i++)
                        CHECK(g[dp[r] + i] == val(r, i), "allgatherv n=%d ip=%d", n, ip);
            }
            /* reduce_scatter with these counts: segments in rank order */
            int fwd = 0;
            for (int r = 0; r < me; r++)
                fwd += rc[r];
            int *full = malloc(((size_t)tot + 1) * sizeof(int));
            for (int i = 0; i < tot; i++)
                full[i] = val(me, i);
            for (int i = 0; i < rc[me]; i++)
                rb[i] = -1;
            MPI_Reduce_scatter(full, rb, rc, MPI_INT, MPI_SUM, comm);
            for (int i = 0; i < rc[me]; i++) {
                long e = 0;
                for (int r = 0; r < p; r++)
                    e += val(r, fwd + i);
                CHECK(rb[i] == e, "reduce_scatter n=%d", n);
            }
            MPI_Reduce_scatter(MPI_IN_PLACE, full, rc, MPI_INT, MPI_SUM, comm);
            for (int i = 0; i < rc[me]; i++) {
                long e = 0;
                for (int r = 0; r < p; r++)
                    e += val(r, fwd + i);
                CHECK(full[i] == e, "reduce_scatter in place n=%d", n);
            }
            free(full);
            free(g);
            free(rc);
            free(dp);
        }
        /* allreduce: sum, in place, prod on doubles, bxor, non-commutative */
        MPI_Allreduce(sb, rb, n, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < n; i++) {
            long e = 0;
            for (int r = 0; r < p; r++)
                e += val(r, i);
            CHECK(rb[i] == e, "allreduce n=%d i=%d %d!=%ld", n, i, rb[i], e);
        }
        for (int i = 0; i < n; i++)
            rb[i] = val(me, i);
        MPI_Allreduce(MPI_IN_PLACE, rb, n, MPI_INT, MPI_BXOR, comm);
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int r = 0; r < p; r++)
                e ^= val(r, i);
            CHECK(rb[i] == e, "allreduce bxor n=%d", n);
        }
        if (n <= 7) {
            double d[7], dd[7];
            int pr[14], out[14];
            for (int i = 0; i < n; i++) {
                d[i] = 1.0 + (me + i) % 3;
                pr[2 * i] = pr[2 * i + 1] = me;
            }
            MPI_Allreduce(d, dd, n, MPI_DOUBLE, MPI_PROD, comm);
            MPI_Allreduce(pr, out, n, MPI_2INT, range, comm);
            for (int i = 0; i < n; i++) {
                double e = 1;
                for (int r = 0; r < p; r++)
                    e *= 1.0 + (r + i) % 3;
                CHECK(dd[i] == e, "allreduce prod");
                CHECK(out[2 * i] == 0 && out[2 * i + 1] == p - 1,
                      "noncommutative allreduce (%d,%d)", out[2 * i], out[2 * i + 1]);
            }
            /* scan/exscan with the order-sensitive op */
            MPI_Scan(pr, out, n, MPI_2INT, range, comm);
            for (int i = 0; i < n; i++)
                CHECK(out[2 * i] == 0 && out[2 * i + 1] == me, "scan (%d,%d) at %d",
                      out[2 * i], out[2 * i + 1], me);
            MPI_Exscan(pr, out, n, MPI_2INT, range, comm);
            if (me > 0)
                for (int i = 0; i < n; i++)
                    CHECK(out[2 * i] == 0 && out[2 * i + 1] == me - 1, "exscan (%d,%d) at %d",
                          out[2 * i], out[2 * i + 1], me);
        }
        /* scan sum in place */
        for (int i = 0; i < n; i++)
            rb[i] = val(me, i);
        MPI_Scan(MPI_IN_PLACE, rb, n, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < n; i++) {
            long e = 0;
            for (int r = 0; r <= me; r++)
                e += val(r, i);
            CHECK(rb[i] == e, "scan sum in place n=%d", n);
        }
        /* allgather (Bruck for small, ring for big) and in place */
        for (int ip = 0; ip < 2; ip++) {
            for (int i = 0; i < n * p; i++)
                rb[i] = ip && i / (n ? n : 1) == me ? val(me, i % n) : -1;
            MPI_Allgather(ip ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, comm);
            for (int r = 0; r < p; r++)
                for (int i = 0; i < n; i++)
                    CHECK(rb[r * n + i] == val(r, i), "allgather n=%d ip=%d", n, ip);
        }
        /* alltoall: block to r is val(me*p + r, i); in place too */
        {
            int *a = malloc(((size_t)n * p + 1) * sizeof(int));
            for (int ip = 0; ip < 2; ip++) {
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < n; i++)
                        (ip ? rb : a)[r * n + i] = val(me * p + r, i);
                MPI_Alltoall(ip ? MPI_IN_PLACE : a, n, MPI_INT, rb, n, MPI_INT, comm);
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < n; i++)
                        CHECK(rb[r * n + i] == val(r * p + me, i), "alltoall n=%d ip=%d", n,
                              ip);
            }
            /* alltoallv: to r send (r + me) % 3 * n / 2 elements */
            int *scn = malloc(4 * p * sizeof(int)), *sd = scn + p, *rcn = scn + 2 * p,
                *rd = scn + 3 * p, st = 0, rt = 0;
            for (int r = 0; r < p; r++) {
                scn[r] = (r + me) % 3 * n / 2;
                sd[r] = st;
                st += scn[r];
                rcn[r] = (r + me) % 3 * n / 2;
                rd[r] = rt;
                rt += rcn[r];
            }
            int *s2 = malloc(((size_t)st + 1) * sizeof(int)), *r2 = malloc(((size_t)rt + 1) * sizeof(int));
            for (int r = 0; r < p; r++)
                for (int i = 0; i < scn[r]; i++)
                    s2[sd[r] + i] = val(me * p + r, i);
            MPI_Alltoallv(s2, scn, sd, MPI_INT, r2, rcn, rd, MPI_INT, comm);
            for (int r = 0; r < p; r++)
                for (int i = 0; i < rcn[r]; i++)
                    CHECK(r2[rd[r] + i] == val(r * p + me, i), "alltoallv n=%d", n);
            /* alltoallw: same exchange, byte displacements, MPI_INT; then in place */
            {
                int *sdb = malloc(4 * (size_t)p * sizeof(int)), *rdb = sdb + p;
                MPI_Datatype *ty = malloc((size_t)p * sizeof(MPI_Datatype));
                for (int r = 0; r < p; r++) {
                    sdb[r] = sd[r] * (int)sizeof(int);
                    rdb[r] = rd[r] * (int)sizeof(int);
                    ty[r] = MPI_INT;
                }
                for (int i = 0; i < rt; i++)
                    r2[i] = -1;
                MPI_Alltoallw(s2, scn, sdb, ty, r2, rcn, rdb, ty, comm);
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < rcn[r]; i++)
                        CHECK(r2[rd[r] + i] == val(r * p + me, i), "alltoallw n=%d", n);
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < rcn[r]; i++)
                        r2[rd[r] + i] = val(me * p + r, i);
                MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r2, rcn, rdb, ty, comm);
                for (int r = 0; r < p; r++)
                    for (int i = 0; i < rcn[r]; i++)
                        CHECK(r2[rd[r] + i] == val(r * p + me, i), "alltoallw in place n=%d",
                              n);
                free(sdb);
                free(ty);
            }
            free(s2);
            free(r2);
            free(scn);
            free(a);
        }
        /* reduce_scatter_block */
        {
            int *full = malloc(((size_t)n * p + 1) * sizeof(int));
            for (int i = 0; i < n * p; i++)
                full[i] = val(me, i);
            MPI_Reduce_scatter_block(full, rb, n, MPI_INT, MPI_MIN, comm);
            for (int i = 0; i < n; i++)
                CHECK(rb[i] == val(0, me * n + i), "reduce_scatter_block n=%d", n);
            free(full);
        }
        free(sb);
        free(rb);
    }
    /* MINLOC/MAXLOC on DOUBLE_INT, complex sum, LAND/LOR */
    {
        struct { double v; int i; } in[2], out[2];
        in[0].v = (me * 7) % 5;  /* duplicates: the lowest index must win */
        in[0].i = me;
        in[1].v = -me;
        in[1].i = me;
        MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MINLOC, comm);
        double mn = 1e9;
        int mi = -1;
        for (int r = 0; r < p; r++)
            if ((r * 7) % 5 < mn) {
                mn = (r * 7) % 5;
                mi = r;
            }
        CHECK(out[0].v == mn && out[0].i == mi, "minloc (%g,%d)", out[0].v, out[0].i);
        CHECK(out[1].v == -(p - 1) && out[1].i == p - 1, "minloc 2");
        MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
        CHECK(out[1].v == 0 && out[1].i == 0, "maxloc");
        double complex z = me + 2.0 * I, zs;
        MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
        CHECK(creal(zs) == p * (p - 1) / 2.0 && cimag(zs) == 2.0 * p, "complex sum");
        int t = me != 1, land, lor;
        MPI_Allreduce(&t, &land, 1, MPI_INT, MPI_LAND, comm);
        MPI_Allreduce(&t, &lor, 1, MPI_INT, MPI_LOR, comm);
        CHECK(land == (p < 2) && lor == 1, "land/lor");
    }
    /* derived types: a strided vector in Bcast/Gather/Alltoall (receive side packed
     * ints), a contiguous type of 3 ints in Allreduce (predefined op on a derived type),
     * a resized struct in Scatter */
    {
        MPI_Datatype vec, tri;
        MPI_Type_vector(4, 1, 3, MPI_INT, &vec); /* ints 0, 3, 6, 9 of 10 */
        MPI_Type_commit(&vec);
        MPI_Type_contiguous(3, MPI_INT, &tri);
        MPI_Type_commit(&tri);
        int sv[10], got[10], root = p - 1;
        for (int i = 0; i < 10; i++)
            sv[i] = me == root ? 50 + i : -1;
        MPI_Bcast(sv, 1, vec, root, comm);
        for (int i = 0; i < 10; i++)
            CHECK(sv[i] == (i % 3 == 0 ? 50 + i : me == root ? 50 + i : -1), "vector bcast");
        int *gg = malloc(4 * (size_t)p * sizeof(int));
        for (int i = 0; i < 10; i++)
            got[i] = me * 100 + i;
        MPI_Gather(got, 1, vec, gg, 4, MPI_INT, 0, comm);
        if (me == 0)
            for (int r = 0; r < p; r++)
                for (int k = 0; k < 4; k++)
                    CHECK(gg[4 * r + k] == r * 100 + 3 * k, "vector gather");
        int t3[6] = {me, 1, 2 * me, me, 1, 2 * me}, r3[6];
        MPI_Allreduce(t3, r3, 2, tri, MPI_SUM, comm);
        CHECK(r3[0] == p * (p - 1) / 2 && r3[1] == p && r3[5] == p * (p - 1) && r3[3] == r3[0],
              "derived allreduce");
        free(gg);
        MPI_Type_free(&vec);
        MPI_Type_free(&tri);
    }
    MPI_Op_free(&range);
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    int p, tot;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int big = p > 8 ? 5000 : 40000;
    run(MPI_COMM_WORLD, big);
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &odd);
    if (wrank % 2)
        run(odd, 3000);
    MPI_Comm_free(&odd);
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0 && tot == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return tot != 0;
}
