/*
 * pollpp.c - the floor for a TCP netmod: ping-pong and streaming over one TCP
 *            connection with non-blocking sockets that busy-poll (no MPI, no framing
 *            beyond the bytes themselves), so an MPI over TCP can be compared with what
 *            the kernel allows on the same path.
 *
 * Usage:
 *   pollpp -l [-T SECONDS] [-r REPS]             both ends in this process pair (fork),
 *                                                over 127.0.0.1
 *   pollpp -s PORT [-T s] [-r n]                 server: accept one connection, echo
 *   pollpp -c ADDR PORT [-T s] [-r n]            client: measures and prints
 * Output (the measuring side), one line per case, same format as bench/mpi/mpibench:
 *   RESULT lat 2 <bytes> <half round trip us> us <iters> <min> <max>
 *   RESULT bw 2 <bytes> <MB/s> MB/s <iters> <min> <max>
 * Sizes: latency 0 B, 8 B, 1 KiB, 64 KiB, 1 MiB; bandwidth 64 KiB, 256 KiB, 1 MiB,
 * 4 MiB (a window of 64 messages of that size, then a 1-byte acknowledgement).
 * Method: warm-up, a calibration loop sets the iteration count so one repetition takes
 * about -T seconds (default 0.02), -r repetitions (default 5), median printed.  The
 * server learns each case from an 16-byte command {kind, bytes, iters}.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64

static double budget = 0.02;
static int reps = 5;
static char *buf;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Busy-polling exact-length send/recv on a non-blocking socket. */
static void xsend(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            die("send");
        }
        p += k;
        n -= (size_t)k;
    }
}

static void xrecv(int fd, char *p, size_t n)
{
    while (n) {
        ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            die("recv");
        }
        if (k == 0) {
            fprintf(stderr, "pollpp: peer closed\n");
            exit(1);
        }
        p += k;
        n -= (size_t)k;
    }
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

struct cmd {
    uint32_t kind; /* 1 lat, 2 bw, 0 quit */
    uint32_t pad;
    uint64_t bytes;
    uint64_t iters;
};

static void serve(int fd)
{
    for (;;) {
        struct cmd c;
        xrecv(fd, (char *)&c, sizeof(c));
        if (c.kind == 0)
            return;
        for (uint64_t i = 0; i < c.iters; i++) {
            if (c.kind == 1) {
                xrecv(fd, buf, c.bytes ? c.bytes : 1);
                xsend(fd, buf, c.bytes ? c.bytes : 1);
            } else {
                for (int w = 0; w < WINDOW; w++)
                    xrecv(fd, buf, c.bytes);
                xsend(fd, buf, 1);
            }
        }
    }
}

static double run(int fd, uint32_t kind, size_t bytes, uint64_t iters)
{
    struct cmd c = {.kind = kind, .bytes = bytes, .iters = iters};
    xsend(fd, (char *)&c, sizeof(c));
    double t0 = now();
    for (uint64_t i = 0; i < iters; i++) {
        if (kind == 1) { /* TCP cannot carry 0 bytes: "0 B" moves 1 byte */
            xsend(fd, buf, bytes ? bytes : 1);
            xrecv(fd, buf, bytes ? bytes : 1);
        } else {
            for (int w = 0; w < WINDOW; w++)
                xsend(fd, buf, bytes);
            xrecv(fd, buf, 1);
        }
    }
    return now() - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void measure(int fd, uint32_t kind, size_t bytes)
{
    double v[64];
    run(fd, kind, bytes, 2); /* warm-up */
    uint64_t iters = 1;
    double t;
    while ((t = run(fd, kind, bytes, iters)) < budget / 10 && iters < (1u << 24))
        iters *= 2;
    iters = (uint64_t)(iters * budget / (t > 1e-9 ? t : 1e-9));
    if (iters < 1)
        iters = 1;
    uint64_t first = iters;
    for (int r = 0; r < reps; r++) {
        t = run(fd, kind, bytes, iters);
        v[r] = kind == 1 ? t / (double)iters / 2 * 1e6
                         : (double)bytes * WINDOW * (double)iters / t / 1e6;
    }
    qsort(v, (size_t)reps, sizeof(v[0]), cmp);
    double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
    printf("RESULT %s 2 %zu %.3f %s %llu %.3f %.3f\n", kind == 1 ? "lat" : "bw", bytes,
           med, kind == 1 ? "us" : "MB/s", (unsigned long long)first, v[0], v[reps - 1]);
    fflush(stdout);
}

static void client(int fd)
{
    static const size_t lat[] = {0, 8, 1024, 65536, 1 << 20};
    static const size_t bw[] = {65536, 262144, 1 << 20, 4 << 20};
    for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
        measure(fd, 1, lat[i]);
    for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); i++)
        measure(fd, 2, bw[i]);
    struct cmd q = {0};
    xsend(fd, (char *)&q, sizeof(q));
}

static int listen_on(int port, int *got_port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t l = sizeof(sa);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &l) < 0)
        die("listen");
    *got_port = ntohs(sa.sin_port);
    return fd;
}

static int accept_one(int lfd)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    close(lfd);
    tune(fd);
    return fd;
}

static int connect_to(const char *addr, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "pollpp: bad address %s\n", addr);
        exit(2);
    }
    for (int tries = 0; connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0; tries++) {
        if (tries > 200)
            die("connect");
        usleep(10000);
    }
    tune(fd);
    return fd;
}

int main(int argc, char **argv)
{
    int mode = 0, port = 0;
    const char *addr = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-l"))
            mode = 'l';
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            mode = 's', port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 2 < argc)
            mode = 'c', addr = argv[i + 1], port = atoi(argv[i + 2]), i += 2;
        else if (!strcmp(argv[i], "-T") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            mode = 0, i = argc;
    }
    if (!mode || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: pollpp -l | -s PORT | -c ADDR PORT  [-T s] [-r n]\n");
        return 2;
    }
    buf = malloc(4 << 20);
    if (!buf)
        return 1;
    memset(buf, 1, 4 << 20);
    if (mode == 's') {
        int p;
        serve(accept_one(listen_on(port, &p)));
        return 0;
    }
    if (mode == 'c') {
        client(connect_to(addr, port));
        return 0;
    }
    int p, lfd = listen_on(0, &p);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        serve(accept_one(lfd));
        _exit(0);
    }
    close(lfd);
    client(connect_to("127.0.0.1", p));
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
