/* kvsroute.c - the on-demand KVS (see kvsroute.h): put classification, the
 * per-node cache, this node's gets in flight to other nodes and the other
 * nodes' gets waiting here for this node's fence.
 *
 * Notes:
 *   - Requests and answers are routed over the fence tree like direct-modex
 *     requests (srv_route: origin and dest in the message header).
 *   - MSG_KVS_REQ payload: u64 id, key (u32 length + bytes); its epoch is the
 *     asker's count of completed fences.  MSG_KVS_RESP payload: u64 id, i32
 *     status (0 found, 1 not there, < 0 refused or failed), bytes (the value,
 *     or a reason when status < 0).  Every field is checked: key 1..64 bytes,
 *     value and reason <= 1024 bytes, no NUL, nothing after; an epoch more
 *     than one fence ahead of this node cannot be honest (the asker cannot
 *     have completed a fence this node has not entered).
 *   - A value found is cached only while the fence count it was asked under
 *     is still this node's: an answer that crosses a fence completion answers
 *     its rank but is not kept (the key may be put again in the new epoch).
 *   - Local ranks that get the same key of the same nodes while it is being
 *     asked wait for that one request (a node's 64 ranks reading one card
 *     send one request, not 64); KR_MAX_OUT_CLIENT counts each rank's waits.
 *   - Candidates that answer "not there" or refuse are passed over; when none
 *     found the key the rank gets the full mode's "not found", unless one
 *     refused or failed, then rc!=0 with that reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "ktree.h"
#include "kvs.h"
#include "kvsroute.h"
#include "msg.h"
#include "pack.h"
#include "psrv_int.h"

/* A local rank waiting for a key (struct kq). */
struct kwait {
    int client;
    char *thrid;
    struct kwait *next;
};

/* A key asked of other nodes, for the local ranks waiting for it. */
struct kq {
    uint64_t id;
    struct kwait *w; /* its ranks, first asker first */
    char *key;
    int cand[KR_MAX_CAND];
    int ncand, next; /* next: index of the node asked now */
    uint32_t epoch;  /* our completed fences when asked */
    uint64_t deadline;
    bool failed; /* a candidate refused or failed */
    char why[160];
    struct kq *nextq;
};

/* Another node's get waiting for this node to complete its fence. */
struct kdef {
    int origin;
    uint64_t rid;
    uint32_t epoch;
    char *key;
    uint64_t deadline;
    struct kdef *next;
};

struct kvsroute {
    struct kq *out;
    int nout;
    int *nout_client; /* [local_count] */
    struct kdef *def, **deftail;
    int ndef;
    uint64_t next_id;
    struct kvs *cache;
    int64_t remote_gets, served, joined;
};

/* The next maximal run of digits at or after *p that reads as a rank (no leading
 * zero but "0" itself, at most 10 digits): true with its value in *v and *p past
 * it; false at the end of the key. */
static bool next_rank_run(const char **p, long long *v)
{
    const char *s = *p;

    while (*s) {
        if (*s < '0' || *s > '9') {
            s++;
            continue;
        }
        const char *b = s;
        while (*s >= '0' && *s <= '9')
            s++;
        size_t n = (size_t)(s - b);
        if ((n > 1 && *b == '0') || n > 10)
            continue;
        long long x = 0;
        for (const char *q = b; q < s; q++)
            x = x * 10 + (*q - '0');
        *p = s;
        *v = x;
        return true;
    }
    *p = s;
    return false;
}

bool kr_key_names_rank(const char *key, int rank)
{
    const char *p = key;
    long long v;

    if (!key || rank < 0)
        return false;
    while (next_rank_run(&p, &v))
        if (v == rank)
            return true;
    return false;
}

/* Nodes that may hold key: srcid's, then the digit runs' ranks'. */
static int candidates(struct psrv *s, const char *key, int srcid, int *cand)
{
    int n = 0;
    const char *p = key;

    if (!s->rank_node)
        return 0;
#define ADD(rank)                                                                        \
    do {                                                                                 \
        int nd_ = s->rank_node[(rank)];                                                  \
        bool dup_ = nd_ == s->cfg.nodeid;                                                \
        for (int i_ = 0; i_ < n && !dup_; i_++)                                          \
            dup_ = cand[i_] == nd_;                                                      \
        if (!dup_ && n < KR_MAX_CAND)                                                    \
            cand[n++] = nd_;                                                             \
    } while (0)
    if (srcid >= 0 && srcid < s->cfg.size)
        ADD(srcid);
    long long v;
    while (n < KR_MAX_CAND && next_rank_run(&p, &v))
        if (v < s->cfg.size)
            ADD((int)v);
#undef ADD
    return n;
}

