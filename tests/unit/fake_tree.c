/* fake_tree.c - in-memory job of psrv instances (see fake_tree.h). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"

static int cb_client_send(void *arg, int client, const char *buf, size_t len)
{
    struct ft_node *n = arg;
    struct ft *ft = n->ft;
    int rank = n->ranks[client];
    char *o = realloc(ft->out[rank], ft->outlen[rank] + len + 1);
    ck_assert_ptr_nonnull(o);
    memcpy(o + ft->outlen[rank], buf, len);
    ft->outlen[rank] += len;
    o[ft->outlen[rank]] = '\0';
    ft->out[rank] = o;
    return 0;
}

static int cb_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct ft_node *n = arg;
    struct ft *ft = n->ft;
    ck_assert_int_ge(to, 0);
    ck_assert_int_lt(to, ft->nnodes);
    ck_assert_int_ne(to, n->node);
    if (to == ft->send_fail_to)
        return -EPIPE;
    ft->sent_bytes += (int64_t)len;
    if (len >= 3 && ((const unsigned char *)buf)[2] < 32)
        ft->sent_type_bytes[((const unsigned char *)buf)[2]] += (int64_t)len;
    if (ft->nq == ft->capq) {
        ft->capq = ft->capq ? ft->capq * 2 : 64;
        ft->q = realloc(ft->q, ft->capq * sizeof(*ft->q));
        ck_assert_ptr_nonnull(ft->q);
    }
    struct ft_msg *m = &ft->q[ft->nq++];
    m->from = n->node;
    m->to = to;
    m->len = len;
    m->dup = false;
    m->buf = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(m->buf);
    memcpy(m->buf, buf, len);
    return 0;
}

static void cb_abort(void *arg, int rank, int exitcode, const char *msg)
{
    struct ft_node *n = arg;
    if (n->naborts++ == 0) {
        n->abort_rank = rank;
        n->abort_code = exitcode;
        snprintf(n->abort_msg, sizeof(n->abort_msg), "%s", msg);
    }
    if (n->ft->verbose)
        fprintf(stderr, "node %d: ABORT rank %d code %d: %s\n", n->node, rank, exitcode,
                msg);
}

static void cb_log(void *arg, enum psrv_log_level lvl, const char *msg)
{
    struct ft_node *n = arg;
    struct ft *ft = n->ft;
    size_t len = strlen(msg);
    char *l = realloc(ft->log, ft->loglen + len + 2);
    ck_assert_ptr_nonnull(l);
    memcpy(l + ft->loglen, msg, len);
    ft->loglen += len;
    l[ft->loglen++] = '\n';
    l[ft->loglen] = '\0';
    ft->log = l;
    if (ft->verbose)
        fprintf(stderr, "node %d [%d] %s\n", n->node, (int)lvl, msg);
}

static uint64_t cb_now(void *arg)
{
    struct ft_node *n = arg;
    return n->ft->now;
}

static char *copy_blob(const void *data, size_t len)
{
    char *c = malloc(len + 1);
    ck_assert_ptr_nonnull(c);
    if (len)
        memcpy(c, data, len);
    c[len] = '\0';
    return c;
}

static void cb_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    struct ft_node *n = arg;
    (void)msg;
    n->ncoll++;
    n->coll_id = id;
    n->coll_rc = rc;
    free(n->coll_data);
    n->coll_data = copy_blob(data, len);
    n->coll_len = len;
}

static void cb_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                            size_t len)
{
    struct ft_node *n = arg;
    (void)info;
    (void)len;
    ck_assert_int_lt(n->ndreq, 16);
    n->dreq_handle[n->ndreq] = handle;
    n->dreq_rank[n->ndreq++] = rank;
}

static void cb_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    struct ft_node *n = arg;
    (void)msg;
    n->ndmdx++;
    n->dmdx_id = id;
    n->dmdx_rc = rc;
    free(n->dmdx_data);
    n->dmdx_data = copy_blob(data, len);
    n->dmdx_len = len;
}

static void cb_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    struct ft_node *n = arg;
    n->nns++;
    n->ns_id = id;
    n->ns_rc = rc;
    snprintf(n->ns_value, sizeof(n->ns_value), "%s", value ? value : "(null)");
}

int ft_spawn_mode;

/* ops->spawn: the request as one line (ft_node.spawn_desc), then accept or refuse. */
static int cb_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                    size_t errlen)
{
    struct ft_node *n = arg;
    char *d = n->spawn_desc;
    size_t cap = sizeof(n->spawn_desc), o = 0;
#define ADD(...)                                                                         \
    do {                                                                                 \
        int k_ = snprintf(d + o, cap - o, __VA_ARGS__);                                  \
        if (k_ > 0)                                                                      \
            o = o + (size_t)k_ < cap ? o + (size_t)k_ : cap - 1;                         \
    } while (0)
    ADD("rank=%d total=%d", req->rank, req->total);
    for (int i = 0; i < req->ncmds; i++) {
        const struct psrv_spawn_cmd *c = &req->cmds[i];
        ADD(" [%s x%d", c->cmd, c->maxprocs);
        for (int j = 0; j < c->argc; j++)
            ADD(" %s", c->argv[j]);
        ck_assert_ptr_null(c->argv[c->argc]);
        for (int j = 0; j < c->ninfo; j++)
            ADD(" %s:=%s", c->info[j].key, c->info[j].val);
        ADD("]");
    }
    for (int i = 0; i < req->npreput; i++)
        ADD(" %s=%s", req->preput[i].key, req->preput[i].val);
#undef ADD
    n->nspawn++;
    n->spawn_id = id;
    if (ft_spawn_mode == 2) {
        snprintf(err, errlen, "the host says no");
        return -EAGAIN;
    }
    return 0;
}

