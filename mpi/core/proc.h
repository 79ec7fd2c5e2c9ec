/*
 * proc.h - the process table: every process this one can address, by a global id.
 *
 * Owns: the table (core/proc.c) and the rule that grows every per-peer array with it.
 * Contract:
 *   - Ids 0 .. world size - 1 are MPI_COMM_WORLD's ranks (id = world rank), entered by
 *     xm_proc_init() after boot; their addresses stay in the job's KVS (the netmod
 *     reads them there).  Later ids are processes of other jobs, added by
 *     xm_proc_add() from a card (job id, rank in its job, TCP addresses) and kept for
 *     the rest of the library's life: a disconnect leaves the entry, and meeting the
 *     same process again (same job id and rank) gives back the same id.
 *   - Communicators keep mapping their ranks to ids in w[] (core/xm.h), so the p2p
 *     engine, collectives and status translation use ids where they used world ranks.
 *   - Per-peer state sized by the number of ids (p2p.c's sequence state and queues,
 *     the netmod's connection table, xm_g.node_of and xm_g.local_index) registers a
 *     grow hook; xm_proc_add() calls every hook with the old and new capacity before
 *     the new id exists, and fails (-ENOMEM, table unchanged beyond capacity) if one
 *     cannot grow.  Hooks must zero (or otherwise initialise) the new slots.  A new id
 *     is on no node of this job: node_of = a node number no world rank has (the id
 *     itself, >= world size), local_index = -1 (never shared memory).
 *   - xm_proc_count() is what bounds a packet's src (xm_pkt_check) and every loop over
 *     peers.
 * Caveats: the engine is single-threaded (core/mt.h's lock); growing moves the arrays,
 *   so nobody may keep a pointer into them across a call that can add a process.
 */
#ifndef XM_PROC_H
#define XM_PROC_H

#include <stdint.h>

#include "dynwire.h"

#define XM_PROC_MAX (1 << 24) /* ids; far above any job plus its connections */

struct xm_proc {
    char jobid[XM_DYN_JOBID];
    int rank;                 /* in its own job */
    struct xm_dyn_addrs addrs; /* other jobs' processes: where the netmod reaches them */
    /* other jobs' processes: the key of the TCP handshake with them, the secret of the
     * port through which the two first met (both ends learn it in the same connection,
     * so both hold the same one); port_tag != 0: that port is the other's, and it may
     * not know us yet (the netmod's hello names the port) */
    int has_secret, port_tag;
    uint8_t secret[XM_DYN_SECRET];
};

/* The world's entries (jobid, size): 0 or -ENOMEM. */
int xm_proc_init(const char *jobid, int world_size);
void xm_proc_finalize(void);
extern int xm_nprocs; /* ids in use (read on hot paths; write only here) */
static inline int xm_proc_count(void)
{
    return xm_nprocs;
}
/* ids the grow hooks have made room for so far (>= xm_proc_count()): per-peer state
 * that starts after ids were added allocates this many entries, since ids up to it
 * arrive without another call of the hooks */
int xm_proc_capacity(void);
/* NULL for an id out of range */
const struct xm_proc *xm_proc_get(int id);
/* the id of (jobid, rank), or -1 */
int xm_proc_find(const char *jobid, int rank);
/* id of the process c names: the existing one, or a new one (grow hooks run first);
 * -EINVAL for a card that dynwire would not carry, -ENOMEM, -ENOSPC at XM_PROC_MAX. */
int xm_proc_add(const struct xm_dyn_card *c);

/* Cross-job (DESIGN.md "Dynamic processes"): the first secret an id gets is kept for
 * the library's life; world ids take none (-EINVAL).  0 or -EINVAL. */
int xm_proc_set_secret(int id, const uint8_t secret[XM_DYN_SECRET], int port_tag);
/* order of two ids by (job id, rank), the same in every process that knows both:
 * <0, 0, >0 */
int xm_proc_cmp(int a, int b);
/* The ports this process owns, by tag, with their secrets: what lets a process of
 * another job that does not know us yet through the TCP handshake.  add: 0 or -ENOSPC;
 * secret: 0 (copied to out) or -ENOENT. */
int xm_proc_port_add(int tag, const uint8_t secret[XM_DYN_SECRET]);
void xm_proc_port_del(int tag);
int xm_proc_port_secret(int tag, uint8_t out[XM_DYN_SECRET]);

/* grow hook: make room for ids [0, newcap) and initialise [oldcap, newcap); 0 or
 * -ENOMEM.  After a failure the same (oldcap, newcap) may come again: a hook that had
 * already grown must accept it. */
typedef int (*xm_proc_grow_fn)(int oldcap, int newcap);
int xm_proc_on_grow(xm_proc_grow_fn fn); /* 0, -ENOSPC (too many hooks) */

#endif
