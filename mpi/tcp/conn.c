/*
 * conn.c - the TCP netmod's connection state machine (states: tcp.h, enum tcp_state).
 *
 * Owns: every change of a connection's state (tcp_conn_to, which keeps the handshake
 *   count and the list of connections that are up in step with it); the handshake of
 *   both sides for both hello kinds - the job's ranks (proofs keyed with the job
 *   secret) and processes of other jobs (the cross-job hello of core/dynwire.h,
 *   proofs keyed with a port's secret) - through one proof function and one
 *   challenge; the accept slots (pending handshakes, their deadline, pausing the
 *   listener, refusals and their log); which of two simultaneous connections wins;
 *   socket options of a new connection; losing a peer (xm_peer_lost); closing one for
 *   good when core/p2p.c drops another job's process (the drop op); a connection's
 *   memory.  The protocol itself is described in tcp.c's header.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../core/xm.h"
#include "tcp.h"

#define T xm_tcp

/* ---- proofs ---------------------------------------------------------------------
 * Job: HMAC-SHA256(job secret, label || first nonce || second nonce || connector rank
 * || acceptor rank), ranks as 4 bytes little-endian.  Cross-job: HMAC-SHA256(port
 * secret, label || n1 || n2 || connector's rank || acceptor's rank || connector's job
 * id[64] || acceptor's job id[64]).  The acceptor proves with its label over
 * (connector's nonce, its own), the connector with the other label over (acceptor's
 * nonce, its own): neither proof fits another connection (fresh nonces), the other
 * direction (label) or other ranks. */
static const char HS_LABEL_ACC[16] = "loom-mpi-tcp-acc";
static const char HS_LABEL_CON[16] = "loom-mpi-tcp-con";
static const char HS_LABEL_XACC[16] = "loom-mpi-tcp-xac";
static const char HS_LABEL_XCON[16] = "loom-mpi-tcp-xco";

static void put32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The two ends of a handshake, as its proofs name them. */
struct hs_ends {
    const uint8_t *xkey;     /* a port's secret (cross-job); NULL: the job's secret */
    const char *cjob, *ajob; /* cross-job: the connector's and the acceptor's job ids */
    int crank, arank;        /* ranks (in their own jobs) */
};

enum { BY_ACC, BY_CON };

/* The proof `by` the acceptor or the connector makes, from both nonces. */
static void hs_proof(const struct hs_ends *e, int by, const uint8_t nc[NONCE_LEN],
                     const uint8_t na[NONCE_LEN], uint8_t out[LOOM_MAC_LEN])
{
    const uint8_t *n1 = by == BY_ACC ? nc : na, *n2 = by == BY_ACC ? na : nc;
    if (e->xkey) {
        uint8_t m[16 + 2 * NONCE_LEN + 8 + 2 * XM_DYN_JOBID];
        memset(m, 0, sizeof(m));
        memcpy(m, by == BY_ACC ? HS_LABEL_XACC : HS_LABEL_XCON, 16);
        memcpy(m + 16, n1, NONCE_LEN);
        memcpy(m + 16 + NONCE_LEN, n2, NONCE_LEN);
        put32le(m + 16 + 2 * NONCE_LEN, (uint32_t)e->crank);
        put32le(m + 20 + 2 * NONCE_LEN, (uint32_t)e->arank);
        memcpy(m + 24 + 2 * NONCE_LEN, e->cjob, strnlen(e->cjob, XM_DYN_JOBID - 1));
        memcpy(m + 24 + 2 * NONCE_LEN + XM_DYN_JOBID, e->ajob,
               strnlen(e->ajob, XM_DYN_JOBID - 1));
        loom_hmac_sha256(e->xkey, XM_DYN_SECRET, m, sizeof(m), out);
    } else {
        uint8_t m[16 + 2 * NONCE_LEN + 8];
        memcpy(m, by == BY_ACC ? HS_LABEL_ACC : HS_LABEL_CON, 16);
        memcpy(m + 16, n1, NONCE_LEN);
        memcpy(m + 16 + NONCE_LEN, n2, NONCE_LEN);
        put32le(m + 16 + 2 * NONCE_LEN, (uint32_t)e->crank);
        put32le(m + 20 + 2 * NONCE_LEN, (uint32_t)e->arank);
        loom_hmac_sha256(T.key, sizeof(T.key), m, sizeof(m), out);
    }
}

