/*
 * dyn_spawn_where.c - where MPI_Comm_spawn's children run, for the launcher's
 * multi-host test (tests/integration/t0173-hosts-spawn.sh), not the test list.
 *
 *   dyn_spawn_where N [HOSTS]
 *       Rank 0 of the parent job spawns N copies of this program ("child"), with
 *       MPI_Info "host"=HOSTS when given ("hostfile"=F for HOSTS "file:F"); every
 *       child sends its host name (MPI_Get_processor_name) to parent rank 0, which
 *       prints "dyn_spawn_where: child K on HOST" in child order, then
 *       "dyn_spawn_where: parent OK".  A spawn the process manager refuses prints
 *       "dyn_spawn_where: spawn refused" (every error code MPI_ERR_SPAWN,
 *       MPI_COMM_NULL) and the job ends 0.
 *   dyn_spawn_where early N
 *       As above, but the children exit with code 3 before MPI_Init.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "early-child") == 0)
        return 3;
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        MPI_Get_processor_name(name, &len);
        MPI_Send(name, len + 1, MPI_CHAR, 0, 7, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int early = argc > 1 && strcmp(argv[1], "early") == 0;
    int a = early ? 2 : 1;
    int n = argc > a ? atoi(argv[a]) : 2;
    const char *hosts = argc > a + 1 ? argv[a + 1] : NULL;
    if (n < 1 || n > 64) {
        fprintf(stderr, "dyn_spawn_where: N must be 1..64\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info = MPI_INFO_NULL;
    if (hosts) {
        MPI_Info_create(&info);
        if (strncmp(hosts, "file:", 5) == 0)
            MPI_Info_set(info, "hostfile", hosts + 5);
        else
            MPI_Info_set(info, "host", hosts);
    }
    char *cargs[] = {early ? "early-child" : "child", NULL};
    int errs[64];
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn(argv[0], cargs, n, info, 0, MPI_COMM_WORLD, &inter, errs);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        int bad = inter != MPI_COMM_NULL;
        for (int i = 0; rank == 0 && i < n; i++)
            bad |= errs[i] != MPI_ERR_SPAWN;
        if (rank == 0)
            printf("dyn_spawn_where: spawn refused%s\n",
                   bad ? " (but codes are wrong)" : "");
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            char name[MPI_MAX_PROCESSOR_NAME + 1];
            MPI_Recv(name, sizeof(name), MPI_CHAR, i, 7, inter, MPI_STATUS_IGNORE);
            name[MPI_MAX_PROCESSOR_NAME] = '\0';
            printf("dyn_spawn_where: child %d on %s\n", i, name);
        }
        printf("dyn_spawn_where: parent OK\n");
        fflush(stdout);
    }
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return 0;
}
