/* agentpmix.c - the stepd agent's PMIx server (LoomPMIx=yes, a build --with-pmix):
 * the step's share of the job described for pmixsrv_start (pmixsrv/pmixjob.c,
 * which both hosts share) with what only Slurm knows: the node names, the
 * SlurmdSpoolDir base, SlurmUser, the step's CPUs and user.
 *
 * Contract (agent.h):
 *   agent_pmix_start() in loom_agent_start, before the tasks fork: the server
 *   starts in a directory of its own under SlurmdSpoolDir (never /tmp:
 *   loom-pmix.<job>.<node>.<random>); its eventfd is one more watch of the
 *   agent's loop, dispatched inside the node server's core guard.  The psrv
 *   ops forwarded to it (coll_done, dmdx_*, ns_done) and the task hooks
 *   (client_gone; a PMIx client connecting counts as "every task forked",
 *   like a first PMI byte) are here.  PMIx abort, fence timeout and dead
 *   ranks end the step through the core's abort, as PMI-1/2 does.
 *   Without LOOM_WITH_PMIX: start returns 0, the rest do nothing.
 */

#include "slurm_glue.h"

#include <errno.h>
#include <unistd.h>

#include "agent.h"
#ifdef LOOM_WITH_PMIX
#include "pmixsrv.h"
#endif

#ifdef LOOM_WITH_PMIX
void agent_pmix_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                          const char *msg)
{
    pmixsrv_coll_done(((struct agent *)arg)->px, id, rc, data, len, msg);
}

void agent_pmix_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                             size_t len)
{
    pmixsrv_dmdx_request(((struct agent *)arg)->px, handle, rank, info, len);
}

void agent_pmix_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                          const char *msg)
{
    pmixsrv_dmdx_done(((struct agent *)arg)->px, id, rc, data, len, msg);
}

void agent_pmix_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    pmixsrv_ns_done(((struct agent *)arg)->px, id, rc, value);
}

/* nodesrv hook: the core heard a task is gone; so does libpmix. */
void agent_pmix_client_gone(void *arg, int client)
{
    struct agent *a = arg;

    if (a->px && !agent_step_ending(a))
        pmixsrv_client_gone(a->px, client);
}

static void px_connected(void *arg, int client)
{
    (void)client;
    agent_close_task_ends(arg); /* a task runs: Slurm has forked them all */
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

int agent_pmix_start(struct agent *a, const struct psrv_config *core)
{
    struct loom_step *st = a->st;
    static const struct pmixsrv_ops ops = {
        .log = agent_log,
        .client_connected = px_connected,
    };
    char base[900];

    if (spool_dir(st, base, sizeof(base)) < 0) {
        loom_plog(
            LOOM_PLOG_LOUD | LOOM_PLOG_MUST,
            "%s: step %s: no PMIx server: SlurmdSpoolDir is unset or longer than %zu "
            "bytes (set LoomPMIx=no in mpi.conf to run without PMIx)",
            loom_plugin_tag, st->jobid, sizeof(base) - 1);
        return -EINVAL;
    }
    struct pmixsrv_job job = {
        .core = core, /* the core's own configuration: one description of the step */
        .node_names = (const char *const *)st->node_names,
        .tmp_base = base,
        .node_cpus = st->node_cpus,
        .uid = st->uid,
        .gid = st->gid,
        .base_owner = (uid_t)slurm_conf.slurm_user_id, /* owns SlurmdSpoolDir on Debian */
    };
    if (!(a->px = pmixsrv_start(&job, a->srv, &ops, a))) {
        int rc = -errno;
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s: cannot start the PMIx server: %s",
                  loom_plugin_tag, st->jobid, strerror(-rc));
        return rc;
    }
    a->pxw = loop_watch_add(a->lp, pmixsrv_fd(a->px), LOOP_READ, on_pmix, a);
    return a->pxw ? 0 : -ENOMEM;
}

void agent_pmix_free(struct agent *a)
{
    if (a->pxw)
        loop_watch_remove(a->lp, a->pxw);
    a->pxw = NULL;
    pmixsrv_destroy(a->px); /* before the psrv it drives */
    a->px = NULL;
}

char *const *loom_agent_pmix_env(int ltaskid)
{
    struct agent *a = agent_current();
    return a && a->px ? pmixsrv_task_env(a->px, ltaskid) : NULL;
}

char *const *loom_agent_pmix_env_defaults(void)
{
    struct agent *a = agent_current();
    return a && a->px ? pmixsrv_task_env_defaults(a->px) : NULL;
}

#else /* !LOOM_WITH_PMIX */

int agent_pmix_start(struct agent *a, const struct psrv_config *core)
{
    (void)a;
    (void)core;
    return 0;
}

void agent_pmix_free(struct agent *a)
{
    (void)a;
}

char *const *loom_agent_pmix_env(int ltaskid)
{
    (void)ltaskid;
    return NULL;
}

char *const *loom_agent_pmix_env_defaults(void)
{
    return NULL;
}

#endif
