/* setup.c - turn Slurm's step record into the server core's configuration,
 * create the task sockets and the tasks' PMI environment.
 *
 * Contract:
 *   loom_setup_stepd() (slurmstepd, root, before the tasks fork) fills a
 *   struct loom_step: jobid "<job>.<step>" (het steps: the het leader's job
 *   id, as Slurm's pmi2), size, nnodes, this stepd's nodeid, the global rank
 *   of each local task (job->task[i]->gtid), the node of EVERY rank from the
 *   launch message's per-node task id lists (msg->global_task_ids, or the
 *   het_job_tids of a het step) - exact for block, cyclic, plane and
 *   arbitrary layouts - and for het steps the component index as appnum.
 *   It makes one socketpair per local task (SOCK_CLOEXEC on both ends) and
 *   sets PMI_SIZE, PMI_JOBID and MPI_LOCALNRANKS in the job env.
 *   loom_setup_stepd_early() (slurmstepd's init(), still single-threaded)
 *   grows the stepd's descriptor table while that is cheap.
 *   loom_setup_task() (the forked task, as the user) sets PMI_FD, PMI_RANK
 *   and MPI_LOCALRANKID, clears FD_CLOEXEC on its own end and closes the rest.
 *   On a node with more of the step's tasks than CPUs it also sets the task's
 *   timer slack (LoomTimerSlack, LOOM_TIMER_SLACK; cpus.h says why).
 *
 * Notes:
 *   - Env arrays belong to Slurm (xmalloc): changed only through
 *     env_array_overwrite_fmt / unsetenvp.
 *   - Job env overrides (LOOM_PMI_TRACE, LOOM_PMI_DEBUG, LOOM_FENCE_TIMEOUT,
 *     LOOM_TREE_WIDTH, LOOM_PMIX, LOOM_AGENT_NICE, LOOM_TIMER_SLACK) are
 *     applied on top of mpi.conf.  The tree width must be the same on every
 *     node; the job env is, so is mpi.conf normally.
 *   - Log levels: mpi.conf's (LoomDebug, LoomTrace) is log_admin, what goes to
 *     slurmd's log; a job cannot lower it.  LOOM_PMI_DEBUG/LOOM_PMI_TRACE may
 *     raise the core's level (log_job); the extra lines go to the job's own
 *     stderr (agent.c), never to the root daemon's log.
 *   - Values from the job's env are the user's text: logged through
 *     loom_plog, which escapes them.  Not in loom_setup_task (the forked
 *     task: loom_plog's lock may have been held by another thread at fork),
 *     whose lines carry no user text.
 *   - A step on several nodes needs the rendezvous address that srun's
 *     client_prelaunch put into the env; without it setup fails (a step
 *     whose srun did not load this plugin).
 */

#include "slurm_glue.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cpus.h"
#include "fdio.h"
#include "layout.h"
#include "log.h"
#include "loom_plugin.h"
#include "spawnlink.h"

/* Descriptors slurmstepd holds per local task while it starts them. */
#define LOOM_STEPD_FDS_PER_TASK 9
/* The descriptor table slurmstepd gets in init(): room for 448 local tasks. */
#define LOOM_STEPD_EARLY_FDS 4096

void loom_setup_stepd_early(void)
{
    /* Growing a process's descriptor table waits for an RCU grace period
     * (synchronize_rcu in the kernel's expand_fdtable) when the table is
     * shared, i.e. once the process has a second thread: 8-15 ms per stepd
     * in prefork on 4 nodes sharing 2 CPUs, on the path of every launch.
     * slurmstepd loads this plugin (and calls init) before it starts any
     * thread, where growing costs 0.02 ms; prefork's fdio_reserve then finds
     * the room already there for up to LOOM_STEPD_EARLY_FDS / 9 tasks. */
    (void)fdio_reserve(LOOM_STEPD_EARLY_FDS);
}

