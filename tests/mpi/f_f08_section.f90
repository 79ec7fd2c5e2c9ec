! f_f08_section.f90 - noncontiguous array sections through mpi_f08
!   (MPI_SUBARRAYS_SUPPORTED = .TRUE.): 2-D column and row slices, a strided 1-D section,
!   a reversed section, a section of a section (through a pointer), REAL(8) and INTEGER
!   elements, partial counts (the first elements of a section), with blocking and
!   nonblocking sends/receives (the request completes after the call returned), a
!   persistent receive, MPI_BCAST of a section, MPI_SENDRECV between sections; a
!   reduction with a noncontiguous buffer is refused with MPI_ERR_BUFFER.  Every element
!   is checked, also those outside the section (untouched).  The PMPI_ names of mpi_f08
!   are called too, and the MPI-4.0 large-count overloads (INTEGER(KIND=MPI_COUNT_KIND)
!   counts).  Rank 0 prints "No Errors".  Runs on 2 or more processes.
program f_f08_section
  use mpi_f08
  implicit none
  integer :: rank, nproc, errs, i, j, ierr, peer
  integer :: a(9, 9), b(9, 9), ref(9, 9)
  integer :: v(20), w(20)
  real(kind=8) :: r(6, 5), rref(6, 5)
  integer, asynchronous :: s(8, 8)
  integer, pointer :: p(:, :)
  integer, target :: big(10, 10)
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: st
  integer :: cnt, sum1(3)
  integer(kind=MPI_COUNT_KIND) :: lcnt

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  if (.not. MPI_SUBARRAYS_SUPPORTED) call fail('MPI_SUBARRAYS_SUPPORTED is .FALSE.')
  if (.not. MPI_ASYNC_PROTECTS_NONBLOCKING) call fail('MPI_ASYNC_PROTECTS_NONBLOCKING')
  peer = 1 - rank

  if (rank < 2) then
    ! 1. a row of a 2-D array (stride 9 elements), blocking
    call fill(a, rank)
    ref = a
    if (rank == 0) then
      call MPI_Send(a(6, :), 9, MPI_INTEGER, 1, 1, MPI_COMM_WORLD)
    else
      call MPI_Recv(a(6, :), 9, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, st)
      call MPI_Get_count(st, MPI_INTEGER, cnt)
      if (cnt /= 9) call fail('row: count')
      do j = 1, 9
        ref(6, j) = val(0, 6, j)
      end do
    end if
    call check2(a, ref, 'row')

    ! 2. every other column, rows 1:7:3 (2-D strided), blocking, PMPI_ names
    call fill(a, rank)
    ref = a
    if (rank == 0) then
      call PMPI_Send(a(1:7:3, 2:6:2), 9, MPI_INTEGER, 1, 2, MPI_COMM_WORLD, ierr)
      if (ierr /= MPI_SUCCESS) call fail('PMPI_Send')
    else
      call PMPI_Recv(a(1:7:3, 2:6:2), 9, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, st, ierr)
      do j = 2, 6, 2
        do i = 1, 7, 3
          ref(i, j) = val(0, i, j)
        end do
      end do
    end if
    call check2(a, ref, '2-D strided')

    ! 3. strided 1-D into reversed, only the first 4 of 5 elements (partial count)
    v = [(100 * rank + i, i = 1, 20)]
    w = v
    if (rank == 0) then
      call MPI_Send(v(2:20:4), 4, MPI_INTEGER, 1, 3, MPI_COMM_WORLD)
    else
      call MPI_Recv(v(19:1:-3), 4, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      w(19) = 2; w(16) = 6; w(13) = 10; w(10) = 14
    end if
    if (any(v /= w)) call fail('1-D strided/reversed/partial')

    ! 4. a section of a section (pointer to a strided section, then strided again),
    !    REAL(8) columns, nonblocking both ways; the buffers are checked after MPI_WAITALL
    big = -1
    p => big(2:10:2, :)
    do j = 1, 10
      do i = 1, 10
        big(i, j) = 1000 * rank + 10 * i + j
      end do
    end do
    r = -1d0
    if (rank == 0) r = reshape([(real(i, 8) / 4, i = 1, 30)], [6, 5])
    rref = r
    if (rank == 1) rref(2:6:2, 1:5:2) = r0sect()
    if (rank == 0) then
      call MPI_Isend(p(1:5:2, 3:9:3), 9, MPI_INTEGER, 1, 4, MPI_COMM_WORLD, req(1))
      call MPI_Isend(r(2:6:2, 1:5:2), 9, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD, req(2))
    else
      call MPI_Irecv(p(1:5:2, 3:9:3), 9, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, req(1))
      call MPI_Irecv(r(2:6:2, 1:5:2), 9, MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD, req(2))
    end if
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
    do j = 1, 10
      do i = 1, 10
        if (rank == 1 .and. any(i == [2, 6, 10]) .and. any(j == [3, 6, 9])) then
          if (big(i, j) /= 10 * i + j) call fail('section of a section')
        else if (big(i, j) /= 1000 * rank + 10 * i + j) then
          call fail('section of a section: outside')
        end if
      end do
    end do
    if (any(r /= rref)) call fail('REAL(8) nonblocking')

    ! 5. nonblocking column slices, the sender's data changed only after the wait;
    !    a persistent receive of a strided row
    s = reshape([(rank * 100 + i, i = 1, 64)], [8, 8])
    if (rank == 0) then
      call MPI_Isend(s(:, 2:6:2), 24, MPI_INTEGER, 1, 6, MPI_COMM_WORLD, req(1))
      call MPI_Wait(req(1), st)
      call MPI_Send(s(3, 1:8:2), 4, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
    else
      call MPI_Irecv(s(:, 2:6:2), 24, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, req(1))
      call MPI_Wait(req(1), st)
      call MPI_Recv_init(s(5, 1:7:2), 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, req(2))
      call MPI_Start(req(2))
      call MPI_Wait(req(2), st)
      call MPI_Request_free(req(2))
      do j = 1, 8
        do i = 1, 8
          if (any(j == [2, 4, 6])) then
            if (s(i, j) /= (j - 1) * 8 + i) call fail('Irecv column slice')
          else if (i == 5 .and. any(j == [1, 3, 5, 7])) then
            if (s(i, j) /= (j - 1) * 8 + 3) call fail('Recv_init strided row')
          else if (s(i, j) /= 100 + (j - 1) * 8 + i) then
            call fail('Irecv: outside the section')
          end if
        end do
      end do
    end if

    ! 6. MPI_SENDRECV between sections: a row goes, a column (of another array) comes
    call fill(a, rank)
    b = -7
    ref = b
    do i = 1, 9
      ref(i, 4) = val(peer, 7, i)
    end do
    call MPI_Sendrecv(a(7, :), 9, MPI_INTEGER, peer, 8, b(:, 4), 9, MPI_INTEGER, peer, 8, &
                      MPI_COMM_WORLD, st)
    call check2(b, ref, 'sendrecv')
  end if

  ! 7. a collective: MPI_BCAST of a column-strided section from rank 0 to everyone
  call fill(b, rank)
  ref = b
  do j = 1, 9, 4
    do i = 2, 8, 3
      ref(i, j) = val(0, i, j)
    end do
  end do
  call MPI_Bcast(b(2:8:3, 1:9:4), 9, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check2(b, ref, 'bcast')

  ! 7b. two nonblocking broadcasts of sections: each call frees its temporary type at
  !     once (the schedule holds it), the second may take the first one's handle
  call fill(b, rank)
  ref = b
  do j = 1, 9, 2
    do i = 1, 9, 4
      ref(i, j) = val(0, i, j)
    end do
  end do
  ref(3, 2:9:3) = [(val(0, 3, j), j = 2, 9, 3)]
  call MPI_Ibcast(b(1:9:4, 1:9:2), 15, MPI_INTEGER, 0, MPI_COMM_WORLD, req(1))
  call MPI_Ibcast(b(3, 2:9:3), 3, MPI_INTEGER, 0, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  call check2(b, ref, 'ibcast')

  ! 8. MPI-4.0 large-count overloads: INTEGER(KIND=MPI_COUNT_KIND) counts, contiguous
  !    and through a section; MPI_GET_COUNT into a large count; PMPI_WTIME
  if (rank < 2) then
    v = [(100 * rank + i, i = 1, 20)]
    w = v
    lcnt = 5
    if (rank == 0) then
      call MPI_Send(v, lcnt, MPI_INTEGER, 1, 10, MPI_COMM_WORLD)
      call MPI_Send(v(1:20:4), lcnt, MPI_INTEGER, 1, 11, MPI_COMM_WORLD)
    else
      call MPI_Recv(v(11:20), lcnt, MPI_INTEGER, 0, 10, MPI_COMM_WORLD, st)
      call MPI_Get_count(st, MPI_INTEGER, lcnt)
      if (lcnt /= 5) call fail('large count: MPI_GET_COUNT')
      w(11:15) = [1, 2, 3, 4, 5]
      call MPI_Recv(v(2:10:2), lcnt, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, st)
      w(2:10:2) = [1, 5, 9, 13, 17]
    end if
    if (any(v /= w)) call fail('large count send/recv')
  end if
  if (PMPI_Wtime() <= 0d0 .or. PMPI_Wtick() <= 0d0) call fail('PMPI_Wtime/PMPI_Wtick')

  ! 9. a reduction with a noncontiguous buffer: MPI_ERR_BUFFER, not wrong data
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  sum1 = 0
  call MPI_Allreduce(v(1:5:2), sum1, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_ERR_BUFFER) call fail('allreduce of a section: not MPI_ERR_BUFFER')
  ! and a count larger than the section: MPI_ERR_COUNT
  call MPI_Send(v(1:9:2), 6, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_ERR_COUNT) call fail('count beyond the section: not MPI_ERR_COUNT')

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
  integer function val(rk, i, j)
    integer, intent(in) :: rk, i, j
    val = 10000 * rk + 100 * i + j
  end function

  subroutine fill(x, rk)
    integer, intent(out) :: x(9, 9)
    integer, intent(in) :: rk
    integer :: ii, jj
    do jj = 1, 9
      do ii = 1, 9
        x(ii, jj) = val(rk, ii, jj)
      end do
    end do
  end subroutine

  ! what rank 1 expects in r(2:6:2, 1:5:2): rank 0's r at the same places
  function r0sect() result(x)
    real(kind=8) :: x(3, 3)
    real(kind=8) :: r0(6, 5)
    integer :: k
    r0 = reshape([(real(k, 8) / 4, k = 1, 30)], [6, 5])
    x = r0(2:6:2, 1:5:2)
  end function

  subroutine check2(x, y, what)
    integer, intent(in) :: x(9, 9), y(9, 9)
    character(len=*), intent(in) :: what
    if (any(x /= y)) call fail(what)
  end subroutine

  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    if (errs < 10) print '(a,i0,2a)', 'rank ', rank, ': ', what
  end subroutine
end program
