/*
 * sessboot.c - MPI_Comm_create_from_group's context-id agreement (contract and
 *              protocol in sessboot.h): control messages on XM_SESS_CTX, the inbox
 *              that sorts them by the string tag they name, the leader's and the
 *              members' rounds.
 *
 * Why an inbox and not a receive per message: the matcher knows (source, int tag,
 * context); a string tag cannot be made into an int tag without collisions, and a
 * receive that took another call's message could not give it back.  So every
 * message on XM_SESS_CTX is taken out of the matcher at once (whichever call of this
 * process waits drains them all), checked, and queued here; a call takes from the
 * queue only the messages whose full tag and leader are its own, in arrival order
 * (per-source FIFO of the engine is kept: one queue, appended in arrival order).
 * Under MPI_THREAD_MULTIPLE the global lock (core/mt.h) guards the queue as every
 * other engine state; a thread that queues another thread's message has changed
 * state, so the waiting threads are kicked (xm_mt_kick) as the engine does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "mt.h"
#include "p2p.h"
#include "sessboot.h"
#include "xm.h"

_Static_assert(XM_SB_MASK_WORDS == XM_CTX_MASK_WORDS, "one mask size");

struct inmsg {
    struct inmsg *next;
    int src; /* world rank of the sender */
    struct xm_sb_msg m;
};
static struct inmsg *in_head, **in_tail = &in_head;

/* Take every message on XM_SESS_CTX out of the matcher into the inbox; 1 if any. */
static int drain(void)
{
    int got = 0;
    for (;;) {
        MPI_Status st;
        struct xm_req *u = xm_improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, XM_SESS_CTX, &st);
        if (!u)
            return got;
        struct inmsg *e = malloc(sizeof(*e));
        static struct xm_sb_msg sink;
        void *buf = e ? (void *)&e->m : (void *)&sink;
        struct xm_req *r;
        if (xm_mrecv(u, buf, (int)sizeof(struct xm_sb_msg), MPI_BYTE, NULL, &r) < 0) {
            free(e);
            continue;
        }
        xm_wait(r);
        size_t n = xm_status_bytes(&r->status);
        int ok = r->status.MPI_ERROR == MPI_SUCCESS;
        int src = r->status.MPI_SOURCE;
        xm_req_free(r);
        struct xm_sb_msg m;
        if (!e || !ok || xm_sb_parse(buf, n, &m) != NULL) {
            free(e); /* malformed or truncated: dropped (a peer of this job sent it) */
            continue;
        }
        e->m = m;
        e->src = src;
        e->next = NULL;
        *in_tail = e;
        in_tail = &e->next;
        got = 1;
    }
}

/* The first queued message from src of this kind/round for (tag, leader), unlinked. */
static struct inmsg *take(int src, uint32_t kind, uint32_t round, const char *tag,
                          int leader)
{
    for (struct inmsg **pp = &in_head; *pp; pp = &(*pp)->next) {
        struct inmsg *e = *pp;
        if (e->src == src && e->m.kind == kind && e->m.round == round &&
            e->m.leader == (uint32_t)leader && strcmp(e->m.tag, tag) == 0) {
            *pp = e->next;
            if (in_tail == &e->next)
                in_tail = pp;
            return e;
        }
    }
    return NULL;
}

/* Wait (engine idle policy) until take() finds the message; the caller frees it. */
static struct inmsg *await(int src, uint32_t kind, uint32_t round, const char *tag,
                           int leader)
{
    int spins = 0;
    for (;;) {
        struct inmsg *e = take(src, kind, round, tag, leader);
        if (e)
            return e;
        xm_progress();
        if (drain()) {
            if (xm_mt.on)
                xm_mt.dirty = 1; /* other threads' messages may be among them */
            continue;
        }
        xm_idle(&spins);
    }
}

static int send_msg(int dest, uint32_t kind, uint32_t round, uint32_t value, int n,
                    int leader, const char *tag, const uint32_t *mask)
{
    struct xm_sb_msg m;
    memset(&m, 0, sizeof(m));
    m.magic = XM_SB_MAGIC;
    m.kind = kind;
    m.round = round;
    m.value = value;
    m.nmemb = (uint32_t)n;
    m.leader = (uint32_t)leader;
    m.taglen = (uint32_t)strlen(tag);
    memcpy(m.tag, tag, m.taglen);
    if (mask)
        memcpy(m.mask, mask, sizeof(m.mask));
    return xm_send(&m, (int)sizeof(m), MPI_BYTE, dest, 0, XM_SESS_CTX);
}

