/*
 * rdv.c - rendezvous, the large-message protocol of the point-to-point engine
 *         (contract in p2p.h and pkt.h, internals in p2p_int.h).
 *
 * Owns: both sides of a message above the transport's eager_max.  The sender posts an
 * RTS naming where its packed bytes are (its pid and an address); the receiver that
 * matches it (match.c) either copies the bytes itself through the transport's single
 * copy (rdv_read: shm uses CMA, and may call on the sender to help, rdv_offer and
 * rdv_help) and sends FIN, or asks for them with CTS and gets RDATA packets (all at
 * once by reference when the transport has post_ref, else packet by packet).  The
 * sender completes on FIN, or once its last RDATA packet left.  Also: the list of
 * senders whose transport may call on them, and the pid each peer's KVS card names
 * (the only pid a single copy is ever made with).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "p2p_int.h"
#include "proc.h"

struct xm_p2p_list xm_rdv_helpers;
static int *peer_pid; /* world rank -> pid from its KVS card; 0 unknown, -1 none */
static int pid_cap;

/* the helper list has its own links (lmt_next/lmt_prev): a send goes on it from
 * xm_rdv_push() while it may still be on the send queue (push_sends() takes it off after
 * push() returns), and sharing next/prev there corrupted both lists (a parked RTS: with
 * many large sends outstanding the same send was streamed twice, "RDATA ... no receive").
 */
static void lmt_add(struct xm_req *r)
{
    r->lmt_next = NULL;
    r->lmt_prev = xm_rdv_helpers.tail;
    if (xm_rdv_helpers.tail)
        xm_rdv_helpers.tail->lmt_next = r;
    else
        xm_rdv_helpers.head = r;
    xm_rdv_helpers.tail = r;
}

static void lmt_del(struct xm_req *r)
{
    if (r->lmt_prev)
        r->lmt_prev->lmt_next = r->lmt_next;
    else
        xm_rdv_helpers.head = r->lmt_next;
    if (r->lmt_next)
        r->lmt_next->lmt_prev = r->lmt_prev;
    else
        xm_rdv_helpers.tail = r->lmt_prev;
    r->lmt_next = r->lmt_prev = NULL;
}

void xm_rdv_unlist(struct xm_req *r)
{
    if (r->flags & F_LMT) {
        r->flags &= ~F_LMT;
        lmt_del(r);
    }
}

int xm_rdv_progress(void)
{
    int n = 0;
    for (struct xm_req *r = xm_rdv_helpers.head; r; r = r->lmt_next) {
        struct xm_transport *t = xm_p2p_route(r->peer);
        if (t && t->rdv_help)
            n += t->rdv_help(t, r->peer, (uint32_t)(unsigned)r->handle);
    }
    return n;
}

int xm_rdv_init(void)
{
    int n = xm_proc_capacity() > xm_g.size ? xm_proc_capacity() : xm_g.size;
    peer_pid = calloc((size_t)n, sizeof(*peer_pid));
    if (!peer_pid)
        return -ENOMEM;
    pid_cap = n;
    return 0;
}

void xm_rdv_finalize(void)
{
    free(peer_pid);
    peer_pid = NULL;
    pid_cap = 0;
}

