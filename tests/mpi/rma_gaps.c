/*
 * rma_gaps.c - one-sided communication cases MPICH's suite found wrong:
 *   - MINLOC/MAXLOC accumulates of padded pair types (MPI_DOUBLE_INT, MPI_SHORT_INT,
 *     MPI_LONG_DOUBLE_INT) with a derived target type, and Get_accumulate fetching
 *     them, on Win_create and Win_allocate windows (every engine path: node-shared,
 *     CMA, requests to the target, depending on the environment of the run);
 *   - accumulates where no element moves (zero count or a zero-size type at one end)
 *     are no-ops whatever the types at the other ends;
 *   - a dynamic window whose two attached regions touch: one Put/Accumulate/
 *     Get_accumulate/Get over both;
 *   - Win_get_info reports the hints of MPI-3.1 11.2.1, their defaults and what
 *     Win_set_info or the creation info set;
 *   - Win_create windows over many groups and orders, where the accumulate lock
 *     pages are cached, reused and evicted differently at each rank.
 * Needs 2 or more processes (rank 0 is the origin, rank 1 the target).
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define N 25

struct ldi { long double a; int b; };
struct di { double a; int b; };
struct si { short a; int b; };

static int rank, nproc;

static void pairs(int allocate)
{
    struct ldi *tl;
    struct di *td;
    MPI_Win wl, wd;
    struct ldi ol[N], rl[N];
    struct di od[N], rd[N];
    if (allocate) {
        MPI_Win_allocate(sizeof(struct ldi) * N, sizeof(struct ldi), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &tl, &wl);
        MPI_Win_allocate(sizeof(struct di) * N, sizeof(struct di), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &td, &wd);
    } else {
        MPI_Alloc_mem(sizeof(struct ldi) * N, MPI_INFO_NULL, &tl);
        MPI_Alloc_mem(sizeof(struct di) * N, MPI_INFO_NULL, &td);
        MPI_Win_create(tl, sizeof(struct ldi) * N, sizeof(struct ldi), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &wl);
        MPI_Win_create(td, sizeof(struct di) * N, sizeof(struct di), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &wd);
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wl);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wd);
    for (int i = 0; i < N; i++) {
        tl[i].a = 0;
        tl[i].b = 0;
        td[i].a = 2.0;
        td[i].b = i;
    }
    MPI_Win_unlock(rank, wd);
    MPI_Win_unlock(rank, wl);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Datatype vl, vd;
    MPI_Type_vector(5, 3, 5, MPI_LONG_DOUBLE_INT, &vl);
    MPI_Type_vector(5, 3, 5, MPI_DOUBLE_INT, &vd);
    MPI_Type_commit(&vl);
    MPI_Type_commit(&vd);
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            ol[i].a = 1.0;
            ol[i].b = 1;
            od[i].a = i % 2 ? 3.0 : 1.0; /* odd: bigger, even: smaller */
            od[i].b = 100 + i;
            rd[i].a = -1;
            rd[i].b = -1;
            rl[i].a = -1;
        }
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, wl);
        MPI_Accumulate(ol, 1, vl, 1, 0, 1, vl, MPI_MAXLOC, wl);
        MPI_Win_unlock(1, wl);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, wd);
        /* contiguous origin (count N), derived target: every element once */
        MPI_Get_accumulate(od, 15, MPI_DOUBLE_INT, rd, 15, MPI_DOUBLE_INT, 1, 0, 1, vd,
                           MPI_MAXLOC, wd);
        MPI_Win_unlock(1, wd);
        for (int k = 0; k < 15; k++) {
            int i = k / 3 * 5 + k % 3; /* the target element k of the vector */
            TEST_ASSERT_MSG(rd[k].a == 2.0 && rd[k].b == i, "fetched %d: %g %d", k,
                            rd[k].a, rd[k].b);
        }
        /* the fetch of MINLOC into a long double pair, no change at the target */
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, wl);
        MPI_Get_accumulate(NULL, 0, MPI_LONG_DOUBLE_INT, rl, 1, vl, 1, 0, 1, vl, MPI_NO_OP,
                           wl);
        MPI_Win_unlock(1, wl);
        for (int i = 0; i < N; i++)
            if (i % 5 < 3)
                TEST_ASSERT_MSG(rl[i].a == 1.0 && rl[i].b == 1, "no_op %d: %Lg %d", i,
                                rl[i].a, rl[i].b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, wl);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, wd);
        for (int i = 0; i < N; i++) {
            int in = i % 5 < 3;
            TEST_ASSERT_MSG(tl[i].a == (in ? 1.0 : 0.0) && tl[i].b == in, "ldi %d: %Lg %d",
                            i, tl[i].a, tl[i].b);
            int k = i / 5 * 3 + i % 5; /* origin element that met it */
            int won = in && k % 2;
            TEST_ASSERT_MSG(td[i].a == (won ? 3.0 : 2.0) && td[i].b == (won ? 100 + k : i),
                            "di %d: %g %d", i, td[i].a, td[i].b);
        }
        MPI_Win_unlock(1, wd);
        MPI_Win_unlock(1, wl);
    }
    MPI_Type_free(&vl);
    MPI_Type_free(&vd);
    MPI_Win_free(&wl);
    MPI_Win_free(&wd);
    if (!allocate) {
        MPI_Free_mem(tl);
        MPI_Free_mem(td);
    }
}

