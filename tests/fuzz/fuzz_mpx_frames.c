/* fuzz_mpx_frames.c - libFuzzer target: mpiexec's frames between mpiexec and its proxies
 * (launcher/conn.c type bytes and tags over common/stream.c's framing; the handshake on
 * both sides: frontaccept.c and handshake.c; the proxy frames mpiexec acts on:
 * frontrelay.c), as a hostile peer sends them.
 *
 * fuzz-sources: launcher/hosts.c launcher/iofwd.c common/loop.c common/pack.c
 * fuzz-sources: common/stream.c launcher/front.c launcher/frontaccept.c
 * fuzz-sources: launcher/frontrelay.c launcher/frontstart.c launcher/jobctl.c
 * fuzz-sources: launcher/env.c common/net.c common/child.c treenet/rdv.c treenet/auth.c
 * fuzz-sources: treenet/util.c common/ktree.c launcher/spawn.c pmiserv/spawnwire.c
 * fuzz-cflags: -Ilauncher -Icommon -Ipmiserv -Inodesrv -Itreenet
 * fuzz-libs: -lmunge -lpthread
 * fuzz-options: -max_len=65536 -close_fd_mask=3
 *
 * Contract: the target includes launcher/handshake.c (proxy_handshake is static),
 * conn.c, common/mac.c, log.c and fdio.c, and drives the front end's files through
 * front_int.h.  The job
 * cookie is COOKIE below; with LOOM_FUZZ both handshake nonces mpiexec and the proxy
 * draw are 32 zero bytes, so a seed can carry valid proofs.  Input byte 0 mod 3 picks:
 *   0  a stream into a struct mpx_conn (tagged with node 1's key when bit 2 of byte 0
 *      is set), fed in pieces as a socket would deliver it: mpx_conn_next() until it
 *      stops; every frame handed out is at most MPX_FRAME_MAX and readable to its end;
 *   1  mpiexec's side: a 2-node, 2-rank job; the rest arrives on a fresh connection to
 *      its port (HELLO2, PROOF, then the node's frames); after the handshake the node's
 *      frames go through front_node_cb() untagged (the tag check is mode 0's);
 *      invariant: a connection is attached only after a proof made with COOKIE;
 *   2  the proxy's side: proxy_handshake() of node 1 against the rest (what "mpiexec"
 *      sends), then the frames that follow on the now tagged connection; invariant: it
 *      succeeds only after a proof made with COOKIE.
 * Everything is freed per input.
 * Seeds: corpus/mpx_frames/: a real proxy's HELLO2 (version 3) + PROOF and P_TREE
 * (refused since version 3: tree messages no longer pass mpiexec)/P_OUT/P_EXIT/P_DONE
 * frames, mpiexec's real PROOF + tagged F_JOB, version 1's HELLO with a cookie,
 * a frame of 4 GiB, a tagged frame with a wrong tag.
 */
#include "../../common/fdio.c"
#include "../../common/log.c"
#include "../../common/mac.c"
#include "../../launcher/conn.c"
#include "../../launcher/front_int.h"
#include "../../launcher/handshake.c"

/* frontstart.c names the proxy program through launch.c's PATH search, which brings the
 * whole rank launcher with it; the target never starts a proxy, so the name is taken
 * as it is. */
const char *mpx_find_program(const char *argv0, char *buf, size_t len);
const char *mpx_find_program(const char *argv0, char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return argv0;
}

#define COOKIE "5e6c1f0a9b3d4e7f8a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void conn_stream(const uint8_t *data, size_t size, int tagged)
{
    static struct mpx_key k;
    struct mpx_conn c;
    uint8_t type;
    const uint8_t *body;
    size_t len;

    mpx_conn_init(&c, -1);
    if (tagged) {
        mpx_key_init(&k, COOKIE, 1);
        mpx_conn_set_tag(&c, mpx_key_tag, &k, MPX_DIR_FRONT, MPX_DIR_PROXY);
    }
    for (size_t off = 0; off < size;) {
        long took = loom_stream_feed(&c.s, data + off, size - off);
        int rc;
        if (took < 0)
            break;
        off += (size_t)took;
        int got = 0;
        while ((rc = mpx_conn_next(&c, &type, &body, &len)) == 1) {
            volatile uint8_t sink = 0;
            got++;
            if (len > MPX_FRAME_MAX)
                __builtin_trap();
            for (size_t i = 0; i < len; i++) /* ASan: the whole body is readable */
                sink ^= body[i];
            (void)sink;
        }
        if (rc < 0 || (took == 0 && !got)) /* an error, or no progress */
            break;
    }
    mpx_conn_free(&c, 0);
}

static int pair(int sv[2])
{
    int big = 1 << 20;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
        return -1;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    return 0;
}

