/* check_fence.c - the fence across nodes, over an in-memory tree of psrv
 * instances (fake_tree.c): 7 nodes with tree width 2 and 3, messages
 * delivered in order, reordered and duplicated; lost messages (timeout,
 * abort naming the missing node); dead ranks; broken links; bad messages;
 * a held next-epoch message; name service and PMIX_Ring across nodes.
 * After every fence the values are checked on every node.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "msg.h"
#include "pack.h"

#define NNODES 7
#define PPN 2
#define NRANKS (NNODES * PPN)

static int block_layout[NRANKS];

static struct ft *job(int width, int timeout)
{
    for (int r = 0; r < NRANKS; r++)
        block_layout[r] = r / PPN;
    return ft_create(NNODES, width, block_layout, NRANKS, timeout);
}

/* Even ranks speak PMI-1, odd ranks PMI-2: the fence is one operation. */
static bool is_v2(int r)
{
    return r % 2 == 1;
}

static void init_all(struct ft *ft)
{
    for (int r = 0; r < ft->size; r++) {
        if (is_v2(r)) {
            ft_send(ft, r, "cmd=init pmi_version=2 pmi_subversion=0\n");
            ft_send2(ft, r, "cmd=fullinit;");
        } else {
            ft_send(ft, r, "cmd=init pmi_version=1 pmi_subversion=1\n");
        }
        free(ft_take(ft, r));
    }
}

static void put(struct ft *ft, int r, const char *key, const char *val)
{
    char buf[512];
    if (is_v2(r)) {
        snprintf(buf, sizeof(buf), "cmd=kvs-put;key=%s;value=%s;", key, val);
        ft_send2(ft, r, buf);
    } else {
        snprintf(buf, sizeof(buf), "cmd=put kvsname=42.0 key=%s value=%s\n", key, val);
        ft_send(ft, r, buf);
    }
    char *got = ft_take(ft, r);
    ck_assert_msg(strstr(got, "rc=0") != NULL, "put by %d: %s", r, got);
    free(got);
}

static void fence(struct ft *ft, int r)
{
    if (is_v2(r))
        ft_send2(ft, r, "cmd=kvs-fence;");
    else
        ft_send(ft, r, "cmd=barrier_in\n");
}

/* The fence reply of rank r: 0 ok, 1 failed, -1 none yet. */
static int fence_result(struct ft *ft, int r, char *why, size_t whylen)
{
    char *got = ft_take(ft, r);
    int res = -1;
    if (*got) {
        if (strstr(got,
                   is_v2(r) ? "cmd=kvs-fence-response;rc=0;" : "cmd=barrier_out rc=0\n"))
            res = 0;
        else if (strstr(got, is_v2(r) ? "cmd=kvs-fence-response;rc=-1;"
                                      : "cmd=barrier_out rc=-1"))
            res = 1;
        else
            ck_abort_msg("rank %d: unexpected fence reply %s", r, got);
        if (why)
            snprintf(why, whylen, "%s", got);
    }
    free(got);
    return res;
}

/* The value of key seen by rank r, or NULL (caller frees). */
static char *get(struct ft *ft, int r, const char *key)
{
    char buf[512];
    char *val = NULL;
    if (is_v2(r)) {
        snprintf(buf, sizeof(buf), "cmd=kvs-get;jobid=;srcid=-1;key=%s;", key);
        ft_send2(ft, r, buf);
    } else {
        snprintf(buf, sizeof(buf), "cmd=get kvsname=42.0 key=%s\n", key);
        ft_send(ft, r, buf);
    }
    char *got = ft_take(ft, r);
    char *v = strstr(got, "value=");
    if (v) {
        v += 6;
        size_t n = strcspn(v, is_v2(r) ? ";" : "\n");
        val = strndup(v, n);
    }
    free(got);
    return val;
}

/* Run epochs of put + fence with the given delivery order, entering the
 * fence in a shuffled order with some deliveries in between, and check
 * every rank sees every key after each fence. */
