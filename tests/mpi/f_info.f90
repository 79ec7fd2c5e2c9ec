! f_info.f90 - issue 22: info objects and generalized requests from Fortran.
! USE mpi: keys and values lose leading and trailing blanks, blanks inside stay (a key
! with blanks is found by MPI_INFO_GET_NTHKEY / MPI_INFO_GET); MPI_INFO_GET_STRING's
! buflen (characters, no C nul: 0 leaves the value alone, the length comes back);
! MPI_INFO_CREATE_ENV; MPI_GREQUEST_START with Fortran callbacks that see EXTRA_STATE,
! the status and COMPLETE by reference (mpif.h-style EXTERNALs and, in f08_greq below,
! mpi_f08's TYPE(MPI_Status)).  Rank 0 prints "No Errors".
subroutine gq_query(extra, status, ierr)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  status(MPI_SOURCE) = 3
  status(MPI_TAG) = int(extra)
  call mpi_status_set_elements(status, MPI_BYTE, 5, ierr)
  call mpi_status_set_cancelled(status, .false., ierr)
  ierr = MPI_SUCCESS
end subroutine

subroutine gq_free(extra, ierr)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  extra = extra + 100          ! the caller's variable itself
  ierr = MPI_SUCCESS
end subroutine

subroutine gq_cancel(extra, complete, ierr)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  if (.not. complete) extra = extra + 1000
  ierr = MPI_SUCCESS
end subroutine

subroutine f08_query(extra, status, ierr)
  use mpi_f08
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  type(MPI_Status) :: status
  integer :: ierr
  status%MPI_SOURCE = 2
  status%MPI_TAG = int(extra)
  ierr = MPI_SUCCESS
end subroutine

subroutine f08_free(extra, ierr)
  use mpi_f08
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  extra = -extra
  ierr = MPI_SUCCESS
end subroutine

subroutine f08_cancel(extra, complete, ierr)
  use mpi_f08
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  ierr = MPI_SUCCESS
end subroutine

subroutine f08_greq(errs)
  use mpi_f08
  implicit none
  integer :: errs
  procedure(MPI_Grequest_query_function) :: f08_query
  procedure(MPI_Grequest_free_function) :: f08_free
  procedure(MPI_Grequest_cancel_function) :: f08_cancel
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag
  extra = 21
  call MPI_Grequest_start(f08_query, f08_free, f08_cancel, extra, req)
  call MPI_Test(req, flag, st)
  if (flag) errs = errs + 1
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, st)
  if (st%MPI_SOURCE /= 2 .or. st%MPI_TAG /= 21) errs = errs + 1
  if (extra /= -21) errs = errs + 1
  if (req /= MPI_REQUEST_NULL) errs = errs + 1
end subroutine

