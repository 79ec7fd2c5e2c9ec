/*
 * op.c - predefined reduction operators on the predefined C types (contract in coll.h).
 *
 * Covers: SUM/PROD/MAX/MIN/logical/bitwise on the integer types, SUM/PROD/MAX/MIN on the
 *   floating types, SUM/PROD on the complex types, MINLOC/MAXLOC on the pair types,
 *   user ops (MPI_Op_create) on any type, and predefined ops on derived types whose
 *   elements are all one predefined type laid out contiguously.
 * Notes: user ops live in a small growing table (handles with the dynamic bit); the
 *   table is process state like every other handle table.
 */
/* The element loops below are what a large reduction costs.  GCC 12 at -O2 vectorizes
 * only loops that need no runtime checks (its "very cheap" cost model), and these need
 * an alias check (in and inout may overlap) and a scalar tail: left scalar, a 64 KiB
 * MPI_SUM took 25-33 us on doubles and 65 us on ints, vectorized 19 and 17-23 us.
 * So this file asks for the dynamic cost model (clang vectorizes them at -O2). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <complex.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "../dt/dtype.h"
#include "coll.h"

#define LOOP(T, EXPR)                          \
    do {                                       \
        const T *a = in;                       \
        T *b = inout;                          \
        for (int i = 0; i < count; i++)        \
            b[i] = (T)(EXPR);                  \
    } while (0)

#define ARITH(T)                                                      \
    switch (op) {                                                     \
    case MPI_SUM: LOOP(T, a[i] + b[i]); return 0;                     \
    case MPI_PROD: LOOP(T, a[i] * b[i]); return 0;                    \
    case MPI_MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return 0;       \
    case MPI_MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return 0;       \
    case MPI_LAND: LOOP(T, a[i] && b[i]); return 0;                   \
    case MPI_LOR: LOOP(T, a[i] || b[i]); return 0;                    \
    case MPI_LXOR: LOOP(T, !a[i] != !b[i]); return 0;                 \
    default: break;                                                   \
    }

#define BITS(T)                                                       \
    switch (op) {                                                     \
    case MPI_BAND: LOOP(T, a[i] & b[i]); return 0;                    \
    case MPI_BOR: LOOP(T, a[i] | b[i]); return 0;                     \
    case MPI_BXOR: LOOP(T, a[i] ^ b[i]); return 0;                    \
    default: return -EINVAL;                                          \
    }

#define INT_T(T) do { ARITH(T) BITS(T) } while (0)
#define FLT_T(T)                                                      \
    do {                                                              \
        ARITH(T)                                                      \
        return -EINVAL;                                               \
    } while (0)

struct uop {
    MPI_User_function *fn;
    MPI_User_function_c *fn_c; /* MPI_Op_create_c: the length is an MPI_Count */
    int commute;
    int refs;  /* pending nonblocking schedules that use it (xm_op_ref) */
    int freed; /* MPI_Op_free came while refs > 0: the slot goes when they are done */
};
static struct uop *uops;
static int nuops;

static struct uop *uop_get(MPI_Op op)
{
    if (!(op & XM_H_VALID) || XM_H_KIND(op) != XM_K_OP || !(op & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(op);
    return i < nuops && (uops[i].fn || uops[i].fn_c) ? &uops[i] : NULL;
}

int xm_op_valid(MPI_Op op)
{
    /* an op freed while a pending operation holds it stays valid for that operation
     * (its Start, its reductions); the user's own handle became MPI_OP_NULL */
    return (op >= MPI_MAX && op <= MPI_NO_OP) || uop_get(op) != NULL;
}

/* A pending operation keeps a user op alive past MPI_Op_free (MPI-3.1 5.9.5: freeing
 * an op "marks it for deallocation"; pending operations that use it complete). */
void xm_op_ref(MPI_Op op)
{
    struct uop *u = uop_get(op);
    if (u)
        u->refs++;
}

void xm_op_unref(MPI_Op op)
{
    struct uop *u = uop_get(op);
    if (u && --u->refs == 0 && u->freed) {
        u->fn = NULL;
        u->fn_c = NULL;
        u->freed = 0;
    }
}

int xm_op_commutative(MPI_Op op)
{
    struct uop *u = uop_get(op);
    return u ? u->commute : 1;
}

static int op_add(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    int i;
    for (i = 0; i < nuops; i++)
        if (!uops[i].fn && !uops[i].fn_c)
            break;
    if (i == nuops) {
        struct uop *n = realloc(uops, (size_t)(nuops + 1) * sizeof(*n));
        if (!n)
            return -ENOMEM;
        uops = n;
        nuops++;
    }
    uops[i].fn = fn;
    uops[i].fn_c = fn_c;
    uops[i].commute = commute != 0;
    uops[i].refs = 0;
    uops[i].freed = 0;
    *op = XM_H_MAKE(XM_K_OP, 1, i);
    return 0;
}

int xm_op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    return fn ? op_add(fn, NULL, commute, op) : -EINVAL;
}

int xm_op_create_c(MPI_User_function_c *fn, int commute, MPI_Op *op)
{
    return fn ? op_add(NULL, fn, commute, op) : -EINVAL;
}

int xm_op_free(MPI_Op *op)
{
    struct uop *u = uop_get(*op);
    if (!u || u->freed)
        return -EINVAL;
    if (u->refs > 0) {
        u->freed = 1;
    } else {
        u->fn = NULL;
        u->fn_c = NULL;
    }
    *op = MPI_OP_NULL;
    return 0;
}

#define LOCPAIR(VT)                                                              \
    do {                                                                         \
        struct pr {                                                              \
            VT v;                                                                \
            int i;                                                               \
        };                                                                       \
        const struct pr *a = in;                                                 \
        struct pr *b = inout;                                                    \
        for (int k = 0; k < count; k++) {                                        \
            int better = op == MPI_MINLOC ? a[k].v < b[k].v : a[k].v > b[k].v;  \
            if (better || (a[k].v == b[k].v && a[k].i < b[k].i))                 \
                b[k] = a[k];                                                     \
        }                                                                        \
        return 0;                                                                \
    } while (0)

#define CPLX(T)                                                  \
    switch (op) {                                                \
    case MPI_SUM: LOOP(T, a[i] + b[i]); return 0;                \
    case MPI_PROD: LOOP(T, a[i] * b[i]); return 0;               \
    default: return -EINVAL;                                     \
    }

static int loc_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    switch (dt) {
    case MPI_FLOAT_INT: LOCPAIR(float);
    case MPI_DOUBLE_INT: LOCPAIR(double);
    case MPI_LONG_INT: LOCPAIR(long);
    case MPI_2INT: case MPI_2INTEGER: LOCPAIR(int);
    case MPI_SHORT_INT: LOCPAIR(short);
    case MPI_LONG_DOUBLE_INT: LOCPAIR(long double);
    case MPI_2REAL: LOCPAIR(float);
    case MPI_2DOUBLE_PRECISION: LOCPAIR(double);
    default: return -EINVAL;
    }
}

