/*
 * dyn_xjob_flood.c - another job's process that floods us is dropped, and only it:
 *   `dyn_xjob_flood accept FILE` (job A, 2 ranks) and `dyn_xjob_flood connect FILE`
 *   (job B, 1 rank), run by tests/mpi/dyn_xjob.sh with DYN_XJOB_PROG=dyn_xjob_flood and
 *   LOOM_MPI_XJOB_UNEXP_MSGS=20.  After connect/accept (both worlds return errors), B
 *   sends 60 messages A's rank 0 never receives; A's rank 0 drops B (its quota): its
 *   receive from B that was waiting fails instead of hanging, a later one fails at
 *   once, and A's own ranks still talk (an allreduce on A's world).  B sees its
 *   connection to A's rank 0 close: its receive from there fails, it does not hang.
 *   Each job prints "No Errors".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define FLOOD 60

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc != 3 || (strcmp(argv[1], "accept") && strcmp(argv[1], "connect"))) {
        if (rank == 0)
            printf("usage: dyn_xjob_flood accept|connect FILE\n");
        MPI_Finalize();
        return 2;
    }
    int acc = strcmp(argv[1], "accept") == 0;
    const char *file = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0 && acc) {
        TEST_ASSERT(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        TEST_ASSERT(f != NULL);
        if (f) {
            fprintf(f, "%s\n", port);
            fclose(f);
            TEST_ASSERT(rename(tmp, file) == 0);
        }
    } else if (rank == 0) {
        FILE *f = NULL;
        for (int i = 0; i < 600 && !f; i++) /* 30 s */
            if (!(f = fopen(file, "r")))
                usleep(50000);
        TEST_ASSERT_MSG(f != NULL, "no port name in %s", file);
        if (f) {
            if (!fgets(port, sizeof(port), f))
                port[0] = 0;
            port[strcspn(port, "\n")] = 0;
            fclose(f);
        }
    }
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                 : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: %d", argv[1], rc);
    if (rc != MPI_SUCCESS)
        return test_finish();
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int v = 0, cls = -1;
    if (acc && rank == 0) {
        /* waiting for a message B never sends while B floods another tag */
        MPI_Request rq;
        MPI_Irecv(&v, 1, MPI_INT, 0, 99, inter, &rq);
        rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        TEST_ASSERT_MSG(rc != MPI_SUCCESS, "the waiting receive from B succeeded (%d)",
                        v);
        rc = MPI_Recv(&v, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(rc != MPI_SUCCESS, "a later receive from B succeeded");
    } else if (!acc) {
        for (int i = 0; i < FLOOD; i++)
            MPI_Send(&i, 1, MPI_INT, 0, 7, inter); /* eager: done locally */
        rc = MPI_Recv(&v, 1, MPI_INT, 0, 98, inter, MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(rc != MPI_SUCCESS, "a receive from A's dropping rank succeeded");
    }
    if (acc) { /* A's own ranks are untouched */
        int sum = -1;
        rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        TEST_ASSERT(rc == MPI_SUCCESS && sum == size * (size - 1) / 2);
    }
    MPI_Comm_free(&inter); /* (no Disconnect: its barrier needs the dropped process) */
    if (rank == 0 && acc)
        TEST_ASSERT(MPI_Close_port(port) == MPI_SUCCESS);
    return test_finish();
}
