/* attrs.h - job attributes and node attributes.
 *
 * Contract:
 *   Job attributes are computed from the configuration: PMI_process_mapping
 *   (psrv_process_mapping, or cfg.process_mapping), universeSize,
 *   PMI_hwloc_xmlfile when configured; every other key is not found.
 *   Node attributes live on this node only (never forwarded).  A get with
 *   wait=TRUE of an absent key is parked on the client and answered by the
 *   first local put of that key (or fails at the wait deadline).  The
 *   built-in node attributes localRanksCount and localRanks (comma list of
 *   this node's global ranks) cannot be overwritten.  Put attributes live in
 *   a hash table (strmap.h), bounded by limits.nodeattr_count and
 *   limits.nodeattr_bytes.
 */
#ifndef LOOM_PMISERV_ATTRS_H
#define LOOM_PMISERV_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

struct psrv;
struct client;

struct nodeattrs *nodeattrs_create(struct psrv *s);
void nodeattrs_destroy(struct nodeattrs *na);
/* Put by client c: 0, or a protocol rc with *err set (quotas: rc 2 and the
 * job ends, see srv_quota).  Wakes waiters of key. */
int nodeattrs_put(struct psrv *s, struct client *c, const char *key, const char *val,
                  const char **err);
/* Entries and bytes (key + value lengths) put so far, for psrv_usage. */
void nodeattrs_usage(const struct psrv *s, int64_t *count, int64_t *bytes);
/* Value or NULL. */
const char *nodeattrs_get(struct psrv *s, const char *key);
/* Park client c until key is put (its earlier wait, if any, is dropped).
 * 0 or -ENOMEM.  The waiters are this file's: one per client index. */
int nodeattrs_wait(struct psrv *s, struct client *c, const char *key, const char *thrid);
/* Client c is parked in a wait. */
bool nodeattrs_waiting(const struct psrv *s, const struct client *c);
/* Client c hung up: its wait is dropped, never answered. */
void nodeattrs_client_lost(struct psrv *s, struct client *c);
/* Expire waits: ms until the next deadline or -1. */
int nodeattrs_tick(struct psrv *s, uint64_t now);

#endif /* LOOM_PMISERV_ATTRS_H */
