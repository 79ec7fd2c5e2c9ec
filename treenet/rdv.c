/* rdv.c - the rendezvous: one server thread collects every node's listening
 * address and hands each node the addresses of its tree neighbours; the
 * node side is one blocking, bounded call.
 *
 * Contract: see treenet.h (rdv_*) and doc/treenet.md (wire format).
 *
 * Design:
 *   The server is a poll() loop in a thread of its own over the listening
 *   socket, a wake-up pipe (rdv_server_stop) and every connection, bounded
 *   by the job's timeout.  The server speaks first: a nonce frame.  A
 *   connection must then send a credential frame ("loom2 <jobkey> <node> rdv
 *   <our nonce> <its nonce>") and "port <p>" (0: a leaf that does not
 *   listen); the node's address is the connection's source IP with that
 *   port.  Once all nnodes nodes are registered, each gets a credential
 *   ("loom2 <jobkey> rdv <node> <its nonce> <our nonce>", decodable only by
 *   the uid of the node's credential) and its table, then its connection is
 *   closed.  A node's table is "<node> <addr>" lines for itself, its parent
 *   and its children (ktree over the width the server was given, or, given
 *   none, the one every node named as "port <p> width <w>"; no width: every
 *   node), so a node receives O(width) bytes, not O(nnodes).  The format is
 *   not versioned: one install serves the server (srun, mpiexec) and every
 *   node, so the old one-address-a-line table never meets the new reader.
 *   A node whose connection breaks before it got the table is unregistered
 *   and may come back; a second registration of a node replaces the first.  Connections
 * that do not authenticate are refused (closed, logged) and the others are served on.
 * Strangers cannot hold the port: an unauthenticated connection gets RDV_HS_MS, at most
 * TN_PENDING_MAX wait at once (one more evicts the oldest), and accept errors for lack of
 * fds are absorbed with a spare fd; refusals are logged rate-limited.
 *
 * Caveats:
 *   - The log callback of rdv_server_start_log() runs in the server thread.
 *   - The client side checks the server's credential against the job key,
 *     its node id, its nonce and the job's uid (rdv_exchange_uid).  The
 *     server is the job owner's process (srun): the table it sends is only a
 *     list of addresses to try; a node connects there, waits for the
 *     listener's nonce, and hands over only a credential bound to that
 *     nonce and decodable by root alone (doc/treenet.md).
 *
 * One piece (about 1450 lines): the server thread and the node's blocking
 *   call are the two ends of one exchange; they share its frame layout and
 *   the credential order, which must be read side by side.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ktree.h"
#include "log.h"
#include "tn_int.h"

#define RDV_HS_MS TN_HS_DEFAULT_MS /* an unauthenticated connection gets this long */
#define RDV_LOG_BURST 16           /* refusal lines per window ... */
#define RDV_LOG_WINDOW_MS 10000    /* ... then one summary line */
#define RDV_FAIL_MAX 200           /* bytes of a node's reason kept */
#define RDV_WIDTH_MAX 1024         /* the widest tree (LoomTreeWidth's bound) */

typedef void (*rdv_log_f)(void *arg, int level, const char *msg);

enum rstate { RS_CRED, RS_REG, RS_WAIT, RS_SEND, RS_CLOSED };

struct rconn {
    int fd;
    enum rstate st;
    int node;
    char ip[TREENET_ADDR_MAX];  /* the peer's address */
    char lip[TREENET_ADDR_MAX]; /* ours, on this connection */
    uint8_t hdr[4];
    size_t hgot;
    uint8_t body[TN_CRED_MAX + 1];
    size_t blen, bgot;
    char *out;
    size_t outlen, outoff;
    uint8_t nf[TN_NONCE_HEX + 12]; /* our nonce frame, until all of it is sent */
    size_t nflen, nfoff;
    uint64_t hs_deadline, t_accept;
    char nonce[TN_NONCE_HEX + 1];  /* ours on this connection */
    char pnonce[TN_NONCE_HEX + 1]; /* the node's */
    uid_t puid;                    /* uid of the node's credential */
};

