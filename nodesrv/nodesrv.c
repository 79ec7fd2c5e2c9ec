/* nodesrv.c - one node's PMI server over its task sockets (see nodesrv.h):
 * the per-task socket (read, feed the core through the flow cap, queue and
 * flush replies, hold them on request), the hang-up rule, the tick, the tree
 * hook, and the core's ops table that forwards the rest to the host. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "flow.h"
#include "nodesrv.h"

#define READ_CHUNK 65536

struct ns_client {
    struct nodesrv *ns;
    int idx;
    int fd; /* -1 when closed */
    struct loop_watch *w;
    struct flow flow;  /* replies the socket did not take yet; input held meanwhile */
    bool inited;       /* sent something */
    bool finalized;    /* the core answered 1: it finalized */
    bool gone_pending; /* hung up, the core not told yet */
};

struct nodesrv {
    struct loop *lp;
    struct psrv *srv;
    const struct nodesrv_ops *ops;
    void *arg;
    int n;
    int *ranks; /* global rank of each client, for messages */
    struct ns_client *cl;
    bool hold;
    int in_core;
};

static struct ns_client *client_at(const struct nodesrv *ns, int client)
{
    return ns && client >= 0 && client < ns->n ? &ns->cl[client] : NULL;
}

struct psrv *nodesrv_core_enter(struct nodesrv *ns)
{
    ns->in_core++;
    return ns->srv;
}

void nodesrv_core_leave(struct nodesrv *ns)
{
    ns->in_core--;
}

bool nodesrv_in_core(const struct nodesrv *ns)
{
    return ns->in_core > 0;
}

struct psrv *nodesrv_psrv(const struct nodesrv *ns)
{
    return ns ? ns->srv : NULL;
}

/* The interest the client's flow asks for; no writing while output is held. */
static void client_watch(struct ns_client *c)
{
    int ev = flow_events(&c->flow);

    if (c->ns->hold)
        ev &= ~LOOP_WRITE;
    loop_watch_set(c->w, ev);
}

void nodesrv_close(struct nodesrv *ns, int client)
{
    struct ns_client *c = client_at(ns, client);

    if (!c || c->fd < 0)
        return;
    if (c->w)
        loop_watch_remove(ns->lp, c->w);
    c->w = NULL;
    close(c->fd);
    c->fd = -1;
    flow_free(&c->flow);
}

void nodesrv_client_gone(struct nodesrv *ns, int client)
{
    struct ns_client *c = client_at(ns, client);

    if (!c || !c->gone_pending)
        return;
    c->gone_pending = false;
    nodesrv_core_enter(ns);
    psrv_client_gone(ns->srv, client);
    if (ns->ops->client_gone)
        ns->ops->client_gone(ns->arg, client);
    nodesrv_core_leave(ns);
}

/* The socket reached EOF or broke: closed here; the core hears of it now or
 * when the host says (ops->client_hangup). */
static void client_hangup(struct ns_client *c, enum nodesrv_hangup how)
{
    struct nodesrv *ns = c->ns;

    nodesrv_close(ns, c->idx);
    c->gone_pending = true;
    if (ns->ops->client_hangup && ns->ops->client_hangup(ns->arg, c->idx, how))
        return;
    nodesrv_client_gone(ns, c->idx);
}

static int client_feed(void *arg, const char *buf, size_t len)
{
    struct ns_client *c = arg;
    int rc;

    nodesrv_core_enter(c->ns);
    rc = psrv_client_input(c->ns->srv, c->idx, buf, len);
    nodesrv_core_leave(c->ns);
    return rc;
}

/* The core's verdict on input fed (flow_feed/flow_resume): 1 finalized; < 0
 * a protocol error (the core replied and aborted) or input that cannot be
 * held: the socket is closed.  0, or -1 if closed. */
static int client_fed(struct ns_client *c, int rc)
{
    struct nodesrv *ns = c->ns;

    if (rc == 1)
        c->finalized = true;
    if (rc < 0 && c->fd >= 0) {
        if (rc == -ENOMEM) { /* no room to hold its input: it would wait forever */
            char text[96];
            snprintf(text, sizeof(text),
                     "rank %d lost: out of memory holding its PMI requests",
                     ns->ranks[c->idx]);
            nodesrv_core_enter(ns);
            psrv_abort(ns->srv, ns->ranks[c->idx], 1, text);
            nodesrv_core_leave(ns);
        }
        nodesrv_close(ns, c->idx);
        return -1;
    }
    if (c->fd >= 0)
        client_watch(c);
    return 0;
}

