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
 *   this node's global ranks) cannot be overwritten.
 */
#ifndef LOOM_PMISERV_ATTRS_H
#define LOOM_PMISERV_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

struct psrv;
struct client;

struct nodeattrs *nodeattrs_create(struct psrv *s);
void nodeattrs_destroy(struct nodeattrs *na);
/* Put: 0, or a protocol rc with *err set.  Wakes waiters of key. */
int nodeattrs_put(struct psrv *s, const char *key, const char *val, const char **err);
/* Value or NULL. */
const char *nodeattrs_get(struct psrv *s, const char *key);
/* Park client c until key is put.  0 or -ENOMEM. */
int nodeattrs_wait(struct psrv *s, struct client *c, const char *key, const char *thrid);
/* Expire waits: ms until the next deadline or -1. */
int nodeattrs_tick(struct psrv *s, uint64_t now);

#endif /* LOOM_PMISERV_ATTRS_H */
