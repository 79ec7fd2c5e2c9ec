/* fence.c - the KVS fence: local ranks enter, their puts go around the tree
 * as one blob per node (treecoll.c), the concatenation is committed on every
 * node and the ranks are answered.  Owns the table of local ranks waiting
 * in the fence (struct fence_wait, one per client).
 *
 * Contract: see fence.h.
 *
 * Notes:
 *   - This node's blob is its pending puts, handed over once every local rank
 *     has entered (they are all blocked in the fence, so no put can follow);
 *     kvs.h blobs concatenate, so interior nodes never parse pairs one by one
 *     and each node commits what comes down once.
 *   - Dead or finalized local clients make a fence fail as soon as it needs
 *     them: at once if one is in progress, else at its first event.
 *   - FENCE_FAIL is honoured whatever its epoch: a node only sends it when
 *     the job is lost, so every node aborts and answers its waiting ranks.
 *   - On-demand fences (kvsroute.h, chosen per node and per fence) send only
 *     the shared pending puts; at completion the node commits all of its own
 *     pending puts, then what came down, then drops the on-demand cache.
 *   - The commit is capped by the job's KVS quota (kvs_set_limits): puts are
 *     checked on each node against what it sees, so puts made on several
 *     nodes in one epoch may together pass the cap; the fence then fails
 *     with the limit's name and the job ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "kvs.h"
#include "kvsroute.h"
#include "msg.h"
#include "psrv_int.h"
#include "treecoll.h"

/* A local client's part in the current fence. */
struct fence_wait {
    bool in;     /* entered, not answered yet */
    char *thrid; /* its request's thrid, echoed in the answer */
};

struct fence {
    struct tcoll *tc;
    int nlocal;           /* local ranks in the current fence */
    int nwait;            /* entries of w: cfg.local_count */
    struct fence_wait *w; /* [client index] */
    bool ondemand;        /* this fence leaves own puts home (kvsroute.h) */
    bool last_ondemand;   /* ... and the last completed one did */
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

static const char *check_blob(const void *buf, size_t len)
{
    return kvs_blob_count(buf, len) < 0 ? "malformed key-value set" : NULL;
}

/* Answer every local rank waiting in the fence. */
static void answer_all(struct psrv *s, int rc, const char *text)
{
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        struct fence_wait *w = &s->fence->w[i];
        if (!w->in)
            continue;
        w->in = false;
        if (!c->gone)
            c->proto->fence_done(s, c, w->thrid, rc, text);
        free(w->thrid);
        w->thrid = NULL;
    }
}

static bool starting(struct psrv *s)
{
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        if (c->dead || c->finalized) {
            fence_client_lost(s, c);
            return false;
        }
    }
    return true;
}

static void describe_local(struct psrv *s, FILE *fp)
{
    int n = 0;

    for (int i = 0; i < s->cfg.local_count; i++) {
        if (s->fence->w[i].in)
            continue;
        if (n == 0)
            fprintf(fp, "; ranks not entered:");
        if (n++ < 32)
            fprintf(fp, " %d", s->cl[i].rank);
        else if (n == 34)
            fprintf(fp, " ...");
    }
}

static void done(struct psrv *s, const void *all, size_t len)
{
    int rc = 0;

    s->fence->nlocal = 0;
    kvs_set_epoch(s->kvs, tc_epoch(s->fence->tc)); /* fences completed, this one too */
    if (s->fence->ondemand) {
        /* Own puts were not sent: every put of this node is committed here,
         * then what came down (the same shared pairs included), so a shared
         * key ends with the value every node has. */
        size_t plen;
        const void *pend = kvs_pending(s->kvs, &plen);
        rc = pend ? kvs_commit_blob(s->kvs, pend, plen) : 0;
    }
    s->fence->last_ondemand = s->fence->ondemand;
    kvs_pending_clear(s->kvs);
    if (rc == 0)
        rc = kvs_commit_blob(s->kvs, all, len);
    if (rc == -EDQUOT || rc == -EFBIG) {
        /* Every node's puts passed its own check; together they do not fit. */
        char text[256];
        if (rc == -EDQUOT)
            srv_quota_text(SRV_L_KVS_KEYS_JOB, s->lim.kvs_keys_per_job, -1, text,
                           sizeof(text));
        else
            srv_quota_text(SRV_L_KVS_BYTES_JOB, s->lim.kvs_bytes_per_job, -1, text,
                           sizeof(text));
        srv_log(s, PSRV_LOG_ERROR, "fence: %s", text);
        fence_fail(s, -1, -1, text);
        return;
    }
    if (rc < 0) {
        fence_fail(s, -1, -1, "fence: cannot commit the key-value set");
        return;
    }
    kr_fence_done(s);
    answer_all(s, 0, NULL);
}

