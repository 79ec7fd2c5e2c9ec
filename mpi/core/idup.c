/*
 * idup.c - MPI_Comm_idup's nonblocking context-id agreement: rounds of a nonblocking
 *          allreduce (BAND) of id masks on the parent, progressed by the engine, and
 *          the request that completes with the new communicator.
 *
 * Why rounds: two agreements in flight at once (idups of different communicators, a
 * blocking dup meanwhile) must never pick the same id for overlapping members, so an
 * id a round offers is reserved here (xm_ctx_reserved, core/comm.c) until the round
 * ends, and at any time at most one round per process offers the real mask (the
 * "holder"); the others offer nothing, get an empty result and go again.  The one
 * allowed to offer is the ordered agreement with the lowest key (parent ctx, then the
 * parent's collective sequence number at the call).  "Ordered" = its first round
 * ended here without an id, which needs every member's first round: an ordered
 * agreement has been started at all its members.  That is what makes the order safe:
 * the lowest ordered agreement of the job is, at each member, ordered and lowest or
 * still in a first round that will end, so it gets the mask everywhere and succeeds,
 * then the next goes (no livelock).  Ordering agreements merely pending would
 * deadlock when a program starts them in different orders that depend on each
 * other: rank 1 has the idup of parent A (lowest key) in flight and waits for that
 * of parent B, rank 0 starts A's only after B's completed (MPICH's
 * threads/comm/idup_deadlock); B would offer nothing at rank 1 for ever.  A first
 * round offers the "eager" ids (1024..1279) if no other first round holds them, so
 * one round is enough when agreements do not overlap.  A round whose result has an
 * id: every member offered ids it reserved, all take the same lowest id.  Each round runs at a collective sequence number
 * of its own (bit 28 set: disjoint from the parent's own collectives, which keep
 * theirs in step whatever the other ranks' rounds do meanwhile).
 * Blocking constructors (xm_ctx_alloc) offer free ids minus the reserved ones; rounds
 * offer only the upper half of the id space (1024..2047), so a blocking constructor
 * meanwhile always has ids to offer (the lower half), and 1024 communicators made by
 * idup may exist at once.
 * Intercommunicator parents: the allreduce of an intercommunicator gives each group
 * the other group's AND, so a round there is two of them: first my offer, then my
 * offer ANDed with the other group's result; after the second every member of both
 * groups holds the AND of all offers (zero if anyone offered nothing), and the round
 * ends as above.  The idup of an intercommunicator is then as nonblocking as any.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "comm.h"
#include "p2p.h"

#define ROUND_STRIDE 16u   /* sequence numbers one round may use */
#define SEQ_ROUNDS 4096u   /* rounds before the sequence numbers wrap */
#define NB_FIRST_WORD 32u  /* agreements offer ids 1024..2047 only */
#define EAGER_END_WORD 40u /* first rounds offer ids 1024..1279 only */

struct agree {
    struct agree *next;      /* pending list, by key */
    uint64_t key;
    struct xm_comm *parent;  /* referenced until the end */
    MPI_Comm *newcomm;       /* the program's variable, written at completion */
    struct xm_req *req;      /* the MPI_Comm_idup request */
    uint32_t seq_base;
    unsigned round;
    int holder;              /* this round offered reserved ids: 1 mask, 2 eager ids */
    int ordered;             /* the first round ended without an id: in `pending` */
    uint32_t mask[XM_CTX_MASK_WORDS];
    uint32_t offer[XM_CTX_MASK_WORDS];
    uint32_t *ctx_out;       /* only an id is wanted (xm_ctx_agree) */
    int phase;               /* intercommunicator rounds: 0 first, 1 second allreduce */
    uint32_t mine[XM_CTX_MASK_WORDS]; /* intercommunicator rounds: what I contribute */
};

static struct agree *pending; /* ordered agreements, by key */
static int mask_held;  /* a round of ours offers the real mask now */
static int eager_held; /* a first round of ours offers the eager ids now */

static void unlink_agree(struct agree *a)
{
    for (struct agree **pp = &pending; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            return;
        }
}

static void release_offer(struct agree *a)
{
    if (!a->holder)
        return;
    for (int i = 0; i < XM_CTX_MASK_WORDS; i++)
        xm_ctx_reserved[i] &= ~a->offer[i];
    if (a->holder == 2)
        eager_held = 0;
    else
        mask_held = 0;
    a->holder = 0;
}

/* Into `pending` by key: from now on the lowest there holds the mask. */
static void order_agree(struct agree *a)
{
    struct agree **pp = &pending;
    while (*pp && (*pp)->key < a->key)
        pp = &(*pp)->next;
    a->next = *pp;
    *pp = a;
    a->ordered = 1;
}

