/*
 * p2p.c - the point-to-point engine's sending side and its frame (contract in p2p.h,
 *         what its files share in p2p_int.h).
 *
 * Owns: init/finalize and the per-peer arrays (grown with the process table), the one
 * completion of a send or receive request, the eager send path (EAGER + FRAGs packed
 * straight into the transport's packets, or one packet by reference when the
 * transport has post_ref), the send queue, control packets, cancelling a send, the
 * netmod's hooks (a packet by reference left, data straight into a posted buffer), a
 * lost peer, status translation and the blocking helpers of the collectives.  The
 * matcher is match.c, rendezvous rdv.c, the packet funnel funnel.c, progress and the
 * idle policy progress.c.
 *
 * Notes:
 *   - Sends to one destination leave strictly in order (pending[dest] counts queued
 *     sends; a new send to a dest with pending sends queues behind them).
 *   - A message above the eager limit of the transport that reaches its destination
 *     (struct xm_transport eager_max) goes by rendezvous (rdv.c).
 *   - Control packets (SSEND_ACK, CTS, FIN, CANCEL...) that find no free packet are
 *     queued and retried in order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "mt.h"
#include "p2p_int.h"
#include "proc.h"
#include "xsec.h"

struct xm_p2p_ctrl {
    struct xm_p2p_ctrl *next;
    int dest;
    struct xm_pkt_hdr h;
};

struct xm_p2p_list xm_p2p_sendq;
struct xm_req **xm_p2p_inflight;
int *xm_p2p_pending;
unsigned char *xm_p2p_lost;
size_t xm_p2p_eager_accept;
struct xm_p2p_ctrl *xm_p2p_ctrlq;
static struct xm_p2p_ctrl **ctrlq_tail = &xm_p2p_ctrlq;
static unsigned *pass_mark; /* scratch for push_sends() */
static unsigned pass_gen;
static int p2p_cap; /* entries of the per-peer arrays */

/* realloc p to n elements of sz bytes, zeroing those from o on; 0 or -ENOMEM */
static int grow_zero(void **p, size_t sz, int o, int n)
{
    char *q = realloc(*p, (size_t)n * sz);
    if (!q)
        return -ENOMEM;
    memset(q + (size_t)o * sz, 0, (size_t)(n - o) * sz);
    *p = q;
    return 0;
}

/* core/proc.h grow hook: room for ids [0, newcap) */
static int p2p_grow(int oldcap, int newcap)
{
    oldcap = p2p_cap;
    if (newcap <= oldcap)
        return 0;
    if (grow_zero((void **)&xm_p2p_inflight, sizeof(*xm_p2p_inflight), oldcap, newcap) <
            0 ||
        grow_zero((void **)&xm_p2p_pending, sizeof(*xm_p2p_pending), oldcap, newcap) <
            0 ||
        grow_zero((void **)&pass_mark, sizeof(*pass_mark), oldcap, newcap) < 0 ||
        grow_zero((void **)&xm_p2p_lost, 1, oldcap, newcap) < 0)
        return -ENOMEM; /* the arrays grown so far stay grown: harmless */
    p2p_cap = newcap;
    return 0;
}

int xm_p2p_init(void)
{
    /* the process table (core/proc.h) starts as the world; MPI_Init made it, a test
     * driving the engine alone may not have */
    if (xm_proc_count() == 0 && xm_proc_init(xm_g.jobid, xm_g.size) < 0)
        return -EINVAL;
    /* room for every id the table has room for (a table grown before p2p started:
     * its hook was not registered then); later growth goes through p2p_grow */
    int n = xm_proc_capacity() > xm_g.size ? xm_proc_capacity() : xm_g.size;
    xm_p2p_inflight = calloc((size_t)n, sizeof(*xm_p2p_inflight));
    xm_p2p_pending = calloc((size_t)n, sizeof(*xm_p2p_pending));
    pass_mark = calloc((size_t)n, sizeof(*pass_mark));
    xm_p2p_lost = calloc((size_t)n, 1);
    if (!xm_p2p_inflight || !xm_p2p_pending || !pass_mark || !xm_p2p_lost ||
        xm_rdv_init() < 0 || xm_proc_on_grow(p2p_grow) < 0)
        return -ENOMEM;
    p2p_cap = n;
    xm_progress_init();
    /* a peer's eager message is buffered at its declared length when no receive is
     * posted: above this a header is a protocol error (ranks of a job normally share
     * their eager limits; this leaves room for ones that do not); never below the
     * eager limits of the transports in use */
    xm_p2p_eager_accept = (size_t)xm_env_int("LOOM_MPI_EAGER_ACCEPT", 16 << 20);
    if (xm_g.shm && xm_p2p_eager_accept < xm_g.shm->eager_max)
        xm_p2p_eager_accept = xm_g.shm->eager_max;
    if (xm_g.net && xm_p2p_eager_accept < xm_g.net->eager_max)
        xm_p2p_eager_accept = xm_g.net->eager_max;
    return 0;
}

