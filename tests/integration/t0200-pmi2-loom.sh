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

# -t: the timing line, with the fence times gathered from every rank; the last-in fence
# is per round the minimum over ranks, so its median cannot exceed rank 0's
run_job -n 8 "$prog" -t -r 5
assert_kvstest 8
line=$(grep -m1 ': timing ranks=8 rounds=5 ' "$out")
f0=$(echo "$line" | sed -n 's/.* fence_median_us=\([0-9]*\).*/\1/p')
fl=$(echo "$line" | sed -n 's/.* fence_last_median_us=\([0-9]*\).*/\1/p')
rd=$(echo "$line" | sed -n 's/.* round_median_us=\([0-9]*\).*/\1/p')
if [ -n "$f0" ] && [ -n "$fl" ] && [ -n "$rd" ] && [ "$fl" -le "$f0" ] && [ "$f0" -le "$rd" ]; then
    ok "timing line: fence_last $fl <= fence $f0 <= round $rd (us)"
else
    fail "timing line wrong or missing: '$line'"
fi

# singleton: no launcher, no PMI_FD
run_cmd env -u PMI_FD -u PMI_RANK -u PMI_SIZE "$prog" -M
assert_kvstest 1

finish
