/* spawn.h - mpiexec's side of dynamic processes (MPI_Comm_spawn): every spawned
 * job is run by a nested mpiexec that this one starts and watches.
 *
 * Contract:
 *   Spawner side (the mpiexec of the spawning job: the local job, or the front
 *   end of a multi-host job, which gets its proxies' requests over their
 *   connections, front.c): for each request, mpx_spawn_start() forks
 *   this same mpiexec binary with the request as an MPMD command line (one section
 *   per command, -wdir from the "wdir" info key) and the new job's identity in the
 *   environment (LOOM_SPAWN_*: its job id, the spawner's job id, the preput pairs,
 *   a report pipe and what is left of the process budget).  The nested mpiexec
 *   reports on the pipe once every rank is running (or why one could not start);
 *   then the spawner answers through its done function (psrv_spawn_done() on
 *   one host, a frame to the spawning rank's proxy on several).  The nested
 *   mpiexec's output goes straight to our stdout/stderr.
 *
 *   Hosts (multi-host spawner, mpx_spawner_set_hosts): the nested mpiexec gets
 *   the spawner's launcher options and a -hosts list that names, rank by rank,
 *   where each child goes: by default the job's own host list, placed as the
 *   job's ranks were (blocks of each host's slots, -ppn, from the first host);
 *   a command's MPI_Info "host" (a comma-separated list) or "hostfile" key
 *   replaces it for that command.  A host outside the job's list is refused
 *   with a message naming it, as is an unreadable host file.  Without hosts
 *   (one host) the info keys are ignored, as before.
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
/* The -hosts value of one nested multi-host job at most (the argument limit
 * of exec is 128 KiB). */
#define MPX_SPAWN_HOSTS_MAX 65536

struct loop;
struct mpx_spawner;

struct mpx_hostlist;

/* The answer to request `id` of `from` (the caller's tag: a proxy's node id):
 * rc 0 with the new job's id, or rc != 0 with a one-line reason. */
typedef void (*mpx_spawn_done_fn)(void *arg, int from, uint64_t id, int rc,
                                  const char *jobid, int total, const char *msg);

/* The spawner of job `jobid`; answers go to done(done_arg, ...); its spawns
 * start at most max_procs processes in all.  NULL: out of memory, or
 * /proc/self/exe unreadable. */
struct mpx_spawner *mpx_spawner_create(struct loop *lp, mpx_spawn_done_fn done,
                                       void *done_arg, const char *jobid,
                                       int fence_timeout_s, int max_procs);
/* A multi-host spawner: children go over the copy of hl (ppn as -ppn) unless
 * a command's info says where; launcher_argv (NULL-terminated, copied) are
 * the options that reach those hosts (-launcher ..., -launcher-exec ...).
 * 0 or -ENOMEM. */
int mpx_spawner_set_hosts(struct mpx_spawner *sp, const struct mpx_hostlist *hl, int ppn,
                          const char *const *launcher_argv);
void mpx_spawner_destroy(struct mpx_spawner *sp);
/* Start request `id` of `from`: 0 (the answer comes later, through done) or
 * -errno with a one-line reason in err (done is not called). */
int mpx_spawn_start(struct mpx_spawner *sp, int from, uint64_t id,
                    const struct psrv_spawn *req, char *err, size_t errlen);

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
