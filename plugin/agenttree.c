/* agenttree.c - the stepd agent's tree links (multi-node steps): the listener,
 * the rendezvous with srun (rdv_exchange over SrunPortRange), treenet's links
 * and what crosses them: tree_send -> treenet_send, what arrives ->
 * nodesrv_tree_input, a lost link -> nodesrv_tree_gone.
 *
 * Contract (agent.h):
 *   agent_tree_join() first thing on the agent's thread when the step spans
 *   several nodes; every wait in it is bounded by LoomConnectTimeout.  A node
 *   that cannot join says why through srun's rendezvous (rdv_fail: srun tells
 *   the others at once instead of leaving them to their timeout), the step is
 *   killed, and the core hears its links are gone so its fences fail at once.
 *   A build with LOOM_PLUGIN_NO_TREENET (single-node steps) has none of it:
 *   tree_send is -ENOTSUP, join and free do nothing.
 */

#include "slurm_glue.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "ktree.h"
#include "log.h"
#ifndef LOOM_PLUGIN_NO_TREENET
#include "treenet.h"
#endif

#define RDV_FAIL_TIMEOUT_MS 5000 /* telling srun this node cannot join the tree */

#ifndef LOOM_PLUGIN_NO_TREENET
int agent_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct agent *a = arg;
    if (!a->tn)
        return -ENOTCONN;
    return treenet_send(a->tn, to, buf, len);
}

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
            agent_job_log(a, level, msg);
        return;
    }

    /* Refused connections (WARN) are worth srun's stderr; lost links are
     * reported by tn_lost. */
    if (level <= LOOM_LOG_WARN && !strstr(msg, " lost: ") && !agent_step_ending(a))
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s node %d: %s", loom_plugin_tag,
                  a->st->jobid, a->st->nodeid, msg);
    else
        agent_log(arg,
                  level <= LOOM_LOG_WARN ? PSRV_LOG_WARN : (enum psrv_log_level)level,
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
                     "SrunPortRange=%u-%u is in use",
                     st->nodeid, ports[0], ports[1]);
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
        agent_kill_step(a, -1, why);
        return -1;
    }
    rc = rdv_exchange_uid(st->rdv_server, st->jobid, st->uid, st->nnodes, st->nodeid,
                          (int)st->conf.tree_width, treenet_port(a->tn),
                          TREENET_AUTH_MUNGE, (int)st->conf.connect_timeout_s * 1000,
                          &addrs, my_ip);
    if (rc == -ECANCELED) {
        /* another node could not join: srun printed its line; end quietly */
        loom_plog(LOOM_PLOG_QUIET | LOOM_PLOG_MUST, "%s: step %s node %d: %s",
                  loom_plugin_tag, st->jobid, st->nodeid, rdv_strerror(rc));
        agent_kill_quietly(a);
        return -1;
    }
    if (rc < 0) {
        snprintf(why, sizeof(why), "node %d: rendezvous with srun at %s failed: %s",
                 st->nodeid, st->rdv_server, rdv_strerror(rc));
        agent_kill_step(a, -1, why);
        return -1;
    }
    rc = treenet_start(a->tn, addrs);
    rdv_addrs_free(addrs, st->nnodes);
    if (rc < 0) {
        snprintf(why, sizeof(why), "node %d: cannot start tree links: %s", st->nodeid,
                 strerror(-rc));
        agent_kill_step(a, -1, why);
        return -1;
    }
    if (st->log_admin >= PSRV_LOG_DEBUG)
        loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: tree up (%s, width %u)",
                  loom_plugin_tag, st->jobid, st->nodeid, my_ip, st->conf.tree_width);
    return 0;
}

void agent_tree_join(struct agent *a)
{
    struct loom_step *st = a->st;

    if (st->nnodes <= 1 || join_tree(a) == 0)
        return;
    /* The step is being killed; keep serving (fences fail at once since
     * psrv is told the parent/children are gone) until fini(). */
    int kids[1024], nk;
    int w = (int)st->conf.tree_width;
    int p = ktree_parent(w, st->nnodes, st->nodeid);
    if (p >= 0)
        nodesrv_tree_gone(a->ns, p);
    nk = w <= 1024 ? ktree_children(w, st->nnodes, st->nodeid, kids) : 0;
    for (int i = 0; i < nk; i++)
        nodesrv_tree_gone(a->ns, kids[i]);
}

size_t agent_tree_queued(const struct agent *a)
{
    return a->tn ? treenet_queued(a->tn) : 0;
}

void agent_tree_free(struct agent *a)
{
    if (a->tn)
        treenet_destroy(a->tn);
    a->tn = NULL;
}

#else /* LOOM_PLUGIN_NO_TREENET */

int agent_tree_send(void *arg, int to, const void *buf, size_t len)
{
    (void)arg;
    (void)to;
    (void)buf;
    (void)len;
    return -ENOTSUP;
}

void agent_tree_join(struct agent *a)
{
    (void)a;
}

size_t agent_tree_queued(const struct agent *a)
{
    (void)a;
    return 0;
}

void agent_tree_free(struct agent *a)
{
    (void)a;
}

#endif
