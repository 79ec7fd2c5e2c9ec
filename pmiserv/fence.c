/* fence.c - the fence state machine: local gather, k-ary tree gather to
 * node 0, commit, broadcast down, epochs, timeout and failure.
 *
 * Contract: see fence.h.
 *
 * Notes:
 *   - An up message carries this node's pending puts followed by the raw
 *     blobs of its children (kvs.h: blobs concatenate), so interior nodes
 *     never parse or copy pairs one by one; the root commits the whole
 *     concatenation once and sends it down unchanged.
 *   - Dead or finalized local clients make a fence fail as soon as it needs
 *     them: at once if one is in progress, else at its first event.
 *   - The deadline is armed at the first event of an epoch and covers the
 *     whole fence, up and down; nodes that only wait on others get a short
 *     grace so the node that can name the culprit reports (graces_allowed).
 *   - FENCE_FAIL is honoured whatever its epoch: a node only sends it when
 *     the job is lost, so every node aborts and answers its waiting ranks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "kvs.h"
#include "msg.h"
#include "pack.h"
#include "psrv_int.h"

struct held {
    int from;
    uint32_t epoch;
    void *buf;
    size_t len;
    struct held *next;
};

struct fence {
    enum fence_state state;
    uint32_t epoch;
    int nlocal;
    bool *child_in;
    int nchild_in;
    struct pack up; /* children's blobs, appended */
    bool armed;
    uint64_t deadline;
    int graces; /* extensions granted to this epoch's deadline */
    struct held *held; /* FENCE_UP for epoch + 1 */
    int broken_node;   /* a link broke while idle, or -1 */
};

const char *fence_state2str(enum fence_state st)
{
    switch (st) {
    case FENCE_IDLE:
        return "IDLE";
    case FENCE_COLLECT:
        return "COLLECT";
    case FENCE_WAIT_PARENT:
        return "WAIT_PARENT";
    case FENCE_FAILED:
        return "FAILED";
    }
    return "?";
}

struct fence *fence_create(struct psrv *s)
{
    struct fence *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->child_in = calloc(s->nchildren ? s->nchildren : 1, sizeof(bool));
    if (!f->child_in) {
        free(f);
        errno = ENOMEM;
        return NULL;
    }
    pack_init(&f->up);
    f->broken_node = -1;
    return f;
}

void fence_destroy(struct fence *f)
{
    if (!f)
        return;
    while (f->held) {
        struct held *h = f->held;
        f->held = h->next;
        free(h->buf);
        free(h);
    }
    pack_free(&f->up);
    free(f->child_in);
    free(f);
}

int fence_epoch(const struct fence *f)
{
    return (int)f->epoch;
}

enum fence_state fence_state(const struct fence *f)
{
    return f->state;
}

static void send_fail(struct psrv *s, int to, const char *text)
{
    struct msg m = {.type = MSG_FENCE_FAIL,
                    .epoch = s->fence->epoch,
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = -1,
                    .payload = text,
                    .len = strlen(text)};
    (void)srv_tree_send(s, to, &m);
}

void fence_fail(struct psrv *s, int rank, int from_node, const char *text)
{
    struct fence *f = s->fence;

    if (f->state == FENCE_FAILED)
        return;
    srv_log(s, PSRV_LOG_DEBUG, "fence %u failed in state %s: %s", f->epoch,
            fence_state2str(f->state), text);
    f->state = FENCE_FAILED;
    f->armed = false;
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        if (!c->in_fence)
            continue;
        c->in_fence = false;
        if (!c->gone)
            proto_fence_done(s, c, -1, text);
        free(c->fence_thrid);
        c->fence_thrid = NULL;
    }
    if (s->parent >= 0 && s->parent != from_node)
        send_fail(s, s->parent, text);
    for (int i = 0; i < s->nchildren; i++)
        if (s->children[i] != from_node)
            send_fail(s, s->children[i], text);
    srv_abort(s, rank, 1, "%s", text);
}

