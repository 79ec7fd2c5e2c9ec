/*
 * tcp.c - the TCP netmod: one stream socket per pair of ranks, behind the same
 *         transport ops as shared memory (core/transport.h).
 *
 * This file owns the ops table, discovery (addresses, business cards, the job
 * secret), the listener socket, the epoll set and progress (poll, block, and the
 * descriptors other parts of libmpi add to the set), start and finalize.  The
 * connection state machine and the handshake are conn.c's, the send queue send.c's,
 * the frame parser recv.c's; tcp.h has what they share (and why frames do not go through
 * common/stream.c).  The contract below is the netmod's as a whole.
 *
 * Contract:
 *   - Business card: every rank listens on an ephemeral port (all addresses) and puts
 *     "ip:port[,ip:port...]" in the KVS under "tcp" before the fence.  Advertised
 *     addresses: the IPv4 addresses of the interfaces that are up, minus loopback (only
 *     loopback when nothing else exists); LOOM_MPI_TCP_IF=<ifname>|<a.b.c.d/len> keeps
 *     only the matching ones.  A peer on my node is reached on 127.0.0.1 (forced TCP),
 *     a remote peer on its first address in a subnet of mine, else its first address.
 *     (The listener stays on every address: a peer on my node comes in on loopback, and
 *     the handshake below, not the address, is what lets a connection in.)
 *   - Job secret: rank 0 draws LOOM_KEY_LEN (32) random bytes (getrandom) and puts them
 *     in hex under "tsec" with its card; after the fence every rank reads them back
 *     (t_connect).  Nothing public (job id, ranks, ports) derives it; whoever can read
 *     the job's KVS (its own ranks, through their PMI server) can.
 *   - Connections open lazily on the first packet to a peer, with a handshake (mutual
 *     challenge-response, common/mac.h HMAC-SHA256 keyed with the secret):
 *       connector -> acceptor  hello {magic, my rank c, your rank a, nonce Nc (16 B)}
 *       acceptor -> connector  {magic, a, nonce Na, H(acc-label, Nc, Na, c, a)}
 *       connector checks that proof (constant time) - a listener that cannot make it is
 *       an impostor and gets nothing, the peer counts as lost - and answers
 *       connector -> acceptor  H(con-label, Na, Nc, c, a)
 *       acceptor checks it (constant time) and answers ACK or NAK (4 bytes).
 *     Nonces are fresh per connection, so a recorded hello or proof is worth nothing on
 *     another connection; labels and ranks keep a proof from fitting the other
 *     direction or other ranks.  Only a connection that passed is a rank: every packet
 *     on it must name that rank as src.  When two ranks connect to each other at once,
 *     the connection opened by the LOWER rank wins (decided only after the proof): the
 *     higher rank's is answered NAK, and a rank whose own attempt is refused waits for
 *     the winner's.  Packets queue on the peer until the connection is up.
 *   - Accepting: an accepted socket holds one of LOOM_MPI_TCP_MAX_PENDING (64) slots
 *     until its handshake ends, at most LOOM_MPI_TCP_HANDSHAKE_TIMEOUT (10) s; with every
 *     slot taken the listener stops accepting (the kernel's backlog holds the rest)
 *     until one frees.  A bad hello, a wrong proof or the deadline closes the socket
 *     with nothing sent; refusals go to stderr, the first one and then one line a
 *     minute, and never disturb the job.  A handshake of mine cut short (the
 *     acceptor's deadline passed while this rank computed outside MPI) is retried, up
 *     to 16 times: each retry needs the listener to accept again, and one whose proof
 *     fails is never retried.
 *   - Checks on receive: every frame header before its payload is read or anything is
 *     allocated for it: kind known (goodbye without payload), src = the connection's
 *     rank, then xm_pkt_check() (core/p2p.h: type, len against paylen and limits,
 *     cookies against our requests).  A violation ends that connection as lost, with
 *     "protocol error: <field>: <what>" (under MPI_ERRORS_ARE_FATAL the job aborts
 *     naming the rank); nothing more is read from it.
 *   - Stream format: frames of {u32 kind, u32 0, u64 paylen} + struct xm_pkt_hdr +
 *     payload.  kind 0 = packet, 1 = goodbye (the peer is finalizing; its EOF that
 *     follows is normal).  Frames of one connection arrive in order: per-pair FIFO.
 *   - Sending: non-blocking sendmsg of as many queued iovecs as the socket takes, the
 *     rest stays queued (EPOLLOUT while anything is queued).  alloc()/post() give a
 *     buffer to pack into (small packets, copy); post_ref() sends a packet whose
 *     payload stays in the caller's memory (no copy) and calls xm_p2p_sent() once the
 *     last byte of it left, when it did not leave at once.
 *   - Receiving: reads into a per-connection buffer and reassembles frames across
 *     partial reads; the payload of a rendezvous data frame (RDATA), or of an eager
 *     message that a posted receive matches, goes straight into the receive buffer
 *     when core/p2p.c says where (xm_rdata_target()); a frame too big for the buffer
 *     and not placed so is read into a temporary of its size.
 *   - A connection that breaks (EOF without goodbye, ECONNRESET, a refused connect)
 *     calls xm_peer_lost(): the job aborts naming both ranks, or the requests of that
 *     peer fail (ERRORS_RETURN) - never a hang on a known connection.
 *   - block(ms): epoll_wait on every socket (listen, handshakes, connections), the
 *     MPI_THREAD_MULTIPLE wake eventfd and what watch() added (shm's wake descriptor,
 *     core/progress.c), so the idle policy sleeps on both transports at once in one
 *     thread.
 *     A waiter that keeps polling one or two connections takes them out of the epoll
 *     set meanwhile and reads them directly (quiet_set: the set costs every packet a
 *     callback in the sender's send()); block() puts them back before it sleeps.
 *   - queued(dest): packets to dest still in our queue (connection being made, socket
 *     full); core/p2p.c's Wait on a send progresses until there are none.
 *   - Processes of other jobs (ids >= world size, core/proc.h): the same handshake with
 *     a cross-job hello (core/dynwire.h: both job ids, both ranks in their jobs, the
 *     port tag, the connector's card) and proofs keyed with the 16-byte secret of the
 *     port through which the two processes met (their table entries hold it), over
 *     both job ids and ranks.  The acceptor takes the key from its entry for the
 *     connector or, when it does not know it yet (the first connection, a connector's
 *     root to the port's owner), from the open port the hello names; it adds the
 *     connector to the table only after its proof.  A hello that names neither is
 *     refused, so a process of another job gets nothing parsed beyond the fixed hello
 *     without proving a secret.  Frames from such a peer carry its rank in its own job
 *     as src; the reader checks that and rewrites src to the peer's id here.  Of two
 *     simultaneous connections, the one from the process lower in (job id, rank) wins.
 *     A job that runs without the netmod (shared memory only) starts it when a port
 *     is opened or another job's port connected (xm_tcp_card): listener and epoll set
 *     only, no job secret, so its world ranks stay on shared memory.
 *   - TCP_NODELAY on every connection.
 *   - Not covered: an attacker on the path between two nodes (one who can read or
 *     change the traffic) - packets are authenticated per connection, not each one,
 *     and not encrypted.  Use a trusted network for MPI traffic.
 * Tunables: LOOM_MPI_TCP_HANDSHAKE_TIMEOUT, LOOM_MPI_TCP_MAX_PENDING, LOOM_MPI_TCP_IF
 *   (above), LOOM_MPI_TCP_SNDBUF (socket send buffer bytes, default 128 KiB, see
 *   SNDBUF_DEFAULT; 0 = the kernel's autotuning, for long fat links), LOOM_MPI_TCP_RCVBUF
 * (receive buffer bytes, default: autotuning), LOOM_MPI_TCP_TIMEOUT (seconds a connection
 * may stay silent while data or keepalive probes go unacknowledged before its peer counts
 * as lost, default 60; 0 = the kernel's defaults, about 15 minutes with data in flight
 * and never without).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/boot.h"
#include "../core/mt.h"
#include "../core/xm.h"
#include "tcp.h"

struct xm_tcp_state xm_tcp;
#define T xm_tcp

/* ---- the epoll set ------------------------------------------------------- */

