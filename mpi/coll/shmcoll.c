/*
 * shmcoll.c - blocking Barrier, Bcast, Reduce and Allreduce through the node's shared
 *             segment, for communicators whose ranks all live on this node.
 *
 * Contract (coll.h): xm_shmcoll_*() return 0 when the collective is done, 1 when it
 *   does not apply (the caller runs the p2p schedule instead), or -errno.  Whether it
 *   applies depends only on things every member sees the same way (the communicator,
 *   packed byte counts, the op and the basic element type), so all members take the
 *   same path.  Nonblocking collectives keep using the p2p schedules.
 * Slots: a communicator gets the collective slot (shm/shm.h) whose key is a hash of its
 *   context id and its members' world ranks in rank order; no free slot -> p2p.
 * Protocols (member i of n; all counters only grow, compared modulo 2^32):
 *   round      read gen, then fetch_add(count); the one that brings count to n is the
 *              last arriver: it does the round's work (the reduction), resets count,
 *              release-stores gen + 1 and wakes the sleepers; the others wait for gen
 *              to move.  Barrier = one round.  Whoever arrives last does the work, so
 *              oversubscribed ranks never wait for a sleeping leader.
 *   (all)reduce per chunk of LOOM_MPI_SHM_COLL_BUF bytes: pack my part into my data
 *              buffer, one round in which the last arriver folds the n buffers in rank
 *              order (d0 op (d1 op (...))) into the result buffer, then unpack it.  The
 *              buffers are reusable in the next round because the next round's last
 *              arriver only runs once everybody has left this one.
 *   bcast      a ring of 4 chunks; the q-th chunk (counted over the slot's lifetime,
 *              every member counts the same) goes to ring[q % 4] once done[q % 4] shows
 *              that all n - 1 readers copied its previous use; the root publishes
 *              pub = q + 1, readers copy and bump done.  The root never waits for
 *              readers except to reuse a chunk, so a series of broadcasts pipelines.
 * Waiting (wait_reach): spin, polling the p2p engine every 64 pauses (pending
 *   nonblocking collectives and parked sends keep moving), then sched_yield, then sleep
 *   on the rank's futex word (xm_shm_sleep), 20 ms at a time.  With a rank per core:
 *   spin LOOM_MPI_COLL_SPIN_US (100000 us), no yields (LOOM_MPI_COLL_YIELD=0; a yield
 *   hands the CPU to whatever else yields on a loaded machine), optionally one yield
 *   every LOOM_MPI_COLL_YIELD_EVERY_US while spinning (default 0 = never).
 *   Oversubscribed: 64 pauses, up to LOOM_MPI_COLL_YIELD yields (4 per local rank, at
 *   most 256; none from 16 ranks per CPU on), then sleep.  Yielding pays while few
 *   ranks share a CPU: the one we wait for runs next.  With many, every yield runs
 *   another waiter that yields again, and the ranks still to arrive get a shrinking
 *   share of the CPU: 64 ranks on 2 cores took 660-760 us per Barrier with 256 yields
 *   and 345 us sleeping at once (Open MPI yielding: 330 us); 32 ranks were the same
 *   either way; 8 and 16 ranks lose 2-3x by sleeping at once (futex wake-ups).  The yield budget adapts: a yield that takes longer than
 *   LOOM_MPI_COLL_YIELD_SLOW_US (1000) ran another job's time slice, so it halves (under
 *   load from other jobs, sleeping at once beat yielding 2x at 8 ranks); quick yields
 *   (our own ranks taking turns) double it back.  The threshold is a time slice, not
 *   less: our own ranks' work between yields (a 64 KiB reduction) takes 100-300 us, and
 *   a 50 us threshold halved the budget to nothing there, so a barrier after a large
 *   Allreduce slept instead of yielding (37 us against 17 us at 8 ranks on 2 cores).
 * LOOM_MPI_COLL_SHM=0 turns all of this off; LOOM_MPI_COLL_SHM_MAX caps Bcast and
 *   (All)reduce bytes (default 64 KiB: above it the copy in and out of the segment
 *   loses to the p2p path's single-copy CMA and Rabenseifner, measured at 2 and 8
 *   ranks for 256 KiB and 1 MiB); LOOM_MPI_COLL_SHM_PAIR_MAX (32 KiB) caps a Bcast
 *   between two ranks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/comm.h"
#include "../core/mt.h"
#include "../core/p2p.h"
#include "../dt/dtype.h"
#include "../shm/shm.h"
#include "coll.h"

static struct {
    int init, on;
    int want; /* LOOM_MPI_COLL_SHM: the same on every rank, unlike on (slots here) */
    struct xm_shm_coll_geom g;
    uint32_t *bq;                /* per slot: broadcast chunks seen so far */
    double spin_us, yield_every; /* spin this long, yielding every so often */
    unsigned yield;              /* then up to this many sched_yields, then futex */
    unsigned ycur;               /* current yield budget (adapts, see wait_reach) */
    double yield_slow;           /* a yield longer than this (us) halves ycur */
    size_t max, split, pair_max;
} L;

