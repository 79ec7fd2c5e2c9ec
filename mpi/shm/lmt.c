/*
 * lmt.c - cooperative single copy of large messages between two ranks of a node: the
 *         receiver's offer slot protocol and the two copy loops (contract in shm.h).
 *
 * Protocol (one slot per receiver; a receiver copies one rendezvous at a time):
 *   receiver  gen even -> write the offer's fields -> word = (gen+1) << 32 (release)
 *             -> claim chunk k = next++ and process_vm_readv it, while k < nchunks
 *             -> wait until its own chunks + `helped` == nchunks
 *             -> word = (gen+2) << 32: the offer is withdrawn, then FIN to the sender.
 *   sender    (progress, while its RTS waits for FIN) reads word (acquire); an odd gen
 *             whose fields name this rank and request, read twice around the fields
 *             (seqlock), is an offer; it claims chunks with a CAS that also checks gen,
 *             writes each with process_vm_writev and counts it in `helped`.
 *   Every claim is followed by exactly one `helped` increment, so when the counts add
 *   up no sender copy is in flight, and the receiver can hand the buffer to the user
 *   and reuse the slot.  A sender whose process_vm_writev fails gives its chunk back
 *   (given_back) and stops helping for good; the receiver copies that chunk itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../core/p2p.h"
#include "../core/transport.h"
#include "../core/xm.h"
#include "shm.h"

static int enabled;     /* offer transfers at all */
static int help_ok = 1; /* our process_vm_writev works (cleared on the first failure) */
static size_t min_len, chunk_min, chunk_max;
static int parts;
static int fault; /* LOOM_MPI_COOP_FAULT=1 (tests): the helper gives its first chunk back */
static int wait_ms; /* LOOM_MPI_COOP_WAIT_MS (tests): wait this long for the helper's first claim */
static unsigned long n_offers, n_shared, n_helped, n_given_back; /* for xm_lmt_report() */
static int ready; /* xm_lmt_init() ran (it needs xm_g.oversubscribed, known after init) */

void xm_lmt_init(void)
{
    ready = 1;
    enabled = xm_env_int("LOOM_MPI_COOP", !xm_g.oversubscribed) != 0;
    min_len = (size_t)xm_env_int("LOOM_MPI_COOP_MIN", 65536);
    chunk_min = (size_t)xm_env_int("LOOM_MPI_COOP_CHUNK", 32768);
    chunk_max = (size_t)xm_env_int("LOOM_MPI_COOP_CHUNK_MAX", 1 << 20);
    parts = xm_env_int("LOOM_MPI_COOP_PARTS", 2);
    fault = xm_env_int("LOOM_MPI_COOP_FAULT", 0);
    wait_ms = xm_env_int("LOOM_MPI_COOP_WAIT_MS", 0);
    if (chunk_min < 4096)
        chunk_min = 4096;
    if (chunk_max < chunk_min)
        chunk_max = chunk_min;
    if (parts < 2)
        parts = 2;
}

int xm_lmt_wanted(size_t n)
{
    if (!ready)
        xm_lmt_init();
    return enabled && n >= min_len && n > chunk_min;
}

/* n / parts in whole pages, within [chunk_min, chunk_max].  Few large chunks: every
 * process_vm_* call pins its pages first, and 1 MiB went fastest in two halves (43 us
 * against 55 in 8 chunks and 92 in 32); bounded so that a helper that joins late
 * still finds work. */
static size_t chunk_for(size_t n)
{
    size_t c = (n / (size_t)parts + 4095) & ~(size_t)4095;
    return c < chunk_min ? chunk_min : c > chunk_max ? chunk_max : c;
}

