/* slurm.h - mpiexec inside a Slurm allocation: run the ranks with srun.
 *
 * Contract:
 *   mpx_slurm_decide() says whether mpiexec hands the job to srun: forced
 *   by -launcher slurm (or LOOM_MPIEXEC_LAUNCHER=slurm), refused by
 *   -launcher fork|ssh|rsh / --no-slurm (or LOOM_MPIEXEC_LAUNCHER=fork,
 *   ssh or rsh) and by a host list (-hosts, -f) without -launcher;
 *   otherwise yes when SLURM_JOB_ID is set and srun was found.  The command line wins
 *   over the environment variable.
 *
 *   mpx_srun_build() maps the parsed options to srun's argv and to the
 *   variables to set in srun's environment (srun exports its environment to
 *   the tasks):
 *     --mpi=TYPE (--mpi option, else LOOM_MPI_TYPE, else "loom"),
 *     --kill-on-bad-exit=1 (a failing rank ends the job, as without Slurm),
 *     -n N (sum of -n; omitted when the only app has no -n: the allocation's
 *     task count), --chdir=DIR (-gwdir, or the single app's -wdir),
 *     --label (-l), --cpu-bind=[verbose,]cores|none (-bind-to,
 *     --report-bindings), --export=NONE or --export=NAME,... (-genvnone),
 *     then the program and its arguments, or "--multi-prog FILE" for MPMD.
 *   -genv/-x/-genvlist (and the single app's -env/-envlist) become env
 *   entries "K=V" for srun's environment; --fence-timeout S becomes
 *   LOOM_FENCE_TIMEOUT=S.  For MPMD every segment is one line of the
 *   multi-prog file, "first-last" ranks, per-app -env/-wdir through
 *   "env [-C DIR] K=V ...", arguments single-quoted.
 *
 *   The caller's getenv-like function supplies the environment so the
 *   mapping is testable; nothing here touches the process state.
 *
 * Caveats:
 *   - With --multi-prog all ranks are one srun step: PMI appnum is 0 for
 *     every rank (the plugin serves appnum per component of a het step only).
 *   - A program argument with a newline cannot go into a multi-prog file
 *     (-EINVAL).
 */
#ifndef LOOM_LAUNCHER_SLURM_H
#define LOOM_LAUNCHER_SLURM_H

#include <stddef.h>

#include "args.h"

typedef const char *(*mpx_getenv_fn)(void *arg, const char *name);

/* 1: use srun, 0: fork locally; -EINVAL if forced but srun_found is 0 or
 * LOOM_MPIEXEC_LAUNCHER has an unknown value (message in err). */
int mpx_slurm_decide(const struct mpx_opts *o, mpx_getenv_fn ge, void *gearg,
                     int srun_found, char *err, size_t errlen);

struct mpx_srun {
    struct mpx_strv argv; /* srun ... (NULL terminated) */
    struct mpx_strv env;  /* "K=V" to set in srun's environment */
    char *multiprog;      /* multi-prog file text (MPMD), else NULL */
};

/* srun: the srun path for argv[0]; multiprog_path: the file name to put
 * after --multi-prog (the caller writes s->multiprog there).  Returns 0,
 * -EINVAL (message in err) or -ENOMEM; free with mpx_srun_free(). */
int mpx_srun_build(const struct mpx_opts *o, mpx_getenv_fn ge, void *gearg,
                   const char *srun, const char *multiprog_path, struct mpx_srun *s,
                   char *err, size_t errlen);
void mpx_srun_free(struct mpx_srun *s);

/* argv as one shell-quoted line (for -v); malloc'd, NULL on ENOMEM. */
char *mpx_srun_cmdline(char *const *argv);

#endif /* LOOM_LAUNCHER_SLURM_H */