struct grp {
    struct xm_shm_coll *s;
    int slot, n, me;
    struct xm_comm *c;
    const int *map; /* member -> comm rank, NULL = identity */
};

static void init(void)
{
    L.init = 1;
    xm_shm_coll_geom(&L.g);
    L.want = xm_env_int("LOOM_MPI_COLL_SHM", 1) != 0;
    L.on = L.want && L.g.nslots > 0;
    int ov = xm_g.oversubscribed;
    L.spin_us = xm_env_int("LOOM_MPI_COLL_SPIN_US", ov ? 0 : 100000);
    L.yield_every = xm_env_int("LOOM_MPI_COLL_YIELD_EVERY_US", 0);
    int y = 4 * xm_g.nlocal;
    if (xm_g.nlocal >= 16 * (xm_g.node_cpus > 0 ? xm_g.node_cpus : 1))
        y = 0; /* 16 or more ranks per CPU: sleep at once (see the header) */
    L.yield = (unsigned)xm_env_int("LOOM_MPI_COLL_YIELD", ov ? (y < 256 ? y : 256) : 0);
    L.ycur = L.yield;
    L.yield_slow = xm_env_int("LOOM_MPI_COLL_YIELD_SLOW_US", 1000);
    L.max = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_MAX", 65536);
    L.pair_max = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_PAIR_MAX", 32768);
    L.split = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_SPLIT", 2048);
    if (L.on) {
        L.bq = calloc((size_t)L.g.nslots, sizeof(*L.bq));
        L.on = L.bq != NULL;
    }
}

/* 1 and *g filled if the members (comm ranks map[0..n-1], NULL = all of c; I am
 * map[me]) can use a shared-memory slot */
static int grp_get(struct xm_comm *c, const int *map, int n, int me, struct grp *g)
{
    if (!L.init)
        init();
    if (!L.on || n < 2 || n > L.g.nlocal || c->ctx == XM_CTX_CREATE_GROUP)
        return 0;
    /* FNV-1a over the context id and the members' world ranks */
    uint64_t h = 0xcbf29ce484222325ull;
    h = (h ^ c->ctx) * 0x100000001b3ull;
    for (int i = 0; i < n; i++) {
        int w = xm_comm_world_rank(c, map ? map[i] : i);
        if (xm_g.local_index[w] < 0)
            return 0;
        h = (h ^ (uint64_t)(unsigned)w) * 0x100000001b3ull;
    }
    h ^= h >> 31;
    if (!h)
        h = 1;
    g->s = xm_shm_coll_slot(h, &g->slot);
    if (!g->s)
        return 0;
    g->n = n;
    g->me = me;
    g->c = c;
    g->map = map;
    return 1;
}

static int lidx(const struct grp *g, int i)
{
    return xm_g.local_index[xm_comm_world_rank(g->c, g->map ? g->map[i] : i)];
}

static void wake_others(const struct grp *g)
{
    xm_shm_wake_fence();
    for (int i = 0; i < g->n; i++)
        if (i != g->me)
            xm_shm_wake_nf(lidx(g, i));
}

