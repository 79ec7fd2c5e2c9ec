#!/bin/bash
# bench/pmix.sh - Loom's PMIx server mode (srun --mpi=loom) against Slurm's own mpi/pmix,
# side by side in one run, on real Slurm clusters: one node (cluster.sh -N 1 -c 256) and
# four network-namespace nodes (cluster.sh -n 4).
#   hello   launch-to-exit of Debian Open MPI 4.1.4's hello (MPI_Init, MPI_Allreduce,
#           MPI_Finalize; tests/programs/ompi_hello) at N = 8, 64, 256, 1 and 4 nodes,
#           --mpi=loom vs --mpi=pmix (the same binary), and --mpi=pmix with
#           OMPI_MCA_mpi_yield_when_idle=1 set by hand (what Loom sets when oversubscribed);
#   fence   PMIx_Fence with PMIX_COLLECT_DATA, median reported by rank 0 of
#           `pmix_client -m data -t -v 1024` (our PMIx client test: each rank puts 1 KiB,
#           commits, fences, gets 3 other ranks' values), N = 2, 16, 64, 1 and 4 nodes;
#   cost    what serving PMIx costs a step that does not use it: `srun -n 64 /bin/true`
#           under --mpi=loom with PMIx on and off (LOOM_PMIX=0), and --mpi=none, 1 node.
# Each cell: REPS runs (default 5; 3 at N = 256), interleaving the variants. The table
# gives median [min-max] and the ratios; a failed or timed-out run ends that variant's cell.
#
# Usage: bench/pmix.sh [-n NAME] [-r REPS] [-b BASE] [-q]
#   -n NAME  results go to bench/results/NAME.{md,csv,png} and NAME.*.dat (default: pmix;
#            pmix-X.Y with LOOM_SLURM_PREFIX, X.Y its release)
#   -b BASE  end the table with this run's ratios beside those of the earlier run BASE
#            (its BASE.*.dat in the results directory; default with LOOM_SLURM_PREFIX: pmix,
#            the installed Slurm's run, when it is there; -b '' for none)
#   -q       quick: 2 reps, N up to 64, a smoke test of the script
# Environment: LOOM_BUILD_DIR (default build), LOOM_PLUGIN_DIR (default
#   BUILD/plugin/.libs), BENCH_TIMEOUT (seconds per run, default 180), LOOM_SLURM_PORT,
#   LOOM_SLURM_SUBNET (passed to cluster.sh). LOOM_SLURM_PREFIX=P: the Slurm release
#   installed in P (scripts/slurm-release.sh), as in tests/slurm/release_env.sh: its
#   daemons and srun, its own mpi/pmix from P/lib/slurm; Loom built against the same
#   release's source (LOOM_BUILD_DIR). Unset: the installed (Debian) Slurm.
#   Needs root and the Slurm daemons; not part of `make check`. The kernel's autogroup scheduling is off while it runs (and restored
#   after): the four nodes share one kernel (bench/autogroup.sh says why).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
me=pmix.sh
name=pmix
reps=5
quick=0
name_set=0 base=- base_set=0
while getopts "n:r:b:qh" c; do
    case $c in
        n) name=$OPTARG; name_set=1 ;;
        r) reps=$OPTARG ;;
        b) base=$OPTARG; base_set=1 ;;
        q) quick=1; reps=2 ;;
        *) sed -n '2,32p' "$0"; exit 2 ;;
    esac
done
# LOOM_SLURM_PREFIX: which Slurm release (PATH, PluginDir); see tests/slurm/release_env.sh
. "$top/tests/slurm/release_env.sh"
release=$(slurm_release)
if [ -n "${LOOM_SLURM_PREFIX:-}" ]; then
    [ $name_set = 1 ] || name=pmix-${release%.*}
    [ $base_set = 1 ] || base=pmix
