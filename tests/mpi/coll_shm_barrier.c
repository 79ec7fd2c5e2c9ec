/*
 * coll_shm_barrier.c - MPI_Barrier really separates phases, on COMM_WORLD and on
 *   subset communicators (split halves that share a context id, a reversed-order split,
 *   a dup), interleaved, with skewed arrivals.
 *   Check: the ranks share a test-owned POSIX shared-memory array; before barrier i of
 *   a communicator every member increments that communicator's counter for i, after it
 *   every member must read the full member count (a barrier that lets anyone out early
 *   shows a smaller value).  Rank 0 prints "No Errors".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ITERS 300
enum { C_WORLD, C_HALF0, C_HALF1, C_REV, C_DUP, C_DUP2, NCOMM };

static _Atomic int *cnt; /* [NCOMM][ITERS] */
static int errs;

static void skew(int rank, int i, int size)
{
    if (rank == i % size) { /* one late rank per round */
        volatile double x = 0;
        for (int k = 0; k < 20000; k++)
            x += k;
    }
    if (i % 50 == 0 && rank == size - 1)
        usleep(2000); /* long enough to make the others sleep */
}

static void check_barrier(MPI_Comm comm, int which, int i, int rank)
{
    int n;
    MPI_Comm_size(comm, &n);
    skew(rank, i, n);
    atomic_fetch_add(&cnt[which * ITERS + i], 1);
    MPI_Barrier(comm);
    int v = atomic_load(&cnt[which * ITERS + i]);
    if (v != n) {
        if (errs < 10)
            fprintf(stderr, "rank %d: comm %d barrier %d: %d of %d arrived\n", rank,
                    which, i, v, n);
        errs++;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[64];
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "/loom-test-cshm-%d", id);
    size_t len = sizeof(int) * NCOMM * ITERS;
    int fd = -1;
    if (rank == 0)
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        fd = shm_open(name, O_RDWR, 0);
    if (fd < 0 || (rank == 0 && ftruncate(fd, (off_t)len) < 0)) {
        perror("shm_open");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    cnt = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (cnt == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        shm_unlink(name);

    MPI_Comm half, rev, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < ITERS; i++) {
        check_barrier(MPI_COMM_WORLD, C_WORLD, i, rank);
        check_barrier(half, rank % 2 ? C_HALF1 : C_HALF0, i, rank);
        if (i % 3 == 0)
            check_barrier(rev, C_REV, i, rank);
        if (i % 5 == 0)
            check_barrier(dup, C_DUP, i, rank);
    }
    /* free and create again: same key, the slot continues */
    MPI_Comm_free(&dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < ITERS; i += 7)
        check_barrier(dup, C_DUP2, i, rank);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    munmap((void *)cnt, len);
    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "Found %d errors\n" : "No Errors\n", total);
    MPI_Finalize();
    return 0;
}
