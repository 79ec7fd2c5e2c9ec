/* rdv.c - the rendezvous: one server thread collects every node's listening
 * address and hands the whole table back; the node side is one blocking,
 * bounded call.
 *
 * Contract: see treenet.h (rdv_*) and doc/treenet.md (wire format).
 *
 * Design:
 *   The server is a poll() loop in a thread of its own over the listening
 *   socket, a wake-up pipe (rdv_server_stop) and every connection, bounded
 *   by the job's timeout.  A connection must send a credential frame
 *   ("loom1 <jobkey> <node> rdv") and then "port <p>"; the node's address
 *   is the connection's source IP with that port.  Once all nnodes nodes
 *   are registered, each gets a credential ("loom1 <jobkey> rdv <node>")
 *   and the table, then its connection is closed.  A node whose connection
 *   breaks before it got the table is unregistered and may come back; a
 *   second registration of a node replaces the first.  Connections that do
 *   not authenticate are refused (closed, logged) and the others are
 *   served on.
 *
 * Caveats:
 *   - The log callback of rdv_server_start_log() runs in the server thread.
 *   - The client side checks the server's credential against the job key
 *     and its node id (any uid: rdv_exchange() is not told the job's uid; a
 *     forged table could only point nodes at peers that then fail the
 *     munge check of the tree links, so the job fails, it is not fooled).
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

#include "log.h"
#include "tn_int.h"

#define RDV_HS_MS 10000 /* an unauthenticated connection gets this long */
#define RDV_MAX_CONNS_EXTRA 64

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
    uint64_t hs_deadline;
};

struct rdv_server {
    int nnodes;
    char jobkey[TN_JOBKEY_MAX + 1];
    uid_t uid;
    enum treenet_auth auth;
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
    char *table;
    size_t tablelen;
    uint64_t listen_paused_until;
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

static void refuse(struct rdv_server *s, int i, const char *why)
{
    rlog(s, LOOM_LOG_WARN, "rdv: refused connection from %s: %s", s->conns[i].ip, why);
    rc_close(s, i);
}

/* Queue the table for conn i (all nodes registered). */
static void send_table(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];
    char *cred = NULL, to[16];

    snprintf(to, sizeof(to), "%d", c->node);
    if (tn_cred_make(s->auth, s->jobkey, "rdv", to, &cred) < 0) {
        rlog(s, LOOM_LOG_ERROR, "rdv: cannot make a credential for node %d", c->node);
        rc_close(s, i);
        return;
    }
    c->out = two_frames(cred, strlen(cred), s->table, s->tablelen, &c->outlen);
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

