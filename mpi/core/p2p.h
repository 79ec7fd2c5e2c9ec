/*
 * p2p.h - the point-to-point engine: what api/ and coll/ call to move messages.
 *
 * Owns: matching (posted + unexpected queues), send queues per destination,
 * fragmenting through the transports, the one packet funnel xm_handle_pkt(), progress
 * and the idle/wait policy; implemented by core/p2p.c, match.c, rdv.c, funnel.c and
 * progress.c (p2p_int.h says which file owns what).
 * Contract:
 *   - Ranks are WORLD ranks; ctx is the full context (comm->ctx for user p2p,
 *     comm->ctx|1 for collectives).  Tags >= 0 (MPI_ANY_TAG only on receives).
 *     src may be MPI_ANY_SOURCE; MPI_PROC_NULL is handled by the caller (api/).
 *   - xm_isend/xm_irecv return 0 and a request in *rp, or -errno (-ENOMEM).  The request
 *     completes through progress; the caller frees it with xm_req_free() after
 *     completion (api/ does that in Wait/Test).  `comm` is recorded for status
 *     translation (status.MPI_SOURCE is a comm rank) and may be NULL for world ranks.
 *   - Eager sends complete once every byte left the user buffer; XM_PKT_F_SYNC
 *     (Ssend) completes on the receiver's match acknowledgement.
 *   - Receives: status.MPI_ERROR = MPI_ERR_TRUNCATE when the message is longer than
 *     the buffer (the buffer is filled up to its size).
 *   - xm_progress(): polls every transport once and retries parked sends; returns
 *     the number of events (>0 means "something happened").
 *   - xm_wait(r): progress until r->done, following the idle policy: spin
 *     (LOOM_MPI_SPIN polls at most, fewer when oversubscribed; the budget adapts: it
 *     halves when sched_yield() shows another task wants this CPU and doubles back when
 *     spinning pays; LOOM_MPI_SPIN_ADAPT=0 turns that off), then sched_yield()
 *     (LOOM_MPI_YIELD times), then transport->block() (futex) with a short timeout.
 *   - Messages above the eager limit of the transport that reaches the peer (its
 *     eager_max: shm LOOM_MPI_EAGER_MAX, 32 KiB with CMA, 64 KiB without;
 *     LOOM_MPI_TCP_EAGER_MAX, 256 KiB, towards peers reached by the netmod) go by
 *     rendezvous (pkt.h): the send
 *     completes when the receiver has the bytes (CMA read + FIN, or the last RDATA
 *     packet left); an unexpected one holds only its envelope.
 *   - xm_improbe()/xm_mrecv(): matched probe (the message leaves the matcher).
 *   - One thread at a time (MPI_THREAD_MULTIPLE: the global lock of core/mt.h, dropped
 *     only inside xm_idle and the transports' block()).
 */
#ifndef XM_P2P_H
#define XM_P2P_H

#include "xm.h"
#include "pkt.h"

int xm_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, uint32_t ctx,
             struct xm_comm *comm, unsigned flags, struct xm_req **rp);
int xm_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, uint32_t ctx,
             struct xm_comm *comm, struct xm_req **rp);
/* MPI_Send without a request when the data is contiguous and nothing stands in the
 * way: 1 sent, 0 not taken (use xm_isend), -errno. */
int xm_send_now(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                uint32_t ctx);
/* Blocking helpers for collectives: send/recv and wait, freeing the request. */
int xm_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, uint32_t ctx);
int xm_recv(void *buf, int count, MPI_Datatype dt, int src, int tag, uint32_t ctx,
            MPI_Status *st);
int xm_sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest,
                void *rbuf, int rcount, MPI_Datatype rdt, int src, int tag, uint32_t ctx);
/* Probe: find an unexpected message (does not remove it).  1 found / 0 not. */
int xm_iprobe(int src, int tag, uint32_t ctx, MPI_Status *st);

/* Matched probe: remove the first matching unexpected message from the matcher and
 * return it (NULL: none yet).  xm_mrecv() then receives it into a new request. */
struct xm_req *xm_improbe(int src, int tag, uint32_t ctx, MPI_Status *st);
int xm_mrecv(struct xm_req *u, void *buf, int count, MPI_Datatype dt, struct xm_comm *comm,
             struct xm_req **rp);

/* Cancel a posted receive: 1 cancelled (request completes, flagged), 0 too late. */
int xm_cancel_recv(struct xm_req *r);
/* Cancel a send (MPI_Cancel): 0 = too late (it completes the usual way); 1 = under
 * way: the request completes flagged cancelled (status bit, r->cancelled) at once if
 * nothing of it left this process, else when the receiver answers our CANCEL: flagged
 * if the message was still unmatched there (it is dropped), not flagged if a receive
 * had matched it (then it completes as sent).  A send whose receiver already asked
 * for the data (rendezvous CTS) or that the netmod still writes from the user buffer
 * cannot be cancelled. */
int xm_cancel_send(struct xm_req *r);

int xm_progress(void);
/* Called by xm_progress() when set: the collectives register their engine here when
 * the first nonblocking collective starts, so MPI_Test loops advance it (a hook, so
 * the p2p engine links without the collectives, as in check_match). */
extern int (*xm_progress_hook)(void);
/* The same for one-sided communication (mpi/rma/rma.c sets it with its first window). */
extern int (*xm_rma_progress_hook)(void);
/* (issue 21) RMA requests this process has served as a target, counted by xm_progress():
 * a waiter that sees it move keeps serving promptly (spins again) instead of sleeping,
 * for as long as requests keep coming (coll/shmcoll.c wait_reach). */
