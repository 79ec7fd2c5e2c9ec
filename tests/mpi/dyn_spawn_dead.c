/*
 * dyn_spawn_dead.c - a spawned job that never connects: the child exits before
 *   MPI_Init (argv[1] "gone", exit status 0; DYN_SPAWN_DEAD_HOW=fail: status 3, which
 *   mpiexec answers by ending the parents' job too, so no testlist line uses it).
 *   Run with a short LOOM_MPI_CONNECT_TIMEOUT: the parents' MPI_Comm_spawn gives up
 *   waiting for it after that time and returns MPI_ERR_SPAWN at every rank
 *   (MPI_ERRORS_RETURN), with MPI_COMM_NULL and MPI_ERR_SPAWN in every error code,
 *   instead of waiting for ever; the job goes on (a later collective works).
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "gone") == 0)
        return 0; /* the child: never reaches MPI_Init */
    if (argc > 1 && strcmp(argv[1], "fail") == 0)
        return 3;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *how = getenv("DYN_SPAWN_DEAD_HOW");
    char *args[] = {(char *)(how ? how : "gone"), NULL};
    MPI_Comm inter = MPI_COMM_WORLD;
    int errs[1] = {-1}, cls = -1;
    double t0 = MPI_Wtime();
    int rc =
        MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    double took = MPI_Wtime() - t0;
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_SPAWN, "spawn of a child that exits: class %d", cls);
    TEST_ASSERT(inter == MPI_COMM_NULL);
    TEST_ASSERT_MSG(errs[0] == MPI_ERR_SPAWN, "code %d", errs[0]);
    TEST_ASSERT_MSG(took < 30, "spawn took %.1f s", took);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    TEST_ASSERT(sum == size * (size - 1) / 2);
    return test_finish();
}
