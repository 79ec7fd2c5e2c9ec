/* loom_plugin.h - internal interface between the files of the Slurm mpi plugin.
 *
 * Contract:
 *   Nothing declared here is exported from mpi_loom.so: the plugin is built
 *   with -fvisibility=hidden and an export list that names only Slurm's
 *   required symbols (mpi_loom.c).  Files:
 *     mpi_loom.c  the symbols Slurm looks up, dispatching to the others
 *     conf.c      mpi.conf options (LoomTreeWidth, ...), shipped to the stepd
 *     setup.c     stepd_step_rec_t -> struct psrv_config, task sockets, env
 *     agent.c     the stepd thread: loop over task fds and tree links, psrv
 *     srun.c      srun side: rendezvous server for steps on several nodes
 *
 * Notes:
 *   - The plugin keeps per-process global state (struct loom_conf, the one
 *     step of a slurmstepd): Slurm's plugin API passes no context to init(),
 *     fini() or the conf hooks, and a slurmstepd serves exactly one step.
 *   - Environment variables the plugin passes from srun to the stepds:
 *     SLURM_LOOM_RDV_PORT (rendezvous port in srun; host from
 *     SLURM_SRUN_COMM_HOST, else SLURM_LOOM_RDV_HOST).
 *   - Log lines go through loom_plog() (mpi_loom.c), never straight to
 *     Slurm's error()/info(): text from a task, a job's environment or the
 *     network is escaped there (common/log.c) and a process logs at most
 *     LOOM_PLOG_BURST lines at once, LOOM_PLOG_PER_S a second after that, so
 *     a job cannot flood a root daemon's log.  What a job asks for itself
 *     (LOOM_PMI_TRACE, LOOM_PMI_DEBUG above mpi.conf's level) goes to the
 *     job's own stderr instead (agent.c).
 */
#ifndef LOOM_PLUGIN_H
#define LOOM_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmiserv.h"

/* Environment variables (job env) understood by the plugin. */
#define LOOM_ENV_RDV_PORT "SLURM_LOOM_RDV_PORT"
#define LOOM_ENV_RDV_HOST "SLURM_LOOM_RDV_HOST"
#define LOOM_ENV_TRACE "LOOM_PMI_TRACE"             /* 1: trace every PMI request */
#define LOOM_ENV_DEBUG "LOOM_PMI_DEBUG"             /* log level name or 0-4 */
#define LOOM_ENV_FENCE_TIMEOUT "LOOM_FENCE_TIMEOUT" /* seconds, overrides mpi.conf */
#define LOOM_ENV_TREE_WIDTH "LOOM_TREE_WIDTH"       /* overrides mpi.conf */
#define LOOM_ENV_PMIX "LOOM_PMIX"                   /* 0: no PMIx server for this job */
#define LOOM_ENV_AGENT_NICE "LOOM_AGENT_NICE"   /* 0..19, only above mpi.conf's value */
#define LOOM_ENV_TIMER_SLACK "LOOM_TIMER_SLACK" /* us, 0..1000000, overrides mpi.conf */
#define LOOM_ENV_SPAWN_MAX_PROCS "LOOM_SPAWN_MAX_PROCS" /* only below mpi.conf's */
#define LOOM_ENV_SPAWN_TIMEOUT "LOOM_SPAWN_TIMEOUT"     /* s, only below mpi.conf's */
#define LOOM_ENV_KVS_MODE "LOOM_PMI_KVS_MODE"           /* auto|full|ondemand */
#define LOOM_ENV_KVS_AUTO_BYTES "LOOM_PMI_KVS_AUTO_BYTES" /* auto's threshold */

/* Settings from mpi.conf (conf.c), overridable per job through the env. */
struct loom_conf {
    uint32_t tree_width;        /* LoomTreeWidth, children per stepd */
    uint32_t fence_timeout_s;   /* LoomFenceTimeout */
    uint32_t connect_timeout_s; /* LoomConnectTimeout: rendezvous and links */
    int debug;                  /* LoomDebug, enum psrv_log_level */
    int trace;                  /* LoomTrace (bool) */
    int pmix;                   /* LoomPMIx (bool): serve PMIx too (--with-pmix builds) */
    int agent_nice;             /* LoomAgentNice: nice of the agent thread, -20..19 */
    uint32_t timer_slack_us;    /* LoomTimerSlack: the tasks' on an oversubscribed node */
    uint32_t spawn_max_procs;   /* LoomSpawnMaxProcs: processes of one spawn, 0: no limit */
    uint32_t spawn_max_inflight; /* LoomSpawnMaxInFlight: spawns starting at once, per step */
    uint32_t spawn_timeout_s;   /* LoomSpawnTimeout: the new step must start within */
    int kvs_mode;               /* LoomKvsMode: enum psrv_kvs_mode */
    int64_t kvs_auto_bytes;     /* LoomKvsAutoBytes: auto's threshold, 0: default */
};

