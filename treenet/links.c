/* links.c - the tree links of one node: listener, parent connection,
 * children and their handshakes, driven by a common/loop.h loop; the
 * framing, receive buffers and send queues are common/stream.h's.
 *
 * Contract: see treenet.h (treenet_*) and doc/treenet.md (wire format).
 *
 * Design:
 *   A "slot" is one adjacent node (the parent, or one child): its state
 *   (waiting, up, lost), its send queue and, once a connection is bound to
 *   it, that connection.  A "conn" is one TCP socket: accepted sockets live
 *   unbound until their credential names a child of ours; the parent conn
 *   is bound from the start.  Queues live on the slot, so messages queued
 *   before the link is up survive connect retries.
 *
 *   Handshake, per connection: the accepting side (parent) speaks first
 *   with a fresh nonce Np; the connecting side (child) answers with its
 *   credential (from = child, to = parent, bound to Np and its own nonce
 *   Nc, decodable only by its own uid); the parent checks it, answers with
 *   its own credential (from = parent, to = child, bound to Nc and Np,
 *   decodable only by the uid of the child's credential) and is up; the
 *   child checks that answer and is up.  Credentials are single use and
 *   bound to one connection's nonces, so one seen on a connection (a
 *   stranger squatting on the parent's port) is refused on any other, and
 *   the child sends nothing else before the parent proved who it is.
 *
 *   Listeners against strangers: an accepted connection has hs_ms (default
 *   3 s) to authenticate; at most TN_PENDING_MAX wait at once, and one more
 *   evicts the oldest (an idle crowd cannot keep a real child out: the
 *   child retries its connect with backoff); accept errors for lack of fds
 *   are absorbed with a spare fd (accept, close) so the loop never spins;
 *   the listener closes as soon as every child is in, and a leaf of the
 *   tree never listens (port 0).  Refusals are logged rate-limited.
 *
 *   Each conn is a loom_stream: received frames are handed to ops->recv
 *   straight from its buffers (at most TN_CRED_MAX bytes until the link is
 *   up, TN_MSG_MAX after); sends try the socket at once and queue what does
 *   not fit (at most TN_QUEUE_MAX bytes per link); LOOP_WRITE interest is on
 *   only while something is queued.  A slot's own stream (no fd) holds what
 *   is sent before the link is up; it moves behind the handshake frames of
 *   the conn that brings the link up.
 *
 * Caveats:
 *   - Closed conns are freed by a zero-delay timer, never inside their own
 *     callback.  treenet_destroy() must not be called from inside an ops
 *     callback (the host defers it, e.g. to a loop timer).
 *   - A write error is not reported from treenet_send(): LOOP_WRITE interest
 *     is turned on and the loop callback meets the (sticky) error again and
 *     reports it, so ops->lost never runs inside treenet_send().
 *
 * One piece (about 1000 lines): slots, conns, the handshake and the send
 *   queues change together in each event of one loop callback; the framing
 *   (common/stream.h) and the credentials (auth.c) are apart.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ktree.h"
#include "log.h"
#include "loop.h"
#include "stream.h"
#include "tn_int.h"

#define MAX_PENDING TN_PENDING_MAX /* accepted, not yet authenticated */
#define REFUSE_LOG_BURST 16        /* refusal lines per window ... */
#define REFUSE_LOG_WINDOW_MS 10000 /* ... then one summary line */
#define BACKOFF_MIN_MS 10
#define BACKOFF_MAX_MS 500
#define LISTEN_PAUSE_MS 100 /* after accept fails for lack of fds or memory */

enum slot_state { SLOT_WAIT, SLOT_UP, SLOT_LOST };
enum conn_state { C_CONNECTING, C_HS, C_UP, C_DEAD };

struct conn;

struct slot {
    int node;
    bool is_parent;
    enum slot_state st;
    struct conn *conn;
    struct loom_stream q;     /* no fd: what is sent before the link is up */
    struct loop_timer *retry; /* parent: next connect attempt */
    int backoff_ms;
    char why_last[TN_WHY_MAX]; /* parent: last connect failure */
};

struct conn {
    struct treenet *tn;
    struct conn *next;    /* all conns, for cleanup */
    struct loom_stream s; /* the socket, its frames and send queue */
    struct loop_watch *w;
    enum conn_state st;
    struct slot *slot; /* NULL until authenticated (accepted side) */
    char peer[TREENET_ADDR_MAX];
    struct loop_timer *hs_timer;       /* handshake deadline */
    uint64_t t_accept;                 /* accepted side: for eviction of the oldest */
    char nonce[TN_NONCE_HEX + 1];      /* ours on this connection */
    char peer_nonce[TN_NONCE_HEX + 1]; /* the peer's (connector: the listener's) */
    bool got_nonce;                    /* connector: listener's nonce arrived */
};

