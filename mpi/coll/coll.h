/*
 * coll.h - collectives and reduction operators (comm/group/collectives area).
 *
 * Owns: algorithms for every collective (blocking and I-variants), algorithm selection,
 * the reduction op table (predefined + user ops).
 * Contract:
 *   - Collectives run over the p2p engine (core/p2p.h) on context comm->ctx|1, with
 *     world ranks from xm_comm_world_rank(); never through MPI_* entry points (so
 *     PMPI interception sees only the user's calls).
 *   - xm_coll_*() return 0 or -errno; api/coll.c maps that to an MPI error class.
 *   - xm_op_apply(op, in, inout, count, dt): inout[i] = in[i] op inout[i]; -EINVAL for
 *     an op/type pair the standard does not define.
 *   - Tags: blocking collectives use XM_TAG_COLL_*; nonblocking ones derive their tag
 *     from comm->coll_seq so overlapping I-collectives do not match each other.
 */
#ifndef XM_COLL_H
#define XM_COLL_H

#include "../core/xm.h"

enum { XM_TAG_BARRIER = 1, XM_TAG_BCAST, XM_TAG_REDUCE, XM_TAG_ALLREDUCE, XM_TAG_GATHER,
       XM_TAG_SCATTER, XM_TAG_ALLGATHER, XM_TAG_ALLTOALL, XM_TAG_SCAN };

int xm_coll_barrier(struct xm_comm *c);
int xm_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c);
int xm_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, struct xm_comm *c);
int xm_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      struct xm_comm *c);

int xm_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
int xm_op_valid(MPI_Op op);

#endif
