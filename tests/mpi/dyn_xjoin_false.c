/*
 * dyn_xjoin_false.c - MPI_Comm_join whose other end claims to be a process of another
 * job and lies.  A thread of rank 0 plays the peer on a socketpair, with a well-formed
 * hello of job "~liar" (its job id sorts after ours: we open a port and send its name)
 * or "!liar" (it sorts first: we wait for its port):
 *   - "~liar" takes our port message (checked: "LOOMPORT" and a version-2 port name),
 *     says it connects and never does: the join fails with MPI_ERR_OTHER at
 *     LOOM_MPI_CONNECT_TIMEOUT, not hangs;
 *   - "~liar" refuses our port: the join fails at once;
 *   - "~liar" stops reading before its verdict: writing our port fails (EPIPE), the
 *     join fails and the process is not killed by SIGPIPE;
 *   - "!liar" sends a well-formed port of another process than its hello named, or a
 *     port message that is not one (no terminating NUL): we answer 0 and fail;
 *   - "!liar" sends nothing after the verdicts: the join fails at the deadline;
 *   - a hello of our own job naming our own rank: refused (verdict 0).
 * In every case but the last one, our verdict on its hello is 1 (a hello of another
 * job is taken).  Run with a short LOOM_MPI_CONNECT_TIMEOUT.
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

#define HELLO_LEN 88 /* the join hello: magic[8], version, size, rank, tag, job id */
#define PORTMSG_LEN (8 + 256) /* "LOOMPORT", a port name NUL-padded to 256 bytes */

enum { NOCONNECT, REFUSEPORT, HANGUP, WRONGPORT, GARBAGE, SILENT, OWNRANK };

struct liar {
    int fd, mode;
    int verdict; /* our verdict on its hello (-1: none came) */
    int port_ok; /* NOCONNECT/REFUSEPORT: our port message was one */
    int reply;   /* WRONGPORT/GARBAGE: our byte after its port message (-1: none) */
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
        ssize_t k = out ? send(fd, b + done, n - done, MSG_NOSIGNAL)
                        : read(fd, b + done, n - done);
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

/* wait until the other end closes (20 s at most) */
static void drain(int fd)
{
    char c;
    while (xfer(fd, &c, 1, 0) == 0)
        ;
}

static void *liar_main(void *arg)
{
    struct liar *l = arg;
    unsigned char h[HELLO_LEN];
    if (xfer(l->fd, h, sizeof(h), 0) < 0)
        return NULL;
    if (l->mode != OWNRANK) { /* another job, rank 0 of 1 */
        int32_t size = 1, rank = 0, tag = 2;
        memcpy(h + 12, &size, 4);
        memcpy(h + 16, &rank, 4);
        memcpy(h + 20, &tag, 4);
        memset(h + 24, 0, 64);
        strcpy((char *)h + 24, l->mode <= HANGUP ? "~liar" : "!liar");
    }
    if (xfer(l->fd, h, sizeof(h), 1) < 0)
        return NULL;
    unsigned char v = 0;
    if (xfer(l->fd, &v, 1, 0) < 0)
        return NULL;
    l->verdict = v;
    if (l->mode == HANGUP) /* our next write (the port message) meets EPIPE */
        shutdown(l->fd, SHUT_RD);
    v = 1;
    if (xfer(l->fd, &v, 1, 1) < 0 || l->verdict != 1)
        return NULL;
    unsigned char pm[PORTMSG_LEN];
    memset(pm, 0, sizeof(pm));
    if (l->mode == NOCONNECT || l->mode == REFUSEPORT) {
        if (xfer(l->fd, pm, sizeof(pm), 0) < 0)
            return NULL;
        l->port_ok = memcmp(pm, "LOOMPORT", 8) == 0 &&
                     memcmp(pm + 8, "loom-port:2:", 12) == 0 && pm[PORTMSG_LEN - 1] == 0;
        v = l->mode == NOCONNECT;
        if (xfer(l->fd, &v, 1, 1) < 0)
            return NULL;
        drain(l->fd);
        return NULL;
    }
    if (l->mode == SILENT || l->mode == HANGUP) {
        drain(l->fd);
        return NULL;
    }
    memcpy(pm, "LOOMPORT", 8);
    if (l->mode == WRONGPORT) /* rank 5 of "!liar", not rank 0 */
        strcpy((char *)pm + 8, "loom-port:2:5:3:00112233445566778899aabbccddeeff:"
                               "127.0.0.1:9:!liar");
    else
        memset(pm + 8, 'x', PORTMSG_LEN - 8);
    if (xfer(l->fd, pm, sizeof(pm), 1) < 0)
        return NULL;
    if (xfer(l->fd, &v, 1, 0) == 0)
        l->reply = v;
    drain(l->fd);
    return NULL;
}

static void join_liar(int mode, const char *what)
{
    int sp[2];
    TEST_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
    struct liar l = {sp[1], mode, -1, 0, -1};
    pthread_t th;
    TEST_ASSERT(pthread_create(&th, NULL, liar_main, &l) == 0);
    MPI_Comm inter = MPI_COMM_WORLD;
    int cls = -1, rc = MPI_Comm_join(sp[0], &inter);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_OTHER, "%s: class %d", what, cls);
    TEST_ASSERT_MSG(inter == MPI_COMM_NULL, "%s: a communicator came back", what);
    close(sp[0]);
    pthread_join(th, NULL);
    close(sp[1]);
    if (mode == OWNRANK) {
        TEST_ASSERT_MSG(l.verdict == 0, "%s: verdict %d", what, l.verdict);
        return;
    }
    TEST_ASSERT_MSG(l.verdict == 1, "%s: verdict on a hello of another job: %d", what,
                    l.verdict);
    if (mode == NOCONNECT || mode == REFUSEPORT)
        TEST_ASSERT_MSG(l.port_ok, "%s: no port message came", what);
    if (mode == WRONGPORT || mode == GARBAGE)
        TEST_ASSERT_MSG(l.reply == 0, "%s: answer to its port: %d", what, l.reply);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rank == 0) {
        join_liar(NOCONNECT, "takes our port and never connects");
        join_liar(REFUSEPORT, "refuses our port");
        join_liar(HANGUP, "stops reading before its verdict");
        join_liar(WRONGPORT, "a port of another process than its hello's");
        join_liar(GARBAGE, "a port message that is not one");
        join_liar(SILENT, "no port message at all");
        join_liar(OWNRANK, "a hello naming my own rank");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return test_finish();
}
