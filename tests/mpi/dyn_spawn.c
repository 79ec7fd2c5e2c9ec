/*
 * dyn_spawn.c - MPI_Comm_spawn / Comm_get_parent: the job spawns 2 copies of this
 * program with the argument "child" (root 0 of MPI_COMM_WORLD); the parents see a
 * remote group of 2, every error code MPI_SUCCESS; each child gets a number from
 * parent rank 0 and sends back twice it; the merged intracommunicator (parents first)
 * sums ranks; both sides disconnect.  The command is the program's file name alone
 * with its directory in the reserved info key "path".  A child checks its argument,
 * its parent's size and name (MPI_COMM_PARENT) and MPI_COMM_WORLD of 2; its failures
 * go to its exit code, which fails the job.
 */
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter, merged;
    MPI_Comm_get_parent(&parent);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parent == MPI_COMM_NULL) {
        char *args[] = {"child", NULL};
        int errs[2] = {-1, -1};
        /* "dir/prog" -> command "prog", info path=dir */
        char dir[4096];
        const char *cmd = argv[0], *slash = strrchr(argv[0], '/');
        MPI_Info info;
        MPI_Info_create(&info);
        if (slash && (size_t)(slash - argv[0]) < sizeof(dir)) {
            memcpy(dir, argv[0], (size_t)(slash - argv[0]));
            dir[slash - argv[0]] = 0;
            MPI_Info_set(info, "path", slash == argv[0] ? "/" : dir);
            cmd = slash + 1;
        }
        MPI_Comm_spawn(cmd, args, 2, info, 0, MPI_COMM_WORLD, &inter, errs);
        MPI_Info_free(&info);
        int rsize = 0;
        MPI_Comm_remote_size(inter, &rsize);
        TEST_ASSERT(rsize == 2);
        if (rank == 0) {
            TEST_ASSERT(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS);
            for (int c = 0; c < 2; c++) {
                int v = 100 + c, back = -1;
                MPI_Send(&v, 1, MPI_INT, c, 0, inter);
                MPI_Recv(&back, 1, MPI_INT, c, 1, inter, MPI_STATUS_IGNORE);
                TEST_ASSERT_MSG(back == 2 * v, "child %d sent %d", c, back);
            }
        }
        MPI_Intercomm_merge(inter, 0, &merged);
        int mrank = -1, sum = 0, msize = 0;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        TEST_ASSERT(mrank == rank && msize == size + 2);
        MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
        TEST_ASSERT(sum == msize * (msize - 1) / 2);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
        return test_finish();
    }
    /* a child: no "No Errors" of its own, its failures go to the exit code */
    int bad = 0, psize = 0;
    bad |= size != 2;
    bad |= argc < 2 || strcmp(argv[1], "child") != 0;
    MPI_Comm_remote_size(parent, &psize);
    bad |= psize < 1;
    char pname[MPI_MAX_OBJECT_NAME] = "";
    int plen = 0;
    MPI_Comm_get_name(parent, pname, &plen);
    bad |= strcmp(pname, "MPI_COMM_PARENT") != 0;
    int v = -1;
    MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
    bad |= v != 100 + rank;
    v *= 2;
    MPI_Send(&v, 1, MPI_INT, 0, 1, parent);
    MPI_Intercomm_merge(parent, 1, &merged);
    int mrank = -1, sum = 0, msize = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    bad |= mrank != psize + rank;
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    bad |= sum != msize * (msize - 1) / 2;
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&parent);
    if (bad)
        printf("child %d: FAIL\n", rank);
    MPI_Finalize();
    return bad;
}