static int reached(const _Atomic uint32_t *w, uint32_t target, uint32_t *v)
{
    /* acquire: pairs with the release that moved the counter (its data is visible) */
    *v = atomic_load_explicit(w, memory_order_acquire);
    return (int32_t)(*v - target) >= 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* wait until *w >= target (modulo 2^32) */
static void wait_reach(const _Atomic uint32_t *w, uint32_t target)
{
    uint32_t v;
    if (reached(w, target, &v))
        return;
    double t0 = now_us(), next_yield = t0 + L.yield_every;
    unsigned yields = 0;
    int spinning = 1;
    for (unsigned i = 1;; i++) {
        if (spinning) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if ((i & 63) == 0) {
                xm_progress();
                int others = 0;
                if (__builtin_expect(xm_mt.on, 0)) {
                    xm_mt_pass(); /* threads: let the process's other threads in */
                    others = xm_mt.inside > 1; /* they need the CPU: do not spin long */
                }
                double t = now_us();
                if (others || t - t0 >= L.spin_us) {
                    spinning = 0;
                } else if (L.yield_every > 0 && t >= next_yield) {
                    int held = xm_mt_drop();
                    sched_yield(); /* in case the one we wait for shares our CPU */
                    xm_mt_take(held);
                    next_yield = t + L.yield_every;
                }
            }
        } else {
            xm_progress();
            if (__builtin_expect(xm_mt.on, 0))
                xm_mt_pass();
            if (reached(w, target, &v))
                return;
            if (yields++ < L.ycur) {
                /* A yield that lasts long ran somebody else's time slice (another
                 * job): yielding then only delays us, sleep sooner next time.  Short
                 * ones cycle through our own ranks: yield more (up to L.yield). */
                double t = now_us();
                int held = xm_mt_drop();
                sched_yield();
                xm_mt_take(held);
                if (now_us() - t > L.yield_slow)
                    L.ycur /= 2;
                else if (L.ycur < L.yield)
                    L.ycur = L.ycur * 2 + 1 < L.yield ? L.ycur * 2 + 1 : L.yield;
            } else
                xm_shm_sleep(w, v, 20); /* returns at once if *w already moved */
        }
        if (reached(w, target, &v))
            return;
    }
}

/* One round: arrive; the last arriver runs work(arg) (may be NULL) for everybody. */
static void round_trip(const struct grp *g, void (*work)(const struct grp *, void *),
                       void *arg)
{
    struct xm_shm_coll *s = g->s;
    /* acquire: the round number cannot move before I arrive (it needs my arrival) */
    uint32_t gen = atomic_load_explicit(&s->gen, memory_order_acquire);
    /* acq_rel: release publishes my data buffer; the last arriver's acquire (through the
     * chain of fetch_adds) sees every member's */
    if (atomic_fetch_add_explicit(&s->count, 1, memory_order_acq_rel) + 1 ==
        (uint32_t)g->n) {
        if (work)
            work(g, arg);
        /* relaxed: the release store of gen below orders it before anyone's next
         * arrival (they acquire gen first) */
        atomic_store_explicit(&s->count, 0, memory_order_relaxed);
        /* release: result buffer and count reset visible to whoever sees gen + 1 */
        atomic_store_explicit(&s->gen, gen + 1, memory_order_release);
        wake_others(g);
        return;
    }
    wait_reach(&s->gen, gen + 1);
}

int xm_shmcoll_ready(struct xm_comm *c, const int *map, int n, int me)
{
    struct grp g;
    return grp_get(c, map, n, me, &g);
}

int xm_shmcoll_barrier(struct xm_comm *c, const int *map, int n, int me)
{
    struct grp g;
    if (!grp_get(c, map, n, me, &g))
        return 1;
    round_trip(&g, NULL, NULL);
    return 0;
}

/* ---- reductions ------------------------------------------------------------------- */
struct red {
    size_t len, esize;
    MPI_Datatype basic;
    MPI_Op op;
    int err;
};

/* result bytes [off, off + len) = d0 op (d1 op (... d[n-1])) over that range */
static void fold_slice(const struct grp *g, struct red *r, size_t off, size_t len)
{
    char *res = xm_shm_coll_res(g->s) + off;
    int cnt = (int)(len / r->esize);
    if (!cnt)
        return;
    memcpy(res, xm_shm_coll_data(g->s, g->n - 1) + off, len);
    for (int i = g->n - 2; i >= 0; i--) {
        int rc = xm_op_apply(r->op, xm_shm_coll_data(g->s, i) + off, res, cnt, r->basic);
        if (rc < 0)
            r->err = rc;
    }
}

static void fold(const struct grp *g, void *arg)
{
    struct red *r = arg;
    fold_slice(g, r, 0, r->len);
}

/* basic element type the reduction can run on in packed form, or NULL */
static struct xm_dtype *red_basic(MPI_Datatype dt, MPI_Op op)
{
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t || t->basic == MPI_DATATYPE_NULL || (op & XM_H_DYN) || op == MPI_MINLOC ||
        op == MPI_MAXLOC)
        return NULL;
    struct xm_dtype *b = xm_dt_get(t->basic);
    /* pair types and padded types do not reduce in packed form */
    if (!b || b->size == 0 || (MPI_Aint)b->size != b->extent)
        return NULL;
    if (xm_op_apply(op, NULL, NULL, 0, t->basic) < 0)
        return NULL; /* invalid pair: the p2p path reports it */
    return b;
}

