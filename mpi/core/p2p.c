/*
 * p2p.c - point-to-point engine: send queues, the packet funnel, the matcher, progress
 *         and the idle policy (contract in p2p.h).
 *
 * Over 800 lines (about 1470): queues, funnel, matcher, rendezvous and progress all
 *   move the same request state machine; splitting along those seams (matching,
 *   rendezvous, progress and the idle policy) is the planned next step, and until then
 *   one file keeps every state change in one place.
 *
 * Notes:
 *   - Matching: one posted list and one unexpected list, both in arrival order, matched
 *     on (ctx, src, tag) with wildcards.  (Per-communicator/per-source bins are a later
 *     optimisation; the lists are the reference behaviour.)
 *   - A message up to the eager limit (LOOM_MPI_EAGER_MAX; 32 KiB when CMA may be used,
 *     64 KiB on the copy path) longer than one cell
 *     is EAGER + FRAGs; while its fragments arrive the receiving request is
 *     inflight[src].  An unexpected eager message is buffered in a malloc'ed area
 *     (UNEXP request) and copied out when a receive matches it.
 *   - Larger messages use rendezvous (pkt.h): RTS, then the receiver either reads the
 *     sender's memory with process_vm_readv (CMA: one copy) and sends FIN, or asks for
 *     the bytes with CTS and gets RDATA packets through the cells (pipelined copy).
 *     Mode: LOOM_SHM_LMT=cma|copy (or LOOM_MPI_CMA=1|0); default auto: try CMA on the
 *     first large message and fall back to the copy path for good if the kernel
 *     refuses (Yama ptrace_scope, namespaces).  The sender completes on FIN, or once
 *     its last RDATA packet left.
 *   - Sends to one destination leave strictly in order (pending[dest] counts queued
 *     sends; a new send to a dest with pending sends queues behind them).
 *   - Control packets (SSEND_ACK) that find no free cell are queued and retried.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../dt/dtype.h"
#include "../shm/shm.h"
#include "boot.h"
#include "mt.h"
#include "p2p.h"
#include "proc.h"
#include "transport.h"
#include "xsec.h"

#define F_HDR_SENT 0x100u
#define F_ACKED 0x200u
#define F_RDV 0x400u    /* send: rendezvous (completes on FIN / last RDATA) */
#define F_RDV_GO 0x800u /* send: CTS received, stream RDATA */
#define F_ZC 0x1000u    /* send: payload posted by reference, not yet written */
#define F_LMT 0x2000u   /* send: RTS to a local rank, on the lmt list until FIN/CTS */
#define F_CTS 0x4000u   /* recv: CTS sent, RDATA from r->peer expected */
#define F_CANCELING 0x8000u /* send: CANCEL sent, CANCEL_ACK due (the request stays
                             * incomplete until it comes) */
#define F_DEFERRED 0x10000u /* send: finished (datatype let go) while F_CANCELING */
/* ---- messages from other jobs' processes (core/xsec.h) ---- */
#define F_XUNSURE 0x20000000u /* unexpected, from another job, on a context no
                               * communicator had yet: asked again before a match */
#define F_XDROP 0x40000000u   /* refused EAGER whose FRAGs are still due: swallowed */

struct ctrl {
    struct ctrl *next;
    int dest;
    struct xm_pkt_hdr h;
};

static size_t eager_max;      /* LOOM_MPI_EAGER_MAX, or 0: the default below */
static int cma_mode; /* 1 use CMA, 0 copy path, -1 auto (try CMA once) */

struct list {
    struct xm_req *head, *tail;
};

static struct list posted, unexp, sendq;
static struct list lmtq; /* rendezvous sends whose receiver may offer a shared copy */
/* per-peer state: indexed by process id (core/proc.h: world ranks first), grown by
 * p2p_grow() when a connection adds processes of another job */
static struct xm_req **inflight; /* id -> request receiving its fragments */
static int *pending;             /* id -> queued sends */
static unsigned *pass_mark;      /* scratch for push_sends() */
static unsigned pass_gen;
static struct ctrl *ctrlq, **ctrlq_tail = &ctrlq;
static int spin_max, yield_max;
static int spin_cur;         /* adaptive spin budget, 16 .. spin_max (see xm_idle()) */
static int spin_adapt;       /* LOOM_MPI_SPIN_ADAPT=0 keeps the budget at spin_max */
static unsigned char *lost;  /* world rank -> its connection broke (ERRORS_RETURN) */
static size_t zc_min;        /* eager sends at least this long go by reference */
static size_t tcp_eager_max; /* eager limit towards peers reached by the netmod */
static size_t eager_accept;  /* longest eager message taken from another rank */
static int *peer_pid;        /* world rank -> pid from its KVS card; 0 unknown, -1 none */

static void list_add(struct list *l, struct xm_req *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}

static void list_del(struct list *l, struct xm_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->next = r->prev = NULL;
}

/* lmtq has its own links (lmt_next/lmt_prev): a send goes on it from push_rdv() while
 * it may still be on the send queue (push_sends() takes it off after push() returns),
 * and sharing next/prev there corrupted both lists (a parked RTS: with many large
 * sends outstanding the same send was streamed twice, "RDATA ... no receive"). */
static void lmt_add(struct xm_req *r)
{
    r->lmt_next = NULL;
    r->lmt_prev = lmtq.tail;
    if (lmtq.tail)
        lmtq.tail->lmt_next = r;
    else
        lmtq.head = r;
    lmtq.tail = r;
}

static void lmt_del(struct xm_req *r)
{
    if (r->lmt_prev)
        r->lmt_prev->lmt_next = r->lmt_next;
    else
        lmtq.head = r->lmt_next;
    if (r->lmt_next)
        r->lmt_next->lmt_prev = r->lmt_prev;
    else
        lmtq.tail = r->lmt_prev;
    r->lmt_next = r->lmt_prev = NULL;
}

static int on_list(const struct list *l, const struct xm_req *r)
{
    for (const struct xm_req *p = l->head; p; p = p->next)
        if (p == r)
            return 1;
    return 0;
}

static struct xm_transport *route(int dest)
{
    if (xm_g.shm && xm_g.shm->reaches(xm_g.shm, dest))
        return xm_g.shm;
    return xm_g.net;
}

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

static int p2p_cap; /* entries of the per-peer arrays */

