/* agent.c - the slurmstepd thread that serves PMI: one common/loop.h loop over
 * the task sockets (the node server, nodesrv/nodesrv.h) and the tree links,
 * with Slurm's side of it: the step kill, the stepd's log, the rendezvous.
 *
 * Contract:
 *   loom_agent_start() (in slurmstepd_prefork, before the tasks fork) creates
 *   the psrv and the loop, registers the stepd end of every task socket and
 *   starts the thread.  The thread first joins the tree when the step spans
 *   several nodes (treenet_create, rdv_exchange with srun's rendezvous server,
 *   treenet_start), then runs the loop until loom_agent_stop() (from fini(),
 *   after all tasks ended) stops it with loop_stop + loop_wake and JOINS it
 *   (with a bound where the stepd holds its auth lock in fini: slurm_compat.h).
 *   Only this thread calls psrv_* after the start.
 *
 *   The task sockets, the replies' queues, the flow cap and the tick are the
 *   node server's (nodesrv.h); what the agent gives it: tree_send ->
 *   treenet_send; abort -> error() naming the rank (slurmstepd's error lines
 *   reach srun's stderr) and slurm_kill_job_step(job, step, SIGKILL), once;
 *   log -> error() for errors and warnings, info() for everything else (so the
 *   slurmd/stepd log shows trace lines at the default SlurmdDebug=info), all
 *   through loom_plog (escaped, rate-limited: loom_plugin.h).
 *
 * Notes:
 *   - The stepd keeps its copy of the task ends until the first byte from any
 *     task arrives: by then Slurm has forked every task (tasks are released
 *     together), so closing them makes a dead task's socket report EOF, which
 *     psrv turns into "rank R exited without finalize" when others wait.
 *   - Everything waits with a bound: the rendezvous and the links by
 *     LoomConnectTimeout, fences by LoomFenceTimeout (the node server ticks
 *     psrv in the loop's prepare hook).
 *   - A slurmstepd serves one step, hence one global agent (g_agent).
 *   - A task that sends requests and never reads the replies is not read
 *     once FLOW_HIGH (1 MiB) of its replies are queued, until it reads them
 *     (common/flow.h, applied by nodesrv): it costs the stepd at most
 *     FLOW_MAX_BYTES, and the other tasks are served as usual.
 *   - Lines the job asked for itself (LOOM_PMI_TRACE=1, LOOM_PMI_DEBUG above
 *     mpi.conf's level: st->log_job > st->log_admin) go to the job's stderr,
 *     the stepd's fd 2, which slurmstepd points at task 0's stderr before it
 *     forks the tasks; never to slurmd's log.  They are written only when the
 *     pipe has room (poll, no wait) and counted when dropped, so a job whose
 *     srun does not read its stderr cannot stall the agent.
 *   - The agent's other parts (agent.h): the tree links and the rendezvous
 *     (agenttree.c), a task's spawn handed to srun (agentspawn.c), the PMIx
 *     server beside the core (agentpmix.c: LoomPMIx=yes, built --with-pmix;
 *     started before the tasks fork, its abort, fence timeout and dead ranks
 *     end the step through the same psrv abort -> kill_step path).
 */

#include "slurm_glue.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "loom_plugin.h"
#include "loop.h"
#include "nodesrv.h"
#include "pmiserv.h"

static struct agent *g_agent;

struct agent *agent_current(void)
{
    return g_agent;
}

/* ---- helpers ------------------------------------------------------------ */

/* Nice value of the calling thread (Linux: per thread).  The agent runs only
 * when a task asks something, and every task of the step may be waiting for
 * the answer; on an oversubscribed node it would otherwise queue behind the
 * ranks it has just woken (64 ranks on 2 cores: a fence answered to the first
 * ranks delays the last ones, whose gets then finish last). */
static int thread_nice(void)
{
    errno = 0;
    int n = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    return errno ? 0 : n;
}

static int set_thread_nice(int nice)
{
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) < 0 ? -errno : 0;
}

#define FLUSH_MS 200 /* fini: longest wait for bytes still queued on the tree links */
#define FLUSH_STUCK_MS 20 /* ... and for a link that takes none of them (silent) */

static void send_kill(struct agent *a)
{
    struct loom_step *st = a->st;

    if (a->kill_sent)
        return;
    a->kill_sent = 1;
    if (loom_kill_step(st->job_id, st->step_id, SIGKILL) != SLURM_SUCCESS)
        loom_plog(LOOM_PLOG_LOUD | LOOM_PLOG_MUST, "%s: step %s: slurm_kill_job_step: %m",
                  loom_plugin_tag, st->jobid);
}

