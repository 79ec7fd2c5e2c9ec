/*
 * shmwin.c - node-shared memory of windows: the mapping behind
 *            MPI_Win_allocate_shared (and MPI_Win_allocate inside one node).
 *
 * Owns: xm_shmwin_map()/xm_shmwin_unmap(), and the operations that work straight on
 * such a mapping: xm_shmwin_copy() (put/get), xm_shmwin_acc() and xm_shmwin_cas()
 * (the accumulate family, under the target part's lock word) (rma.h).
 * Safety, as the segment of mpi/shm/shm.c: rank 0 of the window creates the object
 * with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, under a name with 64 random bits
 * (getrandom), so nobody can have prepared it; the others open it with O_NOFOLLOW and
 * refuse anything that is not a regular file of our uid, mode without group/other
 * bits, of the announced size.  Once every rank has mapped it (an allreduce says so),
 * rank 0 unlinks the name: /dev/shm keeps nothing after creation, even if the job
 * dies later.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rma.h"
#include "../coll/coll.h"
#include "../dt/dtype.h"

int xm_shmwin_map(struct xm_comm *c, size_t total, char **map)
{
    return xm_shmwin_map_id(c, total, map, NULL);
}

int xm_shmwin_map_id(struct xm_comm *c, size_t total, char **map, uint64_t *id)
{
    char name[64] = "";
    int fd = -1, ok = 1, allok = 0;
    void *p = MAP_FAILED;
    if (c->rank == 0) {
        unsigned long long r;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
            ok = 0;
        } else {
            snprintf(name, sizeof(name), "/loom-win-%d-%016llx", xm_g.rank, r);
            fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600);
            if (fd < 0 || ftruncate(fd, (off_t)total) < 0)
                ok = 0;
        }
        if (!ok)
            name[0] = 0;
    }
    if (xm_coll_bcast(name, (int)sizeof(name), MPI_CHAR, 0, c) < 0)
        return MPI_ERR_OTHER;
    name[sizeof(name) - 1] = 0;
    if (c->rank != 0) {
        if (!name[0]) {
            ok = 0;
        } else {
            struct stat st;
            fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
            if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
                st.st_uid != geteuid() || (st.st_mode & 077) || (size_t)st.st_size != total)
                ok = 0;
        }
    }
    if (ok) {
        p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            ok = 0;
    }
    if (fd >= 0)
        close(fd);
    if (xm_coll_allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, c) < 0)
        allok = 0;
    if (c->rank == 0 && name[0])
        shm_unlink(name); /* everyone mapped it (or gave up): the name is not needed */
    if (!allok) {
        if (p != MAP_FAILED)
            munmap(p, total);
        return MPI_ERR_NO_MEM;
    }
    *map = p;
    if (id) { /* the random bits of the name: the same at every rank */
        const char *dash = strrchr(name, '-');
        *id = dash ? strtoull(dash + 1, NULL, 16) : 0;
    }
    return 0;
}

void xm_shmwin_unmap(char *map, size_t total)
{
    munmap(map, total);
}

/* ---- direct operations ------------------------------------------------------------ */

void xm_shmwin_copy(struct xm_win *w, int trank, uint64_t tbase, int tcount,
                    const struct xm_dtype *tdt, void *obuf, int ocount,
                    const struct xm_dtype *odt, int put)
{
    char *tb = xm_win_part(w, trank);
    struct xm_rma_segit it;
    uint64_t off, len;
    size_t pos = 0;
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    while (xm_rma_segit_next(&it, &off, &len)) {
        if (put)
            xm_dt_pack(obuf, ocount, odt, pos, tb + off, len);
        else
            xm_dt_unpack(obuf, ocount, odt, pos, tb + off, len);
        pos += len;
    }
}

/* The lock word of rank r's part.  Holders only copy and combine memory between lock
 * and unlock (never wait, never call MPI), so a waiter spins briefly, then yields its
 * CPU to whoever holds it (64 ranks on 2 cores: the holder may be descheduled).  A
 * holder that dies ends the job through the launcher, as any dead rank does. */
static uint32_t *lock_word(struct xm_win *w, int r)
{
    return (uint32_t *)(w->lkmap ? w->lkmap + (size_t)r * 64
                                 : w->map + w->lock_off + (size_t)r * 64);
}

