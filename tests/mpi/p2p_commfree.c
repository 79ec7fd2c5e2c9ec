/*
 * p2p_commfree.c - MPI_Comm_free while a receive on that communicator is pending: the
 *   receive still completes, and its status names the source as a rank of the freed
 *   communicator (the request holds the communicator until it is freed, mpi/core/xm.h).
 *   Before, the status translation read the freed communicator (a use-after-free that
 *   only a sanitizer build shows: run it there).
 *
 * Every rank joins a split of COMM_WORLD in reverse order; rank 0 posts an any-source
 * receive on it, frees it, and waits; world rank 1 sends on its own copy.
 */
#include <mpi.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size, v = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        TEST_ASSERT_MSG(size >= 2, "needs 2 ranks");
        return test_finish();
    }
    MPI_Comm d;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &d); /* comm rank = size-1-rank */
    MPI_Request r;
    if (rank == 0) {
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, d, &r);
        MPI_Comm_free(&d);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Status st;
        MPI_Wait(&r, &st);
        TEST_ASSERT_MSG(v == 42, "received %d", v);
        TEST_ASSERT_MSG(st.MPI_SOURCE == size - 2, "source %d, expected %d",
                        st.MPI_SOURCE, size - 2);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            int x = 42;
            MPI_Send(&x, 1, MPI_INT, size - 1, 3, d);
        }
        MPI_Comm_free(&d);
    }
    return test_finish();
}
