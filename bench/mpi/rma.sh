#!/bin/bash
# bench/mpi/rma.sh - one-sided communication inside a node (or between two nodes, -N):
# Loom beside Debian's MPICH and Open MPI in the same run, with the same source
# (rmabench.c) built by each MPI's own mpicc.  Two ranks; the figures and their method
# are in rmabench.c's header (put/get latency with a flush, 1 MiB put/get bandwidth,
# accumulate rate, fetch_and_op latency; on a Win_allocate window, a Win_create window
# over calloc memory and a Win_create window over MPI_Alloc_mem memory).
#
# Usage: bench/mpi/rma.sh [-r REPS] [-N] [BUILDDIR]     (default 3 runs each, ./build)
#   -N  two ranks on two nodes: a private Slurm cluster of two network-namespace nodes
#       (lib.sh bench_slurm_start; needs root, Slurm and BUILDDIR built with the plugin),
#       srun -N 2 --ntasks-per-node=1 with --mpi=loom (Loom), --mpi=pmi2 (MPICH) and
#       --mpi=pmix (Open MPI); results in rma-nodes.* instead of rma.*.  The traffic
#       crosses a veth pair and a bridge: TCP in every MPI (Loom's TCP netmod, UCX's
#       TCP transport under MPICH ch4:ucx, Open MPI's osc/pt2pt over its TCP BTL).
#       Open MPI 4.1 runs with OMPI_MCA_osc=pt2pt: left to choose, it fails
#       MPI_Win_allocate with MPI_ERR_WIN between these nodes; in a trial of both forced,
#       osc/pt2pt and osc/ucx were even on latency and bandwidth, and pt2pt far ahead on
#       accumulate (8.7 against 0.015 M ops/s).
# Runs interleave the MPIs; each cell is the median of the runs (each run already
# reports its best of 5 repetitions).  Prints the table and writes it to
# bench/results/rma.md and rma.png (-N: rma-nodes.md, .png; BENCH_OUTDIR to change; raw
# lines in rma_raw.dat, plot panels rma.*.tsv), with Loom / best peer: for latencies < 1
# is better, for bandwidths and rates > 1 is better.  Shared code (build, launch, tables,
# plot): lib.sh, benchlib.py.
# Environment: see lib.sh (BENCH_TIMEOUT, MPICC_MPICH, MPIEXEC_MPICH, MPICC_OMPI,
# MPIEXEC_OMPI).  Timing only; correctness is the test suite's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=3
nodes=1
name=rma
where="inside a node"
while getopts "r:Nh" c; do
    case $c in
    r) reps=$OPTARG ;;
    N) nodes=2 name=rma-nodes where="between two network-namespace nodes" ;;
    *) sed -n '2,27p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
. "$here/lib.sh"
bench_init rmabench "${1:-build}"
bench_build "$here/rmabench.c"
if [ "$nodes" != 1 ]; then
    bench_slurm_start "$nodes"
    bench_ompi_export=OMPI_MCA_osc=pt2pt
fi

: >"$tmp/raw"
for ((r = 1; r <= reps; r++)); do
    for m in "${mpis[@]}"; do
        echo "rma.sh: run $r/$reps: $m" >&2
        bench_launch "$m" 2 2>"$tmp/err.$m" | sed "s/^/$m /" >>"$tmp/raw" ||
            echo "rma.sh: $m failed: $(tail -1 "$tmp/err.$m")" >&2
    done
done

cp "$tmp/raw" "$outdir/${name}_raw.dat"
PYTHONPATH=$here python3 - "$tmp/raw" "$outdir/$name" "$(date -u +%F) $(nproc) CPUs, load $(bench_load)" "$where" "$reps" <<'PY' || exit 1
import os, sys, benchlib as B
raw, base, when, where, reps = sys.argv[1:6]
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
how = ('srun -N 2 --ntasks-per-node=1 (Loom --mpi=loom, MPICH --mpi=pmi2, Open MPI '
       '--mpi=pmix with OMPI_MCA_osc=pt2pt: rma.sh says why); ') if 'nodes' in where else ''
text = ('# One-sided communication %s (bench/mpi/rma.sh%s)\n\n%s; 2 ranks, %smedians '
        'of %s runs, each the best of 5 repetitions (bench/mpi/rmabench.c).  Loom / best '
        'peer: for latencies below 1 is better, for bandwidths and rates above 1.  '
        'Windows: allocate = MPI_Win_allocate; create = MPI_Win_create over calloc '
        'memory; allocmem = MPI_Win_create over MPI_Alloc_mem memory.  '
        'Plot: %s.png.\n\n' % (where, ' -N' if how else '', when, how, reps,
                                os.path.basename(base))
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
on="on one node"
[ "$nodes" = 1 ] || on="on two netns nodes"
bench_plot "$outdir/$name.png" "One-sided communication, 2 ranks $on: Loom vs MPICH vs Open MPI" \
    1x3 "$outdir/$name.lat.tsv" "$outdir/$name.bw.tsv" "$outdir/$name.acc.tsv"
