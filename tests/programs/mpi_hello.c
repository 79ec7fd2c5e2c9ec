/* mpi_hello.c - minimal MPI interop check: init, allreduce of ranks, finalize.
 *
 * Contract: every rank MPI_Init()s, MPI_Allreduce()s its rank with MPI_SUM and checks
 * the result equals n(n-1)/2, then MPI_Finalize()s. Rank 0 prints
 *     hello: N ranks OK
 * Exit 0 on success; on a wrong sum the rank prints "hello: rank R: ..." on stderr and
 * calls MPI_Abort(MPI_COMM_WORLD, 1).
 *
 * Notes: built with Debian's MPICH wrapper (mpicc.mpich) as mpich_hello; plain C99 MPI,
 *   nothing MPICH specific, so other wrappers can build it too.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = -1, size = -1;
    long mine, sum = -1, want;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "hello: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mine = rank;
    want = (long)size * (size - 1) / 2;
    if (MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        sum != want) {
        fprintf(stderr, "hello: rank %d: allreduce gave %ld, want %ld\n", rank, sum,
                want);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    MPI_Finalize();
    if (rank == 0) {
        printf("hello: %d ranks OK\n", size);
        fflush(stdout);
    }
    return 0;
}
