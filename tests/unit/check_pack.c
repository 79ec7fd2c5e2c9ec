/* check_pack.c - unit tests of the pack/unpack buffer (common/pack). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"

START_TEST(round_trip)
{
    struct pack p;
    pack_init(&p);
    pack_u8(&p, 0xab);
    pack_u32(&p, 0x01020304u);
    pack_u64(&p, 0x1122334455667788ull);
    pack_i32(&p, -7);
    pack_i32(&p, INT32_MIN);
    pack_str(&p, "hello");
    pack_str(&p, "");
    pack_str(&p, NULL);
    pack_bytes(&p, "a\0b", 3);
    pack_raw(&p, "xyz", 3);
    ck_assert_int_eq(pack_error(&p), 0);
    ck_assert_uint_eq(p.len, 1 + 4 + 8 + 4 + 4 + (4 + 5) + 4 + 4 + (4 + 3) + 3);

    struct unpack u;
    unpack_init(&u, p.buf, p.len);
    ck_assert_uint_eq(unpack_u8(&u), 0xab);
    ck_assert_uint_eq(unpack_u32(&u), 0x01020304u);
    ck_assert(unpack_u64(&u) == 0x1122334455667788ull);
    ck_assert_int_eq(unpack_i32(&u), -7);
    ck_assert_int_eq(unpack_i32(&u), INT32_MIN);
    char *s = unpack_strdup(&u);
    ck_assert_str_eq(s, "hello");
    free(s);
    s = unpack_strdup(&u);
    ck_assert_str_eq(s, "");
    free(s);
    s = unpack_strdup(&u);
    ck_assert_str_eq(s, "");
    free(s);
    size_t n;
    const char *b = unpack_bytes(&u, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(b, "a\0b", 3), 0);
    ck_assert_uint_eq(unpack_remaining(&u), 3);
    ck_assert_uint_eq(unpack_u8(&u), 'x');
    ck_assert_int_eq(unpack_error(&u), 0);
    pack_free(&p);
}
END_TEST

START_TEST(big_endian_layout)
{
    struct pack p;
    pack_init(&p);
    pack_u32(&p, 0x0a0b0c0du);
    pack_str(&p, "hi");
    const uint8_t want[] = {0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0, 2, 'h', 'i'};
    ck_assert_uint_eq(p.len, sizeof(want));
    ck_assert_int_eq(memcmp(p.buf, want, sizeof(want)), 0);
    size_t len;
    uint8_t *buf = pack_steal(&p, &len);
    ck_assert_uint_eq(len, sizeof(want));
    ck_assert_ptr_null(p.buf);
    ck_assert_uint_eq(p.len, 0);
    free(buf);
    pack_free(&p);
}
END_TEST

START_TEST(overrun_is_sticky)
{
    const uint8_t data[] = {0, 0, 0, 9, 'a', 'b'}; /* claims 9 bytes, has 2 */
    struct unpack u;
    unpack_init(&u, data, sizeof(data));
    size_t n = 77;
    ck_assert_ptr_null(unpack_bytes(&u, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(unpack_error(&u), -EPROTO);
    /* everything after an overrun reads as zero, even bytes that exist */
    ck_assert_uint_eq(unpack_u8(&u), 0);
    ck_assert_uint_eq(unpack_remaining(&u), 0);
    ck_assert_int_eq(unpack_error(&u), -EPROTO);

    unpack_init(&u, data, 3);
    ck_assert_uint_eq(unpack_u32(&u), 0);
    ck_assert_int_eq(unpack_error(&u), -EPROTO);
    unpack_init(&u, data, sizeof(data));
    ck_assert(unpack_u64(&u) == 0);
    ck_assert_int_eq(unpack_error(&u), -EPROTO);
    unpack_init(&u, NULL, 0);
    ck_assert_uint_eq(unpack_u8(&u), 0);
    ck_assert_int_eq(unpack_error(&u), -EPROTO);
    unpack_init(&u, data, 0);
    ck_assert_ptr_null(unpack_strdup(&u));
    ck_assert_int_eq(unpack_error(&u), -EPROTO);

    /* a huge length cannot wrap the bounds check */
    const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 1, 2};
    unpack_init(&u, huge, sizeof(huge));
    ck_assert_ptr_null(unpack_bytes(&u, &n));
    ck_assert_int_eq(unpack_error(&u), -EPROTO);
}
END_TEST

START_TEST(strdup_rejects_nul)
{
    struct pack p;
    pack_init(&p);
    pack_bytes(&p, "a\0b", 3);
    struct unpack u;
    unpack_init(&u, p.buf, p.len);
    ck_assert_ptr_null(unpack_strdup(&u));
    pack_free(&p);
}
END_TEST

START_TEST(every_truncation_detected)
{
    /* decode every prefix of a message: only the full one decodes cleanly */
    struct pack p;
    pack_init(&p);
    pack_u32(&p, 3);
    for (int i = 0; i < 3; i++) {
        pack_i32(&p, i - 1);
        pack_str(&p, "key");
        pack_bytes(&p, "value", 5);
    }
    ck_assert_int_eq(pack_error(&p), 0);
    for (size_t cut = 0; cut <= p.len; cut++) {
        struct unpack u;
        unpack_init(&u, p.buf, cut);
        uint32_t cnt = unpack_u32(&u);
        for (uint32_t i = 0; i < cnt && i < 10; i++) {
            size_t n;
            (void)unpack_i32(&u);
            char *k = unpack_strdup(&u);
            free(k);
            (void)unpack_bytes(&u, &n);
        }
        if (cut == p.len) {
            ck_assert_int_eq(unpack_error(&u), 0);
            ck_assert_uint_eq(unpack_remaining(&u), 0);
        } else {
            ck_assert_msg(unpack_error(&u) == -EPROTO, "prefix %zu decoded", cut);
        }
    }
    pack_free(&p);
}
END_TEST

START_TEST(growth_and_reset)
{
    struct pack p;
    pack_init(&p);
    char blob[1000];
    memset(blob, 'q', sizeof(blob));
    for (int i = 0; i < 1000; i++)
        pack_raw(&p, blob, sizeof(blob));
    ck_assert_int_eq(pack_error(&p), 0);
    ck_assert_uint_eq(p.len, 1000000);
    ck_assert_int_eq(p.buf[999999], 'q');
    size_t cap = p.cap;
    pack_reset(&p);
    ck_assert_uint_eq(p.len, 0);
    ck_assert_uint_eq(p.cap, cap);
    pack_u8(&p, 1);
    ck_assert_uint_eq(p.len, 1);
    pack_free(&p);
    ck_assert_ptr_null(p.buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pack");
    TCase *tc = tcase_create("pack");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, big_endian_layout);
    tcase_add_test(tc, overrun_is_sticky);
    tcase_add_test(tc, strdup_rejects_nul);
    tcase_add_test(tc, every_truncation_detected);
    tcase_add_test(tc, growth_and_reset);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
