/* mpiexec.c - the standalone launcher: N ranks on this host, PMI served
 * in-process by the same server core the Slurm plugin uses.
 *
 * Contract (user-visible behaviour; doc/man/mpiexec.1 is the reference):
 *   - One socketpair per rank; the rank's end is its PMI_FD, every other fd
 *     of ours is close-on-exec.  Ranks get PMI_RANK, PMI_SIZE, PMI_JOBID
 *     ("<mpiexec pid>.0"), MPI_LOCALRANKID, MPI_LOCALNRANKS and inherit
 *     mpiexec's environment plus -genv/-x/-env settings.  On a host with more
 *     ranks than CPUs they also get a timer slack (LOOM_TIMER_SLACK; cpus.h).
 *   - stdout/stderr of every rank come through pipes and are written whole
 *     lines at a time (optionally tagged "[rank] ").  Rank 0's stdin is
 *     mpiexec's stdin (a terminal only when mpiexec is in its foreground);
 *     other ranks read /dev/null.
 *   - The first abnormal rank exit, a PMI abort, --timeout or a signal to
 *     mpiexec ends the job: all ranks get SIGTERM, then SIGKILL after
 *     KILL_GRACE_MS.  Exit status: see exit_code handling below and the man
 *     page.  Every such event is one "mpiexec: ..." line on stderr.
 *
 * Design:
 *   One thread, one struct loop.  Ranks are forked (the parent never waits
 *   for an exec) and each leads a session of its own, as with hydra: killing
 *   a rank's process group also reaches what it started, and with the
 *   scheduler's autogroups each rank competes for CPU like hydra's do.
 *   SIGCHLD and the terminating signals reach the loop through a self-pipe;
 *   children are reaped with waitpid(WNOHANG) and, before a rank's exit is
 *   judged, its PMI socket and output pipes are drained so that an abort
 *   message sent just before exit is seen first.  psrv_tick() feeds the
 *   poll timeout through the loop's prepare hook; the same hook flushes the
 *   output gathered during an iteration with one write per stream.
 *
 * Proxy mode ("mpiexec --proxy", started by front.c for multi-host jobs):
 *   the same machinery runs one node's ranks (run_ranks() with that node's
 *   share); output, exits and failures go to mpiexec as frames (conn.h),
 *   tree messages are relayed through it, and it decides the exit status.
 *   Ranks of a proxy die with it (PR_SET_PDEATHSIG).
 *
 * Caveats:
 *   - Without a host list, one node (nnodes = 1); the tree callbacks are
 *     never used.  Inside a Slurm allocation run_srun() hands the job to
 *     "srun --mpi=loom" instead (slurm.h has the option mapping).
 *   - If mpiexec itself is SIGKILLed the ranks are not killed; they see
 *     their PMI socket close.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "bind.h"
#include "conn.h"
#include "cpus.h"
#include "fdio.h"
#include "flow.h"
#include "front.h"
#include "iofwd.h"
#include "log.h"
#include "loop.h"
#include "lpmix.h"
#include "pack.h"
#include "pmiserv.h"
#include "slurm.h"
#include "spawn.h"

extern char **environ;

#define KILL_GRACE_MS 500   /* SIGTERM -> SIGKILL */
#define DRAIN_GRACE_MS 1000 /* after the last rank exited, wait for pipe EOF */
#define GONE_DELAY_MS 100   /* PMI hang-up: let the rank's exit be seen first */
#define READ_CHUNK 65536
#define FLUSH_THRESHOLD (256 * 1024)
/* Proxy mode: rank output queued for mpiexec that stops reading the ranks'
 * pipes (they block on write) until it is down to UP_LOW again. */
#define UP_HIGH (4u << 20)
#define UP_LOW (1u << 20)

#define EXIT_USAGE 2
#define EXIT_LAUNCH 127
#define EXIT_TIMEOUT 255 /* as hydra */

struct job;

struct stream {
    struct job *job;
    struct rank *r;
    int fd;
    int which; /* 1: stdout, 2: stderr */
    struct loop_watch *w;
    struct iofwd_stream fwd;
    bool lost; /* output_lost() said so */
};

struct rank {
    struct job *job;
    int rank; /* global rank */
    int idx;  /* psrv client index: position among this node's ranks */
    int app;
    pid_t pid;
    bool exited;
    int pmi_fd; /* our end of the socketpair, -1 when closed */
    struct loop_watch *pmi_w;
    int exec_err_fd; /* exec error pipe from the child, -1 when closed */
    struct loop_watch *exec_err_w;
    bool judging;      /* rank_exited() is draining its PMI socket */
    bool gone_pending; /* PMI hang-up not yet told to psrv */
    struct loop_timer *gone_timer;
    struct flow pmi_flow; /* replies the socket did not take yet; input held meanwhile */
    struct stream out[2];
};

struct job {
    struct mpx_opts *o;
    struct loop *lp;
    struct psrv *srv;
    struct loom_log log;
    struct rank *ranks;
    int n;    /* ranks started here */
    int size; /* ranks in the job (== n unless proxy) */
    int live;         /* spawned and not yet reaped */
    int open_streams; /* output pipes not yet at EOF */
    char jobid[64];
    uint64_t t0;

    struct iobuf obuf[3]; /* [1] stdout, [2] stderr */
    bool out_broken[3];   /* EPIPE etc.: discard further output */
    bool out_lost;        /* rank output dropped for lack of memory: exit != 0 */

    bool ending; /* kill sequence started */
    bool sigkill_sent;
    int exit_code; /* 0 until the first failure decides it */
    int caught_signal;
    struct loop_timer *kill_timer;
    struct loop_timer *drain_timer;
    struct loop_timer *timeout_timer;
    struct loop_watch *sig_w;
    int pmi_level; /* enum psrv_log_level */

    /* Proxy mode (multi-host, see front.c): up is the connection to the
     * mpiexec that started us; output, exits and failures go there. */
    struct mpx_conn *up;
    struct loop_watch *up_w;
    bool up_lost;      /* connection to mpiexec closed or broken */
    bool done_sent;    /* MPX_P_DONE sent: waiting for mpiexec to hang up */
    bool fail_sent;    /* a failure was reported: the job is about to end */
    bool out_paused;   /* rank pipes not read: too much output queued for mpiexec */
    int nodeid;
    const char *host;  /* our host name, for messages */
    struct loop_timer *bye_timer;

    /* Dynamic processes (spawn.h): the nested mpiexecs of the jobs our ranks
     * spawned, and, when this mpiexec runs a spawned job, its identity and
     * the report owed to the spawner once every rank started. */
    struct mpx_spawner *spawner;
    struct mpx_spawned spawned;
    int exec_pending; /* ranks whose exec is not yet known to have worked */
};

/* The self-pipe and the pending flags: the only state a signal handler
 * touches.  The flags carry which signals came (a full pipe cannot lose
 * one); the pipe only wakes the loop. */
static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t sig_pending[NSIG];

