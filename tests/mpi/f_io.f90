! f_io.f90 - MPI-IO from Fortran (USE mpi_f08): TYPE(MPI_File) handles (MPI_File_c2f's
!   index), open/write_at_all/read_at/get_size/close/delete, MPI_FILE_NULL after close.
!   The file is <dir>/loom-f_io-<pid of rank 0>, <dir> being LOOM_MPI_TEST_IODIR (a
!   directory all nodes share; the 4-node cluster test sets it) or /tmp (every rank
!   must see the same value); rank 0 prints "No Errors".
program f_io
  use mpi_f08
  implicit none
  type(MPI_File) :: fh
  integer :: rank, nprocs, errs, pid, got(4), i, ierr
  integer(kind=MPI_OFFSET_KIND) :: off, fsize
  character(len=300) :: fname
  character(len=256) :: iodir
  integer :: iolen, iost

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  pid = getpid()
  call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call get_environment_variable('LOOM_MPI_TEST_IODIR', iodir, iolen, iost)
  if (iost /= 0 .or. iolen == 0) iodir = '/tmp'
  write (fname, '(a,a,i0)') trim(iodir), '/loom-f_io-', pid

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS .or. fh == MPI_FILE_NULL) call fail('open')
  got = [(rank * 100 + i, i = 1, 4)]
  off = int(rank, MPI_OFFSET_KIND) * 16
  call MPI_File_write_at_all(fh, off, got, 4, MPI_INTEGER, MPI_STATUS_IGNORE)
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_get_size(fh, fsize)
  if (fsize /= 16 * nprocs) call fail('get_size')
  got = -1
  off = int(mod(rank + 1, nprocs), MPI_OFFSET_KIND) * 16
  call MPI_File_read_at(fh, off, got, 4, MPI_INTEGER, MPI_STATUS_IGNORE)
  if (any(got /= [(mod(rank + 1, nprocs) * 100 + i, i = 1, 4)])) call fail('read_at')
  call MPI_File_close(fh)
  if (fh /= MPI_FILE_NULL) call fail('close sets MPI_FILE_NULL')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. errs == 0) print '(a)', 'No Errors'
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print '(a,i0,a,a)', 'rank ', rank, ': FAIL: ', what
  end subroutine
end program
