/* treenet.h - TCP links between the node servers of one job: a rendezvous
 * that tells every node where the others listen, and persistent,
 * munge-authenticated links along the k-ary fence tree.
 *
 * Contract:
 *   No Slurm inside: the plugin (slurmstepd, srun) and a multi-node launcher
 *   use the same code.  Two halves:
 *
 *   1. Rendezvous (once per job, off the fence path).  One process that every
 *      node can reach (srun; the launcher) runs an rdv server in a thread of
 *      its own.  Each node server connects once, proves who it is, sends
 *      its nodeid and listening address, and gets back the addresses of all
 *      nnodes nodes when the last one has arrived.  Bounded by a timeout.
 *      The server is the job owner's process: nodes trust nothing from it
 *      but addresses to try, and prove themselves to whatever answers there
 *      (see doc/treenet.md, "What a node trusts from the rendezvous").
 *
 *   2. Tree links (struct treenet, driven by the host's common/loop.h loop).
 *      Each node listens on a TCP port (any, or one of cfg.port_lo..port_hi:
 *      a site's firewall range), connects to its parent
 *      (ktree_parent over cfg.width) and accepts its children, once per job.
 *      Messages keep their boundaries (u32 length prefix on the wire), are
 *      queued when the socket is full (never block the loop), and arrive
 *      through ops->recv.  A link that breaks, a peer that fails
 *      authentication or a child that never connects is reported through
 *      ops->lost (the host then fails the fence and aborts the job).
 *
 *   Authentication: with TREENET_AUTH_MUNGE every connection starts with a
 *   nonce from the listening side, then one fresh munge credential in each
 *   direction whose payload binds "loom2 <jobkey> <from> <to> <nonce of the
 *   receiver> <nonce of the sender>" and which only the receiver's uid can
 *   decode (MUNGE_OPT_UID_RESTRICTION); the receiver refuses (closes, logs
 *   "refused ... : reason", rate-limited) unless the credential's uid is
 *   this process's euid (or root; the rendezvous server: the job's uid or
 *   root), the payload matches this job, this node and this
 *   connection's nonce, and munge reports no replay.
 *   TREENET_AUTH_COOKIE (a launcher without munge: mpiexec and its proxies)
 *   binds the same payload with an HMAC-SHA256 keyed by the job's secret
 *   cookie (treenet_config.cookie, rdv_*_cookie()), in both directions; the
 *   receiver compares the tag in constant time and then checks the payload
 *   as above (job, node, this connection's nonce), so a proof replayed on
 *   another connection, made for another pair of nodes or with another
 *   cookie is refused.  TREENET_AUTH_NONE exists for unit tests only.
 *
 * Notes:
 *   - Sockets are SOCK_CLOEXEC and non-blocking; TCP_NODELAY on every link.
 *   - treenet_* calls belong to the loop's thread.  ops->lost is called at
 *     most once per adjacent node, never from inside treenet_send(); a lost
 *     link stays lost.  Wire format, threat model, timeouts: doc/treenet.md.
 *   - Addresses are "ip:port" strings (IPv4 dotted quad, or [v6]:port).
 *   - The host's address for others is the local address of its connection
 *     to the rendezvous server (the interface that reaches it), unless
 *     cfg.bind_addr names one.
 */
#ifndef LOOM_TREENET_H
#define LOOM_TREENET_H

#include <stddef.h>
#include <sys/types.h>

struct loop;

enum treenet_auth {
    TREENET_AUTH_MUNGE = 0,
    TREENET_AUTH_NONE = 1,
    TREENET_AUTH_COOKIE = 2
};

#define TREENET_ADDR_MAX 64

/* ---- rendezvous ------------------------------------------------------ */

struct rdv_server;

/* Start a rendezvous server thread for nnodes nodes of job `jobkey`, owned
 * by uid.  It listens on bind_addr (NULL: any) port 0 and stops by itself
 * once every node got its table, or after timeout_ms.  These two hand every
 * node every node's address; the _ports and _cookie variants take the tree's
 * width and hand a node only its own, its parent's and its children's
 * (ktree over width; width 0: every node's).  NULL + errno
 * (ENOKEY: with munge auth, munge cannot make a credential here; the
 * _log variant logs munge's reason as an error first). */
