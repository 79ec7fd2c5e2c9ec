/*
 * inter.c - collectives on intercommunicators (MPI-3.1 section 5.2.2), blocking and
 *           nonblocking alike: one schedule per call on the intercommunicator.
 *
 * In these schedules a plain peer is a rank of the REMOTE group and (r | XM_SCHED_LOCAL)
 * rank r of my own group (coll.h).  Every process of both groups builds exactly one
 * schedule per call (an empty one where it has nothing to do, e.g. root MPI_PROC_NULL)
 * so that the coll_seq counters, and with them the tags, stay in step.
 * Algorithms (simple, linear in the group sizes):
 *   Barrier     locals -> local leader, leaders swap, leader -> locals.
 *   Bcast       the root sends to every remote rank.
 *   Gather(v)/Scatter(v)   the root receives from / sends to every remote rank.
 *   Allgather(v), Alltoall(v/w)  each rank exchanges one block with every remote rank
 *               (the caller turns them all into the w-form).
 *   Reduce      the contributing group reduces to its leader in rank order (correct for
 *               non-commutative ops), the leader sends the result to the root.
 *   Allreduce   each group reduces to its leader, the leaders swap, each leader sends
 *               the other group's result to its own members.
 *   Reduce_scatter(_block)  as Allreduce of the whole vector, then each leader
 *               scatters by its own group's counts.
 */
#include <errno.h>

#include "../dt/dtype.h"
#include "coll.h"

#define LOC(r) ((r) | XM_SCHED_LOCAL)

static MPI_Aint ext(MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    return t ? t->extent : 0;
}

static char zero; /* buffer of zero-byte messages */

int xm_inter_barrier(struct xm_comm *c, struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    if (c->rank == 0) {
        for (int i = 1; i < c->local_size; i++)
            xm_sched_recv(s, &zero, 0, MPI_BYTE, LOC(i));
        xm_sched_wait(s);
        xm_sched_send(s, &zero, 0, MPI_BYTE, 0);
        xm_sched_recv(s, &zero, 0, MPI_BYTE, 0);
        xm_sched_wait(s);
        for (int i = 1; i < c->local_size; i++)
            xm_sched_send(s, &zero, 0, MPI_BYTE, LOC(i));
    } else {
        xm_sched_send(s, &zero, 0, MPI_BYTE, LOC(0));
        xm_sched_recv(s, &zero, 0, MPI_BYTE, LOC(0));
    }
    return xm_sched_start(s, rp);
}

int xm_inter_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                   struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    if (root == MPI_ROOT)
        for (int i = 0; i < c->size; i++)
            xm_sched_send(s, buf, count, dt, i);
    else if (root != MPI_PROC_NULL)
        xm_sched_recv(s, buf, count, dt, root);
    return xm_sched_start(s, rp);
}

int xm_inter_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                     const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                     struct xm_comm *c, struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    if (root == MPI_ROOT)
        for (int i = 0; i < c->size; i++)
            xm_sched_recv(s, (char *)rbuf + (MPI_Aint)displs[i] * ext(rdt), rcounts[i],
                          rdt, i);
    else if (root != MPI_PROC_NULL)
        xm_sched_send(s, sbuf, scount, sdt, root);
    return xm_sched_start(s, rp);
}

int xm_inter_scatterv(const void *sbuf, const int *scounts, const int *displs,
                      MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                      int root, struct xm_comm *c, struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    if (root == MPI_ROOT)
        for (int i = 0; i < c->size; i++)
            xm_sched_send(s, (const char *)sbuf + (MPI_Aint)displs[i] * ext(sdt),
                          scounts[i], sdt, i);
    else if (root != MPI_PROC_NULL)
        xm_sched_recv(s, rbuf, rcount, rdt, root);
    return xm_sched_start(s, rp);
}

