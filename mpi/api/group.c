/*
 * group.c - MPI group operations.  A group is an ordered list of world ranks
 *           (core/comm.c keeps the table); every operation builds a new list.
 * Contract: ranks out of range, duplicates in incl/excl and bad ranges are
 *   MPI_ERR_RANK / MPI_ERR_ARG; results that are empty are MPI_GROUP_EMPTY.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/comm.h"

XM_WEAK(MPI_Group_size)
XM_WEAK(MPI_Group_rank)
XM_WEAK(MPI_Group_translate_ranks)
XM_WEAK(MPI_Group_compare)
XM_WEAK(MPI_Group_union)
XM_WEAK(MPI_Group_intersection)
XM_WEAK(MPI_Group_difference)
XM_WEAK(MPI_Group_incl)
XM_WEAK(MPI_Group_excl)
XM_WEAK(MPI_Group_range_incl)
XM_WEAK(MPI_Group_range_excl)
XM_WEAK(MPI_Group_free)

#define GETG(g, h, fn)                                                                   \
    struct xm_group *g = xm_group_get(h);                                                \
    if (!g)                                                                              \
    return xm_err(NULL, MPI_ERR_GROUP, fn)

/* new group from n world ranks (w owned); n == 0 gives MPI_GROUP_EMPTY */
static int make(int n, int *w, MPI_Group *out, const char *fn)
{
    if (n == 0) {
        free(w);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    struct xm_group *g = xm_group_new(n, w);
    if (!g)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    *out = g->handle;
    return MPI_SUCCESS;
}

static int *alloc_ranks(int n)
{
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
}

static int find(const struct xm_group *g, int wr)
{
    for (int i = 0; i < g->size; i++)
        if (g->w[i] == wr)
            return i;
    return -1;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    GETG(g, group, "MPI_Group_size");
    *size = g->size;
    return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    GETG(g, group, "MPI_Group_rank");
    *rank = g->rank;
    return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group g1, int n, const int ranks1[], MPI_Group g2,
                               int ranks2[])
{
    GETG(a, g1, "MPI_Group_translate_ranks");
    GETG(b, g2, "MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a->size)
            return xm_err(NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks");
        int r = find(b, a->w[ranks1[i]]);
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group g1, MPI_Group g2, int *result)
{
    GETG(a, g1, "MPI_Group_compare");
    GETG(b, g2, "MPI_Group_compare");
    int r = xm_map_compare(a->size, a->w, b->size, b->w);
    *result = r == MPI_CONGRUENT ? MPI_IDENT : r;
    return MPI_SUCCESS;
}

/* mode 0 union, 1 intersection, 2 difference; order: a's order, then b's (union) */
static int setop(MPI_Group g1, MPI_Group g2, MPI_Group *out, int mode, const char *fn)
{
    GETG(a, g1, fn);
    GETG(b, g2, fn);
    int *w = alloc_ranks(a->size + b->size), n = 0;
    if (!w)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < a->size; i++) {
        int inb = find(b, a->w[i]) >= 0;
        if (mode == 0 || (mode == 1 && inb) || (mode == 2 && !inb))
            w[n++] = a->w[i];
    }
    if (mode == 0)
        for (int i = 0; i < b->size; i++)
            if (find(a, b->w[i]) < 0)
                w[n++] = b->w[i];
    return make(n, w, out, fn);
}

int PMPI_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return setop(g1, g2, newgroup, 0, "MPI_Group_union");
}

int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return setop(g1, g2, newgroup, 1, "MPI_Group_intersection");
}

int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return setop(g1, g2, newgroup, 2, "MPI_Group_difference");
}

/* sel[i] = 1 for the ranks listed; duplicates or out-of-range are errors */
static int mark(const struct xm_group *g, int n, const int ranks[], char *sel)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || sel[ranks[i]])
            return MPI_ERR_RANK;
        sel[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    GETG(g, group, "MPI_Group_incl");
    if (n < 0 || n > g->size)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Group_incl");
    char *sel = calloc((size_t)g->size + 1, 1);
    int *w = alloc_ranks(n);
    if (!sel || !w) {
        free(sel);
        free(w);
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Group_incl");
    }
    int rc = mark(g, n, ranks, sel);
    free(sel);
    if (rc) {
        free(w);
        return xm_err(NULL, rc, "MPI_Group_incl");
    }
    for (int i = 0; i < n; i++)
        w[i] = g->w[ranks[i]];
    return make(n, w, newgroup, "MPI_Group_incl");
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    GETG(g, group, "MPI_Group_excl");
    if (n < 0 || n > g->size)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Group_excl");
    char *sel = calloc((size_t)g->size + 1, 1);
    int *w = alloc_ranks(g->size), k = 0;
    if (!sel || !w) {
        free(sel);
        free(w);
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Group_excl");
    }
    int rc = mark(g, n, ranks, sel);
    for (int i = 0; i < g->size && !rc; i++)
        if (!sel[i])
            w[k++] = g->w[i];
    free(sel);
    if (rc) {
        free(w);
        return xm_err(NULL, rc, "MPI_Group_excl");
    }
    return make(k, w, newgroup, "MPI_Group_excl");
}

/* expand (first, last, stride) triplets into a rank list; NULL + *err on bad input */
static int *expand(const struct xm_group *g, int n, int ranges[][3], int *cnt, int *err)
{
    int total = 0;
    *err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        if (s == 0 || f < 0 || f >= g->size || l < 0 || l >= g->size ||
            (s > 0 && f > l) || (s < 0 && f < l)) {
            *err = MPI_ERR_ARG;
            return NULL;
        }
        total += (l - f) / s + 1;
    }
    int *r = alloc_ranks(total), k = 0;
    if (!r) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        for (int x = ranges[i][0];
             ranges[i][2] > 0 ? x <= ranges[i][1] : x >= ranges[i][1]; x += ranges[i][2])
            r[k++] = x;
    *cnt = k;
    return r;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    GETG(g, group, "MPI_Group_range_incl");
    int cnt, err, *r = expand(g, n, ranges, &cnt, &err);
    if (!r)
        return xm_err(NULL, err, "MPI_Group_range_incl");
    int rc = PMPI_Group_incl(group, cnt, r, newgroup);
    free(r);
    return rc;
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    GETG(g, group, "MPI_Group_range_excl");
    int cnt, err, *r = expand(g, n, ranges, &cnt, &err);
    if (!r)
        return xm_err(NULL, err, "MPI_Group_range_excl");
    int rc = PMPI_Group_excl(group, cnt, r, newgroup);
    free(r);
    return rc;
}

int PMPI_Group_free(MPI_Group *group)
{
    struct xm_group *g = xm_group_get(*group);
    if (!g)
        return xm_err(NULL, MPI_ERR_GROUP, "MPI_Group_free");
    xm_group_unref(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
