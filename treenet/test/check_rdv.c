/* check_rdv.c - unit tests of the rendezvous (treenet/rdv.c): N nodes as
 * threads arriving in scrambled order with AUTH_NONE, AUTH_COOKIE (and a
 * wrong cookie, a proof of another connection or node refused) and AUTH_MUNGE,
 * hostile and half-done connections that must be refused while the real
 * nodes are served, a node that re-registers, the timeout, and a node that
 * watches another fd while it waits (rdv_exchange_cookie_watch), the
 * tree's tables (each node told only of itself, its parent and its children;
 * bounded by the width; malformed tables refused).  All on
 * 127.0.0.1.  The munge cases are skipped, with a message, when munged
 * does not answer.
 *
 * One piece (about 840 lines): every case drives the same thread-per-node harness
 * and stand-in servers at the top, and reads as one walk through rdv.c's contract.
 */
#include "config.h"

#include <check.h>

#include "tn_test.h"
#include "treenet.h"

#define JOB "77.3"

static int munge_ok;

struct node_arg {
    int port; /* server port */
    int nnodes, id;
    int my_port;
    int delay_ms;
    enum treenet_auth auth;
    int timeout_ms;
    int rc;
    char **addrs;
    char ip[TREENET_ADDR_MAX];
    const char *fail; /* say this node cannot join, with this reason */
    const char *cookie; /* AUTH_COOKIE: NULL for COOKIE */
    int width;          /* the tree width the node names (0: none) */
    char err[512];    /* rdv_strerror(rc) in the node's thread */
};

static void *node_main(void *p)
{
    struct node_arg *a = p;
    char server[64];

    usleep(a->delay_ms * 1000);
    snprintf(server, sizeof(server), "127.0.0.1:%d", a->port);
    if (a->fail)
        a->rc = rdv_fail_uid(server, JOB, getuid(), a->nnodes, a->id, a->auth,
                             a->timeout_ms, a->fail);
    else if (a->auth == TREENET_AUTH_COOKIE)
        a->rc =
            rdv_exchange_cookie(server, JOB, a->cookie ? a->cookie : COOKIE, a->nnodes,
                                a->id, a->my_port, a->timeout_ms, &a->addrs, a->ip);
    else
        a->rc = rdv_exchange_uid(server, JOB, getuid(), a->nnodes, a->id, a->width,
                                 a->my_port, a->auth, a->timeout_ms, &a->addrs, a->ip);
    snprintf(a->err, sizeof(a->err), "%s", rdv_strerror(a->rc));
    return NULL;
}

/* Run n nodes (ids listed in order[] start with increasing delays). */
static void run_nodes(int port, int n, enum treenet_auth auth, struct node_arg *args,
                      int timeout_ms, int only)
{
    pthread_t th[64];
    for (int i = 0; i < n; i++) {
        int id = (i * 5 + 3) % n; /* scrambled arrival order */
        args[id] = (struct node_arg){.port = port,
                                     .nnodes = n,
                                     .id = id,
                                     .my_port = 20000 + id,
                                     .delay_ms = (i * 15) % 400,
                                     .auth = auth,
                                     .timeout_ms = timeout_ms};
    }
    for (int i = 0; i < only; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, node_main, &args[i]), 0);
    for (int i = 0; i < only; i++)
        pthread_join(th[i], NULL);
}

static void check_tables(struct node_arg *args, int n)
{
    for (int i = 0; i < n; i++) {
        ck_assert_msg(args[i].rc == 0, "node %d: rc %d", i, args[i].rc);
        ck_assert_str_eq(args[i].ip, "127.0.0.1");
        for (int j = 0; j < n; j++) {
            char want[64];
            snprintf(want, sizeof(want), "127.0.0.1:%d", 20000 + j);
            ck_assert_str_eq(args[i].addrs[j], want);
        }
        rdv_addrs_free(args[i].addrs, n);
    }
}

static void rdv_n(enum treenet_auth auth, int n)
{
    struct logcap cap;
    struct node_arg args[64];
    struct rdv_server *s;

    cap_init(&cap);
    s = rdv_server_start_log(n, JOB, getuid(), auth, "127.0.0.1", 10000, cap_log, &cap);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_gt(rdv_server_port(s), 0);
    run_nodes(rdv_server_port(s), n, auth, args, 10000, n);
    check_tables(args, n);
    ck_assert_int_eq(rdv_server_stop(s), 0);
    ck_assert_int_eq(cap_count(&cap, "refused"), 0);
    cap_free(&cap);
}

