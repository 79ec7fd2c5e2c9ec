/* emu.c - an emulated cluster on one machine: N node servers as processes,
 * each with the real PMI server core (pmiserv/), real tree links and the
 * real cookie-mode rendezvous (treenet/, as mpiexec's proxies use them),
 * and R emulated ranks per node that feed the core PMI-2 requests directly
 * (psrv_client_input: no socket per rank, so thousands of ranks fit), or
 * with -S over one socketpair per rank through the production node server
 * (nodesrv/: reading, reply queues, its tick), as the plugin and mpiexec run.
 *
 * The parent forks the N nodes first (single-threaded, so the children
 * inherit no lock held by another thread), then starts the rendezvous
 * server (a thread) on 127.0.0.1 and hands its port to every node through
 * a pipe.  Each node listens on 127.0.0.1, meets the others at the
 * rendezvous, starts its links and runs its ranks through:
 *   start   every rank puts a 32-byte card, fences (cold links), and gets
 *           the card of a rank on the next node;
 *   0 B     F fences without puts, each followed by a get of a remote card;
 *   1 KiB   F rounds of a 1 KiB put (-b BYTES; 0 skips the phase) by every
 *           rank (the same key, a new value each round), a fence, and a get
 *           of a remote rank's value.
 * Every get is checked against the value its owner put.  Each node then
 * reports one line (times, CPU, bytes on its uplink, RSS, descriptors) on
 * a shared pipe and keeps its links serving until the parent has every
 * line (the parent then closes the bye pipe; a node sees its close, or the
 * parent's death, at any point and leaves); the parent prints one TSV row
 * for the run.  Every wait is bounded by -t; the parent kills by pid what
 * is left.
 *
 * A get may be answered later (a KVS mode that fetches a key from the node
 * that owns it): the node runs its loop until the whole reply is in.
 *
 * Usage: emu -n NODES [-r RANKS_PER_NODE] [-f FENCES] [-w WIDTH]
 *            [-t TIMEOUT_S] [-b BYTES] [-m full|ondemand|auto] [-H HS_MS] [-S] [-v]
 *   -m: the core's KVS mode (full: every node gets the whole KVS at each
 *       fence; ondemand: a get of a remote rank's key goes to its node; auto:
 *       the core picks).  A core without KVS modes serves full only, and
 *       -m ondemand|auto then exits 3 (the test script reads it as "no such mode").
 *   -H: treenet's handshake timeout per connection (default its own, 3 s).  Thousands
 *       of node processes on 2 cores can leave a node unscheduled for longer.
 * Exit: 0 when every node ran every phase and every get was right.
 *
 * One piece (about 950 lines): a node's life (links, core or node server,
 * the emulated ranks and their rounds) and the parent that starts, bounds,
 * reaps and sums the nodes are one program forked into N copies; split, the
 * halves would share every global of the run's configuration.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "nodesrv.h"
#include "pmiserv.h"
#include "treenet.h"

#define JOBKEY "emu.0"
#define VAL_MAX 65536
#define MAX_NODES 8192
#define MAX_RPN 256

static int nnodes, rpn = 4, nfences = 10, width = 2, timeout_s = 120, verbose;
static int hs_ms;    /* treenet's handshake bound per connection (0: its default, 3 s) */
static bool sockets; /* -S: ranks on socketpairs through nodesrv */
static int val_big = 1024; /* bytes each rank puts per round of the second phase */
static const char *kvs_mode = "full";

/* Set the core's KVS mode from -m; -1 when this core has no such mode.  A core
 * with KVS modes declares them in pmiserv.h with AUTO's default threshold
 * beside them; a core without serves the full exchange only. */
