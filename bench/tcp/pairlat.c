/*
 * pairlat.c - an MPI's ping-pong latency against the polling TCP floor measured inside
 *             the same job, on the same two processes, in alternating short blocks.
 *
 * Why: on a shared, noisy machine the round-trip time of one path drifts between states
 * that last seconds (the same binary's 8 B latency between two network namespaces ranges
 * 8-17 us from one launch to the next), so an MPI job and a separate floor run often see
 * different states.  Here ranks 0 and 1 also open a plain TCP connection to each other
 * and run blocks of K polling round trips over it, then K MPI_Send/MPI_Recv round trips,
 * then again, the order flipped every pair; each MPI block is compared with the floor
 * block next to it.  The same source is compiled by Loom's, MPICH's and Open MPI's mpicc.
 *
 * Usage: mpiexec -n 2 pairlat [-p PAIRS] [-B SECONDS]
 *   -p  block pairs per size (default 40)       -B  seconds per block (default 0.004)
 *   PAIRLAT_ADDR  the IPv4 address rank 1 connects to (default: rank 0's addresses,
 *                 non-loopback first, each tried in turn)
 * Output (rank 0), for 0 B, 8 B and 1 KiB, in mpibench's RESULT format:
 *   RESULT pfloor 2 <bytes> <median floor block, half round trip> us <K> <min> <max>
 *   RESULT pmpi   2 <bytes> <median MPI block, half round trip> us <K> <min> <max>
 *   RESULT pratio 2 <bytes> <median of MPI block / its floor block> x <pairs> <min> <max>
 * The floor is bench/tcp/pollpp.c's: non-blocking sockets polled with recv/send, no
 * framing, TCP_NODELAY; "0 B" moves 1 byte (TCP cannot carry 0).  A rank stuck for 60 s
 * in the floor's poll exits with an error; the MPI part has the MPI's own failure
 * handling.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXADDR 16
#define MAXPAIRS 1000
#define STUCK_S 60.0

static int rank;
static char buf[1024];

struct card {
    uint64_t cookie;
    uint32_t port, n;
    uint32_t addr[MAXADDR]; /* network order */
};

static void fail(const char *what)
{
    fprintf(stderr, "pairlat: rank %d: %s: %s\n", rank, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Exact-length polling send/recv on a non-blocking socket; 60 s without progress fails.
 */
static void xfer(int fd, char *p, size_t n, int out)
{
    double t0 = 0;
    unsigned spins = 0;
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, p, n, MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            spins = 0;
            continue;
        }
        if (k == 0 && !out) {
            errno = ECONNRESET;
            fail("floor connection closed");
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            fail(out ? "floor send" : "floor recv");
        if ((++spins & 0xffff) == 0) {
            if (t0 == 0)
                t0 = MPI_Wtime();
            else if (MPI_Wtime() - t0 > STUCK_S) {
                errno = ETIMEDOUT;
                fail("floor peer silent");
            }
        }
    }
}

/* rank 0: a listening socket and the addresses rank 1 may reach it on */
static int listener(struct card *c)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t l = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &l) < 0)
        fail("floor listen");
    c->port = ntohs(sa.sin_port);
    c->n = 0;
    const char *want = getenv("PAIRLAT_ADDR");
    struct in_addr a;
    if (want && *want) {
        if (inet_pton(AF_INET, want, &a) != 1) {
            fprintf(stderr, "pairlat: PAIRLAT_ADDR=%s is not an IPv4 address\n", want);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        c->addr[c->n++] = a.s_addr;
        return fd;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) < 0)
        fail("getifaddrs");
    for (int loop = 0; loop < 2; loop++) /* non-loopback first */
        for (i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                (i->ifa_flags & IFF_UP) && !!(i->ifa_flags & IFF_LOOPBACK) == loop &&
                c->n < MAXADDR)
                c->addr[c->n++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(ifs);
    return fd;
}

/* rank 1: connect to one address within 1 s and prove it reached rank 0 (cookie echo,
 * 1 s): at most 16 addresses x 2 s, well inside rank 0's STUCK_S */
static int try_connect(uint32_t addr, uint32_t port, uint64_t cookie)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = addr;
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
        goto bad;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int err = 0;
    socklen_t l = sizeof(err);
    if (poll(&p, 1, 1000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 ||
        err)
        goto bad;
    if (send(fd, &cookie, sizeof(cookie), MSG_NOSIGNAL) != sizeof(cookie))
        goto bad;
    uint64_t back = 0;
    p.events = POLLIN;
    if (poll(&p, 1, 1000) != 1 ||
        recv(fd, &back, sizeof(back), MSG_WAITALL) != sizeof(back) || back != cookie)
        goto bad;
    return fd;
bad:
    close(fd);
    return -1;
}

