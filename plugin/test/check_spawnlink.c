/* check_spawnlink.c - unit tests of plugin/spawnlink.c and spawnwire.c without Slurm:
 * srun's spawn server against the stepd's call, with this test binary standing in for
 * the child srun (the server runs /proc/self/exe: called with --mpi=... it is the fake
 * srun below, which checks the argv and env it was given and reports, fails or hangs
 * as the request's first argument says).  Credentials are treenet's AUTH_NONE form
 * (the payload check: job key, direction, nonce), so no munged is needed.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "spawnlink.h"
#include "spawnwire.h"
#include "treenet.h"

#define JOBKEY "77.0"

/* ---- the fake child srun --------------------------------------------------------- */

/* Several commands: --ntasks=4 --multi-prog -- FILE, the file quoting every word. */
static int fake_srun_mp(int argc, char **argv)
{
    char why[300] = "", buf[512] = "";
    const char *want = "0-2 '/bin/true' 'mp'\\''q'\n3-3 '/bin/true' 'mp'\\''q'\n";
    if (argc != 9 || strcmp(argv[5], "--ntasks=4") || strcmp(argv[6], "--multi-prog") ||
        strcmp(argv[7], "--"))
        snprintf(why, sizeof(why), "argv wrong (%d words)", argc);
    FILE *f = why[0] ? NULL : fopen(argv[8], "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        if (strcmp(buf, want) != 0)
            snprintf(why, sizeof(why), "multi-prog file is [%.200s]", buf);
    } else if (!why[0]) {
        snprintf(why, sizeof(why), "cannot read the multi-prog file");
    }
    const char *ap = getenv(LSPAWN_ENV_APPNUM);
    if (!why[0] && (!ap || strcmp(ap, "3,1") != 0))
        snprintf(why, sizeof(why), "appnum counts %s", ap ? ap : "missing");
    lspawn_child_report(why[0] ? NULL : "77.6", why);
    return 0;
}

static int fake_srun(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--multi-prog") == 0)
            return fake_srun_mp(argc, argv);
    const char *want[] = {"--mpi=loom", "--jobid=77", "--overlap", "--overcommit",
                          "--ntasks=3", "--", "/bin/true"};
    char why[200] = "";
    const char *mode = argc > 8 ? argv[8] : "?";

    if (strcmp(mode, "exit1") == 0)
        return 1;
    if (strcmp(mode, "hang") == 0) {
        sleep(30);
        return 0;
    }
    for (int i = 0; i < 7 && !why[0]; i++)
        if (argc <= i + 1 || strcmp(argv[i + 1], want[i]) != 0)
            snprintf(why, sizeof(why), "argv[%d] is %s, not %s", i + 1,
                     argc > i + 1 ? argv[i + 1] : "missing", want[i]);
    const char *sp = getenv(LSPAWN_ENV_SPAWNER), *np = getenv(LSPAWN_ENV_NPREPUT);
    const char *k0 = getenv(LSPAWN_ENV_PPKEY "0"), *v0 = getenv(LSPAWN_ENV_PPVAL "0");
    if (!why[0] && (!sp || strcmp(sp, JOBKEY) != 0))
        snprintf(why, sizeof(why), "spawner id %s", sp ? sp : "missing");
    if (!why[0] && (!np || strcmp(np, "1") != 0 || !k0 || strcmp(k0, "PARENT_ROOT_PORT_NAME") ||
                    !v0 || strcmp(v0, "tag#0$description#x")))
        snprintf(why, sizeof(why), "preput pairs wrong");
    if (!why[0] && (getenv("SLURM_NTASKS") || getenv("SLURM_STEP_ID")))
        snprintf(why, sizeof(why), "step-size variables leaked");
    lspawn_child_report(why[0] ? NULL : "77.5", why);
    return 0;
}

/* ---- the stepd's side ------------------------------------------------------------- */

static struct lspawn_srv *srv;
static char server[64];