/* Make c's registration in T.ep what c->want says. */
static void ep_sync(struct conn *c)
{
    if (c->fd < 0 || c->ev == c->want)
        return;
    if (!c->want) {
        epoll_ctl(T.ep, EPOLL_CTL_DEL, c->fd, NULL);
    } else {
        struct epoll_event e = {.events = c->want, .data.ptr = c};
        epoll_ctl(T.ep, c->ev ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &e);
    }
    c->ev = c->want;
}

void tcp_ep_set(struct conn *c, uint32_t ev)
{
    c->want = ev;
    if (!(T.quiet && c->state == C_UP))
        ep_sync(c);
}

/* Quiet: while the fast poll reads the connections itself, keep them out of the epoll
 * set.  A socket in an epoll set costs every packet delivered to it a callback in the
 * sender's send() (ep_poll_callback: the set's lock, its ready list, a wake-up check):
 * 0.3 us of a 5.7 us loopback half round trip, measured with the polling floor
 * (bench/tcp/pollpp.c) and a socket merely registered.  block() puts them back before
 * it sleeps (an EPOLL_CTL_ADD reports data that is already there: nothing is lost),
 * and a waiter that blocks often never goes quiet (QUIET_AFTER polls first). */
#define QUIET_AFTER 256

static void quiet_set(int on)
{
    T.quiet = on;
    for (int i = 0; i < T.nup; i++) {
        struct conn *c = T.up[i];
        if (!on) {
            ep_sync(c);
        } else if (c->ev && c->fd >= 0) {
            epoll_ctl(T.ep, EPOLL_CTL_DEL, c->fd, NULL);
            c->ev = 0;
        }
    }
}