static int env_int(char **env, const char *name, int min, int max, int *out)
{
    const char *v = getenvp(env, name);
    long n = loom_env_uint(v, min, max);

    if (n == -ENOENT)
        return 0;
    if (n < 0) {
        loom_plog(LOOM_PLOG_LOUD, "%s: ignoring %s=%s (want %d..%d)", loom_plugin_tag,
                  name, v, min, max);
        return 0;
    }
    *out = (int)n;
    return 1;
}

static void apply_env_overrides(struct loom_conf *c, char **env)
{
    const char *v;
    int n;

    v = getenvp(env, LOOM_ENV_TRACE);
    n = loom_env_flag(v);
    if (n < 0)
        loom_plog(LOOM_PLOG_LOUD, "%s: ignoring %s=%s (want 1 or 0)", loom_plugin_tag,
                  LOOM_ENV_TRACE, v);
    else if (n > 0)
        c->trace = 1;
    v = getenvp(env, LOOM_ENV_DEBUG);
    if (v && *v) {
        n = loom_log_level_parse(v);
        if (n >= 0)
            c->debug = n;
        else
            loom_plog(LOOM_PLOG_LOUD, "%s: ignoring %s=%s", loom_plugin_tag,
                      LOOM_ENV_DEBUG, v);
    }
    if (env_int(env, LOOM_ENV_FENCE_TIMEOUT, 0, 86400 * 7, &n))
        c->fence_timeout_s = (uint32_t)n;
    if (env_int(env, LOOM_ENV_TREE_WIDTH, 1, 1024, &n))
        c->tree_width = (uint32_t)n;
    v = getenvp(env, LOOM_ENV_PMIX);
    n = loom_env_flag(v);
    if (n < 0)
        loom_plog(LOOM_PLOG_LOUD, "%s: ignoring %s=%s (want 1 or 0)", loom_plugin_tag,
                  LOOM_ENV_PMIX, v);
    else if (v && *v)
        c->pmix = n && LOOM_DEFAULT_PMIX;
    /* a job may make its agent nicer than mpi.conf says, never less nice */
    if (env_int(env, LOOM_ENV_AGENT_NICE, c->agent_nice > 0 ? c->agent_nice : 0, 19, &n))
        c->agent_nice = n;
    if (env_int(env, LOOM_ENV_TIMER_SLACK, 0, CPUS_MAX_TIMER_SLACK_US, &n))
        c->timer_slack_us = (uint32_t)n;
    /* a job may lower its spawn limits, never raise them */
    if (env_int(env, LOOM_ENV_SPAWN_MAX_PROCS, 1, PSRV_SPAWN_MAX_PROCS, &n) &&
        (c->spawn_max_procs == 0 || (uint32_t)n < c->spawn_max_procs))
        c->spawn_max_procs = (uint32_t)n;
    if (env_int(env, LOOM_ENV_SPAWN_TIMEOUT, 1, 86400, &n) &&
        (uint32_t)n < c->spawn_timeout_s)
        c->spawn_timeout_s = (uint32_t)n;
    /* the KVS mode: the job's environment over mpi.conf */
    v = getenvp(env, LOOM_ENV_KVS_MODE);
    if (v && *v) {
        enum psrv_kvs_mode m;
        if (psrv_kvs_mode_parse(v, &m) == 0)
            c->kvs_mode = (int)m;
        else
            loom_plog(LOOM_PLOG_LOUD,
                      "%s: error: %s=%s is not auto, full or ondemand: using %s",
                      loom_plugin_tag, LOOM_ENV_KVS_MODE, v,
                      psrv_kvs_mode_name(c->kvs_mode));
    }
    v = getenvp(env, LOOM_ENV_KVS_AUTO_BYTES);
    if (v && *v) {
        char *end;
        errno = 0;
        unsigned long long b = strtoull(v, &end, 10);
        if (errno || *end || *v == '-' || b > (1ULL << 62))
            loom_plog(LOOM_PLOG_LOUD,
                      "%s: error: %s=%s is not a number of bytes: using %lld",
                      loom_plugin_tag, LOOM_ENV_KVS_AUTO_BYTES, v,
                      (long long)c->kvs_auto_bytes);
        else
            c->kvs_auto_bytes = (int64_t)b;
    }
}

