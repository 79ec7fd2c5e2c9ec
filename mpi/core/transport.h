/*
 * transport.h - the ops table behind which every transport sits (shm and TCP).
 *
 * Owns: struct xm_transport.  Implemented by mpi/shm/shm.c (xm_shm_transport) and
 * mpi/tcp/tcp.c (xm_tcp_transport).
 * Contract:
 *   - init(): called by MPI_Init after boot (xm_g filled, before the PMI fence it may
 *     put_card(); after the fence connect()).  Returns 0 or -errno.
 *   - alloc(dest, &payload, &cap): reserve one outgoing packet to world rank `dest`;
 *     returns a pointer to its header (payload follows in *payload, at most *cap bytes)
 *     or NULL with -EAGAIN semantics (no free cell: the caller parks and retries from
 *     progress, never errors).  post(dest, hdr, paylen) sends it.  The caller fills
 *     the payload in place (pack straight into the cell: no extra copy).
 *   - poll(max): drain up to `max` incoming packets, calling xm_handle_pkt() for each
 *     (the one funnel); returns the number handled.
 *   - block(timeout_ms): sleep until something may have arrived for me (futex on shm,
 *     epoll on TCP), or the timeout passes.  Only called by the idle policy
 *     (progress.c).  With both transports in use the idle policy sleeps in the
 *     netmod's block() alone, on one poll set that also holds shm's wake descriptor
 *     (wait_fd/wait_arm/wait_disarm and watch below): no helper thread.
 *   - post_ref(dest, hdr, data, len, req) (may be NULL): send a packet whose payload
 *     stays in the caller's memory (no copy).  Returns 1 if it all left now, 0 if
 *     queued (the transport calls xm_p2p_sent(req) once the last byte left; the
 *     memory must stay valid until then), -errno if the peer is unreachable.
 *   - one_max: a payload of at most one_max bytes always fits in the one packet that
 *     alloc_n() returns (MPI_Send's fast path relies on it).
 *   - finalize(): release everything; after it no other op is called.
 *   Order of fragments from one sender to one receiver is preserved.
 *   hdr->reserved belongs to the transport (shm: per-pair sequence number).
 */
#ifndef XM_TRANSPORT_H
#define XM_TRANSPORT_H

#include <stddef.h>
#include "pkt.h"

struct xm_req;

