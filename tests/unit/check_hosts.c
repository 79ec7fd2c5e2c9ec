/* check_hosts.c - unit tests for launcher/hosts.c (multi-host mpiexec's host list)
 * and launcher/conn.c's frames as a proxy connection reads them (over common/stream.c).
 *
 * Covers: -hosts lists with and without ":n", every parse error (empty entries, bad
 * names, names that look like options, bad counts), host files (comments, blank lines,
 * "host slots=n", CRLF, line numbers in errors), rank placement (blocks of slots,
 * wrap-around, -ppn, repeated hosts sharing a node, more hosts than ranks), local host
 * recognition, and frame lengths (short, oversized, zero).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "hosts.h"

static char err[512];

START_TEST(list_simple)
{
    struct mpx_hostlist hl = {0};

    ck_assert_int_eq(mpx_hosts_parse("a,b:4,node-3.example.org", &hl, err, sizeof(err)), 0);
    ck_assert_int_eq(hl.n, 3);
    ck_assert_str_eq(hl.h[0].name, "a");
    ck_assert_int_eq(hl.h[0].slots, 1);
    ck_assert_str_eq(hl.h[1].name, "b");
    ck_assert_int_eq(hl.h[1].slots, 4);
    ck_assert_str_eq(hl.h[2].name, "node-3.example.org");
    ck_assert_int_eq(mpx_hosts_total_slots(&hl, 0), 6);
    ck_assert_int_eq(mpx_hosts_total_slots(&hl, 2), 6);
    ck_assert_int_eq(mpx_hosts_total_slots(&hl, 5), 15);
    mpx_hosts_free(&hl);
    ck_assert_int_eq(hl.n, 0);
}
END_TEST

static const struct {
    const char *list, *msg;
} bad_lists[] = {
    {"", "empty host list"},
    {"a,,b", "empty entry"},
    {"a,", "empty entry"},
    {",a", "empty entry"},
    {"-oProxyCommand=x", "bad host name '-oProxyCommand=x'"},
    {"a;rm", "bad host name 'a;rm'"},
    {"a b", "bad host name"},
    {"a:0", "bad process count '0'"},
    {"a:x", "bad process count 'x'"},
    {"a:", "bad process count ''"},
    {"a:65537", "bad process count"},
    {":3", "bad host name ''"},
};

START_TEST(list_errors)
{
    struct mpx_hostlist hl = {0};

    ck_assert_int_eq(mpx_hosts_parse(bad_lists[_i].list, &hl, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, bad_lists[_i].msg), "'%s': message '%s' lacks '%s'",
                  bad_lists[_i].list, err, bad_lists[_i].msg);
    mpx_hosts_free(&hl);
}
END_TEST

START_TEST(file_ok)
{
    struct mpx_hostlist hl = {0};
    const char *text = "# cluster\n"
                       "n1:2\n"
                       "\n"
                       "   n2 slots=3   # three\r\n"
                       "\tn3\n"
                       "n4:1 # last, no newline";

    ck_assert_int_eq(mpx_hostfile_parse(text, "hf", &hl, err, sizeof(err)), 0);
    ck_assert_int_eq(hl.n, 4);
    ck_assert_str_eq(hl.h[0].name, "n1");
    ck_assert_int_eq(hl.h[0].slots, 2);
    ck_assert_str_eq(hl.h[1].name, "n2");
    ck_assert_int_eq(hl.h[1].slots, 3);
    ck_assert_str_eq(hl.h[2].name, "n3");
    ck_assert_int_eq(hl.h[2].slots, 1);
    ck_assert_str_eq(hl.h[3].name, "n4");
    mpx_hosts_free(&hl);
}
END_TEST

START_TEST(file_errors)
{
    struct mpx_hostlist hl = {0};

    ck_assert_int_eq(mpx_hostfile_parse("a\nb:0\n", "hf", &hl, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "hf:2:"));
    mpx_hosts_free(&hl);
    ck_assert_int_eq(mpx_hostfile_parse("a slots=x\n", "hf", &hl, err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "hf:1:"));
    mpx_hosts_free(&hl);
    ck_assert_int_eq(mpx_hostfile_parse("a b c\n", "hf", &hl, err, sizeof(err)), -EINVAL);
    mpx_hosts_free(&hl);
    ck_assert_int_eq(mpx_hostfile_parse("# nothing\n\n", "hf", &hl, err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "no hosts"));
    mpx_hosts_free(&hl);
    ck_assert_int_lt(mpx_hostfile_read("/nonexistent/hosts", &hl, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/hosts"));
    mpx_hosts_free(&hl);
}
END_TEST

START_TEST(file_read)
{
    struct mpx_hostlist hl = {0};
    char path[] = "/tmp/check_hosts.XXXXXX";
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "x:2\ny\n", 6), 6);
    close(fd);
    ck_assert_int_eq(mpx_hostfile_read(path, &hl, err, sizeof(err)), 0);
    unlink(path);
    ck_assert_int_eq(hl.n, 2);
    ck_assert_int_eq(hl.h[0].slots, 2);
    mpx_hosts_free(&hl);
}
END_TEST

static void layout_of(const char *list, int n, int ppn, struct mpx_layout *ly)
{
    struct mpx_hostlist hl = {0};

    ck_assert_int_eq(mpx_hosts_parse(list, &hl, err, sizeof(err)), 0);
    ck_assert_int_eq(mpx_hosts_layout(&hl, n, ppn, ly), 0);
    mpx_hosts_free(&hl);
}

static void assert_nodes(const struct mpx_layout *ly, const int *want)
{
    for (int r = 0; r < ly->size; r++)
        ck_assert_msg(ly->rank_node[r] == want[r], "rank %d on node %d, want %d", r,
                      ly->rank_node[r], want[r]);
}

START_TEST(layout_blocks)
{
    struct mpx_layout ly;
    static const int w1[] = {0, 0, 1, 1, 1, 2};
    static const int w2[] = {0, 1, 2, 0, 1, 2, 0};
    static const int w3[] = {0, 0, 1, 1, 0, 0, 1};

    layout_of("a:2,b:3,c", 6, 0, &ly); /* exactly the slots */
    ck_assert_int_eq(ly.nnodes, 3);
    assert_nodes(&ly, w1);
    ck_assert_int_eq(ly.node_nranks[0], 2);
    ck_assert_int_eq(ly.node_nranks[1], 3);
    ck_assert_int_eq(ly.node_nranks[2], 1);
    ck_assert_str_eq(ly.node_host[1], "b");
    mpx_layout_free(&ly);

    layout_of("a,b,c", 7, 0, &ly); /* one slot each: round robin, wrapping */
    assert_nodes(&ly, w2);
    ck_assert_int_eq(ly.node_nranks[0], 3);
    mpx_layout_free(&ly);

    layout_of("a:5,b", 7, 2, &ly); /* -ppn 2 replaces the slots, then wraps */
    ck_assert_int_eq(ly.nnodes, 2);
    assert_nodes(&ly, w3);
    mpx_layout_free(&ly);
}
END_TEST

