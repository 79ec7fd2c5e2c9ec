/*
 * datatype.c - MPI_Type_* constructors and queries, Pack/Unpack/Pack_size,
 *              Get_elements(_x), Status_set_elements(_x).
 *
 * Contract: argument checks and MPI error classes only; every constructor is turned
 *   into its MPI_Type_get_contents description and built by xm_dt_create()
 *   (dt/flatten.c), so get_contents returns exactly what was passed.  Handles of
 *   derived types returned by Type_get_contents carry a new reference (the caller frees
 *   them, as MPI-3.1 §4.1.13 says).
 * Notes: the packed format of MPI_Pack is the p2p wire format: the type map's bytes in
 *   order, no header, no padding (so Pack_size = count * Type_size).
 * Caveats: Pack_external (external32), SUBARRAY/DARRAY and type attributes are still
 *   stubs (api/stubs.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dt/dtype.h"

XM_WEAK(MPI_Type_size)
XM_WEAK(MPI_Type_size_x)
XM_WEAK(MPI_Type_get_extent)
XM_WEAK(MPI_Type_get_extent_x)
XM_WEAK(MPI_Type_get_true_extent)
XM_WEAK(MPI_Type_get_true_extent_x)
XM_WEAK(MPI_Type_extent)
XM_WEAK(MPI_Type_lb)
XM_WEAK(MPI_Type_ub)
XM_WEAK(MPI_Type_contiguous)
XM_WEAK(MPI_Type_vector)
XM_WEAK(MPI_Type_hvector)
XM_WEAK(MPI_Type_create_hvector)
XM_WEAK(MPI_Type_indexed)
XM_WEAK(MPI_Type_hindexed)
XM_WEAK(MPI_Type_create_hindexed)
XM_WEAK(MPI_Type_create_indexed_block)
XM_WEAK(MPI_Type_create_hindexed_block)
XM_WEAK(MPI_Type_struct)
XM_WEAK(MPI_Type_create_struct)
XM_WEAK(MPI_Type_create_resized)
XM_WEAK(MPI_Type_dup)
XM_WEAK(MPI_Type_commit)
XM_WEAK(MPI_Type_free)
XM_WEAK(MPI_Type_get_envelope)
XM_WEAK(MPI_Type_get_contents)
XM_WEAK(MPI_Type_set_name)
XM_WEAK(MPI_Type_get_name)
XM_WEAK(MPI_Type_match_size)
XM_WEAK(MPI_Get_elements)
XM_WEAK(MPI_Get_elements_x)
XM_WEAK(MPI_Status_set_elements)
XM_WEAK(MPI_Status_set_elements_x)
XM_WEAK(MPI_Pack)
XM_WEAK(MPI_Unpack)
XM_WEAK(MPI_Pack_size)

static struct xm_dtype *get(MPI_Datatype h)
{
    return xm_dt_get(h);
}

#define GET(t, h, fn)                                                                  \
    struct xm_dtype *t = get(h);                                                       \
    if (!t)                                                                            \
        return xm_err(NULL, MPI_ERR_TYPE, fn)

/* ---- queries -------------------------------------------------------------------- */

