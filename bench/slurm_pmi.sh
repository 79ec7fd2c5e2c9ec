#!/bin/bash
# bench/slurm_pmi.sh - Loom's Slurm plugin (srun --mpi=loom) against Slurm's own mpi/pmi2
# (and Open MPI under Slurm's mpi/pmix), side by side in one run, on real Slurm clusters:
# one node (cluster.sh -N 1 -c 256) and four network-namespace nodes (cluster.sh -n 4).
#   fence   PMI2_KVS_Fence (and get-all) median reported by rank 0 of `pmi2_kvstest_slurm -t -v 1024`
#           (PMI-2 client linked with the release's libpmi2; 1 KiB values; after each
#           fence every rank gets every rank's key), N = 2, 16, 64, 256, 1 and 4 nodes,
#           --mpi=loom vs --mpi=pmi2 (the same binary);
#   launch  launch-to-exit of `pmi2_kvstest_slurm -r 1` at N = 64, 256, 1 and 4 nodes,
#           --mpi=loom vs --mpi=pmi2 vs the floor `srun --mpi=none -n N /bin/true`;
#           then one more run of each with every task under bench/cputime.c: the tasks'
#           own CPU time, summed, which bounds from below what the PMI program adds to
#           the floor on this many CPUs, whatever serves it;
#   hello   launch-to-exit of Debian MPICH's hello (MPI_Init, MPI_Allreduce, MPI_Finalize;
#           tests/programs/mpich_hello) under --mpi=loom vs --mpi=pmi2, and of Open MPI's
#           (the same source built with mpicc.openmpi here) under --mpi=pmix, N = 8, 64,
#           256 on the four netns nodes (MPICH with the finalize shim of tests/slurm/,
#           for both plugins alike: Debian's MPICH 4.0.2 can hang in MPI_Finalize over
#           UCX TCP).
# Each cell: REPS runs (default 5; REPS_BIG, default 3, at N = 256; hello at 256: 2),
# interleaving the variants. The table gives median [min-max] and the ratios; a run
# that fails or exceeds its timeout is recorded as such and ends that variant's cell.
#
# Usage: bench/slurm_pmi.sh [-n NAME] [-r REPS] [-b BASE] [-q]
#   -n NAME  results go to bench/results/NAME.{md,csv,png} and NAME.*.dat
#            (default: slurm_pmi; slurm_pmi-X.Y with LOOM_SLURM_PREFIX, X.Y its release)
#   -b BASE  end the table with this run's ratios beside those of the earlier run BASE
#            (its BASE.*.dat in the results directory; default with LOOM_SLURM_PREFIX:
#            slurm_pmi, the installed Slurm's run, when it is there; -b '' for none)
#   -q       quick: 2 reps, N up to 64, a smoke test of the script
# Environment: LOOM_BUILD_DIR (default build), LOOM_PLUGIN_DIR (default
#   BUILD/plugin/.libs; without mpi_loom.so there the loom half is skipped),
#   BENCH_TIMEOUT (seconds per run, default 120), REPS_BIG.
#   LOOM_SLURM_PREFIX=P: the Slurm release installed in P (scripts/slurm-release.sh), as in
#   tests/slurm/release_env.sh: its daemons and srun, its own mpi/pmi2 and mpi/pmix from
#   P/lib/slurm, pmi2_kvstest_slurm compiled here against P's libpmi2. Build Loom against
#   the same release's source (LOOM_BUILD_DIR): the loader wants the exact release.
#   Unset: the installed (Debian) Slurm.
# Needs root and the Slurm daemons (like tests/slurm/); not part of `make check`.
#
# Notes: every Slurm process of the bench runs in two private clusters that are torn
#   down on exit (trap). The rank-0 fence median of one run is the median over its
#   rounds (20 at N <= 16, 10 at 64, 3 at 256); the table reports the median of those
#   over the runs. The kernel's autogroup scheduling is off while the bench runs (and
#   restored after): the four nodes share one kernel (bench/autogroup.sh says why).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
me=slurm_pmi.sh
name=slurm_pmi
reps=5
quick=0
name_set=0 base=- base_set=0
while getopts "n:r:b:qh" c; do
    case $c in
        n) name=$OPTARG; name_set=1 ;;
        r) reps=$OPTARG ;;
        b) base=$OPTARG; base_set=1 ;;
        q) quick=1; reps=2 ;;
        *) sed -n '2,46p' "$0"; exit 2 ;;
    esac
