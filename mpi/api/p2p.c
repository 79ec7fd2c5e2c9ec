/*
 * p2p.c - MPI point-to-point entry points: argument checks, rank translation
 *         (comm rank -> world rank), MPI_PROC_NULL, and the Wait/Test family.
 *
 * One piece (about 1050 lines): the point-to-point chapter's checked entry points and
 *   the Wait/Test family, which share the persistent-request harvest and the buffered
 *   send regions.
 *
 * Contract: everything real happens in core/p2p.c; these functions only validate,
 *   translate and map -errno / status errors to MPI error classes via xm_err().
 * Persistent requests (MPI_*_init): an XM_REQ_GREQ holder with persistent = 1 keeps
 *   the arguments; Start creates the engine request in ->inner; Wait/Test drive the
 *   inner request and copy its status into the holder ("harvest").  An inactive
 *   persistent request is complete with an empty status.
 * Buffered sends: the attached buffer is carved first-fit into regions (one per
 *   pending Bsend, packed bytes + MPI_BSEND_OVERHEAD accounted); a region is reused
 *   once its send completed; Buffer_detach waits for all of them.
 * Matched probes: MPI_Message is the unexpected request's handle with the kind bits
 *   set to XM_K_MSG.
 * Persistent requests hold a reference on their datatype until MPI_Request_free, so
 *   the program may free a derived type right after MPI_*_init.
 * Cancel: a posted receive is cancelled at once; a send through xm_cancel_send()
 *   (withdrawn unless a receive matched it first; a completed Ibsend's copy cannot be).
 * Caveats: Rsend is a standard send (allowed: the receive is posted by contract).
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
XM_WEAK(MPI_Bsend)
XM_WEAK(MPI_Ibsend)
XM_WEAK(MPI_Buffer_attach)
XM_WEAK(MPI_Buffer_detach)
XM_WEAK(MPI_Send_init)
XM_WEAK(MPI_Ssend_init)
XM_WEAK(MPI_Rsend_init)
XM_WEAK(MPI_Bsend_init)
XM_WEAK(MPI_Recv_init)
XM_WEAK(MPI_Start)
XM_WEAK(MPI_Startall)
XM_WEAK(MPI_Testany)
XM_WEAK(MPI_Waitsome)
XM_WEAK(MPI_Testsome)
XM_WEAK(MPI_Request_get_status)
XM_WEAK(MPI_Sendrecv_replace)
XM_WEAK(MPI_Mprobe)
XM_WEAK(MPI_Improbe)
XM_WEAK(MPI_Mrecv)
XM_WEAK(MPI_Imrecv)

#define F_BSEND 0x10000u /* persistent holder: buffered-mode send */

#define CHECK_COMM(c, comm, fn)                                                          \
    struct xm_comm *c = xm_comm_get(comm);                                               \
    if (!c)                                                                              \
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

int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, MPI_Request *req)
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

/* The request the engine drives for r (a persistent holder's active inner request). */
static struct xm_req *eng(struct xm_req *r)
{
    return r->persistent && r->inner ? r->inner : r;
}

/* Persistent holder whose inner request completed: take its status, go inactive. */
static void harvest(struct xm_req *r)
{
    if (r->persistent && r->inner && r->inner->done) {
        struct xm_req *in = r->inner;
        xm_req_status(in, &r->status);
        r->cancelled = in->cancelled;
        xm_req_free(in);
        r->inner = NULL;
        r->done = 1;
    }
}

static int is_done(struct xm_req *r)
{
    harvest(r);
    return r->done;
}

static void wait_req(struct xm_req *r)
{
    xm_wait(eng(r));
    harvest(r);
}

/* A status handed to the user by a single-completion call (Wait, Test, Waitany,
 * Testany, Recv, Probe, Mprobe, Request_get_status, ...) keeps the MPI_ERROR the user
 * had there: MPI-3.1 3.2.5 sets that field only in the multiple-completion calls (which
 * set it after finish(), below); the error is the call's return value. */
