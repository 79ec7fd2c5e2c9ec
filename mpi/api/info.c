/*
 * info.c - MPI_Info objects (ordered key/value lists) and the communicator calls that
 *          take them (Comm_set_info ignores hints, Comm_get_info returns an empty
 *          object).
 * Contract: keys up to MPI_MAX_INFO_KEY, values up to MPI_MAX_INFO_VAL characters;
 *   Info_set of an existing key replaces its value in place (order is insertion order).
 *   MPI_INFO_ENV is an empty, read-only object.
 * Notes: the table is process state like the other handle tables.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/xm.h"

XM_WEAK(MPI_Info_create)
XM_WEAK(MPI_Info_dup)
XM_WEAK(MPI_Info_free)
XM_WEAK(MPI_Info_set)
XM_WEAK(MPI_Info_get)
XM_WEAK(MPI_Info_delete)
XM_WEAK(MPI_Info_get_nkeys)
XM_WEAK(MPI_Info_get_nthkey)
XM_WEAK(MPI_Info_get_valuelen)
XM_WEAK(MPI_Comm_set_info)
XM_WEAK(MPI_Comm_get_info)

struct kv {
    struct kv *next;
    char *key, *val;
};
struct info {
    struct kv *head;
};
static struct info **infos;
static int ninfos;
static struct info env_info;

static struct info *get(MPI_Info h)
{
    if (h == MPI_INFO_ENV)
        return &env_info;
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_INFO || !(h & XM_H_DYN))
        return NULL;
    int i = (int)XM_H_INDEX(h);
    return i < ninfos ? infos[i] : NULL;
}

static int make(MPI_Info *out)
{
    struct info *in = calloc(1, sizeof(*in));
    int i;
    for (i = 0; i < ninfos; i++)
        if (!infos[i])
            break;
    if (in && i == ninfos) {
        struct info **n = realloc(infos, (size_t)(ninfos + 16) * sizeof(*n));
        if (!n) {
            free(in);
            return MPI_ERR_NO_MEM;
        }
        infos = n;
        memset(infos + ninfos, 0, 16 * sizeof(*n));
        ninfos += 16;
    }
    if (!in)
        return MPI_ERR_NO_MEM;
    infos[i] = in;
    *out = XM_H_MAKE(XM_K_INFO, 1, i);
    return MPI_SUCCESS;
}

static struct kv **find(struct info *in, const char *key)
{
    struct kv **pp = &in->head;
    while (*pp && strcmp((*pp)->key, key))
        pp = &(*pp)->next;
    return pp;
}

#define GETI(in, h, fn)                                                                  \
    struct info *in = get(h);                                                            \
    if (!in)                                                                             \
    return xm_err(NULL, MPI_ERR_INFO, fn)

int PMPI_Info_create(MPI_Info *info)
{
    int rc = make(info);
    return rc ? xm_err(NULL, rc, "MPI_Info_create") : MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    GETI(in, info, "MPI_Info_set");
    if (in == &env_info)
        return xm_err(NULL, MPI_ERR_INFO, "MPI_Info_set");
    if (!key || !*key || strlen(key) > MPI_MAX_INFO_KEY)
        return xm_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_set");
    if (!value || strlen(value) > MPI_MAX_INFO_VAL)
        return xm_err(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set");
    struct kv **pp = find(in, key);
    char *v = strdup(value);
    if (!v)
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_set");
    if (*pp) {
        free((*pp)->val);
        (*pp)->val = v;
        return MPI_SUCCESS;
    }
    struct kv *n = calloc(1, sizeof(*n));
    if (!n || !(n->key = strdup(key))) {
        free(n);
        free(v);
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_set");
    }
    n->val = v;
    *pp = n;
    return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    GETI(in, info, "MPI_Info_get");
    if (!key || !*key || strlen(key) > MPI_MAX_INFO_KEY)
        return xm_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_get");
    struct kv *e = *find(in, key);
    *flag = e != NULL;
    if (e && valuelen >= 0) {
        size_t n = strlen(e->val);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, e->val, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    GETI(in, info, "MPI_Info_get_valuelen");
    struct kv *e = key ? *find(in, key) : NULL;
    *flag = e != NULL;
    if (e)
        *valuelen = (int)strlen(e->val);
    return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    GETI(in, info, "MPI_Info_delete");
    struct kv **pp = key ? find(in, key) : NULL;
    if (!pp || !*pp)
        return xm_err(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
    struct kv *e = *pp;
    *pp = e->next;
    free(e->key);
    free(e->val);
    free(e);
    return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    GETI(in, info, "MPI_Info_get_nkeys");
    int n = 0;
    for (struct kv *e = in->head; e; e = e->next)
        n++;
    *nkeys = n;
    return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    GETI(in, info, "MPI_Info_get_nthkey");
    struct kv *e = in->head;
    for (int i = 0; e && i < n; i++)
        e = e->next;
    if (n < 0 || !e)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey");
    strcpy(key, e->key);
    return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    GETI(in, info, "MPI_Info_dup");
    int rc = PMPI_Info_create(newinfo);
    for (struct kv *e = in->head; e && rc == MPI_SUCCESS; e = e->next)
        rc = PMPI_Info_set(*newinfo, e->key, e->val);
    return rc;
}

int PMPI_Info_free(MPI_Info *info)
{
    struct info *in = get(*info);
    if (!in || in == &env_info)
        return xm_err(NULL, MPI_ERR_INFO, "MPI_Info_free");
    while (in->head) {
        struct kv *e = in->head;
        in->head = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    infos[XM_H_INDEX(*info)] = NULL;
    free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    if (!xm_comm_get(comm))
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_info");
    if (!get(info))
        return xm_err(xm_comm_get(comm), MPI_ERR_INFO, "MPI_Comm_set_info");
    return MPI_SUCCESS; /* no hints are used */
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info)
{
    if (!xm_comm_get(comm))
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_info");
    return PMPI_Info_create(info);
}

/* ---- (issue 21) MPI-4's Info_get_string ----------------
 * *buflen in: bytes of value (0: value may be NULL); out: the value's length + 1.
 * The value is cut to *buflen - 1 characters and always terminated. */
XM_WEAK(MPI_Info_get_string)
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    GETI(in, info, "MPI_Info_get_string");
    if (!key || !*key || strlen(key) > MPI_MAX_INFO_KEY)
        return xm_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_get_string");
    if (!buflen || !flag || *buflen < 0 || (*buflen > 0 && !value))
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Info_get_string");
    struct kv *e = *find(in, key);
    *flag = e != NULL;
    if (!e)
        return MPI_SUCCESS;
    size_t n = strlen(e->val);
    if (*buflen > 0) {
        size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, e->val, m);
        value[m] = '\0';
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}
