/*
 * check_dtype.c - the datatype engine of mpi/dt/ (flatten.c, dtype.c): sizes, bounds
 *   and flattened blocks of every constructor against hand-computed layouts, and
 *   pack/unpack of every layout split into fragments of every size at every offset
 *   (the p2p engine fragments messages at arbitrary byte positions).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "dtype.h"

/* ---- helpers ------------------------------------------------------------------- */

#define BASE 128 /* origin of the element buffers, so negative displacements fit */
static int src[512], dst[512];
static char packed[4096], ref[4096];

static struct xm_dtype *mk(int comb, int ni, const int *ints, int na,
                           const MPI_Aint *aints, int nd, const MPI_Datatype *types)
{
    struct xm_dtype *t = NULL;
    ck_assert_int_eq(xm_dt_create(comb, ni, ints, na, aints, nd, types, &t), 0);
    ck_assert_ptr_nonnull(t);
    return t;
}

static struct xm_dtype *contig(int n, MPI_Datatype old)
{
    return mk(MPI_COMBINER_CONTIGUOUS, 1, &n, 0, NULL, 1, &old);
}

static struct xm_dtype *vector(int n, int bl, int stride, MPI_Datatype old)
{
    int v[3] = {n, bl, stride};
    return mk(MPI_COMBINER_VECTOR, 3, v, 0, NULL, 1, &old);
}

/* (count, t) over int buffers must pack exactly the ints at positions idx[0..n) (relative
 * to the origin, in this order), whatever the fragmentation; unpack must write exactly
 * those ints back and nothing else. */
static void check_layout(const struct xm_dtype *t, int count, const int *idx, int n)
{
    size_t total = (size_t)n * sizeof(int);
    for (int i = 0; i < 512; i++)
        src[i] = 1000 + i;
    ck_assert_uint_eq(t->size * (size_t)count, total);
    for (int k = 0; k < n; k++)
        memcpy(ref + k * sizeof(int), &src[BASE + idx[k]], sizeof(int));
    for (size_t chunk = 1; chunk <= total; chunk++) {
        memset(packed, 0, sizeof(packed));
        for (size_t pos = 0; pos < total; pos += chunk) {
            size_t len = total - pos < chunk ? total - pos : chunk;
            ck_assert_int_eq(xm_dt_pack(src + BASE, count, t, pos, packed + pos, len), 0);
        }
        ck_assert_msg(memcmp(packed, ref, total) == 0, "pack, fragments of %zu", chunk);
        memset(dst, 0, sizeof(dst));
        for (size_t pos = 0; pos < total; pos += chunk) {
            size_t len = total - pos < chunk ? total - pos : chunk;
            ck_assert_int_eq(xm_dt_unpack(dst + BASE, count, t, pos, ref + pos, len), 0);
        }
        int nz = 0, distinct = 0;
        for (int i = 0; i < 512; i++)
            nz += dst[i] != 0;
        for (int k = 0; k < n; k++) {
            ck_assert_int_eq(dst[BASE + idx[k]], src[BASE + idx[k]]);
            int seen = 0;
            for (int j = 0; j < k; j++)
                seen |= idx[j] == idx[k];
            distinct += !seen;
        }
        ck_assert_int_eq(nz, distinct);
    }
    /* every two-piece split */
    for (size_t a = 0; a <= total; a++) {
        memset(packed, 0, sizeof(packed));
        ck_assert_int_eq(xm_dt_pack(src + BASE, count, t, 0, packed, a), 0);
        ck_assert_int_eq(xm_dt_pack(src + BASE, count, t, a, packed + a, total - a), 0);
        ck_assert(memcmp(packed, ref, total) == 0);
    }
    /* beyond the end is refused */
    ck_assert_int_eq(xm_dt_pack(src + BASE, count, t, total, packed, 1), -EINVAL);
}

static void check_bounds(const struct xm_dtype *t, size_t size, MPI_Aint lb,
                         MPI_Aint extent, MPI_Aint tlb, MPI_Aint text)
{
    ck_assert_uint_eq(t->size, size);
    ck_assert_int_eq(t->lb, lb);
    ck_assert_int_eq(t->extent, extent);
    ck_assert_int_eq(t->true_lb, tlb);
    ck_assert_int_eq(t->true_extent, text);
}

/* ---- predefined and pair types --------------------------------------------------- */

