# bench/mpi/lib.sh - what the side-by-side MPI benches (io.sh, neighbor.sh, rma.sh) share:
# building one source with every MPI's own mpicc, launching it under that MPI's launcher
# with a timeout, the load average, and (through benchlib.py and bars.gp) medians,
# ratio tables and the bar-chart PNG.  Sourced, not run: the caller sets `here` (this
# directory) and `top` (the source tree) first, then calls bench_init.
#
# Environment: BENCH_TIMEOUT (seconds per launch, default 300), BENCH_OUTDIR (results
# directory, default bench/results), MPICC_MPICH (mpicc.mpich), MPIEXEC_MPICH
# (mpiexec.mpich), MPICC_OMPI (mpicc.openmpi), MPIEXEC_OMPI (mpiexec.openmpi).
# MPI names: loom (BUILDDIR/mpi/mpicc, BUILDDIR/launcher/mpiexec), mpich, ompi
# (--oversubscribe) and ompi-yield (Open MPI with OMPI_MCA_mpi_yield_when_idle=1).

# bench_init TAG BUILDDIR: sets bdir (absolute), TMO, outdir, tmp (removed at exit)
bench_init() {
    bdir=${2:-build}
    case "$bdir" in /*) ;; *) bdir=$PWD/$bdir ;; esac
    TMO=${BENCH_TIMEOUT:-300}
    outdir=${BENCH_OUTDIR:-$top/bench/results}
    mkdir -p "$outdir"
    tmp=$(mktemp -d "/tmp/loom-$1.XXXXXX") || exit 1
    trap 'bench_cleanup' EXIT
    trap 'exit 130' INT TERM
    exec </dev/null
    bench_cleanup_extra=:
    ompi_root=()
    [ "$(id -u)" = 0 ] && ompi_root=(--allow-run-as-root)
}

bench_cleanup() {
    eval "$bench_cleanup_extra"
    rm -rf "$tmp"
}

# bench_build SRC: builds $tmp/bin.MPI for loom, mpich and ompi; sets the array `mpis`
# to those that built (a peer that is not installed is skipped with a note)
bench_build() {
    local src=$1 m cc
    mpis=()
    for m in loom mpich ompi; do
        case $m in
        loom) cc=$bdir/mpi/mpicc ;;
        mpich) cc=${MPICC_MPICH:-mpicc.mpich} ;;
        ompi) cc=${MPICC_OMPI:-mpicc.openmpi} ;;
        esac
        if "$cc" -O2 -o "$tmp/bin.$m" "$src" 2>"$tmp/cc.$m.log"; then
            mpis+=("$m")
        else
            echo "$(basename "$0"): cannot build with $cc, skipping $m:" >&2
            tail -3 "$tmp/cc.$m.log" >&2
        fi
    done
}

# bench_launch MPI NP ARGS...: runs $tmp/bin.MPI with ARGS under the MPI's launcher
bench_launch() {
    local m=$1 np=$2
    shift 2
    case $m in
    loom) timeout -k 5 "$TMO" "$bdir/launcher/mpiexec" -n "$np" "$tmp/bin.loom" "$@" ;;
    mpich) timeout -k 5 "$TMO" "${MPIEXEC_MPICH:-mpiexec.mpich}" -n "$np" "$tmp/bin.mpich" "$@" ;;
    ompi) timeout -k 5 "$TMO" "${MPIEXEC_OMPI:-mpiexec.openmpi}" "${ompi_root[@]}" \
        --oversubscribe -n "$np" "$tmp/bin.ompi" "$@" ;;
    ompi-yield) OMPI_MCA_mpi_yield_when_idle=1 timeout -k 5 "$TMO" \
        "${MPIEXEC_OMPI:-mpiexec.openmpi}" "${ompi_root[@]}" --oversubscribe \
        -x OMPI_MCA_mpi_yield_when_idle -n "$np" "$tmp/bin.ompi" "$@" ;;
    *) echo "bench_launch: unknown MPI $m" >&2; return 2 ;;
    esac
}

# bench_load: the load average (1, 5, 15 min)
bench_load() {
    cut -d' ' -f1-3 /proc/loadavg
}

# bench_plot PNG TITLE ROWSxCOLS TSV...: the panels (see bars.gp) into one PNG
bench_plot() {
    local png=$1 title=$2 layout=$3
    shift 3
    command -v gnuplot >/dev/null || { echo "no gnuplot: $png not drawn" >&2; return 0; }
    gnuplot -e "out='$png'; suptitle='$title'; layout='$layout'; panels='$*'" \
        "$here/bars.gp" || echo "gnuplot failed: $png not drawn" >&2
}