/* Text listing what the fence still waits for (caller frees). */
static char *missing_text(struct psrv *s, const char *what)
{
    struct fence *f = s->fence;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    int n = 0;

    if (!fp)
        return NULL;
    fprintf(fp, "fence %u %s on node %d", f->epoch, what, s->cfg.nodeid);
    for (int i = 0; i < s->cfg.local_count; i++) {
        if (s->cl[i].in_fence)
            continue;
        if (n == 0)
            fprintf(fp, "; ranks not entered:");
        if (n++ < 32)
            fprintf(fp, " %d", s->cl[i].rank);
        else if (n == 34)
            fprintf(fp, " ...");
    }
    n = 0;
    for (int i = 0; i < s->nchildren; i++) {
        if (f->child_in[i])
            continue;
        fprintf(fp, n++ ? " %d" : "; no contribution from child node(s): %d",
                s->children[i]);
    }
    if (f->state == FENCE_WAIT_PARENT)
        fprintf(fp, "; no answer from parent node %d", s->parent);
    fclose(fp);
    return buf;
}

static void complete(struct psrv *s);

/* Held FENCE_UP of the (new) current epoch: process them now. */
static void replay_held(struct psrv *s)
{
    struct fence *f = s->fence;
    struct held **pp = &f->held;

    while (*pp && f->state != FENCE_FAILED) {
        struct held *h = *pp;
        if (h->epoch != f->epoch) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        struct msg m = {.type = MSG_FENCE_UP,
                        .epoch = h->epoch,
                        .from = h->from,
                        .origin = h->from,
                        .dest = -1,
                        .payload = h->buf,
                        .len = h->len};
        (void)fence_tree_input(s, &m);
        free(h->buf);
        free(h);
        pp = &f->held; /* list may have changed */
    }
}

/* First event of an epoch: arm the timer and check what can never come. */
static bool start_epoch(struct psrv *s)
{
    struct fence *f = s->fence;

    if (f->state != FENCE_IDLE)
        return f->state != FENCE_FAILED;
    f->state = FENCE_COLLECT;
    if (s->cfg.fence_timeout_ms > 0) {
        f->armed = true;
        f->deadline = srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms;
        f->graces = 0;
    }
    srv_log(s, PSRV_LOG_DEBUG, "fence %u: COLLECT", f->epoch);
    if (f->broken_node >= 0) {
        char text[160];
        snprintf(text, sizeof(text), "fence %u on node %d: the link to node %d is broken",
                 f->epoch, s->cfg.nodeid, f->broken_node);
        fence_fail(s, -1, -1, text);
        return false;
    }
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        if (c->dead || c->finalized) {
            fence_client_lost(s, c);
            return false;
        }
    }
    return true;
}

static void progress(struct psrv *s)
{
    struct fence *f = s->fence;
    size_t plen;
    const void *pend;
    struct pack all;
    int rc;

    if (f->state != FENCE_COLLECT || f->nlocal < s->cfg.local_count ||
        f->nchild_in < s->nchildren)
        return;

    pack_init(&all);
    pend = kvs_pending(s->kvs, &plen);
    if (plen)
        pack_raw(&all, pend, plen);
    if (f->up.len)
        pack_raw(&all, f->up.buf, f->up.len);
    if (pack_error(&all)) {
        pack_free(&all);
        fence_fail(s, -1, -1, "fence: out of memory");
        return;
    }
    struct msg m = {.epoch = f->epoch,
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = -1,
                    .payload = all.buf,
                    .len = all.len};
    if (s->parent < 0) {
        if ((rc = kvs_commit_blob(s->kvs, all.buf, all.len)) < 0) {
            pack_free(&all);
            fence_fail(s, -1, -1, "fence: cannot commit the merged key-value set");
            return;
        }
        m.type = MSG_FENCE_DOWN;
        for (int i = 0; i < s->nchildren; i++) {
            if (srv_tree_send(s, s->children[i], &m) < 0) {
                char text[128];
                snprintf(text, sizeof(text), "fence %u: cannot send to child node %d",
                         f->epoch, s->children[i]);
                pack_free(&all);
                fence_fail(s, -1, -1, text);
                return;
            }
        }
        pack_free(&all);
        complete(s);
        return;
    }
    m.type = MSG_FENCE_UP;
    rc = srv_tree_send(s, s->parent, &m);
    pack_free(&all);
    if (rc < 0) {
        char text[128];
        snprintf(text, sizeof(text), "fence %u: cannot send to parent node %d", f->epoch,
                 s->parent);
        fence_fail(s, -1, -1, text);
        return;
    }
    kvs_pending_clear(s->kvs);
    pack_reset(&f->up);
    f->state = FENCE_WAIT_PARENT;
    srv_log(s, PSRV_LOG_DEBUG, "fence %u: WAIT_PARENT", f->epoch);
}