START_TEST(test_predefined)
{
    struct xm_dtype *t = xm_dt_get(MPI_INT);
    check_bounds(t, 4, 0, 4, 0, 4);
    ck_assert(t->contig);
    ck_assert_int_eq(t->basic, MPI_INT);
    int idx[] = {0, 1, 2};
    check_layout(t, 3, idx, 3);
    ck_assert_ptr_null(xm_dt_get(MPI_DATATYPE_NULL));
    ck_assert_ptr_null(
        xm_dt_get(0x43000000 | (4 << 8) | 0x0f)); /* DOUBLE index, size 4 */
    ck_assert_str_eq(xm_dt_get(MPI_DOUBLE)->name, "MPI_DOUBLE");
}
END_TEST

START_TEST(test_pairs)
{
    struct {
        double d;
        int i;
    } di[2] = {{1.5, 7}, {2.5, 9}};
    struct {
        short s;
        int i;
    } si[2] = {{3, 11}, {4, 12}};
    struct xm_dtype *t = xm_dt_get(MPI_DOUBLE_INT);
    check_bounds(t, 12, 0, 16, 0, 12);
    ck_assert(!t->contig);
    ck_assert_int_eq(t->basic, MPI_DOUBLE_INT);
    char out[64], back[64];
    ck_assert_int_eq(xm_dt_pack(di, 2, t, 0, out, 24), 0);
    ck_assert(memcmp(out, &di[0].d, 8) == 0 && memcmp(out + 8, &di[0].i, 4) == 0);
    ck_assert(memcmp(out + 12, &di[1].d, 8) == 0 && memcmp(out + 20, &di[1].i, 4) == 0);
    memset(back, 0, sizeof(back));
    ck_assert_int_eq(xm_dt_unpack(back, 2, t, 0, out, 24), 0);
    ck_assert(memcmp(back + 16, &di[1].d, 8) == 0 && memcmp(back + 24, &di[1].i, 4) == 0);

    t = xm_dt_get(MPI_SHORT_INT);
    check_bounds(t, 6, 0, 8, 0, 8);
    ck_assert_int_eq(t->nblocks, 2);
    ck_assert_int_eq(xm_dt_pack(si, 2, t, 0, out, 12), 0);
    ck_assert(memcmp(out, &si[0].s, 2) == 0 && memcmp(out + 2, &si[0].i, 4) == 0);
    ck_assert(memcmp(out + 6, &si[1].s, 2) == 0 && memcmp(out + 8, &si[1].i, 4) == 0);
    /* a fragment boundary inside the padding-split element */
    memset(out, 0, sizeof(out));
    ck_assert_int_eq(xm_dt_pack(si, 2, t, 0, out, 7), 0);
    ck_assert_int_eq(xm_dt_pack(si, 2, t, 7, out + 7, 5), 0);
    ck_assert(memcmp(out + 6, &si[1].s, 2) == 0 && memcmp(out + 8, &si[1].i, 4) == 0);

    check_bounds(xm_dt_get(MPI_FLOAT_INT), 8, 0, 8, 0, 8);
    check_bounds(xm_dt_get(MPI_2INT), 8, 0, 8, 0, 8);
    ck_assert(xm_dt_get(MPI_2INT)->contig);
    check_bounds(xm_dt_get(MPI_LONG_INT), 12, 0, 16, 0, 12);
    check_bounds(xm_dt_get(MPI_LONG_DOUBLE_INT), 20, 0, 32, 0, 20);
    ck_assert_uint_eq(xm_dt_get(MPI_LONG_DOUBLE_INT)->nelem, 2);
}
END_TEST

/* ---- constructors ------------------------------------------------------------------ */

