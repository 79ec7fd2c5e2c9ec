/*
 * rma_msg.h - the wire format of one-sided communication's active messages and its
 *             checked decoder.
 *
 * Owns: the layout of every message a window's ranks exchange on the window's hidden
 * context (tag 0: requests to a target; tags >= 1: a target's replies, raw bytes).
 * A request is  struct xm_rma_hdr, nseg struct xm_rma_seg, then datalen data bytes.
 * Segments are byte ranges of the target window (offsets from the window base, or
 * addresses for dynamic windows) in the order of the packed data stream.
 * Contract:
 *   - xm_rma_decode(buf, len, &m) checks everything that can be checked without the
 *     window: the length adds up exactly, type known, counts bounded by the length,
 *     data length equals the sum of the segment lengths where data is carried,
 *     accumulate ops predefined and applicable (segments hold whole elements of the
 *     predefined basic type), reply tags positive where a reply is due.  NULL =
 *     acceptable, else "<field>: <what>".  Never reads outside [buf, buf + len).
 *   - xm_rma_check_range(m, size) checks every segment lies inside [0, size) without
 *     overflow (windows of a fixed size; dynamic windows check attached regions).
 *   - Homogeneous job: native byte order and type sizes (as the p2p engine).
 */
#ifndef XM_RMA_MSG_H
#define XM_RMA_MSG_H
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"

enum xm_rma_type {
    XM_RMA_PUT = 1,  /* segs + data: store */
    XM_RMA_ACC,      /* segs + data: element-wise op with the basic type */
    XM_RMA_GET,      /* segs: reply with their bytes */
    XM_RMA_GACC,     /* segs + data: reply with the old bytes, then accumulate */
    XM_RMA_CAS,      /* one seg of one element; data = new value then compare value */
    XM_RMA_LOCK,     /* flags: XM_RMA_F_EXCL; reply (empty) when granted */
    XM_RMA_UNLOCK,   /* reply (empty) once released */
    XM_RMA_FLUSH,    /* reply (empty): every earlier request of mine is applied */
    XM_RMA_POST,     /* PSCW: the target posted an exposure epoch to me */
    XM_RMA_COMPLETE, /* PSCW: my access epoch to you is complete */
    XM_RMA_TYPE_MAX
};
#define XM_RMA_F_EXCL 1u
#define XM_RMA_MAGIC 0x4c524d41u /* "LRMA" */

struct xm_rma_hdr {
    uint32_t magic;
    uint16_t type;
    uint16_t flags;
    int32_t op;        /* MPI_Op for ACC/GACC */
    int32_t basic;     /* predefined basic datatype for ACC/GACC/CAS */
    int32_t reply_tag; /* > 0 when a reply is due */
    uint32_t nseg;
    uint64_t datalen;
};
struct xm_rma_seg {
    uint64_t off;
    uint64_t len;
};

struct xm_rma_msg {
    const struct xm_rma_hdr *h;
    const struct xm_rma_seg *seg; /* may be unaligned only if buf was: callers align */
    const unsigned char *data;
    uint64_t total;               /* sum of segment lengths */
    size_t esize;                 /* basic element size (ACC/GACC/CAS); for a padded pair
                                     type (pair set) its packed size in the data stream */
    int pair;                     /* ACC/GACC of a padded pair type (MPI_DOUBLE_INT ...):
                                     its elements are not contiguous in memory, so a
                                     segment may hold part of one; only the stream (the
                                     sum of the lengths) holds whole elements */
};

const char *xm_rma_decode(const void *buf, size_t len, struct xm_rma_msg *m);
const char *xm_rma_check_range(const struct xm_rma_msg *m, uint64_t size);
/* 1 if op may be used by accumulate on predefined type basic (element size *esize) */
int xm_rma_acc_ok(int op, int basic, size_t *esize);
/* 1 if basic is a pair type with padding between or after its members (MPI_DOUBLE_INT,
 * MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT): its packed element is *first
 * bytes of the first member then *second bytes of the second, which sits at *second_off
 * in memory.  0 for every other type (their packed and memory layouts agree). */
int xm_rma_pair_layout(int basic, size_t *first, size_t *second_off, size_t *second);

#endif
