/*
 * xjoblat.c - ping-pong latency between two processes of one node: in one job
 *   (`xjoblat one`, 2 ranks, MPI_COMM_WORLD) or in two jobs (`xjoblat a DIR` and
 *   `xjoblat b DIR`, one rank each, joined by MPI_Comm_join over a loopback TCP socket
 *   whose port a writes to DIR/port).  Sizes 0 B .. 64 KiB; per size a warm-up, then
 *   REPS (7) timed runs of N round trips; prints "size median_us min_us" (half a round
 *   trip) at the rank that measures.  Run by bench/mpi/xjob.sh.
 */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REPS 7

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int sock_pair(int side, const char *dir)
{
    char file[4200], tmp[4300];
    snprintf(file, sizeof(file), "%s/port", dir);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (side == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        socklen_t al = sizeof(a);
        if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
            getsockname(ls, (struct sockaddr *)&a, &al))
            return -1;
        snprintf(tmp, sizeof(tmp), "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        if (!f)
            return -1;
        fprintf(f, "%u\n", (unsigned)ntohs(a.sin_port));
        fclose(f);
        if (rename(tmp, file))
            return -1;
        int fd = accept(ls, NULL, NULL);
        close(ls);
        return fd;
    }
    FILE *f = NULL;
    for (int i = 0; i < 600 && !f; i++)
        if (!(f = fopen(file, "r")))
            usleep(50000);
    unsigned port = 0;
    if (!f || fscanf(f, "%u", &port) != 1) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_port = htons((uint16_t)port);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
        return -1;
    return fd;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int me = 0;
    if (argc >= 3 && (!strcmp(argv[1], "a") || !strcmp(argv[1], "b"))) {
        int fd = sock_pair(argv[1][0] == 'b', argv[2]);
        if (fd < 0 || MPI_Comm_join(fd, &comm) != MPI_SUCCESS) {
            fprintf(stderr, "xjoblat: no join\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
        me = argv[1][0] == 'b';
    } else {
        MPI_Comm_rank(comm, &me);
    }
    int peer = comm == MPI_COMM_WORLD ? 1 - me : 0;
    char *buf = calloc(1, 65536);
    for (int sz = 0; sz <= 65536; sz = sz ? sz * 4 : 1) {
        int n = sz <= 1024 ? 2000 : 300;
        double t[REPS];
        for (int r = -1; r < REPS; r++) {
            MPI_Barrier(comm == MPI_COMM_WORLD ? comm : MPI_COMM_SELF);
            double t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (me == 0) {
                    MPI_Send(buf, sz, MPI_BYTE, peer, 1, comm);
                    MPI_Recv(buf, sz, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, sz, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
                    MPI_Send(buf, sz, MPI_BYTE, peer, 1, comm);
                }
            }
            if (r >= 0)
                t[r] = (MPI_Wtime() - t0) / n / 2 * 1e6;
        }
        qsort(t, REPS, sizeof(double), cmp);
        if (me == 0)
            printf("%d %.2f %.2f\n", sz, t[REPS / 2], t[0]);
    }
    free(buf);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_disconnect(&comm);
    MPI_Finalize();
    return 0;
}
