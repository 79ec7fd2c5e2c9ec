/*
 * rma.c - one-sided communication engine: windows, the active-message
 *         service a target runs inside progress, origin-side operations and every
 *         synchronization (fence, lock/unlock/flush, PSCW).
 *
 * Owns: the window table, struct xm_win's life, the request/reply protocol of
 * rma_msg.h.  One piece (about 1800 lines) because origin and target halves of each
 * synchronization share the window's private state and are read together.
 * Design (mpi/DESIGN.md, "One-sided communication"):
 *   - Every window has a private communicator (own context id).  Requests go to the
 *     target as p2p messages of at most XM_RMA_AM_MAX bytes on tag 0; the target keeps
 *     XM_RMA_RING receives posted there and services completed ones in posting order
 *     from xm_progress() (xm_rma_progress), so one origin's requests are applied in the
 *     order it issued them (the p2p engine keeps per-source order): accumulates are
 *     ordered and each request is applied whole, which makes same-op accumulates
 *     element-wise atomic.  Replies (get data, fetched values, lock grants, flush
 *     acknowledgements) go to a receive the origin posted on a fresh tag (>= 1).
 *   - Completion: a FLUSH or UNLOCK request is answered after every earlier request of
 *     that origin was applied, so flush/unlock/fence wait for that answer only where
 *     something was sent since the last one.  Fence = flush every dirty target, then a
 *     barrier of the window's communicator.
 *   - Windows whose memory is in a node-shared mapping (Win_allocate_shared; Win_allocate
 *     when every rank is on this node) take every operation at the origin (shmwin.c):
 *     put/get as copies, the accumulate family under the target part's lock word, so
 *     they stay atomic against each other and need no progress of the target.
 *     Win_create windows of ranks the shm transport reaches take put/get by CMA
 *     (rma_cma); when all ranks are on this node their accumulate family goes by CMA
 *     too, under lock words in a small shared page (cma_acc, w->lkmap).  Ranks whose
 *     window lies in an MPI_Alloc_mem block (allocmem.c) are mapped at creation
 *     (map_direct) and then taken like node-shared parts (xm_win_part).
 *   - Every wait goes through xm_wait()/xm_idle() (the engine's idle policy); a dead
 *     peer ends the job there as for p2p.
 */
#define _GNU_SOURCE /* process_vm_readv/writev */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rma.h"
#include "../coll/coll.h"
#include "../core/comm.h"
#include "../core/p2p.h"
#include "../dt/dtype.h"

#define AM_MAX ((size_t)32768)          /* request message size (eager on every transport) */
#define HDR sizeof(struct xm_rma_hdr)
#define SEGSZ sizeof(struct xm_rma_seg)
#define MAXSEG ((AM_MAX - HDR) / SEGSZ)
#define REPLY_MAX ((uint64_t)16 << 20)   /* bytes one get request may ask for */
/* w->dirty[r]: 0 nothing unflushed at r; 1 requests sent whose completion needs a FLUSH
 * round trip; DIRTY_REPLY the last request to r expects a reply, which the target sends
 * after applying it and (FIFO) everything I sent it before: once pend_wait() has that
 * reply, r is flushed without another round trip (a fetch_and_op + flush costs one). */
#define DIRTY_REPLY 2

struct xm_rma_pend {   /* a reply we wait for */
    struct xm_req *r;
    void *tmp;          /* bytes to unpack into (buf, count, dt) at pos, or NULL */
    void *buf;
    int count;
    struct xm_dtype *dt;
    size_t pos, len;
    struct xm_rma_pend *next;
};
struct xm_rma_waiter { /* a lock request queued at the target */
    int src, excl, tag;
    struct xm_rma_waiter *next;
};
struct outmsg {        /* a message we sent and whose buffer we free on completion */
    struct xm_req *r;
    void *buf;
    struct outmsg *next;
};

/* deferred accumulates (acc_defer, below) */
#define ACCQ_MAX 256    /* accumulates */
#define ACCQ_DATA 8192  /* their operand bytes */
#define ACCQ_SPAN 65536 /* bytes between the lowest and highest byte touched */
#define ACCQ_ONE 256    /* the largest accumulate deferred */
struct accq_ent {
    uint64_t off;
    uint32_t len, dpos;
    MPI_Op op;
    MPI_Datatype basic;
};
struct xm_rma_accq {
    int trank, n;
    pid_t pid;
    size_t used;
    uint64_t lo, hi;
    struct accq_ent e[ACCQ_MAX];
    struct iovec liov[ACCQ_MAX], riov[ACCQ_MAX];
    long double data[ACCQ_DATA / sizeof(long double)];
    long double span[ACCQ_SPAN / sizeof(long double)];
};

static struct xm_win **wins;
static int nwins;
static struct xm_win *live;
static struct outmsg *outq;



/* ---- window table ---------------------------------------------------------------- */

struct xm_win *xm_win_get(MPI_Win h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_WIN || !(h & XM_H_DYN))
        return NULL;
    unsigned i = XM_H_INDEX(h);
    return (int)i < nwins ? wins[i] : NULL;
}

static int win_register(struct xm_win *w)
{
    int i;
    for (i = 0; i < nwins && wins[i]; i++)
        ;
    if (i == nwins) {
        struct xm_win **n = realloc(wins, (size_t)(nwins + 8) * sizeof(*n));
        if (!n)
            return -1;
        memset(n + nwins, 0, 8 * sizeof(*n));
        wins = n;
        nwins += 8;
    }
    wins[i] = w;
    w->handle = XM_H_MAKE(XM_K_WIN, 1, i);
    return 0;
}

static int wrank(const struct xm_win *w, int r)
{
    return xm_comm_world_rank(w->comm, r);
}

static int new_tag(struct xm_win *w)
{
    w->next_tag = w->next_tag % 0x3fffffffu + 1;
    return (int)w->next_tag;
}

static __attribute__((noreturn)) void protocol_error(int src, const char *what)
{
    xm_die("protocol error in an RMA message from rank %d: %s", src, what);
}

/* ---- sending --------------------------------------------------------------------- */

static void reap(int block)
{
    struct outmsg **pp = &outq;
    while (*pp) {
        struct outmsg *o = *pp;
        if (block && !o->r->done)
            xm_wait(o->r);
        if (o->r->done) {
            *pp = o->next;
            xm_req_free(o->r);
            free(o->buf);
            free(o);
        } else {
            pp = &o->next;
        }
    }
}

/* send len bytes of buf (owned: freed once sent when own) to world rank dest */
static int send_msg(struct xm_win *w, int dest, int tag, void *buf, size_t len, int own)
{
    struct outmsg *o = malloc(sizeof(*o));
    if (!o) {
        if (own)
            free(buf);
        return MPI_ERR_NO_MEM;
    }
    int rc = xm_isend(buf, (int)len, MPI_BYTE, dest, tag, w->comm->ctx, NULL, 0, &o->r);
    if (rc < 0) {
        if (own)
            free(buf);
        free(o);
        return MPI_ERR_NO_MEM;
    }
    if (o->r->done) { /* copied out already (eager): nothing to keep */
        xm_req_free(o->r);
        if (own)
            free(buf);
        free(o);
        return 0;
    }
    o->buf = own ? buf : NULL;
    o->next = outq;
    outq = o;
    return 0;
}

static int send_ctl(struct xm_win *w, int trank, int type, int flags, int tag)
{
    struct xm_rma_hdr *h = calloc(1, HDR);
    if (!h)
        return MPI_ERR_NO_MEM;
    h->magic = XM_RMA_MAGIC;
    h->type = (uint16_t)type;
    h->flags = (uint16_t)flags;
    h->reply_tag = tag;
    return send_msg(w, wrank(w, trank), 0, h, HDR, 1);
}

/* ---- target side: the service ---------------------------------------------------- */

static int ring_post(struct xm_win *w, int i)
{
    if (!w->ringbuf[i] && !(w->ringbuf[i] = malloc(AM_MAX)))
        return -ENOMEM;
    return xm_irecv(w->ringbuf[i], (int)AM_MAX, MPI_BYTE, MPI_ANY_SOURCE, 0, w->comm->ctx,
                    NULL, &w->ring[i]);
}

static void grant(struct xm_win *w)
{
    while (w->lkq) {
        struct xm_rma_waiter *q = w->lkq;
        if (w->lk_excl >= 0 || (q->excl && w->lk_shared > 0))
            return;
        if (q->excl)
            w->lk_excl = q->src;
        else
            w->lk_shared++;
        send_msg(w, q->src, q->tag, NULL, 0, 0);
        w->lkq = q->next;
        if (!w->lkq)
            w->lkq_tail = NULL;
        free(q);
    }
}

/* where segment i of m lands in my memory; checked against the window */
static char *seg_ptr(struct xm_win *w, const struct xm_rma_msg *m, int src)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        const char *e = xm_rma_check_range(m, (uint64_t)w->size);
        if (e)
            protocol_error(src, e);
        return w->base;
    }
    /* a segment may run over several attached regions that touch (the origin sees
     * one address range; MPICH's suite accesses two adjacent regions in one call):
     * every byte must lie in some region */
    for (uint32_t i = 0; i < m->h->nseg; i++) {
        uint64_t off = m->seg[i].off, len = m->seg[i].len;
        while (len) {
            int k;
            for (k = 0; k < w->nregs; k++)
                if (off >= w->regs[k].base && off - w->regs[k].base < w->regs[k].len)
                    break;
            if (k == w->nregs)
                protocol_error(src, "seg: not inside an attached region (MPI_ERR_RMA_RANGE)");
            uint64_t room = w->regs[k].len - (off - w->regs[k].base);
            uint64_t n = len < room ? len : room;
            off += n; /* no wrap: n bytes from off lie in a region of this process */
            len -= n;
        }
    }
    return NULL; /* offsets are addresses */
}

