/*
 * obj.c - handle tables for communicators and requests; the global state xm_g.
 *
 * Contract: see xm.h.  Predefined communicators are slots 0 (WORLD) and 1 (SELF) of the
 * comm table with the dynamic bit clear; everything else gets a dynamic handle.
 * Requests are allocated individually and indexed by a growing pointer table with a
 * free list of slots, so an xm_req pointer stays valid until xm_req_free().
 * Notes: the table only grows; a freed slot is reused by the next allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "mt.h"
#include "p2p.h"
#include "xm.h"

struct xm_state xm_g;
struct xm_mt xm_mt; /* core/mt.h */

struct table {
    void **slot;
    int n, cap;
    int *freelist;
    int nfree;
};

static struct table comms, reqs;

static int table_add(struct table *t, void *p)
{
    if (t->nfree > 0) {
        int i = t->freelist[--t->nfree];
        t->slot[i] = p;
        return i;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        void **s = realloc(t->slot, (size_t)cap * sizeof(*s));
        int *f = realloc(t->freelist, (size_t)cap * sizeof(*f));
        if (s)
            t->slot = s;
        if (f)
            t->freelist = f;
        if (!s || !f)
            return -ENOMEM;
        t->cap = cap;
    }
    t->slot[t->n] = p;
    return t->n++;
}

static void table_del(struct table *t, int i)
{
    if (i < 0 || i >= t->n || !t->slot[i])
        return;
    t->slot[i] = NULL;
    t->freelist[t->nfree++] = i;
}

static void *table_get(struct table *t, int i)
{
    return (i >= 0 && i < t->n) ? t->slot[i] : NULL;
}

struct xm_comm *xm_comm_get(MPI_Comm h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_COMM)
        return NULL;
    if (!(h & XM_H_DYN)) {
        if (h == MPI_COMM_WORLD)
            return xm_g.world;
        if (h == MPI_COMM_SELF)
            return xm_g.self;
        return NULL;
    }
    return table_get(&comms, (int)XM_H_INDEX(h));
}

int xm_comm_register(struct xm_comm *c)
{
    int i = table_add(&comms, c);
    if (i < 0)
        return i;
    c->handle = XM_H_MAKE(XM_K_COMM, 1, i);
    return 0;
}

void xm_comm_unregister(struct xm_comm *c)
{
    if (c->handle & XM_H_DYN)
        table_del(&comms, (int)XM_H_INDEX(c->handle));
}

/* Freed requests are kept for reuse: a blocking send or receive creates and frees one
 * each, and calloc/free cost about as much as the rest of a shared-memory message
 * (callgrind: ~300 of ~1500 instructions per ping-pong iteration). */
#define REQ_POOL_MAX 256
static struct xm_req *req_pool;
static int req_pool_n;

struct xm_req *xm_req_new(enum xm_req_kind kind)
{
    struct xm_req *r = req_pool;
    if (r) {
        req_pool = r->next;
        req_pool_n--;
        memset(r, 0, sizeof(*r));
    } else if (!(r = calloc(1, sizeof(*r)))) {
        return NULL;
    }
    int i = table_add(&reqs, r);
    if (i < 0) {
        free(r);
        errno = ENOMEM;
        return NULL;
    }
    r->handle = XM_H_MAKE(XM_K_REQ, 1, i);
    r->kind = kind;
    r->status.MPI_ERROR = MPI_SUCCESS;
    return r;
}

struct xm_req *xm_req_get(MPI_Request h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_REQ || !(h & XM_H_DYN))
        return NULL;
    return table_get(&reqs, (int)XM_H_INDEX(h));
}

void xm_req_free(struct xm_req *r)
{
    if (!r)
        return;
    /* a generalized request or a persistent collective: what it holds goes first
     * (->release, set by whoever made it); ->kind first, on the cache line this
     * function reads anyway (->release is near the end of the request) */
    if (r->kind == XM_REQ_GREQ && r->release)
        r->release(r);
    table_del(&reqs, (int)XM_H_INDEX(r->handle));
    for (int i = 0; i < 2; i++)
        if (r->kid[i]) {
            r->kid[i]->parent = NULL;
            xm_req_free(r->kid[i]);
        }
    free(r->tmp);
    /* a send or receive holds its communicator (p2p.c): the last holder frees it */
    if (r->comm && (r->kind == XM_REQ_SEND || r->kind == XM_REQ_RECV))
        xm_comm_unref(r->comm);
    if (req_pool_n < REQ_POOL_MAX) {
        r->next = req_pool;
        req_pool = r;
        req_pool_n++;
    } else {
        free(r);
    }
}

void xm_req_foreach(void (*fn)(struct xm_req *r, void *arg), void *arg)
{
    for (int i = 0; i < reqs.n; i++)
        if (reqs.slot[i])
            fn(reqs.slot[i], arg);
}

/* A child's outcome into its parent (xm_req_adopt()). */
static void child_outcome(struct xm_req *p, const struct xm_req *c)
{
    int err = p->status.MPI_ERROR;
    if (c->kind == XM_REQ_RECV) {
        int cncl = p->status.xm_count_hi_cncl & 1;
        p->status = c->status;
        p->status.xm_count_hi_cncl |= cncl;
    }
    p->status.MPI_ERROR = err != MPI_SUCCESS ? err : c->status.MPI_ERROR;
    if (c->cancelled) {
        p->cancelled = 1;
        p->status.xm_count_hi_cncl |= 1;
    }
}

unsigned long xm_req_completions;

void xm_req_complete(struct xm_req *r)
{
    r->done = 1;
    xm_req_completions++;
    xm_mt.dirty = 1; /* threads: the waiting thread may be asleep (core/mt.h) */
    struct xm_req *p = r->parent;
    if (p && p->kid_done) {
        r->parent = NULL;
        p->kid_done(p, r);
    } else if (p) {
        r->parent = NULL;
        child_outcome(p, r);
        if (--p->kids_due == 0)
            xm_req_complete(p);
    }
}

void xm_req_adopt(struct xm_req *p, struct xm_req *c, int own)
{
    if (own)
        p->kid[p->kid[0] ? 1 : 0] = c;
    if (c->done) {
        child_outcome(p, c);
        return;
    }
    c->parent = p;
    p->kids_due++;
}

void xm_req_adopt_end(struct xm_req *p)
{
    if (--p->kids_due == 0)
        xm_req_complete(p);
}
