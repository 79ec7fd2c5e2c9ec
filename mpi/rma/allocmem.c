/*
 * allocmem.c - memory of MPI_Alloc_mem that the other ranks of this node can map, so
 *              that a MPI_Win_create window over it is reached by plain loads and
 *              stores instead of CMA system calls or requests to the target.
 *
 * Owns: the table of live MPI_Alloc_mem blocks (xm_mem_alloc/xm_mem_free), the count of
 * windows over each block (Free_mem of a block still in a window releases it only with
 * the last such window, so the window never reaches freed memory), and
 * xm_mem_map_peer(), which maps another rank's block into this process.
 * How a block is shared:
 *   - Each block is its own anonymous memory file (memfd_create, close-on-exec): it has
 *     no name in any file system, so there is nothing to guess, follow, race for or
 *     leave behind after an abort.  Its size is fixed at creation and sealed
 *     (F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL): a mapping of it can never fault.
 *   - A peer gets the file from this process with pidfd_getfd(), which the kernel
 *     allows only where process_vm_readv is allowed (same user, ptrace rules): no more
 *     than CMA already grants.  The peer refuses a file that is not sealed against
 *     shrinking or is smaller than the range the window announced (offset and length
 *     from the creation's allgather are checked, overflow-free, before any mmap).
 *   - Small blocks (< LOOM_MPI_ALLOC_MEM_SHM_MIN bytes, default 0: all), blocks asked
 *     for before MPI_Init, jobs without a node-local transport, or
 *     LOOM_MPI_ALLOC_MEM_SHM=0 take malloc, as does any failure of the above.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/p2p.h"
#include "rma.h"

#ifndef F_SEAL_SEAL
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#define MFD_ALLOW_SEALING 2u
#endif

#define MAX_SHARED_BLOCKS 1024 /* each holds a descriptor: stay far from the limit */

struct memblk {
    char *base;
    size_t len;    /* bytes asked for */
    size_t maplen; /* bytes mapped (whole pages), 0 for malloc */
    int fd;        /* the memory file, -1 for malloc */
    int wins;      /* windows over (part of) it */
    int freed;     /* MPI_Free_mem came while windows used it: released with the last */
    int adopted;   /* user memory moved into fd by xm_mem_win_adopt (base: its pages) */
    ino_t ino;     /* adopted: fd's inode, to find the mapping again in /proc/self/maps */
    struct memblk *next;
};
static struct memblk *blocks;
static int nshared;

static struct memblk *find(const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p;
    for (struct memblk *b = blocks; b; b = b->next) {
        uintptr_t s = (uintptr_t)b->base;
        if (!b->freed && a >= s && a - s <= b->len && len <= b->len - (a - s))
            return b;
    }
    return NULL;
}

static char *shared_block(size_t size, int *fdp, size_t *maplen)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0 || size > ((size_t)-1 >> 1))
        return NULL;
    size_t len = (size + (size_t)pg - 1) & ~((size_t)pg - 1);
    if (!len)
        len = (size_t)pg;
    int fd = (int)syscall(SYS_memfd_create, "loom-mpi-alloc-mem",
                          MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return NULL;
    if (ftruncate(fd, (off_t)len) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    *fdp = fd;
    *maplen = len;
    return p;
}

void *xm_mem_alloc(size_t size)
{
    struct memblk *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->fd = -1;
    b->len = size;
    if (xm_g.initialized && xm_g.shm && nshared < MAX_SHARED_BLOCKS &&
        xm_env_int("LOOM_MPI_ALLOC_MEM_SHM", 1) &&
        size >= (size_t)xm_env_int("LOOM_MPI_ALLOC_MEM_SHM_MIN", 0))
        b->base = shared_block(size, &b->fd, &b->maplen);
    if (b->base)
        nshared++;
    else if (!(b->base = malloc(size ? size : 1))) {
        free(b);
        return NULL;
    }
    b->next = blocks;
    blocks = b;
    return b->base;
}

static void restore(struct memblk *b);

static void release(struct memblk *b)
{
    struct memblk **pp = &blocks;
    while (*pp != b)
        pp = &(*pp)->next;
    *pp = b->next;
    if (b->adopted) {
        restore(b);
        close(b->fd);
        nshared--;
    } else if (b->fd >= 0) {
        munmap(b->base, b->maplen);
        close(b->fd);
        nshared--;
    } else {
        free(b->base);
    }
    free(b);
}

int xm_mem_free(void *p)
{
    struct memblk *b = blocks;
    while (b && (b->base != (char *)p || b->freed || b->adopted))
        b = b->next;
    if (!b) {
        free(p); /* not from MPI_Alloc_mem: what the caller handed us */
        return 0;
    }
    if (b->wins) {
        /* still the memory of a window (MPICH's own tests free it before Win_free):
         * the window keeps it until the last one over it is freed */
        b->freed = 1;
        return 0;
    }
    release(b);
    return 0;
}

void *xm_mem_win_ref(const void *base, size_t len, int *fd, uint64_t *off)
{
    struct memblk *b = len ? find(base, len) : NULL;
    *fd = -1;
    *off = 0;
    if (!b)
        return NULL;
    b->wins++;
    if (b->fd >= 0) {
        *fd = b->fd;
        *off = (uint64_t)((const char *)base - b->base);
    }
    return b;
}

void xm_mem_win_unref(void *blk)
{
    struct memblk *b = blk;
    if (b && --b->wins == 0 && (b->freed || b->adopted))
        release(b); /* adopted pages: back into private memory with the last window */
}

char *xm_mem_map_peer(pid_t pid, int fd, uint64_t off, uint64_t len, void **map,
                      size_t *maplen)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pid <= 0 || fd < 0 || len == 0 || pg <= 0 || off > (uint64_t)INT64_MAX ||
        len > (uint64_t)INT64_MAX - off)
        return NULL;
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return NULL;
    int mfd = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    close(pfd);
    if (mfd < 0)
        return NULL;
    struct stat st;
    int seals = fcntl(mfd, F_GET_SEALS);
    uint64_t start = off & ~((uint64_t)pg - 1), end = off + len;
    char *p = NULL;
    if (seals >= 0 && (seals & F_SEAL_SHRINK) && fstat(mfd, &st) == 0 &&
        S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size >= 0 &&
        end <= (uint64_t)st.st_size) {
        size_t n = (size_t)(end - start);
        void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, (off_t)start);
        if (m != MAP_FAILED) {
            *map = m;
            *maplen = n;
            p = (char *)m + (off - start);
        }
    }
    close(mfd);
    return p;
}

