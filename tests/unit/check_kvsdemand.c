/* check_kvsdemand.c - the on-demand KVS of pmiserv (kvsroute.c) over the
 * in-memory tree of fake_tree.c: 4 nodes of 2 ranks (PMI-1 and PMI-2 mixed)
 * in each KVS mode; rank-embedded keys got from another node (srcid -1 and
 * set), rank-less keys, absent keys, a get racing the owner's FENCE_DOWN, a
 * re-put in a later epoch, a value of a newer epoch never served, the bounds
 * on gets in flight and deferred, timeouts, an abort while a get waits,
 * malformed requests, and the bytes a fence carries.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "kvsroute.h"
#include "msg.h"
#include "pack.h"

#define NNODES 4
#define PPN 2
#define NRANKS (NNODES * PPN)
#define TIMEOUT 5000

static int layout[NRANKS];
static enum psrv_kvs_mode mode_now;
static int64_t auto_bytes_now;

static void tweak(struct psrv_config *cfg)
{
    cfg->kvs_mode = mode_now;
    cfg->kvs_auto_bytes = auto_bytes_now;
}

static struct ft *job(enum psrv_kvs_mode mode, int64_t auto_bytes)
{
    for (int r = 0; r < NRANKS; r++)
        layout[r] = r / PPN;
    mode_now = mode;
    auto_bytes_now = auto_bytes;
    struct ft *ft = ft_create_cfg(NNODES, 2, layout, NRANKS, TIMEOUT, tweak);
    for (int r = 0; r < NRANKS; r++) {
        if (r % 2) {
            ft_send(ft, r, "cmd=init pmi_version=2 pmi_subversion=0\n");
            ft_send2(ft, r, "cmd=fullinit;");
        } else {
            ft_send(ft, r, "cmd=init pmi_version=1 pmi_subversion=1\n");
        }
        free(ft_take(ft, r));
    }
    return ft;
}

static void put(struct ft *ft, int r, const char *key, const char *val)
{
    size_t n = strlen(key) + strlen(val) + 64;
    char *buf = malloc(n);
    ck_assert_ptr_nonnull(buf);
    if (r % 2) {
        snprintf(buf, n, "cmd=kvs-put;key=%s;value=%s;", key, val);
        ft_send2(ft, r, buf);
    } else {
        snprintf(buf, n, "cmd=put kvsname=42.0 key=%s value=%s\n", key, val);
        ft_send(ft, r, buf);
    }
    free(buf);
    char *got = ft_take(ft, r);
    ck_assert_msg(strstr(got, "rc=0") != NULL, "put by %d: %s", r, got);
    free(got);
}

static void fence_all(struct ft *ft)
{
    for (int r = 0; r < NRANKS; r++) {
        if (r % 2)
            ft_send2(ft, r, "cmd=kvs-fence;");
        else
            ft_send(ft, r, "cmd=barrier_in\n");
    }
    ft_run(ft, FT_FIFO);
    for (int r = 0; r < NRANKS; r++) {
        char *got = ft_take(ft, r);
        ck_assert_msg(
            strstr(got, r % 2 ? "kvs-fence-response;rc=0;" : "barrier_out rc=0"),
            "fence rank %d: %s", r, got);
        free(got);
    }
}

/* Send a get (srcid only for PMI-2; < -1: none sent). */
static void get_send(struct ft *ft, int r, const char *key, int srcid)
{
    char buf[256];
    if (r % 2) {
        if (srcid >= -1)
            snprintf(buf, sizeof(buf), "cmd=kvs-get;jobid=42.0;srcid=%d;key=%s;", srcid,
                     key);
        else
            snprintf(buf, sizeof(buf), "cmd=kvs-get;jobid=42.0;key=%s;", key);
        ft_send2(ft, r, buf);
    } else {
        snprintf(buf, sizeof(buf), "cmd=get kvsname=42.0 key=%s\n", key);
        ft_send(ft, r, buf);
    }
}

/* The answer of rank r's get: 0 found (value in val), 1 not found, 2 failed,
 * -1 none yet.  A "not found" must be worded as in the full mode. */
