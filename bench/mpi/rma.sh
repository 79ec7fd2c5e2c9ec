#!/bin/bash
# bench/mpi/rma.sh - one-sided communication inside a node: Loom beside Debian's MPICH
# and Open MPI in the same run, with the same source (rmabench.c) built by each MPI's
# own mpicc.  Two ranks on one node; the figures and their method are in rmabench.c's
# header (put/get latency with a flush, 1 MiB put/get bandwidth, accumulate rate,
# fetch_and_op latency; on a Win_allocate window and on a Win_create window).
#
# Usage: bench/mpi/rma.sh [-r REPS] [BUILDDIR]     (default 3 runs each, ./build)
# Runs interleave the MPIs; each cell is the median of the runs (each run already
# reports its best of 5 repetitions).  Prints the table and writes it to
# bench/results/rma.md (BENCH_OUTDIR to change), with Loom / best peer: for latencies
# < 1 is better, for bandwidths and rates > 1 is better.
# Environment: BENCH_TIMEOUT (seconds per launch, default 300), MPICC_MPICH
# (mpicc.mpich), MPIEXEC_MPICH (mpiexec.mpich), MPICC_OMPI (mpicc.openmpi),
# MPIEXEC_OMPI (mpiexec.openmpi).  Timing only; correctness is the test suite's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=3
while getopts "r:h" c; do
    case $c in
    r) reps=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
bdir=${1:-build}
case "$bdir" in /*) ;; *) bdir=$PWD/$bdir ;; esac
TMO=${BENCH_TIMEOUT:-300}
outdir=${BENCH_OUTDIR:-$top/bench/results}
mkdir -p "$outdir"
tmp=$(mktemp -d /tmp/loom-rmabench.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
exec </dev/null

ompi_root=()
[ "$(id -u)" = 0 ] && ompi_root=(--allow-run-as-root)
mpis=()
"$bdir/mpi/mpicc" -O2 -o "$tmp/loom" "$here/rmabench.c" && mpis+=(loom)
"${MPICC_MPICH:-mpicc.mpich}" -O2 -o "$tmp/mpich" "$here/rmabench.c" 2>/dev/null && mpis+=(mpich)
"${MPICC_OMPI:-mpicc.openmpi}" -O2 -o "$tmp/ompi" "$here/rmabench.c" 2>/dev/null && mpis+=(ompi)

launch() {
    case $1 in
    loom) timeout -k 5 "$TMO" "$bdir/launcher/mpiexec" -n 2 "$tmp/loom" ;;
    mpich) timeout -k 5 "$TMO" "${MPIEXEC_MPICH:-mpiexec.mpich}" -n 2 "$tmp/mpich" ;;
    ompi) timeout -k 5 "$TMO" "${MPIEXEC_OMPI:-mpiexec.openmpi}" "${ompi_root[@]}" \
        --oversubscribe -n 2 "$tmp/ompi" ;;
    esac
}

: >"$tmp/raw"
for ((r = 1; r <= reps; r++)); do
    for m in "${mpis[@]}"; do
        echo "rma.sh: run $r/$reps: $m" >&2
        launch "$m" 2>"$tmp/err.$m" | sed "s/^/$m /" >>"$tmp/raw" ||
            echo "rma.sh: $m failed: $(tail -1 "$tmp/err.$m")" >&2
    done
done

python3 - "$tmp/raw" "$outdir/rma.md" "$(date -u +%F) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import sys, statistics
raw, out, when = sys.argv[1], sys.argv[2], sys.argv[3]
vals = {}
for line in open(raw):
    f = line.split()
    if len(f) == 4:
        vals.setdefault((f[1], f[2]), {}).setdefault(f[0], []).append(float(f[3]))
units = {'put_lat_8': 'us', 'get_lat_8': 'us', 'put_bw_1m': 'MB/s', 'get_bw_1m': 'MB/s',
         'acc_rate': 'M ops/s', 'fop_lat': 'us'}
lower = {'put_lat_8', 'get_lat_8', 'fop_lat'}
rows = ['| window | figure | Loom | MPICH | Open MPI | Loom / best peer |',
        '|---|---|---|---|---|---|']
for (flav, name) in sorted(vals, key=lambda k: (k[0] != 'allocate', list(units).index(k[1]))):
    v = {m: statistics.median(x) for m, x in vals[(flav, name)].items()}
    cell = lambda m: '%.3g' % v[m] if m in v else 'n/a'
    peers = [v[m] for m in ('mpich', 'ompi') if m in v]
    ratio = 'n/a'
    if 'loom' in v and peers:
        b = min(peers) if name in lower else max(peers)
        ratio = '%.2f' % (v['loom'] / b) if b else 'n/a'
    rows.append('| %s | %s (%s) | %s | %s | %s | %s |' % (flav, name, units[name], cell('loom'),
                cell('mpich'), cell('ompi'), ratio))
text = ('# One-sided communication inside a node (bench/mpi/rma.sh)\n\n%s; 2 ranks, medians '
        'of the runs, each the best of 5 repetitions (bench/mpi/rmabench.c).\n\n' % when
        + '\n'.join(rows) + '\n')
open(out, 'w').write(text)
print(text)
PY
