/* check_iofwd.c - unit tests for launcher/iofwd.c (forwarded output lines).
 *
 * Covers: whole lines pass through byte-exact, a line split over several
 * reads is emitted once whole, two ranks' partial writes never interleave,
 * "[rank] " tags on every line, the last unfinished line at EOF, and the
 * bound on a line without a newline.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "iofwd.h"

static void feed(struct iofwd_stream *s, const char *str, int tag, struct iobuf *out)
{
    ck_assert_int_eq(iofwd_feed(s, str, strlen(str), tag, out), 0);
}

static void assert_out(struct iobuf *out, const char *want)
{
    ck_assert_uint_eq(out->len, strlen(want));
    ck_assert(memcmp(out->p, want, out->len) == 0);
}

START_TEST(whole_lines_exact)
{
    struct iofwd_stream s = {.rank = 0};
    struct iobuf out = {0};

    feed(&s, "one\ntwo\n", 0, &out);
    assert_out(&out, "one\ntwo\n");
    ck_assert_uint_eq(s.part.len, 0);
    ck_assert_int_eq(iofwd_eof(&s, 0, &out), 0);
    assert_out(&out, "one\ntwo\n");
    iobuf_free(&out);
}
END_TEST

START_TEST(split_line_held_until_newline)
{
    struct iofwd_stream s = {.rank = 2};
    struct iobuf out = {0};

    feed(&s, "hel", 0, &out);
    ck_assert_uint_eq(out.len, 0);
    feed(&s, "lo wo", 0, &out);
    ck_assert_uint_eq(out.len, 0);
    feed(&s, "rld\nnext", 0, &out);
    assert_out(&out, "hello world\n");
    ck_assert_int_eq(iofwd_eof(&s, 0, &out), 0);
    /* untagged: the unfinished line is passed on byte-exact */
    assert_out(&out, "hello world\nnext");
    iobuf_free(&out);
}
END_TEST

START_TEST(two_ranks_do_not_interleave)
{
    struct iofwd_stream a = {.rank = 0}, b = {.rank = 1};
    struct iobuf out = {0};

    feed(&a, "aaa", 1, &out);
    feed(&b, "bb", 1, &out);
    feed(&a, "AAA\nx", 1, &out);
    feed(&b, "BB\n", 1, &out);
    assert_out(&out, "[0] aaaAAA\n[1] bbBB\n");
    ck_assert_int_eq(iofwd_eof(&b, 1, &out), 0);
    ck_assert_int_eq(iofwd_eof(&a, 1, &out), 0);
    /* tagged: the unfinished line gets a newline so tags start lines */
    assert_out(&out, "[0] aaaAAA\n[1] bbBB\n[0] x\n");
    iobuf_free(&out);
}
END_TEST

START_TEST(tag_every_line)
{
    struct iofwd_stream s = {.rank = 13};
    struct iobuf out = {0};

    feed(&s, "a\n\nb\n", 1, &out);
    assert_out(&out, "[13] a\n[13] \n[13] b\n");
    ck_assert_int_eq(iofwd_eof(&s, 1, &out), 0);
    assert_out(&out, "[13] a\n[13] \n[13] b\n");
    iobuf_free(&out);
}
END_TEST

START_TEST(long_line_is_bounded)
{
    struct iofwd_stream s = {.rank = 0};
    struct iobuf out = {0};
    size_t n = IOFWD_MAX_PARTIAL + 100;
    char *big = malloc(n);

    memset(big, 'z', n);
    ck_assert_int_eq(iofwd_feed(&s, big, n, 0, &out), 0);
    /* passed on rather than held without bound */
    ck_assert_uint_eq(out.len, n);
    ck_assert_uint_eq(s.part.len, 0);
    ck_assert_int_eq(iofwd_feed(&s, "\n", 1, 0, &out), 0);
    ck_assert_uint_eq(out.len, n + 1);
    ck_assert_int_eq(iofwd_eof(&s, 0, &out), 0);
    free(big);
    iobuf_free(&out);
}
END_TEST

START_TEST(eof_without_data)
{
    struct iofwd_stream s = {.rank = 0};
    struct iobuf out = {0};

    ck_assert_int_eq(iofwd_eof(&s, 1, &out), 0);
    ck_assert_uint_eq(out.len, 0);
    iobuf_free(&out);
}
END_TEST

static Suite *iofwd_suite(void)
{
    Suite *s = suite_create("iofwd");
    TCase *tc = tcase_create("lines");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, whole_lines_exact);
    tcase_add_test(tc, split_line_held_until_newline);
    tcase_add_test(tc, two_ranks_do_not_interleave);
    tcase_add_test(tc, tag_every_line);
    tcase_add_test(tc, long_line_is_bounded);
    tcase_add_test(tc, eof_without_data);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(iofwd_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
