#!/bin/sh
# t-loom-failure.sh - broken jobs under srun --mpi=loom end promptly and say who broke them.
#
# Usage: t-loom-failure.sh [BUILDDIR]    (environment: see lib.sh)
# On a private four-node cluster (four slurmd on this host) runs pmi_misbehave (our
# libpmi2) under --mpi=loom, on one node (-N 1 -n 4) and across nodes (-N 4 -n 8
# cyclic, so rank 1 is on another node than rank 0):
#   abort              rank 1 calls PMI2_Abort while the others wait in a fence
#   die-before-fence   rank 1 exits right after init while the others fence
#   garbage            rank 1 writes garbage on its PMI socket
#   no-finalize        rank 1 exits 0 without PMI finalize while the others fence again
# and pmi_misbehave_slurm (Slurm's libpmi2) for abort. Each must end with a non-zero
# srun exit code well before the per-case timeout (T_TIMEOUT, default 40 s here; a
# step still running then is a hang, a FAIL) and srun's stderr must name rank 1 in a
# line of the plugin (mpi/loom ... rank 1). mpi.conf sets LoomFenceTimeout=20 so that
# the timeout is only the last resort.
# LOOM_SLURM_MPI=pmi2 runs the same cases under Slurm's plugin (then the stderr check is
# Slurm's own "task 1"; Slurm may hang on some: a check of the test, not of Loom).
me=t-loom-failure
T_TIMEOUT=${T_TIMEOUT:-40}
. "$(dirname "$0")/lib.sh"
need_plugin
printf 'LoomFenceTimeout=20\n' >"$cdir/mpi.conf.in"
start_cluster -N 4

if [ "$mpi" = loom ]; then
    ere='mpi/loom[^ ]*: .*rank 1([^0-9]|$)'
else
    ere='task 1([^0-9]|$)'
fi
for sc in abort die-before-fence garbage no-finalize; do
    case_fail "pmi_misbehave $sc, --mpi=$mpi -N 1 -n 4" "$ere" \
        --mpi="$mpi" -N 1 -n 4 "$prog/pmi_misbehave" $sc
    case_fail "pmi_misbehave $sc, --mpi=$mpi -N 4 -n 8 cyclic" "$ere" \
        --mpi="$mpi" -N 4 -n 8 -m cyclic "$prog/pmi_misbehave" $sc
done
if [ -x "$prog/pmi_misbehave_slurm" ]; then
    case_fail "pmi_misbehave_slurm abort (Slurm libpmi2), --mpi=$mpi -N 4 -n 8" "$ere" \
        --mpi="$mpi" -N 4 -n 8 -m cyclic "$prog/pmi_misbehave_slurm" abort
else
    skip_case "pmi_misbehave_slurm abort" "not built (libpmi2-0-dev)"
fi
# The cluster is still usable afterwards: no step left hanging on a node.
case_ok "a good step after the failures, --mpi=$mpi -N 4 -n 8" \
    "pmi2_kvstest: 8 ranks, 3 rounds OK" --mpi="$mpi" -N 4 -n 8 "$prog/pmi2_kvstest_loom" -r 3
finish