static size_t chunk_bytes(size_t len, size_t chunk, uint32_t k)
{
    size_t off = (size_t)k * chunk;
    return len - off < chunk ? len - off : chunk;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int xm_vm_copy(int write, int pid, void *buf, uint64_t remote, size_t n)
{
    char *local = buf;
    while (n) {
        struct iovec l = {local, n};
        struct iovec r = {(void *)(uintptr_t)remote, n};
        ssize_t k = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        local += k;
        remote += (uint64_t)k;
        n -= (size_t)k;
    }
    return 0;
}

int xm_lmt_recv(int src, uint32_t cookie, int spid, uint64_t saddr, void *dst, size_t n)
{
    struct xm_shm_lmt *s = xm_shm_lmt_slot(xm_g.local_rank);
    if (!s)
        return xm_vm_copy(0, spid, dst, saddr, n);
    size_t chunk_len = chunk_for(n);
    uint32_t nch = (uint32_t)((n + chunk_len - 1) / chunk_len);
    /* relaxed: only this rank ever writes word */
    uint64_t gen = atomic_load_explicit(&s->word, memory_order_relaxed) >> 32;
    /* gen is even here (every offer ends by moving it on to even): nobody reads the
     * fields; relaxed stores, published by the release store of word below */
    atomic_store_explicit(&s->helped, 0, memory_order_relaxed);
    atomic_store_explicit(&s->given_back, -1, memory_order_relaxed);
    atomic_store_explicit(&s->sender, src, memory_order_relaxed);
    atomic_store_explicit(&s->cookie, cookie, memory_order_relaxed);
    atomic_store_explicit(&s->nchunks, nch, memory_order_relaxed);
    atomic_store_explicit(&s->pid, (uint64_t)getpid(), memory_order_relaxed);
    atomic_store_explicit(&s->dst, (uint64_t)(uintptr_t)dst, memory_order_relaxed);
    atomic_store_explicit(&s->src, saddr, memory_order_relaxed);
    atomic_store_explicit(&s->len, (uint64_t)n, memory_order_relaxed);
    atomic_store_explicit(&s->chunk, (uint64_t)chunk_len, memory_order_relaxed);
    /* release: a sender that acquires the odd gen sees the fields above */
    atomic_store_explicit(&s->word, (gen + 1) << 32, memory_order_release);
    /* tests: whether the sender joins depends on scheduling; let it claim first */
    if (wait_ms > 0) {
        double until = mono_s() + wait_ms / 1000.0;
        /* relaxed: only the claim count is looked at */
        while ((uint32_t)atomic_load_explicit(&s->word, memory_order_relaxed) == 0 &&
               mono_s() < until)
            sched_yield();
    }

    int rc = 0;
    uint32_t mine = 0;
    for (;;) {
        /* relaxed RMW: the claim needs atomicity only; the data it guards is in the
         * sender's memory, not in the segment */
        uint32_t k = (uint32_t)atomic_fetch_add_explicit(&s->word, 1, memory_order_relaxed);
        if (k >= nch)
            break;
        mine++;
        if (rc == 0)
            rc = xm_vm_copy(0, spid, (char *)dst + (size_t)k * chunk_len,
                         saddr + (uint64_t)k * chunk_len, chunk_bytes(n, chunk_len, k));
    }
    /* acquire: pairs with the sender's release increment, so its writes into dst are
     * complete (they were made by the kernel on its behalf before it counted) */
    double t0 = 0;
    for (unsigned spins = 0;
         mine + atomic_load_explicit(&s->helped, memory_order_acquire) < nch; spins++) {
        if (spins > 64)
            sched_yield();
        if ((spins & 4095) != 4095)
            continue;
        /* a helper that died in the middle of its chunk never counts it: after a
         * second, ask the kernel whether it still exists */
        if (t0 == 0)
            t0 = mono_s();
        else if (mono_s() - t0 > 1.0 && kill(spid, 0) < 0 && errno == ESRCH) {
            /* relaxed: withdraw the offer; nobody is left to claim from it */
            atomic_store_explicit(&s->word, (gen + 2) << 32, memory_order_relaxed);
            return -EOWNERDEAD;
        }
    }
    /* relaxed: we wrote it before publishing the offer, the sender after claiming */
    int32_t back = atomic_load_explicit(&s->given_back, memory_order_relaxed);
    n_offers++;
    n_shared += mine < nch;
    /* relaxed: nobody claims from an even gen; withdrawing needs no ordering with the
     * copies, which have all been counted */
    atomic_store_explicit(&s->word, (gen + 2) << 32, memory_order_relaxed);
    /* given_back comes from the sender's process: a chunk index past the offer would
     * have us copy outside dst; refuse it (the caller takes the copy path instead) */
    if (back >= 0 && (uint32_t)back >= nch)
        return -EPROTO;
    if (back >= 0 && rc == 0)
        rc = xm_vm_copy(0, spid, (char *)dst + (size_t)back * chunk_len,
                     saddr + (uint64_t)back * chunk_len, chunk_bytes(n, chunk_len, (uint32_t)back));
    return rc;
}

int xm_lmt_help(int dest, uint32_t cookie)
{
    if (!help_ok || xm_g.local_index[dest] < 0)
        return 0;
    struct xm_shm_lmt *s = xm_shm_lmt_slot(xm_g.local_index[dest]);
    if (!s)
        return 0;
    /* acquire: pairs with the receiver's release store publishing the fields */
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    uint64_t gen = w >> 32;
    if (!(gen & 1) || (uint32_t)w >= atomic_load_explicit(&s->nchunks, memory_order_relaxed))
        return 0;
    /* seqlock read: relaxed field loads, an acquire fence, then gen again */
    int32_t snd = atomic_load_explicit(&s->sender, memory_order_relaxed);
    uint32_t ck = atomic_load_explicit(&s->cookie, memory_order_relaxed);
    uint32_t nch = atomic_load_explicit(&s->nchunks, memory_order_relaxed);
    pid_t pid = (pid_t)atomic_load_explicit(&s->pid, memory_order_relaxed);
    uint64_t dst = atomic_load_explicit(&s->dst, memory_order_relaxed);
    char *src = (char *)(uintptr_t)atomic_load_explicit(&s->src, memory_order_relaxed);
    size_t len = (size_t)atomic_load_explicit(&s->len, memory_order_relaxed);
    size_t chunk = (size_t)atomic_load_explicit(&s->chunk, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->word, memory_order_relaxed) >> 32 != gen ||
        snd != xm_g.rank || ck != cookie)
        return 0;
    /* The slot is written by another process: write only into the process dest's own
     * KVS card names, only from the bytes our RTS announced, in chunks that stay
     * within them.  Anything else is not an offer we make sense of: copy nothing (the
     * receiver copies alone). */
    uint64_t raddr;
    size_t rlen;
    if (pid != xm_peer_pid(dest) || xm_rdv_region(cookie, dest, &raddr, &rlen) < 0 ||
        (uint64_t)(uintptr_t)src != raddr || len > rlen || chunk < 4096 ||
        nch != (len + chunk - 1) / chunk) {
        help_ok = 0;
        return 0;
    }
    int done = 0;
    w = atomic_load_explicit(&s->word, memory_order_relaxed);
    while (w >> 32 == gen && (uint32_t)w < nch) {
        /* relaxed CAS: claims chunk (uint32_t)w of this very offer (gen is part of the
         * word, so a withdrawn or newer offer makes it fail) */
        if (!atomic_compare_exchange_weak_explicit(&s->word, &w, w + 1, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        uint32_t k = (uint32_t)w;
        int rc = fault ? -EPERM
                       : xm_vm_copy(1, pid, src + (size_t)k * chunk, dst + (uint64_t)k * chunk,
                                 chunk_bytes(len, chunk, k));
        if (rc < 0) {
            help_ok = 0;
            n_given_back++;
            /* relaxed: published by the release increment below */
            atomic_store_explicit(&s->given_back, (int32_t)k, memory_order_relaxed);
        } else {
            done++;
        }
        /* release: our copy (and given_back) before the receiver's acquire of helped */
        atomic_fetch_add_explicit(&s->helped, 1, memory_order_release);
        if (rc < 0)
            break;
        w = atomic_load_explicit(&s->word, memory_order_relaxed);
    }
    n_helped += (unsigned long)done;
    return done;
}

void xm_lmt_report(void)
{
    if (getenv("LOOM_MPI_DEBUG") && (n_offers || n_helped || n_given_back))
        fprintf(stderr,
                "loom-mpi: rank %d: cooperative copies: %lu offered, %lu shared; "
                "helped with %lu chunks, gave %lu back\n",
                xm_g.rank, n_offers, n_shared, n_helped, n_given_back);
}

/* ---- the shm transport's single copy (struct xm_transport rdv_*, shm.h) ---- */

static int cma_mode = -1; /* 1 use CMA, 0 copy path (CTS + RDATA), -1 auto (try once) */
static size_t eager_set;  /* LOOM_MPI_EAGER_MAX, or 0: the defaults of set_eager() */

/* Eager limit towards node-local ranks.  With CMA, 64 KiB went faster by rendezvous
 * (one copy, shared by both sides) than through the cells: 5.1 against 4.4 us when the
 * two CPUs share a cache, but 6.0 against 22-31 us when they do not (the cells' lines
 * cross between cores twice; this VM's CPUs move between both cases). */
static void set_eager(struct xm_transport *t)
{
    t->eager_max = eager_set ? eager_set : cma_mode == 0 ? 65536 : 32768;
}

void xm_shm_rdv_init(struct xm_transport *t)
{
    eager_set = (size_t)xm_env_int("LOOM_MPI_EAGER_MAX", 0);
    const char *cma = getenv("LOOM_MPI_CMA"); /* 0 | 1 | auto */
    cma_mode = cma && (*cma == '0' || *cma == '1') ? *cma - '0' : -1;
    const char *lmt = getenv("LOOM_SHM_LMT");
    if (lmt && strcmp(lmt, "cma") == 0)
        cma_mode = 1;
    else if (lmt && strcmp(lmt, "copy") == 0)
        cma_mode = 0;
    if (cma_mode != 0)
        /* Yama ptrace_scope 1 lets only ancestors read us; allow any process of the same
         * user (the kernel still checks credentials).  EINVAL without Yama: ignored. */
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    set_eager(t);
}

int xm_shm_rdv_read(struct xm_transport *t, void *dst, size_t n, int src, uint32_t cookie,
                    int pid, uint64_t addr, int whole)
{
    if (cma_mode == 0)
        return -ENOTSUP;
    int rc = whole && xm_lmt_wanted(n) ? xm_lmt_recv(src, cookie, pid, addr, dst, n)
                                       : xm_vm_copy(0, pid, dst, addr, n);
    if (rc == 0) {
        cma_mode = 1;
        return 0;
    }
    if (rc != -EOWNERDEAD && (cma_mode < 0 || rc != -ENOMEM)) {
        if (cma_mode < 0 && getenv("LOOM_MPI_DEBUG"))
            fprintf(stderr, "loom-mpi: rank %d: CMA unavailable (%s), using copies\n",
                    xm_g.rank, strerror(-rc));
        cma_mode = 0;
        set_eager(t);
    }
    return rc;
}

int xm_shm_rdv_offer(struct xm_transport *t, size_t n)
{
    (void)t;
    return cma_mode != 0 && xm_lmt_wanted(n);
}

int xm_shm_rdv_help(struct xm_transport *t, int dest, uint32_t cookie)
{
    (void)t;
    return xm_lmt_help(dest, cookie);
}
