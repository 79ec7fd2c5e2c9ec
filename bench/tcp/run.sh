#!/bin/bash
# bench/tcp/run.sh - Loom's TCP netmod against MPICH and Open MPI over TCP and against
# the polling floor (pollpp.c), side by side in one run.
#
# Usage: bench/tcp/run.sh [-r REPS] [-q] [-N] [-n NAME] [BUILDDIR]
#   BUILDDIR  Loom build tree (default ./build): mpi/mpicc, launcher/mpiexec, plugin/.libs
#   -r REPS   rounds, interleaving the MPIs (default 3); tables give medians of rounds
#   -q        quick smoke run (1 round, short budgets)
#   -N        loopback only (no network-namespace cluster)
#   -n NAME   results in bench/results/NAME.md, NAME.png, NAME_raw.dat (default tcp)
#
# What runs (2 ranks unless said otherwise; bench/mpi/mpibench.c "lat bw"):
#   loopback  one node, TCP forced: Loom LOOM_MPI_NETMOD=tcp under our mpiexec; MPICH
#             UCX_TLS=tcp UCX_NET_DEVICES=lo under mpiexec.hydra; Open MPI --mca pml ob1
#             --mca btl tcp,self --mca btl_tcp_if_include lo under mpirun; the floor:
#             pollpp -l (busy-polling non-blocking sockets, no MPI).
#   netns     two nodes of a private 4-node network-namespace cluster
#             (tests/slurm/cluster.sh -n 4, needs root and mpi_loom.so): Loom under
#             srun --mpi=loom -N2, MPICH under --mpi=pmi2 (UCX over eth0; the MPICH
#             finalize shim of tests/slurm), Open MPI under --mpi=pmix (ob1/tcp over eth0);
#             the floor: pollpp -s on loom1 and pollpp -c on loom2 (two srun steps).
#   pairlat   in each MPI's loopback and netns job, after mpibench's run of it:
#             bench/tcp/pairlat.c, that MPI's latency against a polling TCP connection
#             between the same two ranks, in alternating blocks of a few ms (the floor
#             in the same state of the machine; pollpp's separate runs often are not).
#   allreduce 4 nodes x 4 ranks (bench/tcp/allred.c): 8 B and 1 MiB, every MPI with its
#             shared memory inside a node and TCP between nodes.
# Environment: BENCH_TIMEOUT (seconds per launch, default 120), BENCH_BUDGET (seconds per
# repetition of one case, default 0.02), BENCH_PAIRS (pairlat's block pairs, default 40),
# HYDRA, OMPI_RUN, MPICC_MPICH, MPICC_OMPI, BENCH_SUBNET (netns subnet, default 10.77.31),
# BENCH_PORT (cluster base port, default 18100).
# Not part of make check: speed is measured here, never asserted.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=3
quick=0
nonetns=0
name=tcp
while getopts "r:qNn:h" c; do
    case $c in
    r) reps=$OPTARG ;;
    q) quick=1; reps=1 ;;
    N) nonetns=1 ;;
    n) name=$OPTARG ;;
    *) sed -n '2,30p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