static void on_signal(int sig)
{
    int saved = errno;
    char c = 0;

    if (sig > 0 && sig < NSIG)
        sig_pending[sig] = 1;
    if (write(sig_pipe[1], &c, 1) < 0) {
        /* pipe full: a wake-up is pending anyway */
    }
    errno = saved;
}

static void flush_out(struct job *job);

/* One "mpiexec: ..." line on stderr, after the rank output gathered so far. */
static void msg(struct job *job, const char *fmt, ...) LOOM_PRINTF(2, 3);
static void msg(struct job *job, const char *fmt, ...)
{
    va_list ap;

    flush_out(job);
    va_start(ap, fmt);
    loom_vlogf(&job->log, LOOM_LOG_ERROR, fmt, ap);
    va_end(ap);
}

static const char *plural(int n)
{
    return n == 1 ? "" : "s";
}

/* Proxy mode: one frame to mpiexec (pk is freed).  A failed send shows up
 * as EOF or an error on the connection, handled in up_cb(). */
static void up_send(struct job *job, uint8_t type, struct pack *pk)
{
    if (job->up && !job->up_lost && pack_error(pk) == 0) {
        mpx_conn_send(job->up, type, pk->buf, pk->len);
        if (job->up_w && mpx_conn_pending(job->up))
            loop_watch_set(job->up_w, LOOP_READ | LOOP_WRITE);
    }
    pack_free(pk);
}

static void begin_kill(struct job *job);

/* A failure that ends the job: the message names the culprit.  A proxy
 * tells mpiexec, which decides the exit code and ends the job everywhere. */
static void job_fail(struct job *job, int code, const char *fmt, ...) LOOM_PRINTF(3, 4);
static void job_fail(struct job *job, int code, const char *fmt, ...)
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
    msg(job, "%s", text);
    job->exit_code = code;
    begin_kill(job);
}

/* ---- output -------------------------------------------------------------- */

static void flush_out(struct job *job)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct iobuf *b = &job->obuf[fd];
        if (b->len == 0)
            continue;
        if (!job->out_broken[fd] && fdio_write_full(fd, b->p, b->len) < 0)
            job->out_broken[fd] = true;
        b->len = 0;
    }
}

/* iofwd could not take a rank's output (ENOMEM): what it held is gone.  Said
 * once per stream, and the job's exit status will not be 0 (run_ranks). */
static void output_lost(struct stream *s)
{
    struct job *job = s->job;

    if (!s->lost)
        msg(job, "rank %d: out of memory: some of its %s was lost", s->r->rank,
            s->which == 1 ? "stdout" : "stderr");
    s->lost = true;
    job->out_lost = true;
}

static void stream_close(struct stream *s)
{
    struct job *job = s->job;

    if (s->fd < 0)
        return;
    if (job->up) {
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, s->r->rank);
        pack_u8(&pk, (uint8_t)s->which);
        up_send(job, MPX_P_EOF, &pk);
    } else {
        if (iofwd_eof(&s->fwd, job->o->tag_output, &job->obuf[s->which]) < 0)
            output_lost(s);
    }
    loop_watch_remove(job->lp, s->w);
    s->w = NULL;
    close(s->fd);
    s->fd = -1;
    job->open_streams--;
}

static void check_done(struct job *job);

static size_t up_queued(const struct job *job)
{
    return job->up ? job->up->out.len - job->up->out_off : 0;
}

/* Proxy mode: stop or resume reading every rank's output pipes. */
static void streams_pause(struct job *job, bool pause)
{
    if (job->out_paused == pause)
        return;
    job->out_paused = pause;
    for (int i = 0; i < job->n; i++)
        for (int k = 0; k < 2; k++)
            if (job->ranks[i].out[k].w)
                loop_watch_set(job->ranks[i].out[k].w, pause ? 0 : LOOP_READ);
}

/* Read what is there; returns false at EOF or error (stream closed).
 * drain (the rank exited) reads on even when paused: what a dead rank's pipe
 * holds is bounded by the pipe's size. */
static bool stream_read(struct stream *s, bool drain)
{
    struct job *job = s->job;
    char buf[READ_CHUNK];

    while (s->fd >= 0) {
        ssize_t n = fdio_read(s->fd, buf, sizeof(buf));
        if (n == -EAGAIN)
            return true;
        if (n <= 0) {
            stream_close(s);
            return false;
        }
        if (job->up) {
            /* mpiexec assembles and tags the lines */
            struct pack pk;
            pack_init(&pk);
            pack_i32(&pk, s->r->rank);
            pack_u8(&pk, (uint8_t)s->which);
            pack_bytes(&pk, buf, (size_t)n);
            up_send(job, MPX_P_OUT, &pk);
            if (up_queued(job) >= UP_HIGH)
                streams_pause(job, true);
            if (!drain)
                break;
            continue;
        }
        if (iofwd_feed(&s->fwd, buf, (size_t)n, job->o->tag_output,
                       &job->obuf[s->which]) < 0)
            output_lost(s);
        if (job->obuf[s->which].len >= FLUSH_THRESHOLD)
            flush_out(job);
        if (!drain)
            break;
    }
    return s->fd >= 0;
}

static void stream_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                      void *arg)
{
    struct stream *s = arg;

    if (!stream_read(s, false))
        check_done(s->job);
}

/* ---- PMI ----------------------------------------------------------------- */

static void pmi_close(struct rank *r)
{
    if (r->pmi_fd < 0)
        return;
    loop_watch_remove(r->job->lp, r->pmi_w);
    r->pmi_w = NULL;
    close(r->pmi_fd);
    r->pmi_fd = -1;
    flow_free(&r->pmi_flow);
}

static void rank_exited(struct job *job, struct rank *r, int status);

static void tell_gone(struct rank *r)
{
    if (r->gone_timer) {
        loop_timer_cancel(r->job->lp, r->gone_timer);
        r->gone_timer = NULL;
    }
    if (r->gone_pending) {
        r->gone_pending = false;
        psrv_client_gone(r->job->srv, r->idx);
        lpmix_client_gone(r->idx);
    }
}

static void gone_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct rank *r = arg;

    r->gone_timer = NULL;
    tell_gone(r);
}

/* The rank's PMI socket reached EOF or broke.  A rank that exits without
 * PMI finalize makes the core abort the job; if the rank exited with an
 * error, that exit is the first failure, so it is judged before psrv
 * hears of the hang-up (the hang-up usually wins the race to us). */
static void pmi_eof(struct rank *r)
{
    struct job *job = r->job;
    int st;

    pmi_close(r);
    r->gone_pending = true;
    if (r->judging)
        return; /* rank_exited() tells psrv after judging */
    if (!r->exited && r->pid > 0) {
        if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
            rank_exited(job, r, st);
            check_done(job);
            return;
        }
        r->gone_timer = loop_timer_add(job->lp, GONE_DELAY_MS, gone_timer_cb, r);
        if (r->gone_timer)
            return;
    }
    tell_gone(r);
}

static int pmi_feed(void *arg, const char *buf, size_t len)
{
    struct rank *r = arg;

    return psrv_client_input(r->job->srv, r->idx, buf, len);
}