static int get_result(struct ft *ft, int r, char *val, size_t vlen)
{
    char *got = ft_take(ft, r);
    int res = -1;
    if (!*got) {
        free(got);
        return -1;
    }
    if (r % 2) {
        ck_assert_msg(strncmp(got + 6, "cmd=kvs-get-response;", 21) == 0, "%s", got);
        if (strstr(got, ";rc=0;found=TRUE;value=")) {
            char *v = strstr(got, "value=") + 6;
            snprintf(val, vlen, "%.*s", (int)strcspn(v, ";"), v);
            res = 0;
        } else if (strstr(got, ";rc=0;found=FALSE;")) {
            res = 1;
        } else {
            ck_assert_msg(strstr(got, ";errmsg=") != NULL, "%s", got);
            res = 2;
        }
    } else {
        ck_assert_msg(strncmp(got, "cmd=get_result ", 15) == 0, "%s", got);
        if (strstr(got, "rc=0 value=")) {
            char *v = strstr(got, "value=") + 6;
            snprintf(val, vlen, "%.*s", (int)strcspn(v, "\n"), v);
            res = 0;
        } else if (strcmp(got, "cmd=get_result rc=1 msg=key_not_found\n") == 0) {
            res = 1;
        } else {
            ck_assert_msg(strstr(got, "rc=-1 msg=") != NULL, "%s", got);
            res = 2;
        }
    }
    free(got);
    return res;
}

/* A get answered after the tree ran: result as get_result. */
static int get(struct ft *ft, int r, const char *key, int srcid, char *val, size_t vlen)
{
    get_send(ft, r, key, srcid);
    ft_run(ft, FT_FIFO);
    return get_result(ft, r, val, vlen);
}

static void card(char *key, size_t n, int r)
{
    snprintf(key, n, "P%d-businesscard", r);
}

/* Every rank puts its card (own), a key naming its right neighbour and one
 * rank-less key per node; fence; every rank gets them all. */
static void exchange(enum psrv_kvs_mode mode, int64_t auto_bytes, bool want_ondemand)
{
    struct ft *ft = job(mode, auto_bytes);
    char key[64], val[64], want[64], got[1100];

    for (int r = 0; r < NRANKS; r++) {
        card(key, sizeof(key), r);
        snprintf(val, sizeof(val), "card-of-%d", r);
        put(ft, r, key, val);
        snprintf(key, sizeof(key), "to%d", (r + 1) % NRANKS);
        snprintf(val, sizeof(val), "from-%d", r);
        put(ft, r, key, val);
        if (r % PPN == 0) {
            snprintf(key, sizeof(key), "node-name-%c", 'a' + r / PPN);
            put(ft, r, key, "x");
        }
    }
    fence_all(ft);
    for (int k = 0; k < NNODES; k++) {
        struct psrv_usage u;
        psrv_usage(ft->nodes[k].srv, &u);
        ck_assert_int_eq(u.last_fence_ondemand, want_ondemand);
        /* shared keys travel in every mode: here without asking */
        ck_assert_int_ge(u.kvs_keys, NRANKS + NNODES);
    }
    for (int r = 0; r < NRANKS; r++) {
        for (int o = 0; o < NRANKS; o++) {
            card(key, sizeof(key), o);
            snprintf(want, sizeof(want), "card-of-%d", o);
            int srcid = (r + o) % 3 == 0 ? o : -1; /* both forms */
            ck_assert_msg(get(ft, r, key, srcid, got, sizeof(got)) == 0,
                          "rank %d gets %s", r, key);
            ck_assert_str_eq(got, want);
            snprintf(key, sizeof(key), "to%d", o);
            snprintf(want, sizeof(want), "from-%d", (o + NRANKS - 1) % NRANKS);
            ck_assert_int_eq(get(ft, r, key, -1, got, sizeof(got)), 0);
            ck_assert_str_eq(got, want);
        }
        for (int k = 0; k < NNODES; k++) {
            snprintf(key, sizeof(key), "node-name-%c", 'a' + k);
            get_send(ft, r, key, -1); /* everywhere: answered at once */
            ck_assert_int_eq(get_result(ft, r, got, sizeof(got)), 0);
        }
        /* absent keys: a rank-less one at once, a rank-named one after asking */
        get_send(ft, r, "nothing-here", -1);
        ck_assert_int_eq(get_result(ft, r, got, sizeof(got)), 1);
        ck_assert_int_eq(get(ft, r, "P6-nothing", -1, got, sizeof(got)), 1);
        ck_assert_int_eq(get(ft, r, "P99-nothing", -1, got, sizeof(got)), 1);
        ck_assert_int_eq(get(ft, r, "nothing", 5, got, sizeof(got)), 1);
    }
    /* the second round of gets came from the caches: no new requests */
    struct psrv_usage u0;
    psrv_usage(ft->nodes[0].srv, &u0);
    if (want_ondemand)
        ck_assert_int_gt(u0.kvs_cache_keys, 0);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}

