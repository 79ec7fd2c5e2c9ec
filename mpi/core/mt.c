/*
 * mt.c - MPI_THREAD_MULTIPLE: the global lock (a FIFO ticket lock on a futex,
 *        recursive per thread), its hand-over while a thread waits, and the wake-ups
 *        between threads of one process.  Contract and protocol: mt.h.
 *
 * Why one lock: every MPI call runs as it would single-threaded; the engine's state
 * (matching queues, requests, transports, collective schedules) needs no locks of its
 * own, and the single-threaded paths keep their speed (mt.h: one branch per call).
 * Concurrency comes from waits: a thread waiting for a message gives the lock away.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mt.h"
#include "transport.h"
#include "xm.h"

/* initial-exec: no __tls_get_addr call per MPI call (4 bytes of static TLS) */
static __thread int depth __attribute__((tls_model("initial-exec"))); /* 0: not held */
static pthread_t main_thread;
static int main_set;

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void lock(void)
{
    /* relaxed RMW: the ticket is only a number; the acquire is on `serving` below */
    uint32_t t = atomic_fetch_add_explicit(&xm_mt.next, 1, memory_order_relaxed);
    for (unsigned i = 0;; i++) {
        /* acquire: pairs with the release in unlock(): the previous holder's writes */
        uint32_t s = atomic_load_explicit(&xm_mt.serving, memory_order_acquire);
        if (s == t)
            return;
        if (i < 100) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        /* seq_cst: Dekker with unlock() (serving bump, then the load of
         * lock_sleepers): either it sees us counted, or we see its new `serving` */
        atomic_fetch_add(&xm_mt.lock_sleepers, 1);
        if (atomic_load(&xm_mt.serving) == s)
            futex(&xm_mt.serving, FUTEX_WAIT_PRIVATE, s, NULL);
        atomic_fetch_sub(&xm_mt.lock_sleepers, 1);
    }
}

static void unlock(void)
{
    atomic_fetch_add(&xm_mt.serving, 1); /* seq_cst: see lock() */
    if (atomic_load(&xm_mt.lock_sleepers))
        futex(&xm_mt.serving, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

void xm_mt_main_set(void)
{
    main_thread = pthread_self();
    main_set = 1;
}

int xm_mt_is_main(void)
{
    return !main_set || pthread_equal(main_thread, pthread_self());
}

void xm_mt_init(void)
{
    xm_mt.on = 1;
}

void xm_mt_enter(void)
{
    if (depth++ == 0) {
        lock();
        xm_mt.inside++;
    }
}

void xm_mt_exit(void)
{
    if (depth == 1 && xm_mt.dirty && (xm_mt.sleepers || xm_mt.blocker))
        xm_mt_kick();
    if (--depth == 0) {
        xm_mt.inside--;
        unlock();
    }
}

int xm_mt_drop_(void)
{
    int d = depth;
    if (d) {
        depth = 0;
        unlock();
    }
    return d;
}

void xm_mt_take_(int d)
{
    if (d) {
        lock();
        depth = d;
    }
}

void xm_mt_pass(void)
{
    if (xm_mt.dirty && (xm_mt.sleepers || xm_mt.blocker))
        xm_mt_kick();
    /* relaxed: a hint; a thread that just took a ticket is served after one more pass */
    if (depth && atomic_load_explicit(&xm_mt.next, memory_order_relaxed) -
                         atomic_load_explicit(&xm_mt.serving, memory_order_relaxed) > 1) {
        int d = xm_mt_drop_();
        xm_mt_take_(d); /* a new ticket: every thread that waited goes first */
    }
}

void xm_mt_kick(void)
{
    xm_mt.dirty = 0;
    if (xm_mt.sleepers) {
        /* release: a sleeper that wakes sees what we did under the lock (it also
         * retakes the lock, which orders it anyway) */
        atomic_fetch_add_explicit(&xm_mt.word, 1, memory_order_release);
        futex(&xm_mt.word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
    }
    if (xm_mt.blocker) {
        /* the thread asleep in a transport: the netmod's poll set holds shm's fd */
        struct xm_transport *t = xm_g.net ? xm_g.net : xm_g.shm;
        if (t && t->wake)
            t->wake(t);
    }
}

int xm_mt_sleep(int have_transport)
{
    if (have_transport && !xm_mt.blocker) {
        xm_mt.blocker = 1;
        return 0;
    }
    /* acquire: pairs with the bump in xm_mt_kick() */
    uint32_t w = atomic_load_explicit(&xm_mt.word, memory_order_acquire);
    xm_mt.sleepers++;
    int d = xm_mt_drop_();
    /* a kick between the load and the wait changed `word`: FUTEX_WAIT returns at once */
    struct timespec ts = {0, 20 * 1000000L};
    futex(&xm_mt.word, FUTEX_WAIT_PRIVATE, w, &ts);
    xm_mt_take_(d);
    xm_mt.sleepers--;
    return 1;
}

void xm_mt_unblock(void)
{
    xm_mt.blocker = 0;
    /* one of the others takes the transport over (or sees its request done) */
    if (xm_mt.sleepers)
        xm_mt_kick();
}
