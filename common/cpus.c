/* cpus.c - CPUs usable by a node's tasks, oversubscription, and the tasks'
 * timer slack (contract in cpus.h). */
#define _GNU_SOURCE
#include "cpus.h"

#include <errno.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

int cpus_usable(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

bool cpus_oversubscribed(int tasks, int node_cpus)
{
    int cpus = cpus_usable();

    if (node_cpus > 0 && node_cpus < cpus)
        cpus = node_cpus;
    return tasks > cpus;
}

int cpus_set_timer_slack(long us)
{
    if (us <= 0)
        return 0;
    if (us > CPUS_MAX_TIMER_SLACK_US)
        return -EINVAL;
    return prctl(PR_SET_TIMERSLACK, (unsigned long)us * 1000UL, 0, 0, 0) < 0 ? -errno : 0;
}
