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
# After bench_slurm_start, bench_launch runs under srun on the nodes of a private Slurm
# cluster of network-namespace nodes instead: loom with --mpi=loom, mpich with --mpi=pmi2
# (and tests/slurm's MPICH finalize shim), ompi with --mpi=pmix (and the NAME=value,...
# list in bench_ompi_export, if the caller sets one).

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
    bench_srun=()
    bench_ompi_export=
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
    if [ ${#bench_srun[@]} -gt 0 ]; then
        case $m in
        loom) SLURM_CONF=$bench_conf timeout -k 5 "$TMO" "${bench_srun[@]}" --mpi=loom \
            -n "$np" "$tmp/bin.loom" "$@" ;;
        mpich) SLURM_CONF=$bench_conf timeout -k 5 "$TMO" "${bench_srun[@]}" --mpi=pmi2 \
            -n "$np" --export="ALL${bench_shim:+,LD_PRELOAD=$bench_shim}" "$tmp/bin.mpich" "$@" ;;
        ompi) SLURM_CONF=$bench_conf timeout -k 5 "$TMO" "${bench_srun[@]}" --mpi=pmix \
            -n "$np" --export="ALL${bench_ompi_export:+,$bench_ompi_export}" "$tmp/bin.ompi" "$@" ;;
        *) echo "bench_launch: $m cannot run under srun" >&2; return 2 ;;
        esac
        return
    fi
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

# bench_slurm_start NODES: starts a private Slurm cluster of NODES network-namespace
# nodes (tests/slurm/cluster.sh -n, Loom's plugin from BUILDDIR/plugin/.libs first in
# its plugin path), stopped at exit (daemons by pid, namespaces, bridge); from then on
# bench_launch runs srun -N NODES --ntasks-per-node=1 there.  Exit 77 when it cannot run
# here (not root, no Slurm or namespaces), 1 when it fails to start.
bench_slurm_start() {
    local nodes=$1 so=$bdir/plugin/.libs/mpi_loom.so rc
    [ "$(id -u)" = 0 ] || { echo "$(basename "$0"): needs root (slurmd)" >&2; exit 77; }
    command -v srun >/dev/null || { echo "$(basename "$0"): no srun" >&2; exit 77; }
    [ -f "$so" ] || { echo "$(basename "$0"): no $so (build with the plugin)" >&2; exit 1; }
    for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
    mkdir -p "$tmp/plugins" && install -m 0755 "$so" "$tmp/plugins/mpi_loom.so" || exit 1
    bench_shim=$tmp/shim.so # Debian MPICH 4.0.2 can hang in MPI_Finalize over UCX TCP
    cc -shared -fPIC -O2 -o "$bench_shim" "$top/tests/slurm/mpich_finalize_shim.c" ||
        bench_shim=
    bench_conf=$tmp/cluster/slurm.conf
    bench_cleanup_extra="'$top/tests/slurm/cluster.sh' stop '$tmp/cluster' >/dev/null 2>&1"
    "$top/tests/slurm/cluster.sh" start "$tmp/cluster" -n "$nodes" -c 4 -P "$tmp/plugins" \
        >/dev/null 2>"$tmp/cluster.err"
    rc=$?
    [ $rc = 0 ] || { tail -5 "$tmp/cluster.err" >&2; exit $rc; }
    bench_srun=(srun -N "$nodes" --ntasks-per-node=1)
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
