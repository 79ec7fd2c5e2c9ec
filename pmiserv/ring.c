/* ring.c - PMIX_Ring scan over the k-ary node tree (see ring.h), and the
 * table of local ranks waiting in it (struct ring_wait, one per client).
 *
 * Payload of RING_UP and RING_DOWN: u32 count, str left, str right.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "pack.h"
#include "psrv_int.h"
#include "ring.h"

struct contrib {
    bool in;
    uint32_t count;
    char *left, *right;
};

/* A local client's contribution to the current ring. */
struct ring_wait {
    bool in; /* entered, not answered yet */
    char *left, *right;
    char *thrid; /* its request's thrid, echoed in the answer */
};

struct ring {
    int nwait;           /* entries of w: cfg.local_count */
    struct ring_wait *w; /* [client index] */
    uint32_t epoch;
    bool active, up_sent, failed;
    int nlocal;
    int nchild_in;
    int nchildren;
    struct contrib *child; /* [nchildren] */
    bool armed;
    uint64_t deadline;
};

struct ring *ring_create(struct psrv *s)
{
    struct ring *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->child = calloc(s->nchildren ? s->nchildren : 1, sizeof(*r->child));
    r->w = calloc((size_t)s->cfg.local_count, sizeof(*r->w));
    if (!r->child || !r->w) {
        free(r->child);
        free(r->w);
        free(r);
        errno = ENOMEM;
        return NULL;
    }
    r->nchildren = s->nchildren;
    r->nwait = s->cfg.local_count;
    return r;
}

static void clear_child(struct contrib *c)
{
    free(c->left);
    free(c->right);
    memset(c, 0, sizeof(*c));
}

static void clear_wait(struct ring_wait *w)
{
    free(w->left);
    free(w->right);
    free(w->thrid);
    memset(w, 0, sizeof(*w));
}

void ring_destroy(struct ring *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nchildren; i++)
        clear_child(&r->child[i]);
    for (int i = 0; i < r->nwait; i++)
        clear_wait(&r->w[i]);
    free(r->child);
    free(r->w);
    free(r);
}

static void reset(struct psrv *s)
{
    struct ring *r = s->ring;
    for (int i = 0; i < s->nchildren; i++)
        clear_child(&r->child[i]);
    for (int i = 0; i < s->cfg.local_count; i++)
        clear_wait(&r->w[i]);
    r->active = r->up_sent = r->armed = false;
    r->nlocal = r->nchild_in = 0;
}

void ring_fail(struct psrv *s, int rank, const char *text)
{
    struct ring *r = s->ring;
    if (r->failed)
        return;
    r->failed = true;
    /* srv_abort below hands the text to the host, which prints it: logging
     * it here too would say every abort twice. */
    srv_log(s, PSRV_LOG_DEBUG, "ring failed: %s", text);
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        if (r->w[i].in && !c->gone)
            c->proto->ring_done(s, c, r->w[i].thrid, -1, 0, NULL, NULL, text);
    }
    reset(s);
    srv_abort(s, rank, 1, "%s", text);
}

static int send_ring(struct psrv *s, int type, int to, uint32_t count, const char *left,
                     const char *right)
{
    struct pack p;
    pack_init(&p);
    pack_u32(&p, count);
    pack_str(&p, left);
    pack_str(&p, right);
    struct msg m = {.type = type,
                    .epoch = s->ring->epoch,
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = -1,
                    .payload = p.buf,
                    .len = p.len};
    int rc = pack_error(&p) ? -ENOMEM : srv_tree_send(s, to, &m);
    pack_free(&p);
    return rc;
}

/* Contributor i: local clients first, then children. */
static void contrib_at(struct psrv *s, int i, uint32_t *count, const char **l,
                       const char **rt)
{
    if (i < s->cfg.local_count) {
        *count = 1;
        *l = s->ring->w[i].left;
        *rt = s->ring->w[i].right;
    } else {
        struct contrib *c = &s->ring->child[i - s->cfg.local_count];
        *count = c->count;
        *l = c->left;
        *rt = c->right;
    }
}

static void down(struct psrv *s, uint32_t offset, const char *left, const char *right)
{
    int n = s->cfg.local_count + s->nchildren;
    uint32_t acc = offset;

    for (int i = 0; i < n; i++) {
        uint32_t cnt, pc, nc;
        const char *l, *rt, *pl, *pr, *nl, *nr;
        contrib_at(s, i, &cnt, &l, &rt);
        const char *myleft = left, *myright = right;
        if (i > 0) {
            contrib_at(s, i - 1, &pc, &pl, &pr);
            myleft = pr;
        }
        if (i < n - 1) {
            contrib_at(s, i + 1, &nc, &nl, &nr);
            myright = nl;
        }
        if (i < s->cfg.local_count) {
            struct client *c = &s->cl[i];
            if (!c->gone)
                c->proto->ring_done(s, c, s->ring->w[i].thrid, 0, (int)acc, myleft,
                                    myright, NULL);
        } else if (send_ring(s, MSG_RING_DOWN, s->children[i - s->cfg.local_count], acc,
                             myleft, myright) < 0) {
            char text[128];
            snprintf(text, sizeof(text), "ring: cannot send to child node %d",
                     s->children[i - s->cfg.local_count]);
            ring_fail(s, -1, text);
            return;
        }
        acc += cnt;
    }
    s->ring->epoch++;
    reset(s);
}