static void part_lock(struct xm_win *w, int r)
{
    uint32_t *l = lock_word(w, r);
    for (int spins = 0;; spins++) {
        uint32_t z = 0;
        if (__atomic_load_n(l, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(l, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        if (spins < 64 && !xm_g.oversubscribed) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            sched_yield();
        }
    }
}

static void part_unlock(struct xm_win *w, int r)
{
    __atomic_store_n(lock_word(w, r), 0, __ATOMIC_RELEASE);
}

void xm_shmwin_lock(struct xm_win *w, int r)
{
    part_lock(w, r);
}

void xm_shmwin_unlock(struct xm_win *w, int r)
{
    part_unlock(w, r);
}

#define ACC_CHUNK 65536

/* MINLOC/MAXLOC on a padded pair type (MPI_DOUBLE_INT ...): an element's members are
 * separate segments of the target, so the target's stream is gathered packed, combined
 * element by element (xm_rma_pair_apply) and scattered back, under the part's lock. */
static int acc_pair(struct xm_win *w, const void *obuf, int ocount, const struct xm_dtype *odt,
                    void *rbuf, int rcount, const struct xm_dtype *rdt, int trank,
                    uint64_t tbase, int tcount, const struct xm_dtype *tdt, MPI_Op op,
                    size_t es)
{
    size_t total = (size_t)tcount * tdt->size, pos;
    char *cur = malloc(total), *in = malloc(total), *tb = xm_win_part(w, trank);
    if (!cur || !in) {
        free(cur);
        free(in);
        return MPI_ERR_NO_MEM;
    }
    xm_dt_pack(obuf, ocount, odt, 0, in, total);
    struct xm_rma_segit it;
    uint64_t off, len;
    int rc = 0;
    part_lock(w, trank);
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    for (pos = 0; xm_rma_segit_next(&it, &off, &len); pos += len)
        memcpy(cur + pos, tb + off, len);
    if (rbuf)
        xm_dt_unpack(rbuf, rcount, rdt, 0, cur, total);
    if (xm_rma_pair_apply(op, tdt->basic, in, cur, total / es) < 0) {
        rc = MPI_ERR_OP;
    } else {
        xm_rma_segit_init(&it, tbase, tcount, tdt);
        for (pos = 0; xm_rma_segit_next(&it, &off, &len); pos += len)
            memcpy(tb + off, cur + pos, len);
    }
    part_unlock(w, trank);
    free(cur);
    free(in);
    return rc;
}

int xm_shmwin_acc(struct xm_win *w, const void *obuf, int ocount, const struct xm_dtype *odt,
                  void *rbuf, int rcount, const struct xm_dtype *rdt, int trank,
                  uint64_t tbase, int tcount, const struct xm_dtype *tdt, MPI_Op op)
{
    if (tcount == 0 || tdt->size == 0)
        return 0; /* nothing moves (a zero-size type may have no basic type) */
    size_t es = XM_DT_SIZE(tdt->basic), chunk = ACC_CHUNK / es * es;
    int combine = op != MPI_REPLACE && op != MPI_NO_OP;
    int ocontig = odt && odt->contig && (MPI_Aint)odt->size == odt->extent;
    char *tmp = NULL;
    if (combine && !ocontig && !(tmp = malloc(chunk)))
        return MPI_ERR_NO_MEM;
    char *tb = xm_win_part(w, trank);
    struct xm_rma_segit it;
    uint64_t off, len;
    size_t pos = 0, pf, pso, psc;
    int rc = 0;
    if (combine && xm_rma_pair_layout(tdt->basic, &pf, &pso, &psc)) {
        free(tmp);
        return acc_pair(w, obuf, ocount, odt, rbuf, rcount, rdt, trank, tbase, tcount, tdt,
                        op, pf + psc);
    }
    xm_rma_segit_init(&it, tbase, tcount, tdt);
    part_lock(w, trank);
    while (!rc && xm_rma_segit_next(&it, &off, &len)) {
        char *p = tb + off;
        if (rbuf) /* fetch: the old bytes first */
            xm_dt_unpack(rbuf, rcount, rdt, pos, p, len);
        if (op == MPI_REPLACE) {
            xm_dt_pack(obuf, ocount, odt, pos, p, len);
        } else if (combine) {
            for (size_t done = 0; done < len && !rc; done += chunk) {
                size_t n = len - done < chunk ? len - done : chunk;
                const char *src;
                if (ocontig) {
                    src = (const char *)obuf + odt->true_lb + pos + done;
                } else {
                    xm_dt_pack(obuf, ocount, odt, pos + done, tmp, n);
                    src = tmp;
                }
                if (xm_op_apply(op, src, p + done, (int)(n / es), tdt->basic) < 0)
                    rc = MPI_ERR_OP;
            }
        }
        pos += len;
    }
    part_unlock(w, trank);
    free(tmp);
    return rc;
}

int xm_shmwin_cas(struct xm_win *w, const void *obuf, const void *cbuf, void *rbuf,
                  size_t es, int trank, uint64_t tbase)
{
    char *p = xm_win_part(w, trank) + tbase;
    part_lock(w, trank);
    memcpy(rbuf, p, es);
    if (memcmp(p, cbuf, es) == 0)
        memcpy(p, obuf, es);
    part_unlock(w, trank);
    return 0;
}
