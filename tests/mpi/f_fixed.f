! f_fixed.f - mpif.h in FIXED source form (columns 7-72), as old Fortran 77 codes
!   include it: init, rank/size, allreduce with MPI_IN_PLACE, a status array.
!   Built by mpif77 in tests/integration/t0600-install.sh; rank 0 prints "No Errors".
      PROGRAM FFIXED
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, NPROCS, IERR, N, ERRS
      INTEGER ST(MPI_STATUS_SIZE)
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      N = 1
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, N, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (N .NE. NPROCS) ERRS = ERRS + 1
      IF (RANK .EQ. 0 .AND. NPROCS .GT. 1) THEN
         CALL MPI_RECV(N, 1, MPI_INTEGER, 1, 4, MPI_COMM_WORLD, ST,
     &                 IERR)
         IF (N .NE. 41 .OR. ST(MPI_SOURCE) .NE. 1) ERRS = ERRS + 1
      ELSE IF (RANK .EQ. 1) THEN
         CALL MPI_SEND(41, 1, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, IERR)
      END IF
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ERRS, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. ERRS .EQ. 0) PRINT '(A)', 'No Errors'
      CALL MPI_FINALIZE(IERR)
      END