START_TEST(exchange_ondemand)
{
    exchange(PSRV_KVS_ONDEMAND, 0, true);
}
END_TEST

START_TEST(exchange_full)
{
    exchange(PSRV_KVS_FULL, 0, false);
}
END_TEST

START_TEST(exchange_auto_small)
{
    exchange(PSRV_KVS_AUTO, 0, false); /* default threshold: a small job is full */
}
END_TEST

START_TEST(exchange_auto_large)
{
    exchange(PSRV_KVS_AUTO, 64, true); /* 64 bytes: this job counts as large */
}
END_TEST

/* AUTO per node: nodes 0 and 1 put much, 2 and 3 little; each node decides
 * alone and every get is still answered right. */
START_TEST(auto_mixed_nodes)
{
    struct ft *ft = job(PSRV_KVS_AUTO, 4000);
    char key[64], val[1100], got[1100];

    for (int r = 0; r < NRANKS; r++) {
        card(key, sizeof(key), r);
        memset(val, 'a' + r, r < 4 ? 1000 : 10);
        val[r < 4 ? 1000 : 10] = '\0';
        put(ft, r, key, val);
    }
    fence_all(ft);
    int modes[NNODES];
    for (int k = 0; k < NNODES; k++) {
        struct psrv_usage u;
        psrv_usage(ft->nodes[k].srv, &u);
        modes[k] = u.last_fence_ondemand;
    }
    ck_assert_int_eq(modes[0], 1);
    ck_assert_int_eq(modes[1], 1);
    ck_assert_int_eq(modes[2], 0);
    ck_assert_int_eq(modes[3], 0);
    for (int r = 0; r < NRANKS; r++)
        for (int o = 0; o < NRANKS; o++) {
            card(key, sizeof(key), o);
            ck_assert_int_eq(get(ft, r, key, -1, got, sizeof(got)), 0);
            ck_assert_uint_eq(strlen(got), o < 4 ? 1000 : 10);
            ck_assert_int_eq(got[0], 'a' + o);
        }
    ft_destroy(ft);
}
END_TEST

/* A 1 KiB rank-embedded put per rank does not travel in an on-demand fence. */
START_TEST(fence_bytes)
{
    int64_t bytes[2];
    for (int i = 0; i < 2; i++) {
        struct ft *ft = job(i ? PSRV_KVS_ONDEMAND : PSRV_KVS_FULL, 0);
        char key[64], val[1025];
        memset(val, 'v', 1024);
        val[1024] = '\0';
        for (int r = 0; r < NRANKS; r++) {
            card(key, sizeof(key), r);
            put(ft, r, key, val);
        }
        fence_all(ft);
        bytes[i] =
            ft->sent_type_bytes[MSG_FENCE_UP] + ft->sent_type_bytes[MSG_FENCE_DOWN];
        ft_destroy(ft);
    }
    /* full: every card goes up once and down to 3 nodes */
    ck_assert_int_ge(bytes[0], (int64_t)NRANKS * 1024 * 2);
    /* on-demand: not even one card crosses a link */
    ck_assert_msg(bytes[1] < 1024, "on-demand fence moved %lld bytes",
                  (long long)bytes[1]);
}
END_TEST