/* Write what the socket takes; below the low-water mark again, feed the core
 * the input held back meanwhile.  Never from inside the core.  0, or -errno
 * on a broken socket. */
static int client_flush(struct ns_client *c)
{
    int rc;

    if (c->ns->hold) {
        client_watch(c);
        return 0;
    }
    if ((rc = flow_send(&c->flow, c->fd)) < 0)
        return rc;
    (void)client_fed(c, flow_resume(&c->flow, client_feed, c));
    return 0;
}

void nodesrv_read(struct nodesrv *ns, int client, bool drain)
{
    struct ns_client *c = client_at(ns, client);
    char buf[READ_CHUNK];

    /* not read while its replies pile up unread (flow.h) */
    while (c && c->fd >= 0 && flow_reading(&c->flow)) {
        ssize_t n = fdio_read(c->fd, buf, sizeof(buf));
        if (n == -EAGAIN || n == -EWOULDBLOCK)
            return;
        if (n <= 0) {
            client_hangup(c, NODESRV_EOF);
            return;
        }
        if (!c->inited) {
            c->inited = true;
            if (ns->ops->client_first)
                ns->ops->client_first(ns->arg, client);
        }
        if (client_fed(c, flow_feed(&c->flow, buf, (size_t)n, client_feed, c)) < 0 ||
            !drain)
            return;
    }
}

static void on_client(struct loop *lp, struct loop_watch *w, int fd, int revents,
                      void *arg)
{
    struct ns_client *c = arg;

    (void)lp;
    (void)w;
    (void)fd;
    if (revents & (LOOP_WRITE | LOOP_ERROR)) {
        if (client_flush(c) < 0) {
            client_hangup(c, NODESRV_BROKEN);
            return;
        }
    }
    if (c->fd >= 0 && (revents & (LOOP_READ | LOOP_ERROR)))
        nodesrv_read(c->ns, c->idx, false);
}

int nodesrv_add_client(struct nodesrv *ns, int client, int fd)
{
    struct ns_client *c = client_at(ns, client);

    if (!c || fd < 0)
        return -EINVAL;
    if (c->fd >= 0)
        return -EBUSY;
    c->w = loop_watch_add(ns->lp, fd, LOOP_READ, on_client, c);
    if (!c->w)
        return errno ? -errno : -ENOMEM;
    c->fd = fd;
    return 0;
}

bool nodesrv_client_open(const struct nodesrv *ns, int client)
{
    const struct ns_client *c = client_at(ns, client);
    return c && c->fd >= 0;
}

bool nodesrv_client_inited(const struct nodesrv *ns, int client)
{
    const struct ns_client *c = client_at(ns, client);
    return c && c->inited;
}

bool nodesrv_client_finalized(const struct nodesrv *ns, int client)
{
    const struct ns_client *c = client_at(ns, client);
    return c && c->finalized;
}

bool nodesrv_gone_pending(const struct nodesrv *ns, int client)
{
    const struct ns_client *c = client_at(ns, client);
    return c && c->gone_pending;
}

void nodesrv_hold_output(struct nodesrv *ns, bool hold)
{
    ns->hold = hold;
    for (int i = 0; i < ns->n; i++) {
        struct ns_client *c = &ns->cl[i];
        if (c->fd < 0)
            continue;
        if (!hold && flow_queued(&c->flow)) {
            if (client_flush(c) < 0)
                client_hangup(c, NODESRV_BROKEN);
        } else {
            client_watch(c);
        }
    }
}

int nodesrv_tree_input(struct nodesrv *ns, int from, const void *buf, size_t len)
{
    int rc;

    nodesrv_core_enter(ns);
    rc = psrv_tree_input(ns->srv, from, buf, len);
    nodesrv_core_leave(ns);
    return rc;
}

void nodesrv_tree_gone(struct nodesrv *ns, int node)
{
    if (ns->in_core) /* a link lost from inside a core callback: never re-enter */
        return;
    nodesrv_core_enter(ns);
    psrv_tree_gone(ns->srv, node);
    nodesrv_core_leave(ns);
}

/* Before every poll(): the host's own work, then the core's tick. */
static int on_prepare(struct loop *lp, void *arg)
{
    struct nodesrv *ns = arg;
    int host = ns->ops->prepare ? ns->ops->prepare(ns->arg) : -1;
    int ms;

    (void)lp;
    nodesrv_core_enter(ns);
    ms = psrv_tick(ns->srv);
    nodesrv_core_leave(ns);
    if (host >= 0 && (ms < 0 || host < ms))
        ms = host;
    return ms;
}