/* byte off of the window: from base, or the address itself (dynamic windows: NULL) */
static char *at(char *base, uint64_t off)
{
    return base ? base + off : (char *)(uintptr_t)off;
}

static void gather(const struct xm_rma_msg *m, char *base, char *out);
static void scatter(const struct xm_rma_msg *m, char *base, const char *in);

int xm_rma_pair_apply(MPI_Op op, MPI_Datatype basic, const void *in, void *inout, size_t n)
{
    size_t f, so, sc;
    if (!xm_rma_pair_layout(basic, &f, &so, &sc))
        return -1;
    size_t es = f + sc;
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (size_t k = 0; k < n; k++, a += es, b += es) {
        long double x[2], y[2]; /* one element in memory layout (at most 32 bytes) */
        memcpy(x, a, f);
        memcpy((char *)x + so, a + f, sc);
        memcpy(y, b, f);
        memcpy((char *)y + so, b + f, sc);
        if (xm_op_apply(op, x, y, 1, basic) < 0)
            return -1;
        memcpy(b, y, f);
        memcpy(b + f, (char *)y + so, sc);
    }
    return 0;
}

static void apply(const struct xm_rma_msg *m, char *base, const unsigned char *data, int src)
{
    int op = m->h->op;
    if (m->pair && m->h->type != XM_RMA_PUT && op != MPI_REPLACE && op != MPI_NO_OP) {
        /* a padded pair type: its elements straddle segments, combine in the stream */
        char *cur = malloc(m->total ? m->total : 1);
        if (!cur)
            xm_die("out of memory applying an RMA accumulate");
        gather(m, base, cur);
        if (xm_rma_pair_apply(op, m->h->basic, data, cur, m->total / m->esize) < 0)
            protocol_error(src, "op: not defined on the basic type");
        scatter(m, base, cur);
        free(cur);
        return;
    }
    for (uint32_t i = 0; i < m->h->nseg; i++) {
        char *p = at(base, m->seg[i].off);
        size_t len = m->seg[i].len;
        if (op == MPI_REPLACE || m->h->type == XM_RMA_PUT)
            memcpy(p, data, len);
        else if (op != MPI_NO_OP && len &&
                 xm_op_apply(op, data, p, (int)(len / m->esize), m->h->basic) < 0)
            protocol_error(src, "op: not defined on the basic type");
        data += len;
    }
}

static void gather(const struct xm_rma_msg *m, char *base, char *out)
{
    for (uint32_t i = 0; i < m->h->nseg; i++) {
        memcpy(out, at(base, m->seg[i].off), m->seg[i].len);
        out += m->seg[i].len;
    }
}

static void scatter(const struct xm_rma_msg *m, char *base, const char *in)
{
    for (uint32_t i = 0; i < m->h->nseg; i++) {
        memcpy(at(base, m->seg[i].off), in, m->seg[i].len);
        in += m->seg[i].len;
    }
}

static void service(struct xm_win *w, int src, const void *buf, size_t len)
{
    struct xm_rma_msg m;
    const char *e = xm_rma_decode(buf, len, &m);
    if (e)
        protocol_error(src, e);
    int srank = xm_comm_rank_of(w->comm, src);
    if (srank < 0)
        protocol_error(src, "source: not a rank of the window");
    const struct xm_rma_hdr *h = m.h;
    int tag = h->reply_tag;
    char *base, *tmp;
    switch (h->type) {
    case XM_RMA_PUT:
    case XM_RMA_ACC:
        base = seg_ptr(w, &m, src);
        if (h->type == XM_RMA_ACC && w->lkmap)
            xm_shmwin_lock(w, w->comm->rank); /* against origins' cma_acc */
        apply(&m, base, m.data, src);
        if (h->type == XM_RMA_ACC && w->lkmap)
            xm_shmwin_unlock(w, w->comm->rank);
        break;
    case XM_RMA_GET:
        if (m.total > REPLY_MAX)
            protocol_error(src, "seg: a get asks for more than 16 MiB");
        base = seg_ptr(w, &m, src);
        if (h->nseg == 1) { /* straight from the window */
            send_msg(w, src, tag, at(base, m.seg[0].off), m.seg[0].len, 0);
            break;
        }
        tmp = malloc(m.total ? m.total : 1);
        if (!tmp)
            xm_die("out of memory answering an RMA get");
        gather(&m, base, tmp);
        send_msg(w, src, tag, tmp, m.total, 1);
        break;
    case XM_RMA_GACC:
        base = seg_ptr(w, &m, src);
        tmp = malloc(m.total ? m.total : 1);
        if (!tmp)
            xm_die("out of memory answering an RMA get_accumulate");
        if (w->lkmap)
            xm_shmwin_lock(w, w->comm->rank);
        gather(&m, base, tmp);
        apply(&m, base, m.data, src);
        if (w->lkmap)
            xm_shmwin_unlock(w, w->comm->rank);
        send_msg(w, src, tag, tmp, m.total, 1);
        break;
    case XM_RMA_CAS: {
        base = seg_ptr(w, &m, src);
        char *p = at(base, m.seg[0].off);
        tmp = malloc(m.esize);
        if (!tmp)
            xm_die("out of memory answering an RMA compare_and_swap");
        if (w->lkmap)
            xm_shmwin_lock(w, w->comm->rank);
        memcpy(tmp, p, m.esize);
        if (memcmp(p, m.data + m.esize, m.esize) == 0)
            memcpy(p, m.data, m.esize);
        if (w->lkmap)
            xm_shmwin_unlock(w, w->comm->rank);
        send_msg(w, src, tag, tmp, m.esize, 1);
        break;
    }
    case XM_RMA_LOCK: {
        struct xm_rma_waiter *q = calloc(1, sizeof(*q));
        if (!q)
            xm_die("out of memory queueing an RMA lock");
        q->src = src;
        q->excl = h->flags & XM_RMA_F_EXCL;
        q->tag = tag;
        if (w->lkq_tail)
            w->lkq_tail->next = q;
        else
            w->lkq = q;
        w->lkq_tail = q;
        grant(w);
        break;
    }
    case XM_RMA_UNLOCK:
        if (w->lk_excl == src)
            w->lk_excl = -1;
        else if (w->lk_excl < 0 && w->lk_shared > 0)
            w->lk_shared--;
        else
            protocol_error(src, "unlock: the rank holds no lock here");
        send_msg(w, src, tag, NULL, 0, 0);
        grant(w);
        break;
    case XM_RMA_FLUSH:
        send_msg(w, src, tag, NULL, 0, 0);
        break;
    case XM_RMA_POST:
        w->post_from[srank]++;
        break;
    case XM_RMA_COMPLETE:
        w->complete_from[srank]++;
        break;
    }
}

static int service_win(struct xm_win *w)
{
    int n = 0;
    for (;;) {
        struct xm_req *r = w->ring[w->ring_head];
        if (!r || !r->done)
            return n;
        int src = r->status.MPI_SOURCE, err = r->status.MPI_ERROR;
        size_t len = xm_status_bytes(&r->status);
        int cancelled = r->cancelled;
        xm_req_free(r);
        w->ring[w->ring_head] = NULL;
        if (cancelled)
            return n;
        if (err != MPI_SUCCESS)
            protocol_error(src, "length: longer than a request may be");
        service(w, src, w->ringbuf[w->ring_head], len);
        if (ring_post(w, w->ring_head) < 0)
            xm_die("out of memory reposting an RMA receive");
        w->ring_head = (w->ring_head + 1) % XM_RMA_RING;
        n++;
    }
}

int xm_rma_progress(void)
{
    static unsigned long seen = ~0ul;
    int n = 0;
    if (outq)
        reap(0);
    /* a ring receive completes through xm_req_complete: nothing completed since the
     * last scan, nothing to serve (a program may keep a thousand windows) */
    unsigned long c = xm_req_completions;
    if (c == seen)
        return 0;
    seen = c;
    for (struct xm_win *w = live; w; w = w->next_live)
        n += service_win(w);
    return n;
}

/* ---- origin side ------------------------------------------------------------------ */

void xm_rma_segit_init(struct xm_rma_segit *it, uint64_t base, int count,
                       const struct xm_dtype *t)
{
    memset(it, 0, sizeof(*it));
    it->t = t;
    it->count = count;
    it->base = base;
    it->done = count == 0 || t->size == 0;
}

int xm_rma_segit_next(struct xm_rma_segit *it, uint64_t *off, uint64_t *len)
{
    const struct xm_dtype *t = it->t;
    if (it->done)
        return 0;
    if (t->contig && (MPI_Aint)t->size == t->extent) {
        *off = it->base + (uint64_t)t->true_lb;
        *len = (uint64_t)t->size * (uint64_t)it->count;
        it->done = 1;
        return 1;
    }
    const struct xm_dt_block *bk = &t->blocks[it->b];
    *off = it->base + (uint64_t)((MPI_Aint)it->k * t->extent + bk->disp +
                                 (MPI_Aint)it->j * bk->stride);
    *len = bk->len;
    if (++it->j == bk->count) {
        it->j = 0;
        if (++it->b == t->nblocks) {
            it->b = 0;
            if (++it->k == it->count)
                it->done = 1;
        }
    }
    return 1;
}

