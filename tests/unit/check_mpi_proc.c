/*
 * check_mpi_proc.c - mpi/core/proc.c, the process table: world ids are the world
 *   ranks, other jobs' processes get the next ids once each (the same process twice
 *   gives the same id), bad cards are refused, every grow hook sees each growth with
 *   the right capacities before the new id exists, and a hook that fails leaves the
 *   table as it was (a retry succeeds).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

static int *arr, arr_cap, fail_next, calls;

static int grow(int oldcap, int newcap)
{
    calls++;
    ck_assert_int_eq(oldcap, arr_cap);
    ck_assert_int_gt(newcap, oldcap);
    ck_assert_int_le(xm_proc_count(), oldcap);
    if (fail_next) {
        fail_next = 0;
        return -ENOMEM;
    }
    int *n = realloc(arr, (size_t)newcap * sizeof(int));
    ck_assert_ptr_nonnull(n);
    for (int i = oldcap; i < newcap; i++)
        n[i] = -7;
    arr = n;
    arr_cap = newcap;
    return 0;
}

static struct xm_dyn_card card(const char *job, int rank)
{
    struct xm_dyn_card c;
    memset(&c, 0, sizeof(c));
    snprintf(c.jobid, sizeof(c.jobid), "%s", job);
    c.rank = rank;
    c.addrs.naddr = 1;
    c.addrs.ip[0] = 0x0100007f;
    c.addrs.port[0] = (uint16_t)(1000 + rank);
    return c;
}

START_TEST(test_world)
{
    ck_assert_int_eq(xm_proc_init("me", 4), 0);
    ck_assert_int_eq(xm_proc_count(), 4);
    ck_assert_int_eq(xm_proc_capacity(), 4);
    ck_assert_int_eq(xm_proc_find("me", 3), 3);
    ck_assert_int_eq(xm_proc_find("me", 4), -1);
    ck_assert_int_eq(xm_proc_find("other", 0), -1);
    ck_assert_ptr_null(xm_proc_get(4));
    ck_assert_ptr_null(xm_proc_get(-1));
    ck_assert_str_eq(xm_proc_get(2)->jobid, "me");
    ck_assert_int_eq(xm_proc_get(2)->rank, 2);
    /* my own job's processes are never added: its ranks are the world */
    struct xm_dyn_card c = card("me", 2);
    ck_assert_int_eq(xm_proc_add(&c), 2);
    c = card("me", 9);
    ck_assert_int_eq(xm_proc_add(&c), -EINVAL);
    xm_proc_finalize();
}
END_TEST

START_TEST(test_add_grow)
{
    ck_assert_int_eq(xm_proc_init("me", 3), 0);
    arr_cap = 3;
    arr = calloc(3, sizeof(int));
    calls = 0;
    ck_assert_int_eq(xm_proc_on_grow(grow), 0);
    for (int i = 0; i < 100; i++) {
        struct xm_dyn_card c = card(i % 2 ? "odd" : "even", i);
        int id = xm_proc_add(&c);
        ck_assert_int_eq(id, 3 + i);
        ck_assert_int_lt(id, arr_cap);
        ck_assert_int_eq(arr[id], -7); /* the hook initialised the slot */
        arr[id] = i;
    }
    ck_assert_int_eq(xm_proc_count(), 103);
    ck_assert_int_le(calls, 5); /* capacity doubles */
    ck_assert_int_eq(xm_proc_capacity(), arr_cap); /* what a late starter must allocate */
    for (int i = 0; i < 100; i++) {
        int id = xm_proc_find(i % 2 ? "odd" : "even", i);
        ck_assert_int_eq(id, 3 + i);
        ck_assert_int_eq(arr[id], i);
        const struct xm_proc *p = xm_proc_get(id);
        ck_assert_int_eq(p->rank, i);
        ck_assert_int_eq(p->addrs.port[0], 1000 + i);
        struct xm_dyn_card again = card(i % 2 ? "odd" : "even", i);
        ck_assert_int_eq(xm_proc_add(&again), id); /* known: same id, no growth */
    }
    ck_assert_int_eq(xm_proc_count(), 103);
    ck_assert_int_eq(xm_proc_find("odd", 0), -1);
    xm_proc_finalize();
    free(arr);
    arr = NULL;
}
END_TEST

START_TEST(test_refused)
{
    ck_assert_int_eq(xm_proc_init("me", 1), 0);
    struct xm_dyn_card c = card("x", 0);
    c.addrs.naddr = 0;
    ck_assert_int_eq(xm_proc_add(&c), -EINVAL);
    c = card("x", 0);
    c.addrs.naddr = XM_DYN_ADDRS + 1;
    ck_assert_int_eq(xm_proc_add(&c), -EINVAL);
    c = card("x", -1);
    ck_assert_int_eq(xm_proc_add(&c), -EINVAL);
    c = card("", 0);
    ck_assert_int_eq(xm_proc_add(&c), -EINVAL);
    c = card("x", 0);
    memset(c.jobid, 'j', sizeof(c.jobid)); /* not terminated */
    ck_assert_int_eq(xm_proc_add(&c), -EINVAL);
    ck_assert_int_eq(xm_proc_count(), 1);
    xm_proc_finalize();
}
END_TEST

START_TEST(test_hook_fails)
{
    ck_assert_int_eq(xm_proc_init("me", 2), 0);
    arr_cap = 2;
    arr = calloc(2, sizeof(int));
    ck_assert_int_eq(xm_proc_on_grow(grow), 0);
    fail_next = 1;
    struct xm_dyn_card c = card("o", 5);
    ck_assert_int_eq(xm_proc_add(&c), -ENOMEM);
    ck_assert_int_eq(xm_proc_count(), 2);
    ck_assert_int_eq(xm_proc_find("o", 5), -1);
    ck_assert_int_eq(xm_proc_add(&c), 2); /* the retry grows */
    ck_assert_int_ge(arr_cap, 3);
    xm_proc_finalize();
    free(arr);
    arr = NULL;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpi_proc");
    TCase *tc = tcase_create("proc");
    tcase_add_test(tc, test_world);
    tcase_add_test(tc, test_add_grow);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_hook_fails);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
