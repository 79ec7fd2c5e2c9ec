/* util.c - byte order, address parsing, socket option helpers and the one
 * listener setup (tn_listen: any port or a port range) for treenet.
 *
 * Contract: see tn_int.h.  Addresses are numeric only: nothing here ever
 * blocks on a name service (the tree links run inside a reactor).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mac.h"
#include "tn_int.h"

void tn_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

uint32_t tn_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int tn_addr_parse(const char *s, struct sockaddr_storage *sa, socklen_t *salen)
{
    char host[TREENET_ADDR_MAX];
    const char *colon, *port;
    struct addrinfo hints, *res = NULL;
    size_t hl;

    if (!s || strlen(s) >= TREENET_ADDR_MAX)
        return -EINVAL;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':')
            return -EINVAL;
        hl = end - s - 1;
        memcpy(host, s + 1, hl);
        port = end + 2;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return -EINVAL;
        hl = colon - s;
        memcpy(host, s, hl);
        port = colon + 1;
    }
    host[hl] = '\0';
    if (!*port || strspn(port, "0123456789") != strlen(port))
        return -EINVAL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
        return -EINVAL;
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *salen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

void tn_addr_format(const struct sockaddr *sa, int with_port, char *out, size_t outlen)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        port = ntohs(a->sin_port);
        if (with_port)
            snprintf(out, outlen, "%s:%u", ip, port);
        else
            snprintf(out, outlen, "%s", ip);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
        if (with_port)
            snprintf(out, outlen, "[%s]:%u", ip, port);
        else
            snprintf(out, outlen, "%s", ip);
    } else {
        snprintf(out, outlen, "?");
    }
}

void tn_nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void tn_keepalive(int fd)
{
    int one = 1, idle = TN_KEEPIDLE_S, intvl = TN_KEEPINTVL_S, cnt = TN_KEEPCNT;
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* ---- listeners --------------------------------------------------------------- */

static void set_port(struct sockaddr_storage *sa, unsigned port)
{
    if (sa->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
}

/* One try: a listening socket on sa (its port set), or -errno. */
static int listen_on(const struct sockaddr_storage *sa, socklen_t sl, int backlog)
{
    int fd, rc, one = 1;

    fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* listen() may fail with EADDRINUSE too: another SO_REUSEADDR socket bound
     * the same port and listened first */
    if (bind(fd, (const struct sockaddr *)sa, sl) < 0 || listen(fd, backlog) < 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

int tn_listen(const char *bind_addr, unsigned port_lo, unsigned port_hi, int backlog,
              int *port)
{
    struct sockaddr_storage sa;
    socklen_t sl;
    unsigned n = 1, start = 0;
    int fd = -EADDRINUSE;

    if ((port_lo == 0) != (port_hi == 0) || port_hi > 65535 || port_hi < port_lo)
        return -EINVAL;
    memset(&sa, 0, sizeof(sa));
    if (bind_addr && *bind_addr) {
        char tmp[TREENET_ADDR_MAX + 4];
        if (strchr(bind_addr, ':') && bind_addr[0] != '[')
            snprintf(tmp, sizeof(tmp), "[%s]:0", bind_addr);
        else
            snprintf(tmp, sizeof(tmp), "%s:0", bind_addr);
        if (tn_addr_parse(tmp, &sa, &sl) < 0)
            return -EINVAL;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        sl = sizeof(*a);
    }
    if (port_lo) {
        uint32_t r;
        n = port_hi - port_lo + 1;
        /* a random first port, so that the stepds of one node (and sruns on
         * one login node) do not all queue up behind the range's first ports;
         * randomness is no secret here */
        if (loom_random_bytes(&r, sizeof(r)) < 0)
            r = (uint32_t)getpid() ^ (uint32_t)time(NULL);
        start = r % n;
    }
    for (unsigned i = 0; i < n; i++) {
        set_port(&sa, port_lo ? port_lo + (start + i) % n : 0);
        fd = listen_on(&sa, sl, backlog);
        if (fd >= 0 || fd != -EADDRINUSE || !port_lo)
            break;
    }
    if (fd < 0)
        return fd; /* -EADDRINUSE after the last port of a range: all in use */
    if (port) {
        struct sockaddr_storage got;
        socklen_t gl = sizeof(got);
        if (getsockname(fd, (struct sockaddr *)&got, &gl) < 0) {
            int rc = -errno;
            close(fd);
            return rc;
        }
        *port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                               : ((struct sockaddr_in6 *)&got)->sin6_port);
    }
    return fd;
}