fi
[ "$base" = - ] && base=
reps_big=3
[ "$reps_big" -gt "$reps" ] && reps_big=$reps
bdir=${LOOM_BUILD_DIR:-build}
case "$bdir" in /*) ;; *) bdir=$top/$bdir ;; esac
prog=$bdir/tests/programs
plugin_src=${LOOM_PLUGIN_DIR:-$bdir/plugin/.libs}
TMO=${BENCH_TIMEOUT:-180}
hello=$prog/ompi_hello
client=$prog/pmix_client
yield=OMPI_MCA_mpi_yield_when_idle=1 # what Loom sets on an oversubscribed node
outdir=${BENCH_OUTDIR:-$here/results}
[ -n "$base" ] && [ ! -f "$outdir/$base.fence.loom.1.dat" ] &&
    { echo "$me: no earlier run $base in $outdir: no comparison" >&2; base=; }
csv=$outdir/$name.csv
md=$outdir/$name.md
cluster=$top/tests/slurm/cluster.sh
exec </dev/null

log() { echo "$me: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "needs root (slurmd)"; exit 77; }
for f in "$hello" "$client" "$plugin_src/mpi_loom.so"; do
    [ -e "$f" ] || { log "$f not built (configure with libpmix, mpicc.openmpi and --with-slurm-source)"; exit 1; }
done
for c in srun slurmd slurmctld; do
    command -v $c >/dev/null || { log "$c not installed"; exit 77; }
done
mkdir -p "$outdir"

hello_sizes="8 64 256" fence_sizes="2 16 64"
[ "$quick" = 1 ] && hello_sizes="8 64"

for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/loom-bench-pmix.XXXXXX")
c1=$tmp/c1 c4=$tmp/c4
. "$here/autogroup.sh"
cleanup() {
    "$cluster" stop "$c1" >/dev/null 2>&1
    "$cluster" stop "$c4" >/dev/null 2>&1
    autogroup_restore
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
autogroup_off
mkdir -p "$tmp/plugins"
install -m 0755 "$plugin_src/mpi_loom.so" "$tmp/plugins/mpi_loom.so" || exit 1

log "starting the clusters (1 node, 4 netns nodes)"
"$cluster" start "$c1" -N 1 -c 256 -P "$tmp/plugins" >/dev/null 2>"$tmp/c1.err" ||
    { cat "$tmp/c1.err" >&2; log "the one-node cluster did not start"; exit 1; }
p4=${LOOM_SLURM_PORT:+$((LOOM_SLURM_PORT + 10))}
if ! LOOM_SLURM_PORT=$p4 "$cluster" start "$c4" -n 4 -c 64 -P "$tmp/plugins" >/dev/null \
        2>"$tmp/c4.err"; then
    cat "$tmp/c4.err" >&2
    log "the netns cluster did not start: trying four slurmd on one host instead"
    LOOM_SLURM_PORT=$p4 "$cluster" start "$c4" -N 4 -c 64 -P "$tmp/plugins" >/dev/null \
        2>"$tmp/c4.err" || { cat "$tmp/c4.err" >&2; log "no four-node cluster"; exit 1; }
    c4kind="4 slurmd, one host"
else
    c4kind="4 netns nodes on a bridge"
fi

echo "metric,nodes,n,variant,rep,value,status" >"$csv"

srun_args() { # NODES N -> the srun layout options
    if [ "$1" -eq 1 ]; then echo "-N 1 -n $2"
    elif [ "$2" -lt "$1" ]; then echo "-N $2 -n $2"
    else echo "-N $1 -n $2 --ntasks-per-node=$(( $2 / $1 ))"
    fi
}

# one_run METRIC NODES N VARIANT REP CMD...: time one run, append a row; 1 on failure
one_run() {
    local metric=$1 nodes=$2 n=$3 variant=$4 rep=$5; shift 5
    local s e rc val status=ok conf=$c1/slurm.conf
    [ "$nodes" -ne 1 ] && conf=$c4/slurm.conf
    s=$(date +%s%N)
    SLURM_CONF=$conf timeout -k 5 "$TMO" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    e=$(date +%s%N)
    val=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') # s
    if [ "$rc" -ne 0 ] && awk -v d="$val" -v t="$TMO" 'BEGIN { exit !(d >= t - 0.5) }'; then
        status=timeout
    elif [ "$rc" -ne 0 ]; then
        status=exit$rc
    fi
    if [ "$metric" = fence ]; then
        val=$(sed -n 's/.*fence_median_us=\([0-9]*\).*/\1/p' "$tmp/out" | head -n1)
        [ -n "$val" ] && val=$(awk -v v="$val" 'BEGIN { printf "%.3f", v / 1000 }') # ms
        [ -z "$val" ] && [ "$status" = ok ] && status=nodata
    fi
    [ "$status" = ok ] || val=
    echo "$metric,$nodes,$n,$variant,$rep,$val,$status" >>"$csv"
    printf '  %-6s nodes=%d n=%-4s %-9s rep %d: %s %s\n' "$metric" "$nodes" "$n" "$variant" \
        "$rep" "${val:--}" "$status" >&2
    if [ "$status" != ok ]; then
        tail -n 3 "$tmp/err" | sed 's/^/      | /' >&2
        return 1
    fi
    return 0
}

