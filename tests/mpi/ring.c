/*
 * ring.c - pass a token and a 1 MiB array around the ring (both directions), each hop
 *          adds its rank; checks the totals and the array contents.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 18) /* ints: 1 MiB, many cells per message */

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    for (int lap = 0; lap < 3; lap++) {
        long token = 0;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (token != (long)size * (size - 1) / 2) {
                printf("lap %d: token %ld\n", lap, token);
                errs++;
            }
        } else {
            MPI_Status st;
            MPI_Recv(&token, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_SOURCE != prev || st.MPI_TAG != 7)
                errs++;
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
        }
    }

    /* big message both ways at once with Isend/Irecv */
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        out[i] = rank * 1000003 + i;
    MPI_Request rq[4];
    int *in2 = malloc(N * sizeof(int));
    MPI_Irecv(in, N, MPI_INT, prev, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(in2, N, MPI_INT, next, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(out, N, MPI_INT, next, 1, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(out, N, MPI_INT, prev, 2, MPI_COMM_WORLD, &rq[3]);
    MPI_Status sts[4];
    MPI_Waitall(4, rq, sts);
    int cnt;
    MPI_Get_count(&sts[0], MPI_INT, &cnt);
    if (cnt != N || sts[0].MPI_SOURCE != prev)
        errs++;
    for (int i = 0; i < N; i++)
        if (in[i] != prev * 1000003 + i || in2[i] != next * 1000003 + i) {
            if (errs < 5)
                printf("rank %d: element %d wrong\n", rank, i);
            errs++;
            break;
        }
    int total;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "Found %d errors\n" : "No Errors\n", total);
    free(out);
    free(in);
    free(in2);
    MPI_Finalize();
    return 0;
}
