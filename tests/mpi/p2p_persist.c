/*
 * p2p_persist.c - persistent requests (Send_init/Ssend_init/Recv_init/Start/Startall/
 *   Request_free) reused over many rounds in a ring, inactive-request semantics, and the
 *   completion family: Waitsome, Testsome, Testany, Request_get_status, Waitany with
 *   null entries.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 50
#define N 1000

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *sb = malloc(N * sizeof(int)), *rb = malloc(N * sizeof(int));
    MPI_Request rq[3];
    MPI_Status st[3];

    /* a waited inactive persistent request returns at once with an empty status */
    MPI_Recv_init(rb, N, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Send_init(sb, N, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Ssend_init(sb, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[2]);
    MPI_Wait(&rq[0], &st[0]);
    if (rq[0] == MPI_REQUEST_NULL || st[0].MPI_SOURCE != MPI_ANY_SOURCE)
        errs++;
    int one;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++)
            sb[i] = rank * 100000 + round * 1000 + i;
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, st);
        if (rq[0] == MPI_REQUEST_NULL || rq[1] == MPI_REQUEST_NULL)
            errs++;
        if (st[0].MPI_SOURCE != left || st[0].MPI_TAG != 1)
            errs++;
        for (int i = 0; i < N; i++)
            if (rb[i] != left * 100000 + round * 1000 + i) {
                if (errs < 5)
                    printf("rank %d round %d: rb[%d] = %d\n", rank, round, i, rb[i]);
                errs++;
                break;
            }
        /* synchronous persistent send to the right, plain receive from the left */
        MPI_Start(&rq[2]);
        MPI_Recv(&one, 1, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < 3; i++)
        MPI_Request_free(&rq[i]);
    if (rq[0] != MPI_REQUEST_NULL)
        errs++;

    /* Waitsome / Testsome / Testany / Request_get_status */
    int vals[4] = {0}, out = 0, idx[4], flag = 0, seen = 0, sent11 = 0;
    MPI_Request r4[4];
    for (int k = 0; k < 2; k++)
        MPI_Irecv(&vals[k], 1, MPI_INT, left, 10 + k, MPI_COMM_WORLD, &r4[k]);
    r4[2] = MPI_REQUEST_NULL;
    int v0 = rank, v1 = rank + 1;
    MPI_Isend(&v0, 1, MPI_INT, right, 10, MPI_COMM_WORLD, &r4[3]);
    while (seen < 3) {
        MPI_Status s4[4];
        MPI_Waitsome(4, r4, &out, idx, s4);
        if (out == MPI_UNDEFINED || out < 1) {
            errs++;
            break;
        }
        seen += out;
        if (r4[0] == MPI_REQUEST_NULL && r4[3] == MPI_REQUEST_NULL && !sent11) {
            /* the tag-11 message leaves only once the first two completed */
            MPI_Send(&v1, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
            sent11 = 1;
        }
    }
    if (vals[0] != left || vals[1] != left + 1)
        errs++;
    MPI_Waitsome(4, r4, &out, idx, MPI_STATUSES_IGNORE);
    if (out != MPI_UNDEFINED)
        errs++;

    MPI_Request a;
    int z = -1;
    MPI_Irecv(&z, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &a);
    MPI_Request_get_status(a, &flag, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (flag) /* nobody sent tag 20 yet */
        errs++;
    MPI_Send(&rank, 1, MPI_INT, right, 20, MPI_COMM_WORLD);
    MPI_Status s1;
    do
        MPI_Request_get_status(a, &flag, &s1);
    while (!flag);
    if (a == MPI_REQUEST_NULL || s1.MPI_SOURCE != left)
        errs++;
    int index = -1;
    MPI_Request two[2] = {MPI_REQUEST_NULL, a};
    do
        MPI_Testany(2, two, &index, &flag, &s1);
    while (!flag);
    if (index != 1 || two[1] != MPI_REQUEST_NULL || z != left)
        errs++;
    MPI_Testany(2, two, &index, &flag, &s1);
    if (!flag || index != MPI_UNDEFINED)
        errs++;
    MPI_Testsome(2, two, &out, idx, MPI_STATUSES_IGNORE);
    if (out != MPI_UNDEFINED)
        errs++;

    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("Found %d errors\n", all);
        else
            printf("No Errors\n");
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