int PMPI_Type_size(MPI_Datatype dt, int *size)
{
    GET(t, dt, "MPI_Type_size");
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
    GET(t, dt, "MPI_Type_size_x");
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    GET(t, dt, "MPI_Type_get_extent");
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
    GET(t, dt, "MPI_Type_get_extent_x");
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    GET(t, dt, "MPI_Type_get_true_extent");
    *lb = t->true_lb;
    *extent = t->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
    GET(t, dt, "MPI_Type_get_true_extent_x");
    *lb = t->true_lb;
    *extent = t->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype dt, MPI_Aint *extent)
{
    GET(t, dt, "MPI_Type_extent");
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_lb(MPI_Datatype dt, MPI_Aint *lb)
{
    GET(t, dt, "MPI_Type_lb");
    *lb = t->lb;
    return MPI_SUCCESS;
}

int PMPI_Type_ub(MPI_Datatype dt, MPI_Aint *ub)
{
    GET(t, dt, "MPI_Type_ub");
    *ub = t->lb + t->extent;
    return MPI_SUCCESS;
}

/* ---- constructors ------------------------------------------------------------------ */

static int create(int comb, int ni, const int *ints, int na, const MPI_Aint *aints, int nd,
                  const MPI_Datatype *types, MPI_Datatype *newtype, const char *fn)
{
    if (!newtype)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    for (int i = 0; i < nd; i++)
        if (!get(types[i]))
            return xm_err(NULL, MPI_ERR_TYPE, fn);
    struct xm_dtype *t;
    int rc = xm_dt_create(comb, ni, ints, na, aints, nd, types, &t);
    if (rc == -ENOMEM)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    if (rc)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    *newtype = t->handle;
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    if (count < 0)
        return xm_err(NULL, MPI_ERR_COUNT, "MPI_Type_contiguous");
    return create(MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old, newtype,
                  "MPI_Type_contiguous");
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old,
                     MPI_Datatype *newtype)
{
    if (count < 0 || blocklength < 0)
        return xm_err(NULL, MPI_ERR_COUNT, "MPI_Type_vector");
    int ints[3] = {count, blocklength, stride};
    return create(MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &old, newtype,
                  "MPI_Type_vector");
}

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                   MPI_Datatype *newtype, const char *fn)
{
    if (count < 0 || blocklength < 0)
        return xm_err(NULL, MPI_ERR_COUNT, fn);
    int ints[2] = {count, blocklength};
    return create(MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &old, newtype, fn);
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    return hvector(count, blocklength, stride, old, newtype, "MPI_Type_hvector");
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                             MPI_Datatype *newtype)
{
    return hvector(count, blocklength, stride, old, newtype, "MPI_Type_create_hvector");
}

/* ints = {count, a[0..count), b[0..count)}; caller frees */
static int *pack_ints(int lead, int nlead, int count, const int *a, const int *b)
{
    size_t n = (size_t)nlead + (size_t)count * (a ? 1 : 0) + (size_t)count * (b ? 1 : 0);
    int *v = malloc((n ? n : 1) * sizeof(int));
    if (!v)
        return NULL;
    v[0] = count;
    if (nlead == 2)
        v[1] = lead;
    if (a)
        memcpy(v + nlead, a, (size_t)count * sizeof(int));
    if (b)
        memcpy(v + nlead + (a ? count : 0), b, (size_t)count * sizeof(int));
    return v;
}

static int indexed_like(int comb, int count, int blocklength, const int *bl, const int *di,
                        const MPI_Aint *da, int nd, const MPI_Datatype *types,
                        MPI_Datatype *newtype, const char *fn)
{
    if (count < 0 || blocklength < 0)
        return xm_err(NULL, MPI_ERR_COUNT, fn);
    if (count > 0 && ((comb != MPI_COMBINER_INDEXED_BLOCK &&
                       comb != MPI_COMBINER_HINDEXED_BLOCK && !bl) ||
                      (!di && !da) || !types))
        return xm_err(NULL, MPI_ERR_ARG, fn);
    for (int i = 0; bl && i < count; i++)
        if (bl[i] < 0)
            return xm_err(NULL, MPI_ERR_COUNT, fn);
    int nlead = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK
                    ? 2 : 1;
    int *ints = pack_ints(blocklength, nlead, count, bl, di);
    if (!ints)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    int ni = nlead + (bl ? count : 0) + (di ? count : 0);
    int rc = create(comb, ni, ints, da ? count : 0, da, nd, types, newtype, fn);
    free(ints);
    return rc;
}

int PMPI_Type_indexed(int count, const int bl[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_INDEXED, count, 0, bl, displs, NULL, 1, &old, newtype,
                        "MPI_Type_indexed");
}

