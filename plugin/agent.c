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
 *   - PMIx (LoomPMIx=yes, built --with-pmix): loom_agent_start also starts
 *     libpmix's server (pmixsrv/) beside the psrv, in a tmpdir of its own
 *     (SlurmdSpoolDir, never /tmp: loom-pmix.<job>.<node>.<random>), before the tasks
 *     fork; its eventfd is one more watch of the loop, psrv's blob
 *     collective and direct-modex ops are forwarded to it, and a PMIx client
 *     connecting counts as "every task forked" like a first PMI byte.
 *     PMIx abort, fence timeout and dead ranks end the step through the same
 *     psrv abort -> kill_step path.
 */

#include "slurm_glue.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ktree.h"
#include "log.h"
#include "loom_plugin.h"
#include "loop.h"
#include "nodesrv.h"
#include "pmiserv.h"
#include "spawnlink.h"
#include "spawnwire.h"
#ifdef LOOM_WITH_PMIX
#include "pmixsrv.h"
#endif
#ifndef LOOM_PLUGIN_NO_TREENET
#include "treenet.h"
#endif

/* A spawn handed to srun (op_spawn): its connection, until the answer. */
struct spawn_call {
    struct agent *a;
    uint64_t id;
    int fd;
    int total;
    struct loop_watch *w;
    struct loop_timer *t;
    size_t have;
    char buf[LSPAWN_ANSWER_MAX + 4];
};

struct agent {
    struct loom_step *st;
    struct spawn_call *spawns; /* [local_count]: a task has one spawn at a time */
    struct loop *lp;
    struct nodesrv *ns; /* the task sockets and the core */
    struct psrv *srv;   /* ns's core */
    int nregistered;    /* task sockets 0..nregistered-1 are ns's to close */
#ifndef LOOM_PLUGIN_NO_TREENET
    struct treenet *tn;
#endif
#ifdef LOOM_WITH_PMIX
    struct pmixsrv *px;
    struct loop_watch *pxw;
#endif
    pthread_t thr;
    int started;
    int task_ends_closed;
    int killed;
    int kill_sent;    /* slurm_kill_job_step asked (once) */
    int in_fini;      /* loom_agent_stop() runs the loop: it sends the kill itself */
    uint64_t kill_at; /* when kill_now() is due (loop_now_ms) */
    unsigned long job_log_dropped; /* job-requested lines its stderr had no room for */
};

static struct agent *g_agent;

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

#define KILL_DELAY_MS 100
#define RDV_FAIL_TIMEOUT_MS 5000 /* telling srun this node cannot join the tree */
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

/* The job must end.  psrv floods an abort to every node, so every stepd gets
 * here: only node 0 and the culprit's node say it on srun's stderr (error());
 * the others write it to their stepd log.  Every node asks slurmctld to kill
 * the step (once), so it dies even if node 0 is cut off. */
static void kill_step(struct agent *a, int rank, const char *msg)
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

static void close_task_ends(struct agent *a)
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

static int op_tree_send(void *arg, int to, const void *buf, size_t len)
{
#ifndef LOOM_PLUGIN_NO_TREENET
    struct agent *a = arg;
    if (!a->tn)
        return -ENOTCONN;
    return treenet_send(a->tn, to, buf, len);
#else
    return -ENOTSUP;
#endif
}

static void op_abort(void *arg, int rank, int exitcode, const char *msg)
{
    kill_step(arg, rank, msg && *msg ? msg : "PMI abort");
}

/* Once the step is being killed, or every local rank has finalized, links
 * closing and ranks hanging up are the normal end: no more error lines. */
static int step_ending(struct agent *a)
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
static void job_log(struct agent *a, int level, const char *msg)
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

