/*
 * rma_msg.c - decoder and checks of one-sided communication's active messages (RMA
 *             area): every request a target services passes here first.
 * Owns: xm_rma_decode(), xm_rma_check_range(), xm_rma_acc_ok() (rma_msg.h).
 * Depends on nothing but mpi.h's handle layout, so the fuzz target
 * (tests/fuzz/fuzz_rma_msg.c) builds it alone.
 */
#include <stddef.h>
#include <string.h>

#include "rma_msg.h"

#define DT_IS_PREDEF(h) (((h) & 0xff800000) == 0x43000000)
#define DT_SIZE(h) (((unsigned)(h) >> 8) & 0xff)
#define DT_IDX(h) ((unsigned)(h) & 0xff)

int xm_rma_acc_ok(int op, int basic, size_t *esize)
{
    if (op < MPI_MAX || op > MPI_NO_OP)
        return 0; /* accumulate takes predefined ops only (MPI-3.1 11.3.4) */
    if (!DT_IS_PREDEF(basic) || DT_IDX(basic) == 0 || DT_IDX(basic) > XM_DT_LAST_PREDEFINED ||
        DT_SIZE(basic) == 0 || basic == MPI_LB || basic == MPI_UB)
        return 0;
    *esize = DT_SIZE(basic);
    return 1;
}

#define PAIR_L(T1)                                                              \
    do {                                                                         \
        *first = sizeof(T1);                                                     \
        *second_off = offsetof(struct { T1 a; int b; }, b);                      \
        *second = sizeof(int);                                                   \
        return 1;                                                                \
    } while (0)

int xm_rma_pair_layout(int basic, size_t *first, size_t *second_off, size_t *second)
{
    switch (basic) {
    case MPI_DOUBLE_INT: PAIR_L(double);
    case MPI_LONG_INT: PAIR_L(long);
    case MPI_SHORT_INT: PAIR_L(short);
    case MPI_LONG_DOUBLE_INT: PAIR_L(long double);
    default: return 0; /* FLOAT_INT, 2INT, ... have no padding: packed = memory */
    }
}

const char *xm_rma_decode(const void *buf, size_t len, struct xm_rma_msg *m)
{
    memset(m, 0, sizeof(*m));
    if (!buf || len < sizeof(struct xm_rma_hdr))
        return "length: shorter than a header";
    const struct xm_rma_hdr *h = buf;
    if (h->magic != XM_RMA_MAGIC)
        return "magic: not an RMA message";
    if (h->type < XM_RMA_PUT || h->type >= XM_RMA_TYPE_MAX)
        return "type: unknown";
    if (h->flags & ~XM_RMA_F_EXCL)
        return "flags: unknown bits";
    size_t rest = len - sizeof(*h);
    if (h->nseg > rest / sizeof(struct xm_rma_seg))
        return "nseg: more segments than the message holds";
    rest -= (size_t)h->nseg * sizeof(struct xm_rma_seg);
    if (h->datalen != rest)
        return "datalen: does not match the message length";
    const struct xm_rma_seg *seg = (const void *)((const char *)buf + sizeof(*h));
    uint64_t total = 0;
    for (uint32_t i = 0; i < h->nseg; i++) {
        if (seg[i].len > UINT64_MAX - total)
            return "seg.len: total overflows";
        total += seg[i].len;
    }
    m->h = h;
    m->seg = seg;
    m->data = (const unsigned char *)seg + (size_t)h->nseg * sizeof(struct xm_rma_seg);
    m->total = total;
    int needs_reply = 0;
    switch (h->type) {
    case XM_RMA_PUT:
        if (h->datalen != total)
            return "datalen: not the sum of the segment lengths";
        break;
    case XM_RMA_ACC:
    case XM_RMA_GACC:
        if (h->datalen != total)
            return "datalen: not the sum of the segment lengths";
        if (!xm_rma_acc_ok(h->op, h->basic, &m->esize))
            return "op/basic: not a predefined op and type";
        size_t f, so, sc;
        if (xm_rma_pair_layout(h->basic, &f, &so, &sc)) {
            /* elements are split over segments: whole ones in the stream only */
            m->esize = f + sc;
            m->pair = 1;
            if (total % m->esize)
                return "seg.len: not whole elements of the pair type";
        } else {
            for (uint32_t i = 0; i < h->nseg; i++)
                if (seg[i].len % m->esize)
                    return "seg.len: not whole elements of the basic type";
        }
        needs_reply = h->type == XM_RMA_GACC;
        break;
    case XM_RMA_GET:
        if (h->datalen != 0)
            return "datalen: a get carries no data";
        needs_reply = 1;
        break;
    case XM_RMA_CAS:
        if (!xm_rma_acc_ok(MPI_REPLACE, h->basic, &m->esize))
            return "basic: not a predefined type";
        if (h->nseg != 1 || seg[0].len != m->esize || h->datalen != 2 * m->esize)
            return "nseg/datalen: compare-and-swap takes one element";
        needs_reply = 1;
        break;
    case XM_RMA_LOCK:
    case XM_RMA_UNLOCK:
    case XM_RMA_FLUSH:
        needs_reply = 1;
        /* fall through */
    default: /* POST, COMPLETE */
        if (h->nseg || h->datalen)
            return "nseg/datalen: a synchronization message carries nothing";
        break;
    }
    if (h->type != XM_RMA_LOCK && h->flags)
        return "flags: only a lock has flags";
    if (needs_reply ? h->reply_tag <= 0 : h->reply_tag != 0)
        return "reply_tag: wrong for the type";
    return NULL;
}

const char *xm_rma_check_range(const struct xm_rma_msg *m, uint64_t size)
{
    for (uint32_t i = 0; i < m->h->nseg; i++) {
        uint64_t off = m->seg[i].off, len = m->seg[i].len;
        if (off > size || len > size - off)
            return "seg: outside the window (MPI_ERR_RMA_RANGE)";
    }
    return NULL;
}
