/* jobctl.c - job control shared by every mpiexec mode: the signal self-pipe,
 * mpiexec's console (rank output and "mpiexec: ..." lines), the exit-status
 * rule, the job-end rules (--timeout, a second signal), process-group kills
 * and process setup.  Contract: jobctl.h. */
#include "config.h"

#include "jobctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"

/* ---- signals ------------------------------------------------------------- */

/* The self-pipe and the pending flags: the only state a signal handler
 * touches.  The flags carry which signals came (a full pipe cannot lose
 * one); the pipe only wakes the loop. */
static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t sig_pending[NSIG];

static void on_signal(int sig)
{
    int saved = errno;
    char c = 0;

    if (sig > 0 && sig < NSIG)
        sig_pending[sig] = 1;
    if (write(sig_pipe[1], &c, 1) < 0) {
        /* pipe full: a wake-up is pending anyway */
    }
    errno = saved;
}

int mpx_signals_install(void)
{
    struct sigaction sa;
    static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};

    if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        /* Respect nohup.  SIGINT is handled even if ignored: shells
         * ignore it for background jobs, and the launcher must still stop
         * its job when told to. */
        if (sigs[i] == SIGHUP && sigaction(sigs[i], NULL, &old) == 0 &&
            old.sa_handler == SIG_IGN)
            continue;
        if (sigaction(sigs[i], &sa, NULL) < 0)
            return -errno;
    }
    signal(SIGPIPE, SIG_IGN);
    return sig_pipe[0];
}

void mpx_signals_dispatch(int fd, void (*on_term)(void *arg, int sig),
                          void (*on_child)(void *arg), void *arg)
{
    static const int terms[] = {SIGINT, SIGTERM, SIGHUP};
    char buf[256];

    while (fdio_read(fd, buf, sizeof(buf)) > 0)
        ;
    for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
        if (sig_pending[terms[i]]) {
            sig_pending[terms[i]] = 0;
            on_term(arg, terms[i]);
        }
    }
    if (sig_pending[SIGCHLD]) {
        sig_pending[SIGCHLD] = 0;
        on_child(arg);
    }
}

/* ---- console ------------------------------------------------------------- */

void mpx_console_flush(struct mpx_console *c)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct iobuf *b = &c->obuf[fd];
        if (b->len == 0)
            continue;
        if (!c->broken[fd] && fdio_write_full(fd, b->p, b->len) < 0)
            c->broken[fd] = true;
        b->len = 0;
    }
}

void mpx_console_vmsg(struct mpx_console *c, const char *fmt, va_list ap)
{
    mpx_console_flush(c);
    loom_vlogf(c->log, LOOM_LOG_ERROR, fmt, ap);
}

void mpx_console_msg(struct mpx_console *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mpx_console_vmsg(c, fmt, ap);
    va_end(ap);
}

void mpx_console_free(struct mpx_console *c)
{
    for (int k = 0; k < 3; k++)
        iobuf_free(&c->obuf[k]);
}

const char *mpx_plural(int n)
{
    return n == 1 ? "" : "s";
}

/* ---- the end of a job ---------------------------------------------------- */

bool mpx_jobend_signal(struct mpx_jobend *e, int sig)
{
    if (e->caught_signal)
        return true;
    e->caught_signal = sig;
    return false;
}

bool mpx_jobend_timeout(struct mpx_jobend *e, struct mpx_console *c, int timeout_s)
{
    if (e->ending)
        return false;
    mpx_console_msg(c, "timeout: the job did not finish within %d s", timeout_s);
    e->exit_code = MPX_EXIT_TIMEOUT;
    return true;
}

/* ---- processes ----------------------------------------------------------- */

void mpx_kill_group(pid_t pid, int sig)
{
    if (pid <= 0)
        return;
    kill(-pid, sig);
    kill(pid, sig);
}

int mpx_exit_rule(int status, char *what, size_t len)
{
    if (WIFEXITED(status)) {
        snprintf(what, len, "exited with code %d", WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        snprintf(what, len, "killed by signal %d (%s)", sig, strsignal(sig));
        return sig;
    }
    snprintf(what, len, "ended with wait status 0x%x", status);
    return 1;
}

/* ---- process setup ------------------------------------------------------- */

void mpx_sane_stdio(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    }
}

void mpx_raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int mpx_env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt;
    v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1000000000)
        return dflt;
    return (int)v;
}
