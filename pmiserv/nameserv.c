/* nameserv.c - the job's name service (see nameserv.h), the checks of a
 * task's request for both protocols (ns_check), and the local ranks'
 * requests in flight (struct ns_wait, one per client).
 *
 * Payloads: NS_REQ = u8 op, i32 client, u32 seq, str name, str port;
 *           NS_RESP = u8 op, i32 client, u32 seq, i32 rc, str port.
 * The per-client sequence number makes a late answer to an abandoned
 * (timed out) request harmless.
 *
 * The table is a hash (strmap.h) bounded by limits.names_count and
 * limits.names_bytes; a publish past them gets an internal rc (NS_RC_OVER_*)
 * that the requesting node turns into rc 2, a message naming the limit, and
 * the end of the job (srv_quota).  Host requests in flight are capped at
 * NS_MAX_HOST_REQS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktree.h"
#include "msg.h"
#include "nameserv.h"
#include "pack.h"
#include "psrv_int.h"
#include "strmap.h"

#define NS_RC_OVER_COUNT 16 /* internal: publish past limits.names_count */
#define NS_RC_OVER_BYTES 17 /* internal: publish past limits.names_bytes */
#define NS_MAX_HOST_REQS 1024

struct hreq { /* a request of the host (psrv_ns_request) in flight */
    uint64_t id;
    uint32_t seq;
    int op;
    uint64_t deadline;
    struct hreq *next;
};

/* A local client's request in flight (at most one per client). */
struct ns_wait {
    bool on;           /* waiting for an answer */
    int op;            /* enum ns_op */
    uint32_t seq;      /* matches the answer to the request */
    char *thrid;       /* its request's thrid, echoed in the answer */
    uint64_t deadline; /* 0: none */
};

struct nameserv {
    int nwait;          /* entries of w: cfg.local_count */
    struct ns_wait *w;  /* [client index] */
    struct strmap *map; /* node 0 only */
    struct hreq *host;  /* host requests waiting for node 0 */
    int nhost;
    uint32_t host_seq;
    int64_t max_count, max_bytes;
};

struct nameserv *ns_create(struct psrv *s)
{
    struct nameserv *ns = calloc(1, sizeof(struct nameserv));
    if (!ns)
        return NULL;
    ns->nwait = s->cfg.local_count;
    if (!(ns->w = calloc((size_t)ns->nwait, sizeof(*ns->w))) ||
        (s->cfg.nodeid == 0 && !(ns->map = strmap_create()))) {
        free(ns->w);
        free(ns);
        return NULL;
    }
    ns->max_count = s->lim.names_count;
    ns->max_bytes = s->lim.names_bytes;
    return ns;
}

void ns_usage(const struct psrv *s, int64_t *count, int64_t *bytes)
{
    const struct strmap *m = s->ns->map;
    *count = m ? (int64_t)strmap_count(m) : 0;
    *bytes = m ? (int64_t)strmap_bytes(m) : 0;
}

void ns_destroy(struct nameserv *ns)
{
    if (!ns)
        return;
    strmap_destroy(ns->map);
    for (int i = 0; i < ns->nwait; i++)
        free(ns->w[i].thrid);
    free(ns->w);
    while (ns->host) {
        struct hreq *h = ns->host;
        ns->host = h->next;
        free(h);
    }
    free(ns);
}

/* Run op on the table (node 0).  Returns the protocol rc; *port for lookup. */
static int ns_apply(struct nameserv *ns, int op, const char *name, const char *port,
                    const char **out)
{
    if (!ns->map)
        return 2; /* not node 0: a misrouted request */
    const char *cur = strmap_get(ns->map, name);
    *out = NULL;
    switch (op) {
    case NS_PUBLISH:
        if (cur)
            return 1;
        if ((int64_t)strmap_count(ns->map) + 1 > ns->max_count)
            return NS_RC_OVER_COUNT;
        if ((int64_t)(strmap_bytes(ns->map) + strlen(name) + strlen(port)) >
            ns->max_bytes)
            return NS_RC_OVER_BYTES;
        return strmap_set(ns->map, name, port) < 0 ? 2 : 0;
    case NS_UNPUBLISH:
        if (!cur)
            return 1;
        strmap_del(ns->map, name);
        return 0;
    case NS_LOOKUP:
        if (!cur)
            return 1;
        *out = cur;
        return 0;
    }
    return 3;
}

static const char *ns_errtext(int op, int rc)
{
    if (rc == 0)
        return NULL;
    if (rc == 1)
        return op == NS_PUBLISH ? "service name already published"
                                : "service name not published";
    return "name service failure";
}

