/* flow.c - per-client flow control (see flow.h for the contract).
 *
 * Notes:
 *   - A buffer is compacted rather than grown when its consumed head makes
 *     room and is at least as long as what is left (so compacting costs at
 *     most what was consumed); an emptied output buffer larger than FLOW_KEEP
 *     is freed, so a client's burst does not pin memory for the rest of the job.
 *   - The fast path of a good client: flow_write() with an empty queue is one
 *     send() of the caller's bytes, no copy.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "flow.h"
#include "loop.h"

#define FLOW_KEEP (64u * 1024u) /* output buffer kept once empty */

size_t flow_queued(const struct flow *f)
{
    return f->qlen - f->qoff;
}

bool flow_reading(const struct flow *f)
{
    return !f->full && f->hoff == f->hlen;
}

int flow_events(const struct flow *f)
{
    return (flow_reading(f) ? LOOP_READ : 0) | (f->qlen > f->qoff ? LOOP_WRITE : 0);
}

/* Room for len more bytes at buf[*lenp], dropping the consumed part buf[0..*offp). */
static int reserve(char **buf, size_t *offp, size_t *lenp, size_t *capp, size_t len)
{
    size_t live = *lenp - *offp;

    if (*lenp + len <= *capp)
        return 0;
    /* compact only when the consumed head is at least the live part: each
     * byte is then moved at most once per byte consumed (no thrashing) */
    if (*offp >= live && live + len <= *capp) {
        memmove(*buf, *buf + *offp, live);
        *offp = 0;
        *lenp = live;
        return 0;
    }
    size_t cap = *capp ? *capp : 4096;
    while (cap < live + len)
        cap *= 2;
    char *p = malloc(cap);
    if (!p)
        return -ENOMEM;
    if (live)
        memcpy(p, *buf + *offp, live);
    free(*buf);
    *buf = p;
    *capp = cap;
    *offp = 0;
    *lenp = live;
    return 0;
}

int flow_queue(struct flow *f, const void *buf, size_t len)
{
    if (!len)
        return 0;
    if (reserve(&f->q, &f->qoff, &f->qlen, &f->qcap, len) < 0)
        return -ENOMEM;
    memcpy(f->q + f->qlen, buf, len);
    f->qlen += len;
    if (f->qlen - f->qoff >= FLOW_HIGH)
        f->full = true;
    return 0;
}

/* One send(), retried on EINTR: the count, 0 when the socket is full, or -errno. */
static ssize_t send_some(int fd, const char *p, size_t len)
{
    for (;;) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -errno;
    }
}

int flow_send(struct flow *f, int fd)
{
    while (f->qoff < f->qlen) {
        ssize_t n = send_some(fd, f->q + f->qoff, f->qlen - f->qoff);
        if (n < 0)
            return (int)n;
        if (n == 0)
            break;
        f->qoff += (size_t)n;
    }
    if (f->qoff == f->qlen) {
        f->qoff = f->qlen = 0;
        if (f->qcap > FLOW_KEEP) { /* a burst is over: give its buffer back */
            free(f->q);
            f->q = NULL;
            f->qcap = 0;
        }
    }
    if (f->full && f->qlen - f->qoff <= FLOW_LOW)
        f->full = false;
    return 0;
}

int flow_write(struct flow *f, int fd, const void *buf, size_t len)
{
    const char *p = buf;

    if (f->qoff == f->qlen) {
        ssize_t n = send_some(fd, p, len);
        if (n < 0)
            return (int)n;
        p += n;
        len -= (size_t)n;
        return flow_queue(f, p, len);
    }
    if (flow_queue(f, p, len) < 0)
        return -ENOMEM;
    return flow_send(f, fd);
}

static int hold(struct flow *f, const char *buf, size_t len)
{
    if (!len)
        return 0;
    if (f->hlen - f->hoff + len > FLOW_HOLD_MAX)
        return -ENOBUFS;
    if (reserve(&f->held, &f->hoff, &f->hlen, &f->hcap, len) < 0)
        return -ENOMEM;
    memcpy(f->held + f->hlen, buf, len);
    f->hlen += len;
    return 0;
}

/* Feed buf in slices while the flow is not full; *used: how much was fed. */
static int feed_slices(struct flow *f, const char *buf, size_t len, flow_feed_f fn,
                       void *arg, size_t *used)
{
    size_t off = 0;
    int rc = 0;

    while (off < len && !f->full) {
        size_t n = len - off < FLOW_SLICE ? len - off : FLOW_SLICE;
        rc = fn(arg, buf + off, n);
        off += n;
        if (rc != 0)
            break;
    }
    *used = off;
    return rc;
}

int flow_resume(struct flow *f, flow_feed_f fn, void *arg)
{
    size_t used;
    int rc;

    if (f->full || f->hoff == f->hlen)
        return 0;
    rc = feed_slices(f, f->held + f->hoff, f->hlen - f->hoff, fn, arg, &used);
    f->hoff += used;
    if (rc != 0 || f->hoff == f->hlen)
        f->hoff = f->hlen = 0; /* fed, or the rest is dropped with fn's verdict */
    return rc;
}

int flow_feed(struct flow *f, const char *buf, size_t len, flow_feed_f fn, void *arg)
{
    size_t used;
    int rc;

    if (f->hoff != f->hlen) { /* older input first */
        if ((rc = hold(f, buf, len)) < 0)
            return rc;
        return flow_resume(f, fn, arg);
    }
    rc = feed_slices(f, buf, len, fn, arg, &used);
    if (rc != 0)
        return rc;
    return hold(f, buf + used, len - used);
}

void flow_free(struct flow *f)
{
    free(f->q);
    free(f->held);
    memset(f, 0, sizeof(*f));
}
