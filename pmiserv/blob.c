/* blob.c - the blob collective and routed direct-modex requests (see blob.h).
 *
 * Notes:
 *   - One collective is in flight at a time; the epoch counts completed
 *     ones.  A child's COLL_UP for epoch + 1 (its parent's COLL_DOWN reached
 *     it before this node finished forwarding) is held and replayed.
 *   - Interior nodes never look inside blobs: they append bytes.
 *   - Failure goes through srv_abort(), which floods FENCE_FAIL over the
 *     tree and comes back here through blob_fail() on every node.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "ktree.h"
#include "msg.h"
#include "pack.h"
#include "psrv_int.h"

struct lcontrib { /* a local contribution waiting for its turn */
    uint64_t id;
    void *buf;
    size_t len;
    struct lcontrib *next;
};

struct heldup {
    int from;
    uint32_t epoch;
    void *buf;
    size_t len;
    struct heldup *next;
};

struct dreq {     /* a direct-modex request: ours (out) or served here (in) */
    uint64_t id;  /* out: the host's id; in: our handle */
    uint64_t rid; /* in: the origin's id */
    int origin;   /* in: the origin node */
    int rank;
    uint64_t deadline;
    struct dreq *next;
};

struct blobsvc {
    uint32_t epoch;
    bool active;   /* an epoch is in progress here */
    bool local_in; /* this node's contribution (head of queue) is in */
    bool up_sent;
    bool failed;
    bool *child_in;
    int nchild_in;
    struct pack data; /* own blob + children's blobs */
    bool armed;
    uint64_t deadline;
    int graces; /* extensions granted to this epoch's deadline */
    struct lcontrib *queue, **qtail;
    struct heldup *held;
    int broken_node;
    struct dreq *out, *in;
    uint64_t next_handle;
};

struct blobsvc *blob_create(struct psrv *s)
{
    struct blobsvc *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->child_in = calloc(s->nchildren ? s->nchildren : 1, sizeof(bool));
    if (!b->child_in) {
        free(b);
        errno = ENOMEM;
        return NULL;
    }
    pack_init(&b->data);
    b->qtail = &b->queue;
    b->broken_node = -1;
    b->next_handle = 1;
    return b;
}

static void free_dreqs(struct dreq *d)
{
    while (d) {
        struct dreq *n = d->next;
        free(d);
        d = n;
    }
}

void blob_destroy(struct blobsvc *b)
{
    if (!b)
        return;
    while (b->queue) {
        struct lcontrib *l = b->queue;
        b->queue = l->next;
        free(l->buf);
        free(l);
    }
    while (b->held) {
        struct heldup *h = b->held;
        b->held = h->next;
        free(h->buf);
        free(h);
    }
    free_dreqs(b->out);
    free_dreqs(b->in);
    pack_free(&b->data);
    free(b->child_in);
    free(b);
}

static void coll_done(struct psrv *s, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg)
{
    if (s->ops.coll_done)
        s->ops.coll_done(s->arg, id, rc, data, len, msg);
}

void blob_fail(struct psrv *s, int rank, const char *text)
{
    struct blobsvc *b = s->blob;

    if (!b->failed) {
        b->failed = true;
        b->armed = false;
        /* Every queued local contribution is answered: nobody waits. */
        while (b->queue) {
            struct lcontrib *l = b->queue;
            b->queue = l->next;
            coll_done(s, l->id, -ECANCELED, NULL, 0, text);
            free(l->buf);
            free(l);
        }
        b->qtail = &b->queue;
        while (b->out) {
            struct dreq *d = b->out;
            b->out = d->next;
            if (s->ops.dmdx_done)
                s->ops.dmdx_done(s->arg, d->id, -ECANCELED, NULL, 0, text);
            free(d);
        }
    }
    srv_abort(s, rank, 1, "%s", text);
}

/* ---- the collective ---------------------------------------------------- */

