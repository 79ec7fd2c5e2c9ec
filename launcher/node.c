/* node.c - the life of one node's job under mpiexec (the local job, or a
 * proxy's share of a multi-host job): node_run() creates the server core,
 * starts the ranks (launch.c) and runs the loop; here are the failures and
 * "mpiexec: ..." messages, the kill sequence (SIGTERM, SIGKILL after
 * MPX_KILL_GRACE_MS), reaping and judging exits (jobctl.h's rule), signals
 * to mpiexec, --timeout and the end of the job.  node.h has the design.
 *
 * Contract (user-visible behaviour; doc/man/mpiexec.1 is the reference):
 *   The first abnormal rank exit, a PMI abort, --timeout or a signal to
 *   mpiexec ends the job: all ranks get SIGTERM, then SIGKILL after
 *   MPX_KILL_GRACE_MS; a second signal sends SIGKILL at once.  Every such
 *   event is one "mpiexec: ..." line on stderr.  A proxy reports exits and
 *   failures to the front end, which decides the exit status.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "lpmix.h"
#include "node.h"

/* One "mpiexec: ..." line on stderr, after the rank output gathered so far. */
void job_msg(struct job *job, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mpx_console_vmsg(&job->con, fmt, ap);
    va_end(ap);
}

/* A failure that ends the job: the message names the culprit.  A proxy
 * tells mpiexec, which decides the exit code and ends the job everywhere. */
void job_fail(struct job *job, int code, const char *fmt, ...)
{
    char text[LOOM_LOG_LINE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (job->up) {
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, code);
        pack_str(&pk, text);
        up_send(job, MPX_P_FAIL, &pk);
        job->fail_sent = true;
        return;
    }
    job_msg(job, "%s", text);
    job->end.exit_code = code;
    job_kill(job);
}

/* ---- job end ------------------------------------------------------------- */

static int live_total(const struct job *job)
{
    return job->live + mpx_spawner_live(job->spawner);
}

void job_kill_all(struct job *job, int sig)
{
    mpx_spawner_kill(job->spawner, sig); /* a nested mpiexec ends its own ranks */
    for (int i = 0; i < job->n; i++) {
        struct rank *r = &job->ranks[i];
        /* each rank leads its own process group (jobctl.h); only unreaped
         * ranks: a reaped rank's pid may be reused */
        if (r->pid > 0 && !r->exited)
            mpx_kill_group(r->pid, sig);
    }
}

static void kill_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    job->kill_timer = NULL;
    if (live_total(job) > 0) {
        job->sigkill_sent = true;
        job_kill_all(job, SIGKILL);
    }
}

void job_kill(struct job *job)
{
    if (job->end.ending)
        return;
    job->end.ending = true;
    if (live_total(job) > 0) {
        if (!job->up && job->live > 0) /* mpiexec counts the ranks of all hosts */
            job_msg(job, "killing %d remaining rank%s", job->live, mpx_plural(job->live));
        job_kill_all(job, SIGTERM);
        job->kill_timer = loop_timer_add(job->lp, MPX_KILL_GRACE_MS, kill_timer_cb, job);
        if (!job->kill_timer) { /* no memory for the grace: a rank ignoring SIGTERM
                                 * must not keep the job alive */
            job->sigkill_sent = true;
            job_kill_all(job, SIGKILL);
        }
    }
}

static void drain_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    /* Something a rank started keeps its output open after the rank exited:
     * stop waiting, and end it like Slurm ends a step's leftovers.  The
     * open pipe shows the rank's process group still has members, so its
     * id (the rank's pid) cannot have been reused. */
    job->drain_timer = NULL;
    for (int i = 0; i < job->n; i++) {
        struct rank *r = &job->ranks[i];
        if (r->pid > 0 && (r->out[0].fd >= 0 || r->out[1].fd >= 0))
            kill(-r->pid, SIGKILL);
        for (int k = 0; k < 2; k++)
            stream_close(&r->out[k]);
    }
    job_check_done(job);
}

