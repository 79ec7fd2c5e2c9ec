/*
 * coll.c - MPI collective entry points (blocking) and the checking front ends shared
 *          with the I-variants in icoll.c; reduction-op API (Op_create/free/...).
 * Contract: validation and error mapping only; algorithms are in mpi/coll/.
 *   Fixed-count variants (Gather, Scatter, Allgather, Alltoall, Reduce_scatter_block)
 *   become their v-forms here, with count/displacement arrays built for the call (the
 *   schedule copies what it needs, so the arrays are freed before returning).
 */
#include <errno.h>
#include <stdlib.h>

#include "../coll/coll.h"
#include "../dt/dtype.h"
#include "coll_api.h"

XM_WEAK(MPI_Barrier)
XM_WEAK(MPI_Bcast)
XM_WEAK(MPI_Reduce)
XM_WEAK(MPI_Allreduce)
XM_WEAK(MPI_Gather)
XM_WEAK(MPI_Gatherv)
XM_WEAK(MPI_Scatter)
XM_WEAK(MPI_Scatterv)
XM_WEAK(MPI_Allgather)
XM_WEAK(MPI_Allgatherv)
XM_WEAK(MPI_Alltoall)
XM_WEAK(MPI_Alltoallv)
XM_WEAK(MPI_Alltoallw)
XM_WEAK(MPI_Reduce_scatter)
XM_WEAK(MPI_Reduce_scatter_block)
XM_WEAK(MPI_Scan)
XM_WEAK(MPI_Exscan)
XM_WEAK(MPI_Op_create)
XM_WEAK(MPI_Op_free)
XM_WEAK(MPI_Op_commutative)
XM_WEAK(MPI_Reduce_local)

#define GET_COMM(c, comm, fn)                                                            \
    struct xm_comm *c = xm_comm_get(comm);                                               \
    if (!c)                                                                              \
    return xm_err(NULL, MPI_ERR_COMM, fn)

static int check(struct xm_comm *c, int count, MPI_Datatype dt, const char *fn)
{
    if (count < 0)
        return xm_err(c, MPI_ERR_COUNT, fn);
    if (!xm_dt_get(dt))
        return xm_err(c, MPI_ERR_TYPE, fn);
    return MPI_SUCCESS;
}

static int check_op(struct xm_comm *c, MPI_Op op, const char *fn)
{
    return xm_op_valid(op) && op != MPI_REPLACE && op != MPI_NO_OP
               ? MPI_SUCCESS
               : xm_err(c, MPI_ERR_OP, fn);
}

/* errno from the algorithm -> MPI error class; hand out the request. */
static int done(struct xm_comm *c, int rc, struct xm_req **rp, MPI_Request *req,
                const char *fn)
{
    if (rc < 0) {
        int cls = rc == -EINVAL     ? MPI_ERR_OP
                  : rc == -EMSGSIZE ? MPI_ERR_TRUNCATE
                                    : xm_errno_to_class(rc);
        return xm_err(c, cls, fn);
    }
    if (req)
        *req = (*rp)->handle; /* read after the call that set it */
    return MPI_SUCCESS;
}

#define RP (req ? &r : NULL)

/* ---- intercommunicators: roots and the w-form ----------------------------
 * On an intercommunicator a root argument is MPI_ROOT (the root itself), MPI_PROC_NULL
 * (the root's group mates) or the root's rank in the remote group (c->size is the
 * remote group's size, see core/xm.h). */
static int *fixed(int p, int n);

static int root_ok(struct xm_comm *c, int root)
{
    if (c->inter && (root == MPI_ROOT || root == MPI_PROC_NULL))
        return 1;
    return root >= 0 && root < c->size;
}

static int inter_gatherv(struct xm_comm *c, const void *sbuf, int scount,
                         MPI_Datatype sdt, void *rbuf, const int *rcounts,
                         const int *displs, int rcount, MPI_Datatype rdt, int root,
                         MPI_Request *req, const char *fn)
{
    int rc = 0, *a = NULL;
    if (root == MPI_ROOT) {
        rc = check(c, rcounts ? 0 : rcount, rdt, fn);
        for (int i = 0; !rc && rcounts && i < c->size; i++)
            if (rcounts[i] < 0)
                rc = xm_err(c, MPI_ERR_COUNT, fn);
        if (!rc && !rcounts) {
            if (!(a = fixed(c->size, rcount)))
                return xm_err(c, MPI_ERR_NO_MEM, fn);
            rcounts = a;
            displs = a + c->size;
        }
    } else if (root != MPI_PROC_NULL) {
        rc = sbuf == MPI_IN_PLACE ? xm_err(c, MPI_ERR_BUFFER, fn)
                                  : check(c, scount, sdt, fn);
    }
    if (rc)
        return rc;
    struct xm_req *r = NULL;
    rc = xm_inter_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c, RP);
    free(a);
    return done(c, rc, &r, req, fn);
}