static void progress(struct psrv *s)
{
    struct ring *r = s->ring;
    int n = s->cfg.local_count + s->nchildren;
    uint32_t total = 0, cnt;
    const char *first_l, *first_r, *last_l, *last_r;

    if (!r->active || r->up_sent || r->nlocal < s->cfg.local_count ||
        r->nchild_in < s->nchildren)
        return;
    for (int i = 0; i < n; i++) {
        const char *l, *rt;
        contrib_at(s, i, &cnt, &l, &rt);
        total += cnt;
    }
    contrib_at(s, 0, &cnt, &first_l, &first_r);
    contrib_at(s, n - 1, &cnt, &last_l, &last_r);
    if (s->parent < 0) {
        down(s, 0, last_r, first_l);
        return;
    }
    if (send_ring(s, MSG_RING_UP, s->parent, total, first_l, last_r) < 0) {
        ring_fail(s, -1, "ring: cannot send to the parent node");
        return;
    }
    r->up_sent = true;
}

static bool start(struct psrv *s)
{
    struct ring *r = s->ring;
    if (r->active)
        return true;
    r->active = true;
    if (s->cfg.fence_timeout_ms > 0) {
        r->armed = true;
        r->deadline = srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms;
    }
    for (int i = 0; i < s->cfg.local_count; i++) {
        if (s->cl[i].dead || s->cl[i].finalized) {
            ring_client_lost(s, &s->cl[i]);
            return false;
        }
    }
    return true;
}

void ring_enter(struct psrv *s, struct client *c, const char *left, const char *right,
                const char *thrid)
{
    struct ring *r = s->ring;
    struct ring_wait *w = &r->w[c->idx];
    if (r->failed || s->aborted) {
        c->proto->ring_done(s, c, w->thrid, -1, 0, NULL, NULL, "the job is aborting");
        return;
    }
    if (w->in) {
        c->proto->ring_done(s, c, w->thrid, -1, 0, NULL, NULL,
                            "this rank is already in the ring");
        return;
    }
    w->left = srv_strdup(left);
    w->right = srv_strdup(right);
    w->thrid = srv_strdup(thrid);
    w->in = true;
    r->nlocal++;
    if (!start(s))
        return;
    progress(s);
}

void ring_client_lost(struct psrv *s, struct client *c)
{
    char text[128];
    if (!s->ring->active || s->ring->w[c->idx].in)
        return;
    snprintf(text, sizeof(text), "ring %u: rank %d %s before entering it", s->ring->epoch,
             c->rank, c->finalized ? "already finalized" : "exited without finalize");
    ring_fail(s, c->rank, text);
}

void ring_link_gone(struct psrv *s, int node)
{
    char text[128];
    if (!s->ring->active)
        return;
    snprintf(text, sizeof(text), "ring on node %d: the link to node %d broke",
             s->cfg.nodeid, node);
    ring_fail(s, -1, text);
}

int ring_tree_input(struct psrv *s, const struct msg *m)
{
    struct ring *r = s->ring;
    struct unpack u;

    if (r->failed)
        return 0;
    unpack_init(&u, m->payload, m->len);
    uint32_t count = unpack_u32(&u);
    char *left = unpack_strdup(&u);
    char *right = unpack_strdup(&u);
    if (unpack_error(&u) || !left || !right || unpack_remaining(&u)) {
        free(left);
        free(right);
        return -EPROTO;
    }
    if (m->epoch != r->epoch) {
        srv_log(s, PSRV_LOG_DEBUG, "ring %u: %s for ring %u dropped", r->epoch,
                msg_type2str(m->type), m->epoch);
        goto out;
    }
    if (m->type == MSG_RING_UP) {
        int ci = srv_child_index(s, m->from);
        if (ci < 0 || r->child[ci].in)
            goto out; /* not a child, or duplicate */
        if (!start(s))
            goto out;
        r->child[ci] = (struct contrib){true, count, left, right};
        left = right = NULL;
        r->nchild_in++;
        progress(s);
    } else {
        if (m->from != s->parent || !r->up_sent)
            goto out;
        down(s, count, left, right);
    }
out:
    free(left);
    free(right);
    return 0;
}

int ring_tick(struct psrv *s, uint64_t now)
{
    struct ring *r = s->ring;
    if (!r->armed || r->failed)
        return -1;
    if (now >= r->deadline) {
        char text[160];
        snprintf(text, sizeof(text),
                 "ring %u timed out on node %d (%d of %d local ranks, %d of %d "
                 "child nodes in)",
                 r->epoch, s->cfg.nodeid, r->nlocal, s->cfg.local_count, r->nchild_in,
                 s->nchildren);
        ring_fail(s, -1, text);
        return -1;
    }
    uint64_t d = r->deadline - now;
    return d > 0x7fffffff ? 0x7fffffff : (int)d;
}
