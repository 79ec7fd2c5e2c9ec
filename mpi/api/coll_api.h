/*
 * coll_api.h - shared checking front ends for the blocking (api/coll.c) and nonblocking
 *              (api/icoll.c) collective entry points.  req == NULL: blocking.
 * Every function returns an MPI error code (already passed through the handler).
 */
#ifndef XM_COLL_API_H
#define XM_COLL_API_H

#include "../core/xm.h"

int xm_capi_barrier(MPI_Comm comm, MPI_Request *req, const char *fn);
int xm_capi_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                  MPI_Request *req, const char *fn);
int xm_capi_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, MPI_Comm comm, MPI_Request *req, const char *fn);
int xm_capi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      MPI_Comm comm, MPI_Request *req, const char *fn);
int xm_capi_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                    const int *rcounts, const int *displs, int rcount, MPI_Datatype rdt,
                    int root, MPI_Comm comm, MPI_Request *req, const char *fn);
int xm_capi_scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                     MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                     MPI_Comm comm, MPI_Request *req, const char *fn);
int xm_capi_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       const int *rcounts, const int *displs, int rcount,
                       MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req, const char *fn);
int xm_capi_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                      int scount, MPI_Datatype sdt, void *rbuf, const int *rcounts,
                      const int *rdispls, int rcount, MPI_Datatype rdt, MPI_Comm comm,
                      MPI_Request *req, const char *fn);
int xm_capi_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                           MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req,
                           const char *fn);
int xm_capi_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                 int exclusive, MPI_Comm comm, MPI_Request *req, const char *fn);

/* Alltoallw and Ialltoallw (intra- and intercommunicators) */
int xm_capi_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                      const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                      const int *rdispls, const MPI_Datatype *rdts, MPI_Comm comm,
                      MPI_Request *req, const char *fn);

/* neighbor collectives (api/topo.c), also behind the persistent forms.
 * scounts == NULL: (scount, sdt) to every out-neighbour, at i*scount*extent when
 * sblocks (alltoall) else at 0 (allgather); sdispls_i: v-form displacements in extents;
 * sdispls_b/sdts: the w-form.  The receive side likewise (blocks always i*rcount). */
struct xm_nb_args {
    const void *sbuf;
    int scount;
    MPI_Datatype sdt;
    const int *scounts, *sdispls_i;
    const MPI_Aint *sdispls_b;
    const MPI_Datatype *sdts;
    int sblocks;
    void *rbuf;
    int rcount;
    MPI_Datatype rdt;
    const int *rcounts, *rdispls_i;
    const MPI_Aint *rdispls_b;
    const MPI_Datatype *rdts;
};
int xm_capi_neighbor(const struct xm_nb_args *a, MPI_Comm comm, MPI_Request *req,
                     const char *fn);

#endif