/* a random set bit of mask (round > 0), the lowest in round 0; -1 if none */
static int pick(const uint32_t *mask, uint32_t round)
{
    int n = 0;
    for (int i = 0; i < XM_SB_MASK_WORDS; i++)
        n += __builtin_popcount(mask[i]);
    if (!n)
        return -1;
    int k = round ? (int)((unsigned)rand() % (unsigned)n) : 0;
    for (int i = 0; i < XM_SB_MASK_WORDS; i++)
        for (uint32_t m = mask[i]; m; m &= m - 1)
            if (k-- == 0)
                return i * 32 + __builtin_ctz(m);
    return -1;
}

#define SB_NONE 0xffffffffu  /* PICK: no id free everywhere this round: go again */
#define SB_ABORT 0xfffffffeu /* PICK: the members disagree on the group: give up */

static int leader_rounds(const char *tag, int n, const int *w, uint32_t *ctx)
{
    int me = w[0];
    for (uint32_t round = 0; round < XM_SB_ROUNDS; round++) {
        uint32_t mask[XM_SB_MASK_WORDS];
        xm_ctx_offer(mask);
        int same = 1;
        for (int i = 1; i < n; i++) {
            struct inmsg *e = await(w[i], XM_SB_OFFER, round, tag, me);
            same &= e->m.nmemb == (uint32_t)n;
            for (int k = 0; k < XM_SB_MASK_WORDS; k++)
                mask[k] &= e->m.mask[k];
            free(e);
        }
        int id = same ? pick(mask, round) : -1;
        uint32_t c = !same ? SB_ABORT : id < 0 ? SB_NONE : (uint32_t)id * 2u;
        /* the id may have gone here since the offer (another agreement of ours) */
        int mine = id >= 0 && xm_ctx_claim(c) == 0;
        int ok = mine, rc = 0;
        for (int i = 1; i < n && rc == 0; i++)
            rc = send_msg(w[i], XM_SB_PICK, round, c, n, me, tag, NULL);
        if (rc < 0 || !same) {
            if (mine)
                xm_ctx_release(c);
            return rc < 0 ? rc : -EINVAL;
        }
        for (int i = 1; i < n; i++) {
            struct inmsg *e = await(w[i], XM_SB_VOTE, round, tag, me);
            ok &= e->m.value == 1;
            free(e);
        }
        for (int i = 1; i < n && rc == 0; i++)
            rc = send_msg(w[i], XM_SB_DONE, round, (uint32_t)ok, n, me, tag, NULL);
        if (ok && rc == 0) {
            *ctx = c;
            return 0;
        }
        if (mine)
            xm_ctx_release(c);
        if (rc < 0)
            return rc;
    }
    return -ENOSPC;
}

static int member_rounds(const char *tag, int n, const int *w, uint32_t *ctx)
{
    int leader = w[0];
    for (uint32_t round = 0; round < XM_SB_ROUNDS; round++) {
        uint32_t mask[XM_SB_MASK_WORDS];
        xm_ctx_offer(mask);
        int rc = send_msg(leader, XM_SB_OFFER, round, 0, n, leader, tag, mask);
        if (rc < 0)
            return rc;
        struct inmsg *e = await(leader, XM_SB_PICK, round, tag, leader);
        uint32_t c = e->m.value;
        free(e);
        if (c == SB_ABORT)
            return -EINVAL;
        int mine = c != SB_NONE && xm_ctx_claim(c) == 0;
        if ((rc = send_msg(leader, XM_SB_VOTE, round, (uint32_t)mine, n, leader, tag,
                           NULL)) < 0) {
            if (mine)
                xm_ctx_release(c);
            return rc;
        }
        e = await(leader, XM_SB_DONE, round, tag, leader);
        int ok = e->m.value == 1;
        free(e);
        if (ok && mine) {
            *ctx = c;
            return 0;
        }
        if (mine)
            xm_ctx_release(c);
    }
    return -ENOSPC;
}

int xm_sb_agree(const char *tag, int n, const int *w, int me, uint32_t *ctx)
{
    if (strlen(tag) >= XM_SB_TAG_MAX || n < 1 || me < 0 || me >= n)
        return -EINVAL;
    if (n == 1) { /* alone: any id free here */
        uint32_t mask[XM_SB_MASK_WORDS];
        xm_ctx_offer(mask);
        int id = pick(mask, 0);
        if (id < 0)
            return -ENOSPC;
        *ctx = (uint32_t)id * 2u;
        return xm_ctx_claim(*ctx);
    }
    return me == 0 ? leader_rounds(tag, n, w, ctx) : member_rounds(tag, n, w, ctx);
}