/* psrv's verdict on input fed: a protocol error (the core replied and called
 * abort) or input that cannot be held closes the socket.  0, or -1 if closed. */
static int pmi_fed(struct rank *r, int rc)
{
    if (rc < 0 && r->pmi_fd >= 0) {
        if (rc == -ENOMEM) { /* no room to hold its input: it would wait forever */
            char text[96];
            snprintf(text, sizeof(text),
                     "rank %d lost: out of memory holding its PMI requests", r->rank);
            psrv_abort(r->job->srv, r->rank, 1, text);
        }
        pmi_close(r);
        return -1;
    }
    if (r->pmi_fd >= 0)
        loop_watch_set(r->pmi_w, flow_events(&r->pmi_flow));
    return 0;
}

/* Feed psrv what the socket holds; drain: until EAGAIN.  A rank whose replies
 * pile up unread (flow.h) is not read until it reads them. */
static void pmi_read(struct rank *r, bool drain)
{
    char buf[READ_CHUNK];

    while (r->pmi_fd >= 0 && flow_reading(&r->pmi_flow)) {
        ssize_t n = fdio_read(r->pmi_fd, buf, sizeof(buf));
        if (n == -EAGAIN)
            return;
        if (n <= 0) {
            pmi_eof(r);
            return;
        }
        if (pmi_fed(r, flow_feed(&r->pmi_flow, buf, (size_t)n, pmi_feed, r)) < 0 ||
            !drain)
            return;
    }
}

static int pmi_flush(struct rank *r)
{
    int rc = flow_send(&r->pmi_flow, r->pmi_fd);

    if (rc < 0)
        return rc;
    /* below the low-water mark again: what was held back goes in first */
    return pmi_fed(r, flow_resume(&r->pmi_flow, pmi_feed, r));
}

static void pmi_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct rank *r = arg;

    if (revents & (LOOP_WRITE | LOOP_ERROR)) {
        if (pmi_flush(r) < 0) {
            pmi_eof(r);
            return;
        }
    }
    if (r->pmi_fd >= 0 && (revents & (LOOP_READ | LOOP_ERROR)))
        pmi_read(r, false);
}

/* psrv_ops->client_send() */
static int op_client_send(void *arg, int client, const char *buf, size_t len)
{
    struct job *job = arg;
    struct rank *r;

    if (client < 0 || client >= job->n)
        return -EINVAL;
    r = &job->ranks[client];
    if (r->pmi_fd < 0)
        return -EPIPE;
    int rc = flow_write(&r->pmi_flow, r->pmi_fd, buf, len);
    if (rc == 0)
        loop_watch_set(r->pmi_w, flow_events(&r->pmi_flow));
    return rc;
}

/* psrv_ops->tree_send(): a proxy's tree messages go through mpiexec, which
 * relays them to node `to`; the standalone launcher is one node, no tree. */
static int op_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct job *job = arg;
    struct pack pk;

    if (!job->up || job->up_lost)
        return -ENOTCONN;
    pack_init(&pk);
    pack_i32(&pk, to);
    pack_bytes(&pk, buf, len);
    up_send(job, MPX_P_TREE, &pk);
    return 0;
}

static void errpipe_read(struct rank *r);

/* psrv_ops->abort(): the core's message already names the culprit. */
static void op_abort(void *arg, int rank, int exitcode, const char *text)
{
    struct job *job = arg;
    int code = exitcode & 0xff;

    if (code == 0)
        code = 1;
    /* Once the job is being ended, a failed fence of the ranks being
     * killed is a consequence, not news. */
    if (job->ending && !job->o->verbose)
        return;
    if (job->up) {
        job_fail(job, code, "job aborted: %s", text && *text ? text : "(no message)");
        return;
    }
    msg(job, "job aborted: %s", text && *text ? text : "(no message)");
    if (!job->exit_code)
        job->exit_code = code;
    begin_kill(job);
}

/* psrv_ops->log() */
static void op_log(void *arg, enum psrv_log_level level, const char *text)
{
    struct job *job = arg;
    uint64_t t = loop_now_ms() - job->t0;

    if ((int)level > job->pmi_level)
        return;
    if (job->pmi_level < PSRV_LOG_INFO) {
        /* Quiet defaults: op_abort() prints the abort itself, and once the
         * job is being killed, complaints about ranks vanishing are noise. */
        if (job->ending || job->fail_sent || strncmp(text, "abort: ", 7) == 0)
            return;
        loom_logf(&job->log, LOOM_LOG_ERROR, "pmi: %s", text);
        return;
    }
    loom_logf(&job->log, LOOM_LOG_ERROR, "%llu.%03llu pmi %s: %s",
              (unsigned long long)(t / 1000), (unsigned long long)(t % 1000),
              loom_log_level_name((enum loom_log_level)level), text);
}

/* ---- job end ------------------------------------------------------------- */

/* Each rank leads its own session and process group: signal the group
 * (the rank and what it started) and the rank itself, in case it moved.
 * Only unreaped ranks: a reaped rank's pid may be reused. */
static int live_total(const struct job *job)
{
    return job->live + mpx_spawner_live(job->spawner);
}

static void kill_all(struct job *job, int sig)
{
    mpx_spawner_kill(job->spawner, sig); /* a nested mpiexec ends its own ranks */
    for (int i = 0; i < job->n; i++) {
        struct rank *r = &job->ranks[i];
        if (r->pid > 0 && !r->exited) {
            kill(-r->pid, sig);
            kill(r->pid, sig);
        }
    }
}

static void kill_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    job->kill_timer = NULL;
    if (live_total(job) > 0) {
        job->sigkill_sent = true;
        kill_all(job, SIGKILL);
    }
}

