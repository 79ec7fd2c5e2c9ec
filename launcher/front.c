/* front.c - multi-host mpiexec: start one proxy per host, relay, end the job.
 *
 * Contract: see front.h; the user-visible rules (exit status, messages,
 * kill sequence) are those of the single-host launcher (node.c), and the
 * job control (signals, console, exit rule) is the same code (jobctl.h), with
 * the host named in messages about ranks and proxies.
 *
 * Design:
 *   mpiexec runs no rank itself here: every node (distinct host with ranks,
 *   hosts.c) gets a proxy, which is the same binary in --proxy mode.
 *   mpiexec listens on a TCP port on all IPv4 addresses (MPIEXEC_PORT_RANGE
 *   limits the port, as with hydra) and tells each proxy the candidate
 *   addresses (LOOM_MPIEXEC_ADDRS overrides them) and the port on its
 *   command line; the random job cookie goes through the launcher's stdin,
 *   so it never shows in ps, and it never goes on the wire either.  A
 *   connection is attached to its node only after a mutual proof of the
 *   cookie (version 2 handshake, conn.h): the proxy sends HELLO2 (node id,
 *   nonce Np); mpiexec answers PROOF (nonce Nf, HMAC(cookie, "front", node,
 *   Np, Nf)); the proxy checks it before it sends anything reusable, then
 *   sends its own PROOF (HMAC(cookie, "proxy", node, Np, Nf)).  From there
 *   every control frame in both directions (the job, kill, exits, failures:
 *   MPX_TAGGED_TYPES) carries an HMAC tag keyed by the cookie, the direction
 *   and the node, so whatever answers at a candidate address (another user's
 *   listener, even one relaying to the real mpiexec) gets no cookie, cannot
 *   make the proxy run anything, and cannot alter the job the real mpiexec
 *   sends.  Tree messages and output are not tagged (the fence path: see
 *   conn.h); a relay could alter those, as anyone on the network could.
 *
 *   The port against strangers: an accepted connection has LOOM_PROXY_
 *   HANDSHAKE_TIMEOUT (3 s) to finish its handshake; at most MAX_PENDING
 *   wait at once and one more evicts the oldest, so idle connections never
 *   keep a proxy out (proxies retry with backoff within their connect
 *   timeout); accept errors for lack of fds are absorbed with a spare fd;
 *   the port closes once every proxy is in.  Refusals are logged
 *   rate-limited (REFUSE_LOG_BURST per REFUSE_LOG_WINDOW_MS).
 *
 *   The proxies' PMI server cores form the usual k-ary tree (psrv); their
 *   tree messages travel through mpiexec (a star), which forwards them by
 *   node id and queues those for proxies that have not connected yet.
 *
 *   Every wait is bounded: the connect-back (LOOM_PROXY_TIMEOUT, default
 *   30 s), an unauthenticated connection (3 s), a proxy's answer to the
 *   kill (MPX_KILL_GRACE_MS + GIVEUP_MS), and the launchers' exit after the job.
 *
 * Caveats:
 *   - Rank 0's stdin is /dev/null in multi-host mode (not forwarded).
 *   - IPv4 only.  The cookie authenticates proxies to mpiexec; the traffic
 *     itself is not encrypted (as with hydra).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "env.h"
#include "front.h"
#include "handshake.h"
#include "hosts.h"
#include "iofwd.h"
#include "jobctl.h"
#include "loop.h"
#include "mac.h"
#include "pack.h"

#define GIVEUP_MS 5000     /* after the kill: a proxy that stays silent is given up */
#define PENDING_MS 3000    /* default: a connection must finish its handshake */
#define MAX_PENDING 256    /* unauthenticated connections; more evict the oldest */
#define REFUSE_LOG_BURST 5
#define REFUSE_LOG_WINDOW_MS 10000
#define LAUNCHER_WAIT_MS 3000 /* after the job: launchers (ssh) get this to exit */

#define EXIT_LOST 1

struct front;

struct fnode {
    struct front *f;
    int id;
    const char *host;
    int nranks;
    bool local; /* started without the remote launcher */
    pid_t pid;  /* launcher (or proxy) process, 0 once reaped */
    int wstatus;
    bool reaped;
    struct mpx_conn c; /* fd -1 until the proxy proved itself; frames queue */
    struct loop_watch *w;
    struct mpx_key key; /* tags of this node's frames */
    bool connected, done;
};

struct pend {
    struct front *f;
    struct mpx_conn c;
    struct loop_watch *w;
    uint64_t t0;
    struct pend *next;
    char peer[64];
    bool challenged; /* HELLO2 seen, our PROOF sent */
    int node;
    uint8_t np[MPX_NONCE_LEN], nf[MPX_NONCE_LEN];
};

struct front {
    struct mpx_opts *o;
    struct mpx_layout ly;
    struct loop *lp;
    struct loom_log *log;
    int pmi_level;
    enum mpx_launcher_kind kind;
    char jobid[64];
    char cookie[65];
    char self[PATH_MAX];
    char cwd[PATH_MAX];
    uint64_t t0;
    int timeout_ms; /* proxy connect-back */

    int lfd, spare_fd;
    struct loop_watch *lw;
    int port;
    int hs_ms; /* handshake deadline of a pending connection */
    uint64_t refuse_win;
    int refuse_n;
    long refuse_quiet;
    char addrs_remote[1024], addrs_local[1040];

    struct fnode *nodes;
    int nnodes, nconnected, ndone;
    struct pend *pending;
    int npending;

    struct iofwd_stream *fwd; /* [size * 2] */
    bool *exited;
    int live;
    struct mpx_console con; /* our stdout/stderr (jobctl.h) */

