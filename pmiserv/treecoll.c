/* treecoll.c - the tree gather-and-broadcast shared by the KVS fence and the
 * blob collective: epochs, held early messages, deadline and graces, failure.
 *
 * Contract: see treecoll.h.
 *
 * Notes:
 *   - The up message is this node's blob followed by its children's, in the
 *     order they arrived; interior nodes never look inside blobs.
 *   - ops->done gets the concatenation after the state was reset for the next
 *     epoch, so it may contribute the next blob at once (blob.c's queue does);
 *     held messages of the new epoch are replayed after it returns.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ktree.h"
#include "msg.h"
#include "pack.h"
#include "psrv_int.h"
#include "treecoll.h"

struct held { /* an up message of epoch + 1 */
    int from;
    uint32_t epoch;
    void *buf;
    size_t len;
    struct held *next;
};

struct tcoll {
    const char *name;
    int up_type, down_type;
    struct tcoll_ops ops;
    uint32_t epoch;
    bool active, local_in, up_sent, failed;
    struct pack local; /* this node's blob */
    struct pack up;    /* the children's blobs, appended */
    bool *child_in;
    int nchild_in;
    bool armed;
    uint64_t deadline;
    int graces;        /* extensions granted to this epoch's deadline */
    struct held *held;
    int broken_node;   /* a link broke while idle, or -1 */
};

struct tcoll *tc_create(struct psrv *s, const char *name, int up_type, int down_type,
                        const struct tcoll_ops *ops)
{
    struct tcoll *tc = calloc(1, sizeof(*tc));

    if (!tc)
        return NULL;
    if (!(tc->child_in = calloc(s->nchildren ? s->nchildren : 1, sizeof(bool)))) {
        free(tc);
        errno = ENOMEM;
        return NULL;
    }
    tc->name = name;
    tc->up_type = up_type;
    tc->down_type = down_type;
    tc->ops = *ops;
    pack_init(&tc->local);
    pack_init(&tc->up);
    tc->broken_node = -1;
    return tc;
}

void tc_destroy(struct tcoll *tc)
{
    if (!tc)
        return;
    while (tc->held) {
        struct held *h = tc->held;
        tc->held = h->next;
        free(h->buf);
        free(h);
    }
    pack_free(&tc->local);
    pack_free(&tc->up);
    free(tc->child_in);
    free(tc);
}

uint32_t tc_epoch(const struct tcoll *tc)
{
    return tc->epoch;
}

bool tc_active(const struct tcoll *tc)
{
    return tc->active;
}

bool tc_local_in(const struct tcoll *tc)
{
    return tc->local_in;
}

bool tc_up_sent(const struct tcoll *tc)
{
    return tc->up_sent;
}

bool tc_failed(const struct tcoll *tc)
{
    return tc->failed;
}

void tc_fail(struct psrv *s, struct tcoll *tc, int rank, int from_node, const char *text)
{
    if (tc->failed)
        return;
    tc->failed = true;
    tc->armed = false;
    tc->ops.failed(s, rank, from_node, text);
}

