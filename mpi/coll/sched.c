/*
 * sched.c - collective schedules: the one engine behind blocking and nonblocking
 *           collectives (contract in coll.h).
 *
 * A schedule is a list of steps built up front by an algorithm (coll.c):
 *   SEND/RECV post a nonblocking p2p operation on the communicator's collective
 *   context and move on at once; WAIT, OP (reduction) and COPY (typed local copy) are
 *   fences: they run only once every request posted before them has completed.
 * xm_sched_step() advances a schedule as far as it can without blocking; a blocking
 * collective loops on it with the p2p idle policy, a nonblocking one hangs it on an
 * XM_REQ_COLL request whose coll_step is xm_sched_step.
 * Tags: every schedule takes the next comm->coll_seq, so overlapping collectives on one
 * communicator never match each other's messages (all ranks start collectives in the
 * same order, so they agree on the sequence number).
 * Active nonblocking schedules advance from Wait (coll_step) and from every
 *   xm_progress(), through xm_progress_hook, so MPI_Test loops make progress.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/comm.h"
#include "../core/p2p.h"
#include "../dt/dtype.h"
#include "coll.h"

enum { S_SEND, S_RECV, S_WAIT, S_OP, S_COPY };

struct step {
    int kind;
    const void *sbuf;
    void *rbuf;
    int count, rcount;
    MPI_Datatype dt, rdt;
    int peer; /* comm rank */
    MPI_Op op;
};

struct xm_sched {
    struct xm_comm *c;
    uint32_t ctx;
    int tag;
    struct step *st;
    int n, cap, cur;
    struct xm_req **out; /* posted, not yet reaped */
    int nout, outcap;
    void **tmp;
    size_t *tmplen;
    int ntmp;
    int err;
    struct xm_req *req; /* nonblocking: the request that completes with the schedule */
    int held;           /* nonblocking: its steps' datatypes and ops are referenced */
    struct xm_sched *next_active, **prev_active;
};

static struct xm_sched *active; /* nonblocking schedules in flight */

/* Scratch reuse: large temporaries come from mmap in glibc, so a fresh one per call
 * costs page faults every time; keep a few freed buffers (up to SCRATCH_MAX bytes
 * each) for the next schedule. */
#define SCRATCH_SLOTS 4
#define SCRATCH_MAX (64u << 20)
static struct {
    void *p;
    size_t len;
} scratch[SCRATCH_SLOTS];

static void *scratch_get(size_t len, size_t *got)
{
    int best = -1;
    for (int i = 0; i < SCRATCH_SLOTS; i++)
        if (scratch[i].p && scratch[i].len >= len &&
            (best < 0 || scratch[i].len < scratch[best].len))
            best = i;
    if (best >= 0) {
        void *p = scratch[best].p;
        *got = scratch[best].len;
        scratch[best].p = NULL;
        return p;
    }
    *got = len;
    return malloc(len);
}

static void scratch_put(void *p, size_t len)
{
    if (!p)
        return;
    if (len <= SCRATCH_MAX) {
        int small = -1;
        for (int i = 0; i < SCRATCH_SLOTS; i++) {
            if (!scratch[i].p) {
                scratch[i].p = p;
                scratch[i].len = len;
                return;
            }
            if (scratch[i].len < len &&
                (small < 0 || scratch[i].len < scratch[small].len))
                small = i;
        }
        if (small >= 0) { /* keep the larger buffer */
            free(scratch[small].p);
            scratch[small].p = p;
            scratch[small].len = len;
            return;
        }
    }
    free(p);
}

struct xm_sched *xm_sched_new(struct xm_comm *c)
{
    struct xm_sched *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->c = c;
    c->refs++; /* a Comm_free while this runs must not free c under us */
    s->ctx = c->ctx | 1u;
    s->tag = 16 + (int)(c->coll_seq++ & 0x1fffffff);
    return s;
}

/* A nonblocking schedule outlives the call that built it, and the user may free the
 * datatypes and op it names before it completes (MPI-3.1 4.1.9, 5.9.5: pending
 * operations that use them complete normally).  It holds a reference on each from
 * its start to its end; a blocking one runs inside the call and needs none. */
static void hold(struct xm_sched *s, int on)
{
    for (int i = 0; i < s->n; i++) {
        const struct step *p = &s->st[i];
        MPI_Datatype dts[2] = {p->dt, p->kind == S_COPY ? p->rdt : MPI_DATATYPE_NULL};
        for (int k = 0; k < 2; k++)
            if (dts[k] != MPI_DATATYPE_NULL && !XM_DT_IS_PREDEF(dts[k])) {
                struct xm_dtype *t = xm_dt_get(dts[k]);
                if (on)
                    xm_dt_ref(t);
                else
                    xm_dt_unref(t);
            }
        if (p->kind == S_OP) {
            if (on)
                xm_op_ref(p->op);
            else
                xm_op_unref(p->op);
        }
    }
    s->held = on;
}

