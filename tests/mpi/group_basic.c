/*
 * group_basic.c - group operations against hand-computed rank lists: incl/excl,
 *   range_incl/range_excl (positive and negative strides), union/intersection/
 *   difference (order rules of the standard), translate_ranks (incl. PROC_NULL and
 *   UNDEFINED), compare (IDENT/SIMILAR/UNEQUAL), size/rank, GROUP_EMPTY results,
 *   error class for a duplicate rank with MPI_ERRORS_RETURN.
 * Rank 0 prints "No Errors" when every rank found none.
 */
#include <mpi.h>
#include <stdio.h>

static int errs, me, p;
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond) && errs++ < 10) {                                        \
            fprintf(stderr, "[%d] line %d: ", me, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

/* world ranks of the members of g, in group order */
static int members(MPI_Group g, MPI_Group wg, int *out)
{
    int n, idx[256];
    MPI_Group_size(g, &n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, wg, out);
    return n;
}

static void expect(MPI_Group g, MPI_Group wg, int n, const int *want, const char *what)
{
    int got[256], k = members(g, wg, got);
    int ok = k == n;
    for (int i = 0; ok && i < n; i++)
        ok = got[i] == want[i];
    CHECK(ok, "%s: size %d want %d", what, k, n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p < 4 || p > 200) { /* needs a few ranks to be meaningful */
        if (me == 0)
            printf("No Errors\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Group wg, a, b, u, x, d, e;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int sz, rk;
    MPI_Group_size(wg, &sz);
    MPI_Group_rank(wg, &rk);
    CHECK(sz == p && rk == me, "world group");

    int ia[] = {3, 0, 1}; /* a = {3, 0, 1} */
    MPI_Group_incl(wg, 3, ia, &a);
    expect(a, wg, 3, ia, "incl");
    MPI_Group_rank(a, &rk);
    CHECK(rk == (me == 3 ? 0 : me == 0 ? 1 : me == 1 ? 2 : MPI_UNDEFINED), "incl rank %d", rk);
    int ib[] = {0, 2};
    MPI_Group_excl(wg, 2, ib, &b); /* b = {1, 3, 4, ..., p-1} */
    {
        int want[256], k = 0;
        for (int r = 0; r < p; r++)
            if (r != 0 && r != 2)
                want[k++] = r;
        expect(b, wg, k, want, "excl");
    }
    MPI_Group_union(a, b, &u); /* a's order, then b's extras: 3 0 1 4 5 ... */
    {
        int want[256] = {3, 0, 1}, k = 3;
        for (int r = 4; r < p; r++)
            want[k++] = r;
        expect(u, wg, k, want, "union");
    }
    MPI_Group_intersection(a, b, &x); /* a's order: 3 1 */
    {
        int want[] = {3, 1};
        expect(x, wg, 2, want, "intersection");
    }
    MPI_Group_difference(a, b, &d); /* {0} */
    {
        int want[] = {0};
        expect(d, wg, 1, want, "difference");
    }
    MPI_Group_difference(x, a, &e);
    CHECK(e == MPI_GROUP_EMPTY, "empty difference is GROUP_EMPTY");

    int tr_in[] = {0, 1, 2, MPI_PROC_NULL}, tr_out[4];
    MPI_Group_translate_ranks(a, 4, tr_in, b, tr_out);
    CHECK(tr_out[0] == 1 && tr_out[1] == MPI_UNDEFINED && tr_out[2] == 0 &&
              tr_out[3] == MPI_PROC_NULL,
          "translate %d %d %d %d", tr_out[0], tr_out[1], tr_out[2], tr_out[3]);

    int cmp;
    MPI_Group_compare(wg, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "ident");
    MPI_Group rev, r2;
    int ranges[1][3] = {{p - 1, 0, -1}};
    MPI_Group_range_incl(wg, 1, ranges, &rev);
    {
        int want[256];
        for (int i = 0; i < p; i++)
            want[i] = p - 1 - i;
        expect(rev, wg, p, want, "range_incl negative stride");
    }
    MPI_Group_compare(wg, rev, &cmp);
    CHECK(cmp == MPI_SIMILAR, "similar %d", cmp);
    MPI_Group_compare(wg, a, &cmp);
    CHECK(cmp == MPI_UNEQUAL, "unequal %d", cmp);
    int ranges2[2][3] = {{0, p - 1, 2}, {1, 1, 1}}; /* exclude evens and 1 */
    MPI_Group_range_excl(wg, 2, ranges2, &r2);
    {
        int want[256], k = 0;
        for (int r = 3; r < p; r += 2)
            want[k++] = r;
        expect(r2, wg, k, want, "range_excl");
    }
    /* a duplicate rank is an error (MPI_ERR_RANK) with ERRORS_RETURN */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dup[] = {1, 1};
    MPI_Group bad = MPI_GROUP_NULL;
    int rc = MPI_Group_incl(wg, 2, dup, &bad), cls;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "duplicate rank rc=%d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Group all[] = {a, b, u, x, d, rev, r2, wg};
    for (int i = 0; i < 8; i++) {
        MPI_Group_free(&all[i]);
        CHECK(all[i] == MPI_GROUP_NULL, "free sets GROUP_NULL");
    }
    int tot;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && tot == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return tot != 0;
}
