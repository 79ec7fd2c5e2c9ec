/*
 * coll.c - collective algorithms, written once as schedules (sched.c) so that the
 *          blocking call and its I-variant share the code (contract in coll.h).
 *
 * Algorithms (p = communicator size):
 *   Barrier    dissemination: ceil(log2 p) rounds of zero-byte exchanges; when a node
 *              is oversubscribed, binomial fan-in + fan-out instead (2(p-1) messages,
 *              i.e. fewer wake-ups: 3-4x faster at 64 ranks on 2 cores).
 *   Bcast      binomial tree from the root; large (> 64 KiB, p > 2): root scatters
 *              blocks, then ring allgather (van de Geijn).
 *   Reduce     binomial tree; rank order kept for non-commutative ops (the tree is
 *              rooted at 0 and the result forwarded to the root).
 *   Allreduce  recursive doubling; p not a power of two: the first 2*rem ranks fold
 *              pairwise first and get the result back at the end (MPICH's scheme).
 *              Operand order is kept, so non-commutative ops are right.
 *              Large (> 64 KiB) commutative: Rabenseifner.  Oversubscribed and
 *              <= 64 KiB: binomial reduce + bcast (fewer messages, as for Barrier; at
 *              64 ranks on 2 cores 64 KiB takes 7 ms instead of 15-20 ms).
 *   Gather(v), Scatter(v)  root posts everything at once (linear).
 *   Allgather  Bruck (ceil(log2 p) rounds) for small blocks, ring for large ones;
 *              oversubscribed and <= 64 KiB in all: gather to 0 + binomial bcast.
 *   Allgatherv ring.
 *   Alltoall(v) all exchanges posted at once for small blocks; pairwise
 *              (p-1 fenced rounds, (me+k, me-k)) for large.
 *   Reduce_scatter(_block)  Reduce to rank 0 + Scatterv.
 *   Scan, Exscan  recursive doubling on partial results (order kept).
 * Blocking Reduce_scatter(_block) and Allgather(v) (from 2 KiB in all) of a
 *   communicator on one node first try shared memory too (shmcoll.c: one round up to
 *   half a segment buffer, single copy above; Allgather(v) above 512 KiB stays here
 *   unless LOOM_MPI_COLL_SHM_AG_MIN asks: the ring won at 1 MiB on 8 ranks).
 *   A one-node Reduce takes the tree, not the segment (xm_icoll_reduce says why).
 * Blocking Barrier/Bcast/Reduce/Allreduce first try shared memory (shmcoll.c): the
 *   whole collective in the node's segment when the communicator lives on one node, or
 *   node part in shm + leaders over p2p (shm_barrier/shm_allreduce/shm_bcast below).
 *   The p2p schedules here remain for nonblocking calls, communicators without a slot,
 *   user ops and large messages.
 * Node awareness (p2p): hier_allreduce (Barrier/Allreduce) uses xm_g.node_of;
 *   LOOM_MPI_COLL_NODES=k fakes k nodes for tests.
 * Every choice between algorithms is made from what all ranks see alike (sizes, types,
 *   ops, environment, the node map, xm_g.any_oversubscribed - this job's, so never on a
 *   communicator spanning jobs), never from what only my node has: ranks that pick
 *   different algorithms wait for each other for ever.
 *
 * One piece (about 1000 lines): every algorithm above is a schedule made of the
 *   same sched.c steps and picked by the same rule (what all ranks see alike), in one
 *   section per collective of at most 150 lines each.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/p2p.h"
#include "../dt/dtype.h"
#include "coll.h"

#define SMALL_BLOCK 8192 /* bytes per block below which latency-bound algorithms win */
#define LARGE_MSG 65536  /* Bcast/Allreduce above this: scatter-based algorithms */

static MPI_Aint ext(MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    return t ? t->extent : 0;
}

static size_t tsize(MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    return t ? t->size : 0;
}

#define AT(buf, i, dt) ((char *)(buf) + (MPI_Aint)(i)*ext(dt))

static struct xm_sched *new_sched(struct xm_comm *c, int *rc)
{
    struct xm_sched *s = xm_sched_new(c);
    *rc = s ? 0 : -ENOMEM;
    return s;
}

static void bcast_steps(struct xm_sched *s, struct xm_comm *c, void *buf, int count,
                        MPI_Datatype dt, int root);

/* Oversubscribed (more ranks than cores): what costs is CPU time, i.e. the number of
 * wake-ups, not the number of rounds.  A binomial fan-in to 0 then fan-out moves
 * 2(p-1) messages where dissemination or recursive doubling move p*log2(p).
 * LOOM_MPI_COLL_TREE=0/1 overrides the choice (for measurements). */
static int prefer_tree(struct xm_comm *c)
{
    static int mode = -2;
    if (mode == -2)
        mode = xm_env_int("LOOM_MPI_COLL_TREE", -1);
    if (mode >= 0)
        return mode;
    /* xm_g.any_oversubscribed is alike on every rank of one job only: the jobs of a
     * communicator spanning several (connect/accept, spawn) may see it differently,
     * and ranks that pick different allgather/bcast/allreduce shapes wait for ever */
    if (c->xjob)
        return 0;
    return xm_g.any_oversubscribed && c->size > 2; /* alike on every rank */
}