START_TEST(test_contiguous)
{
    struct xm_dtype *t = contig(3, MPI_INT);
    check_bounds(t, 12, 0, 12, 0, 12);
    ck_assert(t->contig);
    ck_assert_int_eq(t->nblocks, 1);
    ck_assert_int_eq(t->basic, MPI_INT);
    int idx[] = {0, 1, 2, 3, 4, 5};
    check_layout(t, 2, idx, 6);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_vector)
{
    struct xm_dtype *t = vector(3, 2, 4, MPI_INT);
    check_bounds(t, 24, 0, 40, 0, 40);
    ck_assert(!t->contig);
    /* one strided block: the vector special case */
    ck_assert_int_eq(t->nblocks, 1);
    ck_assert_uint_eq(t->blocks[0].len, 8);
    ck_assert_uint_eq(t->blocks[0].count, 3);
    ck_assert_int_eq(t->blocks[0].stride, 16);
    int idx[] = {0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19};
    check_layout(t, 2, idx, 12);
    xm_dt_unref(t);

    /* stride == blocklength: contiguous */
    t = vector(100, 1, 1, MPI_INT);
    ck_assert(t->contig);
    ck_assert_int_eq(t->nblocks, 1);
    ck_assert_uint_eq(t->blocks[0].len, 400);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_vector_negative_stride)
{
    struct xm_dtype *t = vector(3, 1, -2, MPI_INT);
    check_bounds(t, 12, -16, 20, -16, 20);
    int idx[] = {0, -2, -4, 5, 3, 1};
    check_layout(t, 2, idx, 6);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_hvector)
{
    struct xm_dtype *c = contig(2, MPI_INT);
    int v[2] = {2, 1};
    MPI_Aint stride = 12;
    MPI_Datatype old = c->handle;
    struct xm_dtype *t = mk(MPI_COMBINER_HVECTOR, 2, v, 1, &stride, 1, &old);
    check_bounds(t, 16, 0, 20, 0, 20);
    int idx[] = {0, 1, 3, 4, 5, 6, 8, 9};
    check_layout(t, 2, idx, 8);
    xm_dt_unref(c); /* t keeps it alive */
    ck_assert_ptr_nonnull(xm_dt_get(old));
    xm_dt_unref(t);
    ck_assert_ptr_null(xm_dt_get(old));
}
END_TEST

