/*
 * coll_shm_reduce.c - Allreduce, Reduce and Bcast against a serial reference, on the
 *   communicators the shared-memory collectives must handle: COMM_WORLD, split halves
 *   (same context id, disjoint members), a reversed-order split, a dup, and more dups
 *   at once than there are collective slots (the rest fall back to p2p), with
 *   MPI_IN_PLACE, vectors longer than one shared buffer (several rounds/chunks),
 *   derived types (a vector at the root, plain ints elsewhere; a contiguous pair of
 *   doubles in reductions), and nonblocking collectives (p2p schedules) in flight on
 *   the same and on other communicators while the blocking ones run.
 *   Every rank computes the expected values itself (elements are small integers, so
 *   sums and products are exact in any order).  Rank 0 prints "No Errors".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            if (errs < 10) {                                                             \
                fprintf(stderr, __VA_ARGS__);                                            \
                fputc('\n', stderr);                                                     \
            }                                                                            \
            errs++;                                                                      \
        }                                                                                \
    } while (0)

/* element k of comm rank r's contribution in test t */
static long val(int r, long k, int t)
{
    return (r * 7 + k * 3 + t) % 11 - 3;
}

static long fold(MPI_Op op, long a, long b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    if (op == MPI_BAND)
        return a & b;
    return a * b; /* MPI_PROD */
}

static long expect(int n, long k, int t, MPI_Op op)
{
    long acc = val(0, k, t);
    for (int r = 1; r < n; r++)
        acc = fold(op, acc, val(r, k, t));
    return acc;
}

static void test_allreduce(MPI_Comm comm, int t, int count, MPI_Op op, int inplace,
                           const char *what)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int *s = malloc(sizeof(int) * (size_t)(count + 1));
    int *r = malloc(sizeof(int) * (size_t)(count + 1));
    double *ds = malloc(sizeof(double) * (size_t)(count + 1));
    double *dr = malloc(sizeof(double) * (size_t)(count + 1));
    for (int k = 0; k < count; k++) {
        s[k] = (int)val(me, k, t);
        ds[k] = (double)val(me, k, t);
        r[k] = -77;
    }
    if (op == MPI_PROD && n > 8)
        op = MPI_SUM; /* keep it exact */
    if (inplace) {
        memcpy(r, s, sizeof(int) * (size_t)count);
        MPI_Allreduce(MPI_IN_PLACE, r, count, MPI_INT, op, comm);
    } else {
        MPI_Allreduce(s, r, count, MPI_INT, op, comm);
    }
    for (int k = 0; k < count; k++)
        CHECK(r[k] == expect(n, k, t, op), "%s allreduce int count %d k %d: %d != %ld",
              what, count, k, r[k], expect(n, k, t, op));
    if (op != MPI_BAND) {
        MPI_Allreduce(ds, dr, count, MPI_DOUBLE, op, comm);
        for (int k = 0; k < count; k++)
            CHECK(dr[k] == (double)expect(n, k, t, op),
                  "%s allreduce double count %d k %d: %g", what, count, k, dr[k]);
    }
    free(s);
    free(r);
    free(ds);
    free(dr);
}

static void test_reduce(MPI_Comm comm, int t, int count, int root, int inplace,
                        const char *what)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    long long *s = malloc(sizeof(long long) * (size_t)(count + 1));
    long long *r = malloc(sizeof(long long) * (size_t)(count + 1));
    for (int k = 0; k < count; k++) {
        s[k] = val(me, k, t);
        r[k] = me == root && inplace ? s[k] : -99;
    }
    if (inplace && me == root)
        MPI_Reduce(MPI_IN_PLACE, r, count, MPI_LONG_LONG, MPI_SUM, root, comm);
    else
        MPI_Reduce(s, r, count, MPI_LONG_LONG, MPI_SUM, root, comm);
    for (int k = 0; k < count; k++) {
        if (me == root)
            CHECK(r[k] == expect(n, k, t, MPI_SUM), "%s reduce count %d root %d k %d",
                  what, count, root, k);
        else
            CHECK(r[k] == -99, "%s reduce: non-root %d's receive buffer changed", what,
                  me);
    }
    free(s);
    free(r);
}