/* Spawn: where srun's spawn server listens (every step), and for a step that a
 * spawn started, the spawner's id and the preput pairs (spawnlink.h).  The job's
 * env is the user's: every count and string is bounded as a PMI request is. */
static void spawn_env(struct loom_step *st, char **env)
{
    const char *port = getenvp(env, LSPAWN_ENV_PORT);
    const char *host = getenvp(env, "SLURM_SRUN_COMM_HOST");
    const char *sp = getenvp(env, LSPAWN_ENV_SPAWNER);
    int n = 0;

    if (!host || !*host)
        host = getenvp(env, LOOM_ENV_RDV_HOST);
    if (port && *port && loom_env_uint(port, 1, 65535) > 0 && host && *host &&
        strlen(host) < 256)
        st->spawn_server = strchr(host, ':') && host[0] != '['
                               ? xstrdup_printf("[%s]:%s", host, port)
                               : xstrdup_printf("%s:%s", host, port);
    if (!sp || !*sp)
        return;
    if (strlen(sp) > 200) {
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s: ignoring %s (longer than 200 bytes)",
                  loom_plugin_tag, st->jobid, LSPAWN_ENV_SPAWNER);
        return;
    }
    if (!env_int(env, LSPAWN_ENV_NPREPUT, 0, PSRV_SPAWN_MAX_PREPUT, &n))
        n = 0;
    st->preput = xcalloc(n + 1, sizeof(*st->preput));
    for (int i = 0; i < n; i++) {
        char k[64], v[64];
        snprintf(k, sizeof(k), "%s%d", LSPAWN_ENV_PPKEY, i);
        snprintf(v, sizeof(v), "%s%d", LSPAWN_ENV_PPVAL, i);
        const char *kk = getenvp(env, k), *vv = getenvp(env, v);
        if (!kk || !vv || !*kk || strlen(kk) > PSRV_SPAWN_MAX_STR ||
            strlen(vv) > PSRV_SPAWN_MAX_STR) {
            loom_plog(LOOM_PLOG_LOUD, "%s: step %s: preput pair %d missing or too long; "
                      "%d of %d kept", loom_plugin_tag, st->jobid, i, i, n);
            break;
        }
        st->preput[i].key = strdup(kk);
        st->preput[i].val = strdup(vv);
        if (!st->preput[i].key || !st->preput[i].val) {
            free((char *)st->preput[i].key);
            free((char *)st->preput[i].val);
            st->preput[i].key = st->preput[i].val = NULL;
            break;
        }
        st->npreput = i + 1;
    }
    st->spawner_jobid = xstrdup(sp);

    /* several commands (srun --multi-prog): "n0,n1,..." processes per command, in
     * rank order; appnum is the command's index.  Must add up to the step's size. */
    const char *ap = getenvp(env, LSPAWN_ENV_APPNUM);
    if (!ap || !*ap || st->rank_appnum)
        return;
    int *an = xcalloc(st->size, sizeof(int)), r = 0, cmd = 0;
    const char *q = ap;
    while (*q && r <= st->size && cmd < PSRV_SPAWN_MAX_CMDS) {
        char *end;
        long cnt = strtol(q, &end, 10);
        if (end == q || cnt < 1 || cnt > st->size - r || (*end && *end != ','))
            break;
        for (long j = 0; j < cnt; j++)
            an[r++] = cmd;
        cmd++;
        q = *end ? end + 1 : end;
    }
    if (*q || r != st->size) {
        loom_plog(LOOM_PLOG_LOUD, "%s: step %s: ignoring %s=%.64s (not %d ranks in all)",
                  loom_plugin_tag, st->jobid, LSPAWN_ENV_APPNUM, ap, st->size);
        xfree(an);
        return;
    }
    st->rank_appnum = an;
}

