! f_datarep.F90 - from Fortran: MPI_REGISTER_DATAREP with Fortran conversion and
! extent procedures (USE mpi: buffers by reference; USE mpi_f08: TYPE(C_PTR), VALUE),
! MPI_CONVERSION_FN_NULL, MPI_ERR_DUP_DATAREP; and file error handlers written in
! Fortran (MPI_FILE_CREATE_ERRHANDLER, MPI_FILE_CALL_ERRHANDLER; the handler gets the
! Fortran file handle, MPI_FILE_NULL for an open that failed).  Run with 2 processes.
MODULE f_datarep_util
  IMPLICIT NONE
  INTEGER, PARAMETER :: KEY = 1515870810   ! Z'5A5A5A5A'
  INTEGER :: nerr = 0, me = -1, nread = 0, nwrite = 0, nitems = 0, nbad = 0
  INTEGER :: ncalls = 0, lastfh = -99, lastcode = -99
CONTAINS
  SUBROUTINE check(ok, what)
    LOGICAL, INTENT(IN) :: ok
    CHARACTER(LEN=*), INTENT(IN) :: what
    IF (.NOT. ok) THEN
      nerr = nerr + 1
      PRINT '(A,I0,2A)', 'rank ', me, ': FAIL: ', what
    END IF
  END SUBROUTINE
END MODULE