static void run_epochs(struct ft *ft, enum ft_order order, unsigned seed, int epochs)
{
    int ord[NRANKS];
    unsigned rs = seed;

    ft->seed = seed;
    init_all(ft);
    for (int e = 0; e < epochs; e++) {
        char key[64], val[64];
        for (int r = 0; r < ft->size; r++) {
            snprintf(key, sizeof(key), "k%d-%d", r, e);
            snprintf(val, sizeof(val), "v%d-%d", r, e);
            put(ft, r, key, val);
            ord[r] = r;
        }
        /* everybody also overwrites one shared key; some value wins */
        for (int i = ft->size - 1; i > 0; i--) {
            int j = (int)(rand_r(&rs) % (unsigned)(i + 1));
            int t = ord[i];
            ord[i] = ord[j];
            ord[j] = t;
        }
        for (int i = 0; i < ft->size; i++) {
            fence(ft, ord[i]);
            if (order != FT_FIFO)
                ft_run_some(ft, order, (int)(rand_r(&rs) % 3));
        }
        ft_run(ft, order);
        for (int r = 0; r < ft->size; r++) {
            char why[256] = "";
            ck_assert_msg(fence_result(ft, r, why, sizeof(why)) == 0,
                          "epoch %d rank %d: %s", e, r, why);
        }
        for (int k = 0; k < ft->nnodes; k++)
            ck_assert_int_eq(psrv_fence_epoch(ft->nodes[k].srv), e + 1);
        for (int r = 0; r < ft->size; r++) {
            for (int q = 0; q < ft->size; q++) {
                snprintf(key, sizeof(key), "k%d-%d", q, e);
                snprintf(val, sizeof(val), "v%d-%d", q, e);
                char *got = get(ft, r, key);
                ck_assert_msg(got && strcmp(got, val) == 0, "epoch %d: rank %d got %s=%s",
                              e, r, key, got ? got : "(not found)");
                free(got);
            }
            /* next epoch's keys are not visible yet */
            snprintf(key, sizeof(key), "k%d-%d", r, e + 1);
            char *none = get(ft, r, key);
            ck_assert_ptr_null(none);
        }
    }
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
}

static const int widths[] = {2, 3};

START_TEST(fence_fifo)
{
    struct ft *ft = job(widths[_i], 5000);
    run_epochs(ft, FT_FIFO, 1, 3);
    ft_destroy(ft);
}
END_TEST

START_TEST(fence_reordered)
{
    for (unsigned seed = 1; seed <= 5; seed++) {
        struct ft *ft = job(widths[_i], 5000);
        run_epochs(ft, FT_RANDOM, seed * 7919, 3);
        ft_destroy(ft);
    }
}
END_TEST

START_TEST(fence_duplicated)
{
    for (unsigned seed = 1; seed <= 5; seed++) {
        struct ft *ft = job(widths[_i], 5000);
        run_epochs(ft, FT_RANDOM_DUP, seed * 104729, 3);
        ck_assert_int_gt(ft->duplicated, 0);
        ft_destroy(ft);
    }
}
END_TEST

START_TEST(fence_one_node)
{
    const int rn[] = {0, 0, 0, 0};
    struct ft *ft = ft_create(1, 2, rn, 4, 5000);
    init_all(ft);
    put(ft, 3, "x", "y");
    for (int r = 0; r < 4; r++)
        fence(ft, r);
    ck_assert_int_eq(ft->nq, 0); /* no tree traffic */
    for (int r = 0; r < 4; r++) {
        ck_assert_int_eq(fence_result(ft, r, NULL, 0), 0);
        char *v = get(ft, r, "x");
        ck_assert_str_eq(v, "y");
        free(v);
    }
    ft_destroy(ft);
}
END_TEST

/* Every rank enters; the message type `type` from `from` to `to` is lost.
 * Ranks below `to` must get rc != 0 (the others have completed, for a
 * lost FENCE_DOWN). */
