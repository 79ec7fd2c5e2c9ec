/*
 * pcoll.c - MPI-4 persistent collectives (MPI_Barrier_init, Bcast_init, Reduce_init,
 *           Allreduce_init, Gather_init, Scatter_init, Allgather_init, Alltoall_init,
 *           Reduce_scatter_block_init, Scan_init, Exscan_init).
 * Contract: *_init checks the communicator and records the arguments in a persistent
 *   holder request (the same XM_REQ_GREQ holder as MPI_Send_init, api/p2p.c) with
 *   pkind = XM_REQ_COLL, the arguments in ->tmp (freed with the request).  Each
 *   MPI_Start runs the nonblocking collective's front end (api/coll.c: the same checks
 *   and schedules as MPI_I*) and hangs its request on ->inner, so Wait/Test/Request_free
 *   treat it like a persistent send.  Matching follows the order of the *_init calls,
 *   as MPI-4 says (ranks may start them in different orders): *_init reserves a
 *   sequence number of the communicator (coll_seq, the source of collective tags) and
 *   every Start builds its schedule with that number.
 * Caveats: info is ignored; argument errors other than the communicator show at Start.
 */
#include <stdint.h>
#include <stdlib.h>

#include "coll_api.h"

XM_WEAK(MPI_Barrier_init)
XM_WEAK(MPI_Bcast_init)
XM_WEAK(MPI_Reduce_init)
XM_WEAK(MPI_Allreduce_init)
XM_WEAK(MPI_Gather_init)
XM_WEAK(MPI_Scatter_init)
XM_WEAK(MPI_Allgather_init)
XM_WEAK(MPI_Alltoall_init)
XM_WEAK(MPI_Reduce_scatter_block_init)
XM_WEAK(MPI_Scan_init)
XM_WEAK(MPI_Exscan_init)

enum pk {
    P_BARRIER,
    P_BCAST,
    P_REDUCE,
    P_ALLREDUCE,
    P_GATHER,
    P_SCATTER,
    P_ALLGATHER,
    P_ALLTOALL,
    P_RSBLOCK,
    P_SCAN,
    P_EXSCAN
};

static const char *const names[] = {
    "MPI_Barrier_init",   "MPI_Bcast_init",    "MPI_Reduce_init",
    "MPI_Allreduce_init", "MPI_Gather_init",   "MPI_Scatter_init",
    "MPI_Allgather_init", "MPI_Alltoall_init", "MPI_Reduce_scatter_block_init",
    "MPI_Scan_init",      "MPI_Exscan_init"};

struct pargs {
    enum pk kind;
    MPI_Comm comm;
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root;
    MPI_Datatype sdt, rdt;
    MPI_Op op;
    uint32_t seq; /* the communicator's coll_seq taken at init: the schedules' tag */
};

