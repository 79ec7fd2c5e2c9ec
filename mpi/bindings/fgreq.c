/*
 * fgreq.c - generalized requests started from Fortran (part of libmpifort, written by
 * hand beside the generated mpi_fortran.c): MPI_GREQUEST_START (MPI-3.1 12.2) for
 * mpif.h, USE mpi and USE mpi_f08.
 *
 * A Fortran query, free or cancel procedure takes every argument by reference:
 * EXTRA_STATE is the INTEGER(KIND=MPI_ADDRESS_KIND) variable the program handed to
 * MPI_GREQUEST_START (itself, not a copy: a free procedure that changes it changes the
 * caller's variable, as MPICH's test greqf checks), the status is a Fortran status
 * (same layout as the C MPI_Status: MPI_STATUS_SIZE comes from it, TYPE(MPI_Status)
 * too), COMPLETE a LOGICAL, and the error code comes back in IERROR.  libmpi keeps
 * calling C callbacks (api/greq.c): the request is started with the three trampolines
 * below and a record of the Fortran procedures as its C extra_state, so the request
 * remembers that its callbacks are Fortran ones.  The record goes with the request,
 * after the free procedure ran.
 */
#include <stdlib.h>
#include "mpi.h"

#define XF_EXPORT __attribute__((visibility("default")))

typedef void xf_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void xf_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void xf_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

struct xf_greq {
    xf_query_fn *query;
    xf_free_fn *free_fn;
    xf_cancel_fn *cancel;
    MPI_Aint *extra; /* the caller's EXTRA_STATE variable */
};

static int xf_greq_query(void *extra, MPI_Status *status)
{
    struct xf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)status, &ierr);
    return ierr;
}

static int xf_greq_free(void *extra)
{
    struct xf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free_fn(g->extra, &ierr);
    free(g);
    return ierr;
}

static int xf_greq_cancel(void *extra, int complete)
{
    struct xf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, fcomplete = complete != 0; /* gfortran's .TRUE. is 1 */
    g->cancel(g->extra, &fcomplete, &ierr);
    return ierr;
}

static void xf_grequest_start(int pmpi, xf_query_fn *query, xf_free_fn *free_fn,
                              xf_cancel_fn *cancel, MPI_Aint *extra, MPI_Fint *request,
                              MPI_Fint *ierror)
{
    struct xf_greq *g = malloc(sizeof *g);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc;
    if (!g) {
        rc = MPI_ERR_NO_MEM;
    } else if (!query || !free_fn || !cancel) {
        /* let libmpi report the missing procedure through its error handler */
        free(g);
        g = NULL;
        rc = pmpi ? PMPI_Grequest_start(NULL, NULL, NULL, NULL, &r)
                  : MPI_Grequest_start(NULL, NULL, NULL, NULL, &r);
    } else {
        *g = (struct xf_greq){query, free_fn, cancel, extra};
        rc = pmpi ? PMPI_Grequest_start(xf_greq_query, xf_greq_free, xf_greq_cancel, g, &r)
                  : MPI_Grequest_start(xf_greq_query, xf_greq_free, xf_greq_cancel, g, &r);
        if (rc != MPI_SUCCESS)
            free(g);
        else
            *request = (MPI_Fint)r;
    }
    if (ierror)
        *ierror = rc;
}

XF_EXPORT void mpi_grequest_start_(xf_query_fn *q, xf_free_fn *f, xf_cancel_fn *c,
                                   MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    xf_grequest_start(0, q, f, c, extra, request, ierror);
}

XF_EXPORT void pmpi_grequest_start_(xf_query_fn *q, xf_free_fn *f, xf_cancel_fn *c,
                                    MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    xf_grequest_start(1, q, f, c, extra, request, ierror);
}

XF_EXPORT void loomf_grequest_start_(xf_query_fn *q, xf_free_fn *f, xf_cancel_fn *c,
                                     MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    xf_grequest_start(0, q, f, c, extra, request, ierror);
}