bdir=${1:-build}
case "$bdir" in /*) ;; *) bdir=$PWD/$bdir ;; esac
TMO=${BENCH_TIMEOUT:-120}
BUDGET=${BENCH_BUDGET:-0.02}
PAIRS="-p ${BENCH_PAIRS:-40}"
[ $quick = 1 ] && BUDGET=0.005 && PAIRS="-p 6"
HYDRA=${HYDRA:-mpiexec.hydra}
OMPI_RUN=${OMPI_RUN:-mpirun}
outdir=${BENCH_OUTDIR:-$top/bench/results}
mkdir -p "$outdir"
raw=$outdir/${name}_raw.dat
exec </dev/null

log() { echo "run.sh: $*" >&2; }

tmp=$(mktemp -d /tmp/loom-tcpbench.XXXXXX) || exit 1
chmod 755 "$tmp"
cluster=
cleanup() {
    jobs -p | xargs -r kill 2>/dev/null
    if [ -n "$cluster" ]; then
        "$top/tests/slurm/cluster.sh" stop "$cluster" >/dev/null 2>&1
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build -----------------------------------------------------------------------------
declare -A CC=([loom]=$bdir/mpi/mpicc [mpich]=${MPICC_MPICH:-mpicc.mpich}
               [ompi]=${MPICC_OMPI:-mpicc.openmpi})
mpis=()
for m in loom mpich ompi; do
    if "${CC[$m]}" -O2 -o "$tmp/mpibench.$m" "$top/bench/mpi/mpibench.c" 2>"$tmp/cc.$m" &&
        "${CC[$m]}" -O2 -o "$tmp/allred.$m" "$here/allred.c" 2>>"$tmp/cc.$m" &&
        "${CC[$m]}" -O2 -o "$tmp/pairlat.$m" "$here/pairlat.c" 2>>"$tmp/cc.$m"; then
        mpis+=("$m")
    else
        log "cannot build with ${CC[$m]} (skipping $m):"; cat "$tmp/cc.$m" >&2
    fi
done
${CC_FLOOR:-cc} -O2 -o "$tmp/pollpp" "$here/pollpp.c" || { log "cannot build pollpp"; exit 1; }
ompi_root=()
[ "$(id -u)" = 0 ] && ompi_root=(--allow-run-as-root)

: >"$raw"
echo "# impl path round test np bytes value unit" >>"$raw"
record() { # IMPL PATH ROUND < output with RESULT lines
    awk -v m="$1" -v p="$2" -v r="$3" '$1 == "RESULT" { print m, p, r, $2, $3, $4, $5, $6 }' \
        >>"$raw"
}
cell() { # IMPL PATH ROUND CMD...
    local m=$1 p=$2 r=$3
    shift 3
    local t0=$SECONDS
    timeout -k 5 "$TMO" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    local prog='' a
    for a; do case $a in "$tmp"/*) prog=${a##*/} && break ;; esac; done
    log "round $r $p $prog: exit $rc, $((SECONDS - t0)) s"
    if [ $rc != 0 ]; then
        echo "$m $p $r FAIL 0 0 $rc exit" >>"$raw"
        head -5 "$tmp/err" >&2
        return 1
    fi
    record "$m" "$p" "$r" <"$tmp/out"
}

# ---- loopback --------------------------------------------------------------------------
lb() { # IMPL -> command
    case $1 in
    loom) echo "env LOOM_MPI_NETMOD=tcp $bdir/launcher/mpiexec -n 2" ;;
    mpich) echo "env UCX_TLS=tcp UCX_NET_DEVICES=lo $HYDRA -n 2" ;;
    ompi) echo "$OMPI_RUN ${ompi_root[*]} --oversubscribe --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo -x PAIRLAT_ADDR -n 2" ;;
    esac
}
# pairlat's floor connection over the loopback interface the MPIs are told to use
export PAIRLAT_ADDR=127.0.0.1
# Round r starts with a different implementation each time (floor, Loom, MPICH, Open MPI
# rotated by r - 1), so none always runs first after a launch or last before a pause.
rotated() { # ROUND IMPL... -> the implementations rotated by ROUND - 1
    local r=$1
    shift
    local a=("$@") n=$#
    for ((i = 0; i < n; i++)); do echo "${a[(i + r - 1) % n]}"; done
}
for ((r = 1; r <= reps; r++)); do
    for m in $(rotated "$r" floor "${mpis[@]}"); do
        if [ "$m" = floor ]; then
            cell floor loopback "$r" "$tmp/pollpp" -l -T "$BUDGET"
            continue
        fi
        # shellcheck disable=SC2046
        cell "$m" loopback "$r" $(lb "$m") "$tmp/mpibench.$m" -T "$BUDGET" lat bw
        # shellcheck disable=SC2046,SC2086
        cell "$m" loopback "$r" $(lb "$m") "$tmp/pairlat.$m" $PAIRS
    done
