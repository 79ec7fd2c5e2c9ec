/* util.c - byte order, address parsing and socket option helpers for treenet.
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