static void kill_now(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct agent *a = arg;

    /* The failure replies held since kill_step() go out now (a task may be
     * waiting on one if the kill below fails); the abort line had a head start. */
    nodesrv_hold_output(a->ns, false);
    if (!a->in_fini)
        send_kill(a);
}

void agent_kill_quietly(struct agent *a)
{
    if (a->killed)
        return;
    a->killed = 1;
    a->kill_at = loop_now_ms() + KILL_DELAY_MS;
    if (!loop_timer_add(a->lp, KILL_DELAY_MS, kill_now, a))
        kill_now(a->lp, NULL, a);
}

/* The job must end.  psrv floods an abort to every node, so every stepd gets
 * here: only node 0 and the culprit's node say it on srun's stderr (error());
 * the others write it to their stepd log.  Every node asks slurmctld to kill
 * the step (once), so it dies even if node 0 is cut off. */
void agent_kill_step(struct agent *a, int rank, const char *msg)
{
    struct loom_step *st = a->st;
    int loud = st->nodeid == 0 ||
               (rank >= 0 && rank < st->size && st->rank_node[rank] == st->nodeid);
    char who[32];

    if (a->killed)
        return;
    a->killed = 1;
    a->kill_at = loop_now_ms() + KILL_DELAY_MS;
    /* Hold the rc!=0 replies psrv is about to send: a task that got one would
     * exit at once, and srun could tear the step's I/O down before the line
     * below reached its stderr (seen once in the node-gone test). */
    nodesrv_hold_output(a->ns, true);
    snprintf(who, sizeof(who), "rank %d", rank);
    /* the rank's node, said here: from Slurm 23.11 on srun no longer prefixes the
     * stepd's lines with "slurmstepd-<node>" */
    char where[96] = "";
    if (rank >= 0 && rank < st->size && st->rank_node && st->node_names &&
        st->rank_node[rank] >= 0 && st->rank_node[rank] < st->nnodes &&
        st->node_names[st->rank_node[rank]])
        snprintf(where, sizeof(where), " (rank %d runs on %.64s)", rank,
                 st->node_names[st->rank_node[rank]]);
    if (loud && rank >= 0 && !strstr(msg, who))
        loom_plog(LOOM_PLOG_LOUD | LOOM_PLOG_MUST,
                  "%s: step %s: rank %d: %s; killing the step%s", loom_plugin_tag,
                  st->jobid, rank, msg, where);
    else if (loud)
        loom_plog(LOOM_PLOG_LOUD | LOOM_PLOG_MUST, "%s: step %s: %s; killing the step%s",
                  loom_plugin_tag, st->jobid, msg, where);
    else
        loom_plog(LOOM_PLOG_QUIET | LOOM_PLOG_MUST,
                  "%s: step %s node %d: %s; killing the step", loom_plugin_tag, st->jobid,
                  st->nodeid, msg);
    /* psrv floods the abort over the tree after this callback returns: let
     * that reach the other nodes before slurmctld's SIGKILL does, so their
     * ranks' hang-ups are known as the consequence, not as new failures. */
    if (!loop_timer_add(a->lp, KILL_DELAY_MS, kill_now, a))
        kill_now(a->lp, NULL, a);
}

void agent_close_task_ends(struct agent *a)
{
    struct loom_step *st = a->st;
    int i;

    if (a->task_ends_closed)
        return;
    a->task_ends_closed = 1;
    for (i = 0; i < st->local_count; i++) {
        if (st->task_fd[i] >= 0)
            close(st->task_fd[i]);
        st->task_fd[i] = -1;
    }
}

static void op_abort(void *arg, int rank, int exitcode, const char *msg)
{
    agent_kill_step(arg, rank, msg && *msg ? msg : "PMI abort");
}

/* Once the step is being killed, or every local rank has finalized, links
 * closing and ranks hanging up are the normal end: no more error lines. */
int agent_step_ending(struct agent *a)
{
    return a->killed || (a->srv && psrv_clients_finalized(a->srv) >= a->st->local_count);
}

static const char *level_tag(int level)
{
    return level == PSRV_LOG_ERROR   ? "error: "
           : level == PSRV_LOG_WARN  ? "warning: "
           : level == PSRV_LOG_TRACE ? "trace: "
                                     : "";
}

/* A line the job asked for (st->log_job above st->log_admin): to the job's
 * stderr (fd 2, see the notes above), escaped, only if the pipe has room now. */
