/*
 * fint.c - the C side of Fortran interoperability: the status conversions
 *   (MPI_Status_c2f/f2c), the handle conversions comm.c does not have (info,
 *   errhandler, message: the identity, handles are ints), and the storage of the
 *   Fortran sentinels.
 * Contract: MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, MPI_ERRCODES_IGNORE,
 *   MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are, in Fortran, common blocks
 *   (/mpipriv_bottom/ ...) declared by mpif.h, module mpi and module mpi_f08 alike; they
 *   are defined here, exported by libmpi.map (mpipriv_*), so that one address stands
 *   for each, which libmpifort (bindings/gen_fortran.py) recognises and which C code
 *   sees as MPI_F_STATUS(ES)_IGNORE.  Their contents are never read.
 */
#include <string.h>

#include "../core/xm.h"

#define XM_FCOMMON(name, n) \
    MPI_Fint name[n] __attribute__((aligned(16), visibility("default")))
XM_FCOMMON(mpipriv_bottom_, 1);
XM_FCOMMON(mpipriv_in_place_, 1);
XM_FCOMMON(mpipriv_status_ignore_, sizeof(MPI_Status) / sizeof(MPI_Fint));
XM_FCOMMON(mpipriv_statuses_ignore_, sizeof(MPI_Status) / sizeof(MPI_Fint));
XM_FCOMMON(mpipriv_errcodes_ignore_, 1);
XM_FCOMMON(mpipriv_unweighted_, 1);
XM_FCOMMON(mpipriv_weights_empty_, 1);

XM_WEAK(MPI_Status_c2f)
XM_WEAK(MPI_Status_f2c)
XM_WEAK(MPI_Info_c2f)
XM_WEAK(MPI_Info_f2c)
XM_WEAK(MPI_Errhandler_c2f)
XM_WEAK(MPI_Errhandler_f2c)
XM_WEAK(MPI_Message_c2f)
XM_WEAK(MPI_Message_f2c)

/* a Fortran status is the C struct's ints in order (MPI_F_SOURCE... index them) */
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!c_status || c_status == MPI_STATUS_IGNORE || !f_status)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Status_c2f");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status || f_status == MPI_F_STATUS_IGNORE || f_status == MPI_F_STATUSES_IGNORE ||
        !c_status || c_status == MPI_STATUS_IGNORE)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Status_f2c");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}

MPI_Fint PMPI_Info_c2f(MPI_Info h) { return h; }
MPI_Info PMPI_Info_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler h) { return h; }
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Message_c2f(MPI_Message h) { return h; }
MPI_Message PMPI_Message_f2c(MPI_Fint h) { return h; }