static void lose_one(struct ft *ft, int type, int from, int to)
{
    init_all(ft);
    for (int r = 0; r < ft->size; r++)
        put(ft, r, "k", "v");
    ft->drop_type = type;
    ft->drop_from = from;
    ft->drop_to = to;
    ft->drop_count = 1;
    for (int r = 0; r < ft->size; r++)
        fence(ft, r);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->dropped, 1);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    /* nothing happens before the deadline, nor at it: the nodes that only
     * wait on others grant graces (500 ms each for a 5 s timeout) so the node
     * that knows most reports.  A node missing a child waits 1 + its height
     * graces, one waiting only on its parent the tree's depth + 2: with 7
     * nodes (depth 2) someone has reported at most four graces later. */
    ft_advance(ft, 4999);
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_advance(ft, 1);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    for (int i = 0; i < 4 && ft_first_abort(ft, &total) == -1; i++) {
        ft_advance(ft, 500);
        ft_run(ft, FT_FIFO); /* FENCE_FAIL floods the tree */
    }
    total = 0;
    ft_first_abort(ft, &total);
    ck_assert_int_gt(total, 0);
    /* nobody hangs: every rank got an answer, rc != 0 below `to` */
    for (int r = 0; r < ft->size; r++) {
        char why[512];
        int res = fence_result(ft, r, why, sizeof(why));
        /* (the tests lose a FENCE_DOWN only to a leaf) */
        if (type == MSG_FENCE_UP || r / PPN == to)
            ck_assert_msg(res == 1, "rank %d: %d %s", r, res, why);
        else
            ck_assert_msg(res == 0, "rank %d: %d %s", r, res, why);
    }
}

START_TEST(lost_up_message)
{
    /* width 2: node 5's parent is node 2 */
    struct ft *ft = job(2, 5000);
    lose_one(ft, MSG_FENCE_UP, 5, 2);
    struct ft_node *p = &ft->nodes[2];
    ck_assert_int_eq(p->naborts, 1);
    ck_assert_msg(strstr(p->abort_msg, "timed out") &&
                      strstr(p->abort_msg, "no contribution from child node(s): 5"),
                  "%s", p->abort_msg);
    /* node 5 waited on its parent only: it learns the parent's reason */
    ck_assert_msg(strstr(ft->nodes[5].abort_msg, "no contribution from child node(s): 5"),
                  "%s", ft->nodes[5].abort_msg);
    ft_destroy(ft);
}
END_TEST

START_TEST(lost_down_message)
{
    /* width 3: node 4's parent is node 1 */
    struct ft *ft = job(3, 5000);
    lose_one(ft, MSG_FENCE_DOWN, 1, 4);
    ck_assert_msg(strstr(ft->nodes[4].abort_msg, "timed out") &&
                      strstr(ft->nodes[4].abort_msg, "no answer from parent node 1"),
                  "%s", ft->nodes[4].abort_msg);
    ck_assert_int_eq(ft->nodes[4].abort_rank, -1);
    ft_destroy(ft);
}
END_TEST

START_TEST(timeout_names_missing_ranks)
{
    struct ft *ft = job(2, 5000);
    init_all(ft);
    for (int r = 0; r < ft->size; r++)
        if (r != 9)
            fence(ft, r);
    ft_run(ft, FT_FIFO);
    ft_advance(ft, 5000);
    ft_run(ft, FT_FIFO);
    /* rank 9 lives on node 4, which reports at the deadline; the others are
     * still in their grace and learn node 4's reason, naming the rank */
    for (int n = 0; n < ft->nnodes; n++)
        ck_assert_msg(strstr(ft->nodes[n].abort_msg, "ranks not entered: 9"), "node %d: %s",
                      n, ft->nodes[n].abort_msg);
    ft_destroy(ft);
}
END_TEST

START_TEST(dead_rank_before_fence)
{
    struct ft *ft = job(2, 0); /* no timeout at all: failure must be immediate */
    init_all(ft);
    ft_gone(ft, 11); /* node 5 */
    for (int r = 0; r < ft->size; r++)
        if (r != 11)
            fence(ft, r);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[5].naborts, 1);
    ck_assert_int_eq(ft->nodes[5].abort_rank, 11);
    ck_assert_msg(strstr(ft->nodes[5].abort_msg, "rank 11 exited without finalize"), "%s",
                  ft->nodes[5].abort_msg);
    for (int r = 0; r < ft->size; r++) {
        if (r == 11)
            continue;
        char why[512];
        ck_assert_msg(fence_result(ft, r, why, sizeof(why)) == 1, "rank %d: %s", r, why);
        ck_assert_msg(strstr(why, "rank_11") || strstr(why, "rank 11"), "rank %d: %s", r,
                      why);
    }
    ft_destroy(ft);
}
END_TEST

