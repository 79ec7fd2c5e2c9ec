#!/bin/bash
# t0300-mpich.sh - interop: Debian's MPICH (mpicc.mpich; MPICH speaks PMI-1 on the wire)
# under our mpiexec: hello with an allreduce at 4 ranks, and a 64-rank ring.
. "$(dirname "$0")/lib.sh"
need_mpiexec
command -v mpicc.mpich >/dev/null 2>&1 || skip "mpicc.mpich not installed (package libmpich-dev)"
need_prog mpich_hello mpich_ring

# MPICH spins in its progress engine; many ranks on 2 cores need time, not a hang
run_job -t 120 -n 4 "$LOOM_PROGDIR/mpich_hello"
assert_rc 0 "mpich_hello at 4 ranks"
assert_grep -x "hello: 4 ranks OK" "$out" "rank 0 saw the allreduce sum of 4 ranks"
assert_no_grep -i "error" "$err" "no errors from MPICH"

n=64
[ "$LOOM_TEST_QUICK" = 1 ] && n=8
run_job -t 240 -n $n "$LOOM_PROGDIR/mpich_ring"
assert_rc 0 "mpich_ring at $n ranks"
assert_grep -E -x "ring: $n ranks, [0-9]+ laps OK" "$out" "the token went round $n ranks"
assert_no_grep -i "error" "$err" "no errors from MPICH"

finish