static void send_fail(struct psrv *s, int to, const char *text)
{
    struct msg m = {.type = MSG_FENCE_FAIL,
                    .epoch = tc_epoch(s->fence->tc),
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = -1,
                    .payload = text,
                    .len = strlen(text)};
    (void)srv_tree_send(s, to, &m);
}

static void failed(struct psrv *s, int rank, int from_node, const char *text)
{
    srv_log(s, PSRV_LOG_DEBUG, "fence %u failed: %s", tc_epoch(s->fence->tc), text);
    answer_all(s, -1, text);
    if (s->parent >= 0 && s->parent != from_node)
        send_fail(s, s->parent, text);
    for (int i = 0; i < s->nchildren; i++)
        if (s->children[i] != from_node)
            send_fail(s, s->children[i], text);
    srv_abort(s, rank, 1, "%s", text);
}

struct fence *fence_create(struct psrv *s)
{
    static const struct tcoll_ops ops = {
        .check = check_blob,
        .starting = starting,
        .describe_local = describe_local,
        .done = done,
        .failed = failed,
    };
    struct fence *f = calloc(1, sizeof(*f));

    if (!f)
        return NULL;
    f->nwait = s->cfg.local_count;
    if (!(f->w = calloc((size_t)f->nwait, sizeof(*f->w))) ||
        !(f->tc = tc_create(s, "fence", MSG_FENCE_UP, MSG_FENCE_DOWN, &ops))) {
        free(f->w);
        free(f);
        return NULL;
    }
    return f;
}

void fence_destroy(struct fence *f)
{
    if (!f)
        return;
    tc_destroy(f->tc);
    for (int i = 0; i < f->nwait; i++)
        free(f->w[i].thrid);
    free(f->w);
    free(f);
}

int fence_epoch(const struct fence *f)
{
    return (int)tc_epoch(f->tc);
}

enum fence_state fence_state(const struct fence *f)
{
    if (tc_failed(f->tc))
        return FENCE_FAILED;
    if (!tc_active(f->tc))
        return FENCE_IDLE;
    return tc_up_sent(f->tc) ? FENCE_WAIT_PARENT : FENCE_COLLECT;
}

void fence_fail(struct psrv *s, int rank, int from_node, const char *text)
{
    tc_fail(s, s->fence->tc, rank, from_node, text);
}

void fence_enter(struct psrv *s, struct client *c, const char *thrid)
{
    struct fence *f = s->fence;
    struct fence_wait *w = &f->w[c->idx];

    if (tc_failed(f->tc) || s->aborted) {
        c->proto->fence_done(s, c, w->thrid, -1,
                             "the job is aborting: an earlier fence failed");
        return;
    }
    if (w->in) {
        c->proto->fence_done(s, c, w->thrid, -1, "this rank is already in the fence");
        return;
    }
    w->in = true;
    free(w->thrid);
    w->thrid = srv_strdup(thrid);
    f->nlocal++;
    if (!tc_begin(s, f->tc) || f->nlocal < s->cfg.local_count)
        return;
    size_t plen;
    const void *pend = kvs_pending(s->kvs, &plen);
    f->ondemand = kr_fence_ondemand(s, (int64_t)plen);
    const void *sh;
    size_t shlen;
    if (f->ondemand && kvs_pending_shared(s->kvs, &sh, &shlen) == 0) {
        pend = sh;
        plen = shlen;
    } else {
        f->ondemand = false; /* out of memory for the subset: this fence goes full */
    }
    srv_log(s, PSRV_LOG_DEBUG, "fence %u: %s KVS (%zu bytes travel)", tc_epoch(f->tc),
            f->ondemand ? "on-demand" : "full", plen);
    tc_local(s, f->tc, pend, plen);
}

bool fence_last_ondemand(const struct fence *f)
{
    return f->last_ondemand;
}

void fence_client_lost(struct psrv *s, struct client *c)
{
    char text[160];

    if (fence_state(s->fence) != FENCE_COLLECT || s->fence->w[c->idx].in)
        return;
    snprintf(text, sizeof(text), "fence %u: rank %d %s before entering it",
             tc_epoch(s->fence->tc), c->rank,
             c->finalized ? "already finalized" : "exited without finalize");
    fence_fail(s, c->rank, -1, text);
}

void fence_link_gone(struct psrv *s, int node)
{
    tc_link_gone(s, s->fence->tc, node);
}

int fence_tree_input(struct psrv *s, const struct msg *m)
{
    if (m->type == MSG_FENCE_FAIL) {
        /* Whatever its epoch: a node only sends it when the job is lost. */
        char text[1200];
        int n = (int)(m->len < 1000 ? m->len : 1000);
        snprintf(text, sizeof(text), "%.*s", n,
                 m->payload ? (const char *)m->payload : "");
        fence_fail(s, -1, m->from, text);
        return 0;
    }
    return tc_input(s, s->fence->tc, m);
}

int fence_tick(struct psrv *s, uint64_t now)
{
    return tc_tick(s, s->fence->tc, now);
}