static int stream_contig(const struct xm_dtype *t)
{
    return t->contig && (MPI_Aint)t->size == t->extent;
}

/* Target byte offset of (tdisp, tcount, tdt) at trank, checked against its window
 * where the origin knows the size (MPI_ERR_RMA_RANGE). */
static int target_base(struct xm_win *w, int trank, MPI_Aint tdisp, int tcount,
                       const struct xm_dtype *t, uint64_t *base)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        *base = (uint64_t)tdisp;
        return 0;
    }
    __int128 b = (__int128)tdisp * w->units[trank];
    if (tcount == 0 || t->size == 0) {
        *base = b < 0 ? 0 : (uint64_t)b;
        return 0;
    }
    __int128 span = (__int128)(tcount - 1) * t->extent;
    __int128 lo = b + t->true_lb + (span < 0 ? span : 0);
    __int128 hi = b + t->true_lb + t->true_extent + (span > 0 ? span : 0);
    if (lo < 0 || hi > w->sizes[trank])
        return MPI_ERR_RMA_RANGE;
    *base = (uint64_t)b;
    return 0;
}

struct opdesc {
    int type, op;
    MPI_Datatype basic;
    size_t esize;            /* stream bytes of one element (packed, for pair types) */
    int pair;                /* a padded pair type: elements straddle segments */
    const void *obuf;        /* data carried: packed stream of (obuf, ocount, odt) */
    int ocount;
    struct xm_dtype *odt;
    void *rbuf;              /* reply: packed stream into (rbuf, rcount, rdt) */
    int rcount;
    struct xm_dtype *rdt;
};

static int post_reply(struct xm_win *w, int trank, int tag, const struct opdesc *d,
                      size_t pos, size_t len)
{
    struct xm_rma_pend *p = calloc(1, sizeof(*p));
    if (!p)
        return MPI_ERR_NO_MEM;
    void *dst;
    if (stream_contig(d->rdt)) {
        dst = (char *)d->rbuf + d->rdt->true_lb + pos;
    } else {
        if (!(p->tmp = malloc(len ? len : 1))) {
            free(p);
            return MPI_ERR_NO_MEM;
        }
        dst = p->tmp;
        p->buf = d->rbuf;
        p->count = d->rcount;
        p->dt = d->rdt;
        xm_dt_ref(d->rdt);
        p->pos = pos;
        p->len = len;
    }
    if (xm_irecv(dst, (int)len, MPI_BYTE, wrank(w, trank), tag, w->comm->ctx, NULL, &p->r) <
        0) {
        free(p->tmp);
        free(p);
        return MPI_ERR_NO_MEM;
    }
    p->next = w->pend;
    w->pend = p;
    return 0;
}

static void acc_drain(struct xm_win *w);

static void pend_wait(struct xm_win *w)
{
    if (w->accq && w->accq->n)
        acc_drain(w);
    while (w->pend) {
        struct xm_rma_pend *p = w->pend;
        xm_wait(p->r);
        if (p->tmp) {
            xm_dt_unpack(p->buf, p->count, p->dt, p->pos, p->tmp, p->len);
            xm_dt_unref(p->dt);
            free(p->tmp);
        }
        xm_req_free(p->r);
        w->pend = p->next;
        free(p);
    }
}

/* Cut the target's segments into requests, pack the carried data, post the replies. */
static int issue(struct xm_win *w, int trank, uint64_t tbase, int tcount,
                 const struct xm_dtype *tdt, const struct opdesc *d)
{
    static struct xm_rma_seg segs[MAXSEG];
    int carry = d->type != XM_RMA_GET;
    int reply = d->type == XM_RMA_GET || d->type == XM_RMA_GACC;
    size_t es = d->esize ? d->esize : 1;
    /* a padded pair type's element spans two segments (its members): cut the stream at
     * element boundaries, with room for two segments per element in every request */
    uint64_t cap = d->pair ? (AM_MAX - HDR) / (es + 2 * SEGSZ) * es : UINT64_MAX;
    struct xm_rma_segit it;
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    uint64_t cur_off = 0, cur_len = 0;
    size_t pos = 0;
    int more = 1;
    while (more) {
        size_t nseg = 0, sum = 0;
        for (;;) {
            if (cur_len == 0) {
                if (!xm_rma_segit_next(&it, &cur_off, &cur_len)) {
                    more = 0;
                    break;
                }
                continue;
            }
            int merge = nseg > 0 && segs[nseg - 1].off + segs[nseg - 1].len == cur_off;
            if (!merge && nseg == MAXSEG)
                break;
            size_t used = (nseg + !merge) * SEGSZ + sum;
            uint64_t room = carry ? (used < AM_MAX - HDR ? AM_MAX - HDR - used : 0)
                                  : REPLY_MAX - sum;
            if (room > cap - sum)
                room = cap - sum;
            uint64_t take = cur_len < room ? cur_len : room;
            if (!d->pair)
                take -= take % es;
            if (take == 0)
                break;
            if (merge) {
                segs[nseg - 1].len += take;
            } else {
                segs[nseg].off = cur_off;
                segs[nseg++].len = take;
            }
            cur_off += take;
            cur_len -= take;
            sum += take;
        }
        if (nseg == 0)
            break;
        size_t mlen = HDR + nseg * SEGSZ + (carry ? sum : 0);
        char *msg = malloc(mlen);
        if (!msg)
            return MPI_ERR_NO_MEM;
        struct xm_rma_hdr *h = (struct xm_rma_hdr *)msg;
        memset(h, 0, HDR);
        h->magic = XM_RMA_MAGIC;
        h->type = (uint16_t)d->type;
        h->op = d->op;
        h->basic = d->basic;
        h->nseg = (uint32_t)nseg;
        h->datalen = carry ? sum : 0;
        memcpy(msg + HDR, segs, nseg * SEGSZ);
        if (carry && sum)
            xm_dt_pack(d->obuf, d->ocount, d->odt, pos, msg + HDR + nseg * SEGSZ, sum);
        if (reply) {
            h->reply_tag = new_tag(w);
            int rc = post_reply(w, trank, h->reply_tag, d, pos, sum);
            if (rc) {
                free(msg);
                return rc;
            }
        }
        int rc = send_msg(w, wrank(w, trank), 0, msg, mlen, 1);
        if (rc)
            return rc;
        w->dirty[trank] = reply ? DIRTY_REPLY : 1;
        pos += sum;
    }
    return 0;
}

/* Can trank's Win_create window be reached by CMA (or is it mine: *self)?  The pid
 * comes from the KVS (xm_peer_pid); the first try per rank reads one byte. */
static int cma_peer(struct xm_win *w, int trank, pid_t *pid, int *self)
{
    if (!w->cma_ok || w->cma_ok[trank] == 2 || w->sizes[trank] == 0)
        return 0;
    int wr = wrank(w, trank);
    *self = wr == xm_g.rank;
    /* as the p2p engine: CMA only towards ranks the shm transport reaches */
    if (!*self && (!xm_g.shm || !xm_g.local_index || xm_g.local_index[wr] < 0))
        return 0;
    *pid = *self ? 0 : xm_peer_pid(wr);
    if (!*self && *pid <= 0) {
        w->cma_ok[trank] = 2;
        return 0;
    }
    if (!*self && w->cma_ok[trank] == 0) {
        char c;
        struct iovec l = {&c, 1}, r = {(void *)(uintptr_t)w->raddr[trank], 1};
        w->cma_ok[trank] = process_vm_readv(*pid, &l, 1, &r, 1, 0) == 1 ? 1 : 2;
        if (w->cma_ok[trank] == 2)
            return 0;
    }
    return 1;
}

/* n bytes between local and the target's remote (a CMA peer, or my own window) */
static int cma_xfer(pid_t pid, int self, char *remote, char *local, size_t n, int put)
{
    if (self) {
        if (put)
            memcpy(remote, local, n);
        else
            memcpy(local, remote, n);
        return 0;
    }
    while (n) {
        struct iovec l = {local, n}, r = {remote, n};
        ssize_t k = put ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                        : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (k <= 0)
            return -1;
        local += k;
        remote += k;
        n -= (size_t)k;
    }
    return 0;
}

/* (issue 21) The accumulate family at the origin on a Win_create window of this node
 * (w->lkmap): read the target's bytes by CMA, combine, write them back, all under the
 * target's lock word, which the target's own service of accumulate requests takes too,
 * so accumulates stay element-wise atomic against each other whichever way they went,
 * and the target need not be inside MPI.  rbuf set: fetch (the old bytes).  1 done,
 * 0 not possible (requests), or an error class. */
#define CMA_ACC_CHUNK 65536

/* cma_acc of a padded pair type (MINLOC/MAXLOC): an element straddles the target's
 * segments, so the whole target stream is read, combined packed, and written back. */