/* the ends of my connection c (I connect) */
static struct hs_ends conn_ends(const struct conn *c)
{
    const struct xm_proc *xp = c->peer >= xm_g.size ? xm_proc_get(c->peer) : NULL;
    if (xp)
        return (struct hs_ends){xp->secret, xm_g.jobid, xp->jobid, xm_g.rank, xp->rank};
    return (struct hs_ends){NULL, NULL, NULL, xm_g.rank, c->peer};
}

/* the ends of an accepted socket once its hello was read (I accept) */
static struct hs_ends pend_ends(const struct pend *p)
{
    if (p->x)
        return (struct hs_ends){p->xkey, p->xh.from.jobid, xm_g.jobid, p->xh.rank,
                                xm_g.rank};
    return (struct hs_ends){NULL, NULL, NULL, p->rank, xm_g.rank};
}

/* ---- socket options ------------------------------------------------------ */

/* fd, connected or connecting to peer (NULL: ask the socket), stays on this host:
 * the peer is a loopback address or our own source address. */
static int host_local(int fd, const struct sockaddr_in *peer)
{
    struct sockaddr_in me, p;
    socklen_t ml = sizeof(me), pl = sizeof(p);

    if (!peer) {
        if (getpeername(fd, (struct sockaddr *)&p, &pl) < 0 || p.sin_family != AF_INET)
            return 0;
        peer = &p;
    }
    if ((ntohl(peer->sin_addr.s_addr) >> 24) == 127)
        return 1;
    return getsockname(fd, (struct sockaddr *)&me, &ml) == 0 &&
           me.sin_family == AF_INET && me.sin_addr.s_addr == peer->sin_addr.s_addr;
}

/* Socket send buffer: the kernel doubles it, so 256 KiB may be in flight per
 * connection (about 20 Gb/s at a 100 us round trip).  With autotuning the kernel grows
 * it to megabytes and a 1 MiB message is copied into socket buffers long before the
 * receiver reads it, out of cache by then: over loopback 1 MiB took 150-200 us and
 * streamed at 4.3-4.8 GB/s, with this bound 106 us and 7.4 GB/s.  Across network
 * namespaces (veth, MTU 1500) it is still the best of 64 KiB-1 MiB (11-25: 1 MiB
 * ping-pong 216 us, 380-460 us with 512 KiB). */
#define SNDBUF_DEFAULT 131072
/* Between two processes of this host (the loopback device, MTU 64 KiB) a bigger one
 * lets the sender's copy run ahead of the receiver's.  11-25, interleaved: 1 MiB
 * ping-pong 116 us against 175-190 us with SNDBUF_DEFAULT, 1 MiB stream 6.3 GB/s
 * against 4.9; 1 MiB (doubled to 2) was worse again (152-158 us). */
#define SNDBUF_LOOPBACK 524288

/* A link that goes silent (a node that lost power or its network) sends no reset: by
 * itself TCP retransmits unacknowledged data for about 15 minutes and never notices
 * anything while it has nothing to send, so a rank waiting for a message from such a
 * peer would wait for ever.  Keepalive probes an idle connection, and the user timeout
 * ends a connection whose data or probes stay unacknowledged that long; the socket
 * then reports ETIMEDOUT and the peer is lost as if it had died.  A live peer busy
 * outside MPI still answers: its kernel acknowledges. */
#define TCP_TIMEOUT_DEFAULT 60 /* seconds; LOOM_MPI_TCP_TIMEOUT, 0 = the kernel's */

/* After connect() or accept() of the connection to rank r: no Nagle, the send buffer
 * for the path, and the dead-link timeout. */
static void set_sockopts(int fd, const struct sockaddr_in *peer, int r)
{
    int one = 1, local = host_local(fd, peer);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int b = xm_env_int("LOOM_MPI_TCP_SNDBUF", local ? SNDBUF_LOOPBACK : SNDBUF_DEFAULT);
    if (b > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof(b));
    if (getenv("LOOM_MPI_DEBUG"))
        fprintf(stderr, "loom-mpi: rank %d: TCP to rank %d (%s): send buffer %d\n",
                xm_g.rank, r, local ? "this host" : "another host", b);
    b = xm_env_int("LOOM_MPI_TCP_RCVBUF", 0);
    if (b > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof(b));
    int tmo = xm_env_int("LOOM_MPI_TCP_TIMEOUT", TCP_TIMEOUT_DEFAULT);
    if (tmo > 0 && tmo <= 86400) {
        unsigned ms = (unsigned)tmo * 1000u;
        int idle = tmo / 3 > 0 ? tmo / 3 : 1;
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
    }
}

