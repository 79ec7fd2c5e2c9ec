/*
 * dyn_join_false.c - MPI_Comm_join whose other end lies: a thread of rank 0 plays the
 * peer on a socketpair and answers rank 0's hello with a well-formed hello of the same
 * job that names rank 1, which never joins (it waits in a barrier).  The join must fail
 * with MPI_ERR_OTHER within LOOM_MPI_CONNECT_TIMEOUT instead of waiting for rank 1 for
 * ever; then a peer that reads our hello and closes (it rejected us) must fail the join
 * at once.  Run with at least 2 ranks and a short LOOM_MPI_CONNECT_TIMEOUT.
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

#define HELLO_LEN 88 /* the join hello: magic[8], version, size, rank, tag, job id */

struct liar {
    int fd;
    int close_early; /* read the hello, then close: the peer rejected us */
};

/* read or write n bytes within 20 s; 0 or -1 */
static int xfer(int fd, void *buf, size_t n, int out)
{
    char *b = buf;
    size_t done = 0;
    while (done < n) {
        struct pollfd pf = {fd, (short)(out ? POLLOUT : POLLIN), 0};
        if (poll(&pf, 1, 20000) <= 0)
            return -1;
        ssize_t k = out ? write(fd, b + done, n - done) : read(fd, b + done, n - done);
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

static void *liar_main(void *arg)
{
    struct liar *l = arg;
    unsigned char h[HELLO_LEN];
    if (xfer(l->fd, h, sizeof(h), 0) < 0 || l->close_early) {
        close(l->fd);
        return NULL;
    }
    /* the same magic, version, size and job id; rank 1; an even tag */
    int32_t rank = 1, tag = 2;
    memcpy(h + 16, &rank, sizeof(rank));
    memcpy(h + 20, &tag, sizeof(tag));
    if (xfer(l->fd, h, sizeof(h), 1) < 0)
        return NULL;
    /* whatever the joining side writes after the hellos is read and answered "yes" */
    unsigned char v = 0;
    if (xfer(l->fd, &v, 1, 0) == 0) {
        v = 1;
        (void)xfer(l->fd, &v, 1, 1);
    }
    return NULL;
}

static void join_liar(int close_early, const char *what)
{
    int sp[2];
    TEST_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
    struct liar l = {sp[1], close_early};
    pthread_t th;
    TEST_ASSERT(pthread_create(&th, NULL, liar_main, &l) == 0);
    MPI_Comm inter = MPI_COMM_WORLD;
    double t0 = MPI_Wtime();
    int cls = -1, rc = MPI_Comm_join(sp[0], &inter);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_OTHER, "%s: class %d", what, cls);
    TEST_ASSERT_MSG(inter == MPI_COMM_NULL, "%s: a communicator came back", what);
    TEST_ASSERT_MSG(MPI_Wtime() - t0 < 30.0, "%s: took %.1f s", what, MPI_Wtime() - t0);
    close(sp[0]);
    pthread_join(th, NULL);
    if (!close_early)
        close(sp[1]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT(size >= 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rank == 0 && size >= 2) {
        join_liar(0, "a hello naming rank 1, which does not join");
        join_liar(1, "a peer that closes after reading our hello");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return test_finish();
}