/* core/proc.h grow hook: room for ids [0, newcap) */
static int p2p_grow(int oldcap, int newcap)
{
    oldcap = p2p_cap;
    if (newcap <= oldcap)
        return 0;
    if (grow_zero((void **)&inflight, sizeof(*inflight), oldcap, newcap) < 0 ||
        grow_zero((void **)&pending, sizeof(*pending), oldcap, newcap) < 0 ||
        grow_zero((void **)&pass_mark, sizeof(*pass_mark), oldcap, newcap) < 0 ||
        grow_zero((void **)&lost, 1, oldcap, newcap) < 0 ||
        grow_zero((void **)&peer_pid, sizeof(*peer_pid), oldcap, newcap) < 0)
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
    inflight = calloc((size_t)n, sizeof(*inflight));
    pending = calloc((size_t)n, sizeof(*pending));
    pass_mark = calloc((size_t)n, sizeof(*pass_mark));
    lost = calloc((size_t)n, 1);
    peer_pid = calloc((size_t)n, sizeof(*peer_pid));
    if (!inflight || !pending || !pass_mark || !lost || !peer_pid ||
        xm_proc_on_grow(p2p_grow) < 0)
        return -ENOMEM;
    p2p_cap = n;
    spin_max = xm_env_int("LOOM_MPI_SPIN", xm_g.oversubscribed ? 16 : 2000);
    yield_max = xm_env_int("LOOM_MPI_YIELD", xm_g.oversubscribed ? 8 : 64);
    spin_cur = spin_max;
    spin_adapt = xm_env_int("LOOM_MPI_SPIN_ADAPT", 1);
    eager_max = (size_t)xm_env_int("LOOM_MPI_EAGER_MAX", 0);
    /* by reference from 64 KiB on: with the socket send buffer bounded to 128 KiB
     * (tcp.c), a 64 KiB ping-pong over loopback written from the user buffer took
     * 19.2-20.4 us against 20.7-20.9 copied first (and streamed 5% more).  (With
     * autotuned buffers copying had won below 192 KiB.) */
    zc_min = (size_t)xm_env_int("LOOM_MPI_TCP_ZCOPY_MIN", 65536);
    tcp_eager_max = (size_t)xm_env_int("LOOM_MPI_TCP_EAGER_MAX", 262144);
    /* a peer's eager message is buffered at its declared length when no receive is
     * posted: above this a header is a protocol error (ranks of a job normally share
     * their eager limits; this leaves room for ones that do not) */
    eager_accept = (size_t)xm_env_int("LOOM_MPI_EAGER_ACCEPT", 16 << 20);
    if (eager_accept < tcp_eager_max)
        eager_accept = tcp_eager_max;
    if (eager_accept < eager_max)
        eager_accept = eager_max;
    const char *cma = getenv("LOOM_MPI_CMA"); /* 0 | 1 | auto */
    cma_mode = cma && (*cma == '0' || *cma == '1') ? *cma - '0' : -1;
    const char *lmt = getenv("LOOM_SHM_LMT");
    if (lmt && strcmp(lmt, "cma") == 0)
        cma_mode = 1;
    else if (lmt && strcmp(lmt, "copy") == 0)
        cma_mode = 0;
    if (cma_mode != 0)
        /* Yama ptrace_scope 1 lets only ancestors read us; allow any process of the same
         * user (the kernel still checks credentials).  EINVAL without Yama: ignored. */
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    xm_lmt_init();
    return 0;
}

void xm_p2p_finalize(void)
{
    xm_lmt_report();
    free(inflight);
    free(pending);
    free(pass_mark);
    free(lost);
    free(peer_pid);
    peer_pid = NULL;
    p2p_cap = 0;
    lost = NULL;
    inflight = NULL;
    pending = NULL;
    pass_mark = NULL;
}

/* a send/recv request holds a reference on its datatype from
 * xm_isend/xm_irecv until it completes, so MPI_Type_free of a derived type in use is
 * safe.  Every completion of such a request goes through here exactly once. */
static void complete(struct xm_req *r)
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

/* The packed bytes of (count, dt) are the user buffer itself.  Not true of every
 * predefined type: the pair types (MPI_DOUBLE_INT, ...) are packed without their
 * padding, so their extent exceeds their size. */
static int direct_ok(const struct xm_dtype *dt)
{
    return dt->contig && dt->true_lb == 0 && (size_t)dt->extent == dt->size;
}

/* ---- sending ---------------------------------------------------------------- */

/* Eager limit towards node-local ranks.  With CMA, 64 KiB went faster by rendezvous
 * (one copy, shared by both sides: lmt.c) than through the cells: 5.1 against 4.4 us
 * when the two CPUs share a cache, but 6.0 against 22-31 us when they do not (the
 * cells' lines cross between cores twice; this VM's CPUs move between both cases). */
static size_t shm_eager_max(void)
{
    if (eager_max)
        return eager_max;
    return cma_mode == 0 ? 65536 : 32768;
}

/* Above this, a message on transport t (route(dest)) goes by rendezvous. */
static size_t eager_limit(const struct xm_transport *t)
{
    return t && t == xm_g.net ? tcp_eager_max : shm_eager_max();
}

static void send_ctrl(int dest, int type, uint64_t cookie, uint64_t len);
static void send_ctrl_hdr(int dest, const struct xm_pkt_hdr *hp);

static struct xm_pkt_hdr *get_pkt(struct xm_transport *t, int dest, size_t want,
                                  void **pay, size_t *cap)
{
    return t->alloc_n ? t->alloc_n(t, dest, want, pay, cap) : t->alloc(t, dest, pay, cap);
}

/* Where the packed bytes of a rendezvous send are (packs derived types once). */
static int rdv_source(struct xm_req *r, struct xm_dtype *dt, uint64_t *addr)
{
    if (direct_ok(dt)) {
        *addr = (uint64_t)(uintptr_t)r->buf;
        return 0;
    }
    if (!r->tmp) {
        r->tmp = malloc(r->total);
        if (!r->tmp)
            return -ENOMEM;
        xm_dt_pack(r->buf, r->count, dt, 0, r->tmp, r->total);
    }
    *addr = (uint64_t)(uintptr_t)r->tmp;
    return 0;
}