extern unsigned long xm_rma_served;
void xm_wait(struct xm_req *r);
/* One step of the idle policy (callers that poll by hand, e.g. Probe); *spins = 0 first. */
void xm_idle(int *spins);
/* Wait until any of n requests completes (entries may be NULL); returns its index. */
int xm_wait_any(int n, struct xm_req **rs);

/* The one funnel: every transport hands every incoming packet here.  It checks the
 * packet with xm_pkt_check() first; a packet that fails aborts the job with "protocol
 * error in a packet from rank R: <field>: <what>" (transports that can end the one
 * connection instead call xm_pkt_check() themselves first). */
void xm_handle_pkt(const struct xm_pkt_hdr *h, const void *payload, size_t paylen);
/* The same without the check, for a packet that passed xm_pkt_check() with nothing
 * handled in between (TCP checks every frame header before reading its payload and
 * hands a frame already in its buffer over at once: one check per packet). */
void xm_handle_pkt_checked(const struct xm_pkt_hdr *h, const void *payload,
                           size_t paylen);
/* Every header field of a packet whose payload is paylen bytes, against the state of
 * the engine, before anything is read or written for it: NULL = acceptable, else what
 * is wrong ("<field>: <what>").  The caller checks that h->src is the rank the packet
 * came from (TCP: the connection's authenticated rank).  Checks: src a rank of the
 * job; type known; EAGER: paylen <= len <= LOOM_MPI_EAGER_ACCEPT (16 MiB, at least the
 * eager limits) and no message of src in flight; FRAG/RDATA: len == paylen and within
 * what the message still lacks; RDATA/CTS/FIN/SSEND_ACK: the cookie names a live
 * request of ours of the right kind and state with src as its peer; RTS: payload is a
 * struct xm_rts (its pid must be the one src's KVS card names: xm_handle_pkt());
 * CANCEL: no payload; CANCEL_ACK: no payload, len 0 or 1, the cookie names a send of
 * ours to src that is being cancelled.
 * Costs a few compares on the eager path. */
const char *xm_pkt_check(const struct xm_pkt_hdr *h, size_t paylen);
/* Bytes of a checked packet's payload that xm_handle_pkt() will read (the rest of an
 * RDATA packet beyond the receive buffer is counted, not read): a transport that has
 * to buffer a large frame keeps only these.  Never more than paylen. */
size_t xm_pkt_keep(const struct xm_pkt_hdr *h, size_t paylen);
/* The process id world rank `rank` put in the KVS ("pid", boot.c), fetched once; -1
 * when unknown.  The only pid CMA (process_vm_readv/writev) is ever used with. */
int xm_peer_pid(int rank);
/* Sender side of a rendezvous: the packed bytes of our send request `cookie` to world
 * rank dest, announced in its RTS (lmt.c checks an offer against it).  0 / -ENOENT. */
int xm_rdv_region(uint32_t cookie, int dest, uint64_t *addr, size_t *len);

/* Status of a completed request, translated for the user (source as comm rank). */
void xm_req_status(const struct xm_req *r, MPI_Status *st);

/* Netmod hooks (tcp.c).  xm_p2p_sent(r): a packet posted with post_ref() for r has
 * left.  xm_rdata_target(h, n): where the n payload bytes of RDATA packet h may be
 * written directly (the posted receive buffer), or NULL (then hand the packet to
 * xm_handle_pkt()); after writing them, xm_rdata_done(h, n).  The same for an EAGER
 * packet carrying a whole message: a matching posted contiguous receive is matched at
 * the header (it leaves the posted list) and the bytes land in its buffer.
 * xm_peer_lost(peer, why): the connection to world rank `peer` broke: under
 * MPI_ERRORS_ARE_FATAL on COMM_WORLD the job aborts with "rank X: connection to rank Y
 * lost", otherwise every pending request with that peer fails with MPI_ERR_OTHER and
 * later sends to it fail. */
void xm_p2p_sent(struct xm_req *r);
void *xm_rdata_target(const struct xm_pkt_hdr *h, size_t n);
void xm_rdata_done(const struct xm_pkt_hdr *h, size_t n);
void xm_peer_lost(int peer, const char *why);
/* Process `peer` of another job (id >= world size) is dropped for good: one line on
 * stderr (core/xsec.c, rate-limited) naming its job and rank and `why`, its
 * connection closed (the transport's drop op; it is never taken back), the
 * unexpected messages it queued freed, and every operation with it (sends, receives
 * from it, receives from any source on a communicator holding it) completes with
 * MPI_ERR_OTHER; later receives from it fail at once and its packets are ignored.
 * World ranks and the job are untouched.  Used when it passes its unexpected-message
 * quota and when it sent a synchronous or rendezvous message on a context it may not
 * use (the wire has no refusal that the sender would wait for). */
void xm_p2p_drop(int peer, const char *why);
/* Whether the memory [lo, hi) overlaps the buffer of a request still in flight that
 * something other than this process's own next MPI call may read or write: a receive
 * not yet complete (posted, matched, or waiting for its rendezvous bytes), or a
 * rendezvous send whose peer copies from the user buffer itself.  Its extent is that
 * of (buf, count, datatype) by the datatype's true bounds.  1 = busy (also when a
 * span does not fit the address space), 0 = none (rma/allocmem.c: pages it may move). */
int xm_p2p_buffer_busy(uintptr_t lo, uintptr_t hi);
/* core/obj.c: call fn on every live request (failure handling). */
void xm_req_foreach(void (*fn)(struct xm_req *r, void *arg), void *arg);

int xm_p2p_init(void);
void xm_p2p_finalize(void);

#endif
