! f_spawn.f90 - MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran (USE mpi and
! USE mpi_f08): the CHARACTER argv arrays reach C as the standard says (trailing
! blanks gone, leading ones kept, the list ends at the first all-blank entry,
! ARRAY_OF_ARGV(COUNT, *) read by command), MPI_ARGV_NULL, MPI_ARGVS_NULL and
! MPI_ERRCODES_IGNORE become C's sentinels, and only the root converts.  f_spawn_c.c
! records what C received (a profiling layer).  Spawning this program must work (the
! intercommunicator is checked; each child sees its parent and disconnects); spawning
! "cmd", which does not exist, must fail with MPI_ERR_SPAWN.  Run with 2 processes.
MODULE f_spawn_util
  IMPLICIT NONE
  INTEGER :: nerr = 0, me = -1
CONTAINS
  SUBROUTINE check(ok, what)
    LOGICAL, INTENT(IN) :: ok
    CHARACTER(LEN=*), INTENT(IN) :: what
    IF (.NOT. ok) THEN
      nerr = nerr + 1
      PRINT '(A,I0,2A)', 'rank ', me, ': FAIL: ', what
    END IF
  END SUBROUTINE
  SUBROUTINE expect_rec(want, what)
    CHARACTER(LEN=*), INTENT(IN) :: want, what
    CHARACTER(LEN=400) :: got
    EXTERNAL :: f_spawn_last
    CALL f_spawn_last(got)
    IF (TRIM(got) /= want) THEN
      nerr = nerr + 1
      PRINT '(A,I0,6A)', 'rank ', me, ': FAIL: ', what, ': C got "', TRIM(got), &
          '", want ', want
    END IF
  END SUBROUTINE
END MODULE