struct kvsroute *kr_create(struct psrv *s)
{
    struct kvsroute *k = calloc(1, sizeof(*k));

    if (!k)
        return NULL;
    k->nout_client = calloc((size_t)s->cfg.local_count + 1, sizeof(int));
    k->cache = kvs_create();
    if (!k->nout_client || !k->cache) {
        kr_destroy(k);
        return NULL;
    }
    kvs_set_limits(k->cache, s->lim.kvs_keys_per_job, s->lim.kvs_bytes_per_job);
    k->deftail = &k->def;
    k->next_id = 1;
    return k;
}

static void free_kq(struct kq *q)
{
    while (q->w) {
        struct kwait *w = q->w;
        q->w = w->next;
        free(w->thrid);
        free(w);
    }
    free(q->key);
    free(q);
}

static void free_kdef(struct kdef *d)
{
    free(d->key);
    free(d);
}

void kr_destroy(struct kvsroute *k)
{
    if (!k)
        return;
    while (k->out) {
        struct kq *q = k->out;
        k->out = q->nextq;
        free_kq(q);
    }
    while (k->def) {
        struct kdef *d = k->def;
        k->def = d->next;
        free_kdef(d);
    }
    kvs_destroy(k->cache);
    free(k->nout_client);
    free(k);
}

bool kr_fence_ondemand(struct psrv *s, int64_t pending_bytes)
{
    switch (s->cfg.kvs_mode) {
    case PSRV_KVS_FULL:
        return false;
    case PSRV_KVS_ONDEMAND:
        return true;
    case PSRV_KVS_AUTO:
        break;
    }
    int64_t thr =
        s->cfg.kvs_auto_bytes > 0 ? s->cfg.kvs_auto_bytes : PSRV_DEF_KVS_AUTO_BYTES;
    /* estimated bytes of the whole job's fence: ours times the nodes */
    if (pending_bytes > 0 && pending_bytes >= (thr + s->cfg.nnodes - 1) / s->cfg.nnodes)
        return true;
    return false;
}

const char *kr_cached(struct psrv *s, const char *key)
{
    return kvs_get(s->kvsr->cache, key);
}

/* Answer every rank waiting for q (q stays allocated: the caller frees it). */
static void answer(struct psrv *s, struct kq *q, int rc, const char *val, const char *msg)
{
    while (q->w) {
        struct kwait *w = q->w;
        struct client *c = &s->cl[w->client];
        q->w = w->next;
        s->kvsr->nout_client[w->client]--;
        if (!c->gone && !c->bad)
            c->proto->get_done(s, c, w->thrid, rc, val, msg);
        free(w->thrid);
        free(w);
    }
}

static void unlink_kq(struct kvsroute *k, struct kq *q)
{
    for (struct kq **pp = &k->out; *pp; pp = &(*pp)->nextq)
        if (*pp == q) {
            *pp = q->nextq;
            k->nout--;
            return;
        }
}

static int send_req(struct psrv *s, struct kq *q)
{
    struct pack p;
    int dest = q->cand[q->next];

    pack_init(&p);
    pack_u64(&p, q->id);
    pack_str(&p, q->key);
    struct msg m = {.type = MSG_KVS_REQ,
                    .epoch = q->epoch,
                    .origin = s->cfg.nodeid,
                    .dest = dest,
                    .payload = p.buf,
                    .len = p.len};
    int rc = pack_error(&p) ? -ENOMEM : srv_route(s, dest, &m);
    pack_free(&p);
    s->kvsr->remote_gets++;
    return rc;
}

/* Ask the next candidate, or answer the rank when none is left.  Frees q
 * when it is answered. */
static void advance(struct psrv *s, struct kq *q)
{
    struct kvsroute *k = s->kvsr;

    while (q->next < q->ncand) {
        if (send_req(s, q) == 0)
            return;
        q->failed = true;
        snprintf(q->why, sizeof(q->why), "get %s: cannot reach node %d", q->key,
                 q->cand[q->next]);
        q->next++;
    }
    unlink_kq(k, q);
    if (q->failed)
        answer(s, q, -1, NULL, q->why);
    else
        answer(s, q, 0, NULL, NULL); /* the full mode's "not found" */
    free_kq(q);
}

