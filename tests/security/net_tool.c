/* net_tool.c - the hostile network peer of the t-net-*.sh tests: idle crowds
 * on a listener, a fake mpiexec, a fake tree parent and a fake rendezvous
 * server that keep what the real side hands them, and the uses an attacker
 * would make of it.
 *
 * Contract (one subcommand per run; exit 0: the property held, 1: it did
 * not (the line says which), 2: usage or setup error, 77: cannot test here):
 *   crowd ADDR PORT N SECONDS
 *       open N idle TCP connections to ADDR:PORT (retrying the first connect
 *       for up to 10 s, the others non-blocking at once) and hold them for
 *       SECONDS or until SIGTERM; prints "crowd: N open or opening" once they
 *       are started.  Sends nothing.
 *   fakempx PORTFILE RECORD MARKER SECONDS
 *       listen on 127.0.0.1 (port written to PORTFILE); every connection's
 *       bytes are appended to RECORD, and it is answered with an mpiexec job
 *       frame (both protocol versions, alternating) whose one rank would run
 *       "touch MARKER".  Stops after SECONDS.
 *   rdvcrowd N
 *       a rendezvous server for 3 nodes; N idle connections to it; then the 3
 *       real nodes must get their tables within 5 s.
 *   linkcred
 *       a fake parent: a real tree child (munge) connects to it; the fake
 *       speaks the listener's part (a nonce) and keeps the child's
 *       credential.  Passes if uid nobody cannot decode that credential and
 *       the real parent refuses it on a connection of its own.
 *   rdvcred
 *       a fake rendezvous server: a real node connects; the fake keeps the
 *       node's credential.  Passes if uid nobody cannot decode it.
 *   badcred ADDR PORT
 *       a stranger at a rendezvous server (e.g. mpiexec's): connect to
 *       ADDR:PORT (retrying for up to 10 s), take the server's nonce, send a
 *       forged credential and a registration, and wait (5 s at most) for the
 *       server to close.  Passes if it closed without sending anything.
 *   freeport
 *       print a TCP port of 127.0.0.1 that was free a moment ago.
 *
 * Notes: links only treenet's public API (treenet.h), common/pack.h and
 *   libmunge, so the same file builds against older trees for the
 *   failing-before runs.  Everything on 127.0.0.1, bounded in time.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_MUNGE
#include <munge.h>
#endif

#include "loop.h"
#include "pack.h"
#include "treenet.h"

#define JOB "77.0"

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int tcp_connect(const char *addr, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int tcp_listen(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t sl = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &sl) < 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

/* Read what arrives on fd for up to ms (or until EOF) into buf. */
static size_t read_for(int fd, void *buf, size_t cap, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;
    size_t got = 0;

    while (got < cap) {
        int64_t left = (int64_t)(end - now_ms());
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t n = recv(fd, (char *)buf + got, cap - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static int send_frame(int fd, const void *b, size_t n)
{
    uint8_t h[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8),
                    (uint8_t)n};
    return send(fd, h, 4, MSG_NOSIGNAL) == 4 && send(fd, b, n, MSG_NOSIGNAL) == (ssize_t)n
               ? 0
               : -1;
}

/* ---- crowd ------------------------------------------------------------------ */

static volatile sig_atomic_t stop_flag;
static void on_term(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int cmd_crowd(const char *addr, int port, int n, int secs)
{
    int *fds = calloc((size_t)n, sizeof(int)), est = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    uint64_t until = now_ms() + 10000;

    raise_nofile();
    signal(SIGTERM, on_term);
    if (!fds || inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        return 2;
    while (now_ms() < until && !stop_flag && (fds[0] = tcp_connect(addr, port)) < 0)
        usleep(20000);
    if (fds[0] < 0) {
        fprintf(stderr, "crowd: cannot connect to %s:%d\n", addr, port);
        return 2;
    }
    /* the rest at once, non-blocking: a listener that does not accept now
     * finds them all in its backlog (and the kernel's SYN retries) later */
    for (int i = 1; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fds[i] >= 0 && connect(fds[i], (struct sockaddr *)&a, sizeof(a)) < 0 &&
            errno != EINPROGRESS) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
    fprintf(stderr, "crowd: %d open or opening\n", n);
    for (uint64_t end = now_ms() + (uint64_t)secs * 1000; now_ms() < end && !stop_flag;)
        usleep(50000);
    for (int i = 0; i < n; i++) {
        int err = 0;
        socklen_t el = sizeof(err);
        if (fds[i] >= 0 && getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
            !err)
            est++;
        if (fds[i] >= 0)
            close(fds[i]);
    }
    fprintf(stderr, "crowd: %d were still without error at the end\n", est);
    free(fds);
    return 0;
}

/* ---- forged credential ---------------------------------------------------------- */

static int cmd_badcred(const char *addr, int port)
{
    uint64_t until = now_ms() + 10000;
    char buf[600], cred[1400];
    int fd;
    ssize_t n;
    size_t got = 0;

    while ((fd = tcp_connect(addr, port)) < 0 && now_ms() < until)
        usleep(20000);
    if (fd < 0) {
        fprintf(stderr, "badcred: cannot connect to %s:%d\n", addr, port);
        return 2;
    }
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    /* the server's nonce frame */
    while (got < 4 && (n = recv(fd, buf + got, 4 - got, 0)) > 0)
        got += (size_t)n;
    size_t len = got == 4 ? ((size_t)(uint8_t)buf[2] << 8 | (uint8_t)buf[3]) : 0;
    if (got < 4 || buf[0] || buf[1] || len == 0 || len >= 512 ||
        recv(fd, buf, len, MSG_WAITALL) != (ssize_t)len) {
        fprintf(stderr, "badcred: no nonce frame from %s:%d\n", addr, port);
        close(fd);
        return 2;
    }
    buf[len] = '\0';
    const char *nonce = strncmp(buf, "loom2 ", 6) == 0 ? buf + 6 : buf;
    /* a credential naming node 0 with a tag made without the job's secret */
    snprintf(cred, sizeof(cred), "loom2 %s 0 rdv %s %s %064d", JOB, nonce, nonce, 0);
    if (send_frame(fd, cred, strlen(cred)) < 0 || send_frame(fd, "port 1", 6) < 0) {
        fprintf(stderr,
                "badcred: refused: the server closed while the credential went\n");
        close(fd);
        return 0;
    }
    n = recv(fd, buf, sizeof(buf), 0);
    int e = errno;
    close(fd);
    if (n > 0) {
        fprintf(stderr, "badcred: FAIL: the server answered the forged credential\n");
        return 1;
    }
    /* a reset is a close too: the server closed with our bytes unread */
    if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK || e == EINTR)) {
        fprintf(stderr, "badcred: the server neither answered nor closed in 5 s\n");
        return 1;
    }
    fprintf(stderr, "badcred: refused: the server closed the connection\n");
    return 0;
}

/* ---- fake mpiexec ------------------------------------------------------------ */

/* An F_JOB frame of the given protocol version: one rank running argv. */
static void job_frame(struct pack *pk, uint32_t version, const char *marker)
{
    struct pack b;
    char cmd[512];

    snprintf(cmd, sizeof(cmd), "touch %s", marker);
    pack_init(&b);
    pack_u32(&b, version);
    pack_str(&b, "6666.0");
    pack_i32(&b, 1); /* size */
    pack_i32(&b, 1); /* nnodes */
    pack_i32(&b, 0); /* this node */
    pack_i32(&b, 0); /* fence timeout */
    pack_i32(&b, 1); /* pmi level */
    pack_i32(&b, 0); /* bind */
    pack_i32(&b, 0); /* report bindings */
    pack_i32(&b, 0); /* verbose */
    pack_str(&b, "fake");
    pack_i32(&b, 0); /* rank 0 on node 0 */
    pack_i32(&b, 1); /* napps */
    pack_i32(&b, 1); /* np */
    pack_i32(&b, 3); /* argc */
    pack_str(&b, "/bin/sh");
    pack_str(&b, "-c");
    pack_str(&b, cmd);
    pack_i32(&b, 1); /* env */
    pack_str(&b, "PATH=/usr/bin:/bin");
    pack_str(&b, "/");
    pack_u8(&b, 0);
    pack_init(pk);
    pack_u32(pk, (uint32_t)b.len + 1);
    pack_u8(pk, 2); /* MPX_F_JOB */
    pack_raw(pk, b.buf, b.len);
    pack_free(&b);
}

static int cmd_fakempx(const char *portfile, const char *record, const char *marker,
                       int secs)
{
    int port, lfd = tcp_listen(&port), k = 0;
    uint64_t end = now_ms() + (uint64_t)secs * 1000;
    FILE *pf;

    if (lfd < 0 || !(pf = fopen(portfile, "w")))
        return 2;
    fprintf(pf, "%d\n", port);
    fclose(pf);
    while (now_ms() < end) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        char buf[8192];
        size_t n = read_for(fd, buf, sizeof(buf), 300);
        FILE *rf = fopen(record, "ab");
        if (rf) {
            fwrite(buf, 1, n, rf);
            fclose(rf);
        }
        struct pack pk;
        job_frame(&pk, 1 + (uint32_t)(k++ % 2), marker);
        if (send(fd, pk.buf, pk.len, MSG_NOSIGNAL) < 0) {
            /* the proxy went: next one */
        }
        pack_free(&pk);
        n = read_for(fd, buf, sizeof(buf), 1000);
        rf = fopen(record, "ab");
        if (rf) {
            fwrite(buf, 1, n, rf);
            fclose(rf);
        }
        close(fd);
    }
    close(lfd);
    return 0;
}

/* ---- rendezvous crowd ------------------------------------------------------- */

struct node_arg {
    int port, id, rc;
    char **addrs;
};

static void *node_main(void *p)
{
    struct node_arg *a = p;
    char server[64];
    snprintf(server, sizeof(server), "127.0.0.1:%d", a->port);
    a->rc = rdv_exchange(server, JOB, 3, a->id, 20000 + a->id, TREENET_AUTH_NONE, 5000,
                         &a->addrs, NULL);
    return NULL;
}

static int cmd_rdvcrowd(int n)
{
    struct rdv_server *s =
        rdv_server_start(3, JOB, getuid(), TREENET_AUTH_NONE, "127.0.0.1", 30000);
    struct node_arg args[3];
    pthread_t th[3];
    int *fds = calloc((size_t)n, sizeof(int)), open_n = 0, bad = 0;
    uint64_t t0;

    raise_nofile();
    if (!s || !fds)
        return 2;
    for (int i = 0; i < n; i++)
        open_n += (fds[i] = tcp_connect("127.0.0.1", rdv_server_port(s))) >= 0;
    fprintf(stderr, "rdvcrowd: %d idle connections open\n", open_n);
    t0 = now_ms();
    for (int i = 0; i < 3; i++) {
        args[i] = (struct node_arg){.port = rdv_server_port(s), .id = i};
        pthread_create(&th[i], NULL, node_main, &args[i]);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        if (args[i].rc != 0) {
            fprintf(stderr, "rdvcrowd: node %d: %s\n", i, strerror(-args[i].rc));
            bad++;
        }
        rdv_addrs_free(args[i].addrs, 3);
    }
    fprintf(stderr, "rdvcrowd: nodes done after %llu ms\n",
            (unsigned long long)(now_ms() - t0));
    int rc = rdv_server_stop(s);
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    if (bad || rc != 0) {
        fprintf(stderr, "rdvcrowd: FAIL: the crowd kept real nodes out (server: %s)\n",
                strerror(-rc));
        return 1;
    }
    fprintf(stderr,
            "rdvcrowd: ok: every node got its table despite %d idle connections\n",
            open_n);
    return 0;
}

/* ---- credentials kept by a fake listener ------------------------------------- */

#ifdef HAVE_MUNGE
/* munge_decode of cred as uid 65534 (in a child): the munge error code. */
static int decode_as_nobody(const char *cred)
{
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        void *p = NULL;
        int len = 0;
        if (setgid(65534) < 0 || setuid(65534) < 0)
            _exit(250);
        munge_err_t e = munge_decode(cred, NULL, &p, &len, NULL, NULL);
        _exit((int)e);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* Accept one connection on lfd within ms; speak the listener's part of the
 * version 2 handshake (a nonce frame), keep the first frame the peer sends
 * (its credential) in cred.  0, or -1 when nothing came. */
static int fake_listener(int lfd, int ms, char *cred, size_t cap)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    uint8_t h[4];
    int fd;
    size_t n;

    if (poll(&p, 1, ms) <= 0 || (fd = accept(lfd, NULL, NULL)) < 0)
        return -1;
    (void)send_frame(fd, "loom2 00112233445566778899aabbccddeeff", 38);
    n = read_for(fd, h, 4, ms);
    if (n != 4) {
        close(fd);
        return -1;
    }
    size_t l = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    if (l == 0 || l >= cap || read_for(fd, cred, l, ms) != l) {
        close(fd);
        return -1;
    }
    cred[l] = '\0';
    close(fd);
    return 0;
}

struct child_arg {
    int parent_port;
    struct loop *lp;
    struct treenet *tn;
    atomic_int stop;
};

static void nop_recv(void *a, int f, const void *b, size_t l)
{
    (void)a, (void)f, (void)b, (void)l;
}
static void nop_lost(void *a, int n, const char *w)
{
    (void)a, (void)n, (void)w;
}

static void *loop_main(void *p)
{
    struct child_arg *c = p;
    while (!atomic_load(&c->stop))
        loop_run_once(c->lp, 20);
    return NULL;
}

static int cmd_linkcred(void)
{
    static const struct treenet_ops ops = {nop_recv, nop_lost, NULL};
    struct treenet_config cfg = {.nnodes = 2,
                                 .width = 2,
                                 .jobkey = JOB,
                                 .uid = getuid(),
                                 .auth = TREENET_AUTH_MUNGE,
                                 .connect_timeout_ms = 8000};
    struct child_arg ch = {0}, par = {0};
    pthread_t tc, tp;
    char cred[8192], a0[64], a1[64], *addrs[2] = {a0, a1};
    int port, lfd = tcp_listen(&port), rc = 0, e;

    if (getuid() != 0) {
        fprintf(stderr, "linkcred: needs root (a second uid)\n");
        return 77;
    }
    /* the real parent (node 0) and a real child (node 1) pointed at the fake */
    par.lp = loop_create();
    cfg.nodeid = 0;
    par.tn = treenet_create(par.lp, &cfg, &ops, NULL);
    ch.lp = loop_create();
    cfg.nodeid = 1;
    ch.tn = treenet_create(ch.lp, &cfg, &ops, NULL);
    if (lfd < 0 || !par.tn || !ch.tn)
        return 2;
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", port);
    snprintf(a1, sizeof(a1), "127.0.0.1:1");
    if (treenet_start(ch.tn, addrs) < 0)
        return 2;
    pthread_create(&tc, NULL, loop_main, &ch);
    /* 1. the fake replays what the child gave it to the real parent, on a
     * connection of its own (the child retries, so the fake gets another
     * credential for step 2) */
    if (fake_listener(lfd, 5000, cred, sizeof(cred)) < 0) {
        fprintf(stderr, "linkcred: the child sent nothing to the fake parent\n");
        rc = 2;
        goto out;
    }
    {
        int fd = tcp_connect("127.0.0.1", treenet_port(par.tn));
        char in[8192];
        size_t n;
        if (fd < 0 || treenet_start(par.tn, NULL) < 0) {
            rc = 2;
            goto out;
        }
        pthread_create(&tp, NULL, loop_main, &par);
        n = read_for(fd, in, sizeof(in), 300); /* the parent's nonce, if any */
        (void)send_frame(fd, cred, strlen(cred));
        n = read_for(fd, in, sizeof(in), 2000);
        close(fd);
        atomic_store(&par.stop, 1);
        pthread_join(tp, NULL);
        if (n > 4) {
            fprintf(stderr,
                    "linkcred: FAIL: the real parent accepted the credential "
                    "the fake got and answered (%zu bytes)\n",
                    n);
            rc = 1;
        } else {
            fprintf(stderr, "linkcred: ok: the real parent refused the replay\n");
        }
    }
    /* 2. the fake's owner is another uid: can it read the credential? */
    if (fake_listener(lfd, 5000, cred, sizeof(cred)) < 0) {
        fprintf(stderr, "linkcred: the child did not come back to the fake parent\n");
        rc = rc ? rc : 2;
        goto out;
    }
    e = decode_as_nobody(cred);
    if (e == 0) {
        fprintf(stderr,
                "linkcred: FAIL: uid 65534 decoded the child's root credential\n");
        rc = 1;
    } else {
        fprintf(stderr, "linkcred: ok: uid 65534 cannot decode it (%s)\n",
                munge_strerror((munge_err_t)e));
    }
out:
    atomic_store(&ch.stop, 1);
    pthread_join(tc, NULL);
    treenet_destroy(ch.tn);
    treenet_destroy(par.tn);
    loop_destroy(ch.lp);
    loop_destroy(par.lp);
    close(lfd);
    return rc;
}

struct rdv_arg {
    int port, rc;
};

static void *rdv_node(void *p)
{
    struct rdv_arg *a = p;
    char server[64], **addrs = NULL;
    snprintf(server, sizeof(server), "127.0.0.1:%d", a->port);
    a->rc = rdv_exchange(server, JOB, 2, 1, 4242, TREENET_AUTH_MUNGE, 3000, &addrs, NULL);
    rdv_addrs_free(addrs, 2);
    return NULL;
}

static int cmd_rdvcred(void)
{
    struct rdv_arg a = {0};
    pthread_t th;
    char cred[8192];
    int lfd = tcp_listen(&a.port), rc = 0, e;

    if (getuid() != 0) {
        fprintf(stderr, "rdvcred: needs root (a second uid)\n");
        return 77;
    }
    if (lfd < 0)
        return 2;
    pthread_create(&th, NULL, rdv_node, &a);
    if (fake_listener(lfd, 5000, cred, sizeof(cred)) < 0) {
        fprintf(stderr, "rdvcred: the node sent nothing to the fake server\n");
        rc = 2;
    } else if ((e = decode_as_nobody(cred)) == 0) {
        fprintf(stderr, "rdvcred: FAIL: uid 65534 decoded the node's root credential\n");
        rc = 1;
    } else {
        fprintf(stderr, "rdvcred: ok: uid 65534 cannot decode it (%s)\n",
                munge_strerror((munge_err_t)e));
    }
    pthread_join(th, NULL);
    close(lfd);
    return rc;
}
#endif

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc == 6 && strcmp(argv[1], "crowd") == 0)
        return cmd_crowd(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 6 && strcmp(argv[1], "fakempx") == 0)
        return cmd_fakempx(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc == 2 && strcmp(argv[1], "freeport") == 0) {
        int port, fd = tcp_listen(&port);
        if (fd < 0)
            return 2;
        close(fd);
        printf("%d\n", port);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "badcred") == 0)
        return cmd_badcred(argv[2], atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "rdvcrowd") == 0)
        return cmd_rdvcrowd(atoi(argv[2]));
#ifdef HAVE_MUNGE
    if (argc == 2 && strcmp(argv[1], "linkcred") == 0)
        return cmd_linkcred();
    if (argc == 2 && strcmp(argv[1], "rdvcred") == 0)
        return cmd_rdvcred();
#else
    if (argc == 2 &&
        (strcmp(argv[1], "linkcred") == 0 || strcmp(argv[1], "rdvcred") == 0)) {
        fprintf(stderr, "%s: built without libmunge\n", argv[1]);
        return 77;
    }
#endif
    fprintf(stderr,
            "usage: net_tool crowd ADDR PORT N SECONDS | fakempx PORTFILE RECORD "
            "MARKER SECONDS | rdvcrowd N | badcred ADDR PORT | linkcred | rdvcred | "
            "freeport\n");
    return 2;
}
