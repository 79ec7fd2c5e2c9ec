/*
 * datatype.c - MPI_Type_* constructors and queries, Pack/Unpack/Pack_size,
 *              Get_elements(_x), Status_set_elements(_x).
 *
 * One piece (about 1000 lines): every constructor and query of the datatype chapter,
 *   each a short check in front of xm_dt_create() or a flattened-type lookup.
 *
 * Contract: argument checks and MPI error classes only; every constructor is turned
 *   into its MPI_Type_get_contents description and built by xm_dt_create()
 *   (dt/flatten.c), so get_contents returns exactly what was passed.  Handles of
 *   derived types returned by Type_get_contents carry a new reference (the caller frees
 *   them, as MPI-3.1 §4.1.13 says).
 * Notes: the packed format of MPI_Pack is the p2p wire format: the type map's bytes in
 *   order, no header, no padding (so Pack_size = count * Type_size).
 *   Type keyvals are handles of kind KEYVAL with index bit 22 set, so they never name a
 *   communicator keyval (core/attr.c) and vice versa.  Attributes are copied by
 *   Type_dup through the copy callbacks and deleted (callbacks run) by Type_free.
 *   Pack_external writes "external32" (MPI-3.1 §13.5.2): big-endian, MPI_LONG and
 *   MPI_UNSIGNED_LONG as 4 bytes, MPI_WCHAR as 2, everything else at its native size.
 * Caveats: external32 of long double types (IEEE quad) is refused with
 *   MPI_ERR_CONVERSION (MPI_REAL16/MPI_COMPLEX32 are IEEE quad in memory and pack);
 *   a long that does not fit 32 bits is truncated.
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
XM_WEAK(MPI_Type_create_subarray)
XM_WEAK(MPI_Type_create_darray)
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
XM_WEAK(MPI_Pack_external)
XM_WEAK(MPI_Unpack_external)
XM_WEAK(MPI_Pack_external_size)
XM_WEAK(MPI_Type_create_keyval)
XM_WEAK(MPI_Type_free_keyval)
XM_WEAK(MPI_Type_set_attr)
XM_WEAK(MPI_Type_get_attr)
XM_WEAK(MPI_Type_delete_attr)

static struct xm_dtype *get(MPI_Datatype h)
{
    return xm_dt_get(h);
}

/* clang-format off */
#define GET(t, h, fn)                                                                  \
    struct xm_dtype *t = get(h);                                                       \
    if (!t)                                                                            \
        return xm_err(NULL, MPI_ERR_TYPE, fn)
/* clang-format on */

/* ---- type keyvals and attributes -------------------------------------------------- */

#define TKV_BIT 0x400000
struct tkv {
    MPI_Type_copy_attr_function *copy;
    MPI_Type_delete_attr_function *del;
    void *extra;
    int refs;  /* 1 for the handle + 1 per attribute using it */
    int freed; /* the handle's reference is gone: a 2nd free is a no-op (core/attr.c) */
    int flang; /* created from Fortran: callbacks see Fortran's view (core/xm.h) */
};
static struct tkv **tkvs; /* process state, like every handle table */
static int ntkvs;

static struct tkv *tkv_get(int h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_KEYVAL || !(h & XM_H_DYN) ||
        !(XM_H_INDEX(h) & TKV_BIT))
        return NULL;
    int i = (int)(XM_H_INDEX(h) & ~TKV_BIT);
    return i < ntkvs ? tkvs[i] : NULL;
}

static void tkv_unref(int h)
{
    struct tkv *k = tkv_get(h);
    if (k && --k->refs == 0) {
        tkvs[XM_H_INDEX(h) & ~TKV_BIT] = NULL;
        free(k);
    }
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                            MPI_Type_delete_attr_function *delete_fn, int *keyval,
                            void *extra)
{
    int flang = xm_attr_lang_take();
    if (!keyval)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_create_keyval");
    struct tkv *k = calloc(1, sizeof(*k));
    struct tkv **n = realloc(tkvs, ((size_t)ntkvs + 1) * sizeof(*n));
    if (!k || !n) {
        free(k);
        if (n)
            tkvs = n;
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Type_create_keyval");
    }
    tkvs = n;
    *k = (struct tkv){copy_fn, delete_fn, extra, 1, 0, flang};
    tkvs[ntkvs] = k;
    *keyval = XM_H_MAKE(XM_K_KEYVAL, 1, TKV_BIT | (unsigned)ntkvs);
    ntkvs++;
    return MPI_SUCCESS;
}