SUBROUTINE test_mpi(self)
  USE mpi
  USE f_spawn_util
  IMPLICIT NONE
  CHARACTER(LEN=*), INTENT(IN) :: self
  CHARACTER(LEN=6) :: argv(5), argvs(2, 3)
  CHARACTER(LEN=256) :: cmds(2)
  INTEGER :: ierr, cls, inter, errcodes(2), rsize, np(2), infos(2)
  rsize = 0
  argv = (/ 'child ', ' b    ', 'c d   ', '      ', 'zzz   ' /)
  errcodes = -1
  ! 1. an argv list: trailing blanks go, leading and inner ones stay, ' ' ends it
  CALL MPI_COMM_SPAWN(self, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
      errcodes, ierr)
  IF (me == 0) THEN
    CALL expect_rec(self // '|child| b|c d#2', 'spawn argv')
  ELSE
    CALL expect_rec('-', 'spawn argv, not the root')
  END IF
  CALL spawn_outcome(ierr, inter, errcodes, 2, 'spawn')
  ! 2. MPI_ARGV_NULL and MPI_ERRCODES_IGNORE
  CALL MPI_COMM_SPAWN(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
      MPI_ERRCODES_IGNORE, ierr)
  IF (me == 0) CALL expect_rec(self // '@NULL#1!ign', 'spawn MPI_ARGV_NULL')
  CALL spawn_outcome(ierr, inter, errcodes, 0, 'spawn MPI_ARGV_NULL')
  ! 3. SPAWN_MULTIPLE: ARRAY_OF_ARGV(COUNT, *), command i's list is row i
  cmds(1) = self
  cmds(2) = self
  argvs(1, :) = (/ 'child ', '  y   ', '      ' /)
  argvs(2, :) = (/ 'child ', '      ', 'never ' /)
  np = (/ 1, 1 /)
  infos = MPI_INFO_NULL
  errcodes = -1
  CALL MPI_COMM_SPAWN_MULTIPLE(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, inter, &
      errcodes, ierr)
  IF (me == 0) CALL expect_rec(self // '|child|  y#1;' // self // '|child#1;', &
      'spawn_multiple')
  CALL spawn_outcome(ierr, inter, errcodes, 2, 'spawn_multiple')
  ! 4. MPI_ARGVS_NULL
  CALL MPI_COMM_SPAWN_MULTIPLE(1, (/ 'cmd ' /), MPI_ARGVS_NULL, (/ 1 /), (/ MPI_INFO_NULL /), &
      0, MPI_COMM_WORLD, inter, MPI_ERRCODES_IGNORE, ierr)
  IF (me == 0) CALL expect_rec('@NULLScmd#1;!ign', 'spawn_multiple MPI_ARGVS_NULL')
  IF (ierr /= MPI_SUCCESS) THEN
    CALL MPI_ERROR_CLASS(ierr, cls, ierr)
    CALL check(cls == MPI_ERR_SPAWN, 'spawn_multiple of "cmd": class MPI_ERR_SPAWN')
  ELSE
    CALL check(.FALSE., 'spawn_multiple of "cmd": it worked')
    CALL MPI_COMM_DISCONNECT(inter, ierr)
  END IF
CONTAINS
  SUBROUTINE spawn_outcome(rc, ic, codes, n, what)
    INTEGER, INTENT(IN) :: rc, ic, codes(*), n
    CHARACTER(LEN=*), INTENT(IN) :: what
    INTEGER :: c, e, i, icx
    icx = ic
    IF (rc == MPI_SUCCESS) THEN   ! spawning works: a real intercommunicator
      CALL check(ic /= MPI_COMM_NULL, what // ': intercomm')
      CALL MPI_COMM_REMOTE_SIZE(ic, rsize, e)
      IF (n > 0) CALL check(rsize == n, what // ': remote size')
      DO i = 1, n
        IF (me == 0) CALL check(codes(i) == MPI_SUCCESS, what // ': errcodes MPI_SUCCESS')
      END DO
      CALL MPI_COMM_DISCONNECT(icx, e)
    ELSE
      CALL check(.FALSE., what // ': the spawn failed')
      CALL MPI_ERROR_CLASS(rc, c, e)
      CALL check(c == MPI_ERR_SPAWN, what // ': class MPI_ERR_SPAWN')
      CALL check(ic == MPI_COMM_NULL, what // ': intercomm MPI_COMM_NULL')
      DO i = 1, n
        IF (me == 0) CALL check(codes(i) == MPI_ERR_SPAWN, what // ': errcodes filled')
      END DO
    END IF
  END SUBROUTINE
END SUBROUTINE

SUBROUTINE test_f08(self)
  USE mpi_f08
  USE f_spawn_util
  IMPLICIT NONE
  CHARACTER(LEN=*), INTENT(IN) :: self
  CHARACTER(LEN=8) :: argv(3)
  TYPE(MPI_Comm) :: inter
  TYPE(MPI_Info) :: infos(1)
  INTEGER :: ierr, cls, codes(1)
  argv = (/ 'child   ', 'x  y    ', '        ' /)
  codes = -1
  CALL MPI_Comm_spawn(self, argv, 1, MPI_INFO_NULL, 1, MPI_COMM_WORLD, inter, codes, ierr)
  IF (me == 1) THEN
    CALL expect_rec(self // '|child|x  y#1', 'f08 spawn, root 1')
  ELSE
    CALL expect_rec('-', 'f08 spawn, not the root')
  END IF
  IF (ierr == MPI_SUCCESS) THEN
    CALL check(inter /= MPI_COMM_NULL, 'f08 spawn: intercomm')
    CALL MPI_Comm_disconnect(inter)
  ELSE
    CALL check(.FALSE., 'f08 spawn: the spawn failed')
    CALL MPI_Error_class(ierr, cls)
    CALL check(cls == MPI_ERR_SPAWN, 'f08 spawn: class MPI_ERR_SPAWN')
    CALL check(inter == MPI_COMM_NULL, 'f08 spawn: intercomm MPI_COMM_NULL')
    IF (me == 1) CALL check(codes(1) == MPI_ERR_SPAWN, 'f08 spawn: errcodes filled')
  END IF
  infos = MPI_INFO_NULL
  CALL MPI_Comm_spawn_multiple(1, (/ self /), MPI_ARGVS_NULL, (/ 1 /), infos, 0, &
      MPI_COMM_WORLD, inter, MPI_ERRCODES_IGNORE, ierr)
  IF (me == 0) CALL expect_rec('@NULLS' // self // '#1;!ign', 'f08 spawn_multiple')
  IF (ierr == MPI_SUCCESS) THEN
    CALL MPI_Comm_disconnect(inter)
  ELSE
    CALL check(.FALSE., 'f08 spawn_multiple: the spawn failed')
    CALL MPI_Error_class(ierr, cls)
    CALL check(cls == MPI_ERR_SPAWN, 'f08 spawn_multiple: class MPI_ERR_SPAWN')
  END IF
END SUBROUTINE

PROGRAM f_spawn
  USE mpi
  USE f_spawn_util
  IMPLICIT NONE
  CHARACTER(LEN=256) :: self
  INTEGER :: ierr, total, parent
  CALL GET_COMMAND_ARGUMENT(0, self)
  CALL MPI_INIT(ierr)
  ! a spawned copy (whatever its arguments: MPI_ARGV_NULL gives none) only disconnects
  CALL MPI_COMM_GET_PARENT(parent, ierr)
  IF (parent /= MPI_COMM_NULL) THEN
    CALL MPI_COMM_DISCONNECT(parent, ierr)
    CALL MPI_FINALIZE(ierr)
    STOP
  END IF
  CALL MPI_COMM_RANK(MPI_COMM_WORLD, me, ierr)
  CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  CALL test_mpi(TRIM(self))
  CALL test_f08(TRIM(self))
  CALL MPI_REDUCE(nerr, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  IF (me == 0) THEN
    IF (total == 0) THEN
      PRINT '(A)', 'No Errors'
    ELSE
      PRINT '(A,I0,A)', ' Found ', total, ' errors'
    END IF
  END IF
  CALL MPI_FINALIZE(ierr)
END PROGRAM
