/*
 * info.c - info objects: their handle table, the ordered key/value list each one is,
 *          and MPI_INFO_ENV (an empty object of its own).  The MPI_Info_* calls and
 *          their argument checks are in api/info.c; lower layers (io/file.c's hints)
 *          read and build info objects through these functions.
 * Contract: xm_info_set() of an existing key replaces its value in place, so the order
 *   is insertion order.  Keys and values are stored as given: the callers bound them
 *   (api/info.c: MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL characters).
 * Notes: the table is process state like the other handle tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xm.h"

struct kv {
    struct kv *next;
    char *key, *val;
};
struct xm_info {
    struct kv *head;
};
static struct xm_info **infos;
static int ninfos;
static struct xm_info env_info;

struct xm_info *xm_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV)
        return &env_info;
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_INFO || !(h & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(h);
    return i < ninfos ? infos[i] : NULL;
}

int xm_info_new(MPI_Info *out)
{
    struct xm_info *in = calloc(1, sizeof(*in));
    int i;
    for (i = 0; i < ninfos; i++)
        if (!infos[i])
            break;
    if (in && i == ninfos) {
        struct xm_info **n = realloc(infos, (size_t)(ninfos + 16) * sizeof(*n));
        if (!n) {
            free(in);
            return -ENOMEM;
        }
        infos = n;
        memset(infos + ninfos, 0, 16 * sizeof(*n));
        ninfos += 16;
    }
    if (!in)
        return -ENOMEM;
    infos[i] = in;
    *out = XM_H_MAKE(XM_K_INFO, 1, i);
    return 0;
}

static struct kv **find(struct xm_info *in, const char *key)
{
    struct kv **pp = &in->head;
    while (*pp && strcmp((*pp)->key, key))
        pp = &(*pp)->next;
    return pp;
}

const char *xm_info_value(struct xm_info *in, const char *key)
{
    struct kv *e = *find(in, key);
    return e ? e->val : NULL;
}

int xm_info_set(struct xm_info *in, const char *key, const char *value)
{
    struct kv **pp = find(in, key);
    char *v = strdup(value);
    if (!v)
        return -ENOMEM;
    if (*pp) {
        free((*pp)->val);
        (*pp)->val = v;
        return 0;
    }
    struct kv *n = calloc(1, sizeof(*n));
    if (!n || !(n->key = strdup(key))) {
        free(n);
        free(v);
        return -ENOMEM;
    }
    n->val = v;
    *pp = n;
    return 0;
}

int xm_info_delete(struct xm_info *in, const char *key)
{
    struct kv **pp = find(in, key);
    if (!*pp)
        return -ENOENT;
    struct kv *e = *pp;
    *pp = e->next;
    free(e->key);
    free(e->val);
    free(e);
    return 0;
}

int xm_info_nkeys(const struct xm_info *in)
{
    int n = 0;
    for (const struct kv *e = in->head; e; e = e->next)
        n++;
    return n;
}

const char *xm_info_nthkey(const struct xm_info *in, int n)
{
    const struct kv *e = in->head;
    for (int i = 0; e && i < n; i++)
        e = e->next;
    return n < 0 || !e ? NULL : e->key;
}

int xm_info_dup(const struct xm_info *in, MPI_Info *out)
{
    int rc = xm_info_new(out);
    for (const struct kv *e = in->head; e && rc == 0; e = e->next)
        rc = xm_info_set(xm_info_get(*out), e->key, e->val);
    return rc;
}

void xm_info_free(MPI_Info h)
{
    struct xm_info *in = xm_info_get(h);
    if (!in || in == &env_info)
        return;
    while (in->head) {
        struct kv *e = in->head;
        in->head = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    infos[XM_H_INDEX(h)] = NULL;
    free(in);
}
