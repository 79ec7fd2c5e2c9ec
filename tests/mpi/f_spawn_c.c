/*
 * f_spawn_c.c - the C half of f_spawn.f90: a profiling-interface layer over
 * MPI_Comm_spawn and MPI_Comm_spawn_multiple that writes down what the Fortran binding
 * handed to C (command, argv entries, maxprocs, MPI_ERRCODES_IGNORE) and then calls the
 * PMPI_ function, and f_spawn_last(), which gives Fortran that record.
 * Record: spawn "cmd|arg|arg#maxprocs" ("cmd@NULL#n" for MPI_ARGV_NULL, "!ign" appended
 * for MPI_ERRCODES_IGNORE); spawn_multiple "cmd|arg#n;cmd#n;" per command ("@NULLS"
 * first for MPI_ARGVS_NULL); "-" on a rank other than the root (nothing converted).
 */
#include <stdio.h>
#include <string.h>
#include <mpi.h>

static char rec[1024];

static void add(const char *s)
{
    strncat(rec, s, sizeof(rec) - strlen(rec) - 1);
}

static void add_argv(char **argv)
{
    for (int i = 0; argv && argv[i]; i++) {
        add("|");
        add(argv[i]);
    }
}

static void add_n(int n)
{
    char b[16];
    snprintf(b, sizeof b, "#%d", n);
    add(b);
}

static int is_root(MPI_Comm comm, int root)
{
    int rank = -1;
    MPI_Comm_rank(comm, &rank);
    return rank == root;
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    rec[0] = '\0';
    if (!is_root(comm, root)) {
        add(argv == MPI_ARGV_NULL ? "-" : "-argv");
    } else {
        add(command);
        if (argv == MPI_ARGV_NULL)
            add("@NULL");
        add_argv(argv);
        add_n(maxprocs);
        if (array_of_errcodes == MPI_ERRCODES_IGNORE)
            add("!ign");
    }
    return PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm,
                           array_of_errcodes);
}

int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[],
                            int root, MPI_Comm comm, MPI_Comm *intercomm,
                            int array_of_errcodes[])
{
    rec[0] = '\0';
    if (!is_root(comm, root)) {
        add("-");
    } else {
        if (array_of_argv == MPI_ARGVS_NULL)
            add("@NULLS");
        for (int i = 0; i < count; i++) {
            add(array_of_commands[i]);
            if (array_of_argv)
                add_argv(array_of_argv[i]);
            add_n(array_of_maxprocs[i]);
            add(array_of_info[i] == MPI_INFO_NULL ? ";" : "i;");
        }
        if (array_of_errcodes == MPI_ERRCODES_IGNORE)
            add("!ign");
    }
    return PMPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv,
                                    array_of_maxprocs, array_of_info, root, comm, intercomm,
                                    array_of_errcodes);
}

/* Fortran: CALL f_spawn_last(buf), CHARACTER(LEN=*) buf (blank-padded) */
void f_spawn_last_(char *buf, size_t len);
void f_spawn_last_(char *buf, size_t len)
{
    size_t n = strlen(rec);
    if (n > len)
        n = len;
    memcpy(buf, rec, n);
    memset(buf + n, ' ', len - n);
}