static void op_log(void *arg, enum psrv_log_level level, const char *msg)
{
    struct agent *a = arg;
    struct loom_step *st = a->st;

    if ((int)level > st->log_admin) {
        job_log(a, level, msg);
        return;
    }
    /* psrv's errors end in ops->abort, whose message kill_step shows on srun's
     * stderr once; the details stay in the stepd log.  Only with LoomDebug at
     * debug or above do they reach srun's stderr as well. */
    if (level == PSRV_LOG_ERROR && !step_ending(a) && st->log_admin >= PSRV_LOG_DEBUG)
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s node %d: %s", loom_plugin_tag, st->jobid,
                  st->nodeid, msg);
    else
        loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: %s%s", loom_plugin_tag,
                  st->jobid, st->nodeid, level_tag(level), msg);
    /* ... and with the job's own LOOM_PMI_DEBUG at debug, on its stderr */
    if (level == PSRV_LOG_ERROR && !step_ending(a) && st->log_admin < PSRV_LOG_DEBUG &&
        st->log_job >= PSRV_LOG_DEBUG)
        job_log(a, level, msg);
}

#ifdef LOOM_WITH_PMIX
static void op_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    pmixsrv_coll_done(((struct agent *)arg)->px, id, rc, data, len, msg);
}

static void op_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                            size_t len)
{
    pmixsrv_dmdx_request(((struct agent *)arg)->px, handle, rank, info, len);
}

static void op_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    pmixsrv_dmdx_done(((struct agent *)arg)->px, id, rc, data, len, msg);
}

static void op_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    pmixsrv_ns_done(((struct agent *)arg)->px, id, rc, value);
}

static void close_task_ends(struct agent *a);

static void px_connected(void *arg, int client)
{
    (void)client;
    close_task_ends(arg); /* a task runs: Slurm has forked them all */
}

static void on_pmix(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct agent *a = arg;
    (void)lp;
    (void)w;
    (void)fd;
    (void)revents;
    nodesrv_core_enter(a->ns);
    pmixsrv_dispatch(a->px);
    nodesrv_core_leave(a->ns);
}

/* The slurmd's spool directory with %n (node name) and %h (host name)
 * expanded, as slurmd itself does.  0, or -1 when it is unset or too long:
 * never a fallback to a shared directory such as /tmp (pmixsrv checks the
 * base it is given: owned by root or SlurmUser, writable by no other user). */
static int spool_dir(struct loom_step *st, char *out, size_t len)
{
    const char *p = slurm_conf.slurmd_spooldir;
    char host[256] = "";
    size_t n = 0;

    gethostname(host, sizeof(host) - 1);
    for (; p && *p && n + 1 < len; p++) {
        const char *sub = NULL;
        if (p[0] == '%' && p[1] == 'n')
            sub = st->node_names ? st->node_names[st->nodeid] : host;
        else if (p[0] == '%' && p[1] == 'h')
            sub = host;
        if (sub) {
            n += (size_t)snprintf(out + n, len - n, "%s", sub);
            if (n >= len)
                n = len - 1;
            p++;
            continue;
        }
        out[n++] = *p;
    }
    out[n] = '\0';
    return n && n + 1 < len ? 0 : -1;
}

/* Start libpmix's server for this step.  0, or -errno (logged). */
static int start_pmix(struct agent *a)
{
    struct loom_step *st = a->st;
    static const struct pmixsrv_ops ops = {
        .log = op_log,
        .client_connected = px_connected,
    };
    char nspace[128], tmpdir[1024], map[1100], base[900];

    if (spool_dir(st, base, sizeof(base)) < 0) {
        loom_plog(LOOM_PLOG_LOUD | LOOM_PLOG_MUST,
                  "%s: step %s: no PMIx server: SlurmdSpoolDir is unset or longer than %zu "
                  "bytes (set LoomPMIx=no in mpi.conf to run without PMIx)",
                  loom_plugin_tag, st->jobid, sizeof(base) - 1);
        return -EINVAL;
    }
    snprintf(nspace, sizeof(nspace), "loom.%s", st->jobid);
    snprintf(tmpdir, sizeof(tmpdir), "%s/loom-pmix.%s.%d", base, st->jobid, st->nodeid);
    struct pmixsrv_config pc = {
        .nspace = nspace,
        .jobid = st->jobid,
        .size = st->size,
        .nnodes = st->nnodes,
        .nodeid = st->nodeid,
        .local_count = st->local_count,
        .local_ranks = st->local_ranks,
        .rank_node = st->rank_node,
        .rank_appnum = st->rank_appnum,
        .node_names = (const char *const *)st->node_names,
        .universe_size = st->size,
        .node_cpus = st->node_cpus,
        .uid = st->uid,
        .gid = st->gid,
        .tmpdir = tmpdir,
        .base_owner = (uid_t)slurm_conf.slurm_user_id, /* owns SlurmdSpoolDir on Debian */
        .anl_map = psrv_process_mapping(st->rank_node, st->size, map, sizeof(map)) >= 0
                       ? map
                       : NULL,
        .log_level = (enum psrv_log_level)(st->log_job > st->log_admin ? st->log_job
                                                                       : st->log_admin),
    };
    if (!(a->px = pmixsrv_create(&pc, a->srv, &ops, a))) {
        int rc = -errno;
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s: cannot start the PMIx server: %s",
                  loom_plugin_tag, st->jobid, strerror(-rc));
        return rc;
    }
    a->pxw = loop_watch_add(a->lp, pmixsrv_fd(a->px), LOOP_READ, on_pmix, a);
    return a->pxw ? 0 : -ENOMEM;
}
#endif

