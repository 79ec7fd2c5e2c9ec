/* srun.c - mpiexec inside a Slurm allocation: the job handed to
 * "srun --mpi=loom" (slurm.h maps the options), with a --multi-prog file for
 * MPMD and, when mpiexec must stay (--timeout, that file), signals forwarded
 * to srun. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "fdio.h"
#include "node.h"
#include "slurm.h"

const char *mpx_getenv_cb(void *arg, const char *name)
{
    (void)arg;
    return getenv(name);
}

/* srun in PATH (or LOOM_SRUN, for tests); path in buf, or NULL. */
const char *mpx_srun_find(char *buf, size_t len)
{
    const char *s = getenv("LOOM_SRUN");

    if (s && *s)
        return access(s, X_OK) == 0 ? s : NULL;
    s = mpx_find_program("srun", buf, len);
    return strchr(s, '/') ? s : NULL;
}

static volatile sig_atomic_t srun_pid;
static volatile sig_atomic_t srun_alarm;

static void srun_forward(int sig)
{
    if (sig == SIGALRM) {
        srun_alarm++;
        sig = srun_alarm == 1 ? SIGTERM : SIGKILL;
        if (srun_alarm == 1)
            alarm(MPX_KILL_GRACE_MS / 100); /* srun needs a moment to kill the step */
    }
    if (srun_pid > 0)
        kill((pid_t)srun_pid, sig);
}

/* Runs the job with srun; returns mpiexec's exit code. */
int mpx_srun_run(struct mpx_opts *o, const char *srun)
{
    char err[512], mp[64] = "";
    struct mpx_srun s;
    int rc, fd = -1, status = 0;
    pid_t pid;

    const char *tmp = getenv("TMPDIR");
    if (o->napps > 1) {
        snprintf(mp, sizeof(mp), "%s/loom-mpmd.XXXXXX",
                 (tmp && *tmp && strlen(tmp) < 40) ? tmp : "/tmp");
        fd = mkstemp(mp);
        if (fd < 0) {
            fprintf(stderr, "mpiexec: cannot create the --multi-prog file %s: %s\n", mp,
                    strerror(errno));
            return 1;
        }
    }
    if (o->genv_none) {
        /* --export without PATH: the stepd cannot search for the program */
        for (int k = 0; k < o->napps; k++) {
            char pbuf[4096];
            const char *p = mpx_find_program(o->apps[k].argv[0], pbuf, sizeof(pbuf));
            if (p == pbuf && (p = strdup(pbuf)) != NULL)
                o->apps[k].argv[0] = (char *)p; /* not freed: we exit soon */
        }
    }
    rc = mpx_srun_build(o, mpx_getenv_cb, NULL, srun, mp, &s, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "mpiexec: %s\n", rc == -ENOMEM ? "out of memory" : err);
        if (fd >= 0) {
            close(fd);
            unlink(mp);
        }
        return MPX_EXIT_USAGE;
    }
    if (fd >= 0) {
        rc = fdio_write_full(fd, s.multiprog, strlen(s.multiprog));
        close(fd);
        if (rc < 0) {
            fprintf(stderr, "mpiexec: cannot write %s: %s\n", mp, strerror(-rc));
            unlink(mp);
            mpx_srun_free(&s);
            return 1;
        }
    }
    for (int i = 0; i < s.env.n; i++)
        putenv(s.env.v[i]); /* s.env lives until exit */
    if (o->verbose) {
        char *line = mpx_srun_cmdline(s.argv.v);
        fprintf(stderr, "mpiexec: inside Slurm job %s: ", getenv("SLURM_JOB_ID"));
        for (int i = 0; i < s.env.n; i++)
            fprintf(stderr, "%s ", s.env.v[i]);
        fprintf(stderr, "%s\n", line ? line : "srun ...");
        free(line);
        if (s.multiprog)
            fprintf(stderr, "mpiexec: %s:\n%s", mp, s.multiprog);
    }
    fflush(stdout);
    fflush(stderr);
    if (o->timeout_s == 0 && !s.multiprog) {
        execv(s.argv.v[0], s.argv.v);
        fprintf(stderr, "mpiexec: cannot run %s: %s\n", s.argv.v[0], strerror(errno));
        return MPX_EXIT_LAUNCH;
    }

    /* Stay around: the timer, and the multi-prog file to remove. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = srun_forward;
    sigemptyset(&sa.sa_mask);
    /* srun in our process group, with our fds and environment (as the exec above) */
    extern char **environ;
    struct child_spec cs = {
        .path = s.argv.v[0],
        .argv = s.argv.v,
        .envp = environ,
        .fd0 = -1,
        .fd1 = -1,
        .fd2 = -1,
        .inherit_fds = true,
        .keep_ignored = true,
    };
    struct child_result res;
    pid = child_start(&cs, &res);
    if (pid < 0) {
        char why[600];
        fprintf(stderr, "mpiexec: %s\n", child_describe(&cs, &res, why, sizeof(why)));
        rc = MPX_EXIT_LAUNCH;
        goto done;
    }
    srun_pid = pid;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL); /* twice within 1 s: srun kills the step */
    if (o->timeout_s > 0)
        alarm((unsigned)o->timeout_s);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    alarm(0);
    if (srun_alarm) {
        fprintf(stderr, "mpiexec: timeout after %d s: srun killed\n", o->timeout_s);
        rc = MPX_EXIT_TIMEOUT;
    } else if (WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    } else {
        rc = 128 + WTERMSIG(status);
    }
    if (o->verbose)
        fprintf(stderr, "mpiexec: srun ended, exit code %d\n", rc);
done:
    if (mp[0])
        unlink(mp);
    mpx_srun_free(&s);
    return rc;
}