START_TEST(layout_nodes)
{
    struct mpx_layout ly;
    static const int w1[] = {0, 1, 0};
    struct mpx_hostlist empty = {0};

    layout_of("a,b,a", 3, 0, &ly); /* a repeated host is one node */
    ck_assert_int_eq(ly.nnodes, 2);
    assert_nodes(&ly, w1);
    ck_assert_int_eq(ly.node_nranks[0], 2);
    mpx_layout_free(&ly);

    layout_of("a:4,b,c", 3, 0, &ly); /* hosts without ranks are not nodes */
    ck_assert_int_eq(ly.nnodes, 1);
    ck_assert_str_eq(ly.node_host[0], "a");
    mpx_layout_free(&ly);

    ck_assert_int_eq(mpx_hosts_layout(&empty, 3, 0, &ly), -EINVAL);
}
END_TEST

START_TEST(local_names)
{
    ck_assert(mpx_host_is_local("localhost", "vm"));
    ck_assert(mpx_host_is_local("localhost.localdomain", "vm"));
    ck_assert(mpx_host_is_local("127.0.0.1", "vm"));
    ck_assert(mpx_host_is_local("127.1.2.3", "vm"));
    ck_assert(mpx_host_is_local("vm", "vm"));
    ck_assert(mpx_host_is_local("vm", "vm.example.org"));
    ck_assert(mpx_host_is_local("vm.example.org", "vm"));
    ck_assert(!mpx_host_is_local("vm.a.org", "vm.b.org"));
    ck_assert(!mpx_host_is_local("vm2", "vm"));
    ck_assert(!mpx_host_is_local("v", "vm"));
    ck_assert(!mpx_host_is_local("10.0.0.1", "10"));
    ck_assert(!mpx_host_is_local("127.example.org", "vm"));
    ck_assert(!mpx_host_is_local("a", NULL));
    ck_assert(!mpx_host_is_local("", "vm"));
}
END_TEST

/* mpiexec's frames as a proxy connection reads them: type byte, body, limits. */
static int frames_in(const uint8_t *b, size_t n, uint8_t *type, const uint8_t **body,
                     size_t *len)
{
    struct mpx_conn c;
    int rc;

    mpx_conn_init(&c, -1);
    ck_assert_int_eq(loom_stream_feed(&c.s, b, n), (long)n);
    rc = mpx_conn_next(&c, type, body, len);
    if (rc == 1)
        ck_assert_mem_eq(*body, b + 5, *len);
    mpx_conn_free(&c, 0);
    return rc;
}

START_TEST(frames)
{
    uint8_t b[16] = {0, 0, 0, 3, MPX_P_EXIT, 'x', 'y', 0, 0, 0, 0};
    uint8_t type = 0;
    const uint8_t *body;
    size_t bl = 0;

    ck_assert_int_eq(frames_in(b, 3, &type, &body, &bl), 0);
    ck_assert_int_eq(frames_in(b, 6, &type, &body, &bl), 0);
    ck_assert_int_eq(frames_in(b, 7, &type, &body, &bl), 1);
    ck_assert_int_eq(type, MPX_P_EXIT);
    ck_assert_uint_eq(bl, 2);
    b[3] = 0; /* length 0: not ours */
    ck_assert_int_eq(frames_in(b, 16, &type, &body, &bl), -EPROTO);
    b[0] = 0x7f; /* far above MPX_FRAME_MAX */
    ck_assert_int_eq(frames_in(b, 16, &type, &body, &bl), -EPROTO);
}
END_TEST

static Suite *hosts_suite(void)
{
    Suite *s = suite_create("hosts");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, list_simple);
    tcase_add_loop_test(tc, list_errors, 0,
                        (int)(sizeof(bad_lists) / sizeof(bad_lists[0])));
    tcase_add_test(tc, file_ok);
    tcase_add_test(tc, file_errors);
    tcase_add_test(tc, file_read);
    tcase_add_test(tc, layout_blocks);
    tcase_add_test(tc, layout_nodes);
    tcase_add_test(tc, local_names);
    tcase_add_test(tc, frames);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(hosts_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
