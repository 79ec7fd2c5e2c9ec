/* handshake.c - the job cookie between mpiexec and its proxies: the handshake
 * proofs, the frame tags, and the proxy's side of the handshake
 * (mpx_proxy_connect: connect back, make mpiexec prove the cookie first, then
 * prove it).  Contract and the protocol: handshake.h, front.c's header.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "handshake.h"
#include "loop.h"
#include "pack.h"

#define PROXY_ATTEMPT_MS 5000 /* proxy: one connect + handshake attempt */

/* ---- proofs and frame tags ----------------------------------------------- */

void mpx_key_init(struct mpx_key *mk, const char *cookie, int node)
{
    unsigned char pad[64] = {0};
    size_t kl = strlen(cookie);

    if (kl > sizeof(pad))
        loom_sha256(cookie, kl, pad);
    else
        memcpy(pad, cookie, kl);
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] ^= 0x36;
    loom_sha256_init(&mk->ictx);
    loom_sha256_update(&mk->ictx, pad, sizeof(pad));
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] ^= 0x36 ^ 0x5c;
    loom_sha256_init(&mk->octx);
    loom_sha256_update(&mk->octx, pad, sizeof(pad));
    memset(pad, 0, sizeof(pad));
    mk->node = node;
}

/* mpx_tag_fn: HMAC(cookie, "mpx2" dir node type body), first MPX_TAG_LEN bytes. */
void mpx_key_tag(const void *key, int dir, uint8_t type, const void *body, size_t len,
                 uint8_t tag[MPX_TAG_LEN])
{
    const struct mpx_key *mk = key;
    struct loom_sha256 c = mk->ictx;
    uint8_t h[10] = {'m',
                     'p',
                     'x',
                     '2',
                     (uint8_t)dir,
                     (uint8_t)(mk->node >> 24),
                     (uint8_t)(mk->node >> 16),
                     (uint8_t)(mk->node >> 8),
                     (uint8_t)mk->node,
                     type};
    unsigned char in[32], out[32];

    loom_sha256_update(&c, h, sizeof(h));
    if (len)
        loom_sha256_update(&c, body, len);
    loom_sha256_final(&c, in);
    c = mk->octx;
    loom_sha256_update(&c, in, sizeof(in));
    loom_sha256_final(&c, out);
    memcpy(tag, out, MPX_TAG_LEN);
}

/* The handshake proof of `who` ("front" or "proxy") for node, Np, Nf. */
void mpx_make_proof(const char *cookie, const char *who, int node, const uint8_t *np,
                    const uint8_t *nf, uint8_t out[MPX_PROOF_LEN])
{
    uint8_t m[16 + 4 + 2 * MPX_NONCE_LEN];
    size_t n = (size_t)snprintf((char *)m, 17, "loom-mpx2 %s", who);

    m[n++] = (uint8_t)(node >> 24);
    m[n++] = (uint8_t)(node >> 16);
    m[n++] = (uint8_t)(node >> 8);
    m[n++] = (uint8_t)node;
    memcpy(m + n, np, MPX_NONCE_LEN);
    n += MPX_NONCE_LEN;
    memcpy(m + n, nf, MPX_NONCE_LEN);
    n += MPX_NONCE_LEN;
    loom_hmac_sha256(cookie, strlen(cookie), m, n, out);
}

/* ---- the proxy's side of the handshake ----------------------------------- */

static struct mpx_key proxy_key; /* one uplink per proxy process */

