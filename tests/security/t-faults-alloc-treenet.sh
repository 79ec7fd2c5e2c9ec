#!/bin/bash
# t-faults-alloc-treenet.sh - allocation failures in treenet (rendezvous server and
# client, tree links) during a 7-node tree job in one process (faults_treenet).
#
# Holds when: with the Nth allocation failing (N over 1..20 and ~40 points up to the
# job's total, and all allocations from a few N on), every run ends with "7 nodes OK" or
# exit 1 with the failing node's reason on stderr: never a crash or a hang (the job
# bounds itself at 40 s, the test at 45 s, above it).  Plus: accept() failing with EMFILE (once,
# and 5 times in a row) is absorbed: the children retry and the job succeeds or fails
# clearly.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/faults_lib.sh"
need_faults
tool=$LOOM_SECDIR/faults_treenet
[ -x "$tool" ] || skip "faults_treenet not built ($tool)"
good='faults_treenet: 7 nodes OK'

fault_run 45 LOOM_FAULT_PROC=faults_treenet -- "$tool" 7 none
fault_ok "no fault (baseline)" "$good"
[ "$verdict" = "exit 0" ] || { fail "the baseline must succeed"; finish; }
total=$(fault_total malloc)
say "the job made ${total:-?} allocations"
for n in $(sweep_points "${total:-0}"); do
    fault_run 45 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_MALLOC="$n" -- "$tool" 7 none
    fault_ok "allocation $n of $total fails" "$good"
done
for n in 1 $((total / 3)) $((total * 2 / 3)); do
    [ "$n" -ge 1 ] || continue
    fault_run 45 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_MALLOC="$n:0" -- "$tool" 7 none
    fault_ok "allocations $n.. all fail" "$good"
done
for spec in 1 3 1:5; do
    fault_run 45 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_ACCEPT="$spec" -- "$tool" 7 none
    fault_ok "accept $spec fails with EMFILE" "$good"
    if [ "$verdict" = "exit 0" ]; then
        ok "EMFILE on accept $spec: the job still completed"
    fi
done
finish
