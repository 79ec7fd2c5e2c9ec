/*
 * rma_allocmem.c - MPI_Win_create over MPI_Alloc_mem memory: put, get, accumulate,
 * fetch_and_op and compare_and_swap under lock_all, exclusive/shared locks, fence and
 * PSCW, a window over part of a block (not page aligned), two windows over one
 * block, and MPI_Free_mem of a block still in windows (it succeeds; the windows keep
 * the memory until the last of them is freed).  Any number of ranks.
 */
#include "mpitest.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 64     /* longs per rank slot area */
#define NACC 200 /* accumulates per rank */

struct area {      /* the window's layout (disp_unit 1) */
    long slot[N];  /* slot[r]: written by rank r */
    double sum;    /* every rank adds 1.0 NACC times */
    long counter;  /* fetch_and_op target */
    long cas;      /* compare_and_swap target */
    long fence[N]; /* fence epoch: slot[r] from rank r */
    long pscw[N];  /* PSCW epoch */
};
#define OFF(f) ((MPI_Aint)offsetof(struct area, f))

static void run(MPI_Win win, struct area *a, int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long v = 1000 + rank;

    /* passive target, lock_all: put to every rank, flush, barrier, check */
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; t++)
        MPI_Put(&v, 1, MPI_LONG, t, OFF(slot) + (MPI_Aint)sizeof(long) * rank, 1,
                MPI_LONG, win);
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int r = 0; r < size; r++)
        TEST_ASSERT_MSG(a->slot[r] == 1000 + r, "slot %d = %ld", r, a->slot[r]);
    /* get: the right neighbour's whole slot array, with a derived type at the origin */
    long got[N] = {0};
    MPI_Get(got, size, MPI_LONG, right, OFF(slot), size, MPI_LONG, win);
    MPI_Win_flush(right, win);
    for (int r = 0; r < size; r++)
        TEST_ASSERT_MSG(got[r] == 1000 + r, "got %d = %ld", r, got[r]);
    /* accumulate, fetch_and_op, compare_and_swap: everyone on rank 0 */
    double one = 1.0;
    long lone = 1, old, prev;
    for (int i = 0; i < NACC; i++) {
        MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, OFF(sum), 1, MPI_DOUBLE, MPI_SUM, win);
        MPI_Fetch_and_op(&lone, &old, MPI_LONG, 0, OFF(counter), MPI_SUM, win);
        MPI_Win_flush(0, win);
        TEST_ASSERT(old >= 0 && old < (long)NACC * size);
    }
    /* a lock by compare_and_swap: 0 -> rank+1, then back */
    long want = rank + 1, zero = 0;
    for (int i = 0; i < 20; i++) {
        do {
            MPI_Compare_and_swap(&want, &zero, &prev, MPI_LONG, 0, OFF(cas), win);
            MPI_Win_flush(0, win);
        } while (prev != 0);
        long inside;
        MPI_Fetch_and_op(NULL, &inside, MPI_LONG, 0, OFF(cas), MPI_NO_OP, win);
        MPI_Win_flush(0, win);
        TEST_ASSERT_MSG(inside == want, "cas lock holder %ld, I am %ld", inside, want);
        MPI_Compare_and_swap(&zero, &want, &prev, MPI_LONG, 0, OFF(cas), win);
        MPI_Win_flush(0, win);
        TEST_ASSERT(prev == want);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        TEST_ASSERT_MSG(a->sum == (double)NACC * size, "sum %g", a->sum);
        TEST_ASSERT_MSG(a->counter == (long)NACC * size, "counter %ld", a->counter);
        TEST_ASSERT(a->cas == 0);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* exclusive locks: read-modify-write of the right neighbour's counter */
    for (int i = 0; i < 10; i++) {
        long c;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        MPI_Get(&c, 1, MPI_LONG, right, OFF(counter), 1, MPI_LONG, win);
        MPI_Win_flush(right, win);
        c += 1;
        MPI_Put(&c, 1, MPI_LONG, right, OFF(counter), 1, MPI_LONG, win);
        MPI_Win_unlock(right, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    long expect = (rank == 0 ? (long)NACC * size : 0) + 10;
    TEST_ASSERT_MSG(a->counter == expect, "counter %ld want %ld", a->counter, expect);
    MPI_Win_unlock(rank, win);

    /* fence: put to the right, get from the left */
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_LONG, right, OFF(fence) + (MPI_Aint)sizeof(long) * rank, 1,
            MPI_LONG, win);
    MPI_Win_fence(0, win);
    TEST_ASSERT_MSG(a->fence[left] == 1000 + left, "fence %ld", a->fence[left]);
    long lf = 0;
    MPI_Get(&lf, 1, MPI_LONG, left,
            OFF(fence) + (MPI_Aint)sizeof(long) * ((left + size - 1) % size), 1, MPI_LONG,
            win);
    MPI_Win_fence(0, win);
    TEST_ASSERT_MSG(lf == 1000 + (left + size - 1) % size, "fence get %ld", lf);

    /* PSCW: expose to the left, access the right */
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    MPI_Win_post(gl, 0, win);
    MPI_Win_start(gr, 0, win);
    MPI_Put(&v, 1, MPI_LONG, right, OFF(pscw) + (MPI_Aint)sizeof(long) * rank, 1,
            MPI_LONG, win);
    MPI_Accumulate(&one, 1, MPI_DOUBLE, right, OFF(sum), 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    TEST_ASSERT_MSG(a->pscw[left] == 1000 + left, "pscw %ld", a->pscw[left]);
    double want_sum = (rank == 0 ? (double)NACC * size : 0) + 1;
    TEST_ASSERT_MSG(a->sum == want_sum, "sum after pscw %g want %g", a->sum, want_sum);
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > N) {
        if (rank == 0)
            printf("rma_allocmem: at most %d ranks\n", N);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* a window over a whole block */
    char *blk;
    TEST_ASSERT(MPI_Alloc_mem((MPI_Aint)sizeof(struct area) + 4096, MPI_INFO_NULL,
                              &blk) == MPI_SUCCESS);
    memset(blk, 0, sizeof(struct area) + 4096);
    struct area *a = (struct area *)blk;
    MPI_Win win, win2;
    MPI_Win_create(a, sizeof(*a), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, a, rank, size);

    /* a second window over part of the same block, not page aligned */
    struct area *b = (struct area *)(blk + 4096 - 64 + (rank % 2) * 8);
    memset(b, 0, sizeof(*b));
    MPI_Win_create(b, sizeof(*b), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win2);
    run(win2, b, rank, size);

    /* Free_mem of the block while windows use it (MPICH's own tests do so before
     * Win_free): it succeeds, and the windows keep their memory until the last of them
     * is freed.  A malloc of the same size right after would reuse a freed block. */
    MPI_Barrier(MPI_COMM_WORLD);
    TEST_ASSERT(MPI_Free_mem(blk) == MPI_SUCCESS);
    size_t blen = sizeof(struct area) + 4096;
    char *other = malloc(blen);
    memset(other, 0xab, blen);
    MPI_Barrier(MPI_COMM_WORLD);
    long w1 = -1, w2 = -1;
    MPI_Win_lock_all(0, win);
    MPI_Win_lock_all(0, win2);
    MPI_Get(&w1, 1, MPI_LONG, (rank + 1) % size,
            OFF(slot) + (MPI_Aint)sizeof(long) * rank, 1, MPI_LONG, win);
    MPI_Get(&w2, 1, MPI_LONG, (rank + 1) % size,
            OFF(slot) + (MPI_Aint)sizeof(long) * rank, 1, MPI_LONG, win2);
    MPI_Win_unlock_all(win2);
    MPI_Win_unlock_all(win);
    TEST_ASSERT_MSG(w1 == 1000 + rank && w2 == 1000 + rank, "after Free_mem: %lx %lx", w1,
                    w2);
    MPI_Win_free(&win);
    MPI_Win_free(&win2); /* the block goes here */
    free(other);

    /* blocks come and go: windows over fresh blocks, freed right after */
    for (int i = 0; i < 20; i++) {
        long *m;
        TEST_ASSERT(MPI_Alloc_mem(8 * sizeof(long), MPI_INFO_NULL, &m) == MPI_SUCCESS);
        memset(m, 0, 8 * sizeof(long));
        MPI_Win_create(m, 8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &win);
        long x = i * 100 + rank, y = -1;
        MPI_Win_lock_all(0, win);
        MPI_Put(&x, 1, MPI_LONG, (rank + 1) % size, rank % 8, 1, MPI_LONG, win);
        MPI_Win_flush_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Get(&y, 1, MPI_LONG, (rank + 1) % size, rank % 8, 1, MPI_LONG, win);
        MPI_Win_flush_all(win);
        MPI_Win_unlock_all(win);
        TEST_ASSERT_MSG(y == x, "round %d: %ld", i, y);
        MPI_Win_free(&win);
        TEST_ASSERT(MPI_Free_mem(m) == MPI_SUCCESS);
    }
    /* size 0 and NULL */
    void *z;
    TEST_ASSERT(MPI_Alloc_mem(0, MPI_INFO_NULL, &z) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Free_mem(z) == MPI_SUCCESS);
    return test_finish();
}