/* The floor connection between ranks 0 and 1 in *fdp (-1 elsewhere); returns on every
 * rank whether there is one. */
static int floor_connect(int *fdp)
{
    struct card c = {0};
    int lfd = -1, fd = -1, ok = 0;
    if (rank == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c.cookie =
            ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid();
        lfd = listener(&c);
        MPI_Send(&c, sizeof(c), MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        /* accept until rank 1 reports, dropping connections without our cookie; the
         * last one proven is the one rank 1 kept (it reports only after its echo) */
        MPI_Request rq;
        MPI_Irecv(&ok, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &rq);
        double t0 = MPI_Wtime();
        for (int done = 0; !done;) {
            struct pollfd p = {.fd = lfd, .events = POLLIN};
            if (poll(&p, 1, 10) == 1) {
                int a = accept(lfd, NULL, NULL);
                uint64_t got = 0;
                struct pollfd q = {.fd = a, .events = POLLIN};
                if (a >= 0 && poll(&q, 1, 1000) == 1 &&
                    recv(a, &got, sizeof(got), MSG_DONTWAIT) == sizeof(got) &&
                    got == c.cookie &&
                    send(a, &got, sizeof(got), MSG_NOSIGNAL) == sizeof(got)) {
                    if (fd >= 0)
                        close(fd);
                    fd = a;
                } else if (a >= 0) {
                    close(a);
                }
            }
            MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            if (!done && MPI_Wtime() - t0 > STUCK_S) {
                errno = ETIMEDOUT;
                fail("rank 1 never reported on the floor connection");
            }
        }
        close(lfd);
        if (!ok && fd >= 0) {
            close(fd);
            fd = -1;
        }
    } else if (rank == 1) {
        MPI_Recv(&c, sizeof(c), MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (uint32_t i = 0; i < c.n && i < MAXADDR && fd < 0; i++)
            fd = try_connect(c.addr[i], c.port, c.cookie);
        ok = fd >= 0;
        MPI_Send(&ok, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    *fdp = fd;
    return ok;
}

/* K round trips, floor (fd) or MPI; returns rank 0's half round trip in us */
static double block(int fd, int use_mpi, long bytes, long k)
{
    size_t n = bytes ? (size_t)bytes : 1;
    double t = MPI_Wtime();
    for (long i = 0; i < k; i++) {
        if (use_mpi) {
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        } else if (rank == 0) {
            xfer(fd, buf, n, 1);
            xfer(fd, buf, n, 0);
        } else if (rank == 1) {
            xfer(fd, buf, n, 0);
            xfer(fd, buf, n, 1);
        }
    }
    return (MPI_Wtime() - t) * 1e6 / (2.0 * (double)k);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *test, long bytes, double *v, int n, const char *unit,
                   long count)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("RESULT %s 2 %ld %.4f %s %ld %.4f %.4f\n", test, bytes, med, unit, count, v[0],
           v[n - 1]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int np, pairs = 40;
    double blk = 0.004;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            pairs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-B") && i + 1 < argc)
            blk = atof(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: pairlat [-p PAIRS] [-B SECONDS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (pairs < 1 || pairs > MAXPAIRS || np < 2) {
        if (rank == 0)
            fprintf(stderr, "pairlat: needs 2+ ranks and 1..%d pairs\n", MAXPAIRS);
        MPI_Finalize();
        return 2;
    }
    int fd = -1;
    if (!floor_connect(&fd)) { /* every rank knows: all leave together */
        if (rank == 0)
            fprintf(stderr, "pairlat: no TCP connection between ranks 0 and 1\n");
        MPI_Finalize();
        return 1;
    }
    static double fl[MAXPAIRS], mp[MAXPAIRS], ra[MAXPAIRS];
    static const long sizes[] = {0, 8, 1024};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        long b = sizes[s], k = 200;
        block(fd, 0, b, 1000); /* warm-up both paths */
        block(fd, 1, b, 1000);
        double per = block(fd, 0, b, k) * 2e-6;
        k = (long)(blk / (per > 1e-9 ? per : 1e-9));
        k = k < 20 ? 20 : k > 100000 ? 100000 : k;
        MPI_Bcast(&k, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        for (int p = 0; p < pairs; p++) {
            MPI_Barrier(MPI_COMM_WORLD);
            int mpi_first = p & 1;
            double a = block(fd, mpi_first, b, k), c = block(fd, !mpi_first, b, k);
            fl[p] = mpi_first ? c : a;
            mp[p] = mpi_first ? a : c;
            ra[p] = mp[p] / fl[p];
        }
        if (rank == 0) {
            report("pfloor", b, fl, pairs, "us", k);
            report("pmpi", b, mp, pairs, "us", k);
            report("pratio", b, ra, pairs, "x", pairs);
        }
    }
    if (fd >= 0)
        close(fd);
    MPI_Finalize();
    return 0;
}
