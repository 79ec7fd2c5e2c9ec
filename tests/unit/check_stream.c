/* check_stream.c - unit tests for common/stream.c, the framed non-blocking stream of
 * treenet's links and mpiexec's proxy connections.
 *
 * Covers: the bytes on the wire (4-byte big-endian length, payload); frames that
 * arrive one byte at a time, several in one read, and larger than the staging buffer
 * (assembled across many reads); a length above the limit refused before any
 * allocation, an empty frame refused with LOOM_STREAM_NONEMPTY, a limit that changes
 * between frames (the handshake's, then the messages'); the output queue bound,
 * partial writes to a socket with a small buffer, "first" ordering and splicing one
 * queue behind another; EOF in the middle of a frame (small and large) and at a frame
 * boundary; input moved from one stream to another.
 * Everything runs on socketpairs; no assertion depends on time.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stream.h"

static void pair(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
}

static void put_len(uint8_t *p, uint32_t l)
{
    p[0] = (uint8_t)(l >> 24);
    p[1] = (uint8_t)(l >> 16);
    p[2] = (uint8_t)(l >> 8);
    p[3] = (uint8_t)l;
}

/* Read until a frame comes out (or the stream says something else). */
static int next_frame(struct loom_stream *s, const uint8_t **p, size_t *len)
{
    for (int i = 0; i < 100000; i++) {
        int rc = loom_stream_next(s, p, len);
        if (rc != 0)
            return rc;
        long n = loom_stream_read(s);
        if (n == -EAGAIN)
            return 0;
        if (n <= 0)
            return (int)n - 1000; /* EOF or error: not a frame */
    }
    return -1;
}

START_TEST(wire_bytes)
{
    struct loom_stream s;
    uint8_t got[16];
    int sv[2];

    pair(sv);
    loom_stream_init(&s, sv[0], 100, 1000, 0);
    ck_assert_int_eq(loom_stream_send(&s, "abc", 3), 0);
    ck_assert_int_eq(loom_stream_send(&s, "", 0), 0); /* empty frames are fine here */
    ck_assert(!loom_stream_pending(&s));
    ck_assert_int_eq(read(sv[1], got, sizeof(got)), 11);
    ck_assert_mem_eq(got, "\0\0\0\3abc\0\0\0\0", 11);
    loom_stream_free(&s, 1);
    close(sv[1]);
}
END_TEST

START_TEST(partial_frames)
{
    struct loom_stream s;
    uint8_t wire[64];
    const uint8_t *p;
    size_t len, n = 0;
    int sv[2];

    pair(sv);
    loom_stream_init(&s, sv[0], 100, 1000, 0);
    put_len(wire, 5);
    memcpy(wire + 4, "hello", 5);
    put_len(wire + 9, 0);
    put_len(wire + 13, 2);
    memcpy(wire + 17, "ok", 2);
    n = 19;
    /* one byte at a time: nothing until the fifth payload byte */
    for (size_t i = 0; i < 8; i++) {
        ck_assert_int_eq(write(sv[1], wire + i, 1), 1);
        ck_assert_int_eq(loom_stream_read(&s), 1);
        ck_assert_int_eq(loom_stream_next(&s, &p, &len), 0);
        ck_assert_uint_eq(loom_stream_partial(&s), i + 1);
    }
    ck_assert_int_eq(write(sv[1], wire + 8, 1), 1);
    ck_assert_int_eq(loom_stream_read(&s), 1);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 1);
    ck_assert_uint_eq(len, 5);
    ck_assert_mem_eq(p, "hello", 5);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 0);
    ck_assert_int_eq(loom_stream_read(&s), -EAGAIN);
    /* the rest in one read: two frames */
    ck_assert_int_eq(write(sv[1], wire + 9, n - 9), (ssize_t)(n - 9));
    ck_assert_int_eq(loom_stream_read(&s), (long)(n - 9));
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 1);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 1);
    ck_assert_uint_eq(len, 2);
    ck_assert_mem_eq(p, "ok", 2);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 0);
    ck_assert_uint_eq(loom_stream_partial(&s), 0);
    loom_stream_free(&s, 1);
    close(sv[1]);
}
END_TEST

