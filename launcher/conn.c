/* conn.c - framed, buffered, non-blocking stream connection (see conn.h).
 *
 * Notes: send_first is only used to put the job description ahead of tree
 *   messages that were queued for a proxy before it connected; nothing has
 *   been sent on such a queue yet, so inserting at out_off is safe.  Tags
 *   carry no sequence number (frames are tagged when queued, and send_first
 *   reorders the queue): they stop forged and altered control frames; the
 *   order of a stream is TCP's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"

#define READ_CHUNK 65536

void mpx_conn_init(struct mpx_conn *c, int fd)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
}

void mpx_conn_free(struct mpx_conn *c, int close_fd)
{
    if (close_fd && c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    iobuf_free(&c->in);
    iobuf_free(&c->out);
    c->in_off = c->out_off = 0;
}

int mpx_frame_parse(const void *buf, size_t len, uint8_t *type, size_t *bodylen,
                    size_t *framelen)
{
    const uint8_t *b = buf;
    uint32_t l;

    if (len < 4)
        return 0;
    l = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    if (l == 0 || l > MPX_FRAME_MAX)
        return -EPROTO;
    if (len < 4 + (size_t)l)
        return 0;
    *type = b[4];
    *bodylen = l - 1;
    *framelen = 4 + (size_t)l;
    return 1;
}

static int tagged(const struct mpx_conn *c, uint8_t type)
{
    return c->tag && type < 32 && (MPX_TAGGED_TYPES >> type & 1u);
}

void mpx_conn_set_tag(struct mpx_conn *c, mpx_tag_fn fn, const void *key, int dir_out,
                      int dir_in)
{
    c->tag = fn;
    c->tag_key = key;
    c->tag_out = dir_out;
    c->tag_in = dir_in;
}

static void header(uint8_t h[5], uint8_t type, size_t len)
{
    uint32_t l = (uint32_t)len + 1;

    h[0] = (uint8_t)(l >> 24);
    h[1] = (uint8_t)(l >> 16);
    h[2] = (uint8_t)(l >> 8);
    h[3] = (uint8_t)l;
    h[4] = type;
}

int mpx_conn_flush(struct mpx_conn *c)
{
    if (c->fd < 0)
        return 0;
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0)
            return -errno;
        c->out_off += (size_t)n;
    }
    c->out.len = 0;
    c->out_off = 0;
    return 0;
}

int mpx_conn_pending(const struct mpx_conn *c)
{
    return c->out_off < c->out.len;
}

int mpx_conn_send(struct mpx_conn *c, uint8_t type, const void *body, size_t len)
{
    uint8_t h[5], t[MPX_TAG_LEN];
    size_t tl = tagged(c, type) ? MPX_TAG_LEN : 0;

    if (len + 1 + tl > MPX_FRAME_MAX)
        return -EMSGSIZE;
    header(h, type, len + tl);
    if (tl)
        c->tag(c->tag_key, c->tag_out, type, body, len, t);
    if (iobuf_append(&c->out, (const char *)h, 5) < 0 ||
        (len && iobuf_append(&c->out, body, len) < 0) ||
        (tl && iobuf_append(&c->out, (const char *)t, tl) < 0))
        return -ENOMEM;
    return mpx_conn_flush(c);
}

int mpx_conn_send_first(struct mpx_conn *c, uint8_t type, const void *body, size_t len)
{
    struct iobuf nb = {0};
    uint8_t h[5], t[MPX_TAG_LEN];
    size_t tl = tagged(c, type) ? MPX_TAG_LEN : 0;

    if (len + 1 + tl > MPX_FRAME_MAX)
        return -EMSGSIZE;
    header(h, type, len + tl);
    if (tl)
        c->tag(c->tag_key, c->tag_out, type, body, len, t);
    if (iobuf_append(&nb, (const char *)h, 5) < 0 ||
        (len && iobuf_append(&nb, body, len) < 0) ||
        (tl && iobuf_append(&nb, (const char *)t, tl) < 0) ||
        (c->out.len > c->out_off &&
         iobuf_append(&nb, c->out.p + c->out_off, c->out.len - c->out_off) < 0)) {
        iobuf_free(&nb);
        return -ENOMEM;
    }
    iobuf_free(&c->out);
    c->out = nb;
    c->out_off = 0;
    return mpx_conn_flush(c);
}

long mpx_conn_read(struct mpx_conn *c)
{
    char buf[READ_CHUNK];
    ssize_t n;

    if (c->in_off > 0 && c->in_off == c->in.len) {
        c->in.len = 0;
        c->in_off = 0;
    } else if (c->in_off > 0) {
        memmove(c->in.p, c->in.p + c->in_off, c->in.len - c->in_off);
        c->in.len -= c->in_off;
        c->in_off = 0;
    }
    do {
        n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return (errno == EWOULDBLOCK) ? -EAGAIN : -errno;
    if (n > 0 && iobuf_append(&c->in, buf, (size_t)n) < 0)
        return -ENOMEM;
    return (long)n;
}

int mpx_conn_next(struct mpx_conn *c, uint8_t *type, const uint8_t **body, size_t *len)
{
    size_t bl, fl;
    int rc;

    if (!c->in.p) /* nothing read yet (and no pointer arithmetic on NULL) */
        return 0;
    rc = mpx_frame_parse(c->in.p + c->in_off, c->in.len - c->in_off, type, &bl, &fl);
    if (rc <= 0)
        return rc;
    *body = (const uint8_t *)c->in.p + c->in_off + 5;
    if (tagged(c, *type)) {
        uint8_t t[MPX_TAG_LEN], diff = 0;
        if (bl < MPX_TAG_LEN)
            return -EBADMSG;
        bl -= MPX_TAG_LEN;
        c->tag(c->tag_key, c->tag_in, *type, *body, bl, t);
        for (size_t i = 0; i < MPX_TAG_LEN; i++) /* time independent of the data */
            diff |= (uint8_t)(t[i] ^ (*body)[bl + i]);
        if (diff)
            return -EBADMSG;
    }
    *len = bl;
    c->in_off += fl;
    return 1;
}
