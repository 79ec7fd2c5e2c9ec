/*
 * allred.c - MPI_Allreduce (MPI_SUM of doubles) at 8 B and 1 MiB, plain MPI-1 so every
 *            MPI's mpicc builds it unchanged (bench/tcp/run.sh: 4 nodes x 4 ranks).
 *
 * Usage: mpiexec -n N allred [-T SECONDS] [-r REPS]
 * Output (rank 0), bench/mpi/mpibench's format:
 *   RESULT allreduce <np> <bytes> <us per call> us <iterations> <min> <max>
 * Method: warm-up; rank 0 times a calibration loop and broadcasts an iteration count
 * so one repetition lasts about -T seconds (default 0.05); each repetition is timed
 * between two barriers and reduced with MPI_MAX over ranks (the slowest rank's time
 * per call); the median of -r repetitions (default 5) is printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double run(double *s, double *r, int n, long iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    int rank, np, reps = 5;
    double budget = 0.05;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-T") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
    }
    if (reps < 1 || reps > 64)
        reps = 5;
    static const int counts[2] = {1, 131072}; /* 8 B, 1 MiB */
    double *s = malloc(131072 * sizeof(double)), *r = malloc(131072 * sizeof(double));
    for (int i = 0; i < 131072; i++)
        s[i] = rank + i * 1e-3;
    for (int c = 0; c < 2; c++) {
        int n = counts[c];
        run(s, r, n, 3);
        long iters = 1;
        double t;
        while ((t = run(s, r, n, iters)) < budget / 10 && iters < (1L << 22))
            iters *= 2;
        iters = (long)(iters * budget / (t > 1e-9 ? t : 1e-9));
        if (iters < 1)
            iters = 1;
        MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        double v[64];
        for (int k = 0; k < reps; k++)
            v[k] = run(s, r, n, iters) / (double)iters * 1e6;
        qsort(v, (size_t)reps, sizeof(v[0]), cmp);
        double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
        if (rank == 0)
            printf("RESULT allreduce %d %ld %.3f us %ld %.3f %.3f\n", np,
                   (long)n * (long)sizeof(double), med, iters, v[0], v[reps - 1]);
        /* check once: the sum of rank + i*1e-3 over ranks */
        double want = np * (np - 1) / 2.0 + np * ((n - 1) * 1e-3);
        if (rank == 0 && (r[n - 1] < want - 1e-6 * want || r[n - 1] > want + 1e-6 * want))
            printf("ERROR allreduce %d: got %g want %g\n", n, r[n - 1], want);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