/* The end: build the communicator (or fail) and complete the request. */
static void finish(struct agree *a, int rc, uint32_t ctx)
{
    struct xm_req *r = a->req;
    struct xm_comm *c = a->parent;
    if (a->ctx_out) { /* xm_ctx_agree(): the caller builds what it builds */
        if (rc == 0)
            *a->ctx_out = ctx;
        else
            r->status.MPI_ERROR = rc == -ENOSPC ? MPI_ERR_INTERN : MPI_ERR_OTHER;
        unlink_agree(a);
        r->coll_state = NULL;
        free(a);
        xm_req_complete(r);
        return;
    }
    *a->newcomm = MPI_COMM_NULL;
    if (rc == 0) {
        int *w = malloc((size_t)(c->size ? c->size : 1) * sizeof(int));
        int *lw = c->inter ? malloc((size_t)c->local_size * sizeof(int)) : NULL;
        if (w)
            for (int i = 0; i < c->size; i++)
                w[i] = xm_comm_world_rank(c, i);
        if (lw)
            memcpy(lw, c->local_w, (size_t)c->local_size * sizeof(int));
        struct xm_comm *n = w && (lw || !c->inter) ? xm_comm_new(c->size, w, ctx, c) : NULL;
        if (!n && w && c->inter && !lw)
            free(w);
        if (n && c->inter) { /* the same two groups (api/intercomm.c's layout) */
            n->inter = 1;
            n->local_size = c->local_size;
            n->local_w = lw;
            n->rank = c->rank;
        } else {
            free(lw);
        }
        if (!n) {
            xm_ctx_release(ctx);
            r->status.MPI_ERROR = MPI_ERR_NO_MEM;
        } else if ((rc = xm_attr_copy_all(c, n)) != MPI_SUCCESS ||
                   (c->topo && !(n->topo = xm_topo_dup(c->topo)) &&
                    (rc = MPI_ERR_NO_MEM))) {
            xm_attr_delete_all(n);
            xm_comm_release(n);
            r->status.MPI_ERROR = rc;
        } else {
            *a->newcomm = n->handle;
        }
    } else {
        r->status.MPI_ERROR = rc == -ENOSPC ? MPI_ERR_INTERN : MPI_ERR_OTHER;
    }
    unlink_agree(a);
    xm_comm_unref(c);
    r->coll_state = NULL;
    free(a);
    xm_req_complete(r);
}

/* A round's result is in a->mask: 1 = the agreement ended. */
static int round_result(struct agree *a, int err)
{
    release_offer(a);
    if (err) {
        finish(a, -EIO, 0);
        return 1;
    }
    int any = 0;
    for (int i = 0; i < XM_CTX_MASK_WORDS; i++)
        any |= a->mask[i] != 0;
    if (any) {
        uint32_t ctx;
        int rc = xm_ctx_take(a->mask, &ctx);
        finish(a, rc, ctx);
        return 1;
    }
    if (!a->ordered)
        order_agree(a);
    return 0;
}

static void kid_done(struct xm_req *p, struct xm_req *c);
static int second_half(struct agree *a);

/* Start rounds until one is in flight or the agreement ended. */
static void advance(struct agree *a)
{
    for (;;) {
        /* free the previous round's allreduce(s) (not in its completion any more) */
        for (int i = 0; i < 2; i++)
            if (a->req->kid[i]) {
                xm_req_free(a->req->kid[i]);
                a->req->kid[i] = NULL;
            }
        a->phase = 0;
        int first = !a->ordered;
        if (first ? !eager_held : !mask_held && pending == a) {
            xm_ctx_offer(a->offer);
            /* the lower half stays for blocking constructors meanwhile */
            memset(a->offer, 0, NB_FIRST_WORD * sizeof(a->offer[0]));
            if (first)
                memset(a->offer + EAGER_END_WORD, 0,
                       (XM_CTX_MASK_WORDS - EAGER_END_WORD) * sizeof(a->offer[0]));
            for (int i = 0; i < XM_CTX_MASK_WORDS; i++)
                xm_ctx_reserved[i] |= a->offer[i];
            memcpy(a->mask, a->offer, sizeof(a->mask));
            a->holder = first ? 2 : 1;
            if (first)
                eager_held = 1;
            else
                mask_held = 1;
        } else {
            memset(a->mask, 0, sizeof(a->mask));
        }
        struct xm_comm *c = a->parent;
        uint32_t save = c->coll_seq;
        /* Round r and r + SEQ_ROUNDS never meet: a member starts round r + 1 only
         * after its own part of round r, and round r + 1 needs every member's part,
         * so no member is more than one round ahead of another.  The count is not
         * bounded: an agreement waiting behind a lower one goes round (empty
         * results) for as long as that one takes, e.g. while a member sits in a
         * blocking dup on a loaded node; 4096 rounds were spent in under a second
         * over TCP and failed the idup (MPI_ERR_INTERN). */
        c->coll_seq = a->seq_base + (a->round++ % SEQ_ROUNDS) * ROUND_STRIDE;
        struct xm_req *k = NULL;
        int rc;
        if (c->inter) {
            memcpy(a->mine, a->mask, sizeof(a->mine));
            rc = xm_inter_allreduce(a->mine, a->mask, XM_CTX_MASK_WORDS, MPI_UINT32_T,
                                    MPI_BAND, c, &k);
        } else {
            rc = xm_icoll_allreduce(MPI_IN_PLACE, a->mask, XM_CTX_MASK_WORDS,
                                    MPI_UINT32_T, MPI_BAND, c, &k);
        }
        c->coll_seq = save;
        if (rc < 0) {
            round_result(a, 1);
            return;
        }
        a->req->kid[0] = k;
        if (!k->done) {
            k->parent = a->req; /* kid_done() goes on */
            return;
        }
        if (c->inter && second_half(a))
            return;
        if (round_result(a, k->status.MPI_ERROR != MPI_SUCCESS))
            return;
    }
}