START_TEST(test_rdv_none)
{
    rdv_n(TREENET_AUTH_NONE, 8);
    rdv_n(TREENET_AUTH_NONE, 1);
    rdv_n(TREENET_AUTH_NONE, 64);
}
END_TEST

/* The cookie mode: every node proves the cookie and checks the server's
 * proof; a node with another job's cookie, a registration bound to another
 * connection's nonce or addressed to a node instead of the server, and a
 * tag cut short are refused (and logged) while the real nodes are served. */
START_TEST(test_rdv_cookie)
{
    struct logcap cap;
    struct node_arg args[3], bad;
    struct rdv_server *s;
    char nonce[40], pl[256], *c;
    int fd, fd2;

    cap_init(&cap);
    s = rdv_server_start_cookie(8, 0, JOB, COOKIE, "127.0.0.1", 0, 0, 10000, cap_log,
                                &cap);
    ck_assert_ptr_nonnull(s);
    struct node_arg a8[8];
    run_nodes(rdv_server_port(s), 8, TREENET_AUTH_COOKIE, a8, 10000, 8);
    check_tables(a8, 8);
    ck_assert_int_eq(rdv_server_stop(s), 0);
    ck_assert_int_eq(cap_count(&cap, "refused"), 0);
    cap_free(&cap);

    cap_init(&cap);
    ck_assert_ptr_null(
        rdv_server_start_cookie(2, 0, JOB, "short", "127.0.0.1", 0, 0, 1000, NULL, NULL));
    s = rdv_server_start_cookie(3, 0, JOB, COOKIE, "127.0.0.1", 0, 0, 10000, cap_log,
                                &cap);
    ck_assert_ptr_nonnull(s);
    /* another job's cookie: refused every time, until the node's timeout */
    bad = (struct node_arg){.port = rdv_server_port(s),
                            .nnodes = 3,
                            .id = 2,
                            .my_port = 20002,
                            .auth = TREENET_AUTH_COOKIE,
                            .timeout_ms = 700,
                            .cookie = COOKIE2};
    node_main(&bad);
    ck_assert_int_eq(bad.rc, -ETIMEDOUT);
    ck_assert_int_ge(cap_count(&cap, "wrong proof of the job cookie"), 1);
    /* a registration proved with the cookie but bound to another connection */
    fd = raw_connect_nonce(rdv_server_port(s), nonce);
    ck_assert_int_ge(fd, 0);
    fd2 = raw_connect_nonce(rdv_server_port(s), pl);
    ck_assert_int_ge(fd2, 0);
    snprintf(pl, sizeof(pl), "loom2 " JOB " 2 rdv %s " RAW_NONCE, nonce);
    c = cookie_cred(COOKIE, pl, NULL);
    ck_assert_int_eq(raw_frame(fd2, c, strlen(c)), 0);
    ck_assert(raw_closed_within(fd2, 5000));
    close(fd2);
    free(c);
    /* ... addressed to node 1 instead of the server; a tag cut short */
    snprintf(pl, sizeof(pl), "loom2 " JOB " 2 1 %s " RAW_NONCE, nonce);
    c = cookie_cred(COOKIE, pl, NULL);
    ck_assert_int_eq(raw_frame(fd, c, strlen(c)), 0);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    free(c);
    fd = raw_connect_nonce(rdv_server_port(s), nonce);
    ck_assert_int_ge(fd, 0);
    snprintf(pl, sizeof(pl), "loom2 " JOB " 2 rdv %s " RAW_NONCE, nonce);
    c = cookie_cred(COOKIE, pl, NULL);
    ck_assert_int_eq(raw_frame(fd, c, strlen(c) - 1), 0);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    free(c);
    ck_assert(cap_wait(&cap, "another connection", 1));
    ck_assert(cap_wait(&cap, "another node", 1));
    /* the real nodes still get their table */
    run_nodes(rdv_server_port(s), 3, TREENET_AUTH_COOKIE, args, 10000, 3);
    check_tables(args, 3);
    ck_assert_int_eq(rdv_server_stop(s), 0);
    cap_free(&cap);
}
END_TEST

START_TEST(test_rdv_munge)
{
    rdv_n(TREENET_AUTH_MUNGE, 8);
}
END_TEST

/* A registration as a node would send it, over a raw socket: the payload
 * is fmt with the server's nonce for %s (AUTH_NONE: the payload is the
 * credential). */
static int raw_register(int port, const char *fmt, int node_port)
{
    char reg[32], nonce[40], payload[256];
    int fd = raw_connect_nonce(port, nonce);
    if (fd < 0)
        return -1;
    snprintf(payload, sizeof(payload), fmt, nonce);
    snprintf(reg, sizeof(reg), "port %d", node_port);
    /* a send may fail when the server already refused us: that is for the
     * caller to see, the socket is returned anyway */
    if (raw_frame(fd, payload, strlen(payload)) == 0)
        (void)raw_frame(fd, reg, strlen(reg));
    return fd;
}

