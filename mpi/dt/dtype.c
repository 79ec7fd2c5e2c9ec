/*
 * dtype.c - datatype objects and the generic pack/unpack engine (contract in dtype.h).
 *
 * Notes: predefined types are built lazily into a static table indexed by the low byte
 *   of their handle.  Derived types (next step) fill struct xm_dtype
 *   with a flattened block list; xm_dt_pack/unpack already handle any block list, so the
 *   p2p engine needs no change when they arrive.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"

#include <stdbool.h>
#include <wchar.h>

/* The size byte of each predefined handle (include/mpi.h) must match this ABI. */
_Static_assert(sizeof(long) == XM_DT_SIZE(MPI_LONG), "MPI_LONG size");
_Static_assert(sizeof(long long) == XM_DT_SIZE(MPI_LONG_LONG), "MPI_LONG_LONG size");
_Static_assert(sizeof(wchar_t) == XM_DT_SIZE(MPI_WCHAR), "MPI_WCHAR size");
_Static_assert(sizeof(long double) == XM_DT_SIZE(MPI_LONG_DOUBLE), "MPI_LONG_DOUBLE size");
_Static_assert(sizeof(bool) == XM_DT_SIZE(MPI_C_BOOL), "MPI_C_BOOL size");
_Static_assert(sizeof(MPI_Aint) == XM_DT_SIZE(MPI_AINT), "MPI_AINT size");
_Static_assert(sizeof(__float128) == XM_DT_SIZE(MPI_REAL16), "MPI_REAL16 size");
_Static_assert(sizeof(__int128) == XM_DT_SIZE(MPI_INTEGER16), "MPI_INTEGER16 size");
_Static_assert(2 * sizeof(long double) == XM_DT_SIZE(MPI_CXX_LONG_DOUBLE_COMPLEX), "cplx");
_Static_assert(sizeof(struct { double d; int i; }) == XM_DT_SIZE(MPI_DOUBLE_INT), "pair");
_Static_assert(sizeof(struct { long l; int i; }) == XM_DT_SIZE(MPI_LONG_INT), "pair");
_Static_assert(sizeof(struct { long double d; int i; }) == XM_DT_SIZE(MPI_LONG_DOUBLE_INT),
               "pair");

/* Pair types (MINLOC/MAXLOC): the handle's size byte is the C struct's sizeof (= the
 * MPI extent); the MPI size is the sum of the two members and the padding between or
 * after them is not part of the type map, so it never goes on the wire. */
struct pair_desc {
    int idx;
    size_t first, second_off, align;
};
#define PAIR_(h, T1, T2)                                                              \
    {XM_DT_IDX(h), sizeof(T1), offsetof(struct { T1 a; T2 b; }, b),                   \
     _Alignof(struct { T1 a; T2 b; })}
static const struct pair_desc pairs[] = {
    PAIR_(MPI_FLOAT_INT, float, int),         PAIR_(MPI_DOUBLE_INT, double, int),
    PAIR_(MPI_LONG_INT, long, int),           PAIR_(MPI_2INT, int, int),
    PAIR_(MPI_SHORT_INT, short, int),         PAIR_(MPI_LONG_DOUBLE_INT, long double, int),
    PAIR_(MPI_2INTEGER, int, int),            PAIR_(MPI_2REAL, float, float),
    PAIR_(MPI_2DOUBLE_PRECISION, double, double),
};

