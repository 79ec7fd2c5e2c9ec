/*
 * rma_adopt.c - MPI_Win_create over ordinary memory (calloc, posix_memalign, a small
 * malloc block, the stack): put, get, accumulate, fetch_and_op under lock_all, a target
 * that polls its own memory outside MPI while the others put into it (passive target
 * without the target's progress), contents kept across creation and MPI_Win_free, two
 * windows over the same pages, pages under a live CMA window left in place, and free()
 * of the memory afterwards.  The polling
 * target only where the list sets TEST_POLL=1 (elsewhere it waits in MPI_Barrier).  Where
 * the test list says TEST_EXPECT_ADOPT=1 (every rank on this node, nothing turned off) it
 * also checks, in /proc/self/maps, that the pages of the large and the page-aligned
 * windows were moved into Loom's memory file while the window lived and are private
 * memory again after MPI_Win_free, and that the small and stack windows were left alone;
 * TEST_EXPECT_ADOPT=0 checks that nothing was moved (the fallback).  Also windows
 * created while a rendezvous is in flight over their memory: a receive posted there (by
 * address, and by MPI_BOTTOM with a datatype whose true lower bound lands there) whose
 * sender sends only once the window exists, and a send from there whose receiver
 * receives only then; the data must arrive whole and the pages must not have been
 * moved under the operation (a window after it may move them).
 * Any number of ranks up to N.  Where the ranks are not all on one node (the list also
 * runs on multi-node clusters), neither the polling target nor adoption is expected.
 */
#define _GNU_SOURCE
#include "mpitest.h"
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 64
#define NACC 50
static int one_node = 1; /* every rank on this node (main) */

/* 1 if the page holding p is a mapping of Loom's window memory file */
static int adopted(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int yes = 0;
    uintptr_t a = (uintptr_t)p;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= a && a < hi) {
            yes = strstr(line, "loom-mpi-win") != NULL;
            break;
        }
    }
    if (f)
        fclose(f);
    return yes;
}

/* layout at base (disp_unit 1): long slot[N], double sum, long counter, long flag[N] */
#define SLOT(r) ((MPI_Aint)sizeof(long) * (r))
#define SUM ((MPI_Aint)sizeof(long) * N)
#define COUNTER (SUM + (MPI_Aint)sizeof(double))
#define FLAG(r) (COUNTER + (MPI_Aint)sizeof(long) * (1 + (r)))
#define AREA (FLAG(N))

static void run(const char *what, char *base, MPI_Aint size, int expect, int rank, int nr)
{
    int right = (rank + 1) % nr;
    memset(base, 0, (size_t)AREA);
    base[size - 1] = (char)(0x5a + rank); /* the last byte: kept through create/free */
    MPI_Win win;
    TEST_ASSERT(MPI_Win_create(base, size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
                MPI_SUCCESS);
    TEST_ASSERT_MSG(base[size - 1] == (char)(0x5a + rank), "%s: last byte lost", what);
    int moved = adopted(base) && adopted(base + size - 1);
    if (expect >= 0)
        TEST_ASSERT_MSG(moved == expect, "%s: adopted %d, want %d", what, moved, expect);

    MPI_Win_lock_all(0, win);
    long v = 1000 + rank, lone = 1, old;
    double one = 1.0;
    MPI_Put(&v, 1, MPI_LONG, right, SLOT(rank), 1, MPI_LONG, win);
    for (int i = 0; i < NACC; i++) {
        MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, SUM, 1, MPI_DOUBLE, MPI_SUM, win);
        MPI_Fetch_and_op(&lone, &old, MPI_LONG, 0, COUNTER, MPI_SUM, win);
        MPI_Win_flush(0, win);
        TEST_ASSERT(old >= 0 && old < (long)NACC * nr);
    }
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    int left = (rank + nr - 1) % nr;
    TEST_ASSERT_MSG(((long *)base)[left] == 1000 + left, "%s: slot %ld", what,
                    ((long *)base)[left]);
    long got = 0;
    MPI_Get(&got, 1, MPI_LONG, right, SLOT(rank), 1, MPI_LONG, win);
    MPI_Win_flush(right, win);
    TEST_ASSERT_MSG(got == 1000 + rank, "%s: get %ld", what, got);
    MPI_Barrier(MPI_COMM_WORLD);

    /* TEST_POLL=1 (the list's runs where every peer reaches rank 0's memory by loads and
     * stores or CMA): rank 0 waits for every flag by reading its own memory, never
     * entering MPI (bounded: 60 s, then it reports what is missing) */
    const char *pe = getenv("TEST_POLL");
    int poll = pe && atoi(pe) == 1 && one_node;
    if (rank == 0 && !poll) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
        for (int r = 1; r < nr; r++)
            TEST_ASSERT_MSG(((long *)(base + FLAG(0)))[r] == 7 + r, "%s: flag %d", what,
                            r);
    } else if (rank == 0) {
        volatile long *flag = (volatile long *)(base + FLAG(0));
        time_t t0 = time(NULL);
        int seen = 0;
        while (seen < nr - 1 && time(NULL) - t0 < 60) {
            seen = 0;
            for (int r = 1; r < nr; r++)
                seen += flag[r] == 7 + r;
        }
        TEST_ASSERT_MSG(seen == nr - 1, "%s: %d of %d flags arrived without progress",
                        what, seen, nr - 1);
    } else {
        long f = 7 + rank;
        MPI_Put(&f, 1, MPI_LONG, 0, FLAG(rank), 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        if (!poll)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double sum = *(double *)(base + SUM);
        long counter = *(long *)(base + COUNTER);
        TEST_ASSERT_MSG(sum == (double)NACC * nr, "%s: sum %g", what, sum);
        TEST_ASSERT_MSG(counter == (long)NACC * nr, "%s: counter %ld", what, counter);
    }

    /* a second window over part of the same memory, freed after the first */
    MPI_Win win2;
    TEST_ASSERT(MPI_Win_create(base + 8, size - 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                               &win2) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_free(&win) == MPI_SUCCESS);
    if (expect >= 0)
        TEST_ASSERT_MSG(adopted(base) == expect, "%s: first free released the pages",
                        what);
    MPI_Win_lock_all(0, win2);
    long w2 = 2000 + rank;
    MPI_Put(&w2, 1, MPI_LONG, right, SLOT(rank) - 8 + 8 * N, 1, MPI_LONG, win2);
    MPI_Win_unlock_all(win2);
    MPI_Barrier(MPI_COMM_WORLD);
    TEST_ASSERT(MPI_Win_free(&win2) == MPI_SUCCESS);
    TEST_ASSERT_MSG(!adopted(base), "%s: still the window's file after MPI_Win_free",
                    what);
    /* what the peers wrote survives the way back into private memory */
    TEST_ASSERT_MSG(((long *)base)[N + left] == 2000 + left, "%s: after free %ld", what,
                    ((long *)base)[N + left]);
    TEST_ASSERT_MSG(((long *)base)[left] == 1000 + left, "%s: slot after free", what);
    TEST_ASSERT_MSG(base[size - 1] == (char)(0x5a + rank), "%s: last byte after free",
                    what);
}

