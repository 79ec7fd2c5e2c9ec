/*
 * rma_passive.c - passive-target one-sided communication that must not need the
 *   target (issue 21), and the fast paths' results and error classes.
 *
 *   1. Win_create window, rank 0 sleeps 1.5 s outside MPI while rank 1 runs
 *      Fetch_and_op, Accumulate, Compare_and_swap and Get_accumulate with flushes on
 *      its memory.  With RMA_PASSIVE_STRICT=1 in the environment (the shm lines of the
 *      testlist) and CMA allowed between the two processes (probed here with
 *      process_vm_readv; and the ranks on one node), rank 1 must be done within 1 s: the accumulate family goes
 *      by CMA under the target's lock word.  Values are checked in every case.
 *   2. A flush after a put followed by a fetching operation (one round trip: the
 *      reply of the last request proves the earlier ones applied) leaves the put
 *      visible at the target.
 *   3. Allocated window (node-shared): Put/Get/Accumulate/Fetch_and_op of predefined
 *      types take the fast path; results, MPI_REPLACE, MPI_NO_OP, and the error
 *      classes of a range error and of an op the type does not take.
 *   4. Win_shared_query of a rank with no memory: size 0, base NULL (MPICH's
 *      rma/win_shared_noncontig_put asserts it).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

#define NOPS 100

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void passive(int rank, int size)
{
    long *mem = calloc(16, sizeof(long));
    MPI_Win win;
    MPI_Win_create(mem, 16 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    /* can rank 1 read rank 0's memory by CMA at all? */
    struct {
        long pid;
        long addr;
    } me = {(long)getpid(), (long)(uintptr_t)mem}, peer = {0, 0};
    if (rank == 0)
        MPI_Send(&me, 2, MPI_LONG, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&peer, 2, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int cma = 0;
    if (rank == 1) {
        long v;
        struct iovec l = {&v, sizeof(v)}, r = {(void *)(uintptr_t)peer.addr, sizeof(v)};
        cma = process_vm_readv((pid_t)peer.pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(v);
    }
    /* the CMA path serves ranks that MPI places on one node (a pid that answers
     * process_vm_readv may still be on another "node": network namespaces, or
     * LOOM_MPI_FAKE_NODES) */
    MPI_Comm node;
    int nnode = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nnode);
    MPI_Comm_free(&node);
    if (nnode < size)
        cma = 0;
    const char *strict = getenv("RMA_PASSIVE_STRICT");
    if (rank == 1)
        MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        nap(1.5); /* outside MPI: no progress here */
    } else if (rank == 1) {
        double t0 = MPI_Wtime();
        long one = 1, old, two = 2, cmpv, res;
        for (int i = 0; i < NOPS; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
            TEST_ASSERT_MSG(old == i, "fetched %ld, want %d", old, i);
            MPI_Accumulate(&two, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win);
            cmpv = i;
            long nv = i + 1;
            MPI_Compare_and_swap(&nv, &cmpv, &res, MPI_LONG, 0, 2, win);
            MPI_Win_flush(0, win);
            TEST_ASSERT_MSG(res == i, "compare_and_swap found %ld, want %d", res, i);
        }
        long acc[2] = {5, 7}, got[2];
        MPI_Get_accumulate(acc, 2, MPI_LONG, got, 2, MPI_LONG, 0, 3, 2, MPI_LONG, MPI_MAX, win);
        MPI_Win_flush(0, win);
        TEST_ASSERT(got[0] == 0 && got[1] == 0);
        double dt = MPI_Wtime() - t0;
        if (strict && *strict == '1' && cma)
            TEST_ASSERT_MSG(dt < 1.0, "%d accumulate-family operations on a Win_create "
                            "window took %.3f s while the target was outside MPI", NOPS, dt);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Win_unlock_all(win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        TEST_ASSERT_MSG(mem[0] == NOPS, "counter %ld", mem[0]);
        TEST_ASSERT_MSG(mem[1] == 2 * NOPS, "accumulated %ld", mem[1]);
        TEST_ASSERT_MSG(mem[2] == NOPS, "compare_and_swap chain %ld", mem[2]);
        TEST_ASSERT(mem[3] == 5 && mem[4] == 7);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_fence(0, win);
    /* a zero-size type: nothing moves, nothing crashes */
    {
        MPI_Datatype z;
        MPI_Type_contiguous(0, MPI_LONG, &z);
        MPI_Type_commit(&z);
        long one = 1;
        MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, win);
        MPI_Accumulate(&one, 1, z, (rank + 1) % size, 0, 1, z, MPI_SUM, win);
        MPI_Win_unlock((rank + 1) % size, win);
        MPI_Type_free(&z);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. put, then a fetching op, one flush: the put is applied at the target */
    for (int round = 0; round < 10; round++) {
        if (rank == size - 1) {
            long v = 1000 + round, one = 1, old;
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Put(&v, 1, MPI_LONG, 0, 8, 1, MPI_LONG, win);
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 9, MPI_SUM, win);
            MPI_Win_flush(0, win);
            MPI_Send(&v, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD);
            MPI_Win_unlock(0, win);
            /* rank 0 checked this round before the next put */
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (rank == 0) {
            long v;
            MPI_Recv(&v, 1, MPI_LONG, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Win_sync(win);
            TEST_ASSERT_MSG(mem[8] == v, "after put + fetch_and_op + flush: %ld, want %ld",
                            mem[8], v);
            MPI_Win_unlock(0, win);
            MPI_Send(NULL, 0, MPI_BYTE, size - 1, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Win_free(&win);
    free(mem);
}

static void fast(int rank, int size)
{
    double *base;
    MPI_Win win;
    MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    for (int i = 0; i < 64; i++)
        base[i] = 0;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    int right = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    double v[4] = {1, 2, 3, 4}, got[4] = {0}, one = 1, old;
    TEST_ASSERT(MPI_Put(v, 4, MPI_DOUBLE, right, 4, 4, MPI_DOUBLE, win) == MPI_SUCCESS);
    MPI_Win_flush(right, win);
    TEST_ASSERT(MPI_Get(got, 4, MPI_DOUBLE, right, 4, 4, MPI_DOUBLE, win) == MPI_SUCCESS);
    MPI_Win_flush(right, win);
    TEST_ASSERT(got[0] == 1 && got[3] == 4);
    for (int i = 0; i < 10; i++)
        MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Accumulate(v, 4, MPI_DOUBLE, right, 4, 4, MPI_DOUBLE, MPI_PROD, win);
    MPI_Win_flush_all(win);
    MPI_Fetch_and_op(NULL, &old, MPI_DOUBLE, right, 5, MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    TEST_ASSERT_MSG(old == 4, "prod: %g", old);
    double seven = 7;
    MPI_Fetch_and_op(&seven, &old, MPI_DOUBLE, right, 6, MPI_REPLACE, win);
    MPI_Win_flush(right, win);
    TEST_ASSERT_MSG(old == 9, "replace fetched %g", old);
    /* errors: out of the window, an op the type does not take */
    TEST_ASSERT(MPI_Put(v, 4, MPI_DOUBLE, right, 62, 4, MPI_DOUBLE, win) != MPI_SUCCESS);
    TEST_ASSERT(MPI_Get(got, 1, MPI_DOUBLE, right, -1, 1, MPI_DOUBLE, win) != MPI_SUCCESS);
    int cls = -1, err = MPI_Accumulate(&one, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND,
                                       win);
    MPI_Error_class(err, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_OP, "BAND on a double: class %d", cls);
    err = MPI_Fetch_and_op(&one, &old, MPI_DOUBLE, right, 64, MPI_SUM, win);
    MPI_Error_class(err, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_RMA_RANGE, "fetch_and_op past the end: class %d", cls);
    int ione = 1, iold;
    err = MPI_Fetch_and_op(&ione, &iold, MPI_INT, right, 0, MPI_MINLOC, win);
    TEST_ASSERT(err != MPI_SUCCESS);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        TEST_ASSERT_MSG(base[0] == 10.0 * size, "accumulated %g", base[0]);
    MPI_Win_free(&win);
}

/* 4. Win_shared_query of a rank that gave no memory answers size 0 and base NULL */
static void shared_empty(int rank, int size)
{
    int *base;
    MPI_Win win;
    MPI_Win_allocate_shared(rank % 2 ? 0 : 4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < size; i++) {
        MPI_Aint sz = -1;
        int du = 0, *b = (int *)&sz;
        MPI_Win_shared_query(win, i, &sz, &du, &b);
        if (i % 2)
            TEST_ASSERT_MSG(sz == 0 && b == NULL, "rank %d: size %ld base %p", i, (long)sz,
                            (void *)b);
        else
            TEST_ASSERT_MSG(sz == 4 * (MPI_Aint)sizeof(int) && b != NULL, "rank %d", i);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2)
        passive(rank, size);
    fast(rank, size);
    int node = 0; /* Win_allocate_shared needs every rank on one node */
    MPI_Comm shm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    int ssize;
    MPI_Comm_size(shm, &ssize);
    node = ssize == size;
    MPI_Comm_free(&shm);
    if (node)
        shared_empty(rank, size);
    return test_finish();
}