# cell METRIC NODES N REPS "VARIANT|CMD" ...: REPS runs of every variant, interleaved
cell() {
    local metric=$1 nodes=$2 n=$3 r=$4; shift 4
    local rep spec variant dead=" "
    for rep in $(seq 1 "$r"); do
        for spec in "$@"; do
            variant=${spec%%|*}
            case $dead in *" $variant "*) continue ;; esac
            # shellcheck disable=SC2086
            one_run "$metric" "$nodes" "$n" "$variant" "$rep" ${spec#*|} ||
                dead="$dead$variant "
        done
    done
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }
load0=$(loadavg)
t0=$(date +%s)
log "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cpus, $reps reps ($reps_big at N=256), cluster: $c4kind"
# Warm-up (page cache, slurmd plugin loads): one run of each, not recorded.
SLURM_CONF=$c1/slurm.conf timeout 60 srun --mpi=loom -n 2 "$hello" >/dev/null 2>&1
SLURM_CONF=$c1/slurm.conf timeout 60 srun --mpi=pmix -n 2 "$hello" >/dev/null 2>&1
cell cost 1 64 "$reps" "none|srun --mpi=none -n 64 /bin/true" \
    "loom-pmix|srun --mpi=loom -n 64 /bin/true" \
    "loom-nopmix|srun --mpi=loom --export=ALL,LOOM_PMIX=0 -n 64 /bin/true"
for nodes in 1 4; do
    for n in $fence_sizes; do
        rounds=20
        [ "$n" -ge 64 ] && rounds=10
        lay=$(srun_args "$nodes" "$n")
        cell fence "$nodes" "$n" "$reps" \
            "loom|srun --mpi=loom $lay $client -m data -t -v 1024 -r $rounds" \
            "pmix|srun --mpi=pmix $lay $client -m data -t -v 1024 -r $rounds"
    done
    for n in $hello_sizes; do
        r=$reps
        [ "$n" -ge 256 ] && r=$reps_big
        lay=$(srun_args "$nodes" "$n")
        cell hello "$nodes" "$n" "$r" "loom|srun --mpi=loom $lay $hello" \
            "pmix|srun --mpi=pmix $lay $hello" \
            "pmix-yield|srun --mpi=pmix --export=ALL,$yield $lay $hello"
    done
done
elapsed=$(( $(date +%s) - t0 ))
load1=$(loadavg)
log "measured in ${elapsed}s"

