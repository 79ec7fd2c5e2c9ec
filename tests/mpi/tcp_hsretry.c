/*
 * tcp_hsretry.c - a rank that computes outside MPI in the middle of its TCP handshake:
 *   the acceptor's handshake deadline (LOOM_MPI_TCP_HANDSHAKE_TIMEOUT, set to 1 s by
 *   the testlist) passes and it drops the connection; the connector must connect again
 *   and the message must arrive (mpi/tcp/conn.c hs_broken), never "connection lost".
 *
 * Rank 1 starts an MPI_Isend to rank 0 (the connect starts), then sleeps 3 s without
 * calling MPI, three times with a new message; rank 0 waits in MPI_Recv for each (it
 * accepts, sends its challenge, and drops the socket after 1 s).  With more than 2
 * ranks the others exchange with rank 0 meanwhile.  Checks every value.
 */
#include <mpi.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int it = 0; it < 3; it++) {
        int v = 100 + it, got = -1;
        if (rank == 1) {
            MPI_Request rq;
            MPI_Isend(&v, 1, MPI_INT, 0, it, MPI_COMM_WORLD, &rq);
            if (it == 0)
                sleep(3); /* outside MPI while rank 0 waits for our proof */
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Recv(&got, 1, MPI_INT, 1, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            TEST_ASSERT_MSG(got == v, "message %d from rank 1 is %d", it, got);
            for (int r = 2; r < size; r++) {
                MPI_Recv(&got, 1, MPI_INT, r, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                TEST_ASSERT_MSG(got == r * 10 + it, "message %d from rank %d is %d", it,
                                r, got);
            }
        } else {
            v = rank * 10 + it;
            MPI_Send(&v, 1, MPI_INT, 0, it, MPI_COMM_WORLD);
        }
    }
    return test_finish();
}
