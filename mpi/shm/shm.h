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

/* A receiver's offer of a large single-copy transfer to its sender (lmt.c): one per
 * local rank, in its rank area.  `word` is gen << 32 | next chunk to claim; an even
 * gen (0 in a new segment) means nothing is offered and the other fields may be
 * changing; an odd gen is an offer whose fields hold still until gen moves on. */
struct xm_shm_lmt {
    _Alignas(64) _Atomic uint64_t word;
    _Alignas(64) _Atomic uint32_t helped; /* chunks the sender finished or gave back */
    _Atomic int32_t given_back;           /* chunk the sender could not copy, -1 none */
    _Atomic int32_t sender;               /* world rank the offer is for */
    _Atomic uint32_t cookie;              /* the sender's request (from its RTS) */
    _Atomic uint32_t nchunks;
    _Atomic uint64_t pid;   /* receiver's pid (process_vm_writev target) */
    _Atomic uint64_t dst;   /* receiver's buffer */
    _Atomic uint64_t src;   /* sender's packed bytes */
    _Atomic uint64_t len;   /* bytes in all */
    _Atomic uint64_t chunk; /* bytes per chunk (the last one may be shorter) */
};

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
/* CPUs in the union of the local ranks' affinity masks (after connect; waits up to
 * 10 s for every local rank to have attached); -1 without a segment or on timeout */
int xm_shm_node_cpus(void);
/* the large-transfer offer slot of local rank lidx (NULL without a segment) */
struct xm_shm_lmt *xm_shm_lmt_slot(int lidx);

/* ---- cooperative single copy (lmt.c) ----
 * The receiver of a large contiguous rendezvous message copies it from the sender with
 * process_vm_readv in chunks it claims from its offer slot; the sender, waiting for
 * FIN in its progress loop, claims chunks from the same slot and writes them with
 * process_vm_writev, so two cores copy at once.  A sender that never looks leaves the
 * receiver to copy everything alone.  Off when oversubscribed (a helper descheduled in
 * the middle of a chunk would hold the receiver up), or with LOOM_MPI_COOP=0.  Messages
 * below LOOM_MPI_COOP_MIN bytes (64 KiB) are copied by the receiver alone; larger ones
 * in LOOM_MPI_COOP_PARTS (2) chunks of LOOM_MPI_COOP_CHUNK (32 KiB) to
 * LOOM_MPI_COOP_CHUNK_MAX (1 MiB) bytes.  For tests: LOOM_MPI_COOP_FAULT=1 makes the
 * sender fail its first chunk (the give-back path); LOOM_MPI_COOP_WAIT_MS=N makes the
 * receiver wait up to N ms for the sender's first claim, so that sharing does not depend
 * on how the two ranks happen to be scheduled. */
void xm_lmt_init(void);
/* process_vm_readv (write 0) / process_vm_writev (write 1) of n bytes between buf here and
 * remote in process pid, retried over partial transfers.  0 / -errno */
int xm_vm_copy(int write, int pid, void *buf, uint64_t remote, size_t n);
/* should a transfer of n bytes from a local sender be offered? */
int xm_lmt_wanted(size_t n);
/* receiver: copy n bytes at the sender's saddr into dst, with its help.  0 / -errno;
 * -EOWNERDEAD: the sender died while it held a chunk (dst is incomplete) */
int xm_lmt_recv(int src, uint32_t cookie, int spid, uint64_t saddr, void *dst, size_t n);
/* sender: help with the transfer of request `cookie` to dest if it is on offer;
 * returns the chunks copied */
int xm_lmt_help(int dest, uint32_t cookie);
/* with LOOM_MPI_DEBUG: one line of counts on stderr (at finalize) */
void xm_lmt_report(void);
/* The shm transport's rendezvous ops (core/transport.h rdv_*), over CMA and the
 * cooperative copy above.  Mode: LOOM_SHM_LMT=cma|copy (or LOOM_MPI_CMA=1|0); default
 * auto: CMA on the first large message, and the copy path (CTS + RDATA through the
 * cells) for good if the kernel refuses (Yama ptrace_scope, namespaces).
 * xm_shm_rdv_init() reads the mode and LOOM_MPI_EAGER_MAX into t->eager_max (32 KiB
 * with CMA, 64 KiB on the copy path) and lets processes of the same user read us. */
struct xm_transport;
void xm_shm_rdv_init(struct xm_transport *t);
int xm_shm_rdv_read(struct xm_transport *t, void *dst, size_t n, int src, uint32_t cookie,
                    int pid, uint64_t addr, int whole);
int xm_shm_rdv_offer(struct xm_transport *t, size_t n);
int xm_shm_rdv_help(struct xm_transport *t, int dest, uint32_t cookie);

#endif