void agent_job_log(struct agent *a, int level, const char *msg)
{
    struct loom_step *st = a->st;
    char esc[LOOM_LOG_LINE_MAX], line[LOOM_LOG_LINE_MAX + 256];
    struct pollfd p = {.fd = 2, .events = POLLOUT};
    int n;

    /* Before a task ran, fd 2 may still be what slurmd gave the stepd. */
    if (!a->task_ends_closed)
        return;
    if (poll(&p, 1, 0) != 1 || (p.revents & (POLLERR | POLLHUP | POLLNVAL))) {
        a->job_log_dropped++;
        return;
    }
    if (a->job_log_dropped) {
        n = snprintf(line, sizeof(line),
                     "%s: step %s node %d: %lu trace lines dropped: stderr was full\n",
                     loom_plugin_tag, st->jobid, st->nodeid, a->job_log_dropped);
        a->job_log_dropped = 0;
        if (write(2, line, (size_t)n) < 0) {
            /* full again: the count is lost, the line below is tried */
        }
    }
    loom_log_escape(esc, sizeof(esc), msg);
    n = snprintf(line, sizeof(line), "%s: step %s node %d: %s%s\n", loom_plugin_tag,
                 st->jobid, st->nodeid, level_tag(level), esc);
    if (n > 0 &&
        write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
        a->job_log_dropped++;
}

void agent_log(void *arg, enum psrv_log_level level, const char *msg)
{
    struct agent *a = arg;
    struct loom_step *st = a->st;

    if ((int)level > st->log_admin) {
        agent_job_log(a, level, msg);
        return;
    }
    /* psrv's errors end in ops->abort, whose message kill_step shows on srun's
     * stderr once; the details stay in the stepd log.  Only with LoomDebug at
     * debug or above do they reach srun's stderr as well. */
    if (level == PSRV_LOG_ERROR && !agent_step_ending(a) &&
        st->log_admin >= PSRV_LOG_DEBUG)
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s node %d: %s", loom_plugin_tag, st->jobid,
                  st->nodeid, msg);
    else
        loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: %s%s", loom_plugin_tag,
                  st->jobid, st->nodeid, level_tag(level), msg);
    /* ... and with the job's own LOOM_PMI_DEBUG at debug, on its stderr */
    if (level == PSRV_LOG_ERROR && !agent_step_ending(a) &&
        st->log_admin < PSRV_LOG_DEBUG && st->log_job >= PSRV_LOG_DEBUG)
        agent_job_log(a, level, msg);
}

/* ---- loop callbacks ------------------------------------------------------ */

/* nodesrv hook: a task sent its first bytes.  Every task has been forked by
 * now (see the notes above). */
static void on_client_first(void *arg, int client)
{
    (void)client;
    agent_close_task_ends(arg);
}

/* nodesrv hook: a task's socket ended; the core hears of it at once. */
static int on_client_hangup(void *arg, int client, enum nodesrv_hangup how)
{
    struct agent *a = arg;

    /* Say it here: psrv fails a fence for it only where one is in progress,
     * and a node with no other rank may never see that fence. */
    if (how == NODESRV_EOF && nodesrv_client_inited(a->ns, client) &&
        !nodesrv_client_finalized(a->ns, client) && !agent_step_ending(a))
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s: rank %d exited without PMI finalize",
                  loom_plugin_tag, a->st->jobid, a->st->local_ranks[client]);
    return 0;
}

static void *agent_main(void *arg)
{
    struct agent *a = arg;
    int rc = set_thread_nice(a->st->conf.agent_nice);

    /* the default may fail without CAP_SYS_NICE (a container): quiet unless asked */
    if (rc < 0 && (a->st->conf.agent_nice != LOOM_DEFAULT_AGENT_NICE ||
                   a->st->conf.debug >= PSRV_LOG_INFO))
        loom_plog(LOOM_PLOG_LOUD,
                  "%s: step %s: cannot set the agent's nice value to %d: %s",
                  loom_plugin_tag, a->st->jobid, a->st->conf.agent_nice, strerror(-rc));

    agent_tree_join(a);
    loop_run(a->lp);
    return NULL;
}

/* ---- public -------------------------------------------------------------- */

static void agent_free(struct agent *a)
{
    int i;

    if (!a)
        return;
    agent_spawns_free(a);
    agent_pmix_free(a); /* before the psrv it drives */
    agent_tree_free(a);
    for (i = 0; i < a->nregistered; i++)
        a->st->stepd_fd[i] = -1; /* closed by nodesrv_destroy, or already */
    nodesrv_destroy(a->ns);      /* the task sockets it owns, the core */
    if (a->lp)
        loop_destroy(a->lp);
    loom_step_free(a->st);
    free(a);
}

