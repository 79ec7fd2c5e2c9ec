! f_interop.f90 - Fortran calling C with MPI objects (f_interop_c.c): a TYPE(MPI_Comm)'s
!   MPI_VAL and a TYPE(MPI_Status) reach C as MPI_Fint, MPI_STATUS_IGNORE is C's
!   MPI_F_STATUS_IGNORE, and MPI_Status_f2c/c2f keep the fields.
program f_interop
  use mpi_f08
  implicit none
  interface
    subroutine c_side(comm, status, res)
      import :: MPI_Status
      integer :: comm, res
      type(MPI_Status) :: status
    end subroutine
  end interface
  type(MPI_Status) :: st
  integer :: rank, nprocs, r, errs, v

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, nprocs), 40 + rank, v, 1, &
                    MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
  call c_side(MPI_COMM_WORLD%MPI_VAL, st, r)
  if (r /= 1040 + v) errs = errs + 1
  if (st%MPI_TAG /= 1040 + v .or. st%MPI_SOURCE /= v) errs = errs + 1
  call c_side(MPI_COMM_WORLD%MPI_VAL, MPI_STATUS_IGNORE, r)
  if (r /= -1) errs = errs + 1
  if (errs /= 0) print '(a,i0,a,i0)', 'rank ', rank, ': FAIL: r=', r
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a)', 'No Errors'
  call MPI_Finalize()
end program
