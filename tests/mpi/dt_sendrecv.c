/*
 * dt_sendrecv.c - derived datatypes on the wire between ranks whose type maps differ
 *   but whose type signatures match: a matrix column received as a contiguous array
 *   and back, a negative-stride vector (reversal), an array of structs with gaps
 *   received into three separate arrays (struct of absolute addresses + MPI_BOTTOM),
 *   pair types against a user struct type, large pair-type messages (their padding
 *   stays off the wire on every path: rendezvous, zero copy), a resized type, a large
 *   (4 MiB) strided message fragmented across many cells, an unexpected (buffered)
 *   message, and MPI_Type_free of a type while a send using it is pending.
 *   Ranks pair up (r, r^1); with an odd count the last rank talks to itself.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int rank;

#define N 64
#define BIG (1 << 19) /* doubles in the large strided message (4 MiB packed) */

struct gappy {
    char c;
    double d;
    int i;
};

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    /* "sender" role: the lower rank of the pair (or both roles when alone) */
    int sender = rank <= peer, receiver = rank >= peer;
    MPI_Status st;
    int cnt;

    /* 1. matrix column -> contiguous, and contiguous -> column */
    static int m[N * N], col[N], m2[N * N];
    for (int i = 0; i < N * N; i++)
        m[i] = i;
    MPI_Datatype colt;
    MPI_Type_vector(N, 1, N, MPI_INT, &colt);
    MPI_Type_commit(&colt);
    MPI_Request rq = MPI_REQUEST_NULL;
    if (receiver)
        MPI_Irecv(col, N, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq);
    if (sender)
        MPI_Send(m + 5, 1, colt, peer, 1, MPI_COMM_WORLD);
    if (receiver) {
        MPI_Wait(&rq, &st);
        MPI_Get_count(&st, colt, &cnt);
        TEST_ASSERT(cnt == 1);
        for (int i = 0; i < N; i++)
            TEST_ASSERT(col[i] == 5 + N * i);
        memset(m2, 0, sizeof(m2));
        MPI_Irecv(m2 + 7, 1, colt, peer, 2, MPI_COMM_WORLD, &rq);
    }
    if (sender)
        MPI_Send(m, N, MPI_INT, peer, 2, MPI_COMM_WORLD);
    if (receiver) {
        MPI_Wait(&rq, &st);
        for (int i = 0; i < N * N; i++)
            TEST_ASSERT(m2[i] == (i % N == 7 ? i / N : 0));
    }

    /* 2. negative stride: the receiver gets the array reversed */
    int fwd[N], rev[N];
    for (int i = 0; i < N; i++)
        fwd[i] = 1000 + i;
    MPI_Datatype revt;
    MPI_Type_vector(N, 1, -1, MPI_INT, &revt);
    MPI_Type_commit(&revt);
    if (receiver)
        MPI_Irecv(rev, N, MPI_INT, peer, 3, MPI_COMM_WORLD, &rq);
    if (sender)
        MPI_Send(fwd + N - 1, 1, revt, peer, 3, MPI_COMM_WORLD);
    if (receiver) {
        MPI_Wait(&rq, &st);
        for (int i = 0; i < N; i++)
            TEST_ASSERT(rev[i] == 1000 + N - 1 - i);
    }

    /* 3. structs with gaps -> three separate arrays through absolute addresses */
    struct gappy g[N];
    char cs[N];
    double ds[N];
    int is[N];
    for (int i = 0; i < N; i++) {
        g[i].c = (char)(i + 1);
        g[i].d = i * 0.25;
        g[i].i = -i;
    }
    int bl[3] = {1, 1, 1};
    MPI_Aint sd[3] = {offsetof(struct gappy, c), offsetof(struct gappy, d),
                      offsetof(struct gappy, i)};
    MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, gt, sep;
    MPI_Type_create_struct(3, bl, sd, sty, &gt);
    MPI_Type_commit(&gt);
    int sbl[3 * N];
    MPI_Aint sad[3 * N];
    MPI_Datatype sst[3 * N];
    for (int i = 0; i < N; i++) {
        MPI_Get_address(&cs[i], &sad[3 * i]);
        MPI_Get_address(&ds[i], &sad[3 * i + 1]);
        MPI_Get_address(&is[i], &sad[3 * i + 2]);
        sst[3 * i] = MPI_CHAR;
        sst[3 * i + 1] = MPI_DOUBLE;
        sst[3 * i + 2] = MPI_INT;
        sbl[3 * i] = sbl[3 * i + 1] = sbl[3 * i + 2] = 1;
    }
    MPI_Type_create_struct(3 * N, sbl, sad, sst, &sep);
    MPI_Type_commit(&sep);
    memset(cs, 0, sizeof(cs));
    memset(ds, 0, sizeof(ds));
    memset(is, 0, sizeof(is));
    if (receiver)
        MPI_Irecv(MPI_BOTTOM, 1, sep, peer, 4, MPI_COMM_WORLD, &rq);
    if (sender)
        MPI_Send(g, N, gt, peer, 4, MPI_COMM_WORLD);
    if (receiver) {
        MPI_Wait(&rq, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        TEST_ASSERT(cnt == 13 * N);
        for (int i = 0; i < N; i++)
            TEST_ASSERT(cs[i] == (char)(i + 1) && ds[i] == i * 0.25 && is[i] == -i);
    }

    /* 4. MPI_DOUBLE_INT against a user struct type with the same signature */
    struct {
        double d;
        int i;
    } pr[N], pr2[N];
    for (int i = 0; i < N; i++) {
        pr[i].d = i + 0.5;
        pr[i].i = i;
    }
    memset(pr2, 0, sizeof(pr2));
    MPI_Aint pd[2] = {offsetof(__typeof__(pr[0]), d), offsetof(__typeof__(pr[0]), i)};
    MPI_Datatype pty[2] = {MPI_DOUBLE, MPI_INT}, pt;
    int pbl[2] = {1, 1};
    MPI_Type_create_struct(2, pbl, pd, pty, &pt);
    MPI_Type_commit(&pt);
    if (receiver)
        MPI_Irecv(pr2, N, pt, peer, 5, MPI_COMM_WORLD, &rq);
    if (sender)
        MPI_Send(pr, N, MPI_DOUBLE_INT, peer, 5, MPI_COMM_WORLD);
    if (receiver) {
        MPI_Wait(&rq, &st);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt);
        TEST_ASSERT(cnt == N);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        TEST_ASSERT(cnt == 12 * N); /* no padding on the wire */
        for (int i = 0; i < N; i++)
            TEST_ASSERT(pr2[i].d == i + 0.5 && pr2[i].i == i);
    }

    /* 4b. large pair-type messages, whose buffers hold padding that the wire does not:
     *     past the shm eager limit (rendezvous), past the TCP zero-copy threshold, and
     *     one that is long everywhere */
    static const int pair_n[] = {3000, 6000, 100000};
    for (int k = 0; k < 3; k++) {
        int n = pair_n[k], bad = 0;
        __typeof__(pr[0]) *pa = calloc((size_t)n, sizeof(*pa));
        if (sender && !receiver)
            for (int i = 0; i < n; i++) {
                pa[i].d = i + 0.25;
                pa[i].i = -i;
            }
        if (receiver && !sender)
            MPI_Recv(pa, n, MPI_DOUBLE_INT, peer, 8, MPI_COMM_WORLD, &st);
        else if (sender && !receiver)
            MPI_Send(pa, n, MPI_DOUBLE_INT, peer, 8, MPI_COMM_WORLD);
        if (receiver && !sender) {
            MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt);
            TEST_ASSERT(cnt == n);
            for (int i = 0; i < n; i++)
                bad += pa[i].d != i + 0.25 || pa[i].i != -i;
            TEST_ASSERT_MSG(bad == 0, "%d of %d MPI_DOUBLE_INT elements wrong", bad, n);
        }
        free(pa);
    }

    /* 5. resized: every other int, received contiguous */
    MPI_Datatype every2;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2);
    MPI_Type_commit(&every2);
    int half[N / 2];
    if (receiver)
        MPI_Irecv(half, N / 2, MPI_INT, peer, 6, MPI_COMM_WORLD, &rq);
    if (sender)
        MPI_Send(fwd, N / 2, every2, peer, 6, MPI_COMM_WORLD);
    if (receiver) {
        MPI_Wait(&rq, &st);
        for (int i = 0; i < N / 2; i++)
            TEST_ASSERT(half[i] == 1000 + 2 * i);
    }

    /* 6. large strided message both ways (many fragments at arbitrary offsets), the
     *    receiver using a different map: contiguous pairs of doubles spaced by 3 */
    double *big = malloc(2 * BIG * sizeof(double));
    double *rbig = calloc(3 * BIG / 2, sizeof(double));
    for (int i = 0; i < 2 * BIG; i++)
        big[i] = i;
    MPI_Datatype evens, pairs3;
    MPI_Type_vector(BIG, 1, 2, MPI_DOUBLE, &evens);      /* big[0], big[2], ... */
    MPI_Type_vector(BIG / 2, 2, 3, MPI_DOUBLE, &pairs3); /* r[0],r[1], r[3],r[4], ... */
    MPI_Type_commit(&evens);
    MPI_Type_commit(&pairs3);
    if (receiver)
        MPI_Irecv(rbig, 1, pairs3, peer, 7, MPI_COMM_WORLD, &rq);
    if (sender) {
        /* 7. Type_free while the send is pending */
        MPI_Request sr;
        MPI_Datatype tmp;
        MPI_Type_dup(evens, &tmp);
        MPI_Isend(big, 1, tmp, peer, 7, MPI_COMM_WORLD, &sr);
        MPI_Type_free(&tmp);
        if (receiver)
            MPI_Wait(&rq, &st);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
    }
    if (receiver) {
        MPI_Wait(&rq, &st);
        int bad = 0;
        for (int k = 0; k < BIG; k++) {
            double want = 2.0 * k, got = rbig[(k / 2) * 3 + k % 2];
            bad += got != want;
        }
        for (int k = 0; k < BIG / 2; k++)
            bad += rbig[3 * k + 2] != 0.0;
        TEST_ASSERT(bad == 0);
    }

    /* 8. unexpected: the message is buffered before the receive is posted */
    if (sender)
        MPI_Isend(m + 9, 1, colt, peer, 8, MPI_COMM_WORLD, &rq);
    MPI_Barrier(MPI_COMM_WORLD);
    if (receiver) {
        MPI_Status st2;
        memset(m2, 0, sizeof(m2));
        MPI_Recv(m2 + 9, 1, colt, peer, 8, MPI_COMM_WORLD, &st2);
        for (int i = 0; i < N * N; i++)
            TEST_ASSERT(m2[i] == (i % N == 9 ? i : 0));
    }
    if (sender)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);

    /* 9. Sendrecv with derived types on both sides (ring, so every rank sends) */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    memset(col, 0, sizeof(col));
    MPI_Sendrecv(m + rank % N, 1, colt, right, 9, col, N, MPI_INT, left, 9,
                 MPI_COMM_WORLD, &st);
    for (int i = 0; i < N; i++)
        TEST_ASSERT(col[i] == left % N + N * i);

    MPI_Datatype all[] = {colt, revt, gt, sep, pt, every2, evens, pairs3};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        MPI_Type_free(&all[i]);
    free(big);
    free(rbig);

    return test_finish();
}
