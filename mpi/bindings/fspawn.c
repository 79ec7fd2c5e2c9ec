/*
 * fspawn.c - MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran (part of
 * libmpifort, written by hand beside the generated mpi_fortran.c; MPI-3.1 10.3.2 and
 * 10.3.3), and the storage of the sentinels MPI_ARGV_NULL and MPI_ARGVS_NULL.
 *
 * Fortran hands over CHARACTER arrays: one contiguous block of fixed-length,
 * blank-padded entries, the entry length as a hidden argument after the explicit
 * ones.  ARGV is ARGV(*) for SPAWN and ARRAY_OF_ARGV(COUNT, *) for SPAWN_MULTIPLE
 * (column-major: the j-th argument of command i is element (i, j)).  An argument list
 * ends at its first all-blank entry; each entry and each command loses its trailing
 * blanks (leading ones stay).  xf_argv() builds the C argv (NULL-terminated, in one
 * allocation: pointers first, strings after) that the C function gets.
 * MPI_ARGV_NULL / MPI_ARGVS_NULL are the common blocks /mpipriv_argv_null/ and
 * /mpipriv_argvs_null/ (one CHARACTER each) defined here and recognised by address;
 * MPI_ERRCODES_IGNORE is libmpi's /mpipriv_errcodes_ignore/.
 */
#include <stdlib.h>
#include <string.h>
#include "mpi.h"

#define XF_EXPORT __attribute__((visibility("default")))

XF_EXPORT char mpipriv_argv_null_[1] __attribute__((aligned(16)));
XF_EXPORT char mpipriv_argvs_null_[1] __attribute__((aligned(16)));
extern MPI_Fint mpipriv_errcodes_ignore_[];

/* Length of one Fortran entry without its trailing blanks. */
static size_t xf_trim(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    return len;
}

/* A C copy of a Fortran string without its trailing blanks (NULL: out of memory). */
static char *xf_spawn_str(const char *f, size_t len)
{
    size_t n = xf_trim(f, len);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, f, n);
        s[n] = '\0';
    }
    return s;
}

/* The C argv of a Fortran argument list: entries of `len` characters `step` entries
 * apart from `f`, up to the first all-blank one.  NULL with *nomem set when out of
 * memory.  Freed with one free(). */
static char **xf_argv(const char *f, size_t len, size_t step, int *nomem)
{
    size_t n = 0, bytes = 0;
    if (len > 0)
        for (; xf_trim(f + n * step * len, len) > 0; n++)
            bytes += xf_trim(f + n * step * len, len) + 1;
    char **v = malloc((n + 1) * sizeof(char *) + bytes);
    if (!v) {
        *nomem = 1;
        return NULL;
    }
    char *p = (char *)(v + n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *e = f + i * step * len;
        size_t k = xf_trim(e, len);
        memcpy(p, e, k);
        p[k] = '\0';
        v[i] = p;
        p += k + 1;
    }
    v[n] = NULL;
    return v;
}

static int *xf_errcodes(MPI_Fint *e)
{
    return e == mpipriv_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : (int *)e;
}

/* Only the root reads command, argv, maxprocs and info (MPI-3.1 10.3.2): elsewhere
 * they may be anything, e.g. an argv array with no blank entry, so other ranks convert
 * nothing.  A communicator that is not one is reported by the rank query here (through
 * the error handler MPI_COMM_WORLD has, as for any call with a bad communicator) and
 * again by the C function; this rank then converts its arguments as a root would. */
static int xf_is_root(MPI_Fint *comm, MPI_Fint *root)
{
    int rank = -1;
    return PMPI_Comm_rank((MPI_Comm)*comm, &rank) != MPI_SUCCESS || rank == *root;
}

