/* pack.h - a growable byte buffer with big-endian pack/unpack, for messages
 * between PMI servers (fence gather/broadcast, name service).
 *
 * Contract: writers never fail mid-way; the first allocation failure is
 * remembered and returned by pack_error() (-ENOMEM).  Readers never read past
 * the end: an overrun sets a sticky -EPROTO (unpack_error) and returns zeros /
 * NULL, so a decoder can read a whole message and check once at the end.
 */
#ifndef LOOM_PACK_H
#define LOOM_PACK_H

#include <stddef.h>
#include <stdint.h>

struct pack {
    uint8_t *buf;
    size_t len, cap;
    int err;
};

void pack_init(struct pack *p);
void pack_free(struct pack *p);
void pack_reset(struct pack *p);                       /* len = 0, keeps memory */
void pack_u8(struct pack *p, uint8_t v);
void pack_u32(struct pack *p, uint32_t v);
void pack_u64(struct pack *p, uint64_t v);
void pack_i32(struct pack *p, int32_t v);
void pack_raw(struct pack *p, const void *b, size_t n);   /* no length prefix */
void pack_bytes(struct pack *p, const void *b, size_t n); /* u32 length + bytes */
void pack_str(struct pack *p, const char *s);             /* u32 length + bytes, no NUL */
int pack_error(const struct pack *p);
/* Hand the buffer over to the caller (who frees it); p is re-initialised. */
uint8_t *pack_steal(struct pack *p, size_t *len);

struct unpack {
    const uint8_t *buf;
    size_t len, pos;
    int err;
};

void unpack_init(struct unpack *u, const void *buf, size_t len);
uint8_t unpack_u8(struct unpack *u);
uint32_t unpack_u32(struct unpack *u);
uint64_t unpack_u64(struct unpack *u);
int32_t unpack_i32(struct unpack *u);
/* u32 length + bytes: returns a pointer into the buffer (not NUL-terminated)
 * and the length, or NULL after an overrun. */
const void *unpack_bytes(struct unpack *u, size_t *n);
/* Like unpack_bytes but returns a malloc'ed NUL-terminated copy (NULL on
 * overrun, or if the bytes contain a NUL). */
char *unpack_strdup(struct unpack *u);
size_t unpack_remaining(const struct unpack *u);
int unpack_error(const struct unpack *u);

#endif /* LOOM_PACK_H */
