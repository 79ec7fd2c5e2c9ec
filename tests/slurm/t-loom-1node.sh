#!/bin/sh
# t-loom-1node.sh - the interoperability matrix under real srun --mpi=loom, one node.
#
# Usage: t-loom-1node.sh [BUILDDIR]      (environment: see lib.sh)
# Starts a private one-node cluster (cluster.sh -N 1, our plugin directory first in
# PluginDir) and runs, each bounded by a timeout and checked for exit 0 and the
# program's OK line: Debian MPICH hello (-n 4, 64) and ring (-n 8); the PMI-2 test
# client linked with Slurm's libpmi2 (-n 16, 64); ours with our libpmi2 (-n 16, 64) and
# our libpmi (PMI-1 wire, -n 16) -- all under --mpi=loom; and our two clients under
# Slurm's own --mpi=pmi2 on the same cluster. Skips (77) without root, Slurm or the
# plugin (configure --with-slurm-source); LOOM_SLURM_MPI=pmi2 runs the matrix under
# Slurm's plugin instead (a check of the test itself).
# Then the nice value of the stepd thread that serves PMI (LoomAgentNice, -10 by default):
# seen from a task as the distinct nice values of its slurmstepd's threads, the task's own
# staying 0; LOOM_AGENT_NICE=5 in the job env makes it nicer, =-15 is refused (a job may
# not raise its priority); mpi.conf LoomAgentNice=0 shows in scontrol show config and
# leaves every stepd thread at 0, LoomAgentNice=-5 puts the agent at -5.
# Then slurmstepd's descriptor table: grown in init() (loom_setup_stepd_early).
# Then the tasks' timer slack: 1 ms (LoomTimerSlack) when the step has more tasks than
# CPUs on the node, what they inherit otherwise; LOOM_TIMER_SLACK=US in the job env sets
# it (0: left alone; out of range: refused), and so does mpi.conf LoomTimerSlack.
me=t-loom-1node
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 1
matrix_node1

if [ "$mpi" = loom ]; then
    # "stepd=<distinct nice values of the stepd's threads> task=<this task's nice>"
    nices='echo "stepd=$(for t in /proc/$PPID/task/*/stat; do cut -d" " -f19 "$t"; done |
        sort -n | uniq | tr "\n" " ")task=$(cut -d" " -f19 /proc/$$/stat)"'
    case_ok "the PMI agent thread runs at nice -10, the tasks at 0" "stepd=-10 0 task=0" \
        --mpi="$mpi" -N 1 -n 2 sh -c "$nices"
    case_ok "LOOM_AGENT_NICE=5: the agent at 5" "stepd=0 5 task=0" \
        --mpi="$mpi" -N 1 -n 2 --export=ALL,LOOM_AGENT_NICE=5 sh -c "$nices"
    case_ok "LOOM_AGENT_NICE=-15 is refused: the agent stays at -10" "stepd=-10 0 task=0" \
        --mpi="$mpi" -N 1 -n 2 --export=ALL,LOOM_AGENT_NICE=-15 sh -c "$nices"
    conf_shows "scontrol show config: LoomAgentNice = -10 by default" LoomAgentNice -10
    mpi_conf_set "LoomAgentNice=0"
    conf_shows "scontrol show config: LoomAgentNice = 0 after mpi.conf LoomAgentNice=0" \
        LoomAgentNice 0
    case_ok "mpi.conf LoomAgentNice=0: every stepd thread at 0" "stepd=0 task=0" \
        --mpi="$mpi" -N 1 -n 2 sh -c "$nices"
    # slurmd ships mpi.conf's numbers to the stepd as 32-bit unsigned: a negative
    # value must still arrive as itself, not as 4294967291 (refused, default used)
    mpi_conf_set "LoomAgentNice=-5"
    conf_shows "scontrol show config: LoomAgentNice = -5 after mpi.conf LoomAgentNice=-5" \
        LoomAgentNice -5
    case_ok "mpi.conf LoomAgentNice=-5: the agent at -5" "stepd=-5 0 task=0" \
        --mpi="$mpi" -N 1 -n 2 sh -c "$nices"
    # ...but a value beyond 32 bits is out of range, not wrapped (4294967301 -> 5)
    mpi_conf_set "LoomAgentNice=4294967301"
    conf_shows "scontrol show config: LoomAgentNice=4294967301 is refused, -10 stays" \
        LoomAgentNice -10

    # The stepd's descriptor table was grown in init(), while slurmstepd had one thread
    # (later it waits for an RCU grace period): FDSize of the task's parent, the stepd,
    # is 4096 or more (or reaches its open-files limit). Prefork alone grows it to 128.
    fdtab='lim=$(awk "/^Max open files/ { print \$4 }" /proc/$PPID/limits)
        fds=$(awk "/^FDSize:/ { print \$2 }" /proc/$PPID/status)
        if [ "$fds" -ge 4096 ] || [ "$fds" -ge "$lim" ]; then echo fdtable=early
        else echo "fdtable=$fds (limit $lim)"; fi'
    case_ok "slurmstepd's descriptor table is grown in init(), before its threads" \
        "fdtable=early" --mpi="$mpi" -N 1 -n 2 sh -c "$fdtab"

    # slack_is NAME WANT SRUN_ARGS...: every task prints the same line, "slack=WANT"
    slack='echo "slack=$(cat /proc/$$/timerslack_ns)"'
    slack_is() {
        _n=$1 _w=slack=$2
        shift 2
        run_srun "$@" sh -c "$slack"
        [ $rc -eq 0 ] && [ "$(sort -u "$out.stdout")" = "$_w" ]
        assert_last "$_n" "$_n: the tasks did not all print '$_w' (exit code $rc)"
    }
    inherited=$(cat /proc/self/timerslack_ns)
    over=$(($(nproc) + 1))
    conf_shows "scontrol show config: LoomTimerSlack = 1000 by default" LoomTimerSlack 1000
    slack_is "$over tasks on $(nproc) CPUs: timer slack 1 ms" 1000000 --mpi="$mpi" -N 1 -n "$over"
    slack_is "1 task: the timer slack it inherits" "$inherited" --mpi="$mpi" -N 1 -n 1
    slack_is "LOOM_TIMER_SLACK=300: 300 us" 300000 --mpi="$mpi" -N 1 -n "$over" \
        --export=ALL,LOOM_TIMER_SLACK=300
    slack_is "LOOM_TIMER_SLACK=0: left alone" "$inherited" --mpi="$mpi" -N 1 -n "$over" \
        --export=ALL,LOOM_TIMER_SLACK=0
    slack_is "LOOM_TIMER_SLACK=2000000 is refused: 1 ms" 1000000 --mpi="$mpi" -N 1 -n "$over" \
        --export=ALL,LOOM_TIMER_SLACK=2000000
    mpi_conf_set "LoomTimerSlack=3000"
    conf_shows "scontrol show config: LoomTimerSlack = 3000 after mpi.conf" LoomTimerSlack 3000
    slack_is "mpi.conf LoomTimerSlack=3000: 3 ms" 3000000 --mpi="$mpi" -N 1 -n "$over"
fi
finish
