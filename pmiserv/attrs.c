/* attrs.c - job attributes (PMI_process_mapping in MPICH's grammar,
 * universeSize, PMI_hwloc_xmlfile) and node attributes with their waiters
 * (struct na_wait, one per client).
 *
 * Contract: see attrs.h and psrv_process_mapping() in pmiserv.h.
 *
 * Notes on PMI_process_mapping:
 *   The rank sequence is cut into runs (consecutive ranks on one node), and
 *   runs of equal length on consecutive nodes are merged into (X,Y,Z)
 *   blocks, which is what Slurm's srun writes for block, cyclic, plane and
 *   uneven layouts ((vector,(0,2,3),(2,1,2)) for 3,3,2 tasks).  Only when
 *   that explicit form is longer than 1024 characters are repeated block
 *   sequences folded into MPICH's "[b1,b2,...]xN" notation, since parsers
 *   older than MPICH 4.1 may not know it.  We never rely on the legacy
 *   wrap-around rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "psrv_int.h"
#include "strmap.h"

#define MAPPING_MAX 1024 /* longest mapping we advertise (PMI vallen_max) */

struct blk {
    int x, y, z;
};

/* Cut rank_node into (start,count,ppn) blocks.  Returns the count or -errno. */
static int make_blocks(const int *rank_node, int size, struct blk **out)
{
    struct blk *b = malloc((size_t)(size ? size : 1) * sizeof(*b));
    int n = 0;

    if (!b)
        return -ENOMEM;
    for (int r = 0; r < size;) {
        int node = rank_node[r], len = 1;
        if (node < 0) {
            free(b);
            return -EINVAL;
        }
        while (r + len < size && rank_node[r + len] == node)
            len++;
        if (n > 0 && b[n - 1].z == len && b[n - 1].x + b[n - 1].y == node)
            b[n - 1].y++;
        else
            b[n++] = (struct blk){node, 1, len};
        r += len;
    }
    *out = b;
    return n;
}

static int blk_len(const struct blk *b)
{
    return snprintf(NULL, 0, "(%d,%d,%d)", b->x, b->y, b->z);
}

static bool blk_eq(const struct blk *a, const struct blk *b)
{
    return a->x == b->x && a->y == b->y && a->z == b->z;
}

struct out {
    char *buf;
    size_t cap, len;
    bool over;
};

