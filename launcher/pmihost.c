/* pmihost.c - the node's PMI host: the server core (pmiserv.h) over one
 * socket per rank, with flow control of replies (flow.h), the hang-up rule
 * (a rank's exit is judged before the core hears of its hang-up) and the
 * psrv_ops mpiexec gives the core: send to a client, tree messages (over
 * treenet to the adjacent proxies in proxy mode), abort, log and spawn
 * (spawn.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "lpmix.h"
#include "node.h"
#include "treenet.h"

void pmi_close(struct rank *r)
{
    if (r->pmi_fd < 0)
        return;
    loop_watch_remove(r->job->lp, r->pmi_w);
    r->pmi_w = NULL;
    close(r->pmi_fd);
    r->pmi_fd = -1;
    flow_free(&r->pmi_flow);
}

void tell_gone(struct rank *r)
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
            job_check_done(job);
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
void pmi_read(struct rank *r, bool drain)
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

void pmi_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
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

/* psrv_ops->tree_send(): a proxy's tree messages go straight to the adjacent
 * proxy over treenet (proxy.c joined the tree); the standalone launcher is
 * one node, no tree. */
static int op_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct job *job = arg;

    if (!job->tn)
        return -ENOTCONN;
    return treenet_send(job->tn, to, buf, len);
}

/* psrv_ops->abort(): the core's message already names the culprit. */
static void op_abort(void *arg, int rank, int exitcode, const char *text)
{
    struct job *job = arg;
    int code = exitcode & 0xff;

    if (code == 0)
        code = 1;
    /* Once the job is being ended, a failed fence of the ranks being
     * killed is a consequence, not news. */
    if (job->end.ending && !job->o->verbose)
        return;
    if (job->up) {
        job_fail(job, code, "job aborted: %s", text && *text ? text : "(no message)");
        return;
    }
    job_msg(job, "job aborted: %s", text && *text ? text : "(no message)");
    if (!job->end.exit_code)
        job->end.exit_code = code;
    job_kill(job);
}

/* psrv_ops->log() */
void node_pmi_log(void *arg, enum psrv_log_level level, const char *text)
{
    struct job *job = arg;
    uint64_t t = loop_now_ms() - job->t0;

    if ((int)level > job->pmi_level)
        return;
    if (job->pmi_level < PSRV_LOG_INFO) {
        /* Quiet defaults: op_abort() prints the abort itself, and once the
         * job is being killed, complaints about ranks vanishing are noise. */
        if (job->end.ending || job->fail_sent || strncmp(text, "abort: ", 7) == 0)
            return;
        loom_logf(&job->log, LOOM_LOG_ERROR, "pmi: %s", text);
        return;
    }
    loom_logf(&job->log, LOOM_LOG_ERROR, "%llu.%03llu pmi %s: %s",
              (unsigned long long)(t / 1000), (unsigned long long)(t % 1000),
              loom_log_level_name((enum loom_log_level)level), text);
}

/* psrv_ops->spawn(): a nested mpiexec runs the new job (spawn.h). */
static int op_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                    size_t errlen)
{
    struct job *job = arg;

    if (job->up) {
        snprintf(err, errlen,
                 "spawn is not supported in a multi-host mpiexec job yet "
                 "(-hosts/-f); run on one host");
        return -ENOTSUP;
    }
    if (job->end.ending) {
        snprintf(err, errlen, "spawn: the job is ending");
        return -ECANCELED;
    }
    if (!job->spawner) {
        snprintf(err, errlen,
                 "spawn: mpiexec could not set up spawning (out of memory "
                 "or /proc/self/exe unreadable)");
        return -ENOTSUP;
    }
    return mpx_spawn_start(job->spawner, id, req, err, errlen);
}

/* Create this node's PMI server core.  The one place where a node's server
 * starts, for the standalone launcher and for each proxy of a multi-host
 * job alike (a PMIx server would be started next to it here). */
struct psrv *node_server_start(struct job *job, const struct psrv_config *cfg)
{
    static const struct psrv_ops ops = {
        .client_send = op_client_send,
        .tree_send = op_tree_send,
        .abort = op_abort,
        .log = node_pmi_log,
        .now_ms = NULL,
        .coll_done = lpmix_coll_done,
        .dmdx_request = lpmix_dmdx_request,
        .dmdx_done = lpmix_dmdx_done,
        .ns_done = lpmix_ns_done,
        .spawn = op_spawn,
    };

    return psrv_create(cfg, &ops, job);
}
