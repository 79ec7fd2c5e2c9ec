/*
 * coll_shm_large.c - the large-vector collectives of the shared segment (the pipelined
 *   Allreduce/Reduce/Reduce_scatter(_block)/Allgather(v) of mpi/coll/shmcoll.c) against
 *   a serial reference: odd counts that leave short and empty pieces, vectors of many
 *   rounds, MPI_IN_PLACE, blocks of different sizes (some empty), other send and
 *   receive types of the same signature, a strided type, a non-commutative user op
 *   (p2p fallback, rank order), COMM_WORLD and a reversed split.  Also large Bcasts
 *   (the single-copy path) with differing send and receive types, and Allgathers back
 *   to back mixed with other collectives (the one-round path alternates buffer
 *   halves and needs a round before any other collective).  Run with small
 *   LOOM_MPI_SHM_COLL_BUF too (many rounds, pieces of a few elements).
 *   Every rank computes the expected values itself (small integers: exact in any
 *   order).  Rank 0 prints "No Errors".
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

static int val(int r, long k, int t)
{
    return (int)((r * 7 + k * 3 + t) % 11) - 3;
}

static int pm1(int r, long k, int t) /* -1 or 1: products stay exact */
{
    return ((r + k + t) % 3) ? 1 : -1;
}

static long expect(int n, long k, int t, MPI_Op op)
{
    long acc = op == MPI_PROD ? pm1(0, k, t) : val(0, k, t);
    for (int r = 1; r < n; r++) {
        long v = op == MPI_PROD ? pm1(r, k, t) : val(r, k, t);
        if (op == MPI_SUM)
            acc += v;
        else if (op == MPI_MAX)
            acc = v > acc ? v : acc;
        else if (op == MPI_PROD)
            acc *= v;
    }
    return acc;
}

/* Allreduce (root < 0) or Reduce of count elements (int, long or double) */
static void t_reduce(MPI_Comm comm, int t, int count, MPI_Datatype dt, MPI_Op op,
                     int root, int inplace)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t es = dt == MPI_INT ? sizeof(int) : dt == MPI_LONG ? sizeof(long) : sizeof(double);
    char *s = malloc((size_t)count * es + 1), *r = malloc((size_t)count * es + 1);
    for (long k = 0; k < count; k++) {
        long v = op == MPI_PROD ? pm1(me, k, t) : val(me, k, t);
        if (dt == MPI_INT)
            ((int *)s)[k] = (int)v;
        else if (dt == MPI_LONG)
            ((long *)s)[k] = v;
        else
            ((double *)s)[k] = (double)v;
    }
    int mine = root < 0 || root == me;
    if (inplace && mine)
        memcpy(r, s, (size_t)count * es);
    const void *sb = inplace && mine ? MPI_IN_PLACE : s;
    if (root < 0)
        MPI_Allreduce(sb, r, count, dt, op, comm);
    else
        MPI_Reduce(sb, r, count, dt, op, root, comm);
    for (long k = 0; mine && k < count; k++) {
        long want = expect(n, k, t, op), got;
        if (dt == MPI_INT)
            got = ((int *)r)[k];
        else if (dt == MPI_LONG)
            got = ((long *)r)[k];
        else
            got = (long)((double *)r)[k];
        if (got != want) {
            CHECK(0, "%s t=%d count=%d root=%d inplace=%d n=%d: [%ld] = %ld, want %ld",
                  root < 0 ? "allreduce" : "reduce", t, count, root, inplace, n, k, got,
                  want);
            break;
        }
    }
    free(s);
    free(r);
}

