/*
 * recv.c - the TCP netmod's receiving side: the frame parser of a connection that is
 *          up (the handshake's bytes are conn.c's).
 *
 * Owns: reading a connection's bytes into its buffer (grown as needed) and
 *   reassembling frames across partial reads; checking every frame header before its
 *   payload is read or anything is allocated for it (frame_check: kind, src = the
 *   authenticated rank, then core/p2p.c's xm_pkt_check for type, lengths and
 *   cookies); a large eager or rendezvous payload straight into the receive buffer
 *   core/p2p.c names (xm_rdata_target), or into a temporary no bigger than what the
 *   engine keeps (xm_pkt_keep), never the size a peer announces; the goodbye and the
 *   end of stream after it.  A violation ends the connection as lost ("protocol
 *   error: ..."): nothing more is read from it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../core/xm.h"
#include "tcp.h"

#define T xm_tcp

static void frame_done(struct conn *c)
{
    if (c->dtmp) {
        xm_handle_pkt(&c->dh, c->dtmp, c->dlen);
        free(c->dtmp);
        c->dtmp = NULL;
    } else {
        xm_rdata_done(&c->dh, c->dlen);
    }
}

/* A frame header from c's peer, before anything is read or allocated for its
 * payload: NULL = acceptable, else what is wrong.  The packet header must name the
 * connection's authenticated rank as src and pass xm_pkt_check() (p2p.h: type, sizes,
 * cookies against our state). */
static const char *frame_check(const struct conn *c, const struct fhdr *f,
                               struct xm_pkt_hdr *h)
{
    if (f->kind == F_BYE)
        return f->paylen ? "goodbye frame with a payload" : NULL;
    if (f->kind != F_PKT)
        return "frame kind unknown";
    if (h->src != c->xrank)
        return "src: not the rank this connection authenticated";
    h->src = c->peer; /* another job's rank in its job -> its id here */
    return xm_pkt_check(h, f->paylen);
}

static void proto_lose(struct conn *c, const char *what)
{
    char why[160];
    snprintf(why, sizeof(why), "protocol error: %s", what);
    tcp_lose(c, why);
}

/* Handle every complete frame in c->rb; start a direct read for a large one. */
static void parse(struct conn *c)
{
    size_t off = 0;
    while (c->rlen - off >= FRAME_HDR && c->state == C_UP) {
        struct fhdr f;
        struct xm_pkt_hdr h;
        memcpy(&f, c->rb + off, sizeof(f));
        memcpy(&h, c->rb + off + sizeof(f), sizeof(h));
        const char *bad = frame_check(c, &f, &h);
        if (bad) {
            proto_lose(c, bad);
            return; /* nothing more is read from c */
        }
        if (f.kind == F_BYE) {
            c->bye = 1;
            off += FRAME_HDR;
            continue;
        }
        size_t avail = c->rlen - off - FRAME_HDR;
        char *dst = NULL;
        c->big = f.paylen >= BIG_FRAME;
        if ((h.type == XM_PKT_RDATA || h.type == XM_PKT_EAGER) && f.paylen > avail &&
            f.paylen >= DIRECT_MIN)
            dst = xm_rdata_target(&h, f.paylen);
        size_t keep = f.paylen;
        if (!dst && FRAME_HDR + f.paylen > c->rcap) {
            /* a temporary only of what the engine will read (the rest of a truncated
             * rendezvous is dropped as it arrives): never the size a peer announces */
            keep = xm_pkt_keep(&h, f.paylen);
            c->dtmp = malloc(keep ? keep : 1);
            if (!c->dtmp)
                xm_die("out of memory receiving a %llu-byte TCP frame",
                       (unsigned long long)keep);
            dst = c->dtmp;
        }
        if (dst) {
            size_t now = avail < keep ? avail : keep;
            memcpy(dst, c->rb + off + FRAME_HDR, now);
            c->dh = h;
            c->dlen = f.paylen;
            c->dptr = dst + now;
            c->dkeep = keep - now;
            c->dleft = f.paylen - avail;
            off = c->rlen;
            if (!c->dleft)
                frame_done(c);
            break;
        }
        if (avail < f.paylen)
            break; /* checked again when the rest is there */
        xm_handle_pkt_checked(&h, c->rb + off + FRAME_HDR, f.paylen);
        off += FRAME_HDR + f.paylen;
    }
    if (off && off < c->rlen)
        memmove(c->rb, c->rb + off, c->rlen - off);
    c->rlen -= off;
}

/* Read what is there.  Returns the number of packets-ish events (>0 = progress). */
int tcp_read(struct conn *c)
{
    int n = 0;
    for (int rounds = 0; rounds < 8 && c->state == C_UP; rounds++) {
        ssize_t k;
        size_t want;
        if (c->dleft && c->dkeep) {
            want = c->dkeep < c->dleft ? c->dkeep : c->dleft;
            k = recv(c->fd, c->dptr, want, MSG_DONTWAIT);
        } else if (c->dleft) { /* bytes of the frame nobody reads */
            static char sink[65536];
            want = c->dleft < sizeof(sink) ? c->dleft : sizeof(sink);
            k = recv(c->fd, sink, want, MSG_DONTWAIT);
        } else {
            if (c->rcap - c->rlen < FRAME_HDR + 64) {
                size_t nc = c->rcap * 2;
                char *nb = realloc(c->rb, nc);
                if (!nb)
                    xm_die("out of memory growing a TCP receive buffer");
                c->rb = nb;
                c->rcap = nc;
            }
            want = c->rcap - c->rlen;
            /* after a large frame, another is likely: read its header alone, so its
             * payload goes straight to the user buffer instead of through rb */
            if (c->big && c->rlen < FRAME_HDR)
                want = FRAME_HDR - c->rlen;
            k = recv(c->fd, c->rb + c->rlen, want, MSG_DONTWAIT);
        }
        if (k < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return n;
            tcp_lose_errno(c, errno);
            return n + 1;
        }
        if (k == 0) {
            if (c->bye) { /* the goodbye came first: a normal end */
                tcp_ep_del_close(c->fd);
                c->fd = -1;
                c->ev = 0;
                tcp_conn_to(c, C_CLOSED);
            } else {
                tcp_lose(c, "end of stream (peer exited)");
            }
            return n + 1;
        }
        n++;
        if (c->dleft) {
            if (c->dkeep) {
                c->dptr += k;
                c->dkeep -= (size_t)k;
            }
            c->dleft -= (size_t)k;
            if (!c->dleft)
                frame_done(c);
        } else {
            c->rlen += (size_t)k;
            parse(c);
        }
        if ((size_t)k < want)
            return n; /* drained */
    }
    return n;
}