/* Frames above the staging buffer, sent through a stream, come out whole. */
START_TEST(large_frames)
{
    struct loom_stream tx, rx;
    size_t sizes[] = {LOOM_STREAM_STAGE - 4, LOOM_STREAM_STAGE - 3,
                      3 * LOOM_STREAM_STAGE + 7, 1, 200000};
    size_t nsz = sizeof(sizes) / sizeof(sizes[0]);
    uint8_t *buf = malloc(200000);
    const uint8_t *p;
    size_t len;
    int sv[2];

    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < 200000; i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    pair(sv);
    loom_stream_init(&tx, sv[1], 1u << 20, 1u << 22, LOOM_STREAM_NONEMPTY);
    loom_stream_init(&rx, sv[0], 1u << 20, 1u << 22, LOOM_STREAM_NONEMPTY);
    for (size_t k = 0; k < nsz; k++)
        ck_assert_int_eq(loom_stream_send(&tx, buf, sizes[k]), 0);
    for (size_t k = 0; k < nsz;) {
        int rc = loom_stream_next(&rx, &p, &len);
        if (rc == 1) {
            ck_assert_uint_eq(len, sizes[k]);
            ck_assert_mem_eq(p, buf, len);
            k++;
            continue;
        }
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(loom_stream_flush(&tx), 0);
        long n = loom_stream_read(&rx);
        ck_assert(n > 0 || n == -EAGAIN);
    }
    ck_assert_int_eq(loom_stream_flush(&tx), 0);
    ck_assert(!loom_stream_pending(&tx));
    ck_assert_uint_eq(loom_stream_queued(&tx), 0);
    loom_stream_free(&tx, 1);
    loom_stream_free(&rx, 1);
    free(buf);
}
END_TEST

START_TEST(oversize_refused)
{
    struct loom_stream s;
    uint8_t h[8];
    const uint8_t *p;
    size_t len;
    char big[200] = {0};
    int sv[2];

    pair(sv);
    loom_stream_init(&s, sv[0], 100, 1000, 0);
    /* sending above the limit: refused, nothing queued */
    ck_assert_int_eq(loom_stream_send(&s, big, 101), -EMSGSIZE);
    ck_assert_uint_eq(loom_stream_queued(&s), 0);
    /* a header of 4 GiB - 1: refused on the header alone, no buffer of its size */
    put_len(h, 0xffffffffu);
    ck_assert_int_eq(write(sv[1], h, 4), 4);
    ck_assert_int_eq(loom_stream_read(&s), 4);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), -EPROTO);
    ck_assert_uint_eq(loom_stream_bad_len(&s), 0xffffffffu);
    ck_assert_ptr_null(s.big);
    loom_stream_free(&s, 1);
    close(sv[1]);

    /* the limit is judged per frame: 8 bytes allowed, then 100 */
    loom_stream_init(&s, -1, 8, 1000, LOOM_STREAM_NONEMPTY);
    put_len(h, 8);
    ck_assert_int_eq(loom_stream_feed(&s, h, 4), 4);
    ck_assert_int_eq(loom_stream_feed(&s, "12345678", 8), 8);
    put_len(h, 50);
    ck_assert_int_eq(loom_stream_feed(&s, h, 4), 4);
    ck_assert_int_eq(loom_stream_feed(&s, big, 50), 50);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 1);
    ck_assert_uint_eq(len, 8);
    loom_stream_set_frame_max(&s, 100);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 1);
    ck_assert_uint_eq(len, 50);
    /* LOOM_STREAM_NONEMPTY: a length of 0 is a protocol error */
    put_len(h, 0);
    ck_assert_int_eq(loom_stream_feed(&s, h, 4), 4);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), -EPROTO);
    ck_assert_uint_eq(loom_stream_bad_len(&s), 0);
    loom_stream_free(&s, 0);

    /* a frame above the staging buffer but within the limit: refused just above it */
    loom_stream_init(&s, -1, 100000, 1000, 0);
    put_len(h, 100001);
    ck_assert_int_eq(loom_stream_feed(&s, h, 4), 4);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), -EPROTO);
    ck_assert_ptr_null(s.big);
    loom_stream_free(&s, 0);
}
END_TEST