# ---- summary -------------------------------------------------------------------------
# stats METRIC NODES VARIANT SIZES -> lines "N median min max count status"
stats() {
    awk -F, -v m="$1" -v nd="$2" -v va="$3" -v sizes="$4" '
    NR > 1 && $1 == m && $2 == nd && $4 == va {
        if ($7 == "ok") v[$3, ++c[$3]] = $6 + 0; else bad[$3] = $7
    }
    END {
        k = split(sizes, ns, " ")
        for (i = 1; i <= k; i++) {
            n = ns[i]; cn = c[n] + 0
            if (cn == 0) { printf "%s NaN NaN NaN 0 %s\n", n, (n in bad) ? bad[n] : "none"; continue }
            for (a = 1; a <= cn; a++) x[a] = v[n, a]
            for (a = 2; a <= cn; a++) { t = x[a]; for (b = a - 1; b >= 1 && x[b] > t; b--) x[b + 1] = x[b]; x[b + 1] = t }
            med = (cn % 2) ? x[(cn + 1) / 2] : (x[cn / 2] + x[cn / 2 + 1]) / 2
            printf "%s %.3f %.3f %.3f %d %s\n", n, med, x[1], x[cn], cn, (n in bad) ? bad[n] : "ok"
        }
    }' "$csv"
}
for spec in "fence loom 1" "fence pmix 1" "fence loom 4" "fence pmix 4" \
            "hello loom 1" "hello pmix 1" "hello loom 4" "hello pmix 4" \
            "hello pmix-yield 1" "hello pmix-yield 4" \
            "cost none 1" "cost loom-pmix 1" "cost loom-nopmix 1"; do
    set -- $spec
    case $1 in fence) sz=$fence_sizes ;; hello) sz=$hello_sizes ;; *) sz=64 ;; esac
    stats "$1" "$3" "$2" "$sz" >"$outdir/$name.$1.$2.$3.dat"
done
cellfmt() { # FILE N -> "median [min-max]" or "failed (status)" or "-"
    awk -v n="$2" '$1 == n {
        if ($2 == "NaN") { print ($6 == "none") ? "-" : "failed (" $6 ")"; exit }
        s = sprintf("%s [%s-%s]", $2, $3, $4); if ($6 != "ok") s = s ", then " $6
        print s; exit }' "$1"
}
med() { awk -v n="$2" '$1 == n { print $2; exit }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "NaN" || b == "NaN" || b == 0) print "-"; else printf "%.2f", a / b }'; }
d() { echo "$outdir/$name.$1.$2.$3.dat"; }
# rr RUN METRIC VARIANT_A VARIANT_B NODES N -> median A / median B of run RUN
rr() {
    ratio "$(med "$outdir/$1.$2.$3.$5.dat" "$6" 2>/dev/null)" "$(med "$outdir/$1.$2.$4.$5.dat" "$6" 2>/dev/null)"
}

# compare: this run's speed-ups beside those of the earlier run $base (another release).
compare() {
    local brel nodes n
    brel=$(sed -n '3s/.*Slurm \([0-9][0-9.]*[0-9]\).*/\1/p' "$outdir/$base.md" 2>/dev/null)
    echo
    echo "## Slurm ${release:-?} beside ${brel:-?} (the run \`$base\`): the ratios of both runs"
    echo "Each ratio is taken within its own run (same machine, other hours and load): compare the"
    echo "ratios, not the times. Here ratio = loom / Slurm's pmix (1 / the speed-ups above; below 1:"
    echo "Loom is faster); yield: loom / Slurm's pmix with \`$yield\`."
    echo
    echo "| nodes | N | hello, $release | hello, $brel | yield, $release | yield, $brel |"
    echo "|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $hello_sizes; do
            echo "| $nodes | $n | $(rr "$name" hello loom pmix $nodes $n) | $(rr "$base" hello loom pmix $nodes $n) |" \
                "$(rr "$name" hello loom pmix-yield $nodes $n) | $(rr "$base" hello loom pmix-yield $nodes $n) |"
        done
    done
    echo
    echo "| nodes | N | fence, $release | fence, $brel |"
    echo "|---|---|---|---|"
    for nodes in 1 4; do
        for n in $fence_sizes; do
            echo "| $nodes | $n | $(rr "$name" fence loom pmix $nodes $n) | $(rr "$base" fence loom pmix $nodes $n) |"
        done
    done
    echo
    echo "| cost: PMIx on / off, $release | $brel |"
    echo "|---|---|"
    echo "| $(rr "$name" cost loom-pmix loom-nopmix 1 64) | $(rr "$base" cost loom-pmix loom-nopmix 1 64) |"
}