START_TEST(test_rdv_hostile)
{
    struct logcap cap;
    struct node_arg args[3];
    struct rdv_server *s;
    int port, fd, keep;
    const char http[] = "GET / HTTP/1.0\r\n\r\n";

    cap_init(&cap);
    s = rdv_server_start_log(3, JOB, getuid(), TREENET_AUTH_NONE, "127.0.0.1", 10000,
                             cap_log, &cap);
    ck_assert_ptr_nonnull(s);
    port = rdv_server_port(s);

    /* a port scanner: connect and go */
    fd = raw_connect(port);
    ck_assert_int_ge(fd, 0);
    close(fd);
    /* garbage: an HTTP request */
    fd = raw_connect(port);
    ck_assert_int_eq(raw_send(fd, http, strlen(http)), 0);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    /* another job, a node out of range, a payload for a node, not rdv */
    fd = raw_register(port, "loom2 99.0 0 rdv %s " RAW_NONCE, 1);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    fd = raw_register(port, "loom2 " JOB " 7 rdv %s " RAW_NONCE, 1);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    fd = raw_register(port, "loom2 " JOB " 0 1 %s " RAW_NONCE, 1);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    ck_assert(cap_wait(&cap, "refused", 5));
    ck_assert_int_ge(cap_count(&cap, "another job"), 1);
    ck_assert_int_ge(cap_count(&cap, "no node of this job"), 1);
    ck_assert_int_ge(cap_count(&cap, "another node"), 1);

    /* node 1 registers and goes away before the table: forgotten */
    fd = raw_register(port, "loom2 " JOB " 1 rdv %s " RAW_NONCE, 9);
    ck_assert(cap_wait(&cap, "node 1 registered", 1));
    close(fd);
    ck_assert(cap_wait(&cap, "went away", 1));
    /* node 2 registers at a stale port, then its real self comes back */
    keep = raw_register(port, "loom2 " JOB " 2 rdv %s " RAW_NONCE, 9);
    ck_assert(cap_wait(&cap, "node 2 registered", 1));

    run_nodes(port, 3, TREENET_AUTH_NONE, args, 10000, 3);
    check_tables(args, 3);
    ck_assert_int_ge(cap_count(&cap, "node 2 reconnected"), 1);
    ck_assert(raw_closed_within(keep, 5000));
    close(keep);
    ck_assert_int_eq(rdv_server_stop(s), 0);
    cap_free(&cap);
}
END_TEST

START_TEST(test_rdv_munge_replay)
{
    struct logcap cap;
    struct node_arg args[2];
    struct rdv_server *s;
    int port, fd, fd2;
    char *cred = NULL, nonce[40], pl[256], reg[] = "port 9";

    cap_init(&cap);
    s = rdv_server_start_log(2, JOB, getuid(), TREENET_AUTH_MUNGE, "127.0.0.1", 10000,
                             cap_log, &cap);
    ck_assert_ptr_nonnull(s);
    port = rdv_server_port(s);
    /* a credential bound to the nonce of one connection, shown on another */
    fd = raw_connect_nonce(port, nonce);
    ck_assert_int_ge(fd, 0);
    snprintf(pl, sizeof(pl), "loom2 " JOB " 0 rdv %s " RAW_NONCE, nonce);
#ifdef HAVE_MUNGE
    ck_assert_int_eq(munge_encode(&cred, NULL, pl, strlen(pl)), EMUNGE_SUCCESS);
#endif
    fd2 = raw_connect_nonce(port, nonce);
    ck_assert_int_ge(fd2, 0);
    ck_assert_int_eq(raw_frame(fd2, cred, strlen(cred)), 0);
    ck_assert(raw_closed_within(fd2, 5000));
    close(fd2);
    ck_assert(cap_wait(&cap, "another connection", 1));
    /* on its own connection it was already decoded once: a replay */
    ck_assert_int_eq(raw_frame(fd, cred, strlen(cred)), 0);
    (void)raw_frame(fd, reg, strlen(reg));
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    ck_assert(cap_wait(&cap, "replayed", 1));
    /* plain text is not a munge credential */
    fd = raw_register(port, "loom2 " JOB " 1 rdv %s " RAW_NONCE, 9);
    ck_assert(raw_closed_within(fd, 5000));
    close(fd);
    ck_assert(cap_wait(&cap, "refused", 3));
    free(cred);

    run_nodes(port, 2, TREENET_AUTH_MUNGE, args, 10000, 2);
    check_tables(args, 2);
    ck_assert_int_eq(rdv_server_stop(s), 0);
    cap_free(&cap);
}
END_TEST

