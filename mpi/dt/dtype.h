/*
 * dtype.h - datatype objects and the pack/unpack engine.
 *
 * Owns: struct xm_dtype, the type constructors behind MPI_Type_*, Pack/Unpack, and the
 * byte-stream view the p2p engine uses.
 * Contract (what core/p2p.c relies on, and nothing more):
 *   - xm_dt_get(h): object for any datatype handle (predefined ones come from a static
 *     table), NULL if invalid.
 *   - dt->size: packed bytes of one element; dt->extent/lb/true_*: MPI extents;
 *     dt->contig: 1 if (count, dt) occupies size*count contiguous bytes starting at
 *     buf + true_lb whenever extent == size (the p2p fast path: one memcpy).
 *     dt->basic: the predefined element handle if every element is that one type (ops
 *     use it), else MPI_DATATYPE_NULL.
 *   - xm_dt_pack(buf, count, dt, pos, out, len): copy bytes [pos, pos+len) of the
 *     packed stream of (buf, count, dt) to out.  xm_dt_unpack() the reverse.  Callers
 *     fragment freely: any pos/len split gives the same bytes.  Contiguous types reduce
 *     to memcpy.  Return 0 or -EINVAL.
 *   - Derived types are refcounted; Type_free of a type used by a pending request
 *     keeps it alive until the request completes (xm_dt_ref/xm_dt_unref).
 */
#ifndef XM_DTYPE_H
#define XM_DTYPE_H

#include "../core/xm.h"

struct xm_dt_block {     /* flattened representation: a list of byte blocks per element */
    MPI_Aint disp;       /* from the element's origin */
    size_t len;
    size_t count;        /* count pieces of len bytes ... */
    MPI_Aint stride;     /* ... at disp + k * stride, k = 0..count-1 (count >= 1) */
};

struct xm_dtype {
    int handle;
    int refs;
    int committed;
    size_t size;          /* packed bytes per element */
    MPI_Aint lb, extent, true_lb, true_extent;
    int contig;
    MPI_Datatype basic;   /* for reductions, or MPI_DATATYPE_NULL */
    int nblocks;          /* flattened blocks of one element */
    struct xm_dt_block *blocks;
    int combiner;         /* MPI_COMBINER_* and the constructor arguments */
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;
    int nints, naints, ntypes;
    struct xm_attr *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    /* flatten.c */
    size_t *bpos;         /* bpos[b]: packed offset of block b in one element (nblocks+1) */
    int lb_marked, ub_marked; /* bounds set explicitly (resized, MPI_LB/MPI_UB markers) */
    MPI_Aint align;       /* alignment of the strictest basic type (struct padding) */
    size_t nelem;         /* basic elements per element (Get_elements) */
    MPI_Datatype inner;   /* SUBARRAY/DARRAY: equivalent type built from simpler ones (held) */
};

struct xm_dtype *xm_dt_get(MPI_Datatype h);
void xm_dt_ref(struct xm_dtype *t);
void xm_dt_unref(struct xm_dtype *t);
int xm_dt_pack(const void *buf, int count, const struct xm_dtype *t, size_t pos, void *out,
               size_t len);
int xm_dt_unpack(void *buf, int count, const struct xm_dtype *t, size_t pos,
                 const void *in, size_t len);
/* derived.c: the table of dynamic datatypes */
struct xm_dtype *xm_dt_get_derived(MPI_Datatype h);
int xm_dt_register(struct xm_dtype *t);
void xm_dt_destroy(struct xm_dtype *t);
/* flatten.c: build a derived type from its MPI_Type_get_contents description
 * (combiner, ints, aints, types exactly as MPI-3.1 §4.1.13 lists them for that
 * combiner: CONTIGUOUS, VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK,
 * HINDEXED_BLOCK, STRUCT, RESIZED, DUP, SUBARRAY, DARRAY).  Arguments are validated (-EINVAL: negative
 * counts/lengths, unknown type handles, wrong array sizes); the result is registered,
 * uncommitted, holds a reference on each derived input type.  0 / -EINVAL / -ENOMEM. */
int xm_dt_create(int combiner, int ni, const int *ints, int na, const MPI_Aint *aints,
                 int nd, const MPI_Datatype *types, struct xm_dtype **out);
/* Basic elements in the first `bytes` packed bytes of (count, t): 0 and *elems, or
 * -EINVAL if bytes does not end on a basic-element boundary. */
int xm_dt_bytes_to_elems(const struct xm_dtype *t, size_t bytes, size_t *elems);
/* Packed bytes that hold the first `elems` basic elements of a stream of t. */
size_t xm_dt_elems_to_bytes(const struct xm_dtype *t, size_t elems);
const char *xm_dt_predef_name(MPI_Datatype h);
/* Call f(ctx, address, basic type) for every basic element of (buf, count, t) in
 * type-map order (pair types are visited as their two members); stops at the first
 * non-zero return of f and returns it, else 0. */
int xm_dt_visit(const void *buf, int count, const struct xm_dtype *t,
                int (*f)(void *ctx, char *addr, MPI_Datatype basic), void *ctx);

#endif