static int cma_acc_pair(struct xm_win *w, const void *obuf, int ocount,
                        const struct xm_dtype *odt, void *rbuf, int rcount,
                        const struct xm_dtype *rdt, int trank, uint64_t tbase, int tcount,
                        const struct xm_dtype *tdt, MPI_Op op, pid_t pid, int self)
{
    size_t total = (size_t)tcount * tdt->size, pf, pso, psc;
    xm_rma_pair_layout(tdt->basic, &pf, &pso, &psc);
    char *cur = malloc(total), *in = malloc(total);
    if (!cur || !in) {
        free(cur);
        free(in);
        return MPI_ERR_NO_MEM;
    }
    xm_dt_pack(obuf, ocount, odt, 0, in, total);
    char *rbase = self ? (char *)w->base : (char *)(uintptr_t)w->raddr[trank];
    struct xm_rma_segit it;
    uint64_t off, len;
    size_t pos = 0;
    int rc = 0;
    xm_shmwin_lock(w, trank);
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    while (!rc && xm_rma_segit_next(&it, &off, &len)) {
        if (cma_xfer(pid, self, rbase + off, cur + pos, len, 0) < 0)
            rc = MPI_ERR_OTHER;
        pos += len;
    }
    if (!rc && rbuf)
        xm_dt_unpack(rbuf, rcount, rdt, 0, cur, total);
    if (!rc && xm_rma_pair_apply(op, tdt->basic, in, cur, total / (pf + psc)) < 0)
        rc = MPI_ERR_OP;
    pos = 0;
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    while (!rc && xm_rma_segit_next(&it, &off, &len)) {
        if (cma_xfer(pid, self, rbase + off, cur + pos, len, 1) < 0)
            rc = MPI_ERR_OTHER;
        pos += len;
    }
    xm_shmwin_unlock(w, trank);
    free(cur);
    free(in);
    return rc ? rc : 1;
}

static int cma_acc(struct xm_win *w, const void *obuf, int ocount, const struct xm_dtype *odt,
                   void *rbuf, int rcount, const struct xm_dtype *rdt, int trank,
                   uint64_t tbase, int tcount, const struct xm_dtype *tdt, MPI_Op op)
{
    pid_t pid;
    int self;
    size_t total = (size_t)tcount * tdt->size;
    if (total == 0)
        return 1; /* nothing moves (a zero-size type may have no basic type) */
    if (!w->lkmap || !cma_peer(w, trank, &pid, &self))
        return 0;
    size_t es = XM_DT_SIZE(tdt->basic), chunk;
    if (es == 0)
        return 0;
    chunk = CMA_ACC_CHUNK / es * es;
    int combine = op != MPI_REPLACE && op != MPI_NO_OP;
    size_t pf, pso, psc;
    if (combine && xm_rma_pair_layout(tdt->basic, &pf, &pso, &psc))
        return cma_acc_pair(w, obuf, ocount, odt, rbuf, rcount, rdt, trank, tbase, tcount,
                            tdt, op, pid, self);
    int ocontig = odt && odt->contig && (MPI_Aint)odt->size == odt->extent;
    long double small[2][32]; /* 512 bytes each, aligned for every basic type */
    char *tb = (char *)small[0], *ob = (char *)small[1];
    if (total > sizeof(small[0])) {
        size_t m = total < chunk ? total : chunk;
        tb = malloc(m);
        ob = ocontig ? NULL : malloc(m);
        if (!tb || (!ocontig && !ob)) {
            free(tb);
            free(ob);
            return MPI_ERR_NO_MEM;
        }
    }
    struct xm_rma_segit it;
    uint64_t off, len;
    size_t pos = 0;
    int rc = 0;
    char *rbase = self ? (char *)w->base : (char *)(uintptr_t)w->raddr[trank];
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    xm_shmwin_lock(w, trank);
    while (!rc && xm_rma_segit_next(&it, &off, &len)) {
        for (size_t done = 0; done < len && !rc; done += chunk) {
            size_t n = len - done < chunk ? len - done : chunk;
            char *remote = rbase + off + done;
            if ((rbuf || combine) && cma_xfer(pid, self, remote, tb, n, 0) < 0) {
                rc = MPI_ERR_OTHER;
                break;
            }
            if (rbuf)
                xm_dt_unpack(rbuf, rcount, rdt, pos + done, tb, n);
            if (op == MPI_NO_OP)
                continue;
            const char *src;
            if (ocontig) {
                src = (const char *)obuf + odt->true_lb + pos + done;
            } else {
                xm_dt_pack(obuf, ocount, odt, pos + done, ob, n);
                src = ob;
            }
            char *out = (char *)src;
            if (combine) {
                if (xm_op_apply(op, src, tb, (int)(n / es), tdt->basic) < 0) {
                    rc = MPI_ERR_OP;
                    break;
                }
                out = tb;
            }
            if (cma_xfer(pid, self, remote, out, n, 1) < 0)
                rc = MPI_ERR_OTHER;
        }
        pos += len;
    }
    xm_shmwin_unlock(w, trank);
    if (tb != (char *)small[0]) {
        free(tb);
        free(ob);
    }
    return rc ? rc : 1;
}

static int cma_cas(struct xm_win *w, const void *obuf, const void *cbuf, void *rbuf,
                   size_t es, int trank, uint64_t tbase)
{
    pid_t pid;
    int self;
    if (!w->lkmap || !cma_peer(w, trank, &pid, &self))
        return 0;
    char *remote = (self ? (char *)w->base : (char *)(uintptr_t)w->raddr[trank]) + tbase;
    long double old[2];
    int rc = 0;
    xm_shmwin_lock(w, trank);
    if (cma_xfer(pid, self, remote, (char *)old, es, 0) < 0)
        rc = MPI_ERR_OTHER;
    else if (memcmp(old, cbuf, es) == 0 && cma_xfer(pid, self, remote, (char *)obuf, es, 1) < 0)
        rc = MPI_ERR_OTHER;
    xm_shmwin_unlock(w, trank);
    if (!rc)
        memcpy(rbuf, old, es);
    return rc ? rc : 1;
}

/* Small accumulates (no result) by CMA are deferred to the next completion point
 * (pend_wait: flush, unlock, fence, complete, Win_free) or the next other operation on
 * the window, then applied in issue order under the target's lock word with one
 * process_vm_readv and one process_vm_writev of the distinct byte ranges they touch:
 * an accumulate completes only there (MPI-3.1 11.5), and two system calls per
 * accumulate were its whole cost.  One target at a time; element-wise atomic as before
 * (the lock word), ordered as issued, bytes between the ranges untouched (other
 * origins' puts there are not overwritten).  LOOM_MPI_RMA_ACC_DEFER=0: off. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void acc_drain(struct xm_win *w)
{
    struct xm_rma_accq *q = w->accq;
    int n = q->n, nr = 0, rc = 0;
    q->n = 0;
    q->used = 0;
    uint64_t raddr = w->raddr[q->trank];
    char *rbase = (char *)(uintptr_t)raddr, *span = (char *)q->span;
    /* span[0] is the target's byte at the 16-aligned address at or below the lowest
     * one touched: each element keeps its alignment in the copy */
    uint64_t abase = (raddr + q->lo) & ~(uint64_t)15;
    /* the distinct ranges: sort the entries' (start, end) pairs by start, merge */
    uint64_t ranges[2 * ACCQ_MAX];
    for (int i = 0; i < n; i++) {
        ranges[2 * i] = q->e[i].off;
        ranges[2 * i + 1] = q->e[i].off + q->e[i].len;
    }
    qsort(ranges, (size_t)n, 2 * sizeof(uint64_t), cmp_u64);
    uint64_t tmp[2 * ACCQ_MAX];
    for (int i = 0; i < n; i++) {
        if (nr && ranges[2 * i] <= tmp[2 * nr - 1]) {
            if (ranges[2 * i + 1] > tmp[2 * nr - 1])
                tmp[2 * nr - 1] = ranges[2 * i + 1];
        } else {
            tmp[2 * nr] = ranges[2 * i];
            tmp[2 * nr + 1] = ranges[2 * i + 1];
            nr++;
        }
    }
    size_t total = 0;
    for (int i = 0; i < nr; i++) {
        size_t len = (size_t)(tmp[2 * i + 1] - tmp[2 * i]);
        q->liov[i] = (struct iovec){span + (raddr + tmp[2 * i] - abase), len};
        q->riov[i] = (struct iovec){rbase + tmp[2 * i], len};
        total += len;
    }
    xm_shmwin_lock(w, q->trank);
    if (process_vm_readv(q->pid, q->liov, (unsigned long)nr, q->riov, (unsigned long)nr,
                         0) != (ssize_t)total)
        rc = MPI_ERR_OTHER; /* the target went away (ranges were checked at issue) */
    for (int i = 0; i < n && !rc; i++) {
        struct accq_ent *e = &q->e[i];
        const char *src = (const char *)q->data + e->dpos;
        char *dst = span + (raddr + e->off - abase);
        if (e->op == MPI_REPLACE)
            memcpy(dst, src, e->len);
        else
            xm_op_apply(e->op, src, dst, (int)(e->len / XM_DT_SIZE(e->basic)), e->basic);
    }
    if (!rc && process_vm_writev(q->pid, q->liov, (unsigned long)nr, q->riov,
                                 (unsigned long)nr, 0) != (ssize_t)total)
        rc = MPI_ERR_OTHER;
    xm_shmwin_unlock(w, q->trank);
    if (rc && !w->accrc)
        w->accrc = rc;
}

