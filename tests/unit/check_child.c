/* check_child.c - common/child.c: an exec failure comes back as errno and stage
 * (child reaped), the child's fds (only the ones passed; swapped targets), its
 * signal mask and dispositions reset, its process group or session, chdir and
 * setup failures, a parent that is gone; each with fork and with vfork.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

extern char **environ;

static bool vf; /* the loop index of each test: 0 fork, 1 vfork */

static struct child_spec spec(const char *path, char *const *argv)
{
    struct child_spec s = {
        .path = path,
        .argv = argv,
        .envp = environ,
        .fd0 = -1,
        .fd1 = -1,
        .fd2 = -1,
        .use_vfork = vf,
    };
    return s;
}

/* Run s with its stdout into a pipe; the output in buf, the exit status back. */
static int run_capture(struct child_spec *s, char *buf, size_t len)
{
    int p[2];
    struct child_result r;

    ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
    s->fd1 = p[1];
    pid_t pid = child_start(s, &r);
    ck_assert_msg(pid > 0, "child_start: %s", strerror(r.err));
    close(p[1]);
    size_t have = 0;
    ssize_t n;
    while ((n = read(p[0], buf + have, len - 1 - have)) > 0)
        have += (size_t)n;
    buf[have] = '\0';
    close(p[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return st;
}

static void no_child_left(void)
{
    errno = 0;
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}

START_TEST(exec_failure_reported)
{
    vf = _i;
    char *argv[] = {"nope", NULL};
    struct child_spec s = spec("/nonexistent/loom-nope", argv);
    struct child_result r;
    char msg[200];

    ck_assert_int_eq(child_start(&s, &r), -ENOENT);
    ck_assert_int_eq(r.stage, CHILD_EXEC);
    ck_assert_int_eq(r.err, ENOENT);
    ck_assert_str_eq(child_describe(&s, &r, msg, sizeof(msg)),
                     "cannot run /nonexistent/loom-nope: No such file or directory");
    no_child_left(); /* reaped already */

    char tmp[] = "/tmp/check_child.XXXXXX"; /* a file without any x bit */
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(chmod(tmp, 0644), 0);
    s = spec(tmp, argv);
    int rc = child_start(&s, &r);
    unlink(tmp);
    ck_assert_int_eq(rc, -EACCES);
    ck_assert_int_eq(r.stage, CHILD_EXEC);
    no_child_left();
}
END_TEST

START_TEST(chdir_failure_reported)
{
    vf = _i;
    char *argv[] = {"true", NULL};
    struct child_spec s = spec("/bin/true", argv);
    struct child_result r;
    char msg[200];

    s.wdir = "/nonexistent-dir";
    ck_assert_int_eq(child_start(&s, &r), -ENOENT);
    ck_assert_int_eq(r.stage, CHILD_CHDIR);
    ck_assert_str_eq(child_describe(&s, &r, msg, sizeof(msg)),
                     "cannot run /bin/true: cannot change to directory /nonexistent-dir: "
                     "No such file or directory");
    no_child_left();
}
END_TEST

static int setup_fails(void *arg)
{
    (void)arg;
    return -EPERM;
}

START_TEST(setup_and_parent_failures)
{
    vf = _i;
    char *argv[] = {"true", NULL};
    struct child_spec s = spec("/bin/true", argv);
    struct child_result r;

    s.setup = setup_fails;
    ck_assert_int_eq(child_start(&s, &r), -EPERM);
    ck_assert_int_eq(r.stage, CHILD_SETUP);
    no_child_left();

    s = spec("/bin/true", argv);
    s.die_with_parent = 1; /* not our pid: "the parent is gone already" */
    ck_assert_int_eq(child_start(&s, &r), -ESRCH);
    ck_assert_int_eq(r.stage, CHILD_PDEATH);
    no_child_left();

    s.die_with_parent = getpid(); /* ours: it runs */
    pid_t pid = child_start(&s, &r);
    ck_assert_int_gt(pid, 0);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

/* Which of fds 3..9 the child has open. */
static char *const fds_argv[] = {
    "sh", "-c",
    "for n in 3 4 5 6 7 8 9; do if (: >&$n) 2>/dev/null; then printf '%s ' $n; fi; done",
    NULL};

START_TEST(only_passed_fds)
{
    vf = _i;
    char out[256];
    int sv[2];
    struct child_spec s = spec("/bin/sh", fds_argv);

    /* a leak: no close-on-exec, at 4 */
    int leak = open("/dev/null", O_RDONLY);
    ck_assert_int_ge(leak, 0);
    ck_assert_int_eq(dup2(leak, 4), 4);
    if (leak != 4)
        close(leak);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct child_fd pass[] = {{sv[1], 7}};
    s.pass = pass;
    s.npass = 1;
    int st = run_capture(&s, out, sizeof(out));
    ck_assert(WIFEXITED(st));
    ck_assert_str_eq(out, "7 ");

    /* inherit_fds: the leak stays */
    s.inherit_fds = true;
    run_capture(&s, out, sizeof(out));
    ck_assert_msg(strstr(out, "4 ") != NULL && strstr(out, "7 ") != NULL, "%s", out);
    close(4);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

/* Targets that are each other's sources: 6 -> 5 and 5 -> 6. */
START_TEST(swapped_targets)
{
    vf = _i;
    char *argv[] = {"sh", "-c", "echo five >&5; echo six >&6", NULL};
    struct child_spec s = spec("/bin/sh", argv);
    struct child_result r;
    int a[2], b[2];
    char buf[32];

    ck_assert_int_eq(pipe2(a, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(b, O_CLOEXEC), 0);
    /* a's write end at 6, b's at 5; everything else out of the way */
    for (int k = 0; k < 2; k++) {
        int na = fcntl(a[k], F_DUPFD_CLOEXEC, 20), nb = fcntl(b[k], F_DUPFD_CLOEXEC, 20);
        close(a[k]);
        close(b[k]);
        a[k] = na;
        b[k] = nb;
    }
    int aw = a[1], bw = b[1];
    ck_assert_int_eq(dup3(aw, 6, O_CLOEXEC), 6);
    ck_assert_int_eq(dup3(bw, 5, O_CLOEXEC), 5);
    close(aw);
    close(bw);
    struct child_fd pass[] = {{6, 5}, {5, 6}};
    s.pass = pass;
    s.npass = 2;
    pid_t pid = child_start(&s, &r);
    ck_assert_int_gt(pid, 0);
    close(5);
    close(6);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    ssize_t n = read(a[0], buf, sizeof(buf) - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "five\n"); /* a sat at 6, which became the child's 5 */
    n = read(b[0], buf, sizeof(buf) - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "six\n");
    close(a[0]);
    close(b[0]);
}
END_TEST

static void on_term(int sig)
{
    (void)sig;
}

/* The child's blocked and ignored sets as /proc shows them after exec, without
 * signals 32 and 33: the C library keeps them to itself (sigaction refuses
 * them), so whatever the test's own parent left there is no child.c matter. */
static char *const status_argv[] = {
    "sh", "-c",
    "exec awk '/^Sig(Blk|Ign):/ { v = 0; for (i = 9; i <= 16; i++) v = v * 16 + "
    "index(\"0123456789abcdef\", substr($2, i, 1)) - 1; "
    "printf \"%s %x\\n\", $1, v % 2147483648 }' /proc/self/status",
    NULL};

START_TEST(signals_reset)
{
    vf = _i;
    char out[256];
    struct child_spec s = spec("/bin/sh", status_argv);
    struct sigaction sa;
    sigset_t set;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);

    run_capture(&s, out, sizeof(out));
    ck_assert_str_eq(out, "SigBlk: 0\nSigIgn: 0\n");
    s.keep_hup_ignored = true; /* nohup: SIGHUP (bit 0) stays ignored, nothing else */
    run_capture(&s, out, sizeof(out));
    ck_assert_str_eq(out, "SigBlk: 0\nSigIgn: 1\n");
    s.keep_hup_ignored = false;
    s.keep_ignored = true; /* as exec alone: HUP, INT, PIPE (bits 0, 1, 12) stay */
    run_capture(&s, out, sizeof(out));
    ck_assert_str_eq(out, "SigBlk: 0\nSigIgn: 1003\n");
    /* a scan made once stands for the keep_* flags: HUP kept as scanned */
    struct child_sigs once;
    child_sigs_scan(&once, true, false);
    s.keep_ignored = false;
    s.sigs = &once;
    run_capture(&s, out, sizeof(out));
    ck_assert_str_eq(out, "SigBlk: 0\nSigIgn: 1\n");
    /* and ours are what they were */
    sigprocmask(SIG_SETMASK, NULL, &set);
    ck_assert(sigismember(&set, SIGUSR1) && sigismember(&set, SIGCHLD));
    sigaction(SIGTERM, NULL, &sa);
    ck_assert(sa.sa_handler == on_term);
}
END_TEST

START_TEST(process_group)
{
    vf = _i;
    char *argv[] = {"sleep", "10", NULL};
    struct child_spec s = spec("/bin/sleep", argv);
    struct child_result r;
    const enum child_pgrp kinds[] = {CHILD_PGRP_KEEP, CHILD_PGRP_NEW, CHILD_SESSION_NEW};

    for (int k = 0; k < 3; k++) {
        s.pgrp = kinds[k];
        pid_t pid = child_start(&s, &r);
        ck_assert_int_gt(pid, 0);
        /* the exec happened, so did everything before it */
        if (kinds[k] == CHILD_PGRP_KEEP) {
            ck_assert_int_eq(getpgid(pid), getpgrp());
            ck_assert_int_eq(getsid(pid), getsid(0));
        } else if (kinds[k] == CHILD_PGRP_NEW) {
            ck_assert_int_eq(getpgid(pid), pid);
            ck_assert_int_eq(getsid(pid), getsid(0));
        } else {
            ck_assert_int_eq(getpgid(pid), pid);
            ck_assert_int_eq(getsid(pid), pid);
        }
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    }
}
END_TEST

START_TEST(bad_spec)
{
    char *argv[] = {"true", NULL};
    struct child_spec s = spec("/bin/true", argv);
    struct child_result r;
    struct child_fd pass[] = {{-1, 5}};

    s.pass = pass;
    s.npass = 1;
    ck_assert_int_eq(child_start(&s, &r), -EBADF);
    s.npass = 1000;
    ck_assert_int_eq(child_start(&s, &r), -EINVAL);
    no_child_left();
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("child");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, exec_failure_reported, 0, 2);
    tcase_add_loop_test(tc, chdir_failure_reported, 0, 2);
    tcase_add_loop_test(tc, setup_and_parent_failures, 0, 2);
    tcase_add_loop_test(tc, only_passed_fds, 0, 2);
    tcase_add_loop_test(tc, swapped_targets, 0, 2);
    tcase_add_loop_test(tc, signals_reset, 0, 2);
    tcase_add_loop_test(tc, process_group, 0, 2);
    tcase_add_test(tc, bad_spec);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