static void user_status(const struct xm_req *r, MPI_Status *st)
{
    if (!st || st == MPI_STATUS_IGNORE)
        return;
    int keep = st->MPI_ERROR;
    xm_req_status(r, st);
    st->MPI_ERROR = keep;
}

static void proc_null_status(MPI_Status *st)
{
    if (!st || st == MPI_STATUS_IGNORE)
        return;
    int keep = st->MPI_ERROR;
    xm_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    st->MPI_ERROR = keep;
}

/* Complete-request epilogue shared by Wait and Test: status out, free, null handle. */
static int finish(MPI_Request *req, struct xm_req *r, MPI_Status *st)
{
    int err = r->status.MPI_ERROR;
    if (r->persistent) {
        /* status was already translated by harvest() */
        if (st && st != MPI_STATUS_IGNORE) {
            int keep = st->MPI_ERROR;
            *st = r->status;
            st->MPI_ERROR = keep;
        }
        /* inactive again: a later Wait/Test returns an empty status */
        xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        return err;
    }
    user_status(r, st);
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
    wait_req(r);
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
    if (!is_done(r))
        xm_progress();
    *flag = is_done(r);
    if (!*flag)
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
        wait_req(r);
        int err = finish(&reqs[i], r, st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        if (err != MPI_SUCCESS)
            any_err = 1;
    }
    return any_err ? xm_err(NULL, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}

int PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    xm_progress();
    for (int i = 0; i < n; i++) {
        struct xm_req *r = reqs[i] == MPI_REQUEST_NULL ? NULL : xm_req_get(reqs[i]);
        if (r && !is_done(r)) {
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
    struct xm_req *es[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        rs[i] = reqs[i] == MPI_REQUEST_NULL ? NULL : xm_req_get(reqs[i]);
        if (rs[i] && rs[i]->persistent && !rs[i]->inner)
            rs[i] = NULL; /* inactive: ignored like a null request */
        es[i] = rs[i] ? eng(rs[i]) : NULL;
    }
    int i = xm_wait_any(n, es);
    if (i < 0) {
        *index = MPI_UNDEFINED;
        empty_status(st);
        return MPI_SUCCESS;
    }
    *index = i;
    harvest(rs[i]);
    struct xm_comm *c = rs[i]->comm;
    int err = finish(&reqs[i], rs[i], st);
    return err ? xm_err(c, err, "MPI_Waitany") : MPI_SUCCESS;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
              MPI_Comm comm)
{
    /* the common case first, without a request (xm_send_now() checks the datatype);
     * anything unusual, errors included, takes the general path below */
    struct xm_comm *c = xm_comm_get(comm);
    if (c && count >= 0 && tag >= 0 && tag <= 0x3fffffff && dest >= 0 && dest < c->size) {
        int rc = xm_send_now(buf, count, dt, xm_comm_world_rank(c, dest), tag, c->ctx);
        if (rc > 0)
            return MPI_SUCCESS;
        if (rc < 0)
            return xm_err(c, xm_errno_to_class(rc), "MPI_Send");
    }
    MPI_Request r;
    int rc = isend(buf, count, dt, dest, tag, comm, 0, &r, "MPI_Send");
    return rc ? rc : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm)
{
    MPI_Request r;
    int rc = isend(buf, count, dt, dest, tag, comm, XM_PKT_F_SYNC, &r, "MPI_Ssend");
    return rc ? rc : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm)
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
                  void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag,
                  MPI_Comm comm, MPI_Status *st)
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
        proc_null_status(st);
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
        user_status(&tmp, st);
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
    if (r->greq) { /* generalized request: api/greq.c */
        *req = MPI_REQUEST_NULL;
        return xm_greq_request_free(r);
    }
    /* a pending send must still go out: wait for it (eager sends finish quickly) */
    wait_req(r);
    if (r->persistent)
        xm_dt_unref(xm_dt_get(r->dt)); /* taken by pinit() */
    xm_req_free(r);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

static void bsend_cancel(struct xm_req *h);

int PMPI_Cancel(MPI_Request *req)
{
    struct xm_req *r = xm_req_get(*req);
    if (!r)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
    struct xm_req *e = eng(r);
    if (e->greq) /* generalized request: api/greq.c */
        xm_greq_cancel(e);
    if (e->kind == XM_REQ_RECV && !e->done)
        xm_cancel_recv(e);
    else if (e->kind == XM_REQ_SEND)
        xm_cancel_send(e); /* semantics: p2p.h, README.md "Cancel" */
    else if (e->kind == XM_REQ_GREQ && (e->pflags & F_BSEND) && e->pos && e->done)
        bsend_cancel(e);
    else if (e->kind == XM_REQ_GREQ && !e->done)
        for (int i = 0; i < 2; i++) { /* MPI_Isendrecv: both halves */
            struct xm_req *k = e->kid[i];
            if (k && k->kind == XM_REQ_RECV && !k->done)
                xm_cancel_recv(k);
            else if (k && k->kind == XM_REQ_SEND)
                xm_cancel_send(k);
        }
    return MPI_SUCCESS;
}

XM_WEAK(MPI_Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *st, int flag)
{
    if (!st || st == MPI_STATUS_IGNORE)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled");
    if (flag)
        st->xm_count_hi_cncl |= 1;
    else
        st->xm_count_hi_cncl &= ~1;
    return MPI_SUCCESS;
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

/* ---- Waitsome / Testsome / Testany / Request_get_status -----------------------------
 */

/* Collect every completed active request; *out = MPI_UNDEFINED if none is active. */
static int some(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[],
                int wait, const char *fn)
{
    int spins = 0;
    for (;;) {
        int live = 0, k = 0, any_err = 0;
        for (int i = 0; i < n; i++) {
            if (reqs[i] == MPI_REQUEST_NULL)
                continue;
            struct xm_req *r = xm_req_get(reqs[i]);
            if (!r)
                return xm_err(NULL, MPI_ERR_REQUEST, fn);
            if (r->persistent && !r->inner && !r->done)
                continue;
            if (r->persistent && !r->inner)
                continue; /* inactive */
            live++;
            if (!is_done(r))
                continue;
            MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[k];
            int err = finish(&reqs[i], r, st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = err;
            if (err != MPI_SUCCESS)
                any_err = 1;
            idx[k++] = i;
        }
        if (!live) {
            *out = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (k || !wait) {
            *out = k;
            return any_err ? xm_err(NULL, MPI_ERR_IN_STATUS, fn) : MPI_SUCCESS;
        }
        if (xm_progress() > 0)
            spins = 0;
        else
            xm_idle(&spins);
    }
}

int PMPI_Waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    return some(n, reqs, out, idx, sts, 1, "MPI_Waitsome");
}

int PMPI_Testsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    xm_progress();
    return some(n, reqs, out, idx, sts, 0, "MPI_Testsome");
}

int PMPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    xm_progress();
    int live = 0;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        struct xm_req *r = xm_req_get(reqs[i]);
        if (!r)
            return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Testany");
        if (r->persistent && !r->inner)
            continue;
        live++;
        if (is_done(r)) {
            *index = i;
            *flag = 1;
            struct xm_comm *c = r->comm;
            int err = finish(&reqs[i], r, st);
            return err ? xm_err(c, err, "MPI_Testany") : MPI_SUCCESS;
        }
    }
    *index = MPI_UNDEFINED;
    *flag = live == 0;
    if (*flag)
        empty_status(st);
    return MPI_SUCCESS;
}

