/* child.c - one way to fork and exec a child program (child.h): signals
 * blocked across the fork and set back to default in the child, fds swept
 * close-on-exec and placed, process group, and the exec failure sent back
 * through a close-on-exec pipe so that the caller knows at once.
 *
 * Notes:
 *   - Everything the child needs is computed by the parent into struct plan
 *     first (which signals to reset, the lowest fd number no target uses):
 *     the child makes system calls only, so it is safe after vfork() and
 *     after fork() in a multi-threaded process.
 *   - Placing fds: a source below `hi` (the highest target + 1) could be
 *     overwritten by an earlier dup2, so such sources are first copied above
 *     hi, and so is the report pipe; then each is dup2()ed onto its target,
 *     which also clears close-on-exec on exactly the targets.
 *   - The sweep uses close_range(CLOSE_RANGE_CLOEXEC) where the kernel has it
 *     (Linux >= 5.11) and otherwise F_SETFD over every fd below the limit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

#define CHILD_MAX_PASS 32
#define CHILD_SWEEP_MAX 65536 /* the fallback sweep stops here */

struct plan {
    const struct child_spec *s;
    int errfd; /* the report pipe's write end */
    int hi;    /* fds >= hi are no target */
    int sweep_max;
    const struct child_sigs *sigs; /* to reset */
    struct child_sigs own;         /* scanned here when the spec has none */
};

struct report {
    int stage;
    int err;
};

static _Noreturn void child_fail(int fd, int stage, int err)
{
    struct report r = {stage, err};
    if (write(fd, &r, sizeof(r)) < 0) {
        /* nothing left to tell it with */
    }
    _exit(127);
}

/* Copy fd above hi (close-on-exec) unless it is there already. */
static int lift(int fd, int hi)
{
    return fd >= hi ? fd : fcntl(fd, F_DUPFD_CLOEXEC, hi);
}

/* In the child: never returns.  System calls only. */
static _Noreturn void child_run(const struct plan *p)
{
    const struct child_spec *s = p->s;
    struct sigaction dfl;
    sigset_t none;
    int errfd = p->errfd;
    int src[3 + CHILD_MAX_PASS], dst[3 + CHILD_MAX_PASS], n = 0;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int i = 0; i < p->sigs->n; i++)
        (void)sigaction(p->sigs->sig[i], &dfl, NULL);
    if (s->pgrp == CHILD_SESSION_NEW)
        (void)setsid();
    else if (s->pgrp == CHILD_PGRP_NEW)
        (void)setpgid(0, 0);
    if (s->die_with_parent > 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
            child_fail(errfd, CHILD_PDEATH, errno);
        if (getppid() != s->die_with_parent)
            child_fail(errfd, CHILD_PDEATH, ESRCH);
    }
    if (!s->inherit_fds) {
        int swept = -1;
#ifdef CLOSE_RANGE_CLOEXEC
        swept = close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
        for (int fd = 3; swept < 0 && fd < p->sweep_max; fd++)
            (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    /* the report pipe and every source out of the targets' way */
    int e = lift(errfd, p->hi);
    if (e < 0)
        child_fail(errfd, CHILD_FDS, errno);
    errfd = e;
    const int std[3] = {s->fd0, s->fd1, s->fd2};
    for (int k = 0; k < 3; k++)
        if (std[k] >= 0) {
            src[n] = std[k];
            dst[n++] = k;
        }
    for (int k = 0; k < s->npass; k++) {
        src[n] = s->pass[k].from;
        dst[n++] = s->pass[k].to;
    }
    for (int k = 0; k < n; k++)
        if ((src[k] = lift(src[k], p->hi)) < 0)
            child_fail(errfd, CHILD_FDS, errno);
    for (int k = 0; k < n; k++)
        if (dup2(src[k], dst[k]) < 0)
            child_fail(errfd, CHILD_FDS, errno);
    if (s->wdir && chdir(s->wdir) < 0)
        child_fail(errfd, CHILD_CHDIR, errno);
    if (s->setup) {
        int rc = s->setup(s->setup_arg);
        if (rc < 0)
            child_fail(errfd, CHILD_SETUP, -rc);
    }
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    execve(s->path, s->argv, s->envp);
    child_fail(errfd, CHILD_EXEC, errno);
}

/* A function of its own so that no caller's variable lives across vfork. */
static __attribute__((noinline)) pid_t fork_run(const struct plan *p)
{
    pid_t pid = p->s->use_vfork ? vfork() : fork();
    if (pid == 0)
        child_run(p);
    return pid;
}

void child_sigs_scan(struct child_sigs *cs, bool keep_hup_ignored, bool keep_ignored)
{
    struct sigaction old;

    /* caught signals would run our handlers in the child; ignored ones stay
     * ignored across exec: both go back to default */
    cs->n = 0;
    for (int sig = 1; sig < _NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &old) < 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            continue;
        bool ign = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
        if (ign && (keep_ignored || (sig == SIGHUP && keep_hup_ignored)))
            continue;
        cs->sig[cs->n++] = sig;
    }
}

