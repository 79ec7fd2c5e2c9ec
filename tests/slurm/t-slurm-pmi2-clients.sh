#!/bin/sh
# t-slurm-pmi2-clients.sh - our PMI clients against Slurm's own server (srun --mpi=pmi2).
#
# Usage: t-slurm-pmi2-clients.sh [BUILDDIR]
#   BUILDDIR (or $LOOM_BUILDDIR) is the top build directory holding tests/programs/;
#   default: the current directory if it has one, else the source tree (in-tree build).
#
# Starts a private two-node Slurm cluster (cluster.sh -N 2, 64 CPUs each, own ports, in a
# temporary directory), then under Debian's `srun --mpi=pmi2` runs, on one node at
# -n 2, 16 and 64, and across both nodes at -n 16 (block and cyclic):
#   pmi2_kvstest_slurm  Slurm's libpmi2 (reference; skipped if not built)
#   pmi2_kvstest_loom   our libpmi2
#   pmi1_kvstest        our libpmi, PMI-1 wire under Slurm's pmi2 plugin (-v 900: Slurm
#                       reads a PMI-1 request with a single read() of <= 1024 bytes)
# each bounded by `timeout`, asserting exit code 0 and the "N ranks, R rounds OK" line;
# and Debian's MPICH hello (mpich_hello, -N 2 -n 4) as a reference for the cluster.
# Prints "PASS: ..."/"FAIL: ..."/"SKIP: ..." lines, exits 0 if all passed, 1 on any
# failure, 77 (skip) only when not root or the Slurm daemons cannot start.
# The cluster is torn down on exit, whatever happens (trap).
#
# Environment: LOOM_SLURM_PLUGINDIR is passed to cluster.sh (extra plugin dir).
#   LOOM_SLURM_MPI  the srun --mpi type to test (default pmi2, Debian's plugin; the
#                   Slurm plugin issue reuses this script for its own).
#   T_TIMEOUT seconds per srun (default 60).
#   LOOM_SLURM_NETNS=1 makes the two nodes network namespaces (cluster.sh --netns).
#   LOOM_SLURM_PREFIX=P runs the Slurm release installed in P (release_env.sh), its
#                   pmi2_kvstest_slurm built against P's libpmi2.

set -u
here=$(cd "$(dirname "$0")" && pwd)
# LOOM_SLURM_PREFIX: which Slurm release (PATH, its libpmi2); see release_env.sh
. "$here/release_env.sh"
me=t-slurm-pmi2-clients
tmo=${T_TIMEOUT:-60}
mpi=${LOOM_SLURM_MPI:-pmi2}

