! f_f08.f90 - Fortran 2008 bindings (USE mpi_f08): init, rank/size, a ring of sends
!   with TYPE(MPI_Status), MPI_STATUS_IGNORE, allreduce with MPI_IN_PLACE, bcast of a
!   CHARACTER string, a vector datatype, comm split, communicator names (CHARACTER in
!   and out), a user-defined reduction and an error handler in Fortran, MPI_ERRORS_RETURN
!   with ierror, handle comparison, MPI_TAG_UB, MPI_Wtime; rank 0 prints "No Errors".
module f08_userop
  use mpi_f08
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  implicit none
  integer :: eh_calls = 0, eh_code = 0
  type(MPI_Comm) :: eh_comm
contains
  ! inoutvec(i) = max(invec(i), inoutvec(i)) * 1: an elementwise max, as a user op
  subroutine mymax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = max(a, b)
  end subroutine

  ! a communicator error handler written in Fortran: records what it was called with
  subroutine myeh(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    eh_calls = eh_calls + 1
    eh_code = code
    eh_comm = comm
  end subroutine
end module

program f_f08
  use mpi_f08
  use f08_userop
  implicit none
  integer :: rank, nprocs, errs, ierr, i, n, cnt, total
  integer :: sbuf(4), rbuf(4), vec(6), got(3)
  double precision :: d
  character(len=32) :: msg
  character(len=MPI_MAX_OBJECT_NAME) :: cname
  type(MPI_Status) :: st
  type(MPI_Datatype) :: vtype
  type(MPI_Comm) :: half, dup
  type(MPI_Op) :: op
  type(MPI_Errhandler) :: eh
  integer(kind=MPI_ADDRESS_KIND) :: aval
  logical :: flag
  double precision :: t0
  integer :: hrank, hsize, rlen

  errs = 0
  call MPI_Init(ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Init ierror')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  ! ring: send 4 ints to the right, receive from any source, check the status
  sbuf = [(rank * 10 + i, i = 1, 4)]
  rbuf = -1
  if (mod(rank, 2) == 0) then
    call MPI_Send(sbuf, 4, MPI_INTEGER, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD)
    call MPI_Recv(rbuf, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
  else
    call MPI_Recv(rbuf, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    call MPI_Send(sbuf, 4, MPI_INTEGER, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD)
  end if
  i = mod(rank - 1 + nprocs, nprocs)
  if (st%MPI_SOURCE /= i) call fail('status%MPI_SOURCE')
  if (st%MPI_TAG /= 7) call fail('status%MPI_TAG')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt /= 4) call fail('MPI_Get_count')
  if (any(rbuf /= [(i * 10 + n, n = 1, 4)])) call fail('ring data')

  ! sendrecv with MPI_STATUS_IGNORE, a scalar buffer
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, nprocs), 3, n, 1, MPI_INTEGER, &
                    i, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (n /= i) call fail('sendrecv scalar')

  ! allreduce in place, integer and double precision
  total = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (total /= nprocs * (nprocs + 1) / 2) call fail('allreduce in place')
  d = 0.5d0
  call MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. abs(d - 0.5d0 * nprocs) > 1d-12) call fail('allreduce double')

  ! bcast of a CHARACTER string
  msg = ' '
  if (rank == 0) msg = 'hello from fortran 2008'
  call MPI_Bcast(msg, len(msg), MPI_CHARACTER, 0, MPI_COMM_WORLD)
  if (msg /= 'hello from fortran 2008') call fail('bcast character')

  ! derived datatype: every other integer
  call MPI_Type_vector(3, 1, 2, MPI_INTEGER, vtype)
  call MPI_Type_commit(vtype)
  vec = [(i, i = 1, 6)]
  if (rank == 0) then
    do i = 1, nprocs - 1
      call MPI_Send(vec, 1, vtype, i, 9, MPI_COMM_WORLD)
    end do
  else
    call MPI_Recv(got, 3, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, st)
    if (any(got /= [1, 3, 5])) call fail('vector datatype')
  end if
  call MPI_Type_free(vtype)
  if (vtype /= MPI_DATATYPE_NULL) call fail('type_free sets MPI_DATATYPE_NULL')

  ! comm split by parity
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_size(half, hsize)
  call MPI_Comm_rank(half, hrank)
  if (hsize /= (nprocs + 1 - mod(rank, 2)) / 2) call fail('split size')
  if (hrank /= rank / 2) call fail('split rank')
  n = 1
  call MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_INTEGER, MPI_SUM, half)
  if (n /= hsize) call fail('allreduce on split comm')
  call MPI_Comm_free(half)
  if (half /= MPI_COMM_NULL) call fail('comm_free sets MPI_COMM_NULL')

  ! CHARACTER in (trailing blanks are not part of the name) and out (blank padded)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_name(dup, 'loom dup   ')
  cname = 'garbage'
  call MPI_Comm_get_name(dup, cname, rlen)
  if (cname /= 'loom dup' .or. rlen /= 8) call fail('comm name '//trim(cname))
  call MPI_Comm_get_name(MPI_COMM_WORLD, cname, rlen)
  if (cname /= 'MPI_COMM_WORLD') call fail('MPI_COMM_WORLD name '//trim(cname))

  ! a user-defined operation written in Fortran
  call MPI_Op_create(mymax, .true., op)
  n = mod(rank * 7, nprocs)
  call MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_INTEGER, op, dup)
  if (n /= nprocs - 1) call fail('user op')
  call MPI_Op_free(op)

  ! errors return an error code through ierror
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(sbuf, 1, MPI_INTEGER, nprocs + 5, 0, dup, ierr)
  if (ierr == MPI_SUCCESS) call fail('send to a bad rank succeeded')

  ! an error handler written in Fortran, called with the communicator and the code
  call MPI_Comm_create_errhandler(myeh, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER)
  if (eh_calls /= 1 .or. eh_code /= MPI_ERR_OTHER .or. eh_comm /= dup) &
    call fail('Fortran error handler')
  call MPI_Errhandler_free(eh)
  call MPI_Comm_free(dup)

  ! a predefined attribute comes back as its value; MPI_Wtime is a function
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag)
  if (.not. flag .or. aval < 32767) call fail('MPI_TAG_UB attribute')
  t0 = MPI_Wtime()
  if (MPI_Wtime() < t0 .or. MPI_Wtick() <= 0d0) call fail('MPI_Wtime')

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (errs == 0) then
      print '(a)', 'No Errors'
    else
      print '(a,i0,a)', 'Found ', errs, ' errors'
    end if
  end if
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print '(a,i0,a,a)', 'rank ', rank, ': FAIL: ', what
  end subroutine
end program
