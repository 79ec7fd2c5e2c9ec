/* fuzz_pmiserv_msg.c - libFuzzer target: a tree message from another node's server
 * (msg_decode, pmiserv/msg.c) and the KVS blob it carries for a fence (kvs.c).
 *
 * fuzz-sources: pmiserv/msg.c pmiserv/kvs.c pmiserv/strmap.c common/pack.c common/mac.c
 * fuzz-cflags: -Icommon -Ipmiserv
 *
 * Contract: the input is one whole tree message (the host preserves boundaries).
 * Invariants checked on top of the sanitizers (a trap is a finding):
 *   - msg_decode accepts only what msg_encode can produce: a decoded message encodes
 *     back to exactly the input bytes, its payload lies inside the input, and its type
 *     is a known one;
 *   - its payload, read as a KVS blob: kvs_blob_count and kvs_commit_blob agree (a
 *     malformed blob, -EPROTO, leaves the store untouched); a commit under caps (8 keys,
 *     600 bytes) never passes them, and what it stores is readable back: every
 *     getbyidx pair is found by kvs_get with the same value, keys and bytes add up;
 *   - committing the same blob twice changes nothing the second time (later pairs
 *     replace earlier ones in place).
 * Seeds: corpus/pmiserv_msg/: fence, name service, ring, blob-collective, direct
 * modex and on-demand KVS get (kvs-req, kvs-resp-*) messages in msg.h's layout carrying
 * the puts of captured clients (MPICH 4.0.2, Slurm 22.05.8 libpmi2; tests/unit/fixtures),
 * and bare KVS blobs (over the caps, re-puts).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"
#include "msg.h"
#include "pack.h"

#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c))                                                                        \
            __builtin_trap();                                                            \
    } while (0)

/* within: the last commit succeeded, so the store holds the caps (a refused
 * commit leaves a store past them, which the fence then throws away) */
static void check_store(const struct kvs *k, int within)
{
    int64_t bytes = 0;
    const char *key, *val;
    int n = kvs_count(k);
    CHECK(!within || (n <= 8 && kvs_bytes(k) <= 600));
    for (int i = 0; i < n; i++) {
        CHECK(kvs_get_byidx(k, i, &key, &val) == 0);
        const char *v = kvs_get(k, key);
        CHECK(v != NULL && strcmp(v, val) == 0);
        bytes += (int64_t)(strlen(key) + strlen(val));
    }
    CHECK(kvs_get_byidx(k, n, &key, &val) == -ENOENT);
    CHECK(bytes == kvs_bytes(k));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct msg m;

    if (size > 1 << 20)
        return 0;
    uint8_t *buf = malloc(size ? size : 1); /* exact size: ASan sees any overread */
    memcpy(buf, data, size);
    int rc = msg_decode(&m, buf, size);
    const void *payload = buf;
    size_t plen = size;
    if (rc == 0) {
        CHECK(m.type >= MSG_FENCE_UP && m.type <= MSG_KVS_RESP);
        CHECK(strcmp(msg_type2str(m.type), "UNKNOWN") != 0);
        CHECK(m.len == 0 || ((const uint8_t *)m.payload >= buf &&
                             (const uint8_t *)m.payload + m.len <= buf + size));
        struct pack p;
        pack_init(&p);
        CHECK(msg_encode(&p, &m) == 0);
        CHECK(p.len == size && memcmp(p.buf, buf, size) == 0);
        pack_free(&p);
        payload = m.payload;
        plen = m.len;
    } else {
        CHECK(rc == -EPROTO);
    }

    /* the payload (or, undecodable, the whole input) as a fence's KVS blob */
    struct kvs *k = kvs_create();
    if (!k) {
        free(buf);
        return 0;
    }
    kvs_set_limits(k, 8, 600);
    int n = kvs_blob_count(payload, plen);
    int crc = kvs_commit_blob(k, payload, plen);
    if (n < 0) {
        CHECK(crc == -EPROTO && kvs_count(k) == 0 && kvs_bytes(k) == 0);
    } else {
        CHECK(crc == 0 || crc == -EDQUOT || crc == -EFBIG);
        CHECK(kvs_count(k) <= n);
        check_store(k, crc == 0);
        if (crc == 0) {
            int cnt = kvs_count(k);
            int64_t bytes = kvs_bytes(k);
            CHECK(kvs_commit_blob(k, payload, plen) == 0);
            CHECK(kvs_count(k) == cnt && kvs_bytes(k) == bytes);
            check_store(k, 1);
        }
    }
    /* the pending side: every pair put again comes out as a blob of the same count */
    if (n > 0 && n <= 64 && crc == 0) {
        struct kvs *k2 = kvs_create();
        const char *key, *val;
        for (int i = 0; k2 && i < kvs_count(k); i++) {
            CHECK(kvs_get_byidx(k, i, &key, &val) == 0);
            CHECK(kvs_put_pending(k2, key, val) == 0);
        }
        if (k2) {
            size_t len;
            const void *b = kvs_pending(k2, &len);
            CHECK(kvs_blob_count(b, len) == kvs_count(k));
            CHECK(kvs_pending_count(k2) == kvs_count(k));
            kvs_destroy(k2);
        }
    }
    kvs_destroy(k);
    free(buf);
    return 0;
}
