# bench/autogroup.sh - sourced by the Slurm benches (slurm_pmi.sh, pmix.sh): the kernel's
# autogroup scheduling is turned off for the run and restored on exit.
#
# Why: the "4 nodes" of these benches are four slurmd sharing one kernel.  Every
# slurmstepd starts its tasks in a session of its own, and with autogroup
# (kernel.sched_autogroup_enabled=1, Debian's default) the scheduler first shares the
# CPUs between sessions: a node's PMI thread, woken by a message from another node, then
# waits for its whole node's turn (perf sched timehist: 17-33 ms on the run queue, with
# the node's ranks idle), a coupling between nodes that real nodes, each with CPUs of its
# own, do not have.  With autogroup off every thread competes on its own, for Loom and
# Slurm's plugins alike.  One node is one session either way.
#
# autogroup_off: writes 0 if it can, keeping the old value in autogroup_was ("" if it
# could not); autogroup_restore: puts it back; autogroup_note: one line for the report.
autogroup_f=/proc/sys/kernel/sched_autogroup_enabled
autogroup_was=

autogroup_off() {
    [ -w "$autogroup_f" ] || return 0
    autogroup_was=$(cat "$autogroup_f" 2>/dev/null) || { autogroup_was=; return 0; }
    echo 0 2>/dev/null >"$autogroup_f" || autogroup_was=
}

autogroup_restore() {
    [ -n "$autogroup_was" ] && echo "$autogroup_was" 2>/dev/null >"$autogroup_f"
    autogroup_was=
}

autogroup_note() {
    if [ -n "$autogroup_was" ]; then
        echo "Autogroup scheduling off during the run (it was $autogroup_was: see bench/autogroup.sh)."
    else
        echo "Autogroup scheduling as the machine has it ($(cat "$autogroup_f" 2>/dev/null || echo unknown))."
    fi
}