/* ---- node-aware (hierarchical) variants ---------------------------------------------
 * When a communicator spans several nodes: combine inside each node first (binomial
 * over the node's members, towards the node leader = its lowest comm rank), then among
 * the leaders (recursive doubling / binomial), then spread inside each node.  Only
 * commutative ops (the node grouping reorders operands).  On one node this never runs;
 * LOOM_MPI_COLL_NODES=k pretends comm rank r lives on node r * k / p so that the code is
 * tested today. */
struct view {
    int n, me;  /* my index in the sub-group, or -1 */
    int *map;   /* sub-group index -> comm rank */
};

static int node_of_rank(struct xm_comm *c, int r)
{
    static int fake = -2;
    if (fake == -2)
        fake = xm_env_int("LOOM_MPI_COLL_NODES", 0);
    if (fake > 0)
        return (int)((long)r * fake / c->size);
    if (c->xjob) /* several jobs: every member alone (the same view at every member) */
        return r;
    return xm_g.node_of ? xm_g.node_of[xm_comm_world_rank(c, r)] : 0;
}

/* my node's members and the leaders (lowest comm rank of each node), in rank order;
 * 0 if the communicator lives on one node */
static int node_views(struct xm_comm *c, struct view *node, struct view *lead)
{
    int p = c->size, mynode = node_of_rank(c, c->rank), multi = 0;
    node->map = malloc((size_t)p * sizeof(int));
    lead->map = malloc((size_t)p * sizeof(int));
    if (!node->map || !lead->map) {
        free(node->map);
        free(lead->map);
        return 0;
    }
    node->n = lead->n = 0;
    node->me = lead->me = -1;
    for (int r = 0; r < p; r++) {
        int nd = node_of_rank(c, r), first = 1;
        if (nd != mynode)
            multi = 1;
        for (int q = 0; q < r && first; q++)
            first = node_of_rank(c, q) != nd;
        if (nd == mynode) {
            if (r == c->rank)
                node->me = node->n;
            node->map[node->n++] = r;
        }
        if (first) {
            if (r == c->rank)
                lead->me = lead->n;
            lead->map[lead->n++] = r;
        }
    }
    if (!multi) {
        free(node->map);
        free(lead->map);
    }
    return multi;
}

/* binomial reduce of acc towards view index 0 (commutative op) */
static void v_reduce(struct xm_sched *s, const struct view *v, void *acc, int count,
                     MPI_Datatype dt, MPI_Op op)
{
    void *tmp = xm_sched_tmp(s, count, dt);
    if (!tmp)
        return;
    for (int mask = 1; mask < v->n; mask <<= 1) {
        if (v->me & mask) {
            xm_sched_wait(s); /* my subtree first (count 0: no op step fences it) */
            xm_sched_send(s, acc, count, dt, v->map[v->me - mask]);
            xm_sched_wait(s);
            break;
        }
        if (v->me + mask < v->n) {
            xm_sched_recv(s, tmp, count, dt, v->map[v->me + mask]);
            if (count)
                xm_sched_op(s, tmp, acc, count, dt, op);
        }
    }
    xm_sched_wait(s);
}

