/*
 * shm.c - the node's shared segment and the nemesis-style cell transport.
 *
 * Contract: implements struct xm_transport (core/transport.h) for node-local peers.
 *   Segment layout (offsets from the segment base; all shared):
 *     [struct seg_hdr][struct rank_area x nlocal][collective slots (shm.h)]
 *     [fastboxes: nlocal x nlocal x fbox_size][cells: nlocal x ncells x cell_size]
 *   Each local rank owns ncells cells, kept in its free queue.  To send, a rank takes a
 *   cell from its OWN free queue, fills header + payload in place and enqueues it on
 *   the receiver's receive queue.  The receiver hands the payload to xm_handle_pkt()
 *   and enqueues the cell back on the owner's free queue.  Both queues are MPSC
 *   (shm_queue.h).  No free cell: alloc() returns NULL and the engine parks the send.
 *   Lifetime: the local leader (lowest world rank on the node) creates the segment
 *   (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) before the PMI fence and publishes its
 *   name in the KVS; the others attach after the fence; the rank whose attach
 *   completes the count unlinks the name, so /dev/shm is clean as soon as everyone is
 *   attached.
 *   Names: /loom-mpi-<job>-<rank>-<16 random hex digits> (getrandom): another local
 *   user cannot guess one to make it first, and a name that exists anyway is never
 *   opened: a fresh one is drawn (SHM_NAME_TRIES in all, then a clear error).  An
 *   attaching rank opens the name from the KVS with O_NOFOLLOW and maps it only if
 *   it is a regular file of its own uid that no one else may open (mode & 077 == 0).
 *   Fastboxes: one single-slot box per ordered pair (sender s -> receiver r at index
 *   s*nlocal + r) for packets that fit (fbox_size - header).  The sender fills it when
 *   its flag is 0 and release-stores flag = 1; the receiver acquire-loads the flag,
 *   consumes, release-stores 0.  They are polled before the receive queue.
 *   Ordering: every packet (fastbox or cell) carries a 16-bit per-pair sequence number
 *   in hdr.reserved; the receiver accepts a packet only when it carries the next number
 *   expected from that sender, so fastbox and queue traffic from one sender merge in
 *   order (a queued cell that is "too new" means the missing one is in the fastbox,
 *   already visible because the sender published it before enqueueing the cell).
 *   Collective area (shm.h, after the rank areas): LOOM_MPI_SHM_COLL_SLOTS slots (16,
 *   8 above 16 local ranks; 0 = none), each a header, a result buffer and one buffer per
 *   local rank of LOOM_MPI_SHM_COLL_BUF bytes, and a broadcast ring of 4 chunks of
 *   LOOM_MPI_SHM_COLL_CHUNK bytes (16 KiB).  The buffer is as large as slots x (local
 *   ranks + 1) buffers allow in 32 MiB, at most 256 KiB (up to 7 ranks; 232 KiB at 8,
 *   128 KiB at 15, 64 KiB at 64, 16 KiB at 256, never under 2 KiB): every buffer-full
 *   (half of one in the pipelined large reductions and gathers) is one round, a barrier
 *   of all members, and 64 ranks on 2 cores took 12 ms for a 64 KiB Allreduce in 32
 *   rounds of 2 KiB, 0.65 ms in one; 8 ranks move a 1 MiB Allreduce in 11 rounds of
 *   114 KiB.  Its geometry is in the segment header for the attaching ranks.
 *   Sleeping: each rank has a futex word `seq` in its rank_area and a `sleeping` word
 *   that says how its threads sleep: the low 16 bits count threads in FUTEX_WAIT on
 *   `seq` (shm alone, or a shared-memory collective), the high 16 bits count threads
 *   asleep in the process's poll set (core/progress.c, shm and the netmod at once) on
 *   the rank's wake descriptor, an eventfd whose number is in `wfd`.  Wakers wake every
 *   sleeper, each with its own primitive: bump `seq` + FUTEX_WAKE, or write the eventfd.
 *   A producer publishes its packet, issues a seq_cst fence and looks at `sleeping`;
 *   only if it is set does it wake.  The sleeper reads `seq` (futex) or drains its
 *   eventfd (fd), adds itself to `sleeping`, fences, re-checks its fastboxes and
 *   queue, then sleeps (FUTEX_WAIT on the value it read, or epoll on the eventfd): one
 *   side always sees the other (Dekker), so no wake-up is lost and the fast path costs
 *   the sender one load and no atomic read-modify-write.
 *   Wake descriptors: a rank opens its eventfd the first time it sleeps on the poll set
 *   and publishes the number; a sender that must wake it takes a copy once with
 *   pidfd_open + pidfd_getfd on the pid the KVS names for that rank (allowed where CMA
 *   is: same user, ptrace rules; lmt.c's PR_SET_PTRACER), and keeps it.  Where the
 *   kernel refuses (Yama, no pidfd_getfd), the sender sets `nofd` in the segment header
 *   and fd sleepers nap at most 1 ms at a time instead: shm packets then wait up to
 *   1 ms (the first one up to one full sleep), and no thread is started for it.
 *   CPUs: each rank writes its affinity mask into its rank area after attaching;
 *   xm_shm_node_cpus() waits (at most NODE_CPUS_WAIT_S) for all of them and counts the
 *   CPUs of their union, the node's real capacity when a launcher bound every rank to
 *   a core of its own (each rank's own mask then shows one CPU).
 * One piece (about 850 lines): the segment's layout, the cell and fastbox protocol and
 *   the sleep/wake protocol are one shared-memory format with one memory-ordering
 *   argument, over one private state (S); split, each part would export that state.
 * Tunables: LOOM_MPI_SHM_CELLS (cells per rank), LOOM_MPI_SHM_CELL (bytes per cell),
 *   LOOM_MPI_SHM_FBOX (bytes per fastbox, default 4096, 2048 above 16 local ranks;
 *   0 = none).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../core/boot.h"
#include "../core/mt.h"
#include "../core/p2p.h"
#include "../core/transport.h"
#include "shm.h"
#include "shm_queue.h"

#define COLL_AREA_BUDGET (32L << 20) /* bytes for the collective buffers */
#define COLL_BUF_MAX (256 << 10)     /* bytes of one buffer at most */
#define NODE_CPUS_WAIT_S 10          /* xm_shm_node_cpus(): longest wait for the others */
#define SHM_NAME_TRIES 8             /* fresh segment names drawn before giving up */
#define SHM_NAME_PREFIX "/loom-mpi-"

