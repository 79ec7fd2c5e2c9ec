/* args.h - mpiexec command line: hydra / Open MPI style options, MPMD.
 *
 * Contract:
 *   mpx_args_parse() turns argv into struct mpx_opts without touching the
 *   environment or the file system.  Options may be spelled with one or two
 *   dashes; valued long options also accept "--opt=value".  The command line
 *   is a list of application segments separated by ":"; in each segment,
 *   options come first, then the program and its arguments.  Per-app options
 *   (-n/-np, -env, -wdir, -envlist) apply to the segment they appear in;
 *   global options (-genv, -x, -genvlist, -l, -bind-to, ...) may appear in
 *   any segment and apply to all.
 *
 *   On error it returns -EINVAL and writes a one-line message (no
 *   "mpiexec:" prefix, no newline) to err.  -h and --version set flags and
 *   return 0 even without a program.
 *
 * Notes:
 *   - Environment entries are stored as "K=V" strings.  "-x VAR" without a
 *     value is stored as "VAR" and resolved by the launcher from its own
 *     environment (it is exported anyway: ranks inherit mpiexec's
 *     environment, as with hydra's default -genvall).
 *   - launcher, mpi_type, np_set and bind_set only matter inside a Slurm
 *     allocation, where mpiexec runs srun (slurm.h maps the options).
 *   - hosts/hostfile/ppn/launcher_exec are checked for syntax by hosts.c
 *     when mpiexec builds its host list (multi-host mode, see front.c).
 */
#ifndef LOOM_LAUNCHER_ARGS_H
#define LOOM_LAUNCHER_ARGS_H

#include <stddef.h>

enum mpx_bind_kind { MPX_BIND_NONE = 0, MPX_BIND_CORE = 1 };

/* -launcher: AUTO uses srun inside a Slurm allocation (see slurm.h). */
enum mpx_launcher_kind {
    MPX_LAUNCHER_AUTO = 0,
    MPX_LAUNCHER_FORK,
    MPX_LAUNCHER_SLURM,
    MPX_LAUNCHER_SSH,
    MPX_LAUNCHER_RSH,
};

struct mpx_strv {
    char **v;
    int n;
};

struct mpx_app {
    int np;      /* ranks of this app (default 1) */
    int np_set;  /* -n/-np was given for this app */
    char **argv; /* program and its arguments, NULL terminated */
    int argc;
    struct mpx_strv env; /* "K=V" from -env / -envlist */
    const char *wdir;    /* -wdir of this segment, or NULL */
    int owns_argv;       /* argv is our NULL-terminated copy */
};

struct mpx_opts {
    struct mpx_app *apps;
    int napps;
    int nranks;           /* sum of np */
    struct mpx_strv genv; /* "K=V" (or "K" from -x K) from -genv, -x, -genvlist */
    int genv_none;        /* -genvnone: ranks do not inherit mpiexec's environment */
    const char *gwdir;    /* -gwdir: default working directory */
    int tag_output;       /* -l, --tag-output, -prepend-rank */
    enum mpx_bind_kind bind;
    int bind_set;         /* -bind-to was given */
    enum mpx_launcher_kind launcher; /* -launcher fork|ssh|rsh|slurm, --no-slurm */
    const char *launcher_exec; /* -launcher-exec CMD (words split at blanks) */
    const char *hosts;         /* -hosts h1,h2:n,... or NULL */
    const char *hostfile;      /* -f/-hostfile/-machinefile FILE or NULL */
    int ppn;                   /* -ppn N; 0 = each host's slots */
    const char *mpi_type; /* --mpi TYPE: srun's --mpi (NULL: LOOM_MPI_TYPE or loom) */
    int report_bindings;
    int timeout_s;       /* --timeout; 0 = none */
    int fence_timeout_s; /* --fence-timeout; 0 = none */
    int verbose;         /* -v: launcher progress on stderr */
    int help;
    int version;
};

/* Returns 0 or -EINVAL (message in err) or -ENOMEM. */
int mpx_args_parse(int argc, char **argv, struct mpx_opts *o, char *err, size_t errlen);
void mpx_args_free(struct mpx_opts *o);
/* Usage text for -h. */
const char *mpx_args_usage(void);

#endif /* LOOM_LAUNCHER_ARGS_H */
