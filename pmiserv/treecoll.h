/* treecoll.h - one job-wide gather-and-broadcast over the node tree, epoch after
 * epoch: the machinery that the KVS fence (fence.c) and the blob collective for
 * host protocols (blob.c, PMIx) share.
 *
 * Contract:
 *   Every node contributes one local blob per epoch (tc_local), in the same order
 *   on every node.  Once a node has its own blob and every child's, it sends up
 *   (message type up_type) its blob followed by its children's; node 0 sends the
 *   whole concatenation down (down_type); a node forwards what comes down to its
 *   children before it hands it to ops->done.  Blobs are opaque here (ops->check
 *   may reject a malformed one).
 *   Epochs count completed collectives.  Stale and duplicate messages are
 *   dropped; a child's up message for epoch + 1 (its parent's down message
 *   reached it before this node forwarded ours) is held and replayed.
 *   The first event of an epoch (tc_begin: a local arrival or a child's message)
 *   arms one deadline, cfg.fence_timeout_ms, for the whole collective, up and
 *   down.  A node that only waits on others is granted grace periods, so the
 *   node that can name the culprit reports first (graces below).
 *   Failure is terminal: a timeout, a link that breaks while a collective is in
 *   progress (or broke while idle, at the next epoch's first event), a send
 *   error, a bad message while active, or tc_fail().  ops->failed runs once;
 *   the owner answers its waiters and ends the job.
 *
 * Every function runs on the server's one thread.  Texts name the collective
 * by `name` and epoch: "<name> <epoch> timed out on node <n>; ...".
 */
#ifndef LOOM_PMISERV_TREECOLL_H
#define LOOM_PMISERV_TREECOLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct psrv;
struct msg;
struct tcoll;

struct tcoll_ops {
    /* NULL if a blob from the tree is well formed, else why not.  May be NULL. */
    const char *(*check)(const void *buf, size_t len);
    /* The first event of an epoch, once armed: false if it can never complete
     * (the owner has failed it, e.g. a local rank is already dead). */
    bool (*starting)(struct psrv *s);
    /* Timeout report: append what the local side still misses ("; ..."). */
    void (*describe_local)(struct psrv *s, FILE *fp);
    /* The epoch completed (state already reset for the next one). */
    void (*done)(struct psrv *s, const void *all, size_t len);
    /* Failed (once).  from_node: the neighbour that reported it, or -1. */
    void (*failed)(struct psrv *s, int rank, int from_node, const char *text);
};

struct tcoll *tc_create(struct psrv *s, const char *name, int up_type, int down_type,
                        const struct tcoll_ops *ops);
void tc_destroy(struct tcoll *tc);

/* First event of an epoch (no-op while one is active).  false if the collective
 * failed or cannot complete. */
bool tc_begin(struct psrv *s, struct tcoll *tc);
/* This node's blob for the current epoch (copied; begins the epoch). */
void tc_local(struct psrv *s, struct tcoll *tc, const void *blob, size_t len);
/* An up_type or down_type message.  0, or -EPROTO for a bad one. */
int tc_input(struct psrv *s, struct tcoll *tc, const struct msg *m);
void tc_link_gone(struct psrv *s, struct tcoll *tc, int node);
/* Fail now (no-op once failed). */
void tc_fail(struct psrv *s, struct tcoll *tc, int rank, int from_node, const char *text);
/* Timeout check: ms until the deadline, or -1 if none is armed. */
int tc_tick(struct psrv *s, struct tcoll *tc, uint64_t now);

uint32_t tc_epoch(const struct tcoll *tc);
bool tc_active(const struct tcoll *tc);   /* an epoch is in progress here */
bool tc_local_in(const struct tcoll *tc); /* ... and this node's blob is in */
bool tc_up_sent(const struct tcoll *tc);  /* ... and went up: waiting on the parent */
bool tc_failed(const struct tcoll *tc);

#endif /* LOOM_PMISERV_TREECOLL_H */
