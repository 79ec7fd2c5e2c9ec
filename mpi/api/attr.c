/*
 * attr.c - keyvals and communicator attributes: Comm_create_keyval/free_keyval,
 *          Comm_set/get/delete_attr and their MPI-1 names (Keyval_*, Attr_*), the
 *          predefined attributes of MPI_COMM_WORLD (TAG_UB, UNIVERSE_SIZE, APPNUM,
 *          LASTUSEDCODE, ...), and the copy/delete callbacks run by Comm_dup / Comm_free.
 * Contract: a keyval freed while attributes still use it stays alive (refcount) until
 *   the last such attribute is deleted; its callbacks still run.
 *   MPI_COMM_NULL_COPY_FN (0) copies nothing, MPI_COMM_DUP_FN (1) copies the value.
 *   A callback returning other than MPI_SUCCESS fails the call with that code.
 *   Delete callbacks of a communicator's attributes run last-set first (Comm_free, and
 *   MPI_Finalize, which deletes COMM_SELF's before it tears anything down).
 * Notes: the keyval table is process state like the other handle tables.
 */
#include <errno.h>
#include <stdlib.h>

#include "../core/comm.h"

XM_WEAK(MPI_Comm_create_keyval)
XM_WEAK(MPI_Comm_free_keyval)
XM_WEAK(MPI_Comm_set_attr)
XM_WEAK(MPI_Comm_get_attr)
XM_WEAK(MPI_Comm_delete_attr)
XM_WEAK(MPI_Keyval_create)
XM_WEAK(MPI_Keyval_free)
XM_WEAK(MPI_Attr_put)
XM_WEAK(MPI_Attr_get)
XM_WEAK(MPI_Attr_delete)

struct keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int refs;  /* 1 for the handle + 1 per attribute using it */
    int freed; /* the handle's reference is gone: a second free is a no-op */
    int flang; /* created from Fortran (bindings/fkeyval.c): callbacks see Fortran's view */
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

static int predefined(int keyval)
{
    return ((unsigned)keyval & 0xff800000u) == 0x49000000u; /* kind KEYVAL, not dynamic */
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    int flang = xm_attr_lang_take();
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
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_keyval");
    k->copy = copy_fn;
    k->del = delete_fn;
    k->extra = extra_state;
    k->refs = 1;
    k->flang = flang;
    kvs[i] = k;
    *keyval = XM_H_MAKE(XM_K_KEYVAL, 1, i);
    return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int *keyval)
{
    struct keyval *k = keyval ? kv_get(*keyval) : NULL;
    if (!k)
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
    /* a keyval still used by attributes may be freed again (a delete callback freeing
     * its own keyval, then the program): the handle's reference goes once */
    if (!k->freed) {
        k->freed = 1;
        kv_unref(*keyval);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static struct xm_attr **find(struct xm_comm *c, int keyval)
{
    struct xm_attr **pp = &c->attrs;
    while (*pp && (*pp)->keyval != keyval)
        pp = &(*pp)->next;
    return pp;
}

/* run the delete callback of *pp and unlink it */
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

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
    int lang = xm_attr_lang_take();
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_attr");
    struct keyval *k = kv_get(keyval);
    if (!k)
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    struct xm_attr **pp = find(c, keyval);
    if (*pp) { /* replacing: the old value is deleted first */
        struct xm_attr *old = *pp, *outer = deleting;
        if (k->del) {
            deleting = old; /* a nested delete of it is left to us */
            int rc = k->del(c->handle, keyval, xm_attr_view(old, k->flang), k->extra);
            deleting = outer;
            if (rc != MPI_SUCCESS)
                return xm_err(c, rc, "MPI_Comm_set_attr");
        }
        xm_attr_store(old, val, lang);
        return MPI_SUCCESS;
    }
    struct xm_attr *a = malloc(sizeof(*a));
    if (!a)
        return xm_err(c, MPI_ERR_NO_MEM, "MPI_Comm_set_attr");
    a->keyval = keyval;
    xm_attr_store(a, val, lang);
    /* prepended: xm_attr_delete_all (Comm_free, and MPI_Finalize on COMM_SELF) runs the
     * delete callbacks last-set first, as MPI-3.1 §8.7.1 asks of COMM_SELF's */
    a->next = c->attrs;
    c->attrs = a;
    k->refs++;
    return MPI_SUCCESS;
}

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attr, int *flag)
{
    static int tag_ub = 0x3fffffff, universe, appnum, host = MPI_PROC_NULL,
               io = MPI_ANY_SOURCE, wtime_global = 0, lastused;
    int lang = xm_attr_lang_take();
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_attr");
    if (predefined(keyval)) {
        void *v = NULL;
        universe = xm_g.universe;
        appnum = xm_g.appnum;
        switch (keyval) {
        case MPI_TAG_UB:
            v = &tag_ub;
            break;
        case MPI_UNIVERSE_SIZE:
            v = &universe;
            break;
        case MPI_APPNUM:
            v = &appnum;
            break;
        case MPI_HOST:
            v = &host;
            break;
        case MPI_IO:
            v = &io;
            break;
        case MPI_WTIME_IS_GLOBAL:
            v = &wtime_global;
            break;
        case MPI_LASTUSEDCODE: /* grows with MPI_Add_error_class/code (api/env.c) */
            lastused = xm_err_last_used();
            v = &lastused;
            break;
        default:
            return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
        }
        *flag = 1;
        *(void **)attr = v;
        return MPI_SUCCESS;
    }
    if (!kv_get(keyval))
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
    struct xm_attr *a = *find(c, keyval);
    *flag = a != NULL;
    if (a)
        *(void **)attr = xm_attr_view(a, lang);
    return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_delete_attr");
    if (!kv_get(keyval))
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    struct xm_attr **pp = find(c, keyval);
    if (!*pp)
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    int rc = del_attr(c, pp);
    return rc == MPI_SUCCESS ? rc : xm_err(c, rc, "MPI_Comm_delete_attr");
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

/* ---- MPI-1 names ---------------------------------------------------------------- */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                       int *keyval, void *extra_state)
{
    return PMPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                   (MPI_Comm_delete_attr_function *)delete_fn, keyval,
                                   extra_state);
}

int PMPI_Keyval_free(int *keyval)
{
    return PMPI_Comm_free_keyval(keyval);
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attr)
{
    return PMPI_Comm_set_attr(comm, keyval, attr);
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attr, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attr, flag);
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