void xm_p2p_finalize(void)
{
    xm_rdv_finalize();
    free(xm_p2p_inflight);
    free(xm_p2p_pending);
    free(pass_mark);
    free(xm_p2p_lost);
    p2p_cap = 0;
    xm_p2p_lost = NULL;
    xm_p2p_inflight = NULL;
    xm_p2p_pending = NULL;
    pass_mark = NULL;
}

/* a send/recv request holds a reference on its datatype from
 * xm_isend/xm_irecv until it completes, so MPI_Type_free of a derived type in use is
 * safe.  Every completion of such a request goes through here exactly once. */
void xm_p2p_complete(struct xm_req *r)
{
    xm_dt_unref(xm_dt_get(r->dt));
    if (r->flags & F_CANCELING) {
        /* the receiver's answer to our CANCEL is due: the program may not free the
         * request before it came (its cookie names this request) */
        r->flags |= F_DEFERRED;
        return;
    }
    xm_req_complete(r);
}

/* ---- sending ---------------------------------------------------------------- */

int xm_p2p_push(struct xm_req *r)
{
    struct xm_transport *t = xm_p2p_route(r->peer);
    struct xm_dtype *dt = xm_dt_get(r->dt);
    if (!t)
        return -EHOSTUNREACH;
    if (xm_p2p_lost[r->peer])
        return -EPIPE;
    if (r->flags & F_RDV)
        return xm_rdv_push(r, t, dt);
    if (t->post_ref && !(r->flags & F_HDR_SENT) && r->total >= t->zcopy_min &&
        xm_p2p_direct_ok(dt)) {
        /* the whole eager message as one packet, written from the user buffer */
        struct xm_pkt_hdr h = xm_p2p_send_hdr(r, XM_PKT_EAGER, r->total);
        int rc = t->post_ref(t, r->peer, &h, r->buf, r->total, r);
        if (rc < 0)
            return rc;
        r->pos = r->total;
        r->flags |= F_HDR_SENT | (rc == 0 ? F_ZC : 0);
        if (!(r->flags & F_ZC) && (!(r->flags & XM_PKT_F_SYNC) || (r->flags & F_ACKED)))
            xm_p2p_complete(r);
        return 1;
    }
    while (!(r->flags & F_HDR_SENT) || r->pos < r->total) {
        void *pay;
        size_t cap;
        struct xm_pkt_hdr *h = xm_p2p_get_pkt(t, r->peer, r->total - r->pos, &pay, &cap);
        if (!h)
            return 0;
        size_t n = r->total - r->pos < cap ? r->total - r->pos : cap;
        *h = (r->flags & F_HDR_SENT) ? xm_p2p_send_hdr(r, XM_PKT_FRAG, n)
                                     : xm_p2p_send_hdr(r, XM_PKT_EAGER, r->total);
        if (n)
            xm_dt_pack(r->buf, r->count, dt, r->pos, pay, n);
        t->post(t, r->peer, h, n);
        r->pos += n;
        r->flags |= F_HDR_SENT;
    }
    if (!(r->flags & XM_PKT_F_SYNC) || (r->flags & F_ACKED))
        xm_p2p_complete(r);
    return 1;
}

void xm_p2p_push_or_queue(struct xm_req *r)
{
    if (xm_p2p_pending[r->peer] == 0 && xm_p2p_push(r) == 1)
        return;
    xm_p2p_pending[r->peer]++;
    xm_p2p_list_add(&xm_p2p_sendq, r);
}