#define SEG_MAGIC 0x4c6f6f6d53484d32ull /* "LoomSHM2" */
#define SLEEP_FD (1u << 16)             /* `sleeping`: one thread asleep on the wake fd */
#define SLEEP_FUTEX (SLEEP_FD - 1)      /* `sleeping`: the count of futex sleepers */

struct seg_hdr {
    uint64_t magic;
    uint64_t size;
    uint32_t nlocal, ncells, cell_size, fbox_size;
    _Atomic uint32_t attached;
    uint32_t ncslots, cbuf, cchunk; /* collective area (shm.h) */
    _Atomic uint32_t masks;         /* rank areas whose `cpus` is written */
    _Atomic uint32_t nofd;          /* a wake fd was refused to a sender: fd naps */
};

struct rank_area {
    struct xm_q recvq;
    struct xm_q freeq;
    _Alignas(
        64) _Atomic uint32_t seq; /* futex word: bumped for every wake-worthy event */
    _Atomic uint32_t sleeping;    /* threads of the owner (about to be) asleep: futex
                                   * sleepers + SLEEP_FD x fd sleepers */
    _Atomic int32_t wfd;          /* the owner's wake eventfd number + 1 (0: none yet) */
    struct xm_shm_lmt lmt;        /* this rank's large-transfer offer (lmt.c) */
    cpu_set_t cpus;               /* the owner's affinity once attached (node_cpus) */
};

/* One fastbox (sender -> receiver); header in the first cache line, payload after. */
struct fbox {
    _Atomic uint32_t flag; /* 1 = full (written by sender), 0 = free (by receiver) */
    uint32_t paylen;
    uint64_t pad;
    struct xm_pkt_hdr hdr; /* hdr.reserved = per-pair sequence number */
    /* payload follows */
};

struct cell {
    struct xm_cell_link link; /* must be first: queue offsets point here */
    uint32_t owner; /* local index of the owning rank (free queue to return to) */
    uint32_t paylen;
    struct xm_pkt_hdr hdr;
    /* payload follows */
};

static struct {
    char *base;
    size_t size;
    struct seg_hdr *hdr;
    struct rank_area *ra; /* nlocal entries */
    size_t cells_off, cell_size, cap;
    size_t fbox_off, fbox_size, fbox_cap;
    size_t coll_off, cslot_size, cbuf, cchunk;
    int ncslots;
    uint32_t ncells;
    uint16_t *sseq, *rseq; /* per local peer: next sequence number to send/accept */
    int want_cell;         /* an alloc failed: block() also watches the free queue */
    char name[128];
    int creator;
    int wfd;  /* my wake eventfd (-1 until the first fd sleep) */
    int *pfd; /* per local rank: its wake fd here, -1 not taken yet, -2 refused */
    unsigned long late_wakes; /* block_on(w) timeouts after *w moved: lost wake-ups */
} S = {.wfd = -1};

static struct cell *cell_at(uint64_t off)
{
    return (struct cell *)(S.base + off);
}

