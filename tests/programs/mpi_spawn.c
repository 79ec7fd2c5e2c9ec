/* mpi_spawn.c - MPI dynamic processes across the launcher: a parent job spawns
 * children and talks to them over the intercommunicator.
 *
 * Contract:
 *   Parent (no parent communicator): MPI_Comm_spawn(argv[0], {"child", NULL},
 *   NCHILD (argv[1], default 2)) from rank 0 of MPI_COMM_WORLD; every spawn error
 *   code must be MPI_SUCCESS.  Rank 0 of the parent sends each child its index
 *   times 10 + 7; each child answers with that value + its world size; the parent
 *   checks the answers, merges nothing, disconnects and prints
 *       spawn: parent of N children OK
 *   Child (MPI_Comm_get_parent != MPI_COMM_NULL, argv[1] == "child"): checks that
 *   the remote group of the parent intercommunicator has the parent's size, that
 *   MPI_APPNUM is 0, receives, answers and disconnects; rank 0 prints
 *       spawn: child world of N OK
 *   Any failure prints "spawn: <who>: reason" on stderr and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *who, const char *what)
{
    fprintf(stderr, "spawn: %s: %s\n", who, what);
    fflush(stderr);
    exit(1);
}

static int child(void)
{
    MPI_Comm parent;
    int rank, size, rsize, v, flag, *appnum;

    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        fail("child", "MPI_Comm_get_parent gave MPI_COMM_NULL");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &rsize);
    if (rsize < 1)
        fail("child", "empty remote group");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (flag && *appnum != 0)
        fail("child", "MPI_APPNUM is not 0");
    if (MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        fail("child", "recv from the parent failed");
    if (v != rank * 10 + 7)
        fail("child", "wrong value from the parent");
    v += size;
    if (MPI_Send(&v, 1, MPI_INT, 0, 2, parent) != MPI_SUCCESS)
        fail("child", "send to the parent failed");
    MPI_Comm_disconnect(&parent);
    if (rank == 0)
        printf("spawn: child world of %d OK\n", size);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int rank, n = 2;

    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        if (argc < 2 || strcmp(argv[1], "child") != 0)
            fail("child", "argv[1] is not \"child\"");
        return child();
    }
    if (argc > 1)
        n = atoi(argv[1]);
    if (n < 1 || n > 64)
        fail("parent", "NCHILD must be 1..64");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *codes = malloc(sizeof(int) * (size_t)n);
    char *cargv[] = {"child", NULL};
    if (!codes)
        fail("parent", "out of memory");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(argv[0], cargv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            codes);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int l;
        MPI_Error_string(rc, s, &l);
        fail("parent", s);
    }
    for (int i = 0; i < n; i++)
        if (codes[i] != MPI_SUCCESS)
            fail("parent", "a spawn error code is not MPI_SUCCESS");
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    if (rsize != n)
        fail("parent", "the intercommunicator's remote group is not NCHILD");
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            int v = i * 10 + 7;
            MPI_Send(&v, 1, MPI_INT, i, 1, inter);
        }
        for (int i = 0; i < n; i++) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, i, 2, inter, MPI_STATUS_IGNORE);
            if (v != i * 10 + 7 + n)
                fail("parent", "wrong answer from a child");
        }
    }
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("spawn: parent of %d children OK\n", n);
    free(codes);
    MPI_Finalize();
    return 0;
}
