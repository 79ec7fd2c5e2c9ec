/* launch.c - starting one node's ranks: a socketpair (PMI_FD) and three
 * pipes (stdout, stderr, exec errors) per rank, the environment (env.h) and
 * per-rank variables, binding (bind.h), then vfork and exec with only
 * async-signal-safe calls in the child.  An exec error comes back through
 * its pipe and fails the job (or the spawned job's report, spawn.h).
 *
 * Contract: ranks get PMI_FD, PMI_RANK, PMI_SIZE, PMI_JOBID ("<mpiexec
 * pid>.0"), MPI_LOCALRANKID, MPI_LOCALNRANKS and inherit mpiexec's
 * environment plus -genv/-x/-env settings; on a host with more ranks than
 * CPUs they also get a timer slack (LOOM_TIMER_SLACK; cpus.h).  Rank 0's
 * stdin is mpiexec's stdin (a terminal only when mpiexec is in its
 * foreground); other ranks read /dev/null.  Every other fd of ours is
 * close-on-exec.  Ranks of a proxy or of a spawned job die with their
 * mpiexec (PR_SET_PDEATHSIG); ranks of the top mpiexec do not, so if it is
 * SIGKILLed they only see their PMI socket close. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpus.h"
#include "env.h"
#include "fdio.h"
#include "lpmix.h"
#include "node.h"

static int make_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    return 0;
}

/* What a forked child needs; everything is prepared by the parent so the
 * child only makes async-signal-safe calls before execve(). */
struct child {
    const char *path;
    char **argv;
    char **envp;
    const char *wdir;
    int stdin_fd; /* -1: keep fd 0 */
    int out_fd, err_fd, pmi_fd, pmi_target, errpipe;
    const int *defsigs;
    int ndefsigs;
    pid_t parent;        /* > 0: die with the parent (proxy mode) */
    long timer_slack_us; /* > 0: set it (a node with more ranks than CPUs) */
};

/* In the child: never returns. */
static _Noreturn void child_exec(const struct child *c)
{
    struct sigaction dfl;
    sigset_t none;
    int e;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int i = 0; i < c->ndefsigs; i++)
        sigaction(c->defsigs[i], &dfl, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    /* A proxy that dies (killed, its host's link gone) takes its ranks along. */
    if (c->parent > 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != c->parent))
        _exit(MPX_EXIT_LAUNCH);
#ifdef CLOSE_RANGE_CLOEXEC
    /* fds mpiexec inherited without close-on-exec are not the ranks'
     * business either; the dup2 calls below clear the flag again. */
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
    if ((c->stdin_fd >= 0 && dup2(c->stdin_fd, 0) < 0) || dup2(c->out_fd, 1) < 0 ||
        dup2(c->err_fd, 2) < 0 || dup2(c->pmi_fd, c->pmi_target) < 0)
        goto fail;
    if (c->wdir && chdir(c->wdir) < 0)
        goto fail;
    (void)cpus_set_timer_slack(c->timer_slack_us); /* checked by the parent */
    execve(c->path, c->argv, c->envp);
fail:
    e = errno;
    if (write(c->errpipe, &e, sizeof(e)) < 0) {
        /* nothing left to report with */
    }
    _exit(MPX_EXIT_LAUNCH);
}

/* Start one rank: vfork, because the child makes nothing but system calls until
 * execve or _exit (child_exec), and fork() has to copy our whole address space for
 * nothing: with libpmix, its threads and hwloc in the process (190 mappings against
 * 60), 64 ranks took 5-7 ms longer to start.  A function of its own so that no caller's
 * variables live across vfork. */
static __attribute__((noinline)) pid_t spawn(const struct child *c)
{
    pid_t pid = vfork();
    if (pid == 0)
        child_exec(c);
    return pid;
}

/* argv0 without '/': search PATH once in the parent (execvp is not
 * async-signal-safe, and one search per app is cheaper than one per rank). */
const char *mpx_find_program(const char *argv0, char *buf, size_t len)
{
    const char *path = getenv("PATH");

    if (strchr(argv0, '/'))
        return argv0;
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t dl = c ? (size_t)(c - path) : strlen(path);
        struct stat st;
        int n = dl ? snprintf(buf, len, "%.*s/%s", (int)dl, path, argv0)
                   : snprintf(buf, len, "%s", argv0);
        if (n > 0 && (size_t)n < len && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
            access(buf, X_OK) == 0)
            return buf;
        if (!c)
            break;
        path = c + 1;
    }
    return argv0; /* execve reports ENOENT */
}

void close_errpipe(struct rank *r)
{
    if (r->exec_err_fd < 0)
        return;
    loop_watch_remove(r->job->lp, r->exec_err_w);
    r->exec_err_w = NULL;
    close(r->exec_err_fd);
    r->exec_err_fd = -1;
}