/* binomial bcast from view index 0 */
static void v_bcast(struct xm_sched *s, const struct view *v, void *buf, int count,
                    MPI_Datatype dt)
{
    int mask = 1;
    while (mask < v->n) {
        if (v->me & mask) {
            xm_sched_recv(s, buf, count, dt, v->map[v->me - mask]);
            xm_sched_wait(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v->me + mask < v->n)
            xm_sched_send(s, buf, count, dt, v->map[v->me + mask]);
    xm_sched_wait(s);
}

/* Allreduce (commutative) / Barrier (buf NULL, count 0) over nodes then leaders.
 * Returns 1 if the steps were added, 0 if the communicator is on one node. */
static int hier_allreduce(struct xm_sched *s, struct xm_comm *c, void *acc, int count,
                          MPI_Datatype dt, MPI_Op op)
{
    struct view node, lead;
    if (!node_views(c, &node, &lead))
        return 0;
    if (count)
        v_reduce(s, &node, acc, count, dt, op);
    else
        v_reduce(s, &node, NULL, 0, MPI_BYTE, MPI_OP_NULL);
    if (lead.me >= 0) {
        if (count)
            v_reduce(s, &lead, acc, count, dt, op);
        else
            v_reduce(s, &lead, NULL, 0, MPI_BYTE, MPI_OP_NULL);
        xm_sched_wait(s);
        v_bcast(s, &lead, acc, count, count ? dt : MPI_BYTE);
    }
    v_bcast(s, &node, acc, count, count ? dt : MPI_BYTE);
    free(node.map);
    free(lead.map);
    return 1;
}

/* ---- blocking collectives through shared memory (shmcoll.c), node-aware ---------------
 * One node: the whole collective in the node's segment.  Several nodes: the node's part
 * in shared memory (when its members got a slot), the leaders over p2p, the node's part
 * again.  Every member builds exactly one schedule per node-aware call (p2p steps only
 * where its node has no slot, or among leaders), so comm->coll_seq stays in step on
 * every node whatever path each node took.  Return: 0 done, 1 use the p2p algorithms,
 * -errno. */
static int one_node(struct xm_comm *c)
{
    int mine = node_of_rank(c, c->rank);
    for (int r = 0; r < c->size; r++)
        if (node_of_rank(c, r) != mine)
            return 0;
    return 1;
}

static void free_views(struct view *a, struct view *b)
{
    free(a->map);
    free(b->map);
}

static int shm_barrier(struct xm_comm *c)
{
    struct view node, lead;
    int rc;
    if (one_node(c))
        return xm_shmcoll_barrier(c, NULL, c->size, c->rank);
    if (!node_views(c, &node, &lead))
        return 1;
    int shm = node.n > 1 && xm_shmcoll_ready(c, node.map, node.n, node.me);
    struct xm_sched *s = new_sched(c, &rc);
    if (s) {
        if (shm)
            rc = xm_shmcoll_barrier(c, node.map, node.n, node.me);
        else
            v_reduce(s, &node, NULL, 0, MPI_BYTE, MPI_OP_NULL);
        if (lead.me >= 0) {
            v_reduce(s, &lead, NULL, 0, MPI_BYTE, MPI_OP_NULL);
            xm_sched_wait(s);
            v_bcast(s, &lead, NULL, 0, MPI_BYTE);
        }
        if (!shm)
            v_bcast(s, &node, NULL, 0, MPI_BYTE);
        int r2 = xm_sched_start(s, NULL);
        if (shm && r2 == 0) /* second round: the others wait for their leader */
            r2 = xm_shmcoll_barrier(c, node.map, node.n, node.me);
        if (rc == 0)
            rc = r2;
    }
    free_views(&node, &lead);
    return rc;
}

static int shm_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                         MPI_Op op, struct xm_comm *c)
{
    struct view node, lead;
    int rc;
    if (one_node(c))
        return xm_shmcoll_allreduce(sbuf, rbuf, count, dt, op, c, NULL, c->size, c->rank);
    if (!xm_op_commutative(op) || tsize(dt) * (size_t)count > LARGE_MSG ||
        !xm_shmcoll_reducible(count, dt, op) || !node_views(c, &node, &lead))
        return 1;
    int shm = node.n > 1 && xm_shmcoll_ready(c, node.map, node.n, node.me);
    struct xm_sched *s = new_sched(c, &rc);
    if (s) {
        if (shm) {
            rc = xm_shmcoll_reduce(sbuf, rbuf, count, dt, op, 0, c, node.map, node.n,
                                   node.me);
        } else {
            if (sbuf != MPI_IN_PLACE)
                xm_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
            v_reduce(s, &node, rbuf, count, dt, op);
        }
        if (lead.me >= 0) {
            v_reduce(s, &lead, rbuf, count, dt, op);
            xm_sched_wait(s);
            v_bcast(s, &lead, rbuf, count, dt);
        }
        if (!shm)
            v_bcast(s, &node, rbuf, count, dt);
        int r2 = xm_sched_start(s, NULL);
        if (shm && r2 == 0)
            r2 = xm_shmcoll_bcast(rbuf, count, dt, 0, c, node.map, node.n, node.me);
        if (rc == 0)
            rc = r2;
    }
    free_views(&node, &lead);
    return rc;
}

/* v rotated so that index 0 is the member at index k (for a tree rooted there) */
static int rotate(struct view *v, int k)
{
    int *m = malloc((size_t)(v->n ? v->n : 1) * sizeof(int));
    if (!m)
        return -ENOMEM;
    for (int i = 0; i < v->n; i++)
        m[i] = v->map[(i + k) % v->n];
    if (v->me >= 0)
        v->me = (v->me - k + v->n) % v->n;
    free(v->map);
    v->map = m;
    return 0;
}

static int shm_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c)
{
    struct view node, lead;
    int rc;
    if (one_node(c))
        return xm_shmcoll_bcast(buf, count, dt, root, c, NULL, c->size, c->rank);
    if (!xm_shmcoll_fits(count, dt) || !node_views(c, &node, &lead))
        return 1;
    int shm = node.n > 1 && xm_shmcoll_ready(c, node.map, node.n, node.me);
    int rootnode = node_of_rank(c, root), mine = node_of_rank(c, c->rank) == rootnode;
    int ri = 0, li = 0; /* root's index in my node view, root node's leader in lead */
    for (int i = 0; i < node.n; i++)
        if (node.map[i] == root)
            ri = i;
    for (int i = 0; i < lead.n; i++)
        if (node_of_rank(c, lead.map[i]) == rootnode)
            li = i;
    struct xm_sched *s = new_sched(c, &rc);
    if (s) {
        rc = 0;
        if (mine && shm)
            rc = xm_shmcoll_bcast(buf, count, dt, ri, c, node.map, node.n, node.me);
        if (mine && !shm && rotate(&node, ri) == 0) /* tree rooted at the root */
            v_bcast(s, &node, buf, count, dt);
        if (lead.me >= 0 && rotate(&lead, li) == 0) {
            xm_sched_wait(s);
            v_bcast(s, &lead, buf, count, dt);
        }
        if (!mine && !shm)
            v_bcast(s, &node, buf, count, dt);
        int r2 = xm_sched_start(s, NULL);
        if (!mine && shm && r2 == 0)
            r2 = xm_shmcoll_bcast(buf, count, dt, 0, c, node.map, node.n, node.me);
        if (rc == 0)
            rc = r2;
    }
    free_views(&node, &lead);
    return rc;
}