START_TEST(test_indexed)
{
    int v[5] = {2, 2, 1, 5, 0}; /* count, blocklengths, displacements */
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *t = mk(MPI_COMBINER_INDEXED, 5, v, 0, NULL, 1, &old);
    check_bounds(t, 12, 0, 28, 0, 28);
    int idx[] = {5, 6, 0, 12, 13, 7};
    check_layout(t, 2, idx, 6);
    ck_assert_uint_eq(t->nelem, 3);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_hindexed)
{
    int v[3] = {2, 1, 2};
    MPI_Aint d[2] = {-4, 8};
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *t = mk(MPI_COMBINER_HINDEXED, 3, v, 2, d, 1, &old);
    check_bounds(t, 12, -4, 20, -4, 20);
    int idx[] = {-1, 2, 3, 4, 7, 8};
    check_layout(t, 2, idx, 6);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_indexed_block)
{
    int v[5] = {3, 1, 4, 0, 2};
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *t = mk(MPI_COMBINER_INDEXED_BLOCK, 5, v, 0, NULL, 1, &old);
    check_bounds(t, 12, 0, 20, 0, 20);
    int idx[] = {4, 0, 2, 9, 5, 7};
    check_layout(t, 2, idx, 6);
    xm_dt_unref(t);

    int w[2] = {2, 2};
    MPI_Aint d[2] = {8, -8};
    t = mk(MPI_COMBINER_HINDEXED_BLOCK, 2, w, 2, d, 1, &old);
    check_bounds(t, 16, -8, 24, -8, 24);
    int idx2[] = {2, 3, -2, -1, 8, 9, 4, 5};
    check_layout(t, 2, idx2, 8);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_struct_gaps)
{
    struct s {
        char c;
        double d;
        int i;
    } in[2] = {{'a', 1.25, 5}, {'b', -2.5, 6}}, out[2];
    int v[4] = {3, 1, 1, 1};
    MPI_Aint d[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    struct xm_dtype *t = mk(MPI_COMBINER_STRUCT, 4, v, 3, d, 3, ty);
    /* size 13; extent padded to the double's alignment: 24 = sizeof(struct s) */
    check_bounds(t, 13, 0, (MPI_Aint)sizeof(struct s), 0, 20);
    ck_assert_int_eq(t->basic, MPI_DATATYPE_NULL);
    ck_assert_int_eq(t->nblocks, 2); /* double and int touch: merged */
    char p[26];
    for (size_t chunk = 1; chunk <= 26; chunk++) {
        memset(p, 0, sizeof(p));
        for (size_t pos = 0; pos < 26; pos += chunk)
            ck_assert_int_eq(
                xm_dt_pack(in, 2, t, pos, p + pos, 26 - pos < chunk ? 26 - pos : chunk),
                0);
        ck_assert(p[0] == 'a' && memcmp(p + 1, &in[0].d, 8) == 0 &&
                  memcmp(p + 9, &in[0].i, 4) == 0);
        ck_assert(p[13] == 'b' && memcmp(p + 14, &in[1].d, 8) == 0 &&
                  memcmp(p + 22, &in[1].i, 4) == 0);
        memset(out, 0, sizeof(out));
        for (size_t pos = 0; pos < 26; pos += chunk)
            ck_assert_int_eq(xm_dt_unpack(out, 2, t, pos, p + pos,
                                          26 - pos < chunk ? 26 - pos : chunk),
                             0);
        ck_assert(out[1].c == 'b' && out[1].d == -2.5 && out[1].i == 6);
        ck_assert(out[0].c == 'a' && out[0].d == 1.25 && out[0].i == 5);
    }
    /* basic elements: char | double | int */
    size_t e;
    ck_assert_int_eq(xm_dt_bytes_to_elems(t, 1, &e), 0);
    ck_assert_uint_eq(e, 1);
    ck_assert_int_eq(xm_dt_bytes_to_elems(t, 9, &e), 0);
    ck_assert_uint_eq(e, 2);
    ck_assert_int_eq(xm_dt_bytes_to_elems(t, 5, &e), -EINVAL);
    ck_assert_int_eq(xm_dt_bytes_to_elems(t, 26, &e), 0);
    ck_assert_uint_eq(e, 6);
    ck_assert_int_eq(xm_dt_bytes_to_elems(t, 14, &e), 0);
    ck_assert_uint_eq(e, 4);
    ck_assert_uint_eq(xm_dt_elems_to_bytes(t, 4), 14);
    ck_assert_uint_eq(xm_dt_elems_to_bytes(t, 5), 22);
    xm_dt_unref(t);
}
END_TEST

START_TEST(test_resized)
{
    MPI_Aint a[2] = {-4, 12};
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *r = mk(MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old);
    check_bounds(r, 4, -4, 12, 0, 4);
    ck_assert(!r->contig);
    struct xm_dtype *t = contig(3, r->handle);
    /* copies at 0, 12, 24 bytes; the explicit lb propagates */
    check_bounds(t, 12, -4, 36, 0, 28);
    ck_assert_int_eq(t->nblocks, 1);
    ck_assert_uint_eq(t->blocks[0].count, 3);
    int idx[] = {0, 3, 6, 9, 12, 15};
    check_layout(t, 2, idx, 6);
    /* a struct built from a resized type: no alignment padding, bounds explicit */
    int v[3] = {2, 2, 1};
    MPI_Aint d[2] = {0, 16};
    MPI_Datatype ty[2] = {r->handle, MPI_CHAR};
    struct xm_dtype *s = mk(MPI_COMBINER_STRUCT, 3, v, 2, d, 2, ty);
    /* marked bounds win: lb -4, ub = 12 + (-4 + 12) = 20; the char at 16 is inside */
    ck_assert_int_eq(s->lb, -4);
    ck_assert_int_eq(s->extent, 24);
    ck_assert_int_eq(s->true_extent, 17);
    xm_dt_unref(s);
    xm_dt_unref(t);
    xm_dt_unref(r);
}
END_TEST

START_TEST(test_nested)
{
    int v[5] = {2, 2, 1, 5, 0};
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *ix = mk(MPI_COMBINER_INDEXED, 5, v, 0, NULL, 1, &old);
    struct xm_dtype *t = vector(2, 1, 3, ix->handle); /* stride 3 * 28 bytes = 21 ints */
    check_bounds(t, 24, 0, 28 + 3 * 28, 0, 28 + 3 * 28);
    int idx[] = {5, 6, 0, 26, 27, 21};
    check_layout(t, 1, idx, 6);
    xm_dt_unref(t);
    xm_dt_unref(ix);

    /* struct { vector(2,1,2,INT) x2 at 0, INT at 40 } */
    struct xm_dtype *vv = vector(2, 1, 2, MPI_INT); /* ints 0,2; extent 12 */
    int w[3] = {2, 2, 1};
    MPI_Aint d[2] = {0, 40};
    MPI_Datatype ty[2] = {vv->handle, MPI_INT};
    struct xm_dtype *s = mk(MPI_COMBINER_STRUCT, 3, w, 2, d, 2, ty);
    check_bounds(s, 20, 0, 44, 0, 44);
    ck_assert_int_eq(s->basic, MPI_INT);
    int idx2[] = {0, 2, 3, 5, 10, 11, 13, 14, 16, 21};
    check_layout(s, 2, idx2, 10);
    /* a vector of vectors: outer copies of a strided block */
    struct xm_dtype *vvv = vector(3, 1, 2, vv->handle); /* copies at 0, 6, 12 ints */
    int idx3[] = {0, 2, 6, 8, 12, 14};
    check_layout(vvv, 1, idx3, 6);
    xm_dt_unref(vvv);
    xm_dt_unref(s);
    xm_dt_unref(vv);
}
END_TEST

START_TEST(test_dup_and_contents)
{
    struct xm_dtype *v = vector(3, 2, 4, MPI_INT);
    MPI_Datatype h = v->handle;
    struct xm_dtype *d = mk(MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &h);
    check_bounds(d, 24, 0, 40, 0, 40);
    ck_assert_int_eq(d->combiner, MPI_COMBINER_DUP);
    ck_assert_int_eq(v->combiner, MPI_COMBINER_VECTOR);
    ck_assert_int_eq(v->nints, 3);
    ck_assert_int_eq(v->ints[2], 4);
    ck_assert_int_eq(v->types[0], MPI_INT);
    int idx[] = {0, 1, 4, 5, 8, 9};
    check_layout(d, 1, idx, 6);
    xm_dt_unref(v);
    ck_assert_ptr_nonnull(xm_dt_get(h));
    xm_dt_unref(d);
    ck_assert_ptr_null(xm_dt_get(h));
}
END_TEST

START_TEST(test_subarray)
{
    /* 4 x 5 ints, rows 1..2, columns 2..4 */
    int c[9] = {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C};
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *t = mk(MPI_COMBINER_SUBARRAY, 8, c, 0, NULL, 1, &old);
    check_bounds(t, 24, 0, 80, 28, 32);
    ck_assert_int_eq(t->combiner, MPI_COMBINER_SUBARRAY);
    ck_assert_int_eq(t->nints, 8);
    int idx[] = {7, 8, 9, 12, 13, 14, 27, 28, 29, 32, 33, 34};
    check_layout(t, 2, idx, 12);
    size_t e;
    ck_assert_int_eq(xm_dt_bytes_to_elems(t, 28, &e), 0);
    ck_assert_uint_eq(e, 7);
    ck_assert_uint_eq(xm_dt_elems_to_bytes(t, 7), 28);
    xm_dt_unref(t);
    /* the same in Fortran order: dimension 0 varies fastest, element (i,j) at i + 4j */
    c[7] = MPI_ORDER_FORTRAN;
    t = mk(MPI_COMBINER_SUBARRAY, 8, c, 0, NULL, 1, &old);
    check_bounds(t, 24, 0, 80, 36, 40);
    int idx2[] = {9, 10, 13, 14, 17, 18};
    check_layout(t, 1, idx2, 6);
    xm_dt_unref(t);
    /* 3-D: 2 x 3 x 4, plane 1, rows 1..2, columns 2..3: (a,b,c) at 12a + 4b + c */
    int d[11] = {3, 2, 3, 4, 1, 2, 2, 1, 1, 2, MPI_ORDER_C};
    t = mk(MPI_COMBINER_SUBARRAY, 11, d, 0, NULL, 1, &old);
    check_bounds(t, 16, 0, 96, 72, 24);
    int idx3[] = {18, 19, 22, 23};
    check_layout(t, 1, idx3, 4);
    xm_dt_unref(t);
    c[7] = 99; /* bad order */
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_SUBARRAY, 8, c, 0, NULL, 1, &old, &t),
                     -EINVAL);
    c[7] = MPI_ORDER_C;
    c[5] = 3; /* start + subsize > size */
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_SUBARRAY, 8, c, 0, NULL, 1, &old, &t),
                     -EINVAL);
}
END_TEST

