/* check_ktree.c - unit tests of the k-ary tree arithmetic (common/ktree). */
#include <check.h>
#include <stdlib.h>

#include "ktree.h"

static const int widths[] = {1, 2, 3, 50};

/* Parent and children agree; every node but the root has exactly one parent
 * and is listed among its parent's children. */
START_TEST(parent_children_consistent)
{
    int k = widths[_i];
    int *seen = calloc(301, sizeof(int));
    int *ch = malloc(sizeof(int) * (size_t)k);
    for (int n = 1; n <= 300; n++) {
        for (int i = 0; i < n; i++)
            seen[i] = 0;
        ck_assert_int_eq(ktree_parent(k, n, 0), -1);
        ck_assert_int_eq(ktree_depth(k, n, 0), 0);
        for (int i = 0; i < n; i++) {
            int nc = ktree_children(k, n, i, ch);
            ck_assert_int_ge(nc, 0);
            ck_assert_int_le(nc, k);
            for (int c = 0; c < nc; c++) {
                ck_assert_int_gt(ch[c], i);
                ck_assert_int_lt(ch[c], n);
                ck_assert_int_eq(ktree_parent(k, n, ch[c]), i);
                ck_assert_int_eq(ktree_depth(k, n, ch[c]), ktree_depth(k, n, i) + 1);
                seen[ch[c]]++;
            }
        }
        ck_assert_int_eq(seen[0], 0);
        for (int i = 1; i < n; i++)
            ck_assert_msg(seen[i] == 1, "k=%d n=%d node %d listed %d times", k, n, i,
                          seen[i]);
    }
    free(seen);
    free(ch);
}
END_TEST

/* in_subtree agrees with walking up the parent chain. */
START_TEST(subtree_matches_ancestry)
{
    int k = widths[_i];
    int n = k == 1 ? 100 : 300; /* a chain is slow to walk and has no branches */
    for (int r = 0; r < n; r++) {
        for (int x = 0; x < n; x++) {
            int anc = 0;
            for (int y = x; y >= 0; y = ktree_parent(k, n, y)) {
                if (y == r) {
                    anc = 1;
                    break;
                }
            }
            ck_assert_msg(!!ktree_in_subtree(k, n, r, x) == anc, "k=%d r=%d x=%d", k, r,
                          x);
        }
    }
}
END_TEST

/* next_hop walks from any node to any other in exactly the tree distance
 * (depth(a) + depth(b) - 2 depth(lca)), each hop to a neighbour. */
START_TEST(next_hop_reaches)
{
    int k = widths[_i];
    for (int n = 1; n <= 300; n += (n < 20 ? 1 : 37)) {
        /* every pair for small n, a spread of pairs (ends included) above */
        int step = n < 20 ? 1 : n / 12;
        for (int from = 0; from < n;
             from = from + step < n || from == n - 1 ? from + step : n - 1) {
            for (int to = 0; to < n;
                 to = to + step < n || to == n - 1 ? to + step : n - 1) {
                ck_assert_int_eq(ktree_next_hop(k, n, from, from), -1);
                if (from == to)
                    continue;
                /* lowest common ancestor by climbing */
                int a = from, b = to;
                while (a != b) {
                    if (ktree_depth(k, n, a) >= ktree_depth(k, n, b))
                        a = ktree_parent(k, n, a);
                    else
                        b = ktree_parent(k, n, b);
                }
                int dist = ktree_depth(k, n, from) + ktree_depth(k, n, to) -
                           2 * ktree_depth(k, n, a);
                int cur = from, hops = 0;
                while (cur != to) {
                    int nx = ktree_next_hop(k, n, cur, to);
                    ck_assert_int_ge(nx, 0);
                    ck_assert(ktree_parent(k, n, nx) == cur ||
                              ktree_parent(k, n, cur) == nx);
                    cur = nx;
                    hops++;
                    ck_assert_int_le(hops, dist);
                }
                ck_assert_int_eq(hops, dist);
            }
        }
    }
}
END_TEST

START_TEST(bad_arguments)
{
    int ch[4];
    ck_assert_int_eq(ktree_parent(0, 10, 3), -1);
    ck_assert_int_eq(ktree_parent(2, 10, 10), -1);
    ck_assert_int_eq(ktree_parent(2, 10, -1), -1);
    ck_assert_int_eq(ktree_parent(2, 0, 0), -1);
    ck_assert_int_eq(ktree_children(2, 10, 10, ch), 0);
    ck_assert_int_eq(ktree_children(-1, 10, 0, ch), 0);
    ck_assert_int_eq(ktree_depth(2, 10, 11), -1);
    ck_assert_int_eq(ktree_in_subtree(2, 10, 0, 10), 0);
    ck_assert_int_eq(ktree_in_subtree(2, 10, 10, 0), 0);
    ck_assert_int_eq(ktree_next_hop(2, 10, 0, 10), -1);
    ck_assert_int_eq(ktree_next_hop(2, 10, -3, 1), -1);
    /* examples by hand: k=2, n=10 */
    ck_assert_int_eq(ktree_children(2, 10, 4, ch), 1);
    ck_assert_int_eq(ch[0], 9);
    ck_assert_int_eq(ktree_children(2, 10, 1, ch), 2);
    ck_assert_int_eq(ch[0], 3);
    ck_assert_int_eq(ch[1], 4);
    ck_assert_int_eq(ktree_next_hop(2, 10, 9, 2), 4);
    ck_assert_int_eq(ktree_next_hop(2, 10, 0, 9), 1);
    ck_assert_int_eq(ktree_depth(2, 10, 9), 3);
    /* huge arguments do not overflow */
    ck_assert_int_eq(ktree_in_subtree(2147483647, 2147483647, 1, 2147483646), 0);
    ck_assert_int_eq(ktree_in_subtree(2, 2147483647, 0, 2147483646), 1);
    ck_assert_int_eq(ktree_children(2147483647, 2147483647, 1, ch), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ktree");
    TCase *tc = tcase_create("ktree");
    tcase_set_timeout(tc, 60);
    int nw = (int)(sizeof(widths) / sizeof(widths[0]));
    tcase_add_loop_test(tc, parent_children_consistent, 0, nw);
    tcase_add_loop_test(tc, subtree_matches_ancestry, 0, nw);
    tcase_add_loop_test(tc, next_hop_reaches, 0, nw);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