int mpx_wait_frame(struct mpx_conn *c, uint64_t end, uint8_t *type, const uint8_t **body,
                   size_t *len)
{
    for (;;) {
        int rc = mpx_conn_next(c, type, body, len);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        int64_t left = (int64_t)(end - loop_now_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pfd = {.fd = c->s.fd,
                             .events = POLLIN | (mpx_conn_pending(c) ? POLLOUT : 0)};
        int prc = poll(&pfd, 1, (int)left);
        if (prc < 0 && errno == EINTR)
            continue;
        if (prc < 0)
            return -errno;
        if ((pfd.revents & POLLOUT) && mpx_conn_flush(c) < 0)
            return -EPIPE;
        if (pfd.revents & (POLLIN | POLLERR | POLLHUP)) {
            long n = mpx_conn_read(c);
            if (n == 0)
                return -ECONNRESET;
            if (n < 0 && n != -EAGAIN)
                return (int)n;
        }
    }
}

/* The handshake on a connected c: we name our node and nonce, the listener
 * must prove the cookie before we prove it in turn.  0 with c tagged, or
 * -errno with a reason in why. */
static int proxy_handshake(struct mpx_conn *c, const char *cookie, int nodeid,
                           const char *host, uint64_t end, char *why, size_t wl)
{
    uint8_t np[MPX_NONCE_LEN], want[MPX_PROOF_LEN], mine[MPX_PROOF_LEN], type = 0;
    const uint8_t *body;
    size_t len, nl, tl;
    struct pack pk;
    struct unpack u;
    int rc;

#ifdef LOOM_FUZZ
    memset(np, 0, sizeof(np)); /* fuzz target: seeds can carry a valid proof */
#else
    if (loom_random_bytes(np, sizeof(np)) < 0) {
        snprintf(why, wl, "no random numbers: %s", strerror(errno));
        return -errno;
    }
#endif
    pack_init(&pk);
    pack_u32(&pk, MPX_PROTO_VERSION);
    pack_i32(&pk, nodeid);
    pack_bytes(&pk, np, sizeof(np));
    rc = pack_error(&pk) ? -ENOMEM : mpx_conn_send(c, MPX_P_HELLO2, pk.buf, pk.len);
    pack_free(&pk);
    loom_stream_set_frame_max(&c->s, MPX_HS_FRAME_MAX); /* until mpiexec proved itself */
    if (rc == 0)
        rc = mpx_wait_frame(c, end, &type, &body, &len);
    if (rc < 0) {
        snprintf(why, wl, "%s",
                 rc == -ETIMEDOUT ? "no proof of the job cookie in time"
                 : rc == -EPROTO  ? "not an mpiexec (bad frame)"
                                  : strerror(-rc));
        return rc;
    }
    unpack_init(&u, body, len);
    const void *nf = unpack_bytes(&u, &nl);
    const void *tag = unpack_bytes(&u, &tl);
    if (type != MPX_F_PROOF || unpack_error(&u) || !nf || nl != MPX_NONCE_LEN || !tag ||
        tl != MPX_PROOF_LEN) {
        snprintf(why, wl, "not an mpiexec of this version (no proof)");
        return -EPROTO;
    }
    mpx_make_proof(cookie, "front", nodeid, np, nf, want);
    if (!loom_ct_equal(want, tag, MPX_PROOF_LEN)) {
        snprintf(why, wl, "wrong proof of the job cookie: not the mpiexec of this job");
        return -EACCES;
    }
    loom_stream_set_frame_max(&c->s, MPX_FRAME_MAX);
    mpx_make_proof(cookie, "proxy", nodeid, np, nf, mine);
    pack_init(&pk);
    pack_bytes(&pk, mine, sizeof(mine));
    pack_str(&pk, host);
    rc = pack_error(&pk) ? -ENOMEM : mpx_conn_send(c, MPX_P_PROOF, pk.buf, pk.len);
    pack_free(&pk);
    if (rc < 0) {
        snprintf(why, wl, "%s", strerror(-rc));
        return rc;
    }
    mpx_key_init(&proxy_key, cookie, nodeid);
    mpx_conn_set_tag(c, mpx_key_tag, &proxy_key, MPX_DIR_PROXY, MPX_DIR_FRONT);
    return 0;
}

/* One TCP connect to a:port bounded by end; the fd or -errno. */
static int connect_to(const char *a, int port, uint64_t end)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd, rc, soerr = 0;
    socklen_t sl = sizeof(soerr);

    if (inet_pton(AF_INET, a, &sin.sin_addr) != 1)
        return -EINVAL;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
    if (rc < 0 && errno == EINPROGRESS) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int64_t left = (int64_t)(end - loop_now_ms());
        int prc;
        if (left < 1)
            left = 1;
        do {
            prc = poll(&pfd, 1, (int)left);
        } while (prc < 0 && errno == EINTR);
        if (prc <= 0)
            soerr = ETIMEDOUT;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            soerr = errno;
        rc = soerr ? -1 : 0;
        errno = soerr;
    }
    if (rc < 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int mpx_proxy_connect(const char *spec, const char *cookie, int nodeid, const char *host,
                      int ms, struct mpx_conn *up, char *err, size_t errlen)
{
    const char *colon = strrchr(spec, ':');
    uint64_t end = loop_now_ms() + (uint64_t)ms;
    char addrs[1024], last[256] = "connection refused";
    int backoff = 50, port, rc = -ECONNREFUSED;

    mpx_conn_init(up, -1);
    port = colon ? atoi(colon + 1) : 0;
    if (!colon || (size_t)(colon - spec) >= sizeof(addrs) || port < 1 || port > 65535) {
        snprintf(err, errlen, "bad --connect value '%s'", spec);
        return -EINVAL;
    }
    memcpy(addrs, spec, (size_t)(colon - spec));
    addrs[colon - spec] = '\0';
    for (;;) {
        char *save = NULL, tmp[sizeof(addrs)];
        strcpy(tmp, addrs);
        for (char *a = strtok_r(tmp, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
            uint64_t now = loop_now_ms(), aend = now + PROXY_ATTEMPT_MS;
            char why[160];
            if (now >= end)
                break;
            if (aend > end)
                aend = end; /* one silent address must not eat the whole time */
            int fd = connect_to(a, port, aend);
            if (fd == -EINVAL)
                continue;
            if (fd < 0) {
                rc = fd;
                snprintf(last, sizeof(last), "%s: %s", a, strerror(-fd));
                continue;
            }
            mpx_conn_init(up, fd);
            rc = proxy_handshake(up, cookie, nodeid, host, aend, why, sizeof(why));
            if (rc == 0)
                return 0;
            snprintf(last, sizeof(last), "%s: %s", a, why);
            mpx_conn_free(up, 1);
        }
        int64_t left = (int64_t)(end - loop_now_ms());
        if (left <= 0)
            break;
        struct timespec ts = {0, (long)(backoff < left ? backoff : left) * 1000000L};
        nanosleep(&ts, NULL);
        backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
    }
    snprintf(err, errlen,
             "cannot reach the mpiexec of this job at %s within %d s (last: %s)", spec,
             ms / 1000, last);
    return rc < 0 ? rc : -ETIMEDOUT;
}
