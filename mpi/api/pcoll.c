/*
 * pcoll.c - MPI-4 persistent collectives: MPI_<collective>_init for Barrier, Bcast,
 *           Reduce, Allreduce, Gather(v), Scatter(v), Allgather(v), Alltoall(v/w),
 *           Reduce_scatter(_block), Scan, Exscan and the five Neighbor_* forms.
 * Contract: *_init checks the communicator and records the arguments in a persistent
 *   holder request (the same XM_REQ_GREQ holder as MPI_Send_init, api/p2p.c) with
 *   pkind = XM_REQ_COLL, the arguments in ->tmp (freed with the request).  Each
 *   MPI_Start runs the nonblocking collective's front end (api/coll.c: the same checks
 *   and schedules as MPI_I*) and hangs its request on ->inner, so Wait/Test/Request_free
 *   treat it like a persistent send.  Matching follows the order of the *_init calls,
 *   as MPI-4 says (ranks may start them in different orders): *_init reserves a
 *   sequence number of the communicator (coll_seq, the source of collective tags) and
 *   every Start builds its schedule with that number.
 *   Count/displacement arrays are kept by pointer: MPI-4 lets the library use them
 *   until the request is freed.  The type arrays of the w forms (Alltoallw_init,
 *   Neighbor_alltoallw_init) are copied and every type in them held, as the scalar
 *   types are: a program may free its types right after *_init (MPI_Type_free
 *   even writes MPI_DATATYPE_NULL into the array element it is given).
 * Caveats: info is ignored; argument errors other than the communicator show at Start.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../coll/coll.h"
#include "../dt/dtype.h"
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
XM_WEAK(MPI_Gatherv_init)
XM_WEAK(MPI_Scatterv_init)
XM_WEAK(MPI_Allgatherv_init)
XM_WEAK(MPI_Alltoallv_init)
XM_WEAK(MPI_Alltoallw_init)
XM_WEAK(MPI_Reduce_scatter_init)
XM_WEAK(MPI_Neighbor_allgather_init)
XM_WEAK(MPI_Neighbor_allgatherv_init)
XM_WEAK(MPI_Neighbor_alltoall_init)
XM_WEAK(MPI_Neighbor_alltoallv_init)
XM_WEAK(MPI_Neighbor_alltoallw_init)

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
    P_EXSCAN,
    P_ALLTOALLW,
    P_REDSCAT,
    P_NEIGHBOR
};

struct pargs {
    enum pk kind;
    const char *fn; /* the *_init's name */
    MPI_Comm comm;
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root;
    MPI_Datatype sdt, rdt;
    MPI_Op op;
    const int *scounts, *sdispls, *rcounts, *rdispls; /* v/w forms (NULL: fixed) */
    const MPI_Datatype *sdts, *rdts;
    struct xm_nb_args nb; /* neighbor collectives */
    uint32_t seq; /* the communicator's coll_seq taken at init: the schedules' tag */
    /* w forms: copies of the send and receive type arrays (ns + nr handles, what the
     * schedules read at Start) and the objects held for them (NULL: predefined or not
     * a type; Start reports the latter) */
    MPI_Datatype *wdts;
    struct xm_dtype **wheld;
    int ns, nr;
};

/* The request outlives MPI_Type_free / MPI_Op_free of what *_init named (MPI-3.1
 * 4.1.9, 5.9.5): hold the derived send/receive types and a user op until the request is
 * freed, and every type of a w form's arrays (copied by copy_wtypes()). */
static void hold(const struct pargs *p, int on)
{
    for (int i = 0; i < p->ns + p->nr; i++)
        if (p->wheld[i]) {
            if (on)
                xm_dt_ref(p->wheld[i]);
            else
                xm_dt_unref(p->wheld[i]);
        }
    MPI_Datatype dts[2] = {p->sdt, p->rdt};
    for (int k = 0; k < 2; k++)
        if (dts[k] != MPI_DATATYPE_NULL && dts[k] != 0 && !XM_DT_IS_PREDEF(dts[k])) {
            struct xm_dtype *t = xm_dt_get(dts[k]);
            if (on)
                xm_dt_ref(t);
            else
                xm_dt_unref(t);
        }
    if (p->op != MPI_OP_NULL && p->op != 0) {
        if (on)
            xm_op_ref(p->op);
        else
            xm_op_unref(p->op);
    }
}

/* the request's ->release (core/obj.c's xm_req_free runs it) */
static void pcoll_release(struct xm_req *r)
{
    struct pargs *p = r->tmp;
    hold(p, 0);
    free(p->wdts);
    free(p->wheld);
}

/* The w forms: copy the type arrays (ns send, nr receive types) into p and point the
 * arguments at the copies.  -1: no memory. */