/* Rendezvous send: the RTS, or (after CTS) the RDATA stream.  Same return as push(). */
static int push_rdv(struct xm_req *r, struct xm_transport *t, struct xm_dtype *dt)
{
    void *pay;
    size_t cap;
    if (!(r->flags & F_HDR_SENT)) {
        struct xm_rts rts = {.pid = (uint64_t)getpid()};
        int rc = rdv_source(r, dt, &rts.addr);
        if (rc < 0)
            return rc;
        struct xm_pkt_hdr *h = get_pkt(t, r->peer, sizeof(rts), &pay, &cap);
        if (!h)
            return 0;
        *h = (struct xm_pkt_hdr){.type = XM_PKT_RTS,
                                 .flags = (uint8_t)(r->flags & 0xff),
                                 .src = xm_g.rank,
                                 .tag = r->tag,
                                 .ctx = r->ctx,
                                 .len = r->total,
                                 .cookie = (uint64_t)(unsigned)r->handle};
        memcpy(pay, &rts, sizeof(rts));
        t->post(t, r->peer, h, sizeof(rts));
        r->flags |= F_HDR_SENT;
        if (t == xm_g.shm && cma_mode != 0 && xm_lmt_wanted(r->total)) {
            r->flags |= F_LMT; /* the receiver may ask us to help copy (lmt.c) */
            lmt_add(r);
        }
        return 1; /* waits for FIN or CTS, off the send queue */
    }
    if (t->post_ref && r->pos < r->total) {
        /* netmod: the rest in one packet, written from the packed bytes in place */
        struct xm_pkt_hdr h = {.type = XM_PKT_RDATA,
                               .src = xm_g.rank,
                               .len = r->total - r->pos,
                               .cookie = r->cookie_ack};
        const char *p = r->tmp ? (const char *)r->tmp : (const char *)r->buf;
        int rc = t->post_ref(t, r->peer, &h, p + r->pos, r->total - r->pos, r);
        if (rc < 0)
            return rc;
        r->pos = r->total;
        if (rc == 0) {
            r->flags |= F_ZC; /* xm_p2p_sent() completes it */
            return 1;
        }
    }
    while (r->pos < r->total) {
        struct xm_pkt_hdr *h = get_pkt(t, r->peer, r->total - r->pos, &pay, &cap);
        if (!h)
            return 0;
        size_t n = r->total - r->pos < cap ? r->total - r->pos : cap;
        *h = (struct xm_pkt_hdr){
            .type = XM_PKT_RDATA, .src = xm_g.rank, .len = n, .cookie = r->cookie_ack};
        if (r->tmp)
            memcpy(pay, (char *)r->tmp + r->pos, n);
        else
            xm_dt_pack(r->buf, r->count, dt, r->pos, pay, n);
        t->post(t, r->peer, h, n);
        r->pos += n;
    }
    complete(r);
    return 1;
}

/* Push as many fragments of r as cells allow: 1 = all sent, 0 = parked, <0 error. */
static int push(struct xm_req *r)
{
    struct xm_transport *t = route(r->peer);
    struct xm_dtype *dt = xm_dt_get(r->dt);
    if (!t)
        return -EHOSTUNREACH;
    if (lost[r->peer])
        return -EPIPE;
    if (r->flags & F_RDV)
        return push_rdv(r, t, dt);
    if (t->post_ref && !(r->flags & F_HDR_SENT) && r->total >= zc_min && direct_ok(dt)) {
        /* netmod: the whole eager message as one packet, written from the user buffer */
        struct xm_pkt_hdr h = {.type = XM_PKT_EAGER,
                               .flags = (uint8_t)(r->flags & 0xff),
                               .src = xm_g.rank,
                               .tag = r->tag,
                               .ctx = r->ctx,
                               .len = r->total,
                               .cookie = (uint64_t)(unsigned)r->handle};
        int rc = t->post_ref(t, r->peer, &h, r->buf, r->total, r);
        if (rc < 0)
            return rc;
        r->pos = r->total;
        r->flags |= F_HDR_SENT | (rc == 0 ? F_ZC : 0);
        if (!(r->flags & F_ZC) && (!(r->flags & XM_PKT_F_SYNC) || (r->flags & F_ACKED)))
            complete(r);
        return 1;
    }
    while (!(r->flags & F_HDR_SENT) || r->pos < r->total) {
        void *pay;
        size_t cap;
        struct xm_pkt_hdr *h = get_pkt(t, r->peer, r->total - r->pos, &pay, &cap);
        if (!h)
            return 0;
        size_t n = r->total - r->pos < cap ? r->total - r->pos : cap;
        h->type = (r->flags & F_HDR_SENT) ? XM_PKT_FRAG : XM_PKT_EAGER;
        h->flags = (uint8_t)(r->flags & 0xff);
        h->reserved = 0;
        h->src = xm_g.rank;
        h->tag = r->tag;
        h->ctx = r->ctx;
        h->len = (r->flags & F_HDR_SENT) ? n : r->total;
        h->cookie = (uint64_t)(unsigned)r->handle;
        if (n)
            xm_dt_pack(r->buf, r->count, dt, r->pos, pay, n);
        t->post(t, r->peer, h, n);
        r->pos += n;
        r->flags |= F_HDR_SENT;
    }
    if (!(r->flags & XM_PKT_F_SYNC) || (r->flags & F_ACKED))
        complete(r);
    return 1;
}

static int push_sends(void)
{
    int n = 0;
    struct xm_req *r = sendq.head, *nx;
    pass_gen++;
    for (; r; r = nx) {
        nx = r->next;
        if (pass_mark[r->peer] == pass_gen)
            continue; /* an earlier send to this dest is still parked: keep order */
        int rc = push(r);
        if (rc == 0) {
            pass_mark[r->peer] = pass_gen;
            continue;
        }
        if (rc < 0) {
            r->status.MPI_ERROR = MPI_ERR_OTHER;
            if (!r->done)
                complete(r);
            if (!on_list(&sendq, r)) { /* xm_peer_lost() already took it off */
                n++;
                continue;
            }
        }
        list_del(&sendq, r);
        pending[r->peer]--;
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
            complete(r);
        return 0;
    }
    if (r->total > eager_limit(route(dest)))
        r->flags |= F_RDV;
    if (pending[dest] == 0) {
        int rc = push(r);
        if (rc < 0)
            return rc;
        if (rc == 1)
            return 0;
    }
    pending[dest]++;
    list_add(&sendq, r);
    return 0;
}

static void wait_handed_over(int peer);

/* MPI_Send's fast path.  A contiguous eager message to another rank, with nothing of
 * ours parked ahead of it towards that rank, is copied straight into one packet: no
 * request is made, and once the copy is posted the send is complete (after the netmod
 * handed it over, as for any send: see wait_handed_over()).  1 = sent; 0 = not taken
 * (no free packet, a derived or larger or zero-copy message, a lost peer: xm_isend()
 * then does it, and reports the errors); -errno from the transport.  count >= 0 is the
 * caller's check. */