int xm_p2p_push_sends(void)
{
    int n = 0;
    struct xm_req *r = xm_p2p_sendq.head, *nx;
    pass_gen++;
    for (; r; r = nx) {
        nx = r->next;
        if (pass_mark[r->peer] == pass_gen)
            continue; /* an earlier send to this dest is still parked: keep order */
        int rc = xm_p2p_push(r);
        if (rc == 0) {
            pass_mark[r->peer] = pass_gen;
            continue;
        }
        if (rc < 0) {
            r->status.MPI_ERROR = MPI_ERR_OTHER;
            if (!r->done)
                xm_p2p_complete(r);
            if (!xm_p2p_on_list(&xm_p2p_sendq,
                                r)) { /* xm_peer_lost() already took it off */
                n++;
                continue;
            }
        }
        xm_p2p_list_del(&xm_p2p_sendq, r);
        xm_p2p_pending[r->peer]--;
        n++;
    }
    return n;
}

int xm_isend(const void *buf, int count, MPI_Datatype dtype, int dest, int tag,
             uint32_t ctx, struct xm_comm *comm, unsigned flags, struct xm_req **rp)
{
    struct xm_dtype *dt = xm_dt_get(dtype);
    struct xm_req *r = xm_req_new(XM_REQ_SEND);
    if (!r)
        return -ENOMEM;
    r->peer = dest;
    r->tag = tag;
    r->ctx = ctx;
    r->comm = comm;
    if (comm)
        comm->refs++; /* MPI_Comm_free may come first: xm_req_free() lets it go */
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dtype;
    xm_dt_ref(dt); /* released by complete() */
    r->total = r->bytes = dt->size * (size_t)count;
    r->flags = flags & 0xff;
    *rp = r;
    if (dest == xm_g.rank) {
        /* to myself: run the message through the funnel from a staging copy */
        struct xm_pkt_hdr h = {.type = XM_PKT_EAGER,
                               .flags = (uint8_t)r->flags,
                               .src = xm_g.rank,
                               .tag = tag,
                               .ctx = ctx,
                               .len = r->total,
                               .cookie = (uint64_t)(unsigned)r->handle};
        void *tmp = malloc(r->total ? r->total : 1);
        if (!tmp)
            return -ENOMEM;
        xm_dt_pack(buf, count, dt, 0, tmp, r->total);
        r->pos = r->total;
        r->flags |= F_HDR_SENT;
        xm_handle_pkt(&h, tmp, r->total);
        free(tmp);
        /* a synchronous send that a posted receive matched is complete already (the
         * acknowledgement went through the funnel above): completing it twice dropped
         * the datatype's reference twice (MPICH's sendself: "invalid datatype") */
        if (!r->done && (!(r->flags & XM_PKT_F_SYNC) || (r->flags & F_ACKED)))
            xm_p2p_complete(r);
        return 0;
    }
    if (r->total > xm_p2p_eager_limit(xm_p2p_route(dest)))
        r->flags |= F_RDV;
    if (xm_p2p_pending[dest] == 0) {
        int rc = xm_p2p_push(r);
        if (rc < 0)
            return rc;
        if (rc == 1)
            return 0;
    }
    xm_p2p_pending[dest]++;
    xm_p2p_list_add(&xm_p2p_sendq, r);
    return 0;
}

/* MPI_Send's fast path.  A contiguous eager message to another rank, with nothing of
 * ours parked ahead of it towards that rank, is copied straight into one packet: no
 * request is made, and once the copy is posted the send is complete (after the netmod
 * handed it over, as for any send: see xm_wait_handed_over()).  1 = sent; 0 = not
 * taken (no free packet, a derived or larger or zero-copy message, a lost peer:
 * xm_isend() then does it, and reports the errors); -errno from the transport.
 * count >= 0 is the caller's check. */
int xm_send_now(const void *buf, int count, MPI_Datatype dtype, int dest, int tag,
                uint32_t ctx)
{
    struct xm_dtype *dt = xm_dt_get(dtype);
    struct xm_transport *t;
    if (!dt || !dt->committed || !xm_p2p_direct_ok(dt) || dest == xm_g.rank ||
        xm_p2p_pending[dest] || xm_p2p_lost[dest] || !(t = xm_p2p_route(dest)))
        return 0;
    size_t n = dt->size * (size_t)count;
    if (n > t->one_max || n > t->eager_max || (t->post_ref && n >= t->zcopy_min))
        return 0;
    void *pay;
    size_t cap;
    struct xm_pkt_hdr *h = xm_p2p_get_pkt(t, dest, n, &pay, &cap);
    if (!h)
        return 0;
    *h = (struct xm_pkt_hdr){
        .type = XM_PKT_EAGER, .src = xm_g.rank, .tag = tag, .ctx = ctx, .len = n};
    if (n) /* MPI_Send(NULL, 0, ...) is legal; memcpy's pointers must not be NULL */
        memcpy(pay, buf, n);
    int rc = t->post(t, dest, h, n);
    if (rc < 0)
        return rc;
    xm_wait_handed_over(dest);
    return 1;
}

