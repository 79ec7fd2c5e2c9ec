/* check_mac.c - unit tests of common/mac: SHA-256 against FIPS 180-2's examples,
 * HMAC-SHA256 against RFC 4231's test cases, constant-time compare, hex. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mac.h"

static void expect_hex(const unsigned char *got, size_t n, const char *want)
{
    char hex[2 * 64 + 1];
    loom_hex(got, n, hex);
    ck_assert_str_eq(hex, want);
}

START_TEST(sha256_vectors)
{
    unsigned char d[32];
    loom_sha256("abc", 3, d);
    expect_hex(d, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    loom_sha256("", 0, d);
    expect_hex(d, 32, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    loom_sha256(two, strlen(two), d);
    expect_hex(d, 32, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a', fed in uneven pieces to cross block boundaries */
    struct loom_sha256 c;
    loom_sha256_init(&c);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    for (size_t step = 1; left; step = step % 990 + 7) {
        size_t n = step < left ? step : left;
        loom_sha256_update(&c, a, n);
        left -= n;
    }
    loom_sha256_final(&c, d);
    expect_hex(d, 32, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(hmac_rfc4231)
{
    unsigned char t[32];
    unsigned char k1[20];
    memset(k1, 0x0b, sizeof k1);
    loom_hmac_sha256(k1, sizeof k1, "Hi There", 8, t);
    expect_hex(t, 32, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    const char *m2 = "what do ya want for nothing?";
    loom_hmac_sha256("Jefe", 4, m2, strlen(m2), t);
    expect_hex(t, 32, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    /* case 6: a 131-byte key is hashed first */
    unsigned char k6[131];
    memset(k6, 0xaa, sizeof k6);
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    loom_hmac_sha256(k6, sizeof k6, m6, strlen(m6), t);
    expect_hex(t, 32, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

START_TEST(compare_and_hex)
{
    unsigned char a[32], b[32];
    ck_assert_int_eq(loom_random_bytes(a, sizeof a), 0);
    memcpy(b, a, sizeof b);
    ck_assert_int_eq(loom_ct_equal(a, b, sizeof a), 1);
    b[31] ^= 1;
    ck_assert_int_eq(loom_ct_equal(a, b, sizeof a), 0);
    ck_assert_int_eq(loom_ct_equal(a, b, 0), 1);

    char hex[65];
    loom_hex(a, sizeof a, hex);
    ck_assert_uint_eq(strlen(hex), 64);
    unsigned char back[32];
    ck_assert_int_eq(loom_unhex(hex, back, sizeof back), 0);
    ck_assert(memcmp(a, back, sizeof a) == 0);
    ck_assert_int_eq(loom_unhex("0A0b", back, 2), 0);
    ck_assert_int_eq(back[0], 10);
    ck_assert_int_eq(back[1], 11);
    ck_assert_int_eq(loom_unhex("0a0", back, 2), -1);    /* short */
    ck_assert_int_eq(loom_unhex("0a0b0c", back, 2), -1); /* trailing digits */
    ck_assert_int_eq(loom_unhex("0g", back, 1), -1);
    ck_assert_int_eq(loom_unhex(NULL, back, 1), -1);

    /* two draws of 32 random bytes differ */
    ck_assert_int_eq(loom_random_bytes(b, sizeof b), 0);
    ck_assert_int_eq(loom_ct_equal(a, b, sizeof a), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mac");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sha256_vectors);
    tcase_add_test(tc, hmac_rfc4231);
    tcase_add_test(tc, compare_and_hex);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