/* An internal over-quota rc: rc 2 and the limit's text (the job then ends). */
static int over_quota(struct psrv *s, struct client *c, int rc, const char **msg)
{
    if (rc == NS_RC_OVER_COUNT)
        *msg = srv_quota(s, c, SRV_L_NAMES_COUNT, s->lim.names_count);
    else if (rc == NS_RC_OVER_BYTES)
        *msg = srv_quota(s, c, SRV_L_NAMES_BYTES, s->lim.names_bytes);
    else
        return rc;
    return 2;
}

static void finish(struct psrv *s, struct client *c, int op, int rc, const char *port,
                   const char *msg)
{
    struct ns_wait *w = &s->ns->w[c->idx];
    rc = over_quota(s, c, rc, &msg);
    w->on = false;
    if (!c->gone)
        c->proto->ns_done(s, c, w->thrid, op, rc, port, msg ? msg : ns_errtext(op, rc));
    free(w->thrid);
    w->thrid = NULL;
}

int ns_check(int op, const char *name, const char *port, const char *noun, char *out,
             size_t outlen)
{
    if (!name || !*name)
        snprintf(out, outlen, "missing %s", noun);
    else if (op == NS_PUBLISH && !port)
        snprintf(out, outlen, "missing port");
    else if (strlen(name) > PMI_MAX_VALLEN || (port && strlen(port) > PMI_MAX_VALLEN))
        snprintf(out, outlen, "%s or port longer than 1024 bytes", noun);
    else
        return 0;
    return -1;
}

static int route(struct psrv *s, int dest, const struct msg *m)
{
    int hop = ktree_next_hop(s->cfg.tree_width, s->cfg.nnodes, s->cfg.nodeid, dest);
    if (hop < 0)
        return -EINVAL;
    return srv_tree_send(s, hop, m);
}

void ns_request(struct psrv *s, struct client *c, int op, const char *name,
                const char *port, const char *thrid)
{
    struct ns_wait *w = &s->ns->w[c->idx];
    free(w->thrid);
    w->thrid = srv_strdup(thrid);
    w->on = true;
    w->op = op;
    w->seq++;
    if (s->cfg.nodeid == 0) {
        const char *out;
        int rc = ns_apply(s->ns, op, name, port ? port : "", &out);
        finish(s, c, op, rc, out, NULL);
        return;
    }
    struct pack p;
    pack_init(&p);
    pack_u8(&p, (uint8_t)op);
    pack_i32(&p, c->idx);
    pack_u32(&p, w->seq);
    pack_str(&p, name);
    pack_str(&p, port ? port : "");
    struct msg m = {.type = MSG_NS_REQ,
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = 0,
                    .payload = p.buf,
                    .len = p.len};
    int rc = pack_error(&p) ? -ENOMEM : route(s, 0, &m);
    pack_free(&p);
    if (rc < 0) {
        finish(s, c, op, 14, NULL, "cannot reach the name service on node 0");
        return;
    }
    w->deadline =
        s->cfg.fence_timeout_ms > 0 ? srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms : 0;
}

static int on_req(struct psrv *s, const struct msg *m)
{
    struct unpack u;
    unpack_init(&u, m->payload, m->len);
    int op = unpack_u8(&u);
    int32_t client = unpack_i32(&u);
    uint32_t seq = unpack_u32(&u);
    char *name = unpack_strdup(&u);
    char *port = unpack_strdup(&u);
    int rc = 0;

    if (unpack_error(&u) || !name || !port || unpack_remaining(&u) || m->origin < 0 ||
        m->origin >= s->cfg.nnodes) {
        rc = -EPROTO;
        goto out;
    }
    const char *out;
    int prc = ns_apply(s->ns, op, name, port, &out);
    struct pack p;
    pack_init(&p);
    pack_u8(&p, (uint8_t)op);
    pack_i32(&p, client);
    pack_u32(&p, seq);
    pack_i32(&p, prc);
    pack_str(&p, out ? out : "");
    struct msg r = {.type = MSG_NS_RESP,
                    .from = s->cfg.nodeid,
                    .origin = 0,
                    .dest = m->origin,
                    .payload = p.buf,
                    .len = p.len};
    if (!pack_error(&p) && route(s, m->origin, &r) < 0)
        srv_log(s, PSRV_LOG_ERROR, "name service: cannot answer node %d", m->origin);
    pack_free(&p);
out:
    free(name);
    free(port);
    return rc;
}