static void complete(struct psrv *s)
{
    struct fence *f = s->fence;

    kvs_pending_clear(s->kvs);
    pack_reset(&f->up);
    f->epoch++;
    f->state = FENCE_IDLE;
    f->armed = false;
    f->nlocal = 0;
    f->nchild_in = 0;
    memset(f->child_in, 0, (s->nchildren ? s->nchildren : 1) * sizeof(bool));
    srv_log(s, PSRV_LOG_DEBUG, "fence %u: done", f->epoch - 1);
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        if (!c->in_fence)
            continue;
        c->in_fence = false;
        if (!c->gone)
            proto_fence_done(s, c, 0, NULL);
        free(c->fence_thrid);
        c->fence_thrid = NULL;
    }
    replay_held(s);
}

void fence_enter(struct psrv *s, struct client *c, const char *thrid)
{
    struct fence *f = s->fence;

    if (f->state == FENCE_FAILED || s->aborted) {
        proto_fence_done(s, c, -1, "the job is aborting: an earlier fence failed");
        return;
    }
    if (c->in_fence) {
        proto_fence_done(s, c, -1, "this rank is already in the fence");
        return;
    }
    c->in_fence = true;
    free(c->fence_thrid);
    c->fence_thrid = srv_strdup(thrid);
    f->nlocal++;
    if (!start_epoch(s))
        return;
    progress(s);
}

void fence_client_lost(struct psrv *s, struct client *c)
{
    struct fence *f = s->fence;
    char text[160];

    if (f->state != FENCE_COLLECT || c->in_fence)
        return;
    snprintf(text, sizeof(text), "fence %u: rank %d %s before entering it", f->epoch,
             c->rank, c->finalized ? "already finalized" : "exited without finalize");
    fence_fail(s, c->rank, -1, text);
}

void fence_link_gone(struct psrv *s, int node)
{
    struct fence *f = s->fence;
    char text[160];

    if (f->state == FENCE_FAILED)
        return;
    if (f->state == FENCE_IDLE) {
        f->broken_node = node;
        return;
    }
    snprintf(text, sizeof(text), "fence %u on node %d: the link to node %d broke",
             f->epoch, s->cfg.nodeid, node);
    fence_fail(s, -1, node, text);
}

static int bad_msg(struct psrv *s, const struct msg *m, const char *why)
{
    char text[200];
    snprintf(text, sizeof(text), "fence %u on node %d: bad %s from node %d: %s",
             s->fence->epoch, s->cfg.nodeid, msg_type2str(m->type), m->from, why);
    if (s->fence->state != FENCE_IDLE)
        fence_fail(s, -1, -1, text);
    else
        srv_log(s, PSRV_LOG_ERROR, "%s (dropped)", text);
    return -EPROTO;
}

static int hold(struct psrv *s, const struct msg *m)
{
    struct fence *f = s->fence;
    for (struct held *h = f->held; h; h = h->next)
        if (h->from == m->from && h->epoch == m->epoch) {
            srv_log(s, PSRV_LOG_DEBUG, "fence: duplicate early FENCE_UP from %d",
                    m->from);
            return 0;
        }
    struct held *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    if (m->len && !(h->buf = malloc(m->len))) {
        free(h);
        return -ENOMEM;
    }
    if (m->len)
        memcpy(h->buf, m->payload, m->len);
    h->len = m->len;
    h->from = m->from;
    h->epoch = m->epoch;
    h->next = f->held;
    f->held = h;
    srv_log(s, PSRV_LOG_DEBUG, "fence %u: holding FENCE_UP %u from node %d", f->epoch,
            m->epoch, m->from);
    return 0;
}

static int on_up(struct psrv *s, const struct msg *m)
{
    struct fence *f = s->fence;
    int ci = srv_child_index(s, m->from);

    if (ci < 0)
        return bad_msg(s, m, "sender is not a child of this node");
    if (m->epoch < f->epoch) {
        srv_log(s, PSRV_LOG_DEBUG, "fence %u: stale FENCE_UP %u from %d dropped",
                f->epoch, m->epoch, m->from);
        return 0;
    }
    if (m->epoch == f->epoch + 1)
        return hold(s, m);
    if (m->epoch != f->epoch)
        return bad_msg(s, m, "epoch from the future");
    if (f->child_in[ci]) {
        srv_log(s, PSRV_LOG_DEBUG, "fence %u: duplicate FENCE_UP from %d dropped",
                f->epoch, m->from);
        return 0;
    }
    if (kvs_blob_count(m->payload, m->len) < 0)
        return bad_msg(s, m, "malformed key-value set");
    if (!start_epoch(s))
        return 0;
    if (m->len)
        pack_raw(&f->up, m->payload, m->len);
    if (pack_error(&f->up)) {
        fence_fail(s, -1, -1, "fence: out of memory");
        return -ENOMEM;
    }
    f->child_in[ci] = true;
    f->nchild_in++;
    progress(s);
    return 0;
}

