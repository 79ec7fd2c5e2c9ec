/*
 * shmcoll.c - blocking Barrier, Bcast, Reduce, Allreduce, Reduce_scatter(_block) and
 *             Allgather(v) through the node's shared segment, for communicators whose
 *             ranks all live on this node.
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
 *   either way; 8 and 16 ranks lose 2-3x by sleeping at once (futex wake-ups).  The
 *   yield budget adapts: a yield that takes longer than LOOM_MPI_COLL_YIELD_SLOW_US
 *   (1000) ran another job's time slice, so it halves (under load from other jobs,
 *   sleeping at once beat yielding 2x at 8 ranks); quick yields (our own ranks taking
 *   turns) double it back.  The threshold is a time slice, not less: our own ranks'
 *   work between yields (a 64 KiB reduction) takes 100-300 us, and a 50 us threshold
 *   halved the budget to nothing there, so a barrier after a large Allreduce slept
 *   instead of yielding (37 us against 17 us at 8 ranks on 2 cores).
 * One round (Reduce_scatter(_block) of predefined ops up to half a data buffer,
 *   Allgather(v) up to LOOM_MPI_COLL_SHM_ONE_MAX (512 KiB) with blocks of up to half a
 *   buffer): pack into half q % 2 of my data buffer, round, fold or copy out of the
 *   others'.  The next such call writes the other half; any other collective on the
 *   slot first runs one round, since members may still be reading (allgather_one).
 *   8 ranks on 2 loaded cores: 2-8x faster than the p2p trees or two rounds.
 * Bcast from LOOM_MPI_COLL_SHM_BC_MIN (64 KiB + 1): single copy by CMA on the ring's
 *   sequence (bcast_cma): readers wake once, the root waits for their reads.
 * Large vectors (Allreduce, Reduce, Reduce_scatter(_block) from LOOM_MPI_COLL_SHM_RS_MIN
 *   (0) beyond the one-round size, Allgather(v) from LOOM_MPI_COLL_SHM_AG_MIN (default:
 *   never); coll.c
 *   sends a one-node Reduce to p2p; from LOOM_MPI_COLL_SHM_SPLIT (2 KiB) per member):
 *   single copy by
 *   CMA from LOOM_MPI_COLL_CMA_MIN bytes (64 KiB) where process_vm_readv works
 *   (2 rounds whatever the size), else up to LOOM_MPI_COLL_SHM_RED_MAX (64 KiB) the
 *   pipeline through the buffers (one round per buffer-half), p2p above (at 8 ranks
 *   on 2 loaded cores the pipeline's 11 rounds for 1 MiB took 10-45 ms, p2p 9-13,
 *   CMA 5-11).  Both below, with why.
 * LOOM_MPI_COLL_SHM=0 turns all of this off; LOOM_MPI_COLL_SHM_MAX caps Bcast, and
 *   reductions of non-flat types (default 64 KiB: above it the copy in and out of the
 *   segment loses to the p2p path's single-copy CMA and Rabenseifner, measured at 2
 *   and 8 ranks for 256 KiB and 1 MiB); LOOM_MPI_COLL_CMA=0 keeps the large-vector
 *   paths off CMA (LOOM_MPI_COLL_CMA_FAULT=1, tests: world rank 1's probe fails);
 *   LOOM_MPI_COLL_SHM_PAIR_MAX (32 KiB) caps a Bcast between two ranks.
 * This file is one piece (over 800 lines) because every protocol here shares the slot,
 *   the round and the waiting policy above; splitting it would export those.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    size_t red_max; /* the pipeline's limit (flat reductions, allgather) */
    size_t cma_min; /* from this many bytes on, single copy (CMA) where it works */
    size_t rs_min, ag_min; /* Reduce_scatter, Allgather(v) here from these totals */
    size_t bc_min;         /* Bcast by single copy (CMA) from this size */
    size_t one_max;        /* Allgather(v), Reduce_scatter in one round up to this */
    uint32_t *agq;         /* per slot: one-round Allgathers so far (buffer halves) */
    unsigned char *dirty;  /* per slot: members may still read the data buffers */
    int cma_on, cma_fault;
    signed char *cma; /* per slot: 0 not probed yet, 1 CMA works, 2 it does not */
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
    L.red_max = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_RED_MAX", 65536);
    L.cma_min = (size_t)xm_env_int("LOOM_MPI_COLL_CMA_MIN", 65536);
    L.cma_on = xm_env_int("LOOM_MPI_COLL_CMA", 1) != 0;
    /* measured at 8 ranks on 2 loaded cores against the p2p schedules: the two-round
     * Allgather never won clearly (16-256 KiB lost 2x, 1 MiB a tie); Reduce_scatter in
     * the segment beat Reduce + Scatterv at 4-64 KiB (0.5-0.8 ms against 1.1-6 ms) and
     * the one-round path did better still, so RS_MIN is 0 */
    L.rs_min = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_RS_MIN", 0);
    L.ag_min = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_AG_MIN", INT_MAX);
    /* Bcast by single copy from this size on (bcast_cma): 256 KiB at 8 ranks on 2
     * loaded cores 0.45-0.85 ms against 0.75-1 ms for the p2p scatter + ring; at 64 KiB
     * the ring of chunks was as fast (bench/results/mpi-coll.md) */
    L.bc_min = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_BC_MIN", 65536 + 1);
    L.one_max = (size_t)xm_env_int("LOOM_MPI_COLL_SHM_ONE_MAX", 512 << 10);
    L.cma_fault = xm_env_int("LOOM_MPI_COLL_CMA_FAULT", 0) != 0; /* tests */
    if (L.on) {
        L.bq = calloc((size_t)L.g.nslots, sizeof(*L.bq));
        L.cma = calloc((size_t)L.g.nslots, 1);
        L.agq = calloc((size_t)L.g.nslots, sizeof(*L.agq));
        L.dirty = calloc((size_t)L.g.nslots, 1);
        L.on = L.bq != NULL && L.cma != NULL && L.agq != NULL && L.dirty != NULL;
    }
}

