#!/bin/bash
# bench/mpi/rma.sh - one-sided communication inside a node: Loom beside Debian's MPICH
# and Open MPI in the same run, with the same source (rmabench.c) built by each MPI's
# own mpicc.  Two ranks on one node; the figures and their method are in rmabench.c's
# header (put/get latency with a flush, 1 MiB put/get bandwidth, accumulate rate,
# fetch_and_op latency; on a Win_allocate window, a Win_create window over calloc
# memory and a Win_create window over MPI_Alloc_mem memory).
#
# Usage: bench/mpi/rma.sh [-r REPS] [BUILDDIR]     (default 3 runs each, ./build)
# Runs interleave the MPIs; each cell is the median of the runs (each run already
# reports its best of 5 repetitions).  Prints the table and writes it to
# bench/results/rma.md and rma.png (BENCH_OUTDIR to change; raw lines in rma_raw.dat, plot
# panels rma.*.tsv), with Loom / best peer: for latencies < 1 is better, for bandwidths and
# rates > 1 is better.  Shared code (build, launch, tables, plot): lib.sh, benchlib.py.
# Environment: see lib.sh (BENCH_TIMEOUT, MPICC_MPICH, MPIEXEC_MPICH, MPICC_OMPI,
# MPIEXEC_OMPI).  Timing only; correctness is the test suite's.
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
. "$here/lib.sh"
bench_init rmabench "${1:-build}"
bench_build "$here/rmabench.c"

: >"$tmp/raw"
for ((r = 1; r <= reps; r++)); do
    for m in "${mpis[@]}"; do
        echo "rma.sh: run $r/$reps: $m" >&2
        bench_launch "$m" 2 2>"$tmp/err.$m" | sed "s/^/$m /" >>"$tmp/raw" ||
            echo "rma.sh: $m failed: $(tail -1 "$tmp/err.$m")" >&2
    done
done

cp "$tmp/raw" "$outdir/rma_raw.dat"
PYTHONPATH=$here python3 - "$tmp/raw" "$outdir/rma" "$(date -u +%F) $(nproc) CPUs, load $(bench_load)" <<'PY' || exit 1
import sys, benchlib as B
raw, base, when = sys.argv[1], sys.argv[2], sys.argv[3]
d = B.read_raw(raw, 2)  # (flavour, figure) -> mpi -> [values]
units = {'put_lat_8': 'us', 'get_lat_8': 'us', 'put_bw_1m': 'MB/s', 'get_bw_1m': 'MB/s',
         'acc_rate': 'M ops/s', 'fop_lat': 'us'}
lower = {'put_lat_8', 'get_lat_8', 'fop_lat'}
keys = sorted((k for k in d if k[1] in units), key=lambda k: (['allocate', 'create', 'allocmem'].index(k[0]) if k[0] in ('allocate', 'create', 'allocmem') else 9, list(units).index(k[1])))
rows = []
for flav, name in keys:
    v = {m: B.med(x) for m, x in d[(flav, name)].items()}
    peers = [v[m] for m in ('mpich', 'ompi') if m in v]
    best = (min(peers) if name in lower else max(peers)) if peers else None
    rows.append([flav, '%s (%s)' % (name, units[name])] +
                ['%.3g' % v[m] if m in v else 'n/a' for m in ('loom', 'mpich', 'ompi')] +
                [B.ratio(v.get('loom'), best)])
text = ('# One-sided communication inside a node (bench/mpi/rma.sh)\n\n%s; 2 ranks, medians '
        'of the runs, each the best of 5 repetitions (bench/mpi/rmabench.c).  Loom / best '
        'peer: for latencies below 1 is better, for bandwidths and rates above 1.  '
        'Windows: allocate = MPI_Win_allocate; create = MPI_Win_create over calloc '
        'memory; allocmem = MPI_Win_create over MPI_Alloc_mem memory.  '
        'Plot: rma.png.\n\n' % when
        + '\n'.join(B.table(['window', 'figure', 'Loom', 'MPICH', 'Open MPI',
                             'Loom / best peer'], rows)) + '\n')
open(base + '.md', 'w').write(text)
print(text)
mp = ('loom', 'mpich', 'ompi')
for tag, names, title, ylabel, log in (
        ('lat', ('put_lat_8', 'get_lat_8', 'fop_lat'), 'Latency: 8-byte put/get + flush, fetch_and_op (lower is better)', 'us (log)', True),
        ('bw', ('put_bw_1m', 'get_bw_1m'), '1 MiB put/get bandwidth (higher is better)', 'MB/s', False),
        ('acc', ('acc_rate',), 'Accumulate rate (higher is better)', 'M ops/s (log)', True)):
    B.panel('%s.%s.tsv' % (base, tag), title, ylabel, [B.NAMES[m] for m in mp],
            [('%s/%s' % (f, n), [B.med(d[(f, n)].get(m)) for m in mp]) for f, n in keys if n in names],
            log=log)
PY
bench_plot "$outdir/rma.png" "One-sided communication, 2 ranks on one node: Loom vs MPICH vs Open MPI" \
    1x3 "$outdir/rma.lat.tsv" "$outdir/rma.bw.tsv" "$outdir/rma.acc.tsv"
