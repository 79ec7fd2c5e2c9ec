/*
 * attr.c - keyvals and the attributes hung on communicators: the keyval table, each
 *          communicator's attribute list, and the copy/delete callbacks that run on
 *          set, delete, Comm_dup/Comm_idup (xm_attr_copy_all) and Comm_free/Finalize
 *          (xm_attr_delete_all).  The MPI calls, their argument checks and the
 *          predefined attributes of MPI_COMM_WORLD are in api/attr.c.
 * Contract: a keyval freed while attributes still use it stays alive (refcount) until
 *   the last such attribute is deleted; its callbacks still run.
 *   MPI_COMM_NULL_COPY_FN (0) copies nothing, MPI_COMM_DUP_FN (1) copies the value.
 *   Functions returning an int give MPI_SUCCESS, MPI_ERR_NO_MEM, or the code a user
 *   callback returned (the MPI call fails with it).  Delete callbacks of a
 *   communicator's attributes run last-set first (xm_attr_delete_all).
 * Notes: the keyval table is process state like the other handle tables.
 */
#include <stdlib.h>

#include "comm.h"

struct keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int refs;  /* 1 for the handle + 1 per attribute using it */
    int freed; /* the handle's reference is gone: a second free is a no-op */
    int flang; /* made from Fortran (bindings/fkeyval.c): callbacks see Fortran's view */
};
static struct keyval **kvs;

/* the language of the attribute call in progress (core/xm.h); exported (libmpi.map,
 * mpipriv_*) for libmpifort, which sets it */
__thread int mpipriv_attr_lang;
static int nkvs;

static struct keyval *kv_get(int h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_KEYVAL || !(h & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(h);
    return i < nkvs ? kvs[i] : NULL;
}

static void kv_unref(int h)
{
    struct keyval *k = kv_get(h);
    if (k && --k->refs == 0) {
        kvs[XM_H_INDEX(h)] = NULL;
        free(k);
    }
}

int xm_keyval_valid(int keyval)
{
    return kv_get(keyval) != NULL;
}

int xm_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                     MPI_Comm_delete_attr_function *delete_fn, void *extra_state,
                     int flang, int *keyval)
{
    struct keyval *k = calloc(1, sizeof(*k));
    int i;
    for (i = 0; i < nkvs; i++)
        if (!kvs[i])
            break;
    if (k && i == nkvs) {
        struct keyval **n = realloc(kvs, (size_t)(nkvs + 16) * sizeof(*n));
        if (n) {
            kvs = n;
            for (int j = 0; j < 16; j++)
                kvs[nkvs + j] = NULL;
            nkvs += 16;
        } else {
            free(k);
            k = NULL;
        }
    }
    if (!k)
        return MPI_ERR_NO_MEM;
    k->copy = copy_fn;
    k->del = delete_fn;
    k->extra = extra_state;
    k->refs = 1;
    k->flang = flang;
    kvs[i] = k;
    *keyval = XM_H_MAKE(XM_K_KEYVAL, 1, i);
    return MPI_SUCCESS;
}

void xm_keyval_free(int keyval)
{
    struct keyval *k = kv_get(keyval);
    /* a keyval still used by attributes may be freed again (a delete callback freeing
     * its own keyval, then the program): the handle's reference goes once */
    if (k && !k->freed) {
        k->freed = 1;
        kv_unref(keyval);
    }
}

static struct xm_attr **find(struct xm_comm *c, int keyval)
{
    struct xm_attr **pp = &c->attrs;
    while (*pp && (*pp)->keyval != keyval)
        pp = &(*pp)->next;
    return pp;
}

struct xm_attr *xm_attr_find(struct xm_comm *c, int keyval)
{
    return *find(c, keyval);
}

static struct xm_attr *deleting; /* attribute whose delete callback runs now */

/* run the delete callback of *pp and unlink it.  The callback may use the attribute
 * functions on the same communicator (set other attributes, read this one): the list
 * is searched again afterwards, and a nested delete of this very attribute is left to
 * the outer call. */
static int del_attr(struct xm_comm *c, struct xm_attr **pp)
{
    struct xm_attr *a = *pp;
    if (a == deleting)
        return MPI_SUCCESS;
    struct keyval *k = kv_get(a->keyval);
    if (k && k->del) {
        struct xm_attr *outer = deleting;
        deleting = a;
        int rc = k->del(c->handle, a->keyval, xm_attr_view(a, k->flang), k->extra);
        deleting = outer;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (pp = &c->attrs; *pp && *pp != a; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = a->next;
    kv_unref(a->keyval);
    free(a);
    return MPI_SUCCESS;
}

int xm_attr_set(struct xm_comm *c, int keyval, void *val, int lang)
{
    struct keyval *k = kv_get(keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    struct xm_attr **pp = find(c, keyval);
    if (*pp) { /* replacing: the old value is deleted first */
        struct xm_attr *old = *pp, *outer = deleting;
        if (k->del) {
            deleting = old; /* a nested delete of it is left to us */
            int rc = k->del(c->handle, keyval, xm_attr_view(old, k->flang), k->extra);
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
    a->keyval = keyval;
    xm_attr_store(a, val, lang);
    /* prepended: xm_attr_delete_all (Comm_free, and MPI_Finalize on COMM_SELF) runs the
     * delete callbacks last-set first, as MPI-3.1 §8.7.1 asks of COMM_SELF's */
    a->next = c->attrs;
    c->attrs = a;
    k->refs++;
    return MPI_SUCCESS;
}

int xm_attr_delete(struct xm_comm *c, int keyval)
{
    struct xm_attr **pp = find(c, keyval);
    return *pp ? del_attr(c, pp) : MPI_ERR_KEYVAL;
}

int xm_attr_copy_all(struct xm_comm *from, struct xm_comm *to)
{
    struct xm_attr **tail = &to->attrs;
    for (struct xm_attr *a = from->attrs; a; a = a->next) {
        struct keyval *k = kv_get(a->keyval);
        if (!k || k->copy == MPI_COMM_NULL_COPY_FN)
            continue;
        void *in = xm_attr_view(a, k->flang), *out = in;
        int flag = 1;
        if (k->copy != MPI_COMM_DUP_FN) {
            flag = 0;
            int rc = k->copy(from->handle, a->keyval, k->extra, in, &out, &flag);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (!flag)
            continue;
        struct xm_attr *n = malloc(sizeof(*n));
        if (!n)
            return MPI_ERR_NO_MEM;
        n->keyval = a->keyval;
        xm_attr_copied(n, a, out, k->flang);
        n->next = NULL;
        *tail = n;
        tail = &n->next;
        k->refs++;
    }
    return MPI_SUCCESS;
}

int xm_attr_delete_all(struct xm_comm *c)
{
    while (c->attrs) {
        int rc = del_attr(c, &c->attrs);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
