/*
 * comm.c - communicator queries and handle conversions (communicator area grows this:
 *          dup/split/create/free, compare, names, keyvals).
 */
#include "../dt/dtype.h"

XM_WEAK(MPI_Comm_rank)
XM_WEAK(MPI_Comm_size)
XM_WEAK(MPI_Comm_c2f)
XM_WEAK(MPI_Comm_f2c)
XM_WEAK(MPI_Type_c2f)
XM_WEAK(MPI_Type_f2c)
XM_WEAK(MPI_Request_c2f)
XM_WEAK(MPI_Request_f2c)
XM_WEAK(MPI_Op_c2f)
XM_WEAK(MPI_Op_f2c)
XM_WEAK(MPI_Group_c2f)
XM_WEAK(MPI_Group_f2c)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_size");
    *size = c->size;
    return MPI_SUCCESS;
}

MPI_Fint PMPI_Comm_c2f(MPI_Comm h) { return h; }
MPI_Comm PMPI_Comm_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Type_c2f(MPI_Datatype h) { return h; }
MPI_Datatype PMPI_Type_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Request_c2f(MPI_Request h) { return h; }
MPI_Request PMPI_Request_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Op_c2f(MPI_Op h) { return h; }
MPI_Op PMPI_Op_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Group_c2f(MPI_Group h) { return h; }
MPI_Group PMPI_Group_f2c(MPI_Fint h) { return h; }

XM_WEAK(MPI_Get_address)
XM_WEAK(MPI_Address)
XM_WEAK(MPI_Aint_add)
XM_WEAK(MPI_Aint_diff)

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

int PMPI_Address(void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return base + disp;
}

MPI_Aint PMPI_Aint_diff(MPI_Aint a, MPI_Aint b)
{
    return a - b;
}