struct rdv_server {
    int nnodes;
    char jobkey[TN_JOBKEY_MAX + 1];
    uid_t uid;
    enum treenet_auth auth;
    char cookie[TN_COOKIE_MAX + 1]; /* TREENET_AUTH_COOKIE's key, else empty */
    int timeout_ms;
    int lfd, port;
    int wake[2];
    pthread_t th;
    atomic_int stop;
    int result;
    rdv_log_f log;
    void *log_arg;
    /* thread-owned */
    struct rconn *conns;
    int nconns, capconns;
    int *node_conn;                /* index in conns, -1 */
    char **addr;                   /* registered address per node */
    char (*lip)[TREENET_ADDR_MAX]; /* our address on that node's connection */
    bool *served;
    int nreg, nserved;
    bool table;                  /* every node registered: tables go out */
    int width;                   /* the tree's children per node; 0: every node */
    int *told_width;             /* the width each node's registration named, or 0 */
    int failed_node;             /* the first node that said it cannot join, or -1 */
    char fail[RDV_FAIL_MAX + 32]; /* "fail <node> <reason>": every node's answer then */
    uint64_t listen_paused_until;
    int spare_fd;
    uint64_t log_win;
    int log_n;
    long log_quiet;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void rlog(struct rdv_server *s, int level, const char *fmt, ...) LOOM_PRINTF(3, 4);

static void rlog(struct rdv_server *s, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (!s->log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    s->log(s->log_arg, level, line);
}

/* Both frames (credential + payload) in one malloc'ed buffer. */
static char *two_frames(const char *a, size_t alen, const char *b, size_t blen,
                        size_t *outlen)
{
    char *o = malloc(8 + alen + blen);
    if (!o)
        return NULL;
    tn_put_u32((uint8_t *)o, alen);
    memcpy(o + 4, a, alen);
    tn_put_u32((uint8_t *)o + 4 + alen, blen);
    memcpy(o + 8 + alen, b, blen);
    *outlen = 8 + alen + blen;
    return o;
}

static void rc_close(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];
    if (c->st == RS_CLOSED)
        return;
    if (c->node >= 0 && s->node_conn[c->node] == i)
        s->node_conn[c->node] = -1;
    if (c->st == RS_WAIT || c->st == RS_SEND) {
        if (c->node >= 0 && s->node_conn[c->node] == -1 && !s->table &&
            s->addr[c->node]) {
            /* it may come back; until then it is not registered */
            free(s->addr[c->node]);
            s->addr[c->node] = NULL;
            s->nreg--;
        }
    }
    close(c->fd);
    c->fd = -1;
    free(c->out);
    c->out = NULL;
    c->st = RS_CLOSED;
}

/* Refusals are logged RDV_LOG_BURST per window, then counted. */
static void refused_log(struct rdv_server *s, const char *ip, const char *why)
{
    uint64_t now = now_ms();

    if (now - s->log_win >= RDV_LOG_WINDOW_MS) {
        if (s->log_quiet)
            rlog(s, LOOM_LOG_WARN, "rdv: %ld more connections refused (not logged)",
                 s->log_quiet);
        s->log_win = now;
        s->log_n = 0;
        s->log_quiet = 0;
    }
    if (s->log_n++ < RDV_LOG_BURST)
        rlog(s, LOOM_LOG_WARN, "rdv: refused connection from %s: %s", ip, why);
    else
        s->log_quiet++;
}

static void refuse(struct rdv_server *s, int i, const char *why)
{
    refused_log(s, s->conns[i].ip, why);
    rc_close(s, i);
}

/* Queue the answer for conn i: the table (all nodes registered) or, once a
 * node said it cannot join, the failure. */
/* Node n's table: one "<node> <addr>" line for n itself, its parent and its
 * children (s->width 0: for every node).  Malloc'ed; NULL: no memory. */
static char *node_table(struct rdv_server *s, int n, size_t *len)
{
    int nb[RDV_WIDTH_MAX + 2], k = 0, lo, hi;
    size_t cap = 0, off = 0;
    char *t;

    if (s->width > 0) {
        nb[k++] = n;
        if (n > 0)
            nb[k++] = ktree_parent(s->width, s->nnodes, n);
        k += ktree_children(s->width, s->nnodes, n, nb + k);
        lo = 0, hi = k;
    } else {
        lo = 0, hi = s->nnodes;
    }
    for (int j = lo; j < hi; j++)
        cap += strlen(s->addr[s->width > 0 ? nb[j] : j]) + 16;
    t = malloc(cap + 1);
    if (!t)
        return NULL;
    for (int j = lo; j < hi; j++) {
        int m = s->width > 0 ? nb[j] : j;
        off += (size_t)snprintf(t + off, cap + 1 - off, "%d %s\n", m, s->addr[m]);
    }
    *len = off;
    return t;
}

static void send_table(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];
    char *cred = NULL, to[16], why[TN_WHY_MAX], *table;
    size_t tablelen = 0;

    snprintf(to, sizeof(to), "%d", c->node);
    if (tn_cred_make_k(s->auth, s->cookie, s->jobkey, "rdv", to, c->pnonce, c->nonce,
                       c->puid, &cred, why) < 0) {
        rlog(s, LOOM_LOG_ERROR, "rdv: node %d: %s", c->node, why);
        rc_close(s, i);
        return;
    }
    if (s->failed_node >= 0)
        c->out = two_frames(cred, strlen(cred), s->fail, strlen(s->fail), &c->outlen);
    else if ((table = node_table(s, c->node, &tablelen))) {
        c->out = two_frames(cred, strlen(cred), table, tablelen, &c->outlen);
        free(table);
    }
    free(cred);
    if (!c->out) {
        rc_close(s, i);
        return;
    }
    c->outoff = 0;
    c->st = RS_SEND;
}

static bool is_loopback(const char *addr)
{
    struct sockaddr_storage ss;
    socklen_t sl;

    if (loom_addr_parse(addr, &ss, &sl) < 0)
        return false;
    if (ss.ss_family == AF_INET)
        return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) ||
               (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* A node that reached us over loopback shares our host (typically srun
 * started on the first node of an allocation, whose host name maps to
 * 127.0.1.1).  Its loopback address is useless to the other nodes: publish
 * it under the address by which another node reached us, i.e. this host's
 * address on the network the nodes share.  Nodes listen on any address. */
static void fix_loopback(struct rdv_server *s)
{
    const char *ext = NULL;
    int loop = 0;

    for (int n = 0; n < s->nnodes; n++) {
        if (is_loopback(s->addr[n]))
            loop++;
        else if (!ext && s->lip[n][0])
            ext = s->lip[n];
    }
    if (!loop || !ext)
        return;
    for (int n = 0; n < s->nnodes; n++) {
        const char *port = strrchr(s->addr[n], ':');
        char a[TREENET_ADDR_MAX + 8], *d;
        if (!is_loopback(s->addr[n]) || !port)
            continue;
        snprintf(a, sizeof(a), strchr(ext, ':') ? "[%s]%s" : "%s%s", ext, port);
        d = strdup(a);
        if (!d)
            continue;
        rlog(s, LOOM_LOG_INFO,
             "rdv: node %d reached us over loopback (%s): published as %s", n, s->addr[n],
             d);
        free(s->addr[n]);
        s->addr[n] = d;
    }
}

/* A server told no width (srun: the stepds' LoomTreeWidth is theirs) takes
 * the one every node named; nodes that name none or disagree get every
 * address, as a server without a tree gives. */
static void learn_width(struct rdv_server *s)
{
    int w = s->told_width[0];

    if (s->width > 0 || w == 0)
        return;
    for (int n = 1; n < s->nnodes; n++)
        if (s->told_width[n] != w) {
            rlog(s, LOOM_LOG_WARN,
                 "rdv: node %d names tree width %d, node 0 %d: every node gets every "
                 "address",
                 n, s->told_width[n], w);
            return;
        }
    s->width = w;
    rlog(s, LOOM_LOG_DEBUG, "rdv: tree width %d, as the nodes named it", w);
}

static void all_registered(struct rdv_server *s)
{
    fix_loopback(s);
    learn_width(s);
    s->table = true;
    rlog(s, LOOM_LOG_DEBUG, "rdv: all %d nodes registered", s->nnodes);
    for (int n = 0; n < s->nnodes; n++)
        if (s->node_conn[n] >= 0)
            send_table(s, s->node_conn[n]);
}

/* Conn i's node says it cannot join ("fail <reason>"): say why once, answer
 * every node that waits or comes later with the failure instead of a table,
 * so that none of them waits for its timeout.  The failing node itself
 * counts as served.  After the table went out, only the line is left. */
static void node_failed(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];
    char why[RDV_FAIL_MAX + 1];
    size_t n = 0;

    /* printable ASCII only, bounded: it is quoted to every node and logged */
    for (const uint8_t *p = c->body + 5; *p && n < RDV_FAIL_MAX; p++)
        why[n++] = (*p >= 0x20 && *p < 0x7f) ? (char)*p : '?';
    why[n] = '\0';
    if (!s->served[c->node]) {
        s->served[c->node] = true;
        s->nserved++;
    }
    if (s->failed_node >= 0 || s->table) {
        rlog(s, LOOM_LOG_INFO, "rdv: node %d cannot join the tree either: %s", c->node,
             why);
        rc_close(s, i);
        return;
    }
    s->failed_node = c->node;
    snprintf(s->fail, sizeof(s->fail), "fail %d %s", c->node, why);
    rlog(s, LOOM_LOG_ERROR, "rdv: node %d cannot join the tree: %s", c->node, why);
    rc_close(s, i);
    for (int k = 0; k < s->nconns; k++)
        if (s->conns[k].st == RS_WAIT)
            send_table(s, k);
}