/* ---- barrier ------------------------------------------------------------------ */
int xm_icoll_barrier(struct xm_comm *c, struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank;
    if (!rp && (rc = shm_barrier(c)) <= 0)
        return rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (p > 2 && hier_allreduce(s, c, NULL, 0, MPI_BYTE, MPI_OP_NULL))
        return xm_sched_start(s, rp);
    if (prefer_tree(c)) {
        for (int mask = 1; mask < p; mask <<= 1) {
            if (me & mask) {
                xm_sched_wait(s); /* my children first */
                xm_sched_send(s, NULL, 0, MPI_BYTE, me - mask);
                xm_sched_wait(s);
                break;
            }
            if (me + mask < p)
                xm_sched_recv(s, NULL, 0, MPI_BYTE, me + mask);
        }
        xm_sched_wait(s);
        bcast_steps(s, c, NULL, 0, MPI_BYTE, 0);
        return xm_sched_start(s, rp);
    }
    for (int k = 1; k < p; k <<= 1) {
        xm_sched_recv(s, NULL, 0, MPI_BYTE, (me - k + p) % p);
        xm_sched_send(s, NULL, 0, MPI_BYTE, (me + k) % p);
        xm_sched_wait(s);
    }
    return xm_sched_start(s, rp);
}

/* ---- bcast -------------------------------------------------------------------- */
static void bcast_steps(struct xm_sched *s, struct xm_comm *c, void *buf, int count,
                        MPI_Datatype dt, int root)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1;
    while (mask < p) {
        if (vr & mask) {
            xm_sched_recv(s, buf, count, dt, (vr - mask + root) % p);
            xm_sched_wait(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            xm_sched_send(s, buf, count, dt, (vr + mask + root) % p);
}

static void ring_allgatherv(struct xm_sched *s, struct xm_comm *c, void *rbuf,
                            const int *rcounts, const int *displs, MPI_Datatype rdt);

/* Large Bcast (van de Geijn): the root hands block i to rank i, then a ring allgather;
 * the root sends about 2n bytes instead of n log2 p. */
static int bcast_scatter_ring(struct xm_sched *s, struct xm_comm *c, void *buf, int count,
                              MPI_Datatype dt, int root)
{
    int p = c->size, me = c->rank;
    int *cnt = malloc(2 * (size_t)p * sizeof(int));
    if (!cnt)
        return -ENOMEM;
    for (int i = 0, off = 0; i < p; i++) {
        cnt[i] = count / p + (i < count % p);
        cnt[p + i] = off;
        off += cnt[i];
    }
    if (me == root) {
        for (int i = 0; i < p; i++)
            if (i != root)
                xm_sched_send(s, AT(buf, cnt[p + i], dt), cnt[i], dt, i);
    } else {
        xm_sched_recv(s, AT(buf, cnt[p + me], dt), cnt[me], dt, root);
    }
    xm_sched_wait(s);
    ring_allgatherv(s, c, buf, cnt, cnt + p, dt);
    free(cnt);
    return 0;
}

int xm_icoll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                   struct xm_req **rp)
{
    int rc;
    if (!rp && (rc = shm_bcast(buf, count, dt, root, c)) <= 0)
        return rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    size_t bytes = tsize(dt) * (size_t)count;
    struct xm_dtype *t = xm_dt_get(dt);
    if (c->size > 2 && bytes > LARGE_MSG && bytes <= INT_MAX && t) {
        /* split the packed bytes, not the elements: the ranks may describe the same
         * bytes with different (count, type) pairs (only the type signature matches) */
        if (t->contig && t->extent == (MPI_Aint)t->size) {
            rc = bcast_scatter_ring(s, c, (char *)buf + t->true_lb, (int)bytes, MPI_BYTE,
                                    root);
        } else {
            void *tmp = xm_sched_tmp(s, (int)bytes, MPI_BYTE);
            if (!tmp) {
                rc = -ENOMEM;
            } else {
                if (c->rank == root)
                    xm_sched_copy(s, buf, count, dt, tmp, (int)bytes, MPI_BYTE);
                rc = bcast_scatter_ring(s, c, tmp, (int)bytes, MPI_BYTE, root);
                if (c->rank != root)
                    xm_sched_copy(s, tmp, (int)bytes, MPI_BYTE, buf, count, dt);
            }
        }
    } else if (c->size > 1)
        bcast_steps(s, c, buf, count, dt, root);
    if (rc < 0) {
        xm_sched_free(s);
        return rc;
    }
    return xm_sched_start(s, rp);
}

/* ---- reduce ------------------------------------------------------------------- */
/* Binomial reduction of (src) towards `root`; the result lands in `dst` at the root.
 * Non-commutative ops: tree rooted at 0 (ranges of consecutive ranks combine in order),
 * then 0 forwards to the root. */
static void reduce_steps(struct xm_sched *s, struct xm_comm *c, const void *src,
                         void *dst, int count, MPI_Datatype dt, MPI_Op op, int root)
{
    int p = c->size, me = c->rank;
    int commute = xm_op_commutative(op);
    int troot = commute ? root : 0;
    int vr = (me - troot + p) % p;
    void *acc = xm_sched_tmp(s, count, dt), *tmp = xm_sched_tmp(s, count, dt);
    if (!acc || !tmp)
        return;
    xm_sched_copy(s, src, count, dt, acc, count, dt);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            xm_sched_send(s, acc, count, dt, (vr - mask + troot) % p);
            xm_sched_wait(s);
            break;
        }
        if (vr + mask < p) {
            xm_sched_recv(s, tmp, count, dt, (vr + mask + troot) % p);
            if (commute) {
                xm_sched_op(s, tmp, acc, count, dt, op);
            } else { /* acc holds lower ranks: acc op tmp */
                xm_sched_op(s, acc, tmp, count, dt, op);
                xm_sched_copy(s, tmp, count, dt, acc, count, dt);
            }
        }
    }
    if (troot != root) {
        if (me == troot)
            xm_sched_send(s, acc, count, dt, root);
        else if (me == root)
            xm_sched_recv(s, dst, count, dt, troot);
        xm_sched_wait(s);
    } else if (me == root) {
        xm_sched_copy(s, acc, count, dt, dst, count, dt);
    }
}

