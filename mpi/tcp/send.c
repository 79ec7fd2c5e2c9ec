/*
 * send.c - the TCP netmod's sending side.
 *
 * Owns: the queue entries (struct tq: frame header + copied payload, or header + a
 *   payload left in the caller's memory) and their two free lists; the alloc/post/
 *   post_ref/queued transport ops; writing: a packet to a connection that is up with
 *   nothing queued goes out at once (send() of header + copy, or one sendmsg() of
 *   header + referenced payload), anything the socket does not take stays queued;
 *   back-pressure: a queue that is not empty keeps the connection on the write list
 *   and EPOLLOUT in its events until a flush (a sendmsg of up to MAX_IOV iovecs)
 *   empties it; xm_p2p_sent() once the last byte of a referenced payload left; the
 *   goodbye frame.  A send error is kept on the connection (err, any_err) and ends it
 *   in the next poll, never inside the caller's post.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "../core/xm.h"
#include "tcp.h"

#define T xm_tcp

/* ---- queue entries ------------------------------------------------------- */

struct tq *tcp_tq_get(size_t want)
{
    struct tq **fl = want <= SMALL_CAP ? &T.free_small : &T.free_big;
    size_t cap = want <= SMALL_CAP ? SMALL_CAP : BIG_CAP;
    struct tq *q = *fl;
    if (q)
        *fl = q->next;
    else if (!(q = malloc(sizeof(*q) + FRAME_HDR + cap)))
        return NULL;
    q->next = NULL;
    q->cap = cap;
    q->zptr = NULL;
    q->zlen = q->off = 0;
    q->req = NULL;
    return q;
}

void tcp_tq_put(struct tq *q)
{
    struct tq **fl = q->cap == SMALL_CAP ? &T.free_small : &T.free_big;
    q->next = *fl;
    *fl = q;
}

void tcp_wl_add(struct conn *c)
{
    if (c->in_wlist)
        return;
    c->in_wlist = 1;
    T.wl[T.nwl++] = c;
}

/* ---- writing ------------------------------------------------------------- */

/* Write as much of c's queue as the socket takes.  0, or -errno on a broken socket. */
int tcp_flush(struct conn *c)
{
    while (c->sq) {
        struct iovec iov[MAX_IOV];
        int n = 0;
        size_t total = 0;
        for (struct tq *q = c->sq; q && n + 2 <= MAX_IOV; q = q->next) {
            size_t off = q->off;
            if (off < q->hlen) {
                iov[n++] = (struct iovec){q->buf + off, q->hlen - off};
                off = q->hlen;
            }
            if (q->zlen && off < q->hlen + q->zlen)
                iov[n++] = (struct iovec){(char *)q->zptr + (off - q->hlen),
                                          q->hlen + q->zlen - off};
        }
        for (int i = 0; i < n; i++)
            total += iov[i].iov_len;
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return -errno;
        }
        size_t left = (size_t)k;
        while (c->sq && left) {
            struct tq *q = c->sq;
            size_t rest = q->hlen + q->zlen - q->off;
            if (left < rest) {
                q->off += left;
                left = 0;
                break;
            }
            left -= rest;
            c->sq = q->next;
            if (!c->sq)
                c->sq_tail = &c->sq;
            struct xm_req *r = q->req;
            tcp_tq_put(q);
            if (r)
                xm_p2p_sent(r);
        }
        if ((size_t)k < total) /* socket full */
            return 0;
    }
    return 0;
}

void tcp_flush_or_fail(struct conn *c)
{
    int rc = tcp_flush(c);
    if (rc < 0) {
        c->err = -rc;
        T.any_err = 1;
    }
}

/* Queue q on c (writing at once when nothing is ahead of it).  1 = all written. */
static int enqueue(struct conn *c, struct tq *q)
{
    q->next = NULL;
    if (c->state == C_UP && !c->sq) {
        ssize_t k;
        if (!q->zlen) { /* send() skips sendmsg's iovec import: small packets */
            k = send(c->fd, q->buf, q->hlen, MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            struct iovec iov[2] = {{q->buf, q->hlen}, {(void *)q->zptr, q->zlen}};
            struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
            k = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        if (k == (ssize_t)(q->hlen + q->zlen)) {
            tcp_tq_put(q);
            return 1;
        }
        if (k > 0)
            q->off = (size_t)k;
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            c->err = errno;
            T.any_err = 1;
        }
    }
    *c->sq_tail = q;
    c->sq_tail = &q->next;
    if (c->state == C_UP) {
        tcp_ep_set(c, EPOLLIN | EPOLLOUT);
        tcp_wl_add(c);
    }
    return 0;
}

/* the goodbye frame (finalize): no payload, the peer's end of stream that follows is
 * normal */
void tcp_send_bye(struct conn *c)
{
    struct tq *q = tcp_tq_get(0);
    if (!q)
        return;
    struct fhdr f = {.kind = F_BYE};
    memset(q->buf, 0, FRAME_HDR);
    memcpy(q->buf, &f, sizeof(f));
    q->hlen = FRAME_HDR;
    enqueue(c, q);
}

/* ---- transport ops ------------------------------------------------------- */

struct xm_pkt_hdr *tcp_alloc_n(struct xm_transport *t, int dest, size_t want,
                               void **payload, size_t *cap)
{
    struct tq *q = tcp_tq_get(want);
    if (!q)
        return NULL;
    *payload = q->buf + FRAME_HDR;
    *cap = q->cap;
    return (struct xm_pkt_hdr *)(q->buf + sizeof(struct fhdr));
}

struct xm_pkt_hdr *tcp_alloc(struct xm_transport *t, int dest, void **payload,
                             size_t *cap)
{
    return tcp_alloc_n(t, dest, BIG_CAP, payload, cap);
}

int tcp_post(struct xm_transport *t, int dest, struct xm_pkt_hdr *h, size_t paylen)
{
    struct tq *q =
        (struct tq *)((char *)h - sizeof(struct fhdr) - offsetof(struct tq, buf));
    struct fhdr f = {.kind = F_PKT, .paylen = paylen};
    memcpy(q->buf, &f, sizeof(f));
    q->hlen = FRAME_HDR + paylen;
    struct conn *c = tcp_conn_get(dest);
    if (c->state == C_DEAD) {
        tcp_tq_put(q);
        return -EPIPE;
    }
    enqueue(c, q);
    return 0;
}

/* Packet h with a payload left in the caller's memory.  1 = written now; 0 = queued,
 * xm_p2p_sent(r) follows once written; -errno: the peer is gone. */
int tcp_post_ref(struct xm_transport *t, int dest, const struct xm_pkt_hdr *h,
                 const void *data, size_t len, struct xm_req *r)
{
    struct conn *c = tcp_conn_get(dest);
    if (c->state == C_DEAD)
        return -EPIPE;
    struct tq *q = tcp_tq_get(0);
    if (!q)
        return -ENOMEM;
    struct fhdr f = {.kind = F_PKT, .paylen = len};
    memcpy(q->buf, &f, sizeof(f));
    memcpy(q->buf + sizeof(f), h, sizeof(*h));
    q->hlen = FRAME_HDR;
    q->zptr = data;
    q->zlen = len;
    q->req = r;
    return enqueue(c, q);
}

int tcp_queued(struct xm_transport *t, int dest)
{
    struct conn *c = T.peer && dest >= 0 && dest < xm_proc_count() ? T.peer[dest] : NULL;
    return c && c->sq && c->state != C_DEAD;
}