static void fail_fmt(struct psrv *s, struct tcoll *tc, int rank, int from_node,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void fail_fmt(struct psrv *s, struct tcoll *tc, int rank, int from_node,
                     const char *fmt, ...)
{
    char text[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    tc_fail(s, tc, rank, from_node, text);
}

bool tc_begin(struct psrv *s, struct tcoll *tc)
{
    if (tc->failed)
        return false;
    if (s->aborted) {
        tc_fail(s, tc, -1, -1, "the job is aborting");
        return false;
    }
    if (tc->active)
        return true;
    tc->active = true;
    if (s->cfg.fence_timeout_ms > 0) {
        tc->armed = true;
        tc->deadline = srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms;
        tc->graces = 0;
    }
    srv_log(s, PSRV_LOG_DEBUG, "%s %u: started", tc->name, tc->epoch);
    if (tc->broken_node >= 0) {
        fail_fmt(s, tc, -1, -1, "%s %u on node %d: the link to node %d is broken",
                 tc->name, tc->epoch, s->cfg.nodeid, tc->broken_node);
        return false;
    }
    return !tc->ops.starting || tc->ops.starting(s);
}

static void up_input(struct psrv *s, struct tcoll *tc, int ci, const struct msg *m);

/* Held up messages (checked before they were held) of the (new) current
 * epoch: process them now. */
static void replay_held(struct psrv *s, struct tcoll *tc)
{
    struct held **pp = &tc->held;

    while (*pp && !tc->failed) {
        struct held *h = *pp;
        int ci = srv_child_index(s, h->from);
        if (h->epoch != tc->epoch || ci < 0 || tc->child_in[ci]) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        struct msg m = {.type = tc->up_type,
                        .epoch = h->epoch,
                        .from = h->from,
                        .origin = h->from,
                        .dest = -1,
                        .payload = h->buf,
                        .len = h->len};
        up_input(s, tc, ci, &m);
        free(h->buf);
        free(h);
        pp = &tc->held; /* the list may have changed */
    }
}

/* The epoch is complete here: reset for the next one, hand over the data. */
static void complete(struct psrv *s, struct tcoll *tc, const void *all, size_t len)
{
    tc->epoch++;
    tc->active = tc->local_in = tc->up_sent = tc->armed = false;
    tc->nchild_in = 0;
    memset(tc->child_in, 0, (s->nchildren ? s->nchildren : 1) * sizeof(bool));
    pack_reset(&tc->local);
    pack_reset(&tc->up);
    srv_log(s, PSRV_LOG_DEBUG, "%s %u: done (%zu bytes)", tc->name, tc->epoch - 1, len);
    tc->ops.done(s, all, len);
    replay_held(s, tc);
}

static int send_down(struct psrv *s, struct tcoll *tc, struct msg *m)
{
    m->type = tc->down_type;
    m->from = s->cfg.nodeid;
    for (int i = 0; i < s->nchildren; i++)
        if (srv_tree_send(s, s->children[i], m) < 0) {
            fail_fmt(s, tc, -1, -1, "%s %u: cannot send to child node %d", tc->name,
                     tc->epoch, s->children[i]);
            return -1;
        }
    return 0;
}

static void progress(struct psrv *s, struct tcoll *tc)
{
    if (!tc->active || tc->failed || tc->up_sent || !tc->local_in ||
        tc->nchild_in < s->nchildren)
        return;

    struct pack all;
    pack_init(&all);
    pack_raw(&all, tc->local.buf, tc->local.len);
    pack_raw(&all, tc->up.buf, tc->up.len);
    if (pack_error(&all)) {
        pack_free(&all);
        fail_fmt(s, tc, -1, -1, "%s %u: out of memory", tc->name, tc->epoch);
        return;
    }
    struct msg m = {.epoch = tc->epoch,
                    .origin = s->cfg.nodeid,
                    .dest = -1,
                    .payload = all.buf,
                    .len = all.len};
    if (s->parent < 0) {
        if (send_down(s, tc, &m) == 0)
            complete(s, tc, all.buf, all.len);
        pack_free(&all);
        return;
    }
    m.type = tc->up_type;
    m.from = s->cfg.nodeid;
    int rc = srv_tree_send(s, s->parent, &m);
    pack_free(&all);
    if (rc < 0) {
        fail_fmt(s, tc, -1, -1, "%s %u: cannot send to parent node %d", tc->name,
                 tc->epoch, s->parent);
        return;
    }
    tc->up_sent = true;
    pack_reset(&tc->local);
    pack_reset(&tc->up);
    srv_log(s, PSRV_LOG_DEBUG, "%s %u: waiting for parent node %d", tc->name, tc->epoch,
            s->parent);
}

void tc_local(struct psrv *s, struct tcoll *tc, const void *blob, size_t len)
{
    if (!tc_begin(s, tc))
        return;
    pack_reset(&tc->local);
    pack_raw(&tc->local, blob, len);
    tc->local_in = true;
    srv_log(s, PSRV_LOG_DEBUG, "%s %u: local blob in (%zu bytes)", tc->name, tc->epoch,
            len);
    progress(s, tc);
}

static int bad_msg(struct psrv *s, struct tcoll *tc, const struct msg *m, const char *why)
{
    char text[300];

    snprintf(text, sizeof(text), "%s %u on node %d: bad %s from node %d: %s", tc->name,
             tc->epoch, s->cfg.nodeid, msg_type2str(m->type), m->from, why);
    if (tc->active)
        tc_fail(s, tc, -1, -1, text);
    else
        srv_log(s, PSRV_LOG_ERROR, "%s (dropped)", text);
    return -EPROTO;
}

static int hold(struct psrv *s, struct tcoll *tc, const struct msg *m)
{
    for (struct held *h = tc->held; h; h = h->next)
        if (h->from == m->from && h->epoch == m->epoch)
            return 0; /* duplicate */
    struct held *h = calloc(1, sizeof(*h));
    if (!h || (m->len && !(h->buf = malloc(m->len)))) {
        free(h);
        fail_fmt(s, tc, -1, -1, "%s %u: out of memory", tc->name, tc->epoch);
        return -ENOMEM;
    }
    if (m->len)
        memcpy(h->buf, m->payload, m->len);
    h->len = m->len;
    h->from = m->from;
    h->epoch = m->epoch;
    h->next = tc->held;
    tc->held = h;
    srv_log(s, PSRV_LOG_DEBUG, "%s %u: holding %s %u from node %d", tc->name, tc->epoch,
            msg_type2str(m->type), m->epoch, m->from);
    return 0;
}

/* A well-formed up message of the current epoch from child index ci. */
static void up_input(struct psrv *s, struct tcoll *tc, int ci, const struct msg *m)
{
    if (!tc_begin(s, tc))
        return;
    pack_raw(&tc->up, m->payload, m->len);
    if (pack_error(&tc->up)) {
        fail_fmt(s, tc, -1, -1, "%s %u: out of memory", tc->name, tc->epoch);
        return;
    }
    tc->child_in[ci] = true;
    tc->nchild_in++;
    progress(s, tc);
}

static int on_up(struct psrv *s, struct tcoll *tc, const struct msg *m)
{
    int ci = srv_child_index(s, m->from);
    const char *why;

    if (ci < 0)
        return bad_msg(s, tc, m, "sender is not a child of this node");
    if (m->epoch < tc->epoch || (m->epoch == tc->epoch && tc->child_in[ci])) {
        srv_log(s, PSRV_LOG_DEBUG, "%s %u: stale or duplicate %s %u from node %d dropped",
                tc->name, tc->epoch, msg_type2str(m->type), m->epoch, m->from);
        return 0;
    }
    if (m->epoch != tc->epoch && m->epoch != tc->epoch + 1)
        return bad_msg(s, tc, m, "epoch from the future");
    if (tc->ops.check && (why = tc->ops.check(m->payload, m->len)) != NULL)
        return bad_msg(s, tc, m, why);
    if (m->epoch == tc->epoch + 1)
        return hold(s, tc, m);
    up_input(s, tc, ci, m);
    return 0;
}

static int on_down(struct psrv *s, struct tcoll *tc, const struct msg *m)
{
    const char *why;

    if (m->from != s->parent)
        return bad_msg(s, tc, m, "sender is not the parent of this node");
    if (m->epoch != tc->epoch || !tc->up_sent) {
        srv_log(s, m->epoch < tc->epoch ? PSRV_LOG_DEBUG : PSRV_LOG_WARN,
                "%s %u: unexpected %s %u from node %d dropped", tc->name, tc->epoch,
                msg_type2str(m->type), m->epoch, m->from);
        return 0;
    }
    if (tc->ops.check && (why = tc->ops.check(m->payload, m->len)) != NULL)
        return bad_msg(s, tc, m, why);
    struct msg fwd = *m;
    if (send_down(s, tc, &fwd) == 0)
        complete(s, tc, m->payload, m->len);
    return 0;
}

int tc_input(struct psrv *s, struct tcoll *tc, const struct msg *m)
{
    if (tc->failed) {
        srv_log(s, PSRV_LOG_DEBUG, "%s failed: %s from node %d ignored", tc->name,
                msg_type2str(m->type), m->from);
        return 0;
    }
    if (m->type == tc->up_type)
        return on_up(s, tc, m);
    if (m->type == tc->down_type)
        return on_down(s, tc, m);
    return -EPROTO;
}

void tc_link_gone(struct psrv *s, struct tcoll *tc, int node)
{
    if (tc->failed)
        return;
    if (!tc->active) {
        tc->broken_node = node; /* the next epoch cannot complete */
        return;
    }
    fail_fmt(s, tc, -1, node, "%s %u on node %d: the link to node %d broke", tc->name,
             tc->epoch, s->cfg.nodeid, node);
}

/* Extensions of the deadline a node may take before it reports a timeout
 * itself, so that the report names as much as possible: a node missing its
 * own blob reports at once (it knows which local ranks are late); one waiting
 * on children waits longer the higher it sits, so the deepest node that
 * misses a child reports first; one waiting only on its parent waits longest.
 * The first report ends the job everywhere (the owners flood it). */
static int graces_allowed(const struct psrv *s, const struct tcoll *tc)
{
    int k = s->cfg.tree_width, n = s->cfg.nnodes;
    int height = ktree_depth(k, n, n - 1) - ktree_depth(k, n, s->cfg.nodeid);

    if (!tc->local_in)
        return 0;
    for (int i = 0; i < s->nchildren; i++)
        if (!tc->child_in[i])
            return 1 + (height > 0 ? height : 0);
    return ktree_depth(k, n, n - 1) + 2;
}

static uint64_t grace_ms(const struct psrv *s)
{
    uint64_t g = (uint64_t)s->cfg.fence_timeout_ms / 10;
    return g < 200 ? 200 : g > 5000 ? 5000 : g;
}

int tc_tick(struct psrv *s, struct tcoll *tc, uint64_t now)
{
    if (!tc->armed || tc->failed)
        return -1;
    if (now >= tc->deadline && tc->graces < graces_allowed(s, tc)) {
        tc->graces++;
        tc->deadline = now + grace_ms(s);
    }
    if (now < tc->deadline) {
        uint64_t d = tc->deadline - now;
        return d > 0x7fffffff ? 0x7fffffff : (int)d;
    }

    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    if (fp) {
        int n = 0;
        fprintf(fp, "%s %u timed out on node %d", tc->name, tc->epoch, s->cfg.nodeid);
        if (tc->ops.describe_local)
            tc->ops.describe_local(s, fp);
        for (int i = 0; i < s->nchildren; i++)
            if (!tc->child_in[i])
                fprintf(fp, n++ ? " %d" : "; no contribution from child node(s): %d",
                        s->children[i]);
        if (tc->up_sent)
            fprintf(fp, "; no answer from parent node %d", s->parent);
        fclose(fp);
    }
    tc_fail(s, tc, -1, -1, text ? text : "a collective timed out");
    free(text);
    return -1;
}
