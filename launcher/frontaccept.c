/* frontaccept.c - the multi-host front end's port: the listener
 * (MPIEXEC_PORT_RANGE, the candidate addresses given to the proxies), the
 * connections on it until their proxy proved the job cookie (mpiexec's side
 * of the handshake, handshake.h), refusing and evicting strangers with
 * rate-limited log lines (the tree rendezvous' refusals too), and the
 * connect-back timeout.  The socket itself
 * is common/net.c's loom_listen, treenet's listener setup too.  Design: front.c;
 * state: front_int.h.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "front_int.h"
#include "mac.h"
#include "net.h"

#define MAX_PENDING 256 /* unauthenticated connections; more evict the oldest */
#define REFUSE_LOG_BURST 5
#define REFUSE_LOG_WINDOW_MS 10000

/* ---- accepting proxies --------------------------------------------------- */

void front_pend_free(struct front *f, struct pend *p)
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

/* The tree rendezvous' log (treenet's server thread, started in front.c):
 * its refusals are rate-limited there (RDV_LOG_BURST per window, then one
 * line counting the rest), so they pass as they come, as warnings like ours;
 * loom_logf escapes them and writes each line at once, so this is safe from
 * that thread.  Its errors (a proxy that cannot join, which the proxy says
 * itself) and progress are for -v. */
void front_rdv_log(void *arg, int level, const char *msg)
{
    struct front *f = arg;

    if (strncmp(msg, "rdv: ", 5) == 0)
        msg += 5;
    if (level == LOOM_LOG_WARN || (level <= LOOM_LOG_INFO && f->o->verbose) ||
        f->o->verbose > 1)
        loom_logf(f->log, LOOM_LOG_WARN, "%stree rendezvous: %s",
                  level == LOOM_LOG_WARN ? "warning: " : "", msg);
}

static void pend_refuse(struct front *f, struct pend *p, const char *why)
{
    refused(f, p->peer, why);
    front_pend_free(f, p);
}

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
        front_pend_free(f, f->pending);
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
        f->end.ending) {
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
    if (f->nodes[id].connected || f->nodes[id].done || f->end.ending) {
        pend_refuse(f, p, "node already connected (or the job is ending)");
        return;
    }
    struct fnode *nd = &f->nodes[id];
    int fd = p->c.s.fd;
    /* what the proxy sent after its proof is the node's */
    loom_stream_take_input(&nd->c.s, &p->c.s);
    p->c.s.fd = -1;
    front_pend_free(f, p);
    nd->c.s.fd = fd;
    nd->connected = true;
    f->nconnected++;
    if (front_send_job(nd) < 0) {
        front_fail(f, 1, "cannot send the job to the proxy on host %s", nd->host);
        return;
    }
    nd->w =
        loop_watch_add(f->lp, fd, LOOP_READ | (mpx_conn_pending(&nd->c) ? LOOP_WRITE : 0),
                       front_node_cb, nd);
    if (!nd->w) {
        front_fail(f, 1, "out of memory");
        return;
    }
    if (f->nconnected == f->nnodes) {
        if (f->connect_timer) {
            loop_timer_cancel(f->lp, f->connect_timer);
            f->connect_timer = NULL;
        }
        listener_close(f);
        if (f->o->verbose)
            front_msg(f, "all %d proxies connected after %llu ms", f->nnodes,
                      (unsigned long long)(loop_now_ms() - f->t0));
    }
}

void front_pend_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
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
    if (loom_stream_partial(&p->c.s) > 4096) {
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

void front_listen_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                     void *arg)
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
        if (f->end.ending) {
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
        loom_stream_set_frame_max(&p->c.s, MPX_HS_FRAME_MAX);
        p->t0 = loop_now_ms();
        p->w = loop_watch_add(lp, c, LOOP_READ, front_pend_cb, p);
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

void front_connect_timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
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
        front_fail(
            f, MPX_EXIT_LAUNCH,
            "the proxy on host%s %s did not connect back within %d s (firewall? see "
            "LOOM_MPIEXEC_ADDRS and MPIEXEC_PORT_RANGE in mpiexec(1))",
            mpx_plural(missing), hosts, f->timeout_ms / 1000);
}

/* ---- the listener -------------------------------------------------------- */

int front_open_listener(struct front *f, char *err, size_t errlen)
{
    const char *range = getenv("MPIEXEC_PORT_RANGE");
    int lo = 0, hi = 0;

    if (!range || !*range)
        range = getenv("HYDRA_PORT_RANGE");
    if (range && *range &&
        (sscanf(range, "%d:%d", &lo, &hi) != 2 &&
         sscanf(range, "%d-%d", &lo, &hi) != 2)) {
        snprintf(err, errlen, "MPIEXEC_PORT_RANGE='%s' is not LOW:HIGH", range);
        return -EINVAL;
    }
    if (lo < 0 || hi > 65535 || lo > hi || (lo == 0) != (hi == 0)) {
        snprintf(err, errlen, "MPIEXEC_PORT_RANGE='%s' is not LOW:HIGH", range);
        return -EINVAL;
    }
    f->port_lo = lo;
    f->port_hi = hi;
    /* any IPv4 address; the range's ports from a random one on (net.h) */
    int fd = loom_listen(NULL, (unsigned)lo, (unsigned)hi, 1024, &f->port);
    if (fd < 0) {
        snprintf(err, errlen, "cannot listen on a TCP port%s%s: %s", range ? " in " : "",
                 range ? range : "", strerror(-fd));
        return fd == -EINVAL ? -EADDRNOTAVAIL : fd; /* our -EINVAL: a usage error */
    }
    f->lfd = fd;

    /* candidate addresses: this host's IPv4 addresses (not loopback) for
     * remote proxies, loopback first for local ones */
    const char *forced = getenv("LOOM_MPIEXEC_ADDRS");
    size_t rl = 0;
    if (forced && *forced) {
        if (strlen(forced) >= sizeof(f->addrs_remote) ||
            strspn(forced, "0123456789.,") != strlen(forced)) {
            snprintf(err, errlen,
                     "LOOM_MPIEXEC_ADDRS='%s' is not a list of IPv4 addresses", forced);
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
                    rl += (size_t)snprintf(f->addrs_remote + rl,
                                           sizeof(f->addrs_remote) - rl, "%s%s",
                                           rl ? "," : "", a);
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
