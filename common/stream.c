/* stream.c - framed, non-blocking stream over a socket (see stream.h).
 *
 * Design:
 *   Input lands in a staging buffer of LOOM_STREAM_STAGE bytes; frames that
 *   fit are handed out in place.  A frame whose header announces more than
 *   the staging buffer can hold gets a buffer of exactly its length (at most
 *   frame_max, checked before the allocation), and the following reads go
 *   straight into it; the staging buffer is empty meanwhile.  The staging
 *   buffer is compacted before each read, so a frame that fits always finds
 *   room once the owner drained the whole frames.
 *
 *   Output is a list of frames, each one allocation holding its header and
 *   payload; a flush gathers up to FLUSH_BATCH of them into one sendmsg(2).
 *   A frame partly written stays at the head (its off says how far).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stream.h"

#define FLUSH_BATCH 32

struct loom_stream_msg {
    struct loom_stream_msg *next;
    size_t len, off; /* len includes the 4-byte header */
    uint8_t data[];
};

void loom_stream_init(struct loom_stream *s, int fd, uint32_t frame_max, size_t queue_max,
                      unsigned flags)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->frame_max = frame_max;
    s->queue_max = queue_max;
    s->flags = flags;
}

void loom_stream_set_frame_max(struct loom_stream *s, uint32_t frame_max)
{
    s->frame_max = frame_max;
}

static void queue_drop(struct loom_stream *s)
{
    struct loom_stream_msg *m = s->qhead;

    while (m) {
        struct loom_stream_msg *n = m->next;
        free(m);
        m = n;
    }
    s->qhead = s->qtail = NULL;
    s->queued = 0;
}

static void input_drop(struct loom_stream *s)
{
    free(s->stage);
    free(s->big);
    free(s->given);
    s->stage = s->big = s->given = NULL;
    s->have = s->pos = s->big_len = s->big_got = 0;
}

void loom_stream_free(struct loom_stream *s, int close_fd)
{
    if (close_fd && s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    input_drop(s);
    queue_drop(s);
}

/* ---- output ---------------------------------------------------------------- */

int loom_stream_queue(struct loom_stream *s, const struct iovec *iov, int n, bool first)
{
    struct loom_stream_msg *m;
    size_t total = 0, off = 4;

    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > s->frame_max)
            return -EMSGSIZE;
        total += iov[i].iov_len;
        if (total > s->frame_max)
            return -EMSGSIZE;
    }
    if (s->queued > s->queue_max || 4 + total > s->queue_max - s->queued)
        return -ENOBUFS;
    m = malloc(sizeof(*m) + 4 + total);
    if (!m)
        return -ENOMEM;
    m->next = NULL;
    m->len = 4 + total;
    m->off = 0;
    m->data[0] = (uint8_t)(total >> 24);
    m->data[1] = (uint8_t)(total >> 16);
    m->data[2] = (uint8_t)(total >> 8);
    m->data[3] = (uint8_t)total;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len)
            memcpy(m->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    if (!s->qhead) {
        s->qhead = s->qtail = m;
    } else if (!first) {
        s->qtail->next = m;
        s->qtail = m;
    } else if (s->qhead->off == 0) { /* nothing of the head written: go before it */
        m->next = s->qhead;
        s->qhead = m;
    } else { /* the head is on the wire already: right behind it */
        m->next = s->qhead->next;
        s->qhead->next = m;
        if (s->qtail == s->qhead)
            s->qtail = m;
    }
    s->queued += m->len;
    return 0;
}

int loom_stream_flush(struct loom_stream *s)
{
    if (s->fd < 0)
        return 0;
    while (s->qhead) {
        struct iovec iov[FLUSH_BATCH];
        struct msghdr mh;
        int k = 0;
        ssize_t n;

        for (struct loom_stream_msg *m = s->qhead; m && k < FLUSH_BATCH;
             m = m->next, k++) {
            iov[k].iov_base = m->data + m->off;
            iov[k].iov_len = m->len - m->off;
        }
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)k;
        n = sendmsg(s->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return -errno;
        }
        while (n > 0) {
            struct loom_stream_msg *m = s->qhead;
            size_t left = m->len - m->off;
            if ((size_t)n < left) {
                m->off += (size_t)n;
                s->queued -= (size_t)n;
                break;
            }
            n -= (ssize_t)left;
            s->queued -= left;
            s->qhead = m->next;
            if (!s->qhead)
                s->qtail = NULL;
            free(m);
        }
    }
    return 0;
}

