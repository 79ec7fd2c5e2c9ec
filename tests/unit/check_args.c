/* check_args.c - unit tests for launcher/args.c (mpiexec's command line).
 *
 * Covers: -n/-np spellings, program arguments that look like options, MPMD
 * segments with per-app and global environment, -x with and without a
 * value, lists, binding and timeout values, and every error the parser
 * reports (unknown option, missing value, bad numbers, no program, stray
 * ':').
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

static char err[256];

static int parse(char **argv, int argc, struct mpx_opts *o)
{
    return mpx_args_parse(argc, argv, o, err, sizeof(err));
}

START_TEST(simple_np)
{
    char *v[] = {"mpiexec", "-n", "4", "./a.out", "x", "y", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 6, &o), 0);
    ck_assert_int_eq(o.napps, 1);
    ck_assert_int_eq(o.nranks, 4);
    ck_assert_int_eq(o.apps[0].np, 4);
    ck_assert_int_eq(o.apps[0].argc, 3);
    ck_assert_str_eq(o.apps[0].argv[0], "./a.out");
    ck_assert_str_eq(o.apps[0].argv[2], "y");
    ck_assert_ptr_null(o.apps[0].argv[3]);
    ck_assert_int_eq(o.tag_output, 0);
    ck_assert_int_eq(o.bind, MPX_BIND_NONE);
    mpx_args_free(&o);
}
END_TEST

START_TEST(spellings)
{
    char *v1[] = {"mpiexec", "--np=3", "--tag-output", "prog", NULL};
    char *v2[] = {"mpiexec", "-np", "2", "-l", "--bind-to", "core", "prog", NULL};
    char *v3[] = {"mpiexec", "prog", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v1, 4, &o), 0);
    ck_assert_int_eq(o.nranks, 3);
    ck_assert_int_eq(o.tag_output, 1);
    mpx_args_free(&o);
    ck_assert_int_eq(parse(v2, 7, &o), 0);
    ck_assert_int_eq(o.nranks, 2);
    ck_assert_int_eq(o.tag_output, 1);
    ck_assert_int_eq(o.bind, MPX_BIND_CORE);
    mpx_args_free(&o);
    /* default: one rank */
    ck_assert_int_eq(parse(v3, 2, &o), 0);
    ck_assert_int_eq(o.nranks, 1);
    mpx_args_free(&o);
}
END_TEST

START_TEST(program_args_are_not_options)
{
    char *v[] = {"mpiexec", "-n", "2", "prog", "-n", "5", "-x", "--foo", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 8, &o), 0);
    ck_assert_int_eq(o.nranks, 2);
    ck_assert_int_eq(o.apps[0].argc, 5);
    ck_assert_str_eq(o.apps[0].argv[1], "-n");
    ck_assert_str_eq(o.apps[0].argv[4], "--foo");
    ck_assert_int_eq(o.genv.n, 0);
    mpx_args_free(&o);
}
END_TEST

START_TEST(double_dash)
{
    char *v[] = {"mpiexec", "-n", "1", "--", "-weird", "arg", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 6, &o), 0);
    ck_assert_str_eq(o.apps[0].argv[0], "-weird");
    ck_assert_int_eq(o.apps[0].argc, 2);
    mpx_args_free(&o);
}
END_TEST

START_TEST(mpmd_and_env)
{
    char *v[] = {"mpiexec", "-genv", "G",        "1",   "-n",  "2",   "-env", "A",
                 "x y",     "./a",   "arg",      ":",   "-x",  "X=5", "-np",  "3",
                 "-wdir",   "/tmp",  "-envlist", "P,Q", "./b", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 21, &o), 0);
    ck_assert_int_eq(o.napps, 2);
    ck_assert_int_eq(o.nranks, 5);
    ck_assert_int_eq(o.apps[0].np, 2);
    ck_assert_int_eq(o.apps[1].np, 3);
    ck_assert_int_eq(o.apps[0].argc, 2);
    ck_assert_str_eq(o.apps[0].argv[1], "arg");
    ck_assert_ptr_null(o.apps[0].argv[2]); /* the ':' is not an argument */
    ck_assert_str_eq(o.apps[1].argv[0], "./b");
    ck_assert_int_eq(o.apps[0].env.n, 1);
    ck_assert_str_eq(o.apps[0].env.v[0], "A=x y");
    ck_assert_ptr_null(o.apps[0].wdir);
    ck_assert_str_eq(o.apps[1].wdir, "/tmp");
    ck_assert_int_eq(o.apps[1].env.n, 2);
    ck_assert_str_eq(o.apps[1].env.v[0], "P");
    ck_assert_str_eq(o.apps[1].env.v[1], "Q");
    /* global env gathered from both segments, in order */
    ck_assert_int_eq(o.genv.n, 2);
    ck_assert_str_eq(o.genv.v[0], "G=1");
    ck_assert_str_eq(o.genv.v[1], "X=5");
    mpx_args_free(&o);
}
END_TEST

