/* blob.c - the blob collective and routed direct-modex requests (see blob.h).
 *
 * Notes:
 *   - The collective is treecoll.c's, one epoch at a time: this file queues the
 *     host's local contributions and hands them over in turn, each once the
 *     one before has completed.
 *   - Failure goes through srv_abort(), which floods FENCE_FAIL over the
 *     tree and comes back here through blob_fail() on every node.
 *   - What tasks can make pile up is capped (their PMIx server asks for them):
 *     BLOB_MAX_QUEUE local contributions waiting (-EAGAIN beyond), and
 *     BLOB_MAX_DREQS direct-modex requests in flight each way (ours:
 *     -EAGAIN; served here: answered -EAGAIN at once).
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
#include "treecoll.h"

#define BLOB_MAX_QUEUE 256
#define BLOB_MAX_DREQS 4096

struct lcontrib { /* a local contribution waiting for its turn */
    uint64_t id;
    void *buf;
    size_t len;
    struct lcontrib *next;
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
    struct tcoll *tc;
    struct lcontrib *queue, **qtail; /* the head is in flight */
    struct dreq *out, *in;
    int nqueue, nout, nin; /* lengths of queue, out, in (caps above) */
    uint64_t next_handle;
};

static void coll_done(struct psrv *s, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg)
{
    if (s->ops.coll_done)
        s->ops.coll_done(s->arg, id, rc, data, len, msg);
}

static void free_dreqs(struct dreq *d)
{
    while (d) {
        struct dreq *n = d->next;
        free(d);
        d = n;
    }
}

/* ---- the collective ---------------------------------------------------- */

static bool starting(struct psrv *s)
{
    if (!tc_local_in(s->blob->tc))
        for (int i = 0; i < s->cfg.local_count; i++)
            if (s->cl[i].dead) {
                blob_client_lost(s, &s->cl[i]);
                return false;
            }
    return true;
}

static void describe_local(struct psrv *s, FILE *fp)
{
    if (!tc_local_in(s->blob->tc))
        fprintf(fp, "; not every local rank entered it");
}

static void done(struct psrv *s, const void *all, size_t len)
{
    struct blobsvc *b = s->blob;
    struct lcontrib *l = b->queue;

    if (!l) /* cannot happen: only the queue's head contributes */
        return;
    b->queue = l->next;
    b->nqueue--;
    if (!b->queue)
        b->qtail = &b->queue;
    coll_done(s, l->id, 0, all, len, NULL);
    free(l->buf);
    free(l);
    if (b->queue) /* the next one's turn */
        tc_local(s, b->tc, b->queue->buf, b->queue->len);
}

static void failed(struct psrv *s, int rank, int from_node, const char *text)
{
    struct blobsvc *b = s->blob;

    (void)from_node;
    /* Every queued local contribution is answered: nobody waits. */
    while (b->queue) {
        struct lcontrib *l = b->queue;
        b->queue = l->next;
        coll_done(s, l->id, -ECANCELED, NULL, 0, text);
        free(l->buf);
        free(l);
    }
    b->qtail = &b->queue;
    b->nqueue = 0;
    while (b->out) {
        struct dreq *d = b->out;
        b->out = d->next;
        if (s->ops.dmdx_done)
            s->ops.dmdx_done(s->arg, d->id, -ECANCELED, NULL, 0, text);
        free(d);
    }
    b->nout = 0;
    srv_abort(s, rank, 1, "%s", text);
}

struct blobsvc *blob_create(struct psrv *s)
{
    static const struct tcoll_ops ops = {
        .starting = starting,
        .describe_local = describe_local,
        .done = done,
        .failed = failed,
    };
    struct blobsvc *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    if (!(b->tc = tc_create(s, "collective", MSG_COLL_UP, MSG_COLL_DOWN, &ops))) {
        free(b);
        return NULL;
    }
    b->qtail = &b->queue;
    b->next_handle = 1;
    return b;
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
    free_dreqs(b->out);
    free_dreqs(b->in);
    tc_destroy(b->tc);
    free(b);
}

void blob_fail(struct psrv *s, int rank, const char *text)
{
    tc_fail(s, s->blob->tc, rank, -1, text);
    srv_abort(s, rank, 1, "%s", text); /* when the collective had failed already */
}

