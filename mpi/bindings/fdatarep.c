/*
 * fdatarep.c - MPI_REGISTER_DATAREP from Fortran (part of libmpifort, written by hand
 * beside the generated mpi_fortran.c; MPI-3.1 13.5.3) and the predefined Fortran
 * procedure MPI_CONVERSION_FN_NULL.
 *
 * Fortran conversion procedures take every argument by reference (USERBUF and FILEBUF
 * are buffers, i.e. addresses: in mpi_f08 they are TYPE(C_PTR), VALUE, the same bits),
 * where C's take the datatype, count, position and extra_state by value.  Each Fortran
 * representation is registered with the C trampolines below and a small record (the
 * three procedures and the Fortran extra_state) as the C extra_state.  The record lives
 * as long as the process, like the representation itself (MPI cannot remove one).
 * MPI_CONVERSION_FN_NULL, recognised by address, registers C's NULL for that direction.
 */
#include <stdlib.h>
#include "mpi.h"

#define XF_EXPORT __attribute__((visibility("default")))

typedef void xf_conv_fn(void *userbuf, MPI_Fint *dt, MPI_Fint *count, void *filebuf,
                        MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);
typedef void xf_extent_fn(MPI_Fint *dt, MPI_Aint *extent, MPI_Aint *extra,
                          MPI_Fint *ierror);

/* MPI_CONVERSION_FN_NULL in Fortran: never called (the binding registers NULL) */
XF_EXPORT void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *dt, MPI_Fint *count,
                                       void *filebuf, MPI_Offset *position, MPI_Aint *extra,
                                       MPI_Fint *ierror)
{
    (void)userbuf, (void)dt, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}

struct xf_datarep {
    xf_conv_fn *rd, *wr;
    xf_extent_fn *ext;
    MPI_Aint extra;
};

static int xf_conv(xf_conv_fn *fn, struct xf_datarep *r, void *userbuf, MPI_Datatype dt,
                   int count, void *filebuf, MPI_Offset position)
{
    MPI_Fint fdt = (MPI_Fint)dt, fcount = count, ierr = MPI_SUCCESS;
    MPI_Aint extra = r->extra;
    fn(userbuf, &fdt, &fcount, filebuf, &position, &extra, &ierr);
    return ierr;
}

static int xf_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                   MPI_Offset position, void *extra)
{
    struct xf_datarep *r = extra;
    return xf_conv(r->rd, r, userbuf, dt, count, filebuf, position);
}

static int xf_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                    MPI_Offset position, void *extra)
{
    struct xf_datarep *r = extra;
    return xf_conv(r->wr, r, userbuf, dt, count, filebuf, position);
}

static int xf_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    struct xf_datarep *r = extra;
    MPI_Fint fdt = (MPI_Fint)dt, ierr = MPI_SUCCESS;
    MPI_Aint e = 0, x = r->extra;
    r->ext(&fdt, &e, &x, &ierr);
    if (ierr == MPI_SUCCESS)
        *extent = e;
    return ierr;
}

/* DATAREP without its trailing blanks (NULL: out of memory) */
static char *xf_name(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *s = malloc(len + 1);
    if (s) {
        for (size_t i = 0; i < len; i++)
            s[i] = f[i];
        s[len] = '\0';
    }
    return s;
}

static void xf_register(int pmpi, const char *datarep, xf_conv_fn *rd, xf_conv_fn *wr,
                        xf_extent_fn *ext, MPI_Aint *extra, MPI_Fint *ierror, size_t len)
{
    struct xf_datarep *r = malloc(sizeof(*r));
    char *name = xf_name(datarep, len);
    int rc;
    if (!r || !name) {
        rc = MPI_ERR_NO_MEM;
    } else {
        r->rd = rd == mpi_conversion_fn_null_ ? NULL : rd;
        r->wr = wr == mpi_conversion_fn_null_ ? NULL : wr;
        r->ext = ext;
        r->extra = *extra;
        rc = (pmpi ? PMPI_Register_datarep : MPI_Register_datarep)(
            name, r->rd ? xf_read : MPI_CONVERSION_FN_NULL,
            r->wr ? xf_write : MPI_CONVERSION_FN_NULL, ext ? xf_extent : NULL, r);
    }
    if (rc != MPI_SUCCESS)
        free(r);   /* kept (for ever) only when registered */
    free(name);
    *ierror = rc;
}

#define XF_REGISTER(prefix, pmpi)                                                       \
    XF_EXPORT void prefix##register_datarep_(const char *datarep, xf_conv_fn *rd,      \
                                              xf_conv_fn *wr, xf_extent_fn *ext,        \
                                              MPI_Aint *extra, MPI_Fint *ierror,        \
                                              size_t len)                               \
    {                                                                                   \
        xf_register(pmpi, datarep, rd, wr, ext, extra, ierror, len);                    \
    }

XF_REGISTER(mpi_, 0)
XF_REGISTER(pmpi_, 1)
XF_REGISTER(loomf_, 0)
XF_REGISTER(loomfp_, 1)
