/*
 * mixpp.c - ping-pong latency in a job that uses shared memory and TCP at once
 *           (Loom's LOOM_MPI_FAKE_NODES: shm inside a pretend node, TCP between), the
 *           case where an idle rank sleeps on both transports at once.
 *
 * Usage: mpiexec -n N mixpp [-T SECONDS] [-r REPS] [-b BYTES] PEER...
 *   For each PEER (a rank other than 0), ranks 0 and PEER ping-pong BYTES (default 8)
 *   for about -T seconds (default 0.05) per repetition, -r (default 7) repetitions;
 *   every other rank waits in MPI_Recv (asleep) meanwhile.  With 4 ranks and
 *   LOOM_MPI_FAKE_NODES=2, peer 1 is over shm and peer 2 over TCP, while both
 *   transports are in use.
 * Output (rank 0): RESULT mixpp <np> <peer> <bytes> <median half round trip> us <iters>
 *   <min> <max>.  Timing only: the test suite checks data.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXREPS 64

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n round trips between 0 and peer; returns the time per half round trip (rank 0) */
static double rounds(int rank, int peer, char *buf, int bytes, long n)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * (double)n) * 1e6;
}

int main(int argc, char **argv)
{
    int rank, np, c, bytes = 8, reps = 7;
    double budget = 0.05;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((c = getopt(argc, argv, "T:r:b:")) != -1) {
        if (c == 'T')
            budget = atof(optarg);
        else if (c == 'r')
            reps = atoi(optarg);
        else if (c == 'b')
            bytes = atoi(optarg);
    }
    if (reps < 1 || reps > MAXREPS || bytes < 0 || bytes > (1 << 20) || budget <= 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    char *buf = calloc(1, (size_t)bytes + 1);
    for (int a = optind; a < argc; a++) {
        int peer = atoi(argv[a]);
        if (peer <= 0 || peer >= np)
            continue;
        long n = 0;
        double us[MAXREPS];
        int busy = rank == 0 || rank == peer;
        if (busy) {
            rounds(rank, peer, buf, bytes, 200); /* warm-up, connection made */
            double t = rounds(rank, peer, buf, bytes, 200);
            n = (long)(budget / (t * 2e-6));
            n = n < 50 ? 50 : n;
            if (rank == 0)
                MPI_Send(&n, 1, MPI_LONG, peer, 2, MPI_COMM_WORLD);
            else
                MPI_Recv(&n, 1, MPI_LONG, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int r = 0; r < reps; r++)
                us[r] = rounds(rank, peer, buf, bytes, n);
        }
        /* the others sleep in a receive until rank 0 releases them */
        if (rank == 0) {
            for (int q = 1; q < np; q++)
                if (q != peer)
                    MPI_Send(&n, 1, MPI_LONG, q, 3, MPI_COMM_WORLD);
            qsort(us, (size_t)reps, sizeof(double), cmp);
            printf("RESULT mixpp %d %d %d %.3f us %ld %.3f %.3f\n", np, peer, bytes,
                   us[reps / 2], n, us[0], us[reps - 1]);
            fflush(stdout);
        } else if (!busy) {
            MPI_Recv(&n, 1, MPI_LONG, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
