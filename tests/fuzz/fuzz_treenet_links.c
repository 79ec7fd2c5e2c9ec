/* fuzz_treenet_links.c - libFuzzer target: the receive path of treenet's tree links
 * (treenet/links.c over common/stream.c: staging buffer, frame split, large-frame
 * assembly, the handshake on both sides, delivery), as a hostile peer drives it.
 *
 * fuzz-sources: common/loop.c common/ktree.c common/log.c common/fdio.c common/mac.c
 * fuzz-sources: common/net.c common/stream.c
 * fuzz-cflags: -Itreenet -Icommon
 * fuzz-libs: -lmunge
 * fuzz-options: -max_len=200000
 *
 * Contract: the target includes treenet/links.c (its statics are the state), auth.c
 * and util.c.  Input byte 0, bit 2 picks the credential mode: set, TREENET_AUTH_COOKIE
 * with the cookie FZ_COOKIE (the credential is the payload, a blank and the hex
 * HMAC-SHA256 of "loom2 treenet cookie\n" payload); clear, TREENET_AUTH_NONE.  Bit 0
 * picks the side:
 *   even  an accepted connection of node 0 (3 nodes, width 2: children 1 and 2), as a
 *         stranger or a child would open it: the rest of the input arrives on it (a
 *         socketpair, then end of stream).  With LOOM_FUZZ the listener's nonce is 32
 *         '0', so "loom2 77.0 1 0 000...0 <32 hex>" (TREENET_AUTH_NONE) lets the input
 *         authenticate as child 1 and go on with messages;
 *   odd   node 1's connection to its parent: the rest is what the "parent" sends
 *         (nonce frame, answer credential, messages).
 * Invariants (a trap is a finding): ops->recv only for an authenticated link, from the
 * node that link belongs to, with at most TN_MSG_MAX bytes; ops->lost at most once per
 * node; nothing is delivered after the link is lost.  Everything is freed per input
 * (treenet_destroy), so LSan sees every leak.
 * Seeds: corpus/treenet_links/: a child's real handshake followed by small and 70 KiB
 * messages (in both modes; and with one tag digit changed), a parent's real nonce +
 * answer + messages, the old loom1 handshake, a 4 GiB length, a frame cut in the middle.
 */
#include "../../treenet/auth.c"
#include "../../treenet/links.c"
#include "../../treenet/util.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_COOKIE "fuzz-cookie-0123456789abcdef0123456789abcdef0123456789abcdef0123"

struct fz {
    int self;
    int up_from; /* -1 until a message arrived */
    int lost[3];
};

static void fz_recv(void *arg, int from, const void *buf, size_t len)
{
    struct fz *z = arg;
    (void)buf;
    if (len > TN_MSG_MAX || from < 0 || from > 2 || from == z->self || z->lost[from])
        __builtin_trap();
    z->up_from = from;
}

static void fz_lost(void *arg, int node, const char *why)
{
    struct fz *z = arg;
    (void)why;
    if (node < 0 || node > 2 || z->lost[node]++)
        __builtin_trap();
}

static const struct treenet_ops fz_ops = {fz_recv, fz_lost, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct loop *lp;
    struct fz z = {.up_from = -1};
    struct treenet_config cfg = {.nnodes = 3,
                                 .width = 2,
                                 .jobkey = "77.0",
                                 .uid = 0,
                                 .auth = TREENET_AUTH_NONE,
                                 .bind_addr = "127.0.0.1",
                                 .connect_timeout_ms = 60000};
    struct treenet *tn;
    struct conn *c;
    int sv[2];

    if (size < 1 || size > 200000)
        return 0;
    if (!lp && !(lp = loop_create()))
        return 0;
    cfg.nodeid = z.self = data[0] & 1;
    if (data[0] & 4) {
        cfg.auth = TREENET_AUTH_COOKIE;
        cfg.cookie = FZ_COOKIE;
    }
    tn = treenet_create(lp, &cfg, &fz_ops, &z);
    if (!tn)
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
        treenet_destroy(tn);
        return 0;
    }
    {
        int big = 1 << 20;
        setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
        setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    }
    c = conn_new(tn, sv[0]);
    if (!c) {
        close(sv[0]);
        close(sv[1]);
        treenet_destroy(tn);
        return 0;
    }
    snprintf(c->peer, sizeof(c->peer), "fuzz");
    c->st = C_HS;
    if (z.self == 0) { /* accepted: we sent our nonce */
        tn->npending++;
        tn_nonce_new(c->nonce);
    } else { /* connected to the parent, waiting for its nonce */
        c->slot = &tn->parent;
        tn->parent.conn = c;
        tn->addrs = NULL;
    }
    c->w = loop_watch_add(lp, sv[0], LOOP_READ, conn_read_cb, c);
    /* the peer's bytes, then end of stream (what does not fit is dropped) */
    for (size_t off = 1; off < size;) {
        ssize_t n = send(sv[1], data + off, size - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    shutdown(sv[1], SHUT_WR);
    for (int i = 0; i < 64 && c->st != C_DEAD; i++) {
        conn_read_cb(lp, c->w, sv[0], LOOP_READ, c);
        /* drain what we sent, so our writes never block */
        char junk[4096];
        while (recv(sv[1], junk, sizeof(junk), MSG_DONTWAIT) > 0)
            ;
    }
    if (z.self == 1 && tn->parent.retry) { /* a retry would connect for real: not here */
        loop_timer_cancel(lp, tn->parent.retry);
        tn->parent.retry = NULL;
    }
    close(sv[1]);
    treenet_destroy(tn);
    return 0;
}