struct rdv_server *rdv_server_start(int nnodes, const char *jobkey, uid_t uid,
                                    enum treenet_auth auth, const char *bind_addr,
                                    int timeout_ms);
/* Same, with a log callback (level as enum loom_log_level) for refusals and
 * progress; it runs in the server thread.  log may be NULL.  (Addition.) */
struct rdv_server *rdv_server_start_log(int nnodes, const char *jobkey, uid_t uid,
                                        enum treenet_auth auth, const char *bind_addr,
                                        int timeout_ms,
                                        void (*log)(void *arg, int level, const char *msg),
                                        void *log_arg);
/* Same, listening on a port of port_lo..port_hi (inclusive; 0, 0: any port,
 * as the two above): the first port tried is a random one of the range, then
 * each of the others once; a port in use moves on to the next.  NULL + errno
 * EADDRINUSE when every port of the range is in use (the host names the
 * range in its message), EINVAL for a bad range (one bound 0, hi < lo).
 * (Addition: SrunPortRange, doc/plugin.md.) */
struct rdv_server *
rdv_server_start_ports(int nnodes, int width, const char *jobkey, uid_t uid,
                       enum treenet_auth auth, const char *bind_addr, unsigned port_lo,
                       unsigned port_hi, int timeout_ms,
                       void (*log)(void *arg, int level, const char *msg), void *log_arg);
/* Same, with TREENET_AUTH_COOKIE: every node must prove `cookie` (copied;
 * 16..256 printable bytes), the answers prove it too; no uid is checked.
 * Ports as rdv_server_start_ports.
 * (Addition: mpiexec's rendezvous for its proxies.) */
struct rdv_server *rdv_server_start_cookie(
    int nnodes, int width, const char *jobkey, const char *cookie, const char *bind_addr,
    unsigned port_lo, unsigned port_hi, int timeout_ms,
    void (*log)(void *arg, int level, const char *msg), void *log_arg);
/* The port it listens on (the host passes "host:port" to the nodes). */
int rdv_server_port(const struct rdv_server *s);
/* Stop (if still running) and join the thread, free everything.  Returns 0
 * if every node was served, -ETIMEDOUT or another -errno otherwise. */
int rdv_server_stop(struct rdv_server *s);

/* Node side, blocking and bounded by timeout_ms: connect to server
 * ("host:port"), authenticate, send (nodeid, my_port), receive the table.
 * On success *addrs is a malloc'ed array of nnodes "ip:port" strings, NULL
 * for the nodes the server did not name (free with rdv_addrs_free), and my_ip (if not
 * NULL, room for TREENET_ADDR_MAX) gets this node's address as seen for the others. */
int rdv_exchange(const char *server, const char *jobkey, int nnodes, int nodeid,
                 int my_port, enum treenet_auth auth, int timeout_ms, char ***addrs,
                 char *my_ip);
/* Same, for a job owned by job_uid: the node's credential can be decoded only
 * by job_uid (the rendezvous server's owner), and the server's answer must be
 * a credential of job_uid or root.  rdv_exchange() is this with the caller's
 * own uid.  my_port may be 0 (a leaf that does not listen).  width (0: none)
 * is this node's tree width, named to a server started without one (srun's):
 * if every node names the same, each gets only its neighbours' addresses.
 * (Addition.) */
int rdv_exchange_uid(const char *server, const char *jobkey, uid_t job_uid, int nnodes,
                     int nodeid, int width, int my_port, enum treenet_auth auth,
                     int timeout_ms, char ***addrs, char *my_ip);
/* A node that cannot join the tree (it cannot listen, say) tells the server
 * why instead of registering: the server logs "node N cannot join the tree:
 * <why>" (an error: srun's stderr) and answers every other node, waiting or
 * yet to come, with that failure instead of the table, so that none of them
 * waits for its timeout.  why: printable text, cut at 200 bytes.  Returns 0
 * once said, or -errno as rdv_exchange_uid.  (Addition.) */
int rdv_fail_uid(const char *server, const char *jobkey, uid_t job_uid, int nnodes,
                 int nodeid, enum treenet_auth auth, int timeout_ms, const char *why);
/* rdv_exchange_uid() and rdv_fail_uid() with TREENET_AUTH_COOKIE and the
 * job's cookie (no uid is involved).  (Addition.) */
int rdv_exchange_cookie(const char *server, const char *jobkey, const char *cookie,
                        int nnodes, int nodeid, int my_port, int timeout_ms,
                        char ***addrs, char *my_ip);
