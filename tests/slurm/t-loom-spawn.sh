#!/bin/sh
# t-loom-spawn.sh - spawn under real srun --mpi=loom, one node.
#
# Usage: t-loom-spawn.sh [BUILDDIR]      (environment: see lib.sh)
# A task's PMI2_Job_Spawn (libpmi2) or PMI_Spawn_multiple (libpmi, MPICH's PMI-1 wire)
# goes from its stepd to srun's spawn server (munge-authenticated), which runs a new
# step with srun (doc/plugin.md, "Spawn"): the children see spawned=1, the preput pairs
# in their KVS and a KVS of their own; the spawner gets rc 0 and the new step's id.
# Two commands become one step (srun --multi-prog) whose ranks see appnum 0 and 1.
# Refusals come back as rc != 0 with the reason, at once, never a hang: past
# LoomSpawnMaxProcs (here the job's LOOM_SPAWN_MAX_PROCS), a command that does not
# exist, hostile counts past the wire's bounds (the server core); the reason is seen in
# the job's PMI trace (LOOM_PMI_TRACE=1).  The cluster has 2 nodes: all cases run in a
# 1-node step but the last, whose spawner (rank 0) runs on the step's second node
# (-m arbitrary), so its stepd is not node 0.  Then an MPI program: Loom's libmpi
# MPI_Comm_spawn (tests/mpi/dyn_spawn.c: 2 children of a 2-rank job, a message each way,
# a merged communicator, disconnect) through the same path, the children connecting
# back to the parent's port over TCP.  Skips (77) without root, Slurm or the plugin.
me=t-loom-spawn
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 2

for p in pmi2_spawn pmi1_spawn; do
    case_ok "$p under --mpi=$mpi: 3 children spawned as a new step, spawned flag and preput seen" \
        "pmi_spawn: child appnum 0 of 3 OK" --mpi="$mpi" -N 1 -n 2 "$prog/$p" single 3
    grep -q "^pmi_spawn: parent spawned 3 OK (new job [0-9]*\.[0-9]*)" "$out.stdout" ||
        grep -q "^pmi_spawn: parent spawned 3 OK (new job (PMI-1 has none))" "$out.stdout"
    assert_last "$p: the spawner got rc 0 (and, PMI-2, the new step's id)" \
        "$p: no success line from the spawner"

    case_ok "$p under --mpi=$mpi: two commands (1 + 2 processes) as one new step (--multi-prog)" \
        "pmi_spawn: parent spawned 3 OK" --mpi="$mpi" -N 1 -n 2 "$prog/$p" parent 3
    grep -qx "pmi_spawn: child appnum 0 of 3 OK" "$out.stdout" &&
        grep -qx "pmi_spawn: child appnum 1 of 3 OK" "$out.stdout"
    assert_last "$p: both commands' children saw their appnum (0, 1), spawned flag and preput" \
        "$p: a command's children did not report"

    case_fail "$p past LoomSpawnMaxProcs (LOOM_SPAWN_MAX_PROCS=2): refused with the reason" \
        "at[ _]most[ _]2[ _]in[ _]one[ _]spawn[ _]\\(LoomSpawnMaxProcs\\)" --mpi="$mpi" -N 1 -n 2 \
        --export=ALL,LOOM_PMI_TRACE=1,LOOM_SPAWN_MAX_PROCS=2 "$prog/$p" single 3
    grep -q "pmi_spawn: rank 0: spawn failed" "$out.stderr"
    assert_last "$p: the task got rc != 0 (its own message)" "$p: no failure from the task"

    case_ok "$p hostile under --mpi=$mpi: refused (core bounds, limit, missing command), the step finalizes" \
        "pmi_spawn: hostile requests refused OK" --mpi="$mpi" -N 1 -n 2 \
        --export=ALL,LOOM_PMI_TRACE=1 "$prog/$p" hostile
    grep -q "loom-spawn-test' not found or not executable" "$out.stderr"
    assert_last "$p: the missing command is named in the answer" \
        "$p: no 'not found' answer in the trace"
done

printf 'loom2\nloom1\n' >"$cdir/hosts"
SLURM_HOSTFILE=$cdir/hosts case_ok "pmi2_spawn from rank 0 on node 1 of a 2-node step: children spawned" \
    "pmi_spawn: child appnum 0 of 2 OK" --mpi="$mpi" -n 2 -m arbitrary \
    "$prog/pmi2_spawn" single 2
grep -q "^pmi_spawn: parent spawned 2 OK (new job [0-9]*\.[0-9]*)" "$out.stdout"
assert_last "pmi2_spawn on node 1: the spawner got rc 0 and the new step's id" \
    "pmi2_spawn on node 1: no success line from the spawner"
lmpi=$bdir/mpi
if [ ! -x "$lmpi/dyn_spawn" ] && ! make -C "$lmpi" dyn_spawn >"$cdir/make-mpi.log" 2>&1; then
    tail -n 20 "$cdir/make-mpi.log" | sed 's/^/  make: /'
    echo "FAIL: $me: cannot build dyn_spawn in $lmpi"
    nfail=$((nfail + 1))
else
    case_ok "libmpi MPI_Comm_spawn under --mpi=$mpi: 2 children as a new step, messages both ways" \
        "No Errors" --mpi="$mpi" -N 1 -n 2 "$lmpi/dyn_spawn"
fi
finish