START_TEST(dead_rank_during_fence)
{
    struct ft *ft = job(3, 0);
    init_all(ft);
    fence(ft, 0);
    fence(ft, 6);
    ft_run(ft, FT_FIFO);
    ft_gone(ft, 7); /* node 3, has not entered */
    ck_assert_int_eq(ft->nodes[3].abort_rank, 7);
    ft_run(ft, FT_FIFO);
    char why[512];
    ck_assert_int_eq(fence_result(ft, 0, why, sizeof(why)), 1);
    ck_assert_int_eq(fence_result(ft, 6, why, sizeof(why)), 1);
    /* a later fence entry fails at once too */
    fence(ft, 2);
    ck_assert_int_eq(fence_result(ft, 2, why, sizeof(why)), 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(finalized_rank_cannot_fence)
{
    const int rn[] = {0, 0};
    struct ft *ft = ft_create(1, 2, rn, 2, 0);
    init_all(ft);
    ck_assert_int_eq(ft_send(ft, 0, "cmd=finalize\n"), 1);
    free(ft_take(ft, 0));
    ft_send2(ft, 1, "cmd=kvs-fence;");
    char why[512];
    ck_assert_int_eq(fence_result(ft, 1, why, sizeof(why)), 1);
    ck_assert_msg(strstr(why, "rank 0 already finalized"), "%s", why);
    ft_destroy(ft);
}
END_TEST

START_TEST(link_gone)
{
    struct ft *ft = job(2, 0);
    init_all(ft);
    fence(ft, 0);
    psrv_tree_gone(ft->nodes[0].srv, 2);
    ck_assert_int_eq(ft->nodes[0].naborts, 1);
    ck_assert_msg(strstr(ft->nodes[0].abort_msg, "link to node 2 broke"), "%s",
                  ft->nodes[0].abort_msg);
    char why[256];
    ck_assert_int_eq(fence_result(ft, 0, why, sizeof(why)), 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(send_failure)
{
    struct ft *ft = job(2, 0);
    init_all(ft);
    ft->send_fail_to = 0;
    fence(ft, 2);
    fence(ft, 3); /* node 1 complete: its send to node 0 fails */
    ck_assert_int_eq(ft->nodes[1].naborts, 0); /* node 1 still waits for 3, 4 */
    for (int r = 6; r < 10; r++)
        fence(ft, r);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[1].naborts, 1);
    ck_assert_msg(strstr(ft->nodes[1].abort_msg, "cannot send to parent node 0"), "%s",
                  ft->nodes[1].abort_msg);
    ft_destroy(ft);
}
END_TEST

START_TEST(bad_tree_message)
{
    struct ft *ft = job(2, 0);
    init_all(ft);
    /* garbage while idle: dropped, no abort */
    ck_assert_int_eq(psrv_tree_input(ft->nodes[0].srv, 1, "junk", 4), -EPROTO);
    ck_assert_int_eq(ft->nodes[0].naborts, 0);
    /* a FENCE_UP with a malformed key-value blob during a fence: fails it */
    fence(ft, 0);
    struct pack p;
    pack_init(&p);
    struct msg m = {.type = MSG_FENCE_UP,
                    .epoch = 0,
                    .from = 1,
                    .origin = 1,
                    .dest = -1,
                    .payload = "\x00\x00\x00\x09k",
                    .len = 5};
    msg_encode(&p, &m);
    ck_assert_int_eq(psrv_tree_input(ft->nodes[0].srv, 1, p.buf, p.len), -EPROTO);
    pack_free(&p);
    ck_assert_int_eq(ft->nodes[0].naborts, 1);
    ck_assert_msg(strstr(ft->nodes[0].abort_msg, "malformed key-value set"), "%s",
                  ft->nodes[0].abort_msg);
    ft_destroy(ft);
}
END_TEST

/* A FENCE_UP for the next epoch (possible when a host broadcasts the
 * parent's FENCE_DOWN out of tree order) is held, not lost. */
START_TEST(next_epoch_held)
{
    const int rn[] = {0, 1, 2}; /* width 1: a chain 0 <- 1 <- 2 */
    struct ft *ft = ft_create(3, 1, rn, 3, 5000);
    init_all(ft);

    struct pack blob, p;
    pack_init(&blob);
    pack_str(&blob, "early");
    pack_str(&blob, "bird");
    pack_init(&p);
    struct msg m = {.type = MSG_FENCE_UP,
                    .epoch = 1,
                    .from = 2,
                    .origin = 2,
                    .dest = -1,
                    .payload = blob.buf,
                    .len = blob.len};
    msg_encode(&p, &m);
    ck_assert_int_eq(psrv_tree_input(ft->nodes[1].srv, 2, p.buf, p.len), 0);
    /* and a duplicate of it */
    ck_assert_int_eq(psrv_tree_input(ft->nodes[1].srv, 2, p.buf, p.len), 0);
    pack_free(&p);
    pack_free(&blob);

    for (int e = 0; e < 2; e++) {
        for (int r = 0; r < 3; r++)
            fence(ft, r);
        ft_run(ft, FT_FIFO);
        for (int r = 0; r < 3; r++)
            ck_assert_int_eq(fence_result(ft, r, NULL, 0), 0);
    }
    /* node 2's real FENCE_UP for epoch 1 was a duplicate of the held one */
    for (int r = 0; r < 3; r++) {
        char *v = get(ft, r, "early");
        ck_assert_msg(v && strcmp(v, "bird") == 0, "rank %d: %s", r, v ? v : "(none)");
        free(v);
    }
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

START_TEST(stale_and_duplicate_down)
{
    const int rn[] = {0, 1};
    struct ft *ft = ft_create(2, 2, rn, 2, 5000);
    init_all(ft);
    put(ft, 0, "a", "1");
    fence(ft, 0);
    fence(ft, 1);
    /* capture node 0's FENCE_DOWN to node 1 before delivering it */
    ft_run_some(ft, FT_FIFO, 1); /* UP 1 -> 0; root sends DOWN */
    ck_assert_int_eq(ft->nq, 1);
    struct ft_msg down = ft->q[0];
    void *copy = malloc(down.len);
    memcpy(copy, down.buf, down.len);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(fence_result(ft, 1, NULL, 0), 0);
    /* the stale copy arrives late: dropped */
    ck_assert_int_eq(psrv_tree_input(ft->nodes[1].srv, 0, copy, down.len), 0);
    free(copy);
    ck_assert_int_eq(psrv_fence_epoch(ft->nodes[1].srv), 1);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

START_TEST(abort_reaches_every_node)
{
    struct ft *ft = job(2, 0);
    init_all(ft);
    for (int r = 0; r < ft->size; r++)
        if (r != 7)
            fence(ft, r);
    ft_run(ft, FT_FIFO);
    /* rank 7 (node 3, PMI-2) aborts instead of entering the fence */
    ft_send2(ft, 7, "cmd=abort;isworld=TRUE;msg=giving up;");
    ck_assert_int_eq(ft->nodes[3].abort_rank, 7);
    ft_run(ft, FT_RANDOM);
    int total;
    ft_first_abort(ft, &total);
    ck_assert_int_eq(total, NNODES); /* each node's host hears of it once */
    for (int k = 0; k < NNODES; k++)
        ck_assert_msg(strstr(ft->nodes[k].abort_msg, "rank 7 called PMI abort") != NULL,
                      "node %d: %s", k, ft->nodes[k].abort_msg);
    for (int r = 0; r < ft->size; r++) {
        if (r == 7)
            continue;
        char why[512];
        ck_assert_msg(fence_result(ft, r, why, sizeof(why)) == 1, "rank %d: %s", r, why);
    }
    ft_destroy(ft);
}
END_TEST

/* Mutated copies of real tree messages never crash a node; a node that
 * got a bad one during a fence fails it and aborts (once). */
START_TEST(mutated_tree_messages)
{
    unsigned seed = 31337;
    for (int iter = 0; iter < 200; iter++) {
        struct ft *ft = job(2, 1000);
        init_all(ft);
        for (int r = 0; r < ft->size; r++)
            put(ft, r, "k", "v");
        for (int r = 0; r < ft->size; r++)
            fence(ft, r);
        while (ft->nq > 0) {
            struct ft_msg m = ft->q[0];
            memmove(&ft->q[0], &ft->q[1], (ft->nq - 1) * sizeof(*ft->q));
            ft->nq--;
            if (rand_r(&seed) % 4 == 0 && m.len > 0) {
                unsigned char *b = m.buf;
                int nmut = 1 + (int)(rand_r(&seed) % 3);
                for (int k = 0; k < nmut; k++)
                    b[rand_r(&seed) % m.len] ^=
                        (unsigned char)(1u << (rand_r(&seed) % 8));
                if (rand_r(&seed) % 2)
                    m.len = rand_r(&seed) % m.len;
            }
            int from = rand_r(&seed) % 8 == 0 ? (int)(rand_r(&seed) % NNODES) : m.from;
            int rc = psrv_tree_input(ft->nodes[m.to].srv, from, m.buf, m.len);
            ck_assert(rc == 0 || rc == -EPROTO || rc == -EIO || rc == -EINVAL ||
                      rc == -ENOMEM);
            free(m.buf);
        }
        ft_advance(ft, 1000);
        ft_run(ft, FT_FIFO);
        for (int k = 0; k < NNODES; k++)
            ck_assert_int_le(ft->nodes[k].naborts, 1);
        /* every rank got an answer, one way or the other */
        for (int r = 0; r < ft->size; r++)
            ck_assert_int_ge(fence_result(ft, r, NULL, 0), 0);
        ft_destroy(ft);
    }
}
END_TEST

/* ---- name service and ring across nodes -------------------------------- */

START_TEST(name_service_routed)
{
    struct ft *ft = job(2, 5000);
    init_all(ft);
    /* rank 13 (node 6, PMI-2) publishes; rank 8 (node 4, PMI-1) looks up */
    char *got;
    ft_send2(ft, 13, "cmd=name-publish;name=svc;port=p13;infokeycount=0;");
    got = ft_take(ft, 13);
    ck_assert_str_eq(got, ""); /* routed: not answered yet */
    free(got);
    ft_run(ft, FT_RANDOM);
    got = ft_take(ft, 13);
    ck_assert_str_eq(got, "31    cmd=name-publish-response;rc=0;");
    free(got);
    ft_send(ft, 8, "cmd=lookup_name service=svc\n");
    ft_run(ft, FT_FIFO);
    got = ft_take(ft, 8);
    ck_assert_str_eq(got, "cmd=lookup_result rc=0 info=ok port=p13\n");
    free(got);
    /* on node 0 itself: answered at once */
    ft_send(ft, 0, "cmd=lookup_name service=svc\n");
    got = ft_take(ft, 0);
    ck_assert_str_eq(got, "cmd=lookup_result rc=0 info=ok port=p13\n");
    free(got);
    /* a lost request ends with an error at the deadline */
    ft->drop_count = 1;
    ft->drop_type = MSG_NS_REQ;
    ft_send(ft, 10, "cmd=lookup_name service=svc\n");
    ft_run(ft, FT_FIFO);
    got = ft_take(ft, 10);
    ck_assert_str_eq(got, "");
    free(got);
    ft_advance(ft, 6000);
    got = ft_take(ft, 10);
    ck_assert_str_eq(got, "cmd=lookup_result rc=14 info=fail "
                          "msg=name_service_request_timed_out\n");
    free(got);
    ft_destroy(ft);
}
END_TEST

START_TEST(ring_across_nodes)
{
    struct ft *ft;
    char buf[128];

    /* all-PMI-2 job */
    for (int r = 0; r < NRANKS; r++)
        block_layout[r] = r / PPN;
    ft = ft_create(NNODES, widths[_i], block_layout, NRANKS, 5000);
    for (int r = 0; r < NRANKS; r++) {
        ft_send(ft, r, "cmd=init pmi_version=2 pmi_subversion=0\n");
        ft_send2(ft, r, "cmd=fullinit;");
        free(ft_take(ft, r));
    }
    for (int r = NRANKS - 1; r >= 0; r--) {
        snprintf(buf, sizeof(buf), "cmd=ring;ring-count=1;ring-left=v%d;ring-right=v%d;",
                 r, r);
        ft_send2(ft, r, buf);
        ft_run_some(ft, FT_RANDOM, 1);
    }
    ft_run(ft, FT_RANDOM);
    int count[NRANKS], byc[NRANKS];
    char left[NRANKS][32], right[NRANKS][32];
    for (int r = 0; r < NRANKS; r++)
        byc[r] = -1;
    for (int r = 0; r < NRANKS; r++) {
        char *got = ft_take(ft, r);
        ck_assert_msg(sscanf(got,
                             "%*d cmd=ring-response;rc=0;ring-count=%d;ring-left=%31[^;];"
                             "ring-right=%31[^;];",
                             &count[r], left[r], right[r]) == 3,
                      "rank %d: %s", r, got);
        free(got);
        ck_assert(count[r] >= 0 && count[r] < NRANKS);
        ck_assert_int_eq(byc[count[r]], -1);
        byc[count[r]] = r;
    }
    for (int r = 0; r < NRANKS; r++) {
        char want[32];
        snprintf(want, sizeof(want), "v%d", byc[(count[r] + NRANKS - 1) % NRANKS]);
        ck_assert_str_eq(left[r], want);
        snprintf(want, sizeof(want), "v%d", byc[(count[r] + 1) % NRANKS]);
        ck_assert_str_eq(right[r], want);
    }
    /* ranks of one node are consecutive in the ring */
    for (int r = 0; r < NRANKS; r += PPN)
        ck_assert_int_eq(count[r + 1], count[r] + 1);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

static void all_v2(struct ft *ft)
{
    for (int r = 0; r < ft->size; r++) {
        ft_send(ft, r, "cmd=init pmi_version=2 pmi_subversion=0\n");
        ft_send2(ft, r, "cmd=fullinit;");
        free(ft_take(ft, r));
    }
}

START_TEST(ring_failures)
{
    /* a rank that never joins: timeout, every waiting rank answered */
    struct ft *ft = job(2, 3000);
    all_v2(ft);
    for (int r = 0; r < NRANKS; r++)
        if (r != 5)
            ft_send2(ft, r, "cmd=ring;ring-count=1;ring-left=x;ring-right=x;");
    ft_run(ft, FT_FIFO);
    ft_advance(ft, 3000);
    ft_run(ft, FT_FIFO);
    ck_assert_msg(
        strstr(ft->nodes[2].abort_msg, "ring 0 timed out on node 2 (1 of 2 local"), "%s",
        ft->nodes[2].abort_msg);
    for (int r = 0; r < NRANKS; r++) {
        if (r == 5)
            continue;
        char *got = ft_take(ft, r);
        ck_assert_msg(strstr(got, "cmd=ring-response;rc=-1;errmsg="), "rank %d: %s", r,
                      got);
        free(got);
    }
    ft_destroy(ft);

    /* a rank that died: at once, naming it */
    ft = job(3, 0);
    all_v2(ft);
    ft_gone(ft, 4);
    ft_send2(ft, 5, "cmd=ring;ring-count=1;ring-left=x;ring-right=x;");
    ck_assert_int_eq(ft->nodes[2].abort_rank, 4);
    ck_assert_msg(strstr(ft->nodes[2].abort_msg, "rank 4 exited without finalize"), "%s",
                  ft->nodes[2].abort_msg);
    char *got = ft_take(ft, 5);
    ck_assert_msg(strstr(got, "cmd=ring-response;rc=-1;"), "%s", got);
    free(got);
    /* bad requests are refused without a collective */
    ft_send2(ft, 0, "cmd=ring;ring-count=2;ring-left=x;ring-right=x;");
    got = ft_take(ft, 0);
    ck_assert_msg(strstr(got, "cmd=ring-response;rc=3;"), "%s", got);
    free(got);
    ft_destroy(ft);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fence");
    TCase *tc = tcase_create("tree");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, fence_fifo, 0, 2);
    tcase_add_loop_test(tc, fence_reordered, 0, 2);
    tcase_add_loop_test(tc, fence_duplicated, 0, 2);
    tcase_add_test(tc, fence_one_node);
    tcase_add_loop_test(tc, ring_across_nodes, 0, 2);
    tcase_add_test(tc, name_service_routed);
    suite_add_tcase(s, tc);

    TCase *tf = tcase_create("failures");
    tcase_set_timeout(tf, 10);
    tcase_add_test(tf, lost_up_message);
    tcase_add_test(tf, lost_down_message);
    tcase_add_test(tf, timeout_names_missing_ranks);
    tcase_add_test(tf, dead_rank_before_fence);
    tcase_add_test(tf, dead_rank_during_fence);
    tcase_add_test(tf, finalized_rank_cannot_fence);
    tcase_add_test(tf, link_gone);
    tcase_add_test(tf, abort_reaches_every_node);
    tcase_add_test(tf, mutated_tree_messages);
    tcase_add_test(tf, ring_failures);
    tcase_add_test(tf, send_failure);
    tcase_add_test(tf, bad_tree_message);
    tcase_add_test(tf, next_epoch_held);
    tcase_add_test(tf, stale_and_duplicate_down);
    suite_add_tcase(s, tf);
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
