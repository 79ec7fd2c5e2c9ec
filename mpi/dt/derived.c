/*
 * derived.c - derived datatype table (constructors go here or beside).
 *
 * Contract: xm_dt_get_derived(h) returns the object of a dynamic datatype handle or
 *   NULL; xm_dt_register() gives a new object its handle; xm_dt_destroy() frees an
 *   object whose last reference went away (and drops its references on the types it
 *   was built from).  The constructors are in flatten.c.
 * Notes: freed slots are reused, the last freed first (as MPICH and Open MPI do: some
 *   programs, MPICH's datatype/indexed_misc among them, build a type from a handle they
 *   freed just before creating its replacement); so a program that creates and frees
 *   types in a loop keeps a small table and never runs out of the 2^23 handle indexes.
 *   A stale handle finds NULL until its slot is taken again.  The table grows by
 *   doubling.
 */
#include <errno.h>
#include <stdlib.h>

#include "dtype.h"

static struct xm_dtype **tab;
static int ntab, captab;
static int *freed, nfreed, capfreed; /* free slots of tab, the last freed on top */

struct xm_dtype *xm_dt_get_derived(MPI_Datatype h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_DTYPE || !(h & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(h);
    return i < ntab ? tab[i] : NULL;
}

int xm_dt_register(struct xm_dtype *t)
{
    if (nfreed > 0) {
        int i = freed[--nfreed];
        tab[i] = t;
        t->handle = XM_H_MAKE(XM_K_DTYPE, 1, i);
        return 0;
    }
    if (ntab > (int)XM_H_INDEX(-1))
        return -ENOMEM; /* every handle index is live */
    if (ntab == captab) {
        int cap = captab ? 2 * captab : 64;
        struct xm_dtype **n = realloc(tab, (size_t)cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        tab = n;
        captab = cap;
    }
    tab[ntab] = t;
    t->handle = XM_H_MAKE(XM_K_DTYPE, 1, ntab);
    ntab++;
    return 0;
}

void xm_dt_destroy(struct xm_dtype *t)
{
    int i = (int)XM_H_INDEX(t->handle);
    if (i < ntab && tab[i] == t) {
        tab[i] = NULL;
        if (nfreed == capfreed) {
            int cap = capfreed ? 2 * capfreed : 64;
            int *n = realloc(freed, (size_t)cap * sizeof(*n));
            if (n) {
                freed = n;
                capfreed = cap;
            }
        }
        if (nfreed < capfreed) /* else the slot is just not reused */
            freed[nfreed++] = i;
    }
    if (t->inner)
        xm_dt_unref(xm_dt_get(t->inner));
    for (int k = 0; k < t->ntypes; k++)
        xm_dt_unref(xm_dt_get(t->types[k]));
    free(t->blocks);
    free(t->bpos);
    free(t->ints);
    free(t->aints);
    free(t->types);
    free(t);
}