static int set_kvs_mode(struct psrv_config *pc)
{
#ifdef PSRV_DEF_KVS_AUTO_BYTES
    if (strcmp(kvs_mode, "full") == 0)
        pc->kvs_mode = PSRV_KVS_FULL;
    else if (strcmp(kvs_mode, "ondemand") == 0)
        pc->kvs_mode = PSRV_KVS_ONDEMAND;
    else if (strcmp(kvs_mode, "auto") == 0)
        pc->kvs_mode = PSRV_KVS_AUTO;
    else
        return -1;
    return 0;
#else
    (void)pc;
    return strcmp(kvs_mode, "full") == 0 ? 0 : -1;
#endif
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* ---- one node server ---------------------------------------------------- */

struct node;

/* -S: the rank's end of its socketpair, and what arrived on it not yet whole. */
struct rank_end {
    struct node *n;
    int c, fd;
    struct loop_watch *w;
    char *in;
    size_t len;
};

struct node {
    int id, size, base; /* ranks base..base+rpn-1 */
    struct loop *lp;
    struct treenet *tn;
    struct psrv *srv;
    struct nodesrv *ns;        /* -S only; srv is then its core */
    struct rank_end *ends;     /* -S only: [rpn] */
    int parent;                /* -1 at the root */
    uint64_t up_sent, up_recv; /* bytes on the link to the parent (+4 per message) */
    int fenced;                /* fence responses of the current round */
    int fence_fail;
    char *reply; /* the last reply of the rank being driven */
    size_t reply_len, reply_cap;
    int aborted;
    bool done; /* every phase ran: links closing now are the others leaving */
    bool bye;  /* the parent closed the bye pipe (all lines in, or it died) */
    char why[256];
};

static int op_client_send(void *arg, int client, const char *buf, size_t len)
{
    struct node *n = arg;

    (void)client;
    if (len >= 16 && memmem(buf, len, "cmd=kvs-fence-response;", 23)) {
        if (memmem(buf, len, ";rc=0;", 6))
            n->fenced++;
        else
            n->fence_fail++;
        return 0;
    }
    if (n->reply_len + len + 1 > n->reply_cap) {
        size_t cap = (n->reply_len + len + 1) * 2;
        char *r = realloc(n->reply, cap);
        if (!r)
            return -ENOMEM;
        n->reply = r;
        n->reply_cap = cap;
    }
    memcpy(n->reply + n->reply_len, buf, len);
    n->reply_len += len;
    n->reply[n->reply_len] = '\0';
    return 0;
}

static int op_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct node *n = arg;

    if (to == n->parent)
        n->up_sent += len + 4;
    return treenet_send(n->tn, to, buf, len);
}

static void op_abort(void *arg, int rank, int exitcode, const char *msg)
{
    struct node *n = arg;

    (void)exitcode;
    if (!n->aborted++)
        snprintf(n->why, sizeof(n->why), "abort (rank %d): %s", rank, msg);
}

static void op_log(void *arg, enum psrv_log_level level, const char *msg)
{
    struct node *n = arg;

    if ((level <= PSRV_LOG_WARN && !n->done) || verbose)
        fprintf(stderr, "emu node %d: %s\n", n->id, msg);
}

static void tn_recv(void *arg, int from, const void *buf, size_t len)
{
    struct node *n = arg;

    if (from == n->parent)
        n->up_recv += len + 4;
    if (n->ns)
        nodesrv_tree_input(n->ns, from, buf, len);
    else
        psrv_tree_input(n->srv, from, buf, len);
}

static void tn_lost(void *arg, int node, const char *why)
{
    struct node *n = arg;

    if (verbose)
        fprintf(stderr, "emu node %d: link to %d lost: %s\n", n->id, node, why);
    if (!n->done && n->ns)
        nodesrv_tree_gone(n->ns, node);
    else if (!n->done)
        psrv_tree_gone(n->srv, node);
}

static void tn_log(void *arg, int level, const char *msg)
{
    struct node *n = arg;

    if ((level <= 1 && !n->done) || verbose)
        fprintf(stderr, "emu node %d: treenet: %s\n", n->id, msg);
}

static const struct psrv_ops core_ops = {
    .client_send = op_client_send,
    .tree_send = op_tree_send,
    .abort = op_abort,
    .log = op_log,
};

static const struct nodesrv_ops ns_ops = {
    .abort = op_abort,
    .log = op_log,
    .tree_send = op_tree_send,
};

static const struct treenet_ops tn_ops = {
    .recv = tn_recv,
    .lost = tn_lost,
    .log = tn_log,
};