static void got_frame(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];
    char why[TN_WHY_MAX], from[32], *end;
    long node, port, width;

    if (c->st == RS_CRED) {
        int rc = tn_cred_check_k(s->auth, s->cookie, c->body, c->blen, s->uid, s->jobkey,
                                 "rdv", c->nonce, from, sizeof(from), c->pnonce, &c->puid,
                                 why);
        if (rc < 0) {
            /* our own munge failing is no refusal of the peer: an error */
            if (rc != -EACCES)
                rlog(s, LOOM_LOG_ERROR, "rdv: %s", why);
            refuse(s, i, why);
            return;
        }
        errno = 0;
        node = strtol(from, &end, 10);
        if (errno || *end || end == from || node < 0 || node >= s->nnodes) {
            refuse(s, i, "credential names no node of this job");
            return;
        }
        c->node = (int)node;
        c->st = RS_REG;
        return;
    }
    if (c->st != RS_REG) {
        refuse(s, i, "unexpected data");
        return;
    }
    c->body[c->blen] = '\0';
    if (c->blen >= 5 && memcmp(c->body, "fail ", 5) == 0) {
        node_failed(s, i);
        return;
    }
    if (c->blen < 6 || memcmp(c->body, "port ", 5) != 0) {
        refuse(s, i, "malformed registration");
        return;
    }
    errno = 0;
    port = strtol((char *)c->body + 5, &end, 10);
    if (errno || (*end && *end != ' ') || port < 0 || port > 65535) {
        refuse(s, i, "malformed registration port");
        return;
    }
    width = 0;
    if (*end) { /* " width <w>": the node's tree, for a server told none */
        if (strncmp(end, " width ", 7) != 0 || end[7] < '1' || end[7] > '9') {
            refuse(s, i, "malformed registration");
            return;
        }
        width = strtol(end + 7, &end, 10);
        if (errno || *end || width < 1 || width > RDV_WIDTH_MAX) {
            refuse(s, i, "malformed registration width");
            return;
        }
    }
    {
        char a[TREENET_ADDR_MAX + 8];
        int old = s->node_conn[c->node];
        snprintf(a, sizeof(a), strchr(c->ip, ':') ? "[%s]:%ld" : "%s:%ld", c->ip, port);
        if (old >= 0 && old != i) {
            rlog(s, LOOM_LOG_INFO,
                 "rdv: node %d reconnected, dropping its old connection", c->node);
            s->conns[old].node = -1; /* keep the registration */
            close(s->conns[old].fd);
            s->conns[old].fd = -1;
            free(s->conns[old].out);
            s->conns[old].out = NULL;
            s->conns[old].st = RS_CLOSED;
        }
        if (!s->addr[c->node]) {
            s->addr[c->node] = strdup(a);
            if (!s->addr[c->node]) {
                rc_close(s, i);
                return;
            }
            if (!s->table)
                s->nreg++;
        } else if (strcmp(s->addr[c->node], a) != 0) {
            if (s->table) {
                rlog(s, LOOM_LOG_WARN, "rdv: node %d came back as %s, table says %s",
                     c->node, a, s->addr[c->node]);
            } else {
                free(s->addr[c->node]);
                s->addr[c->node] = strdup(a);
                if (!s->addr[c->node]) {
                    s->nreg--;
                    rc_close(s, i);
                    return;
                }
            }
        }
        if (!s->table)
            s->told_width[c->node] = (int)width;
        s->node_conn[c->node] = i;
        snprintf(s->lip[c->node], sizeof(s->lip[c->node]), "%s", c->lip);
        c->st = RS_WAIT;
        rlog(s, LOOM_LOG_DEBUG, "rdv: node %d registered at %s", c->node, a);
    }
    if (s->table || s->failed_node >= 0)
        send_table(s, i);
    else if (s->nreg == s->nnodes)
        all_registered(s);
}

static void on_read(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];

    for (;;) {
        ssize_t n;
        if (c->st == RS_CLOSED)
            return;
        if (c->hgot < 4)
            n = recv(c->fd, c->hdr + c->hgot, 4 - c->hgot, 0);
        else
            n = recv(c->fd, c->body + c->bgot, c->blen - c->bgot, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            if (c->st == RS_CRED)
                refuse(s, i, strerror(errno));
            else
                rc_close(s, i);
            return;
        }
        if (n == 0) {
            if (c->st == RS_CRED || c->st == RS_REG)
                refuse(s, i, "closed before registering");
            else if (c->st == RS_WAIT) {
                rlog(s, LOOM_LOG_INFO, "rdv: node %d went away before the table",
                     c->node);
                rc_close(s, i);
            } else
                rc_close(s, i);
            return;
        }
        if (c->st == RS_WAIT || c->st == RS_SEND) {
            rlog(s, LOOM_LOG_WARN, "rdv: node %d sent unexpected data", c->node);
            rc_close(s, i);
            return;
        }
        if (c->hgot < 4) {
            c->hgot += n;
            if (c->hgot == 4) {
                c->blen = tn_get_u32(c->hdr);
                c->bgot = 0;
                if (c->blen == 0 || c->blen > TN_CRED_MAX) {
                    refuse(s, i, "bad frame length");
                    return;
                }
            }
            continue;
        }
        c->bgot += n;
        if (c->bgot == c->blen) {
            c->hgot = 0;
            got_frame(s, i);
        }
    }
}