void tcp_ep_del_close(int fd)
{
    epoll_ctl(T.ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

/* ---- discovery: the address of a peer ------------------------------------ */

static int mask_bits(struct in_addr m)
{
    return __builtin_popcount(m.s_addr);
}

/* The address to reach `peer` at, from its card.  0 or -errno. */
int tcp_peer_addr(int peer, struct sockaddr_in *sa)
{
    char card[CARD_MAX];
    if (peer >= xm_g.size) { /* another job's process: its card in the table */
        const struct xm_proc *p = xm_proc_get(peer);
        if (!p || p->addrs.naddr < 1 || !p->has_secret)
            return -EXDEV;
        int pick = 0;
        for (int k = p->addrs.naddr - 1; k >= 0; k--)
            for (int i = 0; i < T.nmy; i++)
                if ((p->addrs.ip[k] & T.my_mask[i].s_addr) ==
                    (T.my_addr[i].s_addr & T.my_mask[i].s_addr))
                    pick = k; /* the first address in a subnet of mine */
        *sa = (struct sockaddr_in){.sin_family = AF_INET,
                                   .sin_port = htons(p->addrs.port[pick]),
                                   .sin_addr.s_addr = p->addrs.ip[pick]};
        return 0;
    }
    int rc = xm_boot_get(peer, "tcp", card, sizeof(card));
    if (rc < 0)
        return rc;
    struct sockaddr_in best = {0};
    int have = 0;
    char *save = NULL;
    for (char *tok = strtok_r(card, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon)
            continue;
        *colon = 0;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)atoi(colon + 1))};
        if (inet_pton(AF_INET, tok, &a.sin_addr) != 1)
            continue;
        if (xm_g.node_of[peer] == xm_g.node_of[xm_g.rank]) {
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            *sa = a;
            return 0;
        }
        if ((ntohl(a.sin_addr.s_addr) >> 24) == 127)
            continue; /* another node's loopback is not the peer */
        if (!have) {
            best = a;
            have = 1;
        }
        for (int i = 0; i < T.nmy; i++)
            if (mask_bits(T.my_mask[i]) &&
                (a.sin_addr.s_addr & T.my_mask[i].s_addr) ==
                    (T.my_addr[i].s_addr & T.my_mask[i].s_addr)) {
                *sa = a;
                return 0;
            }
    }
    if (!have)
        return -EADDRNOTAVAIL;
    *sa = best;
    return 0;
}

/* ---- progress ------------------------------------------------------------ */

static void drain_event(void);