done
# LOOM_SLURM_PREFIX: which Slurm release (PATH, PluginDir); see tests/slurm/release_env.sh
. "$top/tests/slurm/release_env.sh"
release=$(slurm_release)
if [ -n "${LOOM_SLURM_PREFIX:-}" ]; then
    [ $name_set = 1 ] || name=slurm_pmi-${release%.*}
    [ $base_set = 1 ] || base=slurm_pmi
fi
[ "$base" = - ] && base=
reps_big=${REPS_BIG:-3}
[ "$reps_big" -gt "$reps" ] && reps_big=$reps
reps_hello_big=2
[ "$reps_hello_big" -gt "$reps_big" ] && reps_hello_big=$reps_big
bdir=${LOOM_BUILD_DIR:-build}
case "$bdir" in /*) ;; *) bdir=$top/$bdir ;; esac
prog=$bdir/tests/programs
plugin_src=${LOOM_PLUGIN_DIR:-$bdir/plugin/.libs}
TMO=${BENCH_TIMEOUT:-120}
kvs=$prog/pmi2_kvstest_slurm
hello=$prog/mpich_hello
outdir=${BENCH_OUTDIR:-$here/results}
[ -n "$base" ] && [ ! -f "$outdir/$base.fence.loom.1.dat" ] &&
    { echo "$me: no earlier run $base in $outdir: no comparison" >&2; base=; }
csv=$outdir/$name.csv
md=$outdir/$name.md
cluster=$top/tests/slurm/cluster.sh
exec </dev/null

log() { echo "$me: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "needs root (slurmd)"; exit 77; }
[ -x "$kvs" ] || { log "$kvs not built (needs libpmi2-0-dev, then make)"; exit 1; }
for c in srun slurmd slurmctld; do
    command -v $c >/dev/null || { log "$c not installed"; exit 77; }
done
mkdir -p "$outdir"

fence_sizes="2 16 64 256" launch_sizes="64 256" hello_sizes="8 64 256"
if [ "$quick" = 1 ]; then fence_sizes="2 16 64"; launch_sizes="64"; hello_sizes="8 64"; fi

for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/loom-bench.XXXXXX")
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

# Another release: Slurm's own libpmi2 client compiled against that release's libpmi2.
if [ -n "${LOOM_SLURM_PREFIX:-}" ]; then
    kvs=$tmp/pmi2_kvstest_slurm
    cc -O2 -DKVSTEST_SLURM -I"$LOOM_SLURM_PREFIX/include" -I"$top/tests/programs" -o "$kvs" \
        "$top/tests/programs/pmi2_kvstest.c" "$top/tests/programs/kvstest_util.c" \
        -L"$LOOM_SLURM_PREFIX/lib" -Wl,-rpath,"$LOOM_SLURM_PREFIX/lib" -lpmi2 >&2 ||
        { log "cannot build pmi2_kvstest_slurm against $LOOM_SLURM_PREFIX/lib/libpmi2.so"; exit 1; }
fi

have_loom=0
mkdir -p "$tmp/plugins"
if [ -f "$plugin_src/mpi_loom.so" ]; then
    install -m 0755 "$plugin_src/mpi_loom.so" "$tmp/plugins/mpi_loom.so" && have_loom=1
else
    log "no $plugin_src/mpi_loom.so (configure --with-slurm-source=DIR): the loom half is skipped"
fi

# The per-task CPU meter (bench/cputime.c).
cputime=
if cc -O2 -o "$tmp/cputime" "$here/cputime.c" 2>"$tmp/cputime.err"; then
    cputime=$tmp/cputime
else
    log "cannot build bench/cputime.c: the tasks' CPU rows are skipped"
fi

# The MPICH finalize shim and the Open MPI hello.
shim=
if [ -x "$hello" ] && cc -shared -fPIC -O2 -o "$tmp/shim.so" \
        "$top/tests/slurm/mpich_finalize_shim.c" 2>"$tmp/shim.err"; then
    shim=$tmp/shim.so
fi
[ -x "$hello" ] || log "$hello not built: the MPICH hello rows are skipped"
ompi_hello=
if command -v mpicc.openmpi >/dev/null 2>&1 &&
        mpicc.openmpi -O2 -o "$tmp/ompi_hello" "$top/tests/programs/mpi_hello.c" 2>"$tmp/ompi.err"; then
    ompi_hello=$tmp/ompi_hello
else
    log "mpicc.openmpi not usable: the Open MPI hello rows are skipped"
fi

log "starting the clusters (1 node, 4 netns nodes)"
"$cluster" start "$c1" -N 1 -c 256 -P "$tmp/plugins" >/dev/null 2>"$tmp/c1.err" ||
    { cat "$tmp/c1.err" >&2; log "the one-node cluster did not start"; exit 1; }
if ! "$cluster" start "$c4" -n 4 -c 64 -P "$tmp/plugins" >/dev/null 2>"$tmp/c4.err"; then
    cat "$tmp/c4.err" >&2
    log "the netns cluster did not start: trying four slurmd on one host instead"
    "$cluster" start "$c4" -N 4 -c 64 -P "$tmp/plugins" >/dev/null 2>"$tmp/c4.err" ||
        { cat "$tmp/c4.err" >&2; log "no four-node cluster"; exit 1; }
    c4kind="4 slurmd, one host"
else
    c4kind="4 netns nodes on a bridge"
fi

echo "metric,nodes,n,variant,rep,value,status" >"$csv"

# srun_args NODES N -> the srun layout options
srun_args() {
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
        # The same run's get-all median goes alongside (metric getall, ms).
        # So do the last-in fence and the round time (fence_last, round: see
        # tests/programs/pmi2_kvstest.c), all in ms.
        local m k
        for m in getall:get_all fencelast:fence_last round:round; do
            k=${m#*:}
            gval=$(sed -n "s/.* ${k}_median_us=\([0-9]*\).*/\1/p" "$tmp/out" | head -n1)
            [ -n "$gval" ] && [ "$status" = ok ] &&
                echo "${m%%:*},$nodes,$n,$variant,$rep,$(awk -v v="$gval" 'BEGIN { printf "%.3f", v / 1000 }'),ok" >>"$csv"
        done
        val=$(sed -n 's/.*fence_median_us=\([0-9]*\).*/\1/p' "$tmp/out" | head -n1)
        [ -n "$val" ] && val=$(awk -v v="$val" 'BEGIN { printf "%.3f", v / 1000 }') # ms
        [ -z "$val" ] && [ "$status" = ok ] && status=nodata
    fi
    [ "$status" = ok ] || val=
    echo "$metric,$nodes,$n,$variant,$rep,$val,$status" >>"$csv"
    printf '  %-6s nodes=%d n=%-4s %-10s rep %d: %s %s\n' "$metric" "$nodes" "$n" "$variant" \
        "$rep" "${val:--}" "$status"
    if [ "$status" != ok ]; then
        tail -n 3 "$tmp/err" | sed 's/^/      | /'
        return 1
    fi
    return 0
}