#ifndef LOOM_PLUGIN_NO_TREENET
/* ---- spawn (spawnlink.h) --------------------------------------------------- */

#define SPAWN_CONNECT_MS 5000 /* reaching srun and handing it the request */
#define SPAWN_ANSWER_SLACK_MS 10000 /* beyond the step's start timeout */

static void spawn_call_end(struct agent *a, struct spawn_call *sc, int rc,
                           const char *jobid, const char *msg)
{
    uint64_t id = sc->id;
    int total = sc->total;

    if (sc->w)
        loop_watch_remove(a->lp, sc->w);
    if (sc->t)
        loop_timer_cancel(a->lp, sc->t);
    if (sc->fd >= 0)
        close(sc->fd);
    memset(sc, 0, sizeof(*sc));
    sc->fd = -1;
    if (rc != 0)
        loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: spawn failed: %s",
                  loom_plugin_tag, a->st->jobid, a->st->nodeid, msg);
    (void)psrv_spawn_done(nodesrv_core_enter(a->ns), id, rc, jobid, NULL, total, msg);
    nodesrv_core_leave(a->ns);
}

static void on_spawn_answer(struct loop *lp, struct loop_watch *w, int fd, int revents,
                            void *arg)
{
    struct spawn_call *sc = arg;
    char text[LSPAWN_ANSWER_MAX];
    int rc = -1;

    int r = lspawn_answer_read(fd, sc->buf, &sc->have, &rc, text, sizeof(text));
    if (r == 0)
        return;
    if (r < 0) {
        spawn_call_end(sc->a, sc, -1, NULL,
                       r == -EPIPE ? "spawn: srun closed the spawn connection without "
                                     "an answer"
                                   : "spawn: bad answer from srun");
        return;
    }
    if (rc == 0 && !text[0])
        spawn_call_end(sc->a, sc, -1, NULL, "spawn: srun answered no job id");
    else
        spawn_call_end(sc->a, sc, rc, rc == 0 ? text : NULL, rc == 0 ? NULL : text);
}

static void on_spawn_timeout(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct spawn_call *sc = arg;

    sc->t = NULL; /* fired */
    spawn_call_end(sc->a, sc, -1, NULL, "spawn: no answer from srun in time");
}

