/* fuzz_rma_msg.c - libFuzzer target: the one-sided communication requests a window's
 * target services (mpi/rma/rma_msg.c), i.e. what any rank of the job may send it.
 *
 * fuzz-sources: mpi/rma/rma_msg.c
 * fuzz-cflags: -Impi/include -Impi/rma
 * fuzz-options: -max_len=65536
 *
 * Contract: input byte 0..1 = the window size in bytes (little endian, up to 65535),
 * the rest is one request message, copied into an exact-size heap block (aligned as
 * the service's receive buffers are).  When xm_rma_decode() accepts it and
 * xm_rma_check_range() accepts it against the window, the target's accesses are done
 * on an exact-size heap window: stores of the data for PUT/ACC/GACC/CAS, loads of
 * every segment for GET/GACC (ASan reports any byte outside).
 * Invariants (a trap is a finding): an accepted message's header, segments and data
 * lie inside the input and add up to its length; data-carrying types carry exactly
 * the sum of their segment lengths; accumulate segments hold whole elements of a
 * non-zero element size (padded pair types, m.pair: the stream holds whole packed
 * elements, segments may split one); CAS holds one element and two values; replies are due
 * exactly where a tag is given.
 * Seeds: corpus/rma_msg/: a put of two segments, a get, an accumulate of ints, a
 * compare-and-swap, a lock, a flush, a segment past the window, a huge nseg, a MAXLOC
 * of MPI_DOUBLE_INT whose one element is split over two segments (acc_pair_split).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rma_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 65536 + 2)
        return 0;
    size_t wsize = (size_t)data[0] | (size_t)data[1] << 8;
    size_t len = size - 2;
    void *msg = malloc(len ? len : 1);
    if (!msg)
        return 0;
    memcpy(msg, data + 2, len);
    struct xm_rma_msg m;
    const char *e = xm_rma_decode(msg, len, &m);
    if (!e) {
        const unsigned char *b = msg;
        size_t segbytes = (size_t)m.h->nseg * sizeof(struct xm_rma_seg);
        if ((const void *)m.h != msg || (const unsigned char *)m.seg != b + sizeof(*m.h) ||
            m.data != b + sizeof(*m.h) + segbytes || sizeof(*m.h) + segbytes + m.h->datalen != len)
            __builtin_trap();
        int t = m.h->type;
        if ((t == XM_RMA_PUT || t == XM_RMA_ACC || t == XM_RMA_GACC) && m.h->datalen != m.total)
            __builtin_trap();
        if (t == XM_RMA_ACC || t == XM_RMA_GACC || t == XM_RMA_CAS) {
            if (m.esize == 0)
                __builtin_trap();
            if (m.pair) { /* padded pair types: whole elements in the stream only */
                size_t f, so, sc;
                if (t == XM_RMA_CAS || !xm_rma_pair_layout(m.h->basic, &f, &so, &sc) ||
                    m.esize != f + sc || m.total % m.esize)
                    __builtin_trap();
            } else {
                for (uint32_t i = 0; i < m.h->nseg; i++)
                    if (m.seg[i].len % m.esize)
                        __builtin_trap();
            }
        }
        if (t == XM_RMA_CAS && (m.h->nseg != 1 || m.h->datalen != 2 * m.esize))
            __builtin_trap();
        int reply = t == XM_RMA_GET || t == XM_RMA_GACC || t == XM_RMA_CAS ||
                    t == XM_RMA_LOCK || t == XM_RMA_UNLOCK || t == XM_RMA_FLUSH;
        if (reply != (m.h->reply_tag > 0) || (!reply && m.h->reply_tag != 0))
            __builtin_trap();
        if (!xm_rma_check_range(&m, wsize)) {
            unsigned char *win = malloc(wsize ? wsize : 1), sink = 0;
            if (win) {
                const unsigned char *d = m.data;
                for (uint32_t i = 0; i < m.h->nseg; i++) {
                    unsigned char *p = win + m.seg[i].off;
                    size_t n = (size_t)m.seg[i].len;
                    for (size_t k = 0; k < n; k++)
                        sink ^= p[k]; /* the load a GET/GACC/CAS does */
                    if (t == XM_RMA_PUT || t == XM_RMA_ACC || t == XM_RMA_GACC) {
                        memcpy(p, d, n);
                        d += n;
                    } else if (t == XM_RMA_CAS) {
                        memcpy(p, d, n);
                    }
                }
                __asm__ volatile("" ::"r"(sink));
                free(win);
            }
        }
    }
    free(msg);
    return 0;
}
