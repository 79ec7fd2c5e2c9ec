/* conn.c - mpiexec's frames over a common/stream.h stream: the type byte,
 * the tags of control frames (see conn.h).
 *
 * Notes: send_first is only used to put the job description ahead of any
 *   frame queued for a proxy before it (a proxy reads the job first); the
 *   stream puts it behind a frame already on the wire, if any.  Tags carry no
 *   sequence number (frames are tagged when queued, and send_first reorders
 *   the queue): they stop forged and altered control frames; the order of a
 *   stream is TCP's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "conn.h"

void mpx_conn_init(struct mpx_conn *c, int fd)
{
    memset(c, 0, sizeof(*c));
    loom_stream_init(&c->s, fd, MPX_FRAME_MAX, MPX_QUEUE_MAX, LOOM_STREAM_NONEMPTY);
}

void mpx_conn_free(struct mpx_conn *c, int close_fd)
{
    loom_stream_free(&c->s, close_fd);
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

int mpx_conn_flush(struct mpx_conn *c)
{
    return loom_stream_flush(&c->s);
}

int mpx_conn_pending(const struct mpx_conn *c)
{
    return loom_stream_pending(&c->s);
}

/* The frame is type, body, and on a tagged connection the tag of both. */
static int conn_queue(struct mpx_conn *c, uint8_t type, const void *body, size_t len,
                      bool first)
{
    uint8_t t[MPX_TAG_LEN];
    struct iovec iov[3] = {{.iov_base = &type, .iov_len = 1},
                           {.iov_base = (void *)body, .iov_len = len},
                           {.iov_base = t, .iov_len = 0}};
    int rc;

    if (tagged(c, type)) {
        c->tag(c->tag_key, c->tag_out, type, body, len, t);
        iov[2].iov_len = MPX_TAG_LEN;
    }
    rc = loom_stream_queue(&c->s, iov, 3, first);
    return rc < 0 ? rc : loom_stream_flush(&c->s);
}

int mpx_conn_send(struct mpx_conn *c, uint8_t type, const void *body, size_t len)
{
    return conn_queue(c, type, body, len, false);
}

int mpx_conn_send_first(struct mpx_conn *c, uint8_t type, const void *body, size_t len)
{
    return conn_queue(c, type, body, len, true);
}

long mpx_conn_read(struct mpx_conn *c)
{
    return loom_stream_read(&c->s);
}

int mpx_conn_next(struct mpx_conn *c, uint8_t *type, const uint8_t **body, size_t *len)
{
    const uint8_t *p;
    size_t bl;
    int rc = loom_stream_next(&c->s, &p, &bl);

    if (rc <= 0)
        return rc;
    *type = p[0]; /* the stream refuses empty frames: p[0] is there */
    *body = p + 1;
    bl -= 1;
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
    return 1;
}