int xm_icoll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    int root, struct xm_comm *c, struct xm_req **rp)
{
    int rc;
    /* One node: the binomial tree, not the segment.  A Reduce in the segment makes
     * every rank wait for the last one; in the tree the leaves send (eagerly) and go.
     * 8 ranks on 2 cores under load: 8 B 19-22 us against 0.9-3 ms, 4 KiB 80-108 us
     * against 2.5-6 ms, 16 KiB 130-230 us against 1.5-8 ms; 1 MiB alike (5-7 ms).
     * LOOM_MPI_COLL_SHM_REDUCE=1 (tests, measurements) takes the segment. */
    static int shm_reduce = -1;
    if (shm_reduce < 0)
        shm_reduce = xm_env_int("LOOM_MPI_COLL_SHM_REDUCE", 0) != 0;
    if (!rp && shm_reduce && one_node(c) &&
        (rc = xm_shmcoll_reduce(sbuf, rbuf, count, dt, op, root, c, NULL, c->size,
                                c->rank)) <= 0)
        return rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    reduce_steps(s, c, sbuf, rbuf, count, dt, op, root);
    return xm_sched_start(s, rp);
}

/* ---- allreduce ------------------------------------------------------------------ */
/* Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive
 * doubling, among the pof2 ranks left after folding (nr = my index among them).
 * Block i of the vector (pof2 blocks) ends up reduced at index i, then is spread.
 * Commutative ops only: the halving pairs ranks pof2/2 apart first, so the operands
 * are not combined in rank order.  Returns 1 if the steps were added. */
static int rabenseifner(struct xm_sched *s, void *acc, void *tmp, int count,
                        MPI_Datatype dt, MPI_Op op, int pof2, int rem, int nr)
{
    int *cnt = malloc(2 * (size_t)pof2 * sizeof(int)), *disp;
    if (!cnt)
        return 0; /* caller falls back to recursive doubling */
    disp = cnt + pof2;
    for (int i = 0, off = 0; i < pof2; i++) {
        cnt[i] = count / pof2 + (i < count % pof2);
        disp[i] = off;
        off += cnt[i];
    }
#define REAL(x) ((x) < rem ? (x)*2 + 1 : (x) + rem)
#define SUM(a, b, out)                                                                   \
    do {                                                                                 \
        out = 0;                                                                         \
        for (int i_ = (a); i_ < (b); i_++)                                               \
            out += cnt[i_];                                                              \
    } while (0)
    /* [lo, hi): the blocks I am responsible for; halve each round */
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
        int peer = nr ^ mask, mid = lo + (hi - lo) / 2, sn, rn;
        int keep_lo = nr < peer; /* lower rank keeps the lower half */
        int klo = keep_lo ? lo : mid, khi = keep_lo ? mid : hi;
        int slo = keep_lo ? mid : lo, shi = keep_lo ? hi : mid;
        SUM(klo, khi, rn);
        SUM(slo, shi, sn);
        xm_sched_recv(s, AT(tmp, disp[klo], dt), rn, dt, REAL(peer));
        xm_sched_send(s, AT(acc, disp[slo], dt), sn, dt, REAL(peer));
        xm_sched_op(s, AT(tmp, disp[klo], dt), AT(acc, disp[klo], dt), rn, dt, op);
        lo = klo;
        hi = khi;
    }
    /* now block nr (lo == nr, hi == nr + 1) is complete here; double back */
    for (int mask = 1; mask < pof2; mask <<= 1) {
        int peer = nr ^ mask, sn, rn, plo, phi; /* partner's range: same size, adjacent */
        if (peer < nr) {
            plo = lo - (hi - lo);
            phi = lo;
        } else {
            plo = hi;
            phi = hi + (hi - lo);
        }
        SUM(lo, hi, sn);
        SUM(plo, phi, rn);
        xm_sched_recv(s, AT(acc, disp[plo], dt), rn, dt, REAL(peer));
        xm_sched_send(s, AT(acc, disp[lo], dt), sn, dt, REAL(peer));
        xm_sched_wait(s);
        if (plo < lo)
            lo = plo;
        else
            hi = phi;
    }
