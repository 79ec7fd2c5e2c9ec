/* check_blob.c - the blob collective and routed direct-modex requests of pmiserv
 * (services for the PMIx server mode), over the in-memory tree of fake_tree.c:
 * 7 nodes, tree width 2 and 3, messages in order, reordered and duplicated;
 * several epochs, queued local contributions, timeout, dead rank, broken link,
 * abort; requests routed across the tree, answered, failed, timed out, cancelled;
 * the name service used by a host-side protocol (psrv_ns_request); a KVS fence
 * and a blob collective in flight at once (two instances of treecoll.c that
 * must not mix their epochs or messages).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"

#define NNODES 7
#define PPN 2
#define NRANKS (NNODES * PPN)

static int layout[NRANKS];

static struct ft *job(int width, int timeout)
{
    for (int r = 0; r < NRANKS; r++)
        layout[r] = r / PPN;
    return ft_create(NNODES, width, layout, NRANKS, timeout);
}

static void contribute(struct ft *ft, int node, int epoch)
{
    char blob[32];
    int n = snprintf(blob, sizeof(blob), "[e%d n%d]", epoch, node);
    ck_assert_int_eq(psrv_coll_contribute(ft->nodes[node].srv,
                                          (uint64_t)(100 * epoch + node), blob,
                                          (size_t)n),
                     0);
}

/* Every node got collective `epoch` with every node's blob exactly once. */
static void check_coll(struct ft *ft, int epoch)
{
    for (int k = 0; k < ft->nnodes; k++) {
        struct ft_node *n = &ft->nodes[k];
        size_t want = 0;
        ck_assert_int_eq(n->ncoll, epoch + 1);
        ck_assert_int_eq(n->coll_rc, 0);
        ck_assert_uint_eq(n->coll_id, (uint64_t)(100 * epoch + k));
        for (int j = 0; j < ft->nnodes; j++) {
            char blob[32];
            want += (size_t)snprintf(blob, sizeof(blob), "[e%d n%d]", epoch, j);
            char *p = strstr(n->coll_data, blob);
            ck_assert_msg(p != NULL, "node %d: blob of node %d missing in %s", k, j,
                          n->coll_data);
            ck_assert_msg(strstr(p + 1, blob) == NULL, "node %d: blob of node %d twice",
                          k, j);
        }
        ck_assert_uint_eq(n->coll_len, want);
    }
}

static void rounds(int width, enum ft_order order)
{
    struct ft *ft = job(width, 5000);
    ft->seed = 7;
    for (int e = 0; e < 4; e++) {
        /* Contributions in a different node order each epoch. */
        for (int i = 0; i < NNODES; i++)
            contribute(ft, (i * (e + 3)) % NNODES, e);
        ft_run(ft, order);
        check_coll(ft, e);
    }
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}

START_TEST(coll_fifo)
{
    rounds(2, FT_FIFO);
    rounds(3, FT_FIFO);
}
END_TEST

START_TEST(coll_reordered)
{
    rounds(2, FT_RANDOM);
    rounds(3, FT_RANDOM);
}
END_TEST

START_TEST(coll_duplicated)
{
    rounds(2, FT_RANDOM_DUP);
}
END_TEST

START_TEST(coll_empty_blobs)
{
    struct ft *ft = job(2, 5000);
    for (int k = 0; k < NNODES; k++)
        ck_assert_int_eq(psrv_coll_contribute(ft->nodes[k].srv, 9, NULL, 0), 0);
    ft_run(ft, FT_FIFO);
    for (int k = 0; k < NNODES; k++) {
        ck_assert_int_eq(ft->nodes[k].ncoll, 1);
        ck_assert_int_eq(ft->nodes[k].coll_rc, 0);
        ck_assert_uint_eq(ft->nodes[k].coll_len, 0);
    }
    ft_destroy(ft);
}
END_TEST

START_TEST(coll_one_node)
{
    int one[3] = {0, 0, 0};
    struct ft *ft = ft_create(1, 2, one, 3, 1000);
    ck_assert_int_eq(psrv_coll_contribute(ft->nodes[0].srv, 5, "abc", 3), 0);
    ck_assert_int_eq(ft->nodes[0].ncoll, 1);
    ck_assert_str_eq(ft->nodes[0].coll_data, "abc");
    ck_assert_int_eq(ft->nq, 0);
    ft_destroy(ft);
}
END_TEST