done
unset PAIRLAT_ADDR

# ---- network namespaces ----------------------------------------------------------------
netns_note=
if [ $nonetns = 1 ]; then
    netns_note="skipped (-N)"
elif [ "$(id -u)" != 0 ] || [ ! -f "$bdir/plugin/.libs/mpi_loom.so" ]; then
    netns_note="skipped: needs root and $bdir/plugin/.libs/mpi_loom.so"
else
    mkdir -p "$tmp/plugins"
    install -m 0755 "$bdir/plugin/.libs/mpi_loom.so" "$tmp/plugins/"
    cluster=$tmp/cluster
    if out=$("$top/tests/slurm/cluster.sh" start "$cluster" -n 4 -P "$tmp/plugins" \
        -p "${BENCH_PORT:-18100}" -s "${BENCH_SUBNET:-10.77.31}" 2>"$tmp/cluster.log"); then
        eval "$out"
        export SLURM_CONF
    else
        cat "$tmp/cluster.log" >&2
        cluster=
        netns_note="skipped: tests/slurm/cluster.sh -n 4 could not start"
    fi
fi
if [ -z "$netns_note" ]; then
    shim=
    if cc -shared -fPIC -O2 -o "$tmp/shim.so" "$top/tests/slurm/mpich_finalize_shim.c"; then
        shim=$tmp/shim.so
    fi
    ip1=$(timeout 20 srun -w loom1 -N1 -n1 hostname -I | awk '{ print $1 }')
    srun_m() { # IMPL -> SC: the srun command of that MPI (plugin, transports)
        case $1 in
        loom) SC=(srun --mpi=loom) ;;
        mpich) SC=(env UCX_NET_DEVICES=eth0 ${shim:+LD_PRELOAD=$shim} srun --mpi=pmi2) ;;
        ompi) SC=(env OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self,vader
            OMPI_MCA_btl_tcp_if_include=eth0 srun --mpi=pmix) ;;
        esac
    }
    for ((r = 1; r <= reps; r++)); do
        for m in $(rotated "$r" floor "${mpis[@]}"); do
            if [ "$m" = floor ]; then
                port=$((19000 + r))
                timeout -k 5 "$TMO" srun -w loom1 -N1 -n1 "$tmp/pollpp" -s $port \
                    -T "$BUDGET" >/dev/null 2>"$tmp/srv.err" &
                spid=$!
                cell floor netns "$r" srun -w loom2 -N1 -n1 "$tmp/pollpp" -c "$ip1" $port \
                    -T "$BUDGET"
                wait $spid
                continue
            fi
            srun_m "$m"
            cell "$m" netns "$r" "${SC[@]}" -N2 -n2 "$tmp/mpibench.$m" -T "$BUDGET" lat bw
            # shellcheck disable=SC2086
            cell "$m" netns "$r" "${SC[@]}" -N2 -n2 "$tmp/pairlat.$m" $PAIRS
        done
        for m in "${mpis[@]}"; do
            srun_m "$m"
            cell "$m" allreduce4x4 "$r" "${SC[@]}" -N4 --ntasks-per-node=4 \
                "$tmp/allred.$m" -T "$BUDGET"
        done
    done
    netns_note="4 network-namespace nodes (tests/slurm/cluster.sh -n 4): p2p between loom1 and loom2; allreduce on 4 x 4 ranks"
fi

rm -f "$outdir/${name}"_*.tsv
python3 "$here/report.py" "$raw" "$outdir/$name" "$reps" "$netns_note" "$(uname -r)" ||
    exit 1
if command -v gnuplot >/dev/null; then
    paths=loopback
    [ -f "$outdir/${name}_netns_lat.tsv" ] && paths="loopback netns"
    (cd "$outdir" && gnuplot -e "base='$name'; paths='$paths'" "$here/plot.gp") ||
        log "gnuplot failed"
fi
log "wrote $outdir/$name.md"