static const struct psrv_ops ops_spawn = {
    .client_send = cb_client_send,
    .tree_send = cb_tree_send,
    .abort = cb_abort,
    .log = cb_log,
    .now_ms = cb_now,
    .coll_done = cb_coll_done,
    .dmdx_request = cb_dmdx_request,
    .dmdx_done = cb_dmdx_done,
    .ns_done = cb_ns_done,
    .spawn = cb_spawn,
};

static const struct psrv_ops ops = {
    .client_send = cb_client_send,
    .tree_send = cb_tree_send,
    .abort = cb_abort,
    .log = cb_log,
    .now_ms = cb_now,
    .coll_done = cb_coll_done,
    .dmdx_request = cb_dmdx_request,
    .dmdx_done = cb_dmdx_done,
    .ns_done = cb_ns_done,
};

struct ft *ft_create_cfg(int nnodes, int width, const int *rank_node, int size,
                         int timeout_ms, void (*tweak)(struct psrv_config *cfg))
{
    struct ft *ft = calloc(1, sizeof(*ft));
    ck_assert_ptr_nonnull(ft);
    ft->nnodes = nnodes;
    ft->size = size;
    ft->width = width;
    ft->seed = 1;
    ft->drop_from = ft->drop_to = -1;
    ft->send_fail_to = -1;
    ft->hold_to = -1;
    ft->now = 1000;
    ft->verbose = getenv("FT_VERBOSE") != NULL;
    ft->rank_node = malloc(size * sizeof(int));
    ft->client_of = malloc(size * sizeof(int));
    ft->nodes = calloc(nnodes, sizeof(*ft->nodes));
    ft->out = calloc(size, sizeof(char *));
    ft->outlen = calloc(size, sizeof(size_t));
    ck_assert(ft->rank_node && ft->client_of && ft->nodes && ft->out && ft->outlen);
    memcpy(ft->rank_node, rank_node, size * sizeof(int));

    for (int k = 0; k < nnodes; k++) {
        struct ft_node *n = &ft->nodes[k];
        n->ft = ft;
        n->node = k;
        n->abort_rank = -2;
        n->ranks = malloc(size * sizeof(int));
        for (int r = 0; r < size; r++)
            if (rank_node[r] == k) {
                ft->client_of[r] = n->nlocal;
                n->ranks[n->nlocal++] = r;
            }
        struct psrv_config cfg = {
            .jobid = "42.0",
            .size = size,
            .nnodes = nnodes,
            .nodeid = k,
            .local_count = n->nlocal,
            .local_ranks = n->ranks,
            .rank_node = ft->rank_node,
            .tree_width = width,
            .fence_timeout_ms = timeout_ms,
            .log_level = ft->verbose ? PSRV_LOG_TRACE : PSRV_LOG_ERROR,
        };
        if (tweak)
            tweak(&cfg);
        n->srv = psrv_create(&cfg, ft_spawn_mode ? &ops_spawn : &ops, n);
        ck_assert_msg(n->srv != NULL, "psrv_create node %d: %s", k, strerror(errno));
    }
    return ft;
}

struct ft *ft_create(int nnodes, int width, const int *rank_node, int size,
                     int timeout_ms)
{
    return ft_create_cfg(nnodes, width, rank_node, size, timeout_ms, NULL);
}