int loom_agent_start(struct loom_step *st)
{
    struct agent *a;
    struct psrv_config cfg;
    static const struct nodesrv_ops ops = {
        .tree_send = agent_tree_send,
        .abort = op_abort,
        .log = agent_log,
        .client_first = on_client_first,
        .client_hangup = on_client_hangup,
#ifdef LOOM_WITH_PMIX
        .client_gone = agent_pmix_client_gone,
        .coll_done = agent_pmix_coll_done,
        .dmdx_request = agent_pmix_dmdx_request,
        .dmdx_done = agent_pmix_dmdx_done,
        .ns_done = agent_pmix_ns_done,
#endif
#ifndef LOOM_PLUGIN_NO_TREENET
        .spawn = agent_spawn,
#endif
    };
    int i, rc;

    if (g_agent) {
        loom_step_free(st);
        return -EBUSY;
    }
#ifdef LOOM_PLUGIN_NO_TREENET
    if (st->nnodes > 1) {
        loom_plog(LOOM_PLOG_LOUD,
                  "%s: step %s: this build has no tree links: single-node steps only",
                  loom_plugin_tag, st->jobid);
        loom_step_free(st);
        return -ENOTSUP;
    }
#endif
    if (!(a = calloc(1, sizeof(*a)))) {
        loom_step_free(st);
        return -ENOMEM;
    }
    a->st = st;
    a->spawns = calloc((size_t)st->local_count, sizeof(*a->spawns));
    for (i = 0; a->spawns && i < st->local_count; i++)
        a->spawns[i].fd = -1;
    if (!a->spawns || !(a->lp = loop_create())) {
        rc = -ENOMEM;
        goto fail;
    }

    memset(&cfg, 0, sizeof(cfg));
    cfg.jobid = st->jobid;
    cfg.size = st->size;
    cfg.nnodes = st->nnodes;
    cfg.nodeid = st->nodeid;
    cfg.local_count = st->local_count;
    cfg.local_ranks = st->local_ranks;
    cfg.rank_node = st->rank_node;
    cfg.rank_appnum = st->rank_appnum;
    cfg.tree_width = (int)st->conf.tree_width;
    cfg.fence_timeout_ms = (int)st->conf.fence_timeout_s * 1000;
    cfg.kvs_mode = (enum psrv_kvs_mode)st->conf.kvs_mode;
    cfg.kvs_auto_bytes = st->conf.kvs_auto_bytes;
    /* the core logs up to the higher of mpi.conf's level and the job's;
     * agent_log sends each line where it belongs */
    cfg.log_level =
        (enum psrv_log_level)(st->log_job > st->log_admin ? st->log_job : st->log_admin);
    {
        extern struct psrv_limits loom_limits; /* conf.c: mpi.conf LoomMax* quotas */
        cfg.limits = loom_limits;
    }
    /* a step started by a spawn: PMI says so, and the preput pairs are in its KVS */
    cfg.spawner_jobid = st->spawner_jobid;
    cfg.npreput = st->npreput;
    cfg.preput = st->preput;
    cfg.spawn_unsupported_msg = "spawn needs a plugin built with tree links (treenet)";
    /* the core's tick runs in the loop's prepare hook (nodesrv) */
    if (!(a->ns = nodesrv_create(a->lp, &cfg, &ops, a))) {
        rc = errno ? -errno : -EINVAL;
        goto fail;
    }
    a->srv = nodesrv_psrv(a->ns);
    for (i = 0; i < st->local_count; i++) {
        if ((rc = nodesrv_add_client(a->ns, i, st->stepd_fd[i])) < 0)
            goto fail;
        /* The node server's now; st->stepd_fd[] keeps the number until the
         * agent ends, for each task to close its copies (loom_setup_task).
         * The server closes none before the first byte from a task, hence
         * before every task is forked (see the notes above). */
        a->nregistered = i + 1;
    }
    if (st->conf.pmix) { /* a build without libpmix: agent_pmix_start does nothing */
        /* libpmix's thread, created by PMIx_server_init, inherits this thread's
         * nice value; the tasks, forked later by this thread, must not */
        int saved = thread_nice();
        int nice_rc = set_thread_nice(st->conf.agent_nice);
        rc = agent_pmix_start(a, &cfg);
        if (nice_rc == 0)
            set_thread_nice(saved);
        if (rc < 0)
            goto fail;
    }
    if (st->log_admin >= PSRV_LOG_INFO)
        loom_plog(LOOM_PLOG_QUIET,
                  "%s: step %s: node %d of %d, %d of %d ranks here, tree width %u, "
                  "fence timeout %u s%s%s",
                  loom_plugin_tag, st->jobid, st->nodeid, st->nnodes, st->local_count,
                  st->size, st->conf.tree_width, st->conf.fence_timeout_s,
                  st->conf.pmix ? ", PMIx" : "",
                  st->log_job > st->log_admin ? ", the job's own trace to its stderr"
                  : st->log_admin >= PSRV_LOG_TRACE ? ", tracing PMI"
                                                    : "");

    g_agent = a;
    if ((rc = pthread_create(&a->thr, NULL, agent_main, a)) != 0) {
        g_agent = NULL;
        rc = -rc;
        goto fail;
    }
    a->started = 1;
    return 0;
fail:
    /* the sockets registered are closed with the node server (agent_free), the
     * others by loom_step_free */
    agent_free(a);
    return rc;
}