    bool ending;
    int exit_code;
    int caught_signal;
    struct loop_timer *connect_timer, *giveup_timer, *timeout_timer, *pend_timer;
    struct loop_watch *sig_w;
};

/* ---- messages ------------------------------------------------------------ */

/* One "mpiexec: ..." line on stderr, after the rank output gathered so far. */
static void msg(struct front *f, const char *fmt, ...) LOOM_PRINTF(2, 3);
static void msg(struct front *f, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mpx_console_vmsg(&f->con, fmt, ap);
    va_end(ap);
}

/* ---- job end ------------------------------------------------------------- */

static void node_send(struct fnode *nd, uint8_t type, struct pack *pk);
static void node_close(struct fnode *nd);

static void check_done(struct front *f)
{
    if (f->ndone >= f->nnodes)
        loop_stop(f->lp, 0);
}

static void node_finished(struct fnode *nd)
{
    struct front *f = nd->f;

    if (nd->done)
        return;
    nd->done = true;
    f->ndone++;
    /* its ranks that did not report an exit are gone with it */
    for (int r = 0; r < f->ly.size; r++)
        if (f->ly.rank_node[r] == nd->id && !f->exited[r]) {
            f->exited[r] = true;
            f->live--;
        }
    check_done(f);
}

static void kill_launcher(struct fnode *nd, int sig)
{
    if (nd->pid > 0 && !nd->reaped)
        mpx_kill_group(nd->pid, sig); /* it leads its own process group */
}

static void giveup_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct front *f = arg;

    f->giveup_timer = NULL;
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->done)
            continue;
        msg(f, "no answer from the proxy on host %s (node %d) after the kill: giving up",
            nd->host, nd->id);
        node_close(nd);
        kill_launcher(nd, SIGKILL);
        node_finished(nd);
    }
}

static void begin_kill(struct front *f)
{
    if (f->ending)
        return;
    f->ending = true;
    if (f->live > 0)
        msg(f, "killing %d remaining rank%s", f->live, mpx_plural(f->live));
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->done)
            continue;
        if (nd->connected) {
            struct pack pk;
            pack_init(&pk);
            pack_i32(&pk, SIGTERM);
            node_send(nd, MPX_F_KILL, &pk);
        } else {
            /* not connected: it has no ranks yet, and will be refused */
            kill_launcher(nd, SIGTERM);
            node_finished(nd);
        }
    }
    if (!f->giveup_timer && f->ndone < f->nnodes)
        f->giveup_timer =
            loop_timer_add(f->lp, MPX_KILL_GRACE_MS + GIVEUP_MS, giveup_cb, f);
}

static void fail(struct front *f, int code, const char *fmt, ...) LOOM_PRINTF(3, 4);
static void fail(struct front *f, int code, const char *fmt, ...)
{
    va_list ap;

    if (f->ending && !f->o->verbose)
        return;
    va_start(ap, fmt);
    mpx_console_vmsg(&f->con, fmt, ap);
    va_end(ap);
    if (!f->ending) {
        f->exit_code = code ? code : 1;
        begin_kill(f);
    }
}

/* ---- connections to the proxies ----------------------------------------- */

static void node_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg);

static void node_send(struct fnode *nd, uint8_t type, struct pack *pk)
{
    if (!nd->done && pack_error(pk) == 0) {
        mpx_conn_send(&nd->c, type, pk->buf, pk->len);
        if (nd->w && mpx_conn_pending(&nd->c))
            loop_watch_set(nd->w, LOOP_READ | LOOP_WRITE);
    }
    pack_free(pk);
}

static void node_close(struct fnode *nd)
{
    if (nd->w) {
        loop_watch_remove(nd->f->lp, nd->w);
        nd->w = NULL;
    }
    mpx_conn_free(&nd->c, 1);
}

