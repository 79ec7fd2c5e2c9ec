/*
 * neighbor.c - MPI_Neighbor_alltoall on a periodic 2-D Cartesian grid (MPI_Dims_create
 *   of the job size, 4 x 4 at 16 ranks), block sizes 8 B .. 64 KiB per neighbour.
 *   Plain MPI: built by each MPI's own mpicc (bench/mpi/neighbor.sh).
 * Method per size: 5 warm-up calls; a calibration of 5 timed calls gives the number of
 *   calls that fill the time budget (argv[1] seconds, default 0.05; rank 0 decides and
 *   broadcasts); 3 repetitions of that many calls after a barrier; a repetition's time is
 *   the slowest rank's mean per call (MPI_MAX reduction); the line reports the
 *   repetitions' median in microseconds.  The received blocks are checked once per size.
 * Output: "neighbor_alltoall <bytes> <usec>" per size, from rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double run(MPI_Comm cart, char *s, char *r, int bytes, int iters)
{
    MPI_Barrier(cart);
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Neighbor_alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, cart);
    t = (MPI_Wtime() - t) / iters;
    double tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, cart);
    return tmax;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double budget = argc > 1 ? atof(argv[1]) : 0.05;
    int np, me, dims[2] = {0, 0}, per[2] = {1, 1};
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Dims_create(np, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
    MPI_Comm_rank(cart, &me);
    const int maxb = 64 << 10;
    char *s = malloc(4 * (size_t)maxb), *r = malloc(4 * (size_t)maxb);
    int sizes[] = {8, 64, 512, 4096, 16384, 65536}, bad = 0;
    if (me == 0)
        printf("# grid %d x %d periodic, %d ranks\n", dims[0], dims[1], np);
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
        int b = sizes[k];
        for (int j = 0; j < 4; j++)
            memset(s + (size_t)j * b, (me * 4 + j) & 0xff, (size_t)b);
        run(cart, s, r, b, 5);
        int nbr[4]; /* -1/+1 in dim 0, -1/+1 in dim 1 */
        MPI_Cart_shift(cart, 0, 1, &nbr[0], &nbr[1]);
        MPI_Cart_shift(cart, 1, 1, &nbr[2], &nbr[3]);
        for (int j = 0; j < 4; j++) /* slot j holds the neighbour's block j^1 */
            if ((unsigned char)r[(size_t)j * b] != ((nbr[j] * 4 + (j ^ 1)) & 0xff) ||
                (unsigned char)r[(size_t)j * b + b - 1] !=
                    ((nbr[j] * 4 + (j ^ 1)) & 0xff))
                bad++;
        double t = run(cart, s, r, b, 5);
        int iters = (int)(budget / (t > 1e-7 ? t : 1e-7));
        if (iters < 3)
            iters = 3;
        if (iters > 100000)
            iters = 100000;
        MPI_Bcast(&iters, 1, MPI_INT, 0, cart);
        double rep[3];
        for (int i = 0; i < 3; i++)
            rep[i] = run(cart, s, r, b, iters);
        qsort(rep, 3, sizeof(double), cmp);
        if (me == 0)
            printf("neighbor_alltoall %d %.2f\n", b, rep[1] * 1e6);
    }
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, cart);
    if (me == 0 && allbad)
        printf("# WRONG DATA in %d blocks\n", allbad);
    MPI_Comm_free(&cart);
    free(s);
    free(r);
    MPI_Finalize();
    return allbad != 0;
}