/* Reduce_scatter with rcounts[i] = base + (i % 3 == 1 ? extra : 0) (or _block) */
static void t_redscat(MPI_Comm comm, int t, int base, int extra, int block, int inplace)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *rc = malloc((size_t)n * sizeof(int)), total = 0, off = 0;
    for (int i = 0; i < n; i++) {
        rc[i] = block ? base : base + (i % 3 == 1 ? extra : 0);
        if (i < me)
            off += rc[i];
        total += rc[i];
    }
    int *s = malloc(((size_t)total + 1) * sizeof(int)), *r = malloc(((size_t)total + 1) * sizeof(int));
    for (long k = 0; k < total; k++)
        s[k] = val(me, k, t);
    if (inplace)
        memcpy(r, s, (size_t)total * sizeof(int));
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (block)
        MPI_Reduce_scatter_block(sb, r, base, MPI_INT, MPI_SUM, comm);
    else
        MPI_Reduce_scatter(sb, r, rc, MPI_INT, MPI_SUM, comm);
    for (long k = 0; k < rc[me]; k++)
        if (r[k] != expect(n, off + k, t, MPI_SUM)) {
            CHECK(0, "reduce_scatter%s t=%d base=%d extra=%d inplace=%d n=%d me=%d: [%ld] = %d, want %ld",
                  block ? "_block" : "", t, base, extra, inplace, n, me, k, r[k],
                  expect(n, off + k, t, MPI_SUM));
            break;
        }
    free(rc);
    free(s);
    free(r);
}

/* Reduce_scatter_block of per pairs of ints (a derived type, contiguous(2)), in place
 * when inplace */
static void t_redscat_pair(MPI_Comm comm, int t, int per, int inplace)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    long total = 2L * per * n;
    int *s = malloc(((size_t)total + 1) * sizeof(int)),
        *r = malloc(((size_t)total + 1) * sizeof(int));
    for (long k = 0; k < total; k++) {
        s[k] = val(me, k, t);
        r[k] = inplace ? s[k] : -77;
    }
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, per, pair, MPI_SUM, comm);
    MPI_Type_free(&pair);
    for (long k = 0; k < 2L * per; k++)
        if (r[k] != expect(n, 2L * me * per + k, t, MPI_SUM)) {
            CHECK(0,
                  "reduce_scatter_block pairs t=%d per=%d inplace=%d n=%d me=%d: [%ld] = "
                  "%d, want %ld",
                  t, per, inplace, n, me, k, r[k],
                  expect(n, 2L * me * per + k, t, MPI_SUM));
            break;
        }
    free(s);
    free(r);
}

/* Allgather of rc ints per rank: receive as pairs when rc is even, or Allgatherv with
 * block i of rc + (i % 2) * extra ints placed in reverse rank order */
static void t_allgather(MPI_Comm comm, int t, int rc, int extra, int v, int inplace)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *cnt = malloc(2 * (size_t)n * sizeof(int)), *dsp = cnt + n, total = 0;
    for (int i = n - 1; i >= 0; i--) {
        cnt[i] = v ? rc + (i % 2) * extra : rc;
        dsp[i] = v ? total : i * rc;
        total += cnt[i];
    }
    int *s = malloc(((size_t)cnt[me] + 1) * sizeof(int)), *r = malloc(((size_t)total + 1) * sizeof(int));
    for (long k = 0; k < cnt[me]; k++)
        s[k] = val(me, k, t);
    for (long k = 0; k < total; k++)
        r[k] = -77;
    if (inplace)
        memcpy(r + dsp[me], s, (size_t)cnt[me] * sizeof(int));
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (v) {
        MPI_Allgatherv(sb, cnt[me], MPI_INT, r, cnt, dsp, MPI_INT, comm);
    } else if (rc % 2 == 0 && !inplace) {
        MPI_Datatype pair;
        MPI_Type_contiguous(2, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        MPI_Allgather(sb, rc, MPI_INT, r, rc / 2, pair, comm);
        MPI_Type_free(&pair);
    } else {
        MPI_Allgather(sb, rc, MPI_INT, r, rc, MPI_INT, comm);
    }
    for (int i = 0; i < n; i++)
        for (long k = 0; k < cnt[i]; k++)
            if (r[dsp[i] + k] != val(i, k, t)) {
                CHECK(0, "allgather%s t=%d rc=%d inplace=%d n=%d me=%d: block %d [%ld] = %d, want %d",
                      v ? "v" : "", t, rc, inplace, n, me, i, k, r[dsp[i] + k], val(i, k, t));
                i = n;
                break;
            }
    free(cnt);
    free(s);
    free(r);
}