void job_check_done(struct job *job)
{
    if (live_total(job) > 0)
        return;
    if (job->open_streams == 0 && job->up) {
        /* Proxy: report, then wait (bounded) for mpiexec to hang up. */
        if (job->done_sent)
            return;
        job->done_sent = true;
        if (job->up_lost) {
            loop_stop(job->lp, 0);
            return;
        }
        struct pack pk;
        pack_init(&pk);
        up_send(job, MPX_P_DONE, &pk);
        job->bye_timer = loop_timer_add(job->lp, 30000, proxy_bye_cb, job);
        if (!job->bye_timer) /* no bound on the wait: do not wait */
            loop_stop(job->lp, 0);
        return;
    }
    if (job->open_streams == 0) {
        loop_stop(job->lp, 0);
        return;
    }
    if (!job->drain_timer) {
        job->drain_timer = loop_timer_add(job->lp, DRAIN_GRACE_MS, drain_timer_cb, job);
        if (!job->drain_timer) /* no memory for the grace: end the leftovers now */
            drain_timer_cb(job->lp, NULL, job);
    }
}

static struct rank *rank_by_pid(struct job *job, pid_t pid)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].pid == pid)
            return &job->ranks[i];
    return NULL;
}

void rank_exited(struct job *job, struct rank *r, int status)
{
    r->exited = true;
    job->live--;
    /* Whatever it said last comes first: an abort before exit, its output. */
    r->judging = true;
    nodesrv_read(job->ns, r->idx, true);
    r->judging = false;
    for (int k = 0; k < 2; k++)
        stream_read(&r->out[k], true);

    if (job->up) {
        /* mpiexec judges every host's exits */
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, r->rank);
        pack_i32(&pk, status);
        up_send(job, MPX_P_EXIT, &pk);
    }
    bool bad = !job->up && !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (bad && !job->end.ending) {
        char what[96];
        job->end.exit_code = mpx_exit_rule(status, what, sizeof(what));
        job_msg(job, "rank %d %s", r->rank, what);
        mpx_console_flush(&job->con);
        job_kill(job);
    }
    tell_gone(r);
    if (job->live == 0 && job->kill_timer) {
        loop_timer_cancel(job->lp, job->kill_timer);
        job->kill_timer = NULL;
    }
}

/* mpx_spawn_done_fn: the nested mpiexec's answer goes to the spawning task. */
static void spawn_done(void *arg, int from, uint64_t id, int rc, const char *jobid,
                       int total, const char *msg)
{
    struct job *job = arg;

    (void)from;
    if (job->srv)
        (void)psrv_spawn_done(job->srv, id, rc, jobid, NULL, total, msg);
}

/* A nested mpiexec (a job our ranks spawned) ended: its failure is ours. */
static void spawned_job_exited(struct job *job, const char *what, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (job->end.ending)
        return;
    if (WIFEXITED(status)) {
        job_msg(job, "%s failed (its mpiexec exited with code %d)", what,
                WEXITSTATUS(status));
        job->end.exit_code = WEXITSTATUS(status);
    } else {
        job_msg(job, "%s failed (its mpiexec was killed by signal %d)", what,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        job->end.exit_code = 1;
    }
    mpx_console_flush(&job->con);
    job_kill(job);
}

static void reap(struct job *job)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        struct rank *r = rank_by_pid(job, pid);
        char what[96];
        bool judge = true;
        if (r && !r->exited)
            rank_exited(job, r, status);
        else if (!r &&
                 mpx_spawner_reaped(job->spawner, pid, status, what, sizeof(what),
                                    &judge) &&
                 judge)
            spawned_job_exited(job, what, status);
    }
    job_check_done(job);
}

static void handle_signal(struct job *job, int sig)
{
    if (mpx_jobend_signal(&job->end, sig)) { /* a second one: no more grace */
        job->sigkill_sent = true;
        job_kill_all(job, SIGKILL);
        return;
    }
    if (job->up) {
        job_fail(job, 128 + sig, "the proxy on host %s caught signal %d (%s)", job->host,
                 sig, strsignal(sig));
        job_kill(job);
        return;
    }
    if (job->spawned.on && sig == SIGTERM) /* the spawner's mpiexec ends its job */
        job_msg(job, "spawned job %s: ended with the job that spawned it", job->jobid);
    else
        job_msg(job, "caught signal %d (%s)", sig, strsignal(sig));
    job->end.exit_code = 128 + sig;
    job_kill(job);
}

static void on_term(void *arg, int sig)
{
    handle_signal(arg, sig);
}