/* -S: the records that arrived on a rank's end go where the core's direct
 * answers go (op_client_send): a PMI-2 record is a 6-digit length and its
 * body, the answer to the PMI-1 style init a line. */
static void on_rank(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct rank_end *e = arg;
    ssize_t k;

    (void)lp;
    (void)revents;
    while ((k = read(fd, e->in + e->len, VAL_MAX + 256 - e->len)) > 0) {
        e->len += (size_t)k;
        for (;;) {
            size_t whole = 0;
            if (e->len >= 4 && memcmp(e->in, "cmd=", 4) == 0) {
                char *nl = memchr(e->in, '\n', e->len);
                if (nl)
                    whole = (size_t)(nl - e->in) + 1;
            } else if (e->len >= 6) {
                char lenbuf[7];
                memcpy(lenbuf, e->in, 6);
                lenbuf[6] = '\0';
                size_t body = strtoul(lenbuf, NULL, 10);
                if (e->len >= 6 + body)
                    whole = 6 + body;
            }
            if (!whole)
                break;
            op_client_send(e->n, e->c, e->in, whole);
            memmove(e->in, e->in + whole, e->len - whole);
            e->len -= whole;
        }
        if (e->len == VAL_MAX + 256) { /* a record larger than any we send: drop */
            e->len = 0;
            e->n->aborted++;
        }
    }
    if (k == 0) {
        loop_watch_set(w, 0);
        if (!e->n->done && !e->n->aborted++)
            snprintf(e->n->why, sizeof(e->n->why), "rank %d: the server closed", e->c);
    }
}

/* -S: write a request on the rank's end, running the loop while it is full. */
static int write_rank(struct node *n, int c, const char *buf, size_t len)
{
    size_t off = 0;
    double end = now_ms() + timeout_s * 1e3;

    while (off < len) {
        ssize_t k = write(n->ends[c].fd, buf + off, len - off);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return -errno;
        if (now_ms() > end)
            return -ETIMEDOUT;
        loop_run_once(n->lp, 10);
    }
    return 0;
}

/* One PMI-2 command from local client c (length-prefixed, as on the wire). */
static int send2(struct node *n, int c, const char *body)
{
    size_t len = strlen(body);
    char *buf = malloc(len + 7);
    int rc;

    if (!buf)
        return -ENOMEM;
    snprintf(buf, len + 7, "%-6zu%s", len, body);
    n->reply_len = 0;
    if (n->reply)
        n->reply[0] = '\0';
    rc = n->ns ? write_rank(n, c, buf, len + 6)
               : psrv_client_input(n->srv, c, buf, len + 6);
    free(buf);
    return rc;
}

/* The value rank r puts in round k: val_big letters (k < 0: the 32-byte card). */
static void value_of(int r, int k, char *out)
{
    size_t len = k < 0 ? 32 : (size_t)val_big;

    for (size_t i = 0; i < len; i++)
        out[i] = (char)('a' + (unsigned)(r * 7 + k * 3 + (int)i) % 26);
    out[len] = '\0';
}

static void on_bye(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct node *n = arg;

    (void)lp;
    (void)fd;
    (void)revents;
    n->bye = true;
    loop_watch_set(w, 0);
}

/* Is the reply buffer one whole PMI-2 record (6-digit length, then body), or
 * the whole line answering init? */
static bool reply_whole(const struct node *n)
{
    char lenbuf[7];

    if (n->reply_len >= 4 && memcmp(n->reply, "cmd=", 4) == 0)
        return memchr(n->reply, '\n', n->reply_len) != NULL;
    if (n->reply_len < 6)
        return false;
    memcpy(lenbuf, n->reply, 6);
    lenbuf[6] = '\0';
    return n->reply_len >= 6 + strtoul(lenbuf, NULL, 10);
}

/* Run the loop until the reply to the last request is whole (a get the core
 * answers after asking another node). */
