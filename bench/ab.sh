#!/bin/bash
# bench/ab.sh - one build of Loom against another (before/after a change), interleaved
# in one run on the same machine state: the cost a change adds to the hot paths.
#   p2p       MPI between 2 ranks on one node (mpibench lat bw): ping-pong half round
#             trip (lat-*) and streaming bandwidth (bw-*, MB/s), over shared memory
#             (shm) and forced over TCP on loopback (tcp: LOOM_MPI_NETMOD=tcp)
#   fence     PMI-2 fence median and last-in fence of `pmi2_kvstest_slurm -t -r 20`
#             (1000-byte values, every rank reads every key) under each build's
#             mpiexec, N = 16, 64
#   launch    launch-to-exit of `mpiexec -n N pmi2_kvstest_slurm -r 1`, N = 64
#   hosts     bench/hosts_fence.sh's job: `mpiexec -launcher fork -hosts h0..h3 -ppn 2
#             pmi2_kvstest_loom -t -r 50` (fence, last-in fence, round across proxies)
# Each bench runs its cells REPS times per build, A and B alternating (A first in odd
# reps, B first in even ones), one bench after the other, with the load average noted
# before and after each. The table gives per build the median over reps [min-max],
# B/A of the medians (< 1: B faster for times, B slower for bandwidth) and the spread
# of the per-rep ratios (B/A of the two runs of one rep, quartiles); "noise" when those
# quartiles hold 1. Peers are not in this table: bench/pmi_launch.sh, bench/mpi/run.sh
# and bench/tcp/run.sh compare Loom with MPICH and Open MPI.
#
# Usage: bench/ab.sh [-r REPS] [-b "BENCH..."] [-o FILE.md] BUILD_A BUILD_B
#   BUILD_x: a configured and built build directory (launcher/mpiexec, mpi/mpicc,
#   tests/programs/pmi2_kvstest_{slurm,loom} in it); -b: which benches, default
#   "p2p fence launch hosts"; -o: the table into FILE.md, every value ("cell build value"
#   lines after "#run BENCH REP BUILD") into FILE_raw.dat.
# Not part of `make check` (no timed assertions there).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
reps=7
out=
benches="p2p fence launch hosts"
while getopts "r:b:o:h" c; do
    case $c in
        r) reps=$OPTARG ;;
        b) benches=$OPTARG ;;
        o) out=$OPTARG ;;
        *) sed -n '2,29p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,29p' "$0"; exit 2; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for x in A B; do
    d=${!x}
    for f in launcher/mpiexec mpi/mpicc tests/programs/pmi2_kvstest_slurm \
        tests/programs/pmi2_kvstest_loom; do
        [ -x "$d/$f" ] || { echo "ab.sh: $d/$f missing: build it first" >&2; exit 2; }
    done
    "$d/mpi/mpicc" -O2 -o "$tmp/mpibench.$x" "$here/mpi/mpibench.c" ||
        { echo "ab.sh: $d/mpi/mpicc failed" >&2; exit 2; }
done
export LOOM_MPIEXEC_LAUNCHER=fork
raw=$tmp/raw
: >"$raw"

# one measurement: record "cell build value"
p2p() { # build netmod
    local d=${!1} env=()
    [ "$2" = tcp ] && env=(LOOM_MPI_NETMOD=tcp LOOM_MPI_TCP_IF=lo)
    env "${env[@]}" timeout 120 "$d/launcher/mpiexec" -n 2 "$tmp/mpibench.$1" -r 5 lat bw 2>/dev/null |
        awk -v b="$1" -v n="$2" '/^RESULT (lat|bw) /{print $2 "-" n "-" $4 "B", b, $5}' >>"$raw"
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
hosts() { # build
    local d=${!1}
    timeout 120 "$d/launcher/mpiexec" -launcher fork -hosts h0,h1,h2,h3 -ppn 2 -n 8 \
        "$d/tests/programs/pmi2_kvstest_loom" -t -r 50 </dev/null 2>&1 |
        sed -n 's/.*fence_median_us=\([0-9]*\).*fence_last_median_us=\([0-9]*\).*round_median_us=\([0-9]*\).*/\1 \2 \3/p' |
        awk -v b="$1" '{print "hosts-fence-median-us", b, $1; print "hosts-fence-last-in-us", b, $2
                        print "hosts-round-us", b, $3}' >>"$raw"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

: >"$tmp/load"
for bench in $benches; do
    l0=$(load)
    for r in $(seq 1 "$reps"); do
        if [ $((r % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
        for x in $order; do
            # one line per run: "#run bench rep build", so a cell's values pair up by rep
            echo "#run $bench $r $x" >>"$raw"
            case $bench in
                p2p) p2p "$x" shm; p2p "$x" tcp ;;
                fence) fence "$x" 16; fence "$x" 64 ;;
                launch) launch "$x" 64 ;;
                hosts) hosts "$x" ;;
                *) echo "ab.sh: unknown bench $bench" >&2; exit 2 ;;
            esac
        done
    done
    echo "$bench $l0 -> $(load)" >>"$tmp/load"
    echo "ab.sh: $bench done ($reps reps; load average $l0 -> $(load))" >&2
done

python3 - "$raw" "$A" "$B" "$reps" "$tmp/load" >"$tmp/table.md" <<'PY'
import sys, statistics, collections
raw, a, b, reps, loadf = sys.argv[1:]
d = collections.defaultdict(lambda: {"A": {}, "B": {}})
order = []
rep = 0
for line in open(raw):
    f = line.split()
    if f[0] == "#run":
        rep = int(f[2]); continue
    cell, x, v = f
    if cell not in d: order.append(cell)
    d[cell][x][rep] = float(v)
def q(v, p):
    v = sorted(v); i = p * (len(v) - 1); lo = int(i)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (i - lo)
print(f"A = `{a}`, B = `{b}`; {reps} reps each, interleaved; medians [min-max]; "
      "per-rep B/A: quartiles of the ratios of the two runs of each rep\n")
print("| cell | A | B | B/A | per-rep B/A [q1-q3] | |")
print("|---|---|---|---|---|---|")
for c in order:
    va, vb = list(d[c]["A"].values()), list(d[c]["B"].values())
    if not va or not vb:
        print(f"| {c} | {len(va)} runs | {len(vb)} runs | - | - | |"); continue
    ma, mb = statistics.median(va), statistics.median(vb)
    pr = [d[c]["B"][r] / d[c]["A"][r] for r in d[c]["A"] if r in d[c]["B"] and d[c]["A"][r] > 0]
    q1, q3 = q(pr, 0.25), q(pr, 0.75)
    verdict = "noise" if q1 <= 1 <= q3 else ("B higher" if q1 > 1 else "B lower")
    print(f"| {c} | {ma:.3g} [{min(va):.3g}-{max(va):.3g}] | {mb:.3g} [{min(vb):.3g}-{max(vb):.3g}] "
          f"| {mb/ma:.2f} | {statistics.median(pr):.2f} [{q1:.2f}-{q3:.2f}] | {verdict} |")
print("\nLoad average (1, 5, 15 min) before -> after each bench:\n")
for line in open(loadf):
    print("    " + line.rstrip())
PY
cat "$tmp/table.md"
[ -z "$out" ] || { cp "$tmp/table.md" "$out"; cp "$raw" "${out%.md}_raw.dat"; }