#undef REAL
#undef SUM
    free(cnt);
    return 1;
}

static void allreduce_steps(struct xm_sched *s, struct xm_comm *c, void *acc, int count,
                            MPI_Datatype dt, MPI_Op op)
{
    int p = c->size, me = c->rank, commute = xm_op_commutative(op);
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2, nr;
    void *tmp = xm_sched_tmp(s, count, dt);
    if (!tmp)
        return;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            xm_sched_send(s, acc, count, dt, me + 1);
            xm_sched_wait(s);
            nr = -1;
        } else {
            xm_sched_recv(s, tmp, count, dt, me - 1);
            xm_sched_op(s, tmp, acc, count, dt, op); /* lower rank's data first */
            nr = me / 2;
        }
    } else {
        nr = me - rem;
    }
    if (nr >= 0 && commute && count >= pof2 && tsize(dt) * (size_t)count > LARGE_MSG &&
        rabenseifner(s, acc, tmp, count, dt, op, pof2, rem, nr)) {
        /* done: large vectors */
    } else if (nr >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int np = nr ^ mask, peer = np < rem ? np * 2 + 1 : np + rem;
            xm_sched_recv(s, tmp, count, dt, peer);
            xm_sched_send(s, acc, count, dt, peer);
            if (np < nr || commute) {
                xm_sched_op(s, tmp, acc, count, dt, op);
            } else {
                xm_sched_op(s, acc, tmp, count, dt, op);
                xm_sched_copy(s, tmp, count, dt, acc, count, dt);
            }
        }
    }
    if (me < 2 * rem) {
        if (me % 2)
            xm_sched_send(s, acc, count, dt, me - 1);
        else
            xm_sched_recv(s, acc, count, dt, me + 1);
        xm_sched_wait(s);
    }
}

int xm_icoll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                       MPI_Op op, struct xm_comm *c, struct xm_req **rp)
{
    int rc;
    if (!rp && (rc = shm_allreduce(sbuf, rbuf, count, dt, op, c)) <= 0)
        return rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf != MPI_IN_PLACE)
        xm_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (c->size > 2 && xm_op_commutative(op) && tsize(dt) * (size_t)count <= LARGE_MSG &&
        hier_allreduce(s, c, rbuf, count, dt, op)) {
        /* node-aware */
    } else if (c->size > 1 && prefer_tree(c) && tsize(dt) * (size_t)count <= LARGE_MSG) {
        reduce_steps(s, c, rbuf, rbuf, count, dt, op, 0);
        xm_sched_wait(s);
        bcast_steps(s, c, rbuf, count, dt, 0);
    } else if (c->size > 1) {
        allreduce_steps(s, c, rbuf, count, dt, op);
    }
    return xm_sched_start(s, rp);
}

/* ---- gather / scatter ---------------------------------------------------------- */
int xm_icoll_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                     const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                     struct xm_comm *c, struct xm_req **rp)
{
    int rc, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (me == root) {
        for (int i = 0; i < c->size; i++) {
            if (i == me) {
                if (sbuf != MPI_IN_PLACE)
                    xm_sched_copy(s, sbuf, scount, sdt, AT(rbuf, displs[i], rdt),
                                  rcounts[i], rdt);
            } else {
                xm_sched_recv(s, AT(rbuf, displs[i], rdt), rcounts[i], rdt, i);
            }
        }
    } else {
        xm_sched_send(s, sbuf, scount, sdt, root);
    }
    return xm_sched_start(s, rp);
}

int xm_icoll_scatterv(const void *sbuf, const int *scounts, const int *displs,
                      MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                      int root, struct xm_comm *c, struct xm_req **rp)
{
    int rc, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (me == root) {
        for (int i = 0; i < c->size; i++) {
            if (i == me) {
                if (rbuf != MPI_IN_PLACE)
                    xm_sched_copy(s, AT(sbuf, displs[i], sdt), scounts[i], sdt, rbuf,
                                  rcount, rdt);
            } else {
                xm_sched_send(s, AT(sbuf, displs[i], sdt), scounts[i], sdt, i);
            }
        }
    } else {
        xm_sched_recv(s, rbuf, rcount, rdt, root);
    }
    return xm_sched_start(s, rp);
}

/* ---- allgather ------------------------------------------------------------------- */
static void ring_allgatherv(struct xm_sched *s, struct xm_comm *c, void *rbuf,
                            const int *rcounts, const int *displs, MPI_Datatype rdt)
{
    int p = c->size, me = c->rank, right = (me + 1) % p, left = (me - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (me - k + p) % p, rb = (me - k - 1 + p) % p;
        xm_sched_recv(s, AT(rbuf, displs[rb], rdt), rcounts[rb], rdt, left);
        xm_sched_send(s, AT(rbuf, displs[sb], rdt), rcounts[sb], rdt, right);
        xm_sched_wait(s);
    }
}

