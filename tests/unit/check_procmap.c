/* check_procmap.c - PMI_process_mapping (attrs.c, psrv_process_mapping):
 * exact strings for block, uneven block, cyclic, plane and irregular
 * layouts (the forms Slurm's srun writes), folding with [..]xN past 1024
 * characters, -EMSGSIZE when even that does not fit, and a parser of
 * MPICH's grammar (written here from doc/clients.md, "PMI_process_mapping",
 * which names MPICH's source) that must give back the exact rank->node
 * table for every output, including random ones.
 * Also: the attribute as served through psrv (override, too long), and the
 * client's own parser (common/pmap.c, compiled in below) on hostile values that
 * must fail or finish fast (no work quadratic in size x blocks).
 */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "pmiserv.h"

/* The client's parser, compiled into this test (its statics renamed where they
 * would clash with the reference parser below): loom_pmap_parse(). */
#define ws pmap_ws
#define block pmap_blk
#include "pmap.c"
#undef ws
#undef block

/* ---- a parser of MPICH's grammar ----------------------------------------
 * mapping = "(" "vector" "," item *("," item) ")"
 * item    = block / "[" block *("," block) "]x" num
 * block   = num / "(" num "," num "," num ")"
 * Blocks assign ranks in order; when the list is exhausted with ranks left,
 * assignment restarts at the first block whose start node is 0. */

struct pblk {
    long x, y, z;
};

struct parser {
    const char *s;
    struct pblk b[20000];
    int n;
};