/* Host names of the step's nodes, in node index order (PMIx node map and
 * PMIX_HOSTNAME).  Falls back to "node<i>" when the list does not match. */
static void node_names(struct loom_step *st, const char *list)
{
    loom_hostlist_p hl = list ? hostlist_create(list) : NULL;
    int i, n = hl ? hostlist_count(hl) : 0;

    st->node_names = xcalloc(st->nnodes, sizeof(char *));
    for (i = 0; i < st->nnodes; i++) {
        char *h = (n == st->nnodes) ? hostlist_shift(hl) : NULL;
        st->node_names[i] = h ? xstrdup(h) : xstrdup_printf("node%d", i);
        free(h);
    }
    if (hl)
        hostlist_destroy(hl);
}

int loom_setup_stepd(struct loom_step *st, const void *jobv, char ***env)
{
    const stepd_step_rec_t *job = jobv;
    const launch_tasks_request_msg_t *msg = job->msg;
    int het = job->het_job_offset != NO_VAL;
    uint32_t task_off = 0;
    const uint16_t *cnts;
    uint32_t **tids;
    int i, rc;

    memset(st, 0, sizeof(*st));
    st->job_id = (job->het_job_id && job->het_job_id != NO_VAL) ? job->het_job_id
                                                                : job->step_id.job_id;
    st->step_id = job->step_id.step_id;
    snprintf(st->jobid, sizeof(st->jobid), "%u.%u", st->job_id, st->step_id);
    st->uid = job->uid;
    st->gid = job->gid;
    st->conf = loom_conf;
    st->log_admin = loom_conf.trace ? PSRV_LOG_TRACE : loom_conf.debug;
    apply_env_overrides(&st->conf, *env);
    st->log_job = st->conf.trace ? PSRV_LOG_TRACE : st->conf.debug;

    if (het) {
        st->size = (int)job->het_job_ntasks;
        st->nnodes = (int)job->het_job_nnodes;
        st->nodeid = (int)(job->nodeid + job->het_job_node_offset);
        task_off = job->het_job_task_offset;
        cnts = job->het_job_task_cnts;
        tids = job->het_job_tids;
    } else {
        st->size = (int)job->ntasks;
        st->nnodes = (int)job->nnodes;
        st->nodeid = (int)job->nodeid;
        cnts = job->task_cnts;
        tids = msg ? msg->global_task_ids : NULL;
    }
    st->local_count = (int)job->node_tasks;
    st->node_cpus = (int)job->cpus;
    st->oversubscribed = cpus_oversubscribed(st->local_count, st->node_cpus);
    if (st->size < 1 || st->nnodes < 1 || st->nodeid >= st->nnodes ||
        st->local_count < 1 || !cnts || !tids) {
        loom_plog(LOOM_PLOG_LOUD,
                  "%s: step %s: incomplete step layout (size %d, nodes %d, node %d, "
                  "local tasks %d)",
                  loom_plugin_tag, st->jobid, st->size, st->nnodes, st->nodeid,
                  st->local_count);
        return -EINVAL;
    }

    st->local_ranks = xcalloc(st->local_count, sizeof(int));
    st->rank_node = xcalloc(st->size, sizeof(int));
    st->task_fd = xcalloc(st->local_count, sizeof(int));
    st->stepd_fd = xcalloc(st->local_count, sizeof(int));
    for (i = 0; i < st->local_count; i++)
        st->task_fd[i] = st->stepd_fd[i] = -1;
    for (i = 0; i < st->local_count; i++)
        st->local_ranks[i] = (int)(job->task[i]->gtid + task_off);
    {
        char why[160];
        if ((rc = loom_layout_map(st->size, st->nnodes, cnts, tids, st->rank_node, why,
                                  sizeof(why)))) {
            loom_plog(LOOM_PLOG_LOUD, "%s: step %s: %s", loom_plugin_tag, st->jobid, why);
            return rc;
        }
    }
    for (i = 0; i < st->local_count; i++) {
        int r = st->local_ranks[i];
        if (r < 0 || r >= st->size || st->rank_node[r] != st->nodeid) {
            loom_plog(LOOM_PLOG_LOUD,
                      "%s: step %s: local task %d has rank %d, not placed on node %d",
                      loom_plugin_tag, st->jobid, i, r, st->nodeid);
            return -EINVAL;
        }
    }
    if (het && job->het_job_tid_offsets) {
        /* het_job_tid_offsets[rank] is the component a rank belongs to. */
        st->rank_appnum = xcalloc(st->size, sizeof(int));
        for (i = 0; i < st->size; i++)
            st->rank_appnum[i] = (int)job->het_job_tid_offsets[i];
    }

    /* PMIx's host names, and the node a failure message names */
    node_names(st, het   ? job->het_job_node_list
                   : msg ? msg->complete_nodelist
                         : NULL);

    if (st->nnodes > 1) {
        const char *port = getenvp(*env, LOOM_ENV_RDV_PORT);
        const char *host = getenvp(*env, "SLURM_SRUN_COMM_HOST");
        if (!host || !*host)
            host = getenvp(*env, LOOM_ENV_RDV_HOST);
        if (!port || !*port || !host || !*host) {
            loom_plog(LOOM_PLOG_LOUD,
                      "%s: step %s spans %d nodes but srun published no rendezvous "
                      "address (%s unset): was srun started with the same --mpi plugin?",
                      loom_plugin_tag, st->jobid, st->nnodes, LOOM_ENV_RDV_PORT);
            return -EINVAL;
        }
        if (strchr(host, ':') && host[0] != '[')
            st->rdv_server = xstrdup_printf("[%s]:%s", host, port);
        else
            st->rdv_server = xstrdup_printf("%s:%s", host, port);
    }
    spawn_env(st, *env);
    /* Not for the tasks' eyes. */
    unsetenvp(*env, LOOM_ENV_RDV_PORT);
    unsetenvp(*env, LOOM_ENV_RDV_HOST);
    unsetenvp(*env, LSPAWN_ENV_PORT);
    unsetenvp(*env, LSPAWN_ENV_SPAWNER);
    unsetenvp(*env, LSPAWN_ENV_NPREPUT);
    unsetenvp(*env, LSPAWN_ENV_APPNUM);
    for (i = 0; i < st->npreput; i++) {
        char k[64];
        snprintf(k, sizeof(k), "%s%d", LSPAWN_ENV_PPKEY, i);
        unsetenvp(*env, k);
        snprintf(k, sizeof(k), "%s%d", LSPAWN_ENV_PPVAL, i);
        unsetenvp(*env, k);
    }
    if (st->spawner_jobid) /* PMI-1 clients learn it here (doc/wire.md section 7) */
        env_array_overwrite(env, "PMI_SPAWNED", "1");

    /* One growth of the fd table for the whole launch: our two ends per
     * task, the six of Slurm's stdio pipes per task that slurmstepd opens
     * right after this hook, and a PMIx client connection.  Growing it step
     * by step cost slurmstepd (multi-threaded) an RCU grace period each time,
     * 25-45 ms for 64 tasks; see fdio_reserve.  Normally init() already made
     * the room (loom_setup_stepd_early) and this costs nothing. */
    (void)fdio_reserve(st->local_count * LOOM_STEPD_FDS_PER_TASK + 64);
    for (i = 0; i < st->local_count; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
            rc = -errno;
            loom_plog(LOOM_PLOG_LOUD, "%s: step %s: socketpair: %m", loom_plugin_tag,
                      st->jobid);
            return rc;
        }
        st->stepd_fd[i] = sv[0];
        st->task_fd[i] = sv[1];
        fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    }

    if (st->oversubscribed && st->conf.timer_slack_us)
        debug("%s: step %s: %d tasks, fewer CPUs: their timer slack is %u us",
              loom_plugin_tag, st->jobid, st->local_count, st->conf.timer_slack_us);
    env_array_overwrite_fmt(env, "PMI_SIZE", "%d", st->size);
    env_array_overwrite_fmt(env, "PMI_JOBID", "%s", st->jobid);
    env_array_overwrite_fmt(env, "MPI_LOCALNRANKS", "%d", st->local_count);
    return 0;
}

