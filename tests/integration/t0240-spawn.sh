#!/bin/bash
# t0240-spawn.sh - dynamic processes under our mpiexec through Loom's own client
# libraries: PMI2_Job_Spawn (libpmi2) and PMI_Spawn_multiple (libpmi, the PMI-1 wire
# MPICH speaks), two commands with their own appnum, preput pairs in the new job's
# KVS, the job ending only when the spawned job ended; then hostile requests (counts
# past the wire bounds, past mpiexec's budget, a program that does not exist): each
# refused with a message, and the job goes on; a failing spawner takes the spawned
# job with it.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_spawn pmi1_spawn

for p in pmi2_spawn pmi1_spawn; do
    run_job -t 60 -n 2 "$LOOM_PROGDIR/$p" parent 3
    assert_rc 0 "$p: parent of 2 ranks spawns 1 + 2 processes"
    assert_grep -x "pmi_spawn: parent spawned 3 OK" "$out" "$p: spawn answered with a job id and zero error codes"
    assert_grep -x "pmi_spawn: child appnum 0 of 3 OK" "$out" "$p: the first command's child saw spawned=1, size, appnum 0, the preput pairs and its own KVS"
    assert_grep -x "pmi_spawn: child appnum 1 of 3 OK" "$out" "$p: the second command's children saw appnum 1"
    assert_no_grep "mpiexec:" "$err" "$p: no launcher complaints"

    run_job -t 60 -n 2 "$LOOM_PROGDIR/$p" hostile
    assert_rc 0 "$p: hostile spawns refused, the job goes on to finalize"
    assert_grep -x "pmi_spawn: hostile requests refused OK" "$out" "$p: every hostile spawn failed cleanly"
    assert_grep -E "spawn: (maxprocs|nprocs)=1000000 is not a count in 0..4096" "$err" "$p: the wire bound is named"
    assert_grep "3000 processes asked, 256 of at most 256 left for this job (LOOM_MPIEXEC_MAX_SPAWN_PROCS)" "$err" "$p: the budget is named"
    assert_grep "cannot start rank 0 of spawned job" "$err" "$p: a child that cannot start is named"
done

# a budget smaller than the request: the spawn fails, the parent says so and exits 1
LOOM_MPIEXEC_MAX_SPAWN_PROCS=2 run_job -t 60 -n 1 "$LOOM_PROGDIR/pmi2_spawn" parent 3
assert_rc 1 "spawn past LOOM_MPIEXEC_MAX_SPAWN_PROCS=2 fails"
assert_grep "3 processes asked, 2 of at most 2 left" "$err" "the refusal names the budget"
assert_grep "pmi_spawn: rank 0: spawn failed" "$err" "the parent got rc != 0, not a hang"

# the spawning job fails: the job it spawned ends with it, nothing is left behind
secs=$((7000 + $$ % 900))
run_job -t 60 -n 1 "$LOOM_PROGDIR/pmi2_spawn" orphan $secs
assert_rc 3 "the spawner's exit code is the job's"
assert_grep "ended with the job that spawned it" "$err" "the spawned job was ended by mpiexec"
sleep 1
left=$(pgrep -f "^/bin/sleep $secs\$")
if [ -n "$left" ]; then
    fail "spawned 'sleep $secs' processes outlived the job (pids $left)"
    kill $left
else
    ok "no spawned process outlived the job"
fi

finish