void xm_sched_free(struct xm_sched *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nout; i++)
        if (s->out[i]) {
            xm_wait(s->out[i]); /* never leave a request pointing at freed memory */
            xm_req_free(s->out[i]);
        }
    if (s->held)
        hold(s, 0);
    for (int i = 0; i < s->ntmp; i++)
        scratch_put(s->tmp[i], s->tmplen[i]);
    free(s->tmplen);
    if (s->prev_active) {
        *s->prev_active = s->next_active;
        if (s->next_active)
            s->next_active->prev_active = s->prev_active;
    }
    free(s->tmp);
    free(s->out);
    free(s->st);
    xm_comm_unref(s->c);
    free(s);
}

static struct step *add(struct xm_sched *s, int kind)
{
    if (s->err)
        return NULL;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct step *n = realloc(s->st, (size_t)cap * sizeof(*n));
        if (!n) {
            s->err = -ENOMEM;
            return NULL;
        }
        s->st = n;
        s->cap = cap;
    }
    struct step *p = &s->st[s->n++];
    memset(p, 0, sizeof(*p));
    p->kind = kind;
    return p;
}

void *xm_sched_tmp(struct xm_sched *s, int count, MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t) {
        s->err = -EINVAL;
        return NULL;
    }
    size_t span =
        count > 0 ? (size_t)(count - 1) * (size_t)t->extent + (size_t)t->true_extent : 0;
    void **n = realloc(s->tmp, (size_t)(s->ntmp + 1) * sizeof(*n));
    if (n)
        s->tmp = n;
    size_t *l = n ? realloc(s->tmplen, (size_t)(s->ntmp + 1) * sizeof(*l)) : NULL;
    if (l)
        s->tmplen = l;
    size_t got = 0;
    char *b = l ? scratch_get(span ? span : 1, &got) : NULL;
    if (!b) {
        s->err = -ENOMEM;
        return NULL;
    }
    s->tmp[s->ntmp] = b;
    s->tmplen[s->ntmp++] = got;
    return b - t->true_lb;
}

void xm_sched_send(struct xm_sched *s, const void *buf, int count, MPI_Datatype dt,
                   int to)
{
    struct step *p = add(s, S_SEND);
    if (p) {
        p->sbuf = buf;
        p->count = count;
        p->dt = dt;
        p->peer = to;
    }
}

void xm_sched_recv(struct xm_sched *s, void *buf, int count, MPI_Datatype dt, int from)
{
    struct step *p = add(s, S_RECV);
    if (p) {
        p->rbuf = buf;
        p->count = count;
        p->dt = dt;
        p->peer = from;
    }
}

void xm_sched_wait(struct xm_sched *s)
{
    add(s, S_WAIT);
}

void xm_sched_op(struct xm_sched *s, const void *in, void *inout, int count,
                 MPI_Datatype dt, MPI_Op op)
{
    struct step *p = add(s, S_OP);
    if (p) {
        p->sbuf = in;
        p->rbuf = inout;
        p->count = count;
        p->dt = dt;
        p->op = op;
    }
}

void xm_sched_copy(struct xm_sched *s, const void *src, int scount, MPI_Datatype sdt,
                   void *dst, int rcount, MPI_Datatype rdt)
{
    struct step *p = add(s, S_COPY);
    if (p) {
        p->sbuf = src;
        p->count = scount;
        p->dt = sdt;
        p->rbuf = dst;
        p->rcount = rcount;
        p->rdt = rdt;
    }
}

