/*
 * coll.c - collective algorithms, written once as schedules (sched.c) so that the
 *          blocking call and its I-variant share the code (contract in coll.h).
 *
 * Algorithms (p = communicator size):
 *   Barrier    dissemination: ceil(log2 p) rounds of zero-byte exchanges.
 *   Bcast      binomial tree from the root.
 *   Reduce     binomial tree; rank order kept for non-commutative ops (the tree is
 *              rooted at 0 and the result forwarded to the root).
 *   Allreduce  recursive doubling; p not a power of two: the first 2*rem ranks fold
 *              pairwise first and get the result back at the end (MPICH's scheme).
 *              Operand order is kept, so non-commutative ops are right.
 *   Gather(v), Scatter(v)  root posts everything at once (linear).
 *   Allgather  Bruck (ceil(log2 p) rounds) for small blocks, ring for large ones.
 *   Allgatherv ring.
 *   Alltoall(v) all exchanges posted at once for small blocks; pairwise
 *              (p-1 fenced rounds, (me+k, me-k)) for large.
 *   Reduce_scatter(_block)  Reduce to rank 0 + Scatterv.
 *   Scan, Exscan  recursive doubling on partial results (order kept).
 * Caveats: node awareness (intra-node shm first, then leaders) is not needed on one node
 *   and not written yet; large Bcast/Allreduce would gain from scatter+allgather and
 *   Rabenseifner (reduce-scatter + allgather).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/p2p.h"
#include "../dt/dtype.h"
#include "coll.h"

#define SMALL_BLOCK 8192 /* bytes per block below which latency-bound algorithms win */

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

#define AT(buf, i, dt) ((char *)(buf) + (MPI_Aint)(i) * ext(dt))

static struct xm_sched *new_sched(struct xm_comm *c, int *rc)
{
    struct xm_sched *s = xm_sched_new(c);
    *rc = s ? 0 : -ENOMEM;
    return s;
}

/* ---- barrier ------------------------------------------------------------------ */
int xm_icoll_barrier(struct xm_comm *c, struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
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

int xm_icoll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                   struct xm_req **rp)
{
    int rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (c->size > 1)
        bcast_steps(s, c, buf, count, dt, root);
    return xm_sched_start(s, rp);
}

/* ---- reduce ------------------------------------------------------------------- */
/* Binomial reduction of (src) towards `root`; the result lands in `dst` at the root.
 * Non-commutative ops: tree rooted at 0 (ranges of consecutive ranks combine in order),
 * then 0 forwards to the root. */
static void reduce_steps(struct xm_sched *s, struct xm_comm *c, const void *src, void *dst,
                         int count, MPI_Datatype dt, MPI_Op op, int root)
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
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    reduce_steps(s, c, sbuf, rbuf, count, dt, op, root);
    return xm_sched_start(s, rp);
}

/* ---- allreduce ------------------------------------------------------------------ */
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
    if (nr >= 0) {
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

int xm_icoll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       struct xm_comm *c, struct xm_req **rp)
{
    int rc;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf != MPI_IN_PLACE)
        xm_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (c->size > 1)
        allreduce_steps(s, c, rbuf, count, dt, op);
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
                    xm_sched_copy(s, sbuf, scount, sdt, AT(rbuf, displs[i], rdt), rcounts[i],
                                  rdt);
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
                      MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                      struct xm_comm *c, struct xm_req **rp)
{
    int rc, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (me == root) {
        for (int i = 0; i < c->size; i++) {
            if (i == me) {
                if (rbuf != MPI_IN_PLACE)
                    xm_sched_copy(s, AT(sbuf, displs[i], sdt), scounts[i], sdt, rbuf, rcount,
                                  rdt);
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
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    if (sbuf != MPI_IN_PLACE)
        xm_sched_copy(s, sbuf, scount, sdt, AT(rbuf, displs[me], rdt), rcounts[me], rdt);
    ring_allgatherv(s, c, rbuf, rcounts, displs, rdt);
    return xm_sched_start(s, rp);
}

int xm_icoll_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       int rcount, MPI_Datatype rdt, struct xm_comm *c, struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank;
    struct xm_sched *s = new_sched(c, &rc);
    if (!s)
        return rc;
    const void *mine = sbuf == MPI_IN_PLACE ? AT(rbuf, (MPI_Aint)me * rcount, rdt) : sbuf;
    if (sbuf == MPI_IN_PLACE) {
        scount = rcount;
        sdt = rdt;
    }
    if (tsize(rdt) * (size_t)rcount <= SMALL_BLOCK) {
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
            xm_sched_copy(s, tmp, (p - me) * rcount, rdt, AT(rbuf, (MPI_Aint)me * rcount, rdt),
                          (p - me) * rcount, rdt);
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
                       MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                       MPI_Datatype rdt, struct xm_comm *c, struct xm_req **rp)
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
    xm_sched_copy(s, AT(sbuf, sdispls[me], sdt), scounts[me], sdt, AT(rbuf, rdispls[me], rdt),
                  rcounts[me], rdt);
    for (int k = 1; k < p; k++) {
        int to = (me + k) % p, from = (me - k + p) % p;
        xm_sched_recv(s, AT(rbuf, rdispls[from], rdt), rcounts[from], rdt, from);
        xm_sched_send(s, AT(sbuf, sdispls[to], sdt), scounts[to], sdt, to);
        if (pairwise)
            xm_sched_wait(s);
    }
    return xm_sched_start(s, rp);
}

/* ---- reduce_scatter ------------------------------------------------------------------ */
int xm_icoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                            MPI_Datatype dt, MPI_Op op, struct xm_comm *c,
                            struct xm_req **rp)
{
    int rc, p = c->size, me = c->rank, total = 0;
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

/* ---- scan / exscan --------------------------------------------------------------------- */
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

/* ---- the original blocking entry points (env.c uses barrier) -------------------------- */
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
