/* node.h - one node's ranks under mpiexec: the state the local job and a
 * proxy share (struct job, its ranks and their output streams) and the parts
 * that work on it.  Internal to the mpiexec binary.
 *
 * The parts:
 *   node.c     the job's life: start (node_run), "mpiexec: ..." messages and
 *              failures, the kill sequence, reaping and judging exits,
 *              signals, --timeout, the end of the job.
 *   launch.c   fork/exec of the ranks: fds, environment, binding, exec errors.
 *   output.c   the ranks' stdout/stderr pipes: lines to our console, or
 *              frames to the front end in proxy mode.
 *   pmihost.c  the node server (nodesrv.h) over the ranks' sockets: what
 *              mpiexec gives it (abort, log, spawn, tree, the hang-up rule).
 *   proxy.c    proxy mode: the connection to the front end (front.c).
 *   srun.c     inside a Slurm allocation: the job handed to srun --mpi=loom.
 *   mpiexec.c  main: picks the mode.
 * Shared with the front end: jobctl.h (signals, console, exit rule), env.h.
 *
 * Design:
 *   One thread, one struct loop.  Ranks are forked (the parent never waits
 *   for an exec) and each leads a session of its own, as with hydra: killing
 *   a rank's process group also reaches what it started, and with the
 *   scheduler's autogroups each rank competes for CPU like hydra's do.
 *   SIGCHLD and the terminating signals reach the loop through a self-pipe
 *   (jobctl.h); children are reaped with waitpid(WNOHANG) and, before a
 *   rank's exit is judged, its PMI socket and output pipes are drained so
 *   that an abort message sent just before exit is seen first.  The node
 *   server ticks psrv in the loop's prepare hook; before that the hook
 *   flushes the output gathered during an iteration with one write per
 *   stream (nodesrv_ops->prepare).
 */
#ifndef LOOM_LAUNCHER_NODE_H
#define LOOM_LAUNCHER_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "args.h"
#include "bind.h"
#include "conn.h"
#include "iofwd.h"
#include "jobctl.h"

struct treenet;
#include "log.h"
#include "loop.h"
#include "nodesrv.h"
#include "pack.h"
#include "pmiserv.h"
#include "spawn.h"

#define DRAIN_GRACE_MS 1000 /* after the last rank exited, wait for pipe EOF */
#define MPX_TREE_WIDTH 8    /* children per node of the psrv tree (doc/scale.md) */
#define GONE_DELAY_MS 100   /* PMI hang-up: let the rank's exit be seen first */
#define READ_CHUNK 65536
/* Proxy mode: rank output queued for mpiexec that stops reading the ranks'
 * pipes (they block on write) until it is down to UP_LOW again. */
#define UP_HIGH (4u << 20)
#define UP_LOW (1u << 20)

struct job;

struct stream {
    struct job *job;
    struct rank *r;
    int fd;
    int which; /* 1: stdout, 2: stderr */
    struct loop_watch *w;
    struct iofwd_stream fwd;
    bool lost; /* output_lost() said so */
};

struct rank {
    struct job *job;
    int rank; /* global rank */
    int idx;  /* psrv client index: position among this node's ranks */
    int app;
    pid_t pid;
    bool exited;
    bool judging;      /* rank_exited() is draining its PMI socket */
    struct loop_timer *gone_timer; /* PMI hang-up: the core hears of it when it fires */
    struct stream out[2];
};

struct job {
    struct mpx_opts *o;
    struct loop *lp;
    struct nodesrv *ns; /* the ranks' PMI sockets and the server core */
    struct psrv *srv;   /* ns's core */
    struct loom_log log;
    struct rank *ranks;
    int n;            /* ranks started here */
    int size;         /* ranks in the job (== n unless proxy) */
    int live;         /* spawned and not yet reaped */
    int open_streams; /* output pipes not yet at EOF */
    char jobid[64];
    uint64_t t0;

    struct mpx_console con; /* our stdout/stderr; con.log = &log */
    bool out_lost;          /* rank output dropped for lack of memory: exit != 0 */

    struct mpx_jobend end; /* ending, exit code, first signal (jobctl.h) */
    bool sigkill_sent;
    struct loop_timer *kill_timer;
    struct loop_timer *drain_timer;
    struct loop_timer *timeout_timer;
    struct loop_watch *sig_w;
    int pmi_level; /* enum psrv_log_level */

    /* Proxy mode (multi-host, see front.c): up is the connection to the
     * mpiexec that started us; output, exits and failures go there. */
    struct mpx_conn *up;
    struct loop_watch *up_w;
    bool up_lost;    /* connection to mpiexec closed or broken */
    bool done_sent;  /* MPX_P_DONE sent: waiting for mpiexec to hang up */
    bool fail_sent;  /* a failure was reported: the job is about to end */
    bool out_paused; /* rank pipes not read: too much output queued for mpiexec */
    int nodeid;
    const char *host; /* our host name, for messages */
    struct loop_timer *bye_timer;
    /* Proxy mode: the links to the adjacent proxies of the tree (treenet,
     * cookie mode; proxy.c), the job cookie that keys them, the rendezvous
     * port and port range from the job frame, the bound of every wait. */
    struct treenet *tn;
    char *cookie;
    int rdv_port, port_lo, port_hi, tree_timeout_ms;

    /* Dynamic processes (spawn.h): the nested mpiexecs of the jobs our ranks
     * spawned, and, when this mpiexec runs a spawned job, its identity and
     * the report owed to the spawner once every rank started. */
    struct mpx_spawner *spawner;
    struct mpx_spawned spawned;
};

/* node.c */
/* Starts the ranks of node `nodeid` (those with rank_node[r] == nodeid; all
 * of them when rank_node is NULL), serves them and returns the exit code.
 * job->o, job->size, job->jobid and job->pmi_level are set. */
int node_run(struct job *job, const int *rank_node, int nnodes, int nodeid,
             struct mpx_bind *binder);
void job_msg(struct job *job, const char *fmt, ...) LOOM_PRINTF(2, 3);
void job_fail(struct job *job, int code, const char *fmt, ...) LOOM_PRINTF(3, 4);
void job_kill(struct job *job);
void job_kill_all(struct job *job, int sig);
void job_check_done(struct job *job);
void rank_exited(struct job *job, struct rank *r, int status);

/* launch.c */
int node_launch(struct job *job, struct mpx_bind *binder);
const char *mpx_find_program(const char *argv0, char *buf, size_t len);

/* output.c */
bool stream_read(struct stream *s, bool drain);
void stream_close(struct stream *s);
void stream_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg);
void streams_pause(struct job *job, bool pause);
size_t up_queued(const struct job *job);

/* pmihost.c */
struct nodesrv *node_server_start(struct job *job, const struct psrv_config *cfg);
void node_pmi_log(void *arg, enum psrv_log_level level, const char *text);
void tell_gone(struct rank *r);

/* proxy.c */
int mpx_proxy_main(int argc, char **argv);
void up_send(struct job *job, uint8_t type, struct pack *pk);
void up_process(struct job *job);
void up_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg);
void proxy_bye_cb(struct loop *lp, struct loop_timer *t, void *arg);
int proxy_join_tree(struct job *job, int nnodes);
void proxy_leave_tree(struct job *job);

/* srun.c */
const char *mpx_getenv_cb(void *arg, const char *name);
const char *mpx_srun_find(char *buf, size_t len);
int mpx_srun_run(struct mpx_opts *o, const char *srun);

#endif /* LOOM_LAUNCHER_NODE_H */