static int on_resp(struct psrv *s, const struct msg *m)
{
    struct unpack u;
    unpack_init(&u, m->payload, m->len);
    int op = unpack_u8(&u);
    int32_t client = unpack_i32(&u);
    uint32_t seq = unpack_u32(&u);
    int32_t prc = unpack_i32(&u);
    char *port = unpack_strdup(&u);

    if (unpack_error(&u) || !port || unpack_remaining(&u) || client < -1 ||
        client >= s->cfg.local_count) {
        free(port);
        return -EPROTO;
    }
    if (client == -1) { /* the host's request */
        struct hreq **pp = &s->ns->host;
        while (*pp && (*pp)->seq != seq)
            pp = &(*pp)->next;
        if (*pp && (*pp)->op == op) {
            struct hreq *h = *pp;
            const char *msg = NULL;
            *pp = h->next;
            s->ns->nhost--;
            prc = over_quota(s, NULL, prc, &msg);
            if (s->ops.ns_done)
                s->ops.ns_done(s->arg, h->id, prc,
                               prc == 0 && op == NS_LOOKUP ? port : NULL);
            free(h);
        }
        free(port);
        return 0;
    }
    struct client *c = &s->cl[client];
    struct ns_wait *w = &s->ns->w[client];
    if (w->on && w->seq == seq && w->op == op)
        finish(s, c, op, prc, prc == 0 && op == NS_LOOKUP ? port : NULL, NULL);
    else
        srv_log(s, PSRV_LOG_DEBUG, "name service: late answer for client %d dropped",
                client);
    free(port);
    return 0;
}

int ns_tree_input(struct psrv *s, const struct msg *m)
{
    if (m->dest < 0 || m->dest >= s->cfg.nnodes)
        return -EPROTO;
    if (m->dest != s->cfg.nodeid) {
        struct msg fwd = *m;
        fwd.from = s->cfg.nodeid;
        if (route(s, m->dest, &fwd) < 0) {
            srv_log(s, PSRV_LOG_ERROR, "name service: cannot forward to node %d",
                    m->dest);
            return -EIO;
        }
        return 0;
    }
    return m->type == MSG_NS_REQ ? on_req(s, m) : on_resp(s, m);
}

int psrv_ns_request(struct psrv *s, uint64_t id, int op, const char *name,
                    const char *value)
{
    if (!s || !name || !*name || op < NS_PUBLISH || op > NS_LOOKUP ||
        (op == NS_PUBLISH && !value))
        return -EINVAL;
    if (s->cfg.nodeid == 0) {
        const char *out, *msg = NULL;
        int rc = ns_apply(s->ns, op, name, value ? value : "", &out);
        rc = over_quota(s, NULL, rc, &msg);
        if (s->ops.ns_done)
            s->ops.ns_done(s->arg, id, rc, rc == 0 && op == NS_LOOKUP ? out : NULL);
        srv_quota_flush(s);
        return 0;
    }
    if (s->ns->nhost >= NS_MAX_HOST_REQS)
        return -EAGAIN;
    struct hreq *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->id = id;
    h->op = op;
    h->seq = ++s->ns->host_seq;
    h->deadline =
        s->cfg.fence_timeout_ms > 0 ? srv_now(s) + (uint64_t)s->cfg.fence_timeout_ms : 0;
    struct pack p;
    pack_init(&p);
    pack_u8(&p, (uint8_t)op);
    pack_i32(&p, -1);
    pack_u32(&p, h->seq);
    pack_str(&p, name);
    pack_str(&p, value ? value : "");
    struct msg m = {.type = MSG_NS_REQ,
                    .from = s->cfg.nodeid,
                    .origin = s->cfg.nodeid,
                    .dest = 0,
                    .payload = p.buf,
                    .len = p.len};
    int rc = pack_error(&p) ? -ENOMEM : route(s, 0, &m);
    pack_free(&p);
    if (rc < 0) {
        free(h);
        return rc;
    }
    h->next = s->ns->host;
    s->ns->host = h;
    s->ns->nhost++;
    return 0;
}

void ns_client_lost(struct psrv *s, struct client *c)
{
    s->ns->w[c->idx].on = false;
}

int ns_tick(struct psrv *s, uint64_t now)
{
    int next = -1;
    for (struct hreq **pp = &s->ns->host; *pp;) {
        struct hreq *h = *pp;
        if (h->deadline && now >= h->deadline) {
            *pp = h->next;
            s->ns->nhost--;
            if (s->ops.ns_done)
                s->ops.ns_done(s->arg, h->id, 14, NULL);
            free(h);
            continue;
        }
        if (h->deadline) {
            uint64_t d = h->deadline - now;
            int di = d > 0x7fffffff ? 0x7fffffff : (int)d;
            if (next < 0 || di < next)
                next = di;
        }
        pp = &h->next;
    }
    for (int i = 0; i < s->cfg.local_count; i++) {
        struct client *c = &s->cl[i];
        struct ns_wait *w = &s->ns->w[i];
        if (!w->on || w->deadline == 0)
            continue;
        if (now >= w->deadline) {
            finish(s, c, w->op, 14, NULL, "name service request timed out");
            continue;
        }
        uint64_t d = w->deadline - now;
        int di = d > 0x7fffffff ? 0x7fffffff : (int)d;
        if (next < 0 || di < next)
            next = di;
    }
    return next;
}