/* Node 0 completed the fence, node 3 (the owner) has not seen its FENCE_DOWN
 * yet: the owner holds the request until it has, then answers. */
START_TEST(race_fence_down)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100];

    put(ft, 6, "P6-businesscard", "six");
    ft->hold_to = 3;
    ft->hold_type = MSG_FENCE_DOWN;
    for (int r = 0; r < NRANKS; r++) {
        if (r % 2)
            ft_send2(ft, r, "cmd=kvs-fence;");
        else
            ft_send(ft, r, "cmd=barrier_in\n");
    }
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(psrv_fence_epoch(ft->nodes[0].srv), 1);
    ck_assert_int_eq(psrv_fence_epoch(ft->nodes[3].srv), 0);
    free(ft_take(ft, 1));
    get_send(ft, 1, "P6-businesscard", -1);
    ft_run(ft, FT_FIFO); /* the request reaches node 3 and waits there */
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), -1);
    struct psrv_usage u;
    psrv_usage(ft->nodes[3].srv, &u);
    ck_assert_int_eq(u.kvs_served, 0);
    ft->hold_to = -1;
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(psrv_fence_epoch(ft->nodes[3].srv), 1);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), 0);
    ck_assert_str_eq(got, "six");
    ft_destroy(ft);
}
END_TEST

/* A key put again in a later epoch: the cache of the earlier one is dropped. */
START_TEST(reput_later_epoch)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100];

    put(ft, 6, "P6-businesscard", "first");
    fence_all(ft);
    ck_assert_int_eq(get(ft, 1, "P6-businesscard", 6, got, sizeof(got)), 0);
    ck_assert_str_eq(got, "first");
    get_send(ft, 0, "P6-businesscard", -1); /* same node: from the cache */
    ck_assert_int_eq(get_result(ft, 0, got, sizeof(got)), 0);
    ck_assert_str_eq(got, "first");
    put(ft, 6, "P6-businesscard", "second");
    fence_all(ft);
    ck_assert_int_eq(get(ft, 0, "P6-businesscard", -1, got, sizeof(got)), 0);
    ck_assert_str_eq(got, "second");
    ck_assert_int_eq(get(ft, 1, "P6-businesscard", 6, got, sizeof(got)), 0);
    ck_assert_str_eq(got, "second");
    ft_destroy(ft);
}
END_TEST

/* One routed message from `from` (a tree neighbour of `to`). */
static int inject(struct ft *ft, int from, int to, int type, uint32_t epoch, int origin,
                  int dest, const void *payload, size_t len)
{
    struct pack p;
    pack_init(&p);
    struct msg m = {.type = type,
                    .epoch = epoch,
                    .from = from,
                    .origin = origin,
                    .dest = dest,
                    .payload = payload,
                    .len = len};
    ck_assert_int_eq(msg_encode(&p, &m), 0);
    int rc = psrv_tree_input(ft->nodes[to].srv, from, p.buf, p.len);
    pack_free(&p);
    return rc;
}

static int inject_req(struct ft *ft, uint32_t epoch, uint64_t id, const char *key)
{
    struct pack p;
    pack_init(&p);
    pack_u64(&p, id);
    pack_str(&p, key);
    /* to node 3 from its parent, node 1, asked by node 0 */
    int rc = inject(ft, 1, 3, MSG_KVS_REQ, epoch, 0, 3, p.buf, p.len);
    pack_free(&p);
    return rc;
}

/* The last queued answer of node 3: its status (value in val). */
static int last_resp(struct ft *ft, uint64_t *id, char *val, size_t vlen)
{
    for (int i = ft->nq - 1; i >= 0; i--) {
        struct msg m;
        if (ft->q[i].from != 3 || msg_decode(&m, ft->q[i].buf, ft->q[i].len) < 0 ||
            m.type != MSG_KVS_RESP)
            continue;
        struct unpack u;
        size_t n = 0;
        unpack_init(&u, m.payload, m.len);
        *id = unpack_u64(&u);
        int st = unpack_i32(&u);
        const char *b = unpack_bytes(&u, &n);
        snprintf(val, vlen, "%.*s", (int)n, b ? b : "");
        return st;
    }
    return 99;
}