static size_t seg_layout(int nlocal, uint32_t ncells, size_t cell_size, size_t fbox_size,
                         size_t *cells_off)
{
    size_t off = (sizeof(struct seg_hdr) + 63) & ~(size_t)63;
    off += (size_t)nlocal * sizeof(struct rank_area);
    off = (off + 4095) & ~(size_t)4095;
    S.coll_off = off;
    S.cslot_size = (sizeof(struct xm_shm_coll) + S.cbuf * (size_t)(nlocal + 1) +
                    S.cchunk * XM_SHM_COLL_RING + 4095) &
                   ~(size_t)4095;
    off += (size_t)S.ncslots * S.cslot_size;
    S.fbox_off = off;
    off += (size_t)nlocal * nlocal * fbox_size;
    off = (off + 4095) & ~(size_t)4095;
    *cells_off = off;
    return off + (size_t)nlocal * ncells * cell_size;
}

static struct fbox *fbox_at(int s, int r)
{
    return (struct fbox *)(S.base + S.fbox_off +
                           ((size_t)s * xm_g.nlocal + r) * S.fbox_size);
}

/* Local rank lidx's wake descriptor, taken from its process once; -1 if there is none
 * (not published, or the kernel refuses: then `nofd` tells fd sleepers to nap). */
static int peer_wfd(int lidx)
{
    if (lidx == xm_g.local_rank)
        return S.wfd;
    if (!S.pfd || S.pfd[lidx] != -1)
        return S.pfd ? S.pfd[lidx] : -1;
    /* acquire: pairs with the owner's release store of the number */
    int32_t num = atomic_load_explicit(&S.ra[lidx].wfd, memory_order_acquire);
    if (num <= 0)
        return -1; /* not published: it has never slept on it */
    int fd = -1, pid = xm_peer_pid(xm_g.local_ranks[lidx]);
    int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pidfd >= 0) {
        fd = (int)syscall(SYS_pidfd_getfd, pidfd, num - 1, 0); /* close-on-exec */
        close(pidfd);
    }
    if (fd >= 0) {
        /* the number came from shared memory: write only to an eventfd */
        char path[64], link[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        ssize_t k = readlink(path, link, sizeof(link) - 1);
        if (k < 0 || (size_t)k != strlen("anon_inode:[eventfd]") ||
            memcmp(link, "anon_inode:[eventfd]", (size_t)k) != 0) {
            close(fd);
            fd = -1;
        }
    }
    S.pfd[lidx] = fd >= 0 ? fd : -2;
    return fd;
}