#define BIGMSG (1 << 20) /* above every transport's eager limit: rendezvous */

static char pattern(size_t i, int round)
{
    return (char)(((i * 7 + 3 + (size_t)round) & 0xff) | 1);
}

/* A rendezvous in flight over part of a calloc block while every rank creates a window
 * over its block.  mode 0: rank 0 posted a receive there, rank 1 sends once the window
 * exists; 1: the same receive named by MPI_BOTTOM and an hindexed type's absolute
 * displacement; 2: rank 1 sends from there (the receiver reads its buffer in place),
 * rank 0 receives once the window exists.  The pages of the rank with the operation
 * in flight must stay where they are, the bytes must arrive whole, and once the
 * operation is over the next window over the same block may move them. */
static void pending_op(int mode, int expect, int rank, int nr)
{
    if (nr < 2)
        return;
    static const char *const names[] = {"pending receive", "pending MPI_BOTTOM receive",
                                        "pending rendezvous send"};
    const char *what = names[mode];
    int me = mode == 2 ? 1 : 0; /* the rank with the operation in flight */
    /* larger each round: glibc raises its mmap threshold to the size of a freed mmapped
     * chunk, and a block from the heap is not one the window may move */
    size_t len = (size_t)(3 + mode) << 20;
    char *p = calloc(1, len);
    TEST_ASSERT(p != NULL);
    char *at = p + 8192 + 16;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (rank == 0 && mode == 1) {
        MPI_Aint ad;
        int bl = BIGMSG;
        MPI_Get_address(at, &ad);
        TEST_ASSERT(MPI_Type_create_hindexed(1, &bl, &ad, MPI_CHAR, &t) == MPI_SUCCESS);
        MPI_Type_commit(&t);
        TEST_ASSERT(MPI_Irecv(MPI_BOTTOM, 1, t, 1, 77, MPI_COMM_WORLD, &rq) ==
                    MPI_SUCCESS);
    } else if (rank == 0 && mode == 0) {
        TEST_ASSERT(MPI_Irecv(at, BIGMSG, MPI_CHAR, 1, 77, MPI_COMM_WORLD, &rq) ==
                    MPI_SUCCESS);
    } else if (rank == 1 && mode == 2) {
        for (size_t i = 0; i < BIGMSG; i++)
            at[i] = pattern(i, mode);
        TEST_ASSERT(MPI_Isend(at, BIGMSG, MPI_CHAR, 0, 77, MPI_COMM_WORLD, &rq) ==
                    MPI_SUCCESS);
    }
    MPI_Win win;
    TEST_ASSERT(MPI_Win_create(p, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                               &win) == MPI_SUCCESS);
    if (rank == me && expect >= 0)
        TEST_ASSERT_MSG(!adopted(at) && !adopted(p), "%s: pages moved under it", what);
    /* the other side of the message, now that the window exists */
    char *other = rank == 1 - me ? malloc(BIGMSG) : NULL;
    if (rank == 1 && mode != 2) {
        TEST_ASSERT(other != NULL);
        for (size_t i = 0; i < BIGMSG; i++)
            other[i] = pattern(i, mode);
        TEST_ASSERT(MPI_Send(other, BIGMSG, MPI_CHAR, 0, 77, MPI_COMM_WORLD) ==
                    MPI_SUCCESS);
    } else if (rank == 0 && mode == 2) {
        TEST_ASSERT(other != NULL);
        TEST_ASSERT(MPI_Recv(other, BIGMSG, MPI_CHAR, 1, 77, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    if (rank == me)
        TEST_ASSERT(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (rank == 0) {
        const char *got = mode == 2 ? other : at;
        size_t bad = 0;
        for (size_t i = 0; i < BIGMSG; i++)
            bad += got[i] != pattern(i, mode);
        TEST_ASSERT_MSG(bad == 0, "%s: %zu of %d bytes wrong", what, bad, BIGMSG);
        if (mode != 2)
            TEST_ASSERT_MSG(at[-1] == 0 && at[BIGMSG] == 0, "%s: bytes around it", what);
    }
    if (t != MPI_DATATYPE_NULL)
        MPI_Type_free(&t);
    free(other);
    /* nothing in flight any more: the next window over the same memory may move it */
    MPI_Win_free(&win);
    MPI_Win win2;
    TEST_ASSERT(MPI_Win_create(p, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                               &win2) == MPI_SUCCESS);
    if (rank == me && expect >= 0)
        TEST_ASSERT_MSG(adopted(at) == expect, "%s: after it, adopted %d, want %d", what,
                        adopted(at), expect);
    MPI_Win_free(&win2);
    if (rank == me)
        TEST_ASSERT_MSG(at[0] == pattern(0, mode) &&
                            at[BIGMSG - 1] == pattern(BIGMSG - 1, mode),
                        "%s: data after MPI_Win_free", what);
    free(p);
}

int main(int argc, char **argv)
{
    int rank, nr;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nr);
    if (nr > N) {
        if (rank == 0)
            printf("rma_adopt: at most %d ranks\n", N);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *e = getenv("TEST_EXPECT_ADOPT");
    int expect = e ? atoi(e) != 0 : -1;
    /* peers on other nodes reach no memory of ours by loads and stores */
    MPI_Comm node;
    int nn = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nn);
    MPI_Comm_free(&node);
    one_node = nn == nr;
    if (!one_node && expect == 1)
        expect = 0;
    /* a calloc block that is not page-aligned moves only where malloc is glibc's own
     * (its chunk header tells the block's pages); under a sanitizer or a preloaded
     * allocator it is not checked */
    void *m = dlsym(RTLD_DEFAULT, "malloc"), *l = dlsym(RTLD_DEFAULT, "__libc_malloc");
    int heap = expect == 1 && !(m && l && m == l) ? -1 : expect;

    /* a large calloc block (malloc's own mapping): adopted */
    MPI_Aint big = (2 << 20) + 64;
    char *p = calloc(1, (size_t)big);
    TEST_ASSERT(p != NULL);
    run("calloc", p, big, heap, rank, nr);
    free(p);

    /* whole pages: adopted */
    void *q = NULL;
    TEST_ASSERT(posix_memalign(&q, 4096, 3 * 4096) == 0);
    run("aligned", q, 3 * 4096, expect, rank, nr);

    /* pages under a live window that peers reach by CMA do not move: a small window
     * inside them first, then one over the whole pages */
    MPI_Win inner, outer;
    TEST_ASSERT(MPI_Win_create((char *)q + 100, 200, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                               &inner) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_create(q, 3 * 4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &outer) ==
                MPI_SUCCESS);
    if (expect >= 0)
        TEST_ASSERT_MSG(!adopted(q), "pages under a CMA window were moved");
    MPI_Win_free(&outer);
    MPI_Win_free(&inner);
    free(q);

    /* a small block sharing its pages with others, and the stack: left alone */
    char *s = malloc((size_t)AREA + 40);
    TEST_ASSERT(s != NULL);
    run("small", s + 8, AREA + 16, expect < 0 ? -1 : 0, rank, nr);
    free(s);
    char stack[AREA + 24];
    run("stack", stack, sizeof(stack), expect < 0 ? -1 : 0, rank, nr);

    for (int mode = 0; mode < 3; mode++)
        pending_op(mode, heap, rank, nr);
    return test_finish();
}
