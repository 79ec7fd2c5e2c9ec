/* srun.c - the srun side of the plugin: a rendezvous server for steps that span
 * several nodes, so that the stepds find each other once, off the fence path.
 *
 * Contract:
 *   loom_srun_prelaunch() (mpi_p_client_prelaunch, in srun before the launch
 *   RPC): for a step on more than one node it starts treenet's rendezvous
 *   server (its own thread, munge-authenticated, for the job's uid, bounded
 *   by LOOM_CONNECT_TIMEOUT seconds from srun's env, default 60) and puts
 *   SLURM_LOOM_RDV_PORT=<port> and SLURM_LOOM_RDV_HOST=<srun's host name>
 *   into the env that reaches every stepd; the stepds connect to
 *   SLURM_SRUN_COMM_HOST (the address slurmd saw srun on) at that port.
 *   Returns a state pointer (never NULL on success, even for one node).
 *   loom_srun_fini() (mpi_p_client_fini, after the step) stops and joins the
 *   server and frees the state.
 *   loom_port_range() gives slurm.conf's SrunPortRange, in which the
 *   rendezvous server (here) and the stepds' tree links (agent.c) listen.
 *
 * Notes:
 *   - The rendezvous server is the job owner's process: the stepds trust
 *     nothing from it but addresses to try (doc/treenet.md, "What a node
 *     trusts from the rendezvous"); the credentials they send it can be
 *     decoded by the job's uid only and are bound to this server's nonce.
 *     Refused connections are logged on srun's stderr, rate-limited.
 *   - srun never calls fini(): everything is released in client_fini.
 *   - A heterogeneous step calls prelaunch once per component, each with the
 *     layout of the whole het step: they share one rendezvous server (below).
 */

#include "slurm_glue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loom_plugin.h"
#include "spawnlink.h"
#ifndef LOOM_PLUGIN_NO_TREENET
#include "treenet.h"
#endif

struct loom_srun {
    int nnodes;
    int het; /* shares het_rdv below */
#ifndef LOOM_PLUGIN_NO_TREENET
    struct rdv_server *rdv;
    struct lspawn_srv *spawn; /* the step's spawn server (spawnlink.h) */
#endif
    char jobid[64];
};

/* SrunPortRange: Slurm keeps it as slurm_conf.srun_port_range in every
 * release (22.05 to 26.05): NULL, or two ports {lo, hi}.  Both listeners of
 * the plugin (srun's rendezvous server, the stepds' tree links) bind inside
 * it, as Slurm's own pmi2 and pmix do (doc/plugin.md, "Ports").  srun reads
 * slurm.conf in every release; a 22.05 slurmstepd reads it too, 24.11 to 26.05
 * get it from slurmd, but 23.11's slurmd ships its stepds no srun_port_range
 * (src/slurmd/common/slurmstepd_init.c): NULL in a 23.11 stepd. */
void loom_port_range(unsigned short range[2])
{
    const uint16_t *r = slurm_conf.srun_port_range;

    range[0] = range[1] = 0;
    if (r && r[0] && r[1] && r[0] <= r[1]) {
        range[0] = r[0];
        range[1] = r[1];
    }
}

#ifndef LOOM_PLUGIN_NO_TREENET
/* A het step's components call prelaunch one after the other or in parallel
 * threads of the same srun, each with the layout of the whole het step (Slurm
 * rebuilds it so); the first component (task offset 0) starts the one
 * rendezvous server, the others wait for it and share it; the last
 * client_fini stops it.  Global because Slurm gives the calls nothing else in
 * common; one srun runs one (het) step. */
static pthread_mutex_t het_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t het_cond = PTHREAD_COND_INITIALIZER;
static struct {
    int state; /* 0 not yet, 1 ready, -1 failed */
    int refs;
    struct rdv_server *rdv;
    char jobid[64]; /* outlives every component's state */
} het_rdv;

/* The rendezvous thread's log lines: refused connections (WARN) on srun's
 * stderr, the rest only with srun -v. */
static void rdv_log(void *arg, int level, const char *msg)
{
    const char *jobid = arg;
    char line[LOOM_LOG_LINE_MAX];

    /* the rendezvous reports what peers sent (addresses, refusal reasons): escaped */
    loom_log_escape(line, sizeof line, msg);
    if (level <= LOOM_LOG_WARN)
        error("%s: step %s: %s", loom_plugin_tag, jobid, line);
    else
        verbose("%s: step %s: %s", loom_plugin_tag, jobid, line);
}