static int t_poll(struct xm_transport *t, int max)
{
    int n = 0;
    if (T.any_err) {
        T.any_err = 0;
        for (int r = 0; r < xm_proc_count(); r++)
            if (T.peer[r] && T.peer[r]->err && T.peer[r]->state != C_DEAD)
                tcp_lose_errno(T.peer[r], T.peer[r]->err);
    }
    for (int i = 0; i < T.nwl; i++) {
        struct conn *c = T.wl[i];
        if (c->state == C_UP && c->sq) {
            int before = c->sq != NULL;
            tcp_flush_or_fail(c);
            n += before && !c->sq;
        }
        if (c->state != C_UP || !c->sq) {
            c->in_wlist = 0;
            if (c->state == C_UP)
                tcp_ep_set(c, EPOLLIN);
            T.wl[i--] = T.wl[--T.nwl];
        }
    }
    /* fast path: few connections, no handshake: read them directly; every 64th poll
     * (and whenever a handshake is open) ask epoll, which also sees new connections */
    int fast = T.nhand == 0 && T.nup <= 2;
    if (fast && !T.quiet && ++T.fast_polls >= QUIET_AFTER)
        quiet_set(1);
    else if (!fast && T.quiet)
        quiet_set(0);
    if (fast && (++T.tick & 63)) {
        for (int i = 0; i < T.nup; i++)
            n += tcp_read(T.up[i]);
        return n;
    }
    if (T.quiet) /* not in the set: epoll below does not report them */
        for (int i = 0; i < T.nup; i++)
            n += tcp_read(T.up[i]);
    if ((T.npend || T.lpaused) && !(++T.sweep & 31))
        tcp_pend_sweep();
    struct epoll_event ev[64];
    int k = epoll_wait(T.ep, ev, 64, 0);
    for (int i = 0; i < k; i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == K_EVENT) {
            drain_event();
            continue;
        }
        if (kind == K_WATCH)
            continue; /* its owner drains it before it sleeps on it again */
        if (kind == K_LISTEN)
            tcp_accept();
        else if (kind == K_PEND)
            tcp_pend_event(ev[i].data.ptr);
        else
            n += tcp_conn_event(ev[i].data.ptr, ev[i].events);
        n++;
    }
    return n;
}

/* ---- the wake-up descriptors in the epoll set ------------------------------------
 * W.efd: the eventfd through which, under MPI_THREAD_MULTIPLE, another thread wakes the
 * one asleep in t_block() (t_wake, core/mt.c).  W.xfd: a descriptor another transport
 * wakes when it has work for us (shm's, added by core/progress.c with watch()); it is
 * only watched here, its owner drains it. */
static struct {
    int efd, kind_ev;
    int xfd, xep, kind_x; /* watched descriptor, the epoll set it is in (-1: none) */
} W = {.efd = -1, .xfd = -1, .xep = -1};

static int efd_open(void)
{
    if (W.efd >= 0)
        return 0;
    W.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (W.efd < 0)
        return -errno;
    W.kind_ev = K_EVENT;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &W.kind_ev};
    epoll_ctl(T.ep, EPOLL_CTL_ADD, W.efd, &e);
    return 0;
}

static void efd_close(void)
{
    /* the watched descriptor stays open (its owner closes it), and copies of it in
     * other processes would keep it in the set: take it out, or a readable one would
     * turn the naps of t_finalize into a busy loop */
    if (W.xfd >= 0 && W.xep == T.ep && T.ep >= 0)
        epoll_ctl(T.ep, EPOLL_CTL_DEL, W.xfd, NULL);
    if (W.efd >= 0)
        close(W.efd);
    W.efd = -1;
    W.xfd = W.xep = -1; /* it left with the epoll set */
}

static void drain_event(void)
{
    uint64_t v;
    if (W.efd >= 0 && read(W.efd, &v, sizeof(v)) < 0) { /* nothing pending */
    }
}

static int t_watch(struct xm_transport *t, int fd)
{
    if (W.xfd == fd && W.xep == T.ep)
        return 0;
    if (T.ep < 0)
        return -EBADF;
    W.kind_x = K_WATCH;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &W.kind_x};
    if (W.xfd >= 0 && W.xep == T.ep)
        epoll_ctl(T.ep, EPOLL_CTL_DEL, W.xfd, NULL);
    if (epoll_ctl(T.ep, EPOLL_CTL_ADD, fd, &e) < 0 && errno != EEXIST)
        return -errno;
    W.xfd = fd;
    W.xep = T.ep;
    return 0;
}

