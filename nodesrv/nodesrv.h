/* nodesrv.h - one node's PMI server: the server core (pmiserv.h) over the
 * node's task sockets, on the host's event loop (common/loop.h).  Created by
 * the Slurm plugin's agent in slurmstepd and by mpiexec's node (the local job
 * and each proxy) alike; no Slurm, no launcher state.
 *
 * Contract:
 *   nodesrv_create() creates the psrv and sets the loop's prepare hook (the
 *   core's tick bounds every poll; the host's own prepare work goes through
 *   ops->prepare).  The host registers one socket per task with
 *   nodesrv_add_client(); the server then owns it: it reads it, feeds the
 *   core, queues the replies per task with the flow cap (common/flow.h: a task
 *   that does not read its replies is not read either) and closes it.
 *   - A hang-up or a broken socket: the server closes the socket and asks
 *     ops->client_hangup whether the core hears of it now (0) or later, when
 *     the host calls nodesrv_client_gone() (mpiexec judges a rank's exit
 *     first).  ops->client_gone follows the core's psrv_client_gone (the
 *     PMIx server's hook).
 *   - Tree: the core's messages leave through ops->tree_send (treenet, or
 *     mpiexec's uplink); incoming ones are fed with nodesrv_tree_input(), a
 *     lost link with nodesrv_tree_gone().
 *   - Output can be held (nodesrv_hold_output): replies are queued, not
 *     written, until released (the plugin lets its abort line go first).
 *   - The core is never re-entered: every call into it from this file is
 *     marked, nodesrv_tree_gone() from inside a core callback is dropped, and
 *     a host that calls psrv_* itself (spawn answers, the PMIx server) does
 *     it between nodesrv_core_enter() and nodesrv_core_leave().
 *
 * Notes:
 *   - One thread: everything here belongs to the loop's thread.
 *   - abort, log, spawn and the PMIx ops are the host's; they are handed to
 *     the core as they are, with the host's arg.
 */
#ifndef LOOM_NODESRV_H
#define LOOM_NODESRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "pmiserv.h"

struct nodesrv;

/* How a task's socket ended (ops->client_hangup). */
enum nodesrv_hangup {
    NODESRV_EOF = 0,    /* end of file or a read error */
    NODESRV_BROKEN = 1, /* writing a reply failed */
};

struct nodesrv_ops {
    /* Required: as psrv_ops->abort and ->log. */
    void (*abort)(void *arg, int rank, int exitcode, const char *msg);
    void (*log)(void *arg, enum psrv_log_level level, const char *msg);
    /* May be NULL (one node, no tree): as psrv_ops->tree_send. */
    int (*tree_send)(void *arg, int to, const void *buf, size_t len);
    /* May be NULL: handed to the core as they are (pmiserv.h). */
    int (*spawn)(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                 size_t errlen);
    void (*coll_done)(void *arg, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg);
    void (*dmdx_request)(void *arg, uint64_t handle, int rank, const void *info,
                         size_t len);
    void (*dmdx_done)(void *arg, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg);
    void (*ns_done)(void *arg, uint64_t id, int rc, const char *value);
    /* May be NULL.  The first bytes from a task arrived. */
    void (*client_first)(void *arg, int client);
    /* May be NULL (then: tell the core now).  The task's socket is closed;
     * return 0 to let the core hear of it now, non-zero when the host calls
     * nodesrv_client_gone() itself later. */
    int (*client_hangup)(void *arg, int client, enum nodesrv_hangup how);
    /* May be NULL.  Called right after the core heard the client is gone. */
    void (*client_gone)(void *arg, int client);
    /* May be NULL.  The host's own work before every poll(); returns the
     * longest the poll may sleep (ms) or -1. */
    int (*prepare)(void *arg);
};

/* NULL and errno on failure.  The ops table must outlive the server. */
struct nodesrv *nodesrv_create(struct loop *lp, const struct psrv_config *cfg,
                               const struct nodesrv_ops *ops, void *arg);
/* Closes the sockets still open, destroys the core.  NULL is fine. */
void nodesrv_destroy(struct nodesrv *ns);
struct psrv *nodesrv_psrv(const struct nodesrv *ns);

/* Task `client` (0..local_count-1) talks on fd (non-blocking, a socket).
 * 0, or -errno (the fd is then still the caller's). */
int nodesrv_add_client(struct nodesrv *ns, int client, int fd);
/* Read what the task's socket holds now; drain: until it would block (a
 * host judging a rank's exit reads its last requests first). */
void nodesrv_read(struct nodesrv *ns, int client, bool drain);
/* Close the task's socket (no hang-up reported: the host decided). */
void nodesrv_close(struct nodesrv *ns, int client);
bool nodesrv_client_open(const struct nodesrv *ns, int client);
/* Sent anything / said finalize (the core's answer 1 to its input). */
bool nodesrv_client_inited(const struct nodesrv *ns, int client);
bool nodesrv_client_finalized(const struct nodesrv *ns, int client);
/* Tell the core a hang-up deferred by ops->client_hangup; once. */
void nodesrv_client_gone(struct nodesrv *ns, int client);
/* Is a hang-up waiting for nodesrv_client_gone()? */
bool nodesrv_gone_pending(const struct nodesrv *ns, int client);

/* Hold replies in the queues (true), or write them again (false: what was
 * held is flushed now). */
void nodesrv_hold_output(struct nodesrv *ns, bool hold);

/* Tree messages in, a link lost. */
int nodesrv_tree_input(struct nodesrv *ns, int from, const void *buf, size_t len);
void nodesrv_tree_gone(struct nodesrv *ns, int node);

/* Around a host's own calls into the core (see the contract). */
struct psrv *nodesrv_core_enter(struct nodesrv *ns);
void nodesrv_core_leave(struct nodesrv *ns);
bool nodesrv_in_core(const struct nodesrv *ns);

#endif /* LOOM_NODESRV_H */
