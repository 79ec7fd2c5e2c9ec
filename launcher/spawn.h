/* spawn.h - mpiexec's side of dynamic processes (MPI_Comm_spawn): every spawned
 * job is run by a nested mpiexec that this one starts and watches.
 *
 * Contract:
 *   Spawner side (the mpiexec of the spawning job, single-host mode): for each
 *   request the server core hands over (psrv_ops->spawn), mpx_spawn_start() forks
 *   this same mpiexec binary with the request as an MPMD command line (one section
 *   per command, -wdir from the "wdir" info key) and the new job's identity in the
 *   environment (LOOM_SPAWN_*: its job id, the spawner's job id, the preput pairs,
 *   a report pipe and what is left of the process budget).  The nested mpiexec
 *   reports on the pipe once every rank is running (or why one could not start);
 *   then the spawner answers the task through psrv_spawn_done().  The nested
 *   mpiexec's output goes straight to our stdout/stderr.
 *   Bounds: at most max_procs processes spawned over the job's life (environment
 *   LOOM_MPIEXEC_MAX_SPAWN_PROCS, default 256; passed down as the budget of the
 *   nested jobs) and MPX_SPAWN_MAX_JOBS spawned jobs at a time.
 *
 *   Spawned side (the nested mpiexec): mpx_spawned_from_env() reads and removes the
 *   LOOM_SPAWN_* variables; mpx_spawned_report() writes the one report line.
 *
 *   The job ends when every rank and every nested mpiexec has ended; a nested
 *   mpiexec that fails makes the whole job fail (node.c judges it).
 */
#ifndef LOOM_LAUNCHER_SPAWN_H
#define LOOM_LAUNCHER_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmiserv.h"

#define MPX_SPAWN_MAX_JOBS 64
#define MPX_SPAWN_DEF_MAX_PROCS 256

struct loop;
struct mpx_spawner;

/* The spawner of job `jobid`, served by *srvp (read at answer time); its
 * spawns start at most max_procs processes in all.  NULL: out of memory, or
 * /proc/self/exe unreadable. */
struct mpx_spawner *mpx_spawner_create(struct loop *lp, struct psrv **srvp,
                                       const char *jobid, int fence_timeout_s,
                                       int max_procs);
void mpx_spawner_destroy(struct mpx_spawner *sp);
/* psrv_ops->spawn for the host: 0 (answer comes later) or -errno and err. */
int mpx_spawn_start(struct mpx_spawner *sp, uint64_t id, const struct psrv_spawn *req,
                    char *err, size_t errlen);
/* A child was reaped: true when it was one of our nested mpiexecs; then *what
 * names it ("spawned job J") for messages, and *judge says whether its exit
 * status matters (false when its spawn was already answered as failed: the
 * spawning task was told, the job goes on). */
bool mpx_spawner_reaped(struct mpx_spawner *sp, pid_t pid, int status, char *what,
                        size_t whatlen, bool *judge);
int mpx_spawner_live(const struct mpx_spawner *sp); /* nested mpiexecs running */
void mpx_spawner_kill(struct mpx_spawner *sp, int sig);

/* The identity of a spawned job, from the environment. */
struct mpx_spawned {
    bool on;                /* LOOM_SPAWN_JOBID was set */
    char jobid[64];
    char spawner_jobid[64];
    int report_fd;
    int budget;             /* processes its own spawns may start */
    int npreput;
    struct psrv_kv *preput; /* [npreput], owned */
};
/* 0 (on == false when not spawned), or -EINVAL with a message in err. */
int mpx_spawned_from_env(struct mpx_spawned *s, char *err, size_t errlen);
void mpx_spawned_free(struct mpx_spawned *s);
/* One line to the spawner: rc 0, or rc != 0 and msg.  Closes the fd. */
void mpx_spawned_report(struct mpx_spawned *s, int rc, const char *msg);

#endif /* LOOM_LAUNCHER_SPAWN_H */