static void round_trip(const struct grp *g, void (*work)(const struct grp *, void *),
                       void *arg);

/* 1 and *g filled if the members (comm ranks map[0..n-1], NULL = all of c; I am
 * map[me]) can use a shared-memory slot.  After a one-round Allgather (allgather_one)
 * members may still be reading each other's data buffers: a round first, unless
 * `settle` is 0 (the next one-round Allgather, which writes the other half). */
static int grp_get2(struct xm_comm *c, const int *map, int n, int me, struct grp *g,
                    int settle)
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
    if (settle && L.dirty[g->slot]) { /* alike on every member: same calls on the slot */
        L.dirty[g->slot] = 0;
        round_trip(g, NULL, NULL);
    }
    return 1;
}

static int grp_get(struct xm_comm *c, const int *map, int n, int me, struct grp *g)
{
    return grp_get2(c, map, n, me, g, 1);
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
    unsigned long served = xm_rma_served;
    unsigned poll = 63; /* progress every poll + 1 pauses */
    for (unsigned i = 1;; i++) {
        if (served != xm_rma_served) {
            /* (issue 21) we served one-sided requests: an origin is working on our
             * window and waits for each answer (a fetch_and_op, a flush), so start the
             * wait's spin and yield budgets over instead of sleeping between its
             * requests.  Bounded: once requests stop coming, the wait sleeps as before. */
            served = xm_rma_served;
            poll = 3; /* the next request's latency is our poll interval */
            spinning = 1;
            t0 = now_us();
            yields = 0;
        }
        if (spinning) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if ((i & poll) == 0) {
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

/* ---- pipelined reductions and gathers (large vectors) --------------------------------
 * Round k carries piece k of every block.  Each member's data buffer (and the result
 * buffer) is cut in two halves used alternately (one region of the whole buffer when
 * everything fits in one round), so that round k + 1 can start while round k's results
 * are still being read: one barrier per round instead of two, and each member's fold
 * and copy-out overlap the others'.  Member i owns block i: it folds that block's piece
 * from all n data buffers, in rank order, into the same place of the result buffer.
 * Order of a member (K rounds; round K only fences the last reads):
 *     pack piece k -> round k -> copy out result k - 1 -> fold block piece k
 * Why it is safe: a region of half k % 2 is written (pack k, fold k) only after round
 * k - 1, and read (fold k, copy-out k) only before every member reaches round k + 1. */
struct pipe {
    size_t region; /* bytes per half (the whole buffer when rounds == 1) */
    size_t piece;  /* bytes of one block carried per round */
    int rounds;    /* data rounds; one more fences the last reads */
};

static size_t half_off(const struct pipe *pp, int k)
{
    return pp->rounds > 1 ? (size_t)(k & 1) * pp->region : 0;
}

/* bytes of block piece k (from *lo = k * piece), clipped to the block's length */
static size_t piece_len(const struct pipe *pp, size_t blen, int k, size_t *lo)
{
    *lo = (size_t)k * pp->piece;
    return *lo >= blen ? 0 : blen - *lo < pp->piece ? blen - *lo : pp->piece;
}

static size_t align_piece(size_t b, size_t esize)
{
    b = b / esize * esize;
    if (b >= 64 && 64 % esize == 0)
        b &= ~(size_t)63; /* whole cache lines: members write side by side */
    return b;
}

/* div pieces of the largest block `maxb` per region: one region (the whole buffer)
 * if a single round carries everything, else two halves */
static void pipe_plan(struct pipe *pp, size_t maxb, size_t esize, int div)
{
    pp->region = L.g.buf;
    pp->piece = align_piece(pp->region / (size_t)div, esize);
    if (!pp->piece || maxb > pp->piece) {
        pp->region = L.g.buf / 2;
        pp->piece = align_piece(pp->region / (size_t)div, esize);
    }
    pp->rounds = pp->piece ? (int)((maxb + pp->piece - 1) / pp->piece) : 0;
    if (pp->rounds < 1)
        pp->rounds = 1;
}

/* block i (bytes *lo, length returned) of the vector: rcounts[i] elements of t after
 * the blocks before it (*run carries the running offset: call for i = 0, 1, ...), or
 * an even split of ne elements of esize among n */
static size_t block(const int *rcounts, const struct xm_dtype *t, size_t ne, size_t es,
                    int n, int i, size_t *run, size_t *lo)
{
    if (rcounts) {
        if (i == 0)
            *run = 0;
        *lo = *run;
        *run += (size_t)rcounts[i] * t->size;
        return (size_t)rcounts[i] * t->size;
    }
    size_t a = ne * (size_t)i / (size_t)n, z = ne * (size_t)(i + 1) / (size_t)n;
    *lo = a * es;
    return (z - a) * es;
}

/* Allreduce (root < 0), Reduce (root = member) or Reduce_scatter (rcounts != NULL,
 * counts in elements of t) of a flat vector of `bytes` through the pipeline */
static int reduce_pipe(const struct grp *g, const void *src, void *rbuf, int count,
                       struct xm_dtype *t, struct xm_dtype *b, MPI_Op op, int root,
                       const int *rcounts, size_t bytes)
{
    int n = g->n, me = g->me;
    size_t es = b->size, ne = bytes / es, maxb = 0, run = 0, lo, blo, mylen = 0;
    for (int i = 0; i < n; i++) {
        size_t bl = block(rcounts, t, ne, es, n, i, &run, &blo);
        if (bl > maxb)
            maxb = bl;
        if (i == me)
            mylen = bl;
    }
    struct pipe pp;
    pipe_plan(&pp, maxb, es, n);
    struct red r = {0, es, t->basic, op, 0};
    int err = 0, K = pp.rounds, out_all = !rcounts && (root < 0 || root == me);
    for (int k = 0; k <= K; k++) {
        if (k < K) { /* my piece k of every block into my data buffer */
            char *d = xm_shm_coll_data(g->s, me) + half_off(&pp, k);
            for (int i = 0; i < n; i++) {
                size_t bl = block(rcounts, t, ne, es, n, i, &run, &blo);
                size_t len = piece_len(&pp, bl, k, &lo);
                if (len && xm_dt_pack(src, count, t, blo + lo, d + (size_t)i * pp.piece,
                                      len) < 0)
                    err = -EINVAL; /* keep going: the others are in the rounds too */
            }
        }
        round_trip(g, NULL, NULL);
        if (k > 0 && out_all) { /* every block's piece k - 1 is folded */
            char *res = xm_shm_coll_res(g->s) + half_off(&pp, k - 1);
            for (int i = 0; i < n; i++) {
                size_t bl = block(rcounts, t, ne, es, n, i, &run, &blo);
                size_t len = piece_len(&pp, bl, k - 1, &lo);
                if (len && xm_dt_unpack(rbuf, count, t, blo + lo,
                                        res + (size_t)i * pp.piece, len) < 0)
                    err = -EINVAL;
            }
        }
        size_t len;
        if (k < K && (len = piece_len(&pp, mylen, k, &lo)) > 0) {
            /* fold my block's piece: result = d0 op (d1 op (... d[n-1])) */
            size_t at = half_off(&pp, k) + (size_t)me * pp.piece;
            r.err = 0;
            fold_slice(g, &r, at, len);
            if (r.err)
                err = r.err;
            if (rcounts && xm_dt_unpack(rbuf, rcounts[me], t, lo,
                                        xm_shm_coll_res(g->s) + at, len) < 0)
                err = -EINVAL;
        }
    }
    return err;
}

/* ---- single copy (CMA) for large vectors -----------------------------------------
 * Rounds cost more than bytes on an oversubscribed node: every round needs every member
 * scheduled once, and 8 ranks on 2 busy cores took 25-60 ms for the 11 rounds of a
 * 1 MiB pipelined Reduce.  So large flat vectors skip the segment's buffers: members
 * publish where their bytes are (pid, addresses: the head of their data buffer), and
 * read each other's with process_vm_readv.  Reductions: round 1 (addresses out), each
 * member folds its block of all n inputs in rank order (d0 op (d1 op ...)) and writes
 * it (process_vm_writev) into the result buffer of every member that wants it, round 2
 * (all blocks everywhere; nobody reads anybody's buffers any more).  In place works:
 * block i of every input is read only by member i, before it writes block i.
 * Allgather: round 1, read the n - 1 other blocks, round 2.  Whether CMA works (Yama, namespaces) is found once per slot
 * by a probe whose outcome every member reads from the segment: all use it or none. */
struct cma_hdr {
    uint64_t pid, src, res; /* pid; my input bytes; my result buffer (reductions) */
    uint32_t bad;           /* probe: this member could not read somebody */
};

static struct cma_hdr *hdr(const struct grp *g, int i)
{
    return (struct cma_hdr *)(void *)xm_shm_coll_data(g->s, i);
}

/* Grow-only scratch buffers (kept: a fresh mmap'd malloc per call faults its pages).
 * Buffer 0 holds bytes others read by CMA (a packed Bcast root, a packed Allgather
 * block) or my block of a result kept across a round; buffer 1 is a copy's staging.
 * Both live across the round's waits, and under MPI_THREAD_MULTIPLE a wait lets the
 * process's other threads run collectives on other communicators (core/mt.h): so then
 * each communicator has its own pair (struct xm_comm's coll_tmp, freed with it, and
 * trimmed to SCRATCH_KEEP bytes after each collective: scratch_end), never the
 * process's.  One thread at a time (MPI cannot run two collectives on one
 * communicator at once) keeps the process's pair, as cheap as before. */
#define SCRATCH_KEEP (1u << 20)

static char *scratch(const struct grp *g, int k, size_t n)
{
    static char *pb[2];
    static size_t pcap[2];
    char **b = pb;
    size_t *cap = pcap;
    if (__builtin_expect(xm_mt.on, 0)) {
        b = g->c->coll_tmp;
        cap = g->c->coll_tmp_cap;
    }
    if (n > cap[k]) {
        char *nb = realloc(b[k], n);
        if (!nb)
            return NULL;
        b[k] = nb;
        cap[k] = n;
    }
    return b[k] ? b[k] : (b[k] = malloc(1));
}

/* after a collective that used scratch: a communicator's pair (threads) keeps at most
 * SCRATCH_KEEP bytes each, so many communicators do not each hold their largest call */
static int scratch_end(const struct grp *g, int rc)
{
    if (__builtin_expect(xm_mt.on, 0)) {
        for (int k = 0; k < 2; k++) {
            if (g->c->coll_tmp_cap[k] > SCRATCH_KEEP) {
                free(g->c->coll_tmp[k]);
                g->c->coll_tmp[k] = NULL;
                g->c->coll_tmp_cap[k] = 0;
            }
        }
    }
    return rc;
}

static int cma_usable(const struct grp *g)
{
    static uint64_t probe = 0x6c6f6f6d636d6121ull;
    if (!L.cma_on || L.g.buf < sizeof(struct cma_hdr))
        return 0;
    if (L.cma[g->slot])
        return L.cma[g->slot] == 1;
    struct cma_hdr *h = hdr(g, g->me);
    h->pid = (uint64_t)getpid();
    h->src = (uint64_t)(uintptr_t)&probe;
    h->bad = 0;
    round_trip(g, NULL, NULL);
    uint32_t bad = 0;
    for (int i = 0; i < g->n; i++) {
        uint64_t v = 0;
        if (i != g->me && (xm_vm_copy(0, (int)hdr(g, i)->pid, &v, hdr(g, i)->src, 8) < 0 ||
                           v != probe))
            bad = 1;
    }
    if (L.cma_fault && xm_g.rank == 1)
        bad = 1; /* tests: one member's probe fails, all must take the pipeline */
    h->bad = bad; /* nobody reads this field before the next round */
    round_trip(g, NULL, NULL);
    for (int i = 0; i < g->n; i++)
        bad |= hdr(g, i)->bad;
    round_trip(g, NULL, NULL); /* the headers may be overwritten after this */
    L.cma[g->slot] = bad ? 2 : 1;
    return !bad;
}

/* n bytes at offset off of member i's published input (mine: local) */
static int cma_read(const struct grp *g, int i, const char *mine, size_t off, void *to,
                    size_t n)
{
    if (i == g->me) {
        memcpy(to, mine + off, n);
        return 0;
    }
    return xm_vm_copy(0, (int)hdr(g, i)->pid, to, hdr(g, i)->src + off, n);
}

/* Allreduce (root < 0), Reduce, or Reduce_scatter (rcounts) of a flat vector */
static int reduce_cma(const struct grp *g, const void *sbuf, void *rbuf, struct xm_dtype *t, struct xm_dtype *b, MPI_Op op, int root,
                      const int *rcounts, size_t bytes)
{
    int n = g->n, me = g->me, err = 0, inplace = sbuf == MPI_IN_PLACE;
    size_t es = b->size, ne = bytes / es, run = 0, mylo = 0, mylen = 0;
    for (int i = 0; i <= me; i++)
        mylen = block(rcounts, t, ne, es, n, i, &run, &mylo);
    const char *src = (const char *)(inplace ? rbuf : sbuf) + t->true_lb;
    char *rb = rbuf ? (char *)rbuf + t->true_lb : NULL;
    int want = !rcounts && (root < 0 || root == me);
    /* where my block's result goes: in the user's buffer unless others read that as
     * input (in place) or I have none (Reduce, not the root) */
    char *dst;
    if (rcounts)
        dst = inplace ? scratch(g, 0, mylen) : rb;
    else
        dst = want && !inplace ? rb + mylo : scratch(g, 0, mylen);
    size_t S = 65536 / es * es;
    char *tmp = scratch(g, 1, S);
    if (!dst || !tmp)
        err = -ENOMEM; /* still take part in the rounds, with nothing to fold */
    struct cma_hdr *h = hdr(g, me);
    h->pid = (uint64_t)getpid();
    h->src = (uint64_t)(uintptr_t)src;
    h->res = (uint64_t)(uintptr_t)rb; /* where the others put their blocks of the result */
    round_trip(g, NULL, NULL);
    for (size_t off = 0; !err && off < mylen; off += S) {
        size_t m = mylen - off < S ? mylen - off : S;
        char *acc = dst + off;
        if (cma_read(g, n - 1, src, mylo + off, acc, m) < 0)
            err = -EIO;
        for (int i = n - 2; i >= 0 && !err; i--) {
            const char *in = src + mylo + off;
            if (i != me) {
                if (cma_read(g, i, src, mylo + off, tmp, m) < 0) {
                    err = -EIO;
                    break;
                }
                in = tmp;
            }
            int rc = xm_op_apply(op, in, acc, (int)(m / es), t->basic);
            if (rc < 0)
                err = rc;
        }
    }
    if (!rcounts && !err) {
        /* my block of the result to everybody who wants it: only I ever read the
         * block's bytes of the inputs, so even in place nobody needs them any more */
        for (int i = 0; i < n; i++) {
            if (root >= 0 && i != root)
                continue;
            if (i == me) {
                if (dst != rb + mylo)
                    memcpy(rb + mylo, dst, mylen);
            } else if (mylen && xm_vm_copy(1, (int)hdr(g, i)->pid, dst,
                                           hdr(g, i)->res + mylo, mylen) < 0) {
                err = -EIO;
            }
        }
    }
    round_trip(g, NULL, NULL);
    if (rcounts && inplace && !err)
        memcpy(rb, dst, mylen); /* nobody reads my inputs any more */
    return err;
}

/* contiguous layout: packed position = memory offset from buf + true_lb */
static int flat(const struct xm_dtype *t)
{
    return t->contig && t->extent == (MPI_Aint)t->size;
}

/* root < 0: allreduce; rcounts: reduce_scatter */
static int reduce_any(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, const int *rcounts, struct xm_comm *c, const int *map,
                      int n, int me)
{
    struct xm_dtype *t = xm_dt_get(dt), *b;
    struct grp g;
    if (!t || !(b = red_basic(dt, op)))
        return 1;
    size_t bytes = t->size * (size_t)count;
    if (!grp_get(c, map, n, me, &g))
        return 1;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    /* large vectors of a flat type: the pipeline (in place works there: a round writes
     * only bytes below those that later rounds read); other types up to L.max */
    int big = bytes >= L.split * (size_t)g.n;
    if (big && flat(t)) {
        if (bytes >= L.cma_min && cma_usable(&g))
            return scratch_end(
                &g, reduce_cma(&g, sbuf, rbuf, t, b, op, root, rcounts, bytes));
        if (bytes > L.red_max)
            return 1;
        /* pieces of at least split bytes per member, else the rounds cost more than
         * they save (64-byte buffers: twice the rounds of the loop below) */
        if (L.g.buf >= L.split * (size_t)g.n)
            return reduce_pipe(&g, src, rbuf, count, t, b, op, root, rcounts, bytes);
    }
    if (bytes > L.max || (rcounts && !flat(t)))
        return 1;
    size_t chunk = L.g.buf / b->size * b->size;
    struct red r = {0, b->size, t->basic, op, 0};
    size_t mylo = 0, myhi = 0; /* reduce_scatter: my block's bytes */
    if (rcounts) {
        for (int i = 0; i < g.me; i++)
            mylo += (size_t)rcounts[i] * t->size;
        myhi = mylo + (size_t)rcounts[g.me] * t->size;
    }
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
        if (rcounts) { /* my block's part of this chunk */
            size_t lo = mylo > off ? mylo : off, hi = myhi < off + r.len ? myhi : off + r.len;
            if (lo < hi && xm_dt_unpack(rbuf, rcounts[g.me], t, lo - mylo,
                                        xm_shm_coll_res(g.s) + (lo - off), hi - lo) < 0)
                err = -EINVAL;
        } else if ((root < 0 || root == g.me) &&
                   xm_dt_unpack(rbuf, count, t, off, xm_shm_coll_res(g.s), r.len) < 0)
            err = -EINVAL;
    }
    return err;
}

int xm_shmcoll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                         MPI_Op op, struct xm_comm *c, const int *map, int n, int me)
{
    return reduce_any(sbuf, rbuf, count, dt, op, -1, NULL, c, map, n, me);
}

int xm_shmcoll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, struct xm_comm *c, const int *map, int n, int me)
{
    return reduce_any(sbuf, rbuf, count, dt, op, root, NULL, c, map, n, me);
}

