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
 *
 * Notes:
 *   - srun never calls fini(): everything is released in client_fini.
 *   - A heterogeneous step calls prelaunch once per component, each with only
 *     its own layout; the total node count of the het step is not known here,
 *     so het steps that span several stepds are refused with a clear error
 *     (single-component steps are unaffected).  Known limitation.
 */

#include "slurm_glue.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "loom_plugin.h"
#ifndef LOOM_PLUGIN_NO_TREENET
#include "treenet.h"
#endif

struct loom_srun {
    int nnodes;
#ifndef LOOM_PLUGIN_NO_TREENET
    struct rdv_server *rdv;
#endif
    char jobid[64];
};

void *loom_srun_prelaunch(const void *jobv, char ***env)
{
    const mpi_plugin_client_info_t *job = jobv;
    const slurm_step_layout_t *layout = job->step_layout;
    struct loom_srun *s;
    int het = job->het_job_id != NO_VAL && job->het_job_id != 0;
    uint32_t job_id = het ? job->het_job_id : job->step_id.job_id;

    s = xmalloc(sizeof(*s));
    s->nnodes = layout ? (int)layout->node_cnt : 1;
    snprintf(s->jobid, sizeof(s->jobid), "%u.%u", job_id, job->step_id.step_id);
    if (het) {
        error("%s: step %s: heterogeneous steps are not supported by this plugin yet",
              loom_plugin_tag, s->jobid);
        xfree(s);
        return NULL;
    }
    if (s->nnodes <= 1)
        return s;
#ifdef LOOM_PLUGIN_NO_TREENET
    error("%s: step %s: this build has no tree links: single-node steps only",
          loom_plugin_tag, s->jobid);
    xfree(s);
    return NULL;
#else
    {
        const char *t = getenv("LOOM_CONNECT_TIMEOUT");
        int timeout_s = LOOM_DEFAULT_CONNECT_TIMEOUT;
        char host[256];

        if (t && atoi(t) > 0)
            timeout_s = atoi(t);
        s->rdv = rdv_server_start(s->nnodes, s->jobid, getuid(), TREENET_AUTH_MUNGE, NULL,
                                  timeout_s * 1000);
        if (!s->rdv) {
            error("%s: step %s: cannot start the rendezvous server: %m", loom_plugin_tag,
                  s->jobid);
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
    int rc = 0;

    if (!s)
        return 0;
#ifndef LOOM_PLUGIN_NO_TREENET
    if (s->rdv) {
        rc = rdv_server_stop(s->rdv);
        if (rc < 0 && rc != -ETIMEDOUT)
            debug("%s: step %s: rendezvous server: %s", loom_plugin_tag, s->jobid,
                  strerror(-rc));
        rc = 0; /* the step's outcome was reported by the stepds */
    }
#endif
    xfree(s);
    return rc;
}
