#!/bin/bash
# t0200-pmi2-loom.sh - our libpmi2 under our mpiexec: key exchange with fences at
# 1, 2, 16, 64 and 256 ranks, and as a singleton (no PMI server: rank 0 of 1).
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom
prog=$LOOM_PROGDIR/pmi2_kvstest_loom

sizes="1 2 16 64"
[ "$LOOM_TEST_QUICK" = 1 ] && sizes="1 16"
for n in $sizes; do
    run_job -n "$n" "$prog"
    assert_kvstest "$n"
done

# scale: 256 ranks on this machine, one round
if [ "$LOOM_TEST_QUICK" != 1 ]; then
    run_job -t 120 -n 256 "$prog" -r 1
    assert_kvstest 256
fi

# singleton: no launcher, no PMI_FD
run_cmd env -u PMI_FD -u PMI_RANK -u PMI_SIZE "$prog" -M
assert_kvstest 1

finish
