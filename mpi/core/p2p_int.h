/*
 * p2p_int.h - what the files of the point-to-point engine share among themselves (the
 *             public contract is p2p.h; nothing outside core/p2p*.c, match.c, rdv.c,
 *             funnel.c and progress.c includes this header).
 *
 * Owns: the request flag bits the engine adds to XM_PKT_F_*, the intrusive request
 * lists, the per-peer arrays and the few calls one engine file makes into another.
 * Which file owns what:
 *   p2p.c      init/finalize and the per-peer arrays, request completion, the eager
 *              send path and the send queue, control packets, cancelling a send, the
 *              netmod hooks, a lost peer, dropping another job's process, the
 *              blocking helpers;
 *   match.c    the posted and unexpected queues: one find-or-enqueue for every arriving
 *              envelope (EAGER and RTS), delivery of eager bytes, receives, probes,
 *              matched probes, cancelling a receive or an unexpected message, the
 *              admission of other jobs' messages;
 *   rdv.c      rendezvous: RTS, CTS/RDATA streaming, the transport's single copy and the
 *              senders it may call on for help, the peers' pids;
 *   funnel.c   every incoming packet: the header check and the dispatch;
 *   progress.c progress (with the deferred drop of another job's process), the
 *              idle policy and the waits.
 * The engine never asks which transport it holds: route() gives the one that reaches a
 * rank, and its fields (eager_max, zcopy_min) and ops (rdv_*) say how to use it.
 */
#ifndef XM_P2P_INT_H
#define XM_P2P_INT_H

#include <stddef.h>
#include <stdint.h>

#include "../dt/dtype.h"
#include "p2p.h"
#include "transport.h"
#include "xm.h"

#define F_HDR_SENT 0x100u
#define F_ACKED 0x200u
#define F_RDV 0x400u    /* send: rendezvous (completes on FIN / last RDATA) */
#define F_RDV_GO 0x800u /* send: CTS received, stream RDATA */
#define F_ZC 0x1000u    /* send: payload posted by reference, not yet written */
#define F_LMT 0x2000u   /* send: RTS sent, the transport may call on us to help (rdv.c) */
#define F_CTS 0x4000u   /* recv: CTS sent, RDATA from r->peer expected */
/* send: CANCEL sent, CANCEL_ACK due (the request stays incomplete until it comes) */
#define F_CANCELING 0x8000u
#define F_DEFERRED 0x10000u /* send: finished (datatype let go) while F_CANCELING */
/* ---- messages from other jobs' processes (core/xsec.h) ---- */
/* unexpected, from another job, on a context no communicator had yet: asked again
 * before a match */
#define F_XUNSURE 0x20000000u
#define F_XDROP 0x40000000u /* refused EAGER whose FRAGs are still due: swallowed */

struct xm_p2p_list {
    struct xm_req *head, *tail;
};

static inline void xm_p2p_list_add(struct xm_p2p_list *l, struct xm_req *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}

/* match.c: receives waiting for a message, messages waiting for a receive */
extern struct xm_p2p_list xm_p2p_posted, xm_p2p_unexp;
/* match.c: another job's message r leaves the unexpected list (core/xsec.h quota) */
void xm_match_uncharge(const struct xm_req *r);