/* ---- the core's ops: sockets here, the rest to the host ---------------- */

static int op_client_send(void *arg, int client, const char *buf, size_t len)
{
    struct nodesrv *ns = arg;
    struct ns_client *c = client_at(ns, client);
    int rc;

    if (!c)
        return -EINVAL;
    if (c->fd < 0)
        return -EPIPE;
    /* inside the core: queue or send, but never feed held input from here */
    rc =
        ns->hold ? flow_queue(&c->flow, buf, len) : flow_write(&c->flow, c->fd, buf, len);
    if (rc == 0)
        client_watch(c);
    return rc;
}

static int op_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct nodesrv *ns = arg;

    if (!ns->ops->tree_send)
        return -ENOTCONN;
    return ns->ops->tree_send(ns->arg, to, buf, len);
}

static void op_abort(void *arg, int rank, int exitcode, const char *msg)
{
    struct nodesrv *ns = arg;
    ns->ops->abort(ns->arg, rank, exitcode, msg);
}

static void op_log(void *arg, enum psrv_log_level level, const char *msg)
{
    struct nodesrv *ns = arg;
    if (ns->ops->log)
        ns->ops->log(ns->arg, level, msg);
}

static int op_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                    size_t errlen)
{
    struct nodesrv *ns = arg;
    return ns->ops->spawn(ns->arg, id, req, err, errlen);
}

static void op_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    struct nodesrv *ns = arg;
    ns->ops->coll_done(ns->arg, id, rc, data, len, msg);
}

static void op_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                            size_t len)
{
    struct nodesrv *ns = arg;
    ns->ops->dmdx_request(ns->arg, handle, rank, info, len);
}

static void op_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    struct nodesrv *ns = arg;
    ns->ops->dmdx_done(ns->arg, id, rc, data, len, msg);
}

static void op_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    struct nodesrv *ns = arg;
    ns->ops->ns_done(ns->arg, id, rc, value);
}

struct nodesrv *nodesrv_create(struct loop *lp, const struct psrv_config *cfg,
                               const struct nodesrv_ops *ops, void *arg)
{
    struct nodesrv *ns;
    /* the core sees an op only where the host has one: a NULL op has a
     * meaning of its own there (no spawn, no PMIx) */
    struct psrv_ops pops = {
        .client_send = op_client_send,
        .tree_send = op_tree_send,
        .abort = op_abort,
        .log = op_log,
        .now_ms = NULL,
        .coll_done = ops->coll_done ? op_coll_done : NULL,
        .dmdx_request = ops->dmdx_request ? op_dmdx_request : NULL,
        .dmdx_done = ops->dmdx_done ? op_dmdx_done : NULL,
        .ns_done = ops->ns_done ? op_ns_done : NULL,
        .spawn = ops->spawn ? op_spawn : NULL,
    };

    if (!lp || !cfg || !ops || !ops->abort || cfg->local_count < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ns = calloc(1, sizeof(*ns))))
        return NULL;
    ns->lp = lp;
    ns->ops = ops;
    ns->arg = arg;
    ns->n = cfg->local_count;
    ns->cl = calloc((size_t)ns->n + 1, sizeof(*ns->cl));
    ns->ranks = calloc((size_t)ns->n + 1, sizeof(*ns->ranks));
    if (!ns->cl || !ns->ranks) {
        nodesrv_destroy(ns);
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < ns->n; i++) {
        ns->cl[i].ns = ns;
        ns->cl[i].idx = i;
        ns->cl[i].fd = -1;
        ns->ranks[i] = cfg->local_ranks ? cfg->local_ranks[i] : i;
    }
    if (!(ns->srv = psrv_create(cfg, &pops, ns))) { /* it keeps a copy of pops */
        int e = errno ? errno : EINVAL;
        nodesrv_destroy(ns);
        errno = e;
        return NULL;
    }
    loop_set_prepare(lp, on_prepare, ns);
    return ns;
}

void nodesrv_destroy(struct nodesrv *ns)
{
    if (!ns)
        return;
    for (int i = 0; ns->cl && i < ns->n; i++)
        nodesrv_close(ns, i);
    if (ns->srv) {
        loop_set_prepare(ns->lp, NULL, NULL);
        psrv_destroy(ns->srv);
    }
    free(ns->cl);
    free(ns->ranks);
    free(ns);
}