static int t_block(struct xm_transport *t, int timeout_ms)
{
    T.fast_polls = 0;
    if (T.quiet)
        quiet_set(0); /* sleep on every connection */
    if (xm_mt.on && W.efd < 0)
        efd_open(); /* threads: t_wake() must reach us (failure: 20 ms naps) */
    struct epoll_event ev[8];
    int held = xm_mt_drop(); /* MPI_THREAD_MULTIPLE: others run while we sleep */
    int k = epoll_wait(T.ep, ev, 8, timeout_ms); /* level-triggered: poll() reads */
    xm_mt_take(held);
    /* compare addresses only: under MPI_THREAD_MULTIPLE another thread may have
     * closed and freed a connection reported here while we slept without the lock */
    for (int i = 0; i < k; i++)
        if (ev[i].data.ptr == &W.kind_ev)
            drain_event();
    return 0;
}

/* wake another thread of ours asleep in t_block() (core/mt.c) */
static void t_wake(struct xm_transport *t)
{
    uint64_t one = 1;
    if (W.efd >= 0 && write(W.efd, &one, sizeof(one)) < 0) { /* already signalled */
    }
}

static int t_reaches(struct xm_transport *t, int r)
{
    return T.active && r != xm_g.rank;
}

static int parse_if(const char *spec, struct in_addr *net, struct in_addr *mask)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", spec);
    char *slash = strchr(buf, '/');
    if (!slash)
        return 0;
    *slash = 0;
    int bits = atoi(slash + 1);
    if (inet_pton(AF_INET, buf, net) != 1 || bits < 0 || bits > 32)
        return 0;
    mask->s_addr = bits ? htonl(~0u << (32 - bits)) : 0;
    return 1;
}

/* My advertised addresses into T.my_addr/my_mask; returns how many. */
static int find_addrs(void)
{
    struct ifaddrs *ifs, *i;
    const char *want = getenv("LOOM_MPI_TCP_IF");
    struct in_addr wnet = {0}, wmask = {0};
    int is_net = want && *want && parse_if(want, &wnet, &wmask);
    T.nmy = 0;
    if (getifaddrs(&ifs) < 0)
        return 0;
    for (int pass = 0; pass < 2 && T.nmy == 0; pass++) {
        for (i = ifs; i && T.nmy < MAX_ADDRS; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
                !(i->ifa_flags & IFF_UP))
                continue;
            struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            struct in_addr m = {0};
            if (i->ifa_netmask)
                m = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr;
            int loop = (i->ifa_flags & IFF_LOOPBACK) != 0;
            if (want && *want) {
                if (is_net ? (a.s_addr & wmask.s_addr) != (wnet.s_addr & wmask.s_addr)
                           : strcmp(i->ifa_name, want) != 0)
                    continue;
            } else if (loop != pass) { /* pass 0: not loopback; pass 1: loopback */
                continue;
            }
            T.my_addr[T.nmy] = a;
            T.my_mask[T.nmy++] = m;
        }
        if (want && *want)
            break;
    }
    freeifaddrs(ifs);
    return T.nmy;
}

/* core/proc.h grow hook: the connection table and the lists that hold at most one
 * entry per peer get room for ids [0, newcap) */
static int tcp_grow(int oldcap, int newcap)
{
    (void)oldcap; /* the netmod may have started after an earlier growth: T.cap */
    if (!T.peer || newcap <= T.cap)
        return 0; /* not running (finalized early, or never started), or room enough */
    struct conn ***arr[3] = {&T.peer, &T.up, &T.wl};
    for (int i = 0; i < 3; i++) {
        struct conn **n = realloc(*arr[i], (size_t)newcap * sizeof(**arr[i]));
        if (!n)
            return -ENOMEM;
        memset(n + T.cap, 0, (size_t)(newcap - T.cap) * sizeof(*n));
        *arr[i] = n;
    }
    T.cap = newcap;
    return 0;
}

