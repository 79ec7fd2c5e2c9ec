/* fence.h - the job-wide fence (PMI-1 barrier_in == PMI-2 kvs-fence).
 *
 * Contract:
 *   State of the fence on one node server (the tree part is treecoll.h's):
 *     IDLE --first local arrival or child message--> COLLECT
 *     COLLECT --all local clients in (their pending puts are this node's
 *         blob) + all child subtrees in-->
 *         root: FENCE_DOWN{every node's puts} to children, commit, reply
 *         rc=0, epoch++ --> IDLE
 *         else: FENCE_UP{own puts + children's} to parent --> WAIT_PARENT
 *     WAIT_PARENT --FENCE_DOWN(epoch)--> forward to children, commit,
 *         reply rc=0 to local clients, epoch++ --> IDLE
 *     any --timeout, dead client, link error, bad message, FENCE_FAIL-->
 *         FAILED (terminal): waiting clients get rc!=0, FENCE_FAIL is
 *         flooded to the tree neighbours, ops->abort is called.
 *   The tree is the k-ary tree of common/ktree.h rooted at node 0.
 *   Messages carry the epoch (number of fences completed before).  Stale
 *   epochs and duplicates from the same child are dropped; a child's
 *   FENCE_UP for the next epoch (possible when a host delivers the parent's
 *   FENCE_DOWN out of tree order) is held and replayed.
 */
#ifndef LOOM_PMISERV_FENCE_H
#define LOOM_PMISERV_FENCE_H

#include <stdbool.h>
#include <stdint.h>

struct psrv;
struct client;
struct msg;

enum fence_state {
    FENCE_IDLE = 0,
    FENCE_COLLECT,
    FENCE_WAIT_PARENT,
    FENCE_FAILED,
};

struct fence *fence_create(struct psrv *s);
void fence_destroy(struct fence *f);

/* Client c entered the fence (thrid to echo may be NULL).  The reply comes
 * later, through c->proto->fence_done, or at once on failure. */
void fence_enter(struct psrv *s, struct client *c, const char *thrid);
/* Client c is gone without finalize (or finalized): fails a fence that
 * still needs it. */
void fence_client_lost(struct psrv *s, struct client *c);
/* A FENCE_* tree message.  0, or -EPROTO for a bad one (fence failed). */
int fence_tree_input(struct psrv *s, const struct msg *m);
void fence_link_gone(struct psrv *s, int node);
/* Fail now (e.g. the job is aborting).  No-op when already FAILED. */
void fence_fail(struct psrv *s, int rank, int from_node, const char *msg);
/* Timeout check: ms until the deadline, or -1 if none armed. */
int fence_tick(struct psrv *s, uint64_t now);

int fence_epoch(const struct fence *f);
/* The last completed fence left own puts on their node (kvsroute.h). */
bool fence_last_ondemand(const struct fence *f);
enum fence_state fence_state(const struct fence *f);
const char *fence_state2str(enum fence_state st);

#endif /* LOOM_PMISERV_FENCE_H */
