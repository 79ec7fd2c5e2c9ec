/*
 * p2p_mprobe.c - matched probe and receive: Mprobe/Mrecv and Improbe/Imrecv take the
 *   message out of the matcher (a later wildcard receive cannot steal it), for small,
 *   multi-cell and rendezvous sizes, with ANY_SOURCE from several senders; PROC_NULL
 *   gives MPI_MESSAGE_NO_PROC.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int sizes[3] = {4, 40000, 300000}; /* ints: fastbox/cells/rendezvous */
    int *buf = malloc(sizeof(int) * 300000);
    if (rank != 0) {
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < sizes[k]; i++)
                buf[i] = rank * 7 + k + i;
            MPI_Send(buf, sizes[k], MPI_INT, 0, k, MPI_COMM_WORLD);
        }
    } else {
        for (int m = 0; m < 3 * (size - 1); m++) {
            MPI_Message msg;
            MPI_Status st;
            int cnt = 0, flag = 0;
            if (m % 2) {
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
            } else {
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
            }
            MPI_Get_count(&st, MPI_INT, &cnt);
            int src = st.MPI_SOURCE, k = st.MPI_TAG;
            if (k < 0 || k > 2 || cnt != sizes[k]) {
                printf("probe: source %d tag %d count %d\n", src, k, cnt);
                errs++;
                break;
            }
            /* a wildcard receive posted now must not get the probed message */
            MPI_Request steal;
            int dummy = 0, got = 0;
            MPI_Irecv(&dummy, 1, MPI_INT, src, k, MPI_COMM_WORLD, &steal);
            MPI_Status st2;
            if (m % 2) {
                MPI_Mrecv(buf, cnt, MPI_INT, &msg, &st2);
            } else {
                MPI_Request r;
                MPI_Imrecv(buf, cnt, MPI_INT, &msg, &r);
                MPI_Wait(&r, &st2);
            }
            if (msg != MPI_MESSAGE_NULL || st2.MPI_SOURCE != src || st2.MPI_TAG != k)
                errs++;
            for (int i = 0; i < cnt; i++)
                if (buf[i] != src * 7 + k + i) {
                    printf("mrecv: from %d tag %d element %d wrong\n", src, k, i);
                    errs++;
                    break;
                }
            MPI_Test(&steal, &got, MPI_STATUS_IGNORE);
            if (got) {
                printf("a receive stole a matched message\n");
                errs++;
            } else {
                MPI_Cancel(&steal);
                MPI_Wait(&steal, MPI_STATUS_IGNORE);
            }
        }
        MPI_Message np;
        MPI_Status st;
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &np, &st);
        if (np != MPI_MESSAGE_NO_PROC || st.MPI_SOURCE != MPI_PROC_NULL)
            errs++;
        MPI_Mrecv(NULL, 0, MPI_INT, &np, &st);
        if (np != MPI_MESSAGE_NULL || st.MPI_SOURCE != MPI_PROC_NULL)
            errs++;
    }
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("Found %d errors\n", all);
        else
            printf("No Errors\n");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
