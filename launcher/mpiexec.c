/* mpiexec.c - the standalone launcher's main: it picks the mode and runs it.
 *
 *   mpiexec --proxy ...        one host of a multi-host job (proxy.c)
 *   inside a Slurm allocation  the job goes to srun --mpi=loom (srun.c)
 *   -hosts / -f                one proxy per host, mpiexec in front (front.c),
 *                              unless every rank lands on this machine
 *   otherwise                  N ranks on this host, PMI served in-process by
 *                              the server core the Slurm plugin uses (node.c)
 *
 * A spawned job (spawn.h) is the local mode with the identity its spawner
 * gave it.  The user-visible contract is doc/man/mpiexec.1; node.h lists the
 * parts and describes how one node's job runs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bind.h"
#include "front.h"
#include "jobctl.h"
#include "log.h"
#include "loop.h"
#include "node.h"
#include "pmiserv.h"
#include "slurm.h"
#include "spawn.h"

int main(int argc, char **argv)
{
    struct mpx_opts o;
    struct job job;
    char err[512];
    int rc;

    if (argc > 1 && strcmp(argv[1], "--proxy") == 0)
        return mpx_proxy_main(argc, argv);

    memset(&job, 0, sizeof(job));
    loom_log_init(&job.log, "mpiexec", LOOM_LOG_INFO);
    job.con.log = &job.log;
    job.t0 = loop_now_ms();

    /* a job spawned by another mpiexec's ranks (spawn.h) */
    rc = mpx_spawned_from_env(&job.spawned, err, sizeof(err));
    if (rc < 0) {
        job_msg(&job, "%s", err);
        mpx_spawned_report(&job.spawned, 1, err);
        mpx_spawned_free(&job.spawned);
        return MPX_EXIT_USAGE;
    }

    rc = mpx_args_parse(argc, argv, &o, err, sizeof(err));
    if (rc < 0) {
        job_msg(&job, "%s", rc == -ENOMEM ? "out of memory" : err);
        mpx_spawned_report(&job.spawned, 1, rc == -ENOMEM ? "out of memory" : err);
        mpx_spawned_free(&job.spawned);
        mpx_args_free(&o);
        return MPX_EXIT_USAGE;
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
        o.timeout_s = mpx_env_int("MPIEXEC_TIMEOUT", 0);
    {
        char sbuf[4096];
        const char *srun = mpx_srun_find(sbuf, sizeof(sbuf));
        rc = mpx_slurm_decide(&o, mpx_getenv_cb, NULL, srun != NULL, err, sizeof(err));
        if (rc < 0) {
            job_msg(&job, "%s", err);
            mpx_args_free(&o);
            return MPX_EXIT_LAUNCH;
        }
        if (rc == 1) {
            rc = mpx_srun_run(&o, srun);
            mpx_args_free(&o);
            return rc;
        }
    }

    job.pmi_level = PSRV_LOG_WARN;
    const char *lvl = getenv("LOOM_PMI_LOGLEVEL");
    if (lvl && *lvl) {
        int l = loom_log_level_parse(lvl);
        if (l < 0) {
            job_msg(&job,
                    "LOOM_PMI_LOGLEVEL='%s' is not one of error, warn, info, debug, "
                    "trace",
                    lvl);
            mpx_args_free(&o);
            return MPX_EXIT_USAGE;
        }
        job.pmi_level = l;
    }
    const char *trace = getenv("LOOM_PMI_TRACE");
    if (trace && *trace && strcmp(trace, "0") != 0)
        job.pmi_level = PSRV_LOG_TRACE;

    if (o.hosts || o.hostfile) {
        /* several hosts: mpiexec starts one proxy per host (front.c), unless
         * the list boils down to this machine alone */
        rc = mpx_front_main(&o, job.pmi_level, &job.log, &job.spawned);
        if (rc != MPX_FRONT_LOCAL) {
            if (job.spawned.on) { /* still owed: it ended before every rank started */
                snprintf(err, sizeof(err), "spawned job %s ended while starting",
                         job.spawned.jobid);
                mpx_spawned_report(&job.spawned, 1, err);
            }
            mpx_spawned_free(&job.spawned);
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
            job_msg(&job, "-bind-to core: %s", err);
            mpx_args_free(&o);
            return MPX_EXIT_USAGE;
        }
    }

    mpx_sane_stdio();
    mpx_raise_nofile();
    if (job.spawned.on)
        snprintf(job.jobid, sizeof(job.jobid), "%s", job.spawned.jobid);
    else
        snprintf(job.jobid, sizeof(job.jobid), "%u.0", (unsigned)getpid());

    rc = node_run(&job, NULL, 1, 0, binder);
    if (job.spawned.on) /* still owed: it ended before every exec was known */
        mpx_spawned_report(&job.spawned, 1, "the spawned job ended while starting");
    mpx_spawned_free(&job.spawned);
    mpx_bind_close(binder);
    mpx_args_free(&o);
    return rc;
}
