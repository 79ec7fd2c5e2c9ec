! f_sess.f90 - the MPI-4 session calls from Fortran, USE mpi then USE mpi_f08, in a
! program that never calls MPI_INIT: a session started with the info key thread_level
! (read back by MPI_SESSION_GET_INFO), the process set names with MPI_INFO_GET_STRING's
! length rules (PSET_LEN 0 asks for the length without C's nul; a short name is cut and
! blank-padded), MPI_SESSION_GET_PSET_INFO's mpi_size, the world group from a process
! set, a communicator from it keyed by a CHARACTER string tag, an allreduce over it, a
! Fortran session error handler (called by MPI_SESSION_CALL_ERRHANDLER and by a bad
! process set name), MPI_SESSION_FINALIZE giving MPI_SESSION_NULL.  Any process count.
MODULE f_sess_util
  IMPLICIT NONE
  INTEGER :: nerr = 0
  ! what the session error handlers saw
  INTEGER :: h_calls = 0, h_code = -1, h_session = -1
CONTAINS
  SUBROUTINE check(ok, what)
    LOGICAL, INTENT(IN) :: ok
    CHARACTER(LEN=*), INTENT(IN) :: what
    IF (.NOT. ok) THEN
      nerr = nerr + 1
      PRINT '(2A)', 'FAIL: ', what
    END IF
  END SUBROUTINE
  ! USE mpi / mpif.h style: the session is a default INTEGER
  SUBROUTINE errh_int(session, code)
    INTEGER :: session, code
    h_calls = h_calls + 1
    h_code = code
    h_session = session
  END SUBROUTINE
END MODULE

MODULE f_sess_f08h
  USE mpi_f08
  USE f_sess_util
  IMPLICIT NONE
CONTAINS
  SUBROUTINE errh_f08(session, code)
    TYPE(MPI_Session) :: session
    INTEGER :: code
    h_calls = h_calls + 1
    h_code = code
    h_session = session%MPI_VAL
  END SUBROUTINE
END MODULE

