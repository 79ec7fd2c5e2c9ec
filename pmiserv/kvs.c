/* kvs.c - committed key-value hash plus this node's pending puts.
 *
 * Contract: see kvs.h.  Entries live in an array in first-commit order; an
 * open-addressing index of entry numbers (power-of-two size, linear
 * probing, load <= 1/2) finds them by key.  A re-put of an existing key
 * replaces its value in place, so iteration order stays stable.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"
#include "pack.h"

struct entry {
    char *key;
    char *val;
};

struct kvs {
    struct entry *ent;
    int n, cap;
    int *idx;      /* slot -> entry number, -1 when empty */
    size_t nslots; /* power of two */
    struct pack pending;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

struct kvs *kvs_create(void)
{
    struct kvs *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    k->nslots = 64;
    k->idx = malloc(k->nslots * sizeof(int));
    if (!k->idx) {
        free(k);
        errno = ENOMEM;
        return NULL;
    }
    memset(k->idx, 0xff, k->nslots * sizeof(int));
    pack_init(&k->pending);
    return k;
}

void kvs_destroy(struct kvs *k)
{
    int saved = errno;
    if (!k)
        return;
    for (int i = 0; i < k->n; i++) {
        free(k->ent[i].key);
        free(k->ent[i].val);
    }
    free(k->ent);
    free(k->idx);
    pack_free(&k->pending);
    free(k);
    errno = saved;
}

/* Slot holding key, or the empty slot where it would go. */
static size_t find_slot(const struct kvs *k, const char *key)
{
    size_t mask = k->nslots - 1;
    size_t s = hash_str(key) & mask;
    while (k->idx[s] >= 0 && strcmp(k->ent[k->idx[s]].key, key) != 0)
        s = (s + 1) & mask;
    return s;
}

static int grow_index(struct kvs *k)
{
    size_t n = k->nslots * 2;
    int *idx = malloc(n * sizeof(int));
    if (!idx)
        return -ENOMEM;
    memset(idx, 0xff, n * sizeof(int));
    free(k->idx);
    k->idx = idx;
    k->nslots = n;
    for (int i = 0; i < k->n; i++)
        k->idx[find_slot(k, k->ent[i].key)] = i;
    return 0;
}

static int insert(struct kvs *k, const char *key, size_t klen, const char *val,
                  size_t vlen)
{
    char *kc = malloc(klen + 1);
    char *vc = malloc(vlen + 1);
    if (!kc || !vc)
        goto nomem;
    memcpy(kc, key, klen);
    kc[klen] = '\0';
    memcpy(vc, val, vlen);
    vc[vlen] = '\0';

    size_t s = find_slot(k, kc);
    if (k->idx[s] >= 0) {
        struct entry *e = &k->ent[k->idx[s]];
        free(e->val);
        e->val = vc;
        free(kc);
        return 0;
    }
    if ((size_t)(k->n + 1) * 2 > k->nslots) {
        if (grow_index(k) < 0)
            goto nomem;
        s = find_slot(k, kc);
    }
    if (k->n == k->cap) {
        int cap = k->cap ? k->cap * 2 : 64;
        struct entry *e = realloc(k->ent, cap * sizeof(*e));
        if (!e)
            goto nomem;
        k->ent = e;
        k->cap = cap;
    }
    k->ent[k->n].key = kc;
    k->ent[k->n].val = vc;
    k->idx[s] = k->n++;
    return 0;
nomem:
    free(kc);
    free(vc);
    return -ENOMEM;
}

int kvs_put_pending(struct kvs *k, const char *key, const char *val)
{
    pack_str(&k->pending, key);
    pack_str(&k->pending, val);
    return pack_error(&k->pending);
}

const void *kvs_pending(const struct kvs *k, size_t *len)
{
    *len = k->pending.len;
    return k->pending.buf;
}

void kvs_pending_clear(struct kvs *k)
{
    pack_reset(&k->pending);
}

int kvs_blob_count(const void *blob, size_t len)
{
    struct unpack u;
    int n = 0;
    unpack_init(&u, blob, len);
    while (unpack_remaining(&u) > 0) {
        size_t kl, vl;
        const char *key = unpack_bytes(&u, &kl);
        const char *val = unpack_bytes(&u, &vl);
        if (unpack_error(&u) || !key || kl == 0 || memchr(key, '\0', kl))
            return -EPROTO;
        if (vl > 0 && (!val || memchr(val, '\0', vl)))
            return -EPROTO;
        n++;
    }
    return n;
}

int kvs_commit_blob(struct kvs *k, const void *blob, size_t len)
{
    struct unpack u;
    int rc;

    if (len == 0)
        return 0;
    if ((rc = kvs_blob_count(blob, len)) < 0)
        return rc;
    unpack_init(&u, blob, len);
    while (unpack_remaining(&u) > 0) {
        size_t kl, vl;
        const char *key = unpack_bytes(&u, &kl);
        const char *val = unpack_bytes(&u, &vl);
        if ((rc = insert(k, key, kl, vl ? val : "", vl)) < 0)
            return rc;
    }
    return 0;
}

const char *kvs_get(const struct kvs *k, const char *key)
{
    size_t s = find_slot(k, key);
    return k->idx[s] >= 0 ? k->ent[k->idx[s]].val : NULL;
}

int kvs_count(const struct kvs *k)
{
    return k->n;
}

int kvs_get_byidx(const struct kvs *k, int idx, const char **key, const char **val)
{
    if (idx < 0 || idx >= k->n)
        return -ENOENT;
    *key = k->ent[idx].key;
    *val = k->ent[idx].val;
    return 0;
}