static void on_write(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];

    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            rc_close(s, i);
            return;
        }
        c->outoff += n;
    }
    if (!s->served[c->node]) {
        s->served[c->node] = true;
        s->nserved++;
    }
    rc_close(s, i);
}

/* Send what is left of conn i's nonce frame.  0 (sent, or the rest waits
 * for POLLOUT), or -1 (refused and closed). */
static int send_nonce(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];

    while (c->nfoff < c->nflen) {
        ssize_t n = send(c->fd, c->nf + c->nfoff, c->nflen - c->nfoff, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            refuse(s, i, "cannot send the nonce");
            return -1;
        }
        c->nfoff += (size_t)n;
    }
    return 0;
}

/* accept() failed for lack of descriptors: take one connection with the
 * spare fd and drop it, so the backlog cannot make the loop spin. */
static void accept_shed(struct rdv_server *s)
{
    if (s->spare_fd >= 0) {
        close(s->spare_fd);
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0)
            close(fd);
        s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    refused_log(s, "?", "out of file descriptors (connection shed)");
    if (s->spare_fd < 0)
        s->listen_paused_until = now_ms() + 100;
}

static void on_accept(struct rdv_server *s)
{
    for (int k = 0; k < 64; k++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd =
            accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        int pending = 0, oldest = -1;
        size_t nl;

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                accept_shed(s);
            return;
        }
        for (int i = 0; i < s->nconns; i++)
            if (s->conns[i].st == RS_CRED) {
                pending++;
                if (oldest < 0 || s->conns[i].t_accept < s->conns[oldest].t_accept)
                    oldest = i;
            }
        if (pending >= TN_PENDING_MAX && oldest >= 0)
            refuse(s, oldest, "evicted: too many unauthenticated connections");
        if (s->nconns == s->capconns) {
            int cap = s->capconns ? s->capconns * 2 : 16;
            void *p = realloc(s->conns, cap * sizeof(*s->conns));
            if (!p) {
                close(fd);
                return;
            }
            s->conns = p;
            s->capconns = cap;
        }
        struct rconn *c = &s->conns[s->nconns++];
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->node = -1;
        c->st = RS_CRED;
        c->puid = TN_UID_ANY;
        c->t_accept = now_ms();
        c->hs_deadline = c->t_accept + RDV_HS_MS;
        tn_addr_format((struct sockaddr *)&ss, 0, c->ip, sizeof(c->ip));
        sl = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
            tn_addr_format((struct sockaddr *)&ss, 0, c->lip, sizeof(c->lip));
        tn_nodelay(fd);
        /* we speak first: the nonce every credential on this connection binds.
         * A fresh socket's buffer takes these few bytes at once in practice,
         * but a short or EAGAIN send is legal: the rest waits for POLLOUT
         * (the handshake deadline bounds it) */
        if (tn_nonce_new(c->nonce) < 0) {
            refuse(s, s->nconns - 1, "no random numbers for a nonce");
            continue;
        }
        nl = tn_nonce_frame(c->nonce, (char *)c->nf + 4);
        tn_put_u32(c->nf, (uint32_t)nl);
        c->nflen = 4 + nl;
        c->nfoff = 0;
        send_nonce(s, s->nconns - 1);
    }
}

/* Drop closed entries, keeping node_conn indices right. */
static void compact(struct rdv_server *s)
{
    int j = 0;
    for (int i = 0; i < s->nconns; i++) {
        if (s->conns[i].st == RS_CLOSED)
            continue;
        if (i != j) {
            s->conns[j] = s->conns[i];
            if (s->conns[j].node >= 0 && s->node_conn[s->conns[j].node] == i)
                s->node_conn[s->conns[j].node] = j;
        }
        j++;
    }
    s->nconns = j;
}

