/*
 * icoll.c - nonblocking collective entry points (MPI_I*): the same checks and
 *           schedules as the blocking calls (api/coll.c), returned as a request that
 *           Wait/Test complete.
 */
#include "coll_api.h"

XM_WEAK(MPI_Ibarrier)
XM_WEAK(MPI_Ibcast)
XM_WEAK(MPI_Ireduce)
XM_WEAK(MPI_Iallreduce)
XM_WEAK(MPI_Igather)
XM_WEAK(MPI_Igatherv)
XM_WEAK(MPI_Iscatter)
XM_WEAK(MPI_Iscatterv)
XM_WEAK(MPI_Iallgather)
XM_WEAK(MPI_Iallgatherv)
XM_WEAK(MPI_Ialltoall)
XM_WEAK(MPI_Ialltoallv)
XM_WEAK(MPI_Ireduce_scatter)
XM_WEAK(MPI_Ireduce_scatter_block)
XM_WEAK(MPI_Iscan)
XM_WEAK(MPI_Iexscan)

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_barrier(comm, req, "MPI_Ibarrier");
}

int PMPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                MPI_Request *req)
{
    return xm_capi_bcast(buf, count, dt, root, comm, req, "MPI_Ibcast");
}

int PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_reduce(sbuf, rbuf, count, dt, op, root, comm, req, "MPI_Ireduce");
}

int PMPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_allreduce(sbuf, rbuf, count, dt, op, comm, req, "MPI_Iallreduce");
}

int PMPI_Igather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                 MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_gatherv(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, root, comm,
                           req, "MPI_Igather");
}

int PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                  const int rcounts[], const int displs[], MPI_Datatype rdt, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, root, comm,
                           req, "MPI_Igatherv");
}

int PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_scatterv(sbuf, NULL, NULL, scount, sdt, rbuf, rcount, rdt, root, comm,
                            req, "MPI_Iscatter");
}

int PMPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[],
                   MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                   MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_scatterv(sbuf, scounts, displs, 0, sdt, rbuf, rcount, rdt, root, comm,
                            req, "MPI_Iscatterv");
}

int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                    int rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_allgatherv(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, comm, req,
                              "MPI_Iallgather");
}

int PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                     const int rcounts[], const int displs[], MPI_Datatype rdt,
                     MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, comm, req,
                              "MPI_Iallgatherv");
}

int PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_alltoallv(sbuf, NULL, NULL, scount, sdt, rbuf, NULL, NULL, rcount, rdt,
                             comm, req, "MPI_Ialltoall");
}

int PMPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                    MPI_Datatype sdt, void *rbuf, const int rcounts[],
                    const int rdispls[], MPI_Datatype rdt, MPI_Comm comm,
                    MPI_Request *req)
{
    return xm_capi_alltoallv(sbuf, scounts, sdispls, 0, sdt, rbuf, rcounts, rdispls, 0,
                             rdt, comm, req, "MPI_Ialltoallv");
}

int PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_reduce_scatter(sbuf, rbuf, rcounts, 0, dt, op, comm, req,
                                  "MPI_Ireduce_scatter");
}

int PMPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_reduce_scatter(sbuf, rbuf, NULL, rcount, dt, op, comm, req,
                                  "MPI_Ireduce_scatter_block");
}

int PMPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_scan(sbuf, rbuf, count, dt, op, 0, comm, req, "MPI_Iscan");
}

int PMPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                 MPI_Comm comm, MPI_Request *req)
{
    return xm_capi_scan(sbuf, rbuf, count, dt, op, 1, comm, req, "MPI_Iexscan");
}

XM_WEAK(MPI_Ialltoallw)
int PMPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                    const MPI_Datatype sdts[], void *rbuf, const int rcounts[],
                    const int rdispls[], const MPI_Datatype rdts[], MPI_Comm comm,
                    MPI_Request *req)
{
    return xm_capi_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                             comm, req, "MPI_Ialltoallw");
}
