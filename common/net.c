/* net.c - numeric socket addresses and the one TCP listener setup
 * (loom_listen: any port or a port range) of treenet's rendezvous server and
 * tree links and of multi-host mpiexec's port for its proxies.
 *
 * Contract: see net.h.  Addresses are numeric only: nothing here ever
 * blocks on a name service (the callers run inside event loops).
 */
#include "config.h"

#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mac.h"

/* ---- addresses ----------------------------------------------------------- */

int loom_addr_parse(const char *s, struct sockaddr_storage *sa, socklen_t *salen)
{
    char host[LOOM_ADDR_MAX];
    const char *colon, *port;
    struct addrinfo hints, *res = NULL;
    size_t hl;

    if (!s || strlen(s) >= LOOM_ADDR_MAX)
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

/* ---- listeners ----------------------------------------------------------- */

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

int loom_listen(const char *bind_addr, unsigned port_lo, unsigned port_hi, int backlog,
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
        char tmp[LOOM_ADDR_MAX + 4];
        if (strchr(bind_addr, ':') && bind_addr[0] != '[')
            snprintf(tmp, sizeof(tmp), "[%s]:0", bind_addr);
        else
            snprintf(tmp, sizeof(tmp), "%s:0", bind_addr);
        if (loom_addr_parse(tmp, &sa, &sl) < 0)
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
        *port =
            ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                           : ((struct sockaddr_in6 *)&got)->sin6_port);
    }
    return fd;
}