static void *rdv_thread(void *arg)
{
    struct rdv_server *s = arg;
    uint64_t deadline = now_ms() + s->timeout_ms;
    struct pollfd *pf = NULL;
    int cap = 0;

    s->result = -ETIMEDOUT;
    while (!atomic_load(&s->stop)) {
        uint64_t now = now_ms(), next = deadline;
        int n = 2, rc;

        if (s->nserved == s->nnodes) {
            s->result = s->failed_node >= 0 ? -ECANCELED : 0;
            break;
        }
        if (now >= deadline) {
            if (s->failed_node < 0)
                rlog(s, LOOM_LOG_ERROR, "rdv: timed out with %d of %d nodes registered",
                     s->nreg, s->nnodes);
            else
                s->result = -ECANCELED;
            break;
        }
        if (cap < s->nconns + 2) {
            cap = s->nconns + 18;
            void *p = realloc(pf, cap * sizeof(*pf));
            if (!p) {
                s->result = -ENOMEM;
                break;
            }
            pf = p;
        }
        pf[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        pf[1] = (struct pollfd){.fd = now < s->listen_paused_until ? -1 : s->lfd,
                                .events = POLLIN};
        if (now < s->listen_paused_until && s->listen_paused_until < next)
            next = s->listen_paused_until;
        for (int i = 0; i < s->nconns; i++) {
            struct rconn *c = &s->conns[i];
            short ev = c->st == RS_SEND ? POLLOUT : POLLIN;
            if (c->st == RS_CRED && c->nfoff < c->nflen)
                ev |= POLLOUT; /* the rest of our nonce frame */
            pf[n++] = (struct pollfd){.fd = c->fd, .events = ev};
            if ((c->st == RS_CRED || c->st == RS_REG) && c->hs_deadline < next)
                next = c->hs_deadline;
        }
        rc = poll(pf, n, next > now ? (int)(next - now) : 0);
        if (rc < 0 && errno != EINTR) {
            s->result = -errno;
            break;
        }
        if (rc > 0 && pf[0].revents)
            break;
        now = now_ms();
        for (int i = 0; i < s->nconns && rc > 0; i++) {
            short re = pf[i + 2].revents;
            if (!re || s->conns[i].st == RS_CLOSED)
                continue;
            if (s->conns[i].st == RS_SEND && (re & (POLLOUT | POLLERR | POLLHUP)))
                on_write(s, i);
            else {
                if (s->conns[i].st == RS_CRED && s->conns[i].nfoff < s->conns[i].nflen &&
                    (re & (POLLOUT | POLLERR)) && send_nonce(s, i) < 0)
                    continue;
                if (re & (POLLIN | POLLERR | POLLHUP))
                    on_read(s, i);
            }
        }
        for (int i = 0; i < s->nconns; i++) {
            struct rconn *c = &s->conns[i];
            if ((c->st == RS_CRED || c->st == RS_REG) && c->hs_deadline <= now)
                refuse(s, i, "no registration before the timeout");
        }
        if (rc > 0 && pf[1].revents)
            on_accept(s);
        compact(s);
    }
    /* stop may come right after the last node read its table */
    if (s->nserved == s->nnodes)
        s->result = s->failed_node >= 0 ? -ECANCELED : 0;
    for (int n = 0; n < s->nnodes && s->nserved < s->nnodes; n++)
        if (!s->served[n])
            rlog(s, LOOM_LOG_INFO, "rdv: node %d not served (%s)", n,
                 s->addr[n] ? "registered" : "not registered");
        else if (atomic_load(&s->stop) && s->result == -ETIMEDOUT)
            s->result = -ECANCELED;
    free(pf);
    for (int i = 0; i < s->nconns; i++)
        if (s->conns[i].st != RS_CLOSED) {
            close(s->conns[i].fd);
            free(s->conns[i].out);
        }
    s->nconns = 0;
    return NULL;
}

static struct rdv_server *server_start(int nnodes, int width, const char *jobkey,
                                       uid_t uid, enum treenet_auth auth,
                                       const char *cookie, const char *bind_addr,
                                       unsigned port_lo, unsigned port_hi, int timeout_ms,
                                       void (*log)(void *arg, int level, const char *msg),
                                       void *log_arg)
{
    struct rdv_server *s;
    int rc;

    if (nnodes < 1 || width < 0 || width > RDV_WIDTH_MAX || tn_jobkey_ok(jobkey) < 0 ||
        timeout_ms <= 0 || (auth == TREENET_AUTH_COOKIE && tn_cookie_ok(cookie) < 0) ||
        (port_lo == 0) != (port_hi == 0) || port_hi > 65535 || port_hi < port_lo) {
        errno = EINVAL;
        return NULL;
    }
    if ((rc = tn_auth_supported(auth)) < 0) {
        errno = -rc;
        return NULL;
    }
    /* The server must make a credential for every node: with munged stopped
     * it could only time out, and the nodes' own view of it (each on its
     * host) never reaches the job's owner.  One credential now (a munged
     * round trip) says why on the owner's side at once. */
    if (auth == TREENET_AUTH_MUNGE) {
        char why[TN_WHY_MAX], *cred = NULL, n0[TN_NONCE_HEX + 1];
        memset(n0, '0', TN_NONCE_HEX);
        n0[TN_NONCE_HEX] = '\0';
        rc = tn_cred_make(auth, jobkey, "rdv", "rdv", n0, n0, uid, &cred, why);
        free(cred);
        if (rc < 0) {
            if (log) {
                char line[TN_WHY_MAX + 64];
                snprintf(line, sizeof(line), "rdv: %s", why);
                log(log_arg, LOOM_LOG_ERROR, line);
            }
            errno = -rc;
            return NULL;
        }
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->lfd = s->wake[0] = s->wake[1] = -1;
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    s->nnodes = nnodes;
    s->width = width;
    s->failed_node = -1;
    snprintf(s->jobkey, sizeof(s->jobkey), "%s", jobkey);
    s->uid = uid;
    s->auth = auth;
    if (auth == TREENET_AUTH_COOKIE)
        snprintf(s->cookie, sizeof(s->cookie), "%s", cookie);
    s->timeout_ms = timeout_ms;
    s->log = log;
    s->log_arg = log_arg;
    s->node_conn = malloc(nnodes * sizeof(int));
    s->addr = calloc(nnodes, sizeof(char *));
    s->served = calloc(nnodes, sizeof(bool));
    s->lip = calloc(nnodes, sizeof(*s->lip));
    s->told_width = calloc(nnodes, sizeof(int));
    if (!s->node_conn || !s->addr || !s->served || !s->lip || !s->told_width)
        goto fail;
    for (int i = 0; i < nnodes; i++)
        s->node_conn[i] = -1;
    /* any port, or one in the caller's range */
    rc = loom_listen(bind_addr, port_lo, port_hi, 1024, &s->port);
    if (rc < 0) {
        errno = -rc;
        goto fail;
    }
    s->lfd = rc;
    if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0)
        goto fail;
    rc = pthread_create(&s->th, NULL, rdv_thread, s);
    if (rc) {
        errno = rc;
        goto fail;
    }
    return s;
fail:
    rc = errno ? errno : ENOMEM;
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->spare_fd >= 0)
        close(s->spare_fd);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    free(s->node_conn);
    free(s->addr);
    free(s->served);
    free(s->lip);
    free(s->told_width);
    free(s);
    errno = rc;
    return NULL;
}

struct rdv_server *
rdv_server_start_ports(int nnodes, int width, const char *jobkey, uid_t uid,
                       enum treenet_auth auth, const char *bind_addr, unsigned port_lo,
                       unsigned port_hi, int timeout_ms,
                       void (*log)(void *arg, int level, const char *msg), void *log_arg)
{
    if (auth == TREENET_AUTH_COOKIE) { /* needs its key: rdv_server_start_cookie */
        errno = EINVAL;
        return NULL;
    }
    return server_start(nnodes, width, jobkey, uid, auth, NULL, bind_addr, port_lo,
                        port_hi, timeout_ms, log, log_arg);
}

