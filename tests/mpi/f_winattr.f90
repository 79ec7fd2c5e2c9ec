! f_winattr.f90 - window attributes from Fortran (USE mpi and mpif.h-style callbacks):
! MPI_WIN_CREATE_KEYVAL with a Fortran delete procedure that sees the value and
! extra_state by reference, MPI_WIN_SET_ATTR/GET_ATTR, the delete callback run once by
! MPI_WIN_FREE, MPI_WIN_NULL_COPY_FN.  Rank 0 prints "No Errors".
subroutine windel(win, keyval, val, extra, ierr)
  use mpi
  implicit none
  integer :: win, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  integer :: ndel, nbad
  common /windelcount/ ndel, nbad
  if (val == 42 .and. extra == 7) then
    ndel = ndel + 1
  else
    nbad = nbad + 1
  end if
  ierr = MPI_SUCCESS
end subroutine

program f_winattr
  use mpi
  implicit none
  external windel
  integer :: win, kv, ierr, rank, errs, allerrs, buf(4)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, sz
  logical :: flag
  integer :: ndel, nbad
  common /windelcount/ ndel, nbad
  ndel = 0
  nbad = 0
  errs = 0
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  sz = 16
  call mpi_win_create(buf, sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  extra = 7
  call mpi_win_create_keyval(MPI_WIN_NULL_COPY_FN, windel, kv, extra, ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  val = 42
  call mpi_win_set_attr(win, kv, val, ierr)
  val = 0
  call mpi_win_get_attr(win, kv, val, flag, ierr)
  if (.not. flag .or. val /= 42) then
    print *, 'rank', rank, ': FAIL: mpi_win_get_attr gave', flag, val
    errs = errs + 1
  end if
  call mpi_win_free(win, ierr)
  call mpi_win_free_keyval(kv, ierr)
  if (ndel /= 1 .or. nbad /= 0) then
    print *, 'rank', rank, ': FAIL: delete callback ran', ndel, 'times,', nbad, 'with wrong values'
    errs = errs + 1
  end if
  call mpi_allreduce(errs, allerrs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allerrs == 0) then
      print '(a)', 'No Errors'
    else
      print *, 'Found', allerrs, 'errors'
    end if
  end if
  call mpi_finalize(ierr)
end program