static void on_child(void *arg)
{
    reap(arg);
}

static void sig_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    mpx_signals_dispatch(fd, on_term, on_child, arg);
}

static void timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    job->timeout_timer = NULL;
    if (mpx_jobend_timeout(&job->end, &job->con, job->o->timeout_s))
        job_kill(job);
}

/* Starts the ranks of node `nodeid` (those with rank_node[r] == nodeid; all
 * of them when rank_node is NULL), serves them and returns the exit code.
 * job->o, job->size, job->jobid and job->pmi_level are set. */
int node_run(struct job *job, const int *rank_node, int nnodes, int nodeid,
             struct mpx_bind *binder)
{
    struct mpx_opts *o = job->o;
    int rc;

    job->lp = loop_create();
    job->n = 0;
    for (int r = 0; r < job->size; r++)
        if (!rank_node || rank_node[r] == nodeid)
            job->n++;
    job->ranks = calloc((size_t)job->n + 1, sizeof(*job->ranks));
    int *local = malloc(sizeof(int) * ((size_t)job->n + 1));
    int *node = calloc((size_t)job->size, sizeof(int));
    int *appnum = malloc(sizeof(int) * (size_t)job->size);
    if (!job->lp || !job->ranks || !local || !node || !appnum) {
        job_msg(job, "out of memory");
        return 1;
    }
    for (int a = 0, r = 0, k = 0; a < o->napps; a++)
        for (int i = 0; i < o->apps[a].np; i++, r++) {
            appnum[r] = a;
            node[r] = rank_node ? rank_node[r] : 0;
            if (rank_node && rank_node[r] != nodeid)
                continue;
            struct rank *rk = &job->ranks[k];
            local[k] = r;
            rk->job = job;
            rk->rank = r;
            rk->idx = k;
            rk->app = a;
            for (int j = 0; j < 2; j++) {
                rk->out[j].job = job;
                rk->out[j].r = rk;
                rk->out[j].fd = -1;
                rk->out[j].which = j + 1;
                rk->out[j].fwd.rank = r;
            }
            k++;
        }

    /* Size the fd table for every rank's socket and pipes now, while libpmix
     * has not started its threads: growing it later, in a process with
     * threads, waits for an RCU grace period each time (see fdio_reserve). */
    (void)fdio_reserve(job->n * 8 + 64);

    const char *xml = getenv("LOOM_HWLOC_XML");
    if (!xml || !*xml)
        xml = getenv("HWLOC_XMLFILE");
    struct psrv_config cfg = {
        .jobid = job->jobid,
        .size = job->size,
        .nnodes = nnodes,
        .nodeid = nodeid,
        .local_count = job->n,
        .local_ranks = local,
        .rank_node = node,
        .rank_appnum = appnum,
        .universe_size = 0,
        .hwloc_xmlfile = (xml && *xml) ? xml : NULL,
        .process_mapping = NULL,
        .tree_width = MPX_TREE_WIDTH,
        .fence_timeout_ms = o->fence_timeout_s * 1000,
        .log_level = (enum psrv_log_level)job->pmi_level,
        .spawner_jobid = job->spawned.on ? job->spawned.spawner_jobid : NULL,
        .npreput = job->spawned.on ? job->spawned.npreput : 0,
        .preput = job->spawned.on ? job->spawned.preput : NULL,
    };
    char limits_err[160]; /* quotas of the server core: LOOM_PMI_MAX_* */
    if (psrv_limits_from_env(&cfg.limits, limits_err, sizeof(limits_err)) < 0)
        job_msg(job, "%s", limits_err);
    if (psrv_kvs_from_env(&cfg.kvs_mode, &cfg.kvs_auto_bytes, limits_err,
                          sizeof(limits_err)) < 0)
        job_msg(job, "error: %s", limits_err);
    job->ns = node_server_start(job, &cfg);
    job->srv = nodesrv_psrv(job->ns);
    if (job->srv)
        (void)lpmix_start(job->lp, job->srv, &cfg, job->host, node_pmi_log, job);
    if (job->srv && !job->up) {
        /* spawn budget: what our spawner left us, else LOOM_MPIEXEC_MAX_SPAWN_PROCS */
        int max = job->spawned.on ? job->spawned.budget
                                  : mpx_env_int("LOOM_MPIEXEC_MAX_SPAWN_PROCS",
                                                MPX_SPAWN_DEF_MAX_PROCS);
        job->spawner = mpx_spawner_create(job->lp, spawn_done, job, job->jobid,
                                          o->fence_timeout_s, max < 0 ? 0 : max);
    }
    free(local);
    free(node);
    free(appnum);
    if (!job->srv) {
        job_msg(job, "cannot create the PMI server: %s", strerror(errno));
        return 1;
    }

