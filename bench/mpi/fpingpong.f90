! fpingpong.f90 - small-message ping-pong latency from Fortran (USE mpi_f08), to check
!   what the mpi_f08 choice-buffer path costs: a contiguous 8-byte buffer (the path every
!   program takes) and, for comparison, a 1-element-of-2 strided section of the same
!   size (the noncontiguous path: a temporary datatype per call).  Build with
!   `mpifort -O2 fpingpong.f90` (or gfortran -I <build>/mpi/fortran ... -lmpifort -lmpi)
!   and run on 2 ranks; prints one line per case: microseconds per one-way message,
!   the best of 5 rounds of ITERS round trips; then the nanoseconds of one MPI_SEND to
!   MPI_PROC_NULL (the binding and argument checks alone, steadier on a loaded machine).
program fpingpong
  use mpi_f08
  implicit none
  integer, parameter :: iters = 20000, rounds = 5
  integer :: rank, i, r, k
  integer(kind=4) :: c(2), s(4)
  double precision :: t, best(2), pbest(2)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  c = rank
  s = rank
  best = huge(1d0)
  do r = 1, rounds
    do k = 1, 2
      call MPI_Barrier(MPI_COMM_WORLD)
      t = MPI_Wtime()
      do i = 1, iters
        if (rank == 0) then
          if (k == 1) then
            call MPI_Send(c, 2, MPI_INTEGER, 1, 0, MPI_COMM_WORLD)
            call MPI_Recv(c, 2, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
          else
            call MPI_Send(s(1:4:2), 2, MPI_INTEGER, 1, 0, MPI_COMM_WORLD)
            call MPI_Recv(s(1:4:2), 2, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
          end if
        else if (rank == 1) then
          if (k == 1) then
            call MPI_Recv(c, 2, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
            call MPI_Send(c, 2, MPI_INTEGER, 0, 0, MPI_COMM_WORLD)
          else
            call MPI_Recv(s(1:4:2), 2, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
            call MPI_Send(s(1:4:2), 2, MPI_INTEGER, 0, 0, MPI_COMM_WORLD)
          end if
        end if
      end do
      t = (MPI_Wtime() - t) / (2d0 * iters) * 1d6
      best(k) = min(best(k), t)
    end do
  end do
  ! the binding's own cost, without the network: MPI_SEND to MPI_PROC_NULL (rank 0)
  pbest = huge(1d0)
  do r = 1, rounds
    do k = 1, 2
      t = MPI_Wtime()
      do i = 1, iters * 10
        if (k == 1) then
          call MPI_Send(c, 2, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD)
        else
          call MPI_Send(s(1:4:2), 2, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD)
        end if
      end do
      pbest(k) = min(pbest(k), (MPI_Wtime() - t) / (10d0 * iters) * 1d9)
    end do
  end do
  if (rank == 0) then
    print '(a,f8.3)', 'contiguous 8 B, us one-way:       ', best(1)
    print '(a,f8.3)', 'strided section 8 B, us one-way:  ', best(2)
    print '(a,f8.1)', 'contiguous, ns per MPI_PROC_NULL send:  ', pbest(1)
    print '(a,f8.1)', 'section, ns per MPI_PROC_NULL send:     ', pbest(2)
  end if
  call MPI_Finalize()
end program
