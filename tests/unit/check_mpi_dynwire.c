/*
 * check_mpi_dynwire.c - mpi/core/dynwire.c: port names (the format Open_port writes
 *   parses back; every malformed form is refused: prefix, version, signs, even or huge
 *   tags, empty or unprintable or overlong job ids, overlong names), accept/connect
 *   control messages (length, magic, kind, tag parity, reserved field) and the
 *   Comm_join hello (magic, version, job id termination, rank against size, tag);
 *   between jobs: TCP address cards, version-2 port names (secret, card) and the
 *   roots' card lists (length for count, bounds, padding, duplicates); Comm_join's port
 *   message between jobs (round trip; length, magic, termination, padding, a version-1
 *   or malformed name refused).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynwire.h"

START_TEST(test_port_roundtrip)
{
    struct xm_dyn_port p = {.version = 1, .rank = 12, .tag = 77}, q;
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
        "loom-port:3:0:1:j", "loom-port:2:0:1:j", "loom-port:1:-1:1:j", "loom-port:1:+1:1:j",
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


static const char *V2 =
    "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.7:4711,127.0.0.1:65535:job:7";

START_TEST(test_port_v2)
{
    struct xm_dyn_port p, q;
    ck_assert_int_eq(xm_dyn_port_parse(V2, &p), 0);
    ck_assert_int_eq(p.version, 2);
    ck_assert_int_eq(p.rank, 3);
    ck_assert_int_eq(p.tag, 5);
    ck_assert_str_eq(p.jobid, "job:7");
    ck_assert_int_eq(p.secret[0], 0x00);
    ck_assert_int_eq(p.secret[15], 0xff);
    ck_assert_int_eq(p.addrs.naddr, 2);
    const uint8_t *ip = (const uint8_t *)&p.addrs.ip[0];
    ck_assert_int_eq(ip[0], 10);
    ck_assert_int_eq(ip[3], 7);
    ck_assert_int_eq(p.addrs.port[0], 4711);
    ck_assert_int_eq(p.addrs.port[1], 65535);
    char buf[XM_DYN_PORT_MAX];
    ck_assert_int_eq(xm_dyn_port_format(buf, sizeof(buf), &p), 0);
    ck_assert_str_eq(buf, V2);
    /* the longest: 4 addresses of 21 bytes and a 63-byte job id still fit */
    p.addrs.naddr = 4;
    for (int i = 0; i < 4; i++)
        p.addrs.ip[i] = 0xffffffffu, p.addrs.port[i] = 65535;
    p.rank = p.tag = XM_DYN_TAG_MAX - 1;
    memset(p.jobid, 'j', 63);
    p.jobid[63] = 0;
    ck_assert_int_eq(xm_dyn_port_format(buf, sizeof(buf), &p), 0);
    ck_assert_int_eq(xm_dyn_port_parse(buf, &q), 0);
    ck_assert_int_eq(q.addrs.naddr, 4);
    ck_assert_mem_eq(q.secret, p.secret, XM_DYN_SECRET);
    p.addrs.naddr = 0;
    ck_assert_int_lt(xm_dyn_port_format(buf, sizeof(buf), &p), 0);
}
END_TEST

START_TEST(test_port_v2_refused)
{
    static const char *bad[] = {
        "loom-port:2:3:5:00112233445566778899aabbccddeef:10.0.0.7:4711:j",  /* short secret */
        "loom-port:2:3:5:00112233445566778899aabbccddeeFF:10.0.0.7:4711:j", /* upper case */
        "loom-port:2:3:5:00112233445566778899aabbccddeeff::j",             /* no card */
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.7:4711",  /* no job id */
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.7:0:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.7:65536:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.256:1:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0:1:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.07:1:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.7:01:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:10.0.0.7:1,:j",
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:1.1.1.1:1,1.1.1.1:1,1.1.1.1:1,"
        "1.1.1.1:1,1.1.1.1:1:j", /* five addresses */
        "loom-port:2:4:5:00112233445566778899aabbccddeeff:10.0.0.7:1:",
    };
    struct xm_dyn_port p;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(xm_dyn_port_parse(bad[i], &p) < 0, "accepted \"%s\"", bad[i]);
    /* a card may end the job id's start: the first ':' after it ends the card */
    ck_assert_int_eq(
        xm_dyn_port_parse("loom-port:2:3:5:00112233445566778899aabbccddeeff:1.2.3.4:5:6", &p),
        0);
    ck_assert_str_eq(p.jobid, "6");
}
END_TEST