/* ---- states -------------------------------------------------------------- */

static int in_handshake(enum tcp_state s)
{
    return s == C_CONNECTING || s == C_HELLO_SENT || s == C_PROOF_SENT;
}

static void up_del(struct conn *c)
{
    for (int i = 0; i < T.nup; i++)
        if (T.up[i] == c) {
            T.up[i] = T.up[--T.nup];
            return;
        }
}

/* Every state change of a connection, and what follows the state: T.nhand counts
 * the handshakes open (a poll asks epoll while there are any), T.up holds the
 * connections that are up (the fast poll reads them). */
void tcp_conn_to(struct conn *c, enum tcp_state s)
{
    if (c->state == s)
        return;
    T.nhand += in_handshake(s) - in_handshake(c->state);
    if (c->state == C_UP)
        up_del(c);
    else if (s == C_UP)
        T.up[T.nup++] = c;
    c->state = s;
}

/* c's socket out of the epoll set and closed (the state is the caller's) */
static void conn_close_fd(struct conn *c)
{
    if (c->fd >= 0)
        tcp_ep_del_close(c->fd);
    c->fd = -1;
    c->ev = 0;
}

/* ---- failure ------------------------------------------------------------- */

/* Close c for good: state C_DEAD (never connected again), queue discarded.  0 if it
 * was dead already. */
static int shut(struct conn *c)
{
    if (c->state == C_DEAD)
        return 0;
    tcp_conn_to(c, C_DEAD);
    conn_close_fd(c);
    /* referenced payloads will never leave: their requests fail in xm_peer_lost() */
    while (c->sq) {
        struct tq *q = c->sq;
        c->sq = q->next;
        tcp_tq_put(q);
    }
    c->sq_tail = &c->sq;
    free(c->dtmp);
    c->dtmp = NULL;
    c->dleft = c->dkeep = 0;
    return 1;
}

/* The connection to c->peer is gone: fail what depends on it. */
void tcp_lose(struct conn *c, const char *why)
{
    if (shut(c))
        xm_peer_lost(c->peer, why);
}

/* core/p2p.c drops a process of another job (xm_p2p_drop): closed, and a connection
 * it makes again finds C_DEAD and is refused (proven()'s "already up (or gone)"). */
void tcp_drop(struct xm_transport *t, int dest)
{
    (void)t;
    if (!T.peer || dest < xm_g.size || dest >= xm_proc_count())
        return;
    struct conn *c = T.peer[dest] ? T.peer[dest] : tcp_conn_new(dest);
    shut(c);
}

void tcp_lose_errno(struct conn *c, int e)
{
    char why[96];
    snprintf(why, sizeof(why), "%s", e ? strerror(e) : "end of stream");
    tcp_lose(c, why);
}

/* ---- a connection's life ------------------------------------------------- */

struct conn *tcp_conn_new(int peer)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (!c)
        xm_die("out of memory for a TCP connection");
    c->kind = K_CONN;
    c->fd = -1;
    c->state = C_NONE;
    c->peer = peer;
    c->sq_tail = &c->sq;
    c->xrank = peer;
    if (peer >= xm_g.size) {
        const struct xm_proc *p = xm_proc_get(peer);
        c->xrank = p ? p->rank : -1;
    }
    T.peer[peer] = c;
    return c;
}

/* A connection gone for good: its socket (out of the epoll set), its queued packets
 * and its buffers. */
void tcp_conn_free(struct conn *c)
{
    if (c->fd >= 0)
        tcp_ep_del_close(c->fd);
    while (c->sq) {
        struct tq *q = c->sq;
        c->sq = q->next;
        free(q);
    }
    free(c->rb);
    free(c->dtmp);
    free(c);
}