static int inter_scatterv(struct xm_comm *c, const void *sbuf, const int *scounts,
                          const int *displs, int scount, MPI_Datatype sdt, void *rbuf,
                          int rcount, MPI_Datatype rdt, int root, MPI_Request *req,
                          const char *fn)
{
    int rc = 0, *a = NULL;
    if (root == MPI_ROOT) {
        rc = check(c, scounts ? 0 : scount, sdt, fn);
        for (int i = 0; !rc && scounts && i < c->size; i++)
            if (scounts[i] < 0)
                rc = xm_err(c, MPI_ERR_COUNT, fn);
        if (!rc && !scounts) {
            if (!(a = fixed(c->size, scount)))
                return xm_err(c, MPI_ERR_NO_MEM, fn);
            scounts = a;
            displs = a + c->size;
        }
    } else if (root != MPI_PROC_NULL) {
        rc = rbuf == MPI_IN_PLACE ? xm_err(c, MPI_ERR_BUFFER, fn)
                                  : check(c, rcount, rdt, fn);
    }
    if (rc)
        return rc;
    struct xm_req *r = NULL;
    rc = xm_inter_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c, RP);
    free(a);
    return done(c, rc, &r, req, fn);
}

/* Allgather(v) (sblocks 0: one block to everyone) and Alltoall(v) (sblocks 1) on an
 * intercommunicator, as the w-form over the remote group; NULL count arrays mean the
 * fixed count at i*count.  sdts/rdts NULL: sdt/rdt for every block. */
static int inter_w(struct xm_comm *c, const void *sbuf, const int *scounts,
                   const int *sdispls, int scount, MPI_Datatype sdt, int sblocks,
                   void *rbuf, const int *rcounts, const int *rdispls, int rcount,
                   MPI_Datatype rdt, MPI_Request *req, const char *fn)
{
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
        return xm_err(c, MPI_ERR_BUFFER, fn);
    int p = c->size;
    int *cnt = malloc(2 * (size_t)(p ? p : 1) * sizeof(int));
    MPI_Aint *dis = malloc(2 * (size_t)(p ? p : 1) * sizeof(MPI_Aint));
    MPI_Datatype *dts = malloc(2 * (size_t)(p ? p : 1) * sizeof(MPI_Datatype));
    if (!cnt || !dis || !dts) {
        free(cnt);
        free(dis);
        free(dts);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    int rc = check(c, 0, sdt, fn);
    if (!rc)
        rc = check(c, 0, rdt, fn);
    MPI_Aint se = rc ? 0 : xm_dt_get(sdt)->extent, re = rc ? 0 : xm_dt_get(rdt)->extent;
    for (int i = 0; i < p && !rc; i++) {
        cnt[i] = scounts ? scounts[i] : scount;
        dis[i] = sblocks ? (sdispls ? sdispls[i] : (MPI_Aint)i * scount) * se : 0;
        dts[i] = sdt;
        cnt[p + i] = rcounts ? rcounts[i] : rcount;
        dis[p + i] = (rdispls ? rdispls[i] : (MPI_Aint)i * rcount) * re;
        dts[p + i] = rdt;
        if (cnt[i] < 0 || cnt[p + i] < 0)
            rc = xm_err(c, MPI_ERR_COUNT, fn);
    }
    struct xm_req *r = NULL;
    if (!rc)
        rc = done(c,
                  xm_inter_alltoallw(sbuf, cnt, dis, dts, rbuf, cnt + p, dis + p, dts + p,
                                     c, RP),
                  &r, req, fn);
    free(cnt);
    free(dis);
    free(dts);
    return rc;
}

int xm_capi_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                      const MPI_Datatype *sdts, void *rbuf, const int *rcounts,
                      const int *rdispls, const MPI_Datatype *rdts, MPI_Comm comm,
                      MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    int p = c->size;
    for (int i = 0; i < p; i++) {
        int rc = sbuf == MPI_IN_PLACE ? 0 : check(c, scounts[i], sdts[i], fn);
        if (!rc)
            rc = check(c, rcounts[i], rdts[i], fn);
        if (rc)
            return rc;
    }
    struct xm_req *r = NULL;
    if (!c->inter)
        return done(c,
                    xm_icoll_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts,
                                       rdispls, rdts, c, RP),
                    &r, req, fn);
    if (sbuf == MPI_IN_PLACE)
        return xm_err(c, MPI_ERR_BUFFER, fn);
    MPI_Aint *dis = malloc(2 * (size_t)(p ? p : 1) * sizeof(MPI_Aint));
    if (!dis)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < p; i++) {
        dis[i] = sdispls[i];
        dis[p + i] = rdispls[i];
    }
    int rc =
        xm_inter_alltoallw(sbuf, scounts, dis, sdts, rbuf, rcounts, dis + p, rdts, c, RP);
    free(dis);
    return done(c, rc, &r, req, fn);
}

