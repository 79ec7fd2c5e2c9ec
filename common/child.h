/* child.h - starting one child program: fork (or vfork) and execve with the
 * signal, fd and process-group hygiene every launcher in Loom needs, and the
 * exec failure reported to the caller synchronously.
 *
 * Contract:
 *   child_start() blocks every signal across the fork, so no handler of ours
 *   ever runs in the child.  The child then, with async-signal-safe calls only:
 *     - sets every caught or ignored signal back to SIG_DFL (a SIGHUP that was
 *       ignored stays ignored with keep_hup_ignored: nohup; every ignored one
 *       with keep_ignored), and empties its signal mask just before execve;
 *     - starts a new process group or session if asked, and with
 *       die_with_parent dies (SIGKILL) when its parent does;
 *     - marks every fd >= 3 close-on-exec (unless inherit_fds), then places the
 *       fds given: fd0/fd1/fd2 onto 0/1/2 and each pass[] pair onto its
 *       number, which clears close-on-exec on exactly those;
 *     - changes to wdir, runs setup() if given, and execve()s path with argv
 *       and envp exactly as given: no PATH search, no file opened by name.
 *   If any step fails, the child writes the step and errno to a close-on-exec
 *   pipe and _exit(127)s; the parent reads that pipe until exec closes it, so
 *   child_start() returns only once the program runs or has failed.  On
 *   failure the child is already reaped and the caller gets -errno and
 *   res->stage; child_describe() words it as "cannot run X: reason".
 *
 *   use_vfork: the parent is suspended until the child execs, so nothing of
 *   the address space is copied (fast with a large process); the child only
 *   makes system calls, as above, and setup() must too.  Without it, fork():
 *   what a multi-threaded caller (the plugin inside srun) should use.
 *
 *   The caller keeps SIGCHLD reaping of its own: a started child is its to
 *   wait for.  Thread-safe as far as fork() is; the signal mask used is the
 *   calling thread's.
 */
#ifndef LOOM_CHILD_H
#define LOOM_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum child_pgrp {
    CHILD_PGRP_KEEP,   /* stay in our process group */
    CHILD_PGRP_NEW,    /* setpgid(0, 0): a group of its own */
    CHILD_SESSION_NEW, /* setsid(): a session (and group) of its own, no terminal */
};

/* Where a start failed (struct child_result.stage). */
enum child_stage {
    CHILD_OK = 0,
    CHILD_PIPE,   /* the parent's report pipe */
    CHILD_FORK,   /* fork / vfork */
    CHILD_PDEATH, /* PR_SET_PDEATHSIG, or the parent was gone already */
    CHILD_FDS,    /* placing fds */
    CHILD_CHDIR,  /* wdir */
    CHILD_SETUP,  /* the caller's setup() */
    CHILD_EXEC,   /* execve */
};

/* The signals a child sets back to default (caught or ignored ones, less the
 * ignored ones the spec keeps): child_start scans our dispositions for them at
 * each call (62 sigaction calls) unless the spec points to a scan made once
 * with child_sigs_scan() for a run of starts under unchanged dispositions. */
struct child_sigs {
    int n;
    int sig[_NSIG];
};

struct child_fd {
    int from, to; /* our fd `from` becomes the child's fd `to` */
};

struct child_spec {
    const char *path; /* execve()d as is */
    char *const *argv;
    char *const *envp;           /* the whole environment */
    int fd0, fd1, fd2;           /* onto 0/1/2; -1: the child keeps ours */
    const struct child_fd *pass; /* more fds for the child, npass of them */
    int npass;
    bool inherit_fds; /* true: leave other fds as they are (no close-on-exec sweep) */
    bool keep_hup_ignored; /* an ignored SIGHUP stays ignored (nohup) */
    bool keep_ignored; /* every ignored signal stays ignored, as exec alone leaves it */
    enum child_pgrp pgrp;
    pid_t die_with_parent; /* > 0: our pid; the child gets PR_SET_PDEATHSIG SIGKILL */
    const char *wdir;      /* NULL: ours */
    /* In the child just before execve; async-signal-safe only.  0 or -errno. */
    int (*setup)(void *arg);
    void *setup_arg;
    const struct child_sigs *sigs; /* NULL: scanned at each start */
    bool use_vfork;
};

struct child_result {
    enum child_stage stage;
    int err; /* errno of that stage */
};

/* Fill cs for specs with these two keep_* settings. */
void child_sigs_scan(struct child_sigs *cs, bool keep_hup_ignored, bool keep_ignored);

/* Start it.  Returns the child's pid, or -errno (res says where; the child, if
 * there was one, is reaped). */
pid_t child_start(const struct child_spec *s, struct child_result *res);

/* "cannot run PATH: reason" (with the stage when it was not the exec itself)
 * into buf; returns buf. */
const char *child_describe(const struct child_spec *s, const struct child_result *res,
                           char *buf, size_t len);

#endif /* LOOM_CHILD_H */
