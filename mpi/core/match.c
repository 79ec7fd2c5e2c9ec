/*
 * match.c - the matcher of the point-to-point engine: the posted and unexpected queues
 *           and everything that looks into them (contract in p2p.h, internals in
 *           p2p_int.h).
 *
 * Owns: the posted list (receives waiting for a message) and the unexpected list
 * (messages waiting for a receive), both in arrival order, matched on (ctx, src, tag)
 * with wildcards (per-communicator or per-source bins would be a later optimisation;
 * the lists are the reference behaviour).  One find-or-enqueue, find_or_queue(), takes
 * every arriving envelope, EAGER and RTS alike: it is the only place where a message is
 * queued unexpected.  Also: delivery of eager bytes (an eager message longer than one
 * packet is EAGER + FRAGs, the receiving request is inflight[src] until they are all
 * in; an unexpected one is buffered in a malloc'ed area and copied out on a match),
 * receives, probes and matched probes, cancelling a receive, the receiver's side of a
 * send's cancel, the admission of other jobs' processes' messages (core/xsec.h), and
 * xm_p2p_buffer_busy(): whether memory lies under a receive or rendezvous in flight.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_int.h"
#include "xsec.h"

struct xm_p2p_list xm_p2p_posted, xm_p2p_unexp;

static int xq_charge(int src, uint64_t bytes);

static int match(const struct xm_req *r, int src, int tag, uint32_t ctx)
{
    return r->ctx == ctx && (r->peer == MPI_ANY_SOURCE || r->peer == src) &&
           (r->tag == MPI_ANY_TAG || r->tag == tag);
}

void xm_match_finish(struct xm_req *r)
{
    size_t got = r->total < r->bytes ? r->total : r->bytes;
    xm_status_set(&r->status, r->peer, r->tag,
                  r->total > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS, got);
    xm_p2p_complete(r);
}

/* Deliver n bytes of the current message into r (RECV: user buffer, UNEXP: tmp). */
static void deliver(struct xm_req *r, const void *data, size_t n)
{
    if (r->kind == XM_REQ_UNEXP) {
        memcpy((char *)r->tmp + r->pos, data, n);
    } else if (r->pos < r->bytes) {
        size_t m = r->bytes - r->pos < n ? r->bytes - r->pos : n;
        xm_dt_unpack(r->buf, r->count, xm_dt_get(r->dt), r->pos, data, m);
    }
    r->pos += n;
}

/* An unexpected message u (complete) is consumed by receive r. */
static void take_unexp(struct xm_req *u, struct xm_req *r)
{
    if (u->flags & F_RDV) {
        xm_rdv_start(r, u->peer, u->tag, u->total, u->cookie_ack, u->rdv_pid,
                     u->rdv_addr);
        xm_req_free(u);
        return;
    }
    r->peer = u->peer;
    r->tag = u->tag;
    r->total = u->total;
    r->pos = 0;
    deliver(r, u->tmp, u->total);
    xm_match_finish(r);
    if (u->flags & XM_PKT_F_SYNC)
        xm_p2p_send_ctrl(u->peer, XM_PKT_SSEND_ACK, u->cookie_ack, 0);
    xm_req_free(u);
}

static void msg_complete(struct xm_req *r)
{
    if (r->kind == XM_REQ_UNEXP) {
        if (r->match)
            take_unexp(r, r->match);
        /* else: stays on the unexpected list, complete */
        else
            r->done = 1;
    } else {
        xm_match_finish(r);
    }
}

struct xm_req *xm_match_posted(int src, int tag, uint32_t ctx)
{
    struct xm_req *r;
    for (r = xm_p2p_posted.head; r; r = r->next)
        if (match(r, src, tag, ctx))
            break;
    return r;
}

void xm_match_take(struct xm_req *r, const struct xm_pkt_hdr *h)
{
    xm_p2p_list_del(&xm_p2p_posted, r);
    r->peer = h->src;
    r->tag = h->tag;
    r->total = h->len;
    r->pos = 0;
    if (h->type == XM_PKT_EAGER && (h->flags & XM_PKT_F_SYNC))
        xm_p2p_send_ctrl(h->src, XM_PKT_SSEND_ACK, h->cookie, 0);
}

/* The one find-or-enqueue: the envelope of an arriving message (EAGER or RTS) takes
 * the first posted receive it matches (*matched = 1, the receive returned off the
 * posted list), or becomes an unexpected request at the end of the unexpected list
 * (*matched = 0; an EAGER one with room for its whole payload, an RTS one holding the
 * envelope only), or NULL when it takes another job's process past its quota of
 * unexpected messages (the process is dropped: nothing of the message is used).  unsure:
 * another job's message on a context no communicator has yet (xsec_arrival()): it never
 * matches a posted receive now. */