struct treenet {
    struct loop *lp;
    struct treenet_config cfg;
    char jobkey[TN_JOBKEY_MAX + 1];
    char cookie[TN_COOKIE_MAX + 1]; /* TREENET_AUTH_COOKIE's key, else empty */
    char bind_addr[TREENET_ADDR_MAX];
    struct treenet_ops ops;
    void *arg;
    char me[16];
    int lfd, port, spare_fd, hs_ms;
    struct loop_watch *lw;
    uint64_t refuse_win; /* start of the refusal log window */
    int refuse_n;        /* lines logged in it */
    long refuse_quiet;   /* refusals not logged in it */
    struct slot parent; /* node -1 if root */
    struct slot *kids;
    int nkids;
    struct conn *conns;
    int npending;
    struct loop_timer *reaper, *kids_timer, *parent_deadline, *listen_pause;
    char **addrs; /* copy of the rendezvous table (parent address used) */
    bool started;
};

static void tn_log(struct treenet *tn, int level, const char *fmt, ...) LOOM_PRINTF(3, 4);

static void tn_log(struct treenet *tn, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (!tn->ops.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    tn->ops.log(tn->arg, level, line);
}

/* A refused stranger: at most REFUSE_LOG_BURST lines per window, then one
 * line counting the rest (a flood must not flood the host's log). */
static void tn_refused(struct treenet *tn, const char *peer, const char *why)
{
    uint64_t now = loop_now_ms();

    if (now - tn->refuse_win >= REFUSE_LOG_WINDOW_MS) {
        if (tn->refuse_quiet)
            tn_log(tn, LOOM_LOG_WARN,
                   "treenet: %ld more connections refused in the last %d s (not logged)",
                   tn->refuse_quiet, REFUSE_LOG_WINDOW_MS / 1000);
        tn->refuse_win = now;
        tn->refuse_n = 0;
        tn->refuse_quiet = 0;
    }
    if (tn->refuse_n++ < REFUSE_LOG_BURST)
        tn_log(tn, LOOM_LOG_WARN, "treenet: refused connection from %s: %s", peer, why);
    else
        tn->refuse_quiet++;
}

static void conn_read_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                         void *arg);
static void parent_connect(struct treenet *tn);
static void listener_close(struct treenet *tn);

/* ---- slots ------------------------------------------------------------ */

static struct slot *slot_of(struct treenet *tn, int node)
{
    if (node < 0)
        return NULL;
    if (tn->parent.node >= 0 && node == tn->parent.node)
        return &tn->parent;
    for (int i = 0; i < tn->nkids; i++)
        if (tn->kids[i].node == node)
            return &tn->kids[i];
    return NULL;
}

static void queue_free(struct slot *s)
{
    loom_stream_free(&s->q, 0);
}

static void reap_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct treenet *tn = arg;
    struct conn **pp = &tn->conns;

    tn->reaper = NULL;
    while (*pp) {
        struct conn *c = *pp;
        if (c->st == C_DEAD) {
            *pp = c->next;
            loom_stream_free(&c->s, 0);
            free(c);
        } else {
            pp = &c->next;
        }
    }
}

/* Close a conn's socket now; its memory goes at the next reaper run. */
static void conn_close(struct conn *c)
{
    struct treenet *tn = c->tn;

    if (c->st == C_DEAD)
        return;
    if (c->w)
        loop_watch_remove(tn->lp, c->w);
    c->w = NULL;
    if (c->hs_timer)
        loop_timer_cancel(tn->lp, c->hs_timer);
    c->hs_timer = NULL;
    if (c->s.fd >= 0)
        close(c->s.fd);
    c->s.fd = -1;
    if (!c->slot)
        tn->npending--;
    c->st = C_DEAD;
    if (!tn->reaper)
        tn->reaper = loop_timer_add(tn->lp, 0, reap_cb, tn);
}

/* The link to s->node is gone for good: close, drop the queue, tell the host. */
static void slot_lost(struct slot *s, struct treenet *tn, const char *why)
{
    if (s->st == SLOT_LOST)
        return;
    s->st = SLOT_LOST;
    if (s->conn) {
        s->conn->slot = NULL;
        tn->npending++; /* conn_close() decrements for unbound conns */
        conn_close(s->conn);
        s->conn = NULL;
    }
    if (s->retry)
        loop_timer_cancel(tn->lp, s->retry);
    s->retry = NULL;
    queue_free(s);
    tn_log(tn, LOOM_LOG_DEBUG, "treenet: link to node %d lost: %s", s->node, why);
    if (tn->ops.lost)
        tn->ops.lost(tn->arg, s->node, why);
}

