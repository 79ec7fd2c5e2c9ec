#!/bin/bash
# t0210-pmi1.sh - our libpmi (PMI-1 API and wire protocol) under our mpiexec at 1, 2,
# 16 and 64 ranks, and as a singleton.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi1_kvstest
prog=$LOOM_PROGDIR/pmi1_kvstest

sizes="1 2 16 64"
[ "$LOOM_TEST_QUICK" = 1 ] && sizes="1 16"
for n in $sizes; do
    run_job -n "$n" "$prog"
    assert_kvstest "$n"
done

run_cmd env -u PMI_FD -u PMI_RANK -u PMI_SIZE "$prog" -M
assert_kvstest 1

finish
