/*
 * tcp_progress.c - a blocking send reaches its peer while the sender computes.
 *   Rank 0 sends each other rank one small message (the first traffic between them:
 *   over TCP the connection is still to be made) and then works for HOLD_S seconds
 *   without calling MPI.  Each receiver checks that the message arrived within
 *   LATE_S seconds of the send (the ranks share the machine's CLOCK_MONOTONIC, the
 *   sender's timestamp travels in the message), not only when rank 0 came back into
 *   MPI.  Meant for runs with LOOM_MPI_NETMOD=tcp or across nodes; passes on any
 *   transport.  Rank 0 prints "No Errors" and exits 0 when every receiver was served in
 *   time; otherwise every failed check prints "rank R: FAIL: ...", rank 0 prints
 *   "Found N errors" and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "mpitest.h"

#define HOLD_S 3.0
#define LATE_S 1.5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT_MSG(size >= 2, "needs at least 2 ranks, got %d", size);
    if (rank == 0) {
        for (int d = 1; d < size; d++) {
            double t = now();
            MPI_Send(&t, 1, MPI_DOUBLE, d, 7, MPI_COMM_WORLD);
        }
        double until = now() + HOLD_S;
        volatile double x = 0; /* computing: no MPI call */
        while (now() < until)
            x += 1.0;
    } else {
        double t = -1;
        MPI_Recv(&t, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double late = now() - t;
        /* the payload is the sender's clock: never later than our own */
        TEST_ASSERT_MSG(t > 0 && late >= 0, "received timestamp %.6f is not a past time",
                        t);
        TEST_ASSERT_MSG(late <= LATE_S,
                        "the message took %.2f s: it waited for rank 0's next MPI call",
                        late);
    }
    return test_finish();
}
