/*
 * flatten.c - derived datatype constructors: bounds, size and the flattened block list.
 *
 * Contract (dtype.h): xm_dt_create() takes a type's MPI_Type_get_contents description,
 *   validates it, computes size / lb / extent / true bounds / basic element type /
 *   alignment, and flattens the type map of one element into blocks
 *   (disp, len, count, stride) in type-map order, which is the packed-stream order.
 *   xm_dt_bytes_to_elems / xm_dt_elems_to_bytes back MPI_Get_elements and
 *   MPI_Status_set_elements.
 * Notes:
 *   - Every constructor is seen as a sequence of "pieces": n consecutive copies of an
 *     old type at byte displacement d (copy j at d + j * extent(old)).  VECTOR's piece i
 *     is (i * stride * extent, blocklength, old), STRUCT's is (disp[i], len[i], type[i]),
 *     and so on; RESIZED and DUP are one piece (0, 1, old).
 *   - emit() merges as it appends: adjacent pieces become one longer block, equal-length
 *     pieces at a constant stride become one strided block.  A vector of contiguous
 *     elements is therefore a single block whatever its count, and pack is a tight
 *     memcpy loop over few blocks.
 *   - Bounds follow MPI-3.1 §4.1.6: explicit bounds (MPI_Type_create_resized, or the
 *     deprecated MPI_LB/MPI_UB markers) win over the type-map bounds and propagate
 *     to types built from it; a STRUCT without explicit bounds has its extent rounded up
 *     to the alignment of its strictest member (as C pads a struct).
 * Caveats: a type whose flattening needs more than XM_DT_MAX_BLOCKS blocks (e.g. a huge
 *   contiguous of a non-contiguous struct) is refused with -ENOMEM: the flattened form
 *   has no repetition level above "strided block".
 *   SUBARRAY is built as resized(hindexed(1, start offset, hvector(...contiguous))),
 *   DARRAY as resized(hindexed(runs, resized(hindexed(runs, ...)))) with one level per
 *   dimension (the runs of global indices this process owns); both keep that type as
 *   ->inner and report their own combiner and arguments.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"

#define XM_DT_MAX_BLOCKS (1 << 22) /* 4 Mi blocks = 128 MiB: refuse more */

struct blist {
    struct xm_dt_block *b;
    int n, cap;
};

/* Append count pieces of len bytes at disp + k * stride, merging with the last block. */
static int emit(struct blist *l, MPI_Aint disp, size_t len, size_t count, MPI_Aint stride)
{
    if (len == 0 || count == 0)
        return 0;
    if (count > 1 && stride == (MPI_Aint)len) {
        len *= count;
        count = 1;
    }
    if (count == 1)
        stride = 0;
    if (l->n) {
        struct xm_dt_block *t = &l->b[l->n - 1];
        if (count == 1 && t->count == 1 && t->disp + (MPI_Aint)t->len == disp) {
            t->len += len;
            return 0;
        }
        if (count == 1 && t->len == len) {
            if (t->count == 1) {
                t->stride = disp - t->disp;
                t->count = 2;
                return 0;
            }
            if (disp == t->disp + (MPI_Aint)t->count * t->stride) {
                t->count++;
                return 0;
            }
        }
    }
    if (l->n == l->cap) {
        if (l->cap >= XM_DT_MAX_BLOCKS)
            return -ENOMEM;
        int cap = l->cap ? 2 * l->cap : 8;
        struct xm_dt_block *nb = realloc(l->b, (size_t)cap * sizeof(*nb));
        if (!nb)
            return -ENOMEM;
        l->b = nb;
        l->cap = cap;
    }
    l->b[l->n++] = (struct xm_dt_block){disp, len, count, stride};
    return 0;
}