/* 1 deferred, 0 not (take another path) */
static int acc_defer(struct xm_win *w, const void *obuf, int ocount,
                     const struct xm_dtype *odt, int trank, uint64_t tbase, int tcount,
                     const struct xm_dtype *tdt, MPI_Op op)
{
    size_t total = (size_t)tcount * tdt->size, es = XM_DT_SIZE(tdt->basic), pf, pso, psc;
    if (!total || total > ACCQ_ONE || !es || !odt || op == MPI_NO_OP ||
        xm_rma_pair_layout(tdt->basic, &pf, &pso, &psc) ||
        (op != MPI_REPLACE && xm_op_apply(op, NULL, NULL, 0, tdt->basic) < 0))
        return 0;
    struct xm_rma_segit it;
    uint64_t off, len, off2, len2;
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    if (!xm_rma_segit_next(&it, &off, &len) || len != total ||
        xm_rma_segit_next(&it, &off2, &len2))
        return 0; /* not one contiguous range of the target */
    pid_t pid;
    int self;
    if (!cma_peer(w, trank, &pid, &self) || self)
        return 0;
    static int on = -1;
    if (on < 0)
        on = xm_env_int("LOOM_MPI_RMA_ACC_DEFER", 1) != 0;
    if (!on)
        return 0;
    if (!w->accq && !(w->accq = calloc(1, sizeof(*w->accq))))
        return 0;
    struct xm_rma_accq *q = w->accq;
    uint64_t lo = q->n && q->lo < off ? q->lo : off;
    uint64_t hi = q->n && q->hi > off + len ? q->hi : off + len;
    if (q->n && (q->trank != trank || q->n == ACCQ_MAX || q->used + total > ACCQ_DATA ||
                 hi - lo > ACCQ_SPAN - 16))
        acc_drain(w);
    if (!q->n) {
        q->trank = trank;
        q->pid = pid;
        lo = off;
        hi = off + len;
    }
    q->lo = lo;
    q->hi = hi;
    struct accq_ent *e = &q->e[q->n++];
    *e = (struct accq_ent){off, (uint32_t)len, (uint32_t)q->used, op, tdt->basic};
    xm_dt_pack(obuf, ocount, odt, 0, (char *)q->data + q->used, total);
    q->used += (total + 15) & ~(size_t)15; /* keep every operand aligned */
    return 1; /* completes at the next drain: nothing to ask the target */
}

/* Put/get by CMA into a Win_create window of another rank of this node (or a copy for
 * my own window), with the pid that rank put in the KVS (xm_peer_pid), as the p2p
 * engine's single copies do.  The bytes are range-checked against the window first
 * (target_base).  1 done, 0 not possible (then requests to the target), or an error
 * class.  A first failure towards a rank (ptrace rules, no pid) turns CMA off for it
 * before any byte moved: the first access to a rank reads one byte of its window. */
static int rma_cma(struct xm_win *w, int trank, uint64_t tbase, int tcount,
                   const struct xm_dtype *tdt, void *obuf, int ocount,
                   const struct xm_dtype *odt, int put)
{
    pid_t pid;
    int self;
    if (!cma_peer(w, trank, &pid, &self))
        return 0;
    int ocontig = odt->contig && (MPI_Aint)odt->size == odt->extent;
    char *tmp = NULL;
    struct xm_rma_segit it;
    uint64_t off, len;
    size_t pos = 0;
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    while (xm_rma_segit_next(&it, &off, &len)) {
        char *remote = (char *)(uintptr_t)w->raddr[trank] + off;
        for (uint64_t done = 0; done < len;) {
            size_t n = len - done;
            char *local;
            if (ocontig) {
                local = (char *)obuf + odt->true_lb + pos + done;
            } else {
                if (!tmp && !(tmp = malloc(65536)))
                    return MPI_ERR_NO_MEM;
                if (n > 65536)
                    n = 65536;
                local = tmp;
                if (put)
                    xm_dt_pack(obuf, ocount, odt, pos + done, tmp, n);
            }
            ssize_t k;
            if (self) {
                if (put)
                    memcpy(remote + done, local, n);
                else
                    memcpy(local, remote + done, n);
                k = (ssize_t)n;
            } else {
                struct iovec l = {local, n}, r = {remote + done, n};
                k = put ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                        : process_vm_readv(pid, &l, 1, &r, 1, 0);
            }
            if (k <= 0) {
                free(tmp);
                return MPI_ERR_OTHER; /* the target went away or unmapped its window */
            }
            if (!put && !ocontig)
                xm_dt_unpack(obuf, ocount, odt, pos + done, tmp, (size_t)k);
            done += (uint64_t)k;
        }
        pos += len;
    }
    free(tmp);
    return 1;
}

/* ---- (issue 21) fast paths on node-shared windows --------------------------------
 * The common case of passive-target loops: origin (and result) and target are count
 * elements of one predefined basic type, on a window in a node-shared mapping.  The
 * caller (api/rma.c) checked rank and epoch; anything else unusual (a range error, an
 * op the type does not take) returns 0 and the general path reports it. */
static char *fast_target(struct xm_win *w, int trank, MPI_Aint tdisp, int count,
                         MPI_Datatype dt, size_t *n)
{
    char *part = xm_win_part(w, trank);
    if (!part || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || count <= 0)
        return NULL;
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t || t->basic != dt || !t->size || !t->contig || (MPI_Aint)t->size != t->extent ||
        t->true_lb)
        return NULL;
    __int128 b = (__int128)tdisp * w->units[trank];
    size_t len = (size_t)count * t->size;
    if (b < 0 || b + (__int128)len > w->sizes[trank])
        return NULL;
    *n = len;
    return part + (size_t)b;
}

int xm_rma_copy_fast(struct xm_win *w, void *addr, int count, MPI_Datatype dt, int trank,
                     MPI_Aint tdisp, int put)
{
    size_t n;
    char *p = fast_target(w, trank, tdisp, count, dt, &n);
    if (!p)
        return 0;
    if (put)
        memcpy(p, addr, n);
    else
        memcpy(addr, p, n);
    return 1;
}

int xm_rma_acc_fast(struct xm_win *w, const void *oaddr, void *raddr, int count,
                    MPI_Datatype dt, int trank, MPI_Aint tdisp, MPI_Op op)
{
    size_t n;
    if (op < MPI_MAX || op > MPI_NO_OP || op == MPI_MINLOC || op == MPI_MAXLOC)
        return 0;
    int combine = op != MPI_REPLACE && op != MPI_NO_OP;
    if (combine && xm_op_apply(op, NULL, NULL, 0, dt) < 0)
        return 0;
    char *p = fast_target(w, trank, tdisp, count, dt, &n);
    if (!p)
        return 0;
    xm_shmwin_lock(w, trank);
    if (raddr)
        memcpy(raddr, p, n);
    if (op == MPI_REPLACE)
        memcpy(p, oaddr, n);
    else if (combine)
        xm_op_apply(op, oaddr, p, count, dt);
    xm_shmwin_unlock(w, trank);
    return 1;
}

int xm_rma_put(struct xm_win *w, const void *oaddr, int ocount, MPI_Datatype odt, int trank,
               MPI_Aint tdisp, int tcount, MPI_Datatype tdt)
{
    if (w->accq && w->accq->n)
        acc_drain(w); /* issue order */
    struct xm_dtype *o = xm_dt_get(odt), *t = xm_dt_get(tdt);
    uint64_t base;
    int rc = target_base(w, trank, tdisp, tcount, t, &base);
    if (rc)
        return rc;
    if (xm_win_part(w, trank) && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        xm_shmwin_copy(w, trank, base, tcount, t, (void *)oaddr, ocount, o, 1);
        return 0;
    }
    rc = rma_cma(w, trank, base, tcount, t, (void *)oaddr, ocount, o, 1);
    if (rc)
        return rc == 1 ? 0 : rc;
    struct opdesc d = {.type = XM_RMA_PUT, .op = MPI_REPLACE, .basic = MPI_BYTE,
                       .obuf = oaddr, .ocount = ocount, .odt = o};
    return issue(w, trank, base, tcount, t, &d);
}

int xm_rma_get(struct xm_win *w, void *oaddr, int ocount, MPI_Datatype odt, int trank,
               MPI_Aint tdisp, int tcount, MPI_Datatype tdt)
{
    if (w->accq && w->accq->n)
        acc_drain(w); /* issue order */
    struct xm_dtype *o = xm_dt_get(odt), *t = xm_dt_get(tdt);
    uint64_t base;
    int rc = target_base(w, trank, tdisp, tcount, t, &base);
    if (rc)
        return rc;
    if (xm_win_part(w, trank) && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        xm_shmwin_copy(w, trank, base, tcount, t, oaddr, ocount, o, 0);
        return 0;
    }
    rc = rma_cma(w, trank, base, tcount, t, oaddr, ocount, o, 0);
    if (rc)
        return rc == 1 ? 0 : rc;
    struct opdesc d = {.type = XM_RMA_GET, .rbuf = oaddr, .rcount = ocount, .rdt = o};
    return issue(w, trank, base, tcount, t, &d);
}

