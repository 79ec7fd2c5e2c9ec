/* mpi_loom.c - the symbols Slurm looks up in mpi_loom.so (srun --mpi=loom).
 *
 * Contract:
 *   Exports exactly plugin_name, plugin_type, plugin_version, plugin_id,
 *   init, fini and the eight mpi_p_* hooks of Slurm's mpi plugin interface
 *   (the same in 22.05 to 26.05: doc/plugin.md); everything else in the .so
 *   is hidden.  The hooks are thin:
 *   they hand the Slurm structures to setup.c, agent.c, srun.c and conf.c.
 *   Built twice: as mpi_loom.so (type "mpi/loom", our own id) and, with
 *   LOOM_PLUGIN_PMI2 defined, as the drop-in mpi_pmi2.so (type "mpi/pmi2",
 *   id 102, so that slurmd and slurmstepd agree with srun --mpi=pmi2).
 *
 * Where the hooks run (Slurm 22.05 to 26.05):
 *   init/fini          every process that loads the plugin (slurmctld,
 *                      slurmd at start and on reconfigure, srun, slurmstepd:
 *                      there before it starts any thread)
 *   client_prelaunch   srun, before the launch RPC (once per het component)
 *   client_fini        srun, after the step ended
 *   slurmstepd_prefork slurmstepd as root, before the tasks are forked
 *   slurmstepd_task    each forked task as the user, just before exec
 *   conf_*             slurmd/slurmctld (mpi.conf), conf_set also in the stepd
 *
 * Notes:
 *   - Never a crash or a hang of slurmstepd: a setup failure is reported as
 *     a step launch error (SLURM_ERROR from prefork), the agent thread is
 *     stopped and joined in fini() (an unjoined thread crashes slurmstepd).
 *   - plugin_version is SLURM_VERSION_NUMBER from the slurm_version.h that
 *     the build generates from the Slurm source's META file.
 *   - loom_plog(), the plugin's one way to log (loom_plugin.h), lives here:
 *     every process that loads the plugin has it.
 */
#include "slurm_glue.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>

#include "log.h"
#include "loom_plugin.h"
#include "loop.h"

#define LOOM_EXPORT __attribute__((visibility("default")))

#ifdef LOOM_PLUGIN_PMI2
LOOM_EXPORT const char plugin_name[] = "Loom PMI-1/PMI-2 server (drop-in for mpi/pmi2)";
LOOM_EXPORT const char plugin_type[] = "mpi/pmi2";
LOOM_EXPORT const uint32_t plugin_id = MPI_PLUGIN_PMI2; /* 102: same id as Slurm's */
const char loom_plugin_tag[] = "mpi/pmi2(loom)";
#else
LOOM_EXPORT const char plugin_name[] = "Loom PMI-1/PMI-2 server";
LOOM_EXPORT const char plugin_type[] = "mpi/loom";
/* Slurm's own ids are 101-107; ours is "LM" in ASCII, far from them. */
LOOM_EXPORT const uint32_t plugin_id = 0x4c4d;
const char loom_plugin_tag[] = "mpi/loom";
#endif
LOOM_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_mutex_t plog_mu = PTHREAD_MUTEX_INITIALIZER;
static struct loom_ratelimit plog_rl;
static int plog_rl_ready;

static void sink_loud(void *arg, enum loom_log_level level, const char *ident,
                      const char *line)
{
    error("%s", line);
}

static void sink_quiet(void *arg, enum loom_log_level level, const char *ident,
                       const char *line)
{
    info("%s", line);
}

