/* launch.c - starting one node's ranks: a socketpair (PMI_FD) and two
 * pipes (stdout, stderr) per rank, the environment (env.h) and per-rank
 * variables, binding (bind.h), then child_start (child.h: vfork and exec
 * with only system calls in the child).  A rank that cannot be started is
 * known before the next one is tried: it fails the job (or the spawned
 * job's report, spawn.h) with the reason, and no later rank is started.
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
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

/* In the child, just before execve (child.h: system calls only). */
static int set_slack(void *arg)
{
    (void)cpus_set_timer_slack(*(const long *)arg); /* checked by the parent */
    return 0;
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

/* Rank r could not be started (res says why; the child is reaped): the job
 * fails with the reason, and a spawned job tells its spawner. */
static void launch_failed(struct job *job, struct rank *r, const struct child_spec *cs,
                          const struct child_result *res)
{
    char why[600];

    child_describe(cs, res, why, sizeof(why));
    if (!job->end.ending)
        job_fail(job, MPX_EXIT_LAUNCH, "cannot start rank %d%s%s: %s", r->rank,
                 job->up ? " on host " : "", job->up ? job->host : "", why);
    if (job->spawned.on && job->spawned.report_fd >= 0) {
        char msg[700];
        snprintf(msg, sizeof(msg), "cannot start rank %d of spawned job %s: %s", r->rank,
                 job->jobid, why);
        mpx_spawned_report(&job->spawned, 1, msg);
    }
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

    /* the signals every rank resets: our dispositions do not change meanwhile */
    struct child_sigs sigs;
    child_sigs_scan(&sigs, true, false);

    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        job_msg(job, "cannot open /dev/null: %s", strerror(errno));
        return -errno;
    }

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
            int sv[2], po[2], pe[2] = {-1, -1};

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
            if (make_pipe(pe) < 0) {
                rc = -errno;
                job_msg(job,
                        "cannot start rank %d: pipe: %s (raise the open file limit?)",
                        r->rank, strerror(errno));
                close(sv[0]);
                close(sv[1]);
                close(po[0]);
                close(po[1]);
                break;
            }
            /* The rank's PMI_FD (child.c places it, whatever sv[1] is here). */
            const int pmifd = 3;
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

            struct child_fd pass[] = {{sv[1], pmifd}};
            struct child_spec cs = {
                .path = path,
                .argv = app->argv,
                .envp = env.v,
                .wdir = wdir,
                .fd0 = (r->rank != 0 || stdin_null) ? devnull : -1,
                .fd1 = po[1],
                .fd2 = pe[1],
                .pass = pass,
                .npass = 1,
                .keep_hup_ignored = true, /* nohup mpiexec: nohup ranks */
                .pgrp = CHILD_SESSION_NEW,
                /* a proxy that dies (killed, its link gone) takes its ranks along */
                .die_with_parent = (job->up || job->spawned.on) ? getpid() : 0,
                .setup = slack > 0 ? set_slack : NULL,
                .setup_arg = &slack,
                .sigs = &sigs,
                /* vfork: fork() copies our whole address space for nothing; with
                 * libpmix, its threads and hwloc in the process (190 mappings
                 * against 60), 64 ranks took 5-7 ms longer to start. */
                .use_vfork = true,
            };
            struct child_result res;
            pid_t pid = child_start(&cs, &res);
            close(sv[1]);
            close(po[1]);
            close(pe[1]);
            if (pid < 0) {
                if (res.stage == CHILD_FORK || res.stage == CHILD_PIPE)
                    job_msg(job, "cannot start rank %d (%s): %s: %s", r->rank,
                            app->argv[0], res.stage == CHILD_FORK ? "fork" : "pipe",
                            strerror(res.err));
                else
                    launch_failed(job, r, &cs, &res);
                close(sv[0]);
                close(po[0]);
                close(pe[0]);
                rc = pid;
                break;
            }
            r->pid = pid;
            job->live++;

            fdio_set_nonblock(sv[0], true);
            bool pmi_ok = nodesrv_add_client(job->ns, r->idx, sv[0]) == 0;
            if (!pmi_ok)
                close(sv[0]);
            int fds[2] = {po[0], pe[0]};
            for (int k = 0; k < 2; k++) {
                struct stream *s = &r->out[k];
                s->fd = fds[k];
                fdio_set_nonblock(s->fd, true);
                s->w = loop_watch_add(job->lp, s->fd, job->out_paused ? 0 : LOOP_READ,
                                      stream_cb, s);
                job->open_streams++;
            }
            if (!pmi_ok || !r->out[0].w || !r->out[1].w) {
                job_msg(job, "out of memory");
                rc = -ENOMEM;
            }
        }
    }
    /* every exec is known now: a spawned job tells its spawner */
    if (rc == 0 && job->spawned.on && job->spawned.report_fd >= 0)
        mpx_spawned_report(&job->spawned, 0, NULL);
    if (binder)
        mpx_bind_restore(binder);
    free(env.v);
    close(devnull);
    return rc;
}
