/* check_args.c - unit tests for launcher/args.c (mpiexec's command line).
 *
 * Covers: -n/-np spellings, program arguments that look like options, MPMD
 * segments with per-app and global environment, -x with and without a
 * value, lists, binding and timeout values, and every error the parser
 * reports (unknown option, missing value, bad numbers, no program, stray
 * ':').  And launcher/slurm.c: when mpiexec hands the job to srun
 * (SLURM_JOB_ID, -launcher, --no-slurm, LOOM_MPIEXEC_LAUNCHER) and the exact
 * srun argv, environment and --multi-prog text each option maps to.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "slurm.h"

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
    {{"-launcher", "telnet", "prog"}, "unknown launcher 'telnet'"},
    {{"--mpi=a,b", "prog"}, "bad MPI type"},
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

/* A fake environment: NULL-terminated "K=V" list. */
static const char *fake_getenv(void *arg, const char *name)
{
    size_t n = strlen(name);

    for (char **p = arg; *p; p++)
        if (strncmp(*p, name, n) == 0 && (*p)[n] == '=')
            return *p + n + 1;
    return NULL;
}

static char *joined(char **v)
{
    static char buf[1024];

    buf[0] = '\0';
    for (int i = 0; v && v[i]; i++) {
        if (i)
            strcat(buf, "|");
        strcat(buf, v[i]);
    }
    return buf;
}

/* Parse args (NULL terminated, without argv[0]) and build srun's argv. */
static int build(const char **args, char **env, struct mpx_opts *o, struct mpx_srun *s)
{
    char *v[32] = {"mpiexec"};
    int n = 1;

    for (int k = 0; args[k]; k++)
        v[n++] = (char *)args[k];
    v[n] = NULL;
    ck_assert_int_eq(mpx_args_parse(n, v, o, err, sizeof(err)), 0);
    return mpx_srun_build(o, fake_getenv, env, "srun", "/tmp/mp", s, err, sizeof(err));
}

START_TEST(host_options)
{
    char *v[] = {"mpiexec", "-hosts", "a,b:2", "-ppn", "3", "-launcher", "ssh",
                 "-bootstrap-exec", "ssh -p 22", "-machinefile", "hf", "prog", NULL};
    char *v2[] = {"mpiexec", "--launcher=rsh", "-f", "hf2", "--launcher-exec=x", "prog",
                  NULL};
    char *bad[] = {"mpiexec", "-ppn", "0", "prog", NULL};
    char *bad2[] = {"mpiexec", "-hosts", "", "prog", NULL};
    struct mpx_opts o;

    ck_assert_int_eq(parse(v, 12, &o), 0);
    ck_assert_str_eq(o.hosts, "a,b:2");
    ck_assert_int_eq(o.ppn, 3);
    ck_assert_int_eq(o.launcher, MPX_LAUNCHER_SSH);
    ck_assert_str_eq(o.launcher_exec, "ssh -p 22");
    ck_assert_str_eq(o.hostfile, "hf");
    ck_assert_int_eq(o.apps[0].np_set, 0);
    mpx_args_free(&o);
    ck_assert_int_eq(parse(v2, 6, &o), 0);
    ck_assert_int_eq(o.launcher, MPX_LAUNCHER_RSH);
    ck_assert_str_eq(o.hostfile, "hf2");
    ck_assert_str_eq(o.launcher_exec, "x");
    mpx_args_free(&o);
    ck_assert_int_eq(parse(bad, 4, &o), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "ranks per host"));
    mpx_args_free(&o);
    ck_assert_int_eq(parse(bad2, 4, &o), -EINVAL);
    mpx_args_free(&o);
}
END_TEST

START_TEST(slurm_decide_hosts)
{
    char *job[] = {"SLURM_JOB_ID=12", NULL};
    char *jobssh[] = {"SLURM_JOB_ID=12", "LOOM_MPIEXEC_LAUNCHER=ssh", NULL};
    struct mpx_opts o;

    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, jobssh, 1, err, sizeof(err)), 0);
    o.hosts = "a,b"; /* a host list without -launcher: ssh, not srun */
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, job, 1, err, sizeof(err)), 0);
    o.launcher = MPX_LAUNCHER_SLURM;
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, job, 1, err, sizeof(err)), 1);
    o.launcher = MPX_LAUNCHER_SSH;
    o.hosts = NULL;
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, job, 1, err, sizeof(err)), 0);
}
END_TEST