/* A conn failed: if it carries a link, the link is lost; else just refuse. */
static void conn_fail(struct conn *c, const char *why)
{
    struct treenet *tn = c->tn;

    if (c->slot) {
        struct slot *s = c->slot;
        if (s->is_parent && c->st != C_UP && s->st == SLOT_WAIT) {
            /* parent not reachable yet: parent_retry decides */
            snprintf(s->why_last, sizeof(s->why_last), "%s", why);
            s->conn = NULL;
            c->slot = NULL;
            tn->npending++;
            conn_close(c);
            parent_connect(tn);
            return;
        }
        slot_lost(s, tn, why);
        return;
    }
    tn_refused(tn, c->peer, why);
    conn_close(c);
}

/* ---- sending ------------------------------------------------------------ */

static void conn_update_interest(struct conn *c)
{
    int ev = LOOP_READ;

    if (!c->w)
        return;
    if (c->st == C_CONNECTING)
        ev = LOOP_WRITE;
    else if (loom_stream_pending(&c->s))
        ev |= LOOP_WRITE;
    if (loop_watch_events(c->w) != ev)
        loop_watch_set(c->w, ev);
}

/* Write what can be written.  0, or -errno on a hard socket error. */
static int conn_flush(struct conn *c)
{
    int rc = loom_stream_flush(&c->s);

    if (rc < 0)
        return rc;
    conn_update_interest(c);
    return 0;
}

/* The link of s is up on c: what was sent meanwhile follows the handshake. */
static void conn_link_up(struct conn *c, struct slot *s)
{
    loom_stream_splice(&c->s, &s->q);
    loom_stream_set_frame_max(&c->s, TN_MSG_MAX);
}

int treenet_send(struct treenet *tn, int to, const void *buf, size_t len)
{
    struct slot *s = tn ? slot_of(tn, to) : NULL;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    bool up;
    int rc;

    if (!s || (len && !buf))
        return -EINVAL;
    if (s->st == SLOT_LOST)
        return -ENOTCONN;
    if (len > TN_MSG_MAX)
        return -EMSGSIZE;
    up = s->conn && s->conn->st == C_UP;
    rc = loom_stream_queue(up ? &s->conn->s : &s->q, &iov, 1, false);
    if (rc < 0)
        return rc;
    if (up && conn_flush(s->conn) < 0 && s->conn->w)
        loop_watch_set(s->conn->w, LOOP_READ | LOOP_WRITE); /* reported by the loop */
    return 0;
}

/* Messages not yet written to s's node (handshake frames are not counted). */
static size_t slot_queued(const struct slot *s)
{
    size_t n = loom_stream_queued(&s->q);

    if (s->conn && s->conn->st == C_UP)
        n += loom_stream_queued(&s->conn->s);
    return n;
}

size_t treenet_queued(const struct treenet *tn)
{
    size_t n = 0;

    if (!tn)
        return 0;
    n += slot_queued(&tn->parent);
    for (int i = 0; i < tn->nkids; i++)
        n += slot_queued(&tn->kids[i]);
    return n;
}

/* ---- receiving ----------------------------------------------------------- */

/* Queue one handshake frame (nonce or credential) on c. */
static int conn_set_hs(struct conn *c, const char *data, size_t len)
{
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};

    return loom_stream_queue(&c->s, &iov, 1, false) < 0 ? -ENOMEM : 0;
}

/* Connector: the listener's nonce arrived; answer with our credential. */
static int conn_got_nonce(struct conn *c, const uint8_t *p, size_t len)
{
    struct treenet *tn = c->tn;
    char *cred = NULL, to[16], why[TN_WHY_MAX];
    int rc;

    if (tn_nonce_parse(p, len, c->peer_nonce) < 0) {
        conn_fail(c, "no treenet nonce from the parent's port (not a loom2 peer?)");
        return -1;
    }
    if (tn_nonce_new(c->nonce) < 0) {
        conn_fail(c, "no random numbers for a nonce");
        return -1;
    }
    c->got_nonce = true;
    snprintf(to, sizeof(to), "%d", c->slot->node);
    /* the parent is a process like us: only our uid can decode it */
    rc = tn_cred_make_k(tn->cfg.auth, tn->cookie, tn->jobkey, tn->me, to, c->peer_nonce,
                        c->nonce, geteuid(), &cred, why);
    if (rc < 0) {
        tn_log(tn, LOOM_LOG_ERROR, "treenet: node %s: %s", tn->me, why);
        slot_lost(c->slot, tn, why);
        return -1;
    }
    rc = conn_set_hs(c, cred, strlen(cred));
    free(cred);
    if (rc < 0) {
        slot_lost(c->slot, tn, "out of memory");
        return -1;
    }
    if (conn_flush(c) < 0) {
        conn_fail(c, "send of the credential failed");
        return -1;
    }
    return 0;
}