START_TEST(export_forms)
{
    char *v[] = {"mpiexec",   "-x",   "HOME", "-x", "A=b=c",
                 "-genvlist", "U,V,", "prog", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 8, &o), 0);
    ck_assert_int_eq(o.genv.n, 4);
    ck_assert_int_eq(o.genv_none, 0);
    ck_assert_str_eq(o.genv.v[0], "HOME");
    ck_assert_str_eq(o.genv.v[1], "A=b=c");
    ck_assert_str_eq(o.genv.v[2], "U");
    ck_assert_str_eq(o.genv.v[3], "V");
    mpx_args_free(&o);
}
END_TEST

START_TEST(genvnone)
{
    char *v[] = {"mpiexec", "-genvall", "-genvnone", "-genv", "A", "1", "prog", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 7, &o), 0);
    ck_assert_int_eq(o.genv_none, 1);
    ck_assert_int_eq(o.genv.n, 1);
    mpx_args_free(&o);
}
END_TEST

START_TEST(flags_and_values)
{
    char *v[] = {"mpiexec",
                 "--timeout",
                 "30",
                 "--fence-timeout=5",
                 "--report-bindings",
                 "-bind-to",
                 "none",
                 "-gwdir",
                 "/",
                 "-v",
                 "prog",
                 NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 11, &o), 0);
    ck_assert_int_eq(o.timeout_s, 30);
    ck_assert_int_eq(o.fence_timeout_s, 5);
    ck_assert_int_eq(o.report_bindings, 1);
    ck_assert_int_eq(o.bind, MPX_BIND_NONE);
    ck_assert_str_eq(o.gwdir, "/");
    ck_assert_int_eq(o.verbose, 1);
    mpx_args_free(&o);
}
END_TEST

START_TEST(help_and_version)
{
    char *v1[] = {"mpiexec", "-h", NULL};
    char *v2[] = {"mpiexec", "--version", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v1, 2, &o), 0);
    ck_assert_int_eq(o.help, 1);
    mpx_args_free(&o);
    ck_assert_int_eq(parse(v2, 2, &o), 0);
    ck_assert_int_eq(o.version, 1);
    mpx_args_free(&o);
    ck_assert_ptr_nonnull(strstr(mpx_args_usage(), "-bind-to"));
}
END_TEST

/* Each row: argv (NULL-terminated, after "mpiexec") and a fragment of the
 * expected message. */
struct bad {
    const char *args[8];
    const char *msg;
};

static const struct bad bads[] = {
    {{"-foo", "prog"}, "unknown option '-foo'"},
    {{"--frobnicate=1", "prog"}, "unknown option '--frobnicate=1'"},
    {{"-n"}, "option '-n' needs a value"},
    {{"-n", "0", "prog"}, "'0' is not a number of ranks"},
    {{"-n", "-3", "prog"}, "is not a number of ranks"},
    {{"-n", "4x", "prog"}, "'4x' is not a number of ranks"},
    {{"-n", "99999999", "prog"}, "is not a number of ranks"},
    {{"-n", "2"}, "no program given"},
    {{NULL}, "no program given"},
    {{"-n", "2", "a", ":"}, "no program after the last ':'"},
    {{":", "a"}, "':' without a program before it"},
    {{"-env", "A"}, "needs a name and a value"},
    {{"-env", "1BAD", "v", "prog"}, "bad variable name '1BAD'"},
    {{"-x", "=v", "prog"}, "bad variable name"},
    {{"-bind-to", "socket", "prog"}, "unsupported binding 'socket'"},
    {{"--timeout", "soon", "prog"}, "'soon' is not a number of seconds"},
    {{"-l=1", "prog"}, "does not take '=VALUE'"},
    {{"-wdir", "", "prog"}, "empty directory"},
    {{"--", ":"}, "no program after '--'"},
};

START_TEST(errors)
{
    const struct bad *b = &bads[_i];
    char *v[10] = {"mpiexec"};
    int n = 1;
    struct mpx_opts o;

    for (int k = 0; b->args[k]; k++)
        v[n++] = (char *)b->args[k];
    v[n] = NULL;
    ck_assert_int_eq(mpx_args_parse(n, v, &o, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, b->msg) != NULL, "case %d: got '%s', want '%s'", _i, err,
                  b->msg);
    mpx_args_free(&o);
}
END_TEST

static Suite *args_suite(void)
{
    Suite *s = suite_create("args");
    TCase *tc = tcase_create("parse");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, simple_np);
    tcase_add_test(tc, spellings);
    tcase_add_test(tc, program_args_are_not_options);
    tcase_add_test(tc, double_dash);
    tcase_add_test(tc, mpmd_and_env);
    tcase_add_test(tc, export_forms);
    tcase_add_test(tc, genvnone);
    tcase_add_test(tc, flags_and_values);
    tcase_add_test(tc, help_and_version);
    tcase_add_loop_test(tc, errors, 0, (int)(sizeof(bads) / sizeof(bads[0])));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(args_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