START_TEST(slurm_decide)
{
    char *none[] = {NULL};
    char *job[] = {"SLURM_JOB_ID=12", NULL};
    char *jobfork[] = {"SLURM_JOB_ID=12", "LOOM_MPIEXEC_LAUNCHER=fork", NULL};
    char *slurm[] = {"LOOM_MPIEXEC_LAUNCHER=slurm", NULL};
    char *bad[] = {"LOOM_MPIEXEC_LAUNCHER=telnet", NULL};
    struct mpx_opts o;

    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, none, 1, err, sizeof(err)), 0);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, job, 1, err, sizeof(err)), 1);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, job, 0, err, sizeof(err)), 0);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, jobfork, 1, err, sizeof(err)), 0);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, slurm, 1, err, sizeof(err)), 1);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, slurm, 0, err, sizeof(err)),
                     -EINVAL);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, bad, 1, err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "'telnet'"));
    o.launcher = MPX_LAUNCHER_FORK; /* -launcher fork, --no-slurm */
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, job, 1, err, sizeof(err)), 0);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, slurm, 1, err, sizeof(err)), 0);
    o.launcher = MPX_LAUNCHER_SLURM; /* -launcher slurm: no job needed, srun is */
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, jobfork, 1, err, sizeof(err)), 1);
    ck_assert_int_eq(mpx_slurm_decide(&o, fake_getenv, none, 0, err, sizeof(err)),
                     -EINVAL);
}
END_TEST

START_TEST(slurm_options_parse)
{
    const char *a1[] = {"-launcher", "fork", "p", NULL};
    const char *a2[] = {"--no-slurm", "p", NULL};
    const char *a3[] = {"-bootstrap=slurm", "--mpi", "pmi2", "p", NULL};
    struct mpx_opts o;
    char *v[8] = {"mpiexec"};

    for (int k = 0; a1[k]; k++)
        v[k + 1] = (char *)a1[k];
    ck_assert_int_eq(mpx_args_parse(4, v, &o, err, sizeof(err)), 0);
    ck_assert_int_eq(o.launcher, MPX_LAUNCHER_FORK);
    mpx_args_free(&o);
    for (int k = 0; a2[k]; k++)
        v[k + 1] = (char *)a2[k];
    ck_assert_int_eq(mpx_args_parse(3, v, &o, err, sizeof(err)), 0);
    ck_assert_int_eq(o.launcher, MPX_LAUNCHER_FORK);
    mpx_args_free(&o);
    for (int k = 0; a3[k]; k++)
        v[k + 1] = (char *)a3[k];
    ck_assert_int_eq(mpx_args_parse(5, v, &o, err, sizeof(err)), 0);
    ck_assert_int_eq(o.launcher, MPX_LAUNCHER_SLURM);
    ck_assert_str_eq(o.mpi_type, "pmi2");
    ck_assert_int_eq(o.apps[0].np_set, 0);
    mpx_args_free(&o);
}
END_TEST

START_TEST(srun_default_np)
{
    const char *a[] = {"./app", "-n", "3", NULL}; /* -n after the program is its arg */
    char *env[] = {NULL};
    struct mpx_opts o;
    struct mpx_srun s;

    ck_assert_int_eq(build(a, env, &o, &s), 0);
    ck_assert_str_eq(joined(s.argv.v), "srun|--mpi=loom|--kill-on-bad-exit=1|./app|-n|3");
    ck_assert_int_eq(s.env.n, 0);
    ck_assert_ptr_null(s.multiprog);
    mpx_srun_free(&s);
    mpx_args_free(&o);
}
END_TEST