/* MPI_SHORT_INT: 6 bytes in the stream, 8 in memory; many elements so that the
 * requests are cut (32 KiB each) at element boundaries */
static void short_int(void)
{
    enum { M = 20000 };
    struct si *t, *o = malloc(sizeof(*o) * M);
    MPI_Win w;
    MPI_Alloc_mem(sizeof(*t) * M, MPI_INFO_NULL, &t);
    for (int i = 0; i < M; i++) {
        t[i].a = 5;
        t[i].b = i;
        o[i].a = (short)(i % 3 == 0 ? 7 : 5);
        o[i].b = i % 3 == 1 ? i - 1 : i + 1;
    }
    MPI_Win_create(t, sizeof(*t) * M, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_fence(0, w);
    if (rank == 0)
        MPI_Accumulate(o, M, MPI_SHORT_INT, 1, 0, M, MPI_SHORT_INT, MPI_MAXLOC, w);
    MPI_Win_fence(0, w);
    if (rank == 1) {
        int bad = 0;
        for (int i = 0; i < M; i++) {
            /* 0: 7 wins; 1: equal, the smaller index i-1 wins; 2: equal, i stays */
            short ea = (short)(i % 3 == 0 ? 7 : 5);
            int eb = i % 3 == 0 ? i + 1 : i % 3 == 1 ? i - 1 : i;
            if (t[i].a != ea || t[i].b != eb)
                bad++;
            if (bad == 1 && (t[i].a != ea || t[i].b != eb))
                TEST_ASSERT_MSG(0, "short_int %d: %d %d", i, t[i].a, t[i].b);
        }
        TEST_ASSERT(bad == 0);
    }
    MPI_Win_free(&w);
    MPI_Free_mem(t);
    free(o);
}

static void zero_size(void)
{
    int buf[8] = {0}, res[8];
    MPI_Win w;
    MPI_Datatype z;
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_commit(&z);
    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Win_fence(0, w);
    if (rank == 0) {
        int rc;
        rc = MPI_Get_accumulate(NULL, 1, z, res, 0, MPI_DOUBLE, 1, 0, 1, z, MPI_SUM, w);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "zero-size target, double result: %d", rc);
        rc = MPI_Get_accumulate(buf, 0, MPI_INT, res, 1, z, 1, 0, 0, MPI_DOUBLE, MPI_SUM, w);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "zero count: %d", rc);
        rc = MPI_Accumulate(buf, 0, MPI_INT, 1, 0, 0, MPI_DOUBLE, MPI_SUM, w);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "zero count acc: %d", rc);
        rc = MPI_Accumulate(buf, 1, MPI_INT, 1, 0, 1, MPI_DOUBLE, MPI_SUM, w);
        TEST_ASSERT_MSG(rc == MPI_ERR_TYPE, "int onto double still refused: %d", rc);
    }
    MPI_Win_fence(0, w);
    MPI_Win_free(&w);
    MPI_Type_free(&z);
}

