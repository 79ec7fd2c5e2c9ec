/*
 * shmwin.c - node-shared memory of windows (RMA area): the mapping behind
 *            MPI_Win_allocate_shared (and MPI_Win_allocate inside one node).
 *
 * Owns: xm_shmwin_map()/xm_shmwin_unmap() (rma.h).
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
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rma.h"
#include "../coll/coll.h"

int xm_shmwin_map(struct xm_comm *c, size_t total, char **map)
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
    return 0;
}

void xm_shmwin_unmap(char *map, size_t total)
{
    munmap(map, total);
}
