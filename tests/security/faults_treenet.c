/* faults_treenet.c - a small treenet job in one process, for fault injection: a
 * rendezvous server and NNODES node threads (each with its own loop) on 127.0.0.1 that
 * build the tree and exchange one message each way on every link.
 *
 * Usage: faults_treenet NNODES none|munge
 * Contract: exit 0 and "faults_treenet: N nodes OK" on stdout when every link carried
 * its messages; exit 1 with one line per failing node on stderr
 * ("faults_treenet: node I: what failed: why") when something went wrong (an
 * allocation that failed, a link lost, munge unreachable...); exit 3 with
 * "faults_treenet: HUNG" when the whole job is not over after 40 s (every wait inside
 * is shorter: connect 3 s, rendezvous 5 s).  A crash is a signal, which the caller sees.
 * The tests in t-faults-*.sh run it under faults_preload.so.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"
#include "treenet.h"

#define JOB "77.0"
#define MAXN 16

struct node {
    int id, nnodes, rdv_port;
    enum treenet_auth auth;
    int nbrs[MAXN], nnbrs, got[MAXN];
    bool done;
    char err[300];
};

static atomic_int g_done, g_abort;

static void node_fail(struct node *nd, const char *what, const char *why)
{
    if (!nd->err[0])
        snprintf(nd->err, sizeof(nd->err), "%s: %s", what, why);
    atomic_store(&g_abort, 1);
}

static void on_recv(void *arg, int from, const void *buf, size_t len)
{
    struct node *nd = arg;
    (void)buf;
    (void)len;
    if (from >= 0 && from < nd->nnodes)
        nd->got[from]++;
}

static void on_lost(void *arg, int node, const char *why)
{
    struct node *nd = arg;
    char w[64];
    if (nd->done)
        return;
    snprintf(w, sizeof(w), "link to node %d lost", node);
    node_fail(nd, w, why);
}

static void on_log(void *arg, int level, const char *msg)
{
    (void)arg;
    /* errors always (what a host would log), the rest with FAULTS_VERBOSE */
    if (level == 0 || getenv("FAULTS_VERBOSE"))
        fprintf(stderr, "faults_treenet: log[%d] %s\n", level, msg);
}

static void *node_main(void *p)
{
    struct node *nd = p;
    struct treenet_config cfg = {.nnodes = nd->nnodes,
                                 .nodeid = nd->id,
                                 .width = 2,
                                 .jobkey = JOB,
                                 .uid = getuid(),
                                 .auth = nd->auth,
                                 .bind_addr = "127.0.0.1",
                                 .connect_timeout_ms = 3000,
                                 .handshake_timeout_ms = 2000};
    struct treenet_ops ops = {on_recv, on_lost, on_log};
    struct treenet *tn = NULL;
    char server[64], **addrs = NULL;
    int rc;

    struct loop *lp = loop_create();
    if (!lp) {
        node_fail(nd, "loop_create", strerror(errno));
        goto out;
    }
    tn = treenet_create(lp, &cfg, &ops, nd);
    if (!tn) {
        node_fail(nd, "treenet_create", strerror(errno));
        goto out;
    }
    snprintf(server, sizeof(server), "127.0.0.1:%d", nd->rdv_port);
    rc = rdv_exchange(server, JOB, nd->nnodes, nd->id, treenet_port(tn), nd->auth, 5000,
                      &addrs, NULL);
    if (rc < 0) {
        node_fail(nd, "rdv_exchange", strerror(-rc));
        goto out;
    }
    rc = treenet_start(tn, addrs);
    rdv_addrs_free(addrs, nd->nnodes);
    if (rc < 0) {
        node_fail(nd, "treenet_start", strerror(-rc));
        goto out;
    }
    for (int i = 0; i < nd->nnbrs; i++) {
        char m[32];
        int ml = snprintf(m, sizeof(m), "hello %d", nd->id);
        rc = treenet_send(tn, nd->nbrs[i], m, (size_t)ml);
        if (rc < 0) {
            node_fail(nd, "treenet_send", strerror(-rc));
            goto out;
        }
    }
    while (!atomic_load(&g_abort)) {
        bool all = true;
        for (int i = 0; i < nd->nnbrs; i++)
            all = all && nd->got[nd->nbrs[i]] > 0;
        if (all && !nd->done) {
            nd->done = true;
            atomic_fetch_add(&g_done, 1);
        }
        if (nd->done && atomic_load(&g_done) == nd->nnodes && treenet_queued(tn) == 0)
            break;
        rc = loop_run_once(lp, 50);
        if (rc < 0) {
            node_fail(nd, "loop_run_once", strerror(-rc));
            break;
        }
    }
out:
    nd->done = true;
    if (tn)
        treenet_destroy(tn);
    if (lp)
        loop_destroy(lp);
    return NULL;
}

static void hung(int sig)
{
    static const char m[] = "faults_treenet: HUNG (not over after 40 s)\n";
    (void)sig;
    if (write(2, m, sizeof(m) - 1) < 0) {
    }
    _exit(3);
}

int main(int argc, char **argv)
{
    static struct node nodes[MAXN];
    pthread_t th[MAXN];
    bool started[MAXN] = {false};
    int n = argc > 1 ? atoi(argv[1]) : 0, bad = 0;
    enum treenet_auth auth = TREENET_AUTH_NONE;

    if (n < 1 || n > MAXN || argc < 3 ||
        (strcmp(argv[2], "none") != 0 && strcmp(argv[2], "munge") != 0)) {
        fprintf(stderr, "usage: faults_treenet NNODES(1..%d) none|munge\n", MAXN);
        return 2;
    }
    if (strcmp(argv[2], "munge") == 0)
        auth = TREENET_AUTH_MUNGE;
    signal(SIGALRM, hung);
    signal(SIGPIPE, SIG_IGN);
    alarm(40);

    struct rdv_server *s =
        rdv_server_start_log(n, JOB, getuid(), auth, "127.0.0.1", 8000, on_log, NULL);
    if (!s) {
        fprintf(stderr, "faults_treenet: rdv_server_start: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        struct node *nd = &nodes[i];
        nd->id = i;
        nd->nnodes = n;
        nd->auth = auth;
        nd->rdv_port = rdv_server_port(s);
        if (i > 0)
            nd->nbrs[nd->nnbrs++] = (i - 1) / 2;
        for (int c = 2 * i + 1; c <= 2 * i + 2 && c < n; c++)
            nd->nbrs[nd->nnbrs++] = c;
    }
    for (int i = n - 1; i >= 0; i--) {
        int e = pthread_create(&th[i], NULL, node_main, &nodes[i]);
        if (e) {
            node_fail(&nodes[i], "pthread_create", strerror(e));
            continue;
        }
        started[i] = true;
    }
    for (int i = 0; i < n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    int rs = rdv_server_stop(s);
    for (int i = 0; i < n; i++) {
        if (nodes[i].err[0]) {
            fprintf(stderr, "faults_treenet: node %d: %s\n", i, nodes[i].err);
            bad++;
        }
    }
    if (rs < 0 && !bad) {
        fprintf(stderr, "faults_treenet: rendezvous server: %s\n", strerror(-rs));
        bad++;
    }
    if (bad)
        return 1;
    printf("faults_treenet: %d nodes OK\n", n);
    return 0;
}