static void emit(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void emit(struct out *o, const char *fmt, ...)
{
    va_list ap;
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf ? o->buf + (o->len < o->cap ? o->len : 0) : NULL,
                      o->buf ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        o->over = true;
    o->len += n > 0 ? (size_t)n : 0;
}

static void emit_explicit(struct out *o, const struct blk *b, int n)
{
    emit(o, "(vector");
    for (int i = 0; i < n; i++)
        emit(o, ",(%d,%d,%d)", b[i].x, b[i].y, b[i].z);
    emit(o, ")");
}

static void emit_folded(struct out *o, const struct blk *b, int n)
{
    emit(o, "(vector");
    for (int i = 0; i < n;) {
        int best_p = 0, best_r = 0, best_gain = 0;
        for (int p = 1; p <= 64 && i + 2 * p <= n; p++) {
            int r = 1;
            while (i + (r + 1) * p <= n) {
                bool same = true;
                for (int j = 0; j < p && same; j++)
                    same = blk_eq(&b[i + j], &b[i + r * p + j]);
                if (!same)
                    break;
                r++;
            }
            if (r < 2)
                continue;
            int body = 0;
            for (int j = 0; j < p; j++)
                body += blk_len(&b[i + j]) + 1;
            int plain = body * r;
            int folded = 1 + body + 1 + snprintf(NULL, 0, "%d", r) + 1;
            if (plain - folded > best_gain) {
                best_gain = plain - folded;
                best_p = p;
                best_r = r;
            }
        }
        if (best_p == 0) {
            emit(o, ",(%d,%d,%d)", b[i].x, b[i].y, b[i].z);
            i++;
            continue;
        }
        emit(o, ",[");
        for (int j = 0; j < best_p; j++)
            emit(o, "%s(%d,%d,%d)", j ? "," : "", b[i + j].x, b[i + j].y, b[i + j].z);
        emit(o, "]x%d", best_r);
        i += best_p * best_r;
    }
    emit(o, ")");
}

int psrv_process_mapping(const int *rank_node, int size, char *out, size_t outlen)
{
    struct blk *b;
    int n;

    if (!rank_node || size <= 0 || !out || outlen == 0)
        return -EINVAL;
    if ((n = make_blocks(rank_node, size, &b)) < 0)
        return n;
    size_t cap = outlen < MAPPING_MAX + 1 ? outlen : MAPPING_MAX + 1;
    struct out o = {.buf = out, .cap = cap};
    emit_explicit(&o, b, n);
    if (o.over) {
        o = (struct out){.buf = out, .cap = cap};
        emit_folded(&o, b, n);
    }
    free(b);
    if (o.over) {
        out[0] = '\0';
        return -EMSGSIZE;
    }
    return (int)o.len;
}

const char *attrs_job_get(struct psrv *s, const char *key)
{
    if (strcmp(key, "PMI_process_mapping") == 0)
        return s->mapping;
    if (strcmp(key, "universeSize") == 0)
        return s->universe;
    if (strcmp(key, "PMI_hwloc_xmlfile") == 0)
        return s->hwloc_xmlfile;
    return NULL;
}

/* ---- node attributes ------------------------------------------------- */

/* A local client parked in info-getnodeattr wait=TRUE. */
struct na_wait {
    char *key;         /* the attribute it waits for; NULL: not waiting */
    char *thrid;       /* its request's thrid, echoed in the answer */
    uint64_t deadline; /* 0: none */
};

struct nodeattrs {
    struct strmap *map; /* hash: a task may put thousands */
    char count[16];
    char *ranks;       /* localRanks */
    int nwait;         /* entries of w: cfg.local_count */
    struct na_wait *w; /* [client index] */
};

struct nodeattrs *nodeattrs_create(struct psrv *s)
{
    struct nodeattrs *na = calloc(1, sizeof(*na));
    size_t cap = (size_t)s->cfg.local_count * 12 + 1;

    if (!na || !(na->ranks = malloc(cap)) || !(na->map = strmap_create()) ||
        !(na->w = calloc((size_t)s->cfg.local_count, sizeof(*na->w)))) {
        if (na) {
            free(na->ranks);
            strmap_destroy(na->map);
        }
        free(na);
        errno = ENOMEM;
        return NULL;
    }
    na->nwait = s->cfg.local_count;
    snprintf(na->count, sizeof(na->count), "%d", s->cfg.local_count);
    size_t len = 0;
    na->ranks[0] = '\0';
    for (int i = 0; i < s->cfg.local_count; i++)
        len += (size_t)snprintf(na->ranks + len, cap - len, "%s%d", i ? "," : "",
                                s->local_ranks[i]);
    return na;
}

void nodeattrs_destroy(struct nodeattrs *na)
{
    if (!na)
        return;
    strmap_destroy(na->map);
    free(na->ranks);
    for (int i = 0; i < na->nwait; i++) {
        free(na->w[i].key);
        free(na->w[i].thrid);
    }
    free(na->w);
    free(na);
}

const char *nodeattrs_get(struct psrv *s, const char *key)
{
    struct nodeattrs *na = s->na;
    if (strcmp(key, "localRanksCount") == 0)
        return na->count;
    if (strcmp(key, "localRanks") == 0)
        return na->ranks;
    return strmap_get(na->map, key);
}

void nodeattrs_usage(const struct psrv *s, int64_t *count, int64_t *bytes)
{
    *count = (int64_t)strmap_count(s->na->map);
    *bytes = (int64_t)strmap_bytes(s->na->map);
}

int nodeattrs_put(struct psrv *s, struct client *c, const char *key, const char *val,
                  const char **err)
{
    struct nodeattrs *na = s->na;

    if (strcmp(key, "localRanksCount") == 0 || strcmp(key, "localRanks") == 0) {
        *err = "this node attribute is provided by the server";
        return 4; /* PMI2_ERR_INVALID_KEY */
    }
    const char *old = strmap_get(na->map, key);
    int64_t klen = (int64_t)strlen(key), vlen = (int64_t)strlen(val);
    int64_t count = (int64_t)strmap_count(na->map) + (old ? 0 : 1);
    int64_t bytes =
        (int64_t)strmap_bytes(na->map) + vlen + (old ? -(int64_t)strlen(old) : klen);
    if (count > s->lim.nodeattr_count) {
        *err = srv_quota(s, c, SRV_L_NA_COUNT, s->lim.nodeattr_count);
        return 2; /* PMI2_ERR_NOMEM */
    }
    if (bytes > s->lim.nodeattr_bytes && (!old || vlen > (int64_t)strlen(old))) {
        *err = srv_quota(s, c, SRV_L_NA_BYTES, s->lim.nodeattr_bytes);
        return 2;
    }
    if (strmap_set(na->map, key, val) < 0) {
        *err = "out of memory";
        return 2; /* PMI2_ERR_NOMEM */
    }
    const char *v = strmap_get(na->map, key);
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *wc = &s->cl[i];
        struct na_wait *w = &na->w[i];
        if (!w->key || strcmp(w->key, key) != 0)
            continue;
        free(w->key);
        w->key = NULL;
        if (!wc->gone)
            wc->proto->nodeattr_done(s, wc, w->thrid, 0, v, NULL);
        free(w->thrid);
        w->thrid = NULL;
    }
    return 0;
}

bool nodeattrs_waiting(const struct psrv *s, const struct client *c)
{
    return s->na->w[c->idx].key != NULL;
}

void nodeattrs_client_lost(struct psrv *s, struct client *c)
{
    struct na_wait *w = &s->na->w[c->idx];
    free(w->key);
    w->key = NULL;
}

int nodeattrs_wait(struct psrv *s, struct client *c, const char *key, const char *thrid)
{
    struct na_wait *w = &s->na->w[c->idx];
    free(w->key);
    free(w->thrid);
    w->key = strdup(key);
    w->thrid = srv_strdup(thrid);
    if (!w->key)
        return -ENOMEM;
    w->deadline =
        s->cfg.fence_timeout_ms > 0 ? srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms : 0;
    return 0;
}

int nodeattrs_tick(struct psrv *s, uint64_t now)
{
    int next = -1;
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        struct na_wait *w = &s->na->w[i];
        if (!w->key || w->deadline == 0)
            continue;
        if (now >= w->deadline) {
            srv_warn(s, c, SRV_W_WAIT, "rank %d: gave up waiting for node attribute %s",
                     c->rank, w->key);
            free(w->key);
            w->key = NULL;
            if (!c->gone)
                c->proto->nodeattr_done(s, c, w->thrid, -1, NULL,
                                        "timed out waiting for the node attribute");
            free(w->thrid);
            w->thrid = NULL;
            continue;
        }
        uint64_t d = w->deadline - now;
        int di = d > 0x7fffffff ? 0x7fffffff : (int)d;
        if (next < 0 || di < next)
            next = di;
    }
    return next;
}