int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (req == MPI_REQUEST_NULL) {
        *flag = 1;
        empty_status(st);
        return MPI_SUCCESS;
    }
    struct xm_req *r = xm_req_get(req);
    if (!r)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Request_get_status");
    if (!is_done(r))
        xm_progress();
    *flag = is_done(r);
    if (*flag && st && st != MPI_STATUS_IGNORE) {
        if (r->persistent) {
            int keep = st->MPI_ERROR;
            *st = r->status;
            st->MPI_ERROR = keep;
        } else {
            user_status(r, st);
        }
    }
    return MPI_SUCCESS;
}

/* ---- Sendrecv_replace -----------------------------------------------------------------
 */

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag,
                          int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
    CHECK_COMM(c, comm, "MPI_Sendrecv_replace");
    int rc = check_buf(c, count, dt, "MPI_Sendrecv_replace");
    if (rc)
        return rc;
    struct xm_dtype *t = xm_dt_get(dt);
    size_t n = t->size * (size_t)count;
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
        return xm_err(c, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
    xm_dt_pack(buf, count, t, 0, tmp, n);
    MPI_Request rr, sr;
    rc = PMPI_Irecv(buf, count, dt, src, rtag, comm, &rr);
    if (rc == MPI_SUCCESS) {
        rc = isend(tmp, (int)n, MPI_BYTE, dest, stag, comm, 0, &sr,
                   "MPI_Sendrecv_replace");
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Wait(&sr, MPI_STATUS_IGNORE);
            int rc2 = PMPI_Wait(&rr, st);
            rc = rc ? rc : rc2;
        }
    }
    free(tmp);
    return rc;
}