/* jobid must outlive the server (it is the log callback's argument). */
static struct rdv_server *start_rdv(int nnodes, const char *jobid)
{
    const char *t = getenv("LOOM_CONNECT_TIMEOUT");
    int timeout_s = LOOM_DEFAULT_CONNECT_TIMEOUT;
    struct rdv_server *rdv;
    unsigned short ports[2];

    if (t && atoi(t) > 0)
        timeout_s = atoi(t);
    loom_port_range(ports);
    /* width 0: srun does not see the stepds' LoomTreeWidth (mpi.conf and the
     * step's environment reach them, not us): the nodes name it */
    rdv = rdv_server_start_ports(nnodes, 0, jobid, getuid(), TREENET_AUTH_MUNGE, NULL,
                                 ports[0], ports[1], timeout_s * 1000, rdv_log,
                                 (void *)jobid);
    if (!rdv && errno == EADDRINUSE && ports[0])
        error("%s: step %s: cannot start the rendezvous server: every port of "
              "SrunPortRange=%u-%u is in use", loom_plugin_tag, jobid, ports[0], ports[1]);
    else if (!rdv)
        error("%s: step %s: cannot start the rendezvous server: %m", loom_plugin_tag,
              jobid);
    else if (ports[0])
        verbose("%s: step %s: rendezvous server on port %d (SrunPortRange=%u-%u)",
                loom_plugin_tag, jobid, rdv_server_port(rdv), ports[0], ports[1]);
    return rdv;
}

/* The het step's shared server: 0, or -1 if it could not be started. */
static int het_attach(struct loom_srun *s, int first)
{
    struct timespec until;
    int rc = 0;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LOOM_DEFAULT_CONNECT_TIMEOUT;
    pthread_mutex_lock(&het_lock);
    if (first) {
        snprintf(het_rdv.jobid, sizeof(het_rdv.jobid), "%s", s->jobid);
        het_rdv.rdv = start_rdv(s->nnodes, het_rdv.jobid);
        het_rdv.state = het_rdv.rdv ? 1 : -1;
        pthread_cond_broadcast(&het_cond);
    }
    while (het_rdv.state == 0 && rc == 0)
        rc = pthread_cond_timedwait(&het_cond, &het_lock, &until);
    if (het_rdv.state == 1) {
        het_rdv.refs++;
        s->rdv = het_rdv.rdv;
        s->het = 1;
        rc = 0;
    } else {
        if (het_rdv.state == 0)
            error("%s: step %s: the first het component never set up", loom_plugin_tag,
                  s->jobid);
        rc = -1;
    }
    pthread_mutex_unlock(&het_lock);
    return rc;
}

static void het_detach(struct loom_srun *s)
{
    struct rdv_server *stop = NULL;

    pthread_mutex_lock(&het_lock);
    if (--het_rdv.refs <= 0 && het_rdv.rdv) {
        stop = het_rdv.rdv;
        het_rdv.rdv = NULL;
        het_rdv.state = 0;
        het_rdv.refs = 0;
    }
    pthread_mutex_unlock(&het_lock);
    s->rdv = NULL;
    if (stop)
        rdv_server_stop(stop);
}
#endif

#ifndef LOOM_PLUGIN_NO_TREENET
/* The spawn server's log lines: refusals on srun's stderr, the rest with srun -v. */
static void spawn_log(void *arg, int err, const char *msg)
{
    char line[LOOM_LOG_LINE_MAX];

    (void)arg;
    loom_log_escape(line, sizeof line, msg);
    if (err)
        error("%s: %s", loom_plugin_tag, line);
    else
        verbose("%s: %s", loom_plugin_tag, line);
}

/* Every step gets a spawn server (a het step: its first component only); a
 * step that cannot have one still runs, its spawns are refused with the reason. */
static void spawn_start(struct loom_srun *s, uint32_t job_id, char ***env)
{
    unsigned short ports[2];
    struct lspawn_srv_cfg cfg = {
        .jobkey = s->jobid,
        .uid = getuid(),
        .job_id = job_id,
#ifdef LOOM_PLUGIN_PMI2
        .mpi_type = "pmi2",
#else
        .mpi_type = "loom",
#endif
        .auth = TREENET_AUTH_MUNGE,
        .log = spawn_log,
    };
    char host[256];

    loom_port_range(ports);
    cfg.port_lo = ports[0];
    cfg.port_hi = ports[1];
    if (!(s->spawn = lspawn_srv_start(&cfg))) {
        verbose("%s: step %s: no spawn server: %m", loom_plugin_tag, s->jobid);
        return;
    }
    env_array_overwrite_fmt(env, LSPAWN_ENV_PORT, "%d", lspawn_srv_port(s->spawn));
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        env_array_overwrite_fmt(env, LOOM_ENV_RDV_HOST, "%s", host);
    }
}