int rdv_fail_cookie(const char *server, const char *jobkey, const char *cookie,
                    int nnodes, int nodeid, int timeout_ms, const char *why);
/* rdv_exchange_cookie(), watching the caller's watch_fd as well (-1: none):
 * as soon as it is readable or hung up (the host's link to whoever runs the
 * server: a closed one means no table will ever come) every wait ends and
 * the call returns -ECONNABORTED; the caller reads the fd to tell a closed
 * link from data, and may call again.  (Addition: mpiexec's proxies.) */
int rdv_exchange_cookie_watch(const char *server, const char *jobkey, const char *cookie,
                              int nnodes, int nodeid, int my_port, int timeout_ms,
                              int watch_fd, char ***addrs, char *my_ip);
/* rdv_exchange*() return 0 or -errno: -ENOKEY munge is unavailable on this
 * host (munged stopped, frozen, out of resources), -EACCES the server's
 * credential was refused, -ETIMEDOUT no server answered in time,
 * -ECANCELED another node could not join (rdv_strerror names it), -EPROTO,
 * -ENOMEM, -EINVAL.  rdv_strerror(rc) is the reason of this thread's last
 * failed call when rc is its result (e.g. "munge: cannot encode a credential:
 * Failed to connect to \"/run/munge/munge.socket.2\": Connection refused",
 * escaped), else strerror(-rc).  (Addition.) */
const char *rdv_strerror(int rc);
void rdv_addrs_free(char **addrs, int nnodes);

/* ---- tree links --------------------------------------------------------- */

struct treenet;

struct treenet_config {
    int nnodes, nodeid;
    int width;              /* children per node, as the fence tree */
    const char *jobkey;     /* "<job>.<step>": bound into every credential */
    uid_t uid;              /* the job's owner (links: peers must be of our own
                             * euid or root, never merely the owner) */
    enum treenet_auth auth;
    const char *bind_addr;  /* listen address, NULL: any */
    int connect_timeout_ms; /* for parent connect and children arrival */
    int handshake_timeout_ms; /* per connection, from accept/connect; 0: 3000
                               * (never above connect_timeout_ms) */
    unsigned short port_lo, port_hi; /* listen on a port of this range (inclusive,
                                      * as rdv_server_start_ports); 0, 0: any */
    const char *cookie;              /* TREENET_AUTH_COOKIE: the job's secret (copied);
                                      * else unused */
};

struct treenet_ops {
    /* One whole message from an adjacent node (buf is valid during the call). */
    void (*recv)(void *arg, int from, const void *buf, size_t len);
    /* The link to `node` is gone or never came up; why is for humans. */
    void (*lost)(void *arg, int node, const char *why);
    /* A log line (level as enum loom_log_level); may be NULL. */
    void (*log)(void *arg, int level, const char *msg);
};

/* Create the listening socket and register it with lp (a leaf of the tree,
 * which has no children, does not listen).  NULL + errno (EADDRINUSE: every
 * port of cfg's port range is in use; EINVAL: a bad config or range). */
struct treenet *treenet_create(struct loop *lp, const struct treenet_config *cfg,
                               const struct treenet_ops *ops, void *arg);
/* The port treenet_create listens on (publish it through the rendezvous);
 * 0 for a leaf, which does not listen. */
int treenet_port(const struct treenet *tn);
/* Connect to the parent using the rendezvous table (nnodes "ip:port").
 * Non-blocking: messages sent before the link is up are queued. */
int treenet_start(struct treenet *tn, char *const *addrs);
/* Queue one message to an adjacent node (parent or child).  0 or -errno
 * (-EINVAL: not adjacent; -ENOTCONN: that link is already lost; -ENOBUFS:
 * TN_QUEUE_MAX bytes are queued for that link already). */
int treenet_send(struct treenet *tn, int to, const void *buf, size_t len);
/* Bytes queued and not yet handed to the kernel, over all links (a host
 * that wants to flush before destroying runs its loop until this is 0).
 * (Addition.) */
size_t treenet_queued(const struct treenet *tn);
/* Close every link and the listener, unregister from the loop, free.  Not
 * from inside an ops callback (defer it, e.g. with a loop timer). */
void treenet_destroy(struct treenet *tn);

#endif /* LOOM_TREENET_H */