#define LOOM_DEFAULT_TREE_WIDTH 8 /* doc/scale.md: "Tree shape" */
#define LOOM_DEFAULT_FENCE_TIMEOUT 600
#define LOOM_DEFAULT_CONNECT_TIMEOUT 60
#define LOOM_DEFAULT_DEBUG PSRV_LOG_WARN
#define LOOM_DEFAULT_AGENT_NICE (-10)
#define LOOM_DEFAULT_SPAWN_MAX_PROCS 256
#define LOOM_DEFAULT_SPAWN_MAX_INFLIGHT 4
#define LOOM_DEFAULT_SPAWN_TIMEOUT 60
#ifdef LOOM_WITH_PMIX
#define LOOM_DEFAULT_PMIX 1
#else
#define LOOM_DEFAULT_PMIX 0
#endif

extern struct loom_conf loom_conf;
void loom_conf_reset(void);

/* The plugin's name for log lines: "mpi/loom" or "mpi/pmi2". */
extern const char loom_plugin_tag[];

/* ---- logging (mpi_loom.c) -------------------------------------------- */
enum {
    LOOM_PLOG_QUIET = 0, /* info(): the daemon's log (slurmd's, srun -v) */
    LOOM_PLOG_LOUD = 1,  /* error(): the log and, from a stepd, srun's stderr */
    LOOM_PLOG_MUST = 2,  /* never rate-limited (the one line that ends a step) */
};
#define LOOM_PLOG_BURST 200 /* lines a process logs at once ... */
#define LOOM_PLOG_PER_S 20  /* ... and a second after that */
/* One line, escaped (loom_log_escape) and rate-limited; errno is kept, %m works. */
void loom_plog(int how, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- stepd side (setup.c, agent.c) ---------------------------------- */

/* What setup.c derives from the step record; owned by the agent. */
struct loom_step {
    uint32_t job_id, step_id; /* job id (het leader for het steps), step id */
    char jobid[64];           /* "<job>.<step>" */
    uid_t uid;
    gid_t gid;
    int size, nnodes, nodeid, local_count;
    int node_cpus;       /* CPUs the job has on this node (job->cpus), 0: unknown */
    bool oversubscribed; /* more local tasks than CPUs (cpus_oversubscribed) */
    int *local_ranks;    /* [local_count] */
    int *rank_node;      /* [size] */
    int *rank_appnum;    /* [size] or NULL */
    int *task_fd;        /* [local_count] task end of each socketpair */
    int *stepd_fd;       /* [local_count] stepd end */
    char *rdv_server;    /* "host:port" or NULL (single node) */
    char *spawn_server;  /* srun's spawn server "host:port" (spawnlink.h), or NULL */
    char *spawner_jobid; /* a spawned step: the spawner's "<job>.<step>", else NULL */
    int npreput;         /* ... and the preput pairs for its KVS */
    struct psrv_kv *preput;
    char **node_names;   /* [nnodes] host names of the step's nodes (PMIx, messages) */
    struct loom_conf conf;
    int log_admin; /* psrv log level for slurmd's log: mpi.conf's LoomDebug/LoomTrace */
    int log_job;   /* level the job's env asked for; lines above log_admin go to
                    * the job's stderr (agent.c), never to the daemon's log */
};

/* In slurmstepd's init(), before it has threads: grow its descriptor
 * table for the launch (cheap only while the process is single-threaded). */
void loom_setup_stepd_early(void);
/* Fill st from the step record and job env; create the task sockets and
 * set the step-wide env (PMI_SIZE, PMI_JOBID, MPI_LOCALNRANKS).
 * Returns 0 or -errno (and logs why). */
int loom_setup_stepd(struct loom_step *st, const void *job, char ***env);
/* Per task, in the forked task: PMI_FD, PMI_RANK, MPI_LOCALRANKID; close
 * the fds of the other tasks; on an oversubscribed node, the timer slack. */
int loom_setup_task(struct loom_step *st, int ltaskid, uint32_t gtaskid, char ***env);
void loom_step_free(struct loom_step *st);

/* The agent thread.  start takes ownership of st. */
int loom_agent_start(struct loom_step *st);
/* Stop and join; safe if never started.  Called from fini(). */
void loom_agent_stop(void);
/* The step being served (for slurmstepd_task), or NULL. */
struct loom_step *loom_agent_step(void);
/* PMIx env ("NAME=value", NULL-terminated) of local task i, or NULL when
 * this step serves no PMIx. */
char *const *loom_agent_pmix_env(int ltaskid);
/* Variables a task gets only when its env lacks them (pmixsrv_task_env_defaults),
 * or NULL. */
char *const *loom_agent_pmix_env_defaults(void);

/* ---- srun side (srun.c) ------------------------------------------------ */
struct loom_srun;
void *loom_srun_prelaunch(const void *job, char ***env);
int loom_srun_fini(void *state);
/* slurm.conf's SrunPortRange as {lo, hi}, or {0, 0} when unset: the range
 * Loom's listeners bind in (srun's rendezvous, the stepds' tree links). */
void loom_port_range(unsigned short range[2]);

#endif /* LOOM_PLUGIN_H */
