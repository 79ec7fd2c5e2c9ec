/*
 * coll.c - first, simple collectives over the p2p engine (contract in coll.h).
 *
 * Algorithms: Barrier = dissemination (log2 p rounds of zero-byte sendrecv);
 *   Bcast = binomial tree; Reduce = binomial tree (commutative ops; rank order kept
 *   for the predefined ones, which are all commutative); Allreduce = Reduce + Bcast.
 * Caveats: no size-based selection, no node awareness yet (collectives area).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/p2p.h"
#include "../dt/dtype.h"
#include "coll.h"

#define W(c, r) xm_comm_world_rank((c), (r))
#define CCTX(c) ((c)->ctx | 1u)

int xm_coll_barrier(struct xm_comm *c)
{
    int p = c->size, me = c->rank;
    for (int k = 1; k < p; k <<= 1) {
        int to = (me + k) % p, from = (me - k + p) % p;
        int rc = xm_sendrecv(NULL, 0, MPI_BYTE, W(c, to), NULL, 0, MPI_BYTE, W(c, from),
                             XM_TAG_BARRIER, CCTX(c));
        if (rc < 0)
            return rc;
    }
    return 0;
}

int xm_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct xm_comm *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask = 1, rc;
    while (mask < p) {
        if (vr & mask) {
            rc = xm_recv(buf, count, dt, W(c, (vr - mask + root) % p), XM_TAG_BCAST,
                         CCTX(c), NULL);
            if (rc < 0)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            rc = xm_send(buf, count, dt, W(c, (vr + mask + root) % p), XM_TAG_BCAST,
                         CCTX(c));
            if (rc < 0)
                return rc;
        }
    return 0;
}

int xm_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, struct xm_comm *c)
{
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t || !t->contig || (MPI_Aint)t->size != t->extent)
        return -ENOSYS; /* derived types in reductions: collectives area */
    size_t bytes = t->size * (size_t)count;
    int p = c->size, vr = (c->rank - root + p) % p, rc = 0;
    char *acc = malloc(bytes ? bytes : 1), *tmp = malloc(bytes ? bytes : 1);
    if (!acc || !tmp) {
        free(acc);
        free(tmp);
        return -ENOMEM;
    }
    memcpy(acc, sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            rc = xm_send(acc, count, dt, W(c, (vr - mask + root) % p), XM_TAG_REDUCE,
                         CCTX(c));
            break;
        }
        if (vr + mask < p) {
            rc = xm_recv(tmp, count, dt, W(c, (vr + mask + root) % p), XM_TAG_REDUCE,
                         CCTX(c), NULL);
            if (rc < 0)
                break;
            /* acc = acc op tmp, keeping rank order: tmp holds higher ranks' data */
            rc = xm_op_apply(op, acc, tmp, count, dt);
            if (rc < 0)
                break;
            memcpy(acc, tmp, bytes);
        }
    }
    if (rc == 0 && c->rank == root)
        memcpy(rbuf, acc, bytes);
    free(acc);
    free(tmp);
    return rc;
}

int xm_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      struct xm_comm *c)
{
    int rc = xm_coll_reduce(sbuf, rbuf, count, dt, op, 0, c);
    if (rc < 0)
        return rc;
    return xm_coll_bcast(rbuf, count, dt, 0, c);
}