/* A crowd of silent strangers on the port: the oldest are evicted, and the
 * real nodes register and get their tables at once meanwhile. */
START_TEST(test_rdv_crowd)
{
    enum { CROWD = 300 };
    static int fl[CROWD];
    struct node_arg args[3];
    struct rdv_server *s =
        rdv_server_start(3, JOB, getuid(), TREENET_AUTH_NONE, "127.0.0.1", 20000);
    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < CROWD; i++)
        ck_assert_int_ge(fl[i] = raw_connect(rdv_server_port(s)), 0);
    ck_assert(raw_closed_within(fl[0], 2000)); /* evicted, not timed out */
    run_nodes(rdv_server_port(s), 3, TREENET_AUTH_NONE, args, 5000, 3);
    check_tables(args, 3);
    ck_assert_int_eq(rdv_server_stop(s), 0);
    for (int i = 0; i < CROWD; i++)
        close(fl[i]);
}
END_TEST

START_TEST(test_rdv_timeout)
{
    struct node_arg args[3];
    struct rdv_server *s =
        rdv_server_start(3, JOB, getuid(), TREENET_AUTH_NONE, "127.0.0.1", 500);
    ck_assert_ptr_nonnull(s);
    /* only two of three nodes ever come */
    run_nodes(rdv_server_port(s), 3, TREENET_AUTH_NONE, args, 1500, 2);
    ck_assert_int_eq(args[0].rc, -ETIMEDOUT);
    ck_assert_int_eq(args[1].rc, -ETIMEDOUT);
    ck_assert_ptr_null(args[0].addrs);
    ck_assert_int_eq(rdv_server_stop(s), -ETIMEDOUT);
}
END_TEST

/* A node that cannot join says why: the server logs it once, and every other
 * node, the ones already waiting and one that comes later, gets the failure
 * at once (-ECANCELED naming the node and its reason, the control byte
 * replaced) instead of waiting for its timeout (-ETIMEDOUT). */