static struct xm_req *find_or_queue(const struct xm_pkt_hdr *h, int unsure, int *matched)
{
    struct xm_req *r = unsure ? NULL : xm_match_posted(h->src, h->tag, h->ctx);
    if (r) {
        xm_match_take(r, h);
        *matched = 1;
        return r;
    }
    *matched = 0;
    int rdv = h->type == XM_PKT_RTS;
    /* another job's process pays for what it queues here, before anything is allocated */
    if (__builtin_expect(h->src >= xm_g.size, 0) && xq_charge(h->src, rdv ? 0 : h->len))
        return NULL;
    r = xm_req_new(XM_REQ_UNEXP);
    if (!r || (!rdv && !(r->tmp = malloc(h->len ? h->len : 1)))) {
        if (rdv)
            xm_die("out of memory queueing an unexpected rendezvous");
        xm_die("out of memory buffering an unexpected %llu-byte message",
               (unsigned long long)h->len);
    }
    r->peer = h->src;
    r->tag = h->tag;
    r->ctx = h->ctx;
    r->total = h->len;
    r->flags = h->flags | (rdv ? F_RDV : 0) | (unsure ? F_XUNSURE : 0);
    r->cookie_ack = h->cookie;
    xm_p2p_list_add(&xm_p2p_unexp, r);
    return r;
}

void xm_match_eager(const struct xm_pkt_hdr *h, const void *payload, size_t paylen,
                    int unsure)
{
    int matched;
    struct xm_req *r = find_or_queue(h, unsure, &matched);
    if (!r)
        return;
    deliver(r, payload, paylen);
    if (r->pos >= r->total)
        msg_complete(r);
    else
        xm_p2p_inflight[h->src] = r;
}

void xm_match_frag(const struct xm_pkt_hdr *h, const void *payload, size_t paylen)
{
    struct xm_req *r = xm_p2p_inflight[h->src];
    deliver(r, payload, paylen);
    if (r->pos >= r->total) {
        xm_p2p_inflight[h->src] = NULL;
        if (__builtin_expect(r->flags & F_XDROP, 0))
            xm_req_free(r); /* refused by xm_match_xsec_arrival(), now all swallowed */
        else
            msg_complete(r);
    }
}

void xm_match_rts(const struct xm_pkt_hdr *h, const struct xm_rts *rts, int unsure)
{
    int matched;
    struct xm_req *r = find_or_queue(h, unsure, &matched);
    if (!r)
        return;
    if (matched) {
        xm_rdv_start(r, h->src, h->tag, h->len, h->cookie, rts->pid, rts->addr);
        return;
    }
    r->rdv_pid = rts->pid;
    r->rdv_addr = rts->addr;
    r->done = 1; /* the envelope is all there is to hold */
}

/* ---- other jobs' processes (core/xsec.h) ---- */

int xm_match_xsec_arrival(const struct xm_pkt_hdr *h, size_t paylen)
{
    int v = xm_xsec_verdict(h->ctx, h->src);
    if (v == XM_XSEC_OK)
        return 0;
    if (v == XM_XSEC_UNKNOWN)
        return 1;
    xm_xsec_warn(h->src, h->ctx, h->tag);
    if (h->type == XM_PKT_RTS || (h->flags & XM_PKT_F_SYNC)) {
        /* its sender waits for an answer the wire has no refusal for: end the
         * connection, so it sees its peer gone instead of waiting for ever */
        xm_p2p_drop(h->src, XM_P2P_REFUSED_ANSWER);
        return -1;
    }
    if (h->type == XM_PKT_EAGER && paylen < h->len) { /* swallow the FRAGs to come */
        struct xm_req *s = xm_req_new(XM_REQ_UNEXP);
        if (!s || !(s->tmp = malloc(h->len)))
            xm_die("out of memory dropping a %llu-byte message",
                   (unsigned long long)h->len);
        s->peer = h->src;
        s->total = h->len;
        s->pos = paylen;
        s->flags = F_XDROP;
        xm_p2p_inflight[h->src] = s;
    }
    return -1;
}

/* Unexpected u (F_XUNSURE) is about to match: 1 = it may (now known good), 0 = not
 * (still no communicator: leave it; refused: dropped once complete, never matched). */