int PMPI_Type_free_keyval(int *keyval)
{
    struct tkv *k = keyval ? tkv_get(*keyval) : NULL;
    if (!k)
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_free_keyval");
    if (!k->freed) {
        k->freed = 1;
        tkv_unref(*keyval);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static struct xm_attr **tattr_find(struct xm_dtype *t, int keyval)
{
    struct xm_attr **pp = &t->attrs;
    while (*pp && (*pp)->keyval != keyval)
        pp = &(*pp)->next;
    return pp;
}

/* Run the delete callback of *pp and unlink it. */
/* As core/attr.c: a callback may use the attribute calls on its own type (a nested
 * delete of the attribute being deleted is left to the outer call; the list is
 * searched again afterwards). */
static struct xm_attr *tdeleting;

static int tattr_del(struct xm_dtype *t, struct xm_attr **pp)
{
    struct xm_attr *a = *pp;
    if (a == tdeleting)
        return MPI_SUCCESS;
    struct tkv *k = tkv_get(a->keyval);
    if (k && k->del) {
        struct xm_attr *outer = tdeleting;
        tdeleting = a;
        int rc = k->del(t->handle, a->keyval, xm_attr_view(a, k->flang), k->extra);
        tdeleting = outer;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (pp = &t->attrs; *pp && *pp != a; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = a->next;
    tkv_unref(a->keyval);
    free(a);
    return MPI_SUCCESS;
}

static int tattr_set(struct xm_dtype *t, int keyval, void *val, int lang)
{
    struct xm_attr **pp = tattr_find(t, keyval);
    if (*pp) {
        int rc = tattr_del(t, pp);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    struct xm_attr *a = malloc(sizeof(*a));
    if (!a)
        return MPI_ERR_NO_MEM;
    *a = (struct xm_attr){.next = t->attrs, .keyval = keyval};
    xm_attr_store(a, val, lang);
    t->attrs = a;
    tkv_get(keyval)->refs++;
    return MPI_SUCCESS;
}

int PMPI_Type_set_attr(MPI_Datatype dt, int keyval, void *val)
{
    int lang = xm_attr_lang_take();
    GET(t, dt, "MPI_Type_set_attr");
    if (!tkv_get(keyval))
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_set_attr");
    int rc = tattr_set(t, keyval, val, lang);
    return rc == MPI_SUCCESS ? rc : xm_err(NULL, rc, "MPI_Type_set_attr");
}

int PMPI_Type_get_attr(MPI_Datatype dt, int keyval, void *attr, int *flag)
{
    int lang = xm_attr_lang_take();
    GET(t, dt, "MPI_Type_get_attr");
    if (!tkv_get(keyval) || !flag)
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_get_attr");
    struct xm_attr *a = *tattr_find(t, keyval);
    *flag = a != NULL;
    if (a)
        *(void **)attr = xm_attr_view(a, lang);
    return MPI_SUCCESS;
}

int PMPI_Type_delete_attr(MPI_Datatype dt, int keyval)
{
    GET(t, dt, "MPI_Type_delete_attr");
    struct xm_attr **pp = tattr_find(t, keyval);
    if (!tkv_get(keyval) || !*pp)
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_delete_attr");
    int rc = tattr_del(t, pp);
    return rc == MPI_SUCCESS ? rc : xm_err(NULL, rc, "MPI_Type_delete_attr");
}

/* Type_dup: run each attribute's copy callback (NULL_COPY_FN: none, DUP_FN: the value).
 */
static int tattr_copy_all(struct xm_dtype *from, struct xm_dtype *to)
{
    for (struct xm_attr *a = from->attrs; a; a = a->next) {
        struct tkv *k = tkv_get(a->keyval);
        void *in, *nv;
        int flag = 0, rc = MPI_SUCCESS;
        if (!k || k->copy == MPI_TYPE_NULL_COPY_FN)
            continue;
        in = nv = xm_attr_view(a, k->flang);
        if (k->copy == MPI_TYPE_DUP_FN)
            flag = 1;
        else
            rc = k->copy(from->handle, a->keyval, k->extra, in, &nv, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag) {
            struct xm_attr tmp; /* the copy's language and value (core/xm.h) */
            xm_attr_copied(&tmp, a, nv, k->flang);
            if ((rc = tattr_set(to, a->keyval, tmp.val, tmp.lang)) != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

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

static int create(int comb, int ni, const int *ints, int na, const MPI_Aint *aints,
                  int nd, const MPI_Datatype *types, MPI_Datatype *newtype,
                  const char *fn)
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

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype old, MPI_Datatype *newtype)
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

static int indexed_like(int comb, int count, int blocklength, const int *bl,
                        const int *di, const MPI_Aint *da, int nd,
                        const MPI_Datatype *types, MPI_Datatype *newtype, const char *fn)
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
    int nlead =
        comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK ? 2 : 1;
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
    return indexed_like(MPI_COMBINER_INDEXED, count, 0, bl, displs, NULL, 1, &old,
                        newtype, "MPI_Type_indexed");
}

int PMPI_Type_hindexed(int count, const int bl[], const MPI_Aint displs[],
                       MPI_Datatype old, MPI_Datatype *newtype)
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
    return indexed_like(MPI_COMBINER_INDEXED_BLOCK, count, blocklength, NULL, displs,
                        NULL, 1, &old, newtype, "MPI_Type_create_indexed_block");
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[],
                                    MPI_Datatype old, MPI_Datatype *newtype)
{
    return indexed_like(MPI_COMBINER_HINDEXED_BLOCK, count, blocklength, NULL, NULL,
                        displs, 1, &old, newtype, "MPI_Type_create_hindexed_block");
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

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                              const int starts[], int order, MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray";
    if (ndims < 1 || !sizes || !subsizes || !starts)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int ni = 3 * ndims + 2;
    int *v = malloc((size_t)ni * sizeof(int));
    if (!v)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    v[0] = ndims;
    memcpy(v + 1, sizes, (size_t)ndims * sizeof(int));
    memcpy(v + 1 + ndims, subsizes, (size_t)ndims * sizeof(int));
    memcpy(v + 1 + 2 * ndims, starts, (size_t)ndims * sizeof(int));
    v[ni - 1] = order;
    int rc = create(MPI_COMBINER_SUBARRAY, ni, v, 0, NULL, 1, &old, newtype, fn);
    free(v);
    return rc;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[],
                            const int distribs[], const int dargs[], const int psizes[],
                            int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray";
    if (ndims < 1 || !gsizes || !distribs || !dargs || !psizes)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int ni = 4 * ndims + 4;
    int *v = malloc((size_t)ni * sizeof(int));
    if (!v)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    v[0] = size;
    v[1] = rank;
    v[2] = ndims;
    memcpy(v + 3, gsizes, (size_t)ndims * sizeof(int));
    memcpy(v + 3 + ndims, distribs, (size_t)ndims * sizeof(int));
    memcpy(v + 3 + 2 * ndims, dargs, (size_t)ndims * sizeof(int));
    memcpy(v + 3 + 3 * ndims, psizes, (size_t)ndims * sizeof(int));
    v[ni - 1] = order;
    int rc = create(MPI_COMBINER_DARRAY, ni, v, 0, NULL, 1, &old, newtype, fn);
    free(v);
    return rc;
}

int PMPI_Type_dup(MPI_Datatype dt, MPI_Datatype *newtype)
{
    int rc = create(MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &dt, newtype, "MPI_Type_dup");
    if (rc == MPI_SUCCESS) {
        struct xm_dtype *o = get(dt), *t = xm_dt_get(*newtype);
        t->committed = o->committed;
        /* the name stays with the original (as a communicator's with Comm_dup): a new
         * type starts without one, as MPICH's datatype tests expect */
        if ((rc = tattr_copy_all(o, t)) != MPI_SUCCESS) {
            while (t->attrs)
                tattr_del(t, &t->attrs);
            xm_dt_unref(t);
            *newtype = MPI_DATATYPE_NULL;
            return xm_err(NULL, rc, "MPI_Type_dup");
        }
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
    if (XM_DT_IS_PREDEF(*dt) || t->combiner == MPI_COMBINER_F90_REAL ||
        t->combiner == MPI_COMBINER_F90_COMPLEX || t->combiner == MPI_COMBINER_F90_INTEGER)
        return xm_err(NULL, MPI_ERR_TYPE, "MPI_Type_free"); /* F90 ones are predefined too */
    while (t->attrs) {
        int rc = tattr_del(t, &t->attrs);
        if (rc != MPI_SUCCESS)
            return xm_err(NULL, rc, "MPI_Type_free");
    }
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
    /* a 16-byte integer has no C type: the Fortran kind */
    static const MPI_Datatype ints[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T,
                                        MPI_INT64_T, MPI_INTEGER16};
    static const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                        MPI_C_LONG_DOUBLE_COMPLEX};
    const MPI_Datatype *v;
    size_t n;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL:
        v = reals;
        n = 3;
        break;
    case MPI_TYPECLASS_INTEGER:
        v = ints;
        n = 5;
        break;
    case MPI_TYPECLASS_COMPLEX:
        v = cplx;
        n = 3;
        break;
    default:
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
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
    *count =
        xm_dt_bytes_to_elems(t, xm_status_bytes(st), &e) ? MPI_UNDEFINED : (MPI_Count)e;
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

/* ---- pack / unpack -------------------------------------------------------------------
 */

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

/* ---- external32 -------------------------------------------------------------------- */

/* external32 size of a basic type (0: not representable here) and the size of one
 * byte-swapped unit (complex numbers swap each half) */
static size_t ext32_size(MPI_Datatype h, size_t *unit)
{
    size_t n = XM_DT_SIZE(h);
    *unit = n;
    switch (h) {
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
        *unit = 4;
        return 4;
    case MPI_WCHAR:
        *unit = 2;
        return 2;
    case MPI_LONG_DOUBLE:
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
        return 0;
    case MPI_C_COMPLEX:
    case MPI_C_FLOAT_COMPLEX:
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX: /* (issue 21) the optional */
    case MPI_CXX_DOUBLE_COMPLEX: /* complex types; REAL16/COMPLEX32 are IEEE quad */
    case MPI_COMPLEX8:            /* already, so they swap like the others */
    case MPI_COMPLEX16:
    case MPI_COMPLEX32:
        *unit = n / 2;
        return n;
    default:
        return n;
    }
}

static int is_signed_narrowed(MPI_Datatype h)
{
    return h == MPI_LONG;
}

struct ext32 {
    char *stream; /* packed side */
    size_t pos, end;
    int dir; /* 0 pack, 1 unpack, 2 size only */
};

static int ext32_elem(void *vctx, char *addr, MPI_Datatype h)
{
    struct ext32 *x = vctx;
    size_t unit, es = ext32_size(h, &unit), ns = XM_DT_SIZE(h);
    if (!es)
        return MPI_ERR_CONVERSION;
    if (x->dir == 2) {
        x->pos += es;
        return 0;
    }
    if (x->pos + es > x->end)
        return MPI_ERR_TRUNCATE;
    unsigned char *s = (unsigned char *)x->stream + x->pos;
    unsigned char *m = (unsigned char *)addr;
    /* little-endian host (x86-64, aarch64 Linux): the low es bytes come first */
    if (x->dir == 0) {
        for (size_t u = 0; u < es; u += unit)
            for (size_t b = 0; b < unit; b++)
                s[u + b] = m[(es == ns ? u : 0) + unit - 1 - b];
    } else {
        for (size_t u = 0; u < es; u += unit)
            for (size_t b = 0; b < unit; b++)
                m[(es == ns ? u : 0) + unit - 1 - b] = s[u + b];
        if (es < ns) /* widen: sign- or zero-extend */
            memset(m + es, is_signed_narrowed(h) && (m[es - 1] & 0x80) ? 0xff : 0,
                   ns - es);
    }
    x->pos += es;
    return 0;
}

static int ext32_check(const char *datarep, const char *fn)
{
    if (!datarep || strcmp(datarep, "external32") != 0)
        return xm_err(NULL, MPI_ERR_UNSUPPORTED_DATAREP, fn);
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype dt,
                            MPI_Aint *size)
{
    const char *fn = "MPI_Pack_external_size";
    GET(t, dt, fn);
    int rc = ext32_check(datarep, fn);
    if (rc)
        return rc;
    if (incount < 0 || !size)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    struct ext32 x = {NULL, 0, 0, 2};
    rc = xm_dt_visit(NULL, incount, t, ext32_elem, &x);
    if (rc)
        return xm_err(NULL, rc, fn);
    *size = (MPI_Aint)x.pos;
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype dt, void *outbuf, MPI_Aint outsize,
                       MPI_Aint *position)
{
    const char *fn = "MPI_Pack_external";
    GET(t, dt, fn);
    int rc = ext32_check(datarep, fn);
    if (rc)
        return rc;
    if (incount < 0 || !position || *position < 0 || outsize < 0)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    struct ext32 x = {outbuf, (size_t)*position, (size_t)outsize, 2};
    if ((rc = xm_dt_visit(inbuf, incount, t, ext32_elem, &x)))
        return xm_err(NULL, rc, fn);
    if (x.pos > x.end)
        return xm_err(NULL, MPI_ERR_TRUNCATE, fn);
    x.pos = (size_t)*position;
    x.dir = 0;
    if ((rc = xm_dt_visit(inbuf, incount, t, ext32_elem, &x)))
        return xm_err(NULL, rc, fn);
    *position = (MPI_Aint)x.pos;
    return MPI_SUCCESS;
}

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype dt)
{
    const char *fn = "MPI_Unpack_external";
    GET(t, dt, fn);
    int rc = ext32_check(datarep, fn);
    if (rc)
        return rc;
    if (outcount < 0 || !position || *position < 0 || insize < 0)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    struct ext32 x = {(char *)inbuf, (size_t)*position, (size_t)insize, 2};
    if ((rc = xm_dt_visit(outbuf, outcount, t, ext32_elem, &x)))
        return xm_err(NULL, rc, fn);
    if (x.pos > x.end)
        return xm_err(NULL, MPI_ERR_TRUNCATE, fn);
    x.pos = (size_t)*position;
    x.dir = 1;
    if ((rc = xm_dt_visit(outbuf, outcount, t, ext32_elem, &x)))
        return xm_err(NULL, rc, fn);
    *position = (MPI_Aint)x.pos;
    return MPI_SUCCESS;
}

/* ---- (issue 21) MPI_Type_create_f90_real/complex/integer --
 * MPI-3.1 §17.1.9: the result is a predefined type (it cannot be freed; the same
 * (p, r) gives the same handle) whose envelope is MPI_COMBINER_F90_* with the
 * arguments as given.  It is a DUP of the named type of the smallest kind that holds
 * the precision and range (REAL4/8/16: IEEE single, double, quad; INTEGER1..16), so
 * sizes, packing and reductions are that type's.  No such kind: MPI_ERR_ARG. */
XM_WEAK(MPI_Type_create_f90_real)
XM_WEAK(MPI_Type_create_f90_complex)
XM_WEAK(MPI_Type_create_f90_integer)

static struct {
    int comb, p, r;
    MPI_Datatype h;
} f90_cache[64];
static int n_f90;

static int f90_type(int comb, int p, int r, MPI_Datatype base, MPI_Datatype *out,
                    const char *fn)
{
    for (int i = 0; i < n_f90; i++)
        if (f90_cache[i].comb == comb && f90_cache[i].p == p && f90_cache[i].r == r) {
            *out = f90_cache[i].h;
            return MPI_SUCCESS;
        }
    if (n_f90 == (int)(sizeof(f90_cache) / sizeof(f90_cache[0])))
        return xm_err(NULL, MPI_ERR_INTERN, fn); /* more (p, r) pairs than kinds exist */
    struct xm_dtype *t;
    int rc = xm_dt_create(MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &base, &t);
    if (rc < 0)
        return xm_err(NULL, xm_errno_to_class(rc), fn);
    int *ints = malloc(2 * sizeof(int));
    if (!ints) {
        xm_dt_unref(t);
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    }
    free(t->types); /* a predefined base: the reference held on it is no reference */
    t->types = NULL;
    t->ntypes = 0;
    free(t->ints);
    t->ints = ints;
    t->nints = comb == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    ints[0] = comb == MPI_COMBINER_F90_INTEGER ? r : p;
    ints[1] = r;
    t->combiner = comb;
    t->committed = 1;
    snprintf(t->name, sizeof(t->name), "%s", xm_dt_predef_name(base));
    f90_cache[n_f90].comb = comb;
    f90_cache[n_f90].p = p;
    f90_cache[n_f90].r = r;
    f90_cache[n_f90++].h = t->handle;
    *out = t->handle;
    return MPI_SUCCESS;
}

/* the kind (0: 4 bytes, 1: 8, 2: 16) of a real holding p digits and exponent range r */
static int real_kind(int p, int r)
{
    static const int maxp[] = {6, 15, 33}, maxr[] = {37, 307, 4931};
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return -1;
    for (int k = 0; k < 3; k++)
        if ((p == MPI_UNDEFINED || (p >= 0 && p <= maxp[k])) &&
            (r == MPI_UNDEFINED || (r >= 0 && r <= maxr[k])))
            return k;
    return -1;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    static const MPI_Datatype kinds[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    int k = real_kind(p, r);
    if (k < 0 || !newtype)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_real");
    return f90_type(MPI_COMBINER_F90_REAL, p, r, kinds[k], newtype,
                    "MPI_Type_create_f90_real");
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    static const MPI_Datatype kinds[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    int k = real_kind(p, r);
    if (k < 0 || !newtype)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_complex");
    return f90_type(MPI_COMBINER_F90_COMPLEX, p, r, kinds[k], newtype,
                    "MPI_Type_create_f90_complex");
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const int maxr[] = {2, 4, 9, 18, 38};
    static const MPI_Datatype kinds[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                         MPI_INTEGER8, MPI_INTEGER16};
    int k = 0;
    while (k < 5 && r > maxr[k])
        k++;
    if (r == MPI_UNDEFINED || r < 0 || k == 5 || !newtype)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer");
    return f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, kinds[k], newtype,
                    "MPI_Type_create_f90_integer");
}