static size_t t_size(MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    return t ? t->size : 0;
}

/* Reduce_scatter in one round (the scheme of allgather_one): my whole packed input
 * into half (q % 2) of my data buffer, round, fold my block of all n inputs in rank
 * order (d0 op (d1 op (... d[n-1]))) straight into my receive buffer (through scratch
 * for a non-flat type), and leave the slot dirty: the next one-round call writes the
 * other half, any other collective runs a round first.  In place works: the inputs
 * are in the segment before anybody writes a result. */
static int redscat_one(const struct grp *g, const void *src, void *rbuf, int count,
                       const int *rcounts, struct xm_dtype *t, struct xm_dtype *b,
                       MPI_Op op, size_t bytes, size_t half)
{
    int n = g->n, me = g->me, err = 0;
    size_t at = (size_t)(L.agq[g->slot]++ & 1) * half, mylo = 0, mylen;
    for (int i = 0; i < me; i++)
        mylo += (size_t)rcounts[i] * t->size;
    mylen = (size_t)rcounts[me] * t->size;
    if (xm_dt_pack(src, count, t, 0, xm_shm_coll_data(g->s, me) + at, bytes) < 0)
        err = -EINVAL; /* keep going: the others are in the round too */
    round_trip(g, NULL, NULL);
    L.dirty[g->slot] = 1;
    if (!mylen)
        return err;
    char *acc = flat(t) ? (char *)rbuf + t->true_lb : scratch(g, 0, mylen);
    if (!acc)
        return -ENOMEM;
    memcpy(acc, xm_shm_coll_data(g->s, n - 1) + at + mylo, mylen);
    for (int i = n - 2; i >= 0; i--) {
        int rc = xm_op_apply(op, xm_shm_coll_data(g->s, i) + at + mylo, acc,
                             (int)(mylen / b->size), t->basic);
        if (rc < 0)
            err = rc;
    }
    if (!flat(t) && xm_dt_unpack(rbuf, rcounts[me], t, 0, acc, mylen) < 0)
        err = -EINVAL;
    return err;
}