static void ws(struct parser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static bool num(struct parser *p, long *v)
{
    char *end;
    ws(p);
    *v = strtol(p->s, &end, 0);
    if (end == p->s)
        return false;
    p->s = end;
    return true;
}

static bool lit(struct parser *p, char c)
{
    ws(p);
    if (*p->s != c)
        return false;
    p->s++;
    return true;
}

static bool block(struct parser *p, struct pblk *b)
{
    if (lit(p, '('))
        return num(p, &b->x) && lit(p, ',') && num(p, &b->y) && lit(p, ',') &&
               num(p, &b->z) && lit(p, ')');
    b->y = b->z = 1;
    return num(p, &b->x);
}

/* Returns 0 and fills rank_node[size], or -1. */
static int parse_mapping(const char *str, int size, int *rank_node)
{
    static struct parser p;
    p.s = str;
    p.n = 0;
    if (!lit(&p, '(') || (ws(&p), strncmp(p.s, "vector", 6) != 0))
        return -1;
    p.s += 6;
    while (lit(&p, ',')) {
        if (lit(&p, '[')) {
            int first = p.n;
            do {
                if (p.n >= 20000 || !block(&p, &p.b[p.n++]))
                    return -1;
            } while (lit(&p, ','));
            long rep;
            if (!lit(&p, ']') || !lit(&p, 'x') || !num(&p, &rep) || rep < 1)
                return -1;
            int len = p.n - first;
            for (long r = 1; r < rep; r++)
                for (int j = 0; j < len; j++) {
                    if (p.n >= 20000)
                        return -1;
                    p.b[p.n++] = p.b[first + j];
                }
        } else if (p.n >= 20000 || !block(&p, &p.b[p.n++])) {
            return -1;
        }
    }
    if (!lit(&p, ')') || (ws(&p), *p.s) || p.n == 0)
        return -1;
    int r = 0, i = 0, restart = -1;
    for (int j = 0; j < p.n; j++)
        if (p.b[j].x == 0) {
            restart = j;
            break;
        }
    while (r < size) {
        if (i == p.n) {
            if (restart < 0)
                return -1;
            i = restart;
        }
        struct pblk *b = &p.b[i++];
        if (b->y < 1 || b->z < 1)
            return -1;
        for (long node = b->x; node < b->x + b->y && r < size; node++)
            for (long k = 0; k < b->z && r < size; k++)
                rank_node[r++] = (int)node;
    }
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static void check_layout(const int *rn, int size, const char *want)
{
    char out[1100];
    int n = psrv_process_mapping(rn, size, out, sizeof(out));
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(n, (int)strlen(out));
    if (want)
        ck_assert_str_eq(out, want);
    int *back = malloc(size * sizeof(int));
    ck_assert_msg(parse_mapping(out, size, back) == 0, "unparseable: %s", out);
    for (int r = 0; r < size; r++)
        ck_assert_msg(back[r] == rn[r], "rank %d: node %d, parsed %d from %s", r, rn[r],
                      back[r], out);
    free(back);
}

START_TEST(block_even)
{
    const int rn[] = {0, 0, 0, 0, 1, 1, 1, 1};
    check_layout(rn, 8, "(vector,(0,2,4))");
}
END_TEST

START_TEST(block_uneven)
{
    const int rn[] = {0, 0, 0, 1, 1, 1, 2, 2};
    check_layout(rn, 8, "(vector,(0,2,3),(2,1,2))");
}
END_TEST

START_TEST(cyclic)
{
    int rn[8];
    for (int r = 0; r < 8; r++)
        rn[r] = r % 4;
    check_layout(rn, 8, "(vector,(0,4,1),(0,4,1))");
}
END_TEST

START_TEST(plane)
{
    int rn[16];
    for (int r = 0; r < 16; r++)
        rn[r] = (r / 2) % 4; /* plane=2 over 4 nodes */
    check_layout(rn, 16, "(vector,(0,4,2),(0,4,2))");
}
END_TEST

START_TEST(irregular)
{
    const int rn[] = {0, 0, 1, 0, 2, 2, 1};
    check_layout(rn, 7, "(vector,(0,1,2),(1,1,1),(0,1,1),(2,1,2),(1,1,1))");
    const int start_late[] = {3, 3, 2, 2, 1, 1};
    check_layout(start_late, 6, "(vector,(3,1,2),(2,1,2),(1,1,2))");
    const int one[] = {0};
    check_layout(one, 1, "(vector,(0,1,1))");
}
END_TEST

START_TEST(folded_when_long)
{
    /* nodes 0,0,1 repeated: 667 explicit blocks would need ~5000 chars */
    int size = 1000;
    int *rn = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++)
        rn[r] = (r % 3) == 2 ? 1 : 0;
    check_layout(rn, size, "(vector,[(0,1,2),(1,1,1)]x333,(0,1,1))");
    /* cyclic over many nodes stays explicit while it fits... */
    for (int r = 0; r < 512; r++)
        rn[r] = r % 128;
    check_layout(rn, 512, "(vector,(0,128,1),(0,128,1),(0,128,1),(0,128,1))");
    /* ...and is folded beyond */
    rn = realloc(rn, 2000 * sizeof(int));
    for (int r = 0; r < 2000; r++)
        rn[r] = r % 10;
    check_layout(rn, 2000, "(vector,[(0,10,1)]x200)");
    free(rn);
}
END_TEST

START_TEST(too_long)
{
    /* a pseudo-random layout over 1000 nodes cannot be written in 1024 B */
    int size = 2000;
    int *rn = malloc(size * sizeof(int));
    unsigned seed = 12345;
    for (int r = 0; r < size; r++)
        rn[r] = (int)(rand_r(&seed) % 1000);
    char out[1100];
    ck_assert_int_eq(psrv_process_mapping(rn, size, out, sizeof(out)), -EMSGSIZE);
    ck_assert_str_eq(out, "");
    /* a small buffer is honoured too */
    const int blk[] = {0, 0, 1, 1};
    ck_assert_int_eq(psrv_process_mapping(blk, 4, out, 10), -EMSGSIZE);
    ck_assert_int_eq(psrv_process_mapping(blk, 4, out, 17), 16);
    ck_assert_str_eq(out, "(vector,(0,2,2))");
    ck_assert_int_eq(psrv_process_mapping(blk, 4, out, 16), -EMSGSIZE);
    ck_assert_int_eq(psrv_process_mapping(NULL, 4, out, 16), -EINVAL);
    free(rn);
}
END_TEST

START_TEST(random_round_trip)
{
    unsigned seed = 777;
    int rn[64];
    for (int iter = 0; iter < 2000; iter++) {
        int size = 1 + (int)(rand_r(&seed) % 64);
        int nodes = 1 + (int)(rand_r(&seed) % 6);
        int mode = (int)(rand_r(&seed) % 3);
        for (int r = 0; r < size; r++) {
            if (mode == 0)
                rn[r] = (int)(rand_r(&seed) % nodes); /* arbitrary */
            else if (mode == 1)
                rn[r] = (int)((long)r * nodes / size); /* block */
            else
                rn[r] = r % nodes; /* cyclic */
        }
        check_layout(rn, size, NULL);
    }
}
END_TEST

START_TEST(parser_self_test)
{
    /* the test's parser knows the legacy wrap-around and bare numbers */
    int rn[8];
    ck_assert_int_eq(parse_mapping("(vector,(0,4,1))", 8, rn), 0);
    for (int r = 0; r < 8; r++)
        ck_assert_int_eq(rn[r], r % 4);
    ck_assert_int_eq(parse_mapping("( vector, 1, 0 ,[ (2,1,1) ]x2)", 4, rn), 0);
    ck_assert_int_eq(rn[0], 1);
    ck_assert_int_eq(rn[1], 0);
    ck_assert_int_eq(rn[2], 2);
    ck_assert_int_eq(rn[3], 2);
    ck_assert_int_eq(parse_mapping("(vector,(1,1,1))", 2, rn), -1); /* no restart */
    ck_assert_int_eq(parse_mapping("(vector)", 1, rn), -1);
    ck_assert_int_eq(parse_mapping("(vector,(0,1,1)", 1, rn), -1);
}
END_TEST

/* ---- the client's parser (loom_pmap_parse) on hostile values --------------- */

/* Fuzzer reproducer: 9500 empty blocks then one rank, size 4095.  Each rank past
 * the first needed a wrap over all 9501 blocks (~39M steps, seconds); empty blocks
 * are dropped at parse time now.  Check's timeout (a few seconds) catches a return
 * of the quadratic walk: no timed assertion here. */
START_TEST(client_empty_blocks_fast)
{
    int size = 4095;
    int *rn = malloc(size * sizeof(int));
    ck_assert_int_eq(loom_pmap_parse("(vector,[(0,0,0)]x9500,0)", size, rn), 0);
    for (int r = 0; r < size; r++)
        ck_assert_int_eq(rn[r], 0);
    /* the same at the block cap, mixed empty kinds and a late restart block */
    size = 100000;
    rn = realloc(rn, size * sizeof(int));
    ck_assert_int_eq(
        loom_pmap_parse("(vector,[(1,0,5),(0,3,0)]x400000,(2,1,1))", size, rn), 0);
    for (int r = 0; r < size; r++)
        ck_assert_int_eq(rn[r], 2);
    /* the restart point is the first block naming node 0, even an empty one */
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,0,0),(1,1,1),(0,1,1))", 3, rn), 0);
    ck_assert_int_eq(rn[0], 1);
    ck_assert_int_eq(rn[1], 0);
    ck_assert_int_eq(rn[2], 1);
    /* nothing placeable after the restart point, or nothing at all: -EINVAL */
    ck_assert_int_eq(loom_pmap_parse("(vector,(1,1,1),(0,0,4))", 2, rn), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(vector,[(0,0,0)]x9500)", 2, rn), -EINVAL);
    /* more blocks than the cap (1M), empty or not: rejected, quickly */
    ck_assert_int_eq(loom_pmap_parse("(vector,[(0,0,0)]x2000000,0)", 1, rn), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(vector,[(0,0,0)]x2147483647,0)", 1, rn), -EINVAL);
    /* a range past INT_MAX is an error when the walk reaches it, empty or not */
    ck_assert_int_eq(loom_pmap_parse("(vector,(2147483647,2,0),0)", 1, rn), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(vector,0,(2147483647,2,0))", 1, rn), 0);
    free(rn);
}
END_TEST

START_TEST(client_valid_mappings)
{
    /* wrap-around, bare numbers, folding, x0, late start: as before */
    int rn[16];
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,4,1))", 8, rn), 0);
    for (int r = 0; r < 8; r++)
        ck_assert_int_eq(rn[r], r % 4);
    ck_assert_int_eq(loom_pmap_parse("( vector, 1, 0 ,[ (2,1,1) ]x2)", 4, rn), 0);
    ck_assert_int_eq(rn[0], 1);
    ck_assert_int_eq(rn[1], 0);
    ck_assert_int_eq(rn[2], 2);
    ck_assert_int_eq(rn[3], 2);
    ck_assert_int_eq(
        loom_pmap_parse("(vector,[(0,1,2),(1,1,1)]x2,[(5,1,1)]x0,(0,1,1))", 7, rn), 0);
    const int want[] = {0, 0, 1, 0, 0, 1, 0};
    for (int r = 0; r < 7; r++)
        ck_assert_int_eq(rn[r], want[r]);
    ck_assert_int_eq(loom_pmap_parse("(vector,(3,1,2),(1,2,1),(0,1,1))", 6, rn), 0);
    const int late[] = {3, 3, 1, 2, 0, 0};
    for (int r = 0; r < 6; r++)
        ck_assert_int_eq(rn[r], late[r]);
    ck_assert_int_eq(loom_pmap_parse("(vector,(1,1,1))", 2, rn), -EINVAL); /* no restart */
    ck_assert_int_eq(loom_pmap_parse("(vector)", 1, rn), -EINVAL);
}
END_TEST