static void dynamic_adjacent(void)
{
    enum { H = 4096 };
    static int mem[2 * H];
    int *loc = malloc(sizeof(int) * 2 * H), *res = malloc(sizeof(int) * 2 * H);
    MPI_Win w;
    MPI_Aint addr;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    for (int i = 0; i < 2 * H; i++)
        mem[i] = -1;
    MPI_Win_attach(w, mem, sizeof(int) * H);
    MPI_Win_attach(w, mem + H, sizeof(int) * H);
    MPI_Get_address(mem, &addr);
    MPI_Bcast(&addr, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    int n = H + H / 4 + 3; /* over the join of the regions */
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            loc[i] = i;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w);
        MPI_Put(loc, n, MPI_INT, 1, addr, n, MPI_INT, w);
        MPI_Accumulate(loc, n, MPI_INT, 1, addr, n, MPI_INT, MPI_SUM, w);
        MPI_Win_flush(1, w);
        MPI_Get_accumulate(loc, n, MPI_INT, res, n, MPI_INT, 1, addr, n, MPI_INT, MPI_SUM, w);
        MPI_Win_flush(1, w);
        for (int i = 0; i < n; i++)
            TEST_ASSERT_MSG(res[i] == 2 * i, "fetched %d: %d", i, res[i]);
        MPI_Get(res, 2 * H, MPI_INT, 1, addr, 2 * H, MPI_INT, w);
        MPI_Win_unlock(1, w);
        for (int i = 0; i < 2 * H; i++)
            TEST_ASSERT_MSG(res[i] == (i < n ? 3 * i : -1), "got %d: %d", i, res[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(w, mem);
    MPI_Win_detach(w, mem + H);
    MPI_Win_free(&w);
    free(loc);
    free(res);
}

static void check_hint(MPI_Win w, const char *key, const char *want)
{
    MPI_Info i;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Win_get_info(w, &i);
    MPI_Info_get(i, key, MPI_MAX_INFO_VAL, v, &flag);
    TEST_ASSERT_MSG(flag && strcmp(v, want) == 0, "%s: %s, want %s", key, flag ? v : "unset",
                    want);
    MPI_Info_free(&i);
}

static void set_hint(MPI_Win w, const char *key, const char *val)
{
    MPI_Info i;
    MPI_Info_create(&i);
    MPI_Info_set(i, key, val);
    MPI_Win_set_info(w, i);
    MPI_Info_free(&i);
}

static void hints(void)
{
    MPI_Info i;
    MPI_Win w;
    void *base;
    MPI_Info_create(&i);
    MPI_Info_set(i, "no_locks", "true");
    MPI_Info_set(i, "accumulate_ops", "bogus"); /* invalid value: the default stays */
    MPI_Win_allocate(sizeof(int), sizeof(int), i, MPI_COMM_WORLD, &base, &w);
    MPI_Info_free(&i);
    check_hint(w, "no_locks", "true");
    check_hint(w, "accumulate_ordering", "rar,raw,war,waw");
    check_hint(w, "accumulate_ops", "same_op_no_op");
    check_hint(w, "same_size", "false");
    check_hint(w, "same_disp_unit", "false");
    set_hint(w, "accumulate_ordering", "none");
    check_hint(w, "accumulate_ordering", "none");
    set_hint(w, "accumulate_ordering", "rar,waw");
    check_hint(w, "accumulate_ordering", "rar,waw");
    set_hint(w, "accumulate_ordering", "rar,xyz");
    check_hint(w, "accumulate_ordering", "rar,waw");
    set_hint(w, "accumulate_ops", "same_op");
    check_hint(w, "accumulate_ops", "same_op");
    set_hint(w, "same_size", "true");
    check_hint(w, "same_size", "true");
    set_hint(w, "same_disp_unit", "true");
    check_hint(w, "same_disp_unit", "true");
    set_hint(w, "no_such_key", "true");
    MPI_Win_get_info(w, &i);
    int flag = 1;
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info_get(i, "no_such_key", MPI_MAX_INFO_VAL, v, &flag);
    TEST_ASSERT(!flag);
    MPI_Info_free(&i);
    MPI_Win_free(&w);
}

/* Win_create windows over many orderings and subsets of the world, twice: the lock
 * pages of the accumulate family are reused per group and evicted (8 kept) at
 * different times on different ranks; every window must still count right */
static void lock_pages(void)
{
    for (int round = 0; round < 2; round++)
        for (int g = 0; g < 12; g++) {
            /* g: which ranks (bit mask over the first 3, 0 = all) and their order */
            int mask = g % 4 == 0 ? ~0 : g % 4 == 1 ? 3 : g % 4 == 2 ? 5 : 6;
            int in = (mask >> (rank < 3 ? rank : 0)) & 1 || mask == ~0;
            int key = g / 4 == 1 ? -rank : g / 4 == 2 ? (rank + 1) % nproc : rank;
            MPI_Comm c;
            MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, key, &c);
            if (c == MPI_COMM_NULL)
                continue;
            int n, me;
            MPI_Comm_size(c, &n);
            MPI_Comm_rank(c, &me);
            long cnt = 0, one = 1;
            MPI_Win w;
            MPI_Win_create(&cnt, sizeof(cnt), sizeof(cnt), MPI_INFO_NULL, c, &w);
            MPI_Win_fence(0, w);
            for (int t = 0; t < n; t++)
                MPI_Accumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, w);
            MPI_Win_fence(0, w);
            TEST_ASSERT_MSG(cnt == n, "group %d round %d: %ld of %d", g, round, cnt, n);
            MPI_Win_free(&w);
            MPI_Comm_free(&c);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nproc);
    if (nproc < 2) {
        printf("needs 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pairs(0);
    pairs(1);
    short_int();
    zero_size();
    dynamic_adjacent();
    hints();
    lock_pages();
    return test_finish();
}