static int wait_reply(struct node *n, double deadline)
{
    while (!reply_whole(n)) {
        if (n->aborted || n->bye) {
            snprintf(n->why, sizeof(n->why), n->bye ? "the parent left" : "aborted");
            return -1;
        }
        double left = deadline - now_ms();
        if (left <= 0) {
            snprintf(n->why, sizeof(n->why), "get timed out");
            return -1;
        }
        int ms = n->ns ? -1 : psrv_tick(n->srv); /* nodesrv ticks its core itself */
        if (ms < 0 || ms > left)
            ms = (int)left + 1;
        if (ms > 1000)
            ms = 1000;
        loop_run_once(n->lp, ms);
    }
    return 0;
}

/* Run the loop until every local rank got its fence answer. */
static int wait_fence(struct node *n, double deadline)
{
    while (n->fenced < rpn) {
        if (n->fence_fail || n->aborted)
            return -1;
        if (n->bye) {
            snprintf(n->why, sizeof(n->why), "the parent left");
            return -1;
        }
        double left = deadline - now_ms();
        if (left <= 0) {
            snprintf(n->why, sizeof(n->why), "fence timed out");
            return -1;
        }
        int ms = n->ns ? -1 : psrv_tick(n->srv); /* nodesrv ticks its core itself */
        if (ms < 0 || ms > left)
            ms = (int)left + 1;
        if (ms > 1000)
            ms = 1000;
        loop_run_once(n->lp, ms);
    }
    return 0;
}

/* One round: puts (key "card" or "v", k < 0: the card), the fence, a get of
 * a remote rank's key checked.  Returns the number of wrong gets, or -1. */
static int round_(struct node *n, int k, bool put, const char *key, double deadline,
                  double *fence_ms, double *get_us)
{
    static char body[VAL_MAX + 128], val[VAL_MAX + 1], want[VAL_MAX + 1];
    int bad = 0;

    n->fenced = 0;
    for (int c = 0; c < rpn; c++) {
        int r = n->base + c;
        if (put) {
            value_of(r, k, val);
            snprintf(body, sizeof(body), "cmd=kvs-put;key=%s%d;value=%s;", key, r, val);
            if (send2(n, c, body) != 0 || wait_reply(n, deadline) < 0 ||
                !strstr(n->reply, "rc=0")) {
                snprintf(n->why, sizeof(n->why), "put by %d: %.100s", r, n->reply);
                return -1;
            }
        }
    }
    double t0 = now_ms();
    for (int c = 0; c < rpn; c++)
        send2(n, c, "cmd=kvs-fence;");
    if (wait_fence(n, deadline) < 0)
        return -1;
    *fence_ms += now_ms() - t0;
    for (int c = 0; c < rpn; c++) {
        int r = n->base + c, peer = (r + rpn) % n->size;
        snprintf(body, sizeof(body), "cmd=kvs-get;jobid=;srcid=-1;key=%s%d;", key, peer);
        double g0 = now_ms();
        send2(n, c, body);
        if (wait_reply(n, deadline) < 0)
            return -1;
        *get_us += (now_ms() - g0) * 1e3;
        value_of(peer, k, want);
        char *v = strstr(n->reply, "value=");
        if (!v || strncmp(v + 6, want, strlen(want)) != 0 || v[6 + strlen(want)] != ';')
            bad++;
    }
    return bad;
}