START_TEST(srun_full_mapping)
{
    const char *a[] = {"-n", "4",         "-wdir", "/w",       "-genv", "A",
                       "1",  "-x",        "B",     "-x",       "C=3",   "-env",
                       "D",  "4",         "-l",    "-bind-to", "core",  "--fence-timeout",
                       "9",  "--timeout", "30",    "prog",     "x y",   NULL};
    char *env[] = {"B=from env", "LOOM_MPI_TYPE=pmi2", NULL};
    struct mpx_opts o;
    struct mpx_srun s;

    ck_assert_int_eq(build(a, env, &o, &s), 0);
    ck_assert_str_eq(joined(s.argv.v), "srun|--mpi=pmi2|--kill-on-bad-exit=1|-n4|"
                                       "--chdir=/w|--label|--cpu-bind=cores|prog|x y");
    ck_assert_str_eq(joined(s.env.v), "A=1|B=from env|C=3|D=4|LOOM_FENCE_TIMEOUT=9");
    char *line = mpx_srun_cmdline(s.argv.v);
    ck_assert_str_eq(line, "srun --mpi=pmi2 --kill-on-bad-exit=1 -n4 --chdir=/w --label "
                           "--cpu-bind=cores prog 'x y'");
    free(line);
    mpx_srun_free(&s);
    mpx_args_free(&o);
}
END_TEST

START_TEST(srun_bind_export)
{
    const char *a[] = {
        "--mpi=pmix", "-gwdir", "/g", "-bind-to", "none", "--report-bindings",
        "-genvnone",  "-x",     "U",  "-x",       "V=2",  "p",
        NULL};
    const char *b[] = {"-genvnone", "--report-bindings", "p", NULL};
    char *env[] = {"U=u", "LOOM_MPI_TYPE=pmi2", NULL};
    struct mpx_opts o;
    struct mpx_srun s;

    ck_assert_int_eq(build(a, env, &o, &s), 0);
    ck_assert_str_eq(joined(s.argv.v), "srun|--mpi=pmix|--kill-on-bad-exit=1|--chdir=/g|"
                                       "--cpu-bind=verbose,none|--export=U,V|p");
    mpx_srun_free(&s);
    mpx_args_free(&o);
    ck_assert_int_eq(build(b, env, &o, &s), 0);
    ck_assert_str_eq(joined(s.argv.v), "srun|--mpi=pmi2|--kill-on-bad-exit=1|"
                                       "--cpu-bind=verbose|--export=NONE|p");
    mpx_srun_free(&s);
    mpx_args_free(&o);
}
END_TEST

START_TEST(srun_mpmd)
{
    const char *a[] = {"-genv", "G",   "1",    "-n", "2",   "-env",  "E",
                       "a b",   "./a", "it's", "%t", ":",   "-wdir", "/d",
                       "./b",   ":",   "-n",   "3",  "./c", NULL};
    char *env[] = {NULL};
    struct mpx_opts o;
    struct mpx_srun s;

    ck_assert_int_eq(build(a, env, &o, &s), 0);
    ck_assert_str_eq(joined(s.argv.v),
                     "srun|--mpi=loom|--kill-on-bad-exit=1|-n6|--multi-prog|/tmp/mp");
    ck_assert_str_eq(joined(s.env.v), "G=1");
    ck_assert_str_eq(s.multiprog,
                     "# mpiexec MPMD job (Loom): ranks  program and arguments\n"
                     "0-1 env 'E=a b' './a' 'it'\\''s' '%t'\n"
                     "2-2 env -C '/d' './b'\n"
                     "3-5 './c'\n");
    mpx_srun_free(&s);
    mpx_args_free(&o);
}
END_TEST

START_TEST(srun_mpmd_newline)
{
    const char *a[] = {"./a", ":", "./b", "x\ny", NULL};
    char *env[] = {NULL};
    struct mpx_opts o;
    struct mpx_srun s;

    ck_assert_int_eq(build(a, env, &o, &s), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "newline"));
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
    tc = tcase_create("slurm");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, slurm_decide);
    tcase_add_test(tc, slurm_decide_hosts);
    tcase_add_test(tc, host_options);
    tcase_add_test(tc, slurm_options_parse);
    tcase_add_test(tc, srun_default_np);
    tcase_add_test(tc, srun_full_mapping);
    tcase_add_test(tc, srun_bind_export);
    tcase_add_test(tc, srun_mpmd);
    tcase_add_test(tc, srun_mpmd_newline);
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