static int t_init(struct xm_transport *t)
{
    static int hooked;
    if (!hooked && xm_proc_on_grow(tcp_grow) < 0)
        return -ENOSPC;
    hooked = 1;
    t->eager_max = (size_t)xm_env_int("LOOM_MPI_TCP_EAGER_MAX", 262144);
    t->zcopy_min = (size_t)xm_env_int("LOOM_MPI_TCP_ZCOPY_MIN", 65536);
    T.ep = epoll_create1(EPOLL_CLOEXEC);
    if (T.ep < 0)
        return -errno;
    T.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (T.lfd < 0)
        return -errno;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof(sa);
    if (bind(T.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(T.lfd, 4096) < 0 ||
        getsockname(T.lfd, (struct sockaddr *)&sa, &sl) < 0)
        return -errno;
    T.lport = ntohs(sa.sin_port);
    T.kind_listen = K_LISTEN;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &T.kind_listen};
    epoll_ctl(T.ep, EPOLL_CTL_ADD, T.lfd, &e);
    /* room for every id the table has room for (core/proc.h): the netmod may start
     * after connections added ids */
    size_t n = (size_t)(xm_proc_capacity() > xm_g.size ? xm_proc_capacity() : xm_g.size);
    T.peer = calloc(n, sizeof(*T.peer));
    T.up = calloc(n, sizeof(*T.up));
    T.wl = calloc(n, sizeof(*T.wl));
    T.cap = (int)n;
    int tmo = xm_env_int("LOOM_MPI_TCP_HANDSHAKE_TIMEOUT", HS_TIMEOUT_DEFAULT);
    T.hs_timeout = tmo > 0 ? tmo : HS_TIMEOUT_DEFAULT;
    T.pend_max = xm_env_int("LOOM_MPI_TCP_MAX_PENDING", HS_PENDING_DEFAULT);
    if (T.pend_max < 1)
        T.pend_max = HS_PENDING_DEFAULT;
    T.pend = calloc((size_t)T.pend_max, sizeof(*T.pend));
    if (!T.peer || !T.up || !T.wl || !T.pend)
        return -ENOMEM;
    return 0;
}

static int t_put_card(struct xm_transport *t)
{
    char card[CARD_MAX] = "";
    size_t len = 0;
    if (find_addrs() == 0) {
        const char *w = getenv("LOOM_MPI_TCP_IF");
        fprintf(stderr, "loom-mpi: rank %d: no IPv4 address%s%s%s; using loopback\n",
                xm_g.rank, w ? " matches LOOM_MPI_TCP_IF=" : "", w ? w : "",
                w ? "" : " is up");
        T.my_addr[0].s_addr = htonl(INADDR_LOOPBACK);
        T.my_mask[0].s_addr = htonl(0xff000000u);
        T.nmy = 1;
    }
    for (int i = 0; i < T.nmy; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &T.my_addr[i], ip, sizeof(ip));
        int k = snprintf(card + len, sizeof(card) - len, "%s%s:%d", i ? "," : "", ip,
                         T.lport);
        if (k < 0 || (size_t)k >= sizeof(card) - len)
            break;
        len += (size_t)k;
    }
    int rc = xm_boot_put("tcp", card);
    if (rc < 0 || xm_g.rank != 0)
        return rc;
    /* rank 0 makes the job's secret; every rank reads it after the fence */
    char hex[2 * LOOM_KEY_LEN + 1];
    if (loom_random_bytes(T.key, sizeof(T.key)) < 0)
        return -errno;
    loom_hex(T.key, sizeof(T.key), hex);
    rc = xm_boot_put("tsec", hex);
    memset(hex, 0, sizeof(hex));
    return rc;
}

static int t_finalize(struct xm_transport *t);

/* My TCP card (core/transport.h), starting the netmod first in a job that runs
 * without it: listener, epoll set and addresses, no job secret (the world stays on
 * shared memory; only other jobs' processes come in, with a port's secret). */
