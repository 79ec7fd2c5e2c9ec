/*
 * funnel.c - the one funnel every incoming packet of the point-to-point engine goes
 *            through (contract in p2p.h: xm_pkt_check, xm_pkt_keep, xm_handle_pkt).
 *
 * Owns: the check of every header field against the engine's state before anything is
 * read or written for a packet (a peer is not trusted: lengths are bounded by what the
 * message still lacks, cookies must name a live request of ours in the right state
 * with the sender as its peer), and the dispatch by packet type to the matcher
 * (match.c: EAGER, FRAG, RTS, CANCEL), the rendezvous (rdv.c: CTS, FIN, RDATA) and the
 * send side (p2p.c: CANCEL_ACK, SSEND_ACK).
 */
#include <string.h>

#include "p2p_int.h"
#include "proc.h"

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
        if (h->len > xm_p2p_eager_accept && src != xm_g.rank)
            return "EAGER: len above the eager limit (LOOM_MPI_EAGER_ACCEPT)";
        if (xm_p2p_inflight[src])
            return "EAGER: a new message while fragments of the last one are due";
        return NULL;
    case XM_PKT_FRAG:
        r = xm_p2p_inflight[src];
        if (!r)
            return "FRAG: no message in flight";
        if (paylen != h->len || paylen > r->total - r->pos)
            return "FRAG: len beyond the message";
        return NULL;
    case XM_PKT_RTS:
        if (paylen != sizeof(struct xm_rts))
            return "RTS: payload size";
        if (xm_p2p_inflight[src])
            return "RTS: a new message while fragments of the last one are due";
        return NULL; /* its pid: xm_handle_pkt(), with the payload */
    case XM_PKT_CTS:
    case XM_PKT_FIN:
        if (paylen)
            return "CTS/FIN: payload";
        r = xm_p2p_cookie_req(h->cookie);
        if (!r || r->kind != XM_REQ_SEND ||
            (r->flags & (F_RDV | F_HDR_SENT | F_RDV_GO)) != (F_RDV | F_HDR_SENT) ||
            r->done || r->peer != src)
            return "CTS/FIN: cookie names no rendezvous send to this rank";
        return NULL;
    case XM_PKT_RDATA:
        r = xm_p2p_cookie_req(h->cookie);
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
        r = xm_p2p_cookie_req(h->cookie);
        if (!r || r->kind != XM_REQ_SEND || !(r->flags & F_CANCELING) || r->peer != src)
            return "CANCEL_ACK: cookie names no send of ours being cancelled at this "
                   "rank";
        return NULL;
    case XM_PKT_SSEND_ACK:
        if (paylen)
            return "SSEND_ACK: payload";
        r = xm_p2p_cookie_req(h->cookie);
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
    if (h->type != XM_PKT_RDATA || !(r = xm_p2p_cookie_req(h->cookie)))
        return paylen;
    size_t room = r->bytes > r->pos ? r->bytes - r->pos : 0;
    return paylen < room ? paylen : room;
}

void xm_handle_pkt(const struct xm_pkt_hdr *h, const void *payload, size_t paylen)
{
    const char *bad = xm_pkt_check(h, paylen);
    if (bad)
        xm_die("protocol error in a packet from rank %d: %s", h->src, bad);
    xm_handle_pkt_checked(h, payload, paylen);
}

void xm_handle_pkt_checked(const struct xm_pkt_hdr *h, const void *payload, size_t paylen)
{
    int src = h->src;
    struct xm_req *r;
    int unsure = 0;
    if (__builtin_expect(src >= xm_g.size, 0) &&
        (xm_p2p_lost[src] || ((h->type == XM_PKT_EAGER || h->type == XM_PKT_RTS) &&
                              (unsure = xm_match_xsec_arrival(h, paylen)) < 0)))
        return; /* dropped process (xm_p2p_drop) or refused message */
    switch (h->type) {
    case XM_PKT_EAGER:
        xm_match_eager(h, payload, paylen, unsure);
        break;
    case XM_PKT_FRAG:
        xm_match_frag(h, payload, paylen);
        break;
    case XM_PKT_RTS: {
        struct xm_rts rts;
        memcpy(&rts, payload, sizeof(rts));
        /* a rank a single copy may read from names its own process (its KVS card) */
        xm_rdv_check_pid(src, &rts);
        xm_match_rts(h, &rts, unsure);
        break;
    }
    case XM_PKT_CTS:
        xm_rdv_cts(h);
        break;
    case XM_PKT_FIN:
        xm_rdv_fin(h);
        break;
    case XM_PKT_RDATA:
        xm_rdv_data(h, payload, paylen);
        break;
    case XM_PKT_CANCEL:
        xm_match_cancel(src, h);
        break;
    case XM_PKT_CANCEL_ACK:
        xm_p2p_cancel_answer(xm_p2p_cookie_req(h->cookie), h->len == 1);
        break;
    case XM_PKT_SSEND_ACK:
        r = xm_p2p_cookie_req(h->cookie);
        r->flags |= F_ACKED;
        if ((r->flags & F_HDR_SENT) && r->pos >= r->total && !(r->flags & F_ZC) &&
            !r->done)
            xm_p2p_complete(r);
        break;
    }
}