# cpu_run NODES N VARIANT CMD...: one run of CMD (srun ... PROG ARGS with PROG run under
# bench/cputime); appends the sum over the tasks of their CPU time (metric cpu) and of
# its user part (metric cpuuser), in s. No row unless every task reported.
cpu_run() {
    local nodes=$1 n=$2 variant=$3; shift 3
    local conf=$c1/slurm.conf sums
    [ "$nodes" -ne 1 ] && conf=$c4/slurm.conf
    SLURM_CONF=$conf timeout -k 5 "$TMO" "$@" >"$tmp/out" 2>"$tmp/err"
    sums=$(awk '/^cputime: /{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] } k++ }
        END { printf "%d %.3f %.3f", k, v["cpu_us"] / 1e6, v["user_us"] / 1e6 }' "$tmp/err")
    set -- $sums
    if [ "$1" -eq "$n" ]; then
        echo "cpu,$nodes,$n,$variant,1,$2,ok" >>"$csv"
        echo "cpuuser,$nodes,$n,$variant,1,$3,ok" >>"$csv"
        printf '  %-6s nodes=%d n=%-4s %-10s: tasks %.3f s (user %.3f s)\n' cpu "$nodes" "$n" \
            "$variant" "$2" "$3"
    else
        echo "cpu,$nodes,$n,$variant,1,,nodata" >>"$csv"
        log "cpu nodes=$nodes n=$n $variant: $1 of $n tasks reported their CPU time"
        tail -n 3 "$tmp/err" | sed 's/^/      | /'
    fi
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
for nodes in 1 4; do
    for n in $fence_sizes; do
        # More rounds where they are cheap: the per-run median steadies.
        r=$reps; rounds=20
        [ "$n" -ge 64 ] && rounds=10
        [ "$n" -ge 256 ] && { r=$reps_big; rounds=3; }
        lay=$(srun_args "$nodes" "$n")
        specs=()
        [ $have_loom = 1 ] && specs+=("loom|srun --mpi=loom $lay $kvs -t -v 1024 -r $rounds")
        specs+=("pmi2|srun --mpi=pmi2 $lay $kvs -t -v 1024 -r $rounds")
        cell fence "$nodes" "$n" "$r" "${specs[@]}"
    done
done
for nodes in 1 4; do
    for n in $launch_sizes; do
        r=$reps
        [ "$n" -ge 256 ] && r=$reps_big
        lay=$(srun_args "$nodes" "$n")
        specs=("floor|srun --mpi=none $lay /bin/true")
        [ $have_loom = 1 ] && specs+=("loom|srun --mpi=loom $lay $kvs -r 1")
        specs+=("pmi2|srun --mpi=pmi2 $lay $kvs -r 1")
        cell launch "$nodes" "$n" "$r" "${specs[@]}"
        if [ -n "$cputime" ]; then
            cpu_run "$nodes" "$n" floor srun --mpi=none $lay "$cputime" /bin/true
            [ $have_loom = 1 ] && cpu_run "$nodes" "$n" loom srun --mpi=loom $lay "$cputime" "$kvs" -r 1
            cpu_run "$nodes" "$n" pmi2 srun --mpi=pmi2 $lay "$cputime" "$kvs" -r 1
        fi
    done
done
for n in $hello_sizes; do
    r=$reps
    [ "$n" -ge 256 ] && r=$reps_hello_big
    lay=$(srun_args 4 "$n")
    specs=()
    if [ -n "$shim" ]; then
        [ $have_loom = 1 ] &&
            specs+=("mpich-loom|srun --mpi=loom $lay --export=ALL,LD_PRELOAD=$shim $hello")
        specs+=("mpich-pmi2|srun --mpi=pmi2 $lay --export=ALL,LD_PRELOAD=$shim $hello")
    fi
    [ -n "$ompi_hello" ] && specs+=("ompi-pmix|srun --mpi=pmix $lay $ompi_hello")
    [ ${#specs[@]} -gt 0 ] && cell hello 4 "$n" "$r" "${specs[@]}"
done
elapsed=$(( $(date +%s) - t0 ))
load1=$(loadavg)
log "measured in ${elapsed}s"

# ---- summary -------------------------------------------------------------------------
# stats METRIC NODES VARIANT -> lines "N median min max count status" (NaN if no data)
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

# Data files for gnuplot: NAME.METRIC.VARIANT.NODES.dat
for spec in "fence loom 1" "fence pmi2 1" "fence loom 4" "fence pmi2 4" \
            "getall loom 1" "getall pmi2 1" "getall loom 4" "getall pmi2 4" \
            "fencelast loom 1" "fencelast pmi2 1" "fencelast loom 4" "fencelast pmi2 4" \
            "round loom 1" "round pmi2 1" "round loom 4" "round pmi2 4" \
            "launch floor 1" "launch loom 1" "launch pmi2 1" \
            "launch floor 4" "launch loom 4" "launch pmi2 4" \
            "cpu floor 1" "cpu loom 1" "cpu pmi2 1" "cpu floor 4" "cpu loom 4" "cpu pmi2 4" \
            "cpuuser floor 1" "cpuuser loom 1" "cpuuser pmi2 1" \
            "cpuuser floor 4" "cpuuser loom 4" "cpuuser pmi2 4" \
            "hello mpich-loom 4" "hello mpich-pmi2 4" "hello ompi-pmix 4"; do
    set -- $spec
    case $1 in fence|getall|fencelast|round) sz=$fence_sizes ;; launch|cpu*) sz=$launch_sizes ;; *) sz=$hello_sizes ;; esac
    stats "$1" "$3" "$2" "$sz" >"$outdir/$name.$1.$2.$3.dat"
done

# cellfmt FILE N -> "median [min-max]" or "failed (status)" or "-"
cellfmt() {
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

# compare: this run's ratios beside those of the earlier run $base (another release).
compare() {
    local brel nodes n
    brel=$(sed -n '3s/.*Slurm \([0-9][0-9.]*[0-9]\).*/\1/p' "$outdir/$base.md" 2>/dev/null)
    echo
    echo "## Slurm ${release:-?} beside ${brel:-?} (the run \`$base\`): the ratios of both runs"
    echo "Each ratio is taken within its own run (same machine, other hours and load): compare the"
    echo "ratios, not the times. fence and fence last in: loom / pmi2; launch: over the floor"
    echo "(srun --mpi=none /bin/true) and loom / pmi2; hello: MPICH under loom / under pmi2."
    echo
    echo "| nodes | N | fence, $release | fence, $brel | last in, $release | last in, $brel |"
    echo "|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $fence_sizes; do
            echo "| $nodes | $n | $(rr "$name" fence loom pmi2 $nodes $n) | $(rr "$base" fence loom pmi2 $nodes $n) |" \
                "$(rr "$name" fencelast loom pmi2 $nodes $n) | $(rr "$base" fencelast loom pmi2 $nodes $n) |"
        done
    done
    echo
    echo "| nodes | N | loom/floor, $release | loom/floor, $brel | pmi2/floor, $release | pmi2/floor, $brel | loom/pmi2, $release | loom/pmi2, $brel |"
    echo "|---|---|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $launch_sizes; do
            echo "| $nodes | $n | $(rr "$name" launch loom floor $nodes $n) | $(rr "$base" launch loom floor $nodes $n) |" \
                "$(rr "$name" launch pmi2 floor $nodes $n) | $(rr "$base" launch pmi2 floor $nodes $n) |" \
                "$(rr "$name" launch loom pmi2 $nodes $n) | $(rr "$base" launch loom pmi2 $nodes $n) |"
        done
    done
    echo
    echo "| N | MPICH hello loom/pmi2, $release | $brel |"
    echo "|---|---|---|"
    for n in $hello_sizes; do
        echo "| $n | $(rr "$name" hello mpich-loom mpich-pmi2 4 $n) | $(rr "$base" hello mpich-loom mpich-pmi2 4 $n) |"
    done
}

{
    echo "# Loom's Slurm plugin vs Slurm's mpi/pmi2 ($name)"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cpus, $(uname -r), Slurm $(SLURM_CONF=$c1/slurm.conf srun --version 2>/dev/null | awk '{print $2}');"
    echo "1 node = one slurmd; 4 nodes = $c4kind. Medians of $reps runs ($reps_big at N = 256,"
    echo "$reps_hello_big for hello at 256), [min-max]. Raw runs: \`$name.csv\`; measured in ${elapsed} s."
    echo "Load average (1/5/15 min) at the start: $load0; at the end: $load1 (other work on the"
    echo "machine shows here: compare the columns of one run, not runs)."
    autogroup_note
    [ $have_loom = 1 ] || { echo; echo "**The plugin was not built: no loom columns.**"; }
    echo
    echo "## PMI2_KVS_Fence median (ms), pmi2_kvstest_slurm -t -v 1024 (Slurm $release's libpmi2)"
    echo "ratio = loom / pmi2 (goal: at most 0.5 at N >= 16). Rank 0's fence time includes waiting"
    echo "for the slowest rank, i.e. for the others' gets of the previous round: the get-all"
    echo "medians of the same runs (N gets of 1 KiB by rank 0 after a fence, ms) are beside it."
    echo
    echo "| nodes | N | fence, loom | fence, pmi2 | ratio | get-all, loom | get-all, pmi2 | ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $fence_sizes; do
            echo "| $nodes | $n | $(cellfmt "$(d fence loom $nodes)" $n) | $(cellfmt "$(d fence pmi2 $nodes)" $n) |" \
                "$(ratio "$(med "$(d fence loom $nodes)" $n)" "$(med "$(d fence pmi2 $nodes)" $n)") |" \
                "$(med "$(d getall loom $nodes)" $n) | $(med "$(d getall pmi2 $nodes)" $n) |" \
                "$(ratio "$(med "$(d getall loom $nodes)" $n)" "$(med "$(d getall pmi2 $nodes)" $n)") |"
        done
    done
    echo
    echo "## The fence without the skew, and the pace of a round (ms), same runs"
    echo "fence, last in = per round the smallest fence time over all ranks (the rank that"
    echo "entered last waits only for the fence itself: the server's fence latency), median"
    echo "over rounds; round = rank 0's put + fence + get-all per round. ratio = loom / pmi2."
    echo
    echo "| nodes | N | fence last in, loom | fence last in, pmi2 | ratio | round, loom | round, pmi2 | ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $fence_sizes; do
            echo "| $nodes | $n | $(cellfmt "$(d fencelast loom $nodes)" $n) | $(cellfmt "$(d fencelast pmi2 $nodes)" $n) |" \
                "$(ratio "$(med "$(d fencelast loom $nodes)" $n)" "$(med "$(d fencelast pmi2 $nodes)" $n)") |" \
                "$(med "$(d round loom $nodes)" $n) | $(med "$(d round pmi2 $nodes)" $n) |" \
                "$(ratio "$(med "$(d round loom $nodes)" $n)" "$(med "$(d round pmi2 $nodes)" $n)") |"
        done
    done
    echo
    echo "## Launch to exit (s), pmi2_kvstest_slurm -r 1 vs the floor srun --mpi=none /bin/true"
    echo "ratios to the floor (goal for loom: at most 1.3). Every run here, the floor's too, holds"
    echo "a fixed 100 ms of slurmstepd: once the first task of a node exits it sleeps 100 ms before"
    echo "it reaps the others (slurmstepd/mgr.c, 22.05 to 26.05), whatever the MPI plugin."
    echo
    echo "| nodes | N | floor | --mpi=loom | --mpi=pmi2 | loom/floor | pmi2/floor |"
    echo "|---|---|---|---|---|---|---|"
    for nodes in 1 4; do
        for n in $launch_sizes; do
            f=$(med "$(d launch floor $nodes)" $n)
            echo "| $nodes | $n | $(cellfmt "$(d launch floor $nodes)" $n) |" \
                "$(cellfmt "$(d launch loom $nodes)" $n) | $(cellfmt "$(d launch pmi2 $nodes)" $n) |" \
                "$(ratio "$(med "$(d launch loom $nodes)" $n)" "$f") | $(ratio "$(med "$(d launch pmi2 $nodes)" $n)" "$f") |"
        done
    done
    echo
    echo "## What the launch goal leaves for the PMI work, and what the tasks cost themselves"
    echo "One more run of each launch variant with every task under bench/cputime.c: the sum over"
    echo "the N tasks of their CPU time (s; their user part beside it). The tasks of the floor run"
    echo "/bin/true. On $(nproc) CPUs the PMI program cannot end sooner than floor + (its tasks' CPU"
    echo "- /bin/true's) / $(nproc), whatever serves it; the goal leaves it 0.3 x floor."
    echo "bound / budget > 1: the goal is out of reach on this machine, for any server."
    echo
    echo "| nodes | N | 0.3 x floor | tasks' CPU: /bin/true | kvstest, loom (user) | kvstest, pmi2 (user) | bound: (loom - true) / $(nproc) | bound / budget |"
    echo "|---|---|---|---|---|---|---|---|"
    ncpu=$(nproc)
    for nodes in 1 4; do
        for n in $launch_sizes; do
            f=$(med "$(d launch floor $nodes)" $n)
            ct=$(med "$(d cpu floor $nodes)" $n) cl=$(med "$(d cpu loom $nodes)" $n)
            cp=$(med "$(d cpu pmi2 $nodes)" $n)
            budget=$(awk -v f="$f" 'BEGIN { if (f == "" || f == "NaN") print ""; else printf "%.3f", 0.3 * f }')
            bound=$(awk -v a="$cl" -v b="$ct" -v c="$ncpu" 'BEGIN {
                if (a == "" || b == "" || a == "NaN" || b == "NaN") print ""; else printf "%.3f", (a - b) / c }')
            echo "| $nodes | $n | ${budget:--} | ${ct:--} | ${cl:--} ($(med "$(d cpuuser loom $nodes)" $n)) |" \
                "${cp:--} ($(med "$(d cpuuser pmi2 $nodes)" $n)) | ${bound:--} | $(ratio "$bound" "$budget") |"
        done
    done
    echo
    echo "## Launch to exit (s), MPI hello (init + allreduce + finalize), 4 nodes"
    echo "Debian MPICH 4.0.2 under --mpi=loom and --mpi=pmi2 (the same binary, with the finalize"
    echo "shim for both), Open MPI 4.1.4 under --mpi=pmix. ratio = MPICH loom / MPICH pmi2 (goal: <= 1)."
    echo
    echo "| N | MPICH --mpi=loom | MPICH --mpi=pmi2 | Open MPI --mpi=pmix | ratio |"
    echo "|---|---|---|---|---|"
    for n in $hello_sizes; do
        echo "| $n | $(cellfmt "$(d hello mpich-loom 4)" $n) | $(cellfmt "$(d hello mpich-pmi2 4)" $n) |" \
            "$(cellfmt "$(d hello ompi-pmix 4)" $n) |" \
            "$(ratio "$(med "$(d hello mpich-loom 4)" $n)" "$(med "$(d hello mpich-pmi2 4)" $n)") |"
    done
    [ -n "$base" ] && compare
} >"$md"
log "table in $md"
cat "$md"

if command -v gnuplot >/dev/null 2>&1; then
    if gnuplot -e "name='$outdir/$name'; rel='$release'" "$here/slurm_pmi.gp" 2>"$tmp/gp.err"; then
        log "plot in $outdir/$name.png"
    else
        log "gnuplot failed:"; cat "$tmp/gp.err" >&2
    fi
fi