static void begin_kill(struct job *job)
{
    if (job->ending)
        return;
    job->ending = true;
    if (live_total(job) > 0) {
        if (!job->up && job->live > 0) /* mpiexec counts the ranks of all hosts */
            msg(job, "killing %d remaining rank%s", job->live, plural(job->live));
        kill_all(job, SIGTERM);
        job->kill_timer = loop_timer_add(job->lp, KILL_GRACE_MS, kill_timer_cb, job);
        if (!job->kill_timer) { /* no memory for the grace: a rank ignoring SIGTERM
                                 * must not keep the job alive */
            job->sigkill_sent = true;
            kill_all(job, SIGKILL);
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
    check_done(job);
}

static void bye_timer_cb(struct loop *lp, struct loop_timer *t, void *arg);

static void check_done(struct job *job)
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
        job->bye_timer = loop_timer_add(job->lp, 30000, bye_timer_cb, job);
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

static void rank_exited(struct job *job, struct rank *r, int status)
{
    r->exited = true;
    job->live--;
    if (r->exec_err_fd >= 0)
        errpipe_read(r);
    /* Whatever it said last comes first: an abort before exit, its output. */
    r->judging = true;
    pmi_read(r, true);
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
    if (bad && !job->ending) {
        if (WIFEXITED(status)) {
            msg(job, "rank %d exited with code %d", r->rank, WEXITSTATUS(status));
            job->exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            int sig = WTERMSIG(status);
            msg(job, "rank %d killed by signal %d (%s)", r->rank, sig, strsignal(sig));
            /* hydra's convention: the signal number itself (128+sig would
             * be mistaken for mpiexec itself having been killed). */
            job->exit_code = sig;
        } else {
            msg(job, "rank %d ended with wait status 0x%x", r->rank, status);
            job->exit_code = 1;
        }
        flush_out(job);
        begin_kill(job);
    }
    tell_gone(r);
    if (job->live == 0 && job->kill_timer) {
        loop_timer_cancel(job->lp, job->kill_timer);
        job->kill_timer = NULL;
    }
}

/* A nested mpiexec (a job our ranks spawned) ended: its failure is ours. */
static void spawned_job_exited(struct job *job, const char *what, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (job->ending)
        return;
    if (WIFEXITED(status)) {
        msg(job, "%s failed (its mpiexec exited with code %d)", what, WEXITSTATUS(status));
        job->exit_code = WEXITSTATUS(status);
    } else {
        msg(job, "%s failed (its mpiexec was killed by signal %d)", what,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        job->exit_code = 1;
    }
    flush_out(job);
    begin_kill(job);
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
                 mpx_spawner_reaped(job->spawner, pid, status, what, sizeof(what), &judge) &&
                 judge)
            spawned_job_exited(job, what, status);
    }
    check_done(job);
}

static void handle_signal(struct job *job, int sig)
{
    if (job->caught_signal) {
        /* Second signal: no more grace. */
        job->sigkill_sent = true;
        kill_all(job, SIGKILL);
        return;
    }
    job->caught_signal = sig;
    if (job->up) {
        job_fail(job, 128 + sig, "the proxy on host %s caught signal %d (%s)", job->host,
                 sig, strsignal(sig));
        begin_kill(job);
        return;
    }
    if (job->spawned.on && sig == SIGTERM) /* the spawner's mpiexec ends its job */
        msg(job, "spawned job %s: ended with the job that spawned it", job->jobid);
    else
        msg(job, "caught signal %d (%s)", sig, strsignal(sig));
    job->exit_code = 128 + sig;
    begin_kill(job);
}

static void sig_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    static const int terms[] = {SIGINT, SIGTERM, SIGHUP};
    struct job *job = arg;
    char buf[256];

    while (fdio_read(fd, buf, sizeof(buf)) > 0)
        ;
    for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
        if (sig_pending[terms[i]]) {
            sig_pending[terms[i]] = 0;
            handle_signal(job, terms[i]);
        }
    }
    if (sig_pending[SIGCHLD]) {
        sig_pending[SIGCHLD] = 0;
        reap(job);
    }
}

static void timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    job->timeout_timer = NULL;
    if (job->ending)
        return;
    msg(job, "timeout: the job did not finish within %d s", job->o->timeout_s);
    job->exit_code = EXIT_TIMEOUT;
    begin_kill(job);
}

/* Before every poll(): flush gathered output, let psrv bound the sleep. */
static int prepare_cb(struct loop *lp, void *arg)
{
    struct job *job = arg;

    flush_out(job);
    return job->srv ? psrv_tick(job->srv) : -1;
}

/* ---- launch -------------------------------------------------------------- */

static bool our_var(const char *kv)
{
    static const char *const ours[] = {
        "PMI_FD=", "PMI_RANK=",    "PMI_SIZE=",        "PMI_JOBID=",       "PMI_PORT=",
        "PMI_ID=", "PMI_SPAWNED=", "MPI_LOCALRANKID=", "MPI_LOCALNRANKS=",
    };

    for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
        if (strncmp(kv, ours[i], strlen(ours[i])) == 0)
            return true;
    return false;
}

struct envv {
    char **v;
    int n, cap;
};

/* Index in e of the variable that "NAME=value" (or "NAME") names, or -1. */
static int env_find(const struct envv *e, const char *kv)
{
    const char *eq = strchr(kv, '=');
    size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);

    for (int i = 0; i < e->n; i++)
        if (strncmp(e->v[i], kv, kl) == 0 && e->v[i][kl] == '=')
            return i;
    return -1;
}

