! f_mpi.F90 - Fortran bindings with INTEGER handles and INTEGER status arrays, the checks
!   of f_f08.f90, built twice from this one source: f_usempi (USE mpi: explicit
!   interfaces) and f_mpifh (-DLOOM_MPIFH: INCLUDE 'mpif.h', no interfaces, the compiler
!   checks nothing).
program f_mpi
#ifdef LOOM_MPIFH
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer :: rank, nprocs, errs, ierr, i, n, cnt, total
  integer :: sbuf(4), rbuf(4), vec(6), got(3)
  double precision :: d
  character(len=32) :: msg
  character(len=MPI_MAX_OBJECT_NAME) :: cname
  integer :: st(MPI_STATUS_SIZE)
  integer :: vtype, half, dup, op
  integer :: hrank, hsize, rlen
  integer(kind=MPI_ADDRESS_KIND) :: aval
  logical :: flag
  double precision :: t0
  integer :: blens(2), idisp(2), types(2), stype, ext
  external :: mymax

  errs = 0
  call MPI_INIT(ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Init ierror')
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)

  sbuf = [(rank * 10 + i, i = 1, 4)]
  rbuf = -1
  if (mod(rank, 2) == 0) then
    call MPI_SEND(sbuf, 4, MPI_INTEGER, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD, ierr)
    call MPI_RECV(rbuf, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, &
                  ierr)
  else
    call MPI_RECV(rbuf, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, &
                  ierr)
    call MPI_SEND(sbuf, 4, MPI_INTEGER, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD, ierr)
  end if
  i = mod(rank - 1 + nprocs, nprocs)
  if (st(MPI_SOURCE) /= i) call fail('status(MPI_SOURCE)')
  if (st(MPI_TAG) /= 7) call fail('status(MPI_TAG)')
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  if (cnt /= 4) call fail('MPI_Get_count')
  if (any(rbuf /= [(i * 10 + n, n = 1, 4)])) call fail('ring data')

  call MPI_SENDRECV(rank, 1, MPI_INTEGER, mod(rank + 1, nprocs), 3, n, 1, MPI_INTEGER, &
                    i, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (n /= i) call fail('sendrecv scalar')

  total = rank + 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nprocs * (nprocs + 1) / 2) call fail('allreduce in place')
  d = 0.5d0
  call MPI_ALLREDUCE(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. abs(d - 0.5d0 * nprocs) > 1d-12) call fail('allreduce double')

  msg = ' '
  if (rank == 0) msg = 'hello from fortran'
  call MPI_BCAST(msg, len(msg), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  if (msg /= 'hello from fortran') call fail('bcast character')

  call MPI_TYPE_VECTOR(3, 1, 2, MPI_INTEGER, vtype, ierr)
  call MPI_TYPE_COMMIT(vtype, ierr)
  vec = [(i, i = 1, 6)]
  if (rank == 0) then
    do i = 1, nprocs - 1
      call MPI_SEND(vec, 1, vtype, i, 9, MPI_COMM_WORLD, ierr)
    end do
  else
    call MPI_RECV(got, 3, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, st, ierr)
    if (any(got /= [1, 3, 5])) call fail('vector datatype')
  end if
  call MPI_TYPE_FREE(vtype, ierr)
  if (vtype /= MPI_DATATYPE_NULL) call fail('type_free sets MPI_DATATYPE_NULL')

  ! MPI-1 style (removed in MPI-3, still in old codes): INTEGER displacements and extent
  blens = [1, 1]
  idisp = [0, 8]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_TYPE_STRUCT(2, blens, idisp, types, stype, ierr)
  call MPI_TYPE_EXTENT(stype, ext, ierr)
  if (ierr /= MPI_SUCCESS .or. ext /= 16) call fail('MPI_TYPE_STRUCT/MPI_TYPE_EXTENT')
  call MPI_TYPE_FREE(stype, ierr)

  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call MPI_COMM_SIZE(half, hsize, ierr)
  call MPI_COMM_RANK(half, hrank, ierr)
  if (hsize /= (nprocs + 1 - mod(rank, 2)) / 2) call fail('split size')
  if (hrank /= rank / 2) call fail('split rank')
  n = 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, n, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  if (n /= hsize) call fail('allreduce on split comm')
  call MPI_COMM_FREE(half, ierr)
  if (half /= MPI_COMM_NULL) call fail('comm_free sets MPI_COMM_NULL')

  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call MPI_COMM_SET_NAME(dup, 'loom dup   ', ierr)
  cname = 'garbage'
  call MPI_COMM_GET_NAME(dup, cname, rlen, ierr)
  if (cname /= 'loom dup' .or. rlen /= 8) call fail('comm name '//trim(cname))

  call MPI_OP_CREATE(mymax, .true., op, ierr)
  n = mod(rank * 7, nprocs)
  call MPI_ALLREDUCE(MPI_IN_PLACE, n, 1, MPI_INTEGER, op, dup, ierr)
  if (n /= nprocs - 1) call fail('user op')
  call MPI_OP_FREE(op, ierr)

  call MPI_COMM_SET_ERRHANDLER(dup, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(sbuf, 1, MPI_INTEGER, nprocs + 5, 0, dup, ierr)
  if (ierr == MPI_SUCCESS) call fail('send to a bad rank succeeded')
  call MPI_COMM_FREE(dup, ierr)

  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  if (.not. flag .or. aval < 32767) call fail('MPI_TAG_UB attribute')
  t0 = MPI_WTIME()
  if (MPI_WTIME() < t0 .or. MPI_WTICK() <= 0d0) call fail('MPI_WTIME')

  call MPI_ALLREDUCE(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print '(a)', 'No Errors'
    else
      print '(a,i0,a)', 'Found ', errs, ' errors'
    end if
  end if
  call MPI_FINALIZE(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print '(a,i0,a,a)', 'rank ', rank, ': FAIL: ', what
  end subroutine
end program

! an elementwise max, as a user-defined operation (Fortran 77 style callback)
subroutine mymax(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  integer :: invec(len), inoutvec(len)
  integer :: i
  do i = 1, len
    inoutvec(i) = max(invec(i), inoutvec(i))
  end do
end subroutine
