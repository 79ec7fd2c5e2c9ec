#!/bin/bash
# bench/mpi/run.sh - Loom's MPI library against Debian's MPICH and Open MPI, side by side
# in one run, with the same benchmark source (mpibench.c, hello.c) compiled by each
# MPI's own mpicc into a temporary directory.
#
# Usage: bench/mpi/run.sh [-r REPS] [-q] [-S] [-n NAME] [-j JOBS] [BUILDDIR]
#   BUILDDIR  Loom build tree (default ./build): BUILDDIR/mpi/mpicc, BUILDDIR/launcher/mpiexec
#   -r REPS   runs of every cell, interleaving the MPIs (default 5); tables give medians
#   -q        quick smoke test of the script: 1 run, short time budget
#   -S        skip the Slurm part even when it could run
#   -n NAME   results in bench/results/NAME.md, NAME_bench.png, NAME_raw.dat and the
#             plot data NAME_{lat,bw,coll,big,hello}.tsv (default mpi)
#   -j JOBS   only these mpibench jobs (comma-separated names from the list below), no
#             hello and no Slurm part (e.g. -j big8 for the large collectives alone)
#
# What runs (every launch is one job of mpibench running several tests):
#   p2p    2 ranks: ping-pong latency 0 B..1 MiB, streaming bandwidth 64 KiB..4 MiB
#   coll2  2 ranks: Allreduce 8 B/64 KiB, Barrier, Bcast 8 B/64 KiB
#   coll8  8 ranks (oversubscribed on 2 cores): Allreduce 8 B/64 KiB, Barrier
#   coll64 64 ranks: Barrier, Allreduce 8 B/64 KiB
#   big8   8 ranks: Allreduce, Reduce_scatter_block, Allgather, Reduce, Bcast at
#          4 KiB, 16 KiB, 64 KiB, 256 KiB and 1 MiB
#   hello  launch-to-exit of hello (MPI_Init + MPI_Allreduce + MPI_Finalize), N = 8, 64
# Loom runs under BUILDDIR/launcher/mpiexec, MPICH under mpiexec.hydra, Open MPI under
# mpirun --oversubscribe, and for the oversubscribed jobs also with
# OMPI_MCA_mpi_yield_when_idle=1 ("ompi-yield").
# Slurm part (optional): when SLURM_CONF names a running cluster that has mpi/loom, or
# when LOOM_SLURM_PLUGINDIR holds mpi_loom.so (a private cluster is then started with
# tests/slurm/cluster.sh and stopped at the end): hello at N = 64 under
# `srun --mpi=loom` (Loom), `--mpi=pmi2` (MPICH), `--mpi=pmix` (Open MPI) and the floor
# `srun --mpi=none /bin/true`. With LOOM_SLURM_BUILD_DIR (a Loom build configured
# `--with-pm=none --with-pmi=slurm`), Loom's hello built by that mpicc also runs under
# Debian's own `srun --mpi=pmi2` (row "Loom built --with-pmi=slurm").
#
# Environment: BENCH_TIMEOUT (seconds per launch, default 120), BENCH_BUDGET (seconds
# per repetition of one case inside mpibench, default 0.02), HYDRA (mpiexec.hydra),
# OMPI_RUN (mpirun), MPICC_MPICH (mpicc.mpich), MPICC_OMPI (mpicc.openmpi).
# A cell that fails or times out is recorded as such and not repeated; a launch slower
# than BENCH_SLOW seconds (default 30) is not repeated either (the spinning peers at 64
# ranks), so one full run stays within about 15 minutes on 2 cores.
# Not part of `make check`: speed is measured here, never asserted in tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=5
quick=0
noslurm=0
name=mpi
only=
while getopts "r:qSn:j:h" c; do
    case $c in
    r) reps=$OPTARG ;;
    q) quick=1; reps=1 ;;
    S) noslurm=1 ;;
    n) name=$OPTARG ;;
    j) only=",$OPTARG," noslurm=1 ;;
    *) sed -n '2,40p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