static int op_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                    size_t errlen)
{
    struct agent *a = arg;
    struct loom_step *st = a->st;
    struct spawn_call *sc = NULL;
    char *body = NULL;
    size_t len = 0;
    int rc;

    if (st->conf.spawn_max_procs && (uint32_t)req->total > st->conf.spawn_max_procs) {
        snprintf(err, errlen, "spawn: %d processes asked, at most %u in one spawn "
                 "(LoomSpawnMaxProcs)", req->total, st->conf.spawn_max_procs);
        return -E2BIG;
    }
    if (!st->spawn_server) {
        snprintf(err, errlen, "spawn: srun published no spawn server (%s unset: was srun "
                 "started with the same --mpi plugin?)", LSPAWN_ENV_PORT);
        return -ENOTSUP;
    }
    for (int i = 0; i < st->local_count && !sc; i++)
        if (a->spawns[i].id == 0 && a->spawns[i].fd < 0)
            sc = &a->spawns[i];
    if (!sc) {
        snprintf(err, errlen, "spawn: too many spawns in flight on this node");
        return -EAGAIN;
    }
    if ((rc = lspawn_encode(req, (int)st->conf.spawn_max_inflight,
                            (int)st->conf.spawn_timeout_s, &body, &len)) < 0) {
        snprintf(err, errlen, "spawn: request too large to forward to srun");
        return rc;
    }
    rc = lspawn_call_start(st->spawn_server, st->jobid, st->uid, TREENET_AUTH_MUNGE, body,
                           len, SPAWN_CONNECT_MS, err, errlen);
    free(body);
    if (rc < 0)
        return rc;
    sc->a = a;
    sc->id = id;
    sc->fd = rc;
    sc->total = req->total;
    sc->have = 0;
    sc->w = loop_watch_add(a->lp, sc->fd, LOOP_READ, on_spawn_answer, sc);
    sc->t = loop_timer_add(a->lp,
                           (uint64_t)st->conf.spawn_timeout_s * 1000 + SPAWN_ANSWER_SLACK_MS,
                           on_spawn_timeout, sc);
    if (!sc->w || !sc->t) {
        if (sc->w)
            loop_watch_remove(a->lp, sc->w);
        if (sc->t)
            loop_timer_cancel(a->lp, sc->t);
        close(sc->fd);
        memset(sc, 0, sizeof(*sc));
        sc->fd = -1;
        snprintf(err, errlen, "spawn: out of memory");
        return -ENOMEM;
    }
    return 0;
}
#endif

/* ---- loop callbacks ------------------------------------------------------ */

/* nodesrv hook: a task sent its first bytes.  Every task has been forked by
 * now (see the notes above). */
static void on_client_first(void *arg, int client)
{
    (void)client;
    close_task_ends(arg);
}

/* nodesrv hook: a task's socket ended; the core hears of it at once. */
static int on_client_hangup(void *arg, int client, enum nodesrv_hangup how)
{
    struct agent *a = arg;

    /* Say it here: psrv fails a fence for it only where one is in progress,
     * and a node with no other rank may never see that fence. */
    if (how == NODESRV_EOF && nodesrv_client_inited(a->ns, client) &&
        !nodesrv_client_finalized(a->ns, client) && !step_ending(a))
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s: rank %d exited without PMI finalize",
                  loom_plugin_tag, a->st->jobid, a->st->local_ranks[client]);
    return 0;
}

#ifdef LOOM_WITH_PMIX
/* nodesrv hook: the core heard a task is gone; so does libpmix. */
static void on_client_gone(void *arg, int client)
{
    struct agent *a = arg;

    if (!step_ending(a))
        pmixsrv_client_gone(a->px, client);
}
#endif

#ifndef LOOM_PLUGIN_NO_TREENET
static void tn_recv(void *arg, int from, const void *buf, size_t len)
{
    struct agent *a = arg;
    nodesrv_tree_input(a->ns, from, buf, len);
}

/* A link that closes is normal at the end of a step (a node whose ranks
 * finished tears its stepd down first); one that matters fails the fence in
 * progress, and psrv then aborts the step with a message naming the node.  So
 * the loss itself goes to the stepd log only. */
static void tn_lost(void *arg, int node, const char *why)
{
    struct agent *a = arg;

    loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: link to node %d closed: %s",
              loom_plugin_tag, a->st->jobid, a->st->nodeid, node, why ? why : "?");
    /* treenet promises not to call this from inside psrv; nodesrv drops it if so */
    nodesrv_tree_gone(a->ns, node);
}

