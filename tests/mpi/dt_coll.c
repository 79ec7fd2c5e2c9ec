/*
 * dt_coll.c - derived and pair datatypes in collectives: Bcast of a matrix column
 *   (root and receivers with different type maps), Gather/Scatter through a resized
 *   column type (one column per rank), Allreduce SUM on a contiguous derived type,
 *   MINLOC/MAXLOC on MPI_SHORT_INT (a pair type with padding inside).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int errs, rank;

#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            errs++;                                                                      \
            if (errs < 10)                                                               \
                printf("rank %d line %d: %s\n", rank, __LINE__, #c);                     \
        }                                                                                \
    } while (0)

#define N 16
#define MAXP 64

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAXP)
        MPI_Abort(MPI_COMM_WORLD, 2);

    /* Bcast: root sends column 3 of an N x N matrix, the others receive N ints */
    static int m[N * N], v[N];
    MPI_Datatype colt;
    MPI_Type_vector(N, 1, N, MPI_INT, &colt);
    MPI_Type_commit(&colt);
    for (int i = 0; i < N * N; i++)
        m[i] = rank == 0 ? i : -1;
    memset(v, 0, sizeof(v));
    if (rank == 0)
        MPI_Bcast(m + 3, 1, colt, 0, MPI_COMM_WORLD);
    else
        MPI_Bcast(v, N, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; rank && i < N; i++)
        CHECK(v[i] == 3 + N * i);
    /* Bcast of the column type on every rank */
    MPI_Bcast(m + 1, 1, colt, 0, MPI_COMM_WORLD);
    for (int i = 0; rank && i < N * N; i++)
        CHECK(m[i] == (i % N == 1 ? i : -1));

    /* Gather: rank r's N ints become column r of an N x size matrix on the root */
    static int g[N * MAXP], mine[N];
    MPI_Datatype colp, colr;
    MPI_Type_vector(N, 1, size, MPI_INT, &colp);
    MPI_Type_create_resized(colp, 0, sizeof(int), &colr);
    MPI_Type_commit(&colr);
    for (int i = 0; i < N; i++)
        mine[i] = 1000 * rank + i;
    memset(g, 0, sizeof(g));
    MPI_Gather(mine, N, MPI_INT, g, 1, colr, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < N; i++)
        for (int r = 0; r < size; r++)
            CHECK(g[i * size + r] == 1000 * r + i);
    /* Scatter it back: column r goes to rank r */
    memset(mine, 0, sizeof(mine));
    MPI_Scatter(g, 1, colr, mine, N, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(mine[i] == 1000 * rank + i);

    /* Allreduce SUM over a contiguous derived type */
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    int in[6], out[6];
    for (int i = 0; i < 6; i++)
        in[i] = rank + i;
    MPI_Allreduce(in, out, 3, two, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == size * (size - 1) / 2 + size * i);

    /* MINLOC / MAXLOC on MPI_SHORT_INT: 6 bytes of data in an 8-byte struct */
    struct {
        short v;
        int loc;
    } si[2], so[2];
    si[0].v = (short)(100 - rank);
    si[0].loc = rank;
    si[1].v = (short)(rank % 3);
    si[1].loc = rank;
    MPI_Allreduce(si, so, 2, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(so[0].v == 100 - (size - 1) && so[0].loc == size - 1);
    CHECK(so[1].v == 0 && so[1].loc == 0);
    MPI_Allreduce(si, so, 2, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(so[0].v == 100 && so[0].loc == 0);
    int mx = size > 2 ? 2 : size - 1;
    CHECK(so[1].v == mx && so[1].loc == mx);

    MPI_Type_free(&colt);
    MPI_Type_free(&colp);
    MPI_Type_free(&colr);
    MPI_Type_free(&two);
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (tot)
            printf("Found %d errors\n", tot);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
