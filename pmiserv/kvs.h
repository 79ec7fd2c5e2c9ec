/* kvs.h - the job's key-value space as one node server holds it.
 *
 * Contract:
 *   Two parts.  The committed store is a hash of key -> value visible to
 *   every get; it only changes when a fence completes.  The pending set is
 *   the puts made on this node since the last fence, kept as a blob of
 *   (pack_str key, pack_str value) pairs in put order.  Blobs are
 *   concatenation-friendly: an interior node merges its children's pending
 *   sets by appending their bytes to its own, and the root commits the
 *   concatenation (later pairs replace earlier ones with the same key).
 *
 *   Iteration order (getbyidx) is first-commit order and stable.
 *
 *   Each pending put is "own" or "shared" (kvs_put_pending_as): the on-demand
 *   fence (kvsroute.h) sends only the shared ones and commits the whole
 *   pending set on this node; every committed value carries the epoch it was
 *   committed in (kvs_set_epoch), so a node serving another node's get can
 *   tell a value of a newer epoch.
 *
 * Notes:
 *   - kvs_commit_blob() validates the whole blob before changing anything:
 *     a malformed blob (-EPROTO) leaves the store untouched.
 */
#ifndef LOOM_PMISERV_KVS_H
#define LOOM_PMISERV_KVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvs;

struct kvs *kvs_create(void);
void kvs_destroy(struct kvs *k);

/* Record a put for the next fence.  0 or -ENOMEM. */
int kvs_put_pending(struct kvs *k, const char *key, const char *val);
/* The same, saying whether the put is its rank's own (kvsroute.h: the key
 * names the putting rank): own puts are left out of kvs_pending_shared(). */
int kvs_put_pending_as(struct kvs *k, const char *key, const char *val, bool own);
/* The pending puts that are not own (*blob may be NULL when empty), cut out of
 * the pending set when called (an on-demand fence).  0, or -ENOMEM (then the
 * fence sends the whole pending set, as a full one does). */
int kvs_pending_shared(struct kvs *k, const void **blob, size_t *len);
/* The pending blob (may be NULL when empty) and its length. */
const void *kvs_pending(const struct kvs *k, size_t *len);
/* Forget the pending puts (they left in a fence message). */
void kvs_pending_clear(struct kvs *k);

/* Pairs in the pending set. */
int kvs_pending_count(const struct kvs *k);

/* Cap the committed store (<= 0: no cap).  A blob whose commit leaves the
 * store past a cap returns -EDQUOT (keys) or -EFBIG (bytes): the fence fails
 * and the job ends, so that store is never read.  The caps are checked on
 * the store the whole blob makes (a key put twice in one blob may pass a cap
 * in between), and on each kvs_insert. */
void kvs_set_limits(struct kvs *k, int64_t max_keys, int64_t max_bytes);
/* Bytes (key + value lengths) in the committed store. */
int64_t kvs_bytes(const struct kvs *k);

/* Insert every pair of blob into the committed store.  0, -EPROTO, -ENOMEM,
 * -EDQUOT, -EFBIG. */
int kvs_commit_blob(struct kvs *k, const void *blob, size_t len);
/* Count the pairs of a blob, or -EPROTO. */
int kvs_blob_count(const void *blob, size_t len);

/* Committed value of key, or NULL. */
const char *kvs_get(const struct kvs *k, const char *key);
/* The same, with the epoch tag its value was committed under. */
const char *kvs_get_tagged(const struct kvs *k, const char *key, uint32_t *epoch);
/* Values committed from now on are tagged with epoch (0 at creation): the
 * fence sets the number of fences completed before it commits. */
void kvs_set_epoch(struct kvs *k, uint32_t epoch);
/* Insert one pair into the committed store (a cache): 0, -ENOMEM, -EDQUOT,
 * -EFBIG. */
int kvs_insert(struct kvs *k, const char *key, const char *val);
/* Number of committed keys. */
int kvs_count(const struct kvs *k);
/* The idx-th committed pair (0-based): 0, or -ENOENT past the end. */
int kvs_get_byidx(const struct kvs *k, int idx, const char **key, const char **val);

#endif /* LOOM_PMISERV_KVS_H */
