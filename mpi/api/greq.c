/*
 * greq.c - generalized requests (MPI-3.1 §12.2): MPI_Grequest_start/complete and the
 *          hooks through which Wait/Test/Cancel/Request_free/xm_req_free reach their
 *          callbacks.
 *
 *          (MPI_Status_set_cancelled, which query functions use, is in api/p2p.c.)
 * Contract: a generalized request is an XM_REQ_GREQ request whose ->greq points at
 *   its callbacks.  MPI_Grequest_complete runs query_fn into the request's status and
 *   marks it done, so every completion call (Wait/Test/-all/-any/-some,
 *   Request_get_status) sees the status the user's query_fn wrote; query_fn's return
 *   value becomes the status' MPI_ERROR (the code Wait returns).  MPI_Cancel calls
 *   cancel_fn(extra_state, complete) and, on a completed request, query_fn again (so
 *   the status can say "cancelled").  free_fn runs once, when the request object goes
 *   (xm_req_free: after Wait/Test return it, or at Request_free of a completed one;
 *   Request_free of one not yet completed defers both to Grequest_complete).
 * Caveats: query_fn runs at Grequest_complete rather than inside Wait/Test (the
 *   standard runs it there); the status it fills is the same unless the extra state
 *   changes between the two calls.  free_fn's return code is not reported (the request
 *   is already gone when it runs).  Waiting for a request nobody completes waits for
 *   ever, sleeping; under MPI_THREAD_MULTIPLE another thread's Grequest_complete wakes
 *   it (core/mt.h).
 */
#include <stdlib.h>

#include "../core/p2p.h"
#include "../core/xm.h"

struct xm_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int user_freed; /* MPI_Request_free came before Grequest_complete */
};

XM_WEAK(MPI_Grequest_start)
XM_WEAK(MPI_Grequest_complete)
/* (MPI_Status_set_cancelled, query_fn's tool for a cancelled request: api/p2p.c) */

/* the request's ->release (core/obj.c's xm_req_free runs it) */
static void greq_release(struct xm_req *r)
{
    struct xm_greq *g = r->greq;
    r->greq = NULL;
    g->free_fn(g->extra);
    free(g);
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                        MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *req)
{
    if (!req || !query_fn || !free_fn || !cancel_fn)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Grequest_start");
    struct xm_greq *g = calloc(1, sizeof(*g));
    struct xm_req *r = g ? xm_req_new(XM_REQ_GREQ) : NULL;
    if (!r) {
        free(g);
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
    }
    *g = (struct xm_greq){query_fn, free_fn, cancel_fn, extra_state, 0};
    r->greq = g;
    r->release = greq_release;
    xm_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    *req = r->handle;
    return MPI_SUCCESS;
}

static void run_query(struct xm_req *r)
{
    struct xm_greq *g = r->greq;
    MPI_Status st = r->status;
    int rc = g->query(g->extra, &st);
    r->status = st;
    if (rc != MPI_SUCCESS)
        r->status.MPI_ERROR = rc;
}

int PMPI_Grequest_complete(MPI_Request req)
{
    struct xm_req *r = xm_req_get(req);
    if (!r || !r->greq || r->done)
        return xm_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
    run_query(r);
    xm_req_complete(r);
    if (((struct xm_greq *)r->greq)->user_freed)
        xm_req_free(r); /* runs free_fn */
    return MPI_SUCCESS;
}

void xm_greq_cancel(struct xm_req *r)
{
    struct xm_greq *g = r->greq;
    g->cancel(g->extra, r->done);
    if (r->done)
        run_query(r);
}

int xm_greq_request_free(struct xm_req *r)
{
    if (!r->done) {
        ((struct xm_greq *)r->greq)->user_freed = 1;
        return 0;
    }
    xm_req_free(r);
    return 0;
}