    if (tn_addr_parse(addr, &ss, &sl) < 0)
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

static void all_registered(struct rdv_server *s)
{
    size_t len = 0;

    fix_loopback(s);
    for (int n = 0; n < s->nnodes; n++)
        len += strlen(s->addr[n]) + 1;
    s->table = malloc(len + 1);
    if (!s->table) {
        s->result = -ENOMEM;
        atomic_store(&s->stop, 1);
        return;
    }
    s->tablelen = 0;
    for (int n = 0; n < s->nnodes; n++)
        s->tablelen += sprintf(s->table + s->tablelen, "%s\n", s->addr[n]);
    rlog(s, LOOM_LOG_DEBUG, "rdv: all %d nodes registered", s->nnodes);
    for (int n = 0; n < s->nnodes; n++)
        if (s->node_conn[n] >= 0)
            send_table(s, s->node_conn[n]);
}

static void got_frame(struct rdv_server *s, int i)
{
    struct rconn *c = &s->conns[i];
    char why[TN_WHY_MAX], from[32], *end;
    long node, port;

    if (c->st == RS_CRED) {
        if (tn_cred_check(s->auth, c->body, c->blen, s->uid, s->jobkey, "rdv", from,
                          sizeof(from), why) < 0) {
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
    if (c->blen < 6 || memcmp(c->body, "port ", 5) != 0) {
        refuse(s, i, "malformed registration");
        return;
    }
    errno = 0;
    port = strtol((char *)c->body + 5, &end, 10);
    if (errno || *end || port <= 0 || port > 65535) {
        refuse(s, i, "malformed registration port");
        return;
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
        s->node_conn[c->node] = i;
        snprintf(s->lip[c->node], sizeof(s->lip[c->node]), "%s", c->lip);
        c->st = RS_WAIT;
        rlog(s, LOOM_LOG_DEBUG, "rdv: node %d registered at %s", c->node, a);
    }
    if (s->table)
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

static void on_accept(struct rdv_server *s)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd =
            accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        int live = 0;
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                /* EMFILE and friends: do not spin on the backlog */
                rlog(s, LOOM_LOG_WARN, "rdv: accept: %s", strerror(errno));
                s->listen_paused_until = now_ms() + 100;
            }
            return;
        }
        for (int i = 0; i < s->nconns; i++)
            live += s->conns[i].st != RS_CLOSED;
        if (live >= s->nnodes + RDV_MAX_CONNS_EXTRA) {
            char ip[TREENET_ADDR_MAX];
            tn_addr_format((struct sockaddr *)&ss, 1, ip, sizeof(ip));
            rlog(s, LOOM_LOG_WARN,
                 "rdv: refused connection from %s: too many connections", ip);
            close(fd);
            continue;
        }
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
        c->hs_deadline = now_ms() + RDV_HS_MS;
        tn_addr_format((struct sockaddr *)&ss, 0, c->ip, sizeof(c->ip));
        sl = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
            tn_addr_format((struct sockaddr *)&ss, 0, c->lip, sizeof(c->lip));
        tn_nodelay(fd);
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
            s->result = 0;
            break;
        }
        if (now >= deadline) {
            rlog(s, LOOM_LOG_ERROR, "rdv: timed out with %d of %d nodes registered",
                 s->nreg, s->nnodes);
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
            pf[n++] = (struct pollfd){.fd = c->fd,
                                      .events = c->st == RS_SEND ? POLLOUT : POLLIN};
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
            else if (re & (POLLIN | POLLERR | POLLHUP))
                on_read(s, i);
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
        s->result = 0;
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

struct rdv_server *
rdv_server_start_log(int nnodes, const char *jobkey, uid_t uid, enum treenet_auth auth,
                     const char *bind_addr, int timeout_ms,
                     void (*log)(void *arg, int level, const char *msg), void *log_arg)
{
    struct rdv_server *s;
    struct sockaddr_storage sa;
    socklen_t sl;
    int rc, one = 1;

    if (nnodes < 1 || tn_jobkey_ok(jobkey) < 0 || timeout_ms <= 0) {
        errno = EINVAL;
        return NULL;
    }
    if ((rc = tn_auth_supported(auth)) < 0) {
        errno = -rc;
        return NULL;
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->lfd = s->wake[0] = s->wake[1] = -1;
    s->nnodes = nnodes;
    snprintf(s->jobkey, sizeof(s->jobkey), "%s", jobkey);
    s->uid = uid;
    s->auth = auth;
    s->timeout_ms = timeout_ms;
    s->log = log;
    s->log_arg = log_arg;
    s->node_conn = malloc(nnodes * sizeof(int));
    s->addr = calloc(nnodes, sizeof(char *));
    s->served = calloc(nnodes, sizeof(bool));
    s->lip = calloc(nnodes, sizeof(*s->lip));
    if (!s->node_conn || !s->addr || !s->served || !s->lip)
        goto fail;
    for (int i = 0; i < nnodes; i++)
        s->node_conn[i] = -1;
    memset(&sa, 0, sizeof(sa));
    if (bind_addr && *bind_addr) {
        char tmp[TREENET_ADDR_MAX + 4];
        snprintf(tmp, sizeof(tmp),
                 strchr(bind_addr, ':') && bind_addr[0] != '[' ? "[%s]:0" : "%s:0",
                 bind_addr);
        if (tn_addr_parse(tmp, &sa, &sl) < 0) {
            errno = EINVAL;
            goto fail;
        }
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        sl = sizeof(*a);
    }
    s->lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s->lfd < 0)
        goto fail;
    (void)setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->lfd, (struct sockaddr *)&sa, sl) < 0 || listen(s->lfd, 1024) < 0)
        goto fail;
    sl = sizeof(sa);
    if (getsockname(s->lfd, (struct sockaddr *)&sa, &sl) < 0)
        goto fail;
    s->port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port
                                            : ((struct sockaddr_in6 *)&sa)->sin6_port);
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
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    free(s->node_conn);
    free(s->addr);
    free(s->served);
    free(s->lip);
    free(s);
    errno = rc;
    return NULL;
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
    close(s->wake[0]);
    close(s->wake[1]);
    for (int i = 0; i < s->nnodes; i++)
        free(s->addr[i]);
    free(s->addr);
    free(s->node_conn);
    free(s->served);
    free(s->lip);
    free(s->conns);
    free(s->table);
    free(s);
    return rc;
}

