/* kvs.c - committed key-value hash plus this node's pending puts.
 *
 * Contract: see kvs.h.  Entries live in an array in first-commit order; an
 * open-addressing index of entry numbers (power-of-two size, linear
 * probing, load <= 1/2) finds them by key.  A re-put of an existing key
 * replaces its value in place, so iteration order stays stable.  The index
 * hashes with SipHash under a key drawn per store (strmap.h): keys come from
 * tasks, and an unkeyed hash would let one task make every probe O(n).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"
#include "pack.h"
#include "strmap.h"

struct entry {
    char *key;
    char *val;
    size_t vlen;
    uint32_t epoch; /* k->epoch when the value was last committed */
};

struct kvs {
    struct entry *ent;
    int n, cap;
    int *idx;      /* slot -> entry number, -1 when empty */
    size_t nslots; /* power of two */
    int64_t bytes; /* sum of key and value lengths */
    int64_t max_keys, max_bytes;
    uint64_t hkey[2];    /* SipHash key: tasks choose the keys */
    struct pack pending; /* every put of this node, in put order */
    struct pack ownflag; /* one byte per pair of `pending`: 1 when it is a rank's own */
    struct pack shared;  /* kvs_pending_shared's blob, built when a fence asks */
    int npending;
    uint32_t epoch; /* tag of the values committed now (kvs_set_epoch) */
};

static inline uint64_t hash_str(const struct kvs *k, const char *s)
{
    return strmap_hash(k->hkey, s);
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
    pack_init(&k->ownflag);
    pack_init(&k->shared);
    strmap_hash_seed(k->hkey);
    k->max_keys = k->max_bytes = INT64_MAX;
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
    pack_free(&k->ownflag);
    pack_free(&k->shared);
    free(k);
    errno = saved;
}

/* Slot holding key, or the empty slot where it would go. */
static size_t find_slot(const struct kvs *k, const char *key)
{
    size_t mask = k->nslots - 1;
    size_t s = hash_str(k, key) & mask;
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

/* capped: refuse what would pass a cap now (a single insert); a blob's commit inserts
 * uncapped and checks the store once it is whole (kvs_commit_blob). */
static int insert(struct kvs *k, const char *key, size_t klen, const char *val,
                  size_t vlen, bool capped)
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
        if (capped && vlen > e->vlen &&
            k->bytes + (int64_t)(vlen - e->vlen) > k->max_bytes) {
            free(kc);
            free(vc);
            return -EFBIG;
        }
        k->bytes += (int64_t)vlen - (int64_t)e->vlen;
        free(e->val);
        e->val = vc;
        e->vlen = vlen;
        e->epoch = k->epoch;
        free(kc);
        return 0;
    }
    if (capped &&
        (k->n + 1 > k->max_keys || k->bytes + (int64_t)(klen + vlen) > k->max_bytes)) {
        int rc = k->n + 1 > k->max_keys ? -EDQUOT : -EFBIG;
        free(kc);
        free(vc);
        return rc;
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
    k->ent[k->n].vlen = vlen;
    k->ent[k->n].epoch = k->epoch;
    k->idx[s] = k->n++;
    k->bytes += (int64_t)(klen + vlen);
    return 0;
nomem:
    free(kc);
    free(vc);
    return -ENOMEM;
}

int kvs_put_pending_as(struct kvs *k, const char *key, const char *val, bool own)
{
    /* one copy of the pair: the shared subset is only cut out of it when an
     * on-demand fence asks (kvs_pending_shared), so a full-mode node holds its
     * pending puts once */
    size_t len0 = k->pending.len;
    pack_str(&k->pending, key);
    pack_str(&k->pending, val);
    pack_u8(&k->ownflag, own ? 1 : 0);
    if (pack_error(&k->pending) || pack_error(&k->ownflag)) {
        if (!pack_error(&k->pending))
            k->pending.len = len0; /* the pair without its flag: not put */
        return -ENOMEM;            /* the put is refused; the server answers it so */
    }
    k->npending++;
    return 0;
}

int kvs_put_pending(struct kvs *k, const char *key, const char *val)
{
    return kvs_put_pending_as(k, key, val, false);
}

int kvs_pending_shared(struct kvs *k, const void **blob, size_t *len)
{
    struct unpack u;
    const uint8_t *flag = k->ownflag.buf;

    pack_reset(&k->shared);
    unpack_init(&u, k->pending.buf, k->pending.len);
    for (int i = 0; i < k->npending && unpack_remaining(&u) > 0; i++) {
        size_t kl, vl;
        const char *key = unpack_bytes(&u, &kl);
        const char *val = unpack_bytes(&u, &vl);
        if (unpack_error(&u))
            break;
        if (!flag[i]) {
            pack_bytes(&k->shared, key, kl);
            pack_bytes(&k->shared, val, vl);
        }
    }
    *blob = k->shared.buf;
    *len = k->shared.len;
    return pack_error(&k->shared) ? -ENOMEM : 0;
}

void kvs_set_epoch(struct kvs *k, uint32_t epoch)
{
    k->epoch = epoch;
}

int kvs_insert(struct kvs *k, const char *key, const char *val)
{
    return insert(k, key, strlen(key), val, strlen(val), true);
}

int kvs_pending_count(const struct kvs *k)
{
    return k->npending;
}

void kvs_set_limits(struct kvs *k, int64_t max_keys, int64_t max_bytes)
{
    k->max_keys = max_keys > 0 ? max_keys : INT64_MAX;
    k->max_bytes = max_bytes > 0 ? max_bytes : INT64_MAX;
}

int64_t kvs_bytes(const struct kvs *k)
{
    return k->bytes;
}

const void *kvs_pending(const struct kvs *k, size_t *len)
{
    *len = k->pending.len;
    return k->pending.buf;
}

void kvs_pending_clear(struct kvs *k)
{
    pack_reset(&k->pending);
    pack_reset(&k->ownflag);
    pack_reset(&k->shared);
    k->npending = 0;
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
        if ((rc = insert(k, key, kl, vl ? val : "", vl, false)) < 0)
            return rc;
    }
    /* The caps hold for the store the whole blob makes: a key put twice in one blob
     * (a re-put before the fence) may pass a cap in between and not at the end, and
     * committing the same blob twice must give the same answer.  What the blob adds
     * on the way is bounded by its own length. */
    if (k->n > k->max_keys)
        return -EDQUOT;
    if (k->bytes > k->max_bytes)
        return -EFBIG;
    return 0;
}

const char *kvs_get(const struct kvs *k, const char *key)
{
    size_t s = find_slot(k, key);
    return k->idx[s] >= 0 ? k->ent[k->idx[s]].val : NULL;
}

const char *kvs_get_tagged(const struct kvs *k, const char *key, uint32_t *epoch)
{
    size_t s = find_slot(k, key);
    if (k->idx[s] < 0)
        return NULL;
    *epoch = k->ent[k->idx[s]].epoch;
    return k->ent[k->idx[s]].val;
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