static int copy_wtypes(struct pargs *p, const struct xm_comm *c)
{
    const MPI_Datatype *sd, *rd;
    if (p->kind == P_ALLTOALLW) {
        sd = p->sbuf == MPI_IN_PLACE ? NULL : p->sdts; /* ignored in place */
        rd = p->rdts;
        p->ns = sd ? c->size : 0; /* an intercommunicator's size is the remote group's */
        p->nr = c->size;
    } else if (p->kind == P_NEIGHBOR && p->nb.rdts && c->topo && !c->inter) {
        sd = p->nb.sdts;
        rd = p->nb.rdts;
        p->ns = sd ? c->topo->outdeg : 0;
        p->nr = c->topo->indeg;
    } else {
        return 0; /* not a w form, or Start reports the communicator */
    }
    int n = p->ns + p->nr;
    if (!rd || n == 0) {
        p->ns = p->nr = 0;
        return 0;
    }
    p->wdts = malloc(sizeof(*p->wdts) * (size_t)n);
    p->wheld = calloc((size_t)n, sizeof(*p->wheld));
    if (!p->wdts || !p->wheld) {
        free(p->wdts);
        free(p->wheld);
        p->wdts = NULL;
        p->wheld = NULL;
        p->ns = p->nr = 0;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        MPI_Datatype h = i < p->ns ? sd[i] : rd[i - p->ns];
        p->wdts[i] = h;
        if (h != MPI_DATATYPE_NULL && !XM_DT_IS_PREDEF(h))
            p->wheld[i] = xm_dt_get(h);
    }
    /* no send types copied (in place): the argument stays as given, unread */
    if (p->kind == P_ALLTOALLW) {
        if (p->ns)
            p->sdts = p->wdts;
        p->rdts = p->wdts + p->ns;
    } else {
        if (p->ns)
            p->nb.sdts = p->wdts;
        p->nb.rdts = p->wdts + p->ns;
    }
    return 0;
}

static int pinit(const struct pargs *a, MPI_Request *req)
{
    const char *fn = a->fn;
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
    if (copy_wtypes(p, c) < 0) {
        free(p);
        xm_req_free(r);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    p->seq = c->coll_seq++; /* matching follows the order of the *_init calls */
    hold(p, 1);
    r->persistent = 1;
    r->pkind = XM_REQ_COLL;
    r->tmp = p;
    r->release = pcoll_release;
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
        rc = xm_capi_gatherv(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts, a->rdispls,
                             a->rcount, a->rdt, a->root, a->comm, &h, fn);
        break;
    case P_SCATTER:
        rc = xm_capi_scatterv(a->sbuf, a->scounts, a->sdispls, a->scount, a->sdt, a->rbuf,
                              a->rcount, a->rdt, a->root, a->comm, &h, fn);
        break;
    case P_ALLGATHER:
        rc = xm_capi_allgatherv(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts,
                                a->rdispls, a->rcount, a->rdt, a->comm, &h, fn);
        break;
    case P_ALLTOALL:
        rc =
            xm_capi_alltoallv(a->sbuf, a->scounts, a->sdispls, a->scount, a->sdt, a->rbuf,
                              a->rcounts, a->rdispls, a->rcount, a->rdt, a->comm, &h, fn);
        break;
    case P_ALLTOALLW:
        rc = xm_capi_alltoallw(a->sbuf, a->scounts, a->sdispls, a->sdts, a->rbuf,
                               a->rcounts, a->rdispls, a->rdts, a->comm, &h, fn);
        break;
    case P_RSBLOCK:
    case P_REDSCAT:
        rc = xm_capi_reduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rcount, a->rdt,
                                    a->op, a->comm, &h, fn);
        break;
    case P_NEIGHBOR:
        rc = xm_capi_neighbor(&a->nb, a->comm, &h, fn);
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
    struct pargs a = {.kind = P_BARRIER, .fn = "MPI_Barrier_init", .comm = comm};
    return pinit(&a, req);
}

int PMPI_Bcast_init(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_BCAST,
                      .fn = "MPI_Bcast_init",
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
                      .fn = "MPI_Reduce_init",
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
                      .fn = "MPI_Allreduce_init",
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
                      .fn = "MPI_Gather_init",
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
                      .fn = "MPI_Scatter_init",
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
                      .fn = "MPI_Allgather_init",
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
                      .fn = "MPI_Alltoall_init",
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
                      .fn = "MPI_Reduce_scatter_block_init",
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
                      .fn = "MPI_Scan_init",
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
                      .fn = "MPI_Exscan_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcount = count,
                      .rdt = dt,
                      .op = op};
    return pinit(&a, req);
}

/* ---- v/w forms -----------------------------------------------------------------------
 */
int PMPI_Gatherv_init(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                      const int rcounts[], const int displs[], MPI_Datatype rdt, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_GATHER,
                      .fn = "MPI_Gatherv_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcounts = rcounts,
                      .rdispls = displs,
                      .rdt = rdt,
                      .root = root};
    return pinit(&a, req);
}

int PMPI_Scatterv_init(const void *sbuf, const int scounts[], const int displs[],
                       MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_SCATTER,
                      .fn = "MPI_Scatterv_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .scounts = scounts,
                      .sdispls = displs,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = rdt,
                      .root = root};
    return pinit(&a, req);
}