/* The child's exec error pipe: EOF means execve succeeded. */
void errpipe_read(struct rank *r)
{
    struct job *job = r->job;
    int e = 0;
    ssize_t n = fdio_read(r->exec_err_fd, &e, sizeof(e));

    if (n == -EAGAIN)
        return;
    close_errpipe(r);
    int st = 0;
    bool reaped = false;
    if (n == (ssize_t)sizeof(e) && !r->exited) {
        /* The child is in _exit() right after writing: reap it here so it
         * is not counted among the ranks left to kill. */
        if (waitpid(r->pid, &st, 0) == r->pid) {
            r->exited = true;
            job->live--;
            reaped = true;
        }
    }
    if (n == (ssize_t)sizeof(e) && !job->end.ending)
        job_fail(job, MPX_EXIT_LAUNCH, "cannot start rank %d (%s)%s%s: %s", r->rank,
                 job->o->apps[r->app].argv[0], job->up ? " on host " : "",
                 job->up ? job->host : "", strerror(e));
    if (job->spawned.on && job->spawned.report_fd >= 0) {
        /* a spawned job tells its spawner once every exec is known */
        if (n == (ssize_t)sizeof(e)) {
            char why[600];
            snprintf(why, sizeof(why), "cannot start rank %d of spawned job %s (%s): %s",
                     r->rank, job->jobid, job->o->apps[r->app].argv[0], strerror(e));
            mpx_spawned_report(&job->spawned, 1, why);
        } else if (--job->exec_pending == 0) {
            mpx_spawned_report(&job->spawned, 0, NULL);
        }
    }
    if (reaped && job->up) {
        /* after the failure, so that mpiexec reports the reason */
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, r->rank);
        pack_i32(&pk, st);
        up_send(job, MPX_P_EXIT, &pk);
    }
}

static void errpipe_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                       void *arg)
{
    struct rank *r = arg;

    errpipe_read(r);
    job_check_done(r->job);
}