int xm_capi_barrier(MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    struct xm_req *r = NULL;
    if (c->inter)
        return done(c, xm_inter_barrier(c, RP), &r, req, fn);
    return done(c, xm_icoll_barrier(c, RP), &r, req, fn);
}

int xm_capi_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                  MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    int rc = check(c, count, dt, fn);
    if (rc)
        return rc;
    if (!root_ok(c, root))
        return xm_err(c, MPI_ERR_ROOT, fn);
    struct xm_req *r = NULL;
    if (c->inter)
        return done(c, xm_inter_bcast(buf, count, dt, root, c, RP), &r, req, fn);
    return done(c, xm_icoll_bcast(buf, count, dt, root, c, RP), &r, req, fn);
}

int xm_capi_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    int rc = check(c, count, dt, fn);
    if (!rc)
        rc = check_op(c, op, fn);
    if (rc)
        return rc;
    if (!root_ok(c, root))
        return xm_err(c, MPI_ERR_ROOT, fn);
    if (sbuf == MPI_IN_PLACE && (c->inter || c->rank != root))
        return xm_err(c, MPI_ERR_BUFFER, fn);
    struct xm_req *r = NULL;
    if (c->inter)
        return done(c, xm_inter_reduce(sbuf, rbuf, count, dt, op, root, c, RP), &r, req,
                    fn);
    return done(c, xm_icoll_reduce(sbuf, rbuf, count, dt, op, root, c, RP), &r, req, fn);
}

int xm_capi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    int rc = check(c, count, dt, fn);
    if (!rc)
        rc = check_op(c, op, fn);
    if (rc)
        return rc;
    struct xm_req *r = NULL;
    if (c->inter)
        return sbuf == MPI_IN_PLACE
                   ? xm_err(c, MPI_ERR_BUFFER, fn)
                   : done(c, xm_inter_allreduce(sbuf, rbuf, count, dt, op, c, RP), &r,
                          req, fn);
    return done(c, xm_icoll_allreduce(sbuf, rbuf, count, dt, op, c, RP), &r, req, fn);
}

/* counts[i] = n, displs[i] = i*n: the v-form of a fixed-count collective */
static int *fixed(int p, int n)
{
    int *a = malloc(2 * (size_t)(p > 0 ? p : 1) * sizeof(int));
    if (a)
        for (int i = 0; i < p; i++) {
            a[i] = n;
            a[p + i] = i * n;
        }
    return a;
}

int xm_capi_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                    const int *rcounts, const int *displs, int rcount, MPI_Datatype rdt,
                    int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (!root_ok(c, root))
        return xm_err(c, MPI_ERR_ROOT, fn);
    if (c->inter) /* root: MPI_ROOT receives, MPI_PROC_NULL idles, others send */
        return inter_gatherv(c, sbuf, scount, sdt, rbuf, rcounts, displs, rcount, rdt,
                             root, req, fn);
    int rc = sbuf == MPI_IN_PLACE ? (c->rank == root ? 0 : xm_err(c, MPI_ERR_BUFFER, fn))
                                  : check(c, scount, sdt, fn);
    if (!rc && c->rank == root)
        rc = check(c, rcounts ? 0 : rcount, rdt, fn);
    if (rc)
        return rc;
    int *a = NULL;
    if (!rcounts && c->rank == root) {
        if (!(a = fixed(c->size, rcount)))
            return xm_err(c, MPI_ERR_NO_MEM, fn);
        rcounts = a;
        displs = a + c->size;
    }
    struct xm_req *r = NULL;
    rc = xm_icoll_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c, RP);
    free(a);
    return done(c, rc, &r, req, fn);
}