/* The connection of a node that has not reported DONE broke. */
static void node_lost(struct fnode *nd, const char *why)
{
    struct front *f = nd->f;
    char st[128] = "";
    int status;

    node_close(nd);
    if (nd->done)
        return;
    if (nd->local && nd->pid > 0 && !nd->reaped) {
        /* a local proxy: its own exit status says what happened */
        for (int i = 0; i < 50; i++) {
            if (waitpid(nd->pid, &status, WNOHANG) == nd->pid) {
                nd->reaped = true;
                nd->wstatus = status;
                break;
            }
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    if (nd->reaped && WIFSIGNALED(nd->wstatus))
        snprintf(st, sizeof(st), ", it was killed by signal %d (%s)",
                 WTERMSIG(nd->wstatus), strsignal(WTERMSIG(nd->wstatus)));
    else if (nd->reaped && WIFEXITED(nd->wstatus))
        snprintf(st, sizeof(st), ", it exited with code %d", WEXITSTATUS(nd->wstatus));
    node_finished(nd); /* its ranks are gone: not counted among those to kill */
    fail(f, EXIT_LOST, "lost the proxy on host %s (node %d, %d rank%s): %s%s", nd->host,
         nd->id, nd->nranks, mpx_plural(nd->nranks), why, st);
}

static bool rank_of_node(struct front *f, struct fnode *nd, int rank)
{
    return rank >= 0 && rank < f->ly.size && f->ly.rank_node[rank] == nd->id;
}

static void rank_exit(struct front *f, struct fnode *nd, int rank, int status)
{
    if (f->exited[rank])
        return;
    f->exited[rank] = true;
    f->live--;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (f->ending)
        return;
    char what[96];
    f->exit_code = mpx_exit_rule(status, what, sizeof(what)); /* as the local job */
    msg(f, "rank %d on host %s %s", rank, nd->host, what);
    begin_kill(f);
}

/* One frame from node nd's proxy; false: protocol error. */
static bool node_frame(struct fnode *nd, uint8_t type, const uint8_t *body, size_t len)
{
    struct front *f = nd->f;
    struct unpack u;

    unpack_init(&u, body, len);
    switch (type) {
    case MPX_P_TREE: {
        int to = unpack_i32(&u);
        size_t n;
        const void *b = unpack_bytes(&u, &n);
        if (!b || unpack_error(&u) || to < 0 || to >= f->nnodes)
            return false;
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, nd->id);
        pack_bytes(&pk, b, n);
        node_send(&f->nodes[to], MPX_F_TREE, &pk);
        return true;
    }
    case MPX_P_OUT: {
        int rank = unpack_i32(&u);
        int which = unpack_u8(&u);
        size_t n;
        const void *b = unpack_bytes(&u, &n);
        if (!b || unpack_error(&u) || !rank_of_node(f, nd, rank) || which < 1 || which > 2)
            return false;
        iofwd_feed(&f->fwd[rank * 2 + which - 1], b, n, f->o->tag_output,
                   &f->con.obuf[which]);
        if (f->con.obuf[which].len >= MPX_FLUSH_THRESHOLD)
            mpx_console_flush(&f->con);
        return true;
    }
    case MPX_P_EOF: {
        int rank = unpack_i32(&u);
        int which = unpack_u8(&u);
        if (unpack_error(&u) || !rank_of_node(f, nd, rank) || which < 1 || which > 2)
            return false;
        iofwd_eof(&f->fwd[rank * 2 + which - 1], f->o->tag_output, &f->con.obuf[which]);
        return true;
    }
    case MPX_P_EXIT: {
        int rank = unpack_i32(&u);
        int status = unpack_i32(&u);
        if (unpack_error(&u) || !rank_of_node(f, nd, rank))
            return false;
        rank_exit(f, nd, rank, status);
        return true;
    }
    case MPX_P_FAIL: {
        int code = unpack_i32(&u);
        char *text = unpack_strdup(&u);
        if (!text)
            return false;
        fail(f, code & 0xff, "%s", text);
        free(text);
        return true;
    }
    case MPX_P_LOG: {
        char *text = unpack_strdup(&u);
        if (!text)
            return false;
        /* as with one host: once the job is being ended, the proxies'
         * complaints about ranks vanishing are consequences, not news */
        if (!f->ending || f->o->verbose)
            msg(f, "%s", text);
        free(text);
        return true;
    }
    case MPX_P_DONE:
        node_finished(nd);
        return true;
    default:
        return false;
    }
}

static void node_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct fnode *nd = arg;

    if (revents & LOOP_WRITE) {
        if (mpx_conn_flush(&nd->c) < 0) {
            node_lost(nd, "connection broken");
            return;
        }
        loop_watch_set(w, LOOP_READ | (mpx_conn_pending(&nd->c) ? LOOP_WRITE : 0));
    }
    if (!(revents & (LOOP_READ | LOOP_ERROR)))
        return;
    long n = mpx_conn_read(&nd->c);
    if (n == -EAGAIN)
        return;
    if (n <= 0) {
        node_lost(nd, n == 0 ? "connection closed" : strerror((int)-n));
        return;
    }
    uint8_t type;
    const uint8_t *body;
    size_t len;
    int rc;
    while (nd->w && (rc = mpx_conn_next(&nd->c, &type, &body, &len)) == 1)
        if (!node_frame(nd, type, body, len)) {
            node_lost(nd, "protocol error");
            return;
        }
    if (nd->w && rc < 0)
        node_lost(nd, "protocol error");
}

/* ---- the job description sent to each proxy ----------------------------- */

/* Environment entries of one application, later ones win on the proxy:
 * mpiexec's environment (hydra's -genvall, unless -genvnone), -genv/-x,
 * then the segment's -env. */
static int env_count(void *arg, const char *kv)
{
    (*(int *)arg)++;
    return 0;
}

static int env_pack(void *arg, const char *kv)
{
    pack_str(arg, kv);
    return 0;
}

static void pack_env(struct front *f, struct mpx_app *a, struct pack *pk)
{
    int n = 0;

    (void)mpx_app_env_each(f->o, a, env_count, &n);
    pack_i32(pk, n);
    (void)mpx_app_env_each(f->o, a, env_pack, pk);
}

static int send_job(struct fnode *nd)
{
    struct front *f = nd->f;
    struct mpx_opts *o = f->o;
    struct pack pk;

    pack_init(&pk);
    pack_u32(&pk, MPX_PROTO_VERSION);
    pack_str(&pk, f->jobid);
    pack_i32(&pk, f->ly.size);
    pack_i32(&pk, f->nnodes);
    pack_i32(&pk, nd->id);
    pack_i32(&pk, o->fence_timeout_s);
    pack_i32(&pk, f->pmi_level);
    pack_i32(&pk, o->bind == MPX_BIND_CORE);
    pack_i32(&pk, o->report_bindings);
    pack_i32(&pk, o->verbose);
    pack_str(&pk, nd->host);
    for (int r = 0; r < f->ly.size; r++)
        pack_i32(&pk, f->ly.rank_node[r]);
    pack_i32(&pk, o->napps);
    for (int a = 0; a < o->napps; a++) {
        struct mpx_app *app = &o->apps[a];
        pack_i32(&pk, app->np);
        pack_i32(&pk, app->argc);
        for (int i = 0; i < app->argc; i++)
            pack_str(&pk, app->argv[i]);
        pack_env(f, app, &pk);
        const char *wdir = app->wdir ? app->wdir : o->gwdir;
        pack_str(&pk, wdir ? wdir : f->cwd);
        pack_u8(&pk, wdir ? 0 : 1);
    }
    int rc = pack_error(&pk);
    if (rc == 0)
        rc = mpx_conn_send_first(&nd->c, MPX_F_JOB, pk.buf, pk.len);
    pack_free(&pk);
    return rc;
}