static int on_down(struct psrv *s, const struct msg *m)
{
    struct fence *f = s->fence;
    int rc;

    if (m->from != s->parent)
        return bad_msg(s, m, "sender is not the parent of this node");
    if (m->epoch < f->epoch) {
        srv_log(s, PSRV_LOG_DEBUG, "fence %u: stale FENCE_DOWN %u dropped", f->epoch,
                m->epoch);
        return 0;
    }
    if (m->epoch != f->epoch || f->state != FENCE_WAIT_PARENT) {
        srv_log(s, PSRV_LOG_WARN,
                "fence %u (%s): unexpected FENCE_DOWN %u from node %d dropped", f->epoch,
                fence_state2str(f->state), m->epoch, m->from);
        return 0;
    }
    if (kvs_blob_count(m->payload, m->len) < 0)
        return bad_msg(s, m, "malformed key-value set");
    struct msg fwd = *m;
    fwd.from = s->cfg.nodeid;
    for (int i = 0; i < s->nchildren; i++) {
        if (srv_tree_send(s, s->children[i], &fwd) < 0) {
            char text[128];
            snprintf(text, sizeof(text), "fence %u: cannot send to child node %d",
                     f->epoch, s->children[i]);
            fence_fail(s, -1, -1, text);
            return 0;
        }
    }
    if ((rc = kvs_commit_blob(s->kvs, m->payload, m->len)) < 0) {
        fence_fail(s, -1, -1, "fence: cannot commit the key-value set");
        return rc;
    }
    complete(s);
    return 0;
}

int fence_tree_input(struct psrv *s, const struct msg *m)
{
    struct fence *f = s->fence;

    if (f->state == FENCE_FAILED) {
        srv_log(s, PSRV_LOG_DEBUG, "fence failed: %s from %d ignored",
                msg_type2str(m->type), m->from);
        return 0;
    }
    switch (m->type) {
    case MSG_FENCE_UP:
        return on_up(s, m);
    case MSG_FENCE_DOWN:
        return on_down(s, m);
    case MSG_FENCE_FAIL: {
        /* Whatever its epoch: a node only sends it when the job is lost. */
        char text[1200];
        int n = (int)(m->len < 1000 ? m->len : 1000);
        snprintf(text, sizeof(text), "%.*s", n,
                 m->payload ? (const char *)m->payload : "");
        fence_fail(s, -1, m->from, text);
        return 0;
    }
    }
    return -EPROTO;
}

/* How many grace periods a node may add before it reports a timeout
 * itself.  The node that knows the culprit (a local rank that never entered)
 * reports at once; a node waiting only on its children waits one grace so
 * the child below, which knows more, reports first; a node waiting only on
 * its parent waits two.  The first report floods the tree, so the message
 * the user sees names the rank whenever one is to blame. */
static int graces_allowed(const struct psrv *s)
{
    const struct fence *f = s->fence;

    for (int i = 0; i < s->cfg.local_count; i++)
        if (!s->cl[i].in_fence)
            return 0;
    for (int i = 0; i < s->nchildren; i++)
        if (!f->child_in[i])
            return 1;
    return 2;
}

static uint64_t grace_ms(const struct psrv *s)
{
    uint64_t g = (uint64_t)s->cfg.fence_timeout_ms / 10;
    return g < 200 ? 200 : g > 5000 ? 5000 : g;
}

int fence_tick(struct psrv *s, uint64_t now)
{
    struct fence *f = s->fence;

    if (!f->armed || f->state == FENCE_FAILED)
        return -1;
    if (now >= f->deadline && f->graces < graces_allowed(s)) {
        f->graces++;
        f->deadline = now + grace_ms(s);
    }
    if (now < f->deadline) {
        uint64_t d = f->deadline - now;
        return d > 0x7fffffff ? 0x7fffffff : (int)d;
    }
    char *text = missing_text(s, "timed out");
    fence_fail(s, -1, -1, text ? text : "fence timed out");
    free(text);
    return -1;
}