static long status_kb(const char *field)
{
    char line[256];
    long v = -1;
    size_t fl = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, fl) == 0) {
            v = strtol(line + fl, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

/* The node's life; writes its line on out, then serves until bye is closed. */
static int node_main(int id, int portfd, int out, int bye, const char *cookie)
{
    struct node n = {.id = id, .size = nnodes * rpn, .base = id * rpn, .parent = -1};
    int *rank_node = NULL, local[MAX_RPN], port = 0, bad = 0;
    char server[64], line[1024], **addrs = NULL;
    double deadline, t_port, t_rdv, t_up, f0 = 0, g0 = 0, f1 = 0, g1 = 0;
    double c_rdv, c_start, c0, c1;
    uint64_t b0s, b0r, b1s, b1r;

    if (read(portfd, &port, sizeof(port)) != (ssize_t)sizeof(port) || port <= 0)
        return 2;
    close(portfd);
    t_port = now_ms();
    deadline = t_port + timeout_s * 1e3;
    if (id > 0)
        n.parent = (id - 1) / width; /* ktree with root 0 */
    n.lp = loop_create();
    if (n.lp && !loop_watch_add(n.lp, bye, LOOP_READ, on_bye, &n)) {
        loop_destroy(n.lp);
        n.lp = NULL;
    }
    struct treenet_config tc = {
        .nnodes = nnodes,
        .nodeid = id,
        .width = width,
        .jobkey = JOBKEY,
        .uid = geteuid(),
        .auth = TREENET_AUTH_COOKIE,
        .bind_addr = "127.0.0.1",
        .connect_timeout_ms = timeout_s * 1000,
        .cookie = cookie,
        .handshake_timeout_ms = hs_ms,
    };
    n.tn = n.lp ? treenet_create(n.lp, &tc, &tn_ops, &n) : NULL;
    if (!n.tn) {
        snprintf(n.why, sizeof(n.why), "treenet_create: %s", strerror(errno));
        goto report;
    }
    snprintf(server, sizeof(server), "127.0.0.1:%d", port);
    c_rdv = cpu_ms();
    int rc = rdv_exchange_cookie(server, JOBKEY, cookie, nnodes, id, treenet_port(n.tn),
                                 timeout_s * 1000, &addrs, NULL);
    if (rc < 0) {
        snprintf(n.why, sizeof(n.why), "rendezvous: %s", rdv_strerror(rc));
        goto report;
    }
    t_rdv = now_ms();
    c_rdv = cpu_ms() - c_rdv;
    c_start = cpu_ms();
    rc = treenet_start(n.tn, addrs);
    rdv_addrs_free(addrs, nnodes);
    if (rc < 0) {
        snprintf(n.why, sizeof(n.why), "treenet_start: %s", strerror(-rc));
        goto report;
    }
    rank_node = malloc(sizeof(int) * (size_t)n.size);
    if (!rank_node)
        goto report;
    for (int r = 0; r < n.size; r++)
        rank_node[r] = r / rpn;
    for (int c = 0; c < rpn; c++)
        local[c] = n.base + c;
    struct psrv_config pc = {
        .jobid = JOBKEY,
        .size = n.size,
        .nnodes = nnodes,
        .nodeid = id,
        .local_count = rpn,
        .local_ranks = local,
        .rank_node = rank_node,
        .tree_width = width,
        .fence_timeout_ms = timeout_s * 1000,
        .log_level = verbose ? PSRV_LOG_INFO : PSRV_LOG_WARN,
    };
    if (set_kvs_mode(&pc) < 0) {
        snprintf(n.why, sizeof(n.why), "KVS mode %s: not in this core", kvs_mode);
        goto report;
    }
    if (sockets) {
        /* the production node server over one socketpair per rank */
        n.ns = nodesrv_create(n.lp, &pc, &ns_ops, &n);
        n.srv = n.ns ? nodesrv_psrv(n.ns) : NULL;
        n.ends = calloc((size_t)rpn, sizeof(*n.ends));
        for (int c = 0; n.ends && c < rpn; c++)
            n.ends[c].fd = -1;
        for (int c = 0; n.ns && n.ends && c < rpn; c++) {
            int sv[2];
            struct rank_end *e = &n.ends[c];
            e->fd = -1;
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) <
                0)
                break;
            if (nodesrv_add_client(n.ns, c, sv[0]) < 0) {
                close(sv[0]);
                close(sv[1]);
                break;
            }
            *e = (struct rank_end){.n = &n, .c = c, .fd = sv[1]};
            e->in = malloc(VAL_MAX + 256);
            e->w = e->in ? loop_watch_add(n.lp, sv[1], LOOP_READ, on_rank, e) : NULL;
            if (!e->w)
                break;
        }
        if (!n.ends || !n.ends[rpn - 1].w)
            n.srv = NULL;
    } else {
        n.srv = psrv_create(&pc, &core_ops, &n);
    }
    if (!n.srv) {
        snprintf(n.why, sizeof(n.why), "%s: %s", sockets ? "nodesrv" : "psrv_create",
                 strerror(errno));
        goto report;
    }
    for (int c = 0; c < rpn; c++) {
        static const char init[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
        n.reply_len = 0;
        if (n.ns) {
            if (write_rank(&n, c, init, sizeof(init) - 1) < 0 ||
                wait_reply(&n, deadline) < 0)
                goto report;
        } else {
            psrv_client_input(n.srv, c, init, sizeof(init) - 1);
        }
        if (send2(&n, c, "cmd=fullinit;") < 0 || wait_reply(&n, deadline) < 0)
            goto report;
    }
    /* start: the card, over links that are still coming up */
    double dummy = 0, dummy2 = 0;
    rc = round_(&n, -1, true, "card", deadline, &dummy, &dummy2);
    if (rc < 0)
        goto report;
    bad += rc;
    t_up = now_ms();
    c_start = cpu_ms() - c_start; /* links, server, first fence */
    /* 0 B */
    c0 = cpu_ms();
    b0s = n.up_sent;
    b0r = n.up_recv;
    for (int k = 0; k < nfences && bad >= 0; k++) {
        rc = round_(&n, -1, false, "card", deadline, &f0, &g0);
        if (rc < 0)
            goto report;
        bad += rc;
    }
    c0 = cpu_ms() - c0;
    b0s = n.up_sent - b0s;
    b0r = n.up_recv - b0r;
    /* val_big bytes (none: -b 0 skips the phase) */
    c1 = cpu_ms();
    b1s = n.up_sent;
    b1r = n.up_recv;
    for (int k = 0; k < nfences && val_big > 0; k++) {
        rc = round_(&n, k, true, "v", deadline, &f1, &g1);
        if (rc < 0)
            goto report;
        bad += rc;
    }
    c1 = cpu_ms() - c1;
    b1s = n.up_sent - b1s;
    b1r = n.up_recv - b1r;
    /* node \t ok \t bad \t t_rdv t_up (ms from the port) \t fence0 get0 cpu0
     * bytes0 \t fence1 get1 cpu1 bytes1 \t rss hwm fds \t cpu_rdv cpu_start */
    snprintf(line, sizeof(line),
             "%d\tok\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%" PRIu64
             "\t%.3f\t%.3f\t%.3f\t%" PRIu64 "\t%ld\t%ld\t%d\t%.3f\t%.3f\n",
             id, bad, t_rdv - t_port, t_up - t_port, f0 / nfences, g0 / (nfences * rpn),
             c0 / nfences, (b0s + b0r) / (uint64_t)nfences, f1 / nfences,
             g1 / (nfences * rpn), c1 / nfences, (b1s + b1r) / (uint64_t)nfences,
             status_kb("VmRSS:"), status_kb("VmHWM:"), count_fds(), c_rdv, c_start);
    goto send;
report:
    snprintf(line, sizeof(line), "%d\tfail\t%s\n", id, n.why[0] ? n.why : "setup failed");
send:
    n.done = true;
    if (write(out, line, strlen(line)) < 0)
        return 2;
    close(out);
    /* serve the links (forward what others still need) until the parent says bye */
    if (n.lp) {
        while (!n.bye && now_ms() < deadline + 10e3) {
            if (n.srv && !n.ns)
                psrv_tick(n.srv);
            loop_run_once(n.lp, 50);
        }
    }
    if (n.tn)
        treenet_destroy(n.tn);
    if (n.ns)
        nodesrv_destroy(n.ns);
    else
        psrv_destroy(n.srv);
    for (int c = 0; n.ends && c < rpn; c++) {
        if (n.ends[c].w)
            loop_watch_remove(n.lp, n.ends[c].w);
        if (n.ends[c].fd >= 0)
            close(n.ends[c].fd);
        free(n.ends[c].in);
    }
    free(n.ends);
    if (n.lp)
        loop_destroy(n.lp);
    free(rank_node);
    free(n.reply);
    return strstr(line, "\tok\t") ? 0 : 1;
}

/* ---- the parent --------------------------------------------------------- */

static pid_t *pids;

/* Kill the nodes still running (by pid) and reap them. */
static void kill_all(void)
{
    for (int i = 0; i < nnodes; i++)
        if (pids[i] > 0)
            kill(pids[i], SIGKILL);
    for (int i = 0; i < nnodes; i++)
        if (pids[i] > 0 && waitpid(pids[i], NULL, 0) == pids[i])
            pids[i] = 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int opt, portp[2], outp[2], byep[2];
    char cookie[65];

    while ((opt = getopt(argc, argv, "n:r:f:w:t:b:m:H:Sv")) != -1) {
        switch (opt) {
        case 'n':
            nnodes = atoi(optarg);
            break;
        case 'r':
            rpn = atoi(optarg);
            break;
        case 'f':
            nfences = atoi(optarg);
            break;
        case 'w':
            width = atoi(optarg);
            break;
        case 't':
            timeout_s = atoi(optarg);
            break;
        case 'b':
            val_big = atoi(optarg);
            break;
        case 'm':
            kvs_mode = optarg;
            break;
        case 'H':
            hs_ms = atoi(optarg);
            break;
        case 'S':
            sockets = true;
            break;
        case 'v':
            verbose++;
            break;
        default:
            fprintf(stderr,
                    "usage: emu -n NODES [-r RANKS] [-f FENCES] [-w WIDTH] "
                    "[-t TIMEOUT_S] [-b BYTES] [-m full|ondemand|auto] [-H HS_MS] "
                    "[-S] [-v]\n");
            return 2;
        }
    }
    if (nnodes < 1 || nnodes > MAX_NODES || rpn < 1 || rpn > MAX_RPN || nfences < 1 ||
        nfences > 10000 || width < 1 || timeout_s < 1 || val_big < 0 ||
        val_big > VAL_MAX || hs_ms < 0) {
        fprintf(stderr, "emu: bad arguments\n");
        return 2;
    }
    {
        struct psrv_config probe = {0};
        if (strcmp(kvs_mode, "full") && strcmp(kvs_mode, "ondemand") &&
            strcmp(kvs_mode, "auto")) {
            fprintf(stderr, "emu: -m %s: full, ondemand or auto\n", kvs_mode);
            return 2;
        }
        if (set_kvs_mode(&probe) < 0) {
            fprintf(stderr, "emu: -m %s: this core has no such KVS mode\n", kvs_mode);
            return 3;
        }
    }
    /* the cookie: 64 hex digits of /dev/urandom */
    unsigned char rnd[32];
    int ufd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (ufd < 0 || read(ufd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
        fprintf(stderr, "emu: no random numbers\n");
        return 2;
    }
    close(ufd);
    for (int i = 0; i < 32; i++)
        snprintf(cookie + 2 * i, 3, "%02x", rnd[i]);
    if (pipe(portp) < 0 || pipe(outp) < 0 || pipe(byep) < 0) {
        perror("emu: pipe");
        return 2;
    }
    pids = calloc((size_t)nnodes, sizeof(pid_t));
    if (!pids)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < nnodes; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("emu: fork");
            kill_all();
            return 2;
        }
        if (p == 0) {
            close(portp[1]);
            close(outp[0]);
            close(byep[1]);
            _exit(node_main(i, portp[0], outp[1], byep[0], cookie));
        }
        pids[i] = p;
    }
    close(portp[0]);
    close(outp[1]);
    close(byep[0]);

    double t0 = now_ms();
    struct rdv_server *rs = rdv_server_start_cookie(
        nnodes, width, JOBKEY, cookie, "127.0.0.1", 0, 0, timeout_s * 1000, NULL, NULL);
    if (!rs) {
        perror("emu: rendezvous server");
        kill_all();
        return 2;
    }
    int port = rdv_server_port(rs);
    for (int i = 0; i < nnodes; i++)
        if (write(portp[1], &port, sizeof(port)) != (ssize_t)sizeof(port)) {
            perror("emu: port pipe");
            kill_all();
            return 2;
        }
    close(portp[1]);

    /* collect one line per node, bounded */
    size_t cap = (size_t)nnodes * 512, len = 0;
    char *all = malloc(cap + 1);
    int lines = 0;
    double deadline = t0 + timeout_s * 1e3 + 5e3;
    while (all && lines < nnodes && len < cap) {
        struct pollfd p = {.fd = outp[0], .events = POLLIN};
        double left = deadline - now_ms();
        if (left <= 0)
            break;
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        ssize_t k = read(outp[0], all + len, cap - len);
        if (k <= 0)
            break;
        for (ssize_t i = 0; i < k; i++)
            lines += all[len + i] == '\n';
        len += (size_t)k;
    }
    double t_all = now_ms() - t0;
    close(byep[1]); /* bye: the nodes leave */
    int rdv_rc = rdv_server_stop(rs);
    /* reap, bounded; whatever is left is killed by pid */
    int alive = nnodes, failed_exit = 0;
    double reap_end = now_ms() + 15e3;
    while (alive > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            for (int i = 0; i < nnodes; i++)
                if (pids[i] == p) {
                    pids[i] = 0;
                    alive--;
                    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        failed_exit++;
                }
            continue;
        }
        if (p < 0 || now_ms() > reap_end) {
            kill_all();
            break;
        }
        usleep(10000);
    }
    if (!all)
        return 2;
    all[len] = '\0';

    /* aggregate */
    int ok = 0, bad = 0, fails = 0;
    double *v[16];
    for (int j = 0; j < 16; j++)
        v[j] = calloc((size_t)nnodes, sizeof(double));
    for (char *s = all, *e; *s; s = e + 1) {
        e = strchr(s, '\n');
        if (!e)
            break;
        *e = '\0';
        int id, b;
        double x[15];
        if (sscanf(s,
                   "%d\tok\t%d\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%"
                   "lf\t%lf\t%lf\t%lf",
                   &id, &b, &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7], &x[8],
                   &x[9], &x[10], &x[11], &x[12], &x[13], &x[14]) == 17) {
            for (int j = 0; j < 15; j++)
                v[j][ok] = x[j];
            ok++;
            bad += b;
        } else {
            fails++;
            if (fails <= 5)
                fprintf(stderr, "emu: node line: %s\n", s);
        }
    }
    /* the CPU of all the nodes together: what the machine's cores serve */
    double sum0 = 0, sum1 = 0, sum_up = 0;
    for (int i = 0; i < ok; i++) {
        sum0 += v[4][i];
        sum1 += v[8][i];
        sum_up += v[13][i] + v[14][i];
    }
    for (int j = 0; j < 15; j++)
        qsort(v[j], (size_t)ok, sizeof(double), cmp_d);