static void start(void)
{
    struct lspawn_srv_cfg cfg = {
        .jobkey = JOBKEY,
        .uid = getuid(),
        .job_id = 77,
        .mpi_type = "loom",
        .auth = TREENET_AUTH_NONE,
    };
    setenv("SLURM_NTASKS", "2", 1); /* must not reach the child srun */
    setenv("SLURM_STEP_ID", "0", 1);
    srv = lspawn_srv_start(&cfg);
    ck_assert_ptr_nonnull(srv);
    snprintf(server, sizeof(server), "127.0.0.1:%d", lspawn_srv_port(srv));
}

static void stop(void)
{
    lspawn_srv_stop(srv, 1);
    srv = NULL;
}

/* One command, 3 processes, args {mode}; cmd and the job key as given. */
static int call(const char *jobkey, const char *cmd, const char *mode, int ncmds,
                int max_inflight, int timeout_s, int *fdp, char *err, size_t errlen)
{
    const char *argv[] = {mode, NULL};
    struct psrv_kv pp[] = {{"PARENT_ROOT_PORT_NAME", "tag#0$description#x"}};
    struct psrv_spawn_cmd cmds[2] = {{cmd, 3, 1, argv, 0, NULL}, {cmd, 1, 1, argv, 0, NULL}};
    struct psrv_spawn req = {0, ncmds, cmds, 1, pp, ncmds == 1 ? 3 : 4};
    char *body;
    size_t len;

    ck_assert_int_eq(lspawn_encode(&req, max_inflight, timeout_s, &body, &len), 0);
    int fd = lspawn_call_start(server, jobkey, getuid(), TREENET_AUTH_NONE, body, len, 3000,
                               err, errlen);
    free(body);
    ck_assert_msg(fd >= 0 || strcmp(jobkey, JOBKEY) != 0, "call failed: %s", err);
    *fdp = fd;
    return fd;
}

/* Wait for the answer: 1 with rc/text, or -errno; the time it took in *ms. */
static int answer(int fd, int *rc, char *text, size_t tl, int *ms)
{
    char buf[LSPAWN_ANSWER_MAX + 4];
    size_t have = 0;
    struct timespec t0, t1;
    int r = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (r == 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 20000) != 1)
            return -ETIMEDOUT;
        r = lspawn_answer_read(fd, buf, &have, rc, text, tl);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *ms = (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
    close(fd);
    return r;
}

static void expect(const char *mode, const char *cmd, int ncmds, int timeout_s, int want_rc,
                   const char *want_text)
{
    char err[256], text[LSPAWN_ANSWER_MAX];
    int fd, rc = 99, ms;
    call(JOBKEY, cmd, mode, ncmds, 4, timeout_s, &fd, err, sizeof(err));
    ck_assert_int_eq(answer(fd, &rc, text, sizeof(text), &ms), 1);
    ck_assert_msg(rc == want_rc && strstr(text, want_text), "%s: rc %d '%s', want %d '%s'",
                  mode, rc, text, want_rc, want_text);
}

START_TEST(spawn_ok)
{
    start();
    expect("ok", "/bin/true", 1, 10, 0, "77.5");
    stop();
}
END_TEST

START_TEST(child_srun_fails_first)
{
    start();
    expect("exit1", "/bin/true", 1, 10, -1, "exited with status 1 before the step started");
    stop();
}
END_TEST

START_TEST(child_srun_hangs_timeout)
{
    char err[256], text[LSPAWN_ANSWER_MAX];
    int fd, rc = 99, ms;
    start();
    call(JOBKEY, "/bin/true", "hang", 1, 4, 1, &fd, err, sizeof(err));
    ck_assert_int_eq(answer(fd, &rc, text, sizeof(text), &ms), 1);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(text, "did not start in time"), "%s", text);
    ck_assert_msg(ms >= 900 && ms < 10000, "answered after %d ms", ms); /* a loaded CI box */
    stop(); /* reaps the SIGTERMed fake srun */
}
END_TEST