START_TEST(test_rdv_fail)
{
    struct logcap cap;
    struct node_arg args[4];
    pthread_t th[4];
    struct rdv_server *s;
    int delay[4] = {0, 0, 300, 800}; /* node 2 fails after 0, 1 wait; 3 comes after */

    cap_init(&cap);
    s = rdv_server_start_log(4, JOB, getuid(), TREENET_AUTH_NONE, "127.0.0.1", 60000,
                             cap_log, &cap);
    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < 4; i++) {
        args[i] = (struct node_arg){.port = rdv_server_port(s),
                                    .nnodes = 4,
                                    .id = i,
                                    .my_port = 20000 + i,
                                    .delay_ms = delay[i],
                                    .auth = TREENET_AUTH_NONE,
                                    .timeout_ms = 60000};
        if (i == 2)
            args[i].fail = "node 2: cannot listen\x01 for tree links";
        ck_assert_int_eq(pthread_create(&th[i], NULL, node_main, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(args[2].rc, 0);
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        ck_assert_msg(args[i].rc == -ECANCELED, "node %d: rc %d (%s)", i, args[i].rc,
                      args[i].err);
        ck_assert_ptr_null(args[i].addrs);
        ck_assert_str_eq(args[i].err,
                         "node 2 cannot join the tree: node 2: cannot listen? for tree links");
    }
    ck_assert_int_eq(cap_count(&cap, "rdv: node 2 cannot join the tree: node 2: cannot "
                                     "listen? for tree links"),
                     1);
    ck_assert_int_eq(rdv_server_stop(s), -ECANCELED);
    cap_free(&cap);
}
END_TEST

START_TEST(test_rdv_no_server)
{
    char **addrs = NULL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port;
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t sl = sizeof(a);
    char server[64];

    /* a port nobody listens on: refused until the deadline */
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
    port = ntohs(a.sin_port);
    close(fd);
    snprintf(server, sizeof(server), "127.0.0.1:%d", port);
    ck_assert_int_eq(
        rdv_exchange(server, JOB, 2, 0, 1234, TREENET_AUTH_NONE, 300, &addrs, NULL),
        -ETIMEDOUT);
    ck_assert_ptr_null(addrs);
    /* no reason of its own: rdv_strerror is strerror */
    ck_assert_str_eq(rdv_strerror(-ETIMEDOUT), strerror(ETIMEDOUT));
    ck_assert_str_eq(rdv_strerror(-EACCES), strerror(EACCES));
}
END_TEST

START_TEST(test_rdv_args)
{
    char **addrs = NULL;
    ck_assert_int_eq(
        rdv_exchange("nocolon", JOB, 2, 0, 1, TREENET_AUTH_NONE, 100, &addrs, NULL),
        -EINVAL);
    ck_assert_int_eq(rdv_exchange("127.0.0.1:1", "bad key", 2, 0, 1, TREENET_AUTH_NONE,
                                  100, &addrs, NULL),
                     -EINVAL);
    ck_assert_int_eq(
        rdv_exchange("127.0.0.1:1", JOB, 2, 2, 1, TREENET_AUTH_NONE, 100, &addrs, NULL),
        -EINVAL);
    errno = 0;
    ck_assert_ptr_null(rdv_server_start(0, JOB, 0, TREENET_AUTH_NONE, NULL, 100));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_null(rdv_server_start(2, "a b", 0, TREENET_AUTH_NONE, NULL, 100));
#ifndef HAVE_MUNGE
    ck_assert_int_eq(rdv_exchange("127.0.0.1:1", JOB, 2, 0, 1, TREENET_AUTH_MUNGE, 100,
                                  &addrs, NULL),
                     -ENOTSUP);
    errno = 0;
    ck_assert_ptr_null(rdv_server_start(2, JOB, 0, TREENET_AUTH_MUNGE, NULL, 100));
    ck_assert_int_eq(errno, ENOTSUP);
#endif
    rdv_addrs_free(NULL, 3);
}
END_TEST

static void *close_later(void *p)
{
    int *fd = p;

    usleep(300 * 1000);
    close(*fd);
    return NULL;
}

/* rdv_exchange_cookie_watch: the watched fd hung up ends the wait for the
 * table (a node alone of two), the connect retries to a port where nobody
 * listens, and a call made after it hung up; data on it ends the wait too,
 * and a call after the caller read it gets the table. */
START_TEST(test_rdv_watch)
{
    struct rdv_server *s;
    char server[64], **addrs = NULL;
    int pfd[2], port, rc;
    pthread_t th;

    s = rdv_server_start_cookie(2, 0, JOB, COOKIE, "127.0.0.1", 0, 0, 20000, NULL, NULL);
    ck_assert_ptr_nonnull(s);
    port = rdv_server_port(s);
    snprintf(server, sizeof(server), "127.0.0.1:%d", port);
    /* waiting for node 1, which never comes: the hang-up ends it, not the timeout */
    ck_assert_int_eq(pipe(pfd), 0);
    ck_assert_int_eq(pthread_create(&th, NULL, close_later, &pfd[1]), 0);
    rc = rdv_exchange_cookie_watch(server, JOB, COOKIE, 2, 0, 20000, 20000, pfd[0],
                                   &addrs, NULL);
    pthread_join(th, NULL);
    ck_assert_int_eq(rc, -ECONNABORTED);
    ck_assert_ptr_null(addrs);
    /* already hung up */
    rc = rdv_exchange_cookie_watch(server, JOB, COOKIE, 2, 0, 20000, 20000, pfd[0],
                                   &addrs, NULL);
    ck_assert_int_eq(rc, -ECONNABORTED);
    close(pfd[0]);

    /* data on the watched fd: the caller reads it and calls again */
    ck_assert_int_eq(pipe(pfd), 0);
    ck_assert_int_eq(write(pfd[1], "x", 1), 1);
    rc = rdv_exchange_cookie_watch(server, JOB, COOKIE, 2, 0, 20000, 20000, pfd[0],
                                   &addrs, NULL);
    ck_assert_int_eq(rc, -ECONNABORTED);
    char b;
    ck_assert_int_eq(read(pfd[0], &b, 1), 1);
    struct node_arg other = {.port = port,
                             .nnodes = 2,
                             .id = 1,
                             .my_port = 0,
                             .delay_ms = 200,
                             .auth = TREENET_AUTH_COOKIE,
                             .timeout_ms = 20000};
    ck_assert_int_eq(pthread_create(&th, NULL, node_main, &other), 0);
    rc = rdv_exchange_cookie_watch(server, JOB, COOKIE, 2, 0, 20000, 20000, pfd[0],
                                   &addrs, NULL);
    pthread_join(th, NULL);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(other.rc, 0);
    ck_assert_str_eq(addrs[0], "127.0.0.1:20000");
    rdv_addrs_free(addrs, 2);
    rdv_addrs_free(other.addrs, 2);
    ck_assert_int_eq(rdv_server_stop(s), 0);

    /* nobody listens any more: the connect retries end at the hang-up too */
    ck_assert_int_eq(pthread_create(&th, NULL, close_later, &pfd[1]), 0);
    addrs = NULL;
    rc = rdv_exchange_cookie_watch(server, JOB, COOKIE, 2, 0, 20000, 20000, pfd[0],
                                   &addrs, NULL);
    pthread_join(th, NULL);
    ck_assert_int_eq(rc, -ECONNABORTED);
    close(pfd[0]);
}
END_TEST

/* ---- the tree's tables ---------------------------------------------------- */

/* Node j is node i itself, its parent or one of its children in the k-ary
 * tree rooted at 0 (k 0: every node is). */
static int is_nbr(int k, int i, int j)
{
    if (k == 0 || j == i)
        return 1;
    if (i > 0 && j == (i - 1) / k)
        return 1;
    return j >= k * i + 1 && j <= k * i + k;
}

static void check_sparse(struct node_arg *args, int n, int k, int skip)
{
    for (int i = 0; i < n; i++) {
        if (i == skip)
            continue;
        ck_assert_msg(args[i].rc == 0, "n %d k %d node %d: rc %d", n, k, i, args[i].rc);
        for (int j = 0; j < n; j++) {
            char want[64];
            snprintf(want, sizeof(want), "127.0.0.1:%d", 20000 + j);
            if (is_nbr(k, i, j)) {
                ck_assert_msg(args[i].addrs[j], "n %d k %d: node %d not told of %d", n, k,
                              i, j);
                ck_assert_str_eq(args[i].addrs[j], want);
            } else {
                ck_assert_msg(!args[i].addrs[j], "n %d k %d: node %d told of %d", n, k, i,
                              j);
            }
        }
        rdv_addrs_free(args[i].addrs, n);
    }
}

/* A node's table names exactly itself, its parent and its children (width 0:
 * every node), for several sizes and widths (none a multiple of 5: run_nodes'
 * arrival order). */
START_TEST(test_rdv_sparse)
{
    static const int cases[][2] = {{1, 2},  {2, 1},  {7, 2},   {21, 3},
                                   {64, 8}, {64, 1}, {33, 16}, {9, 0}};
    struct node_arg args[64];

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        int n = cases[c][0], k = cases[c][1];
        struct rdv_server *s = rdv_server_start_cookie(n, k, JOB, COOKIE, "127.0.0.1", 0,
                                                       0, 10000, NULL, NULL);
        ck_assert_ptr_nonnull(s);
        run_nodes(rdv_server_port(s), n, TREENET_AUTH_COOKIE, args, 10000, n);
        check_sparse(args, n, k, -1);
        ck_assert_int_eq(rdv_server_stop(s), 0);
    }
    ck_assert_ptr_null(
        rdv_server_start_cookie(2, -1, JOB, COOKIE, "127.0.0.1", 0, 0, 1000, NULL, NULL));
    ck_assert_ptr_null(rdv_server_start_cookie(2, 1025, JOB, COOKIE, "127.0.0.1", 0, 0,
                                               1000, NULL, NULL));
}
END_TEST