void ft_destroy(struct ft *ft)
{
    for (int k = 0; k < ft->nnodes; k++) {
        psrv_destroy(ft->nodes[k].srv);
        free(ft->nodes[k].ranks);
        free(ft->nodes[k].coll_data);
        free(ft->nodes[k].dmdx_data);
    }
    for (int i = 0; i < ft->nq; i++)
        free(ft->q[i].buf);
    for (int r = 0; r < ft->size; r++)
        free(ft->out[r]);
    free(ft->q);
    free(ft->log);
    free(ft->out);
    free(ft->outlen);
    free(ft->nodes);
    free(ft->rank_node);
    free(ft->client_of);
    free(ft);
}

struct ft_node *ft_node_of(struct ft *ft, int rank)
{
    return &ft->nodes[ft->rank_node[rank]];
}

int ft_input(struct ft *ft, int rank, const char *buf, size_t len)
{
    return psrv_client_input(ft_node_of(ft, rank)->srv, ft->client_of[rank], buf, len);
}

int ft_send(struct ft *ft, int rank, const char *text)
{
    return ft_input(ft, rank, text, strlen(text));
}

int ft_send2(struct ft *ft, int rank, const char *body)
{
    size_t n = strlen(body);
    char *buf = malloc(n + 7);
    ck_assert_ptr_nonnull(buf);
    snprintf(buf, n + 7, "%-6zu%s", n, body);
    int rc = ft_input(ft, rank, buf, n + 6);
    free(buf);
    return rc;
}

char *ft_take(struct ft *ft, int rank)
{
    char *s = ft->out[rank] ? ft->out[rank] : strdup("");
    ft->out[rank] = NULL;
    ft->outlen[rank] = 0;
    return s;
}

void ft_gone(struct ft *ft, int rank)
{
    psrv_client_gone(ft_node_of(ft, rank)->srv, ft->client_of[rank]);
}

static bool held(const struct ft *ft, const struct ft_msg *m)
{
    return ft->hold_to >= 0 && m->to == ft->hold_to && m->len >= 3 &&
           ((const unsigned char *)m->buf)[2] == ft->hold_type;
}

static bool should_drop(struct ft *ft, const struct ft_msg *m)
{
    if (ft->drop_count <= 0)
        return false;
    if (ft->drop_from >= 0 && m->from != ft->drop_from)
        return false;
    if (ft->drop_to >= 0 && m->to != ft->drop_to)
        return false;
    /* msg.h layout: magic, version, type */
    if (ft->drop_type > 0 &&
        (m->len < 3 || ((unsigned char *)m->buf)[2] != ft->drop_type))
        return false;
    ft->drop_count--;
    return true;
}

int ft_run(struct ft *ft, enum ft_order order)
{
    return ft_run_some(ft, order, -1);
}

int ft_run_some(struct ft *ft, enum ft_order order, int max)
{
    int n = 0;
    while (ft->nq > 0 && (max < 0 || n < max)) {
        int i = 0;
        if (ft->hold_to >= 0) { /* the first message not held (FIFO) */
            while (i < ft->nq && held(ft, &ft->q[i]))
                i++;
            if (i == ft->nq)
                break;
        } else if (order != FT_FIFO)
            i = (int)(rand_r(&ft->seed) % (unsigned)ft->nq);
        struct ft_msg m = ft->q[i];
        bool keep = false;
        if (order == FT_RANDOM_DUP && !m.dup && rand_r(&ft->seed) % 3 == 0) {
            /* deliver a copy now, and leave the original queued */
            ft->q[i].dup = true;
            keep = true;
            ft->duplicated++;
        }
        if (!keep) {
            memmove(&ft->q[i], &ft->q[i + 1], (ft->nq - i - 1) * sizeof(*ft->q));
            ft->nq--;
        }
        if (should_drop(ft, &m)) {
            ft->dropped++;
        } else {
            psrv_tree_input(ft->nodes[m.to].srv, m.from, m.buf, m.len);
            ft->delivered++;
            n++;
        }
        if (!keep)
            free(m.buf);
    }
    return n;
}

void ft_advance(struct ft *ft, uint64_t ms)
{
    ft->now += ms;
    for (int k = 0; k < ft->nnodes; k++)
        psrv_tick(ft->nodes[k].srv);
}

int ft_first_abort(const struct ft *ft, int *total)
{
    int first = -1, t = 0;
    for (int k = 0; k < ft->nnodes; k++) {
        if (ft->nodes[k].naborts && first < 0)
            first = k;
        t += ft->nodes[k].naborts;
    }
    if (total)
        *total = t;
    return first;
}
