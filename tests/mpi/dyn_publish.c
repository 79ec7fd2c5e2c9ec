/*
 * dyn_publish.c - MPI_Publish_name / Lookup_name / Unpublish_name through the process
 * manager's name service: world rank 0 opens a port and publishes it, the other ranks
 * look it up and connect (each alone, over COMM_SELF, one after the other: several
 * connects to one port), rank 0 accepts them in turn; then the name is unpublished, a
 * lookup fails with MPI_ERR_NAME and a second unpublish with MPI_ERR_SERVICE.
 */
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char svc[64], port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME];
    /* the service name is per run: mpiexec's name service outlives no job, but a
     * server shared by several jobs (srun) would see them all */
    int stamp = 0;
    if (rank == 0)
        stamp = (int)(MPI_Wtime() * 1000) & 0x7fffffff;
    MPI_Bcast(&stamp, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(svc, sizeof(svc), "loom-dyn-publish-%d", stamp);
    if (rank == 0) {
        TEST_ASSERT(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
        TEST_ASSERT(MPI_Publish_name(svc, MPI_INFO_NULL, port) == MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            MPI_Comm inter;
            TEST_ASSERT(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter) ==
                        MPI_SUCCESS);
            int who = -1;
            MPI_Recv(&who, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
            TEST_ASSERT(who >= 1 && who < size);
            MPI_Send(&who, 1, MPI_INT, 0, 2, inter);
            MPI_Comm_disconnect(&inter);
        }
    } else {
        /* one at a time, in rank order */
        int token = 0;
        if (rank > 1)
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        memset(got, 0, sizeof(got));
        TEST_ASSERT(MPI_Lookup_name(svc, MPI_INFO_NULL, got) == MPI_SUCCESS);
        TEST_ASSERT(strncmp(got, "loom-port:", 10) == 0);
        MPI_Comm inter;
        TEST_ASSERT(MPI_Comm_connect(got, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter) ==
                    MPI_SUCCESS);
        int back = -1;
        MPI_Send(&rank, 1, MPI_INT, 0, 1, inter);
        MPI_Recv(&back, 1, MPI_INT, 0, 2, inter, MPI_STATUS_IGNORE);
        TEST_ASSERT(back == rank);
        MPI_Comm_disconnect(&inter);
        if (rank + 1 < size)
            MPI_Send(&token, 1, MPI_INT, rank + 1, 9, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        TEST_ASSERT(MPI_Unpublish_name(svc, MPI_INFO_NULL, port) == MPI_SUCCESS);
        MPI_Close_port(port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int cls = -1, rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_NAME, "lookup after unpublish: class %d", cls);
    if (rank == 0) {
        rc = MPI_Unpublish_name(svc, MPI_INFO_NULL, port);
        MPI_Error_class(rc, &cls);
        TEST_ASSERT_MSG(cls == MPI_ERR_SERVICE, "second unpublish: class %d", cls);
    }
    return test_finish();
}