/* ---- accepting proxies --------------------------------------------------- */

static void pend_free(struct front *f, struct pend *p)
{
    struct pend **pp = &f->pending;

    while (*pp && *pp != p)
        pp = &(*pp)->next;
    if (*pp)
        *pp = p->next;
    if (p->w)
        loop_watch_remove(f->lp, p->w);
    mpx_conn_free(&p->c, 1);
    free(p);
    f->npending--;
}

/* A stranger on the port: at most REFUSE_LOG_BURST lines per window, then
 * one line counting the rest.  peer is a numeric address (nothing to escape). */
static void refused(struct front *f, const char *peer, const char *why)
{
    uint64_t now = loop_now_ms();

    if (now - f->refuse_win >= REFUSE_LOG_WINDOW_MS) {
        if (f->refuse_quiet)
            loom_logf(f->log, LOOM_LOG_WARN,
                      "warning: %ld more connections to port %d refused (not logged)",
                      f->refuse_quiet, f->port);
        f->refuse_win = now;
        f->refuse_n = 0;
        f->refuse_quiet = 0;
    }
    if (f->refuse_n++ < REFUSE_LOG_BURST) {
        mpx_console_flush(&f->con);
        loom_logf(f->log, LOOM_LOG_WARN,
                  "warning: refused a connection from %s to port %d: %s", peer, f->port,
                  why);
    } else {
        f->refuse_quiet++;
    }
}

static void pend_refuse(struct front *f, struct pend *p, const char *why)
{
    refused(f, p->peer, why);
    pend_free(f, p);
}

static void connect_timeout_cb(struct loop *lp, struct loop_timer *t, void *arg);

/* Every proxy is in: nobody else has business on the port. */
static void listener_close(struct front *f)
{
    if (f->lw)
        loop_watch_remove(f->lp, f->lw);
    f->lw = NULL;
    if (f->lfd >= 0)
        close(f->lfd);
    f->lfd = -1;
    while (f->pending)
        pend_free(f, f->pending);
}

/* HELLO2: a proxy names its node and nonce; we prove the cookie first. */
static bool challenge(struct front *f, struct pend *p, const uint8_t *body, size_t len)
{
    struct unpack u;
    size_t nl;

    unpack_init(&u, body, len);
    uint32_t version = unpack_u32(&u);
    int id = unpack_i32(&u);
    const void *np = unpack_bytes(&u, &nl);
    if (unpack_error(&u) || version != MPX_PROTO_VERSION || !np || nl != MPX_NONCE_LEN) {
        pend_refuse(f, p, "not a proxy of this mpiexec (bad hello or version)");
        return false;
    }
    if (id < 0 || id >= f->nnodes || f->nodes[id].connected || f->nodes[id].done ||
        f->ending) {
        pend_refuse(f, p, "no such node waiting (or the job is ending)");
        return false;
    }
    uint8_t proof[MPX_PROOF_LEN];
    struct pack pk;
    p->node = id;
    memcpy(p->np, np, MPX_NONCE_LEN);
#ifdef LOOM_FUZZ
    memset(p->nf, 0, sizeof(p->nf)); /* fuzz target: seeds can carry a valid proof */
#else
    if (loom_random_bytes(p->nf, sizeof(p->nf)) < 0) {
        pend_refuse(f, p, "no random numbers for a nonce");
        return false;
    }
#endif
    mpx_make_proof(f->cookie, "front", id, p->np, p->nf, proof);
    pack_init(&pk);
    pack_bytes(&pk, p->nf, sizeof(p->nf));
    pack_bytes(&pk, proof, sizeof(proof));
    int rc =
        pack_error(&pk) ? -ENOMEM : mpx_conn_send(&p->c, MPX_F_PROOF, pk.buf, pk.len);
    pack_free(&pk);
    if (rc < 0 || mpx_conn_pending(&p->c)) { /* a fresh socket takes 80 bytes */
        pend_refuse(f, p, "cannot send the proof");
        return false;
    }
    p->challenged = true;
    return true;
}

/* PROOF: the proxy's answer.  Attach the connection to its node, or refuse. */
static void attach(struct front *f, struct pend *p, const uint8_t *body, size_t len)
{
    struct unpack u;
    size_t tl;
    uint8_t want[MPX_PROOF_LEN];

    unpack_init(&u, body, len);
    const void *tag = unpack_bytes(&u, &tl);
    if (unpack_error(&u) || !tag || tl != MPX_PROOF_LEN) {
        pend_refuse(f, p, "malformed proof");
        return;
    }
    mpx_make_proof(f->cookie, "proxy", p->node, p->np, p->nf, want);
    if (!loom_ct_equal(want, tag, MPX_PROOF_LEN)) {
        pend_refuse(f, p, "wrong proof of the job cookie");
        return;
    }
    int id = p->node;
    if (f->nodes[id].connected || f->nodes[id].done || f->ending) {
        pend_refuse(f, p, "node already connected (or the job is ending)");
        return;
    }
    struct fnode *nd = &f->nodes[id];
    int fd = p->c.fd;
    struct iobuf rest = p->c.in;
    size_t rest_off = p->c.in_off;
    p->c.in = (struct iobuf){0};
    p->c.fd = -1;
    pend_free(f, p);
    nd->c.fd = fd;
    nd->c.in = rest;
    nd->c.in_off = rest_off;
    nd->connected = true;
    f->nconnected++;
    if (send_job(nd) < 0) {
        fail(f, 1, "cannot send the job to the proxy on host %s", nd->host);
        return;
    }
    nd->w = loop_watch_add(f->lp, fd, LOOP_READ | (mpx_conn_pending(&nd->c) ? LOOP_WRITE : 0),
                           node_cb, nd);
    if (!nd->w) {
        fail(f, 1, "out of memory");
        return;
    }
    if (f->nconnected == f->nnodes) {
        if (f->connect_timer) {
            loop_timer_cancel(f->lp, f->connect_timer);
            f->connect_timer = NULL;
        }
        listener_close(f);
        if (f->o->verbose)
            msg(f, "all %d proxies connected after %llu ms", f->nnodes,
                (unsigned long long)(loop_now_ms() - f->t0));
    }
}