/* What one node receives grows with the width, not with the job: 200 nodes
 * of width 8, node 5 (parent 0, children 41..48) registered over a raw
 * socket reads its table frame and counts the bytes. */
START_TEST(test_rdv_sparse_bytes)
{
    enum { N = 200, K = 8, RAW = 5 };
    static struct node_arg args[N];
    static pthread_t th[N];
    unsigned char h[4];
    char buf[4096];
    uint32_t len;
    int fd, lines = 0;
    struct rdv_server *s = rdv_server_start_ports(N, K, JOB, getuid(), TREENET_AUTH_NONE,
                                                  "127.0.0.1", 0, 0, 20000, NULL, NULL);

    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < N; i++) {
        args[i] = (struct node_arg){.port = rdv_server_port(s),
                                    .nnodes = N,
                                    .id = i,
                                    .my_port = 20000 + i,
                                    .auth = TREENET_AUTH_NONE,
                                    .timeout_ms = 20000};
        if (i != RAW)
            ck_assert_int_eq(pthread_create(&th[i], NULL, node_main, &args[i]), 0);
    }
    fd = raw_register(rdv_server_port(s), "loom2 " JOB " 5 rdv %s " RAW_NONCE,
                      20000 + RAW);
    ck_assert_int_ge(fd, 0);
    /* the server's credential, then the table */
    ck_assert_int_eq(raw_recv_exact(fd, h, 4), 4);
    len = tn_test_u32(h);
    ck_assert_uint_lt(len, sizeof(buf));
    ck_assert_int_eq(raw_recv_exact(fd, buf, len), (ssize_t)len);
    ck_assert_int_eq(raw_recv_exact(fd, h, 4), 4);
    len = tn_test_u32(h);
    ck_assert_msg(len < 1024, "node %d got %u bytes of table", RAW, len);
    ck_assert_int_eq(raw_recv_exact(fd, buf, len), (ssize_t)len);
    for (uint32_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    ck_assert_int_eq(lines, 2 + K); /* itself, node 0 and 41..48 */
    close(fd);
    for (int i = 0; i < N; i++)
        if (i != RAW)
            pthread_join(th[i], NULL);
    check_sparse(args, N, K, RAW);
    ck_assert_int_eq(rdv_server_stop(s), 0);
}
END_TEST