/* ---- Isendrecv / Isendrecv_replace (MPI-4) --------------------------------------------
 * One request (a parent, core/obj.c) over an Irecv and an Isend (its children, freed
 * with it): complete when both are, with the receive's status.  The replace form
 * sends a packed copy (the send child's tmp) so the receive may land in buf at once. */

static int isendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                     void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag,
                     MPI_Comm comm, void *packed, MPI_Request *req, const char *fn)
{
    CHECK_COMM(c, comm, fn);
    struct xm_req *p = xm_req_new(XM_REQ_GREQ);
    if (!p) {
        free(packed);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    p->comm = c; /* status translation; the children hold the communicator */
    xm_status_set(&p->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    p->kids_due = 1;
    MPI_Request rr, sr;
    int rc = PMPI_Irecv(rbuf, rcount, rdt, src, rtag, comm, &rr);
    if (rc) {
        free(packed);
        xm_req_free(p);
        return rc;
    }
    struct xm_req *rk = xm_req_get(rr);
    rc = isend(sbuf, scount, sdt, dest, stag, comm, 0, &sr, fn);
    if (rc) {
        free(packed);
        if (rk->kind == XM_REQ_RECV && !rk->done)
            xm_cancel_recv(rk);
        xm_req_free(rk);
        xm_req_free(p);
        return rc;
    }
    struct xm_req *sk = xm_req_get(sr);
    if (packed) /* a contiguous (MPI_BYTE) send leaves tmp to us: freed with it */
        sk->tmp = packed;
    xm_req_adopt(p, rk, 1);
    xm_req_adopt(p, sk, 1);
    xm_req_adopt_end(p);
    *req = p->handle;
    return MPI_SUCCESS;
}

XM_WEAK(MPI_Isendrecv)
int PMPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                   void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag,
                   MPI_Comm comm, MPI_Request *req)
{
    return isendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm,
                     NULL, req, "MPI_Isendrecv");
}

XM_WEAK(MPI_Isendrecv_replace)
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag,
                           int src, int rtag, MPI_Comm comm, MPI_Request *req)
{
    CHECK_COMM(c, comm, "MPI_Isendrecv_replace");
    int rc = check_buf(c, count, dt, "MPI_Isendrecv_replace");
    if (rc)
        return rc;
    struct xm_dtype *t = xm_dt_get(dt);
    size_t n = t->size * (size_t)count;
    if (n > 0x7fffffff)
        return xm_err(c, MPI_ERR_COUNT, "MPI_Isendrecv_replace");
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
        return xm_err(c, MPI_ERR_NO_MEM, "MPI_Isendrecv_replace");
    xm_dt_pack(buf, count, t, 0, tmp, n);
    return isendrecv(tmp, (int)n, MPI_BYTE, dest, stag, buf, count, dt, src, rtag, comm,
                     tmp, req, "MPI_Isendrecv_replace");
}

