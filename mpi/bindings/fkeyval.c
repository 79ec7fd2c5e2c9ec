/*
 * fkeyval.c - attribute keyvals created from Fortran (part of libmpifort, written by
 * hand beside the generated mpi_fortran.c): MPI_COMM_CREATE_KEYVAL,
 * MPI_TYPE_CREATE_KEYVAL, MPI_WIN_CREATE_KEYVAL and MPI-1's MPI_KEYVAL_CREATE, and the predefined Fortran
 * callbacks MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, ... (MPI-3.1 6.7.2, 6.7.4).
 *
 * A Fortran copy or delete callback takes every argument by reference and sees the
 * attribute VALUE (an INTEGER(KIND=MPI_ADDRESS_KIND), or a default INTEGER for the
 * MPI-1 functions), where C's callbacks take handles by value and the attribute as a
 * pointer.  libmpi keeps calling C callbacks: each Fortran keyval gets the two
 * trampolines below as its C callbacks and a small record (the Fortran procedures and
 * extra_state) as its C extra_state.  The keyval is created with mpipriv_attr_lang set,
 * so libmpi hands these trampolines the Fortran view of each attribute (the value set
 * from Fortran, or a C pointer as an integer; issue 22) and keeps the copy's language.
 * The record lives as long as the process: libmpi may still call the callbacks of a
 * freed keyval for the attributes that remain, and it has no free hook for extra_state.
 */
#include <stdlib.h>
#include "mpi.h"

#define XF_EXPORT __attribute__((visibility("default")))

extern __thread int mpipriv_attr_lang; /* libmpi's core/attr.c */

/* Fortran's view of a callback; the attribute values are MPI_Aint or MPI_Fint */
typedef void xf_copy_fn(MPI_Fint *oldobj, MPI_Fint *keyval, void *extra, void *val_in,
                        void *val_out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void xf_delete_fn(MPI_Fint *obj, MPI_Fint *keyval, void *val, void *extra,
                          MPI_Fint *ierror);

struct xf_keyval {
    xf_copy_fn *copy;
    xf_delete_fn *del;
    MPI_Aint extra;     /* the Fortran extra_state (MPI-1: a default INTEGER) */
    int mpi1;           /* MPI_KEYVAL_CREATE: values are default INTEGERs */
};

static int xf_copy(MPI_Fint obj, int keyval, struct xf_keyval *k, void *in, void *out,
                   int *flag)
{
    MPI_Fint fkey = keyval, fflag = 0, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint e = (MPI_Fint)k->extra, vin = (MPI_Fint)(MPI_Aint)in, vout = 0;
        k->copy(&obj, &fkey, &e, &vin, &vout, &fflag, &ierr);
        if (fflag && ierr == MPI_SUCCESS)
            *(void **)out = (void *)(MPI_Aint)vout;
    } else {
        MPI_Aint e = k->extra, vin = (MPI_Aint)in, vout = 0;
        k->copy(&obj, &fkey, &e, &vin, &vout, &fflag, &ierr);
        if (fflag && ierr == MPI_SUCCESS)
            *(void **)out = (void *)vout;
    }
    *flag = fflag != 0 && ierr == MPI_SUCCESS;   /* any non-zero LOGICAL is true */
    return ierr;
}

static int xf_delete(MPI_Fint obj, int keyval, struct xf_keyval *k, void *val)
{
    MPI_Fint fkey = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(MPI_Aint)val;
        k->del(&obj, &fkey, &v, &e, &ierr);
    } else {
        MPI_Aint e = k->extra, v = (MPI_Aint)val;
        k->del(&obj, &fkey, &v, &e, &ierr);
    }
    return ierr;
}

static int xf_comm_copy(MPI_Comm c, int keyval, void *extra, void *in, void *out, int *flag)
{
    return xf_copy((MPI_Fint)c, keyval, extra, in, out, flag);
}

static int xf_comm_delete(MPI_Comm c, int keyval, void *val, void *extra)
{
    return xf_delete((MPI_Fint)c, keyval, extra, val);
}

static int xf_type_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out,
                        int *flag)
{
    return xf_copy((MPI_Fint)t, keyval, extra, in, out, flag);
}

static int xf_type_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    return xf_delete((MPI_Fint)t, keyval, extra, val);
}

static int xf_win_copy(MPI_Win w, int keyval, void *extra, void *in, void *out, int *flag)
{
    return xf_copy((MPI_Fint)w, keyval, extra, in, out, flag);
}

static int xf_win_delete(MPI_Win w, int keyval, void *val, void *extra)
{
    return xf_delete((MPI_Fint)w, keyval, extra, val);
}

static struct xf_keyval *xf_record(void (*copy)(void), void (*del)(void), MPI_Aint extra,
                                   int mpi1)
{
    struct xf_keyval *k = malloc(sizeof *k);
    if (k) {
        k->copy = (xf_copy_fn *)copy;
        k->del = (xf_delete_fn *)del;
        k->extra = extra;
        k->mpi1 = mpi1;
    }
    return k;
}

enum { XF_COMM, XF_TYPE, XF_WIN, XF_MPI1 };

