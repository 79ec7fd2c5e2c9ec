/* ring.h - PMIX_Ring (Slurm's PMI-2 "ring" extension) over the node tree.
 *
 * Contract:
 *   Every rank sends ring;ring-count=1;ring-left=V;ring-right=V.  Each node
 *   orders its contributors as: local clients (by client index), then child
 *   nodes (by child order).  Up: when all contributors are in, a node sends
 *   {count = sum of counts, left = first contributor's left, right = last
 *   contributor's right} to its parent.  Node 0 starts the down phase with
 *   {offset 0, left = last contributor's right, right = first contributor's
 *   left} (closing the ring); each contributor i gets count = offset + sum
 *   of the counts before it, left = right value of contributor i-1 (or the
 *   parent-given left), right = left value of contributor i+1 (or the
 *   parent-given right).  Ranks get ring-response with those three values.
 *   Epochs, duplicate drop, timeout and dead-client failure as for fences.
 */
#ifndef LOOM_PMISERV_RING_H
#define LOOM_PMISERV_RING_H

#include <stdint.h>

struct psrv;
struct client;
struct msg;

struct ring *ring_create(struct psrv *s);
void ring_destroy(struct ring *r);
/* Client c entered the ring with its left/right values. */
void ring_enter(struct psrv *s, struct client *c, const char *left, const char *right,
                const char *thrid);
void ring_client_lost(struct psrv *s, struct client *c);
int ring_tree_input(struct psrv *s, const struct msg *m);
void ring_link_gone(struct psrv *s, int node);
int ring_tick(struct psrv *s, uint64_t now);
/* Fail the ring in progress (waiting ranks get rc!=0) and abort; later
 * rings fail at once.  No-op when already failed. */
void ring_fail(struct psrv *s, int rank, const char *text);

#endif /* LOOM_PMISERV_RING_H */