static void pend_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct pend *p = arg;
    struct front *f = p->f;
    long n = mpx_conn_read(&p->c);

    if (n == -EAGAIN)
        return;
    if (n <= 0) {
        pend_refuse(f, p, n == 0 ? "closed before the handshake" : strerror((int)-n));
        return;
    }
    /* the handshake is small: anything large before it is not a proxy of ours */
    if (p->c.in.len > 4096) {
        pend_refuse(f, p, "too many bytes before the handshake");
        return;
    }
    uint8_t type;
    const uint8_t *body;
    size_t len;
    int rc;
    while ((rc = mpx_conn_next(&p->c, &type, &body, &len)) == 1) {
        if (!p->challenged) {
            if (type != MPX_P_HELLO2) {
                pend_refuse(f, p, "not a proxy of this mpiexec (no hello)");
                return;
            }
            if (!challenge(f, p, body, len))
                return;
            continue;
        }
        if (type != MPX_P_PROOF) {
            pend_refuse(f, p, "no proof of the job cookie");
            return;
        }
        attach(f, p, body, len);
        return;
    }
    if (rc < 0)
        pend_refuse(f, p, "not a proxy of this mpiexec (bad frame)");
}

static void pend_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct front *f = arg;
    uint64_t now = loop_now_ms();

    f->pend_timer = NULL;
    for (struct pend *p = f->pending, *next; p; p = next) {
        next = p->next;
        if (now - p->t0 >= (uint64_t)f->hs_ms)
            pend_refuse(f, p, "no handshake before the timeout");
    }
    if (f->pending)
        f->pend_timer = loop_timer_add(lp, 250, pend_timer_cb, f);
}

static void listen_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct front *f = arg;

    for (int k = 0; k < 64 && f->lw; k++) {
        struct sockaddr_in sin;
        socklen_t sl = sizeof(sin);
        int c = accept4(fd, (struct sockaddr *)&sin, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                 errno == ENOMEM) &&
                f->spare_fd >= 0) {
                /* out of fds: shed this one with the spare, never spin */
                close(f->spare_fd);
                int x = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (x >= 0)
                    close(x);
                f->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                refused(f, "?", "out of file descriptors (connection shed)");
            }
            return;
        }
        char peer[64] = "?";
        if (sin.sin_family == AF_INET) {
            char a[INET_ADDRSTRLEN] = "?";
            inet_ntop(AF_INET, &sin.sin_addr, a, sizeof(a));
            snprintf(peer, sizeof(peer), "%s:%u", a, ntohs(sin.sin_port));
        }
        if (f->ending) {
            close(c);
            continue;
        }
        if (f->npending >= MAX_PENDING) {
            struct pend *old = f->pending; /* new ones go first: the oldest is last */
            while (old && old->next)
                old = old->next;
            if (old)
                pend_refuse(f, old, "evicted: too many connections without a handshake");
        }
        struct pend *p = calloc(1, sizeof(*p));
        if (!p) {
            close(c);
            continue;
        }
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        p->f = f;
        snprintf(p->peer, sizeof(p->peer), "%s", peer);
        mpx_conn_init(&p->c, c);
        p->t0 = loop_now_ms();
        p->w = loop_watch_add(lp, c, LOOP_READ, pend_cb, p);
        if (!p->w) {
            close(c);
            free(p);
            continue;
        }
        p->next = f->pending;
        f->pending = p;
        f->npending++;
        if (!f->pend_timer)
            f->pend_timer = loop_timer_add(lp, 250, pend_timer_cb, f);
    }
}

static void connect_timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct front *f = arg;
    char hosts[512] = "";
    size_t hl = 0;
    int missing = 0;

    f->connect_timer = NULL;
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->connected || nd->done)
            continue;
        missing++;
        if (hl + strlen(nd->host) + 3 < sizeof(hosts))
            hl += (size_t)snprintf(hosts + hl, sizeof(hosts) - hl, "%s%s", hl ? ", " : "",
                                   nd->host);
    }
    if (missing)
        fail(f, MPX_EXIT_LAUNCH,
             "the proxy on host%s %s did not connect back within %d s (firewall? see "
             "LOOM_MPIEXEC_ADDRS and MPIEXEC_PORT_RANGE in mpiexec(1))",
             mpx_plural(missing), hosts, f->timeout_ms / 1000);
}

/* ---- starting the proxies ------------------------------------------------ */