START_TEST(inflight_limit)
{
    char err[256], text[LSPAWN_ANSWER_MAX];
    int fd1, fd2, rc = 99, ms;
    start();
    call(JOBKEY, "/bin/true", "hang", 1, 1, 2, &fd1, err, sizeof(err));
    usleep(300 * 1000); /* the first is running */
    call(JOBKEY, "/bin/true", "ok", 1, 1, 2, &fd2, err, sizeof(err));
    ck_assert_int_eq(answer(fd2, &rc, text, sizeof(text), &ms), 1);
    ck_assert_msg(rc == -1 && strstr(text, "LoomSpawnMaxInFlight=1"), "%s", text);
    ck_assert_int_eq(answer(fd1, &rc, text, sizeof(text), &ms), 1);
    ck_assert_int_eq(rc, -1);
    stop();
}
END_TEST

START_TEST(refusals)
{
    start();
    expect("ok", "/nonexistent/prog", 1, 10, -1, "not found or not executable");
    stop();
}
END_TEST

START_TEST(two_commands_multi_prog)
{
    start();
    expect("mp'q", "/bin/true", 2, 10, 0, "77.6");
    stop();
}
END_TEST

START_TEST(wrong_step_credential)
{
    char err[256], text[LSPAWN_ANSWER_MAX];
    int fd, rc = 99, ms;
    start();
    /* a credential for another step: closed without an answer (the request may not
     * even be sent: the server hangs up as soon as it checked the credential) */
    if (call("78.0", "/bin/true", "ok", 1, 4, 10, &fd, err, sizeof(err)) >= 0)
        ck_assert_int_lt(answer(fd, &rc, text, sizeof(text), &ms), 0);
    stop();
}
END_TEST

START_TEST(garbage_before_credential)
{
    start();
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(lspawn_srv_port(srv))};
    a.sin_addr.s_addr = htonl(0x7f000001);
    ck_assert_int_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
    char junk[64];
    memset(junk, 0xff, sizeof(junk)); /* a frame length of 4 GiB */
    ck_assert_int_eq(send(s, junk, sizeof(junk), MSG_NOSIGNAL), (ssize_t)sizeof(junk));
    char b[256];
    ssize_t n, total = 0;
    while ((n = recv(s, b, sizeof(b), 0)) > 0)
        total += n; /* the nonce frame, then EOF */
    ck_assert_int_eq(n, 0);
    ck_assert_int_lt(total, 100);
    close(s);
    /* the server still serves */
    expect("ok", "/bin/true", 1, 10, 0, "77.5");
    stop();
}
END_TEST

START_TEST(wire_bounds)
{
    char err[128];
    static const char big[] = "\0\0\0\x0a" "loomspawn1" "\xff\xff\xff\xff";
    ck_assert_ptr_null(lspawn_decode(big, sizeof(big) - 1, err, sizeof(err)));
    ck_assert_msg(strstr(err, "bytes"), "%s", err);
    ck_assert_ptr_null(lspawn_decode("", 0, err, sizeof(err)));
    ck_assert(err[0]);
    char a[LSPAWN_ANSWER_MAX], t[16];
    int rc;
    size_t n = lspawn_answer_encode(0, "12.3\x01", a);
    ck_assert_int_eq(lspawn_answer_decode(a, n, &rc, t, sizeof(t)), 0);
    ck_assert_str_eq(t, "12.3?");
    ck_assert_int_eq(lspawn_answer_decode(a, n - 1, &rc, t, sizeof(t)), -EPROTO);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc > 1 && strncmp(argv[1], "--mpi=", 6) == 0)
        return fake_srun(argc, argv);
    Suite *s = suite_create("spawnlink");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, wire_bounds);
    tcase_add_test(tc, spawn_ok);
    tcase_add_test(tc, child_srun_fails_first);
    tcase_add_test(tc, child_srun_hangs_timeout);
    tcase_add_test(tc, inflight_limit);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, two_commands_multi_prog);
    tcase_add_test(tc, wrong_step_credential);
    tcase_add_test(tc, garbage_before_credential);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
