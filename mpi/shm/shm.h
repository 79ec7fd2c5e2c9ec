/*
 * shm.h - what the shared-memory transport offers besides its ops table: the node's
 *         collective area (used by mpi/coll/shmcoll.c) and the sleep/wake primitives
 *         that go with it.
 *
 * Contract:
 *   - The segment holds xm_shm_coll_nslots() collective slots.  A slot belongs to one
 *     group of node-local ranks (a communicator, or its part on this node), named by a
 *     64-bit key (never 0) that every member computes the same way.
 *     xm_shm_coll_slot(key) returns the slot with that key, claiming a free one if none
 *     has it; NULL when every slot is taken (the caller falls back to p2p).  Slots are
 *     never released: a key always maps to the same slot, so all members agree on the
 *     slot (and on "no slot") without talking to each other, and a communicator freed
 *     and created again with the same key continues in the same slot.
 *   - A slot is a struct xm_shm_coll header followed by the result buffer
 *     (coll_buf bytes), one data buffer per possible member (nlocal x coll_buf) and the
 *     broadcast ring (XM_SHM_COLL_RING chunks of coll_chunk bytes); the segment is
 *     zero-filled at creation, the protocols on top are in shmcoll.c.
 *   - xm_shm_sleep(w, old, ms): sleep on this rank's futex word until *w != old, a
 *     p2p packet arrives, or ms milliseconds pass (returns at once if any already holds).
 *     xm_shm_wake(lidx): after publishing a change that a rank may sleep on (fence
 *     included; costs a syscall only if that rank sleeps).  No wake-up is lost: same
 *     Dekker protocol as the p2p path (see shm.c).
 */
#ifndef XM_SHM_H
#define XM_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define XM_SHM_COLL_RING 4 /* broadcast chunks in flight */

struct xm_shm_coll {
    _Alignas(64) _Atomic uint64_t key;   /* 0 = free; set once by a CAS */
    _Alignas(64) _Atomic uint32_t count; /* arrivals in the current round */
    _Alignas(64) _Atomic uint32_t gen;   /* completed rounds (members sleep on it) */
    _Alignas(64) _Atomic uint32_t pub;   /* broadcast chunks published so far */
    _Alignas(64) _Atomic uint32_t done[XM_SHM_COLL_RING]; /* reads of each ring chunk */
};

struct xm_shm_coll_geom {
    int nslots;   /* 0: no collective area (or no segment) */
    size_t buf;   /* bytes of the result buffer and of each member's buffer */
    size_t chunk; /* bytes of each broadcast ring chunk */
    int nlocal;
};

/* geometry of the area; nslots == 0 when there is no segment */
void xm_shm_coll_geom(struct xm_shm_coll_geom *g);
/* slot for key (claimed if new), its index in *idx; NULL if the area is full/absent */
struct xm_shm_coll *xm_shm_coll_slot(uint64_t key, int *idx);
char *xm_shm_coll_res(struct xm_shm_coll *s);
char *xm_shm_coll_data(struct xm_shm_coll *s, int member);
char *xm_shm_coll_ring(struct xm_shm_coll *s, int k);
void xm_shm_sleep(const _Atomic uint32_t *w, uint32_t old, int timeout_ms);
void xm_shm_wake(int lidx);
/* several ranks: one xm_shm_wake_fence(), then xm_shm_wake_nf() for each */
void xm_shm_wake_fence(void);
void xm_shm_wake_nf(int lidx);

#endif