/* ---- served through psrv ------------------------------------------------- */

static void tweak_override(struct psrv_config *cfg)
{
    cfg->process_mapping = "(vector,(0,1,3))";
}

static char *getjobattr(struct ft *ft, int r, const char *key)
{
    char body[128];
    ft_send(ft, r, "cmd=init pmi_version=2 pmi_subversion=0\n");
    ft_send2(ft, r, "cmd=fullinit;");
    free(ft_take(ft, r));
    snprintf(body, sizeof(body), "cmd=info-getjobattr;key=%s;", key);
    ft_send2(ft, r, body);
    return ft_take(ft, r);
}

START_TEST(served_override)
{
    const int rn[] = {0, 0, 0};
    struct ft *ft = ft_create_cfg(1, 2, rn, 3, 1000, tweak_override);
    char *got = getjobattr(ft, 0, "PMI_process_mapping");
    ck_assert_str_eq(got, "68    cmd=info-getjobattr-response;rc=0;found=TRUE;"
                          "value=(vector,(0,1,3));");
    free(got);
    ft_destroy(ft);
}
END_TEST

static char reply[256];

static int rec_send(void *arg, int client, const char *buf, size_t len)
{
    snprintf(reply, sizeof(reply), "%.*s", (int)len, buf);
    return 0;
}