static int open_listener(struct front *f, char *err, size_t errlen)
{
    const char *range = getenv("MPIEXEC_PORT_RANGE");
    int lo = 0, hi = 0;

    if (!range || !*range)
        range = getenv("HYDRA_PORT_RANGE");
    if (range && *range &&
        (sscanf(range, "%d:%d", &lo, &hi) != 2 && sscanf(range, "%d-%d", &lo, &hi) != 2)) {
        snprintf(err, errlen, "MPIEXEC_PORT_RANGE='%s' is not LOW:HIGH", range);
        return -EINVAL;
    }
    if (lo < 0 || hi > 65535 || lo > hi) {
        snprintf(err, errlen, "MPIEXEC_PORT_RANGE='%s' is not LOW:HIGH", range);
        return -EINVAL;
    }
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (f->lfd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -errno;
    }
    int one = 1, rc = -1;
    setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    for (int port = lo; port <= hi; port++) {
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_ANY)};
        rc = bind(f->lfd, (struct sockaddr *)&sin, sizeof(sin));
        if (rc == 0)
            break;
    }
    if (rc < 0 || listen(f->lfd, 1024) < 0) {
        snprintf(err, errlen, "cannot listen on a TCP port%s%s: %s",
                 range ? " in " : "", range ? range : "", strerror(errno));
        return -errno;
    }
    struct sockaddr_in sin;
    socklen_t sl = sizeof(sin);
    getsockname(f->lfd, (struct sockaddr *)&sin, &sl);
    f->port = ntohs(sin.sin_port);

    /* candidate addresses: this host's IPv4 addresses (not loopback) for
     * remote proxies, loopback first for local ones */
    const char *forced = getenv("LOOM_MPIEXEC_ADDRS");
    size_t rl = 0;
    if (forced && *forced) {
        if (strlen(forced) >= sizeof(f->addrs_remote) ||
            strspn(forced, "0123456789.,") != strlen(forced)) {
            snprintf(err, errlen, "LOOM_MPIEXEC_ADDRS='%s' is not a list of IPv4 addresses",
                     forced);
            return -EINVAL;
        }
        rl = (size_t)snprintf(f->addrs_remote, sizeof(f->addrs_remote), "%s", forced);
    } else {
        struct ifaddrs *ifa = NULL;
        if (getifaddrs(&ifa) == 0) {
            for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
                char a[INET_ADDRSTRLEN];
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
                    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
                    continue;
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a,
                          sizeof(a));
                if (rl + strlen(a) + 2 < sizeof(f->addrs_remote))
                    rl += (size_t)snprintf(f->addrs_remote + rl, sizeof(f->addrs_remote) - rl,
                                           "%s%s", rl ? "," : "", a);
            }
            freeifaddrs(ifa);
        }
    }
    snprintf(f->addrs_local, sizeof(f->addrs_local), "127.0.0.1%s%s", rl ? "," : "",
             f->addrs_remote);
    if (!rl)
        snprintf(f->addrs_remote, sizeof(f->addrs_remote), "127.0.0.1");
    return 0;
}

/* Split s at blanks into v (malloc'd copy in *store). */
static int split_words(const char *s, char **store, char **v, int max)
{
    int n = 0;
    char *save = NULL;

    *store = strdup(s);
    if (!*store)
        return -ENOMEM;
    for (char *w = strtok_r(*store, " \t", &save); w && n < max;
         w = strtok_r(NULL, " \t", &save))
        v[n++] = w;
    return n;
}

static int start_proxy(struct front *f, struct fnode *nd, char *err, size_t errlen)
{
    char node[16], conn[1100], tmo[16];
    char *words = NULL, *argv[48];
    int n = 0, p[2];
    const char *spec = nd->local ? f->addrs_local : f->addrs_remote;

    snprintf(node, sizeof(node), "%d", nd->id);
    snprintf(conn, sizeof(conn), "%s:%d", spec, f->port);
    snprintf(tmo, sizeof(tmo), "%d", (f->timeout_ms + 999) / 1000);
    if (!nd->local) {
        const char *ex = f->o->launcher_exec;
        if (!ex)
            ex = f->kind == MPX_LAUNCHER_RSH ? "rsh" : "ssh -x";
        n = split_words(ex, &words, argv, 32);
        if (n <= 0) {
            snprintf(err, errlen, "bad -launcher-exec '%s'", ex);
            free(words);
            return -EINVAL;
        }
        argv[n++] = (char *)nd->host;
    }
    argv[n++] = f->self;
    argv[n++] = "--proxy";
    argv[n++] = "--node";
    argv[n++] = node;
    argv[n++] = "--connect";
    argv[n++] = conn;
    argv[n++] = "--connect-timeout";
    argv[n++] = tmo;
    argv[n] = NULL;
    if (f->o->verbose) {
        char line[2048];
        size_t l = 0;
        for (int i = 0; i < n && l < sizeof(line) - 1; i++)
            l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%s", i ? " " : "", argv[i]);
        msg(f, "node %d (host %s): %s", nd->id, nd->host, line);
    }
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        free(words);
        return -errno;
    }
    sigset_t all, saved;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &saved);
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            sigaction(sigs[i], &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* its own process group: a Ctrl-C reaches mpiexec, which ends the job */
        setpgid(0, 0);
        if (dup2(p[0], 0) < 0)
            _exit(MPX_EXIT_LAUNCH);
        execvp(argv[0], argv);
        dprintf(2, "mpiexec: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(MPX_EXIT_LAUNCH);
    }
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    close(p[0]);
    free(words);
    if (pid < 0) {
        close(p[1]);
        snprintf(err, errlen, "fork: %s", strerror(fork_errno));
        return -fork_errno;
    }
    nd->pid = pid;
    /* the cookie: through the launcher's stdin, never on a command line */
    char line[80];
    int ll = snprintf(line, sizeof(line), "%s\n", f->cookie);
    if (write(p[1], line, (size_t)ll) != ll) {
        /* the launcher died at once: its exit is reported when reaped */
    }
    memset(line, 0, sizeof(line));
    close(p[1]);
    return 0;
}

static void reap(struct front *f)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < f->nnodes; i++) {
            struct fnode *nd = &f->nodes[i];
            if (nd->pid != pid || nd->reaped)
                continue;
            nd->reaped = true;
            nd->wstatus = status;
            if (nd->connected || nd->done)
                break; /* the connection tells the rest */
            if (WIFEXITED(status))
                fail(
                    f, MPX_EXIT_LAUNCH,
                    "cannot start the proxy on host %s: the launcher exited with code %d",
                    nd->host, WEXITSTATUS(status));
            else
                fail(f, MPX_EXIT_LAUNCH,
                     "cannot start the proxy on host %s: the launcher was killed by "
                     "signal %d",
                     nd->host, WTERMSIG(status));
            node_finished(nd);
            break;
        }
    }
}