/* An asker one fence behind never gets a value of the newer epoch. */
START_TEST(newer_epoch_not_served)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char val[1100];
    uint64_t id;

    put(ft, 6, "P6-businesscard", "first");
    fence_all(ft);
    put(ft, 6, "P6-businesscard", "second");
    fence_all(ft);
    ck_assert_int_eq(inject_req(ft, 1, 77, "P6-businesscard"), 0);
    ck_assert_int_eq(last_resp(ft, &id, val, sizeof(val)), 1);
    ck_assert_uint_eq(id, 77);
    ck_assert_int_eq(inject_req(ft, 2, 78, "P6-businesscard"), 0);
    ck_assert_int_eq(last_resp(ft, &id, val, sizeof(val)), 0);
    ck_assert_uint_eq(id, 78);
    ck_assert_str_eq(val, "second");
    ft_destroy(ft);
}
END_TEST

/* Requests nobody honest sends are refused; the job goes on. */
START_TEST(malformed_requests)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char longkey[80];
    struct pack p;

    fence_all(ft);
    memset(longkey, 'k', 65);
    longkey[65] = '\0';
    ck_assert_int_eq(inject_req(ft, 1, 1, longkey), -EPROTO);
    ck_assert_int_eq(inject_req(ft, 1, 1, ""), -EPROTO);
    ck_assert_int_eq(inject_req(ft, 9, 1, "P6-x"), -EPROTO); /* epoch from the future */
    pack_init(&p);
    pack_u64(&p, 1);
    pack_bytes(&p, "a\0b", 3);
    ck_assert_int_eq(inject(ft, 1, 3, MSG_KVS_REQ, 1, 0, 3, p.buf, p.len), -EPROTO);
    pack_free(&p);
    pack_init(&p);
    pack_u64(&p, 1);
    pack_str(&p, "P6-x");
    pack_u8(&p, 0); /* trailing */
    ck_assert_int_eq(inject(ft, 1, 3, MSG_KVS_REQ, 1, 0, 3, p.buf, p.len), -EPROTO);
    ck_assert_int_eq(inject(ft, 1, 3, MSG_KVS_REQ, 1, 0, 9, p.buf, p.len - 1), -EPROTO);
    ck_assert_int_eq(inject(ft, 1, 3, MSG_KVS_REQ, 1, 3, 3, p.buf, p.len - 1), -EPROTO);
    pack_free(&p);
    /* an answer with a value too long, and a stray answer (dropped) */
    char big[1030];
    memset(big, 'v', 1025);
    big[1025] = '\0';
    pack_init(&p);
    pack_u64(&p, 5);
    pack_i32(&p, 0);
    pack_str(&p, big);
    ck_assert_int_eq(inject(ft, 3, 1, MSG_KVS_RESP, 1, 3, 1, p.buf, p.len), -EPROTO);
    pack_free(&p);
    pack_init(&p);
    pack_u64(&p, 5);
    pack_i32(&p, 0);
    pack_str(&p, "v");
    ck_assert_int_eq(inject(ft, 3, 1, MSG_KVS_RESP, 1, 3, 1, p.buf, p.len), 0);
    pack_free(&p);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