/* A node contributes to epoch 1 before epoch 0 completed: queued, in order. */
START_TEST(coll_queued_contribution)
{
    struct ft *ft = job(2, 5000);
    for (int k = 0; k < NNODES; k++)
        contribute(ft, k, 0);
    contribute(ft, 4, 1); /* node 4 is early */
    ft_run(ft, FT_RANDOM);
    check_coll(ft, 0);
    for (int k = 0; k < NNODES; k++)
        if (k != 4)
            contribute(ft, k, 1);
    ft_run(ft, FT_RANDOM);
    check_coll(ft, 1);
    ft_destroy(ft);
}
END_TEST

/* A PMI-1 fence and two blob collectives in flight at the same time, messages
 * reordered: each completes with its own data and epoch, neither fails. */
START_TEST(coll_and_kvs_fence_independent)
{
    struct ft *ft = job(2, 5000);
    ft->seed = 11;
    for (int r = 0; r < NRANKS; r++) {
        char line[80];
        ft_send(ft, r, "cmd=init pmi_version=1 pmi_subversion=1\n");
        free(ft_take(ft, r));
        snprintf(line, sizeof(line), "cmd=put kvsname=x key=k%d value=v%d\n", r, r);
        ft_send(ft, r, line);
        free(ft_take(ft, r));
    }
    for (int k = 0; k < NNODES; k++)
        contribute(ft, k, 0);
    for (int r = 0; r < NRANKS; r++)
        ft_send(ft, r, "cmd=barrier_in\n");
    ft_run(ft, FT_RANDOM);
    check_coll(ft, 0);
    for (int k = NNODES - 1; k >= 0; k--)
        contribute(ft, k, 1);
    ft_run(ft, FT_RANDOM);
    check_coll(ft, 1);
    for (int r = 0; r < NRANKS; r++) {
        char *got = ft_take(ft, r);
        ck_assert_msg(got && strstr(got, "cmd=barrier_out rc=0"), "rank %d: %s", r,
                      got ? got : "(nothing)");
        free(got);
        /* a key put on another node is there after the fence */
        char line[80], want[40];
        int other = (r + PPN) % NRANKS;
        snprintf(line, sizeof(line), "cmd=get kvsname=x key=k%d\n", other);
        snprintf(want, sizeof(want), "value=v%d", other);
        ft_send(ft, r, line);
        got = ft_take(ft, r);
        ck_assert_msg(got && strstr(got, want), "rank %d: %s", r, got ? got : "(nothing)");
        free(got);
    }
    ck_assert_int_eq(psrv_fence_epoch(ft->nodes[3].srv), 1);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

/* A leaf finishes epoch 0 and sends its epoch-1 blob before its parent got
 * the epoch-0 answer: the parent holds it. */
START_TEST(coll_early_child_held)
{
    struct ft *ft = job(2, 5000);
    for (int k = 0; k < NNODES; k++)
        contribute(ft, k, 0);
    ft_run(ft, FT_FIFO);
    check_coll(ft, 0);
    contribute(ft, 6, 1); /* leaf 6 (parent 2) first */
    ft_run(ft, FT_FIFO);
    for (int k = 0; k < NNODES; k++)
        if (k != 6)
            contribute(ft, k, 1);
    ft_run(ft, FT_FIFO);
    check_coll(ft, 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(coll_timeout_fails_everywhere)
{
    struct ft *ft = job(2, 1000);
    for (int k = 0; k < NNODES; k++)
        if (k != 5)
            contribute(ft, k, 0);
    ft_run(ft, FT_FIFO);
    for (int i = 0; i < 20; i++) {
        ft_advance(ft, 500);
        ft_run(ft, FT_FIFO);
    }
    int total;
    int first = ft_first_abort(ft, &total);
    ck_assert_int_ge(first, 0);
    for (int k = 0; k < NNODES; k++) {
        ck_assert_int_eq(ft->nodes[k].naborts, 1);
        if (k != 5) {
            ck_assert_int_eq(ft->nodes[k].ncoll, 1);
            ck_assert_int_lt(ft->nodes[k].coll_rc, 0);
        }
    }
    /* Node 5 never contributed (so it never started the epoch): its parent
     * reports first, naming it, and that text reaches every node. */
    for (int k = 0; k < NNODES; k++)
        ck_assert_msg(strstr(ft->nodes[k].abort_msg,
                             "collective 0 timed out on node 2; "
                             "no contribution from child node(s): 5"),
                      "node %d: abort message: %s", k, ft->nodes[k].abort_msg);
    /* Later contributions are answered at once with an error. */
    contribute(ft, 5, 0);
    ck_assert_int_eq(ft->nodes[5].ncoll, 1);
    ck_assert_int_lt(ft->nodes[5].coll_rc, 0);
    ft_destroy(ft);
}
END_TEST

/* Rank 2 (node 1, interior) hangs up without finalize, before (early) or
 * during the collective: it fails at once on every node, naming the rank. */
static void dead_rank(bool early)
{
    struct ft *ft = job(2, 60000);
    ft_send(ft, 2, "cmd=init pmi_version=1 pmi_subversion=1\n");
    if (early)
        ft_gone(ft, 2);
    for (int k = 0; k < NNODES; k++)
        if (k != 1)
            contribute(ft, k, 0);
    ft_run(ft, FT_FIFO);
    if (!early) {
        int total;
        ck_assert_int_eq(ft_first_abort(ft, &total), -1);
        ft_gone(ft, 2);
        ft_run(ft, FT_FIFO);
    }
    int total;
    ck_assert_int_ge(ft_first_abort(ft, &total), 0);
    ck_assert_int_eq(total, NNODES);
    ck_assert_int_eq(ft->nodes[1].abort_rank, 2);
    for (int k = 0; k < NNODES; k++) {
        ck_assert_msg(strstr(ft->nodes[k].abort_msg, "rank 2 exited"), "node %d: %s", k,
                      ft->nodes[k].abort_msg);
        if (k != 1)
            ck_assert_int_lt(ft->nodes[k].coll_rc, 0);
    }
    ft_destroy(ft);
}

START_TEST(coll_dead_rank_names_it)
{
    dead_rank(true);
    dead_rank(false);
}
END_TEST

START_TEST(coll_link_gone)
{
    struct ft *ft = job(2, 60000);
    contribute(ft, 0, 0);
    psrv_tree_gone(ft->nodes[0].srv, 2);
    ft_run(ft, FT_FIFO);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), 0);
    ck_assert_msg(strstr(ft->nodes[0].abort_msg, "link to node 2"), "%s",
                  ft->nodes[0].abort_msg);
    ck_assert_int_lt(ft->nodes[0].coll_rc, 0);
    ft_destroy(ft);
}
END_TEST

START_TEST(coll_abort_cancels)
{
    struct ft *ft = job(3, 60000);
    contribute(ft, 3, 0);
    psrv_abort(ft->nodes[6].srv, 13, 7, "rank 13 called PMIx_Abort");
    ft_run(ft, FT_RANDOM);
    for (int k = 0; k < NNODES; k++) {
        ck_assert_int_eq(ft->nodes[k].naborts, 1);
        ck_assert_str_eq(ft->nodes[k].abort_msg, "rank 13 called PMIx_Abort");
    }
    ck_assert_int_eq(ft->nodes[6].abort_rank, 13);
    ck_assert_int_eq(ft->nodes[6].abort_code, 7);
    ck_assert_int_eq(ft->nodes[3].ncoll, 1);
    ck_assert_int_lt(ft->nodes[3].coll_rc, 0);
    ft_destroy(ft);
}
END_TEST

/* ---- direct modex ------------------------------------------------------- */

static void dmdx_roundtrip(int width, int from_node, int rank)
{
    struct ft *ft = job(width, 5000);
    int host = layout[rank];
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[from_node].srv, 77, rank, "i", 1), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[host].ndreq, 1);
    ck_assert_int_eq(ft->nodes[host].dreq_rank[0], rank);
    for (int k = 0; k < NNODES; k++)
        if (k != host)
            ck_assert_int_eq(ft->nodes[k].ndreq, 0);
    ck_assert_int_eq(psrv_dmdx_reply(ft->nodes[host].srv, ft->nodes[host].dreq_handle[0],
                                     0, "modex-data", 10),
                     0);
    ck_assert_int_eq(psrv_dmdx_reply(ft->nodes[host].srv, ft->nodes[host].dreq_handle[0],
                                     0, "again", 5),
                     -ENOENT);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[from_node].ndmdx, 1);
    ck_assert_uint_eq(ft->nodes[from_node].dmdx_id, 77);
    ck_assert_int_eq(ft->nodes[from_node].dmdx_rc, 0);
    ck_assert_str_eq(ft->nodes[from_node].dmdx_data, "modex-data");
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}