static void xf_spawn(int pmpi, char *command, char *argv, MPI_Fint *maxprocs,
                     MPI_Fint *info, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,
                     MPI_Fint *errcodes, MPI_Fint *ierror, size_t l_command, size_t l_argv)
{
    int nomem = 0, rc, isroot = xf_is_root(comm, root);
    char *cmd = xf_spawn_str(command, isroot ? l_command : 0);
    char **v = argv == mpipriv_argv_null_ || !isroot ? MPI_ARGV_NULL
                                                     : xf_argv(argv, l_argv, 1, &nomem);
    MPI_Comm ic = MPI_COMM_NULL;
    if (!cmd || nomem)
        rc = MPI_ERR_NO_MEM;
    else if (pmpi)
        rc = PMPI_Comm_spawn(cmd, v, *maxprocs, (MPI_Info)*info, *root, (MPI_Comm)*comm,
                             &ic, xf_errcodes(errcodes));
    else
        rc = MPI_Comm_spawn(cmd, v, *maxprocs, (MPI_Info)*info, *root, (MPI_Comm)*comm, &ic,
                            xf_errcodes(errcodes));
    *intercomm = (MPI_Fint)ic;
    free(v);
    free(cmd);
    *ierror = rc;
}

static void xf_spawn_multiple(int pmpi, MPI_Fint *count, char *commands, char *argvs,
                              MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root,
                              MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                              MPI_Fint *ierror, size_t l_commands, size_t l_argvs)
{
    /* only the root reads count and the arrays (MPI-3.1 10.3.3); other ranks may pass
     * anything there, so a bad count is the C function's to report at the root */
    int n = *count > 0 && xf_is_root(comm, root) ? (int)*count : 0, nomem = 0, rc;
    char **cmds = calloc((size_t)n + 1, sizeof(char *));
    char ***v = NULL;
    if (argvs != mpipriv_argvs_null_)
        v = calloc((size_t)n + 1, sizeof(char **));
    if (!cmds || (argvs != mpipriv_argvs_null_ && !v))
        nomem = 1;
    for (int i = 0; !nomem && i < n; i++) {
        if (!(cmds[i] = xf_spawn_str(commands + (size_t)i * l_commands, l_commands)))
            nomem = 1;
        else if (v)
            v[i] = xf_argv(argvs + (size_t)i * l_argvs, l_argvs, (size_t)n, &nomem);
    }
    MPI_Comm ic = MPI_COMM_NULL;
    if (nomem)
        rc = MPI_ERR_NO_MEM;
    else if (pmpi)
        rc = PMPI_Comm_spawn_multiple(*count, n ? cmds : NULL, v, (const int *)maxprocs,
                                      (const MPI_Info *)infos, *root, (MPI_Comm)*comm, &ic,
                                      xf_errcodes(errcodes));
    else
        rc = MPI_Comm_spawn_multiple(*count, n ? cmds : NULL, v, (const int *)maxprocs,
                                     (const MPI_Info *)infos, *root, (MPI_Comm)*comm, &ic,
                                     xf_errcodes(errcodes));
    *intercomm = (MPI_Fint)ic;
    for (int i = 0; cmds && i < n; i++) {
        free(cmds[i]);
        if (v)
            free(v[i]);
    }
    free(cmds);
    free(v);
    *ierror = rc;
}

/* mpi_ (mpif.h, USE mpi), pmpi_ (profiling), loomf_ (mpi_f08's module procedures) */
#define XF_SPAWN(prefix, pmpi)                                                          \
    XF_EXPORT void prefix##comm_spawn_(char *command, char *argv, MPI_Fint *maxprocs,   \
                                       MPI_Fint *info, MPI_Fint *root, MPI_Fint *comm,  \
                                       MPI_Fint *intercomm, MPI_Fint *errcodes,         \
                                       MPI_Fint *ierror, size_t l_command, size_t l_argv) \
    {                                                                                   \
        xf_spawn(pmpi, command, argv, maxprocs, info, root, comm, intercomm, errcodes,  \
                 ierror, l_command, l_argv);                                            \
    }                                                                                   \
    XF_EXPORT void prefix##comm_spawn_multiple_(                                        \
        MPI_Fint *count, char *commands, char *argvs, MPI_Fint *maxprocs,               \
        MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,           \
        MPI_Fint *errcodes, MPI_Fint *ierror, size_t l_commands, size_t l_argvs)        \
    {                                                                                   \
        xf_spawn_multiple(pmpi, count, commands, argvs, maxprocs, infos, root, comm,    \
                          intercomm, errcodes, ierror, l_commands, l_argvs);            \
    }

XF_SPAWN(mpi_, 0)
XF_SPAWN(pmpi_, 1)
XF_SPAWN(loomf_, 0)
XF_SPAWN(loomfp_, 1)