static __attribute__((noinline)) void wake_slow(int lidx, uint32_t how)
{
    struct rank_area *a = &S.ra[lidx];
    /* acquire: with the sleeper's release add to `sleeping` (t_wait_arm), its drain
     * of the eventfd happens before our write below, so the write is never drained
     * unseen */
    atomic_thread_fence(memory_order_acquire);
    if (how & SLEEP_FUTEX) {
        /* release: FUTEX_WAIT compares seq; a sleeper that read the old value before
         * adding itself to `sleeping` returns at once (EAGAIN) or is woken below */
        atomic_fetch_add_explicit(&a->seq, 1, memory_order_release);
        syscall(SYS_futex, &a->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
    if (how >= SLEEP_FD) {
        int fd = peer_wfd(lidx);
        uint64_t one = 1;
        if (fd < 0) /* relaxed: a hint, read by the sleeper before each sleep */
            atomic_store_explicit(&S.hdr->nofd, 1, memory_order_relaxed);
        else if (write(fd, &one, sizeof(one)) < 0) { /* EAGAIN: already signalled */
        }
    }
}

/* Called after publishing work for rank lidx (fastbox flag or queue link). */
static void wake(int lidx)
{
    struct rank_area *a = &S.ra[lidx];
    /* seq_cst fence: orders our publication before the load of `sleeping`; pairs with
     * the sleeper's add to `sleeping` + fence + re-check (Dekker): either we see it
     * asleep here, or the sleeper's re-check sees our packet. */
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed: the fence above gives the ordering */
    uint32_t how = atomic_load_explicit(&a->sleeping, memory_order_relaxed);
    if (__builtin_expect(how != 0, 0))
        wake_slow(lidx, how);
}

static int shm_create(void)
{
    size_t cells_off;
    int nl = xm_g.nlocal;
    S.ncells = (uint32_t)xm_env_int("LOOM_MPI_SHM_CELLS", nl <= 8 ? 64 : 32);
    S.cell_size = (size_t)xm_env_int("LOOM_MPI_SHM_CELL", 16384);
    int fb = xm_env_int("LOOM_MPI_SHM_FBOX", nl <= 16 ? 4096 : 2048);
    S.fbox_size = fb <= 0 ? 0 : ((size_t)fb + 63) & ~(size_t)63;
    if (S.fbox_size && S.fbox_size < 256)
        S.fbox_size = 256;
    if (S.ncells < 2 || S.cell_size < 256 || (S.cell_size & 63))
        return -EINVAL;
    /* collective area: small buffers when many ranks share the node */
    S.ncslots = xm_env_int("LOOM_MPI_SHM_COLL_SLOTS", nl <= 16 ? 16 : 8);
    /* one (all)reduce chunk per round: as large as 256 KiB while the whole area stays
     * within COLL_AREA_BUDGET (pages are only touched in the slots in use) */
    long cbd = S.ncslots > 0 ? COLL_AREA_BUDGET / ((long)S.ncslots * (nl + 1)) : 65536;
    int cb = xm_env_int("LOOM_MPI_SHM_COLL_BUF",
                        cbd > COLL_BUF_MAX ? COLL_BUF_MAX
                        : cbd < 2048       ? 2048
                                           : (int)(cbd & ~63L));
    int ch = xm_env_int("LOOM_MPI_SHM_COLL_CHUNK", 16384);
    if (S.ncslots < 0 || S.ncslots > 1024 || cb < 64 || ch < 64 || cb > (1 << 24) ||
        ch > (1 << 24))
        return -EINVAL;
    S.cbuf = ((size_t)cb + 63) & ~(size_t)63;
    S.cchunk = ((size_t)ch + 63) & ~(size_t)63;
    S.size = seg_layout(nl, S.ncells, S.cell_size, S.fbox_size, &cells_off);
    S.cells_off = cells_off;
    char job[40];
    int j = 0;
    for (const char *p = xm_g.jobid; *p && j < 39; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9'))
            job[j++] = *p;
    job[j] = 0;
    int fd = -1;
    for (int t = 0; t < SHM_NAME_TRIES && fd < 0; t++) {
        unsigned char r[8];
        char hex[2 * sizeof(r) + 1];
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return errno ? -errno : -EIO;
        for (size_t k = 0; k < sizeof(r); k++)
            snprintf(hex + 2 * k, 3, "%02x", r[k]);
        snprintf(S.name, sizeof(S.name), SHM_NAME_PREFIX "%s-%d-%s", job, xm_g.rank, hex);
        fd = shm_open(S.name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600);
        if (fd < 0 && errno != EEXIST)
            return -errno;
    }
    if (fd < 0) {
        fprintf(stderr,
                "loom-mpi: rank %d: shared segment name /dev/shm%s exists (made first by "
                "another process or user), as did %d other fresh names: not using them\n",
                xm_g.rank, S.name, SHM_NAME_TRIES - 1);
        return -EEXIST;
    }
    if (ftruncate(fd, (off_t)S.size) < 0) {
        int e = errno;
        close(fd);
        shm_unlink(S.name);
        return -e;
    }
    S.base = mmap(NULL, S.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (S.base == MAP_FAILED) {
        shm_unlink(S.name);
        return -ENOMEM;
    }
    S.creator = 1;
    S.hdr = (struct seg_hdr *)S.base;
    S.ra = (struct rank_area *)(S.base + ((sizeof(struct seg_hdr) + 63) & ~(size_t)63));
    for (int i = 0; i < nl; i++) {
        xm_q_init(&S.ra[i].recvq);
        xm_q_init(&S.ra[i].freeq);
        atomic_init(&S.ra[i].seq, 0);
        atomic_init(&S.ra[i].sleeping, 0);
        atomic_init(&S.ra[i].wfd, 0);
        for (uint32_t k = 0; k < S.ncells; k++) {
            uint64_t off = S.cells_off + ((size_t)i * S.ncells + k) * S.cell_size;
            cell_at(off)->owner = (uint32_t)i;
            xm_q_enq(&S.ra[i].freeq, S.base, off);
        }
    }
    S.hdr->size = S.size;
    S.hdr->nlocal = (uint32_t)nl;
    S.hdr->ncells = S.ncells;
    S.hdr->cell_size = (uint32_t)S.cell_size;
    S.hdr->fbox_size = (uint32_t)S.fbox_size;
    S.hdr->ncslots = (uint32_t)S.ncslots;
    S.hdr->cbuf = (uint32_t)S.cbuf;
    S.hdr->cchunk = (uint32_t)S.cchunk;
    /* fastbox flags are 0: ftruncate zero-fills */
    atomic_init(&S.hdr->attached, 1);
    atomic_init(&S.hdr->masks, 0);
    atomic_init(&S.hdr->nofd, 0);
    /* the others map the segment only after the PMI fence, which orders all of the
     * above before their reads; magic last for a cheap sanity check */
    S.hdr->magic = SEG_MAGIC;
    return xm_boot_put("shm", S.name);
}

static int shm_attach(void)
{
    char name[128];
    int leader = xm_g.local_ranks[0];
    int rc = xm_boot_get(leader, "shm", name, sizeof(name));
    if (rc < 0)
        return -ENOKEY; /* the leader's card is missing: not a missing file */
    if (strncmp(name, SHM_NAME_PREFIX, strlen(SHM_NAME_PREFIX)) != 0)
        return -EINVAL;
    for (const char *p = name + 1; *p; p++) /* what shm_create makes, nothing else */
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '-'))
            return -EINVAL;
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct seg_hdr)) {
        close(fd);
        return -EINVAL;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        fprintf(stderr,
                "loom-mpi: rank %d: shared segment /dev/shm%s is not ours (uid %u, mode "
                "%04o): not using it\n",
                xm_g.rank, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        close(fd);
        return -EPERM;
    }
    S.size = (size_t)st.st_size;
    S.base = mmap(NULL, S.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (S.base == MAP_FAILED)
        return -ENOMEM;
    S.hdr = (struct seg_hdr *)S.base;
    if (S.hdr->magic != SEG_MAGIC || S.hdr->nlocal != (uint32_t)xm_g.nlocal)
        return -EPROTO;
    S.ncells = S.hdr->ncells;
    S.cell_size = S.hdr->cell_size;
    S.fbox_size = S.hdr->fbox_size;
    S.ncslots = (int)S.hdr->ncslots;
    S.cbuf = S.hdr->cbuf;
    S.cchunk = S.hdr->cchunk;
    if (seg_layout(xm_g.nlocal, S.ncells, S.cell_size, S.fbox_size, &S.cells_off) >
        S.size)
        return -EPROTO;
    S.ra = (struct rank_area *)(S.base + ((sizeof(struct seg_hdr) + 63) & ~(size_t)63));
    snprintf(S.name, sizeof(S.name), "%s", name);
    /* acq_rel: the last one to attach unlinks; nobody needs the name after that */
    if (atomic_fetch_add_explicit(&S.hdr->attached, 1, memory_order_acq_rel) + 1 ==
        S.hdr->nlocal)
        shm_unlink(S.name);
    return 0;
}

static int t_put_card(struct xm_transport *t)
{
    if (xm_g.nlocal < 2 || xm_g.local_rank != 0)
        return 0;
    return shm_create();
}

static int t_connect(struct xm_transport *t)
{
    if (xm_g.nlocal < 2)
        return 0;
    int rc = S.creator ? 0 : shm_attach();
    if (rc < 0)
        return rc;
    /* after xm_bind_init(): the mask the rank keeps */
    struct rank_area *me = &S.ra[xm_g.local_rank];
    if (sched_getaffinity(0, sizeof(me->cpus), &me->cpus) < 0)
        CPU_ZERO(&me->cpus); /* counts as no CPU: the union is then the others' */
    atomic_fetch_add_explicit(&S.hdr->masks, 1, memory_order_release);
    S.cap = S.cell_size - sizeof(struct cell);
    t->one_max = S.cap;
    S.fbox_cap = S.fbox_size ? S.fbox_size - sizeof(struct fbox) : 0;
    S.sseq = calloc((size_t)xm_g.nlocal, sizeof(*S.sseq));
    S.rseq = calloc((size_t)xm_g.nlocal, sizeof(*S.rseq));
    S.pfd = malloc((size_t)xm_g.nlocal * sizeof(*S.pfd));
    if (!S.sseq || !S.rseq || !S.pfd)
        return -ENOMEM;
    for (int i = 0; i < xm_g.nlocal; i++)
        S.pfd[i] = -1;
    return 0;
}

int xm_shm_node_cpus(void)
{
    if (!S.base || xm_g.nlocal < 2)
        return -1;
    /* the others write theirs right after attaching, as we did: a short wait */
    struct timespec nap = {0, 100000}, t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; atomic_load_explicit(&S.hdr->masks, memory_order_acquire) <
                         (uint32_t)xm_g.nlocal;
         i++) {
        if (i < 64) {
            sched_yield();
            continue;
        }
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > NODE_CPUS_WAIT_S)
            return -1;
    }
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int i = 0; i < xm_g.nlocal; i++)
        CPU_OR(&all, &all, &S.ra[i].cpus);
    int n = CPU_COUNT(&all);
    return n > 0 ? n : -1;
}

