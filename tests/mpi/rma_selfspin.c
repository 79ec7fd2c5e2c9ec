/*
 * rma_selfspin.c - a rank that spins on one-sided operations to its own window (whose
 * flushes need no message) still serves the other ranks' requests to it.  Rank 0 waits
 * for a value by MPI_Compare_and_swap (whose compare fails) + MPI_Win_flush on itself;
 * rank 1 puts it there.  The window is MPI_Win_create over MPI_Alloc_mem memory: under
 * LOOM_MPI_NETMOD=tcp (testlist) rank 0 reaches its own block directly while rank 1's
 * put is a message that only rank 0's progress applies and answers, so a flush that
 * never progresses leaves both waiting: rank 0 gives up after LIMIT_S seconds and
 * counts an error.  2 ranks or more (the others just watch).
 */
#include "mpitest.h"

#define LIMIT_S 10.0

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long *base;
    MPI_Win win;
    MPI_Alloc_mem(sizeof(long), MPI_INFO_NULL, &base);
    MPI_Win_create(base, sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    *base = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        long v = 0;
        double t0 = MPI_Wtime();
        while (v == 0 && MPI_Wtime() - t0 < LIMIT_S) {
            long never = -1, none = -1; /* compare fails: v reads the value */
            MPI_Compare_and_swap(&none, &never, &v, MPI_LONG, 0, 0, win);
            MPI_Win_flush(0, win);
        }
        TEST_ASSERT_MSG(v == 42, "rank 0 saw %ld after %.1f s of flushes to itself", v,
                        MPI_Wtime() - t0);
    } else if (rank == 1) {
        long v = 42;
        MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    return test_finish();
}
