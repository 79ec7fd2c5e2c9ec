/* check_jobctl.c - unit tests for the launcher's shared job control
 * (launcher/jobctl.c) and rank environment (launcher/env.c), which the
 * local job and the multi-host front end both use.
 *
 * Covers: the exit-status rule (code, signal number, other statuses) and its
 * words; the signal self-pipe: terminating signals dispatched in order, then
 * SIGCHLD, each once; the environment order (inherited, -genv/-x, -env),
 * the per-rank variables never inherited, -genvnone, a bare -x K taking
 * mpiexec's value or nothing; envp set/set_default; the job-end rules:
 * --timeout's line and exit code (not when already ending), the first signal
 * recorded and every later one asking for SIGKILL.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "env.h"
#include "jobctl.h"

START_TEST(exit_rule)
{
    char what[96];

    ck_assert_int_eq(mpx_exit_rule(W_EXITCODE(0, 0), what, sizeof(what)), 0);
    ck_assert_int_eq(mpx_exit_rule(W_EXITCODE(3, 0), what, sizeof(what)), 3);
    ck_assert_str_eq(what, "exited with code 3");
    /* the signal number itself, as hydra: not 128 + sig */
    ck_assert_int_eq(mpx_exit_rule(W_EXITCODE(0, SIGKILL), what, sizeof(what)), SIGKILL);
    ck_assert(strncmp(what, "killed by signal 9 (", 20) == 0);
    ck_assert_int_eq(mpx_exit_rule(W_STOPCODE(SIGSTOP), what, sizeof(what)), 1);
    ck_assert(strncmp(what, "ended with wait status 0x", 25) == 0);
}
END_TEST

static int got[8], ngot;

static void on_term(void *arg, int sig)
{
    (void)arg;
    if (ngot < 8)
        got[ngot++] = sig;
}

static void on_child(void *arg)
{
    if (ngot < 8)
        got[ngot++] = SIGCHLD;
}

START_TEST(signals_dispatch)
{
    int fd = mpx_signals_install();

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(mpx_signals_install(), fd); /* one self-pipe per process */
    raise(SIGCHLD);
    raise(SIGTERM);
    raise(SIGINT);
    raise(SIGTERM); /* twice before the loop looks: seen once */
    mpx_signals_dispatch(fd, on_term, on_child, NULL);
    ck_assert_int_eq(ngot, 3);
    ck_assert_int_eq(got[0], SIGINT);
    ck_assert_int_eq(got[1], SIGTERM);
    ck_assert_int_eq(got[2], SIGCHLD);
    ngot = 0;
    mpx_signals_dispatch(fd, on_term, on_child, NULL); /* pipe empty: nothing */
    ck_assert_int_eq(ngot, 0);
}
END_TEST

static int collect(void *arg, const char *kv)
{
    struct mpx_envv *e = arg;
    return mpx_envv_set(e, kv);
}

static int find(const struct mpx_envv *e, const char *kv)
{
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->v[i], kv) == 0)
            return i;
    return -1;
}

START_TEST(app_env_order)
{
    char *genv[] = {"B=2", "LOOMT_A", "LOOMT_UNSET", NULL};
    char *aenv[] = {"C=3", "B=4", NULL};
    struct mpx_app app = {.env = {.v = aenv, .n = 2}};
    struct mpx_opts o = {.genv = {.v = genv, .n = 3}};
    struct mpx_envv e = {0};

    setenv("LOOMT_A", "1", 1);
    setenv("PMI_RANK", "5", 1);
    unsetenv("LOOMT_UNSET");
    ck_assert_int_eq(mpx_envv_app(&e, &o, &app), 0);
    ck_assert_int_ge(find(&e, "LOOMT_A=1"), 0);
    ck_assert_int_lt(find(&e, "PMI_RANK=5"), 0); /* set per rank, never inherited */
    ck_assert_int_lt(find(&e, "B=2"), 0);        /* the segment's -env wins */
    ck_assert_int_ge(find(&e, "B=4"), 0);
    ck_assert_int_ge(find(&e, "C=3"), 0);
    for (int i = 0; i < e.n; i++)
        ck_assert(strncmp(e.v[i], "LOOMT_UNSET", 11) != 0);

    /* -genvnone: only what the options name */
    o.genv_none = 1;
    ck_assert_int_eq(mpx_envv_app(&e, &o, &app), 0);
    ck_assert_int_eq(e.n, 3);
    ck_assert_str_eq(e.v[0], "B=4");
    ck_assert_str_eq(e.v[1], "LOOMT_A=1");
    ck_assert_str_eq(e.v[2], "C=3");

    /* the front end walks the same list in the same order */
    struct mpx_envv walk = {0};
    ck_assert_int_eq(mpx_app_env_each(&o, &app, collect, &walk), 0);
    ck_assert_int_eq(walk.n, 3);
    free(walk.v);

    ck_assert_int_eq(mpx_envv_set_default(&e, "C=9"), 0);
    ck_assert_str_eq(e.v[2], "C=3"); /* the user's value wins */
    ck_assert_int_eq(mpx_envv_set_default(&e, "D=1"), 0);
    ck_assert_str_eq(e.v[3], "D=1");
    free(e.v);
}
END_TEST

static char logged[256];

static void sink(void *arg, enum loom_log_level level, const char *ident,
                 const char *line)
{
    (void)arg;
    (void)level;
    (void)ident;
    snprintf(logged, sizeof(logged), "%s", line);
}

START_TEST(jobend_rules)
{
    struct loom_log lg;
    struct mpx_console con = {.log = &lg};
    struct mpx_jobend e = {0};

    loom_log_init(&lg, "mpiexec", LOOM_LOG_ERROR);
    loom_log_set_sink(&lg, sink, NULL);
    /* --timeout: the line, exit code 255, the caller kills */
    ck_assert(mpx_jobend_timeout(&e, &con, 7));
    ck_assert_int_eq(e.exit_code, MPX_EXIT_TIMEOUT);
    ck_assert_int_eq(MPX_EXIT_TIMEOUT, 255);
    ck_assert_ptr_nonnull(strstr(logged, "timeout: the job did not finish within 7 s"));
    /* already ending (a rank failed first): its code stays, nothing said */
    struct mpx_jobend e2 = {.ending = true, .exit_code = 3};
    logged[0] = '\0';
    ck_assert(!mpx_jobend_timeout(&e2, &con, 7));
    ck_assert_int_eq(e2.exit_code, 3);
    ck_assert_str_eq(logged, "");
    /* signals: the first is recorded, every later one means SIGKILL now */
    ck_assert(!mpx_jobend_signal(&e, SIGINT));
    ck_assert_int_eq(e.caught_signal, SIGINT);
    ck_assert(mpx_jobend_signal(&e, SIGTERM));
    ck_assert(mpx_jobend_signal(&e, SIGINT));
    ck_assert_int_eq(e.caught_signal, SIGINT);
    mpx_console_free(&con);
}
END_TEST

static Suite *jobctl_suite(void)
{
    Suite *s = suite_create("jobctl");
    TCase *tc = tcase_create("jobctl");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, exit_rule);
    tcase_add_test(tc, signals_dispatch);
    tcase_add_test(tc, app_env_order);
    tcase_add_test(tc, jobend_rules);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jobctl_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
