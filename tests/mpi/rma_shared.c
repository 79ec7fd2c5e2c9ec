/*
 * rma_shared.c - shared-memory windows: MPI_Win_allocate_shared on the node's
 *   communicator (Comm_split_type SHARED), Win_shared_query of every rank (contiguous
 *   by default, MPI_PROC_NULL = the first non-empty part), direct stores into a
 *   neighbour's part and loads of it after Win_sync + barrier, RMA calls on the same
 *   window (put/get direct, fetch_and_op through the target), a rank with size 0,
 *   flavor attribute, and MPI_ERR_RMA_FLAVOR for shared_query on another flavor.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int wrank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    int right = (rank + 1) % size;

    /* rank r owns 16 * (r + 1) ints, except rank 1 which owns none */
    int mine = rank == 1 ? 0 : 16 * (rank + 1);
    int *base;
    MPI_Win win;
    MPI_Win_allocate_shared((MPI_Aint)mine * sizeof(int), sizeof(int), MPI_INFO_NULL, node,
                            &base, &win);
    int *flavor, flag;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    TEST_ASSERT(flag && *flavor == MPI_WIN_FLAVOR_SHARED);
    int **bases = malloc(size * sizeof(int *));
    MPI_Aint *sizes = malloc(size * sizeof(MPI_Aint));
    char *end = NULL; /* where the previous rank with memory ends */
    for (int r = 0; r < size; r++) {
        int du;
        MPI_Win_shared_query(win, r, &sizes[r], &du, &bases[r]);
        TEST_ASSERT(du == sizeof(int));
        TEST_ASSERT(sizes[r] == (MPI_Aint)(r == 1 ? 0 : 16 * (r + 1)) * (MPI_Aint)sizeof(int));
        if (!sizes[r]) { /* no memory, no base (as MPICH and Open MPI) */
            TEST_ASSERT(bases[r] == NULL);
            continue;
        }
        if (end) /* contiguous by default (alloc_shared_noncontig not given) */
            TEST_ASSERT((char *)bases[r] == end);
        end = (char *)bases[r] + sizes[r];
    }
    if (mine)
        TEST_ASSERT(bases[rank] == base);
    {
        MPI_Aint s;
        int du;
        int *b;
        MPI_Win_shared_query(win, MPI_PROC_NULL, &s, &du, &b);
        TEST_ASSERT(b == bases[0] && s == sizes[0]);
    }

    /* direct stores into my right neighbour's part, loads after sync + barrier */
    MPI_Win_lock_all(0, win);
    if (sizes[right])
        for (int i = 0; i < (int)(sizes[right] / sizeof(int)); i++)
            bases[right][i] = 1000 * rank + i;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int left = (rank + size - 1) % size;
    for (int i = 0; i < mine; i++)
        TEST_ASSERT_MSG(base[i] == 1000 * left + i, "base[%d]=%d", i, base[i]);
    MPI_Barrier(node);

    /* RMA calls on the shared window: put/get (direct) and fetch_and_op (target) */
    int v = 7 + rank, got = -1;
    if (sizes[right]) {
        MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Win_flush(right, win);
        MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Win_flush(right, win);
        TEST_ASSERT(got == v);
    }
    MPI_Barrier(node);
    /* counter in rank 0's part: everybody adds 1 five times */
    if (rank == 0)
        base[1] = 0;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    int one = 1, old;
    for (int k = 0; k < 5; k++) {
        MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 1, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    TEST_ASSERT_MSG(bases[0][1] == 5 * size, "shared counter %d", bases[0][1]);
    MPI_Win_free(&win);

    /* shared_query on a window of another flavor */
    int *b2;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, node, &b2, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Aint s;
    int du, cls, rc = MPI_Win_shared_query(win, 0, &s, &du, &b2);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT(cls == MPI_ERR_RMA_FLAVOR);
    MPI_Win_free(&win);
    free(bases);
    free(sizes);
    MPI_Comm_free(&node);
    return test_finish();
}