/* A child srun started by a spawn: the spawner's id and preput pairs must reach
 * the new step's stepds even when the job's env is not exported (--export). */
static void spawn_child_env(char ***env)
{
    const char *v = getenv(LSPAWN_ENV_SPAWNER);
    char k[64];

    if (!v)
        return;
    env_array_overwrite(env, LSPAWN_ENV_SPAWNER, v);
    if ((v = getenv(LSPAWN_ENV_APPNUM)))
        env_array_overwrite(env, LSPAWN_ENV_APPNUM, v);
    if ((v = getenv(LSPAWN_ENV_NPREPUT))) {
        int n = atoi(v);
        env_array_overwrite(env, LSPAWN_ENV_NPREPUT, v);
        for (int i = 0; i < n && i < PSRV_SPAWN_MAX_PREPUT; i++) {
            snprintf(k, sizeof(k), "%s%d", LSPAWN_ENV_PPKEY, i);
            if ((v = getenv(k)))
                env_array_overwrite(env, k, v);
            snprintf(k, sizeof(k), "%s%d", LSPAWN_ENV_PPVAL, i);
            if ((v = getenv(k)))
                env_array_overwrite(env, k, v);
        }
    }
}
#endif

void *loom_srun_prelaunch(const void *jobv, char ***env)
{
    const mpi_step_info_t *job = jobv;
    const slurm_step_layout_t *layout = job->step_layout;
    struct loom_srun *s;
    int het = job->het_job_id != NO_VAL && job->het_job_id != 0;
    uint32_t job_id = het ? job->het_job_id : job->step_id.job_id;

    s = xmalloc(sizeof(*s));
    s->nnodes = layout ? (int)layout->node_cnt : 1;
    snprintf(s->jobid, sizeof(s->jobid), "%u.%u", job_id, job->step_id.step_id);
#ifndef LOOM_PLUGIN_NO_TREENET
    /* a spawned step: tell the spawner's srun its id (the step exists now) */
    spawn_child_env(env);
    lspawn_child_report(s->jobid, NULL);
    unsetenvp(*env, LSPAWN_ENV_REPORT);
    if (!het || job->het_job_task_offset == 0)
        spawn_start(s, job->step_id.job_id, env);
#endif
    if (s->nnodes <= 1)
        return s;
#ifdef LOOM_PLUGIN_NO_TREENET
    error("%s: step %s: this build has no tree links: single-node steps only",
          loom_plugin_tag, s->jobid);
    xfree(s);
    return NULL;
#else
    {
        char host[256];

        if (het) {
            if (het_attach(s, job->het_job_task_offset == 0) < 0) {
                lspawn_srv_stop(s->spawn, 0);
                xfree(s);
                return NULL;
            }
        } else if (!(s->rdv =
                         start_rdv(s->nnodes, s->jobid))) { /* stopped before s dies */
            lspawn_srv_stop(s->spawn, 0);
            xfree(s);
            return NULL;
        }
        env_array_overwrite_fmt(env, LOOM_ENV_RDV_PORT, "%d", rdv_server_port(s->rdv));
        if (gethostname(host, sizeof(host)) == 0) {
            host[sizeof(host) - 1] = '\0';
            env_array_overwrite_fmt(env, LOOM_ENV_RDV_HOST, "%s", host);
        }
        return s;
    }
#endif
}

int loom_srun_fini(void *state)
{
    struct loom_srun *s = state;

    if (!s)
        return 0;
#ifndef LOOM_PLUGIN_NO_TREENET
    /* the spawned steps may outlive this one: they get LoomSpawnTimeout's default
     * to end before their sruns are stopped */
    lspawn_srv_stop(s->spawn, LOOM_DEFAULT_SPAWN_TIMEOUT);
    s->spawn = NULL;
    if (s->het) {
        het_detach(s);
    } else if (s->rdv) {
        int rc = rdv_server_stop(s->rdv);
        if (rc < 0 && rc != -ETIMEDOUT)
            debug("%s: step %s: rendezvous server: %s", loom_plugin_tag, s->jobid,
                  strerror(-rc));
    }
#endif
    xfree(s);
    return 0; /* the step's outcome was reported by the stepds */
}
