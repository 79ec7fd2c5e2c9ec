#!/bin/bash
# t0500-slurm-pmi2.sh - our clients against Slurm's own PMI-2 server: runs
# tests/slurm/t-slurm-pmi2-clients.sh (a private two-node Slurm cluster on loopback,
# `srun --mpi=pmi2` of pmi2_kvstest_slurm/_loom and pmi1_kvstest at up to 64 ranks, and
# MPICH hello) and passes its verdict on; skips without root or Slurm daemons.
. "$(dirname "$0")/lib.sh"
script=$LOOM_SRCDIR/tests/slurm/t-slurm-pmi2-clients.sh
[ -f "$script" ] || skip "$script not found"
for c in srun slurmd slurmctld; do
    command -v "$c" >/dev/null 2>&1 || skip "$c not installed (packages slurmd slurmctld slurm-client)"
done

run_cmd -t 400 sh "$script" "$LOOM_BUILDDIR"
sed 's/^/    | /' "$out" "$err"
if [ "$rc" -eq 77 ]; then
    skip "$(grep -m1 '^SKIP' "$out")"
fi
assert_rc 0 "t-slurm-pmi2-clients.sh"
assert_no_grep -E '^FAIL' "$out" "no failed case"
assert_grep -E '^t-slurm-pmi2-clients: [1-9][0-9]* passed, 0 failed' "$out" "cases passed"
finish