static const struct {
    MPI_Datatype h;
    const char *name;
} names[] = {
#define N_(x) {x, #x}
    N_(MPI_CHAR), N_(MPI_SIGNED_CHAR), N_(MPI_UNSIGNED_CHAR), N_(MPI_BYTE), N_(MPI_WCHAR),
    N_(MPI_SHORT), N_(MPI_UNSIGNED_SHORT), N_(MPI_INT), N_(MPI_UNSIGNED), N_(MPI_LONG),
    N_(MPI_UNSIGNED_LONG), N_(MPI_LONG_LONG_INT), N_(MPI_UNSIGNED_LONG_LONG),
    N_(MPI_FLOAT), N_(MPI_DOUBLE), N_(MPI_LONG_DOUBLE), N_(MPI_PACKED), N_(MPI_C_BOOL),
    N_(MPI_INT8_T), N_(MPI_INT16_T), N_(MPI_INT32_T), N_(MPI_INT64_T), N_(MPI_UINT8_T),
    N_(MPI_UINT16_T), N_(MPI_UINT32_T), N_(MPI_UINT64_T), N_(MPI_C_COMPLEX),
    N_(MPI_C_FLOAT_COMPLEX), N_(MPI_C_DOUBLE_COMPLEX), N_(MPI_C_LONG_DOUBLE_COMPLEX),
    N_(MPI_AINT), N_(MPI_OFFSET), N_(MPI_COUNT), N_(MPI_FLOAT_INT), N_(MPI_DOUBLE_INT),
    N_(MPI_LONG_INT), N_(MPI_2INT), N_(MPI_SHORT_INT), N_(MPI_LONG_DOUBLE_INT), N_(MPI_LB),
    N_(MPI_UB), N_(MPI_INTEGER), N_(MPI_REAL), N_(MPI_DOUBLE_PRECISION), N_(MPI_LOGICAL),
    N_(MPI_CHARACTER), N_(MPI_2INTEGER), N_(MPI_2REAL), N_(MPI_2DOUBLE_PRECISION),
    N_(MPI_COMPLEX), N_(MPI_DOUBLE_COMPLEX), N_(MPI_CXX_BOOL),
    /* (issue 21) */
    N_(MPI_CXX_FLOAT_COMPLEX), N_(MPI_CXX_DOUBLE_COMPLEX), N_(MPI_CXX_LONG_DOUBLE_COMPLEX),
    N_(MPI_REAL4), N_(MPI_REAL8), N_(MPI_REAL16), N_(MPI_INTEGER1), N_(MPI_INTEGER2),
    N_(MPI_INTEGER4), N_(MPI_INTEGER8), N_(MPI_INTEGER16), N_(MPI_COMPLEX8),
    N_(MPI_COMPLEX16), N_(MPI_COMPLEX32),
#undef N_
};

const char *xm_dt_predef_name(MPI_Datatype h)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].h == h)
            return names[i].name;
    return "";
}

static struct xm_dtype predef[256];
static struct xm_dt_block predef_blk[256][2];
static size_t predef_bpos[256][3];

static MPI_Aint predef_align(MPI_Datatype h, size_t sz)
{
    switch (h) {
    case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX8:
        return _Alignof(float);
    case MPI_C_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX: case MPI_COMPLEX16:
        return _Alignof(double);
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_LONG_DOUBLE: case MPI_CXX_LONG_DOUBLE_COMPLEX:
        return _Alignof(long double);
    case MPI_COMPLEX32:
        return _Alignof(__float128);
    default:
        return sz ? (MPI_Aint)sz : 1;
    }
}

static void predef_init(struct xm_dtype *t, MPI_Datatype h)
{
    unsigned i = XM_DT_IDX(h);
    size_t sz = XM_DT_SIZE(h);
    struct xm_dt_block *b = predef_blk[i];
    t->size = sz;
    t->extent = t->true_extent = (MPI_Aint)sz;
    t->basic = h;
    t->committed = 1;
    t->refs = 1;
    t->combiner = MPI_COMBINER_NAMED;
    t->align = predef_align(h, sz);
    t->nelem = sz ? 1 : 0;
    t->blocks = b;
    t->bpos = predef_bpos[i];
    b[0] = (struct xm_dt_block){0, sz, 1, 0};
    t->nblocks = sz ? 1 : 0;
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        const struct pair_desc *p = &pairs[k];
        if ((unsigned)p->idx != i)
            continue;
        size_t second = h == MPI_2REAL ? sizeof(float)
                        : h == MPI_2DOUBLE_PRECISION ? sizeof(double) : sizeof(int);
        t->align = (MPI_Aint)p->align;
        t->nelem = 2;
        t->size = p->first + second;
        if (p->second_off == p->first) {
            b[0].len = t->size;
        } else {
            b[1] = (struct xm_dt_block){(MPI_Aint)p->second_off, second, 1, 0};
            b[0].len = p->first;
            t->nblocks = 2;
        }
        t->true_extent = (MPI_Aint)(p->second_off + second);
    }
    t->contig = t->nblocks == 1 && (MPI_Aint)t->size == t->extent;
    t->bpos[0] = 0;
    for (int k = 0; k < t->nblocks; k++)
        t->bpos[k + 1] = t->bpos[k] + b[k].len;
    snprintf(t->name, sizeof(t->name), "%s", xm_dt_predef_name(h));
    t->handle = h;
}

/* A predefined handle whose entry is not set up yet, or not a valid one. */
static __attribute__((noinline)) struct xm_dtype *predef_first(MPI_Datatype h)
{
    if (XM_DT_IDX(h) == 0 || XM_DT_IDX(h) > XM_DT_LAST_PREDEFINED)
        return NULL;
    struct xm_dtype *t = &predef[XM_DT_IDX(h)];
    if (!t->handle) {
        if (!*xm_dt_predef_name(h)) /* not a predefined handle (wrong size byte) */
            return NULL;
        predef_init(t, h);
    }
    return t->handle == h ? t : NULL;
}