int PMPI_Type_hindexed(int count, const int bl[], const MPI_Aint displs[], MPI_Datatype old,
                       MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_HINDEXED, count, 0, bl, NULL, displs, 1, &old,
                        newtype, "MPI_Type_hindexed");
}

int PMPI_Type_create_hindexed(int count, const int bl[], const MPI_Aint displs[],
                              MPI_Datatype old, MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_HINDEXED, count, 0, bl, NULL, displs, 1, &old,
                        newtype, "MPI_Type_create_hindexed");
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int displs[],
                                   MPI_Datatype old, MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_INDEXED_BLOCK, count, blocklength, NULL, displs, NULL,
                        1, &old, newtype, "MPI_Type_create_indexed_block");
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[],
                                    MPI_Datatype old, MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_HINDEXED_BLOCK, count, blocklength, NULL, NULL, displs,
                        1, &old, newtype, "MPI_Type_create_hindexed_block");
}

int PMPI_Type_create_struct(int count, const int bl[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_STRUCT, count, 0, bl, NULL, displs, count, types,
                        newtype, "MPI_Type_create_struct");
}

int PMPI_Type_struct(int count, const int bl[], const MPI_Aint displs[],
                     const MPI_Datatype types[], MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_STRUCT, count, 0, bl, NULL, displs, count, types,
                        newtype, "MPI_Type_struct");
}

int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    MPI_Aint a[2] = {lb, extent};
    return create(MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old, newtype,
                  "MPI_Type_create_resized");
}

int PMPI_Type_dup(MPI_Datatype dt, MPI_Datatype *newtype)
{
    int rc = create(MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &dt, newtype, "MPI_Type_dup");
    if (rc == MPI_SUCCESS) {
        struct xm_dtype *o = get(dt), *t = xm_dt_get(*newtype);
        t->committed = o->committed;
        memcpy(t->name, o->name, sizeof(t->name));
    }
    return rc;
}

int PMPI_Type_commit(MPI_Datatype *dt)
{
    if (!dt)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_commit");
    GET(t, *dt, "MPI_Type_commit");
    t->committed = 1;
    return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype *dt)
{
    if (!dt)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_free");
    GET(t, *dt, "MPI_Type_free");
    if (XM_DT_IS_PREDEF(*dt))
        return xm_err(NULL, MPI_ERR_TYPE, "MPI_Type_free");
    if (t->refs == 1)
        xm_dt_destroy(t);
    else {
        t->refs--;
        /* other references (types built from it, pending requests) keep it alive; a
         * handle handed out again by Type_get_contents stays usable */
    }
    *dt = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype dt, int *ni, int *na, int *nd, int *combiner)
{
    GET(t, dt, "MPI_Type_get_envelope");
    *ni = t->nints;
    *na = t->naints;
    *nd = t->ntypes;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype dt, int max_i, int max_a, int max_d, int ints[],
                           MPI_Aint aints[], MPI_Datatype types[])
{
    GET(t, dt, "MPI_Type_get_contents");
    if (t->combiner == MPI_COMBINER_NAMED)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_get_contents");
    if (max_i < t->nints || max_a < t->naints || max_d < t->ntypes)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_get_contents");
    if (t->nints)
        memcpy(ints, t->ints, (size_t)t->nints * sizeof(int));
    if (t->naints)
        memcpy(aints, t->aints, (size_t)t->naints * sizeof(MPI_Aint));
    for (int i = 0; i < t->ntypes; i++) {
        types[i] = t->types[i];
        xm_dt_ref(xm_dt_get(types[i]));
    }
    return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype dt, const char *name)
{
    GET(t, dt, "MPI_Type_set_name");
    if (!name)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_set_name");
    snprintf(t->name, sizeof(t->name), "%s", name);
    return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype dt, char *name, int *resultlen)
{
    GET(t, dt, "MPI_Type_get_name");
    if (!name || !resultlen)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_get_name");
    size_t n = strlen(t->name);
    memcpy(name, t->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *dt)
{
    static const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    static const MPI_Datatype ints[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T};
    static const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                        MPI_C_LONG_DOUBLE_COMPLEX};
    const MPI_Datatype *v;
    size_t n;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL: v = reals; n = 3; break;
    case MPI_TYPECLASS_INTEGER: v = ints; n = 4; break;
    case MPI_TYPECLASS_COMPLEX: v = cplx; n = 3; break;
    default: return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
    }
    for (size_t i = 0; i < n; i++)
        if ((int)XM_DT_SIZE(v[i]) == size) {
            *dt = v[i];
            return MPI_SUCCESS;
        }
    return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
}

