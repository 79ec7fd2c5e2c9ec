/* mac.h - the few cryptographic pieces Loom's authenticated handshakes need:
 * SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104), kernel randomness, a
 * constant-time compare, and hex for secrets carried in text (env, KVS).
 *
 * Contract:
 *   - libc-only and reentrant: no global state, no allocation, usable from
 *     libmpi, the launcher, the plugin and the client libraries alike.
 *   - loom_random_bytes() reads getrandom(2) (blocking only until the kernel's
 *     pool is initialised at boot); it never falls back to a weaker source:
 *     -1 with errno when the kernel gives nothing.
 *   - loom_ct_equal() takes the same time for every pair of inputs of length n,
 *     so a peer cannot learn a tag byte by byte from response times.
 *
 * Notes:
 *   - Secrets are LOOM_KEY_LEN (32) random bytes; tags LOOM_MAC_LEN (32).  A
 *     challenge-response proves knowledge of a secret without sending it:
 *     tag = HMAC(secret, nonce of the other side || what the message binds).
 */
#ifndef LOOM_MAC_H
#define LOOM_MAC_H

#include <stddef.h>
#include <stdint.h>

#define LOOM_MAC_LEN 32 /* HMAC-SHA256 tag bytes */
#define LOOM_KEY_LEN 32 /* bytes of a random secret */

struct loom_sha256 {
    uint32_t h[8];
    uint64_t nbytes; /* message bytes absorbed so far */
    uint8_t blk[64]; /* partial block */
    size_t blen;     /* bytes in blk */
};

void loom_sha256_init(struct loom_sha256 *c);
void loom_sha256_update(struct loom_sha256 *c, const void *p, size_t n);
void loom_sha256_final(struct loom_sha256 *c, unsigned char out[32]);
void loom_sha256(const void *p, size_t n, unsigned char out[32]);

void loom_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                      unsigned char out[LOOM_MAC_LEN]);

/* getrandom(2) until n bytes are read: 0, or -1 with errno. */
int loom_random_bytes(void *buf, size_t n);

/* 1 when the n bytes of a and b are equal, else 0, in time independent of the data. */
int loom_ct_equal(const void *a, const void *b, size_t n);

/* Lowercase hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
void loom_hex(const void *p, size_t n, char *out);

/* Exactly 2n hex digits (either case, nothing after them) into n bytes: 0, or -1. */
int loom_unhex(const char *s, void *out, size_t n);

#endif