int xm_send_now(const void *buf, int count, MPI_Datatype dtype, int dest, int tag,
                uint32_t ctx)
{
    struct xm_dtype *dt = xm_dt_get(dtype);
    struct xm_transport *t;
    if (!dt || !dt->committed || !direct_ok(dt) || dest == xm_g.rank || pending[dest] ||
        lost[dest] || !(t = route(dest)))
        return 0;
    size_t n = dt->size * (size_t)count;
    if (n > t->one_max || n > eager_limit(t) || (t->post_ref && n >= zc_min))
        return 0;
    void *pay;
    size_t cap;
    struct xm_pkt_hdr *h = get_pkt(t, dest, n, &pay, &cap);
    if (!h)
        return 0;
    *h = (struct xm_pkt_hdr){
        .type = XM_PKT_EAGER, .src = xm_g.rank, .tag = tag, .ctx = ctx, .len = n};
    if (n) /* MPI_Send(NULL, 0, ...) is legal; memcpy's pointers must not be NULL */
        memcpy(pay, buf, n);
    int rc = t->post(t, dest, h, n);
    if (rc < 0)
        return rc;
    wait_handed_over(dest);
    return 1;
}

/* ---- receiving -------------------------------------------------------------- */

static int match(const struct xm_req *r, int src, int tag, uint32_t ctx)
{
    return r->ctx == ctx && (r->peer == MPI_ANY_SOURCE || r->peer == src) &&
           (r->tag == MPI_ANY_TAG || r->tag == tag);
}

static void finish_recv(struct xm_req *r)
{
    size_t got = r->total < r->bytes ? r->total : r->bytes;
    xm_status_set(&r->status, r->peer, r->tag,
                  r->total > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS, got);
    complete(r);
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
static void rdv_start(struct xm_req *r, int src, int tag, size_t total, uint64_t cookie,
                      uint64_t pid, uint64_t addr);

static void take_unexp(struct xm_req *u, struct xm_req *r)
{
    if (u->flags & F_RDV) {
        rdv_start(r, u->peer, u->tag, u->total, u->cookie_ack, u->rdv_pid, u->rdv_addr);
        xm_req_free(u);
        return;
    }
    r->peer = u->peer;
    r->tag = u->tag;
    r->total = u->total;
    r->pos = 0;
    deliver(r, u->tmp, u->total);
    finish_recv(r);
    if (u->flags & XM_PKT_F_SYNC)
        send_ctrl(u->peer, XM_PKT_SSEND_ACK, u->cookie_ack, 0);
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
        finish_recv(r);
    }
}

/* Read n bytes at the sender's addr into r's buffer with CMA.  0 / -errno. */
static int cma_read(struct xm_req *r, pid_t pid, uint64_t addr, size_t n)
{
    struct xm_dtype *dt = xm_dt_get(r->dt);
    int direct = direct_ok(dt);
    size_t chunk = direct ? n : (n < (1u << 20) ? n : (1u << 20));
    char *bounce = direct ? NULL : malloc(chunk ? chunk : 1);
    if (!direct && !bounce)
        return -ENOMEM;
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < chunk ? n - done : chunk;
        int rc = xm_vm_copy(0, pid, direct ? (char *)r->buf + done : bounce, addr + done,
                            want);
        if (rc < 0) {
            free(bounce);
            return rc;
        }
        if (!direct)
            xm_dt_unpack(r->buf, r->count, dt, done, bounce, want);
        done += want;
    }
    free(bounce);
    return 0;
}

static void lmt_done(struct xm_req *r)
{
    if (r->flags & F_LMT) {
        r->flags &= ~F_LMT;
        lmt_del(r);
    }
}

/* A receive r matched an RTS: fetch the bytes (CMA) or ask for them (CTS). */
static void rdv_start(struct xm_req *r, int src, int tag, size_t total, uint64_t cookie,
                      uint64_t pid, uint64_t addr)
{
    r->peer = src;
    r->tag = tag;
    r->total = total;
    r->pos = 0;
    size_t n = total < r->bytes ? total : r->bytes;
    /* CMA never towards a rank the netmod reaches (another node, or forced TCP), and
     * only from the process that src's own KVS card names (xm_pkt_check() refused an
     * RTS naming another): never a pid a packet alone asks for */
    if (cma_mode != 0 && !(xm_g.net && route(src) == xm_g.net) &&
        (int)pid == xm_peer_pid(src)) {
        int rc = direct_ok(xm_dt_get(r->dt)) && xm_lmt_wanted(n)
                     ? xm_lmt_recv(src, (uint32_t)cookie, (int)pid, addr, r->buf, n)
                     : cma_read(r, (pid_t)pid, addr, n);
        if (rc == -EOWNERDEAD) {
            xm_peer_lost(src, "it died during a large transfer");
            return;
        }
        if (rc == 0) {
            cma_mode = 1;
            r->pos = total;
            finish_recv(r);
            send_ctrl(src, XM_PKT_FIN, cookie, 0);
            return;
        }
        if (cma_mode < 0 || rc != -ENOMEM) {
            if (cma_mode < 0 && getenv("LOOM_MPI_DEBUG"))
                fprintf(stderr, "loom-mpi: rank %d: CMA unavailable (%s), using copies\n",
                        xm_g.rank, strerror(-rc));
            cma_mode = 0;
        }
    }
    r->flags |= F_CTS; /* RDATA from src may now fill r (xm_pkt_check) */
    send_ctrl(src, XM_PKT_CTS, cookie, (uint64_t)(unsigned)r->handle);
}

int xm_peer_pid(int rank)
{
    if (!peer_pid || rank < 0 || rank >= xm_g.size)
        return -1;
    if (peer_pid[rank] == 0) {
        char v[32];
        char *end;
        long p = -1;
        if (xm_boot_get(rank, "pid", v, sizeof(v)) == 0) {
            p = strtol(v, &end, 10);
            if (*end || p <= 0 || p > 0x7fffffffL)
                p = -1;
        }
        peer_pid[rank] = (int)p;
    }
    return peer_pid[rank];
}

/* The request a control or data packet's cookie names (our handles fit 32 bits). */
static struct xm_req *cookie_req(uint64_t cookie)
{
    return cookie >> 32 ? NULL : xm_req_get((MPI_Request)(uint32_t)cookie);
}

int xm_rdv_region(uint32_t cookie, int dest, uint64_t *addr, size_t *len)
{
    struct xm_req *r = cookie_req(cookie);
    if (!r || r->kind != XM_REQ_SEND ||
        (r->flags & (F_RDV | F_HDR_SENT)) != (F_RDV | F_HDR_SENT) || r->done ||
        r->peer != dest)
        return -ENOENT;
    *addr = (uint64_t)(uintptr_t)(r->tmp ? r->tmp : r->buf);
    *len = r->total;
    return 0;
}