/* The peer's credential frame arrived on c. */
static int conn_got_cred(struct conn *c, const uint8_t *p, size_t len)
{
    struct treenet *tn = c->tn;
    char from[32], why[TN_WHY_MAX], *end, pn[TN_NONCE_HEX + 1];
    long node;
    uid_t uid = TN_UID_ANY;
    struct slot *s;
    int rc;

    if (c->slot && !c->got_nonce)
        return conn_got_nonce(c, p, len);
    /* peers are processes like us: their uid is ours (root for slurmstepd), never
     * merely the job owner's, who could otherwise pose as a node */
    rc = tn_cred_check_k(tn->cfg.auth, tn->cookie, p, len, geteuid(), tn->jobkey, tn->me,
                         c->nonce, from, sizeof(from), pn, &uid, why);
    if (rc < 0) {
        /* our own munge failing is no refusal of the peer: an error, unthrottled */
        if (rc != -EACCES)
            tn_log(tn, LOOM_LOG_ERROR, "treenet: node %s: %s", tn->me, why);
        conn_fail(c, why);
        return -1;
    }
    errno = 0;
    node = strtol(from, &end, 10);
    if (errno || *end || end == from || node < 0 || node >= tn->cfg.nnodes) {
        conn_fail(c, "credential names no node of this job");
        return -1;
    }
    if (c->slot) { /* we connected to the parent: this is its answer */
        if (node != c->slot->node) {
            conn_fail(c, "answer from the wrong node");
            return -1;
        }
        if (strcmp(pn, c->peer_nonce) != 0) {
            conn_fail(c, "answer bound to another connection (nonce)");
            return -1;
        }
        s = c->slot;
        if (s->retry)
            loop_timer_cancel(tn->lp, s->retry);
        s->retry = NULL;
        if (tn->parent_deadline)
            loop_timer_cancel(tn->lp, tn->parent_deadline);
        tn->parent_deadline = NULL;
        if (c->hs_timer)
            loop_timer_cancel(tn->lp, c->hs_timer);
        c->hs_timer = NULL;
        c->st = C_UP;
        s->st = SLOT_UP;
        conn_link_up(c, s);
        tn_log(tn, LOOM_LOG_DEBUG, "treenet: link to parent %d up (%s)", s->node,
               c->peer);
        if (conn_flush(c) < 0 && c->w)
            loop_watch_set(c->w, LOOP_READ | LOOP_WRITE);
        return 0;
    }
    /* accepted side: must be one of our children, not yet connected */
    s = slot_of(tn, (int)node);
    if (!s || s->is_parent) {
        char w[64];
        snprintf(w, sizeof(w), "node %ld is not a child of node %s", node, tn->me);
        conn_fail(c, w);
        return -1;
    }
    if (s->st != SLOT_WAIT || s->conn) {
        char w[64];
        snprintf(w, sizeof(w), "node %ld already %s", node,
                 s->st == SLOT_LOST ? "lost" : "connected");
        conn_fail(c, w);
        return -1;
    }
    {
        char *cred = NULL, to[16];
        snprintf(to, sizeof(to), "%ld", node);
        /* only the child's uid (as its credential says) can decode ours */
        rc = tn_cred_make_k(tn->cfg.auth, tn->cookie, tn->jobkey, tn->me, to, pn,
                            c->nonce, uid, &cred, why);
        if (rc < 0) {
            tn_log(tn, LOOM_LOG_ERROR, "treenet: node %s: %s", tn->me, why);
            conn_fail(c, why);
            return -1;
        }
        rc = conn_set_hs(c, cred, strlen(cred));
        free(cred);
        if (rc < 0) {
            conn_fail(c, "out of memory");
            return -1;
        }
    }
    if (c->hs_timer)
        loop_timer_cancel(tn->lp, c->hs_timer);
    c->hs_timer = NULL;
    tn->npending--;
    c->slot = s;
    s->conn = c;
    c->st = C_UP;
    s->st = SLOT_UP;
    conn_link_up(c, s);
    tn_keepalive(c->s.fd);
    tn_log(tn, LOOM_LOG_DEBUG, "treenet: link to child %d up (%s)", s->node, c->peer);
    if (conn_flush(c) < 0 && c->w)
        loop_watch_set(c->w, LOOP_READ | LOOP_WRITE);
    if (c->st != C_DEAD) {
        bool all = true;
        for (int i = 0; i < tn->nkids; i++)
            all &= tn->kids[i].st != SLOT_WAIT;
        if (all) /* every child is in: nobody else has business here */
            listener_close(tn);
    }
    return 0;
}

