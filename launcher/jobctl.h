/* jobctl.h - job control shared by the local job (node.c) and the multi-host
 * front end (front.c): the signal self-pipe, mpiexec's own stdout/stderr with
 * its "mpiexec: ..." lines, the kill grace, the exit-status rule and the
 * process setup every mpiexec mode makes.
 *
 * Contract:
 *   - Signals: mpx_signals_install() catches SIGCHLD, SIGINT, SIGTERM and
 *     SIGHUP (SIGHUP not if it was ignored: nohup) with a handler that only
 *     sets a flag and writes one byte to a non-blocking close-on-exec pipe;
 *     SIGPIPE is ignored.  It returns the pipe's read end for the event loop.
 *     mpx_signals_dispatch() empties the pipe and calls on_term once per
 *     terminating signal that came (SIGINT, SIGTERM, SIGHUP, in that order),
 *     then on_child if SIGCHLD came.  One set of handlers per process.
 *   - Console: rank output gathered in obuf[1] (stdout) and obuf[2] (stderr)
 *     is written whole by mpx_console_flush(); a stream that fails (EPIPE...)
 *     discards what follows.  mpx_console_msg() flushes first, so that an
 *     "mpiexec: ..." line comes after the output it explains.
 *   - Exit rule (as hydra): a rank that exits with code c != 0 makes the job
 *     exit with c; one killed by signal s makes it exit with s (not 128+s,
 *     which would read as mpiexec itself having been killed).
 *   - Job end (struct mpx_jobend, one per job: the local job or proxy in
 *     node.c, the front end in front.c): --timeout, unless the job is already
 *     ending, says "timeout: the job did not finish within S s" and makes the
 *     exit code MPX_EXIT_TIMEOUT (255); the first terminating signal is
 *     recorded for the caller to report and end the job on, and every later
 *     one means "no more grace": SIGKILL at once.
 */
#ifndef LOOM_LAUNCHER_JOBCTL_H
#define LOOM_LAUNCHER_JOBCTL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "iofwd.h"
#include "log.h"

#define MPX_KILL_GRACE_MS 500 /* SIGTERM -> SIGKILL */
#define MPX_EXIT_USAGE 2
#define MPX_EXIT_LAUNCH 127
#define MPX_EXIT_TIMEOUT 255             /* as hydra */
#define MPX_FLUSH_THRESHOLD (256 * 1024) /* console bytes gathered before a write */

/* ---- signals ---- */
int mpx_signals_install(void); /* read end of the self-pipe, or -errno */
void mpx_signals_dispatch(int fd, void (*on_term)(void *arg, int sig),
                          void (*on_child)(void *arg), void *arg);

/* ---- mpiexec's own stdout and stderr ---- */
struct mpx_console {
    const struct loom_log *log; /* where "mpiexec: ..." lines go */
    struct iobuf obuf[3];       /* [1] stdout, [2] stderr */
    bool broken[3];             /* EPIPE etc.: discard further output */
};

void mpx_console_flush(struct mpx_console *c);
void mpx_console_msg(struct mpx_console *c, const char *fmt, ...) LOOM_PRINTF(2, 3);
void mpx_console_vmsg(struct mpx_console *c, const char *fmt, va_list ap);
void mpx_console_free(struct mpx_console *c);
const char *mpx_plural(int n); /* "" for 1, "s" otherwise */

/* ---- the end of a job ---- */
struct mpx_jobend {
    bool ending;       /* the kill sequence started */
    int exit_code;     /* 0 until the first failure decides it */
    int caught_signal; /* the first terminating signal, 0 before one came */
};

/* A terminating signal came.  false for the first: it is recorded, and the
 * caller says so and ends the job.  true for any later one: the caller sends
 * SIGKILL to everything the job runs, at once. */
bool mpx_jobend_signal(struct mpx_jobend *e, int sig);
/* --timeout (timeout_s) expired.  false if the job is already ending; else
 * the timeout line on c, the exit code MPX_EXIT_TIMEOUT, and true: the
 * caller starts the kill. */
bool mpx_jobend_timeout(struct mpx_jobend *e, struct mpx_console *c, int timeout_s);

/* ---- processes ---- */
/* Signal a process we started that leads its own process group: the group
 * (what it started) and the process itself, in case it moved.  Only for
 * unreaped processes: a reaped one's pid may be reused. */
void mpx_kill_group(pid_t pid, int sig);
/* The exit rule for one rank's wait status: 0 for a clean exit, else the
 * job's exit code, with what happened ("exited with code 3", "killed by
 * signal 9 (Killed)", ...) in what. */
int mpx_exit_rule(int status, char *what, size_t len);

/* ---- process setup ---- */
void mpx_sane_stdio(void);   /* fds 0-2 exist, so no pipe or socket lands on them */
void mpx_raise_nofile(void); /* soft open-file limit up to the hard one */
int mpx_env_int(const char *name, int dflt); /* 0..1e9, else dflt */

#endif /* LOOM_LAUNCHER_JOBCTL_H */