/* ---- buffered mode
 * ---------------------------------------------------------------------- */

struct bregion {
    struct bregion *next; /* sorted by offset */
    size_t off, len;
    struct xm_req *req; /* the send using it */
    size_t serial;      /* names it for MPI_Cancel of its Ibsend/Bsend_init request */
};
static size_t bsend_serial;

static struct {
    char *buf;
    size_t size;
    int attached;
    struct bregion *list;
} B;

/* Drop regions whose send completed. */
static void bsend_reap(void)
{
    struct bregion **pp = &B.list;
    while (*pp) {
        struct bregion *g = *pp;
        if (g->req->done) {
            *pp = g->next;
            xm_req_free(g->req);
            free(g);
        } else {
            pp = &g->next;
        }
    }
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    if (B.attached)
        return xm_err(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach");
    if (size < 0 || (!buffer && size > 0))
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Buffer_attach");
    B.buf = buffer;
    B.size = (size_t)size;
    B.attached = 1;
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    if (!B.attached) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    for (struct bregion *g = B.list; g; g = g->next)
        xm_wait(g->req);
    bsend_reap();
    *(void **)buffer_addr = B.buf;
    *size = (int)B.size;
    B.buf = NULL;
    B.size = 0;
    B.attached = 0;
    return MPI_SUCCESS;
}

/* Copy the message into the attached buffer and start sending it from there. */
static int bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, size_t *serial, const char *fn)
{
    if (serial)
        *serial = 0;
    CHECK_COMM(c, comm, fn);
    int rc = check_buf(c, count, dt, fn);
    if (rc)
        return rc;
    if (tag < 0 || tag > 0x3fffffff)
        return xm_err(c, MPI_ERR_TAG, fn);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (dest < 0 || dest >= c->size)
        return xm_err(c, MPI_ERR_RANK, fn);
    struct xm_dtype *t = xm_dt_get(dt);
    size_t n = t->size * (size_t)count;
    /* a region is the message plus MPI_BSEND_OVERHEAD, as the program sized the
     * buffer; regions start 16-aligned from the buffer start, the padding taken from
     * the previous region's overhead (so n + OVERHEAD bytes fit one n-byte message) */
    size_t need = n + MPI_BSEND_OVERHEAD;
    xm_progress();
    bsend_reap();
    /* first fit between regions */
    size_t at = 0;
    struct bregion **pp = &B.list;
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->off >= at + need)
            break;
        at = ((*pp)->off + (*pp)->len - MPI_BSEND_OVERHEAD + 15) & ~(size_t)15;
    }
    if (!B.attached || at + need > B.size)
        return xm_err(c, MPI_ERR_BUFFER, fn);
    struct bregion *g = malloc(sizeof(*g));
    if (!g)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    char *p = B.buf + at;
    xm_dt_pack(buf, count, t, 0, p, n);
    rc = xm_isend(p, (int)n, MPI_BYTE, xm_comm_world_rank(c, dest), tag, c->ctx, c, 0,
                  &g->req);
    if (rc < 0) {
        free(g);
        return xm_err(c, xm_errno_to_class(rc), fn);
    }
    g->off = at;
    g->len = need;
    g->serial = ++bsend_serial;
    if (serial)
        *serial = g->serial;
    g->next = *pp;
    *pp = g;
    return MPI_SUCCESS;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm)
{
    return bsend(buf, count, dt, dest, tag, comm, NULL, "MPI_Bsend");
}

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                MPI_Comm comm, MPI_Request *req)
{
    size_t serial;
    int rc = bsend(buf, count, dt, dest, tag, comm, &serial, "MPI_Ibsend");
    if (rc == MPI_SUCCESS) {
        *req = null_req(MPI_ANY_SOURCE);
        struct xm_req *r = xm_req_get(*req);
        if (r) { /* complete at once; MPI_Cancel may still withdraw the message */
            r->pflags = F_BSEND;
            r->pos = serial;
        }
    }
    return rc;
}