/* ---- node side ------------------------------------------------------------ */

static int wait_fd(int fd, short ev, uint64_t deadline)
{
    for (;;) {
        uint64_t now = now_ms();
        struct pollfd p = {.fd = fd, .events = ev};
        int rc;
        if (now >= deadline)
            return -ETIMEDOUT;
        rc = poll(&p, 1, (int)(deadline - now));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -errno;
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

static int parse_table(char *t, int nnodes, char ***addrs)
{
    char **a = calloc(nnodes, sizeof(char *));
    char *save = NULL, *line;
    int n = 0;

    if (!a)
        return -ENOMEM;
    for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct sockaddr_storage ss;
        socklen_t sl;
        if (n >= nnodes || tn_addr_parse(line, &ss, &sl) < 0)
            goto bad;
        a[n] = strdup(line);
        if (!a[n++])
            goto bad;
    }
    if (n != nnodes)
        goto bad;
    *addrs = a;
    return 0;
bad:
    rdv_addrs_free(a, nnodes);
    return -EPROTO;
}

/* One full exchange over a connected socket.  -EAGAIN: worth retrying. */
static int exchange_on(int fd, const char *jobkey, int nnodes, int nodeid, int my_port,
                       enum treenet_auth auth, uint64_t deadline, char ***addrs)
{
    char me[16], reg[32], *cred = NULL, *in = NULL, from[32], why[TN_WHY_MAX];
    char *out;
    size_t outlen, inlen;
    int rc;

    snprintf(me, sizeof(me), "%d", nodeid);
    rc = tn_cred_make(auth, jobkey, me, "rdv", &cred);
    if (rc < 0)
        return rc;
    snprintf(reg, sizeof(reg), "port %d", my_port);
    out = two_frames(cred, strlen(cred), reg, strlen(reg), &outlen);
    free(cred);
    if (!out)
        return -ENOMEM;
    rc = send_all(fd, out, outlen, deadline);
    free(out);
    if (rc < 0)
        return rc == -ETIMEDOUT ? rc : -EAGAIN;
    rc = recv_frame(fd, TN_CRED_MAX, &in, &inlen, deadline);
    if (rc < 0)
        return rc == -ETIMEDOUT || rc == -EPROTO ? rc : -EAGAIN;
    rc = tn_cred_check(auth, in, inlen, TN_UID_ANY, jobkey, me, from, sizeof(from), why);
    free(in);
    if (rc < 0 || strcmp(from, "rdv") != 0)
        return -EACCES;
    rc = recv_frame(fd, (size_t)nnodes * (TREENET_ADDR_MAX + 1) + 1, &in, &inlen,
                    deadline);
    if (rc < 0)
        return rc == -ETIMEDOUT || rc == -EPROTO ? rc : -EAGAIN;
    rc = parse_table(in, nnodes, addrs);
    free(in);
    return rc;
}

int rdv_exchange(const char *server, const char *jobkey, int nnodes, int nodeid,
                 int my_port, enum treenet_auth auth, int timeout_ms, char ***addrs,
                 char *my_ip)
{
    char host[256], port[16];
    struct addrinfo hints, *res = NULL;
    uint64_t deadline;
    int backoff = 10, rc;

    if (!addrs || nnodes < 1 || nodeid < 0 || nodeid >= nnodes || my_port <= 0 ||
        my_port > 65535 || timeout_ms <= 0 || tn_jobkey_ok(jobkey) < 0 ||
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
            rc = exchange_on(fd, jobkey, nnodes, nodeid, my_port, auth, deadline, addrs);
            close(fd);
            break;
        }
        if (rc == 0 || rc == -EACCES || rc == -EPROTO || rc == -ENOMEM ||
            now_ms() + backoff >= deadline)
            break;
        usleep(backoff * 1000);
        backoff = backoff * 2 > 500 ? 500 : backoff * 2;
    }
    freeaddrinfo(res);
    if (rc < 0 && rc != -EACCES && rc != -EPROTO && rc != -ENOMEM)
        rc = -ETIMEDOUT;
    if (rc == 0 && my_ip) {
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

void rdv_addrs_free(char **addrs, int nnodes)
{
    if (!addrs)
        return;
    for (int i = 0; i < nnodes; i++)
        free(addrs[i]);
    free(addrs);
}
