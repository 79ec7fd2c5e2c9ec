/*
 * barrier_heavy.c - many barriers and small allreduces; checks each allreduce result.
 *   The point is the run time under oversubscription (64 ranks on 2 cores must not
 *   spin): the testlist gives it a timeout.  With LOOM_BARRIER_TIME set, rank 0 prints
 *   the mean time per barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0, iters = 200;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double tb = (MPI_Wtime() - t0) / iters;
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        int v = rank + i, s = 0;
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (s != size * (size - 1) / 2 + size * i)
            errs++;
    }
    double ta = (MPI_Wtime() - t0) / iters;
    if (rank == 0 && getenv("LOOM_BARRIER_TIME"))
        printf("%d ranks: barrier %.1f us, allreduce(4 B) %.1f us\n", size, tb * 1e6,
               ta * 1e6);
    int total;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "Found %d errors\n" : "No Errors\n", total);
    MPI_Finalize();
    return 0;
}