void loom_plog(int how, const char *fmt, ...)
{
    struct loom_log lg;
    unsigned long dropped = 0;
    int saved = errno, pass = 1;
    va_list ap;

    if (!(how & LOOM_PLOG_MUST)) {
        pthread_mutex_lock(&plog_mu);
        if (!plog_rl_ready) {
            loom_ratelimit_init(&plog_rl, LOOM_PLOG_BURST, LOOM_PLOG_PER_S);
            plog_rl_ready = 1;
        }
        pass = loom_ratelimit_take(&plog_rl, loop_now_ms());
        if (pass)
            dropped = loom_ratelimit_dropped(&plog_rl);
        pthread_mutex_unlock(&plog_mu);
    }
    if (!pass) {
        errno = saved;
        return;
    }
    if (dropped)
        info("%s: %lu log lines dropped (more than %d at once, then %d a second)",
             loom_plugin_tag, dropped, LOOM_PLOG_BURST, LOOM_PLOG_PER_S);
    loom_log_init(&lg, NULL, LOOM_LOG_TRACE);
    loom_log_set_sink(&lg, (how & LOOM_PLOG_LOUD) ? sink_loud : sink_quiet, NULL);
    errno = saved; /* for %m */
    va_start(ap, fmt);
    loom_vlogf(&lg, LOOM_LOG_ERROR, fmt, ap);
    va_end(ap);
    errno = saved;
}

LOOM_EXPORT int init(void);
LOOM_EXPORT int fini(void);
LOOM_EXPORT int mpi_p_slurmstepd_prefork(const stepd_step_rec_t *job, char ***env);
LOOM_EXPORT int mpi_p_slurmstepd_task(const mpi_task_info_t *job, char ***env);
LOOM_EXPORT mpi_plugin_client_state_t *
mpi_p_client_prelaunch(const mpi_step_info_t *job, char ***env);
LOOM_EXPORT int mpi_p_client_fini(mpi_plugin_client_state_t *state);

LOOM_EXPORT int init(void)
{
    /* Runs in every daemon and at every reconfigure: keep it cheap. */
    loom_conf_reset();
    if (running_in_slurmstepd())
        loom_setup_stepd_early();
    return SLURM_SUCCESS;
}

LOOM_EXPORT int fini(void)
{
    /* slurmstepd: after all tasks ended.  Join the agent before dlclose. */
    loom_agent_stop();
    return SLURM_SUCCESS;
}

LOOM_EXPORT int mpi_p_slurmstepd_prefork(const stepd_step_rec_t *job, char ***env)
{
    struct loom_step *st;
    int rc;

    if (job->batch)
        return SLURM_SUCCESS;
    st = xmalloc(sizeof(*st));
    rc = loom_setup_stepd(st, job, env);
    if (rc == 0)
        rc = loom_agent_start(st); /* owns st from here, also on failure */
    else
        loom_step_free(st);
    if (rc != 0) {
        loom_plog(LOOM_PLOG_LOUD | LOOM_PLOG_MUST,
                  "%s: step %u.%u: cannot set up the PMI server: %s", loom_plugin_tag,
                  job->step_id.job_id, job->step_id.step_id, strerror(-rc));
        return SLURM_ERROR;
    }
    return SLURM_SUCCESS;
}

LOOM_EXPORT int mpi_p_slurmstepd_task(const mpi_task_info_t *job, char ***env)
{
    struct loom_step *st = loom_agent_step();

    if (!st) {
        loom_plog(LOOM_PLOG_LOUD | LOOM_PLOG_MUST,
                  "%s: task %u: no PMI server in this step", loom_plugin_tag,
                  job->gtaskid);
        return SLURM_ERROR;
    }
    return loom_setup_task(st, job->ltaskid, job->gtaskid, env) ? SLURM_ERROR
                                                                : SLURM_SUCCESS;
}

LOOM_EXPORT mpi_plugin_client_state_t *
mpi_p_client_prelaunch(const mpi_step_info_t *job, char ***env)
{
    return loom_srun_prelaunch(job, env);
}

LOOM_EXPORT int mpi_p_client_fini(mpi_plugin_client_state_t *state)
{
    return loom_srun_fini(state) ? SLURM_ERROR : SLURM_SUCCESS;
}