static void tn_log(void *arg, int level, const char *msg)
{
    struct agent *a = arg;

    if (level > a->st->log_admin) {
        if (level <= a->st->log_job)
            job_log(a, level, msg);
        return;
    }

    /* Refused connections (WARN) are worth srun's stderr; lost links are
     * reported by tn_lost. */
    if (level <= LOOM_LOG_WARN && !strstr(msg, " lost: ") && !step_ending(a))
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s node %d: %s", loom_plugin_tag,
                  a->st->jobid, a->st->nodeid, msg);
    else
        op_log(arg, level <= LOOM_LOG_WARN ? PSRV_LOG_WARN : (enum psrv_log_level)level,
               msg);
}

/* Join the tree: listen, meet the others at srun's rendezvous, connect. */
static int join_tree(struct agent *a)
{
    struct loom_step *st = a->st;
    struct treenet_config cfg = {
        .nnodes = st->nnodes,
        .nodeid = st->nodeid,
        .width = (int)st->conf.tree_width,
        .jobkey = st->jobid,
        .uid = st->uid,
        .auth = TREENET_AUTH_MUNGE,
        .bind_addr = NULL,
        .connect_timeout_ms = (int)st->conf.connect_timeout_s * 1000,
    };
    unsigned short ports[2];
    static const struct treenet_ops ops = {
        .recv = tn_recv,
        .lost = tn_lost,
        .log = tn_log,
    };
    char **addrs = NULL;
    char my_ip[TREENET_ADDR_MAX];
    char why[256];
    int rc;

    loom_port_range(ports); /* SrunPortRange (srun.c) */
    cfg.port_lo = ports[0];
    cfg.port_hi = ports[1];
    a->tn = treenet_create(a->lp, &cfg, &ops, a);
    if (!a->tn) {
        if (errno == EADDRINUSE && ports[0])
            snprintf(why, sizeof(why),
                     "node %d: cannot listen for tree links: every port of "
                     "SrunPortRange=%u-%u is in use", st->nodeid, ports[0], ports[1]);
        else
            snprintf(why, sizeof(why), "node %d: cannot listen for tree links: %s",
                     st->nodeid, strerror(errno));
        /* srun says it (its stderr is up before any task's I/O) and answers the
         * other nodes with it, instead of leaving them to their timeout */
        rc = rdv_fail_uid(st->rdv_server, st->jobid, st->uid, st->nnodes, st->nodeid,
                          TREENET_AUTH_MUNGE, RDV_FAIL_TIMEOUT_MS, why);
        if (rc < 0)
            loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: cannot tell srun: %s",
                      loom_plugin_tag, st->jobid, st->nodeid, rdv_strerror(rc));
        kill_step(a, -1, why);
        return -1;
    }
    rc = rdv_exchange_uid(st->rdv_server, st->jobid, st->uid, st->nnodes, st->nodeid,
                          treenet_port(a->tn), TREENET_AUTH_MUNGE,
                          (int)st->conf.connect_timeout_s * 1000, &addrs, my_ip);
    if (rc == -ECANCELED) {
        /* another node could not join: srun printed its line; end quietly */
        loom_plog(LOOM_PLOG_QUIET | LOOM_PLOG_MUST, "%s: step %s node %d: %s",
                  loom_plugin_tag, st->jobid, st->nodeid, rdv_strerror(rc));
        a->killed = 1;
        a->kill_at = loop_now_ms() + KILL_DELAY_MS;
        if (!loop_timer_add(a->lp, KILL_DELAY_MS, kill_now, a))
            kill_now(a->lp, NULL, a);
        return -1;
    }
    if (rc < 0) {
        snprintf(why, sizeof(why), "node %d: rendezvous with srun at %s failed: %s",
                 st->nodeid, st->rdv_server, rdv_strerror(rc));
        kill_step(a, -1, why);
        return -1;
    }
    rc = treenet_start(a->tn, addrs);
    rdv_addrs_free(addrs, st->nnodes);
    if (rc < 0) {
        snprintf(why, sizeof(why), "node %d: cannot start tree links: %s", st->nodeid,
                 strerror(-rc));
        kill_step(a, -1, why);
        return -1;
    }
    if (st->log_admin >= PSRV_LOG_DEBUG)
        loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: tree up (%s, width %u)",
                  loom_plugin_tag, st->jobid, st->nodeid, my_ip, st->conf.tree_width);
    return 0;
}
#endif

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