static int t_init(struct xm_transport *t)
{
    xm_shm_rdv_init(t);
    return 0;
}

static int t_finalize(struct xm_transport *t)
{
    xm_lmt_report();
    if (S.late_wakes && getenv("LOOM_MPI_DEBUG"))
        fprintf(stderr, "loom-mpi: rank %d: %lu shm sleep(s) outlived their wake-up\n",
                xm_g.rank, S.late_wakes);
    if (S.base && S.base != MAP_FAILED)
        munmap(S.base, S.size);
    S.base = NULL;
    free(S.sseq);
    free(S.rseq);
    S.sseq = S.rseq = NULL;
    for (int i = 0; S.pfd && i < xm_g.nlocal; i++)
        if (S.pfd[i] >= 0)
            close(S.pfd[i]);
    free(S.pfd);
    S.pfd = NULL;
    if (S.wfd >= 0)
        close(S.wfd);
    S.wfd = -1;
    return 0;
}

static int t_reaches(struct xm_transport *t, int r)
{
    return S.base && xm_g.local_index[r] >= 0;
}

static struct xm_pkt_hdr *t_alloc_n(struct xm_transport *t, int dest, size_t want,
                                    void **payload, size_t *cap)
{
    if (S.fbox_size && want <= S.fbox_cap) {
        struct fbox *fb = fbox_at(xm_g.local_rank, xm_g.local_index[dest]);
        /* acquire: pairs with the receiver's release store of 0 (it finished reading
         * the old contents before we overwrite them) */
        if (atomic_load_explicit(&fb->flag, memory_order_acquire) == 0) {
            *payload = fb + 1;
            *cap = S.fbox_cap;
            return &fb->hdr;
        }
    }
    uint64_t off = xm_q_deq(&S.ra[xm_g.local_rank].freeq, S.base);
    if (!off) {
        S.want_cell = 1;
        return NULL;
    }
    S.want_cell = 0;
    struct cell *c = cell_at(off);
    *payload = c + 1;
    *cap = S.cap;
    return &c->hdr;
}