/* Deliver one frame.  Returns -1 if c is closed meanwhile. */
static int conn_frame(struct conn *c, const uint8_t *p, size_t len)
{
    struct treenet *tn = c->tn;

    if (c->st != C_UP)
        return conn_got_cred(c, p, len) < 0 || c->st == C_DEAD ? -1 : 0;
    if (tn->ops.recv)
        tn->ops.recv(tn->arg, c->slot->node, p, len);
    return c->st == C_DEAD ? -1 : 0;
}

/* Hand the whole frames received to conn_frame.  -1 if c is closed. */
static int conn_drain(struct conn *c)
{
    const uint8_t *p;
    size_t len;
    int rc;

    while ((rc = loom_stream_next(&c->s, &p, &len)) == 1)
        if (conn_frame(c, p, len) < 0)
            return -1;
    if (rc == -EPROTO) {
        char w[128];
        if (c->st == C_UP)
            snprintf(w, sizeof(w), "frame of %u bytes exceeds the limit",
                     loom_stream_bad_len(&c->s));
        else
            snprintf(w, sizeof(w),
                     "handshake frame of %u bytes exceeds the limit (not a treenet "
                     "peer?)",
                     loom_stream_bad_len(&c->s));
        conn_fail(c, w);
        return -1;
    }
    if (rc < 0) {
        conn_fail(c, "out of memory for a message");
        return -1;
    }
    return 0;
}

static void conn_readable(struct conn *c)
{
    for (int rounds = 0; rounds < 16 && c->st != C_DEAD; rounds++) {
        long n = loom_stream_read(&c->s);

        if (n == -EAGAIN)
            return;
        if (n < 0) {
            char w[96];
            snprintf(w, sizeof(w), "receive: %s", strerror((int)-n));
            conn_fail(c, w);
            return;
        }
        if (n == 0) {
            conn_fail(c, loom_stream_partial(&c->s)
                             ? "connection closed in the middle of a frame"
                             : "connection closed by peer");
            return;
        }
        if (conn_drain(c) < 0)
            return;
    }
}

/* Connector: TCP is up; the listener speaks first (its nonce). */
static void conn_connected(struct conn *c)
{
    int err = 0;
    socklen_t el = sizeof(err);

    if (getsockopt(c->s.fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
        err = errno;
    if (err) {
        char w[96];
        snprintf(w, sizeof(w), "connect to %s: %s", c->peer, strerror(err));
        conn_fail(c, w);
        return;
    }
    c->st = C_HS;
    tn_nodelay(c->s.fd);
    tn_keepalive(c->s.fd);
    conn_update_interest(c);
}

static void conn_read_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                         void *arg)
{
    struct conn *c = arg;

    if (c->st == C_CONNECTING) {
        conn_connected(c);
        return;
    }
    if (revents & (LOOP_READ | LOOP_ERROR)) {
        conn_readable(c);
        if (c->st == C_DEAD)
            return;
    }
    if (revents & (LOOP_WRITE | LOOP_ERROR)) {
        int rc = conn_flush(c);
        if (rc < 0) {
            char why[96];
            snprintf(why, sizeof(why), "send: %s", strerror(-rc));
            conn_fail(c, why);
        }
    }
}

/* ---- accepting ------------------------------------------------------------- */

static void hs_timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct conn *c = arg;
    c->hs_timer = NULL;
    conn_fail(c, c->slot ? "no handshake from the parent before the timeout"
                         : "no credential before the timeout");
}

static struct conn *conn_new(struct treenet *tn, int fd)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->tn = tn;
    loom_stream_init(&c->s, fd, TN_CRED_MAX, TN_QUEUE_MAX, 0);
    c->next = tn->conns;
    tn->conns = c;
    return c;
}

static void listen_resume_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct treenet *tn = arg;
    tn->listen_pause = NULL;
    if (tn->lw)
        loop_watch_set(tn->lw, LOOP_READ);
}

/* The full table of pending strangers: drop the one that waited longest. */
static void evict_oldest(struct treenet *tn)
{
    struct conn *old = NULL;

    for (struct conn *c = tn->conns; c; c = c->next)
        if (c->st == C_HS && !c->slot && (!old || c->t_accept < old->t_accept))
            old = c;
    if (old)
        conn_fail(old, "evicted: too many unauthenticated connections");
}