int xm_capi_scatterv(const void *sbuf, const int *scounts, const int *displs, int scount,
                     MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                     MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (!root_ok(c, root))
        return xm_err(c, MPI_ERR_ROOT, fn);
    if (c->inter)
        return inter_scatterv(c, sbuf, scounts, displs, scount, sdt, rbuf, rcount, rdt,
                              root, req, fn);
    int rc = rbuf == MPI_IN_PLACE ? (c->rank == root ? 0 : xm_err(c, MPI_ERR_BUFFER, fn))
                                  : check(c, rcount, rdt, fn);
    if (!rc && c->rank == root)
        rc = check(c, scounts ? 0 : scount, sdt, fn);
    if (rc)
        return rc;
    int *a = NULL;
    if (!scounts && c->rank == root) {
        if (!(a = fixed(c->size, scount)))
            return xm_err(c, MPI_ERR_NO_MEM, fn);
        scounts = a;
        displs = a + c->size;
    }
    struct xm_req *r = NULL;
    rc = xm_icoll_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c, RP);
    free(a);
    return done(c, rc, &r, req, fn);
}

int xm_capi_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       const int *rcounts, const int *displs, int rcount,
                       MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (c->inter) /* the w-form with every send displacement 0 */
        return inter_w(c, sbuf, NULL, NULL, scount, sdt, 0, rbuf, rcounts, displs, rcount,
                       rdt, req, fn);
    int rc = sbuf == MPI_IN_PLACE ? 0 : check(c, scount, sdt, fn);
    if (!rc)
        rc = check(c, rcounts ? 0 : rcount, rdt, fn);
    if (rc)
        return rc;
    struct xm_req *r = NULL;
    if (!rcounts)
        rc = xm_icoll_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c, RP);
    else
        rc = xm_icoll_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c, RP);
    return done(c, rc, &r, req, fn);
}

int xm_capi_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                      int scount, MPI_Datatype sdt, void *rbuf, const int *rcounts,
                      const int *rdispls, int rcount, MPI_Datatype rdt, MPI_Comm comm,
                      MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (c->inter)
        return inter_w(c, sbuf, scounts, sdispls, scount, sdt, 1, rbuf, rcounts, rdispls,
                       rcount, rdt, req, fn);
    int rc = sbuf == MPI_IN_PLACE ? 0 : check(c, scounts ? 0 : scount, sdt, fn);
    if (!rc)
        rc = check(c, rcounts ? 0 : rcount, rdt, fn);
    if (rc)
        return rc;
    int *a = NULL, *b = NULL;
    if (!rcounts) {
        a = fixed(c->size, scount);
        b = fixed(c->size, rcount);
        if (!a || !b) {
            free(a);
            free(b);
            return xm_err(c, MPI_ERR_NO_MEM, fn);
        }
        scounts = a;
        sdispls = a + c->size;
        rcounts = b;
        rdispls = b + c->size;
    }
    struct xm_req *r = NULL;
    rc = xm_icoll_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c,
                            RP);
    free(a);
    free(b);
    return done(c, rc, &r, req, fn);
}

int xm_capi_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                           MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req,
                           const char *fn)
{
    GET_COMM(c, comm, fn);
    int rc = check(c, rcounts ? 0 : rcount, dt, fn);
    if (!rc)
        rc = check_op(c, op, fn);
    if (rc)
        return rc;
    int *a = NULL, n = c->inter ? c->local_size : c->size;
    if (c->inter && sbuf == MPI_IN_PLACE)
        return xm_err(c, MPI_ERR_BUFFER, fn);
    if (!rcounts) {
        if (!(a = fixed(n, rcount)))
            return xm_err(c, MPI_ERR_NO_MEM, fn);
        rcounts = a;
    }
    for (int i = 0; i < n; i++)
        if (rcounts[i] < 0) {
            free(a);
            return xm_err(c, MPI_ERR_COUNT, fn);
        }
    struct xm_req *r = NULL;
    rc = c->inter ? xm_inter_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c, RP)
                  : xm_icoll_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c, RP);
    free(a);
    return done(c, rc, &r, req, fn);
}

int xm_capi_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                 int exclusive, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (c->inter) /* not defined on intercommunicators */
        return xm_err(c, MPI_ERR_COMM, fn);
    int rc = check(c, count, dt, fn);
    if (!rc)
        rc = check_op(c, op, fn);
    if (rc)
        return rc;
    struct xm_req *r = NULL;
    return done(c, xm_icoll_scan(sbuf, rbuf, count, dt, op, exclusive, c, RP), &r, req,
                fn);
}

