#!/bin/bash
# bench/mpi/neighbor.sh - MPI_Neighbor_alltoall on a periodic 2-D Cartesian grid
# (bench/mpi/neighbor.c), Loom against Debian's MPICH and Open MPI in the same run.
#
# Usage: bench/mpi/neighbor.sh [-r REPS] [-n NP] [-b BUDGET] [BUILDDIR]
#   BUILDDIR  Loom build tree (default ./build): BUILDDIR/mpi/mpicc, BUILDDIR/launcher/mpiexec
#   -r REPS   launches of every MPI, interleaved (default 3); the table gives medians
#   -n NP     ranks (default 16: a 4 x 4 grid)
#   -b BUDGET seconds of timed calls per size and repetition inside the program (0.05)
# Launchers: Loom's mpiexec, mpiexec.mpich, mpiexec.openmpi --oversubscribe, and Open MPI
# again with OMPI_MCA_mpi_yield_when_idle=1 ("ompi-yield"): at 16 ranks on 2 cores every
# MPI is oversubscribed, and Open MPI's default busy-polling loses most of its CPU time.
# Writes bench/results/neighbor.md (override with BENCH_OUTDIR) and prints it.
# Not part of `make check`: speed is measured here, never asserted in tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=3
np=16
budget=0.05
while getopts "r:n:b:h" c; do
    case $c in
    r) reps=$OPTARG ;;
    n) np=$OPTARG ;;
    b) budget=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
bdir=${1:-build}
case "$bdir" in /*) ;; *) bdir=$PWD/$bdir ;; esac
TMO=${BENCH_TIMEOUT:-300}
outdir=${BENCH_OUTDIR:-$top/bench/results}
mkdir -p "$outdir"
exec </dev/null
tmp=$(mktemp -d /tmp/loom-nbbench.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

declare -A CC=([loom]=$bdir/mpi/mpicc [mpich]=${MPICC_MPICH:-mpicc.mpich}
               [ompi]=${MPICC_OMPI:-mpicc.openmpi})
mpis=()
for m in loom mpich ompi; do
    if "${CC[$m]}" -O2 -o "$tmp/nb.$m" "$here/neighbor.c" 2>"$tmp/cc.$m.log"; then
        mpis+=("$m")
    else
        echo "neighbor.sh: cannot build with ${CC[$m]}, skipping $m" >&2
    fi
done
[[ " ${mpis[*]} " == *" ompi "* ]] && mpis+=(ompi-yield)
ompi_root=()
[ "$(id -u)" = 0 ] && ompi_root=(--allow-run-as-root)

launch() {
    local m=$1
    case $m in
    loom) timeout -k 5 "$TMO" "$bdir/launcher/mpiexec" -n "$np" "$tmp/nb.loom" "$budget" ;;
    mpich) timeout -k 5 "$TMO" mpiexec.mpich -n "$np" "$tmp/nb.mpich" "$budget" ;;
    ompi) timeout -k 5 "$TMO" mpiexec.openmpi "${ompi_root[@]}" --oversubscribe -n "$np" \
        "$tmp/nb.ompi" "$budget" ;;
    ompi-yield) OMPI_MCA_mpi_yield_when_idle=1 timeout -k 5 "$TMO" mpiexec.openmpi \
        "${ompi_root[@]}" --oversubscribe -x OMPI_MCA_mpi_yield_when_idle -n "$np" \
        "$tmp/nb.ompi" "$budget" ;;
    esac
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= reps; r++)); do
    for m in "${mpis[@]}"; do
        if launch "$m" >"$tmp/out" 2>"$tmp/err"; then
            awk -v m="$m" '$1 == "neighbor_alltoall" { print m, $2, $3 }' "$tmp/out" >>"$tmp/raw"
        else
            echo "neighbor.sh: $m run $r failed:" >&2
            tail -5 "$tmp/out" "$tmp/err" >&2
        fi
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

out=$outdir/neighbor.md
python3 - "$tmp/raw" "$np" "$reps" "$budget" "$load0" "$load1" "${mpis[*]}" >"$out" <<'PY'
import sys, statistics
raw, np_, reps, budget, l0, l1, mpis = sys.argv[1:8]
mpis = mpis.split()
d = {}
for line in open(raw):
    m, b, us = line.split()
    d.setdefault((m, int(b)), []).append(float(us))
sizes = sorted({b for (_, b) in d})
print(f"# MPI_Neighbor_alltoall, {np_} ranks on a periodic 2-D grid (bench/mpi/neighbor.sh)\n")
print(f"Median of {reps} launches (each: the median of 3 timed repetitions of "
      f"{budget} s); microseconds per call, slowest rank.  Load average before/after: "
      f"{l0} / {l1}.  Ratio = other MPI / Loom (above 1: Loom is faster).\n")
others = [m for m in mpis if m != 'loom']
print("| block | " + " | ".join(mpis) + " | " + " | ".join(f"{m}/loom" for m in others) + " |")
print("|---" * (1 + len(mpis) + len(others)) + "|")
med = lambda m, b: statistics.median(d[(m, b)]) if (m, b) in d else None
for b in sizes:
    row = [f"{b} B" if b < 1024 else f"{b // 1024} KiB"]
    for m in mpis:
        v = med(m, b)
        row.append(f"{v:.1f}" if v is not None else "fail")
    lo = med('loom', b)
    for m in others:
        v = med(m, b)
        row.append(f"{v / lo:.2f}" if v is not None and lo else "-")
    print("| " + " | ".join(row) + " |")
PY
cat "$out"
