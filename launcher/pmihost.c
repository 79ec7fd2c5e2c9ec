/* pmihost.c - what mpiexec gives the node server (nodesrv.h) that serves
 * its ranks' PMI sockets: the hang-up rule (a rank's exit is judged before
 * the core hears of its hang-up), tree messages (over treenet to the
 * adjacent proxies in proxy mode), abort, log, spawn (spawn.h) and the PMIx
 * server (lpmix.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lpmix.h"
#include "node.h"
#include "pack.h"
#include "spawnwire.h"
#include "treenet.h"

/* The core hears of a rank's PMI hang-up now, if it has not yet. */
void tell_gone(struct rank *r)
{
    if (r->gone_timer) {
        loop_timer_cancel(r->job->lp, r->gone_timer);
        r->gone_timer = NULL;
    }
    nodesrv_client_gone(r->job->ns, r->idx);
}

static void gone_timer_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct rank *r = arg;

    r->gone_timer = NULL;
    tell_gone(r);
}

/* nodesrv: the rank's PMI socket reached EOF or broke (closed now).  A rank
 * that exits without PMI finalize makes the core abort the job; if the rank
 * exited with an error, that exit is the first failure, so it is judged
 * before psrv hears of the hang-up (the hang-up usually wins the race to us).
 * 0: tell the core now; 1: tell_gone() does, later. */
static int on_hangup(void *arg, int client, enum nodesrv_hangup how)
{
    struct job *job = arg;
    struct rank *r = &job->ranks[client];
    int st;

    (void)how;
    if (r->judging)
        return 1; /* rank_exited() tells psrv after judging */
    if (!r->exited && r->pid > 0) {
        if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
            rank_exited(job, r, st);
            job_check_done(job);
            return 1;
        }
        r->gone_timer = loop_timer_add(job->lp, GONE_DELAY_MS, gone_timer_cb, r);
        if (r->gone_timer)
            return 1;
    }
    return 0;
}

/* nodesrv: the core heard the rank is gone; so does the PMIx server. */
static void on_gone(void *arg, int client)
{
    (void)arg;
    lpmix_client_gone(client);
}

/* nodesrv: before every poll(), the output gathered in this iteration. */
static int on_prepare(void *arg)
{
    struct job *job = arg;

    mpx_console_flush(&job->con);
    return -1;
}

/* nodesrv_ops->tree_send(): a proxy's tree messages go straight to the adjacent
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

/* psrv_ops->spawn(): a nested mpiexec runs the new job (spawn.h).  A proxy
 * hands the request to mpiexec, which knows the job's hosts and how to reach
 * them (front.c); its MPX_F_SPAWN_DONE answers the task (proxy.c). */
static int op_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                    size_t errlen)
{
    struct job *job = arg;

    if (job->end.ending || job->fail_sent) {
        snprintf(err, errlen, "spawn: the job is ending");
        return -ECANCELED;
    }
    if (job->up) {
        /* the same frame as a stepd's to srun (spawnwire.h); its in-flight cap and
         * start timeout are srun's, the front end reads neither (0: no cap, and
         * the largest timeout the frame allows) */
        char *body = NULL;
        size_t blen = 0;
        int rc = lspawn_encode(req, 0, 86400, &body, &blen);
        if (rc < 0 || job->up_lost) {
            free(body);
            snprintf(err, errlen, "spawn: %s",
                     job->up_lost      ? "the connection to mpiexec is lost"
                     : rc == -EMSGSIZE ? "the request is too large to hand to mpiexec"
                                       : "out of memory");
            return rc < 0 ? rc : -ENOTCONN;
        }
        struct pack pk;
        pack_init(&pk);
        pack_u64(&pk, id);
        pack_bytes(&pk, body, blen);
        free(body);
        up_send(job, MPX_P_SPAWN, &pk);
        return 0;
    }
    if (!job->spawner) {
        snprintf(err, errlen,
                 "spawn: mpiexec could not set up spawning (out of memory "
                 "or /proc/self/exe unreadable)");
        return -ENOTSUP;
    }
    return mpx_spawn_start(job->spawner, 0, id, req, err, errlen);
}

/* Create this node's server.  The one place where a node's server starts,
 * for the standalone launcher and for each proxy of a multi-host job alike
 * (the PMIx server is started next to it, lpmix_start). */
struct nodesrv *node_server_start(struct job *job, const struct psrv_config *cfg)
{
    static const struct nodesrv_ops ops = {
        .tree_send = op_tree_send,
        .abort = op_abort,
        .log = node_pmi_log,
        .coll_done = lpmix_coll_done,
        .dmdx_request = lpmix_dmdx_request,
        .dmdx_done = lpmix_dmdx_done,
        .ns_done = lpmix_ns_done,
        .spawn = op_spawn,
        .client_hangup = on_hangup,
        .client_gone = on_gone,
        .prepare = on_prepare,
    };

    return nodesrv_create(job->lp, cfg, &ops, job);
}
