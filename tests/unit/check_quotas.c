/* check_quotas.c - the server core against a hostile task (issue 18): KVS
 * quotas per rank and per job (re-puts of committed keys, the fence's
 * commit cap across nodes), node attribute and name quotas on hash tables,
 * the hash table itself under 100 000 keys, log escaping, rate-limited
 * warnings and the trace cap, the caps on what a host-side protocol (PMIx)
 * can queue.  Driven through the public API with the fake
 * job of fake_tree.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "psrv_int.h"
#include "strmap.h"

static struct psrv_limits g_lim;
static enum psrv_log_level g_level = PSRV_LOG_WARN;

static void tweak(struct psrv_config *cfg)
{
    cfg->limits = g_lim;
    cfg->log_level = g_level;
}

static struct ft *job(int nnodes, int size)
{
    int *rn = calloc((size_t)size, sizeof(int));
    for (int r = 0; r < size; r++)
        rn[r] = r * nnodes / size;
    struct ft *ft = ft_create_cfg(nnodes, 2, rn, size, 5000, tweak);
    free(rn);
    ck_assert_ptr_nonnull(ft);
    return ft;
}

static void reset(void)
{
    memset(&g_lim, 0, sizeof(g_lim));
    g_level = PSRV_LOG_WARN;
}

static void init2(struct ft *ft, int rank)
{
    char body[128];
    ck_assert_int_eq(ft_send(ft, rank, "cmd=init pmi_version=2 pmi_subversion=0\n"), 0);
    free(ft_take(ft, rank));
    snprintf(body, sizeof(body), "cmd=fullinit;pmirank=%d;", rank);
    ck_assert_int_eq(ft_send2(ft, rank, body), 0);
    free(ft_take(ft, rank));
}

/* Send a PMI-2 body, return the reply (caller frees). */
static char *req2(struct ft *ft, int rank, const char *body)
{
    ck_assert_int_eq(ft_send2(ft, rank, body), 0);
    return ft_take(ft, rank);
}

static void expect_rc(struct ft *ft, int rank, const char *body, const char *rc)
{
    char *got = req2(ft, rank, body);
    char want[32];
    snprintf(want, sizeof(want), ";rc=%s;", rc);
    ck_assert_msg(strstr(got, want) != NULL, "%s -> %s (want rc=%s)", body, got, rc);
    free(got);
}

