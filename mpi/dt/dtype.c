/*
 * dtype.c - datatype objects and the generic pack/unpack engine (contract in dtype.h).
 *
 * Notes: predefined types are built lazily into a static table indexed by the low byte
 *   of their handle.  Derived types (datatype area, next step) fill struct xm_dtype
 *   with a flattened block list; xm_dt_pack/unpack already handle any block list, so the
 *   p2p engine needs no change when they arrive.
 */
#include <errno.h>
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
_Static_assert(sizeof(struct { double d; int i; }) == XM_DT_SIZE(MPI_DOUBLE_INT), "pair");
_Static_assert(sizeof(struct { long l; int i; }) == XM_DT_SIZE(MPI_LONG_INT), "pair");
_Static_assert(sizeof(struct { long double d; int i; }) == XM_DT_SIZE(MPI_LONG_DOUBLE_INT),
               "pair");

/* Caveat (datatype area): for the pair types the handle's size byte is the C struct's
 * sizeof (= extent); MPI_Type_size must report the packed size (e.g. 12 for
 * MPI_DOUBLE_INT) and pack must skip the padding: give them a block list. */
static struct xm_dtype predef[256];

struct xm_dtype *xm_dt_get(MPI_Datatype h)
{
    if (XM_DT_IS_PREDEF(h)) {
        struct xm_dtype *t = &predef[XM_DT_IDX(h)];
        if (XM_DT_IDX(h) == 0 || XM_DT_IDX(h) > XM_DT_LAST_PREDEFINED)
            return NULL;
        if (!t->handle) {
            size_t sz = XM_DT_SIZE(h);
            t->size = sz;
            t->extent = t->true_extent = (MPI_Aint)sz;
            t->contig = 1;
            t->basic = h;
            t->committed = 1;
            t->refs = 1;
            t->combiner = MPI_COMBINER_NAMED;
            t->handle = h;
        }
        return t;
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

/* Walk bytes [pos, pos+len) of the packed stream; dir 0 = pack (buf -> io), 1 = unpack. */
static int walk(char *buf, int count, const struct xm_dtype *t, size_t pos, char *io,
                size_t len, int dir)
{
    if (t->size == 0 || len == 0)
        return 0;
    if (t->contig && (MPI_Aint)t->size == t->extent) {
        char *p = buf + t->true_lb + pos;
        if (dir == 0)
            memcpy(io, p, len);
        else
            memcpy(p, io, len);
        return 0;
    }
    size_t e = pos / t->size, off = pos % t->size;
    while (len > 0 && e < (size_t)count) {
        char *origin = buf + (MPI_Aint)e * t->extent;
        for (int b = 0; b < t->nblocks && len > 0; b++) {
            size_t bl = t->blocks[b].len;
            if (off >= bl) {
                off -= bl;
                continue;
            }
            size_t n = bl - off < len ? bl - off : len;
            char *p = origin + t->blocks[b].disp + off;
            if (dir == 0)
                memcpy(io, p, n);
            else
                memcpy(p, io, n);
            io += n;
            len -= n;
            off = 0;
        }
        e++;
    }
    return len ? -EINVAL : 0;
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
