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
# and pmi_misbehave_slurm (Slurm's libpmi2) for abort. Last, "node gone": the task on
# node 3 SIGKILLs its own slurmstepd while ranks 0-2 fence (pmi2_kvstest_loom); the
# plugin must report the broken link to node 3 on srun's stderr within 30 s (srun itself
# then waits for the dead stepd for ever -- Slurm's behaviour, not the plugin's -- so the
# test ends that step itself). Each must end with a non-zero
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
printf 'LoomFenceTimeout=20\nLoomConnectTimeout=10\n' >"$cdir/mpi.conf.in"
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

# node gone (see above); loom only: Slurm's pmi2 has no such report.
node_gone() {
    _name="node gone: node 3's slurmstepd killed during a fence, --mpi=$mpi -N 4 -n 4"
    # shellcheck disable=SC2016
    timeout -k 5 "$T_TIMEOUT" srun --mpi="$mpi" -N 4 -n 4 sh -c '
        if [ "$SLURM_NODEID" = 3 ]; then
            sleep 2; echo "t-loom-failure: killing slurmstepd $PPID of node 3" >&2
            kill -9 $PPID; exit 0
        fi
        exec "$0" -r 100000' "$prog/pmi2_kvstest_loom" >"$out.stdout" 2>"$out.stderr" </dev/null &
    _pid=$!
    _ere='mpi/loom[^ ]*: .*(link to node 3|node 3)'
    _i=0 _seen=0
    while [ $_i -lt 300 ]; do
        if grep -Eq "$_ere" "$out.stderr"; then _seen=1; break; fi
        kill -0 $_pid 2>/dev/null || break
        sleep 0.1
        _i=$((_i + 1))
    done
    grep -Eq "$_ere" "$out.stderr" && _seen=1
    kill -TERM $_pid 2>/dev/null
    wait $_pid 2>/dev/null
    # The job keeps a dead step on node 3: end it so that teardown is quick.
    _jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | tr '\n' ' ')
    # shellcheck disable=SC2086
    [ -z "$_jobs" ] || timeout 10 scancel $_jobs 2>/dev/null
    if [ $_seen -eq 1 ]; then
        echo "PASS: $_name ($(( _i / 10 )).$(( _i % 10 ))s: $(grep -Em1 "$_ere" "$out.stderr" | cut -c1-110))"
        npass=$((npass + 1))
    else
        echo "FAIL: $_name: no line matching /$_ere/ on srun's stderr within 30 s"
        show_output
        nfail=$((nfail + 1))
    fi
}
if [ "$mpi" = loom ]; then
    node_gone
else
    skip_case "node gone" "only for --mpi=loom"
fi
finish
