/* kvsroute.h - the on-demand KVS: which puts stay on their node, and gets
 * of keys this node lacks asked of the nodes that hold them.
 *
 * Contract:
 *   Ownership comes from the key alone, no index is gathered.  A put by rank
 *   p is "own" when the key holds the decimal form of p as a maximal digit
 *   run (no leading zero, except "0" itself): in an on-demand fence it is
 *   committed on its node only; every other put travels in the fence.
 *   A get that misses the committed store and the cache asks, in turn, the
 *   node of srcid (PMI-2, when >= 0) and the nodes of the ranks the key's
 *   digit runs name (at most KR_MAX_CAND nodes, this one skipped); the first
 *   value found answers the rank and is cached until the next fence
 *   completes.  Every "not found" answers as a miss of the full mode.
 *   Requests (MSG_KVS_REQ) carry the asker's count of completed fences E; the
 *   owner answers from its committed store once it has completed E fences
 *   too (waiting, bounded, for its own FENCE_DOWN otherwise) and never with
 *   a value committed after fence E.
 *
 * Bounds: KR_MAX_OUT gets of this node in flight (KR_MAX_OUT_CLIENT per
 * rank), KR_MAX_DEFER requests of other nodes waiting for this node's fence;
 * past them the get is answered rc!=0.  Every wait ends after
 * cfg.fence_timeout_ms (rc!=0), and an abort answers every waiting get
 * rc!=0.
 */
#ifndef LOOM_PMISERV_KVSROUTE_H
#define LOOM_PMISERV_KVSROUTE_H

#include <stdbool.h>
#include <stdint.h>

struct psrv;
struct client;
struct msg;
struct kvsroute;

#define KR_MAX_CAND 8
#define KR_MAX_OUT 4096
#define KR_MAX_OUT_CLIENT 64
#define KR_MAX_DEFER 4096

/* Does key name rank as a maximal digit run? */
bool kr_key_names_rank(const char *key, int rank);

struct kvsroute *kr_create(struct psrv *s);
void kr_destroy(struct kvsroute *k);

/* Should this node's next fence leave own puts home?  (mode, pending bytes) */
bool kr_fence_ondemand(struct psrv *s, int64_t pending_bytes);
/* Cached value of key, or NULL. */
const char *kr_cached(struct psrv *s, const char *key);
/* A local get of key missed: ask other nodes.  Returns true when the answer
 * will come (or came) through c->proto->get_done, false when the caller
 * answers "not found" now.  srcid < 0: none. */
bool kr_get(struct psrv *s, struct client *c, const char *key, int srcid,
            const char *thrid);
/* A fence completed (store committed): drop the cache, serve waiting
 * requests. */
void kr_fence_done(struct psrv *s);
/* MSG_KVS_REQ / MSG_KVS_RESP.  0 or -EPROTO. */
int kr_tree_input(struct psrv *s, const struct msg *m);
void kr_client_lost(struct psrv *s, struct client *c);
void kr_link_gone(struct psrv *s, int node);
/* The job is aborting: every waiting get gets rc!=0 with text. */
void kr_fail(struct psrv *s, const char *text);
int kr_tick(struct psrv *s, uint64_t now);
void kr_usage(const struct psrv *s, int64_t *cache_keys, int64_t *remote_gets,
              int64_t *served);

#endif /* LOOM_PMISERV_KVSROUTE_H */
