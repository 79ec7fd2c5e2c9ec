/*
 * shm_queue.h - lock-free multi-producer / single-consumer queue of cells living in a
 *               shared segment mapped at different addresses in each process.
 *
 * Contract:
 *   - Links are byte offsets from the segment base (0 = none: offset 0 is the segment
 *     header, never a cell).  base is each process's own mapping address.
 *   - xm_q_enq(): any process, any number concurrently (wait-free: one exchange).
 *   - xm_q_deq(): only the queue's owner.  Returns 0 when empty.  FIFO per producer.
 *   - Cells must not be enqueued twice.  A producer stalled between its exchange and its
 *     link makes the consumer wait for it (bounded: two instructions), the classic
 *     nemesis/MCS trade-off.
 */
#ifndef XM_SHM_QUEUE_H
#define XM_SHM_QUEUE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sched.h>

struct xm_q {
    _Alignas(64) _Atomic uint64_t head;   /* consumer side (written by producers only when
                                             the queue was empty) */
    _Alignas(64) _Atomic uint64_t tail;   /* producers' exchange point */
};

struct xm_cell_link {
    _Atomic uint64_t next;
};

#define XM_Q_CELL(base, off) ((struct xm_cell_link *)((char *)(base) + (off)))

static inline void xm_q_init(struct xm_q *q)
{
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
}

static inline void xm_q_enq(struct xm_q *q, void *base, uint64_t off)
{
    struct xm_cell_link *c = XM_Q_CELL(base, off);
    /* relaxed: nobody can see this cell until the release below publishes it */
    atomic_store_explicit(&c->next, 0, memory_order_relaxed);
    /* acq_rel exchange: release makes the cell's payload (written before this call)
     * visible to whoever later reads the tail and links after us; acquire orders us
     * after the previous producer's exchange so prev is a cell already enqueued. */
    uint64_t prev = atomic_exchange_explicit(&q->tail, off, memory_order_acq_rel);
    if (prev == 0)
        /* release: the consumer's acquire load of head sees a complete cell */
        atomic_store_explicit(&q->head, off, memory_order_release);
    else
        /* release: same, through the predecessor's next link */
        atomic_store_explicit(&XM_Q_CELL(base, prev)->next, off, memory_order_release);
}

static inline int xm_q_empty(struct xm_q *q)
{
    /* relaxed: a hint only (used before sleeping, re-checked under the futex protocol) */
    return atomic_load_explicit(&q->head, memory_order_relaxed) == 0;
}

static inline uint64_t xm_q_deq(struct xm_q *q, void *base)
{
    /* acquire: pairs with the producer's release store of head (cell contents valid) */
    uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    if (h == 0)
        return 0;
    struct xm_cell_link *c = XM_Q_CELL(base, h);
    /* acquire: pairs with the release store of next by the producer that linked after h */
    uint64_t nx = atomic_load_explicit(&c->next, memory_order_acquire);
    if (nx != 0) {
        /* relaxed: head is ours while non-zero (producers only write it when tail was 0) */
        atomic_store_explicit(&q->head, nx, memory_order_relaxed);
        return h;
    }
    /* h looks like the last cell.  Clear head first (relaxed: only we read it now),
     * then try to swing tail from h to empty. */
    atomic_store_explicit(&q->head, 0, memory_order_relaxed);
    uint64_t expect = h;
    /* acq_rel CAS: on success the queue is empty and a later producer's exchange reads 0
     * and writes head itself; on failure a producer exchanged after h and will link
     * h->next soon */
    if (atomic_compare_exchange_strong_explicit(&q->tail, &expect, 0, memory_order_acq_rel,
                                                memory_order_acquire))
        return h;
    /* acquire: wait for that producer's release store into h->next */
    while ((nx = atomic_load_explicit(&c->next, memory_order_acquire)) == 0)
        sched_yield(); /* it is between two instructions; yield in case it is preempted */
    /* relaxed: head is still ours (tail != 0, so producers will not touch head) */
    atomic_store_explicit(&q->head, nx, memory_order_relaxed);
    return h;
}

#endif
