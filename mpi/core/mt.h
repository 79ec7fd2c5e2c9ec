/*
 * mt.h - MPI_THREAD_MULTIPLE: the one lock every MPI call takes, and how waiting
 *        threads give it up and are woken.
 *
 * Owns: struct xm_mt (xm_mt.on says whether the lock is in use at all), the lock's
 * entry/exit (called by the generated PMPI_ wrappers, api/mt_wrap.c from gen_mt.py),
 * and the waiting protocol of core/p2p.c's xm_idle() under several threads.
 * Contract:
 *   - xm_mt.on is set once, by MPI_Init_thread(MPI_THREAD_MULTIPLE), before any other
 *     thread may call MPI.  When it is 0 nothing here is ever called: the cost for
 *     SINGLE/FUNNELED/SERIALIZED programs is one predictable branch per MPI call.
 *   - The lock is a ticket lock (FIFO: a thread that gives it up to waiting threads
 *     gets it back after them), recursive per thread (a user callback run inside an
 *     MPI call may call MPI).  Every libmpi state is touched only with it held.
 *   - A thread waits (xm_idle) with the lock held while it spins, hands it over when
 *     another thread wants it, and drops it around sched_yield and every sleep.  At
 *     most one thread sleeps in a transport's block() (the "blocker": peers' packets
 *     wake it); the others sleep on a process-local futex word.  xm_mt_kick() (after
 *     progress, at the exit of an MPI call that changed something) wakes them all
 *     and the blocker (transport wake op), so a thread completing another thread's
 *     request wakes it.  Every sleep is bounded (20 ms), so a missed wake costs time,
 *     never a hang.
 *   - xm_mt_drop()/xm_mt_take() release and retake the lock around a blocking system
 *     call (transports' block: shm futex, epoll); no-ops for a thread not holding it
 *     (programs below MULTIPLE).
 */
#ifndef XM_MT_H
#define XM_MT_H

#include <stdint.h>

struct xm_mt {
    int on;                    /* MPI_THREAD_MULTIPLE provided: the lock is in use */
    _Atomic uint32_t next;     /* ticket lock: next ticket to hand out */
    _Atomic uint32_t serving;  /* ticket being served (futex word of lock sleepers) */
    _Atomic int lock_sleepers; /* threads asleep waiting for the lock */
    _Atomic uint32_t word;     /* futex word of threads asleep in xm_idle */
    int sleepers;              /* threads asleep on `word` (under the lock) */
    int blocker;               /* a thread sleeps in a transport's block() */
    int dirty;                 /* something may have completed since the last kick */
    int inside;                /* threads inside an MPI call (under the lock) */
};
extern struct xm_mt xm_mt; /* defined in core/obj.c beside xm_g */

/* Weak: programs that link engine files without mt.c (unit tests, fuzz targets) never
 * turn the lock on, so these are never reached there. */
#define XM_MT_FN __attribute__((weak))
XM_MT_FN void xm_mt_init(void);  /* Init_thread(MULTIPLE): the lock on (caller = main) */
XM_MT_FN void xm_mt_enter(void); /* take the lock (recursive) */
XM_MT_FN void xm_mt_exit(void);  /* kick sleepers if needed, release one level */
XM_MT_FN int xm_mt_drop_(void);  /* release fully if held by this thread: the depth */
XM_MT_FN void xm_mt_take_(int depth); /* retake what xm_mt_drop_() released */
XM_MT_FN void xm_mt_pass(void);  /* spinning: hand the lock over if a thread waits for it */
XM_MT_FN void xm_mt_kick(void);  /* wake threads asleep in xm_idle and the blocker */
XM_MT_FN int xm_mt_is_main(void);   /* the calling thread called MPI_Init(_thread) */
XM_MT_FN void xm_mt_main_set(void); /* remember the calling thread as the main one */
/* xm_idle's sleep: 1 = slept on the process word (another thread is the blocker);
 * 0 = the caller is now the blocker: it sleeps in the transport, then calls
 * xm_mt_unblock(). */
XM_MT_FN int xm_mt_sleep(int have_transport);
XM_MT_FN void xm_mt_unblock(void);

/* Around a blocking system call: release the lock if this thread holds it. */
static inline int xm_mt_drop(void)
{
    return __builtin_expect(xm_mt.on, 0) ? xm_mt_drop_() : 0;
}

static inline void xm_mt_take(int depth)
{
    if (depth)
        xm_mt_take_(depth);
}

#endif