const char *xm_pkt_check(const struct xm_pkt_hdr *h, size_t paylen)
{
    int src = h->src;
    struct xm_req *r;
    if ((unsigned)src >= (unsigned)xm_proc_count())
        return "src: not a process this one knows";
    switch (h->type) {
    case XM_PKT_EAGER:
        if (paylen > h->len)
            return "EAGER: payload longer than len";
        if (h->len > eager_accept && src != xm_g.rank)
            return "EAGER: len above the eager limit (LOOM_MPI_EAGER_ACCEPT)";
        if (inflight[src])
            return "EAGER: a new message while fragments of the last one are due";
        return NULL;
    case XM_PKT_FRAG:
        r = inflight[src];
        if (!r)
            return "FRAG: no message in flight";
        if (paylen != h->len || paylen > r->total - r->pos)
            return "FRAG: len beyond the message";
        return NULL;
    case XM_PKT_RTS:
        if (paylen != sizeof(struct xm_rts))
            return "RTS: payload size";
        if (inflight[src])
            return "RTS: a new message while fragments of the last one are due";
        return NULL; /* its pid: xm_handle_pkt(), with the payload */
    case XM_PKT_CTS:
    case XM_PKT_FIN:
        if (paylen)
            return "CTS/FIN: payload";
        r = cookie_req(h->cookie);
        if (!r || r->kind != XM_REQ_SEND ||
            (r->flags & (F_RDV | F_HDR_SENT | F_RDV_GO)) != (F_RDV | F_HDR_SENT) ||
            r->done || r->peer != src)
            return "CTS/FIN: cookie names no rendezvous send to this rank";
        return NULL;
    case XM_PKT_RDATA:
        r = cookie_req(h->cookie);
        if (!r || r->kind != XM_REQ_RECV || !(r->flags & F_CTS) || r->done ||
            r->peer != src)
            return "RDATA: cookie names no receive waiting for this rank's data";
        if (paylen != h->len || paylen > r->total - r->pos)
            return "RDATA: len beyond the message";
        return NULL;
    case XM_PKT_CANCEL:
        if (paylen)
            return "CANCEL: payload";
        return NULL; /* its cookie is only compared with the unexpected messages' */
    case XM_PKT_CANCEL_ACK:
        if (paylen || h->len > 1)
            return "CANCEL_ACK: payload or len";
        r = cookie_req(h->cookie);
        if (!r || r->kind != XM_REQ_SEND || !(r->flags & F_CANCELING) || r->peer != src)
            return "CANCEL_ACK: cookie names no send of ours being cancelled at this rank";
        return NULL;
    case XM_PKT_SSEND_ACK:
        if (paylen)
            return "SSEND_ACK: payload";
        r = cookie_req(h->cookie);
        if (!r || r->kind != XM_REQ_SEND || r->peer != src || !(r->flags & XM_PKT_F_SYNC))
            return "SSEND_ACK: cookie names no synchronous send to this rank";
        return NULL;
    default:
        return "type: unknown packet type";
    }
}

size_t xm_pkt_keep(const struct xm_pkt_hdr *h, size_t paylen)
{
    struct xm_req *r;
    if (h->type != XM_PKT_RDATA || !(r = cookie_req(h->cookie)))
        return paylen;
    size_t room = r->bytes > r->pos ? r->bytes - r->pos : 0;
    return paylen < room ? paylen : room;
}

static void proto_fail(int src, const char *what)
{
    xm_die("protocol error in a packet from rank %d: %s", src, what);
}

void xm_handle_pkt(const struct xm_pkt_hdr *h, const void *payload, size_t paylen)
{
    const char *bad = xm_pkt_check(h, paylen);
    if (bad)
        proto_fail(h->src, bad);
    xm_handle_pkt_checked(h, payload, paylen);
}

static void cancel_unexp(int src, const struct xm_pkt_hdr *h);
static void cancel_answer(struct xm_req *r, int dropped);

/* An EAGER or RTS from a process of another job (src >= world size): 0 = match it,
 * 1 = no communicator has its context yet (it waits unexpected, F_XUNSURE), -1 =
 * dropped here (its sender is in no communicator of that context: never matched). */
static int xsec_arrival(const struct xm_pkt_hdr *h, size_t paylen)
{
    int v = xm_xsec_verdict(h->ctx, h->src);
    if (v == XM_XSEC_OK)
        return 0;
    if (v == XM_XSEC_UNKNOWN)
        return 1;
    xm_xsec_warn(h->src, h->ctx, h->tag);
    if (h->type == XM_PKT_EAGER && paylen < h->len) { /* swallow the FRAGs to come */
        struct xm_req *s = xm_req_new(XM_REQ_UNEXP);
        if (!s || !(s->tmp = malloc(h->len)))
            xm_die("out of memory dropping a %llu-byte message",
                   (unsigned long long)h->len);
        s->peer = h->src;
        s->total = h->len;
        s->pos = paylen;
        s->flags = F_XDROP;
        inflight[h->src] = s;
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
        xm_xsec_warn(u->peer, u->ctx, u->tag);
        list_del(&unexp, u);
        xm_req_free(u);
    }
    return 0;
}