int xm_tcp_card(struct xm_dyn_addrs *a)
{
    struct xm_transport *t = &xm_tcp_transport;
    if (!T.active) {
        T.lfd = T.ep = -1;
        int rc = t_init(t);
        if (rc < 0) {
            t_finalize(t);
            return rc;
        }
        if (find_addrs() == 0) {
            T.my_addr[0].s_addr = htonl(INADDR_LOOPBACK);
            T.my_mask[0].s_addr = htonl(0xff000000u);
            T.nmy = 1;
        }
        T.active = 1;
        xm_g.net = t;
    }
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < T.nmy && a->naddr < XM_DYN_ADDRS; i++) {
        a->ip[a->naddr] = T.my_addr[i].s_addr;
        a->port[a->naddr++] = (uint16_t)T.lport;
    }
    return 0;
}

static int t_connect(struct xm_transport *t)
{
    char hex[2 * LOOM_KEY_LEN + 8];
    if (xm_boot_get(0, "tsec", hex, sizeof(hex)) < 0 ||
        loom_unhex(hex, T.key, sizeof(T.key)) < 0) {
        fprintf(stderr,
                "loom-mpi: rank %d: TCP netmod: no valid job secret from rank 0 "
                "in the KVS (key xm-tsec-0)\n",
                xm_g.rank);
        return -EPROTO;
    }
    memset(hex, 0, sizeof(hex));
    T.have_key = 1;
    T.active = 1;
    return 0;
}

/* Goodbye to every connection, write what is queued, wait (bounded) for every peer's
 * end of stream so that no close resets data the peer has not read yet. */
static int t_finalize(struct xm_transport *t)
{
    efd_close();
    if (T.quiet)
        quiet_set(0); /* its naps below wake on the connections */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < xm_proc_count(); r++) {
        struct conn *c = T.peer[r];
        if (!c || (c->state != C_UP && c->state != C_CLOSED))
            continue;
        if (c->state == C_UP)
            tcp_send_bye(c);
    }
    for (;;) {
        int busy = 0;
        for (int r = 0; r < xm_proc_count(); r++) {
            struct conn *c = T.peer[r];
            if (!c || c->fd < 0)
                continue;
            if (c->sq) {
                if (tcp_flush(c) < 0) {
                    tcp_ep_del_close(c->fd);
                    c->fd = -1;
                    continue;
                }
                if (!c->sq)
                    shutdown(c->fd, SHUT_WR);
            } else if (c->state == C_UP) {
                shutdown(c->fd, SHUT_WR);
                tcp_conn_to(c, C_CLOSED); /* write side done; read until EOF */
            }
            char sink[4096];
            ssize_t k = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                tcp_ep_del_close(c->fd);
                c->fd = -1;
                continue;
            }
            busy = 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
        if (!busy || el > 10.0)
            break;
        struct epoll_event ev[8];
        epoll_wait(T.ep, ev, 8, 10);
    }
    for (int r = 0; r < xm_proc_count(); r++) {
        if (T.peer[r])
            tcp_conn_free(T.peer[r]);
    }
    while (T.npend)
        tcp_pend_free(T.pend[T.npend - 1]);
    free(T.pend);
    for (struct tq *q; (q = T.free_small);) {
        T.free_small = q->next;
        free(q);
    }
    for (struct tq *q; (q = T.free_big);) {
        T.free_big = q->next;
        free(q);
    }
    if (T.lfd >= 0)
        close(T.lfd);
    if (T.ep >= 0)
        close(T.ep);
    free(T.peer);
    free(T.up);
    free(T.wl);
    T.peer = T.up = T.wl = NULL; /* tcp_grow leaves a finalized netmod alone */
    T.cap = 0;
    memset(&T, 0, sizeof(T)); /* the key too */
    T.lfd = T.ep = -1;
    return 0;
}

struct xm_transport xm_tcp_transport = {
    .name = "tcp",
    .init = t_init,
    .finalize = t_finalize,
    .put_card = t_put_card,
    .connect = t_connect,
    .reaches = t_reaches,
    .alloc = tcp_alloc,
    .alloc_n = tcp_alloc_n,
    .post = tcp_post,
    .poll = t_poll,
    .block = t_block,
    .wake = t_wake,
    .watch = t_watch,
    .post_ref = tcp_post_ref,
    .queued = tcp_queued,
    .drop = tcp_drop,
    .one_max = BIG_CAP,
    .eager_max = 262144,
    .zcopy_min = 65536,
};
