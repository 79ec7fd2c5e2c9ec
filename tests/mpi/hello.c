/*
 * hello.c - init, rank/size, processor name, allreduce of ranks, barrier, finalize.
 * Self-checking: rank 0 prints "No Errors" when every check passed on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len, errs = 0, flag = 0, ver, sub, provided;
    char name[MPI_MAX_PROCESSOR_NAME];

    MPI_Initialized(&flag);
    if (flag)
        errs++;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Initialized(&flag);
    if (!flag || provided != MPI_THREAD_FUNNELED)
        errs++;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    if (len <= 0 || (int)strlen(name) != len)
        errs++;
    MPI_Get_version(&ver, &sub);
    if (ver != 3 || sub != 1)
        errs++;
    int *tag_ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || *tag_ub < 32767)
        errs++;

    long sum = 0, mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long)size * (size - 1) / 2) {
        printf("rank %d: allreduce sum %ld, expected %ld\n", rank, sum,
               (long)size * (size - 1) / 2);
        errs++;
    }
    double dmax = 0, dme = rank * 1.5;
    MPI_Allreduce(&dme, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (dmax != (size - 1) * 1.5)
        errs++;
    int root_val = rank == size - 1 ? 4242 : -1;
    MPI_Bcast(&root_val, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    if (root_val != 4242)
        errs++;
    for (int i = 0; i < 10; i++)
        MPI_Barrier(MPI_COMM_WORLD);

    int total;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", total);
    }
    MPI_Finalize();
    MPI_Finalized(&flag);
    return flag ? 0 : 1;
}
