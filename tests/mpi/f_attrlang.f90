! f_attrlang.f90 - attributes set in one language and read in the other (MPI-3.1
! 17.2.7), with the C half in f_attrlang_c.c: communicator, datatype and window
! attributes set by MPI_xxx_SET_ATTR (address-sized) and MPI_ATTR_PUT (INTEGER) read
! from C through a pointer to the value; C-set pointers read from Fortran as the address
! (and truncated to INTEGER by MPI_ATTR_GET); a C keyval's copy/delete callbacks see the
! Fortran-set value through a pointer, a Fortran keyval's MPI_COMM_DUP_FN copies a C-set
! pointer; predefined attributes from both languages.  Rank 0 prints "No Errors".
program f_attrlang
  use mpi
  implicit none
  integer :: ierr, rank, errs, allerrs, kv, kv2, tkv, wkv, ckv, dup, dtype, win, buf(4)
  integer :: ival, ncopy, ndel, nbad
  integer(kind=MPI_ADDRESS_KIND) :: val, got, addr, extra, sz
  logical :: flag

  errs = 0
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  extra = 0

  ! communicator: Fortran sets (both widths), C reads
  call mpi_comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv, extra, ierr)
  val = 5555
  call mpi_comm_set_attr(MPI_COMM_WORLD, kv, val, ierr)
  call c_check(0, MPI_COMM_WORLD, kv, 0, val, errs)
  call mpi_comm_get_attr(MPI_COMM_WORLD, kv, got, flag, ierr)
  if (.not. flag .or. got /= 5555) errs = errs + 1
  call mpi_attr_get(MPI_COMM_WORLD, kv, ival, flag, ierr)
  if (.not. flag .or. ival /= 5555) errs = errs + 1
  call mpi_attr_put(MPI_COMM_WORLD, kv, -17, ierr)
  val = -17
  call c_check(0, MPI_COMM_WORLD, kv, 1, val, errs)
  call mpi_comm_get_attr(MPI_COMM_WORLD, kv, got, flag, ierr)
  if (.not. flag .or. got /= -17) errs = errs + 1
  ! C sets, Fortran reads the address (both widths)
  call c_set(0, MPI_COMM_WORLD, kv, addr)
  call mpi_comm_get_attr(MPI_COMM_WORLD, kv, got, flag, ierr)
  if (.not. flag .or. got /= addr) errs = errs + 1
  call mpi_attr_get(MPI_COMM_WORLD, kv, ival, flag, ierr)
  if (.not. flag .or. ival /= int(addr)) errs = errs + 1
  call mpi_comm_delete_attr(MPI_COMM_WORLD, kv, ierr)

  ! a Fortran keyval with MPI_COMM_DUP_FN copies a C-set pointer unchanged
  call mpi_comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv2, extra, ierr)
  call c_set(0, MPI_COMM_WORLD, kv2, addr)
  ! a C keyval with C callbacks on a Fortran-set value
  call c_keyval(ckv)
  val = 5555
  call mpi_comm_set_attr(MPI_COMM_WORLD, ckv, val, ierr)
  call mpi_comm_dup(MPI_COMM_WORLD, dup, ierr)
  call mpi_comm_get_attr(dup, kv2, got, flag, ierr)
  if (.not. flag .or. got /= addr) errs = errs + 1
  call mpi_comm_get_attr(dup, ckv, got, flag, ierr)
  if (.not. flag .or. got /= 5555) errs = errs + 1
  call c_check(0, dup, ckv, 0, val, errs)
  call mpi_comm_free(dup, ierr)
  call mpi_comm_delete_attr(MPI_COMM_WORLD, ckv, ierr)
  call mpi_comm_delete_attr(MPI_COMM_WORLD, kv2, ierr)
  call c_counts(ncopy, ndel, nbad)
  if (ncopy /= 1 .or. ndel /= 2 .or. nbad /= 0) errs = errs + 1

  ! datatype: Fortran sets, C reads; C sets, Fortran reads; MPI_TYPE_DUP_FN on a
  ! Fortran-set value
  call mpi_type_contiguous(2, MPI_INTEGER, dtype, ierr)
  call mpi_type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkv, extra, ierr)
  val = 123456
  call mpi_type_set_attr(dtype, tkv, val, ierr)
  call c_check(1, dtype, tkv, 0, val, errs)
  call mpi_type_dup(dtype, dup, ierr)
  call c_check(1, dup, tkv, 0, val, errs)
  call mpi_type_get_attr(dup, tkv, got, flag, ierr)
  if (.not. flag .or. got /= 123456) errs = errs + 1
  call mpi_type_free(dup, ierr)
  call c_set(1, dtype, tkv, addr)
  call mpi_type_get_attr(dtype, tkv, got, flag, ierr)
  if (.not. flag .or. got /= addr) errs = errs + 1
  call mpi_type_free(dtype, ierr)

  ! window: Fortran sets, C reads; C sets, Fortran reads; predefined from Fortran
  sz = 16
  call mpi_win_create(buf, sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call mpi_win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, wkv, extra, ierr)
  val = 987654321
  call mpi_win_set_attr(win, wkv, val, ierr)
  call c_check(2, win, wkv, 0, val, errs)
  call mpi_win_get_attr(win, wkv, got, flag, ierr)
  if (.not. flag .or. got /= 987654321) errs = errs + 1
  call c_set(2, win, wkv, addr)
  call mpi_win_get_attr(win, wkv, got, flag, ierr)
  if (.not. flag .or. got /= addr) errs = errs + 1
  call mpi_win_get_attr(win, MPI_WIN_SIZE, got, flag, ierr)
  if (.not. flag .or. got /= 16) errs = errs + 1
  call mpi_win_get_attr(win, MPI_WIN_DISP_UNIT, got, flag, ierr)
  if (.not. flag .or. got /= 4) errs = errs + 1
  call mpi_win_free(win, ierr)

  ! predefined: Fortran reads the value (both widths), C through a pointer to int
  call mpi_comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, got, flag, ierr)
  if (.not. flag .or. got < 32767) errs = errs + 1
  call mpi_attr_get(MPI_COMM_WORLD, MPI_TAG_UB, ival, flag, ierr)
  if (.not. flag .or. ival /= got) errs = errs + 1
  call c_check(0, MPI_COMM_WORLD, MPI_TAG_UB, 1, got, errs)
  call mpi_comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, got, flag, ierr)
  if (flag .and. got /= 0 .and. got /= 1) errs = errs + 1

  call mpi_allreduce(errs, allerrs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allerrs == 0) then
      print '(A)', 'No Errors'
    else
      print '(A,I0,A)', 'Found ', allerrs, ' errors'
    end if
  end if
  call mpi_finalize(ierr)
end program