int PMPI_Allgatherv_init(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                         const int rcounts[], const int displs[], MPI_Datatype rdt,
                         MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_ALLGATHER,
                      .fn = "MPI_Allgatherv_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcounts = rcounts,
                      .rdispls = displs,
                      .rdt = rdt};
    return pinit(&a, req);
}

int PMPI_Alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[],
                        MPI_Datatype sdt, void *rbuf, const int rcounts[],
                        const int rdispls[], MPI_Datatype rdt, MPI_Comm comm,
                        MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_ALLTOALL,
                      .fn = "MPI_Alltoallv_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .scounts = scounts,
                      .sdispls = sdispls,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcounts = rcounts,
                      .rdispls = rdispls,
                      .rdt = rdt};
    return pinit(&a, req);
}

int PMPI_Alltoallw_init(const void *sbuf, const int scounts[], const int sdispls[],
                        const MPI_Datatype sdts[], void *rbuf, const int rcounts[],
                        const int rdispls[], const MPI_Datatype rdts[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_ALLTOALLW,
                      .fn = "MPI_Alltoallw_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .scounts = scounts,
                      .sdispls = sdispls,
                      .sdts = sdts,
                      .rbuf = rbuf,
                      .rcounts = rcounts,
                      .rdispls = rdispls,
                      .rdts = rdts};
    return pinit(&a, req);
}

int PMPI_Reduce_scatter_init(const void *sbuf, void *rbuf, const int rcounts[],
                             MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *req)
{
    (void)info;
    struct pargs a = {.kind = P_REDSCAT,
                      .fn = "MPI_Reduce_scatter_init",
                      .comm = comm,
                      .sbuf = sbuf,
                      .rbuf = rbuf,
                      .rcounts = rcounts,
                      .rdt = dt,
                      .op = op};
    return pinit(&a, req);
}

/* ---- neighbor collectives ------------------------------------------------------------
 */
static int ninit(const struct xm_nb_args *nb, MPI_Comm comm, MPI_Request *req,
                 const char *fn)
{
    struct pargs a = {.kind = P_NEIGHBOR, .fn = fn, .comm = comm, .nb = *nb};
    return pinit(&a, req);
}

int PMPI_Neighbor_allgather_init(const void *sbuf, int scount, MPI_Datatype sdt,
                                 void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct xm_nb_args nb = {.sbuf = sbuf,
                            .scount = scount,
                            .sdt = sdt,
                            .rbuf = rbuf,
                            .rcount = rcount,
                            .rdt = rdt};
    return ninit(&nb, comm, req, "MPI_Neighbor_allgather_init");
}

int PMPI_Neighbor_allgatherv_init(const void *sbuf, int scount, MPI_Datatype sdt,
                                  void *rbuf, const int rcounts[], const int displs[],
                                  MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *req)
{
    (void)info;
    struct xm_nb_args nb = {.sbuf = sbuf,
                            .scount = scount,
                            .sdt = sdt,
                            .rbuf = rbuf,
                            .rcounts = rcounts,
                            .rdispls_i = displs,
                            .rdt = rdt};
    return ninit(&nb, comm, req, "MPI_Neighbor_allgatherv_init");
}

int PMPI_Neighbor_alltoall_init(const void *sbuf, int scount, MPI_Datatype sdt,
                                void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm,
                                MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct xm_nb_args nb = {.sbuf = sbuf,
                            .scount = scount,
                            .sdt = sdt,
                            .sblocks = 1,
                            .rbuf = rbuf,
                            .rcount = rcount,
                            .rdt = rdt};
    return ninit(&nb, comm, req, "MPI_Neighbor_alltoall_init");
}

int PMPI_Neighbor_alltoallv_init(const void *sbuf, const int scounts[],
                                 const int sdispls[], MPI_Datatype sdt, void *rbuf,
                                 const int rcounts[], const int rdispls[],
                                 MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *req)
{
    (void)info;
    struct xm_nb_args nb = {.sbuf = sbuf,
                            .scounts = scounts,
                            .sdispls_i = sdispls,
                            .sdt = sdt,
                            .rbuf = rbuf,
                            .rcounts = rcounts,
                            .rdispls_i = rdispls,
                            .rdt = rdt};
    return ninit(&nb, comm, req, "MPI_Neighbor_alltoallv_init");
}

int PMPI_Neighbor_alltoallw_init(const void *sbuf, const int scounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sdts[],
                                 void *rbuf, const int rcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype rdts[],
                                 MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    (void)info;
    struct xm_nb_args nb = {.sbuf = sbuf,
                            .scounts = scounts,
                            .sdispls_b = sdispls,
                            .sdts = sdts,
                            .rbuf = rbuf,
                            .rcounts = rcounts,
                            .rdispls_b = rdispls,
                            .rdts = rdts};
    return ninit(&nb, comm, req, "MPI_Neighbor_alltoallw_init");
}