/* MPI_Cancel of an Ibsend or a started Bsend_init request h (complete already: the
 * message was copied): withdraw the buffered message's send if it is still around;
 * h completes again when that is settled (cancelled or not). */
static void bsend_cancel(struct xm_req *h)
{
    struct bregion *g = B.list;
    while (g && g->serial != h->pos)
        g = g->next;
    h->pos = 0;
    if (!g)
        return; /* its send completed and the region was reused: too late */
    h->done = 0;
    h->kids_due = 1;
    if (xm_cancel_send(g->req))
        xm_req_adopt(h, g->req, 0); /* the region still owns the send */
    xm_req_adopt_end(h);
}

/* ---- persistent requests
 * ------------------------------------------------------------------ */

static int pinit(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                 MPI_Comm comm, int kind, unsigned flags, MPI_Request *req,
                 const char *fn)
{
    CHECK_COMM(c, comm, fn);
    int rc = check_buf(c, count, dt, fn);
    if (rc)
        return rc;
    int anytag = kind == XM_REQ_RECV ? MPI_ANY_TAG : 0;
    if (tag < anytag || tag > 0x3fffffff)
        return xm_err(c, MPI_ERR_TAG, fn);
    int anysrc = kind == XM_REQ_RECV && peer == MPI_ANY_SOURCE;
    if (peer != MPI_PROC_NULL && !anysrc && (peer < 0 || peer >= c->size))
        return xm_err(c, MPI_ERR_RANK, fn);
    struct xm_req *r = xm_req_new(XM_REQ_GREQ);
    if (!r)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    r->persistent = 1;
    r->pkind = kind;
    r->pflags = flags;
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dt;
    /* the datatype may be freed before the request (Send_init, Type_free, Start...):
     * the holder keeps it alive until MPI_Request_free */
    xm_dt_ref(xm_dt_get(dt));
    r->peer = peer; /* comm rank (translated at Start) */
    r->tag = tag;
    r->comm = c;
    xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    r->done = 1; /* inactive */
    *req = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    return pinit(buf, count, dt, dest, tag, comm, XM_REQ_SEND, 0, req, "MPI_Send_init");
}

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, MPI_Request *req)
{
    return pinit(buf, count, dt, dest, tag, comm, XM_REQ_SEND, XM_PKT_F_SYNC, req,
                 "MPI_Ssend_init");
}

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, MPI_Request *req)
{
    return pinit(buf, count, dt, dest, tag, comm, XM_REQ_SEND, 0, req, "MPI_Rsend_init");
}

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                    MPI_Comm comm, MPI_Request *req)
{
    return pinit(buf, count, dt, dest, tag, comm, XM_REQ_SEND, F_BSEND, req,
                 "MPI_Bsend_init");
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return pinit(buf, count, dt, src, tag, comm, XM_REQ_RECV, 0, req, "MPI_Recv_init");
}

int PMPI_Start(MPI_Request *req)
{
    struct xm_req *r = xm_req_get(*req);
    if (!r || !r->persistent)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Start");
    if (r->inner)
        return xm_err(r->comm, MPI_ERR_REQUEST, "MPI_Start"); /* already active */
    struct xm_comm *c = r->comm;
    r->cancelled = 0;
    if (r->pkind == XM_REQ_COLL) /* persistent collective (api/pcoll.c) */
        return xm_pcoll_start(r);
    if (r->peer == MPI_PROC_NULL) {
        xm_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        r->done = 1;
        return MPI_SUCCESS;
    }
    int rc;
    if (r->pkind == XM_REQ_RECV) {
        int w =
            r->peer == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : xm_comm_world_rank(c, r->peer);
        rc = xm_irecv(r->buf, r->count, r->dt, w, r->tag, c->ctx, c, &r->inner);
    } else if (r->pflags & F_BSEND) {
        size_t serial;
        rc = bsend(r->buf, r->count, r->dt, r->peer, r->tag, c->handle, &serial,
                   "MPI_Start");
        if (rc != MPI_SUCCESS)
            return rc;
        r->pos = serial;
        xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        r->done = 1;
        return MPI_SUCCESS;
    } else {
        rc = xm_isend(r->buf, r->count, r->dt, xm_comm_world_rank(c, r->peer), r->tag,
                      c->ctx, c, r->pflags & 0xff, &r->inner);
    }
    if (rc < 0) {
        r->inner = NULL;
        return xm_err(c, xm_errno_to_class(rc), "MPI_Start");
    }
    r->done = 0;
    return MPI_SUCCESS;
}