/* accept() failed for lack of descriptors: take the connection with the
 * spare fd and close it, so the backlog does not wake the loop forever. */
static void accept_shed(struct treenet *tn, int lfd)
{
    int fd;

    if (tn->spare_fd >= 0) {
        close(tn->spare_fd);
        tn->spare_fd = -1;
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0)
            close(fd);
        tn->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    tn_refused(tn, "?", "out of file descriptors (connection shed)");
    if (tn->spare_fd < 0 && !tn->listen_pause) {
        /* no spare: pause instead of spinning */
        tn->listen_pause = loop_timer_add(tn->lp, LISTEN_PAUSE_MS, listen_resume_cb, tn);
        if (tn->listen_pause)
            loop_watch_set(tn->lw, 0);
    }
}

static void listen_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                      void *arg)
{
    struct treenet *tn = arg;

    for (int i = 0; i < 64 && tn->lw; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        char peer[TREENET_ADDR_MAX], nf[TN_NONCE_HEX + 8];
        struct conn *c;
        int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                accept_shed(tn, fd);
            return;
        }
        tn_addr_format((struct sockaddr *)&ss, 1, peer, sizeof(peer));
        if (tn->npending >= MAX_PENDING)
            evict_oldest(tn);
        c = conn_new(tn, cfd);
        if (!c) {
            close(cfd);
            continue;
        }
        snprintf(c->peer, sizeof(c->peer), "%s", peer);
        c->st = C_HS;
        c->t_accept = loop_now_ms();
        tn->npending++;
        tn_nodelay(cfd);
        c->w = loop_watch_add(lp, cfd, LOOP_READ, conn_read_cb, c);
        c->hs_timer = loop_timer_add(lp, tn->hs_ms, hs_timeout_cb, c);
        if (!c->w || !c->hs_timer || tn_nonce_new(c->nonce) < 0 ||
            conn_set_hs(c, nf, tn_nonce_frame(c->nonce, nf)) < 0) {
            conn_fail(c, "out of memory");
            continue;
        }
        if (conn_flush(c) < 0) {
            conn_fail(c, "send of the nonce failed");
            continue;
        }
        tn_log(tn, LOOM_LOG_TRACE, "treenet: connection from %s", peer);
    }
}

/* Every child is in (or lost for good): stop listening; strangers still
 * waiting for their handshake go too. */
static void listener_close(struct treenet *tn)
{
    if (tn->lw)
        loop_watch_remove(tn->lp, tn->lw);
    tn->lw = NULL;
    if (tn->lfd >= 0)
        close(tn->lfd);
    tn->lfd = -1;
    if (tn->listen_pause)
        loop_timer_cancel(tn->lp, tn->listen_pause);
    tn->listen_pause = NULL;
    for (struct conn *c = tn->conns; c; c = c->next)
        if (c->st == C_HS && !c->slot)
            conn_close(c);
    tn_log(tn, LOOM_LOG_DEBUG, "treenet: every child is in: listener closed");
}

/* ---- connecting to the parent ------------------------------------------------ */

static void parent_deadline_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct treenet *tn = arg;
    char why[TN_WHY_MAX + 64];

    tn->parent_deadline = NULL;
    if (tn->parent.st != SLOT_WAIT)
        return;
    snprintf(why, sizeof(why), "no authenticated link to the parent within %d ms%s%s",
             tn->cfg.connect_timeout_ms, tn->parent.why_last[0] ? " (last: " : "",
             tn->parent.why_last[0] ? tn->parent.why_last : "");
    if (tn->parent.why_last[0])
        strcat(why, ")");
    slot_lost(&tn->parent, tn, why);
}

static void parent_retry_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct treenet *tn = arg;
    struct slot *s = &tn->parent;
    struct sockaddr_storage sa;
    socklen_t sl;
    struct conn *c;
    int fd;

    s->retry = NULL;
    if (s->st != SLOT_WAIT)
        return;
    if (loom_addr_parse(tn->addrs[s->node], &sa, &sl) < 0) {
        slot_lost(s, tn, "bad parent address in the rendezvous table");
        return;
    }
    fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(s->why_last, sizeof(s->why_last), "socket: %s", strerror(errno));
        parent_connect(tn);
        return;
    }
    c = conn_new(tn, fd);
    if (!c) {
        close(fd);
        parent_connect(tn);
        return;
    }
    snprintf(c->peer, sizeof(c->peer), "%s", tn->addrs[s->node]);
    c->slot = s;
    s->conn = c;
    c->st = C_CONNECTING;
    if (connect(fd, (struct sockaddr *)&sa, sl) < 0 && errno != EINPROGRESS) {
        char w[96];
        snprintf(w, sizeof(w), "connect to %s: %s", c->peer, strerror(errno));
        conn_fail(c, w);
        return;
    }
    c->w = loop_watch_add(tn->lp, fd, LOOP_WRITE, conn_read_cb, c);
    /* a listener that accepts and then says nothing (a stranger squatting on
     * the port, or a parent shedding load) costs one attempt, not the job */
    c->hs_timer = loop_timer_add(tn->lp, tn->hs_ms, hs_timeout_cb, c);
    if (!c->w || !c->hs_timer)
        conn_fail(c, "out of memory");
}

