/* check_layout.c - unit tests of plugin/layout.c: Slurm's per-node task id
 * lists -> rank_node[] -> PMI_process_mapping (through the server core's
 * psrv_process_mapping), for the layouts srun really produced on a 3-node
 * test cluster (-N 3 -n 7 -m block|cyclic|plane=2, -m arbitrary with a host
 * file, a het step), bad lists, and the LOOM_* env value parsers.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "layout.h"
#include "pmiserv.h"

#define MAXR 16

/* Map the lists, then render the mapping; returns the mapping string. */
static const char *map(int size, int nnodes, const uint16_t *cnts, uint32_t *const *tids,
                       int *rank_node)
{
    static char out[256];
    char err[128] = "";
    int rc = loom_layout_map(size, nnodes, cnts, tids, rank_node, err, sizeof(err));
    ck_assert_msg(rc == 0, "map failed: %s", err);
    ck_assert_int_gt(psrv_process_mapping(rank_node, size, out, sizeof(out)), 0);
    return out;
}

START_TEST(block)
{
    uint32_t n0[] = {0, 1, 2, 3, 4}, n1[] = {5}, n2[] = {6};
    uint32_t *tids[] = {n0, n1, n2};
    uint16_t cnts[] = {5, 1, 1};
    int rn[MAXR];
    ck_assert_str_eq(map(7, 3, cnts, tids, rn), "(vector,(0,1,5),(1,2,1))");
    ck_assert_int_eq(rn[4], 0);
    ck_assert_int_eq(rn[5], 1);
    ck_assert_int_eq(rn[6], 2);
}
END_TEST

START_TEST(cyclic)
{
    uint32_t n0[] = {0, 3, 4, 5, 6}, n1[] = {1}, n2[] = {2};
    uint32_t *tids[] = {n0, n1, n2};
    uint16_t cnts[] = {5, 1, 1};
    int rn[MAXR];
    ck_assert_str_eq(map(7, 3, cnts, tids, rn), "(vector,(0,3,1),(0,1,4))");
    ck_assert_int_eq(rn[1], 1);
    ck_assert_int_eq(rn[3], 0);
}
END_TEST

START_TEST(plane2)
{
    uint32_t n0[] = {0, 1, 4, 5, 6}, n1[] = {2}, n2[] = {3};
    uint32_t *tids[] = {n0, n1, n2};
    uint16_t cnts[] = {5, 1, 1};
    int rn[MAXR];
    ck_assert_str_eq(map(7, 3, cnts, tids, rn), "(vector,(0,1,2),(1,2,1),(0,1,3))");
}
END_TEST

START_TEST(arbitrary)
{
    /* host file: node1 node0 node1 node2 node0 */
    uint32_t n0[] = {1, 4}, n1[] = {0, 2}, n2[] = {3};
    uint32_t *tids[] = {n0, n1, n2};
    uint16_t cnts[] = {2, 2, 1};
    int rn[MAXR];
    ck_assert_str_eq(map(5, 3, cnts, tids, rn), "(vector,(1,1,1),(0,3,1),(0,1,1))");
    ck_assert_int_eq(rn[0], 1);
    ck_assert_int_eq(rn[4], 0);
}
END_TEST

START_TEST(het)
{
    /* srun -n 2 a : -n 3 b, one stepd per component: global ids. */
    uint32_t n0[] = {0, 1}, n1[] = {2, 3, 4};
    uint32_t *tids[] = {n0, n1};
    uint16_t cnts[] = {2, 3};
    int rn[MAXR];
    ck_assert_str_eq(map(5, 2, cnts, tids, rn), "(vector,(0,1,2),(1,1,3))");
}
END_TEST

START_TEST(bad_lists)
{
    uint32_t dup0[] = {0, 1}, dup1[] = {1};
    uint32_t *dup[] = {dup0, dup1};
    uint32_t big0[] = {0, 7};
    uint32_t *big[] = {big0};
    uint32_t few0[] = {0, 2};
    uint32_t *few[] = {few0};
    uint32_t *none[] = {NULL};
    uint16_t c21[] = {2, 1}, c2[] = {2}, c1[] = {1};
    int rn[MAXR];
    char err[128];

    ck_assert_int_eq(loom_layout_map(3, 2, c21, dup, rn, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "task id 1 is on node 0 and node 1"));
    ck_assert_int_eq(loom_layout_map(2, 1, c2, big, rn, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "out of range"));
    ck_assert_int_eq(loom_layout_map(3, 1, c2, few, rn, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "task 1 is nowhere"));
    ck_assert_int_eq(loom_layout_map(1, 1, c1, none, rn, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "no task id list"));
    ck_assert_int_eq(loom_layout_map(0, 1, c1, none, rn, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(env_values)
{
    ck_assert_int_eq(loom_env_flag(NULL), 0);
    ck_assert_int_eq(loom_env_flag(""), 0);
    ck_assert_int_eq(loom_env_flag("0"), 0);
    ck_assert_int_eq(loom_env_flag("No"), 0);
    ck_assert_int_eq(loom_env_flag("1"), 1);
    ck_assert_int_eq(loom_env_flag("YES"), 1);
    ck_assert_int_eq(loom_env_flag("maybe"), -EINVAL);
    ck_assert_int_eq(loom_env_uint(NULL, 0, 9), -ENOENT);
    ck_assert_int_eq(loom_env_uint("", 0, 9), -ENOENT);
    ck_assert_int_eq(loom_env_uint("7", 0, 9), 7);
    ck_assert_int_eq(loom_env_uint("10", 0, 9), -EINVAL);
    ck_assert_int_eq(loom_env_uint("-1", 0, 9), -EINVAL);
    ck_assert_int_eq(loom_env_uint("3x", 0, 9), -EINVAL);
    ck_assert_int_eq(loom_env_uint(" 3", 0, 9), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugin_layout");
    TCase *tc = tcase_create("layout");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, block);
    tcase_add_test(tc, cyclic);
    tcase_add_test(tc, plane2);
    tcase_add_test(tc, arbitrary);
    tcase_add_test(tc, het);
    tcase_add_test(tc, bad_lists);
    tcase_add_test(tc, env_values);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
