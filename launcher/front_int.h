/* front_int.h - the multi-host front end's state (struct front, one struct
 * fnode per proxy, one struct pend per connection not yet attached) and the
 * functions its files call in each other.  Who owns what:
 *   front.c        mpx_front_main, messages, ending the job (kill, give up),
 *                  signals and --timeout
 *   frontaccept.c  the listener and the connections on it until their proxy
 *                  proved the cookie (mpiexec's side of the handshake)
 *   frontrelay.c   the attached connections: the job frame, output lines,
 *                  exits, failures, a lost proxy
 *   frontstart.c   starting the proxies (fork, or ssh/rsh), reaping the
 *                  launchers and the nested mpiexecs of spawned jobs, waiting
 *                  for them after the job; the proxies' spawn requests (run
 *                  by spawn.c over the job's hosts) and their answers
 * Not a public interface: front.h is.
 */
#ifndef LOOM_LAUNCHER_FRONT_INT_H
#define LOOM_LAUNCHER_FRONT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "args.h"
#include "conn.h"
#include "handshake.h"
#include "hosts.h"
#include "iofwd.h"
#include "jobctl.h"
#include "log.h"
#include "loop.h"
#include "pack.h"
#include "spawn.h"
#include "treenet.h"

#define PENDING_MS 3000 /* default: a connection must finish its handshake */

struct front;

struct fnode {
    struct front *f;
    int id;
    const char *host;
    int nranks;
    bool local; /* started without the remote launcher */
    pid_t pid;  /* launcher (or proxy) process, 0 once reaped */
    int wstatus;
    bool reaped;
    struct mpx_conn c; /* fd -1 until the proxy proved itself; frames queue */
    struct loop_watch *w;
    struct mpx_key key; /* tags of this node's frames */
    bool connected, done;
    bool started; /* MPX_P_STARTED: its ranks were started */
};

struct pend {
    struct front *f;
    struct mpx_conn c;
    struct loop_watch *w;
    uint64_t t0;
    struct pend *next;
    char peer[64];
    bool challenged; /* HELLO2 seen, our PROOF sent */
    int node;
    uint8_t np[MPX_NONCE_LEN], nf[MPX_NONCE_LEN];
};

struct front {
    struct mpx_opts *o;
    struct mpx_layout ly;
    struct loop *lp;
    struct loom_log *log;
    int pmi_level;
    enum mpx_launcher_kind kind;
    char jobid[64];
    char cookie[65];
    char self[PATH_MAX];
    char cwd[PATH_MAX];
    uint64_t t0;
    int timeout_ms; /* proxy connect-back */

    int lfd, spare_fd;
    struct loop_watch *lw;
    int port;
    int port_lo, port_hi;   /* MPIEXEC_PORT_RANGE (0, 0: any) */
    struct rdv_server *rdv; /* the proxies' treenet rendezvous (cookie mode) */
    long frames_in;         /* frames received from the proxies (-v reports it) */
    int hs_ms; /* handshake deadline of a pending connection */
    uint64_t refuse_win;
    int refuse_n;
    long refuse_quiet;
    char addrs_remote[1024], addrs_local[1040];

    struct fnode *nodes;
    int nnodes, nconnected, ndone;
    struct pend *pending;
    int npending;

    struct iofwd_stream *fwd; /* [size * 2] */
    bool *exited;
    int live;
    struct mpx_console con; /* our stdout/stderr (jobctl.h) */

    struct mpx_jobend end; /* ending, exit code, first signal (jobctl.h) */
    /* Spawning (spawn.h): the nested mpiexecs our ranks' spawns started, over
     * the job's host list; when this job was spawned itself, its identity
     * and the report owed to its spawner once every proxy started. */
    struct mpx_hostlist hl;
    struct mpx_spawner *spawner;
    struct mpx_spawned *spawned;
    int nstarted;
    struct loop_timer *connect_timer, *giveup_timer, *timeout_timer, *pend_timer;
    struct loop_watch *sig_w;
};

/* front.c */
void front_msg(struct front *f, const char *fmt, ...) LOOM_PRINTF(2, 3);
void front_fail(struct front *f, int code, const char *fmt, ...) LOOM_PRINTF(3, 4);
void front_begin_kill(struct front *f);
void front_node_finished(struct fnode *nd);
void front_check_done(struct front *f);

/* frontaccept.c */
int front_open_listener(struct front *f, char *err, size_t errlen);
void front_listen_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                     void *arg);
void front_pend_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg);
void front_pend_free(struct front *f, struct pend *p);
void front_connect_timeout_cb(struct loop *lp, struct loop_timer *t, void *arg);
void front_rdv_log(void *arg, int level, const char *msg); /* from the rdv thread */

/* frontrelay.c */
void front_node_send(struct fnode *nd, uint8_t type, struct pack *pk);
void front_node_close(struct fnode *nd);
void front_node_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg);
int front_send_job(struct fnode *nd);

/* frontstart.c */
int front_start_proxy(struct front *f, struct fnode *nd, char *err, size_t errlen);
void front_reap(struct front *f);
void front_wait_launchers(struct front *f);
void front_kill_launcher(struct fnode *nd, int sig);
int front_spawner_setup(struct front *f);
bool front_spawn_request(struct fnode *nd, struct unpack *u);
void front_node_started(struct fnode *nd);
void front_spawned_report(struct front *f, int rc, const char *msg);

#endif /* LOOM_LAUNCHER_FRONT_INT_H */
