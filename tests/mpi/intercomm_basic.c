/*
 * intercomm_basic.c - intercommunicators: Intercomm_create between the even and the odd
 *   ranks of MPI_COMM_WORLD (groups of different sizes at an odd rank count),
 *   Comm_test_inter, Comm_size/rank/remote_size/group/remote_group, point-to-point
 *   (ranks address the remote group, status sources are remote ranks), Comm_dup,
 *   Comm_split, Comm_create and Comm_free on the intercommunicator, Intercomm_merge
 *   (both orders of high), and every collective on it, blocking and nonblocking
 *   (Barrier, Bcast with MPI_ROOT / MPI_PROC_NULL, Gather(v), Scatter(v), Allgather(v),
 *   Alltoall(v/w), Reduce, Allreduce, Reduce_scatter(_block)), checked against the
 *   values the remote group sent.  Needs at least 2 ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int wme, wsize;

/* world rank of rank r of the even (g = 0) or odd (g = 1) group */
static int wr(int g, int r)
{
    return 2 * r + g;
}

static void collectives(MPI_Comm ic, int g, int nb)
{
    int me, ln, rn;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_size(ic, &ln);
    MPI_Comm_remote_size(ic, &rn);
    int rg = 1 - g, n = 1000;
    MPI_Request q[20];
    int nq = 0;
#define NBC(call_nb, call_b)                                                             \
    do {                                                                                 \
        if (nb)                                                                          \
            TEST_ASSERT(call_nb == MPI_SUCCESS);                                         \
        else                                                                             \
            TEST_ASSERT(call_b == MPI_SUCCESS);                                          \
    } while (0)
#define REQ (&q[nq++])

    /* Barrier */
    NBC(MPI_Ibarrier(ic, REQ), MPI_Barrier(ic));

    /* Bcast: root is rank 1 of the odd group (or 0 if it has one rank) */
    int broot = rn > 1 && g == 0 ? 1 : (ln > 1 && g == 1 ? 1 : 0);
    int *bb = malloc((size_t)n * sizeof(int));
    int root_arg = g == 1 ? (me == broot ? MPI_ROOT : MPI_PROC_NULL) : broot;
    for (int i = 0; i < n; i++)
        bb[i] = g == 1 && me == broot ? i * 3 : -1;
    NBC(MPI_Ibcast(bb, n, MPI_INT, root_arg, ic, REQ),
        MPI_Bcast(bb, n, MPI_INT, root_arg, ic));

    /* Gather / Gatherv to rank 0 of the even group */
    int groot = g == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int sv[2] = {wme * 7, wme * 7 + 1};
    int *gat = malloc(2 * (size_t)rn * sizeof(int)),
        *gatv = malloc(4 * (size_t)rn * sizeof(int));
    int *cnt = malloc((size_t)rn * sizeof(int)), *dis = malloc((size_t)rn * sizeof(int));
    for (int i = 0; i < rn; i++) {
        cnt[i] = 1 + i % 2;
        dis[i] = 4 * i;
    }
    for (int i = 0; i < 4 * rn; i++)
        gatv[i] = -1;
    NBC(MPI_Igather(sv, 2, MPI_INT, gat, 2, MPI_INT, groot, ic, REQ),
        MPI_Gather(sv, 2, MPI_INT, gat, 2, MPI_INT, groot, ic));
    NBC(MPI_Igatherv(sv, 1 + me % 2, MPI_INT, gatv, cnt, dis, MPI_INT, groot, ic, REQ),
        MPI_Gatherv(sv, 1 + me % 2, MPI_INT, gatv, cnt, dis, MPI_INT, groot, ic));

    /* Scatter / Scatterv from rank 0 of the odd group */
    int sroot = g == 1 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int *ssrc = malloc(4 * (size_t)rn * sizeof(int)), sc[2] = {-1, -1}, scv[2] = {-1, -1};
    for (int i = 0; i < 4 * rn; i++)
        ssrc[i] = 500 + i;
    NBC(MPI_Iscatter(ssrc, 2, MPI_INT, sc, 2, MPI_INT, sroot, ic, REQ),
        MPI_Scatter(ssrc, 2, MPI_INT, sc, 2, MPI_INT, sroot, ic));
    NBC(MPI_Iscatterv(ssrc, cnt, dis, MPI_INT, scv, 1 + me % 2, MPI_INT, sroot, ic, REQ),
        MPI_Scatterv(ssrc, cnt, dis, MPI_INT, scv, 1 + me % 2, MPI_INT, sroot, ic));

    /* Allgather / Allgatherv: everyone gets the remote group's values */
    int *ag = malloc(2 * (size_t)rn * sizeof(int)),
        *agv = malloc(4 * (size_t)rn * sizeof(int));
    for (int i = 0; i < 4 * rn; i++)
        agv[i] = -1;
    NBC(MPI_Iallgather(sv, 2, MPI_INT, ag, 2, MPI_INT, ic, REQ),
        MPI_Allgather(sv, 2, MPI_INT, ag, 2, MPI_INT, ic));
    NBC(MPI_Iallgatherv(sv, 1 + me % 2, MPI_INT, agv, cnt, dis, MPI_INT, ic, REQ),
        MPI_Allgatherv(sv, 1 + me % 2, MPI_INT, agv, cnt, dis, MPI_INT, ic));

    /* Alltoall(v/w): block for remote rank j = wme*1000 + j */
    int *a2s = malloc((size_t)rn * sizeof(int)), *a2r = malloc((size_t)rn * sizeof(int));
    int *a2v = malloc((size_t)rn * sizeof(int)), *a2w = malloc((size_t)rn * sizeof(int));
    int *one = malloc((size_t)rn * sizeof(int)), *idx = malloc((size_t)rn * sizeof(int));
    int *bidx = malloc((size_t)rn * sizeof(int));
    MPI_Datatype *ty = malloc((size_t)rn * sizeof(MPI_Datatype));
    for (int j = 0; j < rn; j++) {
        a2s[j] = wme * 1000 + j;
        a2r[j] = a2v[j] = a2w[j] = -1;
        one[j] = 1;
        idx[j] = j;
        bidx[j] = j * (int)sizeof(int);
        ty[j] = MPI_INT;
    }
    NBC(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, ic, REQ),
        MPI_Alltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, ic));
    NBC(MPI_Ialltoallv(a2s, one, idx, MPI_INT, a2v, one, idx, MPI_INT, ic, REQ),
        MPI_Alltoallv(a2s, one, idx, MPI_INT, a2v, one, idx, MPI_INT, ic));
    NBC(MPI_Ialltoallw(a2s, one, bidx, ty, a2w, one, bidx, ty, ic, REQ),
        MPI_Alltoallw(a2s, one, bidx, ty, a2w, one, bidx, ty, ic));

    /* Reduce to rank 0 of the odd group; Allreduce; non-commutative order checked with
     * MPI_SUM on values and MPI_MAX */
    int red[3] = {-1, -1, -1}, mine[3] = {wme, 1, me}, all[3] = {-1, -1, -1};
    int rroot = g == 1 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    NBC(MPI_Ireduce(mine, red, 3, MPI_INT, MPI_SUM, rroot, ic, REQ),
        MPI_Reduce(mine, red, 3, MPI_INT, MPI_SUM, rroot, ic));
    int amax[3];
    NBC(MPI_Iallreduce(mine, all, 3, MPI_INT, MPI_SUM, ic, REQ),
        MPI_Allreduce(mine, all, 3, MPI_INT, MPI_SUM, ic));
    NBC(MPI_Iallreduce(mine, amax, 3, MPI_INT, MPI_MAX, ic, REQ),
        MPI_Allreduce(mine, amax, 3, MPI_INT, MPI_MAX, ic));

    /* Reduce_scatter_block: each group scatters the remote group's sum, 2 per rank.
     * The totals must match: both groups give 2 * (max group size) elements, and the
     * counts of Reduce_scatter are chosen to sum to the same. */
    int big = ln > rn ? ln : rn, tot = 2 * big;
    int *rsin = malloc((size_t)tot * sizeof(int)), rsb[2] = {-1, -1};
    for (int i = 0; i < tot; i++)
        rsin[i] = wme + i;
    int *rcnt = calloc((size_t)ln, sizeof(int)), *rsv = malloc((size_t)tot * sizeof(int));
    for (int i = 0; i < ln; i++)
        rcnt[i] = 2;
    rcnt[0] += tot - 2 * ln; /* rank 0 takes the rest */
    for (int i = 0; i < tot; i++)
        rsv[i] = -1;
    int rsblk_ok = ln == rn; /* Reduce_scatter_block needs equal totals: equal groups */
    if (rsblk_ok)
        NBC(MPI_Ireduce_scatter_block(rsin, rsb, 2, MPI_INT, MPI_SUM, ic, REQ),
            MPI_Reduce_scatter_block(rsin, rsb, 2, MPI_INT, MPI_SUM, ic));
    NBC(MPI_Ireduce_scatter(rsin, rsv, rcnt, MPI_INT, MPI_SUM, ic, REQ),
        MPI_Reduce_scatter(rsin, rsv, rcnt, MPI_INT, MPI_SUM, ic));

    if (nb)
        TEST_ASSERT(MPI_Waitall(nq, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);

    /* checks */
    if (g == 0)
        for (int i = 0; i < n; i++)
            TEST_ASSERT_MSG(bb[i] == i * 3, "bcast[%d] = %d", i, bb[i]);
    if (g == 1 && me != broot)
        TEST_ASSERT(bb[0] == -1);
    if (g == 0 && me == 0)
        for (int j = 0; j < rn; j++) {
            TEST_ASSERT_MSG(gat[2 * j] == wr(rg, j) * 7 &&
                                gat[2 * j + 1] == wr(rg, j) * 7 + 1,
                            "gather from %d", j);
            for (int e = 0; e < 1 + j % 2; e++)
                TEST_ASSERT_MSG(gatv[4 * j + e] == wr(rg, j) * 7 + e, "gatherv %d.%d", j,
                                e);
            TEST_ASSERT(gatv[4 * j + 1 + j % 2] == -1);
        }
    if (g == 0) {
        TEST_ASSERT_MSG(sc[0] == 500 + 2 * me && sc[1] == 501 + 2 * me, "scatter %d %d",
                        sc[0], sc[1]);
        for (int e = 0; e < 1 + me % 2; e++)
            TEST_ASSERT_MSG(scv[e] == 500 + 4 * me + e, "scatterv %d", e);
    }
    for (int j = 0; j < rn; j++) {
        TEST_ASSERT_MSG(ag[2 * j] == wr(rg, j) * 7 && ag[2 * j + 1] == wr(rg, j) * 7 + 1,
                        "allgather from %d: %d", j, ag[2 * j]);
        for (int e = 0; e < 1 + j % 2; e++)
            TEST_ASSERT_MSG(agv[4 * j + e] == wr(rg, j) * 7 + e, "allgatherv %d.%d", j,
                            e);
        int want = wr(rg, j) * 1000 + me;
        TEST_ASSERT_MSG(a2r[j] == want && a2v[j] == want && a2w[j] == want,
                        "alltoall(v/w) from %d: %d %d %d want %d", j, a2r[j], a2v[j],
                        a2w[j], want);
    }
    int rsum = 0, rmax = 0;
    for (int j = 0; j < rn; j++) {
        rsum += wr(rg, j);
        rmax = wr(rg, j);
    }
    if (g == 1 && me == 0)
        TEST_ASSERT_MSG(red[0] == rsum && red[1] == rn && red[2] == rn * (rn - 1) / 2,
                        "reduce %d %d %d", red[0], red[1], red[2]);
    TEST_ASSERT_MSG(all[0] == rsum && all[1] == rn && all[2] == rn * (rn - 1) / 2,
                    "allreduce %d %d %d", all[0], all[1], all[2]);
    TEST_ASSERT(amax[0] == rmax && amax[1] == 1 && amax[2] == rn - 1);
    int off = 0;
    for (int i = 0; i < me; i++)
        off += rcnt[i];
    for (int e = 0; e < rcnt[me]; e++)
        TEST_ASSERT_MSG(rsv[e] == rsum + rn * (off + e), "reduce_scatter %d: %d", e,
                        rsv[e]);
    if (rsblk_ok)
        for (int e = 0; e < 2; e++)
            TEST_ASSERT_MSG(rsb[e] == rsum + rn * (2 * me + e), "reduce_scatter_block %d",
                            e);
    free(bb);
    free(gat);
    free(gatv);
    free(cnt);
    free(dis);
    free(ssrc);
    free(ag);
    free(agv);
    free(a2s);
    free(a2r);
    free(a2v);
    free(a2w);
    free(one);
    free(idx);
    free(bidx);
    free(ty);
    free(rsin);
    free(rcnt);
    free(rsv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wme);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        printf("needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int g = wme % 2, flag = -1;
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, g, wme, &local);
    /* leaders: rank 0 of each group = world ranks 0 and 1 */
    TEST_ASSERT(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - g, 77, &ic) ==
                MPI_SUCCESS);
    int ln, rn, me;
    MPI_Comm_test_inter(ic, &flag);
    TEST_ASSERT(flag == 1);
    MPI_Comm_test_inter(local, &flag);
    TEST_ASSERT(flag == 0);
    MPI_Comm_size(ic, &ln);
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rn);
    int nodd = wsize / 2, neven = wsize - nodd;
    TEST_ASSERT(ln == (g ? nodd : neven) && rn == (g ? neven : nodd) && me == wme / 2);

    /* groups: translate to world ranks */
    MPI_Group lg, rgp, wg;
    MPI_Comm_group(ic, &lg);
    MPI_Comm_remote_group(ic, &rgp);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *r = malloc((size_t)wsize * sizeof(int)),
        *t = malloc((size_t)wsize * sizeof(int));
    for (int i = 0; i < wsize; i++)
        r[i] = i;
    MPI_Group_translate_ranks(rgp, rn, r, wg, t);
    for (int i = 0; i < rn; i++)
        TEST_ASSERT(t[i] == wr(1 - g, i));
    MPI_Group_translate_ranks(lg, ln, r, wg, t);
    for (int i = 0; i < ln; i++)
        TEST_ASSERT(t[i] == wr(g, i));
    MPI_Group_free(&lg);
    MPI_Group_free(&rgp);
    MPI_Group_free(&wg);

    /* point-to-point: rank i of the even group <-> rank i of the odd group */
    if (me < rn) {
        int out = wme, in = -1;
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_INT, me, 5, &in, 1, MPI_INT, me, 5, ic, &st);
        TEST_ASSERT(in == wr(1 - g, me) && st.MPI_SOURCE == me && st.MPI_TAG == 5);
        MPI_Request rq;
        MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 6, ic, &rq);
        MPI_Send(&out, 1, MPI_INT, me, 6, ic);
        MPI_Wait(&rq, &st);
        TEST_ASSERT(st.MPI_SOURCE == me && in == wr(1 - g, me));
    }

    collectives(ic, g, 0);
    collectives(ic, g, 1);

    /* dup: same groups, new context; collectives on both at once do not mix */
    MPI_Comm d;
    TEST_ASSERT(MPI_Comm_dup(ic, &d) == MPI_SUCCESS);
    MPI_Comm_test_inter(d, &flag);
    TEST_ASSERT(flag == 1);
    int x = wme, y1 = -1, y2 = -1;
    MPI_Request q2[2];
    MPI_Iallreduce(&x, &y1, 1, MPI_INT, MPI_MAX, d, &q2[0]);
    MPI_Iallreduce(&x, &y2, 1, MPI_INT, MPI_MIN, ic, &q2[1]);
    MPI_Waitall(2, q2, MPI_STATUSES_IGNORE);
    TEST_ASSERT(y1 == wr(1 - g, rn - 1) && y2 == 1 - g);
    collectives(d, g, 1);
    int cmp = -1;
    MPI_Comm_compare(ic, d, &cmp);
    TEST_ASSERT_MSG(cmp == MPI_CONGRUENT, "compare(ic, dup) = %d", cmp);
    MPI_Comm_compare(ic, local, &cmp);
    TEST_ASSERT(cmp == MPI_UNEQUAL);

    /* split: color by local rank parity; the remote side pairs colors */
    MPI_Comm sp;
    TEST_ASSERT(MPI_Comm_split(ic, me % 2, -me, &sp) == MPI_SUCCESS);
    int want_l = (ln + 1 - me % 2) / 2, want_r = (rn + 1 - me % 2) / 2;
    if (want_r == 0) {
        TEST_ASSERT(sp == MPI_COMM_NULL);
    } else {
        int sl, sr, srank;
        TEST_ASSERT(sp != MPI_COMM_NULL);
        MPI_Comm_size(sp, &sl);
        MPI_Comm_remote_size(sp, &sr);
        MPI_Comm_rank(sp, &srank);
        TEST_ASSERT_MSG(sl == want_l && sr == want_r, "split sizes %d %d", sl, sr);
        TEST_ASSERT(srank == want_l - 1 - me / 2); /* key -me reverses the order */
        int v = wme, s = -1;
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, sp);
        int e = 0;
        for (int j = 0; j < rn; j++)
            if (j % 2 == me % 2)
                e += wr(1 - g, j);
        TEST_ASSERT_MSG(s == e, "split allreduce %d want %d", s, e);
        MPI_Comm_free(&sp);
    }

    /* create: the first local rank of each group only */
    MPI_Group lg0, sub;
    int zero = 0;
    MPI_Comm_group(ic, &lg0);
    MPI_Group_incl(lg0, 1, &zero, &sub);
    MPI_Comm cr;
    TEST_ASSERT(MPI_Comm_create(ic, sub, &cr) == MPI_SUCCESS);
    TEST_ASSERT((cr == MPI_COMM_NULL) == (me != 0));
    if (cr != MPI_COMM_NULL) {
        int v = wme, s = -1, cs;
        MPI_Comm_remote_size(cr, &cs);
        TEST_ASSERT(cs == 1);
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, cr);
        TEST_ASSERT(s == 1 - g);
        MPI_Comm_free(&cr);
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg0);

    /* merge: odd group high -> even ranks first; then the reverse */
    for (int hi = 0; hi < 2; hi++) {
        MPI_Comm m;
        TEST_ASSERT(MPI_Intercomm_merge(ic, hi ? !g : g, &m) == MPI_SUCCESS);
        int mr, ms, lowg = hi ? 1 : 0;
        MPI_Comm_rank(m, &mr);
        MPI_Comm_size(m, &ms);
        TEST_ASSERT(ms == wsize);
        int lown = lowg ? nodd : neven;
        TEST_ASSERT_MSG(mr == (g == lowg ? me : lown + me), "merge hi=%d rank %d", hi,
                        mr);
        int s = 0, v = wme;
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, m);
        TEST_ASSERT(s == wsize * (wsize - 1) / 2);
        MPI_Comm_test_inter(m, &flag);
        TEST_ASSERT(flag == 0);
        MPI_Comm_free(&m);
    }

    /* intercomm-only calls on an intracomm fail cleanly */
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    int dummy;
    TEST_ASSERT(MPI_Comm_remote_size(local, &dummy) != MPI_SUCCESS);

    MPI_Comm_free(&d);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    free(r);
    free(t);
    return test_finish();
}