bool kr_get(struct psrv *s, struct client *c, const char *key, int srcid,
            const char *thrid)
{
    struct kvsroute *k = s->kvsr;
    int cand[KR_MAX_CAND];
    uint32_t epoch = (uint32_t)fence_epoch(s->fence);

    /* Before the first fence nobody has anything a fence would have brought;
     * FULL brings everything. */
    if (s->cfg.kvs_mode == PSRV_KVS_FULL || s->cfg.nnodes <= 1 || epoch == 0)
        return false;
    int n = candidates(s, key, srcid, cand);
    if (n == 0)
        return false;
    if (s->aborted) {
        c->proto->get_done(s, c, thrid, -1, NULL, "the job is aborting");
        return true;
    }
    /* The same key asked already for another local rank, of the same nodes
     * in the same epoch: this rank waits for that answer too. */
    struct kq *q;
    for (q = k->out; q; q = q->nextq)
        if (q->epoch == epoch && q->ncand == n && strcmp(q->key, key) == 0 &&
            memcmp(q->cand, cand, (size_t)n * sizeof(int)) == 0)
            break;
    if ((!q && k->nout >= KR_MAX_OUT) || k->nout_client[c->idx] >= KR_MAX_OUT_CLIENT) {
        srv_warn(s, c, SRV_W_PUT, "rank %d: get %s refused: too many gets in flight",
                 c->rank, key);
        c->proto->get_done(s, c, thrid, -1, NULL,
                           "too many gets waiting for other nodes on this node");
        return true;
    }
    struct kwait *w = calloc(1, sizeof(*w));
    if (!w || (thrid && !(w->thrid = strdup(thrid)))) {
        free(w);
        c->proto->get_done(s, c, thrid, -1, NULL, "out of memory");
        return true;
    }
    w->client = c->idx;
    k->nout_client[c->idx]++;
    if (q) { /* joins the first asker: answered in turn after it */
        struct kwait **tail = &q->w;
        while (*tail)
            tail = &(*tail)->next;
        *tail = w;
        k->joined++;
        return true;
    }
    q = calloc(1, sizeof(*q));
    if (!q || !(q->key = strdup(key))) {
        free(q);
        q = &(struct kq){.w = w};
        answer(s, q, -1, NULL, "out of memory");
        return true;
    }
    q->w = w;
    q->id = k->next_id++;
    memcpy(q->cand, cand, sizeof(cand));
    q->ncand = n;
    q->epoch = epoch;
    q->deadline =
        s->cfg.fence_timeout_ms > 0 ? srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms : 0;
    q->nextq = k->out;
    k->out = q;
    k->nout++;
    advance(s, q);
    return true;
}

/* ---- the owner side ------------------------------------------------------ */

static void respond(struct psrv *s, int origin, uint64_t rid, uint32_t epoch, int status,
                    const char *text)
{
    struct pack p;

    pack_init(&p);
    pack_u64(&p, rid);
    pack_i32(&p, status);
    pack_str(&p, text ? text : "");
    struct msg m = {.type = MSG_KVS_RESP,
                    .epoch = epoch,
                    .origin = s->cfg.nodeid,
                    .dest = origin,
                    .payload = p.buf,
                    .len = p.len};
    if (!pack_error(&p))
        (void)srv_route(s, origin, &m);
    pack_free(&p);
}

static void serve(struct psrv *s, int origin, uint64_t rid, uint32_t epoch,
                  const char *key)
{
    uint32_t tag = 0;
    const char *v = kvs_get_tagged(s->kvs, key, &tag);

    s->kvsr->served++;
    if (v && tag <= epoch)
        respond(s, origin, rid, epoch, 0, v);
    else /* absent, or put again in a fence the asker has not completed */
        respond(s, origin, rid, epoch, 1, NULL);
}

void kr_fence_done(struct psrv *s)
{
    struct kvsroute *k = s->kvsr;
    uint32_t now = (uint32_t)fence_epoch(s->fence);
    struct kvs *fresh = kvs_create();

    /* Values may be put again in the new epoch: the cache is dropped.  When
     * no memory for a new one, keep none (gets ask again). */
    if (fresh) {
        kvs_set_limits(fresh, s->lim.kvs_keys_per_job, s->lim.kvs_bytes_per_job);
        kvs_destroy(k->cache);
        k->cache = fresh;
    } else {
        kvs_set_limits(k->cache, 0, 0);
    }
    struct kdef **pp = &k->def;
    while (*pp) {
        struct kdef *d = *pp;
        if (d->epoch > now) {
            pp = &d->next;
            continue;
        }
        *pp = d->next;
        k->ndef--;
        serve(s, d->origin, d->rid, d->epoch, d->key);
        free_kdef(d);
    }
    for (k->deftail = &k->def; *k->deftail; k->deftail = &(*k->deftail)->next)
        ;
}