int xm_shmcoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                              MPI_Datatype dt, MPI_Op op, struct xm_comm *c)
{
    if (!L.init)
        init();
    long total = 0;
    for (int i = 0; i < c->size; i++) {
        if (rcounts[i] < 0)
            return 1;
        total += rcounts[i];
    }
    size_t bytes = t_size(dt) * (size_t)total, half = L.g.buf / 2 / 64 * 64;
    if (total > INT_MAX || bytes < L.rs_min)
        return 1;
    struct xm_dtype *t = xm_dt_get(dt), *b;
    struct grp g;
    /* up to half a data buffer: one round (same decision everywhere: size, type, op) */
    if (bytes > 0 && bytes <= half && bytes <= L.one_max && t &&
        (b = red_basic(dt, op))) {
        if (!grp_get2(c, NULL, c->size, c->rank, &g, 0))
            return 1;
        return scratch_end(&g, redscat_one(&g, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf,
                                           (int)total, rcounts, t, b, op, bytes, half));
    }
    return reduce_any(sbuf, rbuf, (int)total, dt, op, -1, rcounts, c, NULL, c->size,
                      c->rank);
}

/* Allgather(v) by single copy: my block's packed bytes where others can read them (the
 * user's buffer if its type is flat, else packed into scratch), round, read the others'
 * straight into rbuf (through scratch for a non-flat receive type), round. */