/* ---- (issue 21) windows over memory Loom did not allocate -------------------------
 * MPI_Win_create over malloc/calloc memory: the pages of the window are moved, in
 * place and with their contents, into a memory file of their own (copy into the file's
 * mapping, then mremap that mapping over the old pages, which the kernel does in one
 * step), so the node's peers map them like an MPI_Alloc_mem block.  The addresses stay
 * the same; when the last window over them is freed the contents go back into private
 * anonymous pages at the same place (restore).  Taken only where nobody else can write
 * the pages while they move:
 *   - the pages are private anonymous read-write memory of one mapping (heap or
 *     anonymous mmap; not the stack, not a file, not already shared);
 *   - every page holds window bytes only, or the window is the whole of a glibc
 *     mmapped chunk (large malloc/calloc: the other bytes of its first and last page are
 *     the chunk's own header and slack, touched only by free() of that very block,
 *     which may not come before MPI_Win_free);
 *   - no receive of this process is in flight into them, and no rendezvous send whose
 *     receiver copies from them in place (core's xm_p2p_buffer_busy, by each buffer's
 *     true bounds).
 * Anything else, or any failure, leaves the memory alone (the window keeps CMA). */

/* /proc/self/maps: the one mapping holding [s, e).  ino 0: private anonymous rw-p
 * (heap or unnamed) wanted; else a mapping of that inode. */
static int maps_cover(uintptr_t s, uintptr_t e, ino_t ino)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return 0;
    char line[512];
    int ok = 0;
    while (fgets(line, sizeof(line), f)) {
        size_t L = strlen(line);
        int whole = L > 0 && line[L - 1] == '\n';
        unsigned long lo, hi, ioff, inode;
        char perms[8], dev[16];
        int name = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &lo, &hi, perms, &ioff, &dev[0],
                   &inode, &name) >= 6 &&
            lo <= s && e <= hi) {
            const char *path = name > 0 && (size_t)name <= L ? line + name : "";
            if (ino == 0)
                ok = strcmp(perms, "rw-p") == 0 && inode == 0 &&
                     (*path == '\n' || *path == 0 || strncmp(path, "[heap]", 6) == 0);
            else
                ok = strncmp(perms, "rw-s", 4) == 0 && inode == (unsigned long)ino;
            break;
        }
        while (!whole && fgets(line, sizeof(line), f)) { /* rest of a long line */
            L = strlen(line);
            whole = L > 0 && line[L - 1] == '\n';
        }
    }
    fclose(f);
    return ok;
}

/* n bytes from src to dst (fresh zero pages), leaving out the pages of src that are all
 * zero: untouched calloc memory is read through the kernel's zero page and stays
 * unallocated in dst, so a large, mostly untouched window does not cost its size */
static void copy_nonzero(char *dst, const char *src, size_t n, size_t pg)
{
    static const char zero[256];
    for (size_t at = 0; at < n; at += pg) {
        size_t k = n - at < pg ? n - at : pg, i = 0;
        while (i < k && memcmp(src + at + i, zero, k - i < 256 ? k - i : 256) == 0)
            i += 256;
        if (i < k)
            memcpy(dst + at, src + at, k);
    }
}

/* 1 if malloc is glibc's own, so that the two words before a block it returned are
 * glibc's chunk header; 0 where something interposes it (a sanitizer's allocator,
 * jemalloc or tcmalloc preloaded): their blocks carry no such header, and reading
 * before one reads a redzone or a neighbour's bytes */
