/* pcli.c - the connection layer shared by libpmi2 and libpmi (internal).
 *
 * Contract: see pcli.h.  Framing and parsing are the wire codec's
 * (common/pmi_wire.h); this file only moves bytes and keeps what a reply
 * read ahead (a server may send the next reply in the same segment).
 *
 * Notes:
 *   - PMI_FD is checked with fcntl(F_GETFD) so a stale number is reported
 *     as such instead of as a confusing write error.
 *   - PMI_PORT connects with a 10 s bound (non-blocking connect + poll) and
 *     sets TCP_NODELAY, like Hydra's clients.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pcli.h"

#define PCLI_CONNECT_TIMEOUT_MS 10000
/* Largest reply we buffer: one maximal PMI-2 record. */
#define PCLI_MAX_IN (PMI_WIRE_LENFIELD + PMI_WIRE_MAX_BODY + 1)

void pcli_init(struct pcli *c, const char *tag)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->tag = tag;
    pthread_mutex_init(&c->wlock, NULL);
}

int pcli_env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s)
        return -ENOENT;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < INT_MIN || v > INT_MAX)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

int pcli_env_debug(void)
{
    int v;

    if (pcli_env_int("PMI2_DEBUG", &v) == 0)
        return v != 0;
    if (pcli_env_int("PMI_DEBUG", &v) == 0)
        return v != 0;
    return 0;
}

void pcli_log(const struct pcli *c, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "loom-%s[%d]: %s\n", c->tag, c->rank, line);
}

static void trace(const struct pcli *c, const char *dir, const char *buf, size_t len)
{
    if (!c->debug)
        return;
    while (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > 4000)
        len = 4000;
    fprintf(stderr, "loom-%s[%d]: %s %.*s\n", c->tag, c->rank, dir, (int)len, buf);
}

static int connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints, *res = NULL, *ai;
    int fd = -1, err = -EINVAL;

    if (!colon || colon == hostport || colon[1] == '\0' ||
        (size_t)(colon - hostport) >= sizeof(host))
        return -EINVAL;
    memcpy(host, hostport, colon - hostport);
    host[colon - hostport] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [v6addr]:port */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return -EHOSTUNREACH;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0) {
            err = -errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int r, soerr = 0;
            socklen_t sl = sizeof(soerr);
            do {
                r = poll(&p, 1, PCLI_CONNECT_TIMEOUT_MS);
            } while (r < 0 && errno == EINTR);
            if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
                soerr == 0)
                break;
            err = r == 0 ? -ETIMEDOUT : -(soerr ? soerr : ECONNREFUSED);
        } else {
            err = -errno;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return err;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int pcli_connect(struct pcli *c)
{
    const char *port = getenv("PMI_PORT");
    int fd;
    int r = pcli_env_int("PMI_FD", &fd);

    c->fd = -1;
    if (r == 0) {
        if (fd < 0 || fcntl(fd, F_GETFD) < 0)
            return -EBADF;
        c->fd = fd;
        return 0;
    }
    if (r == -EINVAL)
        return -EINVAL;
    if (port) {
        fd = connect_port(port);
        if (fd < 0)
            return fd;
        c->fd = fd;
    }
    return 0;
}

int pcli_singleton_check(const struct pcli *c)
{
    int size = 0, ntasks = 0;

    if (pcli_env_int("PMI_SIZE", &size) == 0 && size > 1) {
        pcli_log(c,
                 "PMI_SIZE=%d but neither PMI_FD nor PMI_PORT is set: "
                 "running as a singleton (rank 0 of 1)",
                 size);
        return 1;
    }
    if (getenv("SLURM_STEP_ID") && pcli_env_int("SLURM_NTASKS", &ntasks) == 0 &&
        ntasks > 1) {
        pcli_log(c,
                 "Slurm step of %d tasks without a PMI server: running as a "
                 "singleton (rank 0 of 1); launch with srun --mpi=pmi2",
                 ntasks);
        return 1;
    }
    return 0;
}

void pcli_close(struct pcli *c)
{
    struct pcli_item *it, *next;

    if (c->fd >= 0) {
        shutdown(c->fd, SHUT_RDWR);
        close(c->fd);
    }
    c->fd = -1;
    free(c->in);
    c->in = NULL;
    c->inlen = c->incap = 0;
    for (it = c->store; it; it = next) {
        next = it->next;
        free(it->key);
        free(it->val);
        free(it);
    }
    c->store = NULL;
    pthread_mutex_destroy(&c->wlock); /* pcli_init makes a new one */
}

int pcli_write(struct pcli *c, const char *buf, size_t len)
{
    int err = 0;
    bool sock = true;

    if (c->fd < 0)
        return -ENOTCONN;
    pthread_mutex_lock(&c->wlock);
    while (len > 0) {
        ssize_t n = sock ? send(c->fd, buf, len, MSG_NOSIGNAL) : write(c->fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOTSOCK && sock) {
                sock = false; /* a pipe, in tests or odd launchers */
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = {.fd = c->fd, .events = POLLOUT};
                if (poll(&p, 1, -1) < 0 && errno != EINTR) {
                    err = -errno;
                    break;
                }
                continue;
            }
            err = -errno;
            break;
        }
        buf += n;
        len -= (size_t)n;
    }
    pthread_mutex_unlock(&c->wlock);
    return err;
}