static void test_bcast(MPI_Comm comm, int t, int count, int root, const char *what)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int *b = malloc(sizeof(int) * 2 * (size_t)(count + 1));
    if (me == root) { /* every other int of a 2*count array, through a vector type */
        MPI_Datatype v;
        MPI_Type_vector(count, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
        for (int k = 0; k < 2 * count; k++)
            b[k] = k % 2 ? -1 : (int)val(root, k / 2, t) + k;
        MPI_Bcast(b, count ? 1 : 0, v, root, comm);
        MPI_Type_free(&v);
    } else {
        for (int k = 0; k < count; k++)
            b[k] = -5;
        MPI_Bcast(b, count, MPI_INT, root, comm);
        for (int k = 0; k < count; k++)
            CHECK(b[k] == (int)val(root, k, t) + 2 * k, "%s bcast count %d root %d k %d",
                  what, count, root, k);
    }
    free(b);
}

static void test_pair(MPI_Comm comm, const char *what)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
    MPI_Type_commit(&pair);
    double s[6], r[6];
    for (int k = 0; k < 6; k++)
        s[k] = val(me, k, 9);
    MPI_Allreduce(s, r, 3, pair, MPI_SUM, comm);
    for (int k = 0; k < 6; k++)
        CHECK(r[k] == (double)expect(n, k, 9, MPI_SUM), "%s pair allreduce k %d", what,
              k);
    MPI_Type_free(&pair);
}

static void suite(MPI_Comm comm, int t, const char *what)
{
    static const int counts[] = {1, 3, 1000, 4097, 5000, 20000};
    static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_BAND, MPI_PROD};
    int n;
    MPI_Comm_size(comm, &n);
    for (int i = 0; i < 6; i++) {
        test_allreduce(comm, t + i, counts[i], ops[(t + i) % 5], i % 2, what);
        test_reduce(comm, t + i, counts[i], (t + i) % n, (t + i) % 3 == 0, what);
        test_bcast(comm, t + i, counts[i], (t * 3 + i) % n, what);
    }
    test_bcast(comm, t, 0, 0, what);
    test_allreduce(comm, t, 0, MPI_SUM, 0, what);
    test_pair(comm, what);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half, rev, dup, many[40];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int rounds = size > 16 ? 1 : 3;
    for (int t = 0; t < rounds; t++) {
        suite(MPI_COMM_WORLD, t, "world");
        suite(half, t + 1, "half");
        suite(rev, t + 2, "rev");
        suite(dup, t + 3, "dup");
    }
    /* more communicators than slots: some use p2p, all must agree */
    int nmany = size > 16 ? 12 : 40;
    for (int i = 0; i < nmany; i++)
        MPI_Comm_dup(i % 2 ? half : MPI_COMM_WORLD, &many[i]);
    for (int i = 0; i < nmany; i++) {
        int v = rank + i, s = -1, n;
        MPI_Comm_size(many[i], &n);
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, many[i]);
        int me;
        MPI_Comm_rank(many[i], &me);
        long want = 0;
        for (int r = 0; r < size; r++)
            if (!(i % 2) || r % 2 == rank % 2)
                want += r + i;
        CHECK(s == want, "dup %d allreduce %d != %ld", i, s, want);
        MPI_Barrier(many[i]);
        test_bcast(many[i], i, 33, i % n, "many");
    }
    for (int i = nmany - 1; i >= 0; i--)
        test_allreduce(many[i], i, 17, MPI_MAX, i % 2, "many");
    /* nonblocking (p2p) collectives in flight around blocking (shm) ones */
    for (int it = 0; it < 20; it++) {
        MPI_Request rq[3];
        int a = rank, asum = -1, bb[4] = {0, 0, 0, 0};
        MPI_Iallreduce(&a, &asum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        if (rank == it % size)
            for (int k = 0; k < 4; k++)
                bb[k] = it * 10 + k;
        MPI_Ibcast(bb, 4, MPI_INT, it % size, dup, &rq[1]);
        MPI_Ibarrier(half, &rq[2]);
        test_allreduce(MPI_COMM_WORLD, it, 100, MPI_SUM, it % 2, "mixed");
        MPI_Barrier(dup);
        int hn;
        MPI_Comm_size(half, &hn);
        test_bcast(half, it, 5000, it % hn, "mixed");
        MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
        CHECK(asum == size * (size - 1) / 2, "mixed iallreduce %d", asum);
        for (int k = 0; k < 4; k++)
            CHECK(bb[k] == it * 10 + k, "mixed ibcast k %d: %d", k, bb[k]);
    }
    for (int i = 0; i < nmany; i++)
        MPI_Comm_free(&many[i]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "Found %d errors\n" : "No Errors\n", total);
    MPI_Finalize();
    return 0;
}
