/*
 * dyn_spawn_refused.c - a spawn the process manager refuses: run with
 *   LOOM_MPIEXEC_MAX_SPAWN_PROCS=1, the job asks for 2 processes (MPI_Comm_spawn) and
 *   then 1 + 1 (MPI_Comm_spawn_multiple).  Under MPI_ERRORS_RETURN each call returns
 *   MPI_ERR_SPAWN at every rank, with MPI_COMM_NULL and MPI_ERR_SPAWN in every error
 *   code, and the job goes on (a later collective works).  The testlist line greps the
 *   process manager's reason on stderr.  Then a spawn of 1 that fits still works.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) { /* the child of the last spawn */
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 0, 3, parent, MPI_STATUS_IGNORE);
        v += 1;
        MPI_Send(&v, 1, MPI_INT, 0, 4, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return v == 42 ? 0 : 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *args[] = {"child", NULL};
    MPI_Comm inter = MPI_COMM_WORLD;
    int errs[2] = {-1, -1}, cls = -1;
    int rc = MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_SPAWN, "spawn of 2: class %d", cls);
    TEST_ASSERT(inter == MPI_COMM_NULL);
    TEST_ASSERT_MSG(errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN, "codes %d %d",
                    errs[0], errs[1]);

    char *cmds[2] = {argv[0], argv[0]};
    char **argvs[2] = {args, args};
    int np[2] = {1, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    errs[0] = errs[1] = -1;
    inter = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, errs);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_SPAWN, "spawn_multiple of 1 + 1: class %d", cls);
    TEST_ASSERT(inter == MPI_COMM_NULL);
    TEST_ASSERT(errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN);

    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    TEST_ASSERT(sum == size * (size - 1) / 2);

    /* one process fits the budget */
    rc = MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS && errs[0] == MPI_SUCCESS, "spawn of 1: %d", rc);
    if (rc == MPI_SUCCESS) {
        int rs = 0, v = 41;
        MPI_Comm_remote_size(inter, &rs);
        TEST_ASSERT(rs == 1);
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 0, 3, inter);
            MPI_Recv(&v, 1, MPI_INT, 0, 4, inter, MPI_STATUS_IGNORE);
            TEST_ASSERT_MSG(v == 42, "child answered %d", v);
        }
        MPI_Comm_disconnect(&inter);
    }
    return test_finish();
}