static int count_lines(const char *log, const char *needle)
{
    int n = 0;
    for (const char *p = log ? log : ""; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

START_TEST(kvs_rank_keys)
{
    reset();
    g_lim.kvs_keys_per_rank = 3;
    struct ft *ft = job(1, 2);
    init2(ft, 0);
    init2(ft, 1);
    expect_rc(ft, 0, "cmd=kvs-put;key=a;value=1;", "0");
    expect_rc(ft, 0, "cmd=kvs-put;key=b;value=1;", "0");
    expect_rc(ft, 0, "cmd=kvs-put;key=c;value=1;", "0");
    expect_rc(ft, 1, "cmd=kvs-put;key=d;value=1;", "0"); /* another rank's quota */
    char *got = req2(ft, 0, "cmd=kvs-put;key=e;value=1;");
    ck_assert_msg(strstr(got, ";rc=2;") && strstr(got, "LoomMaxKvsKeysPerRank") &&
                      strstr(got, "rank 0 exceeded"),
                  "%s", got);
    free(got);
    struct ft_node *n = ft_node_of(ft, 0);
    ck_assert_int_eq(n->naborts, 1);
    ck_assert_int_eq(n->abort_rank, 0);
    ck_assert_ptr_nonnull(strstr(n->abort_msg, "LoomMaxKvsKeysPerRank"));
    ck_assert_int_eq(count_lines(ft->log, "exceeded the"), 1);
    /* later crossings: refused, no new line, no new abort */
    got = req2(ft, 0, "cmd=kvs-put;key=f;value=1;");
    ck_assert_ptr_nonnull(strstr(got, ";rc=2;"));
    free(got);
    ck_assert_int_eq(count_lines(ft->log, "exceeded the"), 1);
    ck_assert_int_eq(n->naborts, 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(kvs_rank_bytes_reput)
{
    reset();
    g_lim.kvs_keys_per_rank = 2;
    g_lim.kvs_bytes_per_rank = 10;
    struct ft *ft = job(1, 1);
    init2(ft, 0);
    expect_rc(ft, 0, "cmd=kvs-put;key=a;value=1234;", "0"); /* 5 bytes */
    expect_rc(ft, 0, "cmd=kvs-put;key=b;value=12;", "0");   /* 8 */
    char *got = req2(ft, 0, "cmd=kvs-fence;");
    ck_assert_ptr_nonnull(strstr(got, "kvs-fence-response;rc=0;"));
    free(got);
    /* re-puts of committed keys: no new key, only the bytes they add */
    for (int i = 0; i < 100; i++)
        expect_rc(ft, 0, "cmd=kvs-put;key=a;value=4321;", "0");
    expect_rc(ft, 0, "cmd=kvs-put;key=b;value=1234;", "0"); /* +2: 10 */
    got = req2(ft, 0, "cmd=kvs-fence;");
    ck_assert_ptr_nonnull(strstr(got, "kvs-fence-response;rc=0;"));
    free(got);
    got = req2(ft, 0, "cmd=kvs-get;key=b;");
    ck_assert_ptr_nonnull(strstr(got, "value=1234;"));
    free(got);
    got = req2(ft, 0, "cmd=kvs-put;key=b;value=12345;"); /* +1: 11 > 10 */
    ck_assert_msg(strstr(got, ";rc=2;") && strstr(got, "LoomMaxKvsBytesPerRank"), "%s",
                  got);
    free(got);
    ck_assert_int_eq(ft_node_of(ft, 0)->naborts, 1);
    ft_destroy(ft);
}
END_TEST

/* Two nodes each pass their own check; together they pass the job's cap:
 * the commit refuses and the fence fails naming the limit. */
START_TEST(kvs_job_cap_at_commit)
{
    reset();
    g_lim.kvs_bytes_per_job = 30;
    struct ft *ft = job(2, 2);
    init2(ft, 0);
    init2(ft, 1);
    expect_rc(ft, 0, "cmd=kvs-put;key=a;value=0123456789abcdefgh;", "0"); /* 19 */
    expect_rc(ft, 1, "cmd=kvs-put;key=b;value=0123456789abcdefgh;", "0");
    ck_assert_int_eq(ft_send2(ft, 0, "cmd=kvs-fence;"), 0);
    ck_assert_int_eq(ft_send2(ft, 1, "cmd=kvs-fence;"), 0);
    ft_run(ft, FT_FIFO);
    for (int r = 0; r < 2; r++) {
        char *got = ft_take(ft, r);
        ck_assert_msg(strstr(got, "kvs-fence-response;rc=-1;") &&
                          strstr(got, "LoomMaxKvsBytesPerJob"),
                      "%s", got);
        free(got);
    }
    int total;
    ck_assert_int_ge(ft_first_abort(ft, &total), 0);
    ft_destroy(ft);
}
END_TEST

START_TEST(kvs_job_keys_at_put)
{
    reset();
    g_lim.kvs_keys_per_job = 4;
    struct ft *ft = job(1, 2);
    init2(ft, 0);
    init2(ft, 1);
    expect_rc(ft, 0, "cmd=kvs-put;key=a;value=1;", "0");
    expect_rc(ft, 1, "cmd=kvs-put;key=b;value=1;", "0");
    expect_rc(ft, 0, "cmd=kvs-put;key=c;value=1;", "0");
    expect_rc(ft, 1, "cmd=kvs-put;key=d;value=1;", "0");
    char *got = req2(ft, 1, "cmd=kvs-put;key=e;value=1;");
    ck_assert_msg(strstr(got, ";rc=2;") && strstr(got, "LoomMaxKvsKeysPerJob") &&
                      strstr(got, "rank 1"),
                  "%s", got);
    free(got);
    ft_destroy(ft);
}
END_TEST

START_TEST(nodeattr_quota)
{
    reset();
    g_lim.nodeattr_count = 1000;
    struct ft *ft = job(1, 2);
    init2(ft, 0);
    init2(ft, 1);
    char body[128];
    for (int i = 0; i < 1000; i++) {
        snprintf(body, sizeof(body), "cmd=info-putnodeattr;key=k%d;value=v%d;", i, i);
        expect_rc(ft, i % 2, body, "0");
    }
    expect_rc(ft, 0, "cmd=info-putnodeattr;key=k5;value=replaced;", "0"); /* no new one */
    char *got = req2(ft, 1, "cmd=info-getnodeattr;key=k5;");
    ck_assert_ptr_nonnull(strstr(got, "value=replaced;"));
    free(got);
    struct psrv_usage u;
    psrv_usage(ft_node_of(ft, 0)->srv, &u);
    ck_assert_int_eq(u.nodeattr_count, 1000);
    got = req2(ft, 1, "cmd=info-putnodeattr;key=new;value=1;");
    ck_assert_msg(strstr(got, ";rc=2;") && strstr(got, "LoomMaxNodeAttrs") &&
                      strstr(got, "rank 1"),
                  "%s", got);
    free(got);
    psrv_usage(ft_node_of(ft, 0)->srv, &u);
    ck_assert_int_eq(u.nodeattr_count, 1000);
    ft_destroy(ft);
}
END_TEST

START_TEST(names_quota)
{
    reset();
    g_lim.names_count = 2;
    struct ft *ft = job(1, 1);
    init2(ft, 0);
    expect_rc(ft, 0, "cmd=name-publish;name=a;port=p;", "0");
    expect_rc(ft, 0, "cmd=name-publish;name=b;port=p;", "0");
    expect_rc(ft, 0, "cmd=name-unpublish;name=a;", "0"); /* frees its place */
    expect_rc(ft, 0, "cmd=name-publish;name=c;port=p;", "0");
    char *got = req2(ft, 0, "cmd=name-lookup;name=c;");
    ck_assert_ptr_nonnull(strstr(got, "port=p;"));
    free(got);
    got = req2(ft, 0, "cmd=name-publish;name=d;port=p;");
    ck_assert_msg(strstr(got, ";rc=2;") && strstr(got, "LoomMaxNames"), "%s", got);
    free(got);
    ck_assert_int_eq(ft_node_of(ft, 0)->naborts, 1);
    ft_destroy(ft);
}
END_TEST

/* A rank on node 1: the table is on node 0, the quota error comes back. */
START_TEST(names_quota_remote)
{
    reset();
    g_lim.names_bytes = 10;
    struct ft *ft = job(2, 2);
    init2(ft, 0);
    init2(ft, 1);
    ck_assert_int_eq(ft_send2(ft, 1, "cmd=name-publish;name=abc;port=defg;"), 0);
    ft_run(ft, FT_FIFO);
    char *got = ft_take(ft, 1);
    ck_assert_msg(strstr(got, ";rc=0;"), "%s", got);
    free(got);
    ck_assert_int_eq(ft_send2(ft, 1, "cmd=name-publish;name=xyz;port=defg;"), 0);
    ft_run(ft, FT_FIFO);
    got = ft_take(ft, 1);
    ck_assert_msg(strstr(got, ";rc=2;") && strstr(got, "LoomMaxNameBytes") &&
                      strstr(got, "rank 1"),
                  "%s", got);
    free(got);
    ck_assert_int_eq(ft_node_of(ft, 1)->abort_rank, 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(strmap_100k)
{
    struct strmap *m = strmap_create();
    char k[32], v[32];
    size_t bytes = 0;
    for (int i = 0; i < 100000; i++) {
        snprintf(k, sizeof(k), "key%d", i);
        snprintf(v, sizeof(v), "%d", i * 7);
        ck_assert_int_eq(strmap_set(m, k, v), 0);
        bytes += strlen(k) + strlen(v);
    }
    ck_assert_uint_eq(strmap_count(m), 100000);
    ck_assert_uint_eq(strmap_bytes(m), bytes);
    for (int i = 0; i < 100000; i += 3) {
        snprintf(k, sizeof(k), "key%d", i);
        snprintf(v, sizeof(v), "%d", i * 7);
        ck_assert_str_eq(strmap_get(m, k), v);
    }
    ck_assert_int_eq(strmap_set(m, "key1", "a much longer value"), 0);
    ck_assert_uint_eq(strmap_bytes(m), bytes - 1 + strlen("a much longer value"));
    ck_assert_int_eq(strmap_del(m, "key1"), 0);
    ck_assert_int_eq(strmap_del(m, "key1"), -ENOENT);
    ck_assert_ptr_null(strmap_get(m, "key1"));
    ck_assert_ptr_null(strmap_get(m, "nokey"));
    ck_assert_uint_eq(strmap_count(m), 99999);
    strmap_destroy(m);
}
END_TEST

START_TEST(strmap_hash_keyed)
{
    uint64_t k1[2] = {1, 2}, k2[2] = {3, 4};
    ck_assert(strmap_hash(k1, "abc") != strmap_hash(k2, "abc"));
    ck_assert(strmap_hash(k1, "abc") == strmap_hash(k1, "abc"));
    ck_assert(strmap_hash(k1, "") != strmap_hash(k1, "a"));
    /* SipHash-1-3, key 00..0f, empty message (reference vector) */
    uint64_t k[2] = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
    ck_assert_uint_eq(strmap_hash(k, ""), 0xabac0158050fc4dcULL);
}
END_TEST

START_TEST(escape)
{
    char out[64];
    srv_escape(out, sizeof(out), "a\nb\x1b[31m\x7f\xc3\xa9\\x", 13);
    ck_assert_str_eq(out, "a\\x0ab\\x1b[31m\\x7f\\xc3\\xa9\\x");
    srv_escape(out, 10, "abcdefghijklmnop", 16);
    ck_assert_str_eq(out, "abcdef..."); /* 9 bytes and the NUL */
    srv_escape(out, 8, "\x01\x02\x03", 3);
    ck_assert_str_eq(out, "\\x01...");
}
END_TEST

static bool has_ctl(const char *s)
{
    for (; s && *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\n') || (unsigned char)*s >= 0x7f)
            return true;
    return false;
}

START_TEST(abort_text_escaped)
{
    reset();
    struct ft *ft = job(2, 2);
    init2(ft, 0);
    init2(ft, 1);
    ck_assert_int_eq(ft_send2(ft, 1, "cmd=kvs-fence;"), 0);
    ck_assert_int_eq(ft_send2(ft, 0, "cmd=abort;message=x\nFAKE\x1b[2J\x07;"), 0);
    ft_run(ft, FT_FIFO);
    struct ft_node *n0 = ft_node_of(ft, 0), *n1 = ft_node_of(ft, 1);
    ck_assert_int_eq(n0->naborts, 1);
    ck_assert_msg(!has_ctl(n0->abort_msg), "%s", n0->abort_msg);
    ck_assert_ptr_nonnull(strstr(n0->abort_msg, "x\\x0aFAKE\\x1b[2J\\x07"));
    /* the other node got the text over the tree, and the waiting rank too */
    ck_assert_int_eq(n1->naborts, 1);
    ck_assert_msg(!has_ctl(n1->abort_msg), "%s", n1->abort_msg);
    char *got = ft_take(ft, 1);
    ck_assert_msg(!has_ctl(got + 6), "%s", got);
    free(got);
    ck_assert_msg(!has_ctl(ft->log), "%s", ft->log);
    ft_destroy(ft);
}
END_TEST

START_TEST(warnings_rate_limited)
{
    reset();
    g_lim.warn_burst = 3;
    struct ft *ft = job(1, 1);
    init2(ft, 0);
    for (int i = 0; i < 1000; i++) {
        free(req2(ft, 0, "cmd=no-such\x1b;"));
        free(req2(ft, 0, "cmd=kvs-put;value=1;"));
    }
    ck_assert_int_eq(count_lines(ft->log, "unknown PMI-2 command"), 3);
    ck_assert_int_eq(count_lines(ft->log, "kvs-put refused"), 3);
    ck_assert_int_eq(count_lines(ft->log, "are suppressed"), 2);
    ck_assert_msg(!has_ctl(ft->log), "%s", ft->log);
    struct psrv_usage u;
    psrv_usage(ft_node_of(ft, 0)->srv, &u);
    ck_assert_int_eq(u.suppressed, 2 * 997);
    ft_gone(ft, 0);
    ck_assert_int_eq(count_lines(ft->log, "997 more unknown command warnings"), 1);
    ck_assert_int_eq(count_lines(ft->log, "997 more refused put warnings"), 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(trace_capped)
{
    reset();
    g_lim.trace_lines = 10;
    g_level = PSRV_LOG_TRACE;
    struct ft *ft = job(1, 1);
    init2(ft, 0); /* 4 trace lines */
    for (int i = 0; i < 100; i++)
        free(req2(ft, 0, "cmd=kvs-get;key=x;"));
    ck_assert_int_eq(count_lines(ft->log, " -> "), 5);
    ck_assert_int_eq(count_lines(ft->log, " <- "), 5);
    ck_assert_int_eq(count_lines(ft->log, "trace stopped after 10 lines"), 1);
    struct psrv_usage u;
    psrv_usage(ft_node_of(ft, 0)->srv, &u);
    ck_assert_int_eq(u.trace_lines, 10);
    ft_destroy(ft);
}
END_TEST

START_TEST(unlimited)
{
    reset();
    g_lim.kvs_keys_per_rank = -1;
    struct ft *ft = job(1, 1);
    init2(ft, 0);
    char body[128];
    for (int i = 0; i < 20000; i++) {
        snprintf(body, sizeof(body), "cmd=kvs-put;key=k%d;value=1;", i);
        expect_rc(ft, 0, body, "0");
    }
    ck_assert_int_eq(ft_node_of(ft, 0)->naborts, 0);
    ft_destroy(ft);
}
END_TEST

/* What a PMIx task can pile up through its server: contributions, direct modex. */
START_TEST(host_queues_capped)
{
    reset();
    struct ft *ft = job(2, 2);
    struct psrv *s0 = ft_node_of(ft, 0)->srv;
    int ok = 0, again = 0;
    for (int i = 0; i < 300; i++) {
        int rc = psrv_coll_contribute(s0, (uint64_t)i + 1, "b", 1);
        ok += rc == 0;
        again += rc == -EAGAIN;
    }
    ck_assert_int_eq(ok, 256);
    ck_assert_int_eq(again, 44);
    ok = again = 0;
    for (int i = 0; i < 5000; i++) {
        int rc = psrv_dmdx_request(s0, (uint64_t)i + 1, 1, NULL, 0);
        ok += rc == 0;
        again += rc == -EAGAIN;
    }
    ck_assert_int_eq(ok, 4096);
    ck_assert_int_eq(again, 5000 - 4096);
    ft_destroy(ft);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quotas");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, kvs_rank_keys);
    tcase_add_test(tc, kvs_rank_bytes_reput);
    tcase_add_test(tc, kvs_job_cap_at_commit);
    tcase_add_test(tc, kvs_job_keys_at_put);
    tcase_add_test(tc, nodeattr_quota);
    tcase_add_test(tc, names_quota);
    tcase_add_test(tc, names_quota_remote);
    tcase_add_test(tc, strmap_100k);
    tcase_add_test(tc, strmap_hash_keyed);
    tcase_add_test(tc, escape);
    tcase_add_test(tc, abort_text_escaped);
    tcase_add_test(tc, warnings_rate_limited);
    tcase_add_test(tc, trace_capped);
    tcase_add_test(tc, unlimited);
    tcase_add_test(tc, host_queues_capped);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
