/*
 * dyn_accept.c - MPI_Open_port / Comm_accept / Comm_connect / Comm_disconnect between
 * the two halves of MPI_COMM_WORLD (as MPICH's spawn/ tests pair them): the port name
 * travels by Send and Bcast; the new intercommunicator carries messages both ways and
 * merges into an intracommunicator whose Allreduce is checked; three connects in a row
 * on one port; a connect to an open port nobody accepts times out with MPI_ERR_PORT
 * (the test sets LOOM_MPI_CONNECT_TIMEOUT=1 for that part); malformed port names are MPI_ERR_PORT.
 * Needs at least 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        printf("needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int nlow = size / 2, low = rank < nlow;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int rsize_want = low ? size - nlow : nlow;

    char port[MPI_MAX_PORT_NAME];
    memset(port, 0, sizeof(port));
    /* the accepting side's root (world rank 0) opens the port; its name goes to the
     * connecting side's root (world rank nlow) by Send, then by Bcast in each half */
    if (rank == 0) {
        TEST_ASSERT(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
        TEST_ASSERT(strncmp(port, "loom-port:", 10) == 0);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, nlow, 0, MPI_COMM_WORLD);
    } else if (rank == nlow) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, half);

    for (int round = 0; round < 3; round++) {
        MPI_Comm inter, merged;
        int rc = low ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter)
                     : MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
        TEST_ASSERT(rc == MPI_SUCCESS);
        int flag = 0, rsize = -1;
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &rsize);
        TEST_ASSERT(flag);
        TEST_ASSERT_MSG(rsize == rsize_want, "remote size %d, want %d", rsize, rsize_want);
        /* every rank sends to remote rank (hrank % rsize) and receives from each remote
         * rank that sends to it */
        int out = 1000 * round + rank, in;
        MPI_Request rq;
        MPI_Isend(&out, 1, MPI_INT, hrank % rsize, 7, inter, &rq);
        for (int r = 0; r < rsize; r++) {
            if (r % hsize != hrank)
                continue;
            MPI_Status st;
            MPI_Recv(&in, 1, MPI_INT, r, 7, inter, &st);
            int want = 1000 * round + (low ? nlow + r : r);
            TEST_ASSERT_MSG(in == want && st.MPI_SOURCE == r, "got %d from %d, want %d", in,
                            st.MPI_SOURCE, want);
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Intercomm_merge(inter, !low, &merged);
        int mrank, sum = 0;
        MPI_Comm_rank(merged, &mrank);
        TEST_ASSERT_MSG(mrank == rank, "merged rank %d", mrank);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
        TEST_ASSERT(sum == size * (size - 1) / 2);
        MPI_Comm_free(&merged);
        TEST_ASSERT(MPI_Comm_disconnect(&inter) == MPI_SUCCESS);
        TEST_ASSERT(inter == MPI_COMM_NULL);
    }

    /* nobody accepts: the connector times out (1 s in the testlist) */
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!low) {
        setenv("LOOM_MPI_CONNECT_TIMEOUT", "1", 1); /* Loom's knob, read per call */
        MPI_Comm inter = MPI_COMM_WORLD;
        int rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        TEST_ASSERT_MSG(cls == MPI_ERR_PORT, "class %d", cls);
        TEST_ASSERT(inter == MPI_COMM_NULL);
        /* malformed names, another job's port */
        const char *bad[] = {"", "loom-port:1:0:2:x", "loom-port:1:0:1:", "loom-port:9:0:1:j",
                             "loom-port:1:-1:1:j", "loom-port:1:0:1:someone-else", "xyz"};
        for (int i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
            rc = MPI_Comm_connect(bad[i], MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            MPI_Error_class(rc, &cls);
            TEST_ASSERT_MSG(cls == MPI_ERR_PORT, "port \"%s\": class %d", bad[i], cls);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        TEST_ASSERT(MPI_Close_port(port) == MPI_SUCCESS);
        TEST_ASSERT(MPI_Close_port(port) != MPI_SUCCESS); /* closed already */
        MPI_Comm inter;
        int rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        TEST_ASSERT_MSG(cls == MPI_ERR_PORT, "accept on a closed port: class %d", cls);
    }
    MPI_Comm_free(&half);
    return test_finish();
}