struct rdv_server *
rdv_server_start_cookie(int nnodes, int width, const char *jobkey, const char *cookie,
                        const char *bind_addr, unsigned port_lo, unsigned port_hi,
                        int timeout_ms,
                        void (*log)(void *arg, int level, const char *msg), void *log_arg)
{
    return server_start(nnodes, width, jobkey, geteuid(), TREENET_AUTH_COOKIE, cookie,
                        bind_addr, port_lo, port_hi, timeout_ms, log, log_arg);
}

struct rdv_server *
rdv_server_start_log(int nnodes, const char *jobkey, uid_t uid, enum treenet_auth auth,
                     const char *bind_addr, int timeout_ms,
                     void (*log)(void *arg, int level, const char *msg), void *log_arg)
{
    return rdv_server_start_ports(nnodes, 0, jobkey, uid, auth, bind_addr, 0, 0,
                                  timeout_ms, log, log_arg);
}

struct rdv_server *rdv_server_start(int nnodes, const char *jobkey, uid_t uid,
                                    enum treenet_auth auth, const char *bind_addr,
                                    int timeout_ms)
{
    return rdv_server_start_log(nnodes, jobkey, uid, auth, bind_addr, timeout_ms, NULL,
                                NULL);
}

int rdv_server_port(const struct rdv_server *s)
{
    return s ? s->port : -EINVAL;
}

int rdv_server_stop(struct rdv_server *s)
{
    int rc;
    char b = 1;

    if (!s)
        return -EINVAL;
    atomic_store(&s->stop, 1);
    if (write(s->wake[1], &b, 1) < 0) {
        /* the pipe is non-blocking and only ever needs one byte */
    }
    pthread_join(s->th, NULL);
    rc = s->result;
    close(s->lfd);
    if (s->spare_fd >= 0)
        close(s->spare_fd);
    close(s->wake[0]);
    close(s->wake[1]);
    for (int i = 0; i < s->nnodes; i++)
        free(s->addr[i]);
    free(s->addr);
    free(s->node_conn);
    free(s->served);
    free(s->lip);
    free(s->told_width);
    free(s->conns);
    memset(s->cookie, 0, sizeof(s->cookie));
    free(s);
    return rc;
}

/* ---- node side ------------------------------------------------------------ */

/* The caller's fd watched during this thread's rdv_talk() (-1: none): once
 * it is readable or hung up, every wait ends with -ECONNABORTED. */
static __thread int talk_watch = -1;

/* Wait for ev on fd (fd -1: only for the watched fd, or the deadline, which
 * is then no error).  0, -ETIMEDOUT, -ECONNABORTED or -errno. */
static int wait_fd(int fd, short ev, uint64_t deadline)
{
    for (;;) {
        uint64_t now = now_ms();
        struct pollfd p[2] = {{.fd = fd, .events = ev},
                              {.fd = talk_watch, .events = POLLIN}};
        int rc;
        if (now >= deadline)
            return fd < 0 ? 0 : -ETIMEDOUT;
        rc = poll(p, 2, (int)(deadline - now));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -errno;
        if (talk_watch >= 0 && p[1].revents)
            return -ECONNABORTED;
        if (rc > 0)
            return 0;
    }
}

static int send_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
            int rc = wait_fd(fd, POLLOUT, deadline);
            if (rc < 0)
                return rc;
            continue;
        }
        p += n;
        len -= n;
    }
    return 0;
}

static int recv_all(int fd, void *buf, size_t len, uint64_t deadline)
{
    char *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
            int rc = wait_fd(fd, POLLIN, deadline);
            if (rc < 0)
                return rc;
            continue;
        }
        if (n == 0)
            return -EPIPE;
        p += n;
        len -= n;
    }
    return 0;
}

/* Read one frame of at most max bytes into a malloc'ed, NUL-terminated buffer. */
static int recv_frame(int fd, size_t max, char **out, size_t *len, uint64_t deadline)
{
    uint8_t h[4];
    int rc = recv_all(fd, h, 4, deadline);
    if (rc < 0)
        return rc;
    *len = tn_get_u32(h);
    if (*len == 0 || *len > max)
        return -EPROTO;
    *out = malloc(*len + 1);
    if (!*out)
        return -ENOMEM;
    rc = recv_all(fd, *out, *len, deadline);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    (*out)[*len] = '\0';
    return 0;
}

/* Split "host:port" / "[v6]:port" (host may be a name: this side may block). */
static int split_hostport(const char *s, char *host, size_t hl, char *port, size_t pl)
{
    const char *c;
    size_t n;

    if (!s)
        return -EINVAL;
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':')
            return -EINVAL;
        n = e - s - 1;
        c = e + 1;
        s++;
    } else {
        c = strrchr(s, ':');
        if (!c)
            return -EINVAL;
        n = c - s;
    }
    if (n == 0 || n >= hl || strlen(c + 1) == 0 || strlen(c + 1) >= pl)
        return -EINVAL;
    memcpy(host, s, n);
    host[n] = '\0';
    strcpy(port, c + 1);
    return 0;
}

/* One connected attempt.  0 with *fd connected, or -errno. */
static int connect_once(const struct addrinfo *ai, uint64_t deadline, int *fdp)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int err = 0, rc;
    socklen_t el = sizeof(err);

    if (fd < 0)
        return -errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
            close(fd);
            return rc;
        }
        rc = wait_fd(fd, POLLOUT, deadline);
        if (rc < 0) {
            close(fd);
            return rc;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
            err = errno;
        if (err) {
            close(fd);
            return -err;
        }
    }
    tn_nodelay(fd);
    *fdp = fd;
    return 0;
}

/* The server's table: "<node> <addr>\n" lines, each node of 0..nnodes-1 at
 * most once, our own among them; nodes not named stay NULL in *addrs. */