static int plan_make(struct plan *p, const struct child_spec *s)
{
    memset(p, 0, sizeof(*p));
    p->s = s;
    if (s->npass < 0 || s->npass > CHILD_MAX_PASS)
        return -EINVAL;
    p->hi = 3;
    for (int k = 0; k < s->npass; k++) {
        if (s->pass[k].to < 0 || s->pass[k].from < 0)
            return -EBADF;
        if (s->pass[k].to >= p->hi)
            p->hi = s->pass[k].to + 1;
    }
    struct rlimit rl;
    p->sweep_max = CHILD_SWEEP_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)p->sweep_max)
        p->sweep_max = (int)rl.rlim_cur;
    if (s->sigs)
        p->sigs = s->sigs;
    else {
        child_sigs_scan(&p->own, s->keep_hup_ignored, s->keep_ignored);
        p->sigs = &p->own;
    }
    return 0;
}

pid_t child_start(const struct child_spec *s, struct child_result *res)
{
    struct plan p;
    struct report rep;
    sigset_t all, saved;
    int pfd[2], rc;

    res->stage = CHILD_OK;
    res->err = 0;
    if ((rc = plan_make(&p, s)) < 0) {
        res->stage = CHILD_FDS;
        res->err = -rc;
        return rc;
    }
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        res->stage = CHILD_PIPE;
        res->err = errno;
        return -res->err;
    }
    p.errfd = pfd[1];
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pid_t pid = fork_run(&p);
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        res->stage = CHILD_FORK;
        res->err = fork_errno;
        return -fork_errno;
    }
    /* EOF: execve closed the pipe.  A report: the child is in _exit(). */
    ssize_t n;
    do
        n = read(pfd[0], &rep, sizeof(rep));
    while (n < 0 && errno == EINTR);
    close(pfd[0]);
    if (n == 0)
        return pid;
    if (n == (ssize_t)sizeof(rep) && rep.stage > CHILD_OK && rep.stage <= CHILD_EXEC &&
        rep.err > 0) {
        res->stage = (enum child_stage)rep.stage;
        res->err = rep.err;
    } else { /* cannot happen: a short or odd report */
        res->stage = CHILD_EXEC;
        res->err = EIO;
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return -res->err;
}

const char *child_describe(const struct child_spec *s, const struct child_result *res,
                           char *buf, size_t len)
{
    const char *why = strerror(res->err);
    const char *path = s->path ? s->path : "(null)";

    switch (res->stage) {
    case CHILD_OK:
        snprintf(buf, len, "%s started", path);
        break;
    case CHILD_PIPE:
        snprintf(buf, len, "cannot run %s: pipe: %s", path, why);
        break;
    case CHILD_FORK:
        snprintf(buf, len, "cannot run %s: fork: %s", path, why);
        break;
    case CHILD_PDEATH:
        snprintf(buf, len, "cannot run %s: cannot tie it to its parent: %s", path, why);
        break;
    case CHILD_FDS:
        snprintf(buf, len, "cannot run %s: cannot pass it its file descriptors: %s", path,
                 why);
        break;
    case CHILD_CHDIR:
        snprintf(buf, len, "cannot run %s: cannot change to directory %s: %s", path,
                 s->wdir ? s->wdir : "", why);
        break;
    case CHILD_SETUP:
        snprintf(buf, len, "cannot run %s: setting it up: %s", path, why);
        break;
    case CHILD_EXEC:
    default:
        snprintf(buf, len, "cannot run %s: %s", path, why);
        break;
    }
    return buf;
}
