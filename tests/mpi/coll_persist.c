/*
 * coll_persist.c - MPI-4 persistent collectives: every *_init this library has, started
 *   several times with new data each round (MPI_Start + MPI_Wait, MPI_Startall +
 *   MPI_Waitall, MPI_Test loops), results checked against the values each rank put in;
 *   an inactive request completes at once; Request_free at the end; a Bcast_init and a
 *   Barrier_init started in different orders on different ranks (matching follows the
 *   order of the *_init calls); Alltoallv/Gatherv/Reduce_scatter/Alltoallw_init and a
 *   Neighbor_alltoall_init on a periodic ring.  Also one
 *   Allreduce_init on an intercommunicator (even vs odd ranks) when there are 2+ ranks.
 */
#include <stdlib.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm comm = MPI_COMM_WORLD;
    int root = np - 1;
    int sv, ar, rd, bc[3], sc, ex, rsb[2], rsin[64], sca;
    int *ga = malloc((size_t)np * sizeof(int)), *ag = malloc((size_t)np * sizeof(int));
    int *a2s = malloc((size_t)np * sizeof(int)), *a2r = malloc((size_t)np * sizeof(int));
    int *scs = malloc((size_t)np * sizeof(int));
    MPI_Request q[12];
    MPI_Barrier_init(comm, MPI_INFO_NULL, &q[0]);
    MPI_Allreduce_init(&sv, &ar, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[1]);
    MPI_Reduce_init(&sv, &rd, 1, MPI_INT, MPI_MAX, root, comm, MPI_INFO_NULL, &q[2]);
    MPI_Bcast_init(bc, 3, MPI_INT, root, comm, MPI_INFO_NULL, &q[3]);
    MPI_Gather_init(&sv, 1, MPI_INT, ga, 1, MPI_INT, root, comm, MPI_INFO_NULL, &q[4]);
    MPI_Allgather_init(&sv, 1, MPI_INT, ag, 1, MPI_INT, comm, MPI_INFO_NULL, &q[5]);
    MPI_Alltoall_init(a2s, 1, MPI_INT, a2r, 1, MPI_INT, comm, MPI_INFO_NULL, &q[6]);
    MPI_Scan_init(&sv, &sc, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[7]);
    MPI_Exscan_init(&sv, &ex, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[8]);
    MPI_Reduce_scatter_block_init(rsin, rsb, 2, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                                  &q[9]);
    MPI_Scatter_init(scs, 1, MPI_INT, &sca, 1, MPI_INT, root, comm, MPI_INFO_NULL,
                     &q[10]);
    int nq = np <= 32 ? 11 : 9; /* rsin holds 2 ints for up to 32 ranks */
    /* inactive: Wait returns at once */
    TEST_ASSERT(MPI_Wait(&q[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int it = 0; it < 6; it++) {
        sv = me * 10 + it;
        for (int i = 0; i < 3; i++)
            bc[i] = me == root ? it * 100 + i : -1;
        for (int j = 0; j < np; j++) {
            a2s[j] = me * 1000 + j + it;
            scs[j] = me == root ? j * 7 + it : -1;
        }
        for (int i = 0; i < 2 * np && i < 64; i++)
            rsin[i] = me + i + it;
        ar = rd = sc = ex = sca = -1;
        if (it % 3 == 0) {
            for (int i = 0; i < nq; i++)
                TEST_ASSERT(MPI_Start(&q[i]) == MPI_SUCCESS);
            for (int i = nq - 1; i >= 0; i--)
                TEST_ASSERT(MPI_Wait(&q[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        } else if (it % 3 == 1) {
            TEST_ASSERT(MPI_Startall(nq, q) == MPI_SUCCESS);
            TEST_ASSERT(MPI_Waitall(nq, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        } else {
            MPI_Startall(nq, q);
            int flag = 0;
            while (!flag)
                MPI_Testall(nq, q, &flag, MPI_STATUSES_IGNORE);
        }
        int sum = 10 * np * (np - 1) / 2 + np * it;
        TEST_ASSERT_MSG(ar == sum, "it %d allreduce %d want %d", it, ar, sum);
        if (me == root) {
            TEST_ASSERT(rd == (np - 1) * 10 + it);
            for (int j = 0; j < np; j++)
                TEST_ASSERT(ga[j] == j * 10 + it);
        }
        for (int i = 0; i < 3; i++)
            TEST_ASSERT(bc[i] == it * 100 + i);
        for (int j = 0; j < np; j++) {
            TEST_ASSERT(ag[j] == j * 10 + it);
            TEST_ASSERT(a2r[j] == j * 1000 + me + it);
        }
        TEST_ASSERT(sc == 10 * me * (me + 1) / 2 + (me + 1) * it);
        if (me > 0)
            TEST_ASSERT(ex == 10 * me * (me - 1) / 2 + me * it);
        if (nq > 9) {
            for (int e = 0; e < 2; e++)
                TEST_ASSERT_MSG(rsb[e] == np * (np - 1) / 2 + np * (2 * me + e + it),
                                "rsb %d = %d", e, rsb[e]);
            TEST_ASSERT(sca == me * 7 + it);
        }
    }
    for (int i = 0; i < 11; i++)
        TEST_ASSERT(MPI_Request_free(&q[i]) == MPI_SUCCESS && q[i] == MPI_REQUEST_NULL);

    /* matching follows the *_init order, not the Start order (MPI-4): rank 0 starts the
     * Bcast first, the others the Barrier first */
    {
        int a = -1;
        MPI_Request pr[2];
        MPI_Bcast_init(&a, 1, MPI_INT, 0, comm, MPI_INFO_NULL, &pr[0]);
        MPI_Barrier_init(comm, MPI_INFO_NULL, &pr[1]);
        for (int it = 0; it < 3; it++) {
            a = me == 0 ? 42 + it : -1;
            MPI_Start(&pr[me == 0 ? 0 : 1]);
            MPI_Start(&pr[me == 0 ? 1 : 0]);
            MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
            TEST_ASSERT_MSG(a == 42 + it, "out-of-order start: bcast gave %d", a);
        }
        MPI_Request_free(&pr[0]);
        MPI_Request_free(&pr[1]);
    }

    /* v/w forms and a persistent neighbor collective on a ring */
    {
        int *cnt = malloc((size_t)np * sizeof(int)),
            *dis = malloc((size_t)np * sizeof(int));
        int *vs = malloc((size_t)np * sizeof(int)),
            *vr = malloc((size_t)np * sizeof(int));
        int *gv = malloc((size_t)np * sizeof(int)),
            *rs = malloc((size_t)np * sizeof(int));
        MPI_Datatype *ty = malloc((size_t)np * sizeof(MPI_Datatype));
        int *wr = malloc((size_t)np * sizeof(int)),
            *bd = malloc((size_t)np * sizeof(int));
        for (int j = 0; j < np; j++) {
            cnt[j] = 1;
            dis[j] = np - 1 - j; /* reversed placement */
            bd[j] = j * (int)sizeof(int);
            ty[j] = MPI_INT;
        }
        int one = 1, rsv = -1, per = 1, nbs[2], nbr[2];
        MPI_Comm ring;
        MPI_Cart_create(comm, 1, &np, &per, 0, &ring);
        MPI_Request v[5];
        MPI_Alltoallv_init(vs, cnt, dis, MPI_INT, vr, cnt, dis, MPI_INT, comm,
                           MPI_INFO_NULL, &v[0]);
        MPI_Gatherv_init(&one, 1, MPI_INT, gv, cnt, dis, MPI_INT, 0, comm, MPI_INFO_NULL,
                         &v[1]);
        MPI_Reduce_scatter_init(rs, &rsv, cnt, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                                &v[2]);
        MPI_Alltoallw_init(vs, cnt, bd, ty, wr, cnt, bd, ty, comm, MPI_INFO_NULL, &v[3]);
        MPI_Neighbor_alltoall_init(nbs, 1, MPI_INT, nbr, 1, MPI_INT, ring, MPI_INFO_NULL,
                                   &v[4]);
        for (int it = 0; it < 3; it++) {
            for (int j = 0; j < np; j++) {
                vs[j] = me * 100 + j + it; /* block for rank j at dis[j] (reversed) */
                rs[j] = me + j + it;
            }
            one = me + it;
            nbs[0] = -(me + it); /* towards me-1 */
            nbs[1] = me + it;    /* towards me+1 */
            MPI_Startall(5, v);
            MPI_Waitall(5, v, MPI_STATUSES_IGNORE);
            for (int j = 0; j < np; j++) {
                TEST_ASSERT_MSG(vr[np - 1 - j] == j * 100 + (np - 1 - me) + it,
                                "alltoallv_init from %d: %d", j, vr[np - 1 - j]);
                TEST_ASSERT(wr[j] == j * 100 + me + it); /* w: block j at j ints */
                if (me == 0)
                    TEST_ASSERT(gv[np - 1 - j] == j + it);
            }
            TEST_ASSERT_MSG(rsv == np * (np - 1) / 2 + np * (me + it),
                            "reduce_scatter %d", rsv);
            int left = (me + np - 1) % np, right = (me + 1) % np;
            TEST_ASSERT_MSG(nbr[0] == left + it && nbr[1] == -(right + it),
                            "neighbor_alltoall_init %d %d", nbr[0], nbr[1]);
        }
        for (int i = 0; i < 5; i++)
            MPI_Request_free(&v[i]);
        MPI_Comm_free(&ring);
        free(cnt);
        free(dis);
        free(vs);
        free(vr);
        free(gv);
        free(rs);
        free(ty);
        free(wr);
        free(bd);
    }

    if (np >= 2) { /* on an intercommunicator */
        MPI_Comm local, ic;
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - me % 2, 9, &ic);
        MPI_Request r;
        int v, s;
        MPI_Allreduce_init(&v, &s, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &r);
        for (int it = 0; it < 3; it++) {
            v = me + it;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            int want = 0, rn = 0;
            for (int j = 1 - me % 2; j < np; j += 2) {
                want += j + it;
                rn++;
            }
            TEST_ASSERT_MSG(s == want, "intercomm allreduce %d want %d", s, want);
        }
        MPI_Request_free(&r);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }
    free(ga);
    free(ag);
    free(a2s);
    free(a2r);
    free(scs);
    return test_finish();
}