static int glibc_malloc(void)
{
    static int v = -1; /* a race only ever writes the same value */
    if (v < 0) {
        void *m = dlsym(RTLD_DEFAULT, "malloc"),
             *l = dlsym(RTLD_DEFAULT, "__libc_malloc");
        v = m && l && m == l;
    }
    return v;
}

/* [s, e) lies in the glibc mmapped chunk whose user memory starts at a: a block of
 * malloc or calloc large enough to have its own mapping (prev_size 0: not memalign's) */
static int mmapped_chunk(uintptr_t a, uintptr_t s, uintptr_t e, uintptr_t pg)
{
    const size_t h = 2 * sizeof(size_t);
    if (a % pg < h || !glibc_malloc()) /* the header on another page, or no header */
        return 0;
    size_t prev = ((const size_t *)a)[-2], sz = ((const size_t *)a)[-1];
    size_t csz = sz & ~(size_t)7;
    uintptr_t p = a - h;
    /* IS_MMAPPED set, NON_MAIN_ARENA clear; [p, p + csz) is whole pages */
    if (!(sz & 2) || (sz & 4) || prev != 0 || p % pg || csz > UINTPTR_MAX - p || csz % pg)
        return 0;
    return p <= s && e <= p + csz;
}

void *xm_mem_win_adopt(void *base, size_t len, int *fd, uint64_t *off)
{
    long pgl = sysconf(_SC_PAGESIZE);
    *fd = -1;
    *off = 0;
    uintptr_t a = (uintptr_t)base, pg = (uintptr_t)pgl;
    if (pgl <= 0 || !len || !base || nshared >= MAX_SHARED_BLOCKS ||
        len > UINTPTR_MAX - a - pg)
        return NULL;
    uintptr_t s = a & ~(pg - 1), e = (a + len + pg - 1) & ~(pg - 1);
    if ((s != a || e != a + len) && !mmapped_chunk(a, s, e, pg))
        return NULL;
    /* a receive or rendezvous in flight over these pages: left alone.  A write into
     * the old pages between the copy and the remap below would be lost.  Today every
     * write into a receive buffer is made while this process is inside an MPI call of
     * its own (the single copy and the sender's help with it end before rdv_read
     * returns), so none falls there; the refusal keeps that true of any path that
     * writes on its own time (a peer's process_vm_writev, a receiving thread). */
    if (xm_p2p_buffer_busy(s, e) || !maps_cover(s, e, 0))
        return NULL;
    struct memblk *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    size_t n = e - s;
    int mfd =
        (int)syscall(SYS_memfd_create, "loom-mpi-win", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat st;
    void *tmp = MAP_FAILED;
    if (mfd >= 0 && ftruncate(mfd, (off_t)n) == 0 &&
        fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
        fstat(mfd, &st) == 0)
        tmp = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (tmp == MAP_FAILED) {
        if (mfd >= 0)
            close(mfd);
        free(b);
        return NULL;
    }
    copy_nonzero(tmp, (const char *)s, n, (size_t)pg);
    if (mremap(tmp, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)s) == MAP_FAILED) {
        munmap(tmp, n);
        close(mfd);
        free(b);
        return NULL;
    }
    b->base = (char *)s;
    b->len = n;
    b->maplen = n;
    b->fd = mfd;
    b->adopted = 1;
    b->ino = st.st_ino;
    b->wins = 1;
    b->next = blocks;
    blocks = b;
    nshared++;
    *fd = mfd;
    *off = (uint64_t)(a - s);
    return b;
}

/* The last window over adopted pages is gone: their contents back into private
 * anonymous pages at the same place, if they are still the file's mapping (a program
 * that freed the memory before MPI_Win_free gets nothing written anywhere). */
static void restore(struct memblk *b)
{
    uintptr_t s = (uintptr_t)b->base;
    if (!maps_cover(s, s + b->maplen, b->ino))
        return;
    void *tmp =
        mmap(NULL, b->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp == MAP_FAILED)
        return; /* the file's pages stay: same contents, only shared with the file */
    /* only the file's data: its holes are pages nobody wrote (zero in tmp already),
     * and reading them through the mapping would allocate them */
    long pg = sysconf(_SC_PAGESIZE);
    off_t at = 0, end = (off_t)b->maplen;
    while (at < end) {
        off_t d = lseek(b->fd, at, SEEK_DATA), h = end;
        if (d < 0 && errno == ENXIO)
            break; /* holes to the end */
        if (d >= at && d < end) {
            h = lseek(b->fd, d, SEEK_HOLE);
            if (h <= d || h > end)
                h = end;
        } else {
            d = at; /* no answer to trust: copy the rest */
        }
        copy_nonzero((char *)tmp + d, b->base + d, (size_t)(h - d),
                     pg > 0 ? (size_t)pg : 4096);
        at = h;
    }
    if (mremap(tmp, b->maplen, b->maplen, MREMAP_MAYMOVE | MREMAP_FIXED, b->base) ==
        MAP_FAILED)
        munmap(tmp, b->maplen);
}
