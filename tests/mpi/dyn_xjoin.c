/*
 * dyn_xjoin.c - MPI_Comm_join between two jobs (two mpiexec runs): `dyn_xjoin a|b DIR
 *   PAIRS`.  Rank r < PAIRS of job a and rank r of job b join twice over a TCP
 *   connection they make themselves on loopback, first a listening (its port in
 *   DIR/r.1), then b listening (DIR/r.2), so each job is once on each end of the socket;
 *   all pairs at once.  Each join's intercommunicator (remote size 1) carries a small
 *   message and a 1 MiB one each way (contents checked), an intercommunicator Bcast each
 *   way, Allreduce, Allgather and Barrier; it merges (a first) and the merged
 *   communicator runs Allreduce and Bcast; then both are disconnected.  Ranks beyond
 *   PAIRS only wait.  Run by tests/mpi/dyn_xjoin.sh; each job prints "No Errors".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

#define BIG (1 << 18) /* ints: 1 MiB */

/* listen on loopback, publish the port in file, accept one connection; fd or -1 */
static int listen_one(const char *file)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
        getsockname(ls, (struct sockaddr *)&a, &al))
        return -1;
    char tmp[4200];
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

/* wait (30 s at most) for file, connect to the port in it; fd or -1 */
static int connect_one(const char *file)
{
    FILE *f = NULL;
    for (int i = 0; i < 600 && !f; i++)
        if (!(f = fopen(file, "r")))
            usleep(50000);
    unsigned port = 0;
    if (!f || fscanf(f, "%u", &port) != 1 || !port || port > 65535) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void one_join(int side, int rank, const char *dir, int round, int *big, int *got)
{
    char file[4096];
    snprintf(file, sizeof(file), "%s/%d.%d", dir, rank, round);
    int listener = (round == 1) == (side == 0);
    int fd = listener ? listen_one(file) : connect_one(file);
    TEST_ASSERT_MSG(fd >= 0, "round %d: no socket", round);
    if (fd < 0)
        return;
    MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    int rc = MPI_Comm_join(fd, &inter);
    close(fd);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS && inter != MPI_COMM_NULL, "round %d: join rc %d",
                    round, rc);
    if (rc != MPI_SUCCESS || inter == MPI_COMM_NULL)
        return;
    int flag = 0, rsize = 0, lsize = 0;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &lsize);
    TEST_ASSERT(flag && rsize == 1 && lsize == 1);
    /* small message each way: (side, rank) */
    int mine[2] = {side, rank}, theirs[2] = {-1, -1};
    MPI_Sendrecv(mine, 2, MPI_INT, 0, 7, theirs, 2, MPI_INT, 0, 7, inter,
                 MPI_STATUS_IGNORE);
    TEST_ASSERT_MSG(theirs[0] == 1 - side && theirs[1] == rank, "got (%d, %d)", theirs[0],
                    theirs[1]);
    /* 1 MiB each way */
    for (int i = 0; i < BIG; i++)
        big[i] = i * 3 + side + round;
    MPI_Status st;
    MPI_Sendrecv(big, BIG, MPI_INT, 0, 8, got, BIG, MPI_INT, 0, 8, inter, &st);
    int bad = 0, cnt = -1;
    for (int i = 0; i < BIG; i++)
        bad += got[i] != i * 3 + (1 - side) + round;
    MPI_Get_count(&st, MPI_INT, &cnt);
    TEST_ASSERT_MSG(bad == 0 && cnt == BIG, "%d wrong ints, count %d", bad, cnt);
    /* intercommunicator collectives: Bcast from a, then from b */
    for (int from = 0; from < 2; from++) {
        int v = side == from ? 1000 + from : -1;
        MPI_Bcast(&v, 1, MPI_INT, side == from ? MPI_ROOT : 0, inter);
        if (side != from)
            TEST_ASSERT_MSG(v == 1000 + from, "bcast from %d: %d", from, v);
    }
    int in = 10 + side, out = -1, all[2] = {-1, -1};
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, inter);
    TEST_ASSERT_MSG(out == 10 + (1 - side), "allreduce %d", out); /* the other group's */
    MPI_Allgather(&in, 1, MPI_INT, all, 1, MPI_INT, inter);
    TEST_ASSERT_MSG(all[0] == 10 + (1 - side), "allgather %d", all[0]);
    TEST_ASSERT(MPI_Barrier(inter) == MPI_SUCCESS);
    /* merged: a first */
    TEST_ASSERT(MPI_Intercomm_merge(inter, side, &merged) == MPI_SUCCESS);
    int mrank = -1, msize = 0, sum = -1, b = -1;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    TEST_ASSERT_MSG(msize == 2 && mrank == side, "merged rank %d of %d", mrank, msize);
    MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, merged);
    TEST_ASSERT_MSG(sum == 21, "merged allreduce %d", sum);
    b = side == 1 ? 77 + round : -1;
    MPI_Bcast(&b, 1, MPI_INT, 1, merged);
    TEST_ASSERT_MSG(b == 77 + round, "merged bcast %d", b);
    TEST_ASSERT(MPI_Comm_disconnect(&merged) == MPI_SUCCESS && merged == MPI_COMM_NULL);
    TEST_ASSERT(MPI_Comm_disconnect(&inter) == MPI_SUCCESS && inter == MPI_COMM_NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 4 || (strcmp(argv[1], "a") && strcmp(argv[1], "b"))) {
        if (rank == 0)
            printf("usage: dyn_xjoin a|b DIR PAIRS\n");
        MPI_Finalize();
        return 2;
    }
    int side = argv[1][0] == 'b', pairs = atoi(argv[3]);
    if (rank < pairs) {
        int *big = malloc(BIG * sizeof(int)), *got = malloc(BIG * sizeof(int));
        TEST_ASSERT(big && got);
        if (big && got) {
            one_join(side, rank, argv[2], 1, big, got);
            one_join(side, rank, argv[2], 2, big, got);
        }
        free(big);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return test_finish();
}