static int xsec_admit(struct xm_req *u)
{
    int v = xm_xsec_verdict(u->ctx, u->peer);
    if (v == XM_XSEC_OK) {
        u->flags &= ~F_XUNSURE;
        return 1;
    }
    if (v == XM_XSEC_DENY && u->done) {
        int peer = u->peer, answer_due = (u->flags & (F_RDV | XM_PKT_F_SYNC)) != 0;
        xm_xsec_warn(u->peer, u->ctx, u->tag);
        xm_p2p_list_del(&xm_p2p_unexp, u);
        xm_req_free(u);
        if (answer_due) /* as in xm_match_xsec_arrival(), after the caller's scan */
            xm_p2p_drop_later(peer);
    }
    return 0;
}

/* The quota of unexpected messages of another job's process (core/xsec.h): charged in
 * find_or_queue(), given back by xm_p2p_list_del() on the unexpected list. */
void xm_match_uncharge(const struct xm_req *u)
{
    xm_xsec_charge(u->peer, (u->flags & F_RDV) ? 0 : u->total, -1);
}

/* Charge one more unexpected message from process src of another job: 1 = over its
 * quota, src is dropped (the caller returns at once: nothing of it is used). */
static int xq_charge(int src, uint64_t bytes)
{
    if (!xm_xsec_charge(src, bytes, 1))
        return 0;
    xm_p2p_drop(src, "too many unexpected messages queued here "
                     "(LOOM_MPI_XJOB_UNEXP_BYTES, LOOM_MPI_XJOB_UNEXP_MSGS)");
    return 1;
}

/* ---- receives and probes ---- */

/* A receive request for (src, tag, ctx) into buf: the one set-up of xm_irecv and
 * xm_mrecv.  NULL when out of memory. */
static struct xm_req *recv_new(void *buf, int count, MPI_Datatype dtype, int src, int tag,
                               uint32_t ctx, struct xm_comm *comm)
{
    struct xm_dtype *dt = xm_dt_get(dtype);
    struct xm_req *r = xm_req_new(XM_REQ_RECV);
    if (!r)
        return NULL;
    r->peer = src;
    r->tag = tag;
    r->ctx = ctx;
    r->comm = comm;
    if (comm)
        comm->refs++; /* MPI_Comm_free may come first: xm_req_free() lets it go */
    r->buf = buf;
    r->count = count;
    r->dt = dtype;
    xm_dt_ref(dt); /* released by xm_p2p_complete() */
    r->bytes = dt->size * (size_t)count;
    return r;
}

int xm_irecv(void *buf, int count, MPI_Datatype dtype, int src, int tag, uint32_t ctx,
             struct xm_comm *comm, struct xm_req **rp)
{
    struct xm_req *r = recv_new(buf, count, dtype, src, tag, ctx, comm);
    if (!r)
        return -ENOMEM;
    *rp = r;
    /* another job's process that was dropped (xm_p2p_drop): the receive fails now */
    if (__builtin_expect(src >= xm_g.size, 0) && xm_p2p_lost[src]) {
        xm_status_set(&r->status, src, tag, MPI_ERR_OTHER, 0);
        xm_p2p_complete(r);
        return 0;
    }
    for (struct xm_req *u = xm_p2p_unexp.head, *next; u; u = next) {
        next = u->next;
        if (!match(r, u->peer, u->tag, u->ctx))
            continue;
        if (__builtin_expect(u->flags & F_XUNSURE, 0) && !xsec_admit(u))
            continue;
        xm_p2p_list_del(&xm_p2p_unexp, u);
        if (u->done) {
            take_unexp(u, r);
        } else {
            u->match = r; /* finishes in msg_complete() */
            r->peer = u->peer;
            r->tag = u->tag;
        }
        return 0;
    }
    xm_p2p_list_add(&xm_p2p_posted, r);
    return 0;
}

int xm_cancel_recv(struct xm_req *r)
{
    for (struct xm_req *p = xm_p2p_posted.head; p; p = p->next)
        if (p == r) {
            xm_p2p_list_del(&xm_p2p_posted, r);
            r->cancelled = 1;
            xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
            r->status.xm_count_hi_cncl |= 1;
            xm_p2p_complete(r);
            return 1;
        }
    return 0;
}

/* Receiver: sender src withdraws the message it sent with this cookie and envelope.
 * Its newest complete unexpected message with them is that one (a handle may have
 * named an older message too, but if the older one were still unmatched the newer
 * could not have been matched: same envelope, per-source order). */
void xm_match_cancel(int src, const struct xm_pkt_hdr *h)
{
    struct xm_req *u;
    for (u = xm_p2p_unexp.tail; u; u = u->prev)
        if (u->peer == src && u->cookie_ack == h->cookie && u->tag == h->tag &&
            u->ctx == h->ctx)
            break;
    int ok = u && u->done;
    if (ok) {
        xm_p2p_list_del(&xm_p2p_unexp, u);
        xm_req_free(u);
    }
    xm_p2p_send_ctrl(src, XM_PKT_CANCEL_ACK, h->cookie, (uint64_t)ok);
}

