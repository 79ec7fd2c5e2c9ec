#!/bin/bash
# scripts/main.sh - install dependencies, build Loom (with its Slurm plugin), and run the
# main job: a real local Slurm cluster (munge, slurmctld, slurmd on loopback, our plugin
# directory first in PluginDir) and `srun --mpi=loom -n 64` of the PMI-2 key-value
# exchange test built against Slurm's own libpmi2 (every rank puts a 1000-byte value,
# fences, reads and checks every other rank's value), then an MPI hello (init, allreduce,
# finalize) built with Debian MPICH, with our own mpicc, and with Debian Open MPI (PMIx),
# each when available. The cluster is torn down afterwards, also on failure.
#
# If the plugin could not be built (no Slurm source), the job runs under our standalone
# `mpiexec -n 64` instead, and says so.
#
# Environment: LOOM_NP (default 64), LOOM_BUILD_DIR (default build), LOOM_SKIP_DEPS=1.
# Exit status: that of the job.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bdir=${LOOM_BUILD_DIR:-build}
np=${LOOM_NP:-64}
exec </dev/null

[ "${LOOM_SKIP_DEPS:-0}" = 1 ] || ./scripts/deps.sh
./scripts/build.sh
bdir=$(cd "$bdir" && pwd)

progs=$bdir/tests/programs
prog=$progs/pmi2_kvstest_slurm
[ -x "$prog" ] || prog=$progs/pmi2_kvstest_loom
[ -x "$prog" ] || { echo "main.sh: the example program was not built" >&2; exit 1; }

timed() { # timed LABEL CMD... : run, print OK/FAILED with the wall time
    local label=$1 start end rc secs
    shift
    echo "main.sh: $*"
    start=$(date +%s.%N)
    set +e
    "$@"
    rc=$?
    set -e
    end=$(date +%s.%N)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
    if [ "$rc" -eq 0 ]; then
        echo "main.sh: OK: $label, launch to exit ${secs}s"
    else
        echo "main.sh: FAILED: $label: exit status $rc after ${secs}s" >&2
    fi
    return "$rc"
}

if [ ! -f "$bdir/plugin/.libs/mpi_loom.so" ]; then
    echo "main.sh: the Slurm plugin was not built (no Slurm source): running under mpiexec" >&2
    timed "$np ranks under mpiexec" timeout -k 5 120 "$bdir/launcher/mpiexec" -n "$np" "$prog"
    exit
fi

# A private cluster in a temporary directory, with a private copy of the plugin.
cdir=$(mktemp -d /tmp/loom-main.XXXXXX)
cleanup() {
    "$top/tests/slurm/cluster.sh" stop "$cdir/cluster" >/dev/null 2>&1 || true
    rm -rf "$cdir"
}
trap cleanup EXIT INT TERM
mkdir -p "$cdir/plugins"
install -m 0755 "$bdir/plugin/.libs/mpi_loom.so" "$cdir/plugins/mpi_loom.so"
eval "$("$top/tests/slurm/cluster.sh" start "$cdir/cluster" -P "$cdir/plugins")"

rc=0
timed "srun --mpi=loom -n $np $(basename "$prog")" \
    timeout -k 5 120 srun --mpi=loom -n "$np" "$prog" || rc=$?
if [ "$rc" -eq 0 ] && [ -x "$progs/mpich_hello" ]; then
    timed "srun --mpi=loom -n $np mpich_hello (Debian MPICH)" \
        timeout -k 5 180 srun --mpi=loom -n "$np" "$progs/mpich_hello" || rc=$?
fi
# the same hello built with our own mpicc (Loom's MPI), and with Debian Open MPI's, which
# wires up through the plugin's PMIx server
if [ "$rc" -eq 0 ] && [ -x "$bdir/mpi/mpicc" ] &&
        "$bdir/mpi/mpicc" -O2 -o "$cdir/loom_hello" tests/mpi/hello.c; then
    timed "srun --mpi=loom -n $np hello (Loom MPI, built with our mpicc)" \
        timeout -k 5 120 srun --mpi=loom -n "$np" "$cdir/loom_hello" || rc=$?
fi
if [ "$rc" -eq 0 ] && command -v mpicc.openmpi >/dev/null 2>&1 &&
        mpicc.openmpi -O2 -o "$cdir/ompi_hello" tests/programs/mpi_hello.c 2>/dev/null; then
    timed "srun --mpi=loom -n $np hello (Debian Open MPI, through PMIx)" \
        timeout -k 5 180 srun --mpi=loom -n "$np" "$cdir/ompi_hello" || rc=$?
fi
exit "$rc"