static void on_term(void *arg, int sig)
{
    struct front *f = arg;

    if (f->caught_signal) {
        /* second signal: no more grace anywhere */
        for (int k = 0; k < f->nnodes; k++) {
            struct pack pk;
            pack_init(&pk);
            pack_i32(&pk, SIGKILL);
            node_send(&f->nodes[k], MPX_F_KILL, &pk);
        }
        return;
    }
    f->caught_signal = sig;
    msg(f, "caught signal %d (%s)", sig, strsignal(sig));
    if (!f->ending)
        f->exit_code = 128 + sig;
    begin_kill(f);
}

static void on_child(void *arg)
{
    reap(arg);
}

static void sig_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    mpx_signals_dispatch(fd, on_term, on_child, arg);
}

static void timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct front *f = arg;

    f->timeout_timer = NULL;
    if (f->ending)
        return;
    msg(f, "timeout: the job did not finish within %d s", f->o->timeout_s);
    f->exit_code = MPX_EXIT_TIMEOUT;
    begin_kill(f);
}

static int prepare_cb(struct loop *lp, void *arg)
{
    struct front *f = arg;

    mpx_console_flush(&f->con);
    return -1;
}

static int make_cookie(char *out, size_t outlen)
{
    unsigned char b[LOOM_KEY_LEN];

    if (outlen < 2 * sizeof(b) + 1)
        return -EINVAL;
    if (loom_random_bytes(b, sizeof(b)) < 0)
        return -errno;
    loom_hex(b, sizeof(b), out);
    memset(b, 0, sizeof(b));
    return 0;
}

/* After the loop: hang up on every proxy and give the launchers a moment
 * to exit (ssh ends when its proxy does); then end them. */
static void wait_launchers(struct front *f)
{
    uint64_t end = loop_now_ms() + LAUNCHER_WAIT_MS;
    int status;

    for (int i = 0; i < f->nnodes; i++)
        node_close(&f->nodes[i]);
    for (;;) {
        int left = 0;
        for (int i = 0; i < f->nnodes; i++) {
            struct fnode *nd = &f->nodes[i];
            if (nd->pid <= 0 || nd->reaped)
                continue;
            if (waitpid(nd->pid, &status, WNOHANG) == nd->pid) {
                nd->reaped = true;
                continue;
            }
            left++;
        }
        if (!left)
            return;
        if (loop_now_ms() >= end)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < f->nnodes; i++)
        kill_launcher(&f->nodes[i], SIGTERM);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->pid > 0 && !nd->reaped && waitpid(nd->pid, &status, WNOHANG) != nd->pid) {
            kill_launcher(nd, SIGKILL);
            waitpid(nd->pid, &status, 0);
        }
        nd->reaped = true;
    }
}

static int env_ms(const char *name, int dflt_s)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt_s * 1000;
    v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 86400)
        return dflt_s * 1000;
    return (int)v * 1000;
}

static enum mpx_launcher_kind resolve_kind(const struct mpx_opts *o)
{
    if (o->launcher != MPX_LAUNCHER_AUTO)
        return o->launcher;
    const char *l = getenv("LOOM_MPIEXEC_LAUNCHER");
    if (l && strcmp(l, "fork") == 0)
        return MPX_LAUNCHER_FORK;
    if (l && strcmp(l, "rsh") == 0)
        return MPX_LAUNCHER_RSH;
    return MPX_LAUNCHER_SSH;
}