void tcp_became_up(struct conn *c)
{
    if (!c->rb) {
        c->rb = malloc(RBUF_INIT);
        if (!c->rb)
            xm_die("out of memory for a TCP receive buffer");
        c->rcap = RBUF_INIT;
    }
    tcp_conn_to(c, C_UP);
    c->rgot = 0;
    tcp_ep_set(c, EPOLLIN | (c->sq ? EPOLLOUT : 0));
    if (c->sq) {
        tcp_flush_or_fail(c);
        tcp_wl_add(c);
    }
}

/* ---- connector side ------------------------------------------------------ */

static void start_connect(struct conn *c)
{
    struct sockaddr_in sa;
    int rc = tcp_peer_addr(c->peer, &sa);
    if (rc < 0) {
        tcp_lose(c, rc == -EADDRNOTAVAIL
                        ? "its business card has no address reachable from "
                          "another node (only loopback: see LOOM_MPI_TCP_IF)"
                    : rc == -EXDEV ? "a process of another job without an address or "
                                     "secret"
                                   : "no business card in the KVS");
        return;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tcp_lose_errno(c, errno);
        return;
    }
    c->fd = fd;
    c->ev = 0;
    tcp_conn_to(c, C_CONNECTING);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
        tcp_lose_errno(c, errno);
        return;
    }
    set_sockopts(fd, &sa, c->peer); /* the source address is chosen by now */
    tcp_ep_set(c, EPOLLOUT);
}

/* dest's connection; the first packet to it starts connecting */
struct conn *tcp_conn_open(int dest)
{
    struct conn *c = T.peer[dest];
    if (!c)
        c = tcp_conn_new(dest);
    if (c->state == C_NONE)
        start_connect(c);
    return c;
}

/* A handshake of mine broke before the acceptor's answer (its deadline passed while
 * we were busy, its process is going): connect again, a few times, before the peer
 * counts as lost.  Nothing was delivered on it yet. */
static void hs_broken(struct conn *c, int e)
{
    if (c->tries++ >= HS_RETRIES || c->state == C_CONNECTING) {
        tcp_lose_errno(c, e);
        return;
    }
    if (getenv("LOOM_MPI_DEBUG"))
        fprintf(stderr,
                "loom-mpi: rank %d: TCP handshake with rank %d cut short (%s), "
                "connecting again\n",
                xm_g.rank, c->peer, e ? strerror(e) : "end of stream");
    conn_close_fd(c);
    tcp_conn_to(c, C_NONE);
    start_connect(c);
}

/* My connect finished (writable): send the hello with a fresh nonce. */
static void connected(struct conn *c)
{
    int e = 0;
    socklen_t l = sizeof(e);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
        e = errno;
    if (e) {
        tcp_lose_errno(c, e);
        return;
    }
    struct hs_hello h = {.magic = HS_MAGIC, .rank = xm_g.rank, .to = c->peer};
    if (loom_random_bytes(c->nonce, sizeof(c->nonce)) < 0) {
        tcp_lose_errno(c, errno);
        return;
    }
    memcpy(h.nonce, c->nonce, sizeof(h.nonce));
    unsigned char xb[XM_DYN_XHELLO_WIRE];
    const void *hb = &h;
    size_t hl = sizeof(h);
    if (c->peer >= xm_g.size) { /* another job's process: the cross-job hello */
        const struct xm_proc *p = xm_proc_get(c->peer);
        struct xm_dyn_xhello x;
        memset(&x, 0, sizeof(x));
        x.rank = xm_g.rank;
        x.to = p->rank;
        x.port_tag = p->port_tag;
        memcpy(x.nonce, c->nonce, NONCE_LEN);
        memcpy(x.tojob, p->jobid, sizeof(x.tojob));
        snprintf(x.from.jobid, sizeof(x.from.jobid), "%s", xm_g.jobid);
        x.from.rank = xm_g.rank;
        xm_tcp_card(&x.from.addrs);
        if (xm_dyn_xhello_encode(&x, xb) < 0) {
            tcp_lose(c, "no hello for it (job id or card this process cannot carry)");
            return;
        }
        hb = xb;
        hl = sizeof(xb);
    }
    tcp_conn_to(c, C_HELLO_SENT); /* connected: a failure from here on may be retried */
    c->rgot = 0;
    if (send(c->fd, hb, hl, MSG_NOSIGNAL) != (ssize_t)hl) {
        hs_broken(c, errno);
        return;
    }
    tcp_ep_set(c, EPOLLIN);
}