START_TEST(test_darray)
{
    /* 4 x 6 ints on a 2 x 2 grid: rows BLOCK (2 each), columns CYCLIC(2) */
    int c[20] = {4,
                 3,
                 2,
                 4,
                 6,
                 MPI_DISTRIBUTE_BLOCK,
                 MPI_DISTRIBUTE_CYCLIC,
                 MPI_DISTRIBUTE_DFLT_DARG,
                 2,
                 2,
                 2,
                 MPI_ORDER_C};
    MPI_Datatype old = MPI_INT;
    struct xm_dtype *t = mk(MPI_COMBINER_DARRAY, 12, c, 0, NULL, 1, &old);
    /* rank 3 = grid (1,1): rows 2..3, columns 2..3 */
    check_bounds(t, 16, 0, 96, 56, 32);
    ck_assert_int_eq(t->combiner, MPI_COMBINER_DARRAY);
    int idx[] = {14, 15, 20, 21};
    check_layout(t, 1, idx, 4);
    xm_dt_unref(t);
    c[1] = 0; /* grid (0,0): rows 0..1, columns 0,1,4,5 */
    t = mk(MPI_COMBINER_DARRAY, 12, c, 0, NULL, 1, &old);
    int idx0[] = {0, 1, 4, 5, 6, 7, 10, 11};
    check_layout(t, 1, idx0, 8);
    xm_dt_unref(t);
    c[1] = 1; /* grid (0,1), Fortran order: (i,j) at i + 4j, rows 0..1, columns 2,3 */
    c[11] = MPI_ORDER_FORTRAN;
    t = mk(MPI_COMBINER_DARRAY, 12, c, 0, NULL, 1, &old);
    int idxf[] = {8, 9, 12, 13};
    check_layout(t, 1, idxf, 4);
    ck_assert_int_eq(t->extent, 96);
    xm_dt_unref(t);
    c[0] = 3; /* size != product of the grid */
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_DARRAY, 12, c, 0, NULL, 1, &old, &t),
                     -EINVAL);
    c[0] = 4;
    c[7] = 1; /* BLOCK of 1 row cannot cover 4 rows on 2 processes */
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_DARRAY, 12, c, 0, NULL, 1, &old, &t),
                     -EINVAL);
}
END_TEST