static void mkcards(struct xm_dyn_card *c, int n)
{
    memset(c, 0, (size_t)n * sizeof(*c));
    for (int i = 0; i < n; i++) {
        snprintf(c[i].jobid, sizeof(c[i].jobid), "job-%d", i % 3);
        c[i].rank = i;
        c[i].addrs.naddr = 1 + i % XM_DYN_ADDRS;
        for (int k = 0; k < c[i].addrs.naddr; k++)
            c[i].addrs.ip[k] = (uint32_t)(i * 16 + k), c[i].addrs.port[k] = (uint16_t)(1000 + k);
    }
}

START_TEST(test_cards)
{
    enum { N = 7 };
    struct xm_dyn_card c[N], out;
    mkcards(c, N);
    static uint8_t buf[XM_DYN_CARDS_HDR + N * XM_DYN_CARD_WIRE + 8];
    long len = xm_dyn_cards_encode(c, N, buf, sizeof(buf));
    ck_assert_int_eq(len, (long)xm_dyn_cards_len(N));
    ck_assert_int_eq(xm_dyn_cards_encode(c, N, buf, (size_t)len - 1), -ENOSPC);
    int n = 0;
    ck_assert_ptr_null(xm_dyn_cards_check(buf, (size_t)len, &n));
    ck_assert_int_eq(n, N);
    for (int i = 0; i < N; i++) {
        xm_dyn_cards_get(buf, i, &out);
        ck_assert_str_eq(out.jobid, c[i].jobid);
        ck_assert_int_eq(out.rank, c[i].rank);
        ck_assert_int_eq(out.addrs.naddr, c[i].addrs.naddr);
        for (int k = 0; k < out.addrs.naddr; k++) {
            ck_assert_uint_eq(out.addrs.ip[k], c[i].addrs.ip[k]);
            ck_assert_uint_eq(out.addrs.port[k], c[i].addrs.port[k]);
        }
    }
    /* lengths and header */
    ck_assert_ptr_nonnull(xm_dyn_cards_check(buf, (size_t)len - 1, &n));
    ck_assert_ptr_nonnull(xm_dyn_cards_check(buf, (size_t)len + 1, &n));
    ck_assert_ptr_nonnull(xm_dyn_cards_check(buf, 3, &n));
    uint8_t b2[sizeof(buf)];
#define MUT(off, val, what)                                                      \
    do {                                                                         \
        memcpy(b2, buf, sizeof(buf));                                            \
        b2[off] = (uint8_t)(val);                                                \
        const char *w = xm_dyn_cards_check(b2, (size_t)len, &n);                  \
        ck_assert_msg(w != NULL, "accepted a list with a bad %s", what);         \
    } while (0)
    MUT(0, 0, "magic");
    MUT(4, 2, "version");
    MUT(8, N + 1, "count");
    MUT(8, 0, "count 0");
    MUT(11, 1, "huge count");
    MUT(12, 1, "reserved field");
    size_t e1 = XM_DYN_CARDS_HDR + XM_DYN_CARD_WIRE; /* entry 1 */
    MUT(e1, 0, "empty job id");
    MUT(e1 + 1, ' ', "unprintable job id");
    MUT(e1 + 40, 'x', "job id padding");
    MUT(e1 + XM_DYN_JOBID + 3, 0x40, "rank");
    MUT(e1 + XM_DYN_JOBID + 4, 0, "address count 0");
    MUT(e1 + XM_DYN_JOBID + 4, XM_DYN_ADDRS + 1, "address count");
    memcpy(b2, buf, sizeof(buf));
    memset(b2 + e1 + XM_DYN_JOBID + 12, 0, 4);
    ck_assert_str_eq(xm_dyn_cards_check(b2, (size_t)len, &n), "port");
    MUT(e1 + XM_DYN_JOBID + 14, 1, "port above 65535");
    MUT(e1 + XM_DYN_JOBID + 8 + 8 * 3, 1, "unused slot");
    /* a process named twice: entry 3 = job-0 rank 3 -> rank 0 */
    memcpy(b2, buf, sizeof(buf));
    b2[XM_DYN_CARDS_HDR + 3 * XM_DYN_CARD_WIRE + XM_DYN_JOBID] = 0;
    ck_assert_str_eq(xm_dyn_cards_check(b2, (size_t)len, &n), "a process named twice");
    /* what the encoder refuses */
    struct xm_dyn_card bad = c[0];
    bad.addrs.naddr = 0;
    ck_assert_int_eq(xm_dyn_cards_encode(&bad, 1, buf, sizeof(buf)), -EINVAL);
    ck_assert_int_eq(xm_dyn_cards_encode(c, 0, buf, sizeof(buf)), -EINVAL);
    ck_assert_int_eq(xm_dyn_cards_encode(c, XM_DYN_CARDS_MAX + 1, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* the TCP netmod's cross-job hello: round trip, then every field the check bounds */
START_TEST(test_xhello)
{
    struct xm_dyn_xhello h, out;
    unsigned char b[XM_DYN_XHELLO_WIRE], m[XM_DYN_XHELLO_WIRE];
    memset(&h, 0, sizeof(h));
    h.rank = 3;
    h.to = 0;
    h.port_tag = 7;
    memset(h.nonce, 0xab, sizeof(h.nonce));
    strcpy(h.tojob, "job-a");
    strcpy(h.from.jobid, "job-b");
    h.from.rank = 3;
    h.from.addrs.naddr = 2;
    h.from.addrs.ip[0] = 0x0100007fu;
    h.from.addrs.port[0] = 4567;
    h.from.addrs.ip[1] = 0x0302010au;
    h.from.addrs.port[1] = 65535;
    ck_assert_int_eq(xm_dyn_xhello_encode(&h, b), 0);
    ck_assert_ptr_null(xm_dyn_xhello_check(b, sizeof(b), &out));
    ck_assert_int_eq(out.rank, 3);
    ck_assert_int_eq(out.port_tag, 7);
    ck_assert_str_eq(out.tojob, "job-a");
    ck_assert_str_eq(out.from.jobid, "job-b");
    ck_assert_int_eq(out.from.addrs.naddr, 2);
    ck_assert_int_eq(out.from.addrs.port[1], 65535);
    ck_assert_ptr_nonnull(xm_dyn_xhello_check(b, sizeof(b) - 1, &out)); /* length */
    /* offsets: magic 0, rank 4, port tag 12, job ids 32 and 96, naddr 160, slots 164
     * (two in use; 50: a byte after the NUL of the first job id) */
    static const struct {
        size_t off;
        unsigned char v;
    } bad[] = {{0, 0}, {7, 0x40}, {12, 8}, {33, 1}, {97, ' '}, {32, 0}, {40, 0},
               {160, 0}, {160, 5}, {180, 1}, {50, 'x'}, {168, 0}, {170, 1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memcpy(m, b, sizeof(b));
        if (bad[i].off == 40) /* a job id without its NUL */
            memset(m + 32, 'j', XM_DYN_JOBID);
        else if (bad[i].off == 168) /* the first port: zero */
            memset(m + 168, 0, 4);
        else if (bad[i].off == 170) /* the first port: 65536 */
            memcpy(m + 168, "\0\0\1\0", 4);
        else
            m[bad[i].off] = bad[i].v;
        ck_assert_msg(xm_dyn_xhello_check(m, sizeof(m), &out) != NULL, "case %zu", i);
    }
    h.port_tag = 6; /* even: not a port */
    ck_assert_int_eq(xm_dyn_xhello_encode(&h, b), -EINVAL);
}
END_TEST

START_TEST(test_cards_max)
{
    int n = XM_DYN_CARDS_MAX;
    struct xm_dyn_card *c = calloc((size_t)n, sizeof(*c));
    size_t len = xm_dyn_cards_len(n);
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(buf);
    mkcards(c, n);
    ck_assert_int_eq(xm_dyn_cards_encode(c, n, buf, len), (long)len);
    int got = 0;
    ck_assert_ptr_null(xm_dyn_cards_check(buf, len, &got));
    ck_assert_int_eq(got, n);
    free(c);
    free(buf);
}
END_TEST

/* Comm_join's port message between jobs: round trip, then every refusal */
START_TEST(test_joinport)
{
    const char *v2 =
        "loom-port:2:3:5:00112233445566778899aabbccddeeff:127.0.0.1:4000:77.0";
    uint8_t b[XM_DYN_JOINPORT_WIRE], m[XM_DYN_JOINPORT_WIRE];
    struct xm_dyn_port p;
    char name[XM_DYN_PORT_MAX];
    ck_assert_int_eq(xm_dyn_joinport_encode(v2, b), 0);
    ck_assert_ptr_null(xm_dyn_joinport_check(b, sizeof(b), &p, name));
    ck_assert_str_eq(name, v2);
    ck_assert_int_eq(p.version, 2);
    ck_assert_int_eq(p.rank, 3);
    ck_assert_int_eq(p.tag, 5);
    ck_assert_str_eq(p.jobid, "77.0");
    ck_assert_ptr_nonnull(xm_dyn_joinport_check(b, sizeof(b) - 1, &p, name)); /* length */
    memcpy(m, b, sizeof(m));
    m[0] = 'X'; /* magic */
    ck_assert_ptr_nonnull(xm_dyn_joinport_check(m, sizeof(m), &p, name));
    memcpy(m, b, sizeof(m));
    memset(m + 8, 'x', XM_DYN_PORT_MAX); /* no terminating NUL */
    ck_assert_ptr_nonnull(xm_dyn_joinport_check(m, sizeof(m), &p, name));
    memcpy(m, b, sizeof(m));
    m[sizeof(m) - 1] = 'x'; /* a byte after the name's NUL */
    ck_assert_ptr_nonnull(xm_dyn_joinport_check(m, sizeof(m), &p, name));
    memcpy(m, b, sizeof(m));
    m[8 + 10] = '1'; /* "loom-port:1:3:5:<hex>..." does not parse */
    ck_assert_ptr_nonnull(xm_dyn_joinport_check(m, sizeof(m), &p, name));
    /* a well-formed version-1 name reaches only its own job */
    ck_assert_int_eq(xm_dyn_joinport_encode("loom-port:1:3:5:77.0", b), -EINVAL);
    memset(m, 0, sizeof(m));
    memcpy(m, XM_DYN_JOINPORT_MAGIC, 8);
    strcpy((char *)m + 8, "loom-port:1:3:5:77.0");
    ck_assert_ptr_nonnull(xm_dyn_joinport_check(m, sizeof(m), &p, name));
    char longname[XM_DYN_PORT_MAX + 1];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    ck_assert_int_eq(xm_dyn_joinport_encode(longname, b), -EINVAL);
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
    tcase_add_test(tc, test_port_v2);
    tcase_add_test(tc, test_port_v2_refused);
    tcase_add_test(tc, test_cards);
    tcase_add_test(tc, test_cards_max);
    tcase_add_test(tc, test_xhello);
    tcase_add_test(tc, test_joinport);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