int xm_rma_acc(struct xm_win *w, const void *oaddr, int ocount, MPI_Datatype odt,
               void *raddr, int rcount, MPI_Datatype rdt, int trank, MPI_Aint tdisp,
               int tcount, MPI_Datatype tdt, MPI_Op op, int fetch)
{
    struct xm_dtype *t = xm_dt_get(tdt);
    uint64_t base;
    int rc = target_base(w, trank, tdisp, tcount, t, &base);
    if (rc)
        return rc;
    if (xm_win_part(w, trank) && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return xm_shmwin_acc(w, oaddr, ocount, xm_dt_get(odt), fetch ? raddr : NULL, rcount,
                             fetch ? xm_dt_get(rdt) : NULL, trank, base, tcount, t, op);
    if (w->lkmap && !fetch &&
        acc_defer(w, oaddr, ocount, xm_dt_get(odt), trank, base, tcount, t, op))
        return 0;
    if (w->accq && w->accq->n)
        acc_drain(w); /* issue order */
    if (w->lkmap) {
        rc = cma_acc(w, oaddr, ocount, op == MPI_NO_OP ? NULL : xm_dt_get(odt),
                     fetch ? raddr : NULL, rcount, fetch ? xm_dt_get(rdt) : NULL, trank, base,
                     tcount, t, op);
        if (rc)
            return rc == 1 ? 0 : rc;
    }
    struct opdesc d = {.type = fetch ? XM_RMA_GACC : XM_RMA_ACC, .op = op,
                       .basic = t->basic, .esize = XM_DT_SIZE(t->basic)};
    size_t pf, pso, psc;
    if (xm_rma_pair_layout(t->basic, &pf, &pso, &psc)) {
        d.pair = 1;
        d.esize = pf + psc;
    }
    if (op == MPI_NO_OP) { /* nothing carried: the same bytes as a get would fetch */
        d.obuf = NULL;
    } else {
        d.obuf = oaddr;
        d.ocount = ocount;
        d.odt = xm_dt_get(odt);
    }
    if (fetch) {
        d.rbuf = raddr;
        d.rcount = rcount;
        d.rdt = xm_dt_get(rdt);
    }
    if (op == MPI_NO_OP) {
        /* carry zeros: the wire format ties data to segments; NO_OP leaves them unused */
        size_t n = (size_t)tcount * t->size;
        void *z = calloc(1, n ? n : 1);
        if (!z)
            return MPI_ERR_NO_MEM;
        d.obuf = z;
        d.ocount = (int)n;
        d.odt = xm_dt_get(MPI_BYTE);
        rc = issue(w, trank, base, tcount, t, &d);
        free(z);
        return rc;
    }
    return issue(w, trank, base, tcount, t, &d);
}

int xm_rma_cas(struct xm_win *w, const void *oaddr, const void *caddr, void *raddr,
               MPI_Datatype dt, int trank, MPI_Aint tdisp)
{
    if (w->accq && w->accq->n)
        acc_drain(w); /* issue order */
    struct xm_dtype *t = xm_dt_get(dt);
    uint64_t base;
    int rc = target_base(w, trank, tdisp, 1, t, &base);
    if (rc)
        return rc;
    if (xm_win_part(w, trank) && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return xm_shmwin_cas(w, oaddr, caddr, raddr, XM_DT_SIZE(dt), trank, base);
    size_t es = XM_DT_SIZE(dt);
    if (w->lkmap) {
        rc = cma_cas(w, oaddr, caddr, raddr, es, trank, base);
        if (rc)
            return rc == 1 ? 0 : rc;
    }
    size_t mlen = HDR + SEGSZ + 2 * es;
    char *msg = calloc(1, mlen);
    if (!msg)
        return MPI_ERR_NO_MEM;
    struct xm_rma_hdr *h = (struct xm_rma_hdr *)msg;
    h->magic = XM_RMA_MAGIC;
    h->type = XM_RMA_CAS;
    h->basic = dt;
    h->nseg = 1;
    h->datalen = 2 * es;
    h->reply_tag = new_tag(w);
    struct xm_rma_seg s = {base, es};
    memcpy(msg + HDR, &s, SEGSZ);
    memcpy(msg + HDR + SEGSZ, oaddr, es);
    memcpy(msg + HDR + SEGSZ + es, caddr, es);
    struct opdesc d = {.rbuf = raddr, .rcount = 1, .rdt = t};
    rc = post_reply(w, trank, h->reply_tag, &d, 0, es);
    if (rc) {
        free(msg);
        return rc;
    }
    rc = send_msg(w, wrank(w, trank), 0, msg, mlen, 1);
    w->dirty[trank] = DIRTY_REPLY;
    return rc;
}

/* ---- synchronization --------------------------------------------------------------- */

/* Send a request that is answered by an empty reply to each listed rank (n of them,
 * ranks NULL = those flagged in sel) and wait for every answer. */
static int roundtrip(struct xm_win *w, int type, int flags, const int *ranks, int n)
{
    struct xm_req **rs = calloc((size_t)(n ? n : 1), sizeof(*rs));
    if (!rs)
        return MPI_ERR_NO_MEM;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        int tag = new_tag(w);
        if (xm_irecv(NULL, 0, MPI_BYTE, wrank(w, ranks[i]), tag, w->comm->ctx, NULL,
                     &rs[i]) < 0) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        rc = send_ctl(w, ranks[i], type, flags, tag);
    }
    for (int i = 0; i < n; i++)
        if (rs[i]) {
            xm_wait(rs[i]);
            xm_req_free(rs[i]);
        }
    free(rs);
    return rc;
}

static void mem_sync(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

int xm_rma_flush(struct xm_win *w, int trank)
{
    pend_wait(w);
    if (w->accrc) { /* applying deferred accumulates failed: the target is gone */
        int e = w->accrc;
        w->accrc = 0;
        return e;
    }
    for (int i = 0; i < w->comm->size; i++)
        if (w->dirty[i] == DIRTY_REPLY)
            w->dirty[i] = 0; /* its answer came after all my earlier requests applied */
    /* (issue 21) nothing sent to the target(s) since their last flush (node-shared
     * and CMA operations complete when issued): only the memory barrier; a flush per
     * operation is the common passive-target pattern, keep it free of allocations */
    int any = 0;
    if (trank >= 0)
        any = w->dirty[trank];
    else
        for (int i = 0; i < w->comm->size && !any; i++)
            any = w->dirty[i];
    if (!any) {
        mem_sync();
        /* but other ranks' requests to this one are served only from progress: a rank
         * that spins on operations to memory it reaches directly (a compare-and-swap
         * lock on its own window, say) while the lock holder waits for its answer
         * would never give it, so every 256th such flush makes progress (the fast
         * path keeps its cost: about one poll per 256) */
        static unsigned quiet_flushes;
        if ((++quiet_flushes & 255) == 0)
            xm_progress();
        return 0;
    }
    int n = 0, rc = 0;
    int *ranks = malloc(sizeof(int) * (size_t)w->comm->size);
    if (!ranks)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < w->comm->size; i++)
        if (w->dirty[i] && (trank < 0 || i == trank)) {
            ranks[n++] = i;
            w->dirty[i] = 0;
        }
    if (n)
        rc = roundtrip(w, XM_RMA_FLUSH, 0, ranks, n);
    free(ranks);
    mem_sync();
    return rc;
}

int xm_rma_flush_local(struct xm_win *w, int trank)
{
    (void)trank; /* put/accumulate data is copied when issued: locally complete */
    pend_wait(w);
    return 0;
}

int xm_rma_fence(struct xm_win *w, int assert)
{
    int rc = xm_rma_flush(w, -1);
    if (rc)
        return rc;
    if (xm_coll_barrier(w->comm) < 0)
        return MPI_ERR_OTHER;
    mem_sync();
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    return 0;
}

int xm_rma_lock(struct xm_win *w, int type, int trank, int assert)
{
    if (assert & MPI_MODE_NOCHECK) {
        w->locked[trank] = 2;
        return 0;
    }
    int rc = roundtrip(w, XM_RMA_LOCK, type == MPI_LOCK_EXCLUSIVE ? XM_RMA_F_EXCL : 0, &trank, 1);
    if (!rc)
        w->locked[trank] = 1;
    mem_sync();
    return rc;
}

int xm_rma_unlock(struct xm_win *w, int trank)
{
    int rc;
    if (w->locked[trank] == 1) {
        pend_wait(w);
        rc = roundtrip(w, XM_RMA_UNLOCK, 0, &trank, 1);
        w->dirty[trank] = 0;
    } else {
        rc = xm_rma_flush(w, trank);
    }
    w->locked[trank] = 0;
    mem_sync();
    return rc;
}

int xm_rma_lock_all(struct xm_win *w, int assert)
{
    int n = w->comm->size, rc = 0;
    if (!(assert & MPI_MODE_NOCHECK)) {
        int *ranks = malloc(sizeof(int) * (size_t)n);
        if (!ranks)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        rc = roundtrip(w, XM_RMA_LOCK, 0, ranks, n);
        free(ranks);
    }
    w->lock_all = rc ? 0 : (assert & MPI_MODE_NOCHECK) ? 2 : 1;
    mem_sync();
    return rc;
}

int xm_rma_unlock_all(struct xm_win *w)
{
    int n = w->comm->size, rc;
    if (w->lock_all == 1) {
        pend_wait(w);
        int *ranks = malloc(sizeof(int) * (size_t)n);
        if (!ranks)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < n; i++) {
            ranks[i] = i;
            w->dirty[i] = 0;
        }
        rc = roundtrip(w, XM_RMA_UNLOCK, 0, ranks, n);
        free(ranks);
    } else {
        rc = xm_rma_flush(w, -1);
    }
    w->lock_all = 0;
    mem_sync();
    return rc;
}

int xm_rma_post(struct xm_win *w, const int *ranks, int n, int assert)
{
    (void)assert;
    free(w->expo);
    w->expo = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!w->expo)
        return MPI_ERR_NO_MEM;
    memcpy(w->expo, ranks, sizeof(int) * (size_t)n);
    w->nexpo = n;
    w->posted = 1;
    mem_sync();
    for (int i = 0; i < n; i++) {
        int rc = send_ctl(w, ranks[i], XM_RMA_POST, 0, 0);
        if (rc)
            return rc;
    }
    return 0;
}

int xm_rma_start(struct xm_win *w, const int *ranks, int n, int assert)
{
    (void)assert; /* the POSTs are always sent, so always consumed */
    free(w->access);
    w->access = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!w->access)
        return MPI_ERR_NO_MEM;
    memcpy(w->access, ranks, sizeof(int) * (size_t)n);
    w->naccess = n;
    for (int i = 0; i < n; i++) {
        int spins = 0;
        while (w->post_from[ranks[i]] == 0) {
            if (xm_progress() > 0)
                spins = 0;
            else
                xm_idle(&spins);
        }
        w->post_from[ranks[i]]--;
    }
    w->started = 1;
    mem_sync();
    return 0;
}

