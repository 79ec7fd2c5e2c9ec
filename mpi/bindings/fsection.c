/*
 * fsection.c - noncontiguous Fortran array sections for mpi_f08 (MPI_SUBARRAYS_SUPPORTED).
 *
 * Owns the C side of the "subarray" path of module mpi_f08: when a choice buffer is not
 * contiguous (IS_CONTIGUOUS is false in the generated module procedure), the procedure
 * hands the buffer's Fortran descriptor (CFI_cdesc_t, ISO_Fortran_binding.h) here
 * together with the caller's count and datatype.  We build a derived datatype that
 * describes, in place in the user's memory, the elements the caller's (count, datatype)
 * cover in the "virtual" contiguous copy of the section (MPI-3.1 17.1.12: a section
 * behaves as if it were copied to a contiguous buffer first), and the procedure calls the
 * C function with (first element's address, 1, that type).  No data is copied, so a
 * nonblocking call stays correct after it returns: libmpi keeps its own reference on
 * the datatype of a pending point-to-point request, so the temporary type is freed
 * right after the call (the generated code decides when; see gen_fortran.py).
 *
 * What is supported: the caller's datatype must be "dense" (no holes, lower bound 0,
 * extent = size: every predefined type, contiguous derived types) and count*size must
 * be a whole number of section elements, no more than the section holds.  An element is
 * described with the caller's own type when that is predefined and its size divides the
 * element length (so reductions see the right type), else as bytes.  Anything else is
 * reported by the MPI call itself: a non-dense datatype as MPI_ERR_TYPE (the type passed
 * on is MPI_DATATYPE_NULL), a count that does not fit the section as MPI_ERR_COUNT
 * (count -1), through the call's own error handler.
 */
#include <ISO_Fortran_binding.h>
#include <stddef.h>
#include "mpi.h"

#define XF_EXPORT __attribute__((visibility("default")))

/* the first n elements (column-major) of dimensions 0..k of descriptor d, element type
 * base: hvector over dimension k of full blocks of 0..k-1, plus a partial block */
static int first_elems(const CFI_cdesc_t *d, int k, MPI_Count n, MPI_Datatype base,
                       MPI_Datatype *out)
{
    if (k == 0)
        return PMPI_Type_create_hvector_c(n, 1, d->dim[0].sm, base, out);
    MPI_Count inner = 1;
    for (int i = 0; i < k; i++)
        inner *= d->dim[i].extent;
    MPI_Count q = n / inner, r = n % inner;
    MPI_Datatype full = MPI_DATATYPE_NULL, a = MPI_DATATYPE_NULL, b = MPI_DATATYPE_NULL;
    int rc = MPI_SUCCESS;
    if (q > 0) {
        rc = first_elems(d, k - 1, inner, base, &full);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Type_create_hvector_c(q, 1, d->dim[k].sm, full, &a);
    }
    if (rc == MPI_SUCCESS && r > 0)
        rc = first_elems(d, k - 1, r, base, &b);
    if (rc == MPI_SUCCESS) {
        if (q > 0 && r > 0) {
            MPI_Datatype types[2] = {a, b};
            MPI_Count bl[2] = {1, 1};
            MPI_Count disp[2] = {0, q * (MPI_Count)d->dim[k].sm};
            rc = PMPI_Type_create_struct_c(2, bl, disp, types, out);
        } else {
            /* one part only: hand it over (a dup keeps the free below uniform) */
            rc = PMPI_Type_dup(q > 0 ? a : b, out);
        }
    }
    if (full != MPI_DATATYPE_NULL)
        PMPI_Type_free(&full);
    if (a != MPI_DATATYPE_NULL)
        PMPI_Type_free(&a);
    if (b != MPI_DATATYPE_NULL)
        PMPI_Type_free(&b);
    return rc;
}

static int is_predefined(MPI_Datatype dt)
{
    int ni, na, nd, comb;
    return PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
           comb == MPI_COMBINER_NAMED;
}

/* LOOMF_SECTION(buf, count, datatype, addr, newcount, newtype): see the header.  On
 * return *newtype is a committed type the caller frees with loomf_section_free_ (or the
 * caller's own datatype when none was built: count 0, or an error). */
XF_EXPORT void loomf_section_(CFI_cdesc_t *d, MPI_Count count, MPI_Fint *datatype,
                              void **addr, MPI_Count *newcount, MPI_Fint *newtype)
{
    MPI_Datatype dt = (MPI_Datatype)*datatype;
    *addr = d->base_addr;
    *newcount = count;
    *newtype = *datatype;
    if (count <= 0 || d->rank <= 0 || dt == MPI_DATATYPE_NULL)
        return; /* nothing to describe, or an error the call itself reports */
    MPI_Count size, lb, ext, tlb, text;
    if (PMPI_Type_size_x(dt, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_x(dt, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(dt, &tlb, &text) != MPI_SUCCESS)
        return;
    if (size <= 0)
        return;
    if (lb != 0 || tlb != 0 || ext != size || text != size) {
        *newtype = (MPI_Fint)MPI_DATATYPE_NULL; /* MPI_ERR_TYPE from the call */
        return;
    }
    MPI_Count elem = (MPI_Count)d->elem_len, total = 1;
    for (int i = 0; i < d->rank; i++)
        total *= d->dim[i].extent;
    MPI_Count bytes = count * size;
    if (elem <= 0 || bytes / size != count || bytes % elem != 0 || bytes / elem > total) {
        *newcount = -1; /* MPI_ERR_COUNT from the call */
        return;
    }
    MPI_Datatype base, t;
    int rc;
    if (is_predefined(dt) && elem % size == 0)
        rc = PMPI_Type_contiguous_c(elem / size, dt, &base);
    else
        rc = PMPI_Type_contiguous_c(elem, MPI_BYTE, &base);
    if (rc != MPI_SUCCESS) {
        *newcount = -1;
        return;
    }
    rc = first_elems(d, d->rank - 1, bytes / elem, base, &t);
    PMPI_Type_free(&base);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) {
        *newcount = -1;
        return;
    }
    *newcount = 1;
    *newtype = (MPI_Fint)t;
}

/* frees a type made by loomf_section_ (nothing when it passed the caller's own on) */
XF_EXPORT void loomf_section_free_(MPI_Fint *newtype, MPI_Fint *datatype)
{
    if (*newtype != *datatype && *newtype != (MPI_Fint)MPI_DATATYPE_NULL) {
        MPI_Datatype t = (MPI_Datatype)*newtype;
        PMPI_Type_free(&t);
    }
}

/* the address of a section's first element (choice arguments that have no count and
 * datatype of their own: MPI_GET_ADDRESS's location, v-collectives...) */
XF_EXPORT void loomf_section_addr_(CFI_cdesc_t *d, void **addr)
{
    *addr = d->base_addr;
}

/* a noncontiguous section where no single datatype can describe it (a count or datatype
 * shared by two buffers, rank-indexed blocks, buffers without a datatype): the call is
 * not made; MPI_ERR_BUFFER goes through MPI_COMM_WORLD's error handler */
XF_EXPORT void loomf_section_bad_(MPI_Fint *ierror)
{
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_BUFFER);
    *ierror = MPI_ERR_BUFFER;
}