int xm_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return -EINVAL;
    if (op == MPI_MINLOC || op == MPI_MAXLOC)
        return loc_apply(op, in, inout, count, dt);
    switch (dt) {
    case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_COMPLEX: CPLX(float complex);
    case MPI_C_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX: CPLX(double complex);
    case MPI_C_LONG_DOUBLE_COMPLEX: CPLX(long double complex);
    case MPI_CHARACTER: INT_T(int8_t);
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_INT8_T: INT_T(int8_t);
    case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_UINT8_T: case MPI_C_BOOL: INT_T(uint8_t);
    case MPI_SHORT: case MPI_INT16_T: INT_T(int16_t);
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: INT_T(uint16_t);
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_LOGICAL: INT_T(int32_t);
    case MPI_UNSIGNED: case MPI_UINT32_T: case MPI_WCHAR: INT_T(uint32_t);
    case MPI_LONG: case MPI_LONG_LONG: case MPI_INT64_T: case MPI_AINT: case MPI_OFFSET:
    case MPI_COUNT: INT_T(int64_t);
    case MPI_UNSIGNED_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: INT_T(uint64_t);
    case MPI_FLOAT: case MPI_REAL: FLT_T(float);
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: FLT_T(double);
    case MPI_LONG_DOUBLE: FLT_T(long double);
    /* (issue 21) the optional named types of MPI-3.1 */
    case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX8: CPLX(float complex);
    case MPI_CXX_DOUBLE_COMPLEX: case MPI_COMPLEX16: CPLX(double complex);
    case MPI_CXX_LONG_DOUBLE_COMPLEX: CPLX(long double complex);
    case MPI_COMPLEX32: CPLX(_Complex _Float128);
    case MPI_CXX_BOOL: INT_T(uint8_t);
    case MPI_INTEGER1: INT_T(int8_t);
    case MPI_INTEGER2: INT_T(int16_t);
    case MPI_INTEGER4: INT_T(int32_t);
    case MPI_INTEGER8: INT_T(int64_t);
    case MPI_INTEGER16: INT_T(__int128);
    case MPI_REAL4: FLT_T(float);
    case MPI_REAL8: FLT_T(double);
    case MPI_REAL16: FLT_T(_Float128);
    default: return -ENOSYS;
    }
}

int xm_op_apply_any(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    struct uop *u = uop_get(op);
    if (u) {
        if (u->fn_c) {
            MPI_Count len = count;
            u->fn_c((void *)in, inout, &len, &dt);
        } else {
            u->fn((void *)in, inout, &count, &dt);
        }
        return 0;
    }
    if (XM_DT_IS_PREDEF(dt))
        return xm_op_apply(op, in, inout, count, dt);
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t || t->basic == MPI_DATATYPE_NULL || !t->contig || (MPI_Aint)t->size != t->extent)
        return -EINVAL;
    size_t bs = XM_DT_SIZE(t->basic);
    if (!bs || t->size % bs)
        return -EINVAL;
    size_t n = t->size / bs * (size_t)count;
    if (n > INT32_MAX)
        return -EINVAL;
    return xm_op_apply(op, (const char *)in + t->true_lb, (char *)inout + t->true_lb, (int)n,
                       t->basic);
}