/* a strided send type (every other int) gathered into plain ints */
static void t_allgather_strided(MPI_Comm comm, int t, int rc)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *s = malloc(2 * (size_t)rc * sizeof(int)), *r = malloc((size_t)rc * n * sizeof(int));
    for (long k = 0; k < rc; k++) {
        s[2 * k] = val(me, k, t);
        s[2 * k + 1] = -1;
    }
    MPI_Datatype vec;
    MPI_Type_vector(rc, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Allgather(s, 1, vec, r, rc, MPI_INT, comm);
    MPI_Type_free(&vec);
    for (int i = 0; i < n; i++)
        for (long k = 0; k < rc; k++)
            if (r[(long)i * rc + k] != val(i, k, t)) {
                CHECK(0, "allgather strided t=%d rc=%d: block %d [%ld] = %d, want %d", t, rc,
                      i, k, r[(long)i * rc + k], val(i, k, t));
                i = n;
                break;
            }
    free(s);
    free(r);
}

/* Bcast of count ints from root: kind 0 all plain ints; 1 the root sends plain ints,
 * the others receive into every other int of a buffer twice as long (a vector type:
 * packed on their side); 2 the root sends from a strided buffer, the others receive
 * pairs (contiguous(2)) when count is even, else plain ints */
static void t_bcast(MPI_Comm comm, int t, int count, int root, int kind)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *b = malloc(2 * ((size_t)count + 1) * sizeof(int));
    for (long k = 0; k < 2 * (long)count + 2; k++)
        b[k] = -77;
    MPI_Datatype vec = MPI_DATATYPE_NULL, pair = MPI_DATATYPE_NULL;
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int strided = (kind == 1 && me != root) || (kind == 2 && me == root);
    if (me == root)
        for (long k = 0; k < count; k++)
            b[strided ? 2 * k : k] = val(root, k, t);
    if (strided)
        MPI_Bcast(b, 1, vec, root, comm);
    else if (kind == 2 && count % 2 == 0)
        MPI_Bcast(b, count / 2, pair, root, comm);
    else
        MPI_Bcast(b, count, MPI_INT, root, comm);
    for (long k = 0; k < count; k++) {
        int got = b[strided ? 2 * k : k];
        if (got != val(root, k, t)) {
            CHECK(0,
                  "bcast t=%d count=%d root=%d kind=%d n=%d me=%d: [%ld] = %d, want %d",
                  t, count, root, kind, n, me, k, got, val(root, k, t));
            break;
        }
    }
    if (strided && count > 0 && b[1] != -77 && me != root)
        CHECK(0, "bcast kind=%d: gap of the strided buffer written (%d)", kind, b[1]);
    MPI_Type_free(&vec);
    MPI_Type_free(&pair);
    free(b);
}

/* non-commutative: an element (x, y) is the affine map z -> x * z + y (mod 1009);
 * a op b = "a then b" = (a.x * b.x, a.y * b.x + b.y); the reference composes in rank
 * order */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        int ax = a[2 * i], ay = a[2 * i + 1], bx = b[2 * i], by = b[2 * i + 1];
        b[2 * i] = (ax * bx) % 1009;
        b[2 * i + 1] = (ay * bx + by) % 1009;
    }
}

