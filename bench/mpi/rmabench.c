/*
 * rmabench.c - one-sided communication inside a node, plain MPI (built by each MPI's
 * own mpicc; bench/mpi/rma.sh runs it under Loom, MPICH and Open MPI).
 *
 * Two ranks; rank 0 is the origin, rank 1 the target, which waits in MPI_Barrier while
 * rank 0 measures (passive target: the target does nothing but be inside MPI).  Rank 0
 * holds MPI_Win_lock_all for the whole run.  For each window flavor (allocate, create):
 *   put_lat_8 / get_lat_8     us per MPI_Put/MPI_Get of 8 B followed by MPI_Win_flush
 *   put_bw_1m / get_bw_1m     MB/s: 64 transfers of 1 MiB, one flush at the end
 *   acc_rate                  M ops/s: MPI_Accumulate of one double (SUM), flush every 256
 *   fop_lat                   us per MPI_Fetch_and_op (long, SUM) + flush
 * Each figure is the best of 5 repetitions (after one warm-up).  Output: one line per
 * figure, "flavor name value".  Checks one result (the accumulated sum) so a broken
 * library does not print fast numbers.
 */
/* The window flavors (and a third, allocmem): "allocate" is MPI_Win_allocate; "create" is
 * MPI_Win_create over calloc() memory (user memory the MPI knows nothing of); "allocmem"
 * is MPI_Win_create over MPI_Alloc_mem memory (the usual way to get memory for
 * MPI_Win_create; an MPI may hand out memory the other ranks can map). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB (1 << 20)
#define REPS 5

static double best(double a, double b, int lower)
{
    return lower ? (a < b ? a : b) : (a > b ? a : b);
}

static void bench(const char *flavor, MPI_Win win, char *buf, int rank)
{
    if (rank == 0) {
        double r_put = 1e30, r_get = 1e30, r_pbw = 0, r_gbw = 0, r_acc = 0, r_fop = 1e30;
        int n = 2000;
        MPI_Win_lock_all(0, win);
        for (int rep = 0; rep <= REPS; rep++) {
            double t = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double put = (MPI_Wtime() - t) / n * 1e6;
            t = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                MPI_Get(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double get = (MPI_Wtime() - t) / n * 1e6;
            t = MPI_Wtime();
            for (int i = 0; i < 64; i++)
                MPI_Put(buf, MB, MPI_BYTE, 1, 0, MB, MPI_BYTE, win);
            MPI_Win_flush(1, win);
            double pbw = 64.0 * MB / (MPI_Wtime() - t) / 1e6;
            t = MPI_Wtime();
            for (int i = 0; i < 64; i++)
                MPI_Get(buf, MB, MPI_BYTE, 1, 0, MB, MPI_BYTE, win);
            MPI_Win_flush(1, win);
            double gbw = 64.0 * MB / (MPI_Wtime() - t) / 1e6;
            double one = 1.0;
            int nacc = 20000;
            t = MPI_Wtime();
            for (int i = 0; i < nacc; i++) {
                MPI_Accumulate(&one, 1, MPI_DOUBLE, 1, 2 * MB, 1, MPI_DOUBLE, MPI_SUM, win);
                if (i % 256 == 255)
                    MPI_Win_flush(1, win);
            }
            MPI_Win_flush(1, win);
            double acc = nacc / (MPI_Wtime() - t) / 1e6;
            long lone = 1, old;
            t = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                MPI_Fetch_and_op(&lone, &old, MPI_LONG, 1, 2 * MB + 8, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            double fop = (MPI_Wtime() - t) / n * 1e6;
            if (rep) { /* rep 0 warms up */
                r_put = best(r_put, put, 1);
                r_get = best(r_get, get, 1);
                r_pbw = best(r_pbw, pbw, 0);
                r_gbw = best(r_gbw, gbw, 0);
                r_acc = best(r_acc, acc, 0);
                r_fop = best(r_fop, fop, 1);
            }
        }
        double sum = 0;
        MPI_Get(&sum, 1, MPI_DOUBLE, 1, 2 * MB, 1, MPI_DOUBLE, win);
        MPI_Win_flush(1, win);
        MPI_Win_unlock_all(win);
        if (sum != 20000.0 * (REPS + 1)) {
            fprintf(stderr, "rmabench: %s: accumulated %.0f, want %.0f\n", flavor, sum,
                    20000.0 * (REPS + 1));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("%s put_lat_8 %.3f\n%s get_lat_8 %.3f\n%s put_bw_1m %.0f\n%s get_bw_1m %.0f\n"
               "%s acc_rate %.3f\n%s fop_lat %.3f\n",
               flavor, r_put, flavor, r_get, flavor, r_pbw, flavor, r_gbw, flavor, r_acc,
               flavor, r_fop);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "rmabench: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Aint wsize = 2 * MB + 64;
    char *buf = malloc(MB);
    memset(buf, 1, MB);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, (size_t)wsize);
    MPI_Barrier(MPI_COMM_WORLD);
    bench("allocate", win, buf, rank);
    MPI_Win_free(&win);
    char *mem = calloc(1, (size_t)wsize);
    MPI_Win_create(mem, wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    bench("create", win, buf, rank);
    MPI_Win_free(&win);
    free(mem);
    MPI_Alloc_mem(wsize, MPI_INFO_NULL, &mem);
    memset(mem, 0, (size_t)wsize);
    MPI_Win_create(mem, wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    bench("allocmem", win, buf, rank);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    free(buf);
    MPI_Finalize();
    return 0;
}