/* Called several times per message: the common case stays a short leaf function. */
struct xm_dtype *xm_dt_get(MPI_Datatype h)
{
    if (XM_DT_IS_PREDEF(h)) {
        unsigned i = XM_DT_IDX(h);
        if (i - 1u < (unsigned)XM_DT_LAST_PREDEFINED && predef[i].handle == h)
            return &predef[i];
        return predef_first(h);
    }
    return xm_dt_get_derived(h);
}

void xm_dt_ref(struct xm_dtype *t)
{
    if (t && !XM_DT_IS_PREDEF(t->handle))
        t->refs++;
}

void xm_dt_unref(struct xm_dtype *t)
{
    if (t && !XM_DT_IS_PREDEF(t->handle) && --t->refs == 0)
        xm_dt_destroy(t);
}

/* Copy m pieces of bl bytes between a strided side (p, stride) and a packed side (io).
 * The common element sizes get loops with a constant-size copy (a single move each);
 * everything else is memcpy per piece. */
#define STRIDED_LOOP(BL)                                                               \
    do {                                                                               \
        if (dir == 0)                                                                  \
            for (size_t i = 0; i < m; i++, p += stride, io += (BL))                    \
                memcpy(io, p, (BL));                                                   \
        else                                                                           \
            for (size_t i = 0; i < m; i++, p += stride, io += (BL))                    \
                memcpy(p, io, (BL));                                                   \
    } while (0)

static inline void strided(char *p, MPI_Aint stride, char *io, size_t bl, size_t m, int dir)
{
    switch (bl) {
    case 4: STRIDED_LOOP(4); break;
    case 8: STRIDED_LOOP(8); break;
    case 16: STRIDED_LOOP(16); break;
    case 32: STRIDED_LOOP(32); break;
    default: STRIDED_LOOP(bl);
    }
}

/* Walk bytes [pos, pos+len) of the packed stream; dir 0 = pack (buf -> io), 1 = unpack.
 * The stream is count elements, each the blocks of t in order; block b is
 * blocks[b].count pieces of blocks[b].len bytes, stride blocks[b].stride. */
static int walk(char *buf, int count, const struct xm_dtype *t, size_t pos, char *io,
                size_t len, int dir)
{
    if (len == 0)
        return 0;
    if (t->size == 0 || count < 0 || pos + len > t->size * (size_t)count)
        return -EINVAL;
    if (t->contig && (MPI_Aint)t->size == t->extent) {
        char *p = buf + t->true_lb + pos;
        if (dir == 0)
            memcpy(io, p, len);
        else
            memcpy(p, io, len);
        return 0;
    }
    size_t e = pos / t->size, off = pos % t->size;
    /* find the block holding offset off: bpos is increasing, binary search */
    int lo = 0, hi = t->nblocks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t->bpos[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    int b = lo;
    off -= t->bpos[b];
    size_t k = off / t->blocks[b].len;
    off %= t->blocks[b].len;
    char *origin = buf + (MPI_Aint)e * t->extent;
    while (len > 0) {
        const struct xm_dt_block *bk = &t->blocks[b];
        char *p = origin + bk->disp + (MPI_Aint)k * bk->stride;
        if (off) { /* finish a piece started by an earlier call */
            size_t n = bk->len - off < len ? bk->len - off : len;
            if (dir == 0)
                memcpy(io, p + off, n);
            else
                memcpy(p + off, io, n);
            io += n;
            len -= n;
            if (n < bk->len - off)
                return 0;
            off = 0;
            k++;
            p += bk->stride;
        }
        size_t bl = bk->len, m = bk->count - k;
        if (m > len / bl)
            m = len / bl;
        strided(p, bk->stride, io, bl, m, dir);
        k += m;
        p += (MPI_Aint)m * bk->stride;
        io += m * bl;
        len -= m * bl;
        if (k < bk->count) {
            if (len == 0)
                return 0;
            /* len < bl: a partial piece ends this call */
            if (dir == 0)
                memcpy(io, p, len);
            else
                memcpy(p, io, len);
            return 0;
        }
        k = 0;
        if (++b == t->nblocks) {
            b = 0;
            origin += t->extent;
        }
    }
    return 0;
}
int xm_dt_pack(const void *buf, int count, const struct xm_dtype *t, size_t pos, void *out,
               size_t len)
{
    return walk((char *)buf, count, t, pos, out, len, 0);
}

int xm_dt_unpack(void *buf, int count, const struct xm_dtype *t, size_t pos, const void *in,
                 size_t len)
{
    return walk(buf, count, t, pos, (char *)in, len, 1);
}