void xm_handle_pkt_checked(const struct xm_pkt_hdr *h, const void *payload, size_t paylen)
{
    int src = h->src;
    struct xm_req *r;
    int unsure = 0;
    if (__builtin_expect(src >= xm_g.size, 0) &&
        (h->type == XM_PKT_EAGER || h->type == XM_PKT_RTS) &&
        (unsure = xsec_arrival(h, paylen)) < 0)
        return;
    switch (h->type) {
    case XM_PKT_EAGER:
        for (r = unsure ? NULL : posted.head; r; r = r->next)
            if (match(r, src, h->tag, h->ctx))
                break;
        if (r) {
            list_del(&posted, r);
            r->peer = src;
            r->tag = h->tag;
            r->total = h->len;
            r->pos = 0;
            if (h->flags & XM_PKT_F_SYNC)
                send_ctrl(src, XM_PKT_SSEND_ACK, h->cookie, 0);
        } else {
            r = xm_req_new(XM_REQ_UNEXP);
            if (!r || !(r->tmp = malloc(h->len ? h->len : 1)))
                xm_die("out of memory buffering an unexpected %llu-byte message",
                       (unsigned long long)h->len);
            r->peer = src;
            r->tag = h->tag;
            r->ctx = h->ctx;
            r->total = h->len;
            r->flags = h->flags | (unsure ? F_XUNSURE : 0);
            r->cookie_ack = h->cookie;
            list_add(&unexp, r);
        }
        deliver(r, payload, paylen);
        if (r->pos >= r->total)
            msg_complete(r);
        else
            inflight[src] = r;
        break;
    case XM_PKT_FRAG:
        r = inflight[src];
        deliver(r, payload, paylen);
        if (r->pos >= r->total) {
            inflight[src] = NULL;
            if (__builtin_expect(r->flags & F_XDROP, 0))
                xm_req_free(r); /* refused by xsec_arrival(), now all swallowed */
            else
                msg_complete(r);
        }
        break;
    case XM_PKT_RTS: {
        struct xm_rts rts;
        memcpy(&rts, payload, sizeof(rts));
        /* a rank CMA may read from names its own process (its KVS card says which) */
        if (cma_mode != 0 && src != xm_g.rank && !(xm_g.net && route(src) == xm_g.net)) {
            int pid = xm_peer_pid(src); /* unknown: rdv_start() takes the copy path */
            if (pid > 0 && rts.pid != (uint64_t)pid)
                proto_fail(src, "RTS: pid is not the one the rank's KVS card names");
        }
        for (r = unsure ? NULL : posted.head; r; r = r->next)
            if (match(r, src, h->tag, h->ctx))
                break;
        if (r) {
            list_del(&posted, r);
            rdv_start(r, src, h->tag, h->len, h->cookie, rts.pid, rts.addr);
            break;
        }
        r = xm_req_new(XM_REQ_UNEXP);
        if (!r)
            xm_die("out of memory queueing an unexpected rendezvous");
        r->peer = src;
        r->tag = h->tag;
        r->ctx = h->ctx;
        r->total = h->len;
        r->flags = h->flags | F_RDV | (unsure ? F_XUNSURE : 0);
        r->cookie_ack = h->cookie;
        r->rdv_pid = rts.pid;
        r->rdv_addr = rts.addr;
        r->done = 1; /* the envelope is all there is to hold */
        list_add(&unexp, r);
        break;
    }
    case XM_PKT_CTS:
        r = cookie_req(h->cookie);
        lmt_done(r);
        r->flags |= F_RDV_GO;
        r->cookie_ack = h->len;
        r->pos = 0;
        if (pending[r->peer] == 0 && push(r) == 1)
            break;
        pending[r->peer]++;
        list_add(&sendq, r);
        break;
    case XM_PKT_FIN:
        r = cookie_req(h->cookie);
        lmt_done(r);
        r->pos = r->total;
        complete(r);
        break;
    case XM_PKT_RDATA:
        r = cookie_req(h->cookie);
        deliver(r, payload, paylen);
        if (r->pos >= r->total)
            finish_recv(r);
        break;
    case XM_PKT_CANCEL:
        cancel_unexp(src, h);
        break;
    case XM_PKT_CANCEL_ACK:
        cancel_answer(cookie_req(h->cookie), h->len == 1);
        break;
    case XM_PKT_SSEND_ACK:
        r = cookie_req(h->cookie);
        r->flags |= F_ACKED;
        if ((r->flags & F_HDR_SENT) && r->pos >= r->total && !(r->flags & F_ZC) &&
            !r->done)
            complete(r);
        break;
    }
}

int xm_irecv(void *buf, int count, MPI_Datatype dtype, int src, int tag, uint32_t ctx,
             struct xm_comm *comm, struct xm_req **rp)
{
    struct xm_dtype *dt = xm_dt_get(dtype);
    struct xm_req *r = xm_req_new(XM_REQ_RECV);
    if (!r)
        return -ENOMEM;
    r->peer = src;
    r->tag = tag;
    r->ctx = ctx;
    r->comm = comm;
    if (comm)
        comm->refs++; /* MPI_Comm_free may come first: xm_req_free() lets it go */
    r->buf = buf;
    r->count = count;
    r->dt = dtype;
    xm_dt_ref(dt); /* released by complete() */
    r->bytes = dt->size * (size_t)count;
    *rp = r;
    for (struct xm_req *u = unexp.head, *next; u; u = next) {
        next = u->next;
        if (!match(r, u->peer, u->tag, u->ctx))
            continue;
        if (__builtin_expect(u->flags & F_XUNSURE, 0) && !xsec_admit(u))
            continue;
        list_del(&unexp, u);
        if (u->done) {
            take_unexp(u, r);
        } else {
            u->match = r; /* finishes in msg_complete() */
            r->peer = u->peer;
            r->tag = u->tag;
        }
        return 0;
    }
    list_add(&posted, r);
    return 0;
}

int xm_cancel_recv(struct xm_req *r)
{
    for (struct xm_req *p = posted.head; p; p = p->next)
        if (p == r) {
            list_del(&posted, r);
            r->cancelled = 1;
            xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
            r->status.xm_count_hi_cncl |= 1;
            complete(r);
            return 1;
        }
    return 0;
}

static void mark_cancelled(struct xm_req *r)
{
    r->cancelled = 1;
    r->status.xm_count_hi_cncl |= 1;
}