/* Read the acceptor's challenge (C_HELLO_SENT) or its answer (C_PROOF_SENT). */
static void read_reply(struct conn *c)
{
    size_t want = c->state == C_HELLO_SENT ? sizeof(struct hs_chal) : 4;
    ssize_t k = recv(c->fd, c->hs + c->rgot, want - (size_t)c->rgot, 0);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (k <= 0) {
        hs_broken(c, k < 0 ? errno : 0);
        return;
    }
    c->rgot += (int)k;
    if (c->rgot < (int)want)
        return;
    c->rgot = 0;
    if (c->state == C_HELLO_SENT) {
        struct hs_chal ch;
        uint8_t mac[LOOM_MAC_LEN];
        memcpy(&ch, c->hs, sizeof(ch));
        struct hs_ends e = conn_ends(c);
        hs_proof(&e, BY_ACC, c->nonce, ch.nonce, mac);
        if (ch.magic != (e.xkey ? XM_DYN_XHELLO_MAGIC : HS_MAGIC) ||
            ch.rank != c->xrank || !loom_ct_equal(mac, ch.mac, sizeof(mac))) {
            /* whoever answers at the address of its card is not that rank: send it
             * nothing, no packet of ours ever goes to an impostor */
            tcp_lose(c, "the process at its address failed to prove it knows the job's "
                        "secret (TCP handshake)");
            return;
        }
        hs_proof(&e, BY_CON, c->nonce, ch.nonce, mac);
        if (send(c->fd, mac, sizeof(mac), MSG_NOSIGNAL) != (ssize_t)sizeof(mac)) {
            hs_broken(c, errno);
            return;
        }
        tcp_conn_to(c, C_PROOF_SENT);
        return;
    }
    uint32_t v;
    memcpy(&v, c->hs, 4);
    if (v == REPLY_ACK) {
        tcp_became_up(c);
    } else if (v == REPLY_NAK) {
        /* the peer's own connection to me wins (it is the lower rank) */
        conn_close_fd(c);
        tcp_conn_to(c, C_WAIT_PEER);
    } else {
        tcp_lose(c, "bad handshake reply");
    }
}

/* epoll reported c ready: the step of its state.  Returns the reads' progress. */
int tcp_conn_event(struct conn *c, uint32_t events)
{
    switch (c->state) {
    case C_CONNECTING:
        connected(c);
        return 0;
    case C_HELLO_SENT:
    case C_PROOF_SENT:
        read_reply(c);
        return 0;
    case C_UP:
        return events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? tcp_read(c) : 0;
    default:
        return 0;
    }
}

/* ---- acceptor side ----------------------------------------------------------------
 * Anyone may connect to the listener.  An accepted socket holds one of pend_max slots
 * for at most hs_timeout seconds; with every slot taken the listener stops accepting
 * (further connections wait in the kernel's backlog) until one frees, so idle
 * strangers can delay but never shut out a rank of the job.  A connection is refused
 * (closed, nothing sent) on a bad hello or proof, and refusals are logged: the first,
 * then one count a minute. */

static void listen_pause(int on)
{
    if (on == T.lpaused || T.lfd < 0)
        return;
    T.lpaused = on;
    if (on) {
        epoll_ctl(T.ep, EPOLL_CTL_DEL, T.lfd, NULL);
    } else {
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &T.kind_listen};
        epoll_ctl(T.ep, EPOLL_CTL_ADD, T.lfd, &e);
    }
}

void tcp_pend_free(struct pend *p)
{
    if (p->fd >= 0)
        tcp_ep_del_close(p->fd);
    T.pend[p->slot] = T.pend[--T.npend];
    T.pend[p->slot]->slot = p->slot;
    T.nhand--;
    free(p);
    if (T.lpaused && T.npend < T.pend_max)
        listen_pause(0);
}