int psrv_coll_contribute(struct psrv *s, uint64_t id, const void *blob, size_t len)
{
    struct blobsvc *b;
    struct lcontrib *l;

    if (!s || (len && !blob))
        return -EINVAL;
    b = s->blob;
    if (tc_failed(b->tc) || s->aborted) {
        coll_done(s, id, -ECANCELED, NULL, 0, "the job is aborting");
        return 0;
    }
    if (b->nqueue >= BLOB_MAX_QUEUE)
        return -EAGAIN;
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
    b->nqueue++;
    if (first) /* else its turn comes when the one in flight completes */
        tc_local(s, b->tc, l->buf, l->len);
    return 0;
}

void blob_client_lost(struct psrv *s, struct client *c)
{
    struct blobsvc *b = s->blob;
    char text[160];

    if (!tc_active(b->tc) || tc_local_in(b->tc) || tc_failed(b->tc) || !c->dead)
        return;
    snprintf(text, sizeof(text), "collective %u: rank %d exited before entering it",
             tc_epoch(b->tc), c->rank);
    blob_fail(s, c->rank, text);
}

void blob_link_gone(struct psrv *s, int node)
{
    struct blobsvc *b = s->blob;

    tc_link_gone(s, b->tc, node);
    if (tc_failed(b->tc))
        return;
    for (struct dreq *d = b->out; d; d = d->next) {
        if (ktree_next_hop(s->cfg.tree_width, s->cfg.nnodes, s->cfg.nodeid,
                           s->rank_node ? s->rank_node[d->rank] : 0) == node) {
            char text[160];
            snprintf(text, sizeof(text),
                     "direct modex for rank %d: the link to node %d broke", d->rank, node);
            blob_fail(s, d->rank, text);
            return;
        }
    }
}

/* ---- routed direct-modex requests -------------------------------------- */

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
    int err = !s->ops.dmdx_request ? -ENOSYS : b->nin >= BLOB_MAX_DREQS ? -EAGAIN : 0;
    struct dreq *d = err ? NULL : calloc(1, sizeof(*d));

    if (!d) {
        err = err ? err : -ENOMEM;
        if (origin == s->cfg.nodeid) {
            dmdx_done(s, rid, err, NULL, 0,
                      err == -ENOSYS ? "no direct modex on this node"
                                     : "too many direct modex requests on this node");
        } else {
            struct pack p;
            pack_init(&p);
            pack_u64(&p, rid);
            pack_i32(&p, err);
            pack_bytes(&p, NULL, 0);
            struct msg m = {.type = MSG_DMDX_RESP,
                            .origin = s->cfg.nodeid,
                            .dest = origin,
                            .payload = p.buf,
                            .len = p.len};
            (void)srv_route(s, origin, &m);
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
    b->nin++;
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
    if (tc_failed(b->tc) || s->aborted)
        return -ECANCELED;
    if (node == s->cfg.nodeid) {
        serve(s, node, id, rank, info, len);
        return 0;
    }
    if (b->nout >= BLOB_MAX_DREQS)
        return -EAGAIN;
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
    int rc = pack_error(&p) ? -ENOMEM : srv_route(s, node, &m);
    pack_free(&p);
    if (rc < 0) {
        free(d);
        return rc;
    }
    d->next = b->out;
    b->out = d;
    b->nout++;
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
    b->nin--;
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
    int r = pack_error(&p) ? -ENOMEM : srv_route(s, d->origin, &m);
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
        return srv_route(s, m->dest, &fwd) < 0 ? -EIO : 0;
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
        b->nout--;
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
    if (m->type == MSG_DMDX_REQ || m->type == MSG_DMDX_RESP)
        return on_dmdx(s, m);
    return tc_input(s, s->blob->tc, m);
}

int blob_tick(struct psrv *s, uint64_t now)
{
    struct blobsvc *b = s->blob;
    int next = -1;

    if (tc_failed(b->tc))
        return -1;
    for (struct dreq **pp = &b->out; *pp;) {
        struct dreq *d = *pp;
        if (d->deadline && now >= d->deadline) {
            char text[160];
            *pp = d->next;
            b->nout--;
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
    int v = tc_tick(s, b->tc, now);
    if (v < 0)
        return tc_failed(b->tc) ? -1 : next;
    return next < 0 || v < next ? v : next;
}
