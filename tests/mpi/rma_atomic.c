/*
 * rma_atomic.c - atomics under contention: every rank increments one counter with
 *   MPI_Fetch_and_op (the fetched values of all ranks must be exactly 0..total-1, each
 *   once), a second counter with a Compare_and_swap retry loop, concurrent large
 *   accumulates (element-wise atomic: no lost update), Get_accumulate and Fetch_and_op
 *   with MPI_NO_OP and MPI_REPLACE, on an allocated window and a created one.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define INC 100
#define ACCN 20000

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static void run(MPI_Win win, long *mem, int rank, int size)
{
    long one = 1, old, *mine = malloc(INC * sizeof(long));
    /* fetch_and_op counter at rank 0, slot 0 */
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < INC; i++) {
        MPI_Fetch_and_op(&one, &mine[i], MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    long *all = rank == 0 ? malloc((size_t)size * INC * sizeof(long)) : NULL;
    MPI_Gather(mine, INC, MPI_LONG, all, INC, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)size * INC, sizeof(long), cmp_long);
        int bad = 0;
        for (long i = 0; i < (long)size * INC; i++)
            bad += all[i] != i;
        TEST_ASSERT_MSG(bad == 0, "%d fetched values not a permutation", bad);
        TEST_ASSERT_MSG(mem[0] == (long)size * INC, "counter %ld", mem[0]);
        free(all);
    }
    /* compare_and_swap counter at the last rank, slot 1 */
    int t = size - 1;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < INC / 4; i++) {
        long cur = 0, seen;
        MPI_Fetch_and_op(NULL, &cur, MPI_LONG, t, 1, MPI_NO_OP, win);
        MPI_Win_flush(t, win);
        for (;;) {
            long want = cur + 1;
            MPI_Compare_and_swap(&want, &cur, &seen, MPI_LONG, t, 1, win);
            MPI_Win_flush(t, win);
            if (seen == cur)
                break;
            cur = seen;
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t)
        TEST_ASSERT_MSG(mem[1] == (long)size * (INC / 4), "CAS counter %ld", mem[1]);
    /* concurrent accumulates of a big array into rank 0 from everybody */
    long *src = malloc(ACCN * sizeof(long));
    for (int i = 0; i < ACCN; i++)
        src[i] = i + rank;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < 3; k++)
        MPI_Accumulate(src, ACCN, MPI_LONG, 0, 2, ACCN, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int bad = 0;
        for (int i = 0; i < ACCN; i++)
            bad += mem[2 + i] != 3L * ((long)size * i + (long)size * (size - 1) / 2);
        TEST_ASSERT_MSG(bad == 0, "%d lost updates in concurrent accumulates", bad);
    }
    /* replace / no_op */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 % size) {
        long v = 77;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Fetch_and_op(&v, &old, MPI_LONG, 0, 0, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
        TEST_ASSERT(old == (long)size * INC);
        MPI_Fetch_and_op(NULL, &old, MPI_LONG, 0, 0, MPI_NO_OP, win);
        MPI_Win_unlock(0, win);
        TEST_ASSERT(old == 77);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(src);
    free(mine);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = (2 + ACCN) * sizeof(long);

    long *mem;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    run(win, mem, rank, size);
    MPI_Win_free(&win);

    mem = calloc(1, bytes);
    MPI_Win_create(mem, (MPI_Aint)bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, mem, rank, size);
    MPI_Win_free(&win);
    free(mem);
    return test_finish();
}