static int env_set(struct envv *e, char *kv)
{
    int i = env_find(e, kv);

    if (i >= 0) {
        e->v[i] = kv;
        return 0;
    }
    if (e->n + 10 >= e->cap) {
        int cap = e->cap ? e->cap * 2 : 64;
        char **v = realloc(e->v, sizeof(*v) * (size_t)cap);
        if (!v)
            return -ENOMEM;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = kv;
    return 0;
}

/* env_set unless the variable is already there: the user's value wins. */
static int env_default(struct envv *e, char *kv)
{
    return env_find(e, kv) >= 0 ? 0 : env_set(e, kv);
}

/* "K" (from -x K / -genvlist) -> "K=<mpiexec's value>", or NULL if unset. */
static char *resolve(char *s)
{
    if (strchr(s, '='))
        return s;
    for (char **p = environ; *p; p++) {
        size_t kl = strlen(s);
        if (strncmp(*p, s, kl) == 0 && (*p)[kl] == '=')
            return *p;
    }
    return NULL;
}

static int app_env(struct mpx_opts *o, struct mpx_app *a, struct envv *e)
{
    e->n = 0;
    if (!e->v) {
        /* room for the per-rank variables even if nothing else is set */
        e->cap = 64;
        e->v = malloc(sizeof(*e->v) * (size_t)e->cap);
        if (!e->v)
            return -ENOMEM;
    }
    for (char **p = environ; *p && !o->genv_none; p++)
        if (!our_var(*p) && env_set(e, *p) < 0)
            return -ENOMEM;
    for (int i = 0; i < o->genv.n; i++) {
        char *kv = resolve(o->genv.v[i]);
        if (kv && env_set(e, kv) < 0)
            return -ENOMEM;
    }
    for (int i = 0; i < a->env.n; i++) {
        char *kv = resolve(a->env.v[i]);
        if (kv && env_set(e, kv) < 0)
            return -ENOMEM;
    }
    return 0;
}

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
    pid_t parent; /* > 0: die with the parent (proxy mode) */
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
        _exit(EXIT_LAUNCH);
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
    _exit(EXIT_LAUNCH);
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
static const char *find_program(const char *argv0, char *buf, size_t len)
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

static void close_errpipe(struct rank *r)
{
    if (r->exec_err_fd < 0)
        return;
    loop_watch_remove(r->job->lp, r->exec_err_w);
    r->exec_err_w = NULL;
    close(r->exec_err_fd);
    r->exec_err_fd = -1;
}

/* The child's exec error pipe: EOF means execve succeeded. */
static void errpipe_read(struct rank *r)
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
    if (n == (ssize_t)sizeof(e) && !job->ending)
        job_fail(job, EXIT_LAUNCH, "cannot start rank %d (%s)%s%s: %s", r->rank,
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
    check_done(r->job);
}

static int launch(struct job *job, struct mpx_bind *binder)
{
    struct mpx_opts *o = job->o;
    struct envv env = {0};
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
        msg(job, "cannot open /dev/null: %s", strerror(errno));
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
                msg(job, "warning: ignoring LOOM_TIMER_SLACK=%s (want 0..%d microseconds)", v,
                    CPUS_MAX_TIMER_SLACK_US);
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
            msg(job, "cannot use working directory '%s': %s", wdir, strerror(errno));
            rc = -ENOENT;
            break;
        }
        if (app_env(o, app, &env) < 0) {
            msg(job, "cannot build the environment of %s: out of memory", app->argv[0]);
            rc = -ENOMEM;
            break;
        }
        for (char *const *d = lpmix_env_defaults(); d && *d && rc == 0; d++)
            if (env_default(&env, *d) < 0)
                rc = -ENOMEM;
        if (rc < 0) {
            msg(job, "cannot build the environment of %s: out of memory", app->argv[0]);
            break;
        }
        const char *path = find_program(app->argv[0], pathbuf, sizeof(pathbuf));
        int base = env.n;
        for (; lk < job->n && job->ranks[lk].app == a && rc == 0; lk++) {
            struct rank *r = &job->ranks[lk];
            int sv[2], po[2], pe[2] = {-1, -1}, ep[2];

            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                rc = -errno;
                msg(job,
                    "cannot start rank %d: socketpair: %s (raise the open file limit?)",
                    r->rank, strerror(errno));
                break;
            }
            if (make_pipe(po) < 0) {
                rc = -errno;
                msg(job, "cannot start rank %d: pipe: %s (raise the open file limit?)",
                    r->rank, strerror(errno));
                close(sv[0]);
                close(sv[1]);
                break;
            }
            if (make_pipe(pe) < 0 || make_pipe(ep) < 0) {
                rc = -errno;
                msg(job, "cannot start rank %d: pipe: %s (raise the open file limit?)",
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
                (void)env_set(&env, *xv);
            env.v[env.n] = NULL;

            if (binder) {
                char desc[300];
                int brc = mpx_bind_self(binder, r->idx, desc, sizeof(desc));
                if (brc < 0)
                    msg(job, "warning: cannot bind rank %d to %s: %s", r->rank, desc,
                        strerror(-brc));
                else if (o->report_bindings)
                    msg(job, "rank %d bound to %s", r->rank, desc);
            } else if (o->report_bindings) {
                msg(job, "rank %d not bound", r->rank);
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
                msg(job, "cannot start rank %d (%s): fork: %s", r->rank, app->argv[0],
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
                msg(job, "out of memory");
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

/* ---- setup --------------------------------------------------------------- */

static void raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Make sure fds 0-2 exist so that no pipe or socket lands on them. */
static void sane_stdio(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    }
}

static int install_signals(void)
{
    struct sigaction sa;
    static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};

    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        /* Respect nohup.  SIGINT is handled even if ignored: shells
         * ignore it for background jobs, and the launcher must still stop
         * its job when told to. */
        if (sigs[i] == SIGHUP && sigaction(sigs[i], NULL, &old) == 0 &&
            old.sa_handler == SIG_IGN)
            continue;
        if (sigaction(sigs[i], &sa, NULL) < 0)
            return -errno;
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt;
    v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1000000000)
        return dflt;
    return (int)v;
}

/* ---- inside a Slurm allocation: srun --mpi=loom ------------------------ */

static const char *env_get(void *arg, const char *name)
{
    (void)arg;
    return getenv(name);
}

/* srun in PATH (or LOOM_SRUN, for tests); path in buf, or NULL. */
static const char *find_srun(char *buf, size_t len)
{
    const char *s = getenv("LOOM_SRUN");

    if (s && *s)
        return access(s, X_OK) == 0 ? s : NULL;
    s = find_program("srun", buf, len);
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
            alarm(KILL_GRACE_MS / 100); /* srun needs a moment to kill the step */
    }
    if (srun_pid > 0)
        kill((pid_t)srun_pid, sig);
}

/* Runs the job with srun; returns mpiexec's exit code. */
static int run_srun(struct mpx_opts *o, const char *srun)
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
            const char *p = find_program(o->apps[k].argv[0], pbuf, sizeof(pbuf));
            if (p == pbuf && (p = strdup(pbuf)) != NULL)
                o->apps[k].argv[0] = (char *)p; /* not freed: we exit soon */
        }
    }
    rc = mpx_srun_build(o, env_get, NULL, srun, mp, &s, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "mpiexec: %s\n", rc == -ENOMEM ? "out of memory" : err);
        if (fd >= 0) {
            close(fd);
            unlink(mp);
        }
        return EXIT_USAGE;
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
        return EXIT_LAUNCH;
    }

    /* Stay around: the timer, and the multi-prog file to remove. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = srun_forward;
    sigemptyset(&sa.sa_mask);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpiexec: fork: %s\n", strerror(errno));
        rc = EXIT_LAUNCH;
        goto done;
    }
    if (pid == 0) {
        execv(s.argv.v[0], s.argv.v);
        fprintf(stderr, "mpiexec: cannot run %s: %s\n", s.argv.v[0], strerror(errno));
        _exit(EXIT_LAUNCH);
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
        rc = EXIT_TIMEOUT;
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

/* ---- running this node's ranks (local mode and proxy mode) -------------- */

/* Create this node's PMI server core.  The one place where a node's server
 * starts, for the standalone launcher and for each proxy of a multi-host
 * job alike (a PMIx server would be started next to it here). */
/* psrv_ops->spawn(): a nested mpiexec runs the new job (spawn.h). */
static int op_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                    size_t errlen)
{
    struct job *job = arg;

    if (job->up) {
        snprintf(err, errlen, "spawn is not supported in a multi-host mpiexec job yet "
                              "(-hosts/-f); run on one host");
        return -ENOTSUP;
    }
    if (job->ending) {
        snprintf(err, errlen, "spawn: the job is ending");
        return -ECANCELED;
    }
    if (!job->spawner) {
        snprintf(err, errlen, "spawn: mpiexec could not set up spawning (out of memory "
                              "or /proc/self/exe unreadable)");
        return -ENOTSUP;
    }
    return mpx_spawn_start(job->spawner, id, req, err, errlen);
}

static struct psrv *start_server_core(struct job *job, const struct psrv_config *cfg)
{
    static const struct psrv_ops ops = {
        .client_send = op_client_send,
        .tree_send = op_tree_send,
        .abort = op_abort,
        .log = op_log,
        .now_ms = NULL,
        .coll_done = lpmix_coll_done,
        .dmdx_request = lpmix_dmdx_request,
        .dmdx_done = lpmix_dmdx_done,
        .ns_done = lpmix_ns_done,
        .spawn = op_spawn,
    };

    return psrv_create(cfg, &ops, job);
}

static void up_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg);
static void up_process(struct job *job);

/* Starts the ranks of node `nodeid` (those with rank_node[r] == nodeid; all
 * of them when rank_node is NULL), serves them and returns the exit code.
 * job->o, job->size, job->jobid and job->pmi_level are set. */
