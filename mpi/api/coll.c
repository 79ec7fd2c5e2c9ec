/*
 * coll.c - MPI collective entry points: checks, then mpi/coll/ algorithms.
 * Contract: only validation and error mapping here (collectives area owns the rest).
 */
#include "../coll/coll.h"
#include "../dt/dtype.h"

XM_WEAK(MPI_Barrier)
XM_WEAK(MPI_Bcast)
XM_WEAK(MPI_Reduce)
XM_WEAK(MPI_Allreduce)

#define GET_COMM(c, comm, fn)                  \
    struct xm_comm *c = xm_comm_get(comm);    \
    if (!c)                                    \
        return xm_err(NULL, MPI_ERR_COMM, fn)

static int check(struct xm_comm *c, int count, MPI_Datatype dt, const char *fn)
{
    if (count < 0)
        return xm_err(c, MPI_ERR_COUNT, fn);
    if (!xm_dt_get(dt))
        return xm_err(c, MPI_ERR_TYPE, fn);
    return MPI_SUCCESS;
}

int PMPI_Barrier(MPI_Comm comm)
{
    GET_COMM(c, comm, "MPI_Barrier");
    int rc = xm_coll_barrier(c);
    return rc < 0 ? xm_err(c, xm_errno_to_class(rc), "MPI_Barrier") : MPI_SUCCESS;
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    GET_COMM(c, comm, "MPI_Bcast");
    int rc = check(c, count, dt, "MPI_Bcast");
    if (rc)
        return rc;
    if (root < 0 || root >= c->size)
        return xm_err(c, MPI_ERR_ROOT, "MPI_Bcast");
    rc = xm_coll_bcast(buf, count, dt, root, c);
    return rc < 0 ? xm_err(c, xm_errno_to_class(rc), "MPI_Bcast") : MPI_SUCCESS;
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                int root, MPI_Comm comm)
{
    GET_COMM(c, comm, "MPI_Reduce");
    int rc = check(c, count, dt, "MPI_Reduce");
    if (rc)
        return rc;
    if (root < 0 || root >= c->size)
        return xm_err(c, MPI_ERR_ROOT, "MPI_Reduce");
    if (!xm_op_valid(op))
        return xm_err(c, MPI_ERR_OP, "MPI_Reduce");
    rc = xm_coll_reduce(sbuf, rbuf, count, dt, op, root, c);
    return rc < 0 ? xm_err(c, rc == -22 ? MPI_ERR_OP : xm_errno_to_class(rc), "MPI_Reduce")
                  : MPI_SUCCESS;
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm)
{
    GET_COMM(c, comm, "MPI_Allreduce");
    int rc = check(c, count, dt, "MPI_Allreduce");
    if (rc)
        return rc;
    if (!xm_op_valid(op))
        return xm_err(c, MPI_ERR_OP, "MPI_Allreduce");
    rc = xm_coll_allreduce(sbuf, rbuf, count, dt, op, c);
    return rc < 0 ? xm_err(c, rc == -22 ? MPI_ERR_OP : xm_errno_to_class(rc),
                           "MPI_Allreduce")
                  : MPI_SUCCESS;
}
