#!/bin/bash
# t0230-mixed.sh - one job mixing clients: PMI-1 (our libpmi), PMI-2 (our libpmi2) and
# PMI-2 (Slurm's libpmi2) ranks exchange keys through the same fences (MPMD).
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi1_kvstest pmi2_kvstest_loom
p1=$LOOM_PROGDIR/pmi1_kvstest
p2=$LOOM_PROGDIR/pmi2_kvstest_loom
ps=$LOOM_PROGDIR/pmi2_kvstest_slurm

run_job -n 3 "$p1" : -n 3 "$p2"
assert_rc 0 "PMI-1 and PMI-2 ranks in one job"
assert_grep -E "kvstest: 6 ranks, [0-9]+ rounds OK" "$out" "mixed job of 6 ranks reports OK"

if [ -x "$ps" ]; then
    run_job -n 2 "$p1" : -n 2 "$p2" : -n 2 "$ps"
    assert_rc 0 "PMI-1, our PMI-2 and Slurm's PMI-2 in one job"
    assert_grep -E "kvstest: 6 ranks, [0-9]+ rounds OK" "$out" "three-client job reports OK"
fi

finish