static void refuse(struct pend *p, const char *why)
{
    double now = tcp_now();
    T.refused++;
    if (T.refused == 1 || now - T.refuse_t >= REFUSE_LOG_S) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &p->from.sin_addr, ip, sizeof(ip));
        if (T.refused_quiet)
            fprintf(stderr, "loom-mpi: rank %d: refused %lu more TCP connections\n",
                    xm_g.rank, T.refused_quiet);
        fprintf(stderr,
                "loom-mpi: rank %d: refused a TCP connection from %s:%u: %s (further "
                "refusals: one line a minute)\n",
                xm_g.rank, ip, (unsigned)ntohs(p->from.sin_port), why);
        T.refuse_t = now;
        T.refused_quiet = 0;
    } else {
        T.refused_quiet++;
    }
    tcp_pend_free(p);
}

/* Handshakes past their deadline are refused; a paused listener tries again. */
void tcp_pend_sweep(void)
{
    double now = tcp_now();
    for (int i = T.npend - 1; i >= 0; i--)
        if (i < T.npend && now > T.pend[i]->deadline)
            refuse(T.pend[i], "no handshake within LOOM_MPI_TCP_HANDSHAKE_TIMEOUT");
    if (T.lpaused && T.npend < T.pend_max)
        listen_pause(0);
}

void tcp_accept(void)
{
    while (T.npend < T.pend_max) {
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        int fd =
            accept4(T.lfd, (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                listen_pause(1); /* tcp_pend_sweep() tries again */
            return;
        }
        struct pend *p = calloc(1, sizeof(*p));
        if (!p || loom_random_bytes(p->nonce_a, sizeof(p->nonce_a)) < 0) {
            free(p);
            close(fd);
            continue;
        }
        p->kind = K_PEND;
        p->fd = fd;
        p->state = P_HELLO;
        p->from = from;
        p->deadline = tcp_now() + T.hs_timeout;
        p->slot = T.npend;
        T.pend[T.npend++] = p;
        T.nhand++;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = p};
        epoll_ctl(T.ep, EPOLL_CTL_ADD, fd, &e);
    }
    listen_pause(1); /* every slot taken */
}

/* The hello was read and names who connects (p->rank, p->nonce_c, for a cross-job
 * one p->x and p->xkey): the challenge, the same for both kinds but its magic - my
 * nonce and my proof.  0, or -1 when p was freed. */