START_TEST(queue_bound)
{
    struct loom_stream s, t;
    char body[40];
    uint8_t got[4096];
    struct iovec iov[2] = {{.iov_base = "AB", .iov_len = 2},
                           {.iov_base = "CD", .iov_len = 2}};
    int sv[2];
    ssize_t n;

    memset(body, 'x', sizeof(body));
    /* no fd: frames only queue, up to 100 bytes with headers (two of 44, not three) */
    loom_stream_init(&s, -1, 64, 100, 0);
    ck_assert_int_eq(loom_stream_send(&s, body, 40), 0);
    ck_assert_int_eq(loom_stream_send(&s, body, 40), 0);
    ck_assert_uint_eq(loom_stream_queued(&s), 88);
    ck_assert_int_eq(loom_stream_send(&s, body, 40), -ENOBUFS);
    ck_assert_uint_eq(loom_stream_queued(&s), 88);
    ck_assert_int_eq(loom_stream_send(&s, body, 8), 0); /* exactly to the bound */
    ck_assert_uint_eq(loom_stream_queued(&s), 100);
    ck_assert_int_eq(loom_stream_send(&s, "", 0), -ENOBUFS);
    ck_assert(loom_stream_pending(&s));

    /* a second stream: one frame ahead of everything, then s's queue behind it */
    pair(sv);
    loom_stream_init(&t, -1, 64, 1000, 0);
    ck_assert_int_eq(loom_stream_queue(&t, iov, 1, false), 0);
    ck_assert_int_eq(loom_stream_queue(&t, iov, 2, true), 0);
    loom_stream_splice(&t, &s);
    ck_assert_uint_eq(loom_stream_queued(&s), 0);
    ck_assert(!loom_stream_pending(&s));
    ck_assert_uint_eq(loom_stream_queued(&t), 8 + 6 + 100);
    t.fd = sv[0]; /* attached: now it writes */
    ck_assert_int_eq(loom_stream_flush(&t), 0);
    ck_assert_uint_eq(loom_stream_queued(&t), 0);
    n = read(sv[1], got, sizeof(got));
    ck_assert_int_eq(n, 114);
    ck_assert_mem_eq(got, "\0\0\0\4ABCD\0\0\0\2AB\0\0\0\x28", 18);
    ck_assert_mem_eq(got + 102, "\0\0\0\x08xxxxxxxx", 12);
    loom_stream_free(&s, 0);
    loom_stream_free(&t, 1);
    close(sv[1]);
}
END_TEST

/* A socket that takes little at a time: partial writes resume where they stopped,
 * and a frame queued "first" never cuts into the one on the wire. */
START_TEST(partial_writes)
{
    struct loom_stream tx, rx;
    int sv[2], small = 4096;
    static uint8_t buf[100000];
    const uint8_t *p;
    size_t len;
    int got = 0;

    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i ^ (i >> 8));
    pair(sv);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    loom_stream_init(&tx, sv[0], sizeof(buf), 1u << 20, 0);
    loom_stream_init(&rx, sv[1], sizeof(buf), 1u << 20, 0);
    ck_assert_int_eq(loom_stream_send(&tx, buf, sizeof(buf)), 0);
    ck_assert(loom_stream_pending(&tx)); /* the socket took only part of it */
    ck_assert_uint_lt(loom_stream_queued(&tx), sizeof(buf) + 4);
    {
        struct iovec iov = {.iov_base = "first", .iov_len = 5};
        ck_assert_int_eq(loom_stream_queue(&tx, &iov, 1, true), 0);
    }
    ck_assert_int_eq(loom_stream_send(&tx, "last", 4), 0);
    while (got < 3) {
        int rc = loom_stream_next(&rx, &p, &len);
        if (rc == 1) {
            if (got == 0) {
                ck_assert_uint_eq(len, sizeof(buf));
                ck_assert_mem_eq(p, buf, len);
            } else if (got == 1) {
                ck_assert_uint_eq(len, 5);
                ck_assert_mem_eq(p, "first", 5);
            } else {
                ck_assert_uint_eq(len, 4);
                ck_assert_mem_eq(p, "last", 4);
            }
            got++;
            continue;
        }
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(loom_stream_flush(&tx), 0);
        long n = loom_stream_read(&rx);
        ck_assert(n > 0 || n == -EAGAIN);
    }
    ck_assert(!loom_stream_pending(&tx));
    loom_stream_free(&tx, 1);
    loom_stream_free(&rx, 1);
}
END_TEST