int xm_peer_pid(int rank)
{
    if (!peer_pid || rank < 0 || rank >= xm_g.size || rank >= pid_cap)
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

int xm_rdv_region(uint32_t cookie, int dest, uint64_t *addr, size_t *len)
{
    struct xm_req *r = xm_p2p_cookie_req(cookie);
    if (!r || r->kind != XM_REQ_SEND ||
        (r->flags & (F_RDV | F_HDR_SENT)) != (F_RDV | F_HDR_SENT) || r->done ||
        r->peer != dest)
        return -ENOENT;
    *addr = (uint64_t)(uintptr_t)(r->tmp ? r->tmp : r->buf);
    *len = r->total;
    return 0;
}

/* ---- sender ---- */

/* Where the packed bytes of a rendezvous send are (packs derived types once). */
static int rdv_source(struct xm_req *r, struct xm_dtype *dt, uint64_t *addr)
{
    if (xm_p2p_direct_ok(dt)) {
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

int xm_rdv_push(struct xm_req *r, struct xm_transport *t, struct xm_dtype *dt)
{
    void *pay;
    size_t cap;
    if (!(r->flags & F_HDR_SENT)) {
        struct xm_rts rts = {.pid = (uint64_t)getpid()};
        int rc = rdv_source(r, dt, &rts.addr);
        if (rc < 0)
            return rc;
        struct xm_pkt_hdr *h = xm_p2p_get_pkt(t, r->peer, sizeof(rts), &pay, &cap);
        if (!h)
            return 0;
        *h = xm_p2p_send_hdr(r, XM_PKT_RTS, r->total);
        memcpy(pay, &rts, sizeof(rts));
        t->post(t, r->peer, h, sizeof(rts));
        r->flags |= F_HDR_SENT;
        if (t->rdv_offer && t->rdv_offer(t, r->total)) {
            r->flags |= F_LMT; /* the receiver may ask us to help copy */
            lmt_add(r);
        }
        return 1; /* waits for FIN or CTS, off the send queue */
    }
    if (t->post_ref && r->pos < r->total) {
        /* the rest in one packet, written from the packed bytes in place */
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
        struct xm_pkt_hdr *h = xm_p2p_get_pkt(t, r->peer, r->total - r->pos, &pay, &cap);
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
    xm_p2p_complete(r);
    return 1;
}

void xm_rdv_cts(const struct xm_pkt_hdr *h)
{
    struct xm_req *r = xm_p2p_cookie_req(h->cookie);
    xm_rdv_unlist(r);
    r->flags |= F_RDV_GO;
    r->cookie_ack = h->len;
    r->pos = 0;
    xm_p2p_push_or_queue(r);
}

void xm_rdv_fin(const struct xm_pkt_hdr *h)
{
    struct xm_req *r = xm_p2p_cookie_req(h->cookie);
    xm_rdv_unlist(r);
    r->pos = r->total;
    xm_p2p_complete(r);
}

/* ---- receiver ---- */

/* Copy the n bytes at the sender's addr into r's buffer through t's single copy,
 * straight into the buffer when it is contiguous, else through a bounce buffer in
 * chunks of at most 1 MiB.  0 / -errno. */
static int single_copy(struct xm_transport *t, struct xm_req *r, int src, uint32_t cookie,
                       int pid, uint64_t addr, size_t n)
{
    struct xm_dtype *dt = xm_dt_get(r->dt);
    if (xm_p2p_direct_ok(dt))
        return t->rdv_read(t, r->buf, n, src, cookie, pid, addr, 1);
    size_t chunk = n < (1u << 20) ? n : (1u << 20);
    char *bounce = malloc(chunk ? chunk : 1);
    if (!bounce)
        return -ENOMEM;
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < chunk ? n - done : chunk;
        int rc = t->rdv_read(t, bounce, want, src, cookie, pid, addr + done, 0);
        if (rc < 0) {
            free(bounce);
            return rc;
        }
        xm_dt_unpack(r->buf, r->count, dt, done, bounce, want);
        done += want;
    }
    free(bounce);
    return 0;
}

void xm_rdv_start(struct xm_req *r, int src, int tag, size_t total, uint64_t cookie,
                  uint64_t pid, uint64_t addr)
{
    r->peer = src;
    r->tag = tag;
    r->total = total;
    r->pos = 0;
    size_t n = total < r->bytes ? total : r->bytes;
    struct xm_transport *t = xm_p2p_route(src);
    /* only from the process that src's own KVS card names (xm_rdv_check_pid() refused
     * an RTS naming another): never a pid a packet alone asks for */
    if (t && t->rdv_read && (int)pid == xm_peer_pid(src)) {
        int rc = single_copy(t, r, src, (uint32_t)cookie, (int)pid, addr, n);
        if (rc == -EOWNERDEAD) {
            xm_peer_lost(src, "it died during a large transfer");
            return;
        }
        if (rc == 0) {
            r->pos = total;
            xm_match_finish(r);
            xm_p2p_send_ctrl(src, XM_PKT_FIN, cookie, 0);
            return;
        }
    }
    r->flags |= F_CTS; /* RDATA from src may now fill r (xm_pkt_check) */
    xm_p2p_send_ctrl(src, XM_PKT_CTS, cookie, (uint64_t)(unsigned)r->handle);
}

void xm_rdv_check_pid(int src, const struct xm_rts *rts)
{
    if (src == xm_g.rank)
        return;
    struct xm_transport *t = xm_p2p_route(src);
    if (!t || !t->rdv_read)
        return;
    int pid = xm_peer_pid(src); /* unknown: xm_rdv_start() takes the CTS path */
    if (pid > 0 && rts->pid != (uint64_t)pid)
        xm_die("protocol error in a packet from rank %d: %s", src,
               "RTS: pid is not the one the rank's KVS card names");
}

void xm_rdv_data(const struct xm_pkt_hdr *h, const void *payload, size_t paylen)
{
    struct xm_req *r = xm_p2p_cookie_req(h->cookie);
    if (r->pos < r->bytes) {
        size_t m = r->bytes - r->pos < paylen ? r->bytes - r->pos : paylen;
        xm_dt_unpack(r->buf, r->count, xm_dt_get(r->dt), r->pos, payload, m);
    }
    r->pos += paylen;
    if (r->pos >= r->total)
        xm_match_finish(r);
}
