/*
 * winattr.c - window keyvals and user attributes on windows (MPI-3.1 6.7.3):
 *             MPI_Win_create_keyval / free_keyval, and the attribute lists behind
 *             MPI_Win_set_attr / get_attr / delete_attr (their entry points are in
 *             api/rma.c, which owns the window error handlers and answers the
 *             predefined MPI_WIN_* keys) and the delete callbacks MPI_Win_free runs
 *             (xm_win_attr_delete_all).
 * Contract: as communicator keyvals (core/attr.c): a keyval freed while attributes still
 *   use it lives until the last of them is deleted and its callbacks still run; a
 *   callback returning other than MPI_SUCCESS fails the call with that code; the delete
 *   callbacks of a window run last-set first.  Windows are never duplicated, so the
 *   copy callback is stored and never called.  Window keyvals are handles of kind
 *   KEYVAL with an index bit of their own (WKV_BIT): a communicator or type keyval
 *   given to a window call is MPI_ERR_KEYVAL, and the other way round.
 */
#include <stdlib.h>

#include "../core/xm.h"
#include "../core/comm.h"
#include "../rma/rma.h"

XM_WEAK(MPI_Win_create_keyval)
XM_WEAK(MPI_Win_free_keyval)

#define WKV_BIT 0x200000
struct wkv {
    MPI_Win_copy_attr_function *copy;
    MPI_Win_delete_attr_function *del;
    void *extra;
    int refs;  /* 1 for the handle + 1 per attribute using it */
    int freed; /* the handle's reference is gone: a 2nd free is a no-op (core/attr.c) */
    int flang; /* created from Fortran: callbacks see Fortran's view (core/xm.h) */
};
static struct wkv **wkvs; /* process state, like every handle table */
static int nwkvs;

static struct wkv *wkv_get(int h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_KEYVAL || !(h & XM_H_DYN) ||
        !(XM_H_INDEX(h) & WKV_BIT))
        return NULL;
    unsigned i = XM_H_INDEX(h) & ~(unsigned)WKV_BIT;
    return i < (unsigned)nwkvs ? wkvs[i] : NULL;
}

static void wkv_unref(int h)
{
    struct wkv *k = wkv_get(h);
    if (k && --k->refs == 0) {
        wkvs[XM_H_INDEX(h) & ~(unsigned)WKV_BIT] = NULL;
        free(k);
    }
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                           MPI_Win_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state)
{
    static const char fn[] = "MPI_Win_create_keyval";
    int flang = xm_attr_lang_take();
    if (!keyval)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int i;
    for (i = 0; i < nwkvs && wkvs[i]; i++)
        ;
    if (i == nwkvs) {
        if (nwkvs >= WKV_BIT - 16)
            return xm_err(NULL, MPI_ERR_NO_MEM, fn);
        struct wkv **n = realloc(wkvs, ((size_t)nwkvs + 16) * sizeof(*n));
        if (!n)
            return xm_err(NULL, MPI_ERR_NO_MEM, fn);
        wkvs = n;
        for (int j = 0; j < 16; j++)
            wkvs[nwkvs + j] = NULL;
        nwkvs += 16;
    }
    struct wkv *k = malloc(sizeof(*k));
    if (!k)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
    *k = (struct wkv){copy_fn, delete_fn, extra_state, 1, 0, flang};
    wkvs[i] = k;
    *keyval = XM_H_MAKE(XM_K_KEYVAL, 1, WKV_BIT | (unsigned)i);
    return MPI_SUCCESS;
}

int PMPI_Win_free_keyval(int *keyval)
{
    struct wkv *k = keyval ? wkv_get(*keyval) : NULL;
    if (!k)
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Win_free_keyval");
    if (!k->freed) {
        k->freed = 1;
        wkv_unref(*keyval);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static struct xm_attr **find(struct xm_win *w, int keyval)
{
    struct xm_attr **pp = &w->attrs;
    while (*pp && (*pp)->keyval != keyval)
        pp = &(*pp)->next;
    return pp;
}

/* As core/attr.c: a delete callback may use the attribute calls on its own window; a
 * nested delete of the attribute being deleted is left to the outer call, and the list
 * is searched again afterwards. */
static struct xm_attr *deleting;

static int del_attr(struct xm_win *w, struct xm_attr *a)
{
    if (a == deleting)
        return MPI_SUCCESS;
    struct wkv *k = wkv_get(a->keyval);
    if (k && k->del) {
        struct xm_attr *outer = deleting;
        deleting = a;
        int rc = k->del(w->handle, a->keyval, xm_attr_view(a, k->flang), k->extra);
        deleting = outer;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    struct xm_attr **pp;
    for (pp = &w->attrs; *pp && *pp != a; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = a->next;
    wkv_unref(a->keyval);
    free(a);
    return MPI_SUCCESS;
}

/* MPI_ERR_* class through the window's error handler is the caller's (api/rma.c owns
 * the window error handlers): these return the class only. */
int xm_win_attr_set(struct xm_win *w, int keyval, void *val)
{
    int lang = xm_attr_lang_take();
    struct wkv *k = wkv_get(keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    struct xm_attr *old = *find(w, keyval);
    if (old) { /* replacing: the old value is deleted first */
        if (k->del && old != deleting) {
            struct xm_attr *outer = deleting;
            deleting = old;
            int rc = k->del(w->handle, keyval, xm_attr_view(old, k->flang), k->extra);
            deleting = outer;
            if (rc != MPI_SUCCESS)
                return rc;
        }
        xm_attr_store(old, val, lang);
        return MPI_SUCCESS;
    }
    struct xm_attr *a = malloc(sizeof(*a));
    if (!a)
        return MPI_ERR_NO_MEM;
    *a = (struct xm_attr){.next = w->attrs, .keyval = keyval}; /* prepended: deleted last-set first */
    xm_attr_store(a, val, lang);
    w->attrs = a;
    k->refs++;
    return MPI_SUCCESS;
}

int xm_win_attr_get(struct xm_win *w, int keyval, void *val, int *flag)
{
    int lang = xm_attr_lang_take();
    if (!wkv_get(keyval))
        return MPI_ERR_KEYVAL;
    struct xm_attr *a = *find(w, keyval);
    *flag = a != NULL;
    if (a)
        *(void **)val = xm_attr_view(a, lang);
    return MPI_SUCCESS;
}

int xm_win_attr_delete(struct xm_win *w, int keyval)
{
    if (!wkv_get(keyval))
        return MPI_ERR_KEYVAL;
    struct xm_attr *a = *find(w, keyval);
    if (!a)
        return MPI_ERR_KEYVAL;
    return del_attr(w, a);
}

int xm_win_attr_delete_all(struct xm_win *w)
{
    while (w->attrs) {
        int rc = del_attr(w, w->attrs);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
