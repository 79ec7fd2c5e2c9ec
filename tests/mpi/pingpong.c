/*
 * pingpong.c - ranks 0 and 1 bounce messages of 0 B .. 4 MiB; checks every payload.
 *   With -t (or LOOM_PINGPONG_TIME=1) rank 0 prints the one-way latency per size (this
 *   is a sanity tool; the measured comparison lives in bench/).  Other ranks only take
 *   part in the final barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    int timing = (argc > 1 && strcmp(argv[1], "-t") == 0) || getenv("LOOM_PINGPONG_TIME");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t maxb = 4u << 20;
    unsigned char *buf = malloc(maxb), *exp = malloc(maxb);
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        for (size_t b = 0; b <= maxb; b = b ? b * 2 : 1) {
            int iters = b <= 8192 ? (timing ? 10000 : 100) : (timing ? 200 : 10);
            for (size_t i = 0; i < b; i++)
                exp[i] = (unsigned char)(i * 7 + b);
            double t0 = 0;
            for (int it = 0; it < iters + 1; it++) {
                if (it == 1)
                    t0 = MPI_Wtime();
                if (rank == 0) {
                    if (!timing || it == 0)
                        memcpy(buf, exp, b);
                    MPI_Send(buf, (int)b, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                    if (!timing || it == 0)
                        memset(buf, 0, b);
                    MPI_Recv(buf, (int)b, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                } else {
                    MPI_Status st;
                    MPI_Recv(buf, (int)b, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st);
                    int n;
                    MPI_Get_count(&st, MPI_BYTE, &n);
                    if ((size_t)n != b)
                        errs++;
                    MPI_Send(buf, (int)b, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                }
                if (!timing || it == 0)
                    if (memcmp(buf, exp, b) != 0) {
                        if (errs < 3)
                            printf("rank %d: payload of %zu bytes wrong\n", rank, b);
                        errs++;
                    }
            }
            double us = (MPI_Wtime() - t0) * 1e6 / iters / 2;
            if (timing && rank == 0)
                printf("%10zu bytes %10.2f us\n", b, us);
        }
    }
    int total;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "Found %d errors\n" : "No Errors\n", total);
    free(buf);
    free(exp);
    MPI_Finalize();
    return 0;
}