static int pinit(const struct pargs *a, MPI_Request *req)
{
    const char *fn = names[a->kind];
    struct xm_comm *c = xm_comm_get(a->comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, fn);
    if (!req)
        return xm_err(c, MPI_ERR_ARG, fn);
    struct pargs *p = malloc(sizeof(*p));
    struct xm_req *r = p ? xm_req_new(XM_REQ_GREQ) : NULL;
    if (!r) {
        free(p);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    *p = *a;
    p->seq = c->coll_seq++; /* matching follows the order of the *_init calls */
    r->persistent = 1;
    r->pkind = XM_REQ_COLL;
    r->tmp = p;
    r->comm = c;
    r->peer = 0;
    xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    r->done = 1; /* inactive */
    *req = r->handle;
    return MPI_SUCCESS;
}

int xm_pcoll_start(struct xm_req *r)
{
    const struct pargs *a = r->tmp;
    const char *fn = "MPI_Start";
    MPI_Request h = MPI_REQUEST_NULL;
    struct xm_comm *c = xm_comm_get(a->comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, fn);
    /* every nonblocking front end builds exactly one schedule, which takes its tag from
     * coll_seq: give it the number reserved at init, then put the counter back */
    uint32_t next = c->coll_seq;
    c->coll_seq = a->seq;
    int rc;
    switch (a->kind) {
    case P_BARRIER:
        rc = xm_capi_barrier(a->comm, &h, fn);
        break;
    case P_BCAST:
        rc = xm_capi_bcast(a->rbuf, a->rcount, a->rdt, a->root, a->comm, &h, fn);
        break;
    case P_REDUCE:
        rc = xm_capi_reduce(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, a->root, a->comm,
                            &h, fn);
        break;
    case P_ALLREDUCE:
        rc = xm_capi_allreduce(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, a->comm, &h,
                               fn);
        break;
    case P_GATHER:
        rc = xm_capi_gatherv(a->sbuf, a->scount, a->sdt, a->rbuf, NULL, NULL, a->rcount,
                             a->rdt, a->root, a->comm, &h, fn);
        break;
    case P_SCATTER:
        rc = xm_capi_scatterv(a->sbuf, NULL, NULL, a->scount, a->sdt, a->rbuf, a->rcount,
                              a->rdt, a->root, a->comm, &h, fn);
        break;
    case P_ALLGATHER:
        rc = xm_capi_allgatherv(a->sbuf, a->scount, a->sdt, a->rbuf, NULL, NULL,
                                a->rcount, a->rdt, a->comm, &h, fn);
        break;
    case P_ALLTOALL:
        rc = xm_capi_alltoallv(a->sbuf, NULL, NULL, a->scount, a->sdt, a->rbuf, NULL,
                               NULL, a->rcount, a->rdt, a->comm, &h, fn);
        break;
    case P_RSBLOCK:
        rc = xm_capi_reduce_scatter(a->sbuf, a->rbuf, NULL, a->rcount, a->rdt, a->op,
                                    a->comm, &h, fn);
        break;
    default:
        rc = xm_capi_scan(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, a->kind == P_EXSCAN,
                          a->comm, &h, fn);
        break;
    }
    c->coll_seq = next;
    if (rc != MPI_SUCCESS)
        return rc; /* already through the error handler; the request stays inactive */
    r->inner = xm_req_get(h);
    r->done = 0;
    return MPI_SUCCESS;
}

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_BARRIER, .comm = comm};
    return pinit(&a, req);
}

int PMPI_Bcast_init(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_BCAST,
                      .comm = comm,
                      .rbuf = buf,
                      .rcount = count,
                      .rdt = dt,
                      .root = root};
    return pinit(&a, req);
}

int PMPI_Reduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                     int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_REDUCE,
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcount = count,
                      .rdt = dt,
                      .op = op,
                      .root = root};
    return pinit(&a, req);
}

int PMPI_Allreduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_ALLREDUCE,
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcount = count,
                      .rdt = dt,
                      .op = op};
    return pinit(&a, req);
}

int PMPI_Gather_init(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                     int rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_GATHER,
                      .comm = comm,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = rdt,
                      .root = root};
    return pinit(&a, req);
}

int PMPI_Scatter_init(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                      int rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_SCATTER,
                      .comm = comm,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = rdt,
                      .root = root};
    return pinit(&a, req);
}

int PMPI_Allgather_init(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                        int rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                        MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_ALLGATHER,
                      .comm = comm,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = rdt};
    return pinit(&a, req);
}

int PMPI_Alltoall_init(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       int rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                       MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_ALLTOALL,
                      .comm = comm,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = rdt};
    return pinit(&a, req);
}

int PMPI_Reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount,
                                   MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                   MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_RSBLOCK,
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = dt,
                      .op = op};
    return pinit(&a, req);
}

int PMPI_Scan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_SCAN,
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcount = count,
                      .rdt = dt,
                      .op = op};
    return pinit(&a, req);
}

int PMPI_Exscan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_EXSCAN,
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcount = count,
                      .rdt = dt,
                      .op = op};
    return pinit(&a, req);
}
