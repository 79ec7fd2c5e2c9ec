/* fuzz_rdv.c - libFuzzer target: the rendezvous messages (treenet/rdv.c) from both
 * ends: what a stranger or a node sends to the server, and what a server (srun: the
 * job owner's process) sends back to a node.
 *
 * fuzz-sources: treenet/auth.c treenet/util.c common/net.c common/log.c common/fdio.c
 * fuzz-sources: common/mac.c common/ktree.c
 * fuzz-cflags: -Itreenet -Icommon
 * fuzz-libs: -lmunge -lpthread
 * fuzz-options: -max_len=65536
 *
 * Contract: the target includes treenet/rdv.c (its statics are the state).  Input byte
 * 0, bit 2 picks the credential mode: set, TREENET_AUTH_COOKIE with the cookie
 * FZ_COOKIE; clear, TREENET_AUTH_NONE.  Bit 0 picks:
 *   even  the server side: a server for 1 + (byte0 >> 1 & 1) nodes (TREENET_AUTH_NONE,
 *         built as rdv_server_start_log builds it, without its thread; bit 3 set: a tree
 *         of width 1, else width 0, every node's address) with one accepted
 *         connection whose nonce is 32 '0' (LOOM_FUZZ); the rest of the input arrives on
 *         it, then end of stream; on_read/on_write run as the poll loop would.
 *   odd   the node side: exchange_on() of node 0 of 2 over a socketpair whose other end
 *         sent the rest of the input (the server's nonce, its answer credential, the
 *         table) and closed.
 * Invariants (a trap is a finding): a registered node id is in range and its address
 * parses; a node side success gives its own address and any other it was told, each
 * parsing.  Everything is freed
 * per input.
 * Seeds: corpus/rdv/: a node's real registration (credential + "port p"; also in the
 * cookie mode), a leaf's
 * "port 0", a node's "fail <reason>", a stranger's HTTP request, a server's real nonce +
 * answer + table ("<node> <addr>" lines), a server's "fail <node> <reason>" answer, a
 * table naming a node out of range, twice, only the node itself, the old one-address
 * lines, a registration to a tree server, a 4 GiB frame length.
 */
#include "../../treenet/rdv.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_COOKIE "fuzz-cookie-0123456789abcdef0123456789abcdef0123456789abcdef0123"

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

static void server_side(const uint8_t *data, size_t size, int nnodes, int width,
                        int cookie)
{
    struct rdv_server *s = calloc(1, sizeof(*s));
    int sv[2];

    if (!s || pair(sv) < 0) {
        free(s);
        return;
    }
    s->nnodes = nnodes;
    s->width = width;
    s->failed_node = -1;
    snprintf(s->jobkey, sizeof(s->jobkey), "77.0");
    s->uid = 0;
    s->auth = cookie ? TREENET_AUTH_COOKIE : TREENET_AUTH_NONE;
    if (cookie)
        snprintf(s->cookie, sizeof(s->cookie), "%s", FZ_COOKIE);
    s->lfd = s->spare_fd = -1;
    s->node_conn = malloc(nnodes * sizeof(int));
    s->addr = calloc(nnodes, sizeof(char *));
    s->served = calloc(nnodes, sizeof(bool));
    s->lip = calloc(nnodes, sizeof(*s->lip));
    s->told_width = calloc(nnodes, sizeof(int));
    s->conns = calloc(1, sizeof(*s->conns));
    for (int i = 0; i < nnodes; i++)
        s->node_conn[i] = -1;
    s->nconns = s->capconns = 1;
    struct rconn *c = &s->conns[0];
    c->fd = sv[0];
    c->node = -1;
    c->st = RS_CRED;
    c->puid = TN_UID_ANY;
    snprintf(c->ip, sizeof(c->ip), "10.0.0.1");
    snprintf(c->lip, sizeof(c->lip), "10.0.0.9");
    tn_nonce_new(c->nonce);
    feed(sv[1], data, size);
    for (int i = 0; i < 64 && s->conns[0].st != RS_CLOSED; i++) {
        if (s->conns[0].st == RS_SEND)
            on_write(s, 0);
        else
            on_read(s, 0);
        char junk[4096];
        while (recv(sv[1], junk, sizeof(junk), MSG_DONTWAIT) > 0)
            ;
    }
    for (int n = 0; n < nnodes; n++) {
        struct sockaddr_storage ss;
        socklen_t sl;
        if (s->addr[n] && loom_addr_parse(s->addr[n], &ss, &sl) < 0)
            __builtin_trap();
    }
    if (s->conns[0].st != RS_CLOSED) {
        close(s->conns[0].fd);
        free(s->conns[0].out);
    }
    close(sv[1]);
    for (int i = 0; i < nnodes; i++)
        free(s->addr[i]);
    free(s->addr);
    free(s->node_conn);
    free(s->served);
    free(s->lip);
    free(s->told_width);
    free(s->conns);
    free(s);
}

static void node_side(const uint8_t *data, size_t size, int cookie)
{
    int sv[2];
    char **addrs = NULL;

    if (pair(sv) < 0)
        return;
    feed(sv[1], data, size);
    int rc = exchange_on(sv[0], "77.0", 0, 2, 0, 0, 5000, NULL,
                         cookie ? TREENET_AUTH_COOKIE : TREENET_AUTH_NONE,
                         cookie ? FZ_COOKIE : NULL, now_ms() + 200, &addrs);
    if (rc == 0) {
        if (!addrs[0]) /* its own line is required */
            __builtin_trap();
        for (int i = 0; i < 2; i++) {
            struct sockaddr_storage ss;
            socklen_t sl;
            if (addrs[i] && loom_addr_parse(addrs[i], &ss, &sl) < 0)
                __builtin_trap();
        }
        rdv_addrs_free(addrs, 2);
    }
    close(sv[0]);
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    if (data[0] & 1)
        node_side(data + 1, size - 1, data[0] & 4);
    else
        server_side(data + 1, size - 1, 1 + ((data[0] >> 1) & 1), (data[0] >> 3) & 1,
                    data[0] & 4);
    return 0;
}