START_TEST(eof_mid_frame)
{
    struct loom_stream s;
    uint8_t h[4];
    static uint8_t big[100000];
    const uint8_t *p;
    size_t len;
    int sv[2];

    /* at a frame boundary: EOF, nothing partial */
    pair(sv);
    loom_stream_init(&s, sv[0], 1u << 20, 1000, 0);
    put_len(h, 2);
    ck_assert_int_eq(write(sv[1], h, 4), 4);
    ck_assert_int_eq(write(sv[1], "hi", 2), 2);
    close(sv[1]);
    ck_assert_int_eq(next_frame(&s, &p, &len), 1);
    ck_assert_int_eq(next_frame(&s, &p, &len), 0 - 1000);
    ck_assert_uint_eq(loom_stream_partial(&s), 0);
    loom_stream_free(&s, 1);

    /* in a small frame */
    pair(sv);
    loom_stream_init(&s, sv[0], 1u << 20, 1000, 0);
    put_len(h, 10);
    ck_assert_int_eq(write(sv[1], h, 4), 4);
    ck_assert_int_eq(write(sv[1], "abc", 3), 3);
    close(sv[1]);
    ck_assert_int_eq(next_frame(&s, &p, &len), 0 - 1000);
    ck_assert_uint_eq(loom_stream_partial(&s), 7);
    loom_stream_free(&s, 1);

    /* in a header */
    pair(sv);
    loom_stream_init(&s, sv[0], 1u << 20, 1000, 0);
    ck_assert_int_eq(write(sv[1], h, 2), 2);
    close(sv[1]);
    ck_assert_int_eq(next_frame(&s, &p, &len), 0 - 1000);
    ck_assert_uint_eq(loom_stream_partial(&s), 2);
    loom_stream_free(&s, 1);

    /* in a frame larger than the staging buffer */
    pair(sv);
    loom_stream_init(&s, sv[0], 1u << 20, 1000, 0);
    put_len(h, 200000);
    ck_assert_int_eq(loom_stream_feed(&s, h, 4), 4);
    ck_assert_int_eq(loom_stream_feed(&s, big, sizeof(big)), LOOM_STREAM_STAGE - 4);
    ck_assert_int_eq(loom_stream_next(&s, &p, &len), 0);
    ck_assert_int_eq(write(sv[1], big, 1000), 1000);
    close(sv[1]);
    ck_assert_int_eq(next_frame(&s, &p, &len), 0 - 1000);
    ck_assert_uint_eq(loom_stream_partial(&s), LOOM_STREAM_STAGE + 1000);
    loom_stream_free(&s, 1);
}
END_TEST

START_TEST(take_input)
{
    struct loom_stream a, b;
    uint8_t wire[32];
    const uint8_t *p;
    size_t len;

    loom_stream_init(&a, -1, 16, 100, 0);
    loom_stream_init(&b, -1, 64, 100, 0);
    put_len(wire, 3);
    memcpy(wire + 4, "one", 3);
    put_len(wire + 7, 20);
    memcpy(wire + 11, "0123456789", 10);
    ck_assert_int_eq(loom_stream_feed(&a, wire, 21), 21);
    ck_assert_int_eq(loom_stream_next(&a, &p, &len), 1);
    ck_assert_mem_eq(p, "one", 3);
    /* the second frame began on a (limit 16, so a would refuse it): b takes it */
    loom_stream_take_input(&b, &a);
    ck_assert_uint_eq(loom_stream_partial(&a), 0);
    ck_assert_int_eq(loom_stream_next(&a, &p, &len), 0);
    ck_assert_int_eq(loom_stream_feed(&b, "abcdefghij", 10), 10);
    ck_assert_int_eq(loom_stream_next(&b, &p, &len), 1);
    ck_assert_uint_eq(len, 20);
    ck_assert_mem_eq(p, "0123456789abcdefghij", 20);
    loom_stream_free(&a, 0);
    loom_stream_free(&b, 0);
}
END_TEST

static Suite *stream_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, wire_bytes);
    tcase_add_test(tc, partial_frames);
    tcase_add_test(tc, large_frames);
    tcase_add_test(tc, oversize_refused);
    tcase_add_test(tc, queue_bound);
    tcase_add_test(tc, partial_writes);
    tcase_add_test(tc, eof_mid_frame);
    tcase_add_test(tc, take_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(stream_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