int pcli_send(struct pcli *c, struct pmi_out *o)
{
    int r = pmi_out_end(o);

    if (r < 0)
        return r;
    trace(c, ">", o->buf, o->len);
    return pcli_write(c, o->buf, o->len);
}

/* Read more bytes into c->in.  0, -EPIPE on EOF, -EMSGSIZE, -errno. */
static int fill(struct pcli *c)
{
    if (c->inlen == c->incap) {
        size_t ncap = c->incap ? c->incap * 2 : 4096;
        if (ncap > PCLI_MAX_IN)
            ncap = PCLI_MAX_IN;
        if (ncap <= c->inlen)
            return -EMSGSIZE;
        char *n = realloc(c->in, ncap);
        if (!n)
            return -ENOMEM;
        c->in = n;
        c->incap = ncap;
    }
    for (;;) {
        ssize_t n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
        if (n > 0) {
            c->inlen += (size_t)n;
            return 0;
        }
        if (n == 0)
            return -EPIPE;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd p = {.fd = c->fd, .events = POLLIN};
            if (poll(&p, 1, -1) < 0 && errno != EINTR)
                return -errno;
            continue;
        }
        return -errno;
    }
}

int pcli_recv(struct pcli *c, enum pmi_version v, struct pmi_msg *m)
{
    size_t flen, blen;
    const char *body;
    int r;

    memset(m, 0, sizeof(*m));
    if (c->fd < 0)
        return -ENOTCONN;
    for (;;) {
        r = pmi_frame_next(v, c->in ? c->in : "", c->inlen, &flen, &body, &blen);
        if (r < 0)
            return r;
        if (r == 1)
            break;
        r = fill(c);
        if (r < 0) {
            if (r == -EPIPE && c->inlen > 0)
                trace(c, "< (incomplete at EOF)", c->in, c->inlen);
            return r;
        }
    }
    trace(c, "<", c->in, flen);
    r = v == PMI_V2 ? pmi_msg_parse_v2(m, body, blen) : pmi_msg_parse_v1(m, body, blen);
    memmove(c->in, c->in + flen, c->inlen - flen);
    c->inlen -= flen;
    return r;
}

int pcli_call(struct pcli *c, struct pmi_out *o, enum pmi_version v, const char *expect,
              struct pmi_msg *m, int *rc)
{
    int r = pcli_send(c, o);

    memset(m, 0, sizeof(*m));
    if (r < 0)
        return r;
    r = pcli_recv(c, v, m);
    if (r < 0)
        goto fail;
    if (strcmp(pmi_msg_cmd(m), expect) != 0) {
        pcli_log(c, "expected %s, server sent %s", expect, pmi_msg_cmd(m));
        r = -EPROTO;
        goto fail;
    }
    if (pmi_msg_get_int(m, "rc", rc) < 0) {
        pcli_log(c, "%s without a valid rc", expect);
        r = -EPROTO;
        goto fail;
    }
    return 0;
fail:
    pmi_msg_free(m);
    memset(m, 0, sizeof(*m));
    return r;
}

/* ---- singleton store ------------------------------------------------- */

int pcli_store_put(struct pcli *c, const char *key, const char *val)
{
    struct pcli_item *it;

    for (it = c->store; it; it = it->next) {
        if (strcmp(it->key, key) == 0) {
            char *nv = strdup(val);
            if (!nv)
                return -ENOMEM;
            free(it->val);
            it->val = nv;
            return 0;
        }
    }
    it = calloc(1, sizeof(*it));
    if (!it)
        return -ENOMEM;
    it->key = strdup(key);
    it->val = strdup(val);
    if (!it->key || !it->val) {
        free(it->key);
        free(it->val);
        free(it);
        return -ENOMEM;
    }
    it->next = c->store;
    c->store = it;
    return 0;
}

const char *pcli_store_get(const struct pcli *c, const char *key)
{
    for (const struct pcli_item *it = c->store; it; it = it->next)
        if (strcmp(it->key, key) == 0)
            return it->val;
    return NULL;
}

int pcli_store_del(struct pcli *c, const char *key)
{
    for (struct pcli_item **pp = &c->store; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->key, key) == 0) {
            struct pcli_item *it = *pp;
            *pp = it->next;
            free(it->key);
            free(it->val);
            free(it);
            return 0;
        }
    }
    return -ENOENT;
}

/* ---- small helpers ---------------------------------------------------- */

bool pcli_copy(char *dst, int dstlen, const char *src)
{
    size_t n = strlen(src);

    if (dstlen <= 0 || !dst)
        return n > 0;
    if (n < (size_t)dstlen) {
        memcpy(dst, src, n + 1);
        return false;
    }
    memcpy(dst, src, (size_t)dstlen - 1);
    dst[dstlen - 1] = '\0';
    return true;
}

int pcli_parse_intlist(const char *s, int *array, int arraylen, int *outlen)
{
    int n = 0;
    const char *p = s;

    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < INT_MIN || v > INT_MAX)
            return -EINVAL;
        if (n < arraylen)
            array[n++] = (int)v;
        while (*end == ' ')
            end++;
        if (*end == '\0')
            break;
        if (*end != ',')
            return -EINVAL;
        p = end + 1;
    }
    *outlen = n;
    return 0;
}
