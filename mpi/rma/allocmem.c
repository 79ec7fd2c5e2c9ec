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
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static void release(struct memblk *b)
{
    struct memblk **pp = &blocks;
    while (*pp != b)
        pp = &(*pp)->next;
    *pp = b->next;
    if (b->fd >= 0) {
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
    while (b && (b->base != (char *)p || b->freed))
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
    if (b && --b->wins == 0 && b->freed)
        release(b);
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
