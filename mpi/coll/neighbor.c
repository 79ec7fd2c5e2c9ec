/*
 * neighbor.c - neighbor collectives (MPI_Neighbor_* and MPI_Ineighbor_*) over the
 *              process topology of a communicator (struct xm_topo, core/topo.c).
 *
 * One schedule per call: every receive from an in-neighbour is posted, then every send
 * to an out-neighbour, then the schedule waits; the blocking and the nonblocking forms
 * run the same schedule (xm_sched_start).  MPI_PROC_NULL neighbours keep their block
 * and move no data.
 * Matching: all blocks travel on one tag, so two blocks between the same pair of ranks
 * match in posting order.  For a Cartesian topology a periodic dimension of size 1 or 2
 * makes the -1 and +1 neighbours the same rank; the block a rank sends towards -1 is the
 * one its neighbour receives from its +1 side, so receives are posted +1 first within
 * each dimension (sends go -1 first), which pairs them as the standard asks.  Graph and
 * distributed-graph edges pair in list order.
 */
#include <errno.h>

#include "coll.h"

int xm_neighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                          const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                          const MPI_Aint *rdispls, const MPI_Datatype *rdts,
                          struct xm_comm *c, struct xm_req **rp)
{
    const struct xm_topo *t = c->topo;
    if (!t)
        return -EINVAL;
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return -ENOMEM;
    int cart = t->kind == MPI_CART;
    for (int k = 0; k < t->indeg; k++) {
        int i = cart ? k ^ 1 : k; /* +1 before -1 in each dimension (see above) */
        if (t->in[i] != MPI_PROC_NULL)
            xm_sched_recv(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], t->in[i]);
    }
    for (int i = 0; i < t->outdeg; i++)
        if (t->out[i] != MPI_PROC_NULL)
            xm_sched_send(s, (const char *)sbuf + sdispls[i], scounts[i], sdts[i],
                          t->out[i]);
    xm_sched_wait(s);
    return xm_sched_start(s, rp);
}
