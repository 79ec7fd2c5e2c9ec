/*
 * thr_mixed.c - ranks of one job asking for different thread levels: ranks 0, 4, ...
 *   MPI_Init_thread(MULTIPLE), 1, 5, ... MPI_Init, 2, 6, ... FUNNELED, 3, 7, ...
 *   SERIALIZED (with 2 ranks: MULTIPLE and MPI_Init).  The communicator constructors must still agree on context ids:
 *   Comm_dup, Comm_split, Comm_create, Cart_create, Comm_idup and an
 *   intercommunicator, each used at once with an Allreduce and a message on the same
 *   tag as on its parent.  (A job whose ranks took two different id protocols hung in
 *   its first Comm_dup.)
 */
#include <stdlib.h>

#include "mpitest.h"

static void use(MPI_Comm c, const char *what)
{
    int r, n, sum = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c);
    TEST_ASSERT_MSG(sum == n * (n - 1) / 2, "%s: sum %d", what, sum);
    if (n > 1) {
        int out = r, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 3, &in, 1, MPI_INT, (r + n - 1) % n,
                     3, c, MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(in == (r + n - 1) % n, "%s: got %d", what, in);
    }
}

int main(int argc, char **argv)
{
    int provided = -1, wrank = -1;
    /* the rank before MPI_Init: the launcher's environment */
    const char *e = getenv("PMI_RANK");
    if (!e)
        e = getenv("PMIX_RANK");
    if (!e)
        e = getenv("SLURM_PROCID");
    wrank = e ? atoi(e) : 0;
    static const int level[4] = {MPI_THREAD_MULTIPLE, -1, MPI_THREAD_FUNNELED,
                                 MPI_THREAD_SERIALIZED};
    int want = level[wrank % 4];
    if (want < 0)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, want, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT_MSG(!e || rank == wrank, "rank %d, the launcher said %d", rank, wrank);
    if (want >= 0)
        TEST_ASSERT_MSG(provided == want, "provided %d, asked %d", provided, want);

    MPI_Comm dup, split, created, cart, idup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    use(dup, "dup");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
    use(split, "split");
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Comm_create(dup, g, &created);
    MPI_Group_free(&g);
    use(created, "create");
    int dims[1] = {size}, per[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart);
    use(cart, "cart");
    MPI_Request rq;
    MPI_Comm_idup(split, &idup, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    use(idup, "idup");
    if (size >= 2) {
        MPI_Comm ic, merged;
        /* split's keys reverse the order: a group's leader is its highest rank */
        int other = (size - 1) % 2 == rank % 2 ? size - 2 : size - 1;
        MPI_Intercomm_create(split, 0, MPI_COMM_WORLD, other, 17, &ic);
        MPI_Intercomm_merge(ic, rank % 2, &merged);
        use(merged, "merged");
        MPI_Comm_free(&merged);
        MPI_Comm_free(&ic);
    }
    /* ids from both protocols' pools: many at once, all distinct at every rank */
    MPI_Comm many[40];
    for (int i = 0; i < 40; i++)
        MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &many[i]);
    for (int i = 0; i < 40; i++)
        use(many[i], "many");
    for (int i = 0; i < 40; i++)
        MPI_Comm_free(&many[i]);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&created);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    return test_finish();
}