/* Typed local copy (src, scount, sdt) -> (dst, rcount, rdt) through the packed stream. */
int xm_dt_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int rcount,
               MPI_Datatype rdt)
{
    struct xm_dtype *st = xm_dt_get(sdt), *rt = xm_dt_get(rdt);
    if (!st || !rt)
        return -EINVAL;
    size_t sb = st->size * (size_t)scount, rb = rt->size * (size_t)rcount;
    if (sb > rb)
        return -EMSGSIZE;
    if (!sb)
        return 0;
    if (st->contig && (MPI_Aint)st->size == st->extent && rt->contig &&
        (MPI_Aint)rt->size == rt->extent) {
        memmove((char *)dst + rt->true_lb, (const char *)src + st->true_lb, sb);
        return 0;
    }
    char chunk[16384];
    for (size_t pos = 0; pos < sb; pos += sizeof(chunk)) {
        size_t len = sb - pos < sizeof(chunk) ? sb - pos : sizeof(chunk);
        int rc = xm_dt_pack(src, scount, st, pos, chunk, len);
        if (rc == 0)
            rc = xm_dt_unpack(dst, rcount, rt, pos, chunk, len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Reap completed requests; 1 if none is outstanding any more. */
static int reap(struct xm_sched *s)
{
    int left = 0;
    for (int i = 0; i < s->nout; i++) {
        struct xm_req *r = s->out[i];
        if (!r)
            continue;
        if (!r->done) {
            left = 1;
            continue;
        }
        if (r->status.MPI_ERROR != MPI_SUCCESS && !s->err)
            s->err = r->status.MPI_ERROR == MPI_ERR_TRUNCATE ? -EMSGSIZE : -EIO;
        xm_req_free(r);
        s->out[i] = NULL;
    }
    if (!left)
        s->nout = 0;
    return !left;
}

static int post(struct xm_sched *s, struct step *p)
{
    if (s->nout == s->outcap) {
        int cap = s->outcap ? 2 * s->outcap : 8;
        struct xm_req **n = realloc(s->out, (size_t)cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        s->out = n;
        s->outcap = cap;
    }
    struct xm_req *r;
    int w = p->peer & XM_SCHED_LOCAL ? s->c->local_w[p->peer & ~XM_SCHED_LOCAL]
                                     : xm_comm_world_rank(s->c, p->peer),
        rc;
    if (p->kind == S_SEND)
        rc = xm_isend(p->sbuf, p->count, p->dt, w, s->tag, s->ctx, NULL, 0, &r);
    else
        rc = xm_irecv(p->rbuf, p->count, p->dt, w, s->tag, s->ctx, NULL, &r);
    if (rc < 0)
        return rc;
    s->out[s->nout++] = r;
    return 0;
}

/* 1 = finished (check s->err), 0 = pending. */
int xm_sched_step(struct xm_sched *s)
{
    while (s->cur < s->n && !s->err) {
        struct step *p = &s->st[s->cur];
        int rc = 0;
        if (p->kind == S_SEND || p->kind == S_RECV) {
            rc = post(s, p);
        } else {
            if (!reap(s))
                return 0;
            if (s->err)
                break;
            if (p->kind == S_OP)
                rc = xm_op_apply_any(p->op, p->sbuf, p->rbuf, p->count, p->dt);
            else if (p->kind == S_COPY)
                rc = xm_dt_copy(p->sbuf, p->count, p->dt, p->rbuf, p->rcount, p->rdt);
        }
        if (rc < 0)
            s->err = rc;
        s->cur++;
    }
    return reap(s);
}

int xm_sched_error(const struct xm_sched *s)
{
    return s->err;
}

/* A nonblocking schedule finished: complete its request, free the schedule. */
static void finish_nb(struct xm_sched *s)
{
    struct xm_req *r = s->req;
    int err = s->err;
    r->coll_state = NULL;
    if (s->c->refs == 1) /* the communicator was freed meanwhile and goes away now */
        r->comm = NULL;
    xm_sched_free(s);
    if (err)
        r->status.MPI_ERROR = err == -EMSGSIZE ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
    xm_req_complete(r);
}

static int req_step(struct xm_req *r)
{
    struct xm_sched *s = r->coll_state;
    if (s && xm_sched_step(s))
        finish_nb(s);
    return r->done;
}

int xm_coll_progress(void)
{
    int n = 0;
    for (struct xm_sched *s = active, *next; s; s = next) {
        next = s->next_active;
        if (xm_sched_step(s)) {
            finish_nb(s);
            n++;
        }
    }
    return n;
}

int xm_sched_start(struct xm_sched *s, struct xm_req **rp)
{
    int rc;
    if (!rp) { /* blocking: run to completion here */
        int spins = 0;
        while (!xm_sched_step(s)) {
            if (xm_progress() > 0)
                spins = 0;
            else
                xm_idle(&spins);
        }
        rc = s->err;
        xm_sched_free(s);
        return rc;
    }
    if (s->err) {
        rc = s->err;
        xm_sched_free(s);
        return rc;
    }
    struct xm_req *r = xm_req_new(XM_REQ_COLL);
    if (!r) {
        xm_sched_free(s);
        return -ENOMEM;
    }
    xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    r->comm = s->c;
    r->coll_state = s;
    r->coll_step = req_step;
    s->req = r;
    hold(s, 1);
    xm_progress_hook = xm_coll_progress; /* MPI_Test loops advance schedules too */
    s->next_active = active;
    if (active)
        active->prev_active = &s->next_active;
    active = s;
    s->prev_active = &active;
    *rp = r;
    if (xm_sched_step(s)) /* post the first round now; may even finish */
        finish_nb(s);
    return 0;
}
