/*
 * op.c - predefined reduction operators on the predefined C types (contract in coll.h).
 *
 * Notes: MINLOC/MAXLOC, user ops (MPI_Op_create) and the complex types are the
 *   collectives area's next step; they return -ENOSYS here.
 */
#include <errno.h>
#include <stdint.h>

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

int xm_op_valid(MPI_Op op)
{
    return op >= MPI_MAX && op <= MPI_NO_OP;
}

int xm_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return -EINVAL;
    switch (dt) {
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
    default: return -ENOSYS;
    }
}