static int allgather_cma(const struct grp *g, const void *src, int scnt,
                         struct xm_dtype *sty, void *rbuf, const int *rcounts,
                         const int *displs, struct xm_dtype *rt, int inplace)
{
    int n = g->n, me = g->me, err = 0;
    size_t mine = sty->size * (size_t)scnt;
    const char *pub = (const char *)src + sty->true_lb;
    if (!flat(sty)) {
        char *p = scratch(g, 0, mine);
        if (!p || xm_dt_pack(src, scnt, sty, 0, p, mine) < 0)
            err = p ? -EINVAL : -ENOMEM;
        pub = p;
    }
    struct cma_hdr *h = hdr(g, me);
    h->pid = (uint64_t)getpid();
    h->src = (uint64_t)(uintptr_t)pub;
    round_trip(g, NULL, NULL);
    for (int j = 0; j < n; j++) {
        int i = (me + j) % n; /* mine first (local), then the next members */
        size_t len = rt->size * (size_t)rcounts[i];
        char *at = (char *)rbuf + (MPI_Aint)displs[i] * rt->extent;
        if (!len || (i == me && inplace))
            continue;
        if (i == me) {
            if (pub && xm_dt_unpack(at, rcounts[i], rt, 0, pub, len) < 0)
                err = -EINVAL;
        } else if (flat(rt)) {
            if (xm_vm_copy(0, (int)hdr(g, i)->pid, at + rt->true_lb, hdr(g, i)->src, len) < 0)
                err = -EIO;
        } else {
            char *tmp = scratch(g, 1, len);
            if (!tmp || xm_vm_copy(0, (int)hdr(g, i)->pid, tmp, hdr(g, i)->src, len) < 0 ||
                xm_dt_unpack(at, rcounts[i], rt, 0, tmp, len) < 0)
                err = tmp ? -EIO : -ENOMEM;
        }
    }
    round_trip(g, NULL, NULL);
    return err;
}