/* "NAME=value" into env: replacing NAME (overwrite) or only where it is unset. */
static void env_put(char ***env, const char *kv, int overwrite)
{
    const char *eq = strchr(kv, '=');

    if (!eq || eq == kv)
        return;
    char *name = xstrndup(kv, (int)(eq - kv));
    if (overwrite)
        env_array_overwrite(env, name, eq + 1);
    else
        env_array_append(env, name, eq + 1);
    xfree(name);
}

int loom_setup_task(struct loom_step *st, int ltaskid, uint32_t gtaskid, char ***env)
{
    int i, fd;

    if (ltaskid < 0 || ltaskid >= st->local_count) {
        error("%s: task %u: local id %d out of range", loom_plugin_tag, gtaskid, ltaskid);
        return -EINVAL;
    }
    fd = st->task_fd[ltaskid];
    for (i = 0; i < st->local_count; i++) {
        if (st->stepd_fd[i] >= 0)
            close(st->stepd_fd[i]);
        if (i != ltaskid && st->task_fd[i] >= 0)
            close(st->task_fd[i]);
    }
    if (fd < 0 || fcntl(fd, F_SETFD, 0) < 0) {
        error("%s: task %u: no PMI socket", loom_plugin_tag, gtaskid);
        return -EBADF;
    }
    if ((uint32_t)st->local_ranks[ltaskid] != gtaskid)
        debug("%s: task %u: PMI rank %d", loom_plugin_tag, gtaskid,
              st->local_ranks[ltaskid]);
    if (st->oversubscribed) {
        /* inherited across execve; see cpus.h for why */
        int rc = cpus_set_timer_slack(st->conf.timer_slack_us);
        if (rc < 0)
            error("%s: task %u: cannot set the timer slack to %u us: %s", loom_plugin_tag,
                  gtaskid, st->conf.timer_slack_us, strerror(-rc));
    }
    env_array_overwrite_fmt(env, "PMI_FD", "%d", fd);
    env_array_overwrite_fmt(env, "PMI_RANK", "%d", st->local_ranks[ltaskid]);
    env_array_overwrite_fmt(env, "MPI_LOCALRANKID", "%d", ltaskid);
    /* PMIx clients find the stepd's PMIx server through these (PMIx on). */
    for (char *const *e = loom_agent_pmix_env(ltaskid); e && *e; e++)
        env_put(env, *e, 1);
    for (char *const *e = loom_agent_pmix_env_defaults(); e && *e; e++)
        env_put(env, *e, 0); /* never replaces the user's */
    return 0;
}

void loom_step_free(struct loom_step *st)
{
    int i;

    if (!st)
        return;
    for (i = 0; st->stepd_fd && i < st->local_count; i++)
        if (st->stepd_fd[i] >= 0)
            close(st->stepd_fd[i]);
    for (i = 0; st->task_fd && i < st->local_count; i++)
        if (st->task_fd[i] >= 0)
            close(st->task_fd[i]);
    xfree(st->local_ranks);
    xfree(st->rank_node);
    xfree(st->rank_appnum);
    xfree(st->task_fd);
    xfree(st->stepd_fd);
    xfree(st->rdv_server);
    xfree(st->spawn_server);
    xfree(st->spawner_jobid);
    for (i = 0; st->preput && i < st->npreput; i++) {
        free((char *)st->preput[i].key);
        free((char *)st->preput[i].val);
    }
    xfree(st->preput);
    for (i = 0; st->node_names && i < st->nnodes; i++)
        xfree(st->node_names[i]);
    xfree(st->node_names);
    xfree(st);
}
