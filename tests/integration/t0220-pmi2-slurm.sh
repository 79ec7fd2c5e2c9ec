#!/bin/bash
# t0220-pmi2-slurm.sh - interop: a PMI-2 client linked against Debian's Slurm libpmi2
# (libpmi2-0-dev) under our mpiexec at 2, 16 and 64 ranks.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_slurm
prog=$LOOM_PROGDIR/pmi2_kvstest_slurm

# make sure it really is Debian Slurm's library that gets loaded, not ours
lib=$(ldd "$prog" | awk '$1 == "libpmi2.so.0" { print $3 }')
pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | cut -d: -f1)
assert_eq "$pkg" libpmi2-0 "package of the libpmi2.so.0 that pmi2_kvstest_slurm loads ($lib)"

sizes="2 16 64"
[ "$LOOM_TEST_QUICK" = 1 ] && sizes="16"
for n in $sizes; do
    run_job -n "$n" "$prog"
    assert_kvstest "$n"
done

finish