int xm_inter_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                       const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                       const MPI_Aint *rdispls, const MPI_Datatype *rdts,
                       struct xm_comm *c, struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    int r = c->size, me = c->rank;
    for (int k = 0; k < r; k++) { /* start at a rank-dependent peer to spread the load */
        int i = (me + k) % r;
        xm_sched_recv(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], i);
    }
    for (int k = 0; k < r; k++) {
        int i = (me + k) % r;
        xm_sched_send(s, (const char *)sbuf + sdispls[i], scounts[i], sdts[i], i);
    }
    return xm_sched_start(s, rp);
}

/* My group's reduction of (sbuf, count, dt) in rank order at local rank 0, which gets
 * it in a temporary (returned); NULL elsewhere (or on error: the schedule holds it). */
static void *reduce_to_leader(struct xm_sched *s, struct xm_comm *c, const void *sbuf,
                              int count, MPI_Datatype dt, MPI_Op op)
{
    int n = c->local_size;
    if (c->rank != 0) {
        xm_sched_send(s, sbuf, count, dt, LOC(0));
        return NULL;
    }
    void *acc = xm_sched_tmp(s, count, dt);
    const void *last = sbuf;
    void **in = n > 1 ? xm_sched_tmp(s, n, MPI_AINT) : NULL; /* pointers, n of them */
    if (!acc || (n > 1 && !in))
        return NULL;
    for (int i = 1; i < n; i++) {
        in[i] = xm_sched_tmp(s, count, dt);
        if (!in[i])
            return NULL;
        xm_sched_recv(s, in[i], count, dt, LOC(i));
        last = in[i];
    }
    /* acc = x0 op (x1 op (... op x(n-1))): start from the last, fold downwards */
    xm_sched_copy(s, last, count, dt, acc, count, dt);
    for (int i = n - 2; i >= 0; i--)
        xm_sched_op(s, i ? in[i] : sbuf, acc, count, dt, op);
    return acc;
}

int xm_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    int root, struct xm_comm *c, struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    if (root == MPI_ROOT) {
        xm_sched_recv(s, rbuf, count, dt, 0);
    } else if (root != MPI_PROC_NULL) {
        void *acc = reduce_to_leader(s, c, sbuf, count, dt, op);
        if (acc)
            xm_sched_send(s, acc, count, dt, root);
    }
    return xm_sched_start(s, rp);
}

int xm_inter_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                       MPI_Op op, struct xm_comm *c, struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    void *acc = reduce_to_leader(s, c, sbuf, count, dt, op);
    if (c->rank == 0) {
        if (acc) {
            xm_sched_send(s, acc, count, dt, 0);
            xm_sched_recv(s, rbuf, count, dt, 0);
            xm_sched_wait(s);
            for (int i = 1; i < c->local_size; i++)
                xm_sched_send(s, rbuf, count, dt, LOC(i));
        }
    } else {
        xm_sched_recv(s, rbuf, count, dt, LOC(0));
    }
    return xm_sched_start(s, rp);
}

int xm_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                            MPI_Datatype dt, MPI_Op op, struct xm_comm *c,
                            struct xm_req **rp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    long total = 0;
    for (int i = 0; i < c->local_size; i++)
        total += rcounts[i];
    if (total > 0x7fffffffL) {
        xm_sched_free(s);
        return -EINVAL;
    }
    int n = (int)total;
    void *acc = reduce_to_leader(s, c, sbuf, n, dt, op);
    if (c->rank == 0) {
        char *full = acc ? xm_sched_tmp(s, n, dt) : NULL;
        if (full) {
            xm_sched_send(s, acc, n, dt, 0);
            xm_sched_recv(s, full, n, dt, 0);
            xm_sched_wait(s);
            MPI_Aint off = rcounts[0];
            for (int i = 1; i < c->local_size; i++) {
                xm_sched_send(s, full + off * ext(dt), rcounts[i], dt, LOC(i));
                off += rcounts[i];
            }
            xm_sched_copy(s, full, rcounts[0], dt, rbuf, rcounts[0], dt);
        }
    } else {
        xm_sched_recv(s, rbuf, rcounts[c->rank], dt, LOC(0));
    }
    return xm_sched_start(s, rp);
}