int xm_cancel_send(struct xm_req *r)
{
    if (r->kind != XM_REQ_SEND || r->cancelled || (r->flags & F_CANCELING) ||
        r->peer < 0 || r->peer >= xm_proc_count() || lost[r->peer])
        return 0;
    if (!(r->flags & F_HDR_SENT)) {
        /* nothing left this process: it waits on the send queue */
        if (on_list(&sendq, r)) {
            list_del(&sendq, r);
            pending[r->peer]--;
        }
        mark_cancelled(r);
        if (!r->done)
            complete(r);
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
    send_ctrl_hdr(r->peer, &h);
    return 1;
}

/* Receiver: sender src withdraws the message it sent with this cookie and envelope.
 * Its newest complete unexpected message with them is that one (a handle may have
 * named an older message too, but if the older one were still unmatched the newer
 * could not have been matched: same envelope, per-source order). */
static void cancel_unexp(int src, const struct xm_pkt_hdr *h)
{
    struct xm_req *u;
    for (u = unexp.tail; u; u = u->prev)
        if (u->peer == src && u->cookie_ack == h->cookie && u->tag == h->tag &&
            u->ctx == h->ctx)
            break;
    int ok = u && u->done;
    if (ok) {
        list_del(&unexp, u);
        xm_req_free(u);
    }
    send_ctrl(src, XM_PKT_CANCEL_ACK, h->cookie, (uint64_t)ok);
}

/* Sender: the answer to our CANCEL. */
static void cancel_answer(struct xm_req *r, int dropped)
{
    r->flags &= ~F_CANCELING;
    if (dropped) {
        mark_cancelled(r);
        lmt_done(r); /* no FIN or CTS will come */
    }
    if (r->flags & F_DEFERRED) {
        r->flags &= ~F_DEFERRED;
        xm_req_complete(r); /* the datatype went with the first completion */
    } else if (dropped) {
        complete(r);
    }
    /* else: matched; it completes the usual way */
}

int xm_iprobe(int src, int tag, uint32_t ctx, MPI_Status *st)
{
    struct xm_req probe = {.peer = src, .tag = tag, .ctx = ctx};
    for (struct xm_req *u = unexp.head, *next; u; u = next) {
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
    for (struct xm_req *u = unexp.head, *next; u; u = next) {
        next = u->next;
        if (match(&probe, u->peer, u->tag, u->ctx) &&
            (!(u->flags & F_XUNSURE) || xsec_admit(u))) {
            list_del(&unexp, u);
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
    struct xm_dtype *dt = xm_dt_get(dtype);
    struct xm_req *r = xm_req_new(XM_REQ_RECV);
    if (!r)
        return -ENOMEM;
    r->ctx = u->ctx;
    r->comm = comm;
    if (comm)
        comm->refs++; /* MPI_Comm_free may come first: xm_req_free() lets it go */
    r->buf = buf;
    r->count = count;
    r->dt = dtype;
    xm_dt_ref(dt); /* released by complete() */
    r->bytes = dt->size * (size_t)count;
    r->peer = u->peer;
    r->tag = u->tag;
    *rp = r;
    if (u->done)
        take_unexp(u, r);
    else
        u->match = r; /* fragments still arriving: msg_complete() finishes it */
    return 0;
}

/* ---- control packets --------------------------------------------------------- */

static int try_ctrl(int dest, const struct xm_pkt_hdr *src_h)
{
    if (dest == xm_g.rank) {
        xm_handle_pkt(src_h, NULL, 0);
        return 1;
    }
    struct xm_transport *t = route(dest);
    void *pay;
    size_t cap;
    struct xm_pkt_hdr *h = t ? get_pkt(t, dest, 0, &pay, &cap) : NULL;
    if (!h)
        return 0;
    *h = *src_h;
    t->post(t, dest, h, 0);
    return 1;
}

static void send_ctrl_hdr(int dest, const struct xm_pkt_hdr *hp);

static void send_ctrl(int dest, int type, uint64_t cookie, uint64_t len)
{
    struct xm_pkt_hdr h = {
        .type = (uint8_t)type, .src = xm_g.rank, .cookie = cookie, .len = len};
    send_ctrl_hdr(dest, &h);
}

static void send_ctrl_hdr(int dest, const struct xm_pkt_hdr *hp)
{
    struct xm_pkt_hdr h = *hp;
    if (!ctrlq && try_ctrl(dest, &h))
        return;
    struct ctrl *c = malloc(sizeof(*c));
    if (!c)
        xm_die("out of memory queueing a control packet");
    c->next = NULL;
    c->dest = dest;
    c->h = h;
    *ctrlq_tail = c;
    ctrlq_tail = &c->next;
}

static int push_ctrl(void)
{
    int n = 0;
    while (ctrlq && try_ctrl(ctrlq->dest, &ctrlq->h)) {
        struct ctrl *c = ctrlq;
        ctrlq = c->next;
        if (!ctrlq)
            ctrlq_tail = &ctrlq;
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
        complete(r);
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
        for (r = posted.head; r; r = r->next)
            if (match(r, h->src, h->tag, h->ctx))
                break;
        if (!r || r->bytes < n || !direct_ok(xm_dt_get(r->dt)))
            return NULL;
        list_del(&posted, r);
        r->peer = h->src;
        r->tag = h->tag;
        r->total = h->len;
        r->pos = 0;
        if (h->flags & XM_PKT_F_SYNC)
            send_ctrl(h->src, XM_PKT_SSEND_ACK, h->cookie, 0);
        inflight[h->src] = r;
        return r->buf;
    }
    if (h->type != XM_PKT_RDATA)
        return NULL;
    r = cookie_req(h->cookie); /* checked: our receive, waiting for h->src's data */
    if (r->pos + n > r->bytes || !direct_ok(xm_dt_get(r->dt)))
        return NULL;
    return (char *)r->buf + r->pos;
}

void xm_rdata_done(const struct xm_pkt_hdr *h, size_t n)
{
    struct xm_req *r;
    if (h->type == XM_PKT_EAGER) {
        r = inflight[h->src];
        inflight[h->src] = NULL;
    } else {
        r = cookie_req(h->cookie);
    }
    if (!r || r->kind != XM_REQ_RECV)
        xm_die("internal error: data from rank %d for no receive", h->src);
    r->pos += n;
    if (r->pos >= r->total)
        finish_recv(r);
}

static void fail_req(struct xm_req *r, void *arg)
{
    int peer = *(const int *)arg;
    if (r->done || r->peer != peer)
        return;
    if (r->kind == XM_REQ_SEND) {
        lmt_done(r);
        if (r->flags & F_CANCELING) { /* no answer will come: not cancelled */
            r->flags &= ~F_CANCELING;
            if (r->flags & F_DEFERRED) {
                r->flags &= ~F_DEFERRED;
                xm_req_complete(r);
                return;
            }
        }
        if (on_list(&sendq, r)) {
            list_del(&sendq, r);
            pending[peer]--;
        }
    } else if (r->kind == XM_REQ_RECV) {
        if (on_list(&posted, r))
            list_del(&posted, r);
        xm_status_set(&r->status, peer, r->tag, MPI_ERR_OTHER, 0);
    } else {
        return;
    }
    r->status.MPI_ERROR = MPI_ERR_OTHER;
    complete(r);
}

void xm_peer_lost(int peer, const char *why)
{
    if (!xm_g.world || xm_g.world->errh == MPI_ERRORS_ARE_FATAL)
        xm_die("connection to rank %d lost (%s)", peer, why);
    if (getenv("LOOM_MPI_DEBUG"))
        fprintf(stderr, "loom-mpi: rank %d: connection to rank %d lost (%s)\n", xm_g.rank,
                peer, why);
    lost[peer] = 1;
    struct xm_req *u = inflight[peer];
    inflight[peer] = NULL;
    if (u && u->kind == XM_REQ_UNEXP) {
        if (!u->match && on_list(&unexp, u))
            list_del(&unexp, u);
        /* a matched receive (u->match) fails in fail_req() below */
        xm_req_free(u);
    }
    xm_req_foreach(fail_req, &peer);
}

/* ---- progress and waiting ----------------------------------------------------- */

int (*xm_progress_hook)(void);
int (*xm_rma_progress_hook)(void); /* set by the first window (mpi/rma/rma.c) */
unsigned long xm_rma_served;

int xm_progress(void)
{
    static int in_hook; /* the hook may post p2p operations: never re-enter it */
    int n = 0;
    if (xm_g.shm)
        n += xm_g.shm->poll(xm_g.shm, 64);
    if (xm_g.net)
        n += xm_g.net->poll(xm_g.net, 64);
    if (ctrlq)
        n += push_ctrl();
    if (sendq.head)
        n += push_sends();
    for (struct xm_req *r = lmtq.head; r; r = r->lmt_next)
        n += xm_lmt_help(r->peer, (uint32_t)(unsigned)r->handle);
    if (xm_progress_hook && !in_hook) {
        in_hook = 1;
        n += xm_progress_hook();
        in_hook = 0;
    }
    /* one-sided communication: targets service window requests here */
    {
        static int in_rma;
        if (xm_rma_progress_hook && !in_rma) {
            in_rma = 1;
            int k = xm_rma_progress_hook();
            in_rma = 0;
            n += k;
            xm_rma_served += (unsigned long)k;
        }
    }
    if (__builtin_expect(xm_mt.on, 0) && n)
        xm_mt.dirty = 1; /* threads: another thread's request may be done (core/mt.h) */
    return n;
}

/* The spin budget adapts to who wants our CPU.  A sched_yield() that takes more than a
 * few microseconds ran another task on this CPU: the CPU is shared (more ranks than
 * free cores, or a noisy neighbour), the peer we wait for may be the one that needs it,
 * so spinning only delays it: halve the budget (down to 16).  A yield that returns at
 * once means nobody else wants the CPU, and a wait that ended while spinning means
 * spinning paid: double it back towards LOOM_MPI_SPIN.  This lives in xm_idle so every
 * waiter (p2p waits, collective schedules, probes) shares it. */
static int last_spin_step = -1;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void spin_grow(void)
{
    if (spin_cur < spin_max)
        spin_cur = spin_cur * 2 < spin_max ? spin_cur * 2 : spin_max;
}

/* With a rank per core (not oversubscribed) a wait keeps spinning for up to
 * LOOM_MPI_SPIN_US (100 ms) before it yields or sleeps: under load from other jobs a
 * sched_yield() hands the CPU to them and a futex sleep waits for the scheduler, and a
 * 2-rank Allreduce went from ~1 us to 10-400 us that way (bench/results/mpi.md). */
static double long_spin_us = -1, long_t0;

/* The last stage of every wait: sleep until a packet (or a thread of ours) wakes us. */
static void idle_sleep(void)
{
    if (__builtin_expect(xm_mt.on, 0)) {
        /* threads: one thread sleeps in the transport, the others on its kick */
        if (!xm_mt_sleep(xm_g.net || xm_g.shm)) {
            struct xm_transport *t = xm_g.net ? xm_g.net : xm_g.shm;
            t->block(t, 20);
            xm_mt_unblock();
        }
    } else if (xm_g.net) {
        /* the netmod's block also wakes for shm packets when shm is in use (tcp.c) */
        xm_g.net->block(xm_g.net, 20);
    } else if (xm_g.shm) {
        xm_g.shm->block(xm_g.shm, 20);
    } else {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void xm_idle(int *spins)
{
    if (__builtin_expect(xm_mt.on, 0)) {
        xm_mt_pass(); /* threads: wake whom our progress served, let waiters in */
        if (xm_mt.inside > 1) {
            /* Other threads of ours are in MPI: they need the CPU and the lock more
             * than we need a quick wake-up, whatever the node looks like.  A short
             * spin, a few yields (without the lock), then sleep. */
            int s = (*spins)++;
            if (s < 16) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else if (s < 16 + 4) {
                int held = xm_mt_drop();
                sched_yield();
                xm_mt_take(held);
            } else {
                idle_sleep();
            }
            return;
        }
    }
    int s = (*spins)++;
    if (s == 0 && last_spin_step >= 0 && last_spin_step < spin_cur)
        spin_grow(); /* the previous wait ended while spinning */
    if (s == 0)
        long_t0 = 0;
    if (long_spin_us < 0)
        long_spin_us = xm_env_int("LOOM_MPI_SPIN_US", xm_g.oversubscribed ? 0 : 100000);
    if (s == spin_cur && long_spin_us > 0) {
        double t = now_us();
        if (long_t0 == 0)
            long_t0 = t;
        if (t - long_t0 < long_spin_us) {
            (*spins)--; /* stay here until the time is up */
            s = 0;      /* spin below */
        }
    }
    last_spin_step = s;
    if (s < spin_cur) {
        __asm__ __volatile__("" ::: "memory");
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (s < spin_cur + yield_max) {
        double t = now_us();
        int held = xm_mt_drop(); /* threads: 0 below MPI_THREAD_MULTIPLE */
        sched_yield();
        xm_mt_take(held);
        if (now_us() - t > 3.0) {
            if (spin_cur > 16 && spin_adapt)
                spin_cur /= 2;
        } else {
            spin_grow();
        }
    } else {
        idle_sleep();
    }
}

/* A send request is complete once its bytes are copied, but over the netmod the copy
 * may still sit in the transport's queue: an eager packet posted while the connection
 * is being made, or while the socket is full.  Only our progress moves it, so a rank
 * that sent and then computed without calling MPI left its peer waiting for the whole
 * computation.  A Wait on a send (MPI_Send, MPI_Wait, the collectives) therefore keeps
 * progressing until the transport has handed that peer's packets to the kernel (or
 * lost the peer: then queued() is 0).  A standard-mode send may block that long. */
static void wait_handed_over(int peer)
{
    struct xm_transport *t = peer >= 0 && peer < xm_proc_count() ? route(peer) : NULL;
    if (!t || !t->queued)
        return;
    int spins = 0;
    while (t->queued(t, peer)) {
        if (xm_progress() > 0)
            spins = 0;
        else
            xm_idle(&spins);
    }
}

void xm_wait(struct xm_req *r)
{
    int spins = 0;
    while (!r->done) {
        if (r->kind == XM_REQ_COLL && r->coll_step) {
            int rc = r->coll_step(r);
            if (rc != 0) {
                if (rc < 0)
                    r->status.MPI_ERROR = MPI_ERR_OTHER;
                xm_req_complete(r);
                break;
            }
        }
        if (xm_progress() > 0)
            spins = 0;
        else if (!r->done) {
            xm_idle(&spins);
        }
    }
    if (r->kind == XM_REQ_SEND)
        wait_handed_over(r->peer);
}

int xm_wait_any(int n, struct xm_req **rs)
{
    int spins = 0, live = 0;
    for (int i = 0; i < n; i++)
        live += rs[i] != NULL;
    if (!live)
        return -1;
    for (;;) {
        for (int i = 0; i < n; i++)
            if (rs[i] && rs[i]->done)
                return i;
        if (xm_progress() > 0)
            spins = 0;
        else
            xm_idle(&spins);
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