bdir=${1:-build}
case "$bdir" in /*) ;; *) bdir=$PWD/$bdir ;; esac
TMO=${BENCH_TIMEOUT:-120}
SLOW=${BENCH_SLOW:-30}
BUDGET=${BENCH_BUDGET:-0.02}
[ $quick = 1 ] && BUDGET=0.005
HYDRA=${HYDRA:-mpiexec.hydra}
OMPI_RUN=${OMPI_RUN:-mpirun}
outdir=${BENCH_OUTDIR:-$top/bench/results}
mkdir -p "$outdir"
raw=$outdir/${name}_raw.dat
exec </dev/null

log() { echo "run.sh: $*" >&2; }

tmp=$(mktemp -d /tmp/loom-mpibench.XXXXXX) || exit 1
cluster=
cleanup() {
    if [ -n "$cluster" ]; then
        "$top/tests/slurm/cluster.sh" stop "$cluster" >/dev/null 2>&1
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build: the same sources with each MPI's mpicc ------------------------------------
declare -A CC=([loom]=$bdir/mpi/mpicc [mpich]=${MPICC_MPICH:-mpicc.mpich}
               [ompi]=${MPICC_OMPI:-mpicc.openmpi})
mpis=()
for m in loom mpich ompi; do
    if "${CC[$m]}" -O2 -o "$tmp/mpibench.$m" "$here/mpibench.c" 2>"$tmp/cc.$m.log" &&
        "${CC[$m]}" -O2 -o "$tmp/hello.$m" "$here/hello.c" 2>>"$tmp/cc.$m.log"; then
        mpis+=("$m")
    else
        log "cannot build with ${CC[$m]} (skipping $m):"; cat "$tmp/cc.$m.log" >&2
    fi
done
[ ${#mpis[@]} -gt 0 ] || { log "no MPI could build the benchmark"; exit 1; }

ompi_root=()
if [ -n "${LOOM_SLURM_BUILD_DIR:-}" ]; then
    case $LOOM_SLURM_BUILD_DIR in /*) ;; *) LOOM_SLURM_BUILD_DIR=$PWD/$LOOM_SLURM_BUILD_DIR ;; esac
    if ! "$LOOM_SLURM_BUILD_DIR/mpi/mpicc" -O2 -o "$tmp/hello.loompmi2" "$here/hello.c" \
        2>"$tmp/cc.loompmi2.log"; then
        log "cannot build hello with $LOOM_SLURM_BUILD_DIR/mpi/mpicc:"
        cat "$tmp/cc.loompmi2.log" >&2
    fi
fi

[ "$(id -u)" = 0 ] && ompi_root=(--allow-run-as-root)

# launch MPI NP PROG ARGS... : run under MPI's launcher (ompi-yield = ompi + yielding)
launch() {
    local m=$1 np=$2
    shift 2
    case $m in
    loom) timeout -k 5 "$TMO" "$bdir/launcher/mpiexec" -n "$np" "$@" ;;
    mpich) timeout -k 5 "$TMO" "$HYDRA" -n "$np" "$@" ;;
    ompi) timeout -k 5 "$TMO" "$OMPI_RUN" "${ompi_root[@]}" --oversubscribe -n "$np" "$@" ;;
    ompi-yield) OMPI_MCA_mpi_yield_when_idle=1 timeout -k 5 "$TMO" "$OMPI_RUN" \
        "${ompi_root[@]}" --oversubscribe -x OMPI_MCA_mpi_yield_when_idle -n "$np" "$@" ;;
    esac
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

: >"$raw"
echo "# mpi job round test np bytes value unit (FAIL lines: exit status; hello: seconds)" >>"$raw"
declare -A dead=()

# one mpibench job for every MPI (interleaved), REPS rounds
declare -a jobs=("p2p 2 lat bw" "coll2 2 allreduce barrier bcast" "coll8 8 allreduce barrier"
                 "coll64 64 barrier allreduce"
                 "big8 8 -s 4096,16384,65536,262144,1048576 allreduce reduce_scatter allgather reduce bcast")
t_start=$(now)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for ((r = 1; r <= reps; r++)); do
    for j in "${jobs[@]}"; do
        set -- $j
        job=$1 np=$2
        shift 2
        [ -z "$only" ] || [[ $only == *",$job,"* ]] || continue
        variants=("${mpis[@]}")
        if [ "$np" -gt 2 ] && [[ " ${mpis[*]} " == *" ompi "* ]]; then
            variants+=(ompi-yield)
        fi
        for m in "${variants[@]}"; do
            [ -z "${dead[$m.$job]:-}" ] || continue
            exe=$tmp/mpibench.${m%-yield}
            t0=$(now)
            launch "$m" "$np" "$exe" -T "$BUDGET" "$@" >"$tmp/out" 2>"$tmp/err"
            rc=$?
            t=$(elapsed "$t0" "$(now)")
            log "round $r $job $m: exit $rc, ${t} s"
            if [ $rc != 0 ]; then
                echo "$m $job $r FAIL $np 0 $rc exit" >>"$raw"
                dead[$m.$job]=1
                head -5 "$tmp/err" >&2
                continue
            fi
            awk -v m="$m" -v j="$job" -v r="$r" \
                '$1 == "RESULT" { print m, j, r, $2, $3, $4, $5, $6 }' "$tmp/out" >>"$raw"
            if awk -v t="$t" -v s="$SLOW" 'BEGIN { exit !(t > s) }'; then
                dead[$m.$job]=slow
            fi
        done
    done
done

# ---- launch-to-exit of hello -----------------------------------------------------------
hello_cell() { # LABEL NP CMD...
    local label=$1 np=$2
    shift 2
    [ -z "${dead[$label.hello$np]:-}" ] || return 0
    local t0 rc t
    t0=$(now)
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    t=$(elapsed "$t0" "$(now)")
    log "round $r hello $np $label: exit $rc, ${t} s"
    if [ $rc != 0 ]; then
        echo "$label hello$np $r FAIL $np 0 $rc exit" >>"$raw"
        dead[$label.hello$np]=1
        head -5 "$tmp/err" >&2
    else
        echo "$label hello$np $r hello $np 0 $t s" >>"$raw"
    fi
}
for ((r = 1; r <= reps; r++)); do
    [ -z "$only" ] || break
    for np in 8 64; do
        for m in "${mpis[@]}"; do
            hello_cell "$m" "$np" launch "$m" "$np" "$tmp/hello.$m"
        done
    done
done

# ---- the same under Slurm (optional) ---------------------------------------------------
slurm_note=
if [ $noslurm = 1 ]; then
    slurm_note="skipped (-S)"
elif ! command -v srun >/dev/null; then
    slurm_note="skipped: srun not installed"
else
    if [ -z "${SLURM_CONF:-}" ] && [ -n "${LOOM_SLURM_PLUGINDIR:-}" ] &&
        [ -f "$LOOM_SLURM_PLUGINDIR/mpi_loom.so" ]; then
        cluster=$tmp/cluster
        if out=$("$top/tests/slurm/cluster.sh" start "$cluster" -P "$LOOM_SLURM_PLUGINDIR" \
            2>"$tmp/cluster.log"); then
            eval "$out"
        else
            cat "$tmp/cluster.log" >&2
            cluster=
            slurm_note="skipped: tests/slurm/cluster.sh could not start a cluster"
        fi
    fi
    if [ -z "$slurm_note" ] && [ -z "${SLURM_CONF:-}" ]; then
        slurm_note="skipped: no cluster (set SLURM_CONF, or LOOM_SLURM_PLUGINDIR to a directory with mpi_loom.so)"
    fi
    if [ -z "$slurm_note" ] && ! srun --mpi=list 2>&1 | grep -qw loom; then
        slurm_note="skipped: the cluster has no mpi/loom plugin"
    fi
fi
if [ -z "$slurm_note" ]; then
    export SLURM_CONF
    declare -A SMPI=([loom]=loom [mpich]=pmi2 [ompi]=pmix)
    for ((r = 1; r <= reps; r++)); do
        hello_cell floor-srun 64 timeout -k 5 "$TMO" srun --mpi=none -n 64 /bin/true
        for m in "${mpis[@]}"; do
            hello_cell "$m-srun" 64 timeout -k 5 "$TMO" srun --mpi="${SMPI[$m]}" -n 64 \
                "$tmp/hello.$m"
        done
        if [ -x "$tmp/hello.loompmi2" ]; then
            hello_cell loompmi2-srun 64 timeout -k 5 "$TMO" srun --mpi=pmi2 -n 64 \
                "$tmp/hello.loompmi2"
        fi
    done
    if [ -n "$cluster" ]; then
        slurm_note="a private one-node cluster started by tests/slurm/cluster.sh, mpi/loom from LOOM_SLURM_PLUGINDIR, Debian's mpi/pmi2 and mpi/pmix"
    else
        slurm_note="the cluster of SLURM_CONF"
    fi
fi
t_total=$(elapsed "$t_start" "$(now)")

# ---- tables and plot -------------------------------------------------------------------
# the machine's load (1/5/15-minute averages, all its tasks, ours included): the
# caveat that goes with every ratio on a shared machine
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
python3 "$here/report.py" "$raw" "$outdir/$name" "$reps" "$t_total" "$slurm_note" \
    "$(uname -r)" "${load_start:-?} at the start, ${load_end:-?} at the end" || exit 1
if command -v gnuplot >/dev/null; then
    (cd "$outdir" && gnuplot -e "base='$name'; big_only=$([ -n "$only" ] && echo 1 || echo 0)" \
        "$here/plot.gp") ||
        log "gnuplot failed (table written anyway)"
fi
log "wrote $outdir/$name.md"
