/* nameserv.c - the job's name service (see nameserv.h).
 *
 * Payloads: NS_REQ = u8 op, i32 client, u32 seq, str name, str port;
 *           NS_RESP = u8 op, i32 client, u32 seq, i32 rc, str port.
 * The per-client sequence number makes a late answer to an abandoned
 * (timed out) request harmless.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ktree.h"
#include "msg.h"
#include "nameserv.h"
#include "pack.h"
#include "psrv_int.h"

struct entry {
    char *name, *port;
    struct entry *next;
};

struct hreq { /* a request of the host (psrv_ns_request) in flight */
    uint64_t id;
    uint32_t seq;
    int op;
    uint64_t deadline;
    struct hreq *next;
};

struct nameserv {
    struct entry *list; /* node 0 only */
    struct hreq *host;  /* host requests waiting for node 0 */
    uint32_t host_seq;
};

struct nameserv *ns_create(struct psrv *s)
{
    (void)s;
    return calloc(1, sizeof(struct nameserv));
}

void ns_destroy(struct nameserv *ns)
{
    if (!ns)
        return;
    while (ns->list) {
        struct entry *e = ns->list;
        ns->list = e->next;
        free(e->name);
        free(e->port);
        free(e);
    }
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
    struct entry **pp = &ns->list;
    while (*pp && strcmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    *out = NULL;
    switch (op) {
    case NS_PUBLISH: {
        if (*pp)
            return 1;
        struct entry *e = calloc(1, sizeof(*e));
        if (!e || !(e->name = strdup(name)) || !(e->port = strdup(port))) {
            if (e)
                free(e->name);
            free(e);
            return 2;
        }
        e->next = ns->list;
        ns->list = e;
        return 0;
    }
    case NS_UNPUBLISH: {
        if (!*pp)
            return 1;
        struct entry *e = *pp;
        *pp = e->next;
        free(e->name);
        free(e->port);
        free(e);
        return 0;
    }
    case NS_LOOKUP:
        if (!*pp)
            return 1;
        *out = (*pp)->port;
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

static void finish(struct psrv *s, struct client *c, int op, int rc, const char *port,
                   const char *msg)
{
    c->ns_wait = false;
    if (!c->gone)
        proto_ns_done(s, c, op, rc, port, msg ? msg : ns_errtext(op, rc));
    free(c->ns_thrid);
    c->ns_thrid = NULL;
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
    free(c->ns_thrid);
    c->ns_thrid = srv_strdup(thrid);
    c->ns_wait = true;
    c->ns_op = op;
    c->ns_seq++;
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
    pack_u32(&p, c->ns_seq);
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
    c->ns_deadline =
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
            *pp = h->next;
            if (s->ops.ns_done)
                s->ops.ns_done(s->arg, h->id, prc,
                               prc == 0 && op == NS_LOOKUP ? port : NULL);
            free(h);
        }
        free(port);
        return 0;
    }
    struct client *c = &s->cl[client];
    if (c->ns_wait && c->ns_seq == seq && c->ns_op == op)
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
        const char *out;
        int rc = ns_apply(s->ns, op, name, value ? value : "", &out);
        if (s->ops.ns_done)
            s->ops.ns_done(s->arg, id, rc, rc == 0 && op == NS_LOOKUP ? out : NULL);
        return 0;
    }
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
    return 0;
}

int ns_tick(struct psrv *s, uint64_t now)
{
    int next = -1;
    for (struct hreq **pp = &s->ns->host; *pp;) {
        struct hreq *h = *pp;
        if (h->deadline && now >= h->deadline) {
            *pp = h->next;
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
        if (!c->ns_wait || c->ns_deadline == 0)
            continue;
        if (now >= c->ns_deadline) {
            finish(s, c, c->ns_op, 14, NULL, "name service request timed out");
            continue;
        }
        uint64_t d = c->ns_deadline - now;
        int di = d > 0x7fffffff ? 0x7fffffff : (int)d;
        if (next < 0 || di < next)
            next = di;
    }
    return next;
}