/* ---- blocking entry points --------------------------------------------------------- */
int PMPI_Barrier(MPI_Comm comm)
{
    return xm_capi_barrier(comm, NULL, "MPI_Barrier");
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return xm_capi_bcast(buf, count, dt, root, comm, NULL, "MPI_Bcast");
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                int root, MPI_Comm comm)
{
    return xm_capi_reduce(sbuf, rbuf, count, dt, op, root, comm, NULL, "MPI_Reduce");
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm)
{
    return xm_capi_allreduce(sbuf, rbuf, count, dt, op, comm, NULL, "MPI_Allreduce");
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return xm_capi_gatherv(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, root, comm,
                           NULL, "MPI_Gather");
}

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                 const int rcounts[], const int displs[], MPI_Datatype rdt, int root,
                 MPI_Comm comm)
{
    return xm_capi_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, root, comm,
                           NULL, "MPI_Gatherv");
}

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                 MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return xm_capi_scatterv(sbuf, NULL, NULL, scount, sdt, rbuf, rcount, rdt, root, comm,
                            NULL, "MPI_Scatter");
}

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                  MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                  MPI_Comm comm)
{
    return xm_capi_scatterv(sbuf, scounts, displs, 0, sdt, rbuf, rcount, rdt, root, comm,
                            NULL, "MPI_Scatterv");
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm comm)
{
    return xm_capi_allgatherv(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, comm,
                              NULL, "MPI_Allgather");
}

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rdt,
                    MPI_Comm comm)
{
    return xm_capi_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, comm,
                              NULL, "MPI_Allgatherv");
}

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, MPI_Comm comm)
{
    return xm_capi_alltoallv(sbuf, NULL, NULL, scount, sdt, rbuf, NULL, NULL, rcount, rdt,
                             comm, NULL, "MPI_Alltoall");
}

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                   MPI_Datatype sdt, void *rbuf, const int rcounts[], const int rdispls[],
                   MPI_Datatype rdt, MPI_Comm comm)
{
    return xm_capi_alltoallv(sbuf, scounts, sdispls, 0, sdt, rbuf, rcounts, rdispls, 0,
                             rdt, comm, NULL, "MPI_Alltoallv");
}

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype sdts[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rdts[], MPI_Comm comm)
{
    return xm_capi_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                             comm, NULL, "MPI_Alltoallw");
}

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return xm_capi_reduce_scatter(sbuf, rbuf, rcounts, 0, dt, op, comm, NULL,
                                  "MPI_Reduce_scatter");
}

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm)
{
    return xm_capi_reduce_scatter(sbuf, rbuf, NULL, rcount, dt, op, comm, NULL,
                                  "MPI_Reduce_scatter_block");
}

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
              MPI_Comm comm)
{
    return xm_capi_scan(sbuf, rbuf, count, dt, op, 0, comm, NULL, "MPI_Scan");
}

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm)
{
    return xm_capi_scan(sbuf, rbuf, count, dt, op, 1, comm, NULL, "MPI_Exscan");
}

/* ---- operations -----------------------------------------------------------------------
 */
int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    int rc = xm_op_create(fn, commute, op);
    return rc < 0 ? xm_err(NULL, rc == -EINVAL ? MPI_ERR_ARG : MPI_ERR_NO_MEM,
                           "MPI_Op_create")
                  : MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op *op)
{
    return xm_op_free(op) < 0 ? xm_err(NULL, MPI_ERR_OP, "MPI_Op_free") : MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    if (!xm_op_valid(op))
        return xm_err(NULL, MPI_ERR_OP, "MPI_Op_commutative");
    *commute = xm_op_commutative(op);
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype dt, MPI_Op op)
{
    if (count < 0)
        return xm_err(NULL, MPI_ERR_COUNT, "MPI_Reduce_local");
    if (!xm_dt_get(dt))
        return xm_err(NULL, MPI_ERR_TYPE, "MPI_Reduce_local");
    if (check_op(NULL, op, "MPI_Reduce_local"))
        return MPI_ERR_OP;
    int rc = xm_op_apply_any(op, in, inout, count, dt);
    return rc < 0 ? xm_err(NULL, MPI_ERR_OP, "MPI_Reduce_local") : MPI_SUCCESS;
}
