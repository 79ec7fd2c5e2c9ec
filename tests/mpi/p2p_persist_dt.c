/*
 * p2p_persist_dt.c - persistent sends and receives with derived datatypes that the
 *   program frees right after MPI_Send_init/MPI_Recv_init (the request keeps them
 *   alive), started many times: a dup of MPI_INT (1 element), a strided vector (eager)
 *   and a large vector (rendezvous), to the next rank in a ring, checked every round.
 */
#include <stdlib.h>

#include "mpitest.h"

#define ROUNDS 200

static void ring(int rank, int size, int n, int stride, int rounds)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype st, rt;
    if (stride > 1) {
        MPI_Type_vector(n, 1, stride, MPI_INT, &st);
    } else {
        MPI_Type_dup(MPI_INT, &st);
        n = 1;
    }
    MPI_Type_commit(&st);
    MPI_Type_contiguous(n, MPI_INT, &rt);
    MPI_Type_commit(&rt);
    int *sb = malloc(sizeof(int) * (size_t)n * (size_t)stride);
    int *rb = malloc(sizeof(int) * (size_t)n);
    MPI_Request rq[2];
    MPI_Send_init(sb, 1, st, right, 7, MPI_COMM_WORLD, &rq[0]);
    MPI_Recv_init(rb, 1, rt, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq[1]);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    for (int it = 0; it < rounds; it++) {
        for (int i = 0; i < n * stride; i++)
            sb[i] = i % stride ? -7 : rank * 1000003 + it * 7919 + i / stride;
        for (int i = 0; i < n; i++)
            rb[i] = -1;
        MPI_Startall(2, rq);
        MPI_Status sts[2];
        MPI_Waitall(2, rq, sts);
        int count = -1;
        MPI_Get_count(&sts[1], MPI_INT, &count);
        TEST_ASSERT_MSG(count == n, "n %d round %d: count %d", n, it, count);
        TEST_ASSERT(sts[1].MPI_SOURCE == left);
        int bad = 0;
        for (int i = 0; i < n && !bad; i++)
            if (rb[i] != left * 1000003 + it * 7919 + i) {
                TEST_ASSERT_MSG(0, "n %d round %d element %d: %d", n, it, i, rb[i]);
                bad = 1;
            }
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring(rank, size, 1, 1, ROUNDS);
    ring(rank, size, 1000, 3, ROUNDS);
    ring(rank, size, 100000, 2, 20);
    return test_finish();
}