/* ---- status ---------------------------------------------------------------------- */

int PMPI_Get_elements_x(const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
    GET(t, dt, "MPI_Get_elements_x");
    if (!st || st == MPI_STATUS_IGNORE || !count)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Get_elements_x");
    size_t e;
    *count = xm_dt_bytes_to_elems(t, xm_status_bytes(st), &e) ? MPI_UNDEFINED
                                                               : (MPI_Count)e;
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    MPI_Count c;
    int rc = PMPI_Get_elements_x(st, dt, &c);
    if (rc == MPI_SUCCESS)
        *count = c > INT_MAX ? MPI_UNDEFINED : (int)c;
    return rc;
}

int PMPI_Status_set_elements_x(MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
    GET(t, dt, "MPI_Status_set_elements_x");
    if (!st || st == MPI_STATUS_IGNORE || count < 0)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Status_set_elements_x");
    size_t b = xm_dt_elems_to_bytes(t, (size_t)count);
    int cncl = st->xm_count_hi_cncl & 1;
    xm_status_set(st, st->MPI_SOURCE, st->MPI_TAG, st->MPI_ERROR, b);
    st->xm_count_hi_cncl |= cncl;
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *st, MPI_Datatype dt, int count)
{
    return PMPI_Status_set_elements_x(st, dt, count);
}

/* ---- pack / unpack ------------------------------------------------------------------- */

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    (void)comm;
    GET(t, dt, "MPI_Pack");
    if (incount < 0)
        return xm_err(NULL, MPI_ERR_COUNT, "MPI_Pack");
    if (!position || *position < 0 || outsize < 0)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Pack");
    size_t n = t->size * (size_t)incount;
    if ((size_t)*position + n > (size_t)outsize)
        return xm_err(NULL, MPI_ERR_TRUNCATE, "MPI_Pack");
    if (n && xm_dt_pack(inbuf, incount, t, 0, (char *)outbuf + *position, n))
        return xm_err(NULL, MPI_ERR_INTERN, "MPI_Pack");
    *position += (int)n;
    return MPI_SUCCESS;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype dt, MPI_Comm comm)
{
    (void)comm;
    GET(t, dt, "MPI_Unpack");
    if (outcount < 0)
        return xm_err(NULL, MPI_ERR_COUNT, "MPI_Unpack");
    if (!position || *position < 0 || insize < 0)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Unpack");
    size_t n = t->size * (size_t)outcount;
    if ((size_t)*position + n > (size_t)insize)
        return xm_err(NULL, MPI_ERR_TRUNCATE, "MPI_Unpack");
    if (n && xm_dt_unpack(outbuf, outcount, t, 0, (const char *)inbuf + *position, n))
        return xm_err(NULL, MPI_ERR_INTERN, "MPI_Unpack");
    *position += (int)n;
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype dt, MPI_Comm comm, int *size)
{
    (void)comm;
    GET(t, dt, "MPI_Pack_size");
    if (incount < 0)
        return xm_err(NULL, MPI_ERR_COUNT, "MPI_Pack_size");
    size_t n = t->size * (size_t)incount;
    *size = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