/* Schedule the next connect attempt with backoff (the deadline timer ends it). */
static void parent_connect(struct treenet *tn)
{
    struct slot *s = &tn->parent;
    int delay = s->backoff_ms;

    if (s->st != SLOT_WAIT || s->retry)
        return;
    s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (s->backoff_ms > BACKOFF_MAX_MS)
        s->backoff_ms = BACKOFF_MAX_MS;
    s->retry = loop_timer_add(tn->lp, delay, parent_retry_cb, tn);
    if (!s->retry)
        slot_lost(s, tn, "out of memory");
}

static void kids_timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct treenet *tn = arg;
    char why[96];

    tn->kids_timer = NULL;
    snprintf(why, sizeof(why), "child never connected within %d ms",
             tn->cfg.connect_timeout_ms);
    for (int i = 0; i < tn->nkids; i++)
        if (tn->kids[i].st == SLOT_WAIT)
            slot_lost(&tn->kids[i], tn, why);
    listener_close(tn);
}

/* ---- life cycle ------------------------------------------------------------ */

struct treenet *treenet_create(struct loop *lp, const struct treenet_config *cfg,
                               const struct treenet_ops *ops, void *arg)
{
    struct treenet *tn;
    int kids[64], rc;

    if (!lp || !cfg || !ops || cfg->nnodes < 1 || cfg->nodeid < 0 ||
        cfg->nodeid >= cfg->nnodes || cfg->width < 1 || cfg->width > 64 ||
        tn_jobkey_ok(cfg->jobkey) < 0 || cfg->connect_timeout_ms <= 0 ||
        (cfg->port_lo == 0) != (cfg->port_hi == 0) || cfg->port_hi < cfg->port_lo) {
        errno = EINVAL;
        return NULL;
    }
    if ((rc = tn_auth_supported(cfg->auth)) < 0) {
        errno = -rc;
        return NULL;
    }
    if (cfg->auth == TREENET_AUTH_COOKIE && tn_cookie_ok(cfg->cookie) < 0) {
        errno = EINVAL;
        return NULL;
    }
    tn = calloc(1, sizeof(*tn));
    if (!tn)
        return NULL;
    tn->lp = lp;
    tn->cfg = *cfg;
    snprintf(tn->jobkey, sizeof(tn->jobkey), "%s", cfg->jobkey);
    tn->cfg.jobkey = tn->jobkey;
    if (cfg->auth == TREENET_AUTH_COOKIE)
        snprintf(tn->cookie, sizeof(tn->cookie), "%s", cfg->cookie);
    tn->cfg.cookie = NULL; /* only tn->cookie holds it */
    if (cfg->bind_addr) {
        snprintf(tn->bind_addr, sizeof(tn->bind_addr), "%s", cfg->bind_addr);
        tn->cfg.bind_addr = tn->bind_addr;
    }
    tn->ops = *ops;
    tn->arg = arg;
    tn->lfd = -1;
    tn->spare_fd = -1;
    tn->hs_ms =
        cfg->handshake_timeout_ms > 0 ? cfg->handshake_timeout_ms : TN_HS_DEFAULT_MS;
    if (tn->hs_ms > cfg->connect_timeout_ms)
        tn->hs_ms = cfg->connect_timeout_ms;
    snprintf(tn->me, sizeof(tn->me), "%d", cfg->nodeid);
    tn->parent.node = ktree_parent(cfg->width, cfg->nnodes, cfg->nodeid);
    tn->parent.is_parent = true;
    loom_stream_init(&tn->parent.q, -1, TN_MSG_MAX, TN_QUEUE_MAX, 0);
    tn->nkids = ktree_children(cfg->width, cfg->nnodes, cfg->nodeid, kids);
    if (tn->nkids > 0) {
        tn->kids = calloc(tn->nkids, sizeof(*tn->kids));
        if (!tn->kids)
            goto fail;
        for (int i = 0; i < tn->nkids; i++) {
            tn->kids[i].node = kids[i];
            loom_stream_init(&tn->kids[i].q, -1, TN_MSG_MAX, TN_QUEUE_MAX, 0);
        }
    }
    if (tn->nkids == 0) /* a leaf: nobody may connect to it, so it does not listen */
        return tn;
    tn->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* listener: any port, or one in cfg's port range */
    rc = loom_listen(cfg->bind_addr, cfg->port_lo, cfg->port_hi, 128, &tn->port);
    if (rc < 0) {
        errno = -rc;
        goto fail;
    }
    tn->lfd = rc;
    tn->lw = loop_watch_add(lp, tn->lfd, LOOP_READ, listen_cb, tn);
    if (!tn->lw)
        goto fail;
    return tn;
fail:
    rc = errno ? errno : ENOMEM;
    if (tn->lfd >= 0)
        close(tn->lfd);
    if (tn->spare_fd >= 0)
        close(tn->spare_fd);
    free(tn->kids);
    free(tn);
    errno = rc;
    return NULL;
}

