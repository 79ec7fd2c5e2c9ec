/*
 * p2p_basic.c - point-to-point semantics: per-pair ordering (many unexpected messages),
 *   wildcards, MPI_PROC_NULL, truncation with MPI_ERRORS_RETURN, Ssend, Iprobe/Probe,
 *   self send, Test loop, Cancel of a receive.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NMSG 200

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Status st;

    /* ordering: every rank sends NMSG numbered messages to rank 0 before it receives */
    if (rank != 0) {
        for (int i = 0; i < NMSG; i++)
            MPI_Send(&i, 1, MPI_INT, 0, i % 3, MPI_COMM_WORLD);
    } else {
        int *next = calloc((size_t)size, sizeof(int));
        for (int k = 0; k < NMSG * (size - 1); k++) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (v != next[st.MPI_SOURCE] || st.MPI_TAG != v % 3) {
                if (errs < 3)
                    printf("order: from %d got %d expected %d\n", st.MPI_SOURCE, v,
                           next[st.MPI_SOURCE]);
                errs++;
            }
            next[st.MPI_SOURCE] = v + 1;
        }
        free(next);
    }
    /* the wildcard receives above must not see the later phases' messages */
    MPI_Barrier(MPI_COMM_WORLD);

    /* PROC_NULL */
    int x = 5;
    MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    if (st.MPI_SOURCE != MPI_PROC_NULL || x != 5)
        errs++;

    /* self send, then probe and receive */
    int self = rank * 10, got = -1, flag = 0;
    MPI_Request sr;
    MPI_Isend(&self, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &sr);
    MPI_Iprobe(rank, 99, MPI_COMM_WORLD, &flag, &st);
    if (!flag || st.MPI_SOURCE != rank || st.MPI_TAG != 99)
        errs++;
    MPI_Recv(&got, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &st);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    if (got != rank * 10 || sr != MPI_REQUEST_NULL)
        errs++;

    /* truncation: 4 ints into a 2-int buffer, error returned */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int big[4] = {1, 2, 3, 4}, small[2];
    int peer = rank ^ 1;
    if (peer < size) {
        MPI_Request rr;
        MPI_Irecv(small, 2, MPI_INT, peer, 5, MPI_COMM_WORLD, &rr);
        MPI_Send(big, 4, MPI_INT, peer, 5, MPI_COMM_WORLD);
        int rc = MPI_Wait(&rr, &st);
        int cls;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE || small[0] != 1 || small[1] != 2) {
            printf("rank %d: truncation rc %d\n", rank, rc);
            errs++;
        }
        /* synchronous send + Probe */
        int v = rank + 100, w = -1;
        if (rank < peer) {
            MPI_Ssend(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD);
            MPI_Recv(&w, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Probe(peer, 6, MPI_COMM_WORLD, &st);
            int n;
            MPI_Get_count(&st, MPI_INT, &n);
            if (n != 1)
                errs++;
            MPI_Recv(&w, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Ssend(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD);
        }
        if (w != peer + 100)
            errs++;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* cancel a receive that nobody will match */
    MPI_Request cr;
    int dummy, cancelled = 0;
    MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &cr);
    MPI_Cancel(&cr);
    MPI_Wait(&cr, &st);
    MPI_Test_cancelled(&st, &cancelled);
    if (!cancelled)
        errs++;

    /* Test loop on a ring exchange */
    int token = rank, in = -1, done = 0;
    MPI_Request rq[2];
    MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 8, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 8, MPI_COMM_WORLD, &rq[1]);
    while (!done)
        MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE);
    if (in != (rank + size - 1) % size)
        errs++;

    int total;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "Found %d errors\n" : "No Errors\n", total);
    MPI_Finalize();
    return 0;
}
