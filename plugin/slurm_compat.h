/* slurm_compat.h - what differs between the Slurm releases the plugin builds against
 * (22.05, 23.11, 24.11, 25.11, 26.05; nothing here stops 23.02, 24.05 or 25.05), in
 * one place, keyed on SLURM_VERSION_NUMBER.
 *
 * Contract:
 *   Included by slurm_glue.h after Slurm's headers (slurm/slurm.h defines the version
 *   macros), and nowhere else.  The plugin's code is written against the newest names;
 *   this header gives the older releases those names:
 *     - mpi_task_info_t, mpi_step_info_t (22.05: mpi_plugin_task_info_t and
 *       mpi_plugin_client_info_t; same fields for what the plugin reads)
 *     - list_t (22.05 has only List; 24.11 removed List)
 *     - loom_hostlist_p: what hostlist_create() returns (hostlist_t in 22.05,
 *       hostlist_t * from 23.11, where hostlist_t became the struct)
 *     - loom_kill_step(): slurm_pmi_kill_job_step(job, step, signal), whose signature
 *       Slurm keeps in every release for this use, where slurm_kill_job_step() took
 *       3 arguments (22.05), 4 (23.11, 24.11) and a slurm_step_id_t (25.11, 26.05)
 *     - LOOM_FINI_UNDER_AUTH_LOCK: 1 where slurmstepd calls the plugin's fini()
 *       holding its auth write lock (24.05 up to 25.05.3: 24.11's stepd_cleanup takes
 *       auth_setuid_lock() before mpi_fini(); 25.05.4 moved mpi_fini() first).  There
 *       an RPC from fini() cannot take the lock's read side (the stepd dies), and a
 *       thread waiting for it never returns, so a join would hang the stepd.
 *   The mpi interface header's path itself (src/common/slurm_mpi.h up to 22.05,
 *   src/interfaces/mpi.h from 23.02) is chosen in slurm_glue.h.  The facts and where
 *   each release has them: doc/plugin.md, "Slurm releases".
 */
#ifndef LOOM_SLURM_COMPAT_H
#define LOOM_SLURM_COMPAT_H

#include <stdint.h>

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
typedef mpi_plugin_task_info_t mpi_task_info_t;
typedef mpi_plugin_client_info_t mpi_step_info_t;
#endif

/* the same typedef as 23.11+'s list.h: repeating it is valid C11 */
typedef struct xlist list_t;

typedef struct hostlist *loom_hostlist_p;

/* src/api/slurm_pmi.h, exported by libslurmfull in every release */
extern int slurm_pmi_kill_job_step(uint32_t job_id, uint32_t step_id, uint16_t signal);

static inline int loom_kill_step(uint32_t job_id, uint32_t step_id, uint16_t signal)
{
    return slurm_pmi_kill_job_step(job_id, step_id, signal);
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0) &&                              \
    SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 5, 4)
#define LOOM_FINI_UNDER_AUTH_LOCK 1
#else
#define LOOM_FINI_UNDER_AUTH_LOCK 0
#endif

#endif /* LOOM_SLURM_COMPAT_H */