START_TEST(test_empty_and_invalid)
{
    struct xm_dtype *t = contig(0, MPI_INT);
    check_bounds(t, 0, 0, 0, 0, 0);
    ck_assert_int_eq(xm_dt_pack(src, 5, t, 0, packed, 0), 0);
    xm_dt_unref(t);
    int v[3] = {-1, 1, 1};
    MPI_Datatype old = MPI_INT, bad = 0x43000000 | 0x7f;
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_VECTOR, 3, v, 0, NULL, 1, &old, &t),
                     -EINVAL);
    v[0] = 1;
    v[1] = -1;
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_VECTOR, 3, v, 0, NULL, 1, &old, &t),
                     -EINVAL);
    v[1] = 1;
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_VECTOR, 3, v, 0, NULL, 1, &bad, &t),
                     -EINVAL);
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_VECTOR, 2, v, 0, NULL, 1, &old, &t),
                     -EINVAL);
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_SUBARRAY, 0, NULL, 0, NULL, 1, &old, &t),
                     -EINVAL);
}
END_TEST

START_TEST(test_large_vector)
{
    /* a big strided vector stays one block; pack of a middle window */
    struct xm_dtype *t = vector(100000, 1, 3, MPI_INT);
    ck_assert_int_eq(t->nblocks, 1);
    static int big[300000];
    for (int i = 0; i < 300000; i++)
        big[i] = i;
    int out[10];
    ck_assert_int_eq(xm_dt_pack(big, 1, t, 4 * 50000 + 2, (char *)out + 2, 38), 0);
    for (int k = 1; k < 10; k++)
        ck_assert_int_eq(out[k], 3 * (50000 + k));
    xm_dt_unref(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_predefined);
    tcase_add_test(tc, test_pairs);
    tcase_add_test(tc, test_contiguous);
    tcase_add_test(tc, test_vector);
    tcase_add_test(tc, test_vector_negative_stride);
    tcase_add_test(tc, test_hvector);
    tcase_add_test(tc, test_indexed);
    tcase_add_test(tc, test_hindexed);
    tcase_add_test(tc, test_indexed_block);
    tcase_add_test(tc, test_struct_gaps);
    tcase_add_test(tc, test_resized);
    tcase_add_test(tc, test_nested);
    tcase_add_test(tc, test_dup_and_contents);
    tcase_add_test(tc, test_subarray);
    tcase_add_test(tc, test_darray);
    tcase_add_test(tc, test_empty_and_invalid);
    tcase_add_test(tc, test_large_vector);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
