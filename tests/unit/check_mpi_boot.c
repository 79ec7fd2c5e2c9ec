/*
 * check_mpi_boot.c - libmpi's node map from PMI_process_mapping (loom_pmap_parse,
 *   common/pmap.c, the parser libpmi uses too): block, cyclic, repeated vectors,
 *   the wrap to the first block of node 0, malformed input.
 */
#include <check.h>
#include <errno.h>

#include "boot.h"
#include "../../common/pmap.h"
#include "comm.h"

/* obj.c's request release drops the request's communicator: none exist here */
void xm_comm_unref(struct xm_comm *c) { (void)c; }

START_TEST(test_block)
{
    int n[4];
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,2,2))", 4, n), 0);
    ck_assert_int_eq(n[0], 0);
    ck_assert_int_eq(n[1], 0);
    ck_assert_int_eq(n[2], 1);
    ck_assert_int_eq(n[3], 1);
}
END_TEST

/* The list wraps to its first block starting at node 0, as MPICH's parser does
 * (libmpi's own sscanf parser restarted at the first block: nodes 1 1 0 0 1 1). */
START_TEST(test_wrap_to_node0)
{
    int n[6];
    const int want[6] = {1, 1, 0, 0, 0, 0};
    ck_assert_int_eq(loom_pmap_parse("(vector,(1,1,2),(0,1,2))", 6, n), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(n[i], want[i]);
}
END_TEST

START_TEST(test_single_node)
{
    int n[64];
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,1,64))", 64, n), 0);
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(n[i], 0);
}
END_TEST

START_TEST(test_cyclic)
{
    /* 3 nodes, 1 per node, 7 ranks: the vector repeats */
    int n[7], want[7] = {0, 1, 2, 0, 1, 2, 0};
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,3,1))", 7, n), 0);
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(n[i], want[i]);
}
END_TEST

START_TEST(test_multi_block)
{
    int n[5], want[5] = {0, 0, 0, 1, 2};
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,1,3),(1,2,1))", 5, n), 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(n[i], want[i]);
}
END_TEST

START_TEST(test_malformed)
{
    int n[4];
    ck_assert_int_eq(loom_pmap_parse("", 4, n), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(vector)", 4, n), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,0,2))", 4, n), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(vector,(0,x,2))", 4, n), -EINVAL);
    ck_assert_int_eq(loom_pmap_parse("(block,(0,1,2))", 4, n), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpi_boot");
    TCase *tc = tcase_create("mapping");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_block);
    tcase_add_test(tc, test_wrap_to_node0);
    tcase_add_test(tc, test_single_node);
    tcase_add_test(tc, test_cyclic);
    tcase_add_test(tc, test_multi_block);
    tcase_add_test(tc, test_malformed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