static void xf_create(int what, int pmpi, void (*copy)(void), void (*del)(void),
                      MPI_Fint *keyval, MPI_Aint extra, MPI_Fint *ierror)
{
    int rc, kv = 0;
    struct xf_keyval *k = xf_record(copy, del, extra, what == XF_MPI1);
    mpipriv_attr_lang = 1; /* libmpi: a Fortran keyval (its core/xm.h) */
    if (!copy || !del) {
        /* no procedure (a C caller of the Fortran entry): C's null callbacks */
        free(k);
        k = NULL;
        rc = what == XF_TYPE
                 ? (pmpi ? PMPI_Type_create_keyval : MPI_Type_create_keyval)(NULL, NULL, &kv, NULL)
             : what == XF_WIN
                 ? (pmpi ? PMPI_Win_create_keyval : MPI_Win_create_keyval)(NULL, NULL, &kv, NULL)
                 : (pmpi ? PMPI_Comm_create_keyval : MPI_Comm_create_keyval)(NULL, NULL, &kv, NULL);
    } else if (!k) {
        rc = MPI_ERR_NO_MEM;
    } else if (what == XF_TYPE) {
        rc = (pmpi ? PMPI_Type_create_keyval : MPI_Type_create_keyval)(xf_type_copy,
                                                                       xf_type_delete, &kv, k);
    } else if (what == XF_WIN) {
        rc = (pmpi ? PMPI_Win_create_keyval : MPI_Win_create_keyval)(xf_win_copy,
                                                                     xf_win_delete, &kv, k);
    } else {
        /* MPI_KEYVAL_CREATE: the MPI-2 communicator keyval, with INTEGER values */
        rc = (pmpi ? PMPI_Comm_create_keyval : MPI_Comm_create_keyval)(xf_comm_copy,
                                                                       xf_comm_delete, &kv, k);
    }
    mpipriv_attr_lang = 0;
    if (rc == MPI_SUCCESS)
        *keyval = kv;
    else
        free(k);
    if (ierror)
        *ierror = rc;
}

/* loomf_: mpi_f08's entry; its MPI_Keyval_create takes MPI_Copy_function, whose
 * attribute values are address-sized as in MPI_COMM_CREATE_KEYVAL */
#define XF_CREATE(fname, what, f08what, etype)                                                   \
    XF_EXPORT void mpi_##fname##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, \
                                  etype *extra, MPI_Fint *ierror)                        \
    {                                                                                   \
        xf_create(what, 0, copy, del, keyval, (MPI_Aint)*extra, ierror);                \
    }                                                                                   \
    XF_EXPORT void pmpi_##fname##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, \
                                   etype *extra, MPI_Fint *ierror)                       \
    {                                                                                   \
        xf_create(what, 1, copy, del, keyval, (MPI_Aint)*extra, ierror);                \
    }                                                                                   \
    XF_EXPORT void loomf_##fname##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, \
                                    etype *extra, MPI_Fint *ierror)                      \
    {                                                                                   \
        xf_create(f08what, 0, copy, del, keyval, (MPI_Aint)*extra, ierror);             \
    }

XF_CREATE(comm_create_keyval, XF_COMM, XF_COMM, MPI_Aint)
XF_CREATE(type_create_keyval, XF_TYPE, XF_TYPE, MPI_Aint)
XF_CREATE(win_create_keyval, XF_WIN, XF_WIN, MPI_Aint)
XF_CREATE(keyval_create, XF_MPI1, XF_COMM, MPI_Fint)

/* ---- the predefined Fortran callbacks (Fortran calling convention) ---------------- */
#define XF_COPY_FNS(prefix, vtype)                                                      \
    XF_EXPORT void mpi_##prefix##null_copy_fn_(MPI_Fint *o, MPI_Fint *k, vtype *e,      \
                                               vtype *in, vtype *out, MPI_Fint *flag,   \
                                               MPI_Fint *ierror)                        \
    {                                                                                   \
        (void)o; (void)k; (void)e; (void)in; (void)out;                                 \
        *flag = 0;                                                                      \
        *ierror = MPI_SUCCESS;                                                          \
    }                                                                                   \
    XF_EXPORT void mpi_##prefix##dup_fn_(MPI_Fint *o, MPI_Fint *k, vtype *e, vtype *in, \
                                         vtype *out, MPI_Fint *flag, MPI_Fint *ierror)  \
    {                                                                                   \
        (void)o; (void)k; (void)e;                                                      \
        *out = *in;                                                                     \
        *flag = 1;                                                                      \
        *ierror = MPI_SUCCESS;                                                          \
    }                                                                                   \
    XF_EXPORT void mpi_##prefix##null_delete_fn_(MPI_Fint *o, MPI_Fint *k, vtype *v,    \
                                                 vtype *e, MPI_Fint *ierror)            \
    {                                                                                   \
        (void)o; (void)k; (void)v; (void)e;                                             \
        *ierror = MPI_SUCCESS;                                                          \
    }

XF_COPY_FNS(comm_, MPI_Aint)
XF_COPY_FNS(type_, MPI_Aint)
XF_COPY_FNS(win_, MPI_Aint)
XF_COPY_FNS(, MPI_Fint)