/* Number of pieces of a constructor, or -EINVAL when the description is malformed. */
static int npieces(int comb, int ni, const int *ints, int na, int nd)
{
    int n = ni > 0 ? ints[0] : 0;
    if (ni > 0 && n < 0)
        return -EINVAL;
    switch (comb) {
    case MPI_COMBINER_CONTIGUOUS:
        return ni == 1 && na == 0 && nd == 1 ? 1 : -EINVAL;
    case MPI_COMBINER_VECTOR:
        return ni == 3 && na == 0 && nd == 1 && ints[1] >= 0 ? n : -EINVAL;
    case MPI_COMBINER_HVECTOR:
        return ni == 2 && na == 1 && nd == 1 && ints[1] >= 0 ? n : -EINVAL;
    case MPI_COMBINER_INDEXED:
        if (ni < 1 || ni != 2 * n + 1 || na != 0 || nd != 1)
            return -EINVAL;
        for (int i = 0; i < n; i++)
            if (ints[1 + i] < 0)
                return -EINVAL;
        return n;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        if (ni < 1 || ni != n + 1 || na != n ||
            nd != (comb == MPI_COMBINER_STRUCT ? n : 1))
            return -EINVAL;
        for (int i = 0; i < n; i++)
            if (ints[1 + i] < 0)
                return -EINVAL;
        return n;
    case MPI_COMBINER_INDEXED_BLOCK:
        return ni >= 2 && ni == n + 2 && na == 0 && nd == 1 && ints[1] >= 0 ? n : -EINVAL;
    case MPI_COMBINER_HINDEXED_BLOCK:
        return ni == 2 && na == n && nd == 1 && ints[1] >= 0 ? n : -EINVAL;
    case MPI_COMBINER_RESIZED:
        return ni == 0 && na == 2 && nd == 1 ? 1 : -EINVAL;
    case MPI_COMBINER_DUP:
        return ni == 0 && na == 0 && nd == 1 ? 1 : -EINVAL;
    default:
        return -EINVAL;
    }
}

struct piece {
    MPI_Aint d;
    size_t n;
    const struct xm_dtype *o;
};

/* Piece i of a validated description (types[] already checked to exist). */
static void get_piece(int comb, const int *ints, const MPI_Aint *aints,
                      const MPI_Datatype *types, int i, struct piece *p)
{
    int n = comb == MPI_COMBINER_RESIZED || comb == MPI_COMBINER_DUP ? 1 : ints[0];
    p->o = xm_dt_get(types[comb == MPI_COMBINER_STRUCT ? i : 0]);
    MPI_Aint ext = p->o->extent;
    switch (comb) {
    case MPI_COMBINER_CONTIGUOUS:
        *p = (struct piece){0, (size_t)ints[0], p->o};
        break;
    case MPI_COMBINER_VECTOR:
        *p = (struct piece){(MPI_Aint)i * ints[2] * ext, (size_t)ints[1], p->o};
        break;
    case MPI_COMBINER_HVECTOR:
        *p = (struct piece){(MPI_Aint)i * aints[0], (size_t)ints[1], p->o};
        break;
    case MPI_COMBINER_INDEXED:
        *p = (struct piece){(MPI_Aint)ints[1 + n + i] * ext, (size_t)ints[1 + i], p->o};
        break;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        *p = (struct piece){aints[i], (size_t)ints[1 + i], p->o};
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        *p = (struct piece){(MPI_Aint)ints[2 + i] * ext, (size_t)ints[1], p->o};
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        *p = (struct piece){aints[i], (size_t)ints[1], p->o};
        break;
    default: /* RESIZED, DUP */
        *p = (struct piece){0, 1, p->o};
    }
}