static int run_ranks(struct job *job, const int *rank_node, int nnodes, int nodeid,
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
        msg(job, "out of memory");
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
            rk->pmi_fd = -1;
            rk->exec_err_fd = -1;
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
        .tree_width = 2,
        .fence_timeout_ms = o->fence_timeout_s * 1000,
        .log_level = (enum psrv_log_level)job->pmi_level,
        .spawner_jobid = job->spawned.on ? job->spawned.spawner_jobid : NULL,
        .npreput = job->spawned.on ? job->spawned.npreput : 0,
        .preput = job->spawned.on ? job->spawned.preput : NULL,
    };
    char limits_err[160]; /* quotas of the server core: LOOM_PMI_MAX_* */
    if (psrv_limits_from_env(&cfg.limits, limits_err, sizeof(limits_err)) < 0)
        msg(job, "%s", limits_err);
    job->srv = start_server_core(job, &cfg);
    if (job->srv)
        (void)lpmix_start(job->lp, job->srv, &cfg, job->host, op_log, job);
    if (job->srv && !job->up) {
        /* spawn budget: what our spawner left us, else LOOM_MPIEXEC_MAX_SPAWN_PROCS */
        int max = job->spawned.on ? job->spawned.budget
                                  : env_int("LOOM_MPIEXEC_MAX_SPAWN_PROCS",
                                            MPX_SPAWN_DEF_MAX_PROCS);
        job->spawner = mpx_spawner_create(job->lp, &job->srv, job->jobid,
                                          o->fence_timeout_s, max < 0 ? 0 : max);
    }
    free(local);
    free(node);
    free(appnum);
    if (!job->srv) {
        msg(job, "cannot create the PMI server: %s", strerror(errno));
        return 1;
    }

    rc = install_signals();
    if (rc < 0) {
        msg(job, "cannot install signal handlers: %s", strerror(-rc));
        return 1;
    }
    /* Without this watch finished ranks are never reaped: mpiexec would hang. */
    job->sig_w = loop_watch_add(job->lp, sig_pipe[0], LOOP_READ, sig_cb, job);
    if (!job->sig_w) {
        msg(job, "cannot watch for signals and rank exits: out of memory");
        return 1;
    }
    if (job->up) {
        job->up_w = loop_watch_add(job->lp, job->up->fd,
                                   LOOP_READ | (mpx_conn_pending(job->up) ? LOOP_WRITE : 0),
                                   up_cb, job);
        if (!job->up_w) {
            msg(job, "out of memory");
            return 1;
        }
    }
    loop_set_prepare(job->lp, prepare_cb, job);
    if (o->timeout_s > 0) {
        job->timeout_timer =
            loop_timer_add(job->lp, (uint64_t)o->timeout_s * 1000, timeout_cb, job);
        if (!job->timeout_timer) { /* the user asked for a bound: none is no answer */
            msg(job, "cannot arm the --timeout timer: out of memory");
            return 1;
        }
    }

    /* tree messages that came with the job description, already read */
    if (job->up)
        up_process(job);
    rc = launch(job, binder);
    if (job->spawned.on && rc < 0)
        mpx_spawned_report(&job->spawned, 1, "the mpiexec of the spawned job could not "
                                             "start its ranks (see its messages)");
    if (o->verbose)
        msg(job, "started %d rank%s in %llu ms (jobid %s)", job->live, plural(job->live),
            (unsigned long long)(loop_now_ms() - job->t0), job->jobid);
    if (rc < 0 && job->up) {
        job_fail(job, EXIT_LAUNCH, "cannot start the ranks on host %s", job->host);
        begin_kill(job);
    } else if (rc < 0) {
        job->exit_code = EXIT_LAUNCH;
        begin_kill(job);
    }
    check_done(job);

    rc = loop_run(job->lp);
    flush_out(job);
    if (rc < 0)
        msg(job, "event loop failed: %s", strerror(-rc));
    if (job->out_lost && job->exit_code == 0) {
        msg(job, "exit status 1: rank output was lost (out of memory)");
        job->exit_code = 1;
    }
    if (o->verbose && !job->up) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        msg(job,
            "job ended after %llu ms, exit code %d (mpiexec cpu: %ld.%03ld s user, "
            "%ld.%03ld s sys)",
            (unsigned long long)(loop_now_ms() - job->t0), job->exit_code,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 1000,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 1000);
    }

    for (int i = 0; i < job->n; i++) {
        pmi_close(&job->ranks[i]);
        close_errpipe(&job->ranks[i]);
        for (int k = 0; k < 2; k++)
            iobuf_free(&job->ranks[i].out[k].fwd.part);
    }
    lpmix_stop();
    psrv_destroy(job->srv);
    job->srv = NULL;
    mpx_spawner_destroy(job->spawner);
    job->spawner = NULL;
    loop_destroy(job->lp);
    job->lp = NULL;
    for (int k = 0; k < 3; k++)
        iobuf_free(&job->obuf[k]);
    free(job->ranks);
    job->ranks = NULL;
    if (rc < 0 && job->exit_code == 0)
        return 1;
    return job->exit_code;
}

/* ---- proxy mode: one host of a multi-host job --------------------------- */

/* The uplink's log sink: lines go to mpiexec, which prints them. */
static void up_sink(void *arg, enum loom_log_level level, const char *ident,
                    const char *line)
{
    struct job *job = arg;
    struct pack pk;

    if (!job->up || job->up_lost) {
        loom_log_stderr_sink(NULL, level, ident, line);
        return;
    }
    pack_init(&pk);
    pack_str(&pk, line);
    up_send(job, MPX_P_LOG, &pk);
}

static void bye_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    job->bye_timer = NULL;
    loop_stop(lp, 0);
}

/* The connection to mpiexec reached EOF or broke. */
static void up_gone(struct job *job, const char *why)
{
    if (job->up_lost)
        return;
    job->up_lost = true;
    streams_pause(job, false); /* nothing queues for mpiexec any more */
    if (job->up_w) {
        loop_watch_remove(job->lp, job->up_w);
        job->up_w = NULL;
    }
    if (job->done_sent) {
        loop_stop(job->lp, 0);
        return;
    }
    loom_logf(&job->log, LOOM_LOG_ERROR, "lost the connection to mpiexec (%s): "
              "killing %d rank%s", why, job->live, plural(job->live));
    job->exit_code = 1;
    begin_kill(job);
    check_done(job);
}

static void up_frame(struct job *job, uint8_t type, const uint8_t *body, size_t len)
{
    struct unpack u;

    unpack_init(&u, body, len);
    switch (type) {
    case MPX_F_TREE: {
        int from = unpack_i32(&u);
        size_t n;
        const void *b = unpack_bytes(&u, &n);
        if (b && !unpack_error(&u))
            psrv_tree_input(job->srv, from, b, n);
        break;
    }
    case MPX_F_KILL: {
        int sig = unpack_i32(&u);
        if (sig == SIGKILL) {
            job->ending = true;
            job->sigkill_sent = true;
            kill_all(job, SIGKILL);
        } else {
            begin_kill(job);
        }
        break;
    }
    default:
        break; /* unknown frames from a newer mpiexec are ignored */
    }
}