/* ---- cancelling a send ---------------------------------------------------------- */

static void mark_cancelled(struct xm_req *r)
{
    r->cancelled = 1;
    r->status.xm_count_hi_cncl |= 1;
}

int xm_cancel_send(struct xm_req *r)
{
    if (r->kind != XM_REQ_SEND || r->cancelled || (r->flags & F_CANCELING) ||
        r->peer < 0 || r->peer >= xm_proc_count() || xm_p2p_lost[r->peer])
        return 0;
    if (!(r->flags & F_HDR_SENT)) {
        /* nothing left this process: it waits on the send queue */
        if (xm_p2p_on_list(&xm_p2p_sendq, r)) {
            xm_p2p_list_del(&xm_p2p_sendq, r);
            xm_p2p_pending[r->peer]--;
        }
        mark_cancelled(r);
        if (!r->done)
            xm_p2p_complete(r);
        return 1;
    }
    /* the receiver streams or has read the bytes (CTS came), or the netmod still
     * holds the user buffer by reference: too late */
    if (r->flags & (F_RDV_GO | F_ZC))
        return 0;
    struct xm_pkt_hdr h = {.type = XM_PKT_CANCEL,
                           .src = xm_g.rank,
                           .tag = r->tag,
                           .ctx = r->ctx,
                           .cookie = (uint64_t)(unsigned)r->handle};
    r->flags |= F_CANCELING;
    if (r->done) {
        r->done = 0; /* complete again when the answer comes */
        r->flags |= F_DEFERRED;
    }
    xm_p2p_send_ctrl_hdr(r->peer, &h);
    return 1;
}

/* Sender: the answer to our CANCEL. */
void xm_p2p_cancel_answer(struct xm_req *r, int dropped)
{
    r->flags &= ~F_CANCELING;
    if (dropped) {
        mark_cancelled(r);
        xm_rdv_unlist(r); /* no FIN or CTS will come */
    }
    if (r->flags & F_DEFERRED) {
        r->flags &= ~F_DEFERRED;
        xm_req_complete(r); /* the datatype went with the first completion */
    } else if (dropped) {
        xm_p2p_complete(r);
    }
    /* else: matched; it completes the usual way */
}

/* ---- control packets --------------------------------------------------------- */

static int try_ctrl(int dest, const struct xm_pkt_hdr *src_h)
{
    if (dest == xm_g.rank) {
        xm_handle_pkt(src_h, NULL, 0);
        return 1;
    }
    struct xm_transport *t = xm_p2p_route(dest);
    void *pay;
    size_t cap;
    struct xm_pkt_hdr *h = t ? xm_p2p_get_pkt(t, dest, 0, &pay, &cap) : NULL;
    if (!h)
        return 0;
    *h = *src_h;
    t->post(t, dest, h, 0);
    return 1;
}

void xm_p2p_send_ctrl(int dest, int type, uint64_t cookie, uint64_t len)
{
    struct xm_pkt_hdr h = {
        .type = (uint8_t)type, .src = xm_g.rank, .cookie = cookie, .len = len};
    xm_p2p_send_ctrl_hdr(dest, &h);
}

void xm_p2p_send_ctrl_hdr(int dest, const struct xm_pkt_hdr *hp)
{
    struct xm_pkt_hdr h = *hp;
    if (!xm_p2p_ctrlq && try_ctrl(dest, &h))
        return;
    struct xm_p2p_ctrl *c = malloc(sizeof(*c));
    if (!c)
        xm_die("out of memory queueing a control packet");
    c->next = NULL;
    c->dest = dest;
    c->h = h;
    *ctrlq_tail = c;
    ctrlq_tail = &c->next;
}

