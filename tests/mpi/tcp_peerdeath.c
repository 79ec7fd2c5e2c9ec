/*
 * tcp_peerdeath.c - a peer killed in the middle of a transfer must end the job with a
 *   clear error within seconds, never a hang.  Run with TCP between the ranks
 *   (LOOM_MPI_NETMOD=tcp, or ranks on different nodes) and expect=fail in testlist.
 *
 *   Rank 1 starts a 256 MiB send to rank 0 and, after a few milliseconds of progress
 *   (mid-transfer when the kernel is slower than that, else just after), does what the
 *   kernel does to a killed process's connections: closes every IPv4 socket (RST when
 *   unread data remains), then exits 2 s later.  (Exiting at once would race with the
 *   launcher, which kills the job as soon as a rank exits, before rank 0 could speak;
 *   the PMI connection, a Unix socket, stays open until then.)
 *   Rank 0 receives it, then waits for one more message that never comes.
 *   TCP_PEERDEATH_MODE=fatal (default): MPI_ERRORS_ARE_FATAL, so the library must
 *     abort, printing "rank 0: connection to rank 1 lost".
 *   TCP_PEERDEATH_MODE=return: rank 0 uses MPI_ERRORS_RETURN; a receive must return an
 *     error class; rank 0 prints "rank 0: receive from dead rank 1 failed: class N".
 *   TCP_PEERDEATH_MODE=silent: a link that goes silent instead (a node that lost its
 *     network: no reset ever comes).  Rank 1 sends rank 0 one byte, then sleeps without
 *     calling MPI; rank 0 prints "rank 0: ready" once it has the byte and waits for a
 *     second one.  The test then drops the traffic between the two (tests/slurm), and
 *     rank 0 must abort on its own: "connection to rank 1 lost (Connection timed out)"
 *     after about LOOM_MPI_TCP_TIMEOUT seconds.
 *   TCP_PEERDEATH_MODE=silent_connect: the same, but the link is silenced before the
 *     two ranks ever talked: rank 0 prints "rank 0: ready", waits 2 s, and its first
 *     send to the last rank must fail the connect the same way ("connection to rank
 *     N-1 lost").  Run with 4 ranks, one per node: MPI_Init's one small allreduce
 *     (recursive doubling, or a binomial tree) pairs 0-1, 2-3 and 0-2, never 0 and 3.
 *   Other ranks wait in a receive from rank 0 (ended by the abort of the job).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (256L << 20)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = getenv("TCP_PEERDEATH_MODE");
    int ret = mode && strcmp(mode, "return") == 0;
    if (size < 2) {
        printf("needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    if (mode && strcmp(mode, "silent_connect") == 0) {
        /* no barrier: the first message from rank 0 to rank 1 opens their connection */
        char c = 1;
        if (rank == 0) {
            printf("rank 0: ready\n");
            fflush(stdout);
            sleep(2); /* the test silences the link meanwhile */
            MPI_Send(&c, 1, MPI_CHAR, size - 1, 1, MPI_COMM_WORLD);
            printf("rank 0: connected to rank %d (it should never be)\n", size - 1);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Recv(&c, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* connections are up */
    if (mode && strcmp(mode, "silent") == 0 && rank < 2) {
        char c = 1;
        if (rank == 1) {
            MPI_Send(&c, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            sleep(120); /* alive, silent, outside MPI */
            _exit(3);
        }
        MPI_Recv(&c, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 0: ready\n");
        fflush(stdout);
        MPI_Recv(&c, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 0: a second byte from rank 1 (it should never come)\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 1) {
        char *buf = malloc(BIG);
        memset(buf, 7, BIG);
        MPI_Request rq;
        MPI_Isend(buf, (int)BIG, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &rq);
        double t0 = MPI_Wtime();
        int done = 0;
        while (!done && MPI_Wtime() - t0 < 0.005)
            MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        for (int fd = 3; fd < 4096; fd++) { /* killed mid-transfer */
            struct sockaddr_storage sa;
            socklen_t l = sizeof(sa);
            if (getsockname(fd, (struct sockaddr *)&sa, &l) == 0 &&
                sa.ss_family == AF_INET)
                close(fd);
        }
        sleep(2);
        _exit(3);
    }
    if (rank == 0) {
        if (ret)
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char *buf = malloc(BIG);
        int rc =
            MPI_Recv(buf, (int)BIG, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) /* it all arrived before the exit: the next one cannot */
            rc = MPI_Recv(buf, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        printf("rank 0: receive from dead rank 1 failed: class %d\n", cls);
        fflush(stdout);
        /* with ERRORS_RETURN the job cannot finish normally: a rank died */
        MPI_Abort(MPI_COMM_WORLD, rc == MPI_SUCCESS ? 1 : 2);
    }
    char c;
    MPI_Recv(&c, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