struct xm_transport {
    const char *name;
    int (*init)(struct xm_transport *t);
    int (*finalize)(struct xm_transport *t);
    int (*put_card)(struct xm_transport *t);      /* before the fence; may be NULL */
    int (*connect)(struct xm_transport *t);       /* after the fence; may be NULL */
    int (*reaches)(struct xm_transport *t, int world_rank);
    struct xm_pkt_hdr *(*alloc)(struct xm_transport *t, int dest, void **payload,
                                size_t *cap);
    int (*post)(struct xm_transport *t, int dest, struct xm_pkt_hdr *h, size_t paylen);
    int (*poll)(struct xm_transport *t, int max);
    int (*block)(struct xm_transport *t, int timeout_ms);
    void *priv;
    /* alloc() for a packet whose payload will be `want` bytes: lets the transport pick
     * a smaller fast slot (shm fastbox).  May be NULL (then alloc() is used). */
    struct xm_pkt_hdr *(*alloc_n)(struct xm_transport *t, int dest, size_t want,
                                  void **payload, size_t *cap);
    int (*post_ref)(struct xm_transport *t, int dest, const struct xm_pkt_hdr *h,
                    const void *data, size_t len, struct xm_req *r);
    /* 1 while packets to dest wait in the transport's own queue, which only our
     * progress empties (a connection still being made, a full socket); 0 once the
     * kernel has them or the peer is lost.  May be NULL (nothing is ever held). */
    int (*queued)(struct xm_transport *t, int dest);
    /* alloc_n(want <= one_max) always yields cap >= want: such a payload fits in one
     * packet (0: no such promise). */
    size_t one_max;
    /* MPI_THREAD_MULTIPLE, core/mt.h: wake a thread of this process
     * asleep in block(), from another thread.  May be NULL. */
    void (*wake)(struct xm_transport *t);
    /* ---- how the point-to-point engine uses this transport (it never asks which
     * transport it holds; these fields and ops are what differs) ----
     * eager_max: a message longer than this goes by rendezvous (RTS, then the single
     *   copy below or CTS + RDATA); set by init(), may change after a failed single
     *   copy (shm: the limit is higher without CMA).
     * zcopy_min: with post_ref, an eager message of at least this many contiguous
     *   bytes is posted by reference instead of copied (unused without post_ref).
     *   TCP: LOOM_MPI_TCP_ZCOPY_MIN, 64 KiB: with the socket send buffer bounded to
     *   128 KiB, a 64 KiB ping-pong over loopback written from the user buffer took
     *   19.2-20.4 us against 20.7-20.9 copied first (and streamed 5% more). */
    size_t eager_max;
    size_t zcopy_min;
    /* Single copy of a large message between processes of one kernel (may be NULL:
     * the receiver then asks for the bytes with CTS and gets RDATA packets).
     *   rdv_read(dst, n, src, cookie, pid, addr, whole): receiver; copy n bytes at addr
     *     in process pid (the pid world rank src's KVS card names, checked by the
     *     caller) into dst.  whole: dst is the whole contiguous message, so the sender
     *     (request `cookie`) may be called on to help.  0 done (the caller sends FIN);
     *     -EOWNERDEAD the sender died; other -errno: use CTS (the transport may turn
     *     its single copy off for good).
     *   rdv_offer(n): sender, its RTS for n bytes just left: 1 = call rdv_help from
     *     progress until FIN or CTS comes.  May be NULL.
     *   rdv_help(dest, cookie): sender; help with the transfer of request `cookie`
     *     to dest if the receiver offers it; returns the work done. */
    int (*rdv_read)(struct xm_transport *t, void *dst, size_t n, int src, uint32_t cookie,
                    int pid, uint64_t addr, int whole);
    int (*rdv_offer)(struct xm_transport *t, size_t n);
    int (*rdv_help)(struct xm_transport *t, int dest, uint32_t cookie);
    /* Close the connection to process `dest` of another job (core/p2p.c's
     * xm_p2p_drop) without xm_peer_lost(): packets queued to it are discarded and it
     * is never connected again.  May be NULL (then nothing reaches such a process). */
    void (*drop)(struct xm_transport *t, int dest);
    /* Sleeping on one set for several transports (core/progress.c's idle sleep):
     *   wait_fd(): a descriptor that turns readable when work for this process arrives
     *     while armed; -1 if there is none (then the caller naps briefly instead).
     *   wait_arm(&ms): about to sleep on it: 1 = work is here already (do not sleep,
     *     nothing to disarm), 0 = armed, senders now wake the descriptor; may lower ms
     *     (a descriptor some senders cannot reach: short naps).  wait_disarm(): the
     *     sleep is over.  All three may be NULL (shm has them).
     *   watch(fd): add fd to what block() sleeps on (level-triggered, never read by the
     *     watcher); 0 or -errno.  Idempotent.  May be NULL (TCP has it). */
    int (*wait_fd)(struct xm_transport *t);
    int (*wait_arm)(struct xm_transport *t, int *timeout_ms);
    void (*wait_disarm)(struct xm_transport *t);
    int (*watch)(struct xm_transport *t, int fd);
};

extern struct xm_transport xm_shm_transport;
extern struct xm_transport xm_tcp_transport;

/* Processes of other jobs (api/dynproc.c): this process's TCP address card, the netmod
 * started first (xm_g.net set) when the job runs without it.  0 or -errno. */
struct xm_dyn_addrs;
int xm_tcp_card(struct xm_dyn_addrs *a);

#endif
