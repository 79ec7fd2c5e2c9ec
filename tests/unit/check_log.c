/* check_log.c - unit tests for common/log.c.
 *
 * Covers: the threshold drops lines above the level, a custom sink gets
 * the level, ident and formatted line, errno survives a log call, long
 * lines are truncated with "...", level names parse both ways, the
 * default sink writes "ident: line\n" to fd 2 in one piece, control bytes
 * and malformed UTF-8 reach no sink raw (\xNN), escaping is idempotent and
 * never overflows, and the rate limiter lets a burst through, then a steady
 * rate, and counts what it dropped.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

struct capture {
    int n;
    enum loom_log_level level;
    char ident[32];
    char line[LOOM_LOG_LINE_MAX];
};

static void cap_sink(void *arg, enum loom_log_level level, const char *ident,
                     const char *line)
{
    struct capture *c = arg;

    c->n++;
    c->level = level;
    strncpy(c->ident, ident ? ident : "", sizeof(c->ident) - 1);
    strncpy(c->line, line, sizeof(c->line) - 1);
}

START_TEST(threshold_and_sink)
{
    struct loom_log lg;
    struct capture c = {0};

    loom_log_init(&lg, "t", LOOM_LOG_WARN);
    loom_log_set_sink(&lg, cap_sink, &c);
    loom_logf(&lg, LOOM_LOG_INFO, "dropped %d", 1);
    ck_assert_int_eq(c.n, 0);
    errno = EIO;
    loom_logf(&lg, LOOM_LOG_ERROR, "rank %d: %s", 3, "gone");
    ck_assert_int_eq(errno, EIO);
    ck_assert_int_eq(c.n, 1);
    ck_assert_int_eq(c.level, LOOM_LOG_ERROR);
    ck_assert_str_eq(c.ident, "t");
    ck_assert_str_eq(c.line, "rank 3: gone");
    loom_logf(&lg, LOOM_LOG_WARN, "w");
    ck_assert_int_eq(c.n, 2);
    loom_logf(NULL, LOOM_LOG_ERROR, "no logger: ignored");
}
END_TEST

START_TEST(truncation)
{
    struct loom_log lg;
    struct capture c = {0};
    char *big = malloc(3 * LOOM_LOG_LINE_MAX);

    memset(big, 'x', 3 * LOOM_LOG_LINE_MAX - 1);
    big[3 * LOOM_LOG_LINE_MAX - 1] = '\0';
    loom_log_init(&lg, NULL, LOOM_LOG_TRACE);
    loom_log_set_sink(&lg, cap_sink, &c);
    loom_logf(&lg, LOOM_LOG_TRACE, "%s", big);
    ck_assert_int_eq(c.n, 1);
    ck_assert_uint_eq(strlen(c.line), LOOM_LOG_LINE_MAX - 1);
    ck_assert_str_eq(c.line + LOOM_LOG_LINE_MAX - 4, "...");
    free(big);
}
END_TEST

START_TEST(level_names)
{
    ck_assert_int_eq(loom_log_level_parse("error"), LOOM_LOG_ERROR);
    ck_assert_int_eq(loom_log_level_parse("WARN"), LOOM_LOG_WARN);
    ck_assert_int_eq(loom_log_level_parse("warning"), LOOM_LOG_WARN);
    ck_assert_int_eq(loom_log_level_parse("trace"), LOOM_LOG_TRACE);
    ck_assert_int_eq(loom_log_level_parse("3"), LOOM_LOG_DEBUG);
    ck_assert_int_eq(loom_log_level_parse("5"), -EINVAL);
    ck_assert_int_eq(loom_log_level_parse("loud"), -EINVAL);
    ck_assert_int_eq(loom_log_level_parse(NULL), -EINVAL);
    ck_assert_str_eq(loom_log_level_name(LOOM_LOG_INFO), "info");
    ck_assert_str_eq(loom_log_level_name((enum loom_log_level)9), "?");
}
END_TEST

START_TEST(stderr_sink)
{
    struct loom_log lg;
    char buf[128];
    int p[2], saved;
    ssize_t n;

    ck_assert_int_eq(pipe(p), 0);
    saved = dup(2);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_eq(dup2(p[1], 2), 2);
    loom_log_init(&lg, "mpiexec", LOOM_LOG_INFO);
    loom_logf(&lg, LOOM_LOG_INFO, "rank %d exited with code %d", 2, 3);
    dup2(saved, 2);
    close(saved);
    close(p[1]);
    n = read(p[0], buf, sizeof(buf) - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "mpiexec: rank 2 exited with code 3\n");
    close(p[0]);
}
END_TEST

START_TEST(escape_controls)
{
    struct loom_log lg;
    struct capture c = {0};

    loom_log_init(&lg, "t", LOOM_LOG_TRACE);
    loom_log_set_sink(&lg, cap_sink, &c);
    loom_logf(&lg, LOOM_LOG_ERROR, "abort: %s", "bye\nFORGED\r\033[2J\a\x7f\tend");
    ck_assert_str_eq(c.line, "abort: bye\\x0aFORGED\\x0d\\x1b[2J\\x07\\x7f\\x09end");
    /* valid UTF-8 stays, a lone C1 byte or a C1 code point does not */
    loom_logf(&lg, LOOM_LOG_ERROR, "%s",
              "caf\xc3\xa9 \x9b"
              "2J \xc2\x9b \xe2\x82\xac \xff");
    ck_assert_str_eq(c.line, "caf\xc3\xa9 \\x9b2J \\xc2\\x9b \xe2\x82\xac \\xff");
    /* escaping what is already escaped changes nothing */
    char once[256], twice[256];
    loom_log_escape(once, sizeof(once), "a\nb\033c\\x0a");
    loom_log_escape(twice, sizeof(twice), once);
    ck_assert_str_eq(once, "a\\x0ab\\x1bc\\x0a");
    ck_assert_str_eq(twice, once);
}
END_TEST