! USE mpi style conversion procedures: INTEGER items only (the test's views)
SUBROUTINE xor_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  USE mpi
  USE f_datarep_util
  IMPLICIT NONE
  INTEGER :: userbuf(*), filebuf(*), datatype, count, ierror, i
  INTEGER(KIND=MPI_OFFSET_KIND) :: position
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
  nread = nread + 1
  nitems = nitems + count
  IF (extra_state /= 42 .OR. datatype /= MPI_INTEGER) nbad = nbad + 1
  DO i = 1, count
    userbuf(position + i) = IEOR(filebuf(i), KEY)
  END DO
  ierror = MPI_SUCCESS
END SUBROUTINE

SUBROUTINE xor_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  USE mpi
  USE f_datarep_util
  IMPLICIT NONE
  INTEGER :: userbuf(*), filebuf(*), datatype, count, ierror, i
  INTEGER(KIND=MPI_OFFSET_KIND) :: position
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
  nwrite = nwrite + 1
  nitems = nitems + count
  IF (extra_state /= 42 .OR. datatype /= MPI_INTEGER) nbad = nbad + 1
  DO i = 1, count
    filebuf(i) = IEOR(userbuf(position + i), KEY)
  END DO
  ierror = MPI_SUCCESS
END SUBROUTINE

SUBROUTINE same_extent(datatype, extent, extra_state, ierror)
  USE mpi
  IMPLICIT NONE
  INTEGER :: datatype, ierror, sz
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extent, extra_state
  CALL MPI_TYPE_SIZE(datatype, sz, ierror)
  extent = sz
END SUBROUTINE

SUBROUTINE my_ferrh(fh, code)
  USE f_datarep_util
  IMPLICIT NONE
  INTEGER :: fh, code
  ncalls = ncalls + 1
  lastfh = fh
  lastcode = code
END SUBROUTINE

SUBROUTINE test_mpi(path)
  USE mpi
  USE f_datarep_util
  IMPLICIT NONE
  CHARACTER(LEN=*), INTENT(IN) :: path
  EXTERNAL :: xor_read, xor_write, same_extent, my_ferrh
  INTEGER :: ierr, cls, fh, eh, fh2, i, v(8), back(8), status(MPI_STATUS_SIZE)
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra
  INTEGER(KIND=MPI_OFFSET_KIND) :: off
  extra = 42
  ! MPI_FILE_SET_VIEW's DISP is INTEGER(KIND=MPI_OFFSET_KIND), so is this constant
  CALL check(KIND(MPI_DISPLACEMENT_CURRENT) == MPI_OFFSET_KIND, 'MPI_DISPLACEMENT_CURRENT kind')
  CALL MPI_REGISTER_DATAREP('fxor   ', xor_read, xor_write, same_extent, extra, ierr)
  CALL check(ierr == MPI_SUCCESS, 'register fxor')
  CALL MPI_REGISTER_DATAREP('fxor', xor_read, xor_write, same_extent, extra, ierr)
  CALL MPI_ERROR_CLASS(ierr, cls, ierr)
  CALL check(cls == MPI_ERR_DUP_DATAREP, 'register fxor twice: MPI_ERR_DUP_DATAREP')
  CALL MPI_REGISTER_DATAREP('fxor-w', MPI_CONVERSION_FN_NULL, xor_write, same_extent, &
      extra, ierr)
  CALL check(ierr == MPI_SUCCESS, 'register fxor-w')

  CALL MPI_FILE_OPEN(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, &
      MPI_INFO_NULL, fh, ierr)
  CALL check(ierr == MPI_SUCCESS, 'open')
  CALL MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fxor', &
      MPI_INFO_NULL, ierr)
  CALL check(ierr == MPI_SUCCESS, 'set_view fxor')
  v = (/ (me * 100 + i, i = 1, 8) /)
  off = me * 8
  nitems = 0
  CALL MPI_FILE_WRITE_AT_ALL(fh, off, v, 8, MPI_INTEGER, status, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. nwrite == 1 .AND. nitems == 8, 'write through fxor')
  CALL MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
      MPI_INFO_NULL, ierr)
  CALL MPI_FILE_READ_AT(fh, off, back, 8, MPI_INTEGER, status, ierr)
  CALL check(ALL(back == IEOR(v, KEY)), 'raw bytes are converted')
  CALL MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fxor', &
      MPI_INFO_NULL, ierr)
  back = 0
  CALL MPI_FILE_READ_AT(fh, off, back, 8, MPI_INTEGER, status, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. nread == 1 .AND. ALL(back == v), 'read through fxor')
  ! MPI_CONVERSION_FN_NULL reads native bytes
  CALL MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fxor-w', &
      MPI_INFO_NULL, ierr)
  CALL MPI_FILE_READ_AT(fh, off, back, 8, MPI_INTEGER, status, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. nread == 1 .AND. ALL(back == IEOR(v, KEY)), &
      'MPI_CONVERSION_FN_NULL read')
  CALL check(nbad == 0, 'conversion procedures saw extra_state 42 and MPI_INTEGER')

  ! a Fortran file error handler: MPI_FILE_CALL_ERRHANDLER, a real error, MPI_FILE_NULL
  CALL MPI_FILE_CREATE_ERRHANDLER(my_ferrh, eh, ierr)
  CALL check(ierr == MPI_SUCCESS, 'file_create_errhandler')
  CALL MPI_FILE_SET_ERRHANDLER(fh, eh, ierr)
  CALL MPI_FILE_CALL_ERRHANDLER(fh, MPI_ERR_OTHER, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. ncalls == 1 .AND. lastfh == fh .AND. &
      lastcode == MPI_ERR_OTHER, 'call_errhandler reaches the Fortran handler')
  CALL MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'no-such', &
      MPI_INFO_NULL, ierr)
  CALL check(ncalls == 2 .AND. lastfh == fh, 'set_view error: the handler gets the file')
  CALL MPI_ERROR_CLASS(lastcode, cls, i)
  CALL check(cls == MPI_ERR_UNSUPPORTED_DATAREP, 'set_view error: its class')
  CALL MPI_FILE_SET_ERRHANDLER(MPI_FILE_NULL, eh, ierr)
  CALL MPI_FILE_OPEN(MPI_COMM_SELF, path // '.none', MPI_MODE_RDONLY, MPI_INFO_NULL, &
      fh2, ierr)
  CALL check(ncalls == 3 .AND. lastfh == MPI_FILE_NULL, 'failed open: MPI_FILE_NULL')
  CALL MPI_FILE_SET_ERRHANDLER(MPI_FILE_NULL, MPI_ERRORS_RETURN, ierr)
  CALL MPI_ERRHANDLER_FREE(eh, ierr)
  CALL MPI_FILE_CLOSE(fh, ierr)
END SUBROUTINE

SUBROUTINE f08_ferrh(file, code)
  USE mpi_f08
  USE f_datarep_util
  IMPLICIT NONE
  TYPE(MPI_File) :: file
  INTEGER :: code
  ncalls = ncalls + 1
  lastfh = file%MPI_VAL
  lastcode = code
END SUBROUTINE

SUBROUTINE f08_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  USE mpi_f08
  USE f_datarep_util
  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_F_POINTER
  IMPLICIT NONE
  TYPE(C_PTR), VALUE :: userbuf, filebuf
  TYPE(MPI_Datatype) :: datatype
  INTEGER :: count, ierror
  INTEGER(KIND=MPI_OFFSET_KIND) :: position
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
  INTEGER, POINTER :: u(:), f(:)
  CALL C_F_POINTER(userbuf, u, (/ position + count /))
  CALL C_F_POINTER(filebuf, f, (/ count /))
  f = u(position + 1:position + count) + INT(extra_state)
  nwrite = nwrite + 1
  ierror = MPI_SUCCESS