    rc = mpx_signals_install();
    if (rc < 0) {
        job_msg(job, "cannot install signal handlers: %s", strerror(-rc));
        return 1;
    }
    /* Without this watch finished ranks are never reaped: mpiexec would hang. */
    job->sig_w = loop_watch_add(job->lp, rc, LOOP_READ, sig_cb, job);
    if (!job->sig_w) {
        job_msg(job, "cannot watch for signals and rank exits: out of memory");
        return 1;
    }
    if (job->up) {
        job->up_w = loop_watch_add(
            job->lp, job->up->s.fd,
            LOOP_READ | (mpx_conn_pending(job->up) ? LOOP_WRITE : 0), up_cb, job);
        if (!job->up_w) {
            job_msg(job, "out of memory");
            return 1;
        }
    }
    if (o->timeout_s > 0) {
        job->timeout_timer =
            loop_timer_add(job->lp, (uint64_t)o->timeout_s * 1000, timeout_cb, job);
        if (!job->timeout_timer) { /* the user asked for a bound: none is no answer */
            job_msg(job, "cannot arm the --timeout timer: out of memory");
            return 1;
        }
    }

    /* frames that came with the job description, already read */
    if (job->up)
        up_process(job);
    /* a proxy joins the tree before its ranks can fence (it said why if not) */
    int tree_rc = job->up ? proxy_join_tree(job, nnodes) : 0;
    rc = tree_rc < 0 ? tree_rc : node_launch(job, binder);
    if (job->spawned.on && rc < 0)
        mpx_spawned_report(&job->spawned, 1,
                           "the mpiexec of the spawned job could not "
                           "start its ranks (see its messages)");
    if (rc == 0 && job->up) { /* a spawned job's front end reports once all did */
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, job->nodeid);
        up_send(job, MPX_P_STARTED, &pk);
    }
    if (o->verbose)
        job_msg(job, "started %d rank%s in %llu ms (jobid %s)", job->live,
                mpx_plural(job->live), (unsigned long long)(loop_now_ms() - job->t0),
                job->jobid);
    if (rc < 0 && job->up) {
        if (tree_rc == 0)
            job_fail(job, MPX_EXIT_LAUNCH, "cannot start the ranks on host %s",
                     job->host);
        job_kill(job);
    } else if (rc < 0) {
        job->end.exit_code = MPX_EXIT_LAUNCH;
        job_kill(job);
    }
    job_check_done(job);

    rc = loop_run(job->lp);
    mpx_console_flush(&job->con);
    if (rc < 0)
        job_msg(job, "event loop failed: %s", strerror(-rc));
    if (job->out_lost && job->end.exit_code == 0) {
        job_msg(job, "exit status 1: rank output was lost (out of memory)");
        job->end.exit_code = 1;
    }
    if (o->verbose && !job->up) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        job_msg(job,
                "job ended after %llu ms, exit code %d (mpiexec cpu: %ld.%03ld s user, "
                "%ld.%03ld s sys)",
                (unsigned long long)(loop_now_ms() - job->t0), job->end.exit_code,
                (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 1000,
                (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 1000);
    }

    for (int i = 0; i < job->n; i++) {
        for (int k = 0; k < 2; k++)
            iobuf_free(&job->ranks[i].out[k].fwd.part);
    }
    lpmix_stop();
    proxy_leave_tree(job);
    nodesrv_destroy(job->ns); /* the ranks' PMI sockets, the core */
    job->ns = NULL;
    job->srv = NULL;
    mpx_spawner_destroy(job->spawner);
    job->spawner = NULL;
    loop_destroy(job->lp);
    job->lp = NULL;
    mpx_console_free(&job->con);
    free(job->ranks);
    job->ranks = NULL;
    if (rc < 0 && job->end.exit_code == 0)
        return 1;
    return job->end.exit_code;
}
