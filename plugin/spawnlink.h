/* spawnlink.h - spawn under srun --mpi=loom: srun's spawn server, the child srun's
 * report and the stepd's call (Slurm-free: no Slurm header, so the unit test runs
 * it without a cluster).
 *
 * Contract:
 *   srun (mpi_p_client_prelaunch) starts lspawn_srv: a thread with a TCP listener
 *   (SrunPortRange) whose port reaches every stepd as SLURM_LOOM_SPAWN_PORT.  A stepd
 *   whose task asked to spawn connects, proves with a munge credential that it acts
 *   for the job's uid and this step (treenet's handshake: nonce, credential
 *   "spawn" -> "srun" for jobkey <job>.<step>), and only then is its request frame
 *   (spawnwire.h) read and parsed.  The server checks it (commands, limits), runs
 *   `srun --mpi=<type> --jobid=<job> --overlap --overcommit --ntasks=N [--chdir=D] [--nodelist=H]
 *   -- CMD ARGS` (several commands: --multi-prog FILE and the processes per command in
 *   SLURM_LOOM_SPAWN_APPNUM for the appnum) (the srun binary that runs the server, as the job's user, with the
 *   spawner's id and the preput pairs in its environment), and answers the stepd
 *   once: rc 0 and the new step's "<job>.<step>" when the child srun's prelaunch
 *   reported it (lspawn_child_report, through an inherited pipe), else rc != 0
 *   and why (child srun exited first, timeout, refused).
 *   The child stepds read the spawner's id and preput pairs from their job env
 *   (setup.c) and answer PMI as spawned.
 */
#ifndef LOOM_PLUGIN_SPAWNLINK_H
#define LOOM_PLUGIN_SPAWNLINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LSPAWN_ENV_PORT "SLURM_LOOM_SPAWN_PORT"     /* srun -> stepds */
#define LSPAWN_ENV_SPAWNER "SLURM_LOOM_SPAWNER"     /* child step: spawner's job id */
#define LSPAWN_ENV_NPREPUT "SLURM_LOOM_SPAWN_NPREPUT" /* child step: preput count */
#define LSPAWN_ENV_PPKEY "SLURM_LOOM_SPAWN_PPKEY_"  /* ... and the pairs, from 0 */
#define LSPAWN_ENV_PPVAL "SLURM_LOOM_SPAWN_PPVAL_"
#define LSPAWN_ENV_REPORT "SLURM_LOOM_SPAWN_REPORT" /* child srun: its report pipe */
#define LSPAWN_ENV_APPNUM "SLURM_LOOM_SPAWN_APPNUM" /* child step of several commands:
                                                     * processes per command, "1,2" */

#define LSPAWN_MAX_CHILDREN 64 /* child sruns a spawn server runs at once */
#define LSPAWN_HS_MS 3000      /* handshake + request of one stepd connection */

struct lspawn_srv;

struct lspawn_srv_cfg {
    const char *jobkey; /* the spawner step's "<job>.<step>" */
    uid_t uid;          /* the job's uid */
    uint32_t job_id;    /* --jobid of the child sruns */
    const char *mpi_type;        /* "loom" or "pmi2" (the drop-in) */
    unsigned port_lo, port_hi;   /* SrunPortRange or 0, 0 */
    int auth;                    /* enum treenet_auth */
    void (*log)(void *arg, int error, const char *msg);
    void *log_arg;
};

struct lspawn_srv *lspawn_srv_start(const struct lspawn_srv_cfg *cfg);
int lspawn_srv_port(const struct lspawn_srv *s);
/* Stop the thread (pending spawns answered rc != 0), then wait up to wait_s
 * seconds for the child sruns still running, SIGTERM the rest, and free s. */
void lspawn_srv_stop(struct lspawn_srv *s, int wait_s);

/* In a child srun: if LSPAWN_ENV_REPORT names a pipe, write "ok <jobid>" (or
 * "fail <why>" when jobid is NULL) to it and close it; unsetenv it either way. */
void lspawn_child_report(const char *jobid, const char *why);

/* Stepd side: connect to server ("host:port"), authenticate, send the request
 * body.  Returns the connected non-blocking fd, or -errno with a reason in err. */
int lspawn_call_start(const char *server, const char *jobkey, uid_t uid, int auth,
                      const char *body, size_t len, int timeout_ms, char *err,
                      size_t errlen);
/* Read what fd has of the answer into buf/have (buf: LSPAWN_ANSWER_MAX + 4).
 * 1: complete (*rc, text), 0: more to come, -errno: broken (EOF: -EPIPE). */
int lspawn_answer_read(int fd, char *buf, size_t *have, int *rc, char *text,
                       size_t textlen);

/* Where a command runs from: 0 if cmd names an executable file (with a '/':
 * relative to dir or the cwd; else on PATH), else -ENOENT/-EACCES. */
int lspawn_cmd_check(const char *cmd, const char *dir, const char *path);

#endif /* LOOM_PLUGIN_SPAWNLINK_H */