static int no_tree(void *arg, int to, const void *buf, size_t len)
{
    return -EPIPE;
}

START_TEST(served_too_long_is_absent)
{
    int size = 2000;
    int *rn = malloc(size * sizeof(int));
    unsigned seed = 99;
    for (int r = 0; r < size; r++)
        rn[r] = r < 2 ? 0 : 1 + (int)(rand_r(&seed) % 999);
    const int local[] = {0, 1};
    struct psrv_config cfg = {.jobid = "1.0",
                              .size = size,
                              .nnodes = 1000,
                              .nodeid = 0,
                              .local_count = 2,
                              .local_ranks = local,
                              .rank_node = rn,
                              .tree_width = 2,
                              .fence_timeout_ms = 1000};
    struct psrv_ops ops = {.client_send = rec_send, .tree_send = no_tree};
    struct psrv *srv = psrv_create(&cfg, &ops, NULL);
    ck_assert_ptr_nonnull(srv);
    const char *init2 = "cmd=init pmi_version=2 pmi_subversion=0\n";
    ck_assert_int_eq(psrv_client_input(srv, 0, init2, strlen(init2)), 0);
    const char *q = "44    cmd=info-getjobattr;key=PMI_process_mapping;";
    ck_assert_int_eq(psrv_client_input(srv, 0, q, strlen(q)), 0);
    ck_assert_str_eq(reply, "46    cmd=info-getjobattr-response;rc=0;found=FALSE;");
    const char *init1 = "cmd=init pmi_version=1 pmi_subversion=1\n"
                        "cmd=get kvsname=1.0 key=PMI_process_mapping\n";
    ck_assert_int_eq(psrv_client_input(srv, 1, init1, strlen(init1)), 0);
    ck_assert_str_eq(reply, "cmd=get_result rc=1 msg=key_not_found\n");
    psrv_destroy(srv);
    free(rn);
}
END_TEST

START_TEST(create_rejects_bad_config)
{
    const int rn[] = {0, 1};
    const int local[] = {0};
    struct psrv_config cfg = {.jobid = "1.0",
                              .size = 2,
                              .nnodes = 2,
                              .nodeid = 0,
                              .local_count = 1,
                              .local_ranks = local,
                              .rank_node = rn,
                              .tree_width = 2};
    struct psrv_ops ops = {.client_send = rec_send, .tree_send = no_tree};
    struct psrv *srv = psrv_create(&cfg, &ops, NULL);
    ck_assert_ptr_nonnull(srv);
    psrv_destroy(srv);
    struct psrv_config bad = cfg;
    bad.nodeid = 2;
    ck_assert_ptr_null(psrv_create(&bad, &ops, NULL));
    ck_assert_int_eq(errno, EINVAL);
    bad = cfg;
    bad.local_count = 0;
    ck_assert_ptr_null(psrv_create(&bad, &ops, NULL));
    bad = cfg;
    bad.tree_width = 0;
    ck_assert_ptr_null(psrv_create(&bad, &ops, NULL));
    const int badrn[] = {0, 5};
    bad = cfg;
    bad.rank_node = badrn;
    ck_assert_ptr_null(psrv_create(&bad, &ops, NULL));
    struct psrv_ops noops = {.client_send = rec_send};
    ck_assert_ptr_null(psrv_create(&cfg, &noops, NULL)); /* 2 nodes need tree_send */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("procmap");
    TCase *tc = tcase_create("mapping");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, block_even);
    tcase_add_test(tc, block_uneven);
    tcase_add_test(tc, cyclic);
    tcase_add_test(tc, plane);
    tcase_add_test(tc, irregular);
    tcase_add_test(tc, folded_when_long);
    tcase_add_test(tc, too_long);
    tcase_add_test(tc, random_round_trip);
    tcase_add_test(tc, parser_self_test);
    tcase_add_test(tc, served_override);
    tcase_add_test(tc, served_too_long_is_absent);
    tcase_add_test(tc, create_rejects_bad_config);
    suite_add_tcase(s, tc);
    TCase *cl = tcase_create("client_parser");
    tcase_set_timeout(cl, 5); /* the hostile mappings must finish well within */
    tcase_add_test(cl, client_empty_blocks_fast);
    tcase_add_test(cl, client_valid_mappings);
    suite_add_tcase(s, cl);
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
