#!/bin/bash
# t0130-mpmd.sh - MPMD `a : b`: ranks are numbered across sections in order, every
# section sees the total size (appnum through PMI: t0131-appnum.sh).
. "$(dirname "$0")/lib.sh"
need_mpiexec

run_job -n 2 sh -c 'echo "A $PMI_RANK $PMI_SIZE"' : -n 3 sh -c 'echo "B $PMI_RANK $PMI_SIZE"' \
    : -np 1 sh -c 'echo "C $PMI_RANK $PMI_SIZE"'
assert_rc 0 "three MPMD sections"
assert_eq "$(sort -k2n "$out" | tr '\n' '|')" "A 0 6|A 1 6|B 2 6|B 3 6|B 4 6|C 5 6|" "rank layout"

finish
