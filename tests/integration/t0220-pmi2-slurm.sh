#!/bin/bash
# t0220-pmi2-slurm.sh - interop: a PMI-2 client linked against Debian's Slurm libpmi2
# (libpmi2-0-dev) under our mpiexec at 2, 16 and 64 ranks.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_slurm
prog=$LOOM_PROGDIR/pmi2_kvstest_slurm

# make sure it really is Slurm's library that gets loaded, not ours
if ! ldd "$prog" | grep -q 'libpmi2\.so\.0 => /usr/lib'; then
    fail "pmi2_kvstest_slurm does not load Debian's libpmi2: $(ldd "$prog" | grep pmi2)"
fi

sizes="2 16 64"
[ "$LOOM_TEST_QUICK" = 1 ] && sizes="16"
for n in $sizes; do
    run_job -n "$n" "$prog"
    assert_kvstest "$n"
done

finish