/* Small Allgather(v) in one round: my packed block into half (q % 2) of my data
 * buffer (q counts this slot's one-round Allgathers, the same at every member), round,
 * copy the n blocks out of the n buffers.  No second round: the next one-round
 * Allgather writes the other half, and the one after that writes this half again only
 * after everybody arrived at the next one's round, i.e. finished reading this one.
 * Any other collective on the slot first runs one round (grp_get2's settle), since
 * members may still be reading.  8 ranks on 2 cores: one wake-up per member per call,
 * where gather + binomial bcast chains four. */
static int allgather_one(const struct grp *g, const void *src, int scnt,
                         struct xm_dtype *sty, void *rbuf, const int *rcounts,
                         const int *displs, struct xm_dtype *rt, int inplace, size_t half)
{
    int n = g->n, me = g->me, err = 0;
    size_t at = (size_t)(L.agq[g->slot]++ & 1) * half;
    size_t mine = sty->size * (size_t)scnt;
    if (mine != rt->size * (size_t)rcounts[me])
        err = -EINVAL; /* signatures differ: nothing written past my block's room */
    else if (mine &&
             xm_dt_pack(src, scnt, sty, 0, xm_shm_coll_data(g->s, me) + at, mine) < 0)
        err = -EINVAL; /* keep going: the others are in the round too */
    round_trip(g, NULL, NULL);
    L.dirty[g->slot] = 1;
    for (int j = 1; j <= n; j++) {
        int i = (me + j) % n; /* start with the next member: spread the reads */
        size_t len = rt->size * (size_t)rcounts[i];
        if (!len || i == me)
            continue;
        if (xm_dt_unpack((char *)rbuf + (MPI_Aint)displs[i] * rt->extent, rcounts[i], rt,
                         0, xm_shm_coll_data(g->s, i) + at, len) < 0)
            err = -EINVAL;
    }
    if (!inplace && !err && mine &&
        xm_dt_unpack((char *)rbuf + (MPI_Aint)displs[me] * rt->extent, rcounts[me], rt, 0,
                     xm_shm_coll_data(g->s, me) + at, mine) < 0)
        err = -EINVAL;
    return err;
}

