/*
 * tcp_waitset.c - a rank that sleeps on shared memory and TCP at once does it in one
 *   thread, and wakes for a packet of either transport.
 *   Meant for LOOM_MPI_FAKE_NODES (shm inside a node, TCP between) with
 *   LOOM_MPI_SPIN_US=0, so that waits reach the idle sleep.  For every ordered pair of
 *   ranks (a, b), in turn: a pauses PAUSE_MS (so that b is asleep in its Recv by then)
 *   and sends b a numbered message; b checks its contents.  Every peer of a rank is
 *   either on its node (shm) or not (TCP), so each rank sleeps waiting for both kinds.
 *   Afterwards every rank counts the threads in /proc/self/task: it must be as many as
 *   right after MPI_Init (libmpi starts no thread to sleep on two transports).  Rank 0
 *   prints "No Errors" and exits 0 when every check held; otherwise every failed check
 *   prints "rank R: FAIL: ...", rank 0 prints "Found N errors" and exits 1.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "mpitest.h"

#define PAUSE_MS 20

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT_MSG(size >= 2, "needs at least 2 ranks, got %d", size);
    int before = count_threads();
    TEST_ASSERT_MSG(before > 0, "cannot list /proc/self/task");
    for (int a = 0; a < size; a++)
        for (int b = 0; b < size; b++) {
            if (a == b)
                continue;
            int msg[2] = {a, b};
            if (rank == a) {
                struct timespec ts = {0, PAUSE_MS * 1000000L};
                nanosleep(&ts, NULL);
                MPI_Send(msg, 2, MPI_INT, b, 5, MPI_COMM_WORLD);
            } else if (rank == b) {
                int got[2] = {-1, -1};
                MPI_Recv(got, 2, MPI_INT, a, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                TEST_ASSERT_MSG(got[0] == a && got[1] == b,
                                "from rank %d got {%d, %d}, expected {%d, %d}", a, got[0],
                                got[1], a, b);
            }
        }
    int after = count_threads();
    TEST_ASSERT_MSG(after == before, "%d threads after the waits, %d after MPI_Init",
                    after, before);
    return test_finish();
}
