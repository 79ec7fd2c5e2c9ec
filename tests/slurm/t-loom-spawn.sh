#!/bin/sh
# t-loom-spawn.sh - spawn under real srun --mpi=loom, one node.
#
# Usage: t-loom-spawn.sh [BUILDDIR]      (environment: see lib.sh)
# The plugin does not start a new step for a spawn yet (doc/plugin.md, "Spawn"): a task's
# PMI2_Job_Spawn (libpmi2) or PMI_Spawn_multiple (libpmi, MPICH's PMI-1 wire) must get
# rc != 0 with the reason at once, never a hang, and the step fails cleanly through the
# program's own exit (the reply's text is seen in the job's PMI trace,
# LOOM_PMI_TRACE=1).  Hostile spawn requests (counts past the wire's bounds) are refused
# by the server core with the same answer path and the step goes on to finalize.
# Skips (77) without root, Slurm or the plugin.
me=t-loom-spawn
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 1

for p in pmi2_spawn pmi1_spawn; do
    case_fail "$p parent under --mpi=$mpi: spawn refused with the reason, no hang" \
        "spawn[ _]is[ _]not[ _]supported[ _]under[ _]srun[ _]--mpi=loom[ _]yet" --mpi="$mpi" -N 1 -n 2 \
        --export=ALL,LOOM_PMI_TRACE=1 "$prog/$p" parent 2
    grep -q "pmi_spawn: rank 0: spawn failed" "$out.stderr"
    assert_last "$p: the task got rc != 0 (its own message)" "$p: no failure from the task"

    case_ok "$p hostile under --mpi=$mpi: refused, the step finalizes" \
        "pmi_spawn: hostile requests refused OK" --mpi="$mpi" -N 1 -n 2 "$prog/$p" hostile
done
finish