/* A server started without a width (srun's) takes the one every node names;
 * nodes that disagree get every address (and the server says so); a
 * registration naming a width that is no 1..1024 is refused. */
START_TEST(test_rdv_sparse_told)
{
    static struct node_arg args[21];
    static pthread_t th[21];
    static const char *bad[] = {"port 5 width 0", "port 5 width 1025", "port 5 width x",
                                "port 5 wide 2",  "port 5 width 2 ",   "port 5 width -2"};
    struct logcap cap;
    char nonce[40], payload[256];

    for (int round = 0; round < 2; round++) {
        struct rdv_server *s;
        cap_init(&cap);
        s = rdv_server_start_log(21, JOB, getuid(), TREENET_AUTH_NONE, "127.0.0.1", 10000,
                                 cap_log, &cap);
        ck_assert_ptr_nonnull(s);
        if (round == 0) {
            for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
                int fd = raw_connect_nonce(rdv_server_port(s), nonce);
                ck_assert_int_ge(fd, 0);
                snprintf(payload, sizeof(payload), "loom2 " JOB " 3 rdv %s " RAW_NONCE,
                         nonce);
                ck_assert_int_eq(raw_frame(fd, payload, strlen(payload)), 0);
                (void)raw_frame(fd, bad[b], strlen(bad[b]));
                ck_assert_msg(raw_closed_within(fd, 5000), "%s kept", bad[b]);
                close(fd);
            }
            ck_assert(cap_wait(&cap, "malformed registration", 6));
        }
        for (int i = 0; i < 21; i++) {
            args[i] = (struct node_arg){.port = rdv_server_port(s),
                                        .nnodes = 21,
                                        .id = i,
                                        .my_port = 20000 + i,
                                        .auth = TREENET_AUTH_NONE,
                                        .timeout_ms = 10000,
                                        .width = round == 1 && i == 4 ? 2 : 3};
            ck_assert_int_eq(pthread_create(&th[i], NULL, node_main, &args[i]), 0);
        }
        for (int i = 0; i < 21; i++)
            pthread_join(th[i], NULL);
        check_sparse(args, 21, round == 0 ? 3 : 0, -1);
        ck_assert_int_eq(rdv_server_stop(s), 0);
        ck_assert_int_eq(cap_count(&cap, "names tree width"), round);
        cap_free(&cap);
    }
}
END_TEST

/* A stand-in server (AUTH_NONE) that answers one node with `table`. */
struct fake_rdv {
    int lfd;
    const char *table;
};

static void *fake_rdv_main(void *p)
{
    struct fake_rdv *f = p;
    unsigned char h[4];
    char b[512], cred[256];
    const char *nf = "loom2 " RAW_NONCE;
    int fd = accept(f->lfd, NULL, NULL);
    uint32_t len;

    if (fd < 0)
        return NULL;
    /* ours first; then the node's credential "loom2 <job> <me> rdv <ours> <its>" */
    if (raw_frame(fd, nf, strlen(nf)) == 0 && raw_recv_exact(fd, h, 4) == 4 &&
        (len = tn_test_u32(h)) < sizeof(b) &&
        raw_recv_exact(fd, b, len) == (ssize_t)len) {
        char me[16], its[40];
        b[len] = '\0';
        if (sscanf(b, "loom2 " JOB " %15s rdv %*s %39s", me, its) == 2 &&
            raw_recv_exact(fd, h, 4) == 4 && (len = tn_test_u32(h)) < sizeof(b) &&
            raw_recv_exact(fd, b, len) == (ssize_t)len) {
            snprintf(cred, sizeof(cred), "loom2 " JOB " rdv %s %s " RAW_NONCE, me, its);
            if (raw_frame(fd, cred, strlen(cred)) == 0)
                (void)raw_frame(fd, f->table, strlen(f->table));
            (void)raw_closed_within(fd, 5000);
        }
    }
    close(fd);
    return NULL;
}