START_TEST(dmdx_routed)
{
    dmdx_roundtrip(2, 5, 13); /* width 2: node 5 -> 2 -> 6, between siblings */
    dmdx_roundtrip(2, 6, 0);  /* node 6 -> 2 -> 0: up to the root */
    dmdx_roundtrip(2, 0, 9);  /* node 0 -> 1 -> 4: down from the root */
    dmdx_roundtrip(2, 3, 13); /* node 3 -> 1 -> 0 -> 2 -> 6: across the root */
    dmdx_roundtrip(3, 4, 12); /* width 3: node 4 -> 1 -> 6 */
    dmdx_roundtrip(2, 3, 6);  /* rank 6 lives on node 3 itself: served locally */
}
END_TEST

START_TEST(dmdx_error_and_timeout)
{
    struct ft *ft = job(2, 1000);
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[3].srv, 1, 12, NULL, 0), 0);
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[4].srv, 2, 13, NULL, 0), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[6].ndreq, 2);
    /* The first gets an error answer, the second none: it times out. */
    int i = ft->nodes[6].dreq_rank[0] == 12 ? 0 : 1;
    ck_assert_int_eq(
        psrv_dmdx_reply(ft->nodes[6].srv, ft->nodes[6].dreq_handle[i], -EIO, NULL, 0), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[3].ndmdx, 1);
    ck_assert_int_eq(ft->nodes[3].dmdx_rc, -EIO);
    ck_assert_int_eq(ft->nodes[4].ndmdx, 0);
    ft_advance(ft, 1500);
    ck_assert_int_eq(ft->nodes[4].ndmdx, 1);
    ck_assert_int_eq(ft->nodes[4].dmdx_rc, -ETIMEDOUT);
    /* A late answer is dropped, not delivered twice. */
    ck_assert_int_eq(
        psrv_dmdx_reply(ft->nodes[6].srv, ft->nodes[6].dreq_handle[1 - i], 0, "late", 4),
        0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[4].ndmdx, 1);
    /* Bad arguments. */
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[4].srv, 3, NRANKS, NULL, 0), -EINVAL);
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[4].srv, 3, -1, NULL, 0), -EINVAL);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1); /* no abort for a dmodex timeout */
    ft_destroy(ft);
}
END_TEST