int xm_rma_complete(struct xm_win *w)
{
    pend_wait(w);
    int rc = 0;
    for (int i = 0; i < w->naccess && !rc; i++) {
        rc = send_ctl(w, w->access[i], XM_RMA_COMPLETE, 0, 0);
        w->dirty[w->access[i]] = 0; /* COMPLETE follows the requests: applied before */
    }
    w->started = 0;
    w->naccess = 0;
    mem_sync();
    return rc;
}

int xm_rma_wait(struct xm_win *w, int block, int *flag)
{
    int spins = 0;
    for (;;) {
        int all = 1;
        for (int i = 0; i < w->nexpo && all; i++)
            all = w->complete_from[w->expo[i]] > 0;
        if (all)
            break;
        if (xm_progress() > 0)
            spins = 0;
        else if (!block) {
            *flag = 0;
            return 0;
        } else {
            xm_idle(&spins);
        }
    }
    for (int i = 0; i < w->nexpo; i++)
        w->complete_from[w->expo[i]]--;
    w->nexpo = 0;
    w->posted = 0;
    *flag = 1;
    mem_sync();
    return 0;
}

/* ---- creation and destruction ------------------------------------------------------ */

static int all_on_my_node(struct xm_comm *c)
{
    int me = xm_g.node_of ? xm_g.node_of[xm_g.rank] : 0;
    for (int i = 0; i < c->size; i++)
        if (xm_g.node_of && xm_g.node_of[xm_comm_world_rank(c, i)] != me)
            return 0;
    return 1;
}

/* Lock-word pages of Win_create windows, kept for the next window over the same
 * group: mapping one costs a shm object, a broadcast and an allreduce, and programs
 * create and free windows on one communicator in loops (MPICH's window_creation: 1000).
 * Windows of one group may share a page: a holder of a lock word never waits for
 * anything else while holding it, so two windows meeting on a word only wait for each
 * other's short critical sections.  Whether to reuse is agreed in the creation's one
 * allgather (every rank shows the id of the page it has for the group, 0 for none;
 * reuse only when all show the same id), so ranks whose caches differ (evictions)
 * simply map a new page together. */
#define LKCACHE 8
struct xm_rma_lkpage {
    int n;
    int *wranks;  /* the group, in window rank order */
    char *map;
    size_t len;
    uint64_t id;
    int refs;     /* windows using it */
    int cached;   /* in lkcache[] */
    unsigned long used;
};
static struct xm_rma_lkpage *lkcache[LKCACHE];
static unsigned long lkclock;

static void lkpage_unref(struct xm_rma_lkpage *p)
{
    if (--p->refs > 0 || p->cached)
        return;
    xm_shmwin_unmap(p->map, p->len);
    free(p->wranks);
    free(p);
}

static struct xm_rma_lkpage *lkpage_find(struct xm_comm *c)
{
    for (int i = 0; i < LKCACHE; i++) {
        struct xm_rma_lkpage *p = lkcache[i];
        if (!p || p->n != c->size)
            continue;
        int k = 0;
        while (k < p->n && p->wranks[k] == xm_comm_world_rank(c, k))
            k++;
        if (k == p->n)
            return p;
    }
    return NULL;
}

/* a page just mapped for c's group: into the cache (out goes the least recently used,
 * or the group's old page), one reference for the window */
static struct xm_rma_lkpage *lkpage_add(struct xm_comm *c, char *map, size_t len, uint64_t id)
{
    struct xm_rma_lkpage *p = calloc(1, sizeof(*p));
    int *wr = malloc(sizeof(int) * (size_t)c->size);
    if (!p || !wr) {
        free(p);
        free(wr);
        return NULL;
    }
    for (int i = 0; i < c->size; i++)
        wr[i] = xm_comm_world_rank(c, i);
    *p = (struct xm_rma_lkpage){c->size, wr, map, len, id, 1, 1, ++lkclock};
    struct xm_rma_lkpage *old = lkpage_find(c);
    int slot = 0;
    for (int i = 0; i < LKCACHE; i++) {
        if (old ? lkcache[i] == old : !lkcache[i]) {
            slot = i;
            break;
        }
        if (lkcache[i] && lkcache[slot] && lkcache[i]->used < lkcache[slot]->used)
            slot = i;
    }
    if (lkcache[slot]) {
        lkcache[slot]->cached = 0;
        lkcache[slot]->refs++;
        lkpage_unref(lkcache[slot]);
    }
    lkcache[slot] = p;
    return p;
}

static void win_destroy(struct xm_win *w)
{
    for (struct xm_win **pp = &live; *pp; pp = &(*pp)->next_live)
        if (*pp == w) {
            *pp = w->next_live;
            break;
        }
    for (int i = 0; i < XM_RMA_RING; i++) {
        if (w->ring[i]) {
            if (!xm_cancel_recv(w->ring[i]))
                xm_wait(w->ring[i]); /* a late message: dropped with the window */
            xm_req_free(w->ring[i]);
        }
        free(w->ringbuf[i]);
    }
    while (w->lkq) {
        struct xm_rma_waiter *q = w->lkq;
        w->lkq = q->next;
        free(q);
    }
    if (w->map)
        xm_shmwin_unmap(w->map, w->maplen);
    if (w->lkpage)
        lkpage_unref(w->lkpage);
    else if (w->lkmap)
        xm_shmwin_unmap(w->lkmap, w->lklen);
    if (w->dmap)
        for (int i = 0; i < w->comm->size; i++)
            if (w->dmap[i])
                munmap(w->dmap[i], w->dmaplen[i]);
    free(w->accq);
    free(w->direct);
    free(w->dmap);
    free(w->dmaplen);
    xm_mem_win_unref(w->memref);
    if (w->own_base)
        free(w->base);
    if (w->handle)
        wins[XM_H_INDEX(w->handle)] = NULL;
    if (w->comm)
        xm_comm_unref(w->comm);
    free(w->sizes);
    free(w->units);
    free(w->raddr);
    free(w->cma_ok);
    free(w->offs);
    free(w->regs);
    free(w->post_from);
    free(w->complete_from);
    free(w->dirty);
    free(w->locked);
    free(w->access);
    free(w->expo);
    free(w);
}

/* Win_create inside one node, accumulates under w->lkmap's words: map each local
 * peer's window that lies in an MPI_Alloc_mem block (all[8 * r + 6] its memory file,
 * + 7 the offset of its base in it), so put/get/accumulate to it are loads and stores
 * here (xm_win_part).  Per rank and optional: a rank that cannot be mapped (ptrace
 * rules, a file that does not pass allocmem.c's checks) keeps CMA. */
static void map_direct(struct xm_win *w, const long long *all)
{
    int n = w->comm->size;
    w->direct = calloc((size_t)n, sizeof(*w->direct));
    w->dmap = calloc((size_t)n, sizeof(*w->dmap));
    w->dmaplen = calloc((size_t)n, sizeof(*w->dmaplen));
    if (!w->direct || !w->dmap || !w->dmaplen) {
        free(w->direct);
        free(w->dmap);
        free(w->dmaplen);
        w->direct = NULL;
        w->dmap = NULL;
        w->dmaplen = NULL;
        return;
    }
    for (int i = 0; i < n; i++) {
        int wr = wrank(w, i);
        if (i == w->comm->rank) {
            w->direct[i] = w->base;
            continue;
        }
        if (all[8 * i + 6] < 0 || all[8 * i + 6] > INT32_MAX || w->sizes[i] <= 0 ||
            !w->cma_ok || !xm_g.shm || !xm_g.local_index || xm_g.local_index[wr] < 0)
            continue;
        w->direct[i] = xm_mem_map_peer(xm_peer_pid(wr), (int)all[8 * i + 6],
                                       (uint64_t)all[8 * i + 7], (uint64_t)w->sizes[i],
                                       &w->dmap[i], &w->dmaplen[i]);
    }
}

/* A live Win_create window of mine that peers may be writing by CMA has bytes on the
 * pages of [base, base + size): those pages must not move (a write landing between
 * the copy and the remap would be lost). */
static int cma_window_near(const void *base, size_t size)
{
    long pgl = sysconf(_SC_PAGESIZE);
    uintptr_t pg = pgl > 0 ? (uintptr_t)pgl : 65536, lo = (uintptr_t)base & ~(pg - 1);
    uintptr_t hi = (uintptr_t)base + size + pg; /* rounding up, with room to spare */
    for (struct xm_win *v = live; v; v = v->next_live)
        if (v->flavor == MPI_WIN_FLAVOR_CREATE && !v->memref && v->size > 0 &&
            (uintptr_t)v->base < hi && (uintptr_t)v->base + (size_t)v->size > lo)
            return 1;
    return 0;
}

