/*
 * check_mpi_dynwire.c - mpi/core/dynwire.c: port names (the format Open_port writes
 *   parses back; every malformed form is refused: prefix, version, signs, even or huge
 *   tags, empty or unprintable or overlong job ids, overlong names), accept/connect
 *   control messages (length, magic, kind, tag parity, reserved field) and the
 *   Comm_join hello (magic, version, job id termination, rank against size, tag).
 */
#include <check.h>
#include <string.h>

#include "dynwire.h"

START_TEST(test_port_roundtrip)
{
    struct xm_dyn_port p = {.rank = 12, .tag = 77}, q;
    strcpy(p.jobid, "mpiexec-4242.0");
    char buf[XM_DYN_PORT_MAX];
    ck_assert_int_eq(xm_dyn_port_format(buf, sizeof(buf), &p), 0);
    ck_assert_str_eq(buf, "loom-port:1:12:77:mpiexec-4242.0");
    ck_assert_int_eq(xm_dyn_port_parse(buf, &q), 0);
    ck_assert_int_eq(q.rank, 12);
    ck_assert_int_eq(q.tag, 77);
    ck_assert_str_eq(q.jobid, "mpiexec-4242.0");
}
END_TEST

START_TEST(test_port_refused)
{
    static const char *bad[] = {
        "", "loom-port:", "loom-port:1:", "loom-port:1:0:1:", "loom-port:1:0:2:j",
        "loom-port:2:0:1:j", "loom-port:1:-1:1:j", "loom-port:1:+1:1:j",
        "loom-port:1:0:-1:j", "loom-port:1:0:1073741825:j", "loom-port:1:99999999999:1:j",
        "loom-port:1:0:1:j k", "loom-port:1:0:1:j\tk", "loom-port:1:0 :1:j",
        "Loom-port:1:0:1:j", "loom-port:1:0:1", "loom-port:1:0:1:j\x7f",
    };
    struct xm_dyn_port p;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(xm_dyn_port_parse(bad[i], &p) < 0, "accepted \"%s\"", bad[i]);
    ck_assert_int_lt(xm_dyn_port_parse(NULL, &p), 0);
    /* a job id of 64 bytes, and a name without NUL within MPI_MAX_PORT_NAME */
    char big[400];
    strcpy(big, "loom-port:1:0:1:");
    memset(big + strlen(big), 'j', 64);
    big[16 + 64] = 0;
    ck_assert_int_lt(xm_dyn_port_parse(big, &p), 0);
    big[16 + 63] = 0;
    ck_assert_int_eq(xm_dyn_port_parse(big, &p), 0);
    memset(big, 'x', sizeof(big));
    memcpy(big, "loom-port:1:0:1:", 16);
    ck_assert_int_lt(xm_dyn_port_parse(big, &p), 0); /* no NUL read past 256 bytes */
}
END_TEST

START_TEST(test_msg)
{
    struct xm_dyn_msg m = {XM_DYN_MAGIC, XM_DYN_REQ, 8, 0}, out;
    ck_assert_ptr_null(xm_dyn_msg_check(&m, sizeof(m), &out));
    ck_assert_int_eq(out.tag, 8);
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&m, sizeof(m) - 1, &out));
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&m, sizeof(m) + 1, &out));
    struct xm_dyn_msg b = m;
    b.magic++;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
    b = m, b.kind = 0;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
    b = m, b.kind = XM_DYN_CONFIRM + 1;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
    b = m, b.tag = 9;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
    b = m, b.tag = -2;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
    b = m, b.tag = XM_DYN_TAG_MAX;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
    b = m, b.zero = 1;
    ck_assert_ptr_nonnull(xm_dyn_msg_check(&b, sizeof(b), &out));
}
END_TEST

START_TEST(test_hello)
{
    struct xm_dyn_hello h, out;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, XM_DYN_HELLO_MAGIC, 8);
    h.version = 1, h.size = 4, h.rank = 3, h.tag = 6;
    strcpy(h.jobid, "job");
    ck_assert_int_eq((int)sizeof(h), 88);
    ck_assert_ptr_null(xm_dyn_hello_check(&h, sizeof(h), &out));
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&h, sizeof(h) - 1, &out));
    struct xm_dyn_hello b = h;
    b.magic[0] = 'X';
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, b.version = 2;
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, b.rank = 4;
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, b.rank = -1;
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, b.size = 0, b.rank = 0;
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, b.tag = 7;
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, memset(b.jobid, 'j', sizeof(b.jobid)); /* not terminated */
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
    b = h, b.jobid[0] = 0;
    ck_assert_ptr_nonnull(xm_dyn_hello_check(&b, sizeof(b), &out));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpi_dynwire");
    TCase *tc = tcase_create("dynwire");
    tcase_add_test(tc, test_port_roundtrip);
    tcase_add_test(tc, test_port_refused);
    tcase_add_test(tc, test_msg);
    tcase_add_test(tc, test_hello);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
