/*
 * hello.c - the launch-to-exit program of the MPI benchmark: MPI_Init, one
 * MPI_Allreduce over every rank, MPI_Finalize. Exit status 0 only when the sum is right
 * (a launch that "finishes fast" by failing must not count as fast).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    long mine, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (sum != (long)size * (size - 1) / 2) {
        fprintf(stderr, "hello: rank %d: sum %ld\n", rank, sum);
        return 1;
    }
    return 0;
}