END SUBROUTINE

SUBROUTINE f08_extent(datatype, extent, extra_state, ierror)
  USE mpi_f08
  IMPLICIT NONE
  TYPE(MPI_Datatype) :: datatype
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extent, extra_state
  INTEGER :: ierror, sz
  CALL MPI_Type_size(datatype, sz)
  extent = sz
  ierror = MPI_SUCCESS
END SUBROUTINE

SUBROUTINE test_f08(path)
  USE mpi_f08
  USE f_datarep_util
  IMPLICIT NONE
  CHARACTER(LEN=*), INTENT(IN) :: path
  PROCEDURE(MPI_File_errhandler_function) :: f08_ferrh
  PROCEDURE(MPI_Datarep_conversion_function) :: f08_write
  PROCEDURE(MPI_Datarep_extent_function) :: f08_extent
  TYPE(MPI_File) :: fh
  TYPE(MPI_Errhandler) :: eh
  INTEGER :: ierr, v(4), back(4)
  INTEGER(KIND=MPI_OFFSET_KIND) :: off
  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra
  extra = 1000
  CALL MPI_Register_datarep('plus1000', MPI_CONVERSION_FN_NULL, f08_write, f08_extent, &
      extra, ierr)
  CALL check(ierr == MPI_SUCCESS, 'f08 register')
  CALL MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, fh)
  CALL MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'plus1000', &
      MPI_INFO_NULL, ierr)
  CALL check(ierr == MPI_SUCCESS, 'f08 set_view')
  v = (/ 1, 2, 3, 4 /) + me * 10
  off = 100 + me * 4
  nwrite = 0
  CALL MPI_File_write_at(fh, off, v, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  CALL MPI_File_read_at(fh, off, back, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  CALL check(nwrite == 1 .AND. ALL(back == v + 1000), 'f08 conversion procedure')
  ncalls = 0
  CALL MPI_File_create_errhandler(f08_ferrh, eh)
  CALL MPI_File_set_errhandler(fh, eh)
  CALL MPI_File_call_errhandler(fh, MPI_ERR_IO)
  CALL check(ncalls == 1 .AND. lastfh == fh%MPI_VAL .AND. lastcode == MPI_ERR_IO, &
      'f08 file error handler')
  CALL MPI_Errhandler_free(eh)
  CALL MPI_File_close(fh)
END SUBROUTINE

PROGRAM f_datarep
  USE mpi
  USE f_datarep_util
  IMPLICIT NONE
  CHARACTER(LEN=300) :: dir, path
  INTEGER :: ierr, total, n
  CALL MPI_INIT(ierr)
  CALL MPI_COMM_RANK(MPI_COMM_WORLD, me, ierr)
  CALL GET_ENVIRONMENT_VARIABLE('LOOM_MPI_TEST_IODIR', dir, n)
  IF (n == 0) CALL GET_ENVIRONMENT_VARIABLE('TMPDIR', dir, n)
  IF (n == 0) dir = '/tmp'
  WRITE (path, '(3A,I0)') TRIM(dir), '/loom-f-datarep.', 'job', 0
  IF (me == 0) THEN
    ! one name per run: the process id of rank 0
    WRITE (path, '(2A,I0)') TRIM(dir), '/loom-f-datarep.', getpid()
  END IF
  CALL MPI_BCAST(path, LEN(path), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  CALL test_mpi(TRIM(path))
  CALL MPI_BARRIER(MPI_COMM_WORLD, ierr)
  CALL test_f08(TRIM(path))
  CALL MPI_BARRIER(MPI_COMM_WORLD, ierr)
  IF (me == 0) CALL MPI_FILE_DELETE(TRIM(path), MPI_INFO_NULL, ierr)
  CALL MPI_REDUCE(nerr, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  IF (me == 0) THEN
    IF (total == 0) THEN
      PRINT '(A)', 'No Errors'
    ELSE
      PRINT '(A,I0,A)', ' Found ', total, ' errors'
    END IF
  END IF
  CALL MPI_FINALIZE(ierr)
CONTAINS
  INTEGER FUNCTION getpid()
    INTERFACE
      INTEGER(C_INT) FUNCTION c_getpid() BIND(C, NAME='getpid')
        USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_INT
      END FUNCTION
    END INTERFACE
    getpid = INT(c_getpid())
  END FUNCTION
END PROGRAM
