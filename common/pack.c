/* pack.c - growable big-endian pack buffer and bounds-checked unpacker.
 *
 * Contract: see pack.h.  Errors are sticky in both directions: once a
 * writer failed to allocate it ignores further writes; once a reader
 * overran it returns zeros/NULL and never touches the buffer again.
 *
 * Notes: integers are big-endian so a message means the same on every
 * node; strings and byte blobs carry a u32 length (no terminator).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"

void pack_init(struct pack *p)
{
    p->buf = NULL;
    p->len = p->cap = 0;
    p->err = 0;
}

void pack_free(struct pack *p)
{
    free(p->buf);
    pack_init(p);
}

void pack_reset(struct pack *p)
{
    p->len = 0;
    p->err = 0;
}

/* Make room for n more bytes; returns the write position or NULL. */
static uint8_t *reserve(struct pack *p, size_t n)
{
    if (p->err)
        return NULL;
    if (n > SIZE_MAX - p->len) {
        p->err = -ENOMEM;
        return NULL;
    }
    if (p->len + n > p->cap) {
        size_t cap = p->cap ? p->cap : 64;
        while (cap < p->len + n) {
            if (cap > SIZE_MAX / 2) {
                cap = p->len + n;
                break;
            }
            cap *= 2;
        }
        uint8_t *b = realloc(p->buf, cap);
        if (!b) {
            p->err = -ENOMEM;
            return NULL;
        }
        p->buf = b;
        p->cap = cap;
    }
    uint8_t *w = p->buf + p->len;
    p->len += n;
    return w;
}

void pack_u8(struct pack *p, uint8_t v)
{
    uint8_t *w = reserve(p, 1);
    if (w)
        w[0] = v;
}

void pack_u32(struct pack *p, uint32_t v)
{
    uint8_t *w = reserve(p, 4);
    if (!w)
        return;
    for (int i = 3; i >= 0; i--, v >>= 8)
        w[i] = (uint8_t)v;
}

void pack_u64(struct pack *p, uint64_t v)
{
    uint8_t *w = reserve(p, 8);
    if (!w)
        return;
    for (int i = 7; i >= 0; i--, v >>= 8)
        w[i] = (uint8_t)v;
}

void pack_i32(struct pack *p, int32_t v)
{
    pack_u32(p, (uint32_t)v);
}

void pack_raw(struct pack *p, const void *b, size_t n)
{
    if (n == 0)
        return;
    uint8_t *w = reserve(p, n);
    if (w)
        memcpy(w, b, n);
}

void pack_bytes(struct pack *p, const void *b, size_t n)
{
    if (n > UINT32_MAX) {
        if (!p->err)
            p->err = -EMSGSIZE;
        return;
    }
    pack_u32(p, (uint32_t)n);
    pack_raw(p, b, n);
}

void pack_str(struct pack *p, const char *s)
{
    pack_bytes(p, s ? s : "", s ? strlen(s) : 0);
}

int pack_error(const struct pack *p)
{
    return p->err;
}

uint8_t *pack_steal(struct pack *p, size_t *len)
{
    uint8_t *b = p->buf;

    if (len)
        *len = p->len;
    pack_init(p);
    return b;
}

void unpack_init(struct unpack *u, const void *buf, size_t len)
{
    u->buf = buf;
    u->len = buf ? len : 0;
    u->pos = 0;
    u->err = 0;
}

/* The next n bytes, or NULL (and sticky -EPROTO) if they are not there. */
static const uint8_t *take(struct unpack *u, size_t n)
{
    if (u->err)
        return NULL;
    if (n > u->len - u->pos) {
        u->err = -EPROTO;
        return NULL;
    }
    const uint8_t *r = u->buf + u->pos;
    u->pos += n;
    return r;
}

uint8_t unpack_u8(struct unpack *u)
{
    const uint8_t *r = take(u, 1);
    return r ? r[0] : 0;
}

uint32_t unpack_u32(struct unpack *u)
{
    const uint8_t *r = take(u, 4);
    uint32_t v = 0;

    if (r)
        for (int i = 0; i < 4; i++)
            v = (v << 8) | r[i];
    return v;
}

uint64_t unpack_u64(struct unpack *u)
{
    const uint8_t *r = take(u, 8);
    uint64_t v = 0;

    if (r)
        for (int i = 0; i < 8; i++)
            v = (v << 8) | r[i];
    return v;
}

int32_t unpack_i32(struct unpack *u)
{
    uint32_t v = unpack_u32(u);
    /* two's complement without implementation-defined conversion */
    return v <= INT32_MAX ? (int32_t)v : -(int32_t)(UINT32_MAX - v) - 1;
}

const void *unpack_bytes(struct unpack *u, size_t *n)
{
    size_t len = unpack_u32(u);
    const uint8_t *r = u->err ? NULL : take(u, len);

    if (n)
        *n = r ? len : 0;
    if (r && len == 0)
        return u->buf + u->pos; /* valid empty blob */
    return r;
}

char *unpack_strdup(struct unpack *u)
{
    size_t n;
    const char *b = unpack_bytes(u, &n);

    if (!b || memchr(b, '\0', n))
        return NULL;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

size_t unpack_remaining(const struct unpack *u)
{
    return u->err ? 0 : u->len - u->pos;
}

int unpack_error(const struct unpack *u)
{
    return u->err;
}