static int flatten_piece(struct blist *l, const struct piece *p)
{
    const struct xm_dtype *o = p->o;
    if (p->n == 0 || o->size == 0)
        return 0;
    if (o->nblocks == 1 && o->blocks[0].count == 1) {
        const struct xm_dt_block *s = &o->blocks[0];
        if ((MPI_Aint)s->len == o->extent) /* copies touch: one block */
            return emit(l, p->d + s->disp, s->len * p->n, 1, 0);
        return emit(l, p->d + s->disp, s->len, p->n, o->extent);
    }
    for (size_t j = 0; j < p->n; j++) {
        MPI_Aint base = p->d + (MPI_Aint)j * o->extent;
        for (int b = 0; b < o->nblocks; b++) {
            const struct xm_dt_block *s = &o->blocks[b];
            int rc = emit(l, base + s->disp, s->len, s->count, s->stride);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static MPI_Aint amin(MPI_Aint a, MPI_Aint b)
{
    return a < b ? a : b;
}
static MPI_Aint amax(MPI_Aint a, MPI_Aint b)
{
    return a > b ? a : b;
}

/* t is resized(...chain...) equivalent to a SUBARRAY/DARRAY: give it that combiner and
 * contents (ints, old) and keep the chain as ->inner. */
static int adopt(struct xm_dtype *t, int comb, int ni, const int *ints, MPI_Datatype old,
                 struct xm_dtype **out)
{
    int *ci = malloc((size_t)ni * sizeof(int));
    MPI_Datatype *ct = malloc(sizeof(MPI_Datatype));
    if (!ci || !ct) {
        free(ci);
        free(ct);
        xm_dt_unref(t);
        return -ENOMEM;
    }
    memcpy(ci, ints, (size_t)ni * sizeof(int));
    ct[0] = old;
    t->inner = t->types[0]; /* the reference t took on it moves to ->inner */
    free(t->ints);
    free(t->aints);
    free(t->types);
    t->ints = ci;
    t->aints = NULL;
    t->types = ct;
    t->nints = ni;
    t->naints = 0;
    t->ntypes = 1;
    t->combiner = comb;
    xm_dt_ref(xm_dt_get(old));
    *out = t;
    return 0;
}

static int subarray(int ni, const int *ints, int na, int nd, const MPI_Datatype *types,
                    struct xm_dtype **out)
{
    int n = ni > 0 ? ints[0] : 0;
    if (n < 1 || ni != 3 * n + 2 || na != 0 || nd != 1 || !xm_dt_get(types[0]))
        return -EINVAL;
    const int *sizes = ints + 1, *sub = ints + 1 + n, *start = ints + 1 + 2 * n;
    int order = ints[1 + 3 * n];
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (sizes[i] < 1 || sub[i] < 1 || start[i] < 0 || start[i] > sizes[i] - sub[i])
            return -EINVAL;
    MPI_Aint stride = xm_dt_get(types[0])->extent, disp = 0;
    MPI_Datatype cur = types[0];
    struct xm_dtype *t = NULL, *prev = NULL;
    int rc = 0;
    for (int k = 0; k < n; k++) {
        int d =
            order == MPI_ORDER_C ? n - 1 - k : k; /* fastest-varying dimension first */
        if (k == 0) {
            rc = xm_dt_create(MPI_COMBINER_CONTIGUOUS, 1, &sub[d], 0, NULL, 1, &cur, &t);
        } else {
            int v[2] = {sub[d], 1};
            rc = xm_dt_create(MPI_COMBINER_HVECTOR, 2, v, 1, &stride, 1, &cur, &t);
        }
        if (rc)
            break;
        disp += start[d] * stride;
        stride *= sizes[d];
        if (prev)
            xm_dt_unref(prev); /* t holds it now */
        prev = t;
        cur = t->handle;
    }
    if (!rc) {
        int v[2] = {1, 1};
        rc = xm_dt_create(MPI_COMBINER_HINDEXED, 2, v, 1, &disp, 1, &cur, &t);
        if (!rc) {
            xm_dt_unref(prev);
            prev = t;
            cur = t->handle;
        }
    }
    if (!rc) {
        MPI_Aint a[2] = {0, stride};
        rc = xm_dt_create(MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &cur, &t);
    }
    if (prev)
        xm_dt_unref(prev); /* success: t holds the chain; failure: frees it */
    if (rc)
        return rc;
    return adopt(t, MPI_COMBINER_SUBARRAY, ni, ints, types[0], out);
}

/* One dimension of a DARRAY: the runs (start, len) of global indices this process owns.
 */
static int darray_runs(int g, int distrib, int darg, int p, int c, int **runs, int *nruns)
{
    int b;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if (p != 1)
            return -EINVAL;
        b = g;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        if (b < 1 || (long)b * p < g)
            return -EINVAL;
    } else if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (b < 1)
            return -EINVAL;
    } else {
        return -EINVAL;
    }
    long step = distrib == MPI_DISTRIBUTE_CYCLIC ? (long)p * b : (long)g + 1;
    int n = 0, *r = malloc(2 * sizeof(int) * ((size_t)g / (size_t)b + 2));
    if (!r)
        return -ENOMEM;
    for (long st = (long)c * b; st < g; st += step) {
        r[2 * n] = (int)st;
        r[2 * n + 1] = (int)(st + b > g ? g - st : b);
        n++;
    }
    *runs = r;
    *nruns = n;
    return 0;
}

static int darray(int ni, const int *ints, int na, int nd, const MPI_Datatype *types,
                  struct xm_dtype **out)
{
    if (ni < 4 || na != 0 || nd != 1 || !xm_dt_get(types[0]))
        return -EINVAL;
    int size = ints[0], rank = ints[1], n = ints[2];
    if (n < 1 || ni != 4 * n + 4 || size < 1 || rank < 0 || rank >= size)
        return -EINVAL;
    const int *gs = ints + 3, *dist = ints + 3 + n, *darg = ints + 3 + 2 * n,
              *ps = ints + 3 + 3 * n;
    int order = ints[3 + 4 * n];
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return -EINVAL;
    long prod = 1;
    for (int i = 0; i < n; i++) {
        if (gs[i] < 1 || ps[i] < 1)
            return -EINVAL;
        prod *= ps[i];
    }
    if (prod != size)
        return -EINVAL;
    MPI_Aint stride = xm_dt_get(types[0])->extent;
    MPI_Datatype cur = types[0];
    struct xm_dtype *t = NULL, *prev = NULL;
    int rc = 0;
    for (int k = 0; k < n && !rc; k++) {
        int d = order == MPI_ORDER_C ? n - 1 - k : k; /* fastest-varying first */
        /* process grid is row-major: coordinate of rank in dimension d */
        long below = 1;
        for (int j = d + 1; j < n; j++)
            below *= ps[j];
        int coord = (int)(rank / below % ps[d]);
        int *runs = NULL, nr = 0;
        if ((rc = darray_runs(gs[d], dist[d], darg[d], ps[d], coord, &runs, &nr)))
            break;
        if (k > 0) { /* the previous level must step by one full row of this dimension */
            MPI_Aint a[2] = {0, stride};
            rc = xm_dt_create(MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &cur, &t);
            if (!rc) {
                xm_dt_unref(prev);
                prev = t;
                cur = t->handle;
            }
        }
        int *v = rc ? NULL : malloc(((size_t)nr + 1) * sizeof(int));
        MPI_Aint *dd = rc ? NULL : malloc(((size_t)nr + 1) * sizeof(MPI_Aint));
        if (!rc && (!v || !dd))
            rc = -ENOMEM;
        if (!rc) {
            v[0] = nr;
            for (int i = 0; i < nr; i++) {
                v[1 + i] = runs[2 * i + 1];
                dd[i] = (MPI_Aint)runs[2 * i] * stride;
            }
            rc = xm_dt_create(MPI_COMBINER_HINDEXED, nr + 1, v, nr, dd, 1, &cur, &t);
        }
        free(v);
        free(dd);
        free(runs);
        if (rc)
            break;
        if (prev)
            xm_dt_unref(prev);
        prev = t;
        cur = t->handle;
        stride *= gs[d];
    }
    if (!rc) {
        MPI_Aint a[2] = {0, stride};
        rc = xm_dt_create(MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &cur, &t);
    }
    if (prev)
        xm_dt_unref(prev);
    if (rc)
        return rc;
    return adopt(t, MPI_COMBINER_DARRAY, ni, ints, types[0], out);
}

int xm_dt_create(int comb, int ni, const int *ints, int na, const MPI_Aint *aints, int nd,
                 const MPI_Datatype *types, struct xm_dtype **out)
{
    if (comb == MPI_COMBINER_SUBARRAY || comb == MPI_COMBINER_DARRAY) {
        if (ni <= 0 || !ints || (nd && !types))
            return -EINVAL;
        return comb == MPI_COMBINER_SUBARRAY ? subarray(ni, ints, na, nd, types, out)
                                             : darray(ni, ints, na, nd, types, out);
    }
    if (ni < 0 || na < 0 || nd < 0 || (ni && !ints) || (na && !aints) || (nd && !types))
        return -EINVAL;
    int np = npieces(comb, ni, ints, na, nd);
    if (np < 0)
        return np;
    for (int i = 0; i < nd; i++)
        if (!xm_dt_get(types[i]))
            return -EINVAL;
    struct xm_dtype *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    struct blist l = {0};
    int rc = 0, have_data = 0, have_mlb = 0, have_mub = 0, have_ulb = 0, have_uub = 0;
    MPI_Aint mlb = 0, mub = 0, ulb = 0, uub = 0, tlb = 0, tub = 0;
    t->align = 1;
    t->basic = MPI_DATATYPE_NULL;
    int basic_set = 0;
    for (int i = 0; i < np && !rc; i++) {
        struct piece p;
        get_piece(comb, ints, aints, types, i, &p);
        const struct xm_dtype *o = p.o;
        if (p.n == 0)
            continue;
        if (o->handle == MPI_LB || o->handle == MPI_UB) {
            if (o->handle == MPI_LB)
                mlb = have_mlb++ ? amin(mlb, p.d) : p.d;
            else
                mub = have_mub++ ? amax(mub, p.d) : p.d;
            continue;
        }
        MPI_Aint span = (MPI_Aint)(p.n - 1) * o->extent;
        MPI_Aint lo = amin(0, span), hi = amax(0, span);
        MPI_Aint lb = p.d + o->lb + lo, ub = p.d + o->lb + o->extent + hi;
        if (o->lb_marked)
            mlb = have_mlb++ ? amin(mlb, lb) : lb;
        else
            ulb = have_ulb++ ? amin(ulb, lb) : lb;
        if (o->ub_marked)
            mub = have_mub++ ? amax(mub, ub) : ub;
        else
            uub = have_uub++ ? amax(uub, ub) : ub;
        if (o->size) {
            MPI_Aint a = p.d + o->true_lb + lo,
                     z = p.d + o->true_lb + o->true_extent + hi;
            tlb = have_data ? amin(tlb, a) : a;
            tub = have_data ? amax(tub, z) : z;
            have_data = 1;
            if (!basic_set) {
                t->basic = o->basic;
                basic_set = 1;
            } else if (t->basic != o->basic) {
                t->basic = MPI_DATATYPE_NULL;
            }
        }
        t->size += p.n * o->size;
        t->nelem += p.n * o->nelem;
        t->align = amax(t->align, o->align);
        rc = flatten_piece(&l, &p);
    }
    if (rc) {
        free(l.b);
        free(t);
        return rc;
    }
    t->lb_marked = have_mlb;
    t->ub_marked = have_mub;
    t->lb = have_mlb ? mlb : have_ulb ? ulb : 0;
    MPI_Aint ub = have_mub ? mub : have_uub ? uub : 0;
    if (have_mlb && !have_mub && !have_uub)
        ub = t->lb;
    t->extent = ub - t->lb;
    if (comb == MPI_COMBINER_STRUCT && !have_mlb && !have_mub && t->extent % t->align)
        t->extent += t->align - t->extent % t->align;
    if (comb == MPI_COMBINER_RESIZED) {
        t->lb = aints[0];
        t->extent = aints[1];
        t->lb_marked = t->ub_marked = 1;
    }
    if (comb == MPI_COMBINER_DUP) {
        const struct xm_dtype *o = xm_dt_get(types[0]);
        t->lb_marked = o->lb_marked;
        t->ub_marked = o->ub_marked;
    }
    t->true_lb = have_data ? tlb : 0;
    t->true_extent = have_data ? tub - tlb : 0;
    t->blocks = l.b;
    t->nblocks = l.n;
    t->bpos = malloc(((size_t)l.n + 1) * sizeof(size_t));
    t->combiner = comb;
    t->ints = ni ? malloc((size_t)ni * sizeof(int)) : NULL;
    t->aints = na ? malloc((size_t)na * sizeof(MPI_Aint)) : NULL;
    t->types = nd ? malloc((size_t)nd * sizeof(MPI_Datatype)) : NULL;
    if (!t->bpos || (ni && !t->ints) || (na && !t->aints) || (nd && !t->types)) {
        free(t->bpos);
        free(t->ints);
        free(t->aints);
        free(t->types);
        free(l.b);
        free(t);
        return -ENOMEM;
    }
    t->bpos[0] = 0;
    for (int b = 0; b < l.n; b++)
        t->bpos[b + 1] = t->bpos[b] + l.b[b].len * l.b[b].count;
    t->contig = l.n == 1 && l.b[0].count == 1 && (MPI_Aint)t->size == t->extent;
    if (t->size == 0) /* nothing to move: any layout is "contiguous" */
        t->contig = 1;
    t->nints = ni;
    t->naints = na;
    t->ntypes = nd;
    if (ni)
        memcpy(t->ints, ints, (size_t)ni * sizeof(int));
    if (na)
        memcpy(t->aints, aints, (size_t)na * sizeof(MPI_Aint));
    if (nd)
        memcpy(t->types, types, (size_t)nd * sizeof(MPI_Datatype));
    t->refs = 1;
    if ((rc = xm_dt_register(t)) < 0) {
        t->ntypes = 0;
        t->handle = 0;
        free(t->bpos);
        free(t->ints);
        free(t->aints);
        free(t->types);
        free(l.b);
        free(t);
        return rc;
    }
    for (int i = 0; i < nd; i++)
        xm_dt_ref(xm_dt_get(types[i]));
    *out = t;
    return 0;
}

/* ---- basic-element counting (Get_elements, Status_set_elements) ----------------- */

static int pair_first(const struct xm_dtype *t, size_t *first)
{
    if (t->combiner != MPI_COMBINER_NAMED || t->nelem != 2)
        return 0;
    size_t second = t->handle == MPI_2DOUBLE_PRECISION ? sizeof(double)
                    : t->handle == MPI_2REAL           ? sizeof(float)
                                                       : sizeof(int);
    *first = t->size - second;
    return 1;
}

/* Count basic elements in at most *bytes of one element of t; *bytes is reduced by
 * the bytes of the elements counted. */
static size_t elems_in(const struct xm_dtype *t, size_t *bytes)
{
    if (*bytes >= t->size) {
        *bytes -= t->size;
        return t->nelem;
    }
    if (t->inner)
        return elems_in(xm_dt_get(t->inner), bytes);
    size_t first, cnt = 0;
    if (t->combiner == MPI_COMBINER_NAMED) {
        if (pair_first(t, &first) && *bytes >= first) {
            *bytes -= first;
            return 1;
        }
        return 0;
    }
    int np = npieces(t->combiner, t->nints, t->ints, t->naints, t->ntypes);
    for (int i = 0; i < np; i++) {
        struct piece p;
        get_piece(t->combiner, t->ints, t->aints, t->types, i, &p);
        if (p.o->size == 0 || p.n == 0)
            continue;
        size_t m = *bytes / p.o->size;
        if (m > p.n)
            m = p.n;
        cnt += m * p.o->nelem;
        *bytes -= m * p.o->size;
        if (m < p.n)
            return cnt + elems_in(p.o, bytes);
    }
    return cnt;
}

int xm_dt_bytes_to_elems(const struct xm_dtype *t, size_t bytes, size_t *elems)
{
    if (t->size == 0) {
        *elems = 0;
        return bytes ? -EINVAL : 0;
    }
    size_t rem = bytes % t->size;
    *elems = bytes / t->size * t->nelem + elems_in(t, &rem);
    return rem ? -EINVAL : 0;
}

/* Bytes of the first *e basic elements of one element of t; *e is reduced. */
static size_t bytes_in(const struct xm_dtype *t, size_t *e)
{
    if (*e >= t->nelem) {
        *e -= t->nelem;
        return t->size;
    }
    if (t->inner)
        return bytes_in(xm_dt_get(t->inner), e);
    size_t first, bytes = 0;
    if (t->combiner == MPI_COMBINER_NAMED) {
        if (pair_first(t, &first) && *e >= 1) {
            *e -= 1;
            return first;
        }
        return 0;
    }
    int np = npieces(t->combiner, t->nints, t->ints, t->naints, t->ntypes);
    for (int i = 0; i < np; i++) {
        struct piece p;
        get_piece(t->combiner, t->ints, t->aints, t->types, i, &p);
        if (p.o->nelem == 0 || p.n == 0)
            continue;
        size_t m = *e / p.o->nelem;
        if (m > p.n)
            m = p.n;
        bytes += m * p.o->size;
        *e -= m * p.o->nelem;
        if (m < p.n)
            return bytes + bytes_in(p.o, e);
    }
    return bytes;
}

size_t xm_dt_elems_to_bytes(const struct xm_dtype *t, size_t elems)
{
    if (t->nelem == 0)
        return 0;
    size_t rem = elems % t->nelem;
    return elems / t->nelem * t->size + bytes_in(t, &rem);
}

/* ---- element visitor (Pack_external) ------------------------------------------------
 */

static int pair_members(MPI_Datatype h, MPI_Datatype *a, MPI_Datatype *b)
{
    *b = MPI_INT;
    switch (h) {
    case MPI_FLOAT_INT:
        *a = MPI_FLOAT;
        return 1;
    case MPI_DOUBLE_INT:
        *a = MPI_DOUBLE;
        return 1;
    case MPI_LONG_INT:
        *a = MPI_LONG;
        return 1;
    case MPI_2INT:
        *a = MPI_INT;
        return 1;
    case MPI_SHORT_INT:
        *a = MPI_SHORT;
        return 1;
    case MPI_LONG_DOUBLE_INT:
        *a = MPI_LONG_DOUBLE;
        return 1;
    case MPI_2INTEGER:
        *a = *b = MPI_INTEGER;
        return 1;
    case MPI_2REAL:
        *a = *b = MPI_REAL;
        return 1;
    case MPI_2DOUBLE_PRECISION:
        *a = *b = MPI_DOUBLE_PRECISION;
        return 1;
    default:
        return 0;
    }
}

int xm_dt_visit(const void *buf, int count, const struct xm_dtype *t,
                int (*f)(void *ctx, char *addr, MPI_Datatype basic), void *ctx)
{
    char *origin = (char *)buf;
    for (int e = 0; e < count; e++, origin += t->extent) {
        int rc = 0;
        if (t->combiner == MPI_COMBINER_NAMED) {
            MPI_Datatype a, b;
            if (t->size == 0)
                continue;
            if (pair_members(t->handle, &a, &b)) {
                rc = f(ctx, origin, a);
                if (!rc)
                    rc = f(ctx,
                           origin + (t->nblocks == 2 ? t->blocks[1].disp
                                                     : (MPI_Aint)XM_DT_SIZE(a)),
                           b);
            } else {
                rc = f(ctx, origin, t->handle);
            }
        } else if (t->inner) {
            rc = xm_dt_visit(origin, 1, xm_dt_get(t->inner), f, ctx);
        } else {
            int np = npieces(t->combiner, t->nints, t->ints, t->naints, t->ntypes);
            for (int i = 0; i < np && !rc; i++) {
                struct piece p;
                get_piece(t->combiner, t->ints, t->aints, t->types, i, &p);
                if (p.n && p.o->size)
                    rc = xm_dt_visit(origin + p.d, (int)p.n, p.o, f, ctx);
            }
        }
        if (rc)
            return rc;
    }
    return 0;
}