static void t_noncomm(MPI_Comm comm, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Datatype pr;
    MPI_Type_contiguous(2, MPI_INT, &pr);
    MPI_Type_commit(&pr);
    MPI_Op op;
    MPI_Op_create(affine, 0, &op);
    int *s = malloc(2 * (size_t)count * sizeof(int)), *r = malloc(2 * (size_t)count * sizeof(int));
    for (long k = 0; k < count; k++) {
        s[2 * k] = (int)((me + k) % 5) + 1;
        s[2 * k + 1] = (int)((me * 3 + k) % 7);
    }
    MPI_Allreduce(s, r, count, pr, op, comm);
    for (long k = 0; k < count; k++) {
        int x = (int)(k % 5) + 1, y = (int)(k % 7); /* rank 0 */
        for (int q = 1; q < n; q++) {
            int bx = (int)((q + k) % 5) + 1, by = (int)((q * 3 + k) % 7);
            y = (y * bx + by) % 1009;
            x = (x * bx) % 1009;
        }
        if (r[2 * k] != x || r[2 * k + 1] != y) {
            CHECK(0, "noncommutative allreduce count=%d: [%ld] = (%d,%d), want (%d,%d)",
                  count, k, r[2 * k], r[2 * k + 1], x, y);
            break;
        }
    }
    MPI_Op_free(&op);
    MPI_Type_free(&pr);
    free(s);
    free(r);
}

/* Allgathers back to back with Allreduces and Bcasts between some of them: each
 * call's buffers must hold what that call was given whoever is still reading the
 * previous call's blocks */
static void t_mix(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    for (int it = 0; it < 24; it++) {
        t_allgather(comm, it, 300 + it, 0, 0, it & 1);
        if (it % 3 == 0)
            t_reduce(comm, it, 2000 + it, MPI_INT, MPI_SUM, -1, 0);
        if (it % 3 == 1)
            t_bcast(comm, it, 300 + it, (it % 2) % n, 0);
    }
}

static void suite(MPI_Comm comm, int big)
{
    static const int counts[] = {1, 7, 4099, 20011, 70001};
    int n;
    MPI_Comm_size(comm, &n);
    for (int i = 0; i < 5; i++) {
        int c = counts[i];
        if (c > big)
            c = big + 3;
        t_reduce(comm, i, c, MPI_INT, MPI_SUM, -1, 0);
        t_reduce(comm, i + 1, c, MPI_DOUBLE, MPI_MAX, -1, 1);
        t_reduce(comm, i + 2, c, MPI_LONG, MPI_PROD, -1, i & 1);
        t_reduce(comm, i + 3, c, MPI_INT, MPI_SUM, n - 1, 0);
        t_reduce(comm, i + 4, c, MPI_DOUBLE, MPI_SUM, 0, 1);
        int per = c / n + 1;
        t_redscat(comm, i, per, 0, 1, 0);
        t_redscat(comm, i + 1, per, 0, 1, 1);
        t_redscat(comm, i + 2, per / 2, per, 0, i & 1);
        t_redscat(comm, i + 3, 0, per, 0, 0); /* two thirds of the blocks empty */
        t_redscat_pair(comm, i, per / 2 + 1, i & 1);
        t_allgather(comm, i, per, 0, 0, 0);
        t_allgather(comm, i + 1, per + (per & 1), 0, 0, 0); /* pairs */
        t_allgather(comm, i + 2, per, 0, 0, 1);
        t_allgather(comm, i + 3, per / 2, per, 1, i & 1);
        t_allgather_strided(comm, i, per);
        t_bcast(comm, i, c, 0, i % 3);
        t_bcast(comm, i + 1, c, n - 1, (i + 1) % 3);
        t_bcast(comm, i + 2, c + 1, n / 2, (i + 2) % 3);
    }
    for (int k = 0; k < 3; k++) /* back to back: consecutive calls on one slot */
        t_bcast(comm, k, big, k % n, k);
    t_mix(comm);
    t_noncomm(comm, big / 2 + 1);
}

int main(int argc, char **argv)
{
    int me, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    /* keep a line within a few seconds on 2 cores: less data with many ranks */
    int big = n <= 8 ? 70001 : 20011;
    const char *buf = getenv("LOOM_MPI_SHM_COLL_BUF"); /* small buffers: many rounds */
    if (buf && atoi(buf) > 0 && big > atoi(buf) * 4)
        big = atoi(buf) * 4;
    suite(MPI_COMM_WORLD, big);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rev);
    suite(rev, big / 2);
    MPI_Comm_free(&rev);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        if (all)
            printf("Found %d errors\n", all);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
