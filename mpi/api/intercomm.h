/*
 * intercomm.h - intercommunicator constructors called from api/comm.c when its
 *               communicator argument is an intercommunicator (api/intercomm.c).
 * Every function returns an MPI error code (already passed through the handler).
 */
#ifndef XM_INTERCOMM_H
#define XM_INTERCOMM_H

#include "../core/comm.h"

int xm_intercomm_dup(struct xm_comm *c, MPI_Comm *newcomm, const char *fn);
int xm_intercomm_split(struct xm_comm *c, int color, int key, MPI_Comm *newcomm,
                       const char *fn);
int xm_intercomm_create_sub(struct xm_comm *c, struct xm_group *g, MPI_Comm *newcomm,
                            const char *fn);
/* remote = 0: the local group (Comm_group), 1: the remote group */
int xm_intercomm_group(struct xm_comm *c, int remote, MPI_Group *group, const char *fn);

/* Intercomm_create's body (leaders on world ranks over context pctx); 0 or -errno.
 * Used by api/dynproc.c (accept/connect/join). */
int xm_intercomm_build(struct xm_comm *l, int local_leader, int peer, int tag,
                       uint32_t pctx, int lrc, MPI_Comm *newintercomm);
/* The same with the remote group's process ids known at every process (rn of them in
 * rids, in remote rank order: connections between jobs, where each process has its
 * own ids for the other job's processes); only sizes and context masks cross. */
int xm_intercomm_build_ids(struct xm_comm *l, int local_leader, int peer, int tag,
                           uint32_t pctx, int lrc, int rn, const int *rids,
                           MPI_Comm *newintercomm);

#endif