int xm_icoll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                        const int *rcounts, const int *displs, MPI_Datatype rdt,
                        struct xm_comm *c, struct xm_req **rp)
{
    int rc, me = c->rank;
    if (!rp && one_node(c) &&
        (rc = xm_shmcoll_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c)) <= 0)
        return rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf != MPI_IN_PLACE)
        xm_sched_copy(s, sbuf, scount, sdt, AT(rbuf, displs[me], rdt), rcounts[me], rdt);
    ring_allgatherv(s, c, rbuf, rcounts, displs, rdt);
    return xm_sched_start(s, rp);
}

int xm_icoll_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       int rcount, MPI_Datatype rdt, struct xm_comm *c,
                       struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank;
    if (!rp && one_node(c) && tsize(rdt) * (size_t)rcount * (size_t)p >= 2048) {
        int *cnt = malloc(2 * (size_t)p * sizeof(int));
        if (!cnt)
            return -ENOMEM;
        for (int i = 0; i < p; i++) {
            cnt[i] = rcount;
            cnt[p + i] = i * rcount;
        }
        rc = xm_shmcoll_allgatherv(sbuf, scount, sdt, rbuf, cnt, cnt + p, rdt, c);
        free(cnt);
        if (rc <= 0)
            return rc;
    }
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    const void *mine = sbuf == MPI_IN_PLACE ? AT(rbuf, (MPI_Aint)me * rcount, rdt) : sbuf;
    if (sbuf == MPI_IN_PLACE) {
        scount = rcount;
        sdt = rdt;
    }
    if (prefer_tree(c) && tsize(rdt) * (size_t)rcount * (size_t)p <= LARGE_MSG) {
        /* oversubscribed: gather to 0 + binomial bcast, 2(p-1) messages */
        if (me == 0) {
            for (int r = 1; r < p; r++)
                xm_sched_recv(s, AT(rbuf, (MPI_Aint)r * rcount, rdt), rcount, rdt, r);
            if (sbuf != MPI_IN_PLACE)
                xm_sched_copy(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        } else {
            xm_sched_send(s, mine, scount, sdt, 0);
        }
        xm_sched_wait(s);
        bcast_steps(s, c, rbuf, p * rcount, rdt, 0);
    } else if (tsize(rdt) * (size_t)rcount <= SMALL_BLOCK) {
        /* Bruck: tmp block i = block of rank (me + i) % p */
        char *tmp = xm_sched_tmp(s, p * rcount, rdt);
        if (tmp) {
            MPI_Aint bl = (MPI_Aint)rcount * ext(rdt);
            xm_sched_copy(s, mine, scount, sdt, tmp, rcount, rdt);
            for (int k = 1; k < p; k <<= 1) {
                int n = k < p - k ? k : p - k;
                xm_sched_recv(s, tmp + k * bl, n * rcount, rdt, (me + k) % p);
                xm_sched_send(s, tmp, n * rcount, rdt, (me - k + p) % p);
                xm_sched_wait(s);
            }
            xm_sched_copy(s, tmp, (p - me) * rcount, rdt,
                          AT(rbuf, (MPI_Aint)me * rcount, rdt), (p - me) * rcount, rdt);
            if (me)
                xm_sched_copy(s, tmp + (p - me) * bl, me * rcount, rdt, rbuf, me * rcount,
                              rdt);
        }
    } else {
        int *cnt = malloc(2 * (size_t)p * sizeof(int));
        if (!cnt) {
            xm_sched_free(s);
            return -ENOMEM;
        }
        for (int i = 0; i < p; i++) {
            cnt[i] = rcount;
            cnt[p + i] = i * rcount;
        }
        if (sbuf != MPI_IN_PLACE)
            xm_sched_copy(s, sbuf, scount, sdt, AT(rbuf, cnt[p + me], rdt), rcount, rdt);
        ring_allgatherv(s, c, rbuf, cnt, cnt + p, rdt);
        free(cnt);
    }
    return xm_sched_start(s, rp);
}

/* ---- alltoall(v) ----------------------------------------------------------------- */
int xm_icoll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                       MPI_Datatype sdt, void *rbuf, const int *rcounts,
                       const int *rdispls, MPI_Datatype rdt, struct xm_comm *c,
                       struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf == MPI_IN_PLACE) { /* send from a copy of the receive buffer */
        int span = 0;
        for (int i = 0; i < p; i++)
            if (rdispls[i] + rcounts[i] > span)
                span = rdispls[i] + rcounts[i];
        void *tmp = xm_sched_tmp(s, span, rdt);
        if (tmp)
            xm_sched_copy(s, rbuf, span, rdt, tmp, span, rdt);
        sbuf = tmp;
        scounts = rcounts;
        sdispls = rdispls;
        sdt = rdt;
    }
    size_t big = 0;
    for (int i = 0; i < p; i++)
        if (tsize(sdt) * (size_t)scounts[i] > big)
            big = tsize(sdt) * (size_t)scounts[i];
    int pairwise = big > SMALL_BLOCK;
    xm_sched_copy(s, AT(sbuf, sdispls[me], sdt), scounts[me], sdt,
                  AT(rbuf, rdispls[me], rdt), rcounts[me], rdt);
    for (int k = 1; k < p; k++) {
        int to = (me + k) % p, from = (me - k + p) % p;
        xm_sched_recv(s, AT(rbuf, rdispls[from], rdt), rcounts[from], rdt, from);
        xm_sched_send(s, AT(sbuf, sdispls[to], sdt), scounts[to], sdt, to);
        if (pairwise)
            xm_sched_wait(s);
    }
    return xm_sched_start(s, rp);
}

