/* mpi_ring.c - MPI interop check: a token travels around the ring several times.
 *
 * Usage: mpi_ring [LAPS]   (default 3)
 * Contract: rank 0 starts a token at 0; every hop adds 1 and sends it to (rank+1)%n, and
 * rank 0 forwards it again until it has gone round LAPS times. Every rank checks the
 * value it receives (lap*n + rank on rank r>0, (lap+1)*n on rank 0 after each lap).
 * Rank 0 prints
 *     ring: N ranks, L laps OK
 * Exit 0 on success; any mismatch prints "ring: rank R: ..." on stderr and calls
 * MPI_Abort(MPI_COMM_WORLD, 1).
 *
 * Notes: built with Debian's MPICH wrapper as mpich_ring; works with one rank too
 *   (the token goes to itself through MPI_Sendrecv).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rank, long got, long want, int lap)
{
    if (got != want) {
        fprintf(stderr, "ring: rank %d: lap %d: got token %ld, want %ld\n", rank, lap,
                got, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int rank = -1, size = -1, laps = 3;
    long token;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "ring: MPI_Init failed\n");
        return 1;
    }
    if (argc > 1) {
        laps = atoi(argv[1]);
        if (laps < 1 || laps > 1000000) {
            fprintf(stderr, "usage: mpi_ring [LAPS]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int lap = 0; lap < laps; lap++) {
        if (size == 1) {
            long out = (long)lap + 1;
            MPI_Sendrecv(&out, 1, MPI_LONG, 0, lap, &token, 1, MPI_LONG, 0, lap,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(rank, token, (long)lap + 1, lap);
        } else if (rank == 0) {
            token = (long)lap * size + 1;
            MPI_Send(&token, 1, MPI_LONG, right, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(rank, token, (long)(lap + 1) * size, lap);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(rank, token, (long)lap * size + rank, lap);
            token++;
            MPI_Send(&token, 1, MPI_LONG, right, lap, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    if (rank == 0) {
        printf("ring: %d ranks, %d laps OK\n", size, laps);
        fflush(stdout);
    }
    return 0;
}