if [ $# -ge 1 ]; then
    bdir=$1
elif [ -n "${LOOM_BUILDDIR:-}" ]; then
    bdir=$LOOM_BUILDDIR
elif [ -d tests/programs ] && [ -f tests/programs/Makefile ]; then
    bdir=.
else
    bdir=$here/../..
fi
prog=$(cd "$bdir/tests/programs" 2>/dev/null && pwd) || {
    echo "FAIL: $me: no tests/programs under build directory '$bdir'"
    exit 1
}

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: $me: needs root to run slurmd"
    exit 77
fi

# Keep an outer allocation (if any) from leaking into our srun.
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done

cdir=$(mktemp -d "${TMPDIR:-/tmp}/loom-slurm.XXXXXX") || exit 1
out=$cdir/out
# With LOOM_SLURM_PREFIX, pmi2_kvstest_slurm is built against that release's libpmi2.
prog=$(slurm_release_programs "$prog" "$cdir") || {
    echo "FAIL: $me: cannot build the Slurm-libpmi2 clients against $LOOM_SLURM_PREFIX"
    rm -rf "$cdir"
    exit 1
}
cleanup() {
    "$here/cluster.sh" stop "$cdir/c" >/dev/null 2>&1
    rm -rf "$cdir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

env_line=$("$here/cluster.sh" start "$cdir/c" -N 2 2>"$cdir/cluster.err")
rc=$?
if [ $rc -ne 0 ]; then
    cat "$cdir/cluster.err" >&2
    echo "SKIP: $me: the Slurm daemons cannot start here (cluster.sh rc=$rc)"
    exit 77
fi
eval "$env_line"

npass=0
nfail=0
nskip=0

# run NAME "SRUN OPTIONS" EXPECTED_LINE PROGRAM ARGS...
run() {
    name=$1 sopts=$2 want=$3
    shift 3
    if [ ! -x "$1" ]; then
        echo "FAIL: $name: $1 not built"
        nfail=$((nfail + 1))
        return
    fi
    t0=$(date +%s)
    # shellcheck disable=SC2086
    timeout -k 5 "$tmo" srun --mpi="$mpi" $sopts "$@" >"$out.stdout" 2>"$out.stderr"
    rc=$?
    dt=$(($(date +%s) - t0))
    if [ $rc -eq 0 ] && grep -qxF "$want" "$out.stdout"; then
        echo "PASS: $name (${dt}s)"
        npass=$((npass + 1))
        return
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="timed out after ${tmo}s"
    elif [ $rc -ne 0 ]; then
        why="exit code $rc"
    else
        why="missing line '$want'"
    fi
    echo "FAIL: $name: $why"
    sed 's/^/  stdout: /' "$out.stdout" | tail -n 5
    sed 's/^/  stderr: /' "$out.stderr" | tail -n 15
    nfail=$((nfail + 1))
}

rounds=3
# cases "SRUN OPTIONS" NTASKS
cases() {
    sopts=$1 n=$2
    if [ -x "$prog/pmi2_kvstest_slurm" ]; then
        run "slurm libpmi2 under srun --mpi=$mpi $sopts" "$sopts" \
            "pmi2_kvstest: $n ranks, $rounds rounds OK" \
            "$prog/pmi2_kvstest_slurm" -r $rounds
    else
        echo "SKIP: slurm libpmi2 $sopts: pmi2_kvstest_slurm not built (no libpmi2-0-dev)"
        nskip=$((nskip + 1))
    fi
    run "loom libpmi2 under srun --mpi=$mpi $sopts" "$sopts" \
        "pmi2_kvstest: $n ranks, $rounds rounds OK" \
        "$prog/pmi2_kvstest_loom" -r $rounds
    run "loom libpmi (PMI-1) under srun --mpi=$mpi $sopts" "$sopts" \
        "pmi1_kvstest: $n ranks, $rounds rounds OK" \
        "$prog/pmi1_kvstest" -r $rounds -v 900
}

for n in 2 16 64; do
    cases "-N 1 -n $n" $n
done
cases "-N 2 -n 16" 16
cases "-N 2 -n 16 -m cyclic" 16

# Reference: Debian's MPICH (PMI-1 wire) under the same plugin, so that a failure above
# can be told apart from a broken cluster.
# Across nodes Debian's MPICH 4.0.2 may hang in MPI_Finalize over UCX TCP (a peer bug):
# preload the finalize shim (mpich_finalize_shim.c) when a C compiler is there.
shimopt=
if command -v cc >/dev/null 2>&1 &&
        cc -shared -fPIC -o "$cdir/shim.so" "$here/mpich_finalize_shim.c" 2>/dev/null; then
    shimopt="--export=ALL,LD_PRELOAD=$cdir/shim.so"
fi
if [ -x "$prog/mpich_hello" ]; then
    run "MPICH hello under srun --mpi=$mpi -N 2 -n 4" "-N 2 -n 4 $shimopt" "hello: 4 ranks OK" \
        "$prog/mpich_hello"
else
    echo "SKIP: MPICH hello: mpich_hello not built (no mpicc.mpich)"
    nskip=$((nskip + 1))
fi

echo "$me: $npass passed, $nfail failed, $nskip skipped"
[ $nfail -eq 0 ]
