/* check_kvs.c - the key-value store of pmiserv (kvs.c) and the inter-server
 * message codec (msg.c): pending blobs, concatenation merge, commit order,
 * replace, getbyidx, malformed blobs, growth; msg round trip and rejects.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"
#include "msg.h"
#include "pack.h"

START_TEST(pending_then_commit)
{
    struct kvs *k = kvs_create();
    size_t len;
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(kvs_put_pending(k, "a", "1"), 0);
    ck_assert_int_eq(kvs_put_pending(k, "b", ""), 0);
    ck_assert_ptr_null(kvs_get(k, "a")); /* not before the fence */
    const void *blob = kvs_pending(k, &len);
    ck_assert_uint_gt(len, 0);
    ck_assert_int_eq(kvs_blob_count(blob, len), 2);
    void *copy = malloc(len);
    memcpy(copy, blob, len);
    size_t len0;
    kvs_pending_clear(k);
    kvs_pending(k, &len0);
    ck_assert_uint_eq(len0, 0);
    ck_assert_int_eq(kvs_commit_blob(k, copy, 0), 0); /* empty: no-op */
    ck_assert_int_eq(kvs_count(k), 0);
    ck_assert_int_eq(kvs_commit_blob(k, copy, len), 0);
    ck_assert_str_eq(kvs_get(k, "a"), "1");
    ck_assert_str_eq(kvs_get(k, "b"), "");
    ck_assert_ptr_null(kvs_get(k, "c"));
    free(copy);
    kvs_destroy(k);
}
END_TEST

START_TEST(merge_by_concatenation)
{
    struct kvs *a = kvs_create(), *b = kvs_create(), *root = kvs_create();
    size_t la, lb;
    kvs_put_pending(a, "x", "from-a");
    kvs_put_pending(a, "shared", "a");
    kvs_put_pending(b, "y", "from-b");
    kvs_put_pending(b, "shared", "b");
    const void *ba = kvs_pending(a, &la);
    const void *bb = kvs_pending(b, &lb);
    struct pack all;
    pack_init(&all);
    pack_raw(&all, ba, la);
    pack_raw(&all, bb, lb);
    ck_assert_int_eq(kvs_blob_count(all.buf, all.len), 4);
    ck_assert_int_eq(kvs_commit_blob(root, all.buf, all.len), 0);
    ck_assert_str_eq(kvs_get(root, "x"), "from-a");
    ck_assert_str_eq(kvs_get(root, "y"), "from-b");
    ck_assert_str_eq(kvs_get(root, "shared"), "b"); /* later pair wins */
    ck_assert_int_eq(kvs_count(root), 3);
    const char *key, *val;
    ck_assert_int_eq(kvs_get_byidx(root, 0, &key, &val), 0);
    ck_assert_str_eq(key, "x");
    ck_assert_int_eq(kvs_get_byidx(root, 1, &key, &val), 0);
    ck_assert_str_eq(key, "shared");
    ck_assert_str_eq(val, "b");
    ck_assert_int_eq(kvs_get_byidx(root, 2, &key, &val), 0);
    ck_assert_str_eq(key, "y");
    ck_assert_int_eq(kvs_get_byidx(root, 3, &key, &val), -ENOENT);
    ck_assert_int_eq(kvs_get_byidx(root, -1, &key, &val), -ENOENT);
    pack_free(&all);
    kvs_destroy(a);
    kvs_destroy(b);
    kvs_destroy(root);
}
END_TEST

START_TEST(malformed_blob_leaves_store)
{
    struct kvs *k = kvs_create();
    struct pack p;
    pack_init(&p);
    pack_str(&p, "good");
    pack_str(&p, "1");
    pack_str(&p, "dangling-key");
    ck_assert_int_eq(kvs_blob_count(p.buf, p.len), -EPROTO);
    ck_assert_int_eq(kvs_commit_blob(k, p.buf, p.len), -EPROTO);
    ck_assert_ptr_null(kvs_get(k, "good"));
    /* truncated length field */
    ck_assert_int_eq(kvs_commit_blob(k, p.buf, 3), -EPROTO);
    /* empty key */
    pack_reset(&p);
    pack_str(&p, "");
    pack_str(&p, "v");
    ck_assert_int_eq(kvs_commit_blob(k, p.buf, p.len), -EPROTO);
    /* NUL inside a key */
    pack_reset(&p);
    pack_bytes(&p, "a\0b", 3);
    pack_str(&p, "v");
    ck_assert_int_eq(kvs_commit_blob(k, p.buf, p.len), -EPROTO);
    ck_assert_int_eq(kvs_count(k), 0);
    pack_free(&p);
    kvs_destroy(k);
}
END_TEST