/* Node `id` of n asks the stand-in server answering `table`: its rc. */
static int with_table(const char *table, int n, int id, char ***addrs)
{
    struct fake_rdv f = {.table = table};
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof(a);
    char server[64];
    pthread_t th;
    int rc;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(f.lfd, 0);
    ck_assert_int_eq(bind(f.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(f.lfd, 4), 0);
    ck_assert_int_eq(getsockname(f.lfd, (struct sockaddr *)&a, &al), 0);
    snprintf(server, sizeof(server), "127.0.0.1:%d", ntohs(a.sin_port));
    ck_assert_int_eq(pthread_create(&th, NULL, fake_rdv_main, &f), 0);
    *addrs = NULL;
    rc = rdv_exchange(server, JOB, n, id, 4242, TREENET_AUTH_NONE, 3000, addrs, NULL);
    shutdown(f.lfd, SHUT_RDWR);
    pthread_join(th, NULL);
    close(f.lfd);
    return rc;
}

/* The table is the server's word, but still bounded and checked: a node out
 * of range or named twice, a line that is no "<node> <addr>", the old
 * one-address-a-line table, or one that leaves out the node itself is a
 * protocol error; a well-formed sparse table fills only what it names. */
START_TEST(test_rdv_sparse_malformed)
{
    static const char *bad[] = {
        "0 127.0.0.1:1\n4 127.0.0.1:5\n1 127.0.0.1:2\n",        /* node 4 of 4 */
        "1 127.0.0.1:2\n1 127.0.0.1:2\n",                       /* twice */
        "-1 127.0.0.1:1\n1 127.0.0.1:2\n",                      /* negative */
        "+0 127.0.0.1:1\n1 127.0.0.1:2\n",                      /* not a number */
        "0 127.0.0.1:1\n",                                      /* not itself */
        "127.0.0.1:1\n127.0.0.1:2\n127.0.0.1:3\n127.0.0.1:4\n", /* the old table */
        "1 127.0.0.1:2",                                        /* cut short */
        "1 not-an-address\n",                                   /* no address */
        "1  127.0.0.1:2\n",                                     /* two blanks */
        "1 127.0.0.1:2\n\n",                                    /* an empty line */
        "99999999999999999999 127.0.0.1:1\n1 127.0.0.1:2\n",    /* overflow */
    };
    char **addrs = NULL;
    int rc;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rc = with_table(bad[i], 4, 1, &addrs);
        ck_assert_msg(rc == -EPROTO, "table %zu: rc %d", i, rc);
        ck_assert_ptr_null(addrs);
    }
    rc = with_table("1 127.0.0.1:2\n0 127.0.0.1:1\n3 127.0.0.1:4\n", 4, 1, &addrs);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(addrs[0], "127.0.0.1:1");
    ck_assert_str_eq(addrs[1], "127.0.0.1:2");
    ck_assert_ptr_null(addrs[2]);
    ck_assert_str_eq(addrs[3], "127.0.0.1:4");
    rdv_addrs_free(addrs, 4);
}
END_TEST

static Suite *rdv_suite(void)
{
    Suite *s = suite_create("rdv");
    TCase *tc = tcase_create("core");
    char why[256];

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_rdv_none);
    tcase_add_test(tc, test_rdv_cookie);
    tcase_add_test(tc, test_rdv_hostile);
    tcase_add_test(tc, test_rdv_timeout);
    tcase_add_test(tc, test_rdv_crowd);
    tcase_add_test(tc, test_rdv_no_server);
    tcase_add_test(tc, test_rdv_fail);
    tcase_add_test(tc, test_rdv_args);
    tcase_add_test(tc, test_rdv_watch);
    tcase_add_test(tc, test_rdv_sparse);
    tcase_add_test(tc, test_rdv_sparse_bytes);
    tcase_add_test(tc, test_rdv_sparse_malformed);
    tcase_add_test(tc, test_rdv_sparse_told);
    munge_ok = munge_usable(why, sizeof(why));
    if (munge_ok) {
        tcase_add_test(tc, test_rdv_munge);
        tcase_add_test(tc, test_rdv_munge_replay);
    } else {
        fprintf(stderr, "%s: SKIP munge tests: %s%s\n", "check_rdv", why,
#ifdef HAVE_MUNGE
                " (start munged: mkdir -p /run/munge; chown munge /run/munge; "
                "su -s /bin/sh munge -c /usr/sbin/munged)"
#else
                ""
#endif
        );
    }
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rdv_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
