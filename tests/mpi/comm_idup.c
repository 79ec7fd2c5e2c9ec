/*
 * comm_idup.c - MPI_Comm_idup is nonblocking: idups of two communicators started in
 *   opposite orders on even and odd ranks and waited for together (blocking
 *   agreements deadlock there), several idups of one communicator in flight, an idup
 *   overlapping an Ibarrier and p2p traffic, a blocking Comm_dup while idups are
 *   pending, Comm_idup_with_info.  Every new communicator must work (Allreduce, a ring
 *   exchange) and keep its traffic apart from the others (same tags on all of them).
 */
#include <stdlib.h>

#include "mpitest.h"

static void use(MPI_Comm c, int salt)
{
    int rank, size, sum = 0;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    TEST_ASSERT_MSG(sum == size * (size - 1) / 2, "salt %d: sum %d", salt, sum);
    int res = MPI_UNEQUAL;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
    (void)res;
}

/* The same tag on n communicators at once: each message must arrive on its own. */
static void apart(MPI_Comm *cs, int n)
{
    int rank, size;
    MPI_Comm_rank(cs[0], &rank);
    MPI_Comm_size(cs[0], &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request *rq = malloc(sizeof(*rq) * 2 * (size_t)n);
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        out[i] = rank * 1000 + i;
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, left, 0, cs[i], &rq[i]);
    }
    for (int i = n - 1; i >= 0; i--)
        MPI_Isend(&out[i], 1, MPI_INT, right, 0, cs[i], &rq[n + i]);
    MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++)
        TEST_ASSERT_MSG(in[i] == left * 1000 + i, "communicator %d got %d", i, in[i]);
    free(rq);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* two communicators, idups started in opposite orders */
    MPI_Comm a = MPI_COMM_WORLD, b, na, nb;
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Request rq[4];
    if (rank % 2 == 0) {
        MPI_Comm_idup(a, &na, &rq[0]);
        MPI_Comm_idup(b, &nb, &rq[1]);
    } else {
        MPI_Comm_idup(b, &nb, &rq[1]);
        MPI_Comm_idup(a, &na, &rq[0]);
    }
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    TEST_ASSERT(na != MPI_COMM_NULL && nb != MPI_COMM_NULL && na != nb);
    use(na, 1);
    use(nb, 2);
    MPI_Comm all[4] = {MPI_COMM_WORLD, b, na, nb};
    apart(all, 4);

    /* a split (halves) and world, crossing orders again; Test loops to complete */
    MPI_Comm half, nh, nw;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (rank % 2) {
        MPI_Comm_idup(half, &nh, &rq[0]);
        MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &nw, &rq[1]);
    } else {
        MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &nw, &rq[1]);
        MPI_Comm_idup(half, &nh, &rq[0]);
    }
    int flag = 0;
    while (!flag)
        MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
    use(nh, 3);
    use(nw, 4);

    /* five idups of one communicator in flight, overlapping an Ibarrier, p2p
     * traffic on the parent and a blocking dup of another communicator */
    MPI_Comm many[5], d;
    MPI_Request mr[8];
    int token = rank, got = -1;
    MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &mr[5]);
    for (int i = 0; i < 3; i++)
        MPI_Comm_idup(MPI_COMM_WORLD, &many[i], &mr[i]);
    MPI_Ibarrier(MPI_COMM_WORLD, &mr[6]);
    MPI_Comm_dup(b, &d);
    for (int i = 3; i < 5; i++)
        MPI_Comm_idup(MPI_COMM_WORLD, &many[i], &mr[i]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD, &mr[7]);
    MPI_Waitall(8, mr, MPI_STATUSES_IGNORE);
    TEST_ASSERT(got == (rank + size - 1) % size);
    for (int i = 0; i < 5; i++)
        use(many[i], 10 + i);
    use(d, 20);
    MPI_Comm all2[8] = {many[0], many[1], many[2], many[3], many[4], d, na, nw};
    apart(all2, 8);

    for (int i = 0; i < 5; i++)
        MPI_Comm_free(&many[i]);
    MPI_Comm_free(&d);
    MPI_Comm_free(&nh);
    MPI_Comm_free(&nw);
    MPI_Comm_free(&half);
    MPI_Comm_free(&na);
    MPI_Comm_free(&nb);
    MPI_Comm_free(&b);
    return test_finish();
}