static int on_req(struct psrv *s, const struct msg *m, uint64_t id, const char *key)
{
    struct kvsroute *k = s->kvsr;
    uint32_t now = (uint32_t)fence_epoch(s->fence);

    if (m->epoch > now + 1)
        return -EPROTO;
    if (m->epoch <= now) {
        serve(s, m->origin, id, m->epoch, key);
        return 0;
    }
    /* The asker completed a fence whose FENCE_DOWN is still on its way here. */
    if (s->aborted) {
        respond(s, m->origin, id, m->epoch, -ECANCELED, "the job is aborting");
        return 0;
    }
    if (k->ndef >= KR_MAX_DEFER) {
        char why[96];
        snprintf(why, sizeof(why), "node %d: too many gets waiting for its fence",
                 s->cfg.nodeid);
        respond(s, m->origin, id, m->epoch, -EAGAIN, why);
        return 0;
    }
    struct kdef *d = calloc(1, sizeof(*d));
    if (!d || !(d->key = strdup(key))) {
        free(d);
        respond(s, m->origin, id, m->epoch, -ENOMEM, "out of memory");
        return 0;
    }
    d->origin = m->origin;
    d->rid = id;
    d->epoch = m->epoch;
    d->deadline =
        s->cfg.fence_timeout_ms > 0 ? srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms : 0;
    *k->deftail = d;
    k->deftail = &d->next;
    k->ndef++;
    return 0;
}

static int on_resp(struct psrv *s, const struct msg *m, uint64_t id, int status,
                   const char *text)
{
    struct kvsroute *k = s->kvsr;
    struct kq *q;

    for (q = k->out; q && q->id != id; q = q->nextq)
        ;
    if (!q || q->next >= q->ncand || q->cand[q->next] != m->origin) {
        srv_log(s, PSRV_LOG_DEBUG,
                "kvs get %llu: late or stray answer from node %d dropped",
                (unsigned long long)id, m->origin);
        return 0;
    }
    if (status == 0) {
        if (q->epoch == (uint32_t)fence_epoch(s->fence))
            (void)kvs_insert(k->cache, q->key, text); /* full cache: not kept */
        unlink_kq(k, q);
        answer(s, q, 0, text, NULL);
        free_kq(q);
        return 0;
    }
    if (status < 0) {
        q->failed = true;
        snprintf(q->why, sizeof(q->why), "get %s: node %d: %s", q->key, m->origin, text);
    }
    q->next++;
    advance(s, q);
    return 0;
}

/* A copy of a wire string of 0..max bytes without NUL, or NULL. */
static char *wire_str(const void *b, size_t n, size_t max)
{
    if (n > max || (n && (!b || memchr(b, '\0', n))))
        return NULL;
    char *c = malloc(n + 1);
    if (c) {
        if (n)
            memcpy(c, b, n);
        c[n] = '\0';
    }
    return c;
}

int kr_tree_input(struct psrv *s, const struct msg *m)
{
    struct unpack u;
    size_t n = 0;
    int32_t status = 0;
    int rc;

    if (m->dest < 0 || m->dest >= s->cfg.nnodes || m->origin < 0 ||
        m->origin >= s->cfg.nnodes || m->origin == m->dest)
        return -EPROTO;
    if (m->dest != s->cfg.nodeid) { /* pass it on */
        struct msg fwd = *m;
        return srv_route(s, m->dest, &fwd) < 0 ? -EIO : 0;
    }
    unpack_init(&u, m->payload, m->len);
    uint64_t id = unpack_u64(&u);
    if (m->type == MSG_KVS_RESP)
        status = unpack_i32(&u);
    const void *b = unpack_bytes(&u, &n);
    if (unpack_error(&u) || unpack_remaining(&u))
        return -EPROTO;
    if (m->type == MSG_KVS_REQ && (n == 0 || n > PMI_MAX_KEYLEN))
        return -EPROTO;
    if (m->type == MSG_KVS_RESP && (status > 1 || (status == 1 && n)))
        return -EPROTO;
    char *text = wire_str(b, n, PMI_MAX_VALLEN);
    if (!text)
        return n > PMI_MAX_VALLEN || (n && memchr(b, '\0', n)) ? -EPROTO : -ENOMEM;
    if (m->type == MSG_KVS_REQ)
        rc = on_req(s, m, id, text);
    else
        rc = on_resp(s, m, id, status, text);
    free(text);
    return rc;
}