/* Bounds: gets in flight per rank, and requests deferred on the owner. */
START_TEST(queue_bounds)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100], key[64];
    uint64_t id;

    fence_all(ft);
    for (int i = 0; i < KR_MAX_OUT_CLIENT; i++) {
        snprintf(key, sizeof(key), "P6-k%d", i);
        get_send(ft, 1, key, -1);
    }
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), -1);
    get_send(ft, 1, "P6-one-too-many", -1);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), 2);
    ft_run(ft, FT_FIFO);
    char *all = ft_take(ft, 1);
    int n = 0;
    for (char *p = all; (p = strstr(p, "found=FALSE")); p++)
        n++;
    ck_assert_int_eq(n, KR_MAX_OUT_CLIENT);
    free(all);
    /* requests one fence ahead wait on node 3, up to KR_MAX_DEFER */
    for (int i = 0; i < KR_MAX_DEFER; i++)
        ck_assert_int_eq(inject_req(ft, 2, (uint64_t)i, "P6-x"), 0);
    ck_assert_int_eq(last_resp(ft, &id, got, sizeof(got)), 99);
    ck_assert_int_eq(inject_req(ft, 2, 9999, "P6-x"), 0);
    ck_assert_int_eq(last_resp(ft, &id, got, sizeof(got)), -EAGAIN);
    ck_assert_uint_eq(id, 9999);
    /* they time out with an error answer */
    ft_advance(ft, TIMEOUT + 1);
    ck_assert_int_eq(last_resp(ft, &id, got, sizeof(got)), -ETIMEDOUT);
    ft_destroy(ft);
}
END_TEST

/* A get whose owner never answers gets rc!=0 after the fence timeout. */
START_TEST(get_timeout)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100];

    put(ft, 6, "P6-businesscard", "six");
    fence_all(ft);
    ft->drop_type = MSG_KVS_REQ;
    ft->drop_count = 10;
    for (int r = 0; r < 2; r++) {
        get_send(ft, r, "P6-businesscard", -1);
        ft_run(ft, FT_FIFO);
        ck_assert_int_eq(get_result(ft, r, got, sizeof(got)), -1);
    }
    ft_advance(ft, TIMEOUT - 1);
    ck_assert_int_eq(get_result(ft, 0, got, sizeof(got)), -1);
    ft_advance(ft, 2);
    ck_assert_int_eq(get_result(ft, 0, got, sizeof(got)), 2);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), 2);
    /* the job goes on: the next get is answered */
    ft->drop_count = 0;
    ck_assert_int_eq(get(ft, 1, "P6-businesscard", -1, got, sizeof(got)), 0);
    ft_destroy(ft);
}
END_TEST

/* An abort while a get waits: the get is answered rc!=0. */
START_TEST(abort_while_waiting)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100];

    put(ft, 6, "P6-businesscard", "six");
    fence_all(ft);
    get_send(ft, 1, "P6-businesscard", -1);
    get_send(ft, 0, "P7-businesscard", -1);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), -1);
    ft_send2(ft, 5, "cmd=abort;isworld=TRUE;msg=giving up;");
    ft_run_some(ft, FT_FIFO, 2); /* the abort reaches node 0 before any answer */
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), 2);
    ck_assert_int_eq(get_result(ft, 0, got, sizeof(got)), 2);
    /* and later misses fail at once */
    get_send(ft, 1, "P6-other", -1);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), 2);
    ft_destroy(ft);
}
END_TEST

/* Two ranks of a node get the same card at once: one request, two answers;
 * a rank that hangs up meanwhile leaves the other one answered. */
START_TEST(same_key_one_request)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100];

    put(ft, 6, "P6-businesscard", "six");
    fence_all(ft);
    get_send(ft, 0, "P6-businesscard", -2);
    get_send(ft, 1, "P6-businesscard", -1);
    get_send(ft, 1, "P6-businesscard", 6); /* srcid names the same node */
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), -1);
    struct psrv_usage u;
    psrv_usage(ft->nodes[0].srv, &u);
    ck_assert_int_eq(u.kvs_remote_gets, 1);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(get_result(ft, 0, got, sizeof(got)), 0);
    ck_assert_str_eq(got, "six");
    char *all = ft_take(ft, 1);
    ck_assert_msg(strstr(all, "value=six;") &&
                      strstr(strstr(all, "value=six;") + 1, "value=six;"),
                  "%s", all);
    free(all);
    /* the first asker hangs up: the second still gets its answer */
    get_send(ft, 0, "P7-businesscard", -2);
    get_send(ft, 1, "P7-businesscard", -1);
    ft_gone(ft, 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), 1);
    ft_destroy(ft);
}
END_TEST