static int parse_table(char *t, int nnodes, int me, char ***addrs)
{
    char **a = calloc(nnodes, sizeof(char *));
    char *line, *nl, *end;
    int rc = -EPROTO;

    if (!a)
        return -ENOMEM;
    if (t[0] == '\0' || t[strlen(t) - 1] != '\n')
        goto bad;
    for (line = t; *line; line = nl + 1) {
        struct sockaddr_storage ss;
        socklen_t sl;
        long n;
        nl = strchr(line, '\n'); /* there is one: the table ends with it */
        *nl = '\0';
        if (line[0] < '0' || line[0] > '9')
            goto bad;
        errno = 0;
        n = strtol(line, &end, 10);
        if (errno || *end != ' ' || n < 0 || n >= nnodes || a[n] ||
            strlen(end + 1) >= TREENET_ADDR_MAX + 8 ||
            loom_addr_parse(end + 1, &ss, &sl) < 0)
            goto bad;
        a[n] = strdup(end + 1);
        if (!a[n]) {
            rc = -ENOMEM;
            goto bad;
        }
    }
    if (!a[me])
        goto bad;
    *addrs = a;
    return 0;
bad:
    rdv_addrs_free(a, nnodes);
    return rc;
}

/* Why this thread's last rdv_exchange*() failed, for rdv_strerror(). */
static __thread struct {
    int rc;
    char why[TN_WHY_MAX + 64];
} last_err;

static void set_err(int rc, const char *why)
{
    last_err.rc = rc;
    snprintf(last_err.why, sizeof(last_err.why), "%s", why);
}

const char *rdv_strerror(int rc)
{
    if (rc < 0 && rc == last_err.rc && last_err.why[0])
        return last_err.why;
    return strerror(rc < 0 ? -rc : rc);
}

/* The server's answer "fail <node> <reason>": -ECANCELED with the reason for
 * rdv_strerror (the caller escapes it before it logs it). */
static int answer_failed(const char *in)
{
    char m[TN_WHY_MAX + 64], *end;
    long node;

    errno = 0;
    node = strtol(in + 5, &end, 10);
    if (errno || end == in + 5 || node < 0 || *end != ' ')
        return -EPROTO;
    /* the server is the job owner's process: what it quotes is kept printable */
    int k = snprintf(m, sizeof(m), "node %ld cannot join the tree: ", node);
    for (const char *p = end + 1; *p && k < (int)sizeof(m) - 1 && p - end <= RDV_FAIL_MAX;
         p++)
        m[k++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    m[k] = '\0';
    set_err(-ECANCELED, m);
    return -ECANCELED;
}

/* One full exchange over a connected socket.  reason NULL: register my_port
 * and get the table into *addrs; else tell the server this node cannot join
 * and why (no answer awaited).  -EAGAIN: worth retrying. */
static int exchange_on(int fd, const char *jobkey, uid_t job_uid, int nnodes, int nodeid,
                       int width, int my_port, const char *reason, enum treenet_auth auth,
                       const char *cookie, uint64_t deadline, char ***addrs)
{
    char me[16], reg[RDV_FAIL_MAX + 32], *cred = NULL, *in = NULL, from[32];
    char why[TN_WHY_MAX];
    char snonce[TN_NONCE_HEX + 1], mine[TN_NONCE_HEX + 1], pn[TN_NONCE_HEX + 1];
    char *out;
    size_t outlen, inlen;
    uint64_t hs_end = now_ms() + RDV_HS_MS;
    int rc;

    /* the server speaks first; one that does not within the handshake time
     * (a stranger on the port, a server shedding load) costs one attempt */
    rc = recv_frame(fd, TN_CRED_MAX, &in, &inlen, hs_end < deadline ? hs_end : deadline);
    if (rc < 0)
        return (rc == -ETIMEDOUT && hs_end >= deadline) || rc == -ECONNABORTED ? rc
                                                                               : -EAGAIN;
    rc = tn_nonce_parse(in, inlen, snonce);
    free(in);
    if (rc < 0)
        return -EAGAIN;
    if (tn_nonce_new(mine) < 0)
        return -ENOMEM;
    snprintf(me, sizeof(me), "%d", nodeid);
    /* only the job's owner (the server's uid) can decode it */
    rc = tn_cred_make_k(auth, cookie, jobkey, me, "rdv", snonce, mine, job_uid, &cred,
                        why);
    if (rc < 0) {
        set_err(rc, why);
        return rc;
    }
    if (reason)
        snprintf(reg, sizeof(reg), "fail %.*s", RDV_FAIL_MAX, reason);
    else if (width > 0)
        snprintf(reg, sizeof(reg), "port %d width %d", my_port, width);
    else
        snprintf(reg, sizeof(reg), "port %d", my_port);
    out = two_frames(cred, strlen(cred), reg, strlen(reg), &outlen);
    free(cred);
    if (!out)
        return -ENOMEM;
    rc = send_all(fd, out, outlen, deadline);
    free(out);
    if (rc < 0)
        return rc == -ETIMEDOUT || rc == -ECONNABORTED ? rc : -EAGAIN;
    if (reason)
        return 0; /* said; the server closes */
    rc = recv_frame(fd, TN_CRED_MAX, &in, &inlen, deadline);
    if (rc < 0)
        return rc == -ETIMEDOUT || rc == -EPROTO || rc == -ECONNABORTED ? rc : -EAGAIN;
    rc = tn_cred_check_k(auth, cookie, in, inlen, job_uid, jobkey, me, mine, from,
                         sizeof(from), pn, NULL, why);
    free(in);
    if (rc < 0) {
        /* -ENOKEY: our munge could not decode it; -EACCES: the server's refused */
        char m[TN_WHY_MAX + 64];
        snprintf(m, sizeof(m), "%s from the rendezvous server: %s",
                 rc == -EACCES ? "refused the credential" : "cannot check the credential",
                 why);
        set_err(rc, m);
        return rc;
    }
    if (strcmp(from, "rdv") != 0 || strcmp(pn, snonce) != 0) {
        set_err(-EACCES, "refused the rendezvous server's answer: wrong sender or nonce");
        return -EACCES;
    }
    rc = recv_frame(fd, (size_t)nnodes * (TREENET_ADDR_MAX + 16) + RDV_FAIL_MAX + 32, &in,
                    &inlen, deadline);
    if (rc < 0)
        return rc == -ETIMEDOUT || rc == -EPROTO || rc == -ECONNABORTED ? rc : -EAGAIN;
    if (inlen > 5 && memcmp(in, "fail ", 5) == 0)
        rc = answer_failed(in);
    else
        rc = parse_table(in, nnodes, nodeid, addrs);
    free(in);
    return rc;
}

int rdv_exchange(const char *server, const char *jobkey, int nnodes, int nodeid,
                 int my_port, enum treenet_auth auth, int timeout_ms, char ***addrs,
                 char *my_ip)
{
    return rdv_exchange_uid(server, jobkey, geteuid(), nnodes, nodeid, 0, my_port, auth,
                            timeout_ms, addrs, my_ip);
}

static int rdv_talk(const char *server, const char *jobkey, uid_t job_uid, int nnodes,
                    int nodeid, int width, int my_port, const char *reason,
                    enum treenet_auth auth, const char *cookie, int timeout_ms,
                    char ***addrs, char *my_ip)
{
    char host[256], port[16];
    struct addrinfo hints, *res = NULL;
    uint64_t deadline;
    int backoff = 10, rc;

    last_err.rc = 0;
    last_err.why[0] = '\0';
    if (!addrs || nnodes < 1 || nodeid < 0 || nodeid >= nnodes || width < 0 ||
        width > RDV_WIDTH_MAX || my_port < 0 || my_port > 65535 || timeout_ms <= 0 ||
        tn_jobkey_ok(jobkey) < 0 || job_uid == TN_UID_ANY ||
        (auth == TREENET_AUTH_COOKIE && tn_cookie_ok(cookie) < 0) ||
        split_hostport(server, host, sizeof(host), port, sizeof(port)) < 0)
        return -EINVAL;
    if ((rc = tn_auth_supported(auth)) < 0)
        return rc;
    *addrs = NULL;
    deadline = now_ms() + timeout_ms;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res)
        return -EHOSTUNREACH;
    for (;;) {
        rc = -ECONNREFUSED;
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int fd = -1;
            rc = connect_once(ai, deadline, &fd);
            if (rc < 0)
                continue;
            rc = exchange_on(fd, jobkey, job_uid, nnodes, nodeid, width, my_port, reason,
                             auth, cookie, deadline, addrs);
            close(fd);
            break;
        }
        /* munge down (-ENOKEY) is reported, not retried: libmunge already
         * retried the socket, and a frozen munged costs seconds per try */
        if (rc == 0 || rc == -EACCES || rc == -EPROTO || rc == -ENOMEM || rc == -ENOKEY ||
            rc == -ECANCELED || rc == -ECONNABORTED || now_ms() + backoff >= deadline)
            break;
        if (wait_fd(-1, 0, now_ms() + backoff) < 0) { /* the watched fd, or sleep */
            rc = -ECONNABORTED;
            break;
        }
        backoff = backoff * 2 > 500 ? 500 : backoff * 2;
    }
    freeaddrinfo(res);
    if (rc < 0 && rc != -EACCES && rc != -EPROTO && rc != -ENOMEM && rc != -ENOKEY &&
        rc != -ECANCELED && rc != -ECONNABORTED)
        rc = -ETIMEDOUT;
    if (rc == 0 && my_ip && !reason) {
        const char *a = (*addrs)[nodeid], *c = strrchr(a, ':');
        size_t n = c ? (size_t)(c - a) : strlen(a);
        if (a[0] == '[' && n >= 2) {
            a++;
            n -= 2;
        }
        if (n >= TREENET_ADDR_MAX)
            n = TREENET_ADDR_MAX - 1;
        memcpy(my_ip, a, n);
        my_ip[n] = '\0';
    }
    return rc;
}

