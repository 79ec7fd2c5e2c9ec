/*
 * progress.c - progress and waiting for the point-to-point engine and everything built
 *              on it (contract in p2p.h: xm_progress, xm_idle, xm_wait, xm_wait_any).
 *
 * Owns: one progress step (poll every transport, retry parked control packets and
 * sends, let the transport call on rendezvous senders, run the collectives' and
 * one-sided hooks), and the idle policy every waiter shares: spin with an adaptive
 * budget, then sched_yield(), then sleep on every transport at once (one poll set
 * when shm and the netmod are both in use, sleep_transports()); the wait for a netmod
 * to hand a send's bytes to the kernel.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>

#include "mt.h"
#include "p2p_int.h"
#include "proc.h"

static int spin_max, yield_max;
static int spin_cur;   /* adaptive spin budget, 16 .. spin_max (see xm_idle()) */
static int spin_adapt; /* LOOM_MPI_SPIN_ADAPT=0 keeps the budget at spin_max */
int xm_p2p_ndue;       /* ids marked 2 in xm_p2p_lost[] (xm_p2p_drop_later()) */

void xm_progress_init(void)
{
    spin_max = xm_env_int("LOOM_MPI_SPIN", xm_g.oversubscribed ? 16 : 2000);
    yield_max = xm_env_int("LOOM_MPI_YIELD", xm_g.oversubscribed ? 8 : 64);
    spin_cur = spin_max;
    spin_adapt = xm_env_int("LOOM_MPI_SPIN_ADAPT", 1);
}

/* ---- the deferred drop of another job's process (core/xsec.h) ---- */

void xm_p2p_drop_later(int peer)
{
    if (xm_p2p_lost[peer])
        return;
    xm_p2p_lost[peer] = 2;
    xm_p2p_ndue++;
}

static void drop_due(void)
{
    for (int p = xm_g.size; p < xm_proc_count() && xm_p2p_ndue; p++)
        if (xm_p2p_lost[p] == 2)
            xm_p2p_drop(p, XM_P2P_REFUSED_ANSWER);
}

int (*xm_progress_hook)(void);
int (*xm_rma_progress_hook)(void); /* set by the first window (mpi/rma/rma.c) */
unsigned long xm_rma_served;

int xm_progress(void)
{
    static int in_hook; /* the hook may post p2p operations: never re-enter it */
    int n = 0;
    if (__builtin_expect(xm_p2p_ndue, 0))
        drop_due();
    if (xm_g.shm)
        n += xm_g.shm->poll(xm_g.shm, 64);
    if (xm_g.net)
        n += xm_g.net->poll(xm_g.net, 64);
    if (xm_p2p_ctrlq)
        n += xm_p2p_push_ctrl();
    if (xm_p2p_sendq.head)
        n += xm_p2p_push_sends();
    if (xm_rdv_helpers.head)
        n += xm_rdv_progress();
    if (xm_progress_hook && !in_hook) {
        in_hook = 1;
        n += xm_progress_hook();
        in_hook = 0;
    }
    /* one-sided communication: targets service window requests here */
    {
        static int in_rma;
        if (xm_rma_progress_hook && !in_rma) {
            in_rma = 1;
            int k = xm_rma_progress_hook();
            in_rma = 0;
            n += k;
            xm_rma_served += (unsigned long)k;
        }
    }
    if (__builtin_expect(xm_mt.on, 0) && n)
        xm_mt.dirty = 1; /* threads: another thread's request may be done (core/mt.h) */
    return n;
}

/* The spin budget adapts to who wants our CPU.  A sched_yield() that takes more than a
 * few microseconds ran another task on this CPU: the CPU is shared (more ranks than
 * free cores, or a noisy neighbour), the peer we wait for may be the one that needs it,
 * so spinning only delays it: halve the budget (down to 16).  A yield that returns at
 * once means nobody else wants the CPU, and a wait that ended while spinning means
 * spinning paid: double it back towards LOOM_MPI_SPIN.  This lives in xm_idle so every
 * waiter (p2p waits, collective schedules, probes) shares it. */
static int last_spin_step = -1;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void spin_grow(void)
{
    if (spin_cur < spin_max)
        spin_cur = spin_cur * 2 < spin_max ? spin_cur * 2 : spin_max;
}

/* With a rank per core (not oversubscribed) a wait keeps spinning for up to
 * LOOM_MPI_SPIN_US (100 ms) before it yields or sleeps: under load from other jobs a
 * sched_yield() hands the CPU to them and a futex sleep waits for the scheduler, and a
 * 2-rank Allreduce went from ~1 us to 10-400 us that way (bench/results/mpi.md). */
static double long_spin_us = -1, long_t0;

/* Sleep up to ms on every transport at once.  With shm and the netmod both in use, the
 * netmod's block() sleeps on its poll set (sockets, the MPI_THREAD_MULTIPLE wake
 * eventfd) with shm's wake descriptor added to it, and shm is told we sleep there
 * (wait_arm), so its senders write the descriptor instead of a futex wake.  Without a
 * descriptor (eventfd refused) the netmod naps 1 ms at a time: shm packets wait at
 * most that long, and no thread is started for it. */