/* root < 0: allreduce */
static int reduce_any(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, struct xm_comm *c, const int *map, int n, int me)
{
    struct xm_dtype *t = xm_dt_get(dt), *b;
    struct grp g;
    if (!t || !(b = red_basic(dt, op)))
        return 1;
    size_t bytes = t->size * (size_t)count;
    if (!grp_get(c, map, n, me, &g))
        return 1;
    if (bytes > L.max)
        return 1;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t chunk = L.g.buf / b->size * b->size;
    struct red r = {0, b->size, t->basic, op, 0};
    int err = 0;
    for (size_t off = 0; off < bytes; off += chunk) {
        r.len = bytes - off < chunk ? bytes - off : chunk;
        if (xm_dt_pack(src, count, t, off, xm_shm_coll_data(g.s, g.me), r.len) < 0)
            err = -EINVAL; /* keep going: the others are in the rounds too */
        r.err = 0;
        if (r.len >= L.split * (size_t)g.n) {
            /* every member folds its slice of the chunk; a second round says all
             * slices are done (two syncs, but the copies and ops run in parallel) */
            round_trip(&g, NULL, NULL);
            size_t ne = r.len / b->size, lo = ne * (size_t)g.me / (size_t)g.n,
                   hi = ne * (size_t)(g.me + 1) / (size_t)g.n;
            fold_slice(&g, &r, lo * b->size, (hi - lo) * b->size);
            round_trip(&g, NULL, NULL);
        } else {
            round_trip(&g, fold, &r);
        }
        if (r.err)
            err = r.err;
        if ((root < 0 || root == g.me) &&
            xm_dt_unpack(rbuf, count, t, off, xm_shm_coll_res(g.s), r.len) < 0)
            err = -EINVAL;
    }
    return err;
}

int xm_shmcoll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                         MPI_Op op, struct xm_comm *c, const int *map, int n, int me)
{
    return reduce_any(sbuf, rbuf, count, dt, op, -1, c, map, n, me);
}

int xm_shmcoll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, struct xm_comm *c, const int *map, int n, int me)
{
    return reduce_any(sbuf, rbuf, count, dt, op, root, c, map, n, me);
}

int xm_shmcoll_fits(int count, MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    if (!L.init)
        init();
    return L.want && t && t->size * (size_t)count <= L.max;
}

int xm_shmcoll_reducible(int count, MPI_Datatype dt, MPI_Op op)
{
    struct xm_dtype *t = xm_dt_get(dt);
    if (!L.init)
        init();
    return L.want && t && red_basic(dt, op) && t->size * (size_t)count <= L.max;
}

/* ---- broadcast ------------------------------------------------------------------- */
int xm_shmcoll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                     const int *map, int n, int me)
{
    struct xm_dtype *t = xm_dt_get(dt);
    struct grp g;
    if (!t)
        return 1;
    size_t bytes = t->size * (size_t)count;
    /* a whole communicator of two (map == NULL: every member takes the same p2p
     * fallback): the broadcast is one message, which p2p moves in one copy (CMA)
     * against two through the ring; the ring won only while the two CPUs shared a
     * cache (64 KiB: 1.6 us against 5.1), and lost 30 us against 6.3 when they did not */
    if (!L.init)
        init();
    if (!map && n == 2 && bytes > L.pair_max)
        return 1;
    if (!grp_get(c, map, n, me, &g))
        return 1;
    if (bytes > L.max)
        return 1;
    struct xm_shm_coll *s = g.s;
    uint32_t q = L.bq[g.slot];
    int err = 0;
    for (size_t off = 0; off < bytes; off += L.g.chunk, q++) {
        size_t len = bytes - off < L.g.chunk ? bytes - off : L.g.chunk;
        int k = (int)(q % XM_SHM_COLL_RING);
        uint32_t use = q / XM_SHM_COLL_RING;
        char *ring = xm_shm_coll_ring(s, k);
        if (g.me == root) {
            /* the chunk's previous use must have been read by all n - 1 others */
            wait_reach(&s->done[k], use * (uint32_t)(g.n - 1));
            if (xm_dt_pack(buf, count, t, off, ring, len) < 0)
                err = -EINVAL;
            /* release: the chunk's bytes before the publication */
            atomic_store_explicit(&s->pub, q + 1, memory_order_release);
            wake_others(&g);
        } else {
            wait_reach(&s->pub, q + 1);
            if (xm_dt_unpack(buf, count, t, off, ring, len) < 0)
                err = -EINVAL;
            /* release: our reads of the chunk before the root may overwrite it */
            atomic_fetch_add_explicit(&s->done[k], 1, memory_order_release);
            xm_shm_wake(lidx(&g, root));
        }
    }
    L.bq[g.slot] = q;
    return err;
}