void kr_client_lost(struct psrv *s, struct client *c)
{
    struct kvsroute *k = s->kvsr;

    for (struct kq **pp = &k->out; *pp;) {
        struct kq *q = *pp;
        for (struct kwait **wp = &q->w; *wp;) {
            struct kwait *w = *wp;
            if (w->client != c->idx) {
                wp = &w->next;
                continue;
            }
            *wp = w->next;
            k->nout_client[c->idx]--;
            free(w->thrid);
            free(w);
        }
        if (q->w) {
            pp = &q->nextq;
            continue;
        }
        *pp = q->nextq; /* nobody waits: a late answer is dropped */
        k->nout--;
        free_kq(q);
    }
}

void kr_link_gone(struct psrv *s, int node)
{
    struct kvsroute *k = s->kvsr;

    for (struct kq *q = k->out, *nx; q; q = nx) {
        nx = q->nextq;
        if (q->next >= q->ncand ||
            ktree_next_hop(s->cfg.tree_width, s->cfg.nnodes, s->cfg.nodeid,
                           q->cand[q->next]) != node)
            continue;
        q->failed = true;
        snprintf(q->why, sizeof(q->why), "get %s: the link to node %d broke", q->key,
                 node);
        q->next++;
        advance(s, q); /* may answer and free q: start over (each pass moves on) */
        nx = k->out;
    }
}

void kr_fail(struct psrv *s, const char *text)
{
    struct kvsroute *k = s->kvsr;

    if (!k)
        return;
    while (k->out) {
        struct kq *q = k->out;
        k->out = q->nextq;
        k->nout--;
        answer(s, q, -1, NULL, text);
        free_kq(q);
    }
    while (k->def) { /* their askers fail with the job */
        struct kdef *d = k->def;
        k->def = d->next;
        free_kdef(d);
    }
    k->ndef = 0;
    k->deftail = &k->def;
}

int kr_tick(struct psrv *s, uint64_t now)
{
    struct kvsroute *k = s->kvsr;
    int next = -1;

#define NEXT(dl)                                                                         \
    do {                                                                                 \
        uint64_t ms_ = (dl)-now;                                                         \
        int v_ = ms_ > 0x7fffffff ? 0x7fffffff : (int)ms_;                               \
        next = next < 0 || v_ < next ? v_ : next;                                        \
    } while (0)
    for (struct kq **pp = &k->out; *pp;) {
        struct kq *q = *pp;
        if (!q->deadline || now < q->deadline) {
            if (q->deadline)
                NEXT(q->deadline);
            pp = &q->nextq;
            continue;
        }
        char text[200];
        snprintf(text, sizeof(text), "get %s: no answer from node %d within %d ms",
                 q->key, q->next < q->ncand ? q->cand[q->next] : -1,
                 s->cfg.fence_timeout_ms);
        srv_log(s, PSRV_LOG_WARN, "%s", text);
        *pp = q->nextq;
        k->nout--;
        answer(s, q, -1, NULL, text);
        free_kq(q);
    }
    for (struct kdef **pp = &k->def; *pp;) {
        struct kdef *d = *pp;
        if (!d->deadline || now < d->deadline) {
            if (d->deadline)
                NEXT(d->deadline);
            pp = &d->next;
            continue;
        }
        char text[120];
        snprintf(text, sizeof(text), "node %d did not complete fence %u within %d ms",
                 s->cfg.nodeid, d->epoch, s->cfg.fence_timeout_ms);
        *pp = d->next;
        k->ndef--;
        respond(s, d->origin, d->rid, d->epoch, -ETIMEDOUT, text);
        free_kdef(d);
    }
    for (k->deftail = &k->def; *k->deftail; k->deftail = &(*k->deftail)->next)
        ;
#undef NEXT
    return next;
}

void kr_usage(const struct psrv *s, int64_t *cache_keys, int64_t *remote_gets,
              int64_t *served)
{
    *cache_keys = kvs_count(s->kvsr->cache);
    *remote_gets = s->kvsr->remote_gets;
    *served = s->kvsr->served;
}