int PMPI_Startall(int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++) {
        int rc = PMPI_Start(&reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---- matched probe / receive
 * -------------------------------------------------------------- */

static MPI_Message msg_handle(struct xm_req *u)
{
    return (MPI_Message)(((unsigned)u->handle & ~(0x3fu << 24)) |
                         ((unsigned)XM_K_MSG << 24));
}

static struct xm_req *msg_get(MPI_Message m)
{
    if (XM_H_KIND(m) != XM_K_MSG)
        return NULL;
    struct xm_req *u = xm_req_get(
        (MPI_Request)(((unsigned)m & ~(0x3fu << 24)) | ((unsigned)XM_K_REQ << 24)));
    return u && u->kind == XM_REQ_UNEXP ? u : NULL;
}

int PMPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                 MPI_Status *st)
{
    CHECK_COMM(c, comm, "MPI_Improbe");
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        *msg = MPI_MESSAGE_NO_PROC;
        proc_null_status(st);
        return MPI_SUCCESS;
    }
    if (src != MPI_ANY_SOURCE && (src < 0 || src >= c->size))
        return xm_err(c, MPI_ERR_RANK, "MPI_Improbe");
    if (tag < MPI_ANY_TAG || tag > 0x3fffffff)
        return xm_err(c, MPI_ERR_TAG, "MPI_Improbe");
    int wsrc = src == MPI_ANY_SOURCE ? src : xm_comm_world_rank(c, src);
    MPI_Status s;
    struct xm_req *u = xm_improbe(wsrc, tag, c->ctx, &s);
    if (!u) {
        xm_progress();
        u = xm_improbe(wsrc, tag, c->ctx, &s);
    }
    *flag = u != NULL;
    if (!u)
        return MPI_SUCCESS;
    u->comm = c;
    *msg = msg_handle(u);
    if (st != MPI_STATUS_IGNORE) {
        struct xm_req tmp = {.status = s, .comm = c};
        user_status(&tmp, st);
    }
    return MPI_SUCCESS;
}

int PMPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    int flag = 0, rc, spins = 0;
    while ((rc = PMPI_Improbe(src, tag, comm, &flag, msg, st)) == MPI_SUCCESS && !flag)
        xm_idle(&spins);
    return rc;
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (*msg == MPI_MESSAGE_NO_PROC) {
        *req = null_req(MPI_PROC_NULL);
        *msg = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    struct xm_req *u = msg_get(*msg);
    if (!u)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Imrecv");
    struct xm_comm *c = u->comm;
    int rc = check_buf(c, count, dt, "MPI_Imrecv");
    if (rc)
        return rc;
    struct xm_req *r;
    rc = xm_mrecv(u, buf, count, dt, c, &r);
    if (rc < 0)
        return xm_err(c, xm_errno_to_class(rc), "MPI_Imrecv");
    *msg = MPI_MESSAGE_NULL;
    *req = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *st)
{
    MPI_Request r;
    int rc = PMPI_Imrecv(buf, count, dt, msg, &r);
    if (rc)
        return rc;
    /* single-completion calls leave MPI_ERROR alone (MPI-3.1 3.2.5) */
    int keep = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
    rc = PMPI_Wait(&r, st);
    if (rc == MPI_SUCCESS && st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = keep;
    return rc;
}
