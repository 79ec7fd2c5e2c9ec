/* mac.c - SHA-256, HMAC-SHA256, kernel randomness, constant-time compare, hex.
 * Written from FIPS 180-4 (section 6.2 for SHA-256, its constants in 4.2.2 and
 * initial hash value in 5.3.3) and RFC 2104 (HMAC).  See mac.h for the contract. */
#include "mac.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube roots
 * of the first 64 primes. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t b[64])
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)b[4 * t] << 24 | (uint32_t)b[4 * t + 1] << 16 |
               (uint32_t)b[4 * t + 2] << 8 | (uint32_t)b[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
             hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                      ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 =
            (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = bb;
        bb = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += bb;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void loom_sha256_init(struct loom_sha256 *c)
{
    /* FIPS 180-4 5.3.3 */
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->nbytes = 0;
    c->blen = 0;
}

void loom_sha256_update(struct loom_sha256 *c, const void *p, size_t n)
{
    const uint8_t *s = p;
    c->nbytes += n;
    if (c->blen) {
        size_t take = 64 - c->blen < n ? 64 - c->blen : n;
        memcpy(c->blk + c->blen, s, take);
        c->blen += take;
        s += take;
        n -= take;
        if (c->blen < 64)
            return;
        compress(c->h, c->blk);
        c->blen = 0;
    }
    for (; n >= 64; s += 64, n -= 64)
        compress(c->h, s);
    memcpy(c->blk, s, n);
    c->blen = n;
}

void loom_sha256_final(struct loom_sha256 *c, unsigned char out[32])
{
    uint64_t bits = c->nbytes * 8;
    c->blk[c->blen++] = 0x80; /* 5.1.1: a one bit, zeros, then the length */
    if (c->blen > 56) {
        memset(c->blk + c->blen, 0, 64 - c->blen);
        compress(c->h, c->blk);
        c->blen = 0;
    }
    memset(c->blk + c->blen, 0, 56 - c->blen);
    for (int i = 0; i < 8; i++)
        c->blk[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    compress(c->h, c->blk);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
    memset(c, 0, sizeof *c);
}

void loom_sha256(const void *p, size_t n, unsigned char out[32])
{
    struct loom_sha256 c;
    loom_sha256_init(&c);
    loom_sha256_update(&c, p, n);
    loom_sha256_final(&c, out);
}

void loom_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                      unsigned char out[LOOM_MAC_LEN])
{
    /* RFC 2104 with B = 64: H(K ^ opad, H(K ^ ipad, text)); keys longer than B are hashed
     */
    uint8_t k[64] = {0}, pad[64], inner[32];
    if (klen > 64)
        loom_sha256(key, klen, k);
    else if (klen)
        memcpy(k, key, klen);
    struct loom_sha256 c;
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    loom_sha256_init(&c);
    loom_sha256_update(&c, pad, 64);
    loom_sha256_update(&c, msg, mlen);
    loom_sha256_final(&c, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    loom_sha256_init(&c);
    loom_sha256_update(&c, pad, 64);
    loom_sha256_update(&c, inner, sizeof inner);
    loom_sha256_final(&c, out);
    memset(k, 0, sizeof k);
    memset(pad, 0, sizeof pad);
}

int loom_random_bytes(void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int loom_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

void loom_hex(const void *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *s = p;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[s[i] >> 4];
        out[2 * i + 1] = digits[s[i] & 15];
    }
    out[2 * n] = '\0';
}

static int nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int loom_unhex(const char *s, void *out, size_t n)
{
    uint8_t *o = out;
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = nibble(s[2 * i]);
        if (hi < 0)
            return -1;
        int lo = nibble(s[2 * i + 1]);
        if (lo < 0)
            return -1;
        o[i] = (uint8_t)(hi << 4 | lo);
    }
    return s[2 * n] == '\0' ? 0 : -1;
}
