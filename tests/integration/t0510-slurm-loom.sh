#!/bin/bash
# t0510-slurm-loom.sh - the Slurm plugin under real srun: runs every
# tests/slurm/t-loom-*.sh (private clusters of 1 node, 4 slurmd, 4 network-namespace
# nodes; the interoperability matrix, failures, sbatch, the pmi2 drop-in, mpiexec inside
# an allocation) and passes their verdicts on. Skips when the plugin was not built or
# the machine cannot run Slurm daemons (each script says why).
. "$(dirname "$0")/lib.sh"
for c in srun slurmd slurmctld; do
    command -v "$c" >/dev/null 2>&1 || skip "$c not installed (packages slurmd slurmctld slurm-client)"
done
[ -f "$LOOM_BUILDDIR/plugin/.libs/mpi_loom.so" ] ||
    skip "the Slurm plugin was not built (configure --with-slurm-source=DIR)"

# t-loom-mpiexec.sh checks that mpiexec goes through srun inside an allocation.
unset LOOM_MPIEXEC_LAUNCHER
ran=0
for script in "$LOOM_SRCDIR"/tests/slurm/t-loom-*.sh; do
    name=$(basename "$script" .sh)
    run_cmd -t 600 bash "$script" "$LOOM_BUILDDIR"
    sed "s/^/    $name | /" "$out" "$err"
    if [ "$rc" -eq 77 ]; then
        echo "# $name skipped: $(grep -m1 '^SKIP' "$out")"
        continue
    fi
    ran=$((ran + 1))
    assert_rc 0 "$name"
    assert_no_grep -E '^FAIL' "$out" "$name: no failed case"
done
[ "$ran" -gt 0 ] || skip "every tests/slurm/t-loom-*.sh skipped"
finish