! USE mpi; returns the size of the world process set (0 if the session failed)
SUBROUTINE test_mpi(wsize)
  USE mpi
  USE f_sess_util
  IMPLICIT NONE
  INTEGER, INTENT(OUT) :: wsize
  INTEGER :: info, used, sess, ierr, npsets, n, plen, grp, comm, rank, gsize, sum
  INTEGER :: errh, eh2, vlen, gself
  LOGICAL :: flag
  CHARACTER(LEN=MPI_MAX_PSET_NAME_LEN) :: pname
  CHARACTER(LEN=5) :: short
  CHARACTER(LEN=64) :: val
  CHARACTER(LEN=11), PARAMETER :: names(2) = (/ 'mpi://WORLD', 'mpi://SELF ' /)
  wsize = 0
  CALL MPI_INFO_CREATE(info, ierr)
  CALL MPI_INFO_SET(info, 'thread_level', 'MPI_THREAD_SERIALIZED', ierr)
  CALL MPI_SESSION_INIT(info, MPI_ERRORS_RETURN, sess, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. sess /= MPI_SESSION_NULL, 'mpi: session init')
  IF (ierr /= MPI_SUCCESS) RETURN
  CALL MPI_INFO_FREE(info, ierr)
  CALL MPI_SESSION_GET_INFO(sess, used, ierr)
  vlen = LEN(val)
  CALL MPI_INFO_GET_STRING(used, 'thread_level', vlen, val, flag, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. flag .AND. val == 'MPI_THREAD_SERIALIZED', &
      'mpi: thread_level read back: ' // TRIM(val))
  CALL MPI_INFO_FREE(used, ierr)
  ! process sets
  CALL MPI_SESSION_GET_NUM_PSETS(sess, MPI_INFO_NULL, npsets, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. npsets == 2, 'mpi: 2 process sets')
  DO n = 0, MIN(npsets, 2) - 1
    plen = 0
    pname = 'untouched'
    CALL MPI_SESSION_GET_NTH_PSET(sess, MPI_INFO_NULL, n, plen, pname, ierr)
    CALL check(ierr == MPI_SUCCESS .AND. plen == LEN_TRIM(names(n + 1)) .AND. &
        pname == 'untouched', 'mpi: pset length query')
    plen = LEN(pname)
    CALL MPI_SESSION_GET_NTH_PSET(sess, MPI_INFO_NULL, n, plen, pname, ierr)
    CALL check(ierr == MPI_SUCCESS .AND. pname == names(n + 1) .AND. &
        plen == LEN_TRIM(names(n + 1)), 'mpi: pset name ' // TRIM(pname))
  END DO
  ! a name longer than the variable is cut to it; PSET_LEN 3 gives 3 characters
  plen = 100
  CALL MPI_SESSION_GET_NTH_PSET(sess, MPI_INFO_NULL, 0, plen, short, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. short == 'mpi:/' .AND. plen == 11, &
      'mpi: pset name cut to the variable: ' // short)
  plen = 3
  CALL MPI_SESSION_GET_NTH_PSET(sess, MPI_INFO_NULL, 0, plen, short, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. short == 'mpi  ' .AND. plen == 11, &
      'mpi: pset name cut to PSET_LEN: ' // short)
  ! the world group (trailing blanks of the name do not count) and its communicator
  CALL MPI_SESSION_GET_PSET_INFO(sess, 'mpi://WORLD   ', info, ierr)
  CALL MPI_INFO_GET(info, 'mpi_size', LEN(val), val, flag, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. flag, 'mpi: mpi_size of mpi://WORLD')
  IF (flag) READ (val, *) wsize
  CALL MPI_INFO_FREE(info, ierr)
  CALL MPI_GROUP_FROM_SESSION_PSET(sess, 'mpi://WORLD   ', grp, ierr)
  CALL check(ierr == MPI_SUCCESS, 'mpi: group from mpi://WORLD')
  CALL MPI_GROUP_SIZE(grp, gsize, ierr)
  CALL check(gsize == wsize, 'mpi: world group size = mpi_size')
  CALL MPI_GROUP_FROM_SESSION_PSET(sess, 'mpi://self', gself, ierr)
  CALL MPI_GROUP_SIZE(gself, n, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. n == 1, 'mpi: group of mpi://SELF')
  CALL MPI_GROUP_FREE(gself, ierr)
  CALL MPI_COMM_CREATE_FROM_GROUP(grp, 'f_sess: USE mpi  ', MPI_INFO_NULL, &
      MPI_ERRORS_RETURN, comm, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. comm /= MPI_COMM_NULL, 'mpi: comm from group')
  IF (ierr == MPI_SUCCESS) THEN
    CALL MPI_COMM_RANK(comm, rank, ierr)
    CALL MPI_ALLREDUCE(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
    CALL check(ierr == MPI_SUCCESS .AND. sum == gsize * (gsize + 1) / 2, &
        'mpi: allreduce over the session communicator')
    CALL MPI_COMM_FREE(comm, ierr)
  END IF
  CALL MPI_GROUP_FREE(grp, ierr)
  ! a Fortran session error handler
  CALL MPI_SESSION_CREATE_ERRHANDLER(errh_int, errh, ierr)
  CALL check(ierr == MPI_SUCCESS, 'mpi: session create errhandler')
  CALL MPI_SESSION_SET_ERRHANDLER(sess, errh, ierr)
  CALL MPI_SESSION_GET_ERRHANDLER(sess, eh2, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. eh2 == errh, 'mpi: session get errhandler')
  CALL MPI_ERRHANDLER_FREE(eh2, ierr)
  h_calls = 0
  CALL MPI_SESSION_CALL_ERRHANDLER(sess, MPI_ERR_OTHER, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. h_calls == 1 .AND. h_code == MPI_ERR_OTHER .AND. &
      h_session == sess, 'mpi: session call errhandler')
  CALL MPI_GROUP_FROM_SESSION_PSET(sess, 'mpi://nope', grp, ierr)
  CALL check(ierr == MPI_ERR_ARG .AND. h_calls == 2 .AND. h_code == MPI_ERR_ARG .AND. &
      h_session == sess, 'mpi: a bad pset name goes to the session handler')
  CALL MPI_ERRHANDLER_FREE(errh, ierr)
  CALL MPI_SESSION_FINALIZE(sess, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. sess == MPI_SESSION_NULL, 'mpi: session finalize')
END SUBROUTINE

! USE mpi_f08, a second session after the first ended; rank 0 of its communicator
! reports for the whole program
SUBROUTINE test_f08(wsize)
  USE mpi_f08
  USE f_sess_util
  USE f_sess_f08h
  IMPLICIT NONE
  INTEGER, INTENT(IN) :: wsize
  TYPE(MPI_Info) :: info, used
  TYPE(MPI_Session) :: sess
  TYPE(MPI_Group) :: grp
  TYPE(MPI_Comm) :: comm
  TYPE(MPI_Errhandler) :: errh, eh2
  INTEGER :: ierr, npsets, plen, rank, gsize, sum, vlen, total
  LOGICAL :: flag
  CHARACTER(LEN=MPI_MAX_PSET_NAME_LEN) :: pname
  CHARACTER(LEN=64) :: val
  CALL MPI_Info_create(info)
  CALL MPI_Info_set(info, 'thread_level', 'MPI_THREAD_FUNNELED')
  CALL MPI_Session_init(info, MPI_ERRORS_RETURN, sess, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. sess /= MPI_SESSION_NULL, 'f08: session init')
  IF (ierr /= MPI_SUCCESS) STOP 1
  CALL MPI_Info_free(info)
  CALL MPI_Session_get_info(sess, used)
  vlen = LEN(val)
  CALL MPI_Info_get_string(used, 'thread_level', vlen, val, flag)
  CALL check(flag .AND. val == 'MPI_THREAD_FUNNELED', 'f08: thread_level read back: ' &
      // TRIM(val))
  CALL MPI_Info_free(used)
  CALL MPI_Session_get_num_psets(sess, MPI_INFO_NULL, npsets)
  CALL check(npsets == 2, 'f08: 2 process sets')
  plen = 0
  CALL MPI_Session_get_nth_pset(sess, MPI_INFO_NULL, 1, plen, pname)
  CALL check(plen == 10, 'f08: pset length query')
  plen = MPI_MAX_PSET_NAME_LEN
  CALL MPI_Session_get_nth_pset(sess, MPI_INFO_NULL, 1, plen, pname, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. pname == 'mpi://SELF' .AND. plen == 10, &
      'f08: pset name ' // TRIM(pname))
  ! PSET_LEN is 10 now: mpi://WORLD is cut to 10 characters, its length comes back
  CALL MPI_Session_get_nth_pset(sess, MPI_INFO_NULL, 0, plen, pname, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. pname == 'mpi://WORL' .AND. plen == 11, &
      'f08: pset name cut to PSET_LEN: ' // TRIM(pname))
  CALL MPI_Session_get_nth_pset(sess, MPI_INFO_NULL, 0, plen, pname, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. pname == 'mpi://WORLD' .AND. plen == 11, &
      'f08: pset name ' // TRIM(pname))
  CALL MPI_Session_get_pset_info(sess, 'mpi://WORLD', info)
  CALL MPI_Info_get(info, 'mpi_size', LEN(val), val, flag)
  CALL check(flag, 'f08: mpi_size of mpi://WORLD')
  IF (flag) THEN
    READ (val, *) gsize
    CALL check(gsize == wsize, 'f08: mpi_size as in the USE mpi session')
  END IF
  CALL MPI_Info_free(info)
  CALL MPI_Group_from_session_pset(sess, 'mpi://WORLD', grp, ierr)
  CALL check(ierr == MPI_SUCCESS, 'f08: group from mpi://WORLD')
  CALL MPI_Group_size(grp, gsize)
  CALL check(gsize == wsize, 'f08: world group size')
  CALL MPI_Comm_create_from_group(grp, 'f_sess: USE mpi_f08', MPI_INFO_NULL, &
      MPI_ERRORS_RETURN, comm, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. comm /= MPI_COMM_NULL, 'f08: comm from group')
  IF (ierr /= MPI_SUCCESS) STOP 1
  CALL MPI_Group_free(grp)
  CALL MPI_Comm_rank(comm, rank)
  CALL MPI_Allreduce(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. sum == gsize * (gsize + 1) / 2, &
      'f08: allreduce over the session communicator')
  ! the session error handler, TYPE(MPI_Session) in the callback
  CALL MPI_Session_create_errhandler(errh_f08, errh, ierr)
  CALL check(ierr == MPI_SUCCESS, 'f08: session create errhandler')
  CALL MPI_Session_set_errhandler(sess, errh)
  CALL MPI_Session_get_errhandler(sess, eh2)
  CALL check(eh2 == errh, 'f08: session get errhandler')
  CALL MPI_Errhandler_free(eh2)
  h_calls = 0
  CALL MPI_Session_call_errhandler(sess, MPI_ERR_OTHER, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. h_calls == 1 .AND. h_code == MPI_ERR_OTHER .AND. &
      h_session == sess%MPI_VAL, 'f08: session call errhandler')
  CALL MPI_Group_from_session_pset(sess, 'mpi://nope', grp, ierr)
  CALL check(ierr == MPI_ERR_ARG .AND. h_calls == 2 .AND. h_code == MPI_ERR_ARG, &
      'f08: a bad pset name goes to the session handler')
  CALL MPI_Errhandler_free(errh)
  ! every process' failures, counted over the session's communicator
  CALL MPI_Allreduce(nerr, total, 1, MPI_INTEGER, MPI_SUM, comm)
  CALL MPI_Comm_free(comm)
  CALL MPI_Session_finalize(sess, ierr)
  CALL check(ierr == MPI_SUCCESS .AND. sess == MPI_SESSION_NULL, 'f08: session finalize')
  IF (rank == 0) THEN
    IF (total == 0 .AND. nerr == 0) THEN
      PRINT '(A)', 'No Errors'
    ELSE
      PRINT '(A,I0,A)', 'Found ', MAX(total, nerr), ' errors'
    END IF
  END IF
END SUBROUTINE

PROGRAM f_sess
  IMPLICIT NONE
  INTEGER :: wsize
  CALL test_mpi(wsize)
  CALL test_f08(wsize)
END PROGRAM
