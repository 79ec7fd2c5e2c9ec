/*
 * pkt.h - the wire header every transport carries in front of a message fragment.
 *
 * Owns: packet types and header layout (same on shm cells and, later, TCP streams).
 * Contract:
 *   - A message of `len` bytes travels as one XM_PKT_EAGER fragment carrying the
 *     envelope and the first bytes, followed by XM_PKT_FRAG fragments from the same
 *     source, in order, with no other message from that source in between (the sender
 *     serialises per destination; transports keep per-source FIFO order).
 *   - Messages above the eager limit use rendezvous (core/p2p.c):
 *       RTS  sender -> receiver: envelope, len = total bytes, cookie = sender's request,
 *            payload struct xm_rts (sender pid + address of the packed bytes, for CMA);
 *       then either the receiver reads the bytes itself with process_vm_readv and sends
 *       FIN (cookie = sender's request), or it sends
 *       CTS  receiver -> sender: cookie = sender's request, len = receiver's request;
 *       and the sender streams RDATA packets (cookie = receiver's request, len = bytes
 *       in this packet) through the ordinary cells: a pipelined two-copy path.
 *     An unexpected RTS holds no data: nothing large is ever buffered by the receiver.
 *   - Cancelling a send whose header left (MPI_Cancel): CANCEL sender -> receiver with
 *     the message's cookie, tag and ctx, after the message in the per-source order;
 *     the receiver drops the newest complete unexpected message from that source
 *     with that cookie and envelope, if it is still unmatched, and answers
 *     CANCEL_ACK (cookie, len = 1 dropped, 0 matched or not all there).
 *   - hdr.reserved belongs to the transport (shm: per-pair sequence number).
 */
#ifndef XM_PKT_H
#define XM_PKT_H

#include <stdint.h>

enum xm_pkt_type {
    XM_PKT_EAGER = 1, /* envelope + first fragment */
    XM_PKT_FRAG = 2,  /* continuation of the current message from this source */
    XM_PKT_RTS = 3,   /* reserved: rendezvous request (address, pid for CMA) */
    XM_PKT_CTS = 4,   /* reserved */
    XM_PKT_FIN = 5,   /* reserved: receiver done reading (CMA) */
    XM_PKT_SSEND_ACK = 6, /* synchronous-send match acknowledgement */
    XM_PKT_RDATA = 7,     /* rendezvous data after CTS (copy path) */
    XM_PKT_CANCEL = 8,    /* sender -> receiver: withdraw my message (cookie, tag, ctx) */
    XM_PKT_CANCEL_ACK = 9, /* receiver -> sender: cookie, len = 1 withdrawn / 0 too late */
};

/* RTS payload */
struct xm_rts {
    uint64_t pid;  /* sender's process id (process_vm_readv) */
    uint64_t addr; /* address of the len packed bytes in the sender */
};

#define XM_PKT_F_SYNC 0x1 /* sender wants XM_PKT_SSEND_ACK when matched */

struct xm_pkt_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t reserved;
    int32_t src;       /* world rank of the sender */
    int32_t tag;
    uint32_t ctx;      /* context id (comm ctx, or ctx|1 for collectives) */
    uint64_t len;      /* total message length in bytes (EAGER); fragment length (FRAG) */
    uint64_t cookie;   /* sender's request handle (SSEND_ACK/RTS), else 0 */
};

#endif