int xm_p2p_push_ctrl(void)
{
    int n = 0;
    while (xm_p2p_ctrlq && try_ctrl(xm_p2p_ctrlq->dest, &xm_p2p_ctrlq->h)) {
        struct xm_p2p_ctrl *c = xm_p2p_ctrlq;
        xm_p2p_ctrlq = c->next;
        if (!xm_p2p_ctrlq)
            ctrlq_tail = &xm_p2p_ctrlq;
        free(c);
        n++;
    }
    return n;
}

/* ---- netmod hooks (p2p.h) ------------------------------------------------------ */

void xm_p2p_sent(struct xm_req *r)
{
    if (!(r->flags & F_ZC) || r->done)
        return;
    r->flags &= ~F_ZC;
    if ((r->flags & F_RDV) || !(r->flags & XM_PKT_F_SYNC) || (r->flags & F_ACKED))
        xm_p2p_complete(r);
}

void *xm_rdata_target(const struct xm_pkt_hdr *h, size_t n)
{
    struct xm_req *r;
    if (xm_pkt_check(h, n))
        return NULL; /* the caller's xm_handle_pkt() reports it */
    if (h->type == XM_PKT_EAGER) {
        /* a whole eager message in one packet: match it now (packets from one source
         * arrive in order, so matching at the header is matching in order) */
        if (n != h->len)
            return NULL;
        if (__builtin_expect(h->src >= xm_g.size, 0) &&
            xm_xsec_verdict(h->ctx, h->src) != XM_XSEC_OK)
            return NULL; /* xm_handle_pkt() decides, with the payload in a temporary */
        r = xm_match_posted(h->src, h->tag, h->ctx);
        if (!r || r->bytes < n || !xm_p2p_direct_ok(xm_dt_get(r->dt)))
            return NULL;
        xm_match_take(r, h);
        xm_p2p_inflight[h->src] = r;
        return r->buf;
    }
    if (h->type != XM_PKT_RDATA)
        return NULL;
    r = xm_p2p_cookie_req(h->cookie); /* checked: our receive, waiting for its data */
    if (r->pos + n > r->bytes || !xm_p2p_direct_ok(xm_dt_get(r->dt)))
        return NULL;
    return (char *)r->buf + r->pos;
}

void xm_rdata_done(const struct xm_pkt_hdr *h, size_t n)
{
    struct xm_req *r;
    if (h->type == XM_PKT_EAGER) {
        r = xm_p2p_inflight[h->src];
        xm_p2p_inflight[h->src] = NULL;
    } else {
        r = xm_p2p_cookie_req(h->cookie);
    }
    if (!r || r->kind != XM_REQ_RECV)
        xm_die("internal error: data from rank %d for no receive", h->src);
    r->pos += n;
    if (r->pos >= r->total)
        xm_match_finish(r);
}

/* ---- a lost peer ---------------------------------------------------------------- */

static void fail_req(struct xm_req *r, void *arg)
{
    int peer = *(const int *)arg;
    if (r->done || r->peer != peer)
        return;
    if (r->kind == XM_REQ_SEND) {
        xm_rdv_unlist(r);
        if (r->flags & F_CANCELING) { /* no answer will come: not cancelled */
            r->flags &= ~F_CANCELING;
            if (r->flags & F_DEFERRED) {
                r->flags &= ~F_DEFERRED;
                xm_req_complete(r);
                return;
            }
        }
        if (xm_p2p_on_list(&xm_p2p_sendq, r)) {
            xm_p2p_list_del(&xm_p2p_sendq, r);
            xm_p2p_pending[peer]--;
        }
    } else if (r->kind == XM_REQ_RECV) {
        if (xm_p2p_on_list(&xm_p2p_posted, r))
            xm_p2p_list_del(&xm_p2p_posted, r);
        xm_status_set(&r->status, peer, r->tag, MPI_ERR_OTHER, 0);
    } else {
        return;
    }
    r->status.MPI_ERROR = MPI_ERR_OTHER;
    xm_p2p_complete(r);
}

/* peer is gone for good: its half-arrived message is freed (a receive it matched
 * fails in fail_req()), and nothing more is taken from it */
static void forget_peer(int peer)
{
    xm_p2p_lost[peer] = 1;
    struct xm_req *u = xm_p2p_inflight[peer];
    xm_p2p_inflight[peer] = NULL;
    if (u && u->kind == XM_REQ_UNEXP) {
        if (!u->match && xm_p2p_on_list(&xm_p2p_unexp, u))
            xm_p2p_list_del(&xm_p2p_unexp, u);
        xm_req_free(u);
    }
}