static void sleep_transports(int ms)
{
    struct xm_transport *n = xm_g.net, *s = xm_g.shm;
    if (n && s) {
        int fd = s->wait_fd ? s->wait_fd(s) : -1;
        if (fd < 0 || !n->watch || n->watch(n, fd) < 0) {
            n->block(n, ms > 1 ? 1 : ms);
        } else if (s->wait_arm(s, &ms) == 0) {
            n->block(n, ms);
            s->wait_disarm(s);
        }
    } else if (n) {
        n->block(n, ms);
    } else if (s) {
        s->block(s, ms);
    } else {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The last stage of every wait: sleep until a packet (or a thread of ours) wakes us. */
static void idle_sleep(void)
{
    if (__builtin_expect(xm_mt.on, 0)) {
        /* threads: one thread sleeps in the transports, the others on its kick */
        if (!xm_mt_sleep(xm_g.net || xm_g.shm)) {
            sleep_transports(20);
            xm_mt_unblock();
        }
    } else {
        sleep_transports(20);
    }
}

void xm_idle(int *spins)
{
    if (__builtin_expect(xm_mt.on, 0)) {
        xm_mt_pass(); /* threads: wake whom our progress served, let waiters in */
        if (xm_mt.inside > 1) {
            /* Other threads of ours are in MPI: they need the CPU and the lock more
             * than we need a quick wake-up, whatever the node looks like.  A short
             * spin, a few yields (without the lock), then sleep. */
            int s = (*spins)++;
            if (s < 16) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else if (s < 16 + 4) {
                int held = xm_mt_drop();
                sched_yield();
                xm_mt_take(held);
            } else {
                idle_sleep();
            }
            return;
        }
    }
    int s = (*spins)++;
    if (s == 0 && last_spin_step >= 0 && last_spin_step < spin_cur)
        spin_grow(); /* the previous wait ended while spinning */
    if (s == 0)
        long_t0 = 0;
    if (long_spin_us < 0)
        long_spin_us = xm_env_int("LOOM_MPI_SPIN_US", xm_g.oversubscribed ? 0 : 100000);
    if (s == spin_cur && long_spin_us > 0) {
        double t = now_us();
        if (long_t0 == 0)
            long_t0 = t;
        if (t - long_t0 < long_spin_us) {
            (*spins)--; /* stay here until the time is up */
            s = 0;      /* spin below */
        }
    }
    last_spin_step = s;
    if (s < spin_cur) {
        __asm__ __volatile__("" ::: "memory");
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (s < spin_cur + yield_max) {
        double t = now_us();
        int held = xm_mt_drop(); /* threads: 0 below MPI_THREAD_MULTIPLE */
        sched_yield();
        xm_mt_take(held);
        if (now_us() - t > 3.0) {
            if (spin_cur > 16 && spin_adapt)
                spin_cur /= 2;
        } else {
            spin_grow();
        }
    } else {
        idle_sleep();
    }
}

/* A send request is complete once its bytes are copied, but over the netmod the copy
 * may still sit in the transport's queue: an eager packet posted while the connection
 * is being made, or while the socket is full.  Only our progress moves it, so a rank
 * that sent and then computed without calling MPI left its peer waiting for the whole
 * computation.  A Wait on a send (MPI_Send, MPI_Wait, the collectives) therefore keeps
 * progressing until the transport has handed that peer's packets to the kernel (or
 * lost the peer: then queued() is 0).  A standard-mode send may block that long. */
void xm_wait_handed_over(int peer)
{
    struct xm_transport *t =
        peer >= 0 && peer < xm_proc_count() ? xm_p2p_route(peer) : NULL;
    if (!t || !t->queued)
        return;
    int spins = 0;
    while (t->queued(t, peer)) {
        if (xm_progress() > 0)
            spins = 0;
        else
            xm_idle(&spins);
    }
}

void xm_wait(struct xm_req *r)
{
    int spins = 0;
    while (!r->done) {
        if (r->kind == XM_REQ_COLL && r->coll_step) {
            int rc = r->coll_step(r);
            if (rc != 0) {
                if (rc < 0)
                    r->status.MPI_ERROR = MPI_ERR_OTHER;
                xm_req_complete(r);
                break;
            }
        }
        if (xm_progress() > 0)
            spins = 0;
        else if (!r->done) {
            xm_idle(&spins);
        }
    }
    if (r->kind == XM_REQ_SEND)
        xm_wait_handed_over(r->peer);
}

int xm_wait_any(int n, struct xm_req **rs)
{
    int spins = 0, live = 0;
    for (int i = 0; i < n; i++)
        live += rs[i] != NULL;
    if (!live)
        return -1;
    for (;;) {
        for (int i = 0; i < n; i++)
            if (rs[i] && rs[i]->done)
                return i;
        if (xm_progress() > 0)
            spins = 0;
        else
            xm_idle(&spins);
    }
}
