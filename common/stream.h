/* stream.h - one framed, non-blocking stream over a socket: the transport of
 * treenet's tree links (treenet/links.c) and of mpiexec's connections to its
 * proxies (launcher/conn.c).
 *
 * Contract:
 *   Wire: every frame is a 4-byte big-endian length L followed by L bytes of
 *   payload; nothing else is ever written.  What the payload means (a tree
 *   message, a handshake credential, a type byte and a body) is the owner's.
 *
 *   Bounds, all given by the owner:
 *   - frame_max: the largest L received (larger is -EPROTO from
 *     loom_stream_next(), and loom_stream_bad_len() tells the length) and
 *     sent (-EMSGSIZE).  It may change between frames (a handshake limit,
 *     then the message limit): each length is judged when its frame is parsed.
 *     With LOOM_STREAM_NONEMPTY a length of 0 is -EPROTO too.
 *   - queue_max: the most bytes (headers included) the output queue holds;
 *     a frame that would go beyond is refused with -ENOBUFS (nothing queued).
 *   So the memory a peer can make us hold is a 64 KiB staging buffer, one
 *   frame of at most frame_max being assembled, and our own queue, however
 *   it sends or stops reading.
 *
 *   Input: loom_stream_read() does one recv(2) into the staging buffer (or
 *   straight into the buffer of a frame larger than it); then
 *   loom_stream_next() hands out whole frames until it returns 0.  A frame
 *   handed out stays valid until the next loom_stream_read(), _feed(),
 *   _take_input() or _free(); a large frame until the next _next() as well.
 *   The owner drains _next() before reading again (otherwise _read() may
 *   find no room: -ENOBUFS).  EOF is a read of 0; loom_stream_partial() then
 *   says whether it came in the middle of a frame.  loom_stream_feed() puts
 *   bytes in as if received (tests, fuzzing).
 *
 *   Output: loom_stream_queue() copies one frame (its payload given as an
 *   iovec) to the queue, at the end or (first) ahead of every frame not
 *   begun yet; loom_stream_flush() writes what the socket takes now
 *   (sendmsg, MSG_NOSIGNAL, several frames per call).  The owner watches
 *   the fd for writing while loom_stream_pending().  With fd < 0 frames
 *   only queue (a link not up yet); loom_stream_splice() moves one stream's
 *   queue to the end of another's.
 *
 * Notes: functions return 0 (or a count) or -errno.  No locks: a stream
 *   belongs to one thread.  The fd is the owner's to close unless it calls
 *   loom_stream_free(s, 1).
 */
#ifndef LOOM_COMMON_STREAM_H
#define LOOM_COMMON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define LOOM_STREAM_STAGE (64 * 1024) /* receive staging buffer */
#define LOOM_STREAM_NONEMPTY 1u       /* flag: a frame of length 0 is a protocol error */

struct loom_stream_msg;

struct loom_stream {
    int fd;
    uint32_t frame_max;
    size_t queue_max;
    unsigned flags;
    /* input */
    uint8_t *stage;   /* LOOM_STREAM_STAGE bytes, allocated at the first read */
    size_t have, pos; /* bytes in stage; consumed part */
    uint8_t *big;     /* a frame larger than the stage, being assembled */
    size_t big_len, big_got;
    uint8_t *given;   /* a big frame handed out, freed at the next call */
    uint32_t bad_len; /* the length -EPROTO refused */
    /* output */
    struct loom_stream_msg *qhead, *qtail;
    size_t queued; /* bytes not yet written, headers included */
};

void loom_stream_init(struct loom_stream *s, int fd, uint32_t frame_max, size_t queue_max,
                      unsigned flags);
void loom_stream_set_frame_max(struct loom_stream *s, uint32_t frame_max);
/* Frees the buffers and the queue; closes the fd if close_fd.  s can be
 * initialised again. */
void loom_stream_free(struct loom_stream *s, int close_fd);

/* Queue one frame whose payload is the concatenation of iov[0..n-1].
 * first: ahead of every queued frame not begun yet.  0, -EMSGSIZE (above
 * frame_max), -ENOBUFS (queue_max reached), -ENOMEM. */
int loom_stream_queue(struct loom_stream *s, const struct iovec *iov, int n, bool first);
/* Write what the socket takes.  0 (also: nothing to do, fd < 0), or -errno
 * of a hard socket error. */
int loom_stream_flush(struct loom_stream *s);
/* Queue one frame and flush: loom_stream_queue's errors, then flush's. */
int loom_stream_send(struct loom_stream *s, const void *buf, size_t len);
static inline int loom_stream_pending(const struct loom_stream *s)
{
    return s->qhead != NULL;
}
static inline size_t loom_stream_queued(const struct loom_stream *s)
{
    return s->queued;
}
/* Move src's whole queue (nothing of it written yet by src) to the end of
 * dst's; src's queue is empty after.  The bound is not checked: src had one. */
void loom_stream_splice(struct loom_stream *dst, struct loom_stream *src);

/* One recv(2): > 0 bytes, 0 at EOF, -EAGAIN, -ENOBUFS (frames not drained
 * with loom_stream_next()), -ENOMEM, or -errno. */
long loom_stream_read(struct loom_stream *s);
/* Bytes taken from data as if received (fewer when frames must be drained
 * first), or -ENOMEM. */
long loom_stream_feed(struct loom_stream *s, const void *data, size_t len);
/* 1 with a frame (payload at *p, length *len), 0 when none is complete,
 * -EPROTO a length above frame_max (or 0 with LOOM_STREAM_NONEMPTY), -ENOMEM
 * no memory for a large frame.  After an error the stream is unusable. */
int loom_stream_next(struct loom_stream *s, const uint8_t **p, size_t *len);
/* The length refused by the last -EPROTO of loom_stream_next(). */
static inline uint32_t loom_stream_bad_len(const struct loom_stream *s)
{
    return s->bad_len;
}
/* Bytes received and not yet handed out (a frame begun, or frames not
 * drained yet). */
size_t loom_stream_partial(const struct loom_stream *s);
/* Move src's unread input to dst (whose input must be empty): a connection
 * handed from one owner to another after its handshake. */
void loom_stream_take_input(struct loom_stream *dst, struct loom_stream *src);

#endif /* LOOM_COMMON_STREAM_H */
