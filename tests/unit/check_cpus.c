/* check_cpus.c - unit tests of common/cpus: the CPU count a node's tasks share,
 * the oversubscription rule and the timer slack. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "cpus.h"

static long slack_ns(void)
{
    return (long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}

/* The count follows the affinity mask, which the tasks inherit. */
START_TEST(usable_follows_affinity)
{
    cpu_set_t all, one;
    ck_assert_int_eq(sched_getaffinity(0, sizeof(all), &all), 0);
    ck_assert_int_eq(cpus_usable(), CPU_COUNT(&all));
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
    ck_assert_int_eq(cpus_usable(), 1);
    ck_assert_int_eq(sched_setaffinity(0, sizeof(all), &all), 0);
}
END_TEST

/* More tasks than min(usable CPUs, the job's CPUs when known). */
START_TEST(oversubscribed_rule)
{
    int n = cpus_usable();
    ck_assert(!cpus_oversubscribed(n, 0));
    ck_assert(cpus_oversubscribed(n + 1, 0));
    ck_assert(!cpus_oversubscribed(1, 0));
    ck_assert(cpus_oversubscribed(2, 1)); /* the job has one CPU here */
    ck_assert(!cpus_oversubscribed(1, 1));
    ck_assert(cpus_oversubscribed(n + 1, n + 5)); /* more than we may use */
    ck_assert(!cpus_oversubscribed(n, n + 5));
}
END_TEST

START_TEST(timer_slack)
{
    long before = slack_ns();
    ck_assert_int_eq(cpus_set_timer_slack(0), 0); /* 0: left alone */
    ck_assert_int_eq(slack_ns(), before);
    ck_assert_int_eq(cpus_set_timer_slack(-5), 0);
    ck_assert_int_eq(slack_ns(), before);
    ck_assert_int_eq(cpus_set_timer_slack(CPUS_MAX_TIMER_SLACK_US + 1), -EINVAL);
    ck_assert_int_eq(slack_ns(), before);
    ck_assert_int_eq(cpus_set_timer_slack(250), 0);
    ck_assert_int_eq(slack_ns(), 250000);
    ck_assert_int_eq(cpus_set_timer_slack(CPUS_MAX_TIMER_SLACK_US), 0);
    ck_assert_int_eq(slack_ns(), CPUS_MAX_TIMER_SLACK_US * 1000L);
    ck_assert_int_eq(cpus_set_timer_slack(CPUS_DEFAULT_TIMER_SLACK_US), 0);
    ck_assert_int_eq(slack_ns(), 1000000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpus");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, usable_follows_affinity);
    tcase_add_test(tc, oversubscribed_rule);
    tcase_add_test(tc, timer_slack);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