/* Handle the whole frames buffered from mpiexec. */
static void up_process(struct job *job)
{
    uint8_t type;
    const uint8_t *body;
    size_t len;
    int rc;

    while (!job->up_lost && (rc = mpx_conn_next(job->up, &type, &body, &len)) == 1)
        up_frame(job, type, body, len);
    if (!job->up_lost && rc < 0)
        up_gone(job, "bad frame");
}

static void up_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct job *job = arg;

    if (revents & LOOP_WRITE) {
        if (mpx_conn_flush(job->up) < 0) {
            up_gone(job, "write failed");
            return;
        }
        loop_watch_set(w, LOOP_READ | (mpx_conn_pending(job->up) ? LOOP_WRITE : 0));
        if (job->out_paused && up_queued(job) <= UP_LOW)
            streams_pause(job, false);
    }
    if (!(revents & (LOOP_READ | LOOP_ERROR)))
        return;
    long n = mpx_conn_read(job->up);
    if (n == -EAGAIN)
        return;
    if (n <= 0) {
        up_gone(job, n == 0 ? "closed" : strerror((int)-n));
        return;
    }
    up_process(job);
}

/* First line of stdin (the cookie), waiting at most ms. */
static int read_cookie(char *buf, size_t len, int ms)
{
    size_t got = 0;
    uint64_t end = loop_now_ms() + (uint64_t)ms;

    while (got + 1 < len) {
        struct pollfd pfd = {.fd = 0, .events = POLLIN};
        int64_t left = (int64_t)(end - loop_now_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        int prc = poll(&pfd, 1, (int)left);
        if (prc < 0 && errno == EINTR)
            continue;
        if (prc <= 0)
            return prc == 0 ? -ETIMEDOUT : -errno;
        ssize_t n = read(0, buf + got, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -ENODATA : -errno;
        if (buf[got] == '\n') {
            buf[got] = '\0';
            return 0;
        }
        got++;
    }
    return -EMSGSIZE;
}

/* Wait (bounded) for one frame on a blocking-style exchange. */
static int wait_frame(struct mpx_conn *c, int ms, uint8_t *type, const uint8_t **body,
                      size_t *len)
{
    uint64_t end = loop_now_ms() + (uint64_t)ms;

    for (;;) {
        int rc = mpx_conn_next(c, type, body, len);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        struct pollfd pfd = {.fd = c->fd,
                             .events = POLLIN | (mpx_conn_pending(c) ? POLLOUT : 0)};
        int64_t left = (int64_t)(end - loop_now_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        int prc = poll(&pfd, 1, (int)left);
        if (prc < 0 && errno == EINTR)
            continue;
        if (prc < 0)
            return -errno;
        if (pfd.revents & POLLOUT && mpx_conn_flush(c) < 0)
            return -EPIPE;
        if (pfd.revents & (POLLIN | POLLERR | POLLHUP)) {
            long n = mpx_conn_read(c);
            if (n == 0)
                return -ECONNRESET;
            if (n < 0 && n != -EAGAIN)
                return (int)n;
        }
    }
}

/* Decode MPX_F_JOB into job and o; rank_node is malloc'd. */
static int decode_job(struct job *job, struct mpx_opts *o, const uint8_t *body, size_t len,
                      int **rank_node, int *nnodes)
{
    struct unpack u;

    unpack_init(&u, body, len);
    memset(o, 0, sizeof(*o));
    if (unpack_u32(&u) != MPX_PROTO_VERSION)
        return -EPROTO;
    char *jobid = unpack_strdup(&u);
    job->size = unpack_i32(&u);
    *nnodes = unpack_i32(&u);
    int nodeid = unpack_i32(&u);
    o->fence_timeout_s = unpack_i32(&u);
    job->pmi_level = unpack_i32(&u);
    o->bind = unpack_i32(&u) ? MPX_BIND_CORE : MPX_BIND_NONE;
    o->report_bindings = unpack_i32(&u);
    o->verbose = unpack_i32(&u);
    char *hname = unpack_strdup(&u);
    if (hname) /* the name mpiexec knows this node by (-hosts) */
        job->host = hname;
    if (!jobid || unpack_error(&u) || job->size < 1 || job->size > 65536 ||
        *nnodes < 1 || nodeid != job->nodeid || strlen(jobid) >= sizeof(job->jobid)) {
        free(jobid);
        return -EPROTO;
    }
    snprintf(job->jobid, sizeof(job->jobid), "%s", jobid);
    free(jobid);
    *rank_node = malloc(sizeof(int) * (size_t)job->size);
    if (!*rank_node)
        return -ENOMEM;
    for (int r = 0; r < job->size; r++) {
        (*rank_node)[r] = unpack_i32(&u);
        if ((*rank_node)[r] < 0 || (*rank_node)[r] >= *nnodes)
            return -EPROTO;
    }
    o->napps = unpack_i32(&u);
    if (unpack_error(&u) || o->napps < 1 || o->napps > job->size)
        return -EPROTO;
    o->apps = calloc((size_t)o->napps, sizeof(*o->apps));
    if (!o->apps)
        return -ENOMEM;
    for (int a = 0; a < o->napps; a++) {
        struct mpx_app *app = &o->apps[a];
        app->np = unpack_i32(&u);
        app->argc = unpack_i32(&u);
        if (unpack_error(&u) || app->np < 1 || app->argc < 1 || app->argc > (1 << 20))
            return -EPROTO;
        o->nranks += app->np;
        app->argv = calloc((size_t)app->argc + 1, sizeof(char *));
        if (!app->argv)
            return -ENOMEM;
        for (int i = 0; i < app->argc; i++)
            if (!(app->argv[i] = unpack_strdup(&u)))
                return -EPROTO;
        int nenv = unpack_i32(&u);
        if (unpack_error(&u) || nenv < 0 || nenv > (1 << 20))
            return -EPROTO;
        app->env.v = calloc((size_t)nenv + 1, sizeof(char *));
        if (!app->env.v)
            return -ENOMEM;
        for (int i = 0; i < nenv; i++) {
            if (!(app->env.v[i] = unpack_strdup(&u)) || !strchr(app->env.v[i], '='))
                return -EPROTO;
            app->env.n++;
        }
        char *wdir = unpack_strdup(&u);
        int soft = unpack_u8(&u);
        struct stat st;
        if (!wdir)
            return -EPROTO;
        /* mpiexec's own directory is only a default: a host that lacks it
         * runs the ranks where the proxy started, as hydra does */
        if (!*wdir || (soft && (stat(wdir, &st) < 0 || !S_ISDIR(st.st_mode))))
            free(wdir);
        else
            app->wdir = wdir;
    }
    if (unpack_error(&u) || o->nranks != job->size)
        return -EPROTO;
    /* the program is searched in the PATH the ranks will have */
    for (int i = 0; i < o->apps[0].env.n; i++)
        if (strncmp(o->apps[0].env.v[i], "PATH=", 5) == 0)
            setenv("PATH", o->apps[0].env.v[i] + 5, 1);
    return 0;
}

/* mpiexec --proxy NODE --connect A1,A2,...:PORT [--connect-timeout S]
 * The cookie is the first line of stdin. */
static int proxy_main(int argc, char **argv)
{
    struct job job;
    struct mpx_opts o;
    struct mpx_conn up;
    char host[256] = "?", ident[300], err[512], cookie[256];
    const char *spec = NULL;
    int timeout_s = 30, rc, nodeid = -1;

    memset(&job, 0, sizeof(job));
    gethostname(host, sizeof(host) - 1);
    snprintf(ident, sizeof(ident), "mpiexec (proxy on %s)", host);
    loom_log_init(&job.log, ident, LOOM_LOG_INFO);
    job.t0 = loop_now_ms();
    job.host = host;
    sane_stdio();
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--node") == 0)
            nodeid = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--connect") == 0)
            spec = argv[i + 1];
        else if (strcmp(argv[i], "--connect-timeout") == 0)
            timeout_s = atoi(argv[i + 1]);
    }
    if (nodeid < 0 || !spec || timeout_s < 1) {
        msg(&job, "usage: mpiexec --proxy --node N --connect ADDR[,ADDR...]:PORT "
                  "[--connect-timeout S] (started by mpiexec, cookie on stdin)");
        return EXIT_USAGE;
    }
    job.nodeid = nodeid;
    rc = read_cookie(cookie, sizeof(cookie), timeout_s * 1000);
    if (rc < 0) {
        msg(&job, "cannot read the job cookie from stdin: %s", strerror(-rc));
        return 1;
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        if (devnull != 0)
            close(devnull);
    }
    /* mutual proof of the cookie (front.c); the cookie never travels */
    rc = mpx_proxy_connect(spec, cookie, nodeid, host, timeout_s * 1000, &up, err,
                           sizeof(err));
    memset(cookie, 0, sizeof(cookie));
    if (rc < 0) {
        msg(&job, "%s", err);
        return 1;
    }
    uint8_t type = 0;
    const uint8_t *body = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = wait_frame(&up, timeout_s * 1000, &type, &body, &len);
    if (rc == 0 && type != MPX_F_JOB)
        rc = -EPROTO;
    int *rank_node = NULL, nnodes = 0;
    job.o = &o;
    if (rc == 0)
        rc = decode_job(&job, &o, body, len, &rank_node, &nnodes);
    if (rc < 0) {
        msg(&job, "no job from mpiexec: %s", strerror(-rc));
        return 1;
    }
    job.up = &up;
    loom_log_set_sink(&job.log, up_sink, &job);
    if (job.pmi_level > PSRV_LOG_TRACE)
        job.pmi_level = PSRV_LOG_TRACE;
    raise_nofile();

    struct mpx_bind *binder = NULL;
    if (o.bind == MPX_BIND_CORE) {
        binder = mpx_bind_open(err, sizeof(err));
        if (!binder)
            msg(&job, "warning: -bind-to core on host %s: %s", host, err);
    }
    rc = run_ranks(&job, rank_node, nnodes, nodeid, binder);
    mpx_bind_close(binder);
    free(rank_node);
    mpx_conn_free(&up, 1);
    return rc;
}

int main(int argc, char **argv)
{
    struct mpx_opts o;
    struct job job;
    char err[512];
    int rc;

    if (argc > 1 && strcmp(argv[1], "--proxy") == 0)
        return proxy_main(argc, argv);

    memset(&job, 0, sizeof(job));
    loom_log_init(&job.log, "mpiexec", LOOM_LOG_INFO);
    job.t0 = loop_now_ms();

    /* a job spawned by another mpiexec's ranks (spawn.h) */
    rc = mpx_spawned_from_env(&job.spawned, err, sizeof(err));
    if (rc < 0) {
        msg(&job, "%s", err);
        mpx_spawned_report(&job.spawned, 1, err);
        mpx_spawned_free(&job.spawned);
        return EXIT_USAGE;
    }

    rc = mpx_args_parse(argc, argv, &o, err, sizeof(err));
    if (rc < 0) {
        msg(&job, "%s", rc == -ENOMEM ? "out of memory" : err);
        mpx_spawned_report(&job.spawned, 1, rc == -ENOMEM ? "out of memory" : err);
        mpx_spawned_free(&job.spawned);
        mpx_args_free(&o);
        return EXIT_USAGE;
    }
    if (o.help) {
        fputs(mpx_args_usage(), stdout);
        mpx_args_free(&o);
        return 0;
    }
    if (o.version) {
        printf("mpiexec (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        mpx_args_free(&o);
        return 0;
    }
    if (o.timeout_s == 0)
        o.timeout_s = env_int("MPIEXEC_TIMEOUT", 0);
    {
        char sbuf[4096];
        const char *srun = find_srun(sbuf, sizeof(sbuf));
        rc = mpx_slurm_decide(&o, env_get, NULL, srun != NULL, err, sizeof(err));
        if (rc < 0) {
            msg(&job, "%s", err);
            mpx_args_free(&o);
            return EXIT_LAUNCH;
        }
        if (rc == 1) {
            rc = run_srun(&o, srun);
            mpx_args_free(&o);
            return rc;
        }
    }

    job.pmi_level = PSRV_LOG_WARN;
    const char *lvl = getenv("LOOM_PMI_LOGLEVEL");
    if (lvl && *lvl) {
        int l = loom_log_level_parse(lvl);
        if (l < 0) {
            msg(&job,
                "LOOM_PMI_LOGLEVEL='%s' is not one of error, warn, info, debug, "
                "trace",
                lvl);
            mpx_args_free(&o);
            return EXIT_USAGE;
        }
        job.pmi_level = l;
    }
    const char *trace = getenv("LOOM_PMI_TRACE");
    if (trace && *trace && strcmp(trace, "0") != 0)
        job.pmi_level = PSRV_LOG_TRACE;

    if (o.hosts || o.hostfile) {
        /* several hosts: mpiexec starts one proxy per host (front.c), unless
         * the list boils down to this machine alone */
        rc = mpx_front_main(&o, job.pmi_level, &job.log);
        if (rc != MPX_FRONT_LOCAL) {
            mpx_args_free(&o);
            return rc;
        }
    }
    job.o = &o;
    job.size = o.nranks;

    struct mpx_bind *binder = NULL;
    if (o.bind == MPX_BIND_CORE) {
        binder = mpx_bind_open(err, sizeof(err));
        if (!binder) {
            msg(&job, "-bind-to core: %s", err);
            mpx_args_free(&o);
            return EXIT_USAGE;
        }
    }

    sane_stdio();
    raise_nofile();
    if (job.spawned.on)
        snprintf(job.jobid, sizeof(job.jobid), "%s", job.spawned.jobid);
    else
        snprintf(job.jobid, sizeof(job.jobid), "%u.0", (unsigned)getpid());

    rc = run_ranks(&job, NULL, 1, 0, binder);
    if (job.spawned.on) /* still owed: it ended before every exec was known */
        mpx_spawned_report(&job.spawned, 1, "the spawned job ended while starting");
    mpx_spawned_free(&job.spawned);
    mpx_bind_close(binder);
    mpx_args_free(&o);
    return rc;
}
