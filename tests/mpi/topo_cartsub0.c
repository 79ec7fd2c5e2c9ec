/*
 * topo_cartsub0.c - MPI_Cart_sub keeping no dimension gives a zero-dimensional
 *   Cartesian topology: one process (rank 0 of the old communicator) gets a
 *   communicator congruent to MPI_COMM_SELF with 0 dimensions, the others get
 *   MPI_COMM_NULL, as MPI_Cart_create with ndims 0 gives.  Keeping every dimension
 *   and keeping some still partition the grid as before.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 1-D grid of everyone, keep nothing */
    int dims1[1] = {size}, per1[1] = {0}, keep1[1] = {0};
    MPI_Comm cart, sub;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &cart);
    MPI_Cart_sub(cart, keep1, &sub);
    int crank;
    MPI_Comm_rank(cart, &crank);
    if (crank == 0) {
        TEST_ASSERT(sub != MPI_COMM_NULL);
        if (sub != MPI_COMM_NULL) {
            int res = MPI_UNEQUAL, nd = -1, st = -1;
            MPI_Comm_compare(MPI_COMM_SELF, sub, &res);
            TEST_ASSERT_MSG(res == MPI_CONGRUENT, "compare gives %d", res);
            MPI_Topo_test(sub, &st);
            TEST_ASSERT(st == MPI_CART);
            MPI_Cartdim_get(sub, &nd);
            TEST_ASSERT_MSG(nd == 0, "%d dimensions", nd);
            MPI_Comm_free(&sub);
        }
    } else {
        TEST_ASSERT_MSG(sub == MPI_COMM_NULL, "rank %d got a communicator", crank);
        if (sub != MPI_COMM_NULL)
            MPI_Comm_free(&sub);
    }

    /* keep every dimension: the same grid */
    int keepall[1] = {1}, ssize = -1;
    MPI_Cart_sub(cart, keepall, &sub);
    MPI_Comm_size(sub, &ssize);
    TEST_ASSERT_MSG(ssize == size, "size %d", ssize);
    MPI_Comm_free(&sub);
    MPI_Comm_free(&cart);

    /* 2-D grid (2 x size/2), keep nothing, then keep one dimension */
    if (size >= 2) {
        int d2[2] = {2, size / 2}, p2[2] = {0, 1}, none[2] = {0, 0}, rows[2] = {0, 1};
        MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart);
        if (cart != MPI_COMM_NULL) {
            MPI_Comm_rank(cart, &crank);
            MPI_Cart_sub(cart, none, &sub);
            TEST_ASSERT_MSG((crank == 0) == (sub != MPI_COMM_NULL), "rank %d: %s", crank,
                            sub == MPI_COMM_NULL ? "null" : "a communicator");
            if (sub != MPI_COMM_NULL)
                MPI_Comm_free(&sub);
            MPI_Cart_sub(cart, rows, &sub);
            MPI_Comm_size(sub, &ssize);
            TEST_ASSERT_MSG(ssize == size / 2, "row size %d", ssize);
            int sum = -1, one = 1;
            MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, sub);
            TEST_ASSERT(sum == size / 2);
            MPI_Comm_free(&sub);
            MPI_Comm_free(&cart);
        }
    }
    return test_finish();
}
