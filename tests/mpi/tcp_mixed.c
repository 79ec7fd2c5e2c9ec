/*
 * tcp_mixed.c - ordering and wildcards across transports: every rank sends every other
 *   rank NMSG messages (sizes cycling through small, multi-cell eager and rendezvous,
 *   tags cycling 0..2) and receives all of its own with MPI_ANY_SOURCE/MPI_ANY_TAG in
 *   mixed blocking and nonblocking forms, checking that the messages of each sender
 *   arrive in the order sent with the right tag, length and contents.  Meant for runs
 *   where some peers are reached by shared memory and others by TCP (several nodes, or
 *   LOOM_MPI_FAKE_NODES=k on one machine); passes on any transport.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NMSG 24

static int msg_len(int i)
{
    static const int lens[4] = {2, 900, 9000, 40000}; /* ints: 8 B .. 160 KB */
    return lens[i % 4];
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int npeer = size - 1, nsend = npeer * NMSG;
    MPI_Request *rq = malloc((nsend + 1) * sizeof(MPI_Request));
    int **sb = malloc((nsend + 1) * sizeof(int *));
    int k = 0;
    for (int i = 0; i < NMSG; i++) /* interleave destinations */
        for (int d = 0; d < size; d++) {
            if (d == rank)
                continue;
            int n = msg_len(i);
            sb[k] = malloc(n * sizeof(int));
            for (int j = 0; j < n; j++)
                sb[k][j] = rank * 1000003 + i * 7919 + j;
            if (i % 5 == 4)
                MPI_Issend(sb[k], n, MPI_INT, d, i % 3, MPI_COMM_WORLD, &rq[k]);
            else
                MPI_Isend(sb[k], n, MPI_INT, d, i % 3, MPI_COMM_WORLD, &rq[k]);
            k++;
        }
    int *next = calloc(size, sizeof(int));
    int *rb = malloc(40000 * sizeof(int));
    for (int m = 0; m < nsend; m++) {
        MPI_Status st;
        if (m % 3 == 0) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Recv(rb, 40000, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        } else if (m % 3 == 1) {
            MPI_Request r;
            MPI_Irecv(rb, 40000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &r);
            MPI_Wait(&r, &st);
        } else {
            MPI_Recv(rb, 40000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &st);
        }
        int s = st.MPI_SOURCE, i = next[s]++, cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        if (i >= NMSG || st.MPI_TAG != i % 3 || cnt != msg_len(i)) {
            if (errs++ < 10)
                printf("[%d] from %d: message %d has tag %d len %d\n", rank, s, i,
                       st.MPI_TAG, cnt);
            continue;
        }
        for (int j = 0; j < cnt; j++)
            if (rb[j] != s * 1000003 + i * 7919 + j) {
                if (errs++ < 10)
                    printf("[%d] from %d: message %d word %d wrong\n", rank, s, i, j);
                break;
            }
    }
    MPI_Waitall(nsend, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < k; i++)
        free(sb[i]);
    int tot;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && tot == 0)
        printf("No Errors\n");
    free(rb);
    free(next);
    free(sb);
    free(rq);
    MPI_Finalize();
    return tot != 0;
}