/* An intercommunicator round's first allreduce (kid[0]) completed (a->mask = the
 * other group's AND): start the second (kid[1]) with my offer ANDed with it.
 * 1 = the round goes on (or failed and ended); 0 = the round's result is in a->mask
 * (this was the second one, or it completed at once). */
static int second_half(struct agree *a)
{
    struct xm_req *k = a->req->kid[0];
    if (a->phase == 1)
        return 0;
    if (k->status.MPI_ERROR != MPI_SUCCESS) {
        round_result(a, 1);
        return 1;
    }
    a->phase = 1;
    for (int i = 0; i < XM_CTX_MASK_WORDS; i++)
        a->mine[i] &= a->mask[i];
    struct xm_comm *c = a->parent;
    uint32_t save = c->coll_seq;
    c->coll_seq = a->seq_base + ((a->round - 1) % SEQ_ROUNDS) * ROUND_STRIDE + 1;
    struct xm_req *k2 = NULL;
    int rc = xm_inter_allreduce(a->mine, a->mask, XM_CTX_MASK_WORDS, MPI_UINT32_T,
                                MPI_BAND, c, &k2);
    c->coll_seq = save;
    if (rc < 0) {
        round_result(a, 1);
        return 1;
    }
    a->req->kid[1] = k2;
    if (!k2->done) {
        k2->parent = a->req; /* kid_done() goes on */
        return 1;
    }
    if (k2->status.MPI_ERROR != MPI_SUCCESS) {
        round_result(a, 1);
        return 1;
    }
    return 0;
}

static void kid_done(struct xm_req *p, struct xm_req *k)
{
    struct agree *a = p->coll_state;
    if (!a)
        return;
    if (a->parent->inter && second_half(a))
        return;
    if (round_result(a, k->status.MPI_ERROR != MPI_SUCCESS))
        return;
    advance(a);
}

static int agree_start(struct xm_comm *c, MPI_Comm *newcomm, uint32_t *ctx_out,
                       struct xm_req **rp);

int xm_comm_idup(struct xm_comm *c, MPI_Comm *newcomm, struct xm_req **rp)
{
    return agree_start(c, newcomm, NULL, rp);
}

/* MPI_THREAD_MULTIPLE: the blocking constructors' id, agreed the way
 * an idup agrees (xm_ctx_alloc calls it when the lock is on).  A plain allreduce of
 * free masks is not enough there: two threads constructing on different parents at
 * once would both offer the same free ids, and overlapping members would then take
 * one id for two communicators.  Rounds serialize the offers per process (above). */
int xm_ctx_agree(struct xm_comm *c, uint32_t *ctx)
{
    struct xm_req *r;
    uint32_t got = 0;
    int rc = agree_start(c, NULL, &got, &r);
    if (rc < 0)
        return rc;
    xm_wait(r);
    rc = r->status.MPI_ERROR == MPI_SUCCESS ? 0 : -ENOSPC;
    xm_req_free(r);
    if (rc == 0)
        *ctx = got;
    return rc;
}

static int agree_start(struct xm_comm *c, MPI_Comm *newcomm, uint32_t *ctx_out,
                       struct xm_req **rp)
{
    struct agree *a = calloc(1, sizeof(*a));
    struct xm_req *r = a ? xm_req_new(XM_REQ_GREQ) : NULL;
    if (!r) {
        free(a);
        return -ENOMEM;
    }
    xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    r->kid_done = kid_done;
    r->coll_state = a;
    /* the call's place among the parent's collectives: the same at every member */
    uint32_t k = c->coll_seq++;
    a->key = (uint64_t)c->ctx << 32 | k;
    a->seq_base = 0x10000000u | (k & 0xfffu) << 16;
    a->parent = c;
    a->ctx_out = ctx_out;
    if (!ctx_out) { /* an id only: the caller holds c until it has it */
        c->refs++;
        a->newcomm = newcomm;
        *newcomm = MPI_COMM_NULL;
    }
    a->req = r;
    *rp = r;
    if (c->size == 1 && !c->inter) {
        /* nobody to agree with: any id free and not offered here will do (rounds
         * would complete at once, and while another agreement holds the mask they
         * would spin) */
        uint32_t ctx;
        xm_ctx_offer(a->mask);
        int rc = xm_ctx_take(a->mask, &ctx);
        finish(a, rc, ctx);
        return 0;
    }
    advance(a);
    return 0;
}