START_TEST(escape_bounds)
{
    char out[16];
    char *big = malloc(3 * LOOM_LOG_LINE_MAX);
    struct loom_log lg;
    struct capture c = {0};

    /* a truncated escape is never half written */
    memset(out, '#', sizeof(out));
    ck_assert_uint_eq(loom_log_escape(out, 7, "abc\n\n\n"), 3);
    ck_assert_str_eq(out, "abc");
    ck_assert_int_eq(out[7], '#');
    ck_assert_uint_eq(loom_log_escape(out, 8, "abc\n\n\n"), 7);
    ck_assert_str_eq(out, "abc\\x0a");
    ck_assert_uint_eq(loom_log_escape(out, 1, "abc"), 0);
    ck_assert_str_eq(out, "");
    /* a line of nothing but newlines: four times longer escaped, still one line */
    memset(big, '\n', 3 * LOOM_LOG_LINE_MAX - 1);
    big[3 * LOOM_LOG_LINE_MAX - 1] = '\0';
    loom_log_init(&lg, NULL, LOOM_LOG_TRACE);
    loom_log_set_sink(&lg, cap_sink, &c);
    loom_logf(&lg, LOOM_LOG_TRACE, "%s", big);
    ck_assert_ptr_null(strchr(c.line, '\n'));
    ck_assert_uint_lt(strlen(c.line), LOOM_LOG_LINE_MAX);
    ck_assert_str_eq(c.line + strlen(c.line) - 3, "...");
    free(big);
}
END_TEST

START_TEST(ratelimit)
{
    struct loom_ratelimit rl;
    int passed = 0;

    loom_ratelimit_init(&rl, 5, 2); /* burst 5, then 2 a second */
    for (int i = 0; i < 100; i++)
        passed += loom_ratelimit_take(&rl, 1000);
    ck_assert_int_eq(passed, 5);
    ck_assert_uint_eq(loom_ratelimit_dropped(&rl), 95);
    ck_assert_uint_eq(loom_ratelimit_dropped(&rl), 0); /* read and reset */
    /* half a second later: one more token */
    passed = 0;
    for (int i = 0; i < 10; i++)
        passed += loom_ratelimit_take(&rl, 1500);
    ck_assert_int_eq(passed, 1);
    /* a long pause refills to the burst, not beyond */
    passed = 0;
    for (int i = 0; i < 10; i++)
        passed += loom_ratelimit_take(&rl, 100000);
    ck_assert_int_eq(passed, 5);
    /* the clock going backwards gives nothing */
    ck_assert_int_eq(loom_ratelimit_take(&rl, 50), 0);
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("log");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, threshold_and_sink);
    tcase_add_test(tc, truncation);
    tcase_add_test(tc, level_names);
    tcase_add_test(tc, stderr_sink);
    tcase_add_test(tc, escape_controls);
    tcase_add_test(tc, escape_bounds);
    tcase_add_test(tc, ratelimit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(log_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
