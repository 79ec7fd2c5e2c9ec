/*
 * derived.c - derived datatype table (datatype area: constructors go here or beside).
 *
 * Contract: xm_dt_get_derived(h) returns the object of a dynamic datatype handle or
 *   NULL; xm_dt_register() gives a new object its handle; xm_dt_destroy() frees an
 *   object whose last reference went away (and drops its references on the types it
 *   was built from).  The constructors are in flatten.c.
 * Notes: freed slots are not reused (a stale handle then finds NULL, never another
 *   type); the table grows by doubling.
 */
#include <errno.h>
#include <stdlib.h>

#include "dtype.h"

static struct xm_dtype **tab;
static int ntab, captab;

struct xm_dtype *xm_dt_get_derived(MPI_Datatype h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_DTYPE || !(h & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(h);
    return i < ntab ? tab[i] : NULL;
}

int xm_dt_register(struct xm_dtype *t)
{
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
    if (i < ntab && tab[i] == t)
        tab[i] = NULL;
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