program f_info
  use mpi
  implicit none
  external gq_query, gq_free, gq_cancel
  integer :: info, info2, ierr, rank, errs, allerrs, n, i, vlen, req, cnt
  integer :: st(MPI_STATUS_SIZE)
  logical :: flag
  character(len=MPI_MAX_INFO_KEY) :: key
  character(len=MPI_MAX_INFO_VAL) :: val
  character(len=8) :: short
  integer(kind=MPI_ADDRESS_KIND) :: extra
  errs = 0

  ! MPI-4.0: MPI_INFO_CREATE_ENV works before MPI_INIT
  call mpi_info_create_env(info2, ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)

  ! ---- blanks in keys and values
  call mpi_info_create(info, ierr)
  call mpi_info_set(info, 'A Key With Blanks', 'v 1', ierr)
  call mpi_info_set(info, '  lead', '  padded value  ', ierr)
  call mpi_info_get_nkeys(info, n, ierr)
  if (n /= 2) errs = errs + 1
  call mpi_info_get_nthkey(info, 0, key, ierr)
  if (key /= 'A Key With Blanks') errs = errs + 1
  call mpi_info_get_nthkey(info, 1, key, ierr)
  if (key /= 'lead') then
    errs = errs + 1
    print *, 'nthkey 1 is "', trim(key), '"'
  end if
  call mpi_info_get(info, key, MPI_MAX_INFO_VAL, val, flag, ierr)
  if (.not. flag .or. val /= 'padded value') then
    errs = errs + 1
    print *, 'value is "', trim(val), '"'
  end if
  call mpi_info_get_valuelen(info, ' lead ', vlen, flag, ierr)
  if (.not. flag .or. vlen /= 12) errs = errs + 1
  call mpi_info_get(info, 'A Key With Blanks', MPI_MAX_INFO_VAL, val, flag, ierr)
  if (.not. flag .or. val /= 'v 1') errs = errs + 1
  val = 'untouched'
  call mpi_info_get(info, 'A Key', MPI_MAX_INFO_VAL, val, flag, ierr)
  if (flag .or. val /= 'untouched') errs = errs + 1
  call mpi_info_delete(info, ' A Key With Blanks', ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1

  ! ---- MPI_INFO_GET_STRING: buflen without the C nul
  vlen = 0
  val = 'canary'
  call mpi_info_get_string(info, 'lead', vlen, val, flag, ierr)
  if (.not. flag .or. vlen /= 12 .or. val /= 'canary') then
    errs = errs + 1
    print *, 'get_string buflen 0: ', vlen, trim(val)
  end if
  vlen = 3
  call mpi_info_get_string(info, 'lead', vlen, val, flag, ierr)
  if (.not. flag .or. vlen /= 12 .or. val /= 'pad') then
    errs = errs + 1
    print *, 'get_string buflen 3: ', vlen, '"', trim(val), '"'
  end if
  vlen = MPI_MAX_INFO_VAL
  call mpi_info_get_string(info, 'lead', vlen, val, flag, ierr)
  if (.not. flag .or. vlen /= 12 .or. val /= 'padded value') errs = errs + 1
  vlen = 100          ! larger than the variable: the variable's length bounds it
  call mpi_info_get_string(info, 'lead', vlen, short, flag, ierr)
  if (.not. flag .or. vlen /= 12 .or. short /= 'padded v') errs = errs + 1
  vlen = 5
  val = 'canary'
  call mpi_info_get_string(info, 'absent', vlen, val, flag, ierr)
  if (flag .or. vlen /= 5 .or. val /= 'canary') errs = errs + 1
  call mpi_info_free(info, ierr)

  ! ---- MPI_INFO_CREATE_ENV: the same before and after MPI_INIT
  call mpi_info_create_env(info, ierr)
  vlen = MPI_MAX_INFO_VAL
  call mpi_info_get_string(info, 'command', vlen, val, flag, ierr)
  cnt = len_trim(val)
  if (.not. flag .or. cnt < 6) then
    errs = errs + 1
  else if (val(cnt-5:cnt) /= 'f_info') then
    errs = errs + 1
    print *, 'command is ', trim(val)
  end if
  call mpi_info_get_string(info, 'maxprocs', vlen, val, flag, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, n, ierr)
  read (val, *) i
  if (.not. flag .or. i /= n) errs = errs + 1
  call mpi_info_get_nkeys(info, n, ierr)
  call mpi_info_get_nkeys(info2, i, ierr)
  if (n /= i .or. n < 4) errs = errs + 1
  call mpi_info_free(info, ierr)
  call mpi_info_free(info2, ierr)

  ! ---- generalized requests with Fortran callbacks
  extra = 7
  call mpi_grequest_start(gq_query, gq_free, gq_cancel, extra, req, ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  call mpi_test(req, flag, st, ierr)
  if (flag) errs = errs + 1
  call mpi_grequest_complete(req, ierr)
  call mpi_wait(req, st, ierr)
  call mpi_get_count(st, MPI_BYTE, cnt, ierr)
  if (st(MPI_SOURCE) /= 3 .or. st(MPI_TAG) /= 7 .or. cnt /= 5) then
    errs = errs + 1
    print *, 'greq status ', st(MPI_SOURCE), st(MPI_TAG), cnt
  end if
  if (extra /= 107 .or. req /= MPI_REQUEST_NULL) then
    errs = errs + 1
    print *, 'greq extra_state ', extra
  end if
  ! cancel before completion: the cancel procedure sees COMPLETE = .FALSE.
  extra = 1
  call mpi_grequest_start(gq_query, gq_free, gq_cancel, extra, req, ierr)
  call mpi_cancel(req, ierr)
  call mpi_grequest_complete(req, ierr)
  call mpi_wait(req, MPI_STATUS_IGNORE, ierr)
  if (extra /= 1101) then
    errs = errs + 1
    print *, 'greq cancel extra_state ', extra
  end if
  call f08_greq(errs)

  call mpi_allreduce(errs, allerrs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allerrs == 0) then
      write (*, '(a)') 'No Errors'
    else
      print *, 'Found ', allerrs, ' errors'
    end if
  end if
  call mpi_finalize(ierr)
end program