static void fail_now(struct psrv *s, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_now(struct psrv *s, int rank, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    blob_fail(s, rank, text);
}

static bool start(struct psrv *s)
{
    struct blobsvc *b = s->blob;

    if (b->failed || s->aborted) {
        if (!b->failed)
            blob_fail(s, -1, "the job is aborting");
        return false;
    }
    if (b->active)
        return true;
    b->active = true;
    if (s->cfg.fence_timeout_ms > 0) {
        b->armed = true;
        b->deadline = srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms;
        b->graces = 0;
    }
    if (b->broken_node >= 0) {
        fail_now(s, -1, "collective %u on node %d: the link to node %d is broken",
                 b->epoch, s->cfg.nodeid, b->broken_node);
        return false;
    }
    if (!b->local_in)
        for (int i = 0; i < s->cfg.local_count; i++)
            if (s->cl[i].dead) {
                blob_client_lost(s, &s->cl[i]);
                return false;
            }
    return true;
}

static void replay_held(struct psrv *s);
static void progress(struct psrv *s);

static void complete(struct psrv *s, const void *all, size_t len)
{
    struct blobsvc *b = s->blob;
    struct lcontrib *l = b->queue;

    b->queue = l->next;
    if (!b->queue)
        b->qtail = &b->queue;
    b->epoch++;
    b->active = b->local_in = b->up_sent = b->armed = false;
    b->nchild_in = 0;
    memset(b->child_in, 0, (s->nchildren ? s->nchildren : 1) * sizeof(bool));
    srv_log(s, PSRV_LOG_DEBUG, "collective %u: done (%zu bytes)", b->epoch - 1, len);
    coll_done(s, l->id, 0, all, len, NULL);
    free(l->buf);
    free(l);
    pack_reset(&b->data);
    /* The next queued contribution, and children already in for it. */
    if (b->queue && !b->failed) {
        b->local_in = true;
        if (!start(s))
            return;
        pack_raw(&b->data, b->queue->buf, b->queue->len);
    }
    replay_held(s);
    progress(s);
}

static void progress(struct psrv *s)
{
    struct blobsvc *b = s->blob;

    if (!b->active || b->failed || b->up_sent || !b->local_in ||
        b->nchild_in < s->nchildren)
        return;
    if (pack_error(&b->data)) {
        fail_now(s, -1, "collective %u: out of memory", b->epoch);
        return;
    }
    struct msg m = {.epoch = b->epoch,
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = -1,
                    .payload = b->data.buf,
                    .len = b->data.len};
    if (s->parent < 0) {
        m.type = MSG_COLL_DOWN;
        for (int i = 0; i < s->nchildren; i++)
            if (srv_tree_send(s, s->children[i], &m) < 0) {
                fail_now(s, -1, "collective %u: cannot send to child node %d", b->epoch,
                         s->children[i]);
                return;
            }
        /* complete() resets data: hand the callback its own copy's bytes. */
        struct pack all = b->data;
        pack_init(&b->data);
        complete(s, all.buf, all.len);
        pack_free(&all);
        return;
    }
    m.type = MSG_COLL_UP;
    if (srv_tree_send(s, s->parent, &m) < 0) {
        fail_now(s, -1, "collective %u: cannot send to parent node %d", b->epoch,
                 s->parent);
        return;
    }
    b->up_sent = true;
    pack_reset(&b->data);
}

static void on_up(struct psrv *s, int ci, const struct msg *m)
{
    struct blobsvc *b = s->blob;

    if (!start(s))
        return;
    if (m->len)
        pack_raw(&b->data, m->payload, m->len);
    b->child_in[ci] = true;
    b->nchild_in++;
    progress(s);
}

static void replay_held(struct psrv *s)
{
    struct blobsvc *b = s->blob;
    struct heldup **pp = &b->held;

    while (*pp && !b->failed) {
        struct heldup *h = *pp;
        int ci = srv_child_index(s, h->from);
        if (h->epoch != b->epoch || ci < 0 || b->child_in[ci]) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        struct msg m = {.type = MSG_COLL_UP,
                        .epoch = h->epoch,
                        .from = h->from,
                        .payload = h->buf,
                        .len = h->len};
        on_up(s, ci, &m);
        free(h->buf);
        free(h);
        pp = &b->held;
    }
}

int psrv_coll_contribute(struct psrv *s, uint64_t id, const void *blob, size_t len)
{
    struct blobsvc *b;
    struct lcontrib *l;

    if (!s || (len && !blob))
        return -EINVAL;
    b = s->blob;
    if (b->failed || s->aborted) {
        coll_done(s, id, -ECANCELED, NULL, 0, "the job is aborting");
        return 0;
    }
    if (!(l = calloc(1, sizeof(*l))) || (len && !(l->buf = malloc(len)))) {
        free(l);
        return -ENOMEM;
    }
    if (len)
        memcpy(l->buf, blob, len);
    l->len = len;
    l->id = id;
    bool first = !b->queue;
    *b->qtail = l;
    b->qtail = &l->next;
    if (!first)
        return 0; /* its turn comes when the one in flight completes */
    b->local_in = true;
    if (!start(s))
        return 0;
    pack_raw(&b->data, blob, len);
    srv_log(s, PSRV_LOG_DEBUG, "collective %u: local blob in (%zu bytes)", b->epoch, len);
    progress(s);
    return 0;
}

void blob_client_lost(struct psrv *s, struct client *c)
{
    struct blobsvc *b = s->blob;

    if (!b->active || b->local_in || b->failed || !c->dead)
        return;
    fail_now(s, c->rank, "collective %u: rank %d exited before entering it", b->epoch,
             c->rank);
}

void blob_link_gone(struct psrv *s, int node)
{
    struct blobsvc *b = s->blob;

    if (b->failed)
        return;
    if (!b->active) {
        b->broken_node = node;
    } else {
        fail_now(s, -1, "collective %u on node %d: the link to node %d broke", b->epoch,
                 s->cfg.nodeid, node);
        return;
    }
    for (struct dreq *d = b->out; d; d = d->next) {
        if (ktree_next_hop(s->cfg.tree_width, s->cfg.nnodes, s->cfg.nodeid,
                           s->rank_node ? s->rank_node[d->rank] : 0) == node) {
            fail_now(s, d->rank, "direct modex for rank %d: the link to node %d broke",
                     d->rank, node);
            return;
        }
    }
}

/* ---- routed direct-modex requests -------------------------------------- */

static int route(struct psrv *s, int dest, struct msg *m)
{
    int hop = ktree_next_hop(s->cfg.tree_width, s->cfg.nnodes, s->cfg.nodeid, dest);
    if (hop < 0)
        return -EINVAL;
    m->from = s->cfg.nodeid;
    return srv_tree_send(s, hop, m);
}

static void dmdx_done(struct psrv *s, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg)
{
    if (s->ops.dmdx_done)
        s->ops.dmdx_done(s->arg, id, rc, data, len, msg);
}

/* A request arrived for local rank `rank` (or was made here for it). */
static void serve(struct psrv *s, int origin, uint64_t rid, int rank, const void *info,
                  size_t len)
{
    struct blobsvc *b = s->blob;
    struct dreq *d = calloc(1, sizeof(*d));

    if (!d || !s->ops.dmdx_request) {
        free(d);
        if (origin == s->cfg.nodeid) {
            dmdx_done(s, rid, -ENOSYS, NULL, 0, "no direct modex on this node");
        } else {
            struct pack p;
            pack_init(&p);
            pack_u64(&p, rid);
            pack_i32(&p, -ENOSYS);
            pack_bytes(&p, NULL, 0);
            struct msg m = {.type = MSG_DMDX_RESP,
                            .origin = s->cfg.nodeid,
                            .dest = origin,
                            .payload = p.buf,
                            .len = p.len};
            (void)route(s, origin, &m);
            pack_free(&p);
        }
        return;
    }
    d->id = b->next_handle++;
    d->rid = rid;
    d->origin = origin;
    d->rank = rank;
    d->next = b->in;
    b->in = d;
    s->ops.dmdx_request(s->arg, d->id, rank, info, len);
}

int psrv_dmdx_request(struct psrv *s, uint64_t id, int rank, const void *info, size_t len)
{
    struct blobsvc *b;
    int node;

    if (!s || rank < 0 || rank >= s->cfg.size || (len && !info))
        return -EINVAL;
    b = s->blob;
    node = s->rank_node ? s->rank_node[rank] : (s->cfg.nnodes == 1 ? 0 : -1);
    if (node < 0)
        return -EINVAL;
    if (b->failed || s->aborted)
        return -ECANCELED;
    if (node == s->cfg.nodeid) {
        serve(s, node, id, rank, info, len);
        return 0;
    }
    struct dreq *d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    d->id = id;
    d->rank = rank;
    d->origin = s->cfg.nodeid;
    d->deadline =
        s->cfg.fence_timeout_ms > 0 ? srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms : 0;
    struct pack p;
    pack_init(&p);
    pack_u64(&p, id);
    pack_i32(&p, rank);
    pack_bytes(&p, info, len);
    struct msg m = {.type = MSG_DMDX_REQ,
                    .origin = s->cfg.nodeid,
                    .dest = node,
                    .payload = p.buf,
                    .len = p.len};
    int rc = pack_error(&p) ? -ENOMEM : route(s, node, &m);
    pack_free(&p);
    if (rc < 0) {
        free(d);
        return rc;
    }
    d->next = b->out;
    b->out = d;
    srv_log(s, PSRV_LOG_DEBUG, "direct modex %llu: rank %d on node %d asked",
            (unsigned long long)id, rank, node);
    return 0;
}

int psrv_dmdx_reply(struct psrv *s, uint64_t handle, int rc, const void *data, size_t len)
{
    struct blobsvc *b;
    struct dreq **pp, *d;

    if (!s || (len && !data))
        return -EINVAL;
    b = s->blob;
    for (pp = &b->in; *pp && (*pp)->id != handle; pp = &(*pp)->next)
        ;
    if (!(d = *pp))
        return -ENOENT;
    *pp = d->next;
    if (d->origin == s->cfg.nodeid) {
        dmdx_done(s, d->rid, rc, data, len, rc ? "direct modex failed" : NULL);
        free(d);
        return 0;
    }
    struct pack p;
    pack_init(&p);
    pack_u64(&p, d->rid);
    pack_i32(&p, rc);
    pack_bytes(&p, data, len);
    struct msg m = {.type = MSG_DMDX_RESP,
                    .origin = s->cfg.nodeid,
                    .dest = d->origin,
                    .payload = p.buf,
                    .len = p.len};
    int r = pack_error(&p) ? -ENOMEM : route(s, d->origin, &m);
    pack_free(&p);
    free(d);
    return r;
}

static int on_dmdx(struct psrv *s, const struct msg *m)
{
    struct blobsvc *b = s->blob;
    struct unpack u;
    size_t n = 0;

    if (m->dest < 0 || m->dest >= s->cfg.nnodes || m->origin < 0 ||
        m->origin >= s->cfg.nnodes)
        return -EPROTO;
    if (m->dest != s->cfg.nodeid) { /* pass it on */
        struct msg fwd = *m;
        return route(s, m->dest, &fwd) < 0 ? -EIO : 0;
    }
    unpack_init(&u, m->payload, m->len);
    uint64_t id = unpack_u64(&u);
    int32_t v = unpack_i32(&u);
    const void *data = unpack_bytes(&u, &n);
    if (unpack_error(&u) || unpack_remaining(&u))
        return -EPROTO;
    if (m->type == MSG_DMDX_REQ) {
        if (v < 0 || v >= s->cfg.size ||
            (s->rank_node && s->rank_node[v] != s->cfg.nodeid))
            return -EPROTO;
        serve(s, m->origin, id, v, data, n);
        return 0;
    }
    for (struct dreq **pp = &b->out; *pp; pp = &(*pp)->next) {
        struct dreq *d = *pp;
        if (d->id != id)
            continue;
        *pp = d->next;
        free(d);
        dmdx_done(s, id, v, data, n, v ? "direct modex failed on the rank's node" : NULL);
        return 0;
    }
    srv_log(s, PSRV_LOG_DEBUG, "direct modex %llu: late answer dropped",
            (unsigned long long)id);
    return 0;
}

int blob_tree_input(struct psrv *s, const struct msg *m)
{
    struct blobsvc *b = s->blob;

    if (m->type == MSG_DMDX_REQ || m->type == MSG_DMDX_RESP)
        return on_dmdx(s, m);
    if (b->failed)
        return 0;
    if (m->type == MSG_COLL_UP) {
        int ci = srv_child_index(s, m->from);
        if (ci < 0)
            return -EPROTO;
        if (m->epoch < b->epoch || (m->epoch == b->epoch && b->child_in[ci]))
            return 0; /* stale or duplicate */
        if (m->epoch == b->epoch + 1) {
            struct heldup *h = calloc(1, sizeof(*h));
            if (!h || (m->len && !(h->buf = malloc(m->len)))) {
                free(h);
                fail_now(s, -1, "collective %u: out of memory", b->epoch);
                return -ENOMEM;
            }
            if (m->len)
                memcpy(h->buf, m->payload, m->len);
            h->len = m->len;
            h->from = m->from;
            h->epoch = m->epoch;
            h->next = b->held;
            b->held = h;
            return 0;
        }
        if (m->epoch != b->epoch) {
            fail_now(s, -1, "collective %u on node %d: COLL_UP of epoch %u from node %d",
                     b->epoch, s->cfg.nodeid, m->epoch, m->from);
            return -EPROTO;
        }
        on_up(s, ci, m);
        return 0;
    }
    if (m->type == MSG_COLL_DOWN) {
        if (m->from != s->parent)
            return -EPROTO;
        if (m->epoch != b->epoch || !b->up_sent) {
            srv_log(s, PSRV_LOG_DEBUG, "collective %u: COLL_DOWN %u dropped", b->epoch,
                    m->epoch);
            return 0;
        }
        struct msg fwd = *m;
        fwd.from = s->cfg.nodeid;
        for (int i = 0; i < s->nchildren; i++)
            if (srv_tree_send(s, s->children[i], &fwd) < 0) {
                fail_now(s, -1, "collective %u: cannot send to child node %d", b->epoch,
                         s->children[i]);
                return 0;
            }
        complete(s, m->payload, m->len);
        return 0;
    }
    return -EPROTO;
}

/* Extensions of the deadline a node may take before it reports a timeout
 * itself, so that the report names as much as possible: a node missing its
 * own contribution reports at once (it knows the ranks are local); one
 * waiting on children waits longer the higher it sits, so the deepest node
 * that misses a child reports first; one waiting only on its parent waits
 * longest.  The first report floods the tree. */
static int graces_allowed(const struct psrv *s)
{
    const struct blobsvc *b = s->blob;
    int k = s->cfg.tree_width, n = s->cfg.nnodes;
    int height = ktree_depth(k, n, n - 1) - ktree_depth(k, n, s->cfg.nodeid);

    if (!b->local_in)
        return 0;
    for (int i = 0; i < s->nchildren; i++)
        if (!b->child_in[i])
            return 1 + (height > 0 ? height : 0);
    return ktree_depth(k, n, n - 1) + 2;
}

static uint64_t grace_ms(const struct psrv *s)
{
    uint64_t g = (uint64_t)s->cfg.fence_timeout_ms / 10;
    return g < 200 ? 200 : g > 5000 ? 5000 : g;
}

int blob_tick(struct psrv *s, uint64_t now)
{
    struct blobsvc *b = s->blob;
    int next = -1;

    if (b->failed)
        return -1;
    for (struct dreq **pp = &b->out; *pp;) {
        struct dreq *d = *pp;
        if (d->deadline && now >= d->deadline) {
            char text[160];
            *pp = d->next;
            snprintf(text, sizeof(text),
                     "direct modex for rank %d: no answer from node %d within %d ms",
                     d->rank, s->rank_node ? s->rank_node[d->rank] : 0,
                     s->cfg.fence_timeout_ms);
            srv_log(s, PSRV_LOG_WARN, "%s", text);
            dmdx_done(s, d->id, -ETIMEDOUT, NULL, 0, text);
            free(d);
            continue;
        }
        if (d->deadline) {
            uint64_t ms = d->deadline - now;
            int v = ms > 0x7fffffff ? 0x7fffffff : (int)ms;
            next = next < 0 || v < next ? v : next;
        }
        pp = &d->next;
    }
    if (!b->armed)
        return next;
    if (now >= b->deadline && b->graces < graces_allowed(s)) {
        b->graces++;
        b->deadline = now + grace_ms(s);
    }
    if (now >= b->deadline) {
        char text[400];
        int n = snprintf(text, sizeof(text), "collective %u timed out on node %d",
                         b->epoch, s->cfg.nodeid);
        if (!b->local_in)
            n += snprintf(text + n, sizeof(text) - (size_t)n,
                          "; not every local rank entered it");
        for (int i = 0, k = 0; i < s->nchildren && n < (int)sizeof(text) - 16; i++)
            if (!b->child_in[i])
                n += snprintf(text + n, sizeof(text) - (size_t)n,
                              k++ ? " %d" : "; no contribution from child node(s): %d",
                              s->children[i]);
        if (b->up_sent && n < (int)sizeof(text) - 40)
            snprintf(text + n, sizeof(text) - (size_t)n,
                     "; no answer from parent node %d", s->parent);
        blob_fail(s, -1, text);
        return -1;
    }
    uint64_t ms = b->deadline - now;
    int v = ms > 0x7fffffff ? 0x7fffffff : (int)ms;
    return next < 0 || v < next ? v : next;
}
