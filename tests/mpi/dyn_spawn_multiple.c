/*
 * dyn_spawn_multiple.c - MPI_Comm_spawn_multiple: root 0 starts this program twice
 * over, 1 process with argument "a" and 2 with "b"; the children form one
 * MPI_COMM_WORLD of 3 whose MPI_APPNUM is 0 for "a" and 1 for "b"; each child sends
 * its (rank, appnum) to parent rank 0, which checks them (and every error code).
 */
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter;
    MPI_Comm_get_parent(&parent);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parent == MPI_COMM_NULL) {
        char *cmds[2] = {argv[0], argv[0]};
        char *a1[] = {"a", NULL}, *a2[] = {"b", NULL};
        char **args[2] = {a1, a2};
        int np[2] = {1, 2}, errs[3] = {-1, -1, -1};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        MPI_Comm_spawn_multiple(2, cmds, args, np, infos, 0, MPI_COMM_WORLD, &inter, errs);
        int rsize = 0;
        MPI_Comm_remote_size(inter, &rsize);
        TEST_ASSERT(rsize == 3);
        if (rank == 0) {
            for (int c = 0; c < 3; c++) {
                TEST_ASSERT(errs[c] == MPI_SUCCESS);
                int got[2] = {-1, -1};
                MPI_Recv(got, 2, MPI_INT, c, 0, inter, MPI_STATUS_IGNORE);
                TEST_ASSERT_MSG(got[0] == c && got[1] == (c == 0 ? 0 : 1),
                                "child %d: rank %d appnum %d", c, got[0], got[1]);
            }
        }
        MPI_Comm_disconnect(&inter);
        return test_finish();
    }
    int bad = size != 3, *app = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
    int mine[2] = {rank, flag ? *app : -1};
    bad |= argc < 2 || strcmp(argv[1], mine[1] == 0 ? "a" : "b") != 0;
    MPI_Send(mine, 2, MPI_INT, 0, 0, parent);
    MPI_Comm_disconnect(&parent);
    if (bad)
        printf("child %d: FAIL\n", rank);
    MPI_Finalize();
    return bad;
}