static void feed(int fd, const uint8_t *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t k = send(fd, p + off, n - off, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
}

static void front_side(const uint8_t *data, size_t size)
{
    static char *argv0[] = {"/bin/true", NULL};
    struct mpx_app app = {.np = 2, .argv = argv0, .argc = 1};
    struct mpx_opts o = {.apps = &app, .napps = 1, .nranks = 2, .genv_none = 1};
    struct mpx_hostlist hl = {0};
    struct loom_log lg;
    struct front f;
    char err[256];
    int sv[2];

    memset(&f, 0, sizeof(f));
    loom_log_init(&lg, "fuzz", LOOM_LOG_ERROR);
    f.o = &o;
    f.log = &lg;
    f.con.log = &lg;
    f.lfd = f.spare_fd = -1;
    f.hs_ms = 3000;
    snprintf(f.cookie, sizeof(f.cookie), "%s", COOKIE);
    if (mpx_hosts_parse("a,b", &hl, err, sizeof(err)) < 0 ||
        mpx_hosts_layout(&hl, 2, 0, &f.ly) < 0) {
        mpx_hosts_free(&hl);
        return;
    }
    mpx_hosts_free(&hl);
    f.nnodes = f.ly.nnodes;
    f.nodes = calloc((size_t)f.nnodes, sizeof(*f.nodes));
    f.fwd = calloc((size_t)f.ly.size * 2, sizeof(*f.fwd));
    f.exited = calloc((size_t)f.ly.size, sizeof(*f.exited));
    f.lp = loop_create();
    f.live = f.ly.size;
    for (int r = 0; f.fwd && r < f.ly.size; r++)
        f.fwd[2 * r].rank = f.fwd[2 * r + 1].rank = r;
    if (!f.nodes || !f.fwd || !f.exited || !f.lp || pair(sv) < 0)
        goto out;
    for (int i = 0; i < f.nnodes; i++) {
        struct fnode *nd = &f.nodes[i];
        nd->f = &f;
        nd->id = i;
        nd->host = f.ly.node_host[i];
        nd->nranks = f.ly.node_nranks[i];
        mpx_conn_init(&nd->c, -1);
        mpx_key_init(&nd->key, f.cookie, i);
        mpx_conn_set_tag(&nd->c, mpx_key_tag, &nd->key, MPX_DIR_FRONT, MPX_DIR_PROXY);
    }
    struct pend *p = calloc(1, sizeof(*p));
    if (!p) {
        close(sv[0]);
        close(sv[1]);
        goto out;
    }
    p->f = &f;
    snprintf(p->peer, sizeof(p->peer), "fuzz");
    mpx_conn_init(&p->c, sv[0]);
    p->w = loop_watch_add(f.lp, sv[0], LOOP_READ, front_pend_cb, p);
    p->next = f.pending;
    f.pending = p;
    f.npending++;
    feed(sv[1], data, size);
    for (int i = 0; i < 64 && f.pending; i++)
        front_pend_cb(f.lp, p->w, sv[0], LOOP_READ, p);
    for (int i = 0; i < f.nnodes; i++) {
        struct fnode *nd = &f.nodes[i];
        if (!nd->connected)
            continue;
        /* attached: only after the proof (HELLO2 + PROOF are in the input) */
        if (f.nconnected > f.nnodes)
            __builtin_trap();
        nd->c.tag = NULL; /* fuzz what node_frame does with the frames */
        for (int k = 0; k < 64 && nd->w; k++)
            front_node_cb(f.lp, nd->w, nd->c.s.fd, LOOP_READ | LOOP_WRITE, nd);
    }
    close(sv[1]);
out:
    while (f.pending)
        front_pend_free(&f, f.pending);
    for (int i = 0; f.nodes && i < f.nnodes; i++)
        front_node_close(&f.nodes[i]);
    for (int r = 0; f.fwd && r < f.ly.size * 2; r++)
        iobuf_free(&f.fwd[r].part);
    for (int k = 0; k < 3; k++)
        iobuf_free(&f.con.obuf[k]);
    if (f.lp)
        loop_destroy(f.lp);
    free(f.nodes);
    free(f.fwd);
    free(f.exited);
    mpx_layout_free(&f.ly);
}

static void proxy_side(const uint8_t *data, size_t size)
{
    struct mpx_conn c;
    char why[160];
    int sv[2];
    uint8_t type;
    const uint8_t *body;
    size_t len;

    if (pair(sv) < 0)
        return;
    feed(sv[1], data, size);
    mpx_conn_init(&c, sv[0]);
    if (proxy_handshake(&c, COOKIE, 1, "fuzzhost", loop_now_ms() + 200, why,
                        sizeof(why)) == 0) {
        if (!c.tag)
            __builtin_trap();
        while (mpx_conn_next(&c, &type, &body, &len) == 1)
            ;
    }
    mpx_conn_free(&c, 1);
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    switch (data[0] % 3) {
    case 0:
        conn_stream(data + 1, size - 1, data[0] & 4);
        break;
    case 1:
        front_side(data + 1, size - 1);
        break;
    default:
        proxy_side(data + 1, size - 1);
        break;
    }
    return 0;
}