static int send_challenge(struct pend *p)
{
    struct hs_chal ch = {.magic = p->x ? XM_DYN_XHELLO_MAGIC : HS_MAGIC,
                         .rank = xm_g.rank};
    memcpy(ch.nonce, p->nonce_a, NONCE_LEN);
    struct hs_ends e = pend_ends(p);
    hs_proof(&e, BY_ACC, p->nonce_c, p->nonce_a, ch.mac);
    if (send(p->fd, &ch, sizeof(ch), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        (ssize_t)sizeof(ch)) {
        tcp_pend_free(p);
        return -1;
    }
    p->state = P_PROOF;
    return 0;
}

/* A job hello in p->buf: NULL, or why it is refused. */
static const char *job_hello(struct pend *p)
{
    struct hs_hello h;
    memcpy(&h, p->buf, sizeof(h));
    if (h.magic != HS_MAGIC || h.zero != 0 || h.to != xm_g.rank || h.rank < 0 ||
        h.rank >= xm_g.size || h.rank == xm_g.rank || !T.have_key)
        return "not a hello of this job's ranks";
    p->rank = h.rank;
    memcpy(p->nonce_c, h.nonce, NONCE_LEN);
    return NULL;
}

/* A cross-job hello in p->buf: NULL, or why it is refused.  The key is the one of
 * the connector's entry when it has one, else that of the open port it names. */
static const char *cross_hello(struct pend *p)
{
    const char *bad = xm_dyn_xhello_check(p->buf, XM_DYN_XHELLO_WIRE, &p->xh);
    if (bad)
        return bad;
    int known = xm_proc_find(p->xh.from.jobid, p->xh.rank);
    const struct xm_proc *kp = known >= 0 ? xm_proc_get(known) : NULL;
    if (strcmp(p->xh.tojob, xm_g.jobid) || p->xh.to != xm_g.rank)
        return "a cross-job hello for another process";
    if (known >= 0 && known < xm_g.size)
        return "a cross-job hello from a process of this job";
    if (kp && kp->has_secret)
        memcpy(p->xkey, kp->secret, XM_DYN_SECRET);
    else if (xm_proc_port_secret(p->xh.port_tag, p->xkey) < 0)
        return "a process of another job naming no open port of this process";
    p->x = 1;
    p->rank = p->xh.rank;
    memcpy(p->nonce_c, p->xh.nonce, NONCE_LEN);
    return NULL;
}

/* The connector's proof checked: which connection to rank r the pair keeps (the
 * one from the lower (job id, rank) when both connect at once), then ACK or NAK. */
static void proven(struct pend *p, int r)
{
    struct conn *c = T.peer[r] ? T.peer[r] : tcp_conn_new(r);
    int take;
    switch (c->state) {
    case C_NONE:
    case C_WAIT_PEER:
        take = 1;
        break;
    case C_CONNECTING:
    case C_HELLO_SENT:
    case C_PROOF_SENT:
        take = xm_proc_cmp(r, xm_g.rank) < 0; /* the lower (job id, rank) wins */
        if (take)
            conn_close_fd(c); /* still in its handshake state: UP below ends it */
        break;
    default:
        take = 0; /* already up (or gone): a second connection of that rank */
    }
    if (!take) {
        if (getenv("LOOM_MPI_DEBUG"))
            fprintf(stderr, "loom-mpi: rank %d: simultaneous connect with rank %d: %s\n",
                    xm_g.rank, r, "mine wins, NAK to theirs");
        uint32_t nak = REPLY_NAK;
        send(p->fd, &nak, sizeof(nak), MSG_NOSIGNAL | MSG_DONTWAIT);
        tcp_pend_free(p);
        return;
    }
    uint32_t ack = REPLY_ACK;
    int fd = p->fd;
    epoll_ctl(T.ep, EPOLL_CTL_DEL, fd, NULL);
    p->fd = -1;
    tcp_pend_free(p);
    set_sockopts(fd, NULL, r);
    if (send(fd, &ack, sizeof(ack), MSG_NOSIGNAL) != (ssize_t)sizeof(ack)) {
        close(fd);
        tcp_conn_to(c, C_NONE);
        tcp_lose(c, "handshake failed");
        return;
    }
    c->fd = fd;
    c->ev = 0;
    tcp_became_up(c);
}

/* Bytes of an accepted socket's handshake: the hello (then our challenge goes out),
 * the proof (then ACK or NAK and the connection). */
void tcp_pend_event(struct pend *p)
{
    size_t want = p->state == P_HELLO    ? sizeof(struct hs_hello)
                  : p->state == P_XHELLO ? XM_DYN_XHELLO_WIRE
                                         : LOOM_MAC_LEN;
    ssize_t k = recv(p->fd, p->buf + p->got, want - p->got, 0);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (k <= 0) { /* a loser of a simultaneous connect that went away: fine */
        tcp_pend_free(p);
        return;
    }
    p->got += (size_t)k;
    if (p->got < want)
        return;
    if (p->state == P_HELLO && xm_g.initialized &&
        ((uint32_t)p->buf[0] | (uint32_t)p->buf[1] << 8 | (uint32_t)p->buf[2] << 16 |
         (uint32_t)p->buf[3] << 24) == XM_DYN_XHELLO_MAGIC) {
        p->state = P_XHELLO; /* a process of another job: the rest of its hello */
        return;
    }
    p->got = 0;
    if (p->state == P_HELLO || p->state == P_XHELLO) {
        const char *bad = p->state == P_XHELLO ? cross_hello(p) : job_hello(p);
        if (bad)
            refuse(p, bad);
        else
            send_challenge(p);
        return;
    }
    uint8_t mac[LOOM_MAC_LEN];
    struct hs_ends e = pend_ends(p);
    hs_proof(&e, BY_CON, p->nonce_c, p->nonce_a, mac);
    if (!loom_ct_equal(mac, p->buf, sizeof(mac))) {
        refuse(p, p->x ? "wrong proof of the port's secret"
                       : "wrong proof of the job's secret");
        return;
    }
    int r = p->rank;
    if (p->x) { /* proven: now it may join the table (grow hooks run here) */
        r = xm_proc_add(&p->xh.from);
        if (r < 0 || xm_proc_set_secret(r, p->xkey, 0) < 0) {
            refuse(p, "the process table is full");
            return;
        }
    }
    proven(p, r);
}
