/* blob.h - services for host-side protocols (PMIx): a job-wide collective
 * of opaque per-node blobs, and requests routed to the node of a rank.
 *
 * Contract:
 *   Blob collective (psrv_coll_contribute): every node contributes one blob
 *   per collective, in the same order on every node; node blobs are
 *   gathered up the k-ary tree (child -> parent: own blob followed by the
 *   children's, concatenated), node 0 broadcasts the concatenation down, and
 *   every node hands it to ops->coll_done.  Epochs, duplicates, early
 *   messages of the next epoch (held), the timeout (cfg.fence_timeout_ms
 *   from the first event of an epoch), link loss and a dead local client
 *   behave as in the KVS fence: failure calls ops->coll_done with rc < 0 on
 *   every node and ends the job through srv_abort (flooded as FENCE_FAIL).
 *   Local contributions made while one is in flight are queued.
 *
 *   Routed requests (psrv_dmdx_request): a request for the data of rank R
 *   goes hop by hop along the tree (ktree_next_hop) to the node hosting R,
 *   which gets ops->dmdx_request(handle) and answers once with
 *   psrv_dmdx_reply(handle); the answer travels back to the origin, whose
 *   ops->dmdx_done(id) fires exactly once: with the data, with the remote
 *   error, or with -ETIMEDOUT after cfg.fence_timeout_ms, or -ECANCELED
 *   when the job aborts.
 *
 * Payloads: COLL_UP / COLL_DOWN = raw concatenation of blobs;
 *   DMDX_REQ = u64 id, i32 rank, bytes info; DMDX_RESP = u64 id, i32 rc,
 *   bytes data.
 */
#ifndef LOOM_PMISERV_BLOB_H
#define LOOM_PMISERV_BLOB_H

#include <stdint.h>

struct psrv;
struct client;
struct msg;

struct blobsvc *blob_create(struct psrv *s);
void blob_destroy(struct blobsvc *b);
int blob_tree_input(struct psrv *s, const struct msg *m);
void blob_link_gone(struct psrv *s, int node);
void blob_client_lost(struct psrv *s, struct client *c);
int blob_tick(struct psrv *s, uint64_t now);
/* The job is aborting: fail the collective and every pending request. */
void blob_fail(struct psrv *s, int rank, const char *text);

#endif /* LOOM_PMISERV_BLOB_H */
