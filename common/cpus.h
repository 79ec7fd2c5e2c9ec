/* cpus.h - how many CPUs a node's tasks share, and what Loom does for the tasks
 * of a node that has more of them than CPUs.
 *
 * Contract:
 *   cpus_usable() counts the CPUs this process may run on (its affinity mask;
 *   the online CPUs if that fails): the tasks it forks inherit that mask.
 *   cpus_oversubscribed(tasks, node_cpus) is true when `tasks` outnumber
 *   those CPUs, or node_cpus when it is > 0 and smaller (what a resource
 *   manager gave the job on this node).
 *   cpus_set_timer_slack(us) sets the calling process's timer slack
 *   (prctl PR_SET_TIMERSLACK, inherited across fork and execve) to `us`
 *   microseconds; us <= 0 leaves it alone.  Async-signal-safe: one system call,
 *   so a vfork()ed child may call it.  Returns 0 or -errno.
 *
 * Notes:
 *   - Why the slack: waiting loops of the form "check, usleep(100)" (Open MPI's
 *     lazy waits in MPI_Init and MPI_Finalize, many runtimes' progress loops)
 *     wake 10 000 times a second per rank.  On a node with more ranks than
 *     CPUs those wake-ups take the CPU from the ranks the others wait for.  A
 *     slack of 1 ms lets the kernel fire them 10 times less often; a wake-up by
 *     an event (futex wake, data on a socket) is not delayed by it.
 *   - CPUS_DEFAULT_TIMER_SLACK_US is what Loom's launchers give such tasks
 *     unless configured otherwise.
 */
#ifndef LOOM_CPUS_H
#define LOOM_CPUS_H

#include <stdbool.h>

#define CPUS_DEFAULT_TIMER_SLACK_US 1000
#define CPUS_MAX_TIMER_SLACK_US 1000000

int cpus_usable(void);
bool cpus_oversubscribed(int tasks, int node_cpus);
int cpus_set_timer_slack(long us);

#endif