int rdv_exchange_uid(const char *server, const char *jobkey, uid_t job_uid, int nnodes,
                     int nodeid, int width, int my_port, enum treenet_auth auth,
                     int timeout_ms, char ***addrs, char *my_ip)
{
    if (!addrs)
        return -EINVAL;
    if (auth == TREENET_AUTH_COOKIE) /* needs its key: rdv_exchange_cookie */
        return -EINVAL;
    return rdv_talk(server, jobkey, job_uid, nnodes, nodeid, width, my_port, NULL, auth,
                    NULL, timeout_ms, addrs, my_ip);
}

int rdv_exchange_cookie(const char *server, const char *jobkey, const char *cookie,
                        int nnodes, int nodeid, int my_port, int timeout_ms,
                        char ***addrs, char *my_ip)
{
    return rdv_exchange_cookie_watch(server, jobkey, cookie, nnodes, nodeid, my_port,
                                     timeout_ms, -1, addrs, my_ip);
}

int rdv_exchange_cookie_watch(const char *server, const char *jobkey, const char *cookie,
                              int nnodes, int nodeid, int my_port, int timeout_ms,
                              int watch_fd, char ***addrs, char *my_ip)
{
    int rc;

    if (!addrs)
        return -EINVAL;
    talk_watch = watch_fd;
    rc = rdv_talk(server, jobkey, geteuid(), nnodes, nodeid, 0, my_port, NULL,
                  TREENET_AUTH_COOKIE, cookie, timeout_ms, addrs, my_ip);
    talk_watch = -1;
    return rc;
}

int rdv_fail_cookie(const char *server, const char *jobkey, const char *cookie,
                    int nnodes, int nodeid, int timeout_ms, const char *why)
{
    char **none = NULL;

    if (!why || !*why)
        return -EINVAL;
    return rdv_talk(server, jobkey, geteuid(), nnodes, nodeid, 0, 0, why,
                    TREENET_AUTH_COOKIE, cookie, timeout_ms, &none, NULL);
}

int rdv_fail_uid(const char *server, const char *jobkey, uid_t job_uid, int nnodes,
                 int nodeid, enum treenet_auth auth, int timeout_ms, const char *why)
{
    char **none = NULL;

    if (!why || !*why)
        return -EINVAL;
    if (auth == TREENET_AUTH_COOKIE) /* needs its key: rdv_fail_cookie */
        return -EINVAL;
    return rdv_talk(server, jobkey, job_uid, nnodes, nodeid, 0, 0, why, auth, NULL,
                    timeout_ms, &none, NULL);
}

void rdv_addrs_free(char **addrs, int nnodes)
{
    if (!addrs)
        return;
    for (int i = 0; i < nnodes; i++)
        free(addrs[i]);
    free(addrs);
}