/* Alltoallw: displacements in bytes, one type per peer; all exchanges at once. */
int xm_icoll_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                       const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                       const int *rdispls, const MPI_Datatype *rdts, struct xm_comm *c,
                       struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf == MPI_IN_PLACE) { /* stage each of my receive blocks, packed */
        char **tmp = malloc((size_t)p * sizeof(*tmp));
        if (!tmp) {
            xm_sched_free(s);
            return -ENOMEM;
        }
        for (int i = 0; i < p; i++) {
            tmp[i] =
                xm_sched_tmp(s, (int)(tsize(rdts[i]) * (size_t)rcounts[i]), MPI_BYTE);
            if (tmp[i])
                xm_sched_copy(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], tmp[i],
                              (int)(tsize(rdts[i]) * (size_t)rcounts[i]), MPI_BYTE);
        }
        for (int k = 1; k < p; k++) {
            int to = (me + k) % p, from = (me - k + p) % p;
            xm_sched_recv(s, (char *)rbuf + rdispls[from], rcounts[from], rdts[from],
                          from);
            xm_sched_send(s, tmp[to], (int)(tsize(rdts[to]) * (size_t)rcounts[to]),
                          MPI_BYTE, to);
        }
        free(tmp);
        return xm_sched_start(s, rp);
    }
    xm_sched_copy(s, (const char *)sbuf + sdispls[me], scounts[me], sdts[me],
                  (char *)rbuf + rdispls[me], rcounts[me], rdts[me]);
    for (int k = 1; k < p; k++) {
        int to = (me + k) % p, from = (me - k + p) % p;
        xm_sched_recv(s, (char *)rbuf + rdispls[from], rcounts[from], rdts[from], from);
        xm_sched_send(s, (const char *)sbuf + sdispls[to], scounts[to], sdts[to], to);
    }
    return xm_sched_start(s, rp);
}

/* ---- reduce_scatter ------------------------------------------------------------------
 */
int xm_icoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                            MPI_Datatype dt, MPI_Op op, struct xm_comm *c,
                            struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank, total = 0;
    if (!rp && one_node(c) &&
        (rc = xm_shmcoll_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c)) <= 0)
        return rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    int *displs = malloc((size_t)p * sizeof(int));
    if (!displs) {
        xm_sched_free(s);
        return -ENOMEM;
    }
    for (int i = 0; i < p; i++) {
        displs[i] = total;
        total += rcounts[i];
    }
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *full = me == 0 ? xm_sched_tmp(s, total, dt) : NULL;
    reduce_steps(s, c, src, full, total, dt, op, 0);
    xm_sched_wait(s);
    if (me == 0) {
        for (int i = 1; i < p; i++)
            xm_sched_send(s, AT(full, displs[i], dt), rcounts[i], dt, i);
        xm_sched_copy(s, full, rcounts[0], dt, rbuf, rcounts[0], dt);
    } else {
        xm_sched_recv(s, rbuf, rcounts[me], dt, 0);
    }
    free(displs);
    return xm_sched_start(s, rp);
}

/* ---- scan / exscan
 * --------------------------------------------------------------------- */
int xm_icoll_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  int exclusive, struct xm_comm *c, struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank, have = !exclusive;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    void *partial = xm_sched_tmp(s, count, dt), *tmp = xm_sched_tmp(s, count, dt);
    if (partial && tmp) {
        const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
        xm_sched_copy(s, src, count, dt, partial, count, dt); /* op over my subtree */
        if (!exclusive && sbuf != MPI_IN_PLACE)
            xm_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
        for (int mask = 1; mask < p; mask <<= 1) {
            int peer = me ^ mask;
            if (peer >= p)
                continue;
            xm_sched_recv(s, tmp, count, dt, peer);
            xm_sched_send(s, partial, count, dt, peer);
            if (peer < me) { /* tmp covers lower ranks: it goes first */
                if (have) {
                    xm_sched_op(s, tmp, rbuf, count, dt, op);
                } else {
                    xm_sched_copy(s, tmp, count, dt, rbuf, count, dt);
                    have = 1;
                }
                xm_sched_op(s, tmp, partial, count, dt, op);
            } else {
                xm_sched_op(s, partial, tmp, count, dt, op);
                xm_sched_copy(s, tmp, count, dt, partial, count, dt);
            }
        }
    }
    return xm_sched_start(s, rp);
}

/* ---- the original blocking entry points (env.c uses barrier) --------------------------
 */
int xm_coll_barrier(struct xm_comm *c)
{
    return xm_icoll_barrier(c, NULL);
}

int xm_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c)
{
    return xm_icoll_bcast(buf, count, dt, root, c, NULL);
}

int xm_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, struct xm_comm *c)
{
    return xm_icoll_reduce(sbuf, rbuf, count, dt, op, root, c, NULL);
}

int xm_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      struct xm_comm *c)
{
    return xm_icoll_allreduce(sbuf, rbuf, count, dt, op, c, NULL);
}
