/* strmap.c - chained string hash table under a per-table SipHash key (see
 * strmap.h).
 *
 * Notes:
 *   - One allocation per entry holds the key; the value is its own
 *     allocation so that a replace never moves the key.
 *   - Buckets double when entries outnumber them (load <= 1); the table never
 *     shrinks (its owner's quota bounds it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mac.h"
#include "strmap.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                         \
    do {                                                                                 \
        v0 += v1;                                                                        \
        v1 = ROTL(v1, 13);                                                               \
        v1 ^= v0;                                                                        \
        v0 = ROTL(v0, 32);                                                               \
        v2 += v3;                                                                        \
        v3 = ROTL(v3, 16);                                                               \
        v3 ^= v2;                                                                        \
        v0 += v3;                                                                        \
        v3 = ROTL(v3, 21);                                                               \
        v3 ^= v0;                                                                        \
        v2 += v1;                                                                        \
        v1 = ROTL(v1, 17);                                                               \
        v1 ^= v2;                                                                        \
        v2 = ROTL(v2, 32);                                                               \
    } while (0)

uint64_t strmap_hash(const uint64_t key[2], const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), i;
    uint64_t v0 = key[0] ^ 0x736f6d6570736575ULL;
    uint64_t v1 = key[1] ^ 0x646f72616e646f6dULL;
    uint64_t v2 = key[0] ^ 0x6c7967656e657261ULL;
    uint64_t v3 = key[1] ^ 0x7465646279746573ULL;
    uint64_t m;

    for (i = 0; i + 8 <= len; i += 8) {
        m = 0;
        for (int j = 7; j >= 0; j--)
            m = (m << 8) | p[i + (size_t)j];
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    m = (uint64_t)len << 56;
    for (size_t j = 0; i + j < len; j++)
        m |= (uint64_t)p[i + j] << (8 * j);
    v3 ^= m;
    SIPROUND;
    v0 ^= m;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

void strmap_hash_seed(uint64_t key[2])
{
    if (loom_random_bytes(key, 2 * sizeof(uint64_t)) == 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)key;
    key[1] = (uint64_t)ts.tv_sec * 0xc2b2ae3d27d4eb4fULL ^ (uint64_t)(uintptr_t)&ts;
}

struct sm_ent {
    struct sm_ent *next;
    uint64_t hash;
    char *val;
    size_t klen, vlen;
    char key[]; /* klen + 1 bytes */
};

struct strmap {
    struct sm_ent **b;
    size_t nb; /* power of two */
    size_t n, bytes;
    uint64_t hkey[2];
};

struct strmap *strmap_create(void)
{
    struct strmap *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->nb = 16;
    if (!(m->b = calloc(m->nb, sizeof(*m->b)))) {
        free(m);
        errno = ENOMEM;
        return NULL;
    }
    strmap_hash_seed(m->hkey);
    return m;
}

void strmap_destroy(struct strmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nb; i++) {
        while (m->b[i]) {
            struct sm_ent *e = m->b[i];
            m->b[i] = e->next;
            free(e->val);
            free(e);
        }
    }
    free(m->b);
    free(m);
}

static struct sm_ent **find(const struct strmap *m, const char *key, uint64_t h)
{
    struct sm_ent **pp = &m->b[h & (m->nb - 1)];
    while (*pp && ((*pp)->hash != h || strcmp((*pp)->key, key) != 0))
        pp = &(*pp)->next;
    return pp;
}

const char *strmap_get(const struct strmap *m, const char *key)
{
    struct sm_ent *e = *find(m, key, strmap_hash(m->hkey, key));
    return e ? e->val : NULL;
}

static void grow(struct strmap *m)
{
    size_t nb = m->nb * 2;
    struct sm_ent **b = calloc(nb, sizeof(*b));
    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < m->nb; i++) {
        while (m->b[i]) {
            struct sm_ent *e = m->b[i];
            m->b[i] = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(m->b);
    m->b = b;
    m->nb = nb;
}

int strmap_set(struct strmap *m, const char *key, const char *val)
{
    uint64_t h = strmap_hash(m->hkey, key);
    struct sm_ent **pp = find(m, key, h);
    size_t vlen = strlen(val);
    char *v = malloc(vlen + 1);

    if (!v)
        return -ENOMEM;
    memcpy(v, val, vlen + 1);
    if (*pp) {
        struct sm_ent *e = *pp;
        m->bytes = m->bytes - e->vlen + vlen;
        free(e->val);
        e->val = v;
        e->vlen = vlen;
        return 0;
    }
    size_t klen = strlen(key);
    struct sm_ent *e = malloc(sizeof(*e) + klen + 1);
    if (!e) {
        free(v);
        return -ENOMEM;
    }
    memcpy(e->key, key, klen + 1);
    e->hash = h;
    e->klen = klen;
    e->val = v;
    e->vlen = vlen;
    e->next = NULL;
    *pp = e;
    m->n++;
    m->bytes += klen + vlen;
    if (m->n > m->nb)
        grow(m);
    return 0;
}

int strmap_del(struct strmap *m, const char *key)
{
    struct sm_ent **pp = find(m, key, strmap_hash(m->hkey, key));
    struct sm_ent *e = *pp;
    if (!e)
        return -ENOENT;
    *pp = e->next;
    m->n--;
    m->bytes -= e->klen + e->vlen;
    free(e->val);
    free(e);
    return 0;
}

size_t strmap_count(const struct strmap *m)
{
    return m->n;
}

size_t strmap_bytes(const struct strmap *m)
{
    return m->bytes;
}
