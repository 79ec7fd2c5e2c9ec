/* agent.h - the stepd agent's own parts, shared by its files (not a public
 * interface: loom_plugin.h has that): the agent record and what each part
 * calls of the others.
 *
 * Contract:
 *   agent.c      the agent's life (start, thread, stop), the step's kill, the
 *                log routing and the task hooks of the node server;
 *   agenttree.c  the tree links: rendezvous with srun, treenet (multi-node);
 *   agentspawn.c a task's spawn handed to srun's spawn server (spawnlink.h);
 *   agentpmix.c  the PMIx server beside the core (pmixsrv/, LoomPMIx=yes).
 *   Everything here runs on the agent's thread once it started (before: on
 *   the stepd's, in loom_agent_start).
 */
#ifndef LOOM_PLUGIN_AGENT_H
#define LOOM_PLUGIN_AGENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "loom_plugin.h"
#include "loop.h"
#include "nodesrv.h"
#include "pmiserv.h"
#include "spawnwire.h"

#define KILL_DELAY_MS 100

/* A spawn handed to srun (op_spawn): its connection, until the answer. */
struct spawn_call {
    struct agent *a;
    uint64_t id;
    int fd;
    int total;
    struct loop_watch *w;
    struct loop_timer *t;
    size_t have;
    char buf[LSPAWN_ANSWER_MAX + 4];
};

struct agent {
    struct loom_step *st;
    struct spawn_call *spawns; /* [local_count]: a task has one spawn at a time */
    struct loop *lp;
    struct nodesrv *ns;     /* the task sockets and the core */
    struct psrv *srv;       /* ns's core */
    int nregistered;        /* task sockets 0..nregistered-1 are ns's to close */
    struct treenet *tn;     /* NULL in a build without tree links */
    struct pmixsrv *px;     /* NULL without PMIx */
    struct loop_watch *pxw; /* px's fd in the loop */
    pthread_t thr;
    int started;
    int task_ends_closed;
    int killed;
    int kill_sent;    /* slurm_kill_job_step asked (once) */
    int in_fini;      /* loom_agent_stop() runs the loop: it sends the kill itself */
    uint64_t kill_at; /* when kill_now() is due (loop_now_ms) */
    unsigned long job_log_dropped; /* job-requested lines its stderr had no room for */
};

/* agent.c */
struct agent *agent_current(void);
/* The job must end: say why (rank: the culprit or -1) and kill the step. */
void agent_kill_step(struct agent *a, int rank, const char *msg);
/* The step ends without a line of ours (another node said why): the kill only. */
void agent_kill_quietly(struct agent *a);
/* The step is being killed or every local rank finalized: hang-ups are normal. */
int agent_step_ending(struct agent *a);
/* A task runs: Slurm has forked them all; the stepd's task ends are closed. */
void agent_close_task_ends(struct agent *a);
/* psrv's log op, and a line the job asked for (to its stderr). */
void agent_log(void *arg, enum psrv_log_level level, const char *msg);
void agent_job_log(struct agent *a, int level, const char *msg);

/* agenttree.c (a build with LOOM_PLUGIN_NO_TREENET has none of it) */
int agent_tree_send(void *arg, int to, const void *buf, size_t len);
/* Join the tree; on failure the step is being killed and the core is told its
 * links are gone (fences fail at once). */
void agent_tree_join(struct agent *a);
size_t agent_tree_queued(const struct agent *a);
void agent_tree_free(struct agent *a);

/* agentspawn.c */
int agent_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                size_t errlen);
void agent_spawns_free(struct agent *a);

/* agentpmix.c (a build without LOOM_WITH_PMIX: start 0, the rest no-ops) */
/* core: the node server's psrv_config, the step as the core sees it. */
int agent_pmix_start(struct agent *a, const struct psrv_config *core);
void agent_pmix_free(struct agent *a);
void agent_pmix_client_gone(void *arg, int client);
void agent_pmix_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                          const char *msg);
void agent_pmix_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                             size_t len);
void agent_pmix_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                          const char *msg);
void agent_pmix_ns_done(void *arg, uint64_t id, int rc, const char *value);

#endif /* LOOM_PLUGIN_AGENT_H */