int node_launch(struct job *job, struct mpx_bind *binder)
{
    struct mpx_opts *o = job->o;
    struct mpx_envv env = {0};
    int devnull, rc = 0;
    /* Rank 0 reads our stdin.  A terminal only if we are in its foreground:
     * ranks have no controlling terminal (own session), so a background
     * job's rank would otherwise steal the shell's input. */
    bool stdin_null = isatty(0) && tcgetpgrp(0) != getpgrp();
    char vars[7][96];
    char pathbuf[4096];
    int defsigs[8], ndef = 0;
    sigset_t all, saved;
    struct sigaction old;

    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        job_msg(job, "cannot open /dev/null: %s", strerror(errno));
        return -errno;
    }
    defsigs[ndef++] = SIGCHLD;
    defsigs[ndef++] = SIGPIPE;
    defsigs[ndef++] = SIGTERM;
    defsigs[ndef++] = SIGINT;
    /* SIGHUP stays ignored for ranks if it was for us (nohup). */
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        defsigs[ndef++] = SIGHUP;
    sigfillset(&all);

    /* More ranks here than CPUs: their sleeping waits get a coarser timer
     * (cpus.h says why); LOOM_TIMER_SLACK in microseconds, 0 = leave it. */
    long slack = 0;
    if (cpus_oversubscribed(job->n, 0)) {
        const char *v = getenv("LOOM_TIMER_SLACK");
        char *end;
        slack = CPUS_DEFAULT_TIMER_SLACK_US;
        if (v && *v) {
            errno = 0;
            long us = strtol(v, &end, 10);
            if (errno || *end || us < 0 || us > CPUS_MAX_TIMER_SLACK_US)
                job_msg(job,
                        "warning: ignoring LOOM_TIMER_SLACK=%s (want 0..%d microseconds)",
                        v, CPUS_MAX_TIMER_SLACK_US);
            else
                slack = us;
        }
    }

    int lk = 0; /* job->ranks[] holds this node's ranks in rank order */
    for (int a = 0; a < o->napps && rc == 0; a++) {
        struct mpx_app *app = &o->apps[a];
        const char *wdir = app->wdir ? app->wdir : o->gwdir;
        struct stat st;

        if (lk >= job->n || job->ranks[lk].app != a)
            continue; /* no rank of this application here */
        if (wdir &&
            (stat(wdir, &st) < 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)))) {
            job_msg(job, "cannot use working directory '%s': %s", wdir, strerror(errno));
            rc = -ENOENT;
            break;
        }
        if (mpx_envv_app(&env, o, app) < 0) {
            job_msg(job, "cannot build the environment of %s: out of memory",
                    app->argv[0]);
            rc = -ENOMEM;
            break;
        }
        for (char *const *d = lpmix_env_defaults(); d && *d && rc == 0; d++)
            if (mpx_envv_set_default(&env, *d) < 0)
                rc = -ENOMEM;
        if (rc < 0) {
            job_msg(job, "cannot build the environment of %s: out of memory",
                    app->argv[0]);
            break;
        }
        const char *path = mpx_find_program(app->argv[0], pathbuf, sizeof(pathbuf));
        int base = env.n;
        for (; lk < job->n && job->ranks[lk].app == a && rc == 0; lk++) {
            struct rank *r = &job->ranks[lk];
            int sv[2], po[2], pe[2] = {-1, -1}, ep[2];

            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                rc = -errno;
                job_msg(
                    job,
                    "cannot start rank %d: socketpair: %s (raise the open file limit?)",
                    r->rank, strerror(errno));
                break;
            }
            if (make_pipe(po) < 0) {
                rc = -errno;
                job_msg(job,
                        "cannot start rank %d: pipe: %s (raise the open file limit?)",
                        r->rank, strerror(errno));
                close(sv[0]);
                close(sv[1]);
                break;
            }
            if (make_pipe(pe) < 0 || make_pipe(ep) < 0) {
                rc = -errno;
                job_msg(job,
                        "cannot start rank %d: pipe: %s (raise the open file limit?)",
                        r->rank, strerror(errno));
                close(sv[0]);
                close(sv[1]);
                close(po[0]);
                close(po[1]);
                if (pe[0] >= 0) {
                    close(pe[0]);
                    close(pe[1]);
                }
                break;
            }
            /* The rank's PMI_FD: a number that neither the socket nor the
             * error pipe occupies, so dup2 really clears close-on-exec and
             * does not clobber the error pipe. */
            int pmifd = 3;
            while (pmifd == sv[1] || pmifd == ep[1])
                pmifd++;
            snprintf(vars[0], sizeof(vars[0]), "PMI_FD=%d", pmifd);
            snprintf(vars[1], sizeof(vars[1]), "PMI_RANK=%d", r->rank);
            snprintf(vars[2], sizeof(vars[2]), "PMI_SIZE=%d", job->size);
            snprintf(vars[3], sizeof(vars[3]), "PMI_JOBID=%s", job->jobid);
            snprintf(vars[4], sizeof(vars[4]), "MPI_LOCALRANKID=%d", r->idx);
            snprintf(vars[5], sizeof(vars[5]), "MPI_LOCALNRANKS=%d", job->n);
            env.n = base;
            for (int k = 0; k < 6; k++)
                env.v[env.n++] = vars[k];
            if (job->spawned.on) { /* PMI-1 clients learn it here (PMI_Init) */
                snprintf(vars[6], sizeof(vars[6]), "PMI_SPAWNED=1");
                env.v[env.n++] = vars[6];
            }
            for (char *const *xv = lpmix_env(r->idx); xv && *xv; xv++)
                (void)mpx_envv_set(&env, *xv);
            env.v[env.n] = NULL;

            if (binder) {
                char desc[300];
                int brc = mpx_bind_self(binder, r->idx, desc, sizeof(desc));
                if (brc < 0)
                    job_msg(job, "warning: cannot bind rank %d to %s: %s", r->rank, desc,
                            strerror(-brc));
                else if (o->report_bindings)
                    job_msg(job, "rank %d bound to %s", r->rank, desc);
            } else if (o->report_bindings) {
                job_msg(job, "rank %d not bound", r->rank);
            }

            struct child c = {
                .path = path,
                .argv = app->argv,
                .envp = env.v,
                .wdir = wdir,
                .stdin_fd = (r->rank != 0 || stdin_null) ? devnull : -1,
                .out_fd = po[1],
                .err_fd = pe[1],
                .pmi_fd = sv[1],
                .pmi_target = pmifd,
                .errpipe = ep[1],
                .defsigs = defsigs,
                .ndefsigs = ndef,
                .parent = (job->up || job->spawned.on) ? getpid() : 0,
                .timer_slack_us = slack,
            };
            /* Block signals across fork so that our handlers never run in
             * the child (they would write to our self-pipe). */
            sigprocmask(SIG_SETMASK, &all, &saved);
            pid_t pid = spawn(&c);
            int fork_errno = errno;
            sigprocmask(SIG_SETMASK, &saved, NULL);
            close(sv[1]);
            close(po[1]);
            close(pe[1]);
            close(ep[1]);
            if (pid < 0) {
                job_msg(job, "cannot start rank %d (%s): fork: %s", r->rank, app->argv[0],
                        strerror(fork_errno));
                close(sv[0]);
                close(po[0]);
                close(pe[0]);
                close(ep[0]);
                rc = -fork_errno;
                break;
            }
            r->pid = pid;
            job->live++;
            job->exec_pending++;

            r->pmi_fd = sv[0];
            fdio_set_nonblock(sv[0], true);
            r->pmi_w = loop_watch_add(job->lp, sv[0], LOOP_READ, pmi_cb, r);
            r->exec_err_fd = ep[0];
            fdio_set_nonblock(ep[0], true);
            r->exec_err_w = loop_watch_add(job->lp, ep[0], LOOP_READ, errpipe_cb, r);
            int fds[2] = {po[0], pe[0]};
            for (int k = 0; k < 2; k++) {
                struct stream *s = &r->out[k];
                s->fd = fds[k];
                fdio_set_nonblock(s->fd, true);
                s->w = loop_watch_add(job->lp, s->fd, job->out_paused ? 0 : LOOP_READ,
                                      stream_cb, s);
                job->open_streams++;
            }
            if (!r->pmi_w || !r->exec_err_w || !r->out[0].w || !r->out[1].w) {
                job_msg(job, "out of memory");
                rc = -ENOMEM;
            }
        }
    }
    if (binder)
        mpx_bind_restore(binder);
    free(env.v);
    close(devnull);
    return rc;
}