struct loom_step *loom_agent_step(void)
{
    return g_agent ? g_agent->st : NULL;
}

static const char *st_jobid(const struct agent *a)
{
    return a->st ? a->st->jobid : "?";
}

/* Where slurmstepd runs fini() under its auth write lock (LOOM_FINI_UNDER_AUTH_LOCK),
 * an agent thread inside slurm_kill_job_step() at that moment waits for the lock
 * until the process exits: join it with a bound, and if it does not come, keep the
 * plugin mapped (RTLD_NODELETE: the dlclose after fini() must not pull its code away)
 * and its memory as it is, and return.  Elsewhere a plain join. */
static int join_agent(struct agent *a)
{
#if LOOM_FINI_UNDER_AUTH_LOCK
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 3;
    if (pthread_timedjoin_np(a->thr, NULL, &t) == 0)
        return 0;
    Dl_info self;
    if (dladdr((void *)join_agent, &self) && self.dli_fname)
        (void)dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    loom_plog(LOOM_PLOG_QUIET | LOOM_PLOG_MUST,
              "%s: step %s: the PMI agent did not stop within 3 s (waiting for Slurm's "
              "auth lock, held by step cleanup); left running", loom_plugin_tag,
              st_jobid(a));
    g_agent = NULL;
    return -1;
#else
    pthread_join(a->thr, NULL);
    return 0;
#endif
}

void loom_agent_stop(void)
{
    struct agent *a = g_agent;

    if (!a)
        return;
    if (a->started) {
        loop_stop(a->lp, 0);
        loop_wake(a->lp);
        if (join_agent(a) < 0)
            return; /* left running, its memory and code kept: see join_agent() */
    }
    /* The thread is gone; the loop runs here a little longer when
     *  - bytes are still queued on the tree links (an abort flood sent just now, when
     *    the aborting rank's exit ended this node's step): up to FLUSH_MS, as long as
     *    some leave every FLUSH_STUCK_MS (a silent link takes none);
     *  - the kill is owed: this node's step can end before KILL_DELAY_MS (the aborting
     *    rank exits at once), and the kill must still come, or no one may send it, but
     *    not at once: srun, told of the kill, could end before it wrote this node's
     *    last output (rank 0's "connection ... lost" went missing about 1 run in 20
     *    with a silenced link). */
    if (a->started) {
        uint64_t now = loop_now_ms(), end = now + FLUSH_MS, moved = now;
        size_t left = agent_tree_queued(a);
        a->in_fini = 1;
        while ((left > 0 && now < end && now - moved < FLUSH_STUCK_MS) ||
               (a->killed && !a->kill_sent && now < a->kill_at)) {
            if (loop_run_once(a->lp, 5) < 0)
                break;
            size_t q = agent_tree_queued(a);
            now = loop_now_ms();
            if (q != left) /* some left, or more came (a flood from inside the loop) */
                moved = now;
            left = q;
        }
    }
    if (a->killed && LOOM_FINI_UNDER_AUTH_LOCK && !a->kill_sent)
        loom_plog(LOOM_PLOG_QUIET | LOOM_PLOG_MUST,
                  "%s: step %s: this node's tasks ended before its kill request; the "
                  "other stepds and srun end the step (this Slurm holds its auth lock "
                  "in fini)", loom_plugin_tag, st_jobid(a));
    else if (a->killed)
        send_kill(a);
    g_agent = NULL;
    agent_free(a);
}