void xm_peer_lost(int peer, const char *why)
{
    if (!xm_g.world || xm_g.world->errh == MPI_ERRORS_ARE_FATAL)
        xm_die("connection to rank %d lost (%s)", peer, why);
    if (getenv("LOOM_MPI_DEBUG"))
        fprintf(stderr, "loom-mpi: rank %d: connection to rank %d lost (%s)\n", xm_g.rank,
                peer, why);
    forget_peer(peer);
    xm_req_foreach(fail_req, &peer);
}

/* ---- dropping a process of another job (core/xsec.h quota, refused answers) ---- */

void xm_p2p_drop(int peer, const char *why)
{
    if (peer < xm_g.size || peer >= xm_proc_count() || xm_p2p_lost[peer] == 1)
        return;
    if (xm_p2p_lost[peer] == 2)
        xm_p2p_ndue--;
    xm_xsec_warn_drop(peer, why);
    struct xm_transport *t = xm_p2p_route(peer);
    if (t && t->drop)
        t->drop(t, peer); /* closed; it never gets back in */
    forget_peer(peer);
    for (struct xm_req *q = xm_p2p_unexp.head, *next; q; q = next) {
        next = q->next;
        if (q->peer == peer) {
            xm_p2p_list_del(&xm_p2p_unexp, q);
            xm_req_free(q);
        }
    }
    xm_xsec_forget(peer);
    xm_req_foreach(fail_req, &peer);
    /* a receive from any source on a communicator holding it may have waited for it */
    for (struct xm_req *r = xm_p2p_posted.head, *next; r; r = next) {
        next = r->next;
        if (r->peer != MPI_ANY_SOURCE || !r->comm || !r->comm->w ||
            xm_comm_rank_of(r->comm, peer) < 0)
            continue;
        xm_p2p_list_del(&xm_p2p_posted, r);
        xm_status_set(&r->status, peer, r->tag, MPI_ERR_OTHER, 0);
        xm_p2p_complete(r);
    }
}

void xm_req_status(const struct xm_req *r, MPI_Status *st)
{
    if (!st || st == MPI_STATUS_IGNORE)
        return;
    *st = r->status;
    /* a collective's status names no source; its communicator may be gone by now */
    if (st->MPI_SOURCE >= 0 && r->kind != XM_REQ_COLL && r->comm && r->comm->w) {
        for (int i = 0; i < r->comm->size; i++)
            if (r->comm->w[i] == st->MPI_SOURCE) {
                st->MPI_SOURCE = i;
                break;
            }
    }
}

/* ---- blocking helpers (collectives) -------------------------------------------- */

int xm_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, uint32_t ctx)
{
    struct xm_req *r;
    int rc = xm_isend(buf, count, dt, dest, tag, ctx, NULL, 0, &r);
    if (rc < 0)
        return rc;
    xm_wait(r);
    rc = r->status.MPI_ERROR == MPI_SUCCESS ? 0 : -EIO;
    xm_req_free(r);
    return rc;
}

int xm_recv(void *buf, int count, MPI_Datatype dt, int src, int tag, uint32_t ctx,
            MPI_Status *st)
{
    struct xm_req *r;
    int rc = xm_irecv(buf, count, dt, src, tag, ctx, NULL, &r);
    if (rc < 0)
        return rc;
    xm_wait(r);
    if (st && st != MPI_STATUS_IGNORE)
        *st = r->status;
    rc = r->status.MPI_ERROR == MPI_SUCCESS ? 0 : -EMSGSIZE;
    xm_req_free(r);
    return rc;
}

int xm_sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, void *rbuf,
                int rcount, MPI_Datatype rdt, int src, int tag, uint32_t ctx)
{
    struct xm_req *rr, *sr;
    int rc = xm_irecv(rbuf, rcount, rdt, src, tag, ctx, NULL, &rr);
    if (rc < 0)
        return rc;
    rc = xm_isend(sbuf, scount, sdt, dest, tag, ctx, NULL, 0, &sr);
    if (rc < 0)
        return rc;
    xm_wait(sr);
    xm_wait(rr);
    rc = rr->status.MPI_ERROR == MPI_SUCCESS ? 0 : -EMSGSIZE;
    xm_req_free(sr);
    xm_req_free(rr);
    return rc;
}
