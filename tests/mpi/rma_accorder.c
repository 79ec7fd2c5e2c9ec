/*
 * rma_accorder.c - accumulates on a MPI_Win_create window over plain (calloc) memory:
 * issue order within one origin (REPLACE then SUM, MIN after SUM), element-wise
 * atomicity against the other origins on shared and on interleaved elements, ranges
 * with gaps that other origins' puts fill at the same time (their bytes survive), and
 * fetch_and_op and compare_and_swap after accumulates of the same origin without a
 * flush in between seeing them (accumulate ordering; a plain get is not ordered).  Any
 * number of ranks (3 or more to mean something).
 */
#include "mpitest.h"
#include <stdlib.h>
#include <string.h>

#define NE 512 /* longs in the window */
#define ROUNDS 300

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long *mem = calloc(NE, sizeof(long));
    MPI_Win win;
    MPI_Win_create(mem, NE * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    long one = 1, v;
    MPI_Win_lock_all(0, win);
    /* everyone: SUM 1 into element 0 and into its own even element 2 + 2 * rank of
     * every target, puts into the odd element 3 + 2 * rank between them */
    for (int i = 0; i < ROUNDS; i++)
        for (int t = 0; t < size; t++) {
            MPI_Accumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Accumulate(&one, 1, MPI_LONG, t, 2 + 2 * rank, 1, MPI_LONG, MPI_SUM, win);
            v = 1000000 + i;
            MPI_Put(&v, 1, MPI_LONG, t, 3 + 2 * rank, 1, MPI_LONG, win);
            if (i % 97 == 0)
                MPI_Win_flush(t, win);
        }
    /* order within one origin, no flush in between: REPLACE, SUM, MAX, then fetches */
    int t = (rank + 1) % size;
    long r = 50, got = -1, five = 5, old = -1;
    MPI_Accumulate(&r, 1, MPI_LONG, t, 300 + rank, 1, MPI_LONG, MPI_REPLACE, win);
    MPI_Accumulate(&one, 1, MPI_LONG, t, 300 + rank, 1, MPI_LONG, MPI_SUM, win);
    MPI_Accumulate(&five, 1, MPI_LONG, t, 300 + rank, 1, MPI_LONG, MPI_MAX, win);
    MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 300 + rank, MPI_SUM, win);
    MPI_Win_flush(t, win);
    TEST_ASSERT_MSG(old == 51, "fetch after REPLACE, SUM, MAX: %ld", old);
    MPI_Accumulate(&one, 1, MPI_LONG, t, 300 + rank, 1, MPI_LONG, MPI_SUM, win);
    MPI_Fetch_and_op(NULL, &got, MPI_LONG, t, 300 + rank, MPI_NO_OP, win);
    MPI_Win_flush(t, win);
    TEST_ASSERT_MSG(got == 53, "NO_OP fetch after SUM: %ld", got);
    long cmp = 54, nv = 7, prev = -1;
    MPI_Accumulate(&one, 1, MPI_LONG, t, 300 + rank, 1, MPI_LONG, MPI_SUM, win);
    MPI_Compare_and_swap(&nv, &cmp, &prev, MPI_LONG, t, 300 + rank, win);
    MPI_Win_flush(t, win);
    TEST_ASSERT_MSG(prev == 54, "compare_and_swap after SUM: %ld", prev);
    /* a vector of doubles (two elements per call, different ranks interleaved) */
    double d2[2] = {0.5, 0.25};
    for (int i = 0; i < ROUNDS; i++)
        MPI_Accumulate(d2, 2, MPI_DOUBLE, 0, 400 + 2 * (rank % 4), 2, MPI_DOUBLE, MPI_SUM,
                       win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    TEST_ASSERT_MSG(mem[0] == (long)ROUNDS * size, "element 0: %ld", mem[0]);
    for (int q = 0; q < size && 3 + 2 * q < 300; q++) {
        TEST_ASSERT_MSG(mem[2 + 2 * q] == ROUNDS, "element %d: %ld", 2 + 2 * q,
                        mem[2 + 2 * q]);
        TEST_ASSERT_MSG(mem[3 + 2 * q] == 1000000 + ROUNDS - 1, "put element %d: %ld",
                        3 + 2 * q, mem[3 + 2 * q]);
    }
    int from = (rank + size - 1) % size;
    TEST_ASSERT_MSG(mem[300 + from] == 7, "ordered element: %ld", mem[300 + from]);
    if (rank == 0) {
        for (int k = 0; k < 4 && k < size; k++) {
            int cnt = 0;
            for (int q = 0; q < size; q++)
                cnt += q % 4 == k;
            double *d = (double *)&mem[400 + 2 * k];
            TEST_ASSERT_MSG(d[0] == 0.5 * ROUNDS * cnt && d[1] == 0.25 * ROUNDS * cnt,
                            "doubles %d: %g %g", k, d[0], d[1]);
        }
    }
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
    free(mem);
    return test_finish();
}
