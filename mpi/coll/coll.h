/*
 * coll.h - collectives and reduction operators.
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

/* ---- additions -------------------------------------------------
 * Ops: xm_op_apply_any() also takes user ops (MPI_Op_create) and derived types whose
 * elements are all one predefined type; xm_op_commutative() is 1 for predefined ops. */
int xm_op_apply_any(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
int xm_op_commutative(MPI_Op op);
int xm_op_create(MPI_User_function *fn, int commute, MPI_Op *op);
/* the same with an MPI_Count length (MPI_Op_create_c) */
int xm_op_create_c(MPI_User_function_c *fn, int commute, MPI_Op *op);
int xm_op_free(MPI_Op *op);
/* held by a pending nonblocking schedule: MPI_Op_free then only marks the op */
void xm_op_ref(MPI_Op op);
void xm_op_unref(MPI_Op op);

/* Schedules (sched.c): steps built up front, advanced without blocking.  Ranks in
 * send/recv are COMM ranks.  WAIT, OP and COPY wait for everything posted before. */
struct xm_sched;
struct xm_sched *xm_sched_new(struct xm_comm *c);
void xm_sched_free(struct xm_sched *s);
void *xm_sched_tmp(struct xm_sched *s, int count, MPI_Datatype dt); /* freed with s */
void xm_sched_send(struct xm_sched *s, const void *buf, int count, MPI_Datatype dt, int to);
void xm_sched_recv(struct xm_sched *s, void *buf, int count, MPI_Datatype dt, int from);
void xm_sched_wait(struct xm_sched *s);
void xm_sched_op(struct xm_sched *s, const void *in, void *inout, int count, MPI_Datatype dt,
                 MPI_Op op);
void xm_sched_copy(struct xm_sched *s, const void *src, int scount, MPI_Datatype sdt,
                   void *dst, int rcount, MPI_Datatype rdt);
int xm_sched_step(struct xm_sched *s);        /* 1 finished, 0 pending */
int xm_sched_error(const struct xm_sched *s); /* 0 or -errno */
/* rp == NULL: run to completion (blocking collective); else hand back an XM_REQ_COLL
 * request (nonblocking).  Consumes s.  0 or -errno. */
int xm_sched_start(struct xm_sched *s, struct xm_req **rp);
/* Advance every active nonblocking collective; core/p2p.c's xm_progress() should call it. */
int xm_coll_progress(void);
int xm_dt_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int rcount,
               MPI_Datatype rdt);

/* Every collective: rp == NULL blocks, else starts it and returns the request.
 * Buffers may be MPI_IN_PLACE where the standard allows it. */
int xm_icoll_barrier(struct xm_comm *c, struct xm_req **rp);
int xm_icoll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                   struct xm_req **rp);
int xm_icoll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    int root, struct xm_comm *c, struct xm_req **rp);
int xm_icoll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       struct xm_comm *c, struct xm_req **rp);
int xm_icoll_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                     const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                     struct xm_comm *c, struct xm_req **rp);
int xm_icoll_scatterv(const void *sbuf, const int *scounts, const int *displs,
                      MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                      struct xm_comm *c, struct xm_req **rp);
int xm_icoll_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       int rcount, MPI_Datatype rdt, struct xm_comm *c, struct xm_req **rp);
int xm_icoll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                        const int *rcounts, const int *displs, MPI_Datatype rdt,
                        struct xm_comm *c, struct xm_req **rp);
int xm_icoll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                       MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                       MPI_Datatype rdt, struct xm_comm *c, struct xm_req **rp);
int xm_icoll_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                       const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                       const int *rdispls, const MPI_Datatype *rdts, struct xm_comm *c,
                       struct xm_req **rp);
int xm_icoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                            MPI_Datatype dt, MPI_Op op, struct xm_comm *c,
                            struct xm_req **rp);
int xm_icoll_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  int exclusive, struct xm_comm *c, struct xm_req **rp);

/* Blocking collectives through the node's shared segment (shmcoll.c) among the
 * members map[0..n-1] (comm ranks, all on this node; map NULL = every rank of c, n =
 * c->size); I am member me; roots are member indices.  0 done, 1 not applicable here
 * (run the p2p schedule), or -errno; the same decision at every member. */
int xm_shmcoll_barrier(struct xm_comm *c, const int *map, int n, int me);
int xm_shmcoll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                     const int *map, int n, int me);
int xm_shmcoll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, struct xm_comm *c, const int *map, int n, int me);
int xm_shmcoll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                         MPI_Op op, struct xm_comm *c, const int *map, int n, int me);
/* whole communicator on this node only (map NULL): counts as in xm_icoll_* */
int xm_shmcoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                              MPI_Datatype dt, MPI_Op op, struct xm_comm *c);
int xm_shmcoll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                          const int *rcounts, const int *displs, MPI_Datatype rdt,
                          struct xm_comm *c);
/* 1 if those members have a slot (the calls above will not return 1 for lack of one) */
int xm_shmcoll_ready(struct xm_comm *c, const int *map, int n, int me);
/* 1 if a broadcast of (count, dt) can run in shared memory (slots permitting).  The
 * answer and xm_shmcoll_reducible's are the same on every rank of the job (size, type,
 * op and environment only, never whether my node has a slot: a rank alone on its node
 * has none), so every rank picks the same node-aware algorithm from them. */
int xm_shmcoll_fits(int count, MPI_Datatype dt);
/* 1 if a reduction of (count, dt, op) can run in shared memory (slots permitting) */
int xm_shmcoll_reducible(int count, MPI_Datatype dt, MPI_Op op);

/* ---- intercommunicators and neighbor collectives -------------------------
 * In a schedule on an intercommunicator, peer ranks address the REMOTE group; a peer
 * of (r | XM_SCHED_LOCAL) is rank r of the local group (same context, so one schedule
 * mixes both: tags come from coll_seq, which both groups advance in step).
 * xm_inter_*: intercommunicator collectives (coll/inter.c); roots are MPI_ROOT,
 * MPI_PROC_NULL or a remote rank as in the standard; counts/displacement arrays have
 * the size of the group they describe (remote for gather/scatter/alltoall, local for
 * reduce_scatter).
 * xm_neighbor_*: neighbor collectives on c->topo (coll/neighbor.c); per-neighbour
 * arrays of counts, byte displacements and types: the w-form covers all five, and
 * Allgather(v) is the w-form with every send displacement 0 (also on intercomms). */
#define XM_SCHED_LOCAL 0x40000000
int xm_inter_barrier(struct xm_comm *c, struct xm_req **rp);
int xm_inter_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c,
                   struct xm_req **rp);
int xm_inter_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                     const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
                     struct xm_comm *c, struct xm_req **rp);
int xm_inter_scatterv(const void *sbuf, const int *scounts, const int *displs,
                      MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                      struct xm_comm *c, struct xm_req **rp);
int xm_inter_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                       const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                       const MPI_Aint *rdispls, const MPI_Datatype *rdts, struct xm_comm *c,
                       struct xm_req **rp);
int xm_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    int root, struct xm_comm *c, struct xm_req **rp);
int xm_inter_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       struct xm_comm *c, struct xm_req **rp);
int xm_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                            MPI_Datatype dt, MPI_Op op, struct xm_comm *c,
                            struct xm_req **rp);
int xm_neighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                          const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                          const MPI_Aint *rdispls, const MPI_Datatype *rdts,
                          struct xm_comm *c, struct xm_req **rp);

#endif
