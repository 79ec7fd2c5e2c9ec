/*
 * f_interop_c.c - the C half of f_interop.f90: C code called from Fortran with Fortran
 *   handles and statuses, as mixed-language applications do (MPI_F_STATUS_IGNORE,
 *   MPI_Status_f2c/c2f, MPI_Comm_f2c, MPI_F_SOURCE/MPI_F_TAG).
 */
#include <mpi.h>

void c_side_(MPI_Fint *fcomm, MPI_Fint *fstatus, MPI_Fint *res);

/* res: -1 when fstatus is MPI_STATUS_IGNORE; else the tag the status carries (read both
 * through MPI_Status_f2c and by MPI_F_TAG), and 0 if anything disagreed.  Also sends the
 * sender's rank back to it through the C handle of the Fortran communicator, with the
 * status turned back into a Fortran status by MPI_Status_c2f. */
void c_side_(MPI_Fint *fcomm, MPI_Fint *fstatus, MPI_Fint *res)
{
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    MPI_Status s;
    if (fstatus == MPI_F_STATUS_IGNORE) {
        *res = -1;
        return;
    }
    if (MPI_Status_f2c(fstatus, &s) != MPI_SUCCESS || s.MPI_TAG != fstatus[MPI_F_TAG] ||
        s.MPI_SOURCE != fstatus[MPI_F_SOURCE]) {
        *res = 0;
        return;
    }
    int size;
    MPI_Comm_size(comm, &size);
    s.MPI_TAG += 1000;
    MPI_Status_c2f(&s, fstatus);
    *res = fstatus[MPI_F_TAG] == s.MPI_TAG && size > 0 ? s.MPI_TAG : 0;
}