#define MAXV(j) (ok ? v[j][ok - 1] : 0)
#define MEDV(j) (ok ? v[j][ok / 2] : 0)
    char mode_col[32];
    snprintf(mode_col, sizeof(mode_col), "%s%s", kvs_mode, sockets ? "+sockets" : "");
    /* N R F width big_B ok bad rdv_ms up_ms fence0_ms get0_us cpu0_ms busy0_B
     * fence1_ms get1_us cpu1_ms busy1_B rss_kb hwm_kb fds wall_ms cpu_rdv_ms
     * cpu_start_ms cpu0_sum_ms cpu1k_sum_ms cpu_up_sum_ms mode (times: the slowest
     * node's mean per round; get, CPU: the median node's per round; cpu_rdv,
     * cpu_start: the median node's CPU in the rendezvous, and in its links' set-up
     * and first fence; the sums: every node's CPU per round, and at start-up) */
    printf("%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.3f\t%.2f\t%.3f\t%.0f\t%.3f\t%.2f\t%"
           ".3f\t%."
           "0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.2f\t%.2f\t%.1f\t%s\n",
           nnodes, rpn, nfences, width, val_big, ok, bad, MAXV(0), MAXV(1), MAXV(2),
           MEDV(3), MEDV(4), MAXV(5), MAXV(6), MEDV(7), MEDV(8), MAXV(9), MAXV(10),
           MAXV(11), MAXV(12), t_all, MEDV(13), MEDV(14), sum0, sum1, sum_up, mode_col);
    fflush(stdout);
    if (ok < nnodes || bad || failed_exit || rdv_rc != 0)
        fprintf(stderr,
                "emu: N=%d: %d of %d nodes ran, %d wrong gets, %d bad exits, rendezvous "
                "%d\n",
                nnodes, ok, nnodes, bad, failed_exit, rdv_rc);
    return ok == nnodes && !bad && !failed_exit ? 0 : 1;
}