/* Allgather(v) of packed blocks: round k carries bytes [k * region, ...) of every
 * member's block, each member copying the n pieces out of the n data buffers. */
int xm_shmcoll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                          const int *rcounts, const int *displs, MPI_Datatype rdt,
                          struct xm_comm *c)
{
    struct xm_dtype *st = sbuf == MPI_IN_PLACE ? NULL : xm_dt_get(sdt),
                    *rt = xm_dt_get(rdt);
    struct grp g;
    int n = c->size, me = c->rank;
    if (!L.init)
        init();
    if (!rt || (sbuf != MPI_IN_PLACE && !st))
        return 1;
    size_t maxb = 0, total = 0;
    for (int i = 0; i < n; i++) {
        if (rcounts[i] < 0)
            return 1;
        size_t bl = rt->size * (size_t)rcounts[i];
        total += bl;
        if (bl > maxb)
            maxb = bl;
    }
    /* what this member contributes (in place: its block of rbuf) */
    const void *src = sbuf;
    int scnt = scount;
    struct xm_dtype *sty = st;
    if (sbuf == MPI_IN_PLACE) {
        src = (char *)rbuf + (MPI_Aint)displs[me] * rt->extent;
        scnt = rcounts[me];
        sty = rt;
    }
    /* up to one_max (unless the older paths below are asked for): one round, blocks of
     * up to half a data buffer (same decision on every member: sizes only) */
    size_t half = L.g.buf / 2 / 64 * 64;
    if (total > 0 && total <= L.one_max && maxb <= half) {
        if (!grp_get2(c, NULL, n, me, &g, 0))
            return 1;
        return allgather_one(&g, src, scnt, sty, rbuf, rcounts, displs, rt,
                             sbuf == MPI_IN_PLACE, half);
    }
    /* small totals: the p2p schedules move them in a few messages (same threshold on
     * every member: sizes only) */
    if (total < L.split * (size_t)n || total < L.ag_min)
        return 1;
    if (!grp_get(c, NULL, n, me, &g))
        return 1;
    int cma = total >= L.cma_min && cma_usable(&g); /* the same on every member */
    if (!cma && (total > L.red_max || L.g.buf < L.split * (size_t)n))
        return 1;
    struct pipe pp; /* a member's whole region carries a piece of its own block */
    pipe_plan(&pp, maxb, 1, 1);
    size_t mine = sty->size * (size_t)scnt;
    if (cma)
        return scratch_end(&g, allgather_cma(&g, src, scnt, sty, rbuf, rcounts, displs,
                                             rt, sbuf == MPI_IN_PLACE));
    int err = 0, K = pp.rounds;
    for (int k = 0; k <= K; k++) {
        if (k < K) {
            size_t lo, len = piece_len(&pp, mine, k, &lo);
            if (len && xm_dt_pack(src, scnt, sty, lo,
                                  xm_shm_coll_data(g.s, me) + half_off(&pp, k), len) < 0)
                err = -EINVAL;
        }
        round_trip(&g, NULL, NULL);
        if (k == K)
            break;
        for (int j = 1; j <= n; j++) {
            int i = (me + j) % n; /* start with the next member: spread the reads */
            size_t lo, len = piece_len(&pp, rt->size * (size_t)rcounts[i], k, &lo);
            if (!len || (i == me && sbuf == MPI_IN_PLACE))
                continue;
            if (xm_dt_unpack((char *)rbuf + (MPI_Aint)displs[i] * rt->extent, rcounts[i],
                             rt, lo, xm_shm_coll_data(g.s, i) + half_off(&pp, k), len) < 0)
                err = -EINVAL;
        }
    }
    return err;
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
/* Large Bcast by single copy, on the ring's sequence (below): the q-th chunk of the
 * slot is this whole broadcast.  The root waits until done[q % 4] shows the previous
 * use read, writes where its packed bytes are (the user's buffer if its type is flat,
 * else packed into scratch) into the head of its data buffer, publishes pub = q + 1,
 * and waits for the n - 1 reads; every other member waits for pub, reads the bytes
 * straight into its buffer by CMA (through scratch for a non-flat type), bumps
 * done[q % 4] and goes.  Each reader wakes once and copies once, the n - 1 reads run
 * in parallel; the scatter + ring of coll.c needs n rounds of messages, each waiting
 * for a neighbour to be scheduled.  The ranks may describe the bytes with different
 * types: nothing here depends on the type beyond its packed size.  The header stays
 * valid while anybody reads it: the root returns only after all reads. */
static int bcast_cma(const struct grp *g, void *buf, int count, struct xm_dtype *t,
                     size_t bytes, int root)
{
    struct xm_shm_coll *s = g->s;
    uint32_t q = L.bq[g->slot]++;
    int k = (int)(q % XM_SHM_COLL_RING), err = 0;
    uint32_t use = q / XM_SHM_COLL_RING, readers = (uint32_t)(g->n - 1);
    if (g->me == root) {
        const char *pub = (const char *)buf + t->true_lb;
        if (!flat(t)) {
            char *p = scratch(g, 0, bytes);
            if (!p || xm_dt_pack(buf, count, t, 0, p, bytes) < 0)
                err = p ? -EINVAL : -ENOMEM;
            pub = p;
        }
        wait_reach(&s->done[k], use * readers);
        struct cma_hdr *h = hdr(g, g->me);
        h->pid = (uint64_t)getpid();
        h->src = (uint64_t)(uintptr_t)pub;
        h->bad = err != 0; /* readers skip the copy and fail too */
        /* release: the header before the publication */
        atomic_store_explicit(&s->pub, q + 1, memory_order_release);
        wake_others(g);
        wait_reach(&s->done[k], (use + 1) * readers); /* my bytes stay put till then */
        return err;
    }
    wait_reach(&s->pub, q + 1);
    const struct cma_hdr *rh = hdr(g, root);
    if (rh->bad) {
        err = -EIO;
    } else if (flat(t)) {
        if (xm_vm_copy(0, (int)rh->pid, (char *)buf + t->true_lb, rh->src, bytes) < 0)
            err = -EIO;
    } else {
        char *tmp = scratch(g, 1, bytes);
        if (!tmp || xm_vm_copy(0, (int)rh->pid, tmp, rh->src, bytes) < 0 ||
            xm_dt_unpack(buf, count, t, 0, tmp, bytes) < 0)
            err = tmp ? -EIO : -ENOMEM;
    }
    /* release: our reads of the header and the bytes before the root may move on */
    atomic_fetch_add_explicit(&s->done[k], 1, memory_order_release);
    xm_shm_wake(lidx(g, root));
    return err;
}

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
    /* large: single copy where CMA works (the same on every member: byte count, probe) */
    if (bytes >= L.bc_min && bytes <= SIZE_MAX / 2 && cma_usable(&g))
        return scratch_end(&g, bcast_cma(&g, buf, count, t, bytes, root));
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