/* A rank that hangs up while its get waits: no answer, nothing leaks. */
START_TEST(client_gone_while_waiting)
{
    struct ft *ft = job(PSRV_KVS_ONDEMAND, 0);
    char got[1100];

    fence_all(ft);
    get_send(ft, 1, "P6-businesscard", -1);
    ft_gone(ft, 1);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(get_result(ft, 1, got, sizeof(got)), -1);
    ft_destroy(ft);
}
END_TEST

START_TEST(classification)
{
    ck_assert(kr_key_names_rank("P17-businesscard", 17));
    ck_assert(kr_key_names_rank("card17", 17));
    ck_assert(kr_key_names_rank("bc-17-x", 17));
    ck_assert(kr_key_names_rank("x1x17", 17));
    ck_assert(kr_key_names_rank("0", 0));
    ck_assert(kr_key_names_rank("rank-0-addr", 0));
    ck_assert(!kr_key_names_rank("card017", 17));
    ck_assert(!kr_key_names_rank("card170", 17));
    ck_assert(!kr_key_names_rank("card1", 17));
    ck_assert(!kr_key_names_rank("00", 0));
    ck_assert(!kr_key_names_rank("PMI_dead_processes", 0));
    ck_assert(!kr_key_names_rank("99999999999999999", 17));
    ck_assert(!kr_key_names_rank("", 0));
}
END_TEST

START_TEST(mode_names)
{
    enum psrv_kvs_mode m = PSRV_KVS_FULL;
    ck_assert_int_eq(psrv_kvs_mode_parse("ondemand", &m), 0);
    ck_assert_int_eq(m, PSRV_KVS_ONDEMAND);
    ck_assert_int_eq(psrv_kvs_mode_parse("AUTO", &m), 0);
    ck_assert_int_eq(m, PSRV_KVS_AUTO);
    ck_assert_int_eq(psrv_kvs_mode_parse("full", &m), 0);
    ck_assert_int_eq(m, PSRV_KVS_FULL);
    ck_assert_int_eq(psrv_kvs_mode_parse("fast", &m), -1);
    ck_assert_int_eq(m, PSRV_KVS_FULL);
    char err[160] = "";
    int64_t b = 0;
    setenv("LOOM_PMI_KVS_MODE", "bogus", 1);
    setenv("LOOM_PMI_KVS_AUTO_BYTES", "1000", 1);
    ck_assert_int_eq(psrv_kvs_from_env(&m, &b, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "LOOM_PMI_KVS_MODE=bogus") != NULL, "%s", err);
    ck_assert_int_eq(m, PSRV_KVS_FULL);
    ck_assert_int_eq(b, 1000);
    setenv("LOOM_PMI_KVS_MODE", "ondemand", 1);
    setenv("LOOM_PMI_KVS_AUTO_BYTES", "12x", 1);
    ck_assert_int_eq(psrv_kvs_from_env(&m, &b, err, sizeof(err)), -1);
    ck_assert_int_eq(m, PSRV_KVS_ONDEMAND);
    ck_assert_int_eq(b, 1000);
    unsetenv("LOOM_PMI_KVS_MODE");
    unsetenv("LOOM_PMI_KVS_AUTO_BYTES");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kvsdemand");
    TCase *tc = tcase_create("modes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, classification);
    tcase_add_test(tc, mode_names);
    tcase_add_test(tc, exchange_ondemand);
    tcase_add_test(tc, exchange_full);
    tcase_add_test(tc, exchange_auto_small);
    tcase_add_test(tc, exchange_auto_large);
    tcase_add_test(tc, auto_mixed_nodes);
    tcase_add_test(tc, fence_bytes);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("edges");
    tcase_set_timeout(te, 60);
    tcase_add_test(te, race_fence_down);
    tcase_add_test(te, reput_later_epoch);
    tcase_add_test(te, newer_epoch_not_served);
    tcase_add_test(te, malformed_requests);
    tcase_add_test(te, queue_bounds);
    tcase_add_test(te, get_timeout);
    tcase_add_test(te, abort_while_waiting);
    tcase_add_test(te, client_gone_while_waiting);
    tcase_add_test(te, same_key_one_request);
    suite_add_tcase(s, te);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
