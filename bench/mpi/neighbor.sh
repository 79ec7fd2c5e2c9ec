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
# Writes bench/results/neighbor.md, neighbor.png (bars.gp), neighbor.tsv and neighbor_raw.dat
# (override the directory with BENCH_OUTDIR) and prints the table; shared code: lib.sh.
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
. "$here/lib.sh"
bench_init nbbench "${1:-build}"
bench_build "$here/neighbor.c"
[[ " ${mpis[*]} " == *" ompi "* ]] && mpis+=(ompi-yield)

load0=$(bench_load)
: >"$tmp/raw"
for ((r = 1; r <= reps; r++)); do
    for m in "${mpis[@]}"; do
        if bench_launch "$m" "$np" "$budget" >"$tmp/out" 2>"$tmp/err"; then
            awk -v m="$m" '$1 == "neighbor_alltoall" { print m, $2, $3 }' "$tmp/out" >>"$tmp/raw"
        else
            echo "neighbor.sh: $m run $r failed:" >&2
            tail -5 "$tmp/out" "$tmp/err" >&2
        fi
    done
done
load1=$(bench_load)

out=$outdir/neighbor.md
cp "$tmp/raw" "$outdir/neighbor_raw.dat"
PYTHONPATH=$here python3 - "$tmp/raw" "$outdir/neighbor" "$np" "$reps" "$budget" "$load0" \
    "$load1" "${mpis[*]}" >"$out" <<'PY' || exit 1
import sys, benchlib as B
raw, base, np_, reps, budget, l0, l1, mpis = sys.argv[1:9]
mpis = mpis.split()
d = B.read_raw(raw, 1)
sizes = sorted(d, key=lambda k: int(k[0]))
lbl = lambda b: "%d B" % b if b < 1024 else "%d KiB" % (b // 1024)
print(f"# MPI_Neighbor_alltoall, {np_} ranks on a periodic 2-D grid (bench/mpi/neighbor.sh)\n")
print(f"Median of {reps} launches (each: the median of 3 timed repetitions of "
      f"{budget} s); microseconds per call, slowest rank.  Load average before/after: "
      f"{l0} / {l1}.  Ratio = other MPI / Loom (above 1: Loom is faster).  "
      f"Plot: neighbor.png (log scale).  Machine: 2 cores shared with other builds, so "
      f"{np_} ranks are oversubscribed; MPICH (ch3/nemesis) busy-polls in every wait, Open MPI "
      f"does too unless mpi_yield_when_idle=1 (ompi-yield), Loom sleeps on a futex when "
      f"oversubscribed.\n")
others = [m for m in mpis if m != 'loom']
rows = []
for k in sizes:
    c = d[k]
    lo = B.med(c.get('loom'))
    rows.append([lbl(int(k[0]))] + [B.cell(c.get(m), "%.1f", spread=False) for m in mpis]
                + [B.ratio(B.med(c.get(m)), lo) for m in others])
print("\n".join(B.table(["block"] + mpis + [f"{m}/loom" for m in others], rows)))
B.panel(base + ".tsv", f"MPI_Neighbor_alltoall, {np_} ranks, 2-D periodic grid (lower is better)",
        "microseconds per call (log)", [B.NAMES[m] for m in mpis],
        [(lbl(int(k[0])).replace(" ", ""), [B.med(d[k].get(m)) for m in mpis]) for k in sizes],
        log=True)
PY
bench_plot "$outdir/neighbor.png" "Loom vs MPICH vs Open MPI: neighbourhood collective" 1x1 \
    "$outdir/neighbor.tsv"
cat "$out"