#ifndef LOOM_PLUGIN_NO_TREENET
    if (a->st->nnodes > 1 && join_tree(a) < 0) {
        /* The step is being killed; keep serving (fences fail at once since
         * psrv is told the parent/children are gone) until fini(). */
        int i, kids[1024], nk;
        int w = (int)a->st->conf.tree_width;
        int p = ktree_parent(w, a->st->nnodes, a->st->nodeid);
        if (p >= 0)
            nodesrv_tree_gone(a->ns, p);
        nk = w <= 1024 ? ktree_children(w, a->st->nnodes, a->st->nodeid, kids) : 0;
        for (i = 0; i < nk; i++)
            nodesrv_tree_gone(a->ns, kids[i]);
    }
#endif
    loop_run(a->lp);
    return NULL;
}

/* ---- public -------------------------------------------------------------- */

static void agent_free(struct agent *a)
{
    int i;

    if (!a)
        return;
    for (i = 0; a->spawns && i < a->st->local_count; i++) {
        struct spawn_call *sc = &a->spawns[i];
        if (sc->w)
            loop_watch_remove(a->lp, sc->w);
        if (sc->t)
            loop_timer_cancel(a->lp, sc->t);
        if (sc->fd >= 0)
            close(sc->fd);
    }
    free(a->spawns);
#ifdef LOOM_WITH_PMIX
    if (a->pxw)
        loop_watch_remove(a->lp, a->pxw);
    pmixsrv_destroy(a->px); /* before the psrv it drives */
#endif
#ifndef LOOM_PLUGIN_NO_TREENET
    if (a->tn)
        treenet_destroy(a->tn);
#endif
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
        .tree_send = op_tree_send,
        .abort = op_abort,
        .log = op_log,
        .client_first = on_client_first,
        .client_hangup = on_client_hangup,
#ifdef LOOM_WITH_PMIX
        .client_gone = on_client_gone,
        .coll_done = op_coll_done,
        .dmdx_request = op_dmdx_request,
        .dmdx_done = op_dmdx_done,
        .ns_done = op_ns_done,
#endif
#ifndef LOOM_PLUGIN_NO_TREENET
        .spawn = op_spawn,
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
    /* the core logs up to the higher of mpi.conf's level and the job's;
     * op_log sends each line where it belongs */
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
#ifdef LOOM_WITH_PMIX
    if (st->conf.pmix) {
        /* libpmix's thread, created by PMIx_server_init, inherits this thread's
         * nice value; the tasks, forked later by this thread, must not */
        int saved = thread_nice();
        int nice_rc = set_thread_nice(st->conf.agent_nice);
        rc = start_pmix(a);
        if (nice_rc == 0)
            set_thread_nice(saved);
        if (rc < 0)
            goto fail;
    }
#endif
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

char *const *loom_agent_pmix_env(int ltaskid)
{
#ifdef LOOM_WITH_PMIX
    return g_agent && g_agent->px ? pmixsrv_task_env(g_agent->px, ltaskid) : NULL;
#else
    (void)ltaskid;
    return NULL;
#endif
}

char *const *loom_agent_pmix_env_defaults(void)
{
#ifdef LOOM_WITH_PMIX
    return g_agent && g_agent->px ? pmixsrv_task_env_defaults(g_agent->px) : NULL;
#else
    return NULL;
#endif
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
        size_t left = 0;
#ifndef LOOM_PLUGIN_NO_TREENET
        left = a->tn ? treenet_queued(a->tn) : 0;
#endif
        a->in_fini = 1;
        while ((left > 0 && now < end && now - moved < FLUSH_STUCK_MS) ||
               (a->killed && !a->kill_sent && now < a->kill_at)) {
            if (loop_run_once(a->lp, 5) < 0)
                break;
            size_t q = 0;
#ifndef LOOM_PLUGIN_NO_TREENET
            q = a->tn ? treenet_queued(a->tn) : 0;
#endif
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
