/*
 * rma_basic.c - one-sided communication under fence: Win_create/Win_allocate/
 *   Win_create_dynamic, Put/Get/Accumulate/Get_accumulate with contiguous and derived
 *   types on both sides, large transfers (several request messages), window
 *   attributes, name, group, info, error classes (RMA_RANGE, RMA_SYNC, RANK) under
 *   MPI_ERRORS_RETURN, a window error handler.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define N 64
#define BIG (300 * 1024) /* ints: several request messages and a rendezvous reply */

static int eh_calls;
static void win_eh(MPI_Win *win, int *err, ...)
{
    (void)win;
    (void)err;
    eh_calls++;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* ---- Win_create: put my rank pattern into my right neighbour ---- */
    int *mem = calloc(N, sizeof(int)), src[N], got[N];
    MPI_Win win;
    MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000 + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        TEST_ASSERT_MSG(mem[i] == left * 1000 + i, "mem[%d]=%d", i, mem[i]);
    /* get it back from the right neighbour: my own pattern */
    memset(got, 0, sizeof(got));
    MPI_Get(got, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        TEST_ASSERT_MSG(got[i] == rank * 1000 + i, "got[%d]=%d", i, got[i]);
    /* accumulate: everybody adds (rank+1) into element i of rank 0 */
    for (int i = 0; i < N; i++)
        src[i] = rank + 1;
    MPI_Accumulate(src, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        for (int i = 0; i < N; i++)
            TEST_ASSERT_MSG(mem[i] == (size - 1) * 1000 + i + size * (size + 1) / 2,
                            "acc mem[%d]=%d", i, mem[i]);
    MPI_Win_fence(0, win);

    /* ---- derived types: a vector on the target, indexed on the origin ---- */
    MPI_Datatype vec, idx;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec); /* even elements */
    MPI_Type_commit(&vec);
    int bl[4] = {8, 8, 8, 8}, dp[4] = {40, 0, 16, 56};
    MPI_Type_indexed(4, bl, dp, MPI_INT, &idx); /* 32 ints out of order */
    MPI_Type_commit(&idx);
    for (int i = 0; i < N; i++)
        src[i] = rank * 100 + i;
    memset(mem, 0xff, N * sizeof(int));
    MPI_Win_fence(0, win);
    MPI_Put(src, 1, idx, right, 0, 1, vec, win);
    MPI_Win_fence(0, win);
    {
        int k = 0;
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < 8; j++, k++) {
                int want = left * 100 + dp[b] + j;
                TEST_ASSERT_MSG(mem[2 * k] == want, "vec put mem[%d]=%d want %d", 2 * k,
                                mem[2 * k], want);
                TEST_ASSERT(mem[2 * k + 1] == -1);
            }
    }
    /* get the even elements back through the vector into a contiguous buffer */
    memset(got, 0, sizeof(got));
    MPI_Get(got, N / 2, MPI_INT, right, 0, 1, vec, win);
    MPI_Win_fence(0, win);
    {
        int k = 0;
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < 8; j++, k++)
                TEST_ASSERT(got[k] == rank * 100 + dp[b] + j);
    }
    /* accumulate with derived types and get_accumulate fetching old values */
    for (int i = 0; i < N; i++)
        mem[i] = i;
    for (int i = 0; i < N; i++)
        src[i] = 1;
    MPI_Win_fence(0, win);
    MPI_Accumulate(src, N / 2, MPI_INT, right, 0, 1, vec, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        TEST_ASSERT(mem[i] == i + (i % 2 == 0));
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(src, N / 2, MPI_INT, got, N / 2, MPI_INT, right, 0, 1, vec, MPI_MAX,
                       win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N / 2; i++)
        TEST_ASSERT(got[i] == 2 * i + 1);
    /* MPI_REPLACE and MPI_NO_OP through get_accumulate */
    int one = -7, old = 0;
    MPI_Get_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_REPLACE,
                       win);
    MPI_Win_fence(0, win);
    TEST_ASSERT(old == 3 && mem[3] == -7);
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(NULL, 0, MPI_INT, &old, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_NO_OP,
                       win);
    MPI_Win_fence(0, win);
    TEST_ASSERT(old == -7 && mem[3] == -7);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);

    /* ---- attributes, name, group, info ---- */
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    TEST_ASSERT(flag && base == mem);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
    TEST_ASSERT(flag && *wsize == N * (MPI_Aint)sizeof(int));
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    TEST_ASSERT(flag && *unit == sizeof(int));
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    TEST_ASSERT(flag && *flavor == MPI_WIN_FLAVOR_CREATE);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    TEST_ASSERT(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_set_name(win, "ring window");
    MPI_Win_get_name(win, name, &len);
    TEST_ASSERT(strcmp(name, "ring window") == 0 && len == 11);
    MPI_Group wg, cg;
    int cmp;
    MPI_Win_get_group(win, &wg);
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    TEST_ASSERT(cmp == MPI_IDENT);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    MPI_Info info;
    MPI_Win_get_info(win, &info);
    TEST_ASSERT(info != MPI_INFO_NULL);
    MPI_Info_free(&info);

    /* ---- errors, returned ---- */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int cls, rc = MPI_Put(src, 1, MPI_INT, right, N, 1, MPI_INT, win); /* one past the end */
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_RMA_RANGE, "class %d", cls);
    rc = MPI_Put(src, 2, MPI_INT, right, -1, 2, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT(cls == MPI_ERR_RMA_RANGE);
    rc = MPI_Put(src, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT(cls == MPI_ERR_RANK);
    rc = MPI_Put(src, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    TEST_ASSERT(rc == MPI_SUCCESS);
    rc = MPI_Accumulate(src, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_MAXLOC, win);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_OP || cls == MPI_ERR_TYPE, "class %d", cls);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    rc = MPI_Put(src, 1, MPI_INT, right, 0, 1, MPI_INT, win); /* no epoch */
    MPI_Error_class(rc, &cls);
    TEST_ASSERT(cls == MPI_ERR_RMA_SYNC);
    rc = MPI_Win_unlock(right, win);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT(cls == MPI_ERR_RMA_SYNC);
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(win_eh, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Win_flush(right, win);
    TEST_ASSERT(eh_calls == 1);
    MPI_Errhandler_free(&eh);
    MPI_Win_free(&win);
    TEST_ASSERT(win == MPI_WIN_NULL);
    free(mem);

    /* ---- Win_allocate, big transfers (several request messages per op) ---- */
    int *abase;
    MPI_Win_allocate(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abase,
                     &win);
    int *big = malloc(BIG * sizeof(int)), *back = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++) {
        big[i] = rank ^ i;
        abase[i] = 0;
    }
    MPI_Win_fence(0, win);
    MPI_Put(big, BIG, MPI_INT, right, 0, BIG, MPI_INT, win);
    MPI_Win_fence(0, win);
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += abase[i] != (left ^ i);
    TEST_ASSERT_MSG(bad == 0, "%d wrong ints after a big put", bad);
    MPI_Win_fence(0, win); /* my loads above end before the neighbours' accumulates */
    MPI_Accumulate(big, BIG, MPI_INT, right, 0, BIG, MPI_INT, MPI_BXOR, win);
    MPI_Win_fence(0, win);
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += abase[i] != 0;
    TEST_ASSERT_MSG(bad == 0, "%d wrong ints after a big accumulate", bad);
    for (int i = 0; i < BIG; i++)
        abase[i] = 3 * i + rank;
    MPI_Win_fence(0, win);
    MPI_Get(back, BIG, MPI_INT, left, 0, BIG, MPI_INT, win);
    MPI_Win_fence(0, win);
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += back[i] != 3 * i + left;
    TEST_ASSERT_MSG(bad == 0, "%d wrong ints after a big get", bad);
    /* a strided get with many segments (more than one request message of segments) */
    MPI_Datatype str;
    MPI_Type_vector(BIG / 4, 1, 4, MPI_INT, &str);
    MPI_Type_commit(&str);
    MPI_Get(back, BIG / 4, MPI_INT, left, 0, 1, str, win);
    MPI_Win_fence(0, win);
    bad = 0;
    for (int i = 0; i < BIG / 4; i++)
        bad += back[i] != 3 * 4 * i + left;
    TEST_ASSERT_MSG(bad == 0, "%d wrong ints after a strided get", bad);
    MPI_Type_free(&str);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    TEST_ASSERT(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
    MPI_Win_free(&win);
    free(big);
    free(back);

    /* ---- dynamic window: attach, exchange addresses, put/get ---- */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int *dyn = calloc(N, sizeof(int));
    MPI_Win_attach(win, dyn, N * sizeof(int));
    MPI_Aint my_addr, *addrs = malloc(size * sizeof(MPI_Aint));
    MPI_Get_address(dyn, &my_addr);
    MPI_Allgather(&my_addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    int v = rank + 500;
    MPI_Put(&v, 1, MPI_INT, right, addrs[right] + 5 * sizeof(int), 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    TEST_ASSERT(dyn[5] == left + 500);
    v = 0;
    MPI_Get(&v, 1, MPI_INT, left, addrs[left] + 5 * sizeof(int), 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    TEST_ASSERT(v == (left + size - 1) % size + 500);
    MPI_Win_detach(win, dyn);
    MPI_Win_free(&win);
    free(dyn);
    free(addrs);
    return test_finish();
}
