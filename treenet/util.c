/* util.c - byte order, address formatting and socket option helpers for
 * treenet.  Address parsing and the listener setup are common/net.c's
 * (shared with mpiexec).
 *
 * Contract: see tn_int.h.  Addresses are numeric only: nothing here ever
 * blocks on a name service (the tree links run inside a reactor).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "tn_int.h"

_Static_assert(TREENET_ADDR_MAX == LOOM_ADDR_MAX, "one address length");

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