int xm_win_create(void *base, MPI_Aint size, int disp_unit, struct xm_comm *c, int flavor,
                  struct xm_win **out)
{
    uint32_t ctx;
    if (xm_ctx_alloc(c, &ctx) < 0)
        return MPI_ERR_OTHER;
    int n = c->size;
    int *wm = malloc(sizeof(int) * (size_t)n);
    struct xm_win *w = calloc(1, sizeof(*w));
    if (!wm || !w) {
        free(wm);
        free(w);
        xm_ctx_release(ctx);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        wm[i] = xm_comm_world_rank(c, i);
    w->comm = xm_comm_new(n, wm, ctx, c);
    if (!w->comm) {
        free(w);
        xm_ctx_release(ctx);
        return MPI_ERR_NO_MEM;
    }
    w->comm->errh = MPI_ERRORS_RETURN;
    snprintf(w->comm->name, sizeof(w->comm->name), "window of comm %#x", c->handle);
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->lk_excl = -1;
    w->size = size;
    w->disp_unit = disp_unit;
    /* everything local first, so that one allgather both spreads sizes, units
     * and bases and agrees on failures and on the lock page (Win_create in a loop) */
    w->sizes = calloc((size_t)n, sizeof(*w->sizes));
    w->units = calloc((size_t)n, sizeof(*w->units));
    w->post_from = calloc((size_t)n, sizeof(int));
    w->complete_from = calloc((size_t)n, sizeof(int));
    w->dirty = calloc((size_t)n, 1);
    w->locked = calloc((size_t)n, 1);
    w->raddr = calloc((size_t)n, sizeof(*w->raddr));
    int rc = 0;
    if (!w->sizes || !w->units || !w->post_from || !w->complete_from || !w->dirty ||
        !w->locked || !w->raddr)
        rc = MPI_ERR_NO_MEM;
    /* the same answers at every rank: the communicator and the environment */
    int shared = flavor == MPI_WIN_FLAVOR_SHARED ||
                 (flavor == MPI_WIN_FLAVOR_ALLOCATE && all_on_my_node(w->comm) &&
                  xm_env_int("LOOM_MPI_RMA_SHM", 1));
    if (!rc && !shared && flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        w->base = malloc(size ? (size_t)size : 1);
        w->own_base = 1;
        if (!w->base)
            rc = MPI_ERR_NO_MEM;
    } else if (!shared) {
        w->base = base;
    }
    if (!rc && flavor == MPI_WIN_FLAVOR_CREATE) {
        /* Win_create: reach local ranks' memory by CMA (rma_cma below), the way the
         * p2p engine's large transfers do; LOOM_MPI_RMA_CMA=0 or LOOM_MPI_CMA=0 off */
        const char *cma = getenv("LOOM_MPI_CMA"), *lmt = getenv("LOOM_SHM_LMT");
        if (xm_env_int("LOOM_MPI_RMA_CMA", 1) && !(cma && *cma == '0') &&
            !(lmt && strcmp(lmt, "copy") == 0) &&
            !(w->cma_ok = calloc((size_t)n, 1))) /* per rank: 0 untried, 1 works, 2 not */
            rc = MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < XM_RMA_RING && !rc; i++)
        if (ring_post(w, i) < 0)
            rc = MPI_ERR_NO_MEM;
    if (!rc && win_register(w) < 0)
        rc = MPI_ERR_NO_MEM;
    /* (issue 21) lock words for the accumulate family by CMA (cma_acc), when every
     * rank is on this node and CMA is on: a lock page, maybe the group's cached one */
    int want = !rc && w->cma_ok && all_on_my_node(w->comm) &&
               xm_env_int("LOOM_MPI_RMA_CMA_ACC", 1);
    struct xm_rma_lkpage *page = want ? lkpage_find(w->comm) : NULL;
    /* Win_create over an MPI_Alloc_mem block: counted there (Free_mem refuses it
     * while the window lives), and its memory file offered to the node (allocmem.c) */
    int memfd = -1;
    uint64_t memoff = 0;
    if (!rc && flavor == MPI_WIN_FLAVOR_CREATE && size > 0)
        w->memref = xm_mem_win_ref(base, (size_t)size, &memfd, &memoff);
    /* (issue 21) ordinary memory: its pages into a memory file of their own, so the
     * node's peers map it as above (allocmem.c says where that is safe) */
    if (!rc && flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && !w->memref && want &&
        xm_g.shm && n > 1 && xm_env_int("LOOM_MPI_RMA_DIRECT", 1) &&
        xm_env_int("LOOM_MPI_RMA_ADOPT", 1) && !cma_window_near(base, (size_t)size))
        w->memref = xm_mem_win_adopt(base, (size_t)size, &memfd, &memoff);
#define NG 8
    long long mine[NG] = {size,
                          disp_unit,
                          (long long)(uintptr_t)base,
                          rc != 0,
                          want,
                          page ? (long long)page->id : 0,
                          memfd,
                          (long long)memoff};
    long long *all = malloc(sizeof(mine) * (size_t)n);
    if (!all) /* the others wait in the allgather for this rank: no way back */
        xm_die("out of memory creating a window of %d ranks", n);
    if (xm_icoll_allgather(mine, NG, MPI_LONG_LONG, all, NG, MPI_LONG_LONG, w->comm,
                           NULL) < 0) {
        free(all);
        win_destroy(w);
        return MPI_ERR_OTHER;
    }
    int anybad = 0, every = 1, same = page != NULL, anyfd = 0;
    for (int i = 0; i < n; i++) {
        w->sizes[i] = (MPI_Aint)all[NG * i];
        w->units[i] = (int)all[NG * i + 1];
        w->raddr[i] = (uint64_t)all[NG * i + 2];
        anybad |= all[NG * i + 3] != 0;
        every &= all[NG * i + 4] != 0;
        same &= page && all[NG * i + 5] == (long long)page->id;
        anyfd |= all[NG * i + 6] >= 0 && i != w->comm->rank;
    }
    if (anybad) {
        free(all);
        win_destroy(w);
        return rc ? rc : MPI_ERR_NO_MEM;
    }
    if (flavor != MPI_WIN_FLAVOR_CREATE || !anyfd) {
        free(all);
        all = NULL;
    }
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        for (int i = 0; i < n; i++)
            w->units[i] = 1;
    }
    if (shared) {
        size_t total = 0;
        w->offs = calloc((size_t)n, sizeof(size_t));
        if (!w->offs)
            rc = MPI_ERR_NO_MEM;
        for (int i = 0; i < n && !rc; i++) {
            w->offs[i] = total;
            total += (size_t)w->sizes[i];
            if (flavor == MPI_WIN_FLAVOR_ALLOCATE)
                total = (total + 63) & ~(size_t)63; /* each rank's part aligned */
        }
        /* one lock word per rank, each on its own cache line, after the data: the
         * accumulate family works on a rank's part under its word (shmwin.c) */
        w->lock_off = (total + 63) & ~(size_t)63;
        w->maplen = w->lock_off + (size_t)n * 64;
        int bad = rc != 0;
        xm_coll_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, w->comm);
        if (anybad) {
            win_destroy(w);
            return MPI_ERR_NO_MEM;
        }
        rc = xm_shmwin_map(w->comm, w->maplen, &w->map);
        if (rc && flavor == MPI_WIN_FLAVOR_ALLOCATE) {
            /* no shared mapping (the same answer at every rank): private memory */
            free(w->offs);
            w->offs = NULL;
            w->map = NULL;
            w->base = malloc(size ? (size_t)size : 1);
            w->own_base = 1;
            bad = w->base == NULL;
            xm_coll_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, w->comm);
            if (anybad) {
                win_destroy(w);
                return MPI_ERR_NO_MEM;
            }
            rc = 0;
        } else if (rc) {
            win_destroy(w);
            return rc;
        } else {
            w->base = w->map + w->offs[w->comm->rank];
        }
    }
    if (flavor == MPI_WIN_FLAVOR_CREATE && every) {
        /* agreed: all reuse the page all showed, or all map a new one (collective) */
        char *map;
        uint64_t id;
        if (same) {
            page->refs++;
            page->used = ++lkclock;
        } else if (xm_shmwin_map_id(w->comm, (size_t)n * 64, &map, &id) == 0) {
            page = lkpage_add(w->comm, map, (size_t)n * 64, id);
            if (!page) { /* no room to remember it: this window's own page */
                w->lkmap = map;
                w->lklen = (size_t)n * 64;
            }
        } else {
            page = NULL;
        }
        if (page) {
            w->lkpage = page;
            w->lkmap = page->map;
            w->lklen = page->len;
        }
    }
    if (all && w->lkmap && xm_env_int("LOOM_MPI_RMA_DIRECT", 1))
        map_direct(w, all);
    free(all);
#undef NG
    w->next_live = live;
    live = w;
    xm_rma_progress_hook = xm_rma_progress;
    *out = w;
    return 0;
}

int xm_win_free(struct xm_win *w)
{
    int rc = xm_rma_flush(w, -1);
    reap(1);
    if (xm_coll_barrier(w->comm) < 0 && !rc)
        rc = MPI_ERR_OTHER;
    win_destroy(w);
    return rc;
}

void *xm_win_shared_base(struct xm_win *w, int rank)
{
    return w->map ? w->map + w->offs[rank] : NULL;
}

int xm_win_attach(struct xm_win *w, void *base, MPI_Aint size)
{
    if (w->nregs == w->capregs) {
        int cap = w->capregs ? 2 * w->capregs : 4;
        struct xm_win_region *r = realloc(w->regs, sizeof(*r) * (size_t)cap);
        if (!r)
            return MPI_ERR_NO_MEM;
        w->regs = r;
        w->capregs = cap;
    }
    w->regs[w->nregs].base = (uintptr_t)base;
    w->regs[w->nregs++].len = (size_t)size;
    return 0;
}

int xm_win_detach(struct xm_win *w, const void *base)
{
    for (int i = 0; i < w->nregs; i++)
        if (w->regs[i].base == (uintptr_t)base) {
            w->regs[i] = w->regs[--w->nregs];
            return 0;
        }
    return MPI_ERR_RMA_ATTACH;
}