int loom_stream_send(struct loom_stream *s, const void *buf, size_t len)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    int rc = loom_stream_queue(s, &iov, 1, false);

    return rc < 0 ? rc : loom_stream_flush(s);
}

void loom_stream_splice(struct loom_stream *dst, struct loom_stream *src)
{
    if (!src->qhead)
        return;
    if (dst->qtail)
        dst->qtail->next = src->qhead;
    else
        dst->qhead = src->qhead;
    dst->qtail = src->qtail;
    dst->queued += src->queued;
    src->qhead = src->qtail = NULL;
    src->queued = 0;
}

/* ---- input ----------------------------------------------------------------- */

/* Where the next received bytes go, and how many fit (0: drain first). */
static uint8_t *input_room(struct loom_stream *s, size_t *room)
{
    free(s->given); /* a big frame handed out lives until the next input */
    s->given = NULL;
    if (s->big) {
        *room = s->big_len - s->big_got;
        return s->big + s->big_got;
    }
    if (!s->stage && !(s->stage = malloc(LOOM_STREAM_STAGE)))
        return NULL;
    if (s->pos) { /* compact: frames handed out before are invalid from here */
        memmove(s->stage, s->stage + s->pos, s->have - s->pos);
        s->have -= s->pos;
        s->pos = 0;
    }
    *room = LOOM_STREAM_STAGE - s->have;
    return s->stage + s->have;
}

static void input_got(struct loom_stream *s, size_t n)
{
    if (s->big)
        s->big_got += n;
    else
        s->have += n;
}

long loom_stream_read(struct loom_stream *s)
{
    size_t room;
    uint8_t *dst = input_room(s, &room);
    ssize_t n;

    if (!dst)
        return -ENOMEM;
    if (!room)
        return -ENOBUFS;
    do {
        n = recv(s->fd, dst, room, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    input_got(s, (size_t)n);
    return (long)n;
}

long loom_stream_feed(struct loom_stream *s, const void *data, size_t len)
{
    size_t room;
    uint8_t *dst = input_room(s, &room);

    if (!dst)
        return -ENOMEM;
    if (room > len)
        room = len;
    if (room)
        memcpy(dst, data, room);
    input_got(s, room);
    return (long)room;
}

int loom_stream_next(struct loom_stream *s, const uint8_t **p, size_t *len)
{
    const uint8_t *h;
    uint32_t l;
    size_t avail;

    free(s->given);
    s->given = NULL;
    if (s->big) {
        if (s->big_got < s->big_len)
            return 0;
        *p = s->given = s->big;
        *len = s->big_len;
        s->big = NULL;
        s->big_len = s->big_got = 0;
        return 1;
    }
    avail = s->have - s->pos;
    if (avail < 4)
        return 0;
    h = s->stage + s->pos;
    l = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    if (l > s->frame_max || (l == 0 && (s->flags & LOOM_STREAM_NONEMPTY))) {
        s->bad_len = l;
        return -EPROTO;
    }
    if (avail - 4 >= l) {
        *p = h + 4;
        *len = l;
        s->pos += 4 + (size_t)l;
        return 1;
    }
    if (4 + (size_t)l > LOOM_STREAM_STAGE) { /* never fits: a buffer of its own */
        s->big = malloc(l);
        if (!s->big)
            return -ENOMEM;
        s->big_len = l;
        s->big_got = avail - 4;
        memcpy(s->big, h + 4, s->big_got);
        s->have = s->pos = 0;
    }
    return 0;
}

size_t loom_stream_partial(const struct loom_stream *s)
{
    return (s->have - s->pos) + (s->big ? 4 + s->big_got : 0);
}

void loom_stream_take_input(struct loom_stream *dst, struct loom_stream *src)
{
    input_drop(dst);
    dst->stage = src->stage;
    dst->have = src->have;
    dst->pos = src->pos;
    dst->big = src->big;
    dst->big_len = src->big_len;
    dst->big_got = src->big_got;
    dst->given = src->given;
    src->stage = src->big = src->given = NULL;
    src->have = src->pos = src->big_len = src->big_got = 0;
}