{
    echo "# Loom's PMIx server mode vs Slurm's mpi/pmix ($name)"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cpus, $(uname -r), Slurm $(SLURM_CONF=$c1/slurm.conf srun --version 2>/dev/null | awk '{print $2}'),"
    echo "OpenPMIx $(pkg-config --modversion pmix 2>/dev/null), Open MPI $(ompi_info --version 2>/dev/null | awk 'NR==1 {print $NF}')."
    echo "1 node = one slurmd; 4 nodes = $c4kind. Medians of $reps runs ($reps_big at N = 256),"
    echo "[min-max]. Raw runs: \`$name.csv\`; measured in ${elapsed} s. Load average (1/5/15 min)"
    echo "at the start: $load0; at the end: $load1 (other work on the machine shows here:"
    echo "compare the columns of one run, not runs)."
    autogroup_note
    echo
    echo "## Launch to exit (s): Open MPI hello (init + allreduce + finalize)"
    echo "speed-up = pmix / loom (goal: at least 1.5 at N = 64). Loom tells Open MPI to yield"
    echo "on a node with more ranks than CPUs (\`$yield\` unless the user set it), as"
    echo "Open MPI's own mpirun does, and gives the tasks there a 1 ms timer slack (LoomTimerSlack);"
    echo "the last columns give Slurm's pmix the same variable by hand (not the slack)."
    echo
    echo "| nodes | N | --mpi=loom | --mpi=pmix | speed-up | --mpi=pmix, $yield | speed-up |"
    echo "|---|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $hello_sizes; do
            echo "| $nodes | $n | $(cellfmt "$(d hello loom $nodes)" $n) | $(cellfmt "$(d hello pmix $nodes)" $n) |" \
                "$(ratio "$(med "$(d hello pmix $nodes)" $n)" "$(med "$(d hello loom $nodes)" $n)") |" \
                "$(cellfmt "$(d hello pmix-yield $nodes)" $n) |" \
                "$(ratio "$(med "$(d hello pmix-yield $nodes)" $n)" "$(med "$(d hello loom $nodes)" $n)") |"
        done
    done
    echo
    echo "## PMIx_Fence with data (ms), rank 0's median, pmix_client -m data -t -v 1024"
    echo "speed-up = pmix / loom."
    echo
    echo "| nodes | N | --mpi=loom | --mpi=pmix | speed-up |"
    echo "|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $fence_sizes; do
            echo "| $nodes | $n | $(cellfmt "$(d fence loom $nodes)" $n) | $(cellfmt "$(d fence pmix $nodes)" $n) |" \
                "$(ratio "$(med "$(d fence pmix $nodes)" $n)" "$(med "$(d fence loom $nodes)" $n)") |"
        done
    done
    echo
    echo "## Cost of serving PMIx to a step that does not use it (s): srun -n 64 /bin/true, 1 node"
    echo
    echo "| --mpi=none | --mpi=loom, PMIx on | --mpi=loom, LOOM_PMIX=0 | on / off |"
    echo "|---|---|---|---|"
    echo "| $(cellfmt "$(d cost none 1)" 64) | $(cellfmt "$(d cost loom-pmix 1)" 64) |" \
        "$(cellfmt "$(d cost loom-nopmix 1)" 64) |" \
        "$(ratio "$(med "$(d cost loom-pmix 1)" 64)" "$(med "$(d cost loom-nopmix 1)" 64)") |"
    [ -n "$base" ] && compare
} >"$md"
log "table in $md"
cat "$md"

if command -v gnuplot >/dev/null 2>&1; then
    if gnuplot -e "name='$outdir/$name'; rel='$release'" "$here/pmix.gp" 2>"$tmp/gp.err"; then
        log "plot in $outdir/$name.png"
    else
        log "gnuplot failed:"; cat "$tmp/gp.err" >&2
    fi
fi
