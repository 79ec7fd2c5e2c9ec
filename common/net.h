/* net.h - numeric socket addresses and the one TCP listener setup, shared by
 * treenet (the rendezvous server, the tree links) and multi-host mpiexec
 * (the port its proxies connect back to).
 *
 * Contract:
 *   - loom_addr_parse(): "ip:port" / "[v6]:port", numeric only (never a name
 *     lookup), into sa.  0 or -EINVAL.
 *   - loom_listen(): a non-blocking, close-on-exec TCP socket with
 *     SO_REUSEADDR, bound to bind_addr (NULL or "": any IPv4 address) and
 *     listening with backlog.  Port: any (port_lo == port_hi == 0, the
 *     kernel's pick); else one of port_lo..port_hi (inclusive): starting at a
 *     random port of the range, each port is tried once and a port in use
 *     (EADDRINUSE from bind or listen) moves on to the next.  Returns the fd
 *     and its port in *port (may be NULL), or -errno: -EADDRINUSE every port
 *     of the range is in use, -EINVAL a bad bind_addr or range (one bound 0,
 *     hi < lo, above 65535), or the error of socket/bind/listen (e.g.
 *     -EACCES: a port below 1024 for a user) that is not EADDRINUSE.
 */
#ifndef LOOM_COMMON_NET_H
#define LOOM_COMMON_NET_H

#include <sys/socket.h>

#define LOOM_ADDR_MAX 64 /* "ip:port" with room for "[v6]:port" */

int loom_addr_parse(const char *s, struct sockaddr_storage *sa, socklen_t *salen);
int loom_listen(const char *bind_addr, unsigned port_lo, unsigned port_hi, int backlog,
                int *port);

#endif /* LOOM_COMMON_NET_H */