static struct xm_pkt_hdr *t_alloc(struct xm_transport *t, int dest, void **payload,
                                  size_t *cap)
{
    return t_alloc_n(t, dest, (size_t)-1, payload, cap);
}

static int t_post(struct xm_transport *t, int dest, struct xm_pkt_hdr *h, size_t paylen)
{
    int li = xm_g.local_index[dest];
    h->reserved = S.sseq[li]++;
    if ((char *)h < S.base + S.cells_off) {
        struct fbox *fb = (struct fbox *)((char *)h - offsetof(struct fbox, hdr));
        fb->paylen = (uint32_t)paylen;
        /* release: header and payload written above are visible to the receiver's
         * acquire load of the flag */
        atomic_store_explicit(&fb->flag, 1, memory_order_release);
    } else {
        struct cell *c = (struct cell *)((char *)h - offsetof(struct cell, hdr));
        c->paylen = (uint32_t)paylen;
        /* the enqueue's release publishes hdr + payload written above */
        xm_q_enq(&S.ra[li].recvq, S.base, (uint64_t)((char *)c - S.base));
    }
    wake(li);
    return 0;
}

/* Consume the fastbox from local peer s if it holds the next packet from s. */
static int poll_fbox(int s)
{
    struct fbox *fb = fbox_at(s, xm_g.local_rank);
    /* acquire: pairs with the sender's release store of 1 (contents complete) */
    if (atomic_load_explicit(&fb->flag, memory_order_acquire) == 0)
        return 0;
    if (fb->hdr.reserved != S.rseq[s])
        return 0; /* an older packet from s is still in the queue */
    /* the box is in memory rank s writes: its length and source are checked
     * against the box before the core reads them (a broken rank ends the job,
     * never a read past the box) */
    uint32_t paylen = fb->paylen;
    if (paylen > S.fbox_size - sizeof(struct fbox) || fb->hdr.src != xm_g.local_ranks[s])
        xm_die("shm: protocol error: fastbox of local rank %d (rank %d) says %u bytes from "
               "rank %d",
               s, xm_g.local_ranks[s], (unsigned)paylen, (int)fb->hdr.src);
    S.rseq[s]++;
    xm_handle_pkt(&fb->hdr, fb + 1, paylen);
    /* release: our reads of the contents happen before the sender may refill it */
    atomic_store_explicit(&fb->flag, 0, memory_order_release);
    return 1;
}

static int t_poll(struct xm_transport *t, int max)
{
    int n = 0, nl = xm_g.nlocal, me_l = xm_g.local_rank;
    struct rank_area *me = &S.ra[me_l];
    if (S.fbox_size)
        for (int s = 0; s < nl; s++)
            if (s != me_l)
                n += poll_fbox(s);
    while (n < max) {
        uint64_t off = xm_q_deq(&me->recvq, S.base);
        if (!off)
            break;
        /* the queue link was written by another rank: the offset must name a
         * cell, and its owner is where the cell lies, not what the cell says */
        uint64_t rel = off - S.cells_off;
        if (off < S.cells_off || rel % S.cell_size ||
            rel / S.cell_size >= (uint64_t)nl * S.ncells)
            xm_die("shm: protocol error: queue entry %llu is not a cell",
                   (unsigned long long)off);
        struct cell *c = cell_at(off);
        uint32_t owner = (uint32_t)(rel / S.cell_size / S.ncells);
        uint32_t paylen = c->paylen;
        if (paylen > S.cell_size - sizeof(struct cell) ||
            c->hdr.src != xm_g.local_ranks[owner])
            xm_die("shm: protocol error: cell of local rank %u (rank %d) says %u bytes from "
                   "rank %d",
                   (unsigned)owner, xm_g.local_ranks[owner], (unsigned)paylen,
                   (int)c->hdr.src);
        /* a newer packet than expected: the missing one is in owner's fastbox, already
         * visible (published before this cell was enqueued; the dequeue acquired) */
        for (long tries = 0; c->hdr.reserved != S.rseq[owner]; tries++) {
            if (poll_fbox((int)owner))
                continue;
            if (tries > 1000000) /* cannot happen with a correct sender */
                xm_die("shm: packet %u from local rank %u, expected %u",
                       (unsigned)c->hdr.reserved, (unsigned)owner,
                       (unsigned)S.rseq[owner]);
            sched_yield();
        }
        S.rseq[owner]++;
        xm_handle_pkt(&c->hdr, c + 1, paylen);
        xm_q_enq(&S.ra[owner].freeq, S.base, off);
        /* the owner may be parked waiting for a free cell */
        if (owner != (uint32_t)me_l)
            wake((int)owner);
        n++;
    }
    return n;
}

