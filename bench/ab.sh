#!/bin/bash
# bench/ab.sh - one build of Loom against another (before/after a change), interleaved
# in one run on the same machine state: the cost a change adds to the hot paths.
#   lat-shm   MPI ping-pong half round trip between 2 ranks on one node (mpibench lat)
#   lat-tcp   the same forced over TCP on loopback (LOOM_MPI_NETMOD=tcp)
#   fence     PMI-2 fence median and last-in fence of `pmi2_kvstest_slurm -t -r 20`
#             (1000-byte values, every rank reads every key) under each build's
#             mpiexec, N = 16, 64
#   launch    launch-to-exit of `mpiexec -n N pmi2_kvstest_slurm -r 1`, N = 64
# Each cell runs REPS times per build, A and B alternating (A first in odd reps, B first
# in even ones); the table gives per build the median over reps and B/A of the medians
# (< 1: B faster). Peers are not in this table: bench/pmi_launch.sh, bench/mpi/run.sh
# and bench/tcp/run.sh compare Loom with MPICH and Open MPI.
#
# Usage: bench/ab.sh [-r REPS] [-o FILE.md] BUILD_A BUILD_B
#   BUILD_x: a configured and built build directory (launcher/mpiexec, mpi/mpicc,
#   tests/programs/pmi2_kvstest_slurm in it).
# Not part of `make check` (no timed assertions there).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
reps=7
out=
while getopts "r:o:h" c; do
    case $c in
        r) reps=$OPTARG ;;
        o) out=$OPTARG ;;
        *) sed -n '2,21p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,21p' "$0"; exit 2; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for x in A B; do
    d=${!x}
    for f in launcher/mpiexec mpi/mpicc tests/programs/pmi2_kvstest_slurm; do
        [ -x "$d/$f" ] || { echo "ab.sh: $d/$f missing: build it first" >&2; exit 2; }
    done
    "$d/mpi/mpicc" -O2 -o "$tmp/mpibench.$x" "$here/mpi/mpibench.c" ||
        { echo "ab.sh: $d/mpi/mpicc failed" >&2; exit 2; }
done
export LOOM_MPIEXEC_LAUNCHER=fork
raw=$tmp/raw
: >"$raw"

# one measurement: record "cell build value"
lat() { # build netmod
    local d=${!1} env=()
    [ "$2" = tcp ] && env=(LOOM_MPI_NETMOD=tcp LOOM_MPI_TCP_IF=lo)
    env "${env[@]}" timeout 120 "$d/launcher/mpiexec" -n 2 "$tmp/mpibench.$1" -r 5 lat 2>/dev/null |
        awk -v b="$1" -v n="$2" '/^RESULT lat/{print "lat-" n "-" $4 "B", b, $5}' >>"$raw"
}
fence() { # build N
    local d=${!1}
    timeout 120 "$d/launcher/mpiexec" -n "$2" "$d/tests/programs/pmi2_kvstest_slurm" -t -r 20 2>&1 |
        sed -n 's/.*fence_median_us=\([0-9]*\).*fence_last_median_us=\([0-9]*\).*/\1 \2/p' |
        awk -v b="$1" -v n="$2" '{print "fence-" n "-median-us", b, $1; print "fence-" n "-last-in-us", b, $2}' >>"$raw"
}
launch() { # build N
    local d=${!1} t0 t1
    t0=$(date +%s%N)
    timeout 120 "$d/launcher/mpiexec" -n "$2" "$d/tests/programs/pmi2_kvstest_slurm" -r 1 >/dev/null 2>&1 || return
    t1=$(date +%s%N)
    echo "launch-$2-ms $1 $(( (t1 - t0) / 1000000 ))" >>"$raw"
}

for r in $(seq 1 "$reps"); do
    if [ $((r % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
    for x in $order; do lat $x shm; done
    for x in $order; do lat $x tcp; done
    for x in $order; do fence $x 16; done
    for x in $order; do fence $x 64; done
    for x in $order; do launch $x 64; done
    echo "ab.sh: rep $r of $reps done" >&2
done

python3 - "$raw" "$A" "$B" "$reps" >"$tmp/table.md" <<'PY'
import sys, statistics, collections
raw, a, b, reps = sys.argv[1:]
d = collections.defaultdict(lambda: {"A": [], "B": []})
order = []
for line in open(raw):
    cell, x, v = line.split()
    if cell not in d: order.append(cell)
    d[cell][x].append(float(v))
print(f"A = `{a}`, B = `{b}`; {reps} reps each, interleaved; medians [min-max]\n")
print("| cell | A | B | B/A |")
print("|---|---|---|---|")
for c in order:
    va, vb = d[c]["A"], d[c]["B"]
    if not va or not vb:
        print(f"| {c} | {len(va)} runs | {len(vb)} runs | - |"); continue
    ma, mb = statistics.median(va), statistics.median(vb)
    print(f"| {c} | {ma:.3g} [{min(va):.3g}-{max(va):.3g}] | {mb:.3g} [{min(vb):.3g}-{max(vb):.3g}] | {mb/ma:.2f} |")
PY
cat "$tmp/table.md"
[ -z "$out" ] || cp "$tmp/table.md" "$out"