START_TEST(caps_on_the_whole_blob)
{
    /* a key put twice before the fence: long value, then short, then another key.
     * Only the store the whole blob makes counts against the caps, and the same
     * blob committed again gives the same answer (fuzz_pmiserv_msg found the
     * second commit refused while the first passed). */
    struct kvs *k = kvs_create();
    char big[200];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    kvs_set_limits(k, 8, 120);
    ck_assert_int_eq(kvs_put_pending(k, "a", big), 0);
    ck_assert_int_eq(kvs_put_pending(k, "a", "short"), 0);
    ck_assert_int_eq(kvs_put_pending(k, "b", big + 150), 0);
    size_t len;
    const void *b = kvs_pending(k, &len);
    void *copy = malloc(len);
    memcpy(copy, b, len);
    kvs_pending_clear(k);
    ck_assert_int_eq(kvs_commit_blob(k, copy, len), 0); /* 200 bytes in between */
    ck_assert_int_eq(kvs_bytes(k), 1 + 5 + 1 + 49);
    ck_assert_int_eq(kvs_commit_blob(k, copy, len), 0);
    ck_assert_str_eq(kvs_get(k, "a"), "short");
    free(copy);
    kvs_destroy(k);

    k = kvs_create();
    kvs_set_limits(k, 8, 120);
    struct pack p;
    pack_init(&p);
    pack_str(&p, "b");
    pack_str(&p, big + 150);
    pack_str(&p, "a");
    pack_str(&p, big + 100);
    pack_str(&p, "a");
    pack_str(&p, "short");
    ck_assert_int_eq(kvs_commit_blob(k, p.buf, p.len), 0);
    int64_t bytes = kvs_bytes(k);
    ck_assert_int_eq(bytes, 1 + 49 + 1 + 5);
    ck_assert_int_eq(kvs_commit_blob(k, p.buf, p.len), 0); /* the same blob again */
    ck_assert_int_eq(kvs_bytes(k), bytes);
    ck_assert_str_eq(kvs_get(k, "a"), "short");
    /* a blob whose end passes the caps is refused */
    struct pack q;
    pack_init(&q);
    pack_str(&q, "c");
    pack_str(&q, big + 100);
    pack_str(&q, "d");
    pack_str(&q, big + 150);
    ck_assert_int_eq(kvs_commit_blob(k, q.buf, q.len), -EFBIG);
    pack_free(&q);
    pack_free(&p);
    kvs_destroy(k);
}
END_TEST

START_TEST(many_keys)
{
    struct kvs *k = kvs_create();
    char key[32], val[32];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 5000; i++) {
            snprintf(key, sizeof(key), "key-%d", i);
            snprintf(val, sizeof(val), "val-%d-%d", i, round);
            ck_assert_int_eq(kvs_put_pending(k, key, val), 0);
        }
        size_t len;
        const void *b = kvs_pending(k, &len);
        void *copy = malloc(len);
        memcpy(copy, b, len);
        kvs_pending_clear(k);
        ck_assert_int_eq(kvs_commit_blob(k, copy, len), 0);
        free(copy);
    }
    ck_assert_int_eq(kvs_count(k), 5000);
    for (int i = 0; i < 5000; i += 7) {
        snprintf(key, sizeof(key), "key-%d", i);
        snprintf(val, sizeof(val), "val-%d-1", i);
        ck_assert_str_eq(kvs_get(k, key), val);
    }
    ck_assert_ptr_null(kvs_get(k, "key-5000"));
    const char *kk, *vv;
    ck_assert_int_eq(kvs_get_byidx(k, 4999, &kk, &vv), 0);
    ck_assert_str_eq(kk, "key-4999");
    kvs_destroy(k);
}
END_TEST

START_TEST(msg_round_trip)
{
    struct pack p;
    struct msg m = {.type = MSG_FENCE_DOWN,
                    .epoch = 77,
                    .from = 3,
                    .origin = 5,
                    .dest = -1,
                    .payload = "abc",
                    .len = 3};
    pack_init(&p);
    ck_assert_int_eq(msg_encode(&p, &m), 0);
    struct msg d;
    ck_assert_int_eq(msg_decode(&d, p.buf, p.len), 0);
    ck_assert_int_eq(d.type, MSG_FENCE_DOWN);
    ck_assert_uint_eq(d.epoch, 77);
    ck_assert_int_eq(d.from, 3);
    ck_assert_int_eq(d.origin, 5);
    ck_assert_int_eq(d.dest, -1);
    ck_assert_uint_eq(d.len, 3);
    ck_assert(memcmp(d.payload, "abc", 3) == 0);
    /* every truncation is rejected, and so is a trailing byte */
    for (size_t n = 0; n < p.len; n++)
        ck_assert_int_eq(msg_decode(&d, p.buf, n), -EPROTO);
    pack_u8(&p, 0);
    ck_assert_int_eq(msg_decode(&d, p.buf, p.len), -EPROTO);
    /* bad magic, version, type */
    pack_reset(&p);
    msg_encode(&p, &m);
    p.buf[0] ^= 1;
    ck_assert_int_eq(msg_decode(&d, p.buf, p.len), -EPROTO);
    p.buf[0] ^= 1;
    p.buf[1] = 9;
    ck_assert_int_eq(msg_decode(&d, p.buf, p.len), -EPROTO);
    p.buf[1] = MSG_VERSION;
    p.buf[2] = 99;
    ck_assert_int_eq(msg_decode(&d, p.buf, p.len), -EPROTO);
    ck_assert_str_eq(msg_type2str(MSG_NS_REQ), "NS_REQ");
    /* empty payload decodes to NULL/0 */
    m.payload = NULL;
    m.len = 0;
    pack_reset(&p);
    msg_encode(&p, &m);
    ck_assert_int_eq(msg_decode(&d, p.buf, p.len), 0);
    ck_assert_ptr_null(d.payload);
    ck_assert_uint_eq(d.len, 0);
    pack_free(&p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kvs");
    TCase *tc = tcase_create("kvs");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, pending_then_commit);
    tcase_add_test(tc, merge_by_concatenation);
    tcase_add_test(tc, malformed_blob_leaves_store);
    tcase_add_test(tc, many_keys);
    tcase_add_test(tc, caps_on_the_whole_blob);
    tcase_add_test(tc, msg_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