/* Anything for me?  (used after advertising `sleeping`) */
static int have_work(void)
{
    int me_l = xm_g.local_rank;
    struct rank_area *me = &S.ra[me_l];
    if (!xm_q_empty(&me->recvq))
        return 1;
    if (S.want_cell && !xm_q_empty(&me->freeq))
        return 1;
    if (S.fbox_size)
        for (int s = 0; s < xm_g.nlocal; s++)
            if (s != me_l &&
                /* relaxed: a hint; poll() re-reads with acquire */
                atomic_load_explicit(&fbox_at(s, me_l)->flag, memory_order_relaxed))
                return 1;
    return 0;
}

/* Sleep until p2p work arrives, or (w != NULL) *w moves away from old. */
static void block_on(const _Atomic uint32_t *w, uint32_t old, int timeout_ms)
{
    struct rank_area *me = &S.ra[xm_g.local_rank];
    /* acquire: everything the waker did before its seq bump is visible if we read it */
    uint32_t s = atomic_load_explicit(&me->seq, memory_order_acquire);
    /* a count, not a flag: under MPI_THREAD_MULTIPLE a thread in a shared-memory
     * collective may sleep here while another sleeps in block(); a flag cleared by the
     * first to wake hid the other from wakers.  Relaxed RMW + seq_cst fence: pairs
     * with the fence in wake() (Dekker). */
    atomic_fetch_add_explicit(&me->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed load of *w: ordered by the fence (the caller re-reads with acquire) */
    if (!have_work() && !(w && atomic_load_explicit(w, memory_order_relaxed) != old)) {
        struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
        int held = xm_mt_drop(); /* MPI_THREAD_MULTIPLE: others run while we sleep */
        /* returns at once (EAGAIN) if seq moved since we read s */
        if (syscall(SYS_futex, &me->seq, FUTEX_WAIT, s, &ts, NULL, 0) < 0 &&
            errno == ETIMEDOUT && w &&
            atomic_load_explicit(w, memory_order_relaxed) != old)
            S.late_wakes++; /* what we waited for came, its wake-up did not */
        xm_mt_take(held);
    }
    /* relaxed: only a hint for wakers; a spurious wake costs one syscall */
    atomic_fetch_sub_explicit(&me->sleeping, 1, memory_order_relaxed);
}

static int t_block(struct xm_transport *t, int timeout_ms)
{
    block_on(NULL, 0, timeout_ms);
    return 0;
}

/* ---- sleeping in the process's poll set (core/transport.h wait_*) ----
 * The eventfd is made on the first such sleep, so a job on shared memory alone never
 * has one; its number is published for the senders after it exists (release). */
static int t_wait_fd(struct xm_transport *t)
{
    if (S.wfd < 0 && S.ra) {
        S.wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (S.wfd < 0)
            return -1;
        /* release: the number is read by senders with acquire (peer_wfd) */
        atomic_store_explicit(&S.ra[xm_g.local_rank].wfd, S.wfd + 1,
                              memory_order_release);
    }
    return S.wfd;
}

/* About to sleep in the poll set: 1 = work is here already (do not sleep), 0 = armed
 * (call t_wait_disarm after the sleep).  The eventfd is drained BEFORE we announce
 * ourselves: a sender that sees us asleep writes after the drain (release add here,
 * acquire fence in wake_slow) and wakes the poll, and a sender whose write came before
 * the drain had published its packet before it, which the re-check below sees.  The
 * rest is block_on()'s Dekker pairing with wake(): our add to `sleeping`, a seq_cst
 * fence, the re-check, against the sender's publication, its seq_cst fence, its load of
 * `sleeping`. */
static int t_wait_arm(struct xm_transport *t, int *timeout_ms)
{
    struct rank_area *me = &S.ra[xm_g.local_rank];
    uint64_t v;
    if (read(S.wfd, &v, sizeof(v)) < 0) { /* EAGAIN: nothing was pending */
    }
    /* release: orders the drain before a waker's write (wake_slow's acquire fence);
     * + seq_cst fence: pairs with the fence in wake() */
    atomic_fetch_add_explicit(&me->sleeping, SLEEP_FD, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (have_work()) {
        atomic_fetch_sub_explicit(&me->sleeping, SLEEP_FD, memory_order_relaxed);
        return 1;
    }
    /* relaxed: a hint; a sender that cannot reach our eventfd set it (peer_wfd) */
    if (atomic_load_explicit(&S.hdr->nofd, memory_order_relaxed) && *timeout_ms > 1)
        *timeout_ms = 1;
    return 0;
}

static void t_wait_disarm(struct xm_transport *t)
{
    /* relaxed: only a hint for wakers; a late write leaves the eventfd readable, which
     * costs the next sleep one spurious return (t_wait_arm drains it) */
    atomic_fetch_sub_explicit(&S.ra[xm_g.local_rank].sleeping, SLEEP_FD,
                              memory_order_relaxed);
}

/* another thread of ours sleeps in t_block() (core/mt.c) */
static void t_wake(struct xm_transport *t)
{
    if (S.ra)
        wake(xm_g.local_rank);
}

/* ---- collective area (shm.h) ------------------------------------------------------ */
void xm_shm_coll_geom(struct xm_shm_coll_geom *g)
{
    g->nslots = S.base ? S.ncslots : 0;
    g->buf = S.cbuf;
    g->chunk = S.cchunk;
    g->nlocal = xm_g.nlocal;
}

static struct xm_shm_coll *cslot(int i)
{
    return (struct xm_shm_coll *)(S.base + S.coll_off + (size_t)i * S.cslot_size);
}

struct xm_shm_coll *xm_shm_coll_slot(uint64_t key, int *idx)
{
    if (!S.base)
        return NULL;
    /* Every member scans from slot 0: a slot only ever goes from 0 to a key, so the
     * first slot that holds our key or was free when someone claimed it is the same
     * for all of us; a full area is full for all of us too. */
    for (int i = 0; i < S.ncslots; i++) {
        struct xm_shm_coll *c = cslot(i);
        /* acquire: pairs with the claiming CAS (nothing else to see; cheap) */
        uint64_t k = atomic_load_explicit(&c->key, memory_order_acquire);
        if (k == 0) {
            uint64_t z = 0;
            /* acq_rel: on failure we read the winner's key */
            if (atomic_compare_exchange_strong_explicit(
                    &c->key, &z, key, memory_order_acq_rel, memory_order_acquire))
                k = key;
            else
                k = z;
        }
        if (k == key) {
            *idx = i;
            return c;
        }
    }
    return NULL;
}

char *xm_shm_coll_res(struct xm_shm_coll *s)
{
    return (char *)s + sizeof(*s);
}

char *xm_shm_coll_data(struct xm_shm_coll *s, int member)
{
    return (char *)s + sizeof(*s) + S.cbuf * (size_t)(member + 1);
}

char *xm_shm_coll_ring(struct xm_shm_coll *s, int k)
{
    return (char *)s + sizeof(*s) + S.cbuf * (size_t)(xm_g.nlocal + 1) +
           S.cchunk * (size_t)k;
}

void xm_shm_sleep(const _Atomic uint32_t *w, uint32_t old, int timeout_ms)
{
    block_on(w, old, timeout_ms);
}

void xm_shm_wake(int lidx)
{
    wake(lidx);
}

void xm_shm_wake_fence(void)
{
    /* seq_cst: see wake() */
    atomic_thread_fence(memory_order_seq_cst);
}

void xm_shm_wake_nf(int lidx)
{
    struct rank_area *a = &S.ra[lidx];
    /* relaxed: the caller's xm_shm_wake_fence() gives the ordering */
    uint32_t how = atomic_load_explicit(&a->sleeping, memory_order_relaxed);
    if (how)
        wake_slow(lidx, how);
}

struct xm_shm_lmt *xm_shm_lmt_slot(int lidx)
{
    return S.ra ? &S.ra[lidx].lmt : NULL;
}

struct xm_transport xm_shm_transport = {
    .name = "shm",
    .init = t_init,
    .finalize = t_finalize,
    .put_card = t_put_card,
    .connect = t_connect,
    .reaches = t_reaches,
    .alloc = t_alloc,
    .alloc_n = t_alloc_n,
    .post = t_post,
    .poll = t_poll,
    .block = t_block,
    .wake = t_wake,
    .wait_fd = t_wait_fd,
    .wait_arm = t_wait_arm,
    .wait_disarm = t_wait_disarm,
    .rdv_read = xm_shm_rdv_read,
    .rdv_offer = xm_shm_rdv_offer,
    .rdv_help = xm_shm_rdv_help,
};