int mpx_front_main(struct mpx_opts *o, int pmi_level, struct loom_log *log)
{
    struct mpx_hostlist hl = {0};
    struct front f;
    char err[1024], myname[256] = "";
    int rc;

    memset(&f, 0, sizeof(f));
    f.o = o;
    f.log = log;
    f.con.log = log;
    f.pmi_level = pmi_level;
    f.lfd = -1;
    f.spare_fd = -1;
    f.t0 = loop_now_ms();
    rc = o->hosts ? mpx_hosts_parse(o->hosts, &hl, err, sizeof(err)) : 0;
    if (rc == 0 && o->hostfile)
        rc = mpx_hostfile_read(o->hostfile, &hl, err, sizeof(err));
    if (rc < 0) {
        msg(&f, "%s", rc == -ENOMEM ? "out of memory" : err);
        mpx_hosts_free(&hl);
        return MPX_EXIT_USAGE;
    }
    /* no -n with a host list: one rank per slot, as hydra */
    if (o->napps == 1 && !o->apps[0].np_set) {
        long t = mpx_hosts_total_slots(&hl, o->ppn);
        o->apps[0].np = (int)(t > 65536 ? 65536 : t);
        o->nranks = o->apps[0].np;
    }
    f.kind = resolve_kind(o);
    if (f.kind == MPX_LAUNCHER_SLURM) {
        msg(&f, "-launcher slurm needs srun (not found)");
        mpx_hosts_free(&hl);
        return MPX_EXIT_LAUNCH;
    }
    rc = mpx_hosts_layout(&hl, o->nranks, o->ppn, &f.ly);
    mpx_hosts_free(&hl);
    if (rc < 0) {
        msg(&f, "cannot place %d ranks on the hosts: %s", o->nranks, strerror(-rc));
        return MPX_EXIT_USAGE;
    }
    gethostname(myname, sizeof(myname) - 1);
    if (f.ly.nnodes == 1 &&
        (f.kind == MPX_LAUNCHER_FORK || mpx_host_is_local(f.ly.node_host[0], myname))) {
        mpx_layout_free(&f.ly);
        return MPX_FRONT_LOCAL;
    }

    /* from here on, a multi-host job */
    ssize_t sl = readlink("/proc/self/exe", f.self, sizeof(f.self) - 1);
    const char *px = getenv("LOOM_MPIEXEC_PROXY");
    if (px && *px)
        snprintf(f.self, sizeof(f.self), "%s", px);
    else if (sl <= 0) {
        msg(&f, "cannot find my own executable: %s", strerror(errno));
        return MPX_EXIT_LAUNCH;
    }
    if (!getcwd(f.cwd, sizeof(f.cwd)))
        f.cwd[0] = '\0';
    f.timeout_ms = env_ms("LOOM_PROXY_TIMEOUT", 30);
    f.hs_ms = env_ms("LOOM_PROXY_HANDSHAKE_TIMEOUT", PENDING_MS / 1000);
    f.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    snprintf(f.jobid, sizeof(f.jobid), "%u.0", (unsigned)getpid());
    f.nnodes = f.ly.nnodes;
    f.nodes = calloc((size_t)f.nnodes, sizeof(*f.nodes));
    f.fwd = calloc((size_t)f.ly.size * 2, sizeof(*f.fwd));
    f.exited = calloc((size_t)f.ly.size, sizeof(*f.exited));
    f.lp = loop_create();
    if (!f.nodes || !f.fwd || !f.exited || !f.lp || make_cookie(f.cookie, sizeof(f.cookie))) {
        msg(&f, "out of memory (or no random numbers for the job cookie)");
        return 1;
    }
    for (int r = 0; r < f.ly.size; r++)
        f.fwd[2 * r].rank = f.fwd[2 * r + 1].rank = r;
    f.live = f.ly.size;
    for (int i = 0; i < f.nnodes; i++) {
        struct fnode *nd = &f.nodes[i];
        nd->f = &f;
        nd->id = i;
        nd->host = f.ly.node_host[i];
        nd->nranks = f.ly.node_nranks[i];
        nd->local = f.kind == MPX_LAUNCHER_FORK || mpx_host_is_local(nd->host, myname);
        mpx_conn_init(&nd->c, -1);
        mpx_key_init(&nd->key, f.cookie, i);
        mpx_conn_set_tag(&nd->c, mpx_key_tag, &nd->key, MPX_DIR_FRONT, MPX_DIR_PROXY);
        if (!nd->local && strpbrk(f.self, " \t\n'\"\\$`;&|<>*?()[]{}~!#")) {
            msg(&f, "the proxy path '%s' cannot go through a remote shell (set "
                    "LOOM_MPIEXEC_PROXY)", f.self);
            return MPX_EXIT_LAUNCH;
        }
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    rc = open_listener(&f, err, sizeof(err));
    if (rc < 0) {
        msg(&f, "%s", err);
        return rc == -EINVAL ? MPX_EXIT_USAGE : MPX_EXIT_LAUNCH;
    }
    rc = mpx_signals_install();
    if (rc < 0) {
        msg(&f, "cannot install signal handlers: %s", strerror(-rc));
        return 1;
    }
    f.sig_w = loop_watch_add(f.lp, rc, LOOP_READ, sig_cb, &f);
    f.lw = loop_watch_add(f.lp, f.lfd, LOOP_READ, listen_cb, &f);
    loop_set_prepare(f.lp, prepare_cb, &f);
    if (o->timeout_s > 0)
        f.timeout_timer = loop_timer_add(f.lp, (uint64_t)o->timeout_s * 1000, timeout_cb, &f);
    f.connect_timer = loop_timer_add(f.lp, (uint64_t)f.timeout_ms, connect_timeout_cb, &f);
    if (o->verbose)
        msg(&f, "%d ranks on %d hosts; listening on port %d (addresses %s)", f.ly.size,
            f.nnodes, f.port, f.addrs_remote);

    for (int i = 0; i < f.nnodes && !f.ending; i++) {
        rc = start_proxy(&f, &f.nodes[i], err, sizeof(err));
        if (rc < 0) {
            fail(&f, MPX_EXIT_LAUNCH, "cannot start the proxy on host %s: %s",
                 f.nodes[i].host, err);
            node_finished(&f.nodes[i]);
        }
    }
    rc = 0;
    if (f.ndone < f.nnodes)
        rc = loop_run(f.lp);
    if (rc < 0)
        msg(&f, "event loop failed: %s", strerror(-rc));
    for (int r = 0; r < f.ly.size; r++)
        for (int k = 0; k < 2; k++)
            iofwd_eof(&f.fwd[2 * r + k], o->tag_output, &f.con.obuf[k + 1]);
    mpx_console_flush(&f.con);
    wait_launchers(&f);
    if (o->verbose) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        msg(&f,
            "job ended after %llu ms, exit code %d (mpiexec cpu: %ld.%03ld s user, "
            "%ld.%03ld s sys)",
            (unsigned long long)(loop_now_ms() - f.t0), f.exit_code,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 1000,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 1000);
    }

    while (f.pending)
        pend_free(&f, f.pending);
    for (int r = 0; r < f.ly.size * 2; r++)
        iobuf_free(&f.fwd[r].part);
    mpx_console_free(&f.con);
    loop_destroy(f.lp);
    if (f.lfd >= 0)
        close(f.lfd);
    if (f.spare_fd >= 0)
        close(f.spare_fd);
    free(f.nodes);
    free(f.fwd);
    free(f.exited);
    mpx_layout_free(&f.ly);
    memset(f.cookie, 0, sizeof(f.cookie));
    if (rc < 0 && f.exit_code == 0)
        return 1;
    return f.exit_code;
}