static inline void xm_p2p_list_del(struct xm_p2p_list *l, struct xm_req *r)
{
    if (__builtin_expect(r->peer >= xm_g.size, 0) && l == &xm_p2p_unexp)
        xm_match_uncharge(r); /* gives back what find_or_queue() charged */
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

static inline int xm_p2p_on_list(const struct xm_p2p_list *l, const struct xm_req *r)
{
    for (const struct xm_req *p = l->head; p; p = p->next)
        if (p == r)
            return 1;
    return 0;
}

/* p2p.c: sends parked for want of a packet, in order per destination */
extern struct xm_p2p_list xm_p2p_sendq;
/* p2p.c, per process id (core/proc.h), grown with the process table */
extern struct xm_req **xm_p2p_inflight; /* request receiving src's fragments */
extern int *xm_p2p_pending;             /* queued sends to the id */
/* its connection broke (ERRORS_RETURN) or it was dropped (xm_p2p_drop); 2 = another
 * job's process to drop at the next progress (progress.c, xm_p2p_ndue counts them) */
extern unsigned char *xm_p2p_lost;
extern size_t xm_p2p_eager_accept; /* longest eager message taken from a peer */

/* The transport that reaches world rank dest (NULL: none). */
static inline struct xm_transport *xm_p2p_route(int dest)
{
    if (xm_g.shm && xm_g.shm->reaches(xm_g.shm, dest))
        return xm_g.shm;
    return xm_g.net;
}

/* Above this many bytes a message on t goes by rendezvous. */
static inline size_t xm_p2p_eager_limit(const struct xm_transport *t)
{
    return t ? t->eager_max : (size_t)-1;
}

static inline struct xm_pkt_hdr *xm_p2p_get_pkt(struct xm_transport *t, int dest,
                                                size_t want, void **pay, size_t *cap)
{
    return t->alloc_n ? t->alloc_n(t, dest, want, pay, cap) : t->alloc(t, dest, pay, cap);
}

/* The packed bytes of (count, dt) are the user buffer itself.  Not true of every
 * predefined type: the pair types (MPI_DOUBLE_INT, ...) are packed without their
 * padding, so their extent exceeds their size. */
static inline int xm_p2p_direct_ok(const struct xm_dtype *dt)
{
    return dt->contig && dt->true_lb == 0 && (size_t)dt->extent == dt->size;
}

/* The header of a packet of send request r (EAGER, FRAG or RTS): its envelope, its
 * flags and its handle as the cookie; len as the type wants it. */
static inline struct xm_pkt_hdr xm_p2p_send_hdr(const struct xm_req *r, uint8_t type,
                                                uint64_t len)
{
    return (struct xm_pkt_hdr){.type = type,
                               .flags = (uint8_t)(r->flags & 0xff),
                               .src = xm_g.rank,
                               .tag = r->tag,
                               .ctx = r->ctx,
                               .len = len,
                               .cookie = (uint64_t)(unsigned)r->handle};
}

/* The request a control or data packet's cookie names (our handles fit 32 bits). */
static inline struct xm_req *xm_p2p_cookie_req(uint64_t cookie)
{
    return cookie >> 32 ? NULL : xm_req_get((MPI_Request)(uint32_t)cookie);
}

/* ---- p2p.c ---- */
/* The one completion of a send or receive request (drops its datatype reference). */
void xm_p2p_complete(struct xm_req *r);
/* Push r's packets: 1 = all sent, 0 = parked, <0 = error. */
int xm_p2p_push(struct xm_req *r);
/* Send r now if nothing to its peer is parked, else queue it behind. */
void xm_p2p_push_or_queue(struct xm_req *r);
int xm_p2p_push_sends(void);
int xm_p2p_push_ctrl(void);
struct xm_p2p_ctrl;
extern struct xm_p2p_ctrl *xm_p2p_ctrlq; /* control packets waiting for a packet */
void xm_p2p_send_ctrl(int dest, int type, uint64_t cookie, uint64_t len);
void xm_p2p_send_ctrl_hdr(int dest, const struct xm_pkt_hdr *hp);
void xm_p2p_cancel_answer(struct xm_req *r, int dropped);
/* xm_p2p_drop(peer, why) is public (p2p.h); defer it to the next xm_progress() (a
 * refusal found inside a queue scan must not free the list being walked). */
void xm_p2p_drop_later(int peer);
/* why xm_p2p_drop() ends a process that sent what the wire cannot refuse */
#define XM_P2P_REFUSED_ANSWER                                                            \
    "a synchronous or rendezvous send on a context it may not use"

/* ---- match.c ---- */
/* An EAGER (with its first payload bytes) or FRAG packet, checked. */
void xm_match_eager(const struct xm_pkt_hdr *h, const void *payload, size_t paylen,
                    int unsure);
void xm_match_frag(const struct xm_pkt_hdr *h, const void *payload, size_t paylen);
/* An RTS, checked: a matching posted receive starts the transfer (rdv.c), else its
 * envelope waits unexpected. */
void xm_match_rts(const struct xm_pkt_hdr *h, const struct xm_rts *rts, int unsure);
/* The first posted receive an envelope matches, left in place (NULL: none). */
struct xm_req *xm_match_posted(int src, int tag, uint32_t ctx);
/* Take posted receive r for the message h announces (off the posted list, envelope
 * set; the sender of a synchronous message is acknowledged). */
void xm_match_take(struct xm_req *r, const struct xm_pkt_hdr *h);
/* The sender src withdraws its message (CANCEL): drop it if unmatched, answer. */
void xm_match_cancel(int src, const struct xm_pkt_hdr *h);
/* A receive's message is all there: status, truncation, completion. */
void xm_match_finish(struct xm_req *r);
/* Messages of another job's process: 0 match, 1 wait unexpected, -1 dropped. */
int xm_match_xsec_arrival(const struct xm_pkt_hdr *h, size_t paylen);

/* ---- rdv.c ---- */
int xm_rdv_init(void);
void xm_rdv_finalize(void);
/* Sender: the RTS, or after CTS the RDATA stream.  Same return as xm_p2p_push(). */
int xm_rdv_push(struct xm_req *r, struct xm_transport *t, struct xm_dtype *dt);
/* Receiver: r matched an RTS: single copy through the transport, else CTS. */
void xm_rdv_start(struct xm_req *r, int src, int tag, size_t total, uint64_t cookie,
                  uint64_t pid, uint64_t addr);
/* An RTS's pid against the one src's card names (dies on a mismatch). */
void xm_rdv_check_pid(int src, const struct xm_rts *rts);
void xm_rdv_cts(const struct xm_pkt_hdr *h);
void xm_rdv_fin(const struct xm_pkt_hdr *h);
void xm_rdv_data(const struct xm_pkt_hdr *h, const void *payload, size_t paylen);
/* r leaves the list of senders the transport may call on (FIN, CTS, cancel, loss). */
void xm_rdv_unlist(struct xm_req *r);
/* rendezvous sends whose transport may call on them to help (rdv_help) */
extern struct xm_p2p_list xm_rdv_helpers;
/* progress: let the transport call on the listed senders; the events. */
int xm_rdv_progress(void);

/* ---- progress.c ---- */
void xm_progress_init(void);
/* A send is complete; over a transport with its own queue wait until that holds
 * nothing for peer (see progress.c). */
void xm_wait_handed_over(int peer);
/* processes marked 2 in xm_p2p_lost[], dropped by the next xm_progress() */
extern int xm_p2p_ndue;

#endif
