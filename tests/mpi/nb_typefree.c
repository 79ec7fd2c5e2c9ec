/*
 * nb_typefree.c - datatypes freed while an operation that names them is still to run
 *   or to complete (MPI-3.1 4.1.9: communication using a freed type completes
 *   normally), beyond the nonblocking collectives of coll_nb_typefree.c:
 *   - persistent p2p: Send_init/Recv_init of derived types freed before every Start;
 *   - w-form persistent collectives: Alltoallw_init and Neighbor_alltoallw_init with
 *     arrays of derived types, the types freed after *_init (through copies of the
 *     handles, and for the receive side through the array elements themselves, which
 *     MPI_Type_free sets to MPI_DATATYPE_NULL), started three times;
 *   - request-based and queued RMA: Rput, Rget, Raccumulate, Rget_accumulate and Get
 *     with derived origin types freed right after the call, before the wait or flush;
 *   - nonblocking MPI-IO: iwrite_at, iread_at, iwrite_all, iread_all with a derived
 *     memory type freed right after the call.
 *   After every free, unrelated types are created and committed (they may take the
 *   freed handle's slot), and every element is checked.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define N 48
#define CHURN 4

static int rank, size;

static void churn(MPI_Datatype *keep)
{
    for (int i = 0; i < CHURN; i++) {
        MPI_Type_contiguous(5 + i, MPI_SHORT, &keep[i]);
        MPI_Type_commit(&keep[i]);
    }
}

static void unchurn(MPI_Datatype *keep)
{
    for (int i = 0; i < CHURN; i++)
        MPI_Type_free(&keep[i]);
}

/* every other int of 2n: n elements */
static MPI_Datatype strided(int n)
{
    MPI_Datatype t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype contig(int n)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static int v(int who, int round, int i)
{
    return who * 100000 + round * 1000 + i;
}

static void persistent_p2p(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sb[2 * N], rb[N];
    MPI_Datatype st = strided(N), rt = contig(N), keep[CHURN];
    MPI_Request rq[2];
    MPI_Send_init(sb, 1, st, right, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Recv_init(rb, 1, rt, left, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    churn(keep);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 2 * N; i++)
            sb[i] = i % 2 ? -5 : v(rank, it, i / 2);
        memset(rb, 0xff, sizeof rb);
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            if (rb[i] != v(left, it, i)) {
                TEST_ASSERT_MSG(0, "persistent p2p round %d [%d]: %d", it, i, rb[i]);
                break;
            }
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    unchurn(keep);
}

/* Alltoallw_init: to rank j, n_j = 1 + j % 4 + rank elements every other int of my
 * block j; from rank j, its n into a contiguous type. */
static void alltoallw_init(void)
{
    int *scounts = calloc((size_t)size, sizeof(int)), *sdispls = calloc((size_t)size, sizeof(int));
    int *rcounts = calloc((size_t)size, sizeof(int)), *rdispls = calloc((size_t)size, sizeof(int));
    MPI_Datatype *sdts = calloc((size_t)size, sizeof(MPI_Datatype));
    MPI_Datatype *rdts = calloc((size_t)size, sizeof(MPI_Datatype));
    MPI_Datatype *scopy = calloc((size_t)size, sizeof(MPI_Datatype)), keep[CHURN];
    int *sb = calloc((size_t)size * 2 * N, sizeof(int)), *rb = calloc((size_t)size * N, sizeof(int));
    for (int j = 0; j < size; j++) {
        int ns = 1 + j % 4 + rank % 8, nr = 1 + rank % 4 + j % 8;
        scounts[j] = 1;
        sdispls[j] = j * 2 * N * (int)sizeof(int);
        scopy[j] = sdts[j] = strided(ns);
        rcounts[j] = 1;
        rdispls[j] = j * N * (int)sizeof(int);
        rdts[j] = contig(nr);
    }
    MPI_Request rq;
    MPI_Alltoallw_init(sb, scounts, sdispls, sdts, rb, rcounts, rdispls, rdts, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &rq);
    for (int j = 0; j < size; j++) {
        MPI_Type_free(&scopy[j]); /* a copy of the handle: the array is unchanged */
        MPI_Type_free(&rdts[j]);  /* the array element itself: now MPI_DATATYPE_NULL */
    }
    churn(keep);
    for (int it = 0; it < 3; it++) {
        for (int j = 0; j < size; j++)
            for (int i = 0; i < 2 * N; i++)
                sb[j * 2 * N + i] = i % 2 ? -5 : v(rank, it, j * N + i / 2);
        for (int i = 0; i < size * N; i++)
            rb[i] = -1;
        MPI_Start(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int j = 0; j < size; j++) {
            int nr = 1 + rank % 4 + j % 8;
            for (int i = 0; i < N; i++) {
                int want = i < nr ? v(j, it, rank * N + i) : -1;
                if (rb[j * N + i] != want) {
                    TEST_ASSERT_MSG(0, "Alltoallw_init round %d from %d [%d]: %d, want %d",
                                    it, j, i, rb[j * N + i], want);
                    break;
                }
            }
        }
    }
    MPI_Request_free(&rq);
    unchurn(keep);
    free(scounts), free(sdispls), free(rcounts), free(rdispls);
    free(sdts), free(rdts), free(scopy), free(sb), free(rb);
}

/* Neighbor_alltoallw_init on a periodic ring: to the left neighbour k elements, to the
 * right 2k (strided), received contiguously. */
static void neighbor_alltoallw_init(void)
{
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int r;
    MPI_Comm_rank(ring, &r);
    int left, right;
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    const int k = 7;
    int sb[2][4 * N], rb[2][N], scounts[2] = {1, 1}, rcounts[2] = {1, 1};
    MPI_Aint sdispls[2] = {0, sizeof sb[0]}, rdispls[2] = {0, sizeof rb[0]};
    /* order: -1 neighbour (left) then +1 (right) */
    MPI_Datatype sdts[2] = {strided(k), strided(2 * k)};
    MPI_Datatype rdts[2] = {contig(2 * k), contig(k)}; /* left sent me 2k, right k */
    MPI_Datatype scopy[2] = {sdts[0], sdts[1]}, keep[CHURN];
    MPI_Request rq;
    MPI_Neighbor_alltoallw_init(sb, scounts, sdispls, sdts, rb, rcounts, rdispls, rdts, ring,
                                MPI_INFO_NULL, &rq);
    for (int j = 0; j < 2; j++) {
        MPI_Type_free(&scopy[j]);
        MPI_Type_free(&rdts[j]);
    }
    churn(keep);
    for (int it = 0; it < 3; it++) {
        for (int d = 0; d < 2; d++)
            for (int i = 0; i < 4 * N; i++)
                sb[d][i] = i % 2 ? -5 : v(r, it, d * N + i / 2);
        memset(rb, 0xff, sizeof rb);
        MPI_Start(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        /* rb[0] from the left, who sent me its +1 block (2k); rb[1] from the right: k */
        for (int i = 0; i < N; i++) {
            int w0 = i < 2 * k ? v(left, it, N + i) : -1;
            int w1 = i < k ? v(right, it, i) : -1;
            if (rb[0][i] != w0 || rb[1][i] != w1) {
                TEST_ASSERT_MSG(0, "Neighbor_alltoallw_init round %d [%d]: %d %d, want %d %d",
                                it, i, rb[0][i], rb[1][i], w0, w1);
                break;
            }
        }
    }
    MPI_Request_free(&rq);
    unchurn(keep);
    MPI_Comm_free(&ring);
}

/* RMA on a window of size*N ints per rank: each rank writes/reads its own slice at the
 * next rank, with origin types freed right after each call. */
static void rma(void)
{
    int *mem;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(size * N * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < size * N; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + 1) % size;
    MPI_Aint disp = (MPI_Aint)rank * N;
    int ob[2 * N], gb[2 * N], fb[2 * N], qb[2 * N];
    MPI_Datatype keep[CHURN];
    MPI_Request rq;
    MPI_Win_lock_all(0, win);
    /* Rput of a strided origin */
    for (int i = 0; i < 2 * N; i++)
        ob[i] = i % 2 ? -5 : v(rank, 0, i / 2);
    MPI_Datatype o = strided(N);
    MPI_Rput(ob, 1, o, t, disp, N, MPI_INT, win, &rq);
    MPI_Type_free(&o);
    churn(keep);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    unchurn(keep);
    MPI_Win_flush(t, win);
    /* Raccumulate (SUM) of a strided origin: adds 1 to each */
    for (int i = 0; i < 2 * N; i++)
        ob[i] = i % 2 ? -5 : 1;
    o = strided(N);
    MPI_Raccumulate(ob, 1, o, t, disp, N, MPI_INT, MPI_SUM, win, &rq);
    MPI_Type_free(&o);
    churn(keep);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    unchurn(keep);
    MPI_Win_flush(t, win);
    /* Rget into a strided origin */
    for (int i = 0; i < 2 * N; i++)
        gb[i] = -7;
    o = strided(N);
    MPI_Rget(gb, 1, o, t, disp, N, MPI_INT, win, &rq);
    MPI_Type_free(&o);
    churn(keep);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    unchurn(keep);
    for (int i = 0; i < 2 * N; i++)
        if (gb[i] != (i % 2 ? -7 : v(rank, 0, i / 2) + 1)) {
            TEST_ASSERT_MSG(0, "Rget [%d]: %d", i, gb[i]);
            break;
        }
    /* Rget_accumulate (SUM 10) with strided origin and result types */
    for (int i = 0; i < 2 * N; i++) {
        ob[i] = i % 2 ? -5 : 10;
        fb[i] = -9;
    }
    o = strided(N);
    MPI_Datatype f = strided(N);
    MPI_Rget_accumulate(ob, 1, o, fb, 1, f, t, disp, N, MPI_INT, MPI_SUM, win, &rq);
    MPI_Type_free(&o);
    MPI_Type_free(&f);
    churn(keep);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    unchurn(keep);
    for (int i = 0; i < 2 * N; i++)
        if (fb[i] != (i % 2 ? -9 : v(rank, 0, i / 2) + 1)) {
            TEST_ASSERT_MSG(0, "Rget_accumulate result [%d]: %d", i, fb[i]);
            break;
        }
    MPI_Win_flush(t, win);
    /* Get (queued reply) into a strided origin, type freed before the flush */
    for (int i = 0; i < 2 * N; i++)
        qb[i] = -3;
    o = strided(N);
    MPI_Get(qb, 1, o, t, disp, N, MPI_INT, win);
    MPI_Type_free(&o);
    churn(keep);
    MPI_Win_flush(t, win);
    unchurn(keep);
    for (int i = 0; i < 2 * N; i++)
        if (qb[i] != (i % 2 ? -3 : v(rank, 0, i / 2) + 11)) {
            TEST_ASSERT_MSG(0, "Get [%d]: %d", i, qb[i]);
            break;
        }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

static void io(const char *dir)
{
    char p[300];
    snprintf(p, sizeof p, "%s/nb_typefree.dat", dir);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "File_open %d", rc);
    if (rc != MPI_SUCCESS)
        return;
    int wb[2 * N], rb[2 * N];
    MPI_Datatype keep[CHURN];
    MPI_Request rq;
    MPI_Offset at = (MPI_Offset)rank * N * (MPI_Offset)sizeof(int);
    for (int phase = 0; phase < 2; phase++) { /* 0: _at; 1: _all at the individual ptr */
        MPI_Offset base = phase ? (MPI_Offset)size * N * (MPI_Offset)sizeof(int) : 0;
        for (int i = 0; i < 2 * N; i++)
            wb[i] = i % 2 ? -5 : v(rank, phase, i / 2);
        MPI_Datatype m = strided(N);
        if (phase == 0) {
            MPI_File_iwrite_at(fh, base + at, wb, 1, m, &rq);
        } else {
            MPI_File_seek(fh, base + at, MPI_SEEK_SET);
            MPI_File_iwrite_all(fh, wb, 1, m, &rq);
        }
        MPI_Type_free(&m);
        churn(keep);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        unchurn(keep);
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_sync(fh);
        /* read the neighbour's slice back into a strided buffer */
        int from = (rank + 1) % size;
        MPI_Offset rat = base + (MPI_Offset)from * N * (MPI_Offset)sizeof(int);
        for (int i = 0; i < 2 * N; i++)
            rb[i] = -2;
        m = strided(N);
        if (phase == 0) {
            MPI_File_iread_at(fh, rat, rb, 1, m, &rq);
        } else {
            MPI_File_seek(fh, rat, MPI_SEEK_SET);
            MPI_File_iread_all(fh, rb, 1, m, &rq);
        }
        MPI_Type_free(&m);
        churn(keep);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        unchurn(keep);
        for (int i = 0; i < 2 * N; i++)
            if (rb[i] != (i % 2 ? -2 : v(from, phase, i / 2))) {
                TEST_ASSERT_MSG(0, "file phase %d [%d]: %d", phase, i, rb[i]);
                break;
            }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    persistent_p2p();
    alltoallw_init();
    if (size >= 3) /* distinct left and right neighbours */
        neighbor_alltoallw_init();
    rma();
    char dir[256] = "";
    if (rank == 0) {
        const char *t = getenv("LOOM_MPI_TEST_IODIR");
        if (!t || !*t)
            t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/loom-nbtf-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    TEST_ASSERT(dir[0]);
    if (dir[0]) {
        io(dir);
        if (rank == 0)
            TEST_ASSERT_MSG(rmdir(dir) == 0, "leftover files in %s", dir);
    }
    return test_finish();
}
