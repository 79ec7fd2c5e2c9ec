/*
 * p2p.c - MPI point-to-point entry points: argument checks, rank translation
 *         (comm rank -> world rank), MPI_PROC_NULL, and the Wait/Test family.
 *
 * Contract: everything real happens in core/p2p.c; these functions only validate,
 *   translate and map -errno / status errors to MPI error classes via xm_err().
 * Caveats (next, core area): Bsend/Ibsend (buffer attach), Rsend is a standard send,
 *   persistent requests, Mprobe/Mrecv, Waitsome/Testsome/Testany.
 */
#include <errno.h>
#include <stdlib.h>

#include "../core/p2p.h"
#include "../dt/dtype.h"

XM_WEAK(MPI_Send)
XM_WEAK(MPI_Ssend)
XM_WEAK(MPI_Rsend)
XM_WEAK(MPI_Recv)
XM_WEAK(MPI_Isend)
XM_WEAK(MPI_Issend)
XM_WEAK(MPI_Irsend)
XM_WEAK(MPI_Irecv)
XM_WEAK(MPI_Wait)
XM_WEAK(MPI_Test)
XM_WEAK(MPI_Waitall)
XM_WEAK(MPI_Testall)
XM_WEAK(MPI_Waitany)
XM_WEAK(MPI_Sendrecv)
XM_WEAK(MPI_Probe)
XM_WEAK(MPI_Iprobe)
XM_WEAK(MPI_Request_free)
XM_WEAK(MPI_Cancel)
XM_WEAK(MPI_Test_cancelled)
XM_WEAK(MPI_Get_count)
XM_WEAK(MPI_Get_elements)

#define CHECK_COMM(c, comm, fn)                              \
    struct xm_comm *c = xm_comm_get(comm);                  \
    if (!c)                                                  \
        return xm_err(NULL, MPI_ERR_COMM, fn)

static int check_buf(struct xm_comm *c, int count, MPI_Datatype dt, const char *fn)
{
    if (count < 0)
        return xm_err(c, MPI_ERR_COUNT, fn);
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t || (!t->committed && !XM_DT_IS_PREDEF(dt)))
        return xm_err(c, MPI_ERR_TYPE, fn);
    return MPI_SUCCESS;
}

/* A request that is complete from the start (PROC_NULL). */
static MPI_Request null_req(int src)
{
    struct xm_req *r = xm_req_new(XM_REQ_GREQ);
    if (!r)
        return MPI_REQUEST_NULL;
    xm_status_set(&r->status, src, MPI_ANY_TAG, MPI_SUCCESS, 0);
    xm_req_complete(r);
    return r->handle;
}

static int isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, unsigned flags, MPI_Request *req, const char *fn)
{
    CHECK_COMM(c, comm, fn);
    int rc = check_buf(c, count, dt, fn);
    if (rc)
        return rc;
    if (tag < 0 || tag > 0x3fffffff)
        return xm_err(c, MPI_ERR_TAG, fn);
    if (dest == MPI_PROC_NULL) {
        *req = null_req(MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    if (dest < 0 || dest >= c->size)
        return xm_err(c, MPI_ERR_RANK, fn);
    struct xm_req *r;
    rc = xm_isend(buf, count, dt, xm_comm_world_rank(c, dest), tag, c->ctx, c, flags, &r);
    if (rc < 0)
        return xm_err(c, xm_errno_to_class(rc), fn);
    *req = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return isend(buf, count, dt, dest, tag, comm, 0, req, "MPI_Isend");
}

int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                MPI_Comm comm, MPI_Request *req)
{
    return isend(buf, count, dt, dest, tag, comm, XM_PKT_F_SYNC, req, "MPI_Issend");
}

int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                MPI_Comm comm, MPI_Request *req)
{
    return isend(buf, count, dt, dest, tag, comm, 0, req, "MPI_Irsend");
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CHECK_COMM(c, comm, "MPI_Irecv");
    int rc = check_buf(c, count, dt, "MPI_Irecv");
    if (rc)
        return rc;
    if (tag < MPI_ANY_TAG || tag > 0x3fffffff)
        return xm_err(c, MPI_ERR_TAG, "MPI_Irecv");
    if (src == MPI_PROC_NULL) {
        *req = null_req(MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    if (src != MPI_ANY_SOURCE && (src < 0 || src >= c->size))
        return xm_err(c, MPI_ERR_RANK, "MPI_Irecv");
    struct xm_req *r;
    int wsrc = src == MPI_ANY_SOURCE ? src : xm_comm_world_rank(c, src);
    rc = xm_irecv(buf, count, dt, wsrc, tag, c->ctx, c, &r);
    if (rc < 0)
        return xm_err(c, xm_errno_to_class(rc), "MPI_Irecv");
    *req = r->handle;
    return MPI_SUCCESS;
}

/* Complete-request epilogue shared by Wait and Test: status out, free, null handle. */
static int finish(MPI_Request *req, struct xm_req *r, MPI_Status *st)
{
    int err = r->status.MPI_ERROR;
    xm_req_status(r, st);
    if (!r->persistent) {
        xm_req_free(r);
        *req = MPI_REQUEST_NULL;
    }
    return err;
}

static void empty_status(MPI_Status *st)
{
    if (st && st != MPI_STATUS_IGNORE)
        xm_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
}

int PMPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (*req == MPI_REQUEST_NULL) {
        empty_status(st);
        return MPI_SUCCESS;
    }
    struct xm_req *r = xm_req_get(*req);
    if (!r)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Wait");
    xm_wait(r);
    struct xm_comm *c = r->comm;
    int err = finish(req, r, st);
    return err ? xm_err(c, err, "MPI_Wait") : MPI_SUCCESS;
}

int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (*req == MPI_REQUEST_NULL) {
        *flag = 1;
        empty_status(st);
        return MPI_SUCCESS;
    }
    struct xm_req *r = xm_req_get(*req);
    if (!r)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Test");
    if (!r->done)
        xm_progress();
    *flag = r->done;
    if (!r->done)
        return MPI_SUCCESS;
    struct xm_comm *c = r->comm;
    int err = finish(req, r, st);
    return err ? xm_err(c, err, "MPI_Test") : MPI_SUCCESS;
}

int PMPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    int any_err = 0;
    for (int i = 0; i < n; i++) {
        struct xm_req *r = reqs[i] == MPI_REQUEST_NULL ? NULL : xm_req_get(reqs[i]);
        MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
        if (!r) {
            if (reqs[i] != MPI_REQUEST_NULL)
                return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Waitall");
            empty_status(st);
            continue;
        }
        xm_wait(r);
        if (finish(&reqs[i], r, st) != MPI_SUCCESS)
            any_err = 1;
    }
    return any_err ? xm_err(NULL, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}

int PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    xm_progress();
    for (int i = 0; i < n; i++) {
        struct xm_req *r = reqs[i] == MPI_REQUEST_NULL ? NULL : xm_req_get(reqs[i]);
        if (r && !r->done) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return PMPI_Waitall(n, reqs, sts);
}

int PMPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    struct xm_req *rs[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        rs[i] = reqs[i] == MPI_REQUEST_NULL ? NULL : xm_req_get(reqs[i]);
    int i = xm_wait_any(n, rs);
    if (i < 0) {
        *index = MPI_UNDEFINED;
        empty_status(st);
        return MPI_SUCCESS;
    }
    *index = i;
    struct xm_comm *c = rs[i]->comm;
    int err = finish(&reqs[i], rs[i], st);
    return err ? xm_err(c, err, "MPI_Waitany") : MPI_SUCCESS;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    int rc = isend(buf, count, dt, dest, tag, comm, 0, &r, "MPI_Send");
    return rc ? rc : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    int rc = isend(buf, count, dt, dest, tag, comm, XM_PKT_F_SYNC, &r, "MPI_Ssend");
    return rc ? rc : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Status *st)
{
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r);
    return rc ? rc : PMPI_Wait(&r, st);
}

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                  void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm,
                  MPI_Status *st)
{
    MPI_Request rr, sr;
    int rc = PMPI_Irecv(rbuf, rcount, rdt, src, rtag, comm, &rr);
    if (rc)
        return rc;
    rc = isend(sbuf, scount, sdt, dest, stag, comm, 0, &sr, "MPI_Sendrecv");
    if (rc)
        return rc;
    rc = PMPI_Wait(&sr, MPI_STATUS_IGNORE);
    int rc2 = PMPI_Wait(&rr, st);
    return rc ? rc : rc2;
}

int PMPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    CHECK_COMM(c, comm, "MPI_Iprobe");
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        if (st != MPI_STATUS_IGNORE)
            xm_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        return MPI_SUCCESS;
    }
    if (src != MPI_ANY_SOURCE && (src < 0 || src >= c->size))
        return xm_err(c, MPI_ERR_RANK, "MPI_Iprobe");
    int wsrc = src == MPI_ANY_SOURCE ? src : xm_comm_world_rank(c, src);
    MPI_Status s;
    *flag = xm_iprobe(wsrc, tag, c->ctx, &s);
    if (!*flag) {
        xm_progress();
        *flag = xm_iprobe(wsrc, tag, c->ctx, &s);
    }
    if (*flag && st != MPI_STATUS_IGNORE) {
        struct xm_req tmp = {.status = s, .comm = c};
        xm_req_status(&tmp, st);
    }
    return MPI_SUCCESS;
}

int PMPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    int flag = 0, rc, spins = 0;
    while ((rc = PMPI_Iprobe(src, tag, comm, &flag, st)) == MPI_SUCCESS && !flag)
        xm_idle(&spins);
    return rc;
}

int PMPI_Request_free(MPI_Request *req)
{
    struct xm_req *r = xm_req_get(*req);
    if (!r)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
    /* a pending send must still go out: wait for it (eager sends finish quickly) */
    xm_wait(r);
    xm_req_free(r);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request *req)
{
    struct xm_req *r = xm_req_get(*req);
    if (!r)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
    if (r->kind == XM_REQ_RECV && !r->done)
        xm_cancel_recv(r);
    return MPI_SUCCESS; /* sends are not cancellable (allowed by the standard) */
}

int PMPI_Test_cancelled(const MPI_Status *st, int *flag)
{
    *flag = st->xm_count_hi_cncl & 1;
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t)
        return xm_err(NULL, MPI_ERR_TYPE, "MPI_Get_count");
    size_t b = xm_status_bytes(st);
    if (t->size == 0)
        *count = 0;
    else if (b % t->size)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(b / t->size);
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    return PMPI_Get_count(st, dt, count); /* basic-element counting: datatype area */
}