START_TEST(dmdx_cancelled_by_abort)
{
    struct ft *ft = job(2, 60000);
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[5].srv, 8, 1, NULL, 0), 0);
    ft_run(ft, FT_FIFO);
    psrv_abort(ft->nodes[0].srv, 1, 1, "rank 1 died");
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[5].ndmdx, 1);
    ck_assert_int_eq(ft->nodes[5].dmdx_rc, -ECANCELED);
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[5].srv, 9, 1, NULL, 0), -ECANCELED);
    ft_destroy(ft);
}
END_TEST

START_TEST(dmdx_bad_message_dropped)
{
    struct ft *ft = job(2, 60000);
    /* A DMDX_REQ for a rank that is not on the destination node. */
    ck_assert_int_eq(psrv_dmdx_request(ft->nodes[1].srv, 1, 4, NULL, 0), 0);
    ck_assert_int_eq(ft->nq, 1);
    /* Corrupt the rank field (after u64 id) to 13 (node 6) while dest stays 2. */
    unsigned char *b = ft->q[0].buf;
    size_t hdr =
        1 + 1 + 1 + 4 + 4 + 4 + 4 + 4; /* magic ver type epoch from origin dest len */
    b[hdr + 8 + 3] = 13;
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(ft->nodes[2].ndreq, 0);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

/* ---- the name service for a host-side protocol (PMIx publish/lookup) ---- */

START_TEST(ns_host_requests)
{
    struct ft *ft = job(2, 1000);
    struct ft_node *n5 = &ft->nodes[5], *n3 = &ft->nodes[3], *n0 = &ft->nodes[0];

    ck_assert_int_eq(psrv_ns_request(n5->srv, 1, PSRV_NS_PUBLISH, "svc", "port-a"), 0);
    ck_assert_int_eq(n5->nns, 0); /* node 0 answers */
    ft_run(ft, FT_RANDOM);
    ck_assert_int_eq(n5->nns, 1);
    ck_assert_uint_eq(n5->ns_id, 1);
    ck_assert_int_eq(n5->ns_rc, 0);
    /* lookup from another node, and on node 0 itself (answered at once) */
    ck_assert_int_eq(psrv_ns_request(n3->srv, 2, PSRV_NS_LOOKUP, "svc", NULL), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(n3->ns_rc, 0);
    ck_assert_str_eq(n3->ns_value, "port-a");
    ck_assert_int_eq(psrv_ns_request(n0->srv, 3, PSRV_NS_LOOKUP, "svc", NULL), 0);
    ck_assert_int_eq(n0->nns, 1);
    ck_assert_str_eq(n0->ns_value, "port-a");
    /* the same name twice, unpublish, then not found */
    ck_assert_int_eq(psrv_ns_request(n3->srv, 4, PSRV_NS_PUBLISH, "svc", "port-b"), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(n3->ns_rc, 1);
    ck_assert_int_eq(psrv_ns_request(n5->srv, 5, PSRV_NS_UNPUBLISH, "svc", NULL), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(n5->ns_rc, 0);
    ck_assert_int_eq(psrv_ns_request(n3->srv, 6, PSRV_NS_LOOKUP, "svc", NULL), 0);
    ft_run(ft, FT_FIFO);
    ck_assert_int_eq(n3->ns_rc, 1);
    ck_assert_str_eq(n3->ns_value, "(null)");
    /* a request whose message is lost times out (one answer, rc != 0) */
    ft->drop_count = 1;
    ck_assert_int_eq(psrv_ns_request(n3->srv, 7, PSRV_NS_LOOKUP, "x", NULL), 0);
    ft_run(ft, FT_FIFO);
    int before = n3->nns;
    ft_advance(ft, 1500);
    ck_assert_int_eq(n3->nns, before + 1);
    ck_assert_uint_eq(n3->ns_id, 7);
    ck_assert_int_ne(n3->ns_rc, 0);
    ck_assert_int_ne(n3->ns_rc, 1);
    /* bad arguments */
    ck_assert_int_eq(psrv_ns_request(n3->srv, 8, PSRV_NS_PUBLISH, "k", NULL), -EINVAL);
    ck_assert_int_eq(psrv_ns_request(n3->srv, 8, 9, "k", "v"), -EINVAL);
    ck_assert_int_eq(psrv_ns_request(n3->srv, 8, PSRV_NS_LOOKUP, "", NULL), -EINVAL);
    int total;
    ck_assert_int_eq(ft_first_abort(ft, &total), -1);
    ft_destroy(ft);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("blob");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, coll_fifo);
    tcase_add_test(tc, coll_reordered);
    tcase_add_test(tc, coll_duplicated);
    tcase_add_test(tc, coll_empty_blobs);
    tcase_add_test(tc, coll_one_node);
    tcase_add_test(tc, coll_queued_contribution);
    tcase_add_test(tc, coll_early_child_held);
    tcase_add_test(tc, coll_and_kvs_fence_independent);
    tcase_add_test(tc, coll_timeout_fails_everywhere);
    tcase_add_test(tc, coll_dead_rank_names_it);
    tcase_add_test(tc, coll_link_gone);
    tcase_add_test(tc, coll_abort_cancels);
    tcase_add_test(tc, dmdx_routed);
    tcase_add_test(tc, dmdx_error_and_timeout);
    tcase_add_test(tc, dmdx_cancelled_by_abort);
    tcase_add_test(tc, dmdx_bad_message_dropped);
    tcase_add_test(tc, ns_host_requests);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