int treenet_port(const struct treenet *tn)
{
    return tn ? tn->port : -EINVAL;
}

int treenet_start(struct treenet *tn, char *const *addrs)
{
    int n;

    if (!tn || tn->started)
        return -EINVAL;
    if (tn->parent.node >= 0) {
        struct sockaddr_storage sa;
        socklen_t sl;
        if (!addrs || !addrs[tn->parent.node] ||
            loom_addr_parse(addrs[tn->parent.node], &sa, &sl) < 0)
            return -EINVAL;
    }
    n = tn->cfg.nnodes;
    if (addrs) {
        tn->addrs = calloc(n, sizeof(char *));
        if (!tn->addrs)
            return -ENOMEM;
        for (int i = 0; i < n; i++) {
            tn->addrs[i] = strdup(addrs[i] ? addrs[i] : "");
            if (!tn->addrs[i])
                return -ENOMEM; /* freed by treenet_destroy */
        }
    }
    if (tn->nkids > 0) {
        bool waiting = false;
        for (int i = 0; i < tn->nkids; i++)
            waiting |= tn->kids[i].st == SLOT_WAIT;
        if (waiting) {
            tn->kids_timer =
                loop_timer_add(tn->lp, tn->cfg.connect_timeout_ms, kids_timeout_cb, tn);
            if (!tn->kids_timer)
                return -ENOMEM;
        }
    }
    if (tn->parent.node >= 0) {
        tn->parent_deadline =
            loop_timer_add(tn->lp, tn->cfg.connect_timeout_ms, parent_deadline_cb, tn);
        if (!tn->parent_deadline)
            return -ENOMEM;
        parent_connect(tn);
    }
    tn->started = true;
    return 0;
}

void treenet_destroy(struct treenet *tn)
{
    if (!tn)
        return;
    for (struct conn *c = tn->conns; c; c = c->next) {
        if (c->st != C_DEAD) {
            if (c->w)
                loop_watch_remove(tn->lp, c->w);
            if (c->hs_timer)
                loop_timer_cancel(tn->lp, c->hs_timer);
            if (c->s.fd >= 0)
                close(c->s.fd);
            c->s.fd = -1;
            c->st = C_DEAD;
            c->w = NULL;
            c->hs_timer = NULL;
        }
    }
    if (tn->reaper)
        loop_timer_cancel(tn->lp, tn->reaper);
    tn->reaper = NULL;
    reap_cb(tn->lp, NULL, tn);
    if (tn->listen_pause)
        loop_timer_cancel(tn->lp, tn->listen_pause);
    if (tn->kids_timer)
        loop_timer_cancel(tn->lp, tn->kids_timer);
    if (tn->parent_deadline)
        loop_timer_cancel(tn->lp, tn->parent_deadline);
    if (tn->parent.retry)
        loop_timer_cancel(tn->lp, tn->parent.retry);
    queue_free(&tn->parent);
    for (int i = 0; i < tn->nkids; i++)
        queue_free(&tn->kids[i]);
    if (tn->lw)
        loop_watch_remove(tn->lp, tn->lw);
    if (tn->lfd >= 0)
        close(tn->lfd);
    if (tn->spare_fd >= 0)
        close(tn->spare_fd);
    if (tn->addrs) {
        for (int i = 0; i < tn->cfg.nnodes; i++)
            free(tn->addrs[i]);
        free(tn->addrs);
    }
    free(tn->kids);
    memset(tn->cookie, 0, sizeof(tn->cookie));
    free(tn);
}