int xm_iprobe(int src, int tag, uint32_t ctx, MPI_Status *st)
{
    struct xm_req probe = {.peer = src, .tag = tag, .ctx = ctx};
    for (struct xm_req *u = xm_p2p_unexp.head, *next; u; u = next) {
        next = u->next;
        if (match(&probe, u->peer, u->tag, u->ctx) &&
            (!(u->flags & F_XUNSURE) || xsec_admit(u))) {
            if (st)
                xm_status_set(st, u->peer, u->tag, MPI_SUCCESS, u->total);
            return 1;
        }
    }
    return 0;
}

struct xm_req *xm_improbe(int src, int tag, uint32_t ctx, MPI_Status *st)
{
    struct xm_req probe = {.peer = src, .tag = tag, .ctx = ctx};
    for (struct xm_req *u = xm_p2p_unexp.head, *next; u; u = next) {
        next = u->next;
        if (match(&probe, u->peer, u->tag, u->ctx) &&
            (!(u->flags & F_XUNSURE) || xsec_admit(u))) {
            xm_p2p_list_del(&xm_p2p_unexp, u);
            if (st)
                xm_status_set(st, u->peer, u->tag, MPI_SUCCESS, u->total);
            return u;
        }
    }
    return NULL;
}

int xm_mrecv(struct xm_req *u, void *buf, int count, MPI_Datatype dtype,
             struct xm_comm *comm, struct xm_req **rp)
{
    struct xm_req *r = recv_new(buf, count, dtype, u->peer, u->tag, u->ctx, comm);
    if (!r)
        return -ENOMEM;
    *rp = r;
    if (u->done)
        take_unexp(u, r);
    else
        u->match = r; /* fragments still arriving: msg_complete() finishes it */
    return 0;
}

/* ---- buffers in flight ---- */

struct busy_q {
    uintptr_t lo, hi;
    int busy;
};

/* [*lo, *hi) that (buf, count, dt) of r spans by the type's true bounds: 0 = nothing
 * (no bytes), 1 = set, -1 = past the address space (the caller says busy). */
static int req_span(const struct xm_req *r, uintptr_t *lo, uintptr_t *hi)
{
    const struct xm_dtype *dt = xm_dt_get(r->dt);
    if (!dt || r->count <= 0 || !r->bytes || dt->true_extent <= 0)
        return 0;
    /* element k lies at buf + k * extent, its bytes from true_lb for true_extent:
     * [first, end) from buf (MPI_BOTTOM: buf 0, first the address itself) */
    long long last, first, n, end;
    if (__builtin_mul_overflow((long long)(r->count - 1), (long long)dt->extent, &last) ||
        last == LLONG_MIN ||
        __builtin_add_overflow((long long)dt->true_lb, last < 0 ? last : 0, &first) ||
        __builtin_add_overflow((long long)dt->true_extent, last < 0 ? -last : last, &n) ||
        __builtin_add_overflow(first, n, &end))
        return -1;
    uintptr_t b = (uintptr_t)r->buf;
    uintptr_t off = first < 0 ? (uintptr_t)0 - (uintptr_t)first : (uintptr_t)first;
    if (first < 0 ? off > b : off > UINTPTR_MAX - b)
        return -1;
    *lo = first < 0 ? b - off : b + off;
    if ((uintptr_t)n > UINTPTR_MAX - *lo)
        return -1;
    *hi = *lo + (uintptr_t)n;
    return 1;
}

static void busy_one(struct xm_req *r, void *arg)
{
    struct busy_q *q = arg;
    if (q->busy || r->done)
        return;
    /* receives: bytes may still land in the buffer (a transport's single copy or a
     * helper's process_vm_writev among them); rendezvous sends: the receiver reads the
     * user buffer in place unless it was packed into r->tmp */
    if (!(r->kind == XM_REQ_RECV ||
          (r->kind == XM_REQ_SEND && (r->flags & F_RDV) && !r->tmp)))
        return;
    uintptr_t lo, hi;
    int s = req_span(r, &lo, &hi);
    if (s < 0 || (s > 0 && lo < q->hi && q->lo < hi))
        q->busy = 1;
}

int xm_p2p_buffer_busy(uintptr_t lo, uintptr_t hi)
{
    struct busy_q q = {lo, hi, 0};
    if (lo < hi)
        xm_req_foreach(busy_one, &q);
    return q.busy;
}
