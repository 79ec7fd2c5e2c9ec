/*
 * coll_nb_typefree.c - a derived datatype freed while a nonblocking collective that uses
 * it is still pending (MPI-3.1 4.1.9: "any communication that is currently using this
 * datatype will complete normally").  Ibcast of a strided vector and Iallgather and
 * Ialltoall of contiguous derived types: MPI_Type_free right after the start, new types
 * made and committed in between (they may take the freed handle's slot), then the
 * wait; every element is checked.  Also MPI_Op_free of a user op before an Iallreduce
 * that uses it completes, and both freed between a persistent collective's *_init and
 * its Starts.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define N 64

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* make and commit a few unrelated types: they may reuse the freed one's handle */
static void churn(MPI_Datatype *keep, int n)
{
    for (int i = 0; i < n; i++) {
        MPI_Type_contiguous(3 + i, MPI_CHAR, &keep[i]);
        MPI_Type_commit(&keep[i]);
    }
}

static void unchurn(MPI_Datatype *keep, int n)
{
    for (int i = 0; i < n; i++)
        MPI_Type_free(&keep[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype keep[4];

    /* Ibcast of a vector: every other int of 2*N */
    {
        int buf[2 * N];
        for (int i = 0; i < 2 * N; i++)
            buf[i] = rank == 0 ? i : -1;
        MPI_Datatype vec;
        MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Request r;
        MPI_Ibcast(buf, 1, vec, 0, MPI_COMM_WORLD, &r);
        MPI_Type_free(&vec);
        churn(keep, 4);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        unchurn(keep, 4);
        for (int i = 0; i < 2 * N; i++) {
            int want = (i % 2 == 0 || rank == 0) ? i : -1;
            TEST_ASSERT_MSG(buf[i] == want, "ibcast buf[%d] = %d, want %d", i, buf[i], want);
        }
    }

    /* Iallgather and Ialltoall of a contiguous type of N ints */
    {
        MPI_Datatype blk;
        MPI_Type_contiguous(N, MPI_INT, &blk);
        MPI_Type_commit(&blk);
        int *send = malloc(sizeof(int) * N * (size_t)size);
        int *recv = malloc(sizeof(int) * N * (size_t)size);
        int *recv2 = malloc(sizeof(int) * N * (size_t)size);
        for (int i = 0; i < N * size; i++) {
            send[i] = rank * 100000 + i;
            recv[i] = recv2[i] = -1;
        }
        MPI_Request r[2];
        MPI_Iallgather(send, 1, blk, recv, 1, blk, MPI_COMM_WORLD, &r[0]);
        MPI_Ialltoall(send, 1, blk, recv2, 1, blk, MPI_COMM_WORLD, &r[1]);
        MPI_Type_free(&blk);
        churn(keep, 4);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        unchurn(keep, 4);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < N; i++) {
                int g = recv[p * N + i], a = recv2[p * N + i];
                TEST_ASSERT_MSG(g == p * 100000 + i, "iallgather from %d [%d] = %d", p, i, g);
                TEST_ASSERT_MSG(a == p * 100000 + rank * N + i, "ialltoall from %d [%d] = %d",
                                p, i, a);
            }
        free(send);
        free(recv);
        free(recv2);
    }

    /* a persistent Bcast_init whose vector type and a persistent Allreduce_init whose
     * user op are freed before the first Start; started twice */
    {
        int buf[2 * N], in[N], out[N];
        MPI_Datatype vec;
        MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Op op;
        MPI_Op_create(my_sum, 1, &op);
        MPI_Request r[2];
        MPI_Bcast_init(buf, 1, vec, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Allreduce_init(in, out, N, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        MPI_Type_free(&vec);
        MPI_Op_free(&op);
        churn(keep, 4);
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 2 * N; i++)
                buf[i] = rank == 0 ? i + round : -1;
            for (int i = 0; i < N; i++)
                in[i] = rank + i + round;
            MPI_Startall(2, r);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            for (int i = 0; i < 2 * N; i++) {
                int want = (i % 2 == 0 || rank == 0) ? i + round : -1;
                TEST_ASSERT_MSG(buf[i] == want, "bcast_init round %d buf[%d] = %d", round, i,
                                buf[i]);
            }
            for (int i = 0; i < N; i++) {
                int want = size * (size - 1) / 2 + size * (i + round);
                TEST_ASSERT_MSG(out[i] == want, "allreduce_init round %d [%d] = %d", round, i,
                                out[i]);
            }
        }
        unchurn(keep, 4);
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }

    /* a user op freed before the Iallreduce that uses it completes */
    {
        MPI_Op op;
        MPI_Op_create(my_sum, 1, &op);
        int in[N], out[N];
        for (int i = 0; i < N; i++)
            in[i] = rank + i;
        MPI_Request r;
        MPI_Iallreduce(in, out, N, MPI_INT, op, MPI_COMM_WORLD, &r);
        MPI_Op_free(&op);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            int want = size * (size - 1) / 2 + size * i;
            TEST_ASSERT_MSG(out[i] == want, "iallreduce [%d] = %d, want %d", i, out[i], want);
        }
    }
    return test_finish();
}
