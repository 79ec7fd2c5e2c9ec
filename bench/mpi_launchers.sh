#!/bin/bash
# bench/mpi_launchers.sh - Loom's MPI under each launcher path of issue 25, side by side in
# one run, on real Slurm clusters: one node (cluster.sh -N 1) and four network-namespace
# nodes (cluster.sh -n 4). Launch to exit (srun start to srun exit) of:
#   a  loom-pmix         Loom-MPI hello (BUILD/mpi/hello) under srun --mpi=pmix (Slurm's
#                        own PMIx plugin; Loom's MPI through its PMIx client path)
#   b  loom-loom         the same under srun --mpi=loom (Loom's plugin; the PMI-2 path)
#   c  ompi-pmix         Open MPI's hello (BUILD/tests/programs/ompi_hello) under
#                        srun --mpi=pmix
#   d  loom-pmix-direct  a with LOOM_MPI_PMIX_COLLECT=0 (a fence without data, then
#                        direct modex: each get of a remote card asks the server)
#   e  loom-loom-pmix    b with LOOM_MPI_PMI=pmix (Loom's PMIx client against the PMIx
#                        server of Loom's plugin)
#   floor-pmix, floor-loom  srun --mpi=pmix / --mpi=loom of /bin/true: what each plugin
#                        costs a step by itself, so that a - floor-pmix and b - floor-loom
#                        give the MPI library's own share
# at N = 2, 8, 16, 64 on each cluster (N = 2: a CPU per rank on a 2-CPU machine). Each
# cell: REPS runs (default 9) of every variant, interleaved (the order rotates by one
# variant each round), after one unrecorded
# warm-up run of each. A run counts only if srun exits 0 and the output says one job of
# size N: Loom's hello prints "No Errors" once (N singletons would print it N times),
# Open MPI's "hello: N ranks OK" once. A failed or timed-out run is recorded as such and
# ends that variant's cell. Then one more run of each variant with every task under
# bench/cputime.c: the CPU time of the tasks, summed (where the time goes on a machine
# with fewer CPUs than ranks). The table gives median [min-max], the ratios a/b (goal
# <= 1.2), a/c (goal < 1), d/a and e/b, the shares above the floors and the CPU sums.
#
# Usage: bench/mpi_launchers.sh [-n NAME] [-r REPS] [-1] [-q]
#   -n NAME  results go to bench/results/NAME.{md,csv,png} and NAME.{hello,cpu}.*.dat
#            (default: mpi-launchers)
#   -1       one node only (no netns cluster)
#   -q       quick: 2 reps, N = 2 and 64, a smoke test of the script
# Environment: LOOM_BUILD_DIR (default build), LOOM_PLUGIN_DIR (default
#   BUILD/plugin/.libs), BENCH_TIMEOUT (seconds per run, default 120), BENCH_OUTDIR,
#   LOOM_SLURM_PORT (passed to cluster.sh). Needs root, the Slurm daemons with Slurm's
#   mpi/pmix, a build configured with libpmix-dev, mpicc.openmpi and
#   --with-slurm-source; not part of `make check`. The kernel's autogroup scheduling is
#   off while it runs (and restored after): the four nodes share one kernel
#   (bench/autogroup.sh says why).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
me=mpi_launchers.sh
name=mpi-launchers
reps=9
quick=0
four=1
while getopts "n:r:q1h" c; do
    case $c in
        n) name=$OPTARG ;;
        r) reps=$OPTARG ;;
        q) quick=1; reps=2 ;;
        1) four=0 ;;
        *) sed -n '2,41p' "$0"; exit 2 ;;
    esac
done
bdir=${LOOM_BUILD_DIR:-build}
case "$bdir" in /*) ;; *) bdir=$top/$bdir ;; esac
plugin_src=${LOOM_PLUGIN_DIR:-$bdir/plugin/.libs}
TMO=${BENCH_TIMEOUT:-120}
hello=$bdir/mpi/hello
ompi_hello=$bdir/tests/programs/ompi_hello
outdir=${BENCH_OUTDIR:-$here/results}
csv=$outdir/$name.csv
md=$outdir/$name.md
cluster=$top/tests/slurm/cluster.sh
sizes="2 8 16 64"
[ "$quick" = 1 ] && sizes="2 64"
exec </dev/null

log() { echo "$me: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "needs root (slurmd)"; exit 77; }
for f in "$hello" "$ompi_hello" "$plugin_src/mpi_loom.so"; do
    [ -e "$f" ] || { log "$f not built (configure with libpmix-dev, mpicc.openmpi and --with-slurm-source; make, then make -C BUILD/mpi hello)"; exit 1; }
done
for c in srun slurmd slurmctld; do
    command -v $c >/dev/null || { log "$c not installed"; exit 77; }
done
mkdir -p "$outdir"

for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# the runs' environment is the bench's: none of Loom's MPI switches from the caller
for v in $(env | sed -n 's/^\(LOOM_MPI_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/loom-bench-launchers.XXXXXX")
c1=$tmp/c1 c4=$tmp/c4
. "$here/autogroup.sh"
cleanup() {
    "$cluster" stop "$c1" >/dev/null 2>&1
    [ "$four" = 1 ] && "$cluster" stop "$c4" >/dev/null 2>&1
    autogroup_restore
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
autogroup_off
mkdir -p "$tmp/plugins"
install -m 0755 "$plugin_src/mpi_loom.so" "$tmp/plugins/mpi_loom.so" || exit 1
cputime=
if cc -O2 -o "$tmp/cputime" "$here/cputime.c" 2>"$tmp/cputime.err"; then
    cputime=$tmp/cputime
else
    log "cannot build bench/cputime.c: the tasks' CPU rows are skipped"
fi

log "starting the clusters"
"$cluster" start "$c1" -N 1 -c 64 -P "$tmp/plugins" >/dev/null 2>"$tmp/c1.err" ||
    { cat "$tmp/c1.err" >&2; log "the one-node cluster did not start"; exit 1; }
c4kind='' no4=''
if [ "$four" = 1 ]; then
    # netns nodes only: on four slurmd of one host (cluster.sh -N 4) Slurm's mpi/pmix
    # failed to launch most steps ("task N launch failed: Unspecified error"), so that
    # fallback would measure nothing.
    p4=${LOOM_SLURM_PORT:+$((LOOM_SLURM_PORT + 10))}
    for try in 1 2; do
        if LOOM_SLURM_PORT=$p4 "$cluster" start "$c4" -n 4 -c 64 -P "$tmp/plugins" \
                >/dev/null 2>"$tmp/c4.err"; then
            c4kind="4 netns nodes on a bridge"
            break
        fi
        cat "$tmp/c4.err" >&2
        log "the netns cluster did not start (try $try of 2)"
        "$cluster" stop "$c4" >/dev/null 2>&1
        sleep 3
    done
    if [ -z "$c4kind" ]; then
        four=0
        no4="The 4-node netns cluster did not start: $(tail -n 1 "$tmp/c4.err" | cut -c1-160 | tr -c '[:print:]\n' '?')"
    fi
fi
node_counts=1
[ "$four" = 1 ] && node_counts="1 4"

echo "metric,nodes,n,variant,rep,value,status" >"$csv"

srun_args() { # NODES N -> the srun layout options
    if [ "$1" -eq 1 ]; then echo "-N 1 -n $2"
    elif [ "$2" -lt "$1" ]; then echo "-N $2 -n $2"
    else echo "-N $1 -n $2 --ntasks-per-node=$(( $2 / $1 ))"
    fi
}

# right VARIANT N: 0 when the run's output shows one job of size N
right() {
    case $1 in
        floor-*) [ ! -s "$tmp/out" ] ;;
        ompi-*) [ "$(grep -c "^hello: $2 ranks OK\$" "$tmp/out")" -eq 1 ] ;;
        *) [ "$(grep -c '^No Errors$' "$tmp/out")" -eq 1 ] &&
               ! grep -q '^Found .* errors$' "$tmp/out" ;;
    esac
}

# one_run NODES N VARIANT REP CMD...: time one run, append a row; 1 on failure
one_run() {
    local nodes=$1 n=$2 variant=$3 rep=$4; shift 4
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
    elif ! right "$variant" "$n"; then
        status=wrong # e.g. N singletons: not one job of size N
    fi
    [ "$status" = ok ] || val=
    echo "hello,$nodes,$n,$variant,$rep,$val,$status" >>"$csv"
    printf '  nodes=%d n=%-3s %-17s rep %d: %s %s\n' "$nodes" "$n" "$variant" "$rep" \
        "${val:--}" "$status" >&2
    if [ "$status" != ok ]; then
        { tail -n 3 "$tmp/err"; [ "$status" = wrong ] && head -n 3 "$tmp/out"; } |
            cut -c1-200 | tr -c '[:print:]\n' '?' | sed 's/^/      | /' >&2
        return 1
    fi
    return 0
}

# cell NODES N REPS "VARIANT|CMD" ...: REPS runs of every variant, interleaved
cell() {
    local nodes=$1 n=$2 r=$3; shift 3
    local rep i k spec variant dead=" "
    local -a all=("$@")
    for rep in $(seq 1 "$r"); do
        for k in $(seq 0 $(( ${#all[@]} - 1 ))); do
            i=$(( (k + rep - 1) % ${#all[@]} ))
            spec=${all[$i]}
            variant=${spec%%|*}
            case $dead in *" $variant "*) continue ;; esac
            # shellcheck disable=SC2086
            one_run "$nodes" "$n" "$variant" "$rep" ${spec#*|} || dead="$dead$variant "
        done
    done
}

# cpu_run NODES N VARIANT CMD...: one run of CMD with the program (its last word) under
# bench/cputime; appends the sum over the tasks of their CPU time (metric cpu, s). No
# value unless every task reported and the run was right.
cpu_run() {
    local nodes=$1 n=$2 variant=$3; shift 3
    local conf=$c1/slurm.conf sums rc
    [ "$nodes" -ne 1 ] && conf=$c4/slurm.conf
    local -a cmd=("$@")
    local last=$(( ${#cmd[@]} - 1 ))
    cmd[$last]="$cputime ${cmd[$last]}"
    # shellcheck disable=SC2068
    SLURM_CONF=$conf timeout -k 5 "$TMO" ${cmd[@]} >"$tmp/out" 2>"$tmp/err"
    rc=$?
    sums=$(awk '/^cputime: /{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] } k++ }
        END { printf "%d %.3f", k, v["cpu_us"] / 1e6 }' "$tmp/err")
    set -- $sums
    if [ "$rc" -eq 0 ] && [ "$1" -eq "$n" ] && right "$variant" "$n"; then
        echo "cpu,$nodes,$n,$variant,1,$2,ok" >>"$csv"
        printf '  nodes=%d n=%-3s %-17s tasks CPU %s s\n' "$nodes" "$n" "$variant" "$2" >&2
    else
        echo "cpu,$nodes,$n,$variant,1,,nodata" >>"$csv"
        log "cpu nodes=$nodes n=$n $variant: exit $rc, $1 of $n tasks reported their CPU time"
    fi
}

variants="loom-pmix loom-loom ompi-pmix loom-pmix-direct loom-loom-pmix floor-pmix floor-loom"
specs_for() { # NODES N -> one "VARIANT|CMD" per line
    local lay
    lay=$(srun_args "$1" "$2")
    echo "loom-pmix|srun --mpi=pmix $lay $hello"
    echo "loom-loom|srun --mpi=loom $lay $hello"
    echo "ompi-pmix|srun --mpi=pmix $lay $ompi_hello"
    echo "loom-pmix-direct|srun --mpi=pmix --export=ALL,LOOM_MPI_PMIX_COLLECT=0 $lay $hello"
    echo "loom-loom-pmix|srun --mpi=loom --export=ALL,LOOM_MPI_PMI=pmix $lay $hello"
    echo "floor-pmix|srun --mpi=pmix $lay /bin/true"
    echo "floor-loom|srun --mpi=loom $lay /bin/true"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }
load0=$(loadavg)
t0=$(date +%s)
ifaces=
log "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cpus, $reps reps${c4kind:+, 4 nodes: $c4kind}"
for nodes in $node_counts; do
    # Warm-up (page cache, slurmd's plugin loads, the PMIx server's first job): one run
    # of each variant, not recorded.
    conf=$c1/slurm.conf
    [ "$nodes" -ne 1 ] && conf=$c4/slurm.conf
    while IFS= read -r spec; do
        # shellcheck disable=SC2086
        SLURM_CONF=$conf timeout -k 5 "$TMO" ${spec#*|} </dev/null >/dev/null 2>&1
    done < <(specs_for "$nodes" 8)
    # Which interface each Loom variant wires up through (rank 0 names it under
    # LOOM_MPI_DEBUG), one run at N = 2: a variant on the wrong path is flagged.
    while IFS= read -r spec; do
        v=${spec%%|*}
        case $v in loom-loom) want=PMI-2 ;; loom-*) want=PMIx ;; *) continue ;; esac
        # shellcheck disable=SC2086
        got=$(LOOM_MPI_DEBUG=1 SLURM_CONF=$conf timeout -k 5 "$TMO" ${spec#*|} </dev/null 2>&1 >/dev/null |
            sed -n 's/^loom-mpi: rank 0 of 2: process manager interface \([A-Za-z0-9-]*\),.*/\1/p' |
            head -n1)
        if [ "$got" = "$want" ]; then
            ifaces="$ifaces $nodes:$v=$got"
        else
            ifaces="$ifaces $nodes:$v=${got:-none}(expected:$want)"
            log "$v on $nodes node(s) wired up through ${got:-no interface it named}, not $want"
        fi
    done < <(specs_for "$nodes" 2)
    for n in $sizes; do
        mapfile -t specs < <(specs_for "$nodes" "$n")
        cell "$nodes" "$n" "$reps" "${specs[@]}"
        if [ -n "$cputime" ]; then
            for spec in "${specs[@]}"; do
                # shellcheck disable=SC2086
                cpu_run "$nodes" "$n" "${spec%%|*}" ${spec#*|}
            done
        fi
    done
done
elapsed=$(( $(date +%s) - t0 ))
load1=$(loadavg)
log "measured in ${elapsed}s"

# ---- summary -------------------------------------------------------------------------
# stats METRIC NODES VARIANT -> lines "N median min max count status" (NaN where no data)
stats() {
    awk -F, -v m="$1" -v nd="$2" -v va="$3" -v sizes="$sizes" '
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
d() { echo "$outdir/$name.hello.$1.$2.dat"; } # VARIANT NODES
dc() { echo "$outdir/$name.cpu.$1.$2.dat"; } # VARIANT NODES
for nodes in 1 4; do
    for v in $variants; do
        stats hello "$nodes" "$v" >"$(d "$v" "$nodes")"
        stats cpu "$nodes" "$v" >"$(dc "$v" "$nodes")"
    done
done
cellfmt() { # FILE N -> "median [min-max]" or "failed (status)" or "-"
    awk -v n="$2" '$1 == n {
        if ($2 == "NaN") { print ($6 == "none") ? "-" : "failed (" $6 ")"; exit }
        s = sprintf("%s [%s-%s]", $2, $3, $4); if ($6 != "ok") s = s ", then " $6
        print s; exit }' "$1"
}
med() { awk -v n="$2" '$1 == n { print $2; exit }' "$1"; }
diff() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "NaN" || b == "NaN") print "-"; else printf "%.3f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "NaN" || b == "NaN" || b == 0) print "-"; else printf "%.2f", a / b }'; }
# goal RATIO OP LIMIT -> RATIO with a mark when it misses the goal
goal() { awk -v r="$1" -v op="$2" -v l="$3" 'BEGIN {
    if (r == "-") { print r; exit }
    ok = (op == "<=") ? r <= l : r < l
    print ok ? r : "**" r "**" }'; }

{
    echo "# Loom's MPI under each launcher path ($name)"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cpus ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)),"
    echo "$(uname -r), Slurm $(SLURM_CONF=$c1/slurm.conf srun --version 2>/dev/null | awk '{print $2}'),"
    echo "OpenPMIx $(pkg-config --modversion pmix 2>/dev/null), Open MPI $(ompi_info --version 2>/dev/null | awk 'NR==1 {print $NF}'),"
    echo "Loom $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')."
    echo "1 node = one slurmd${c4kind:+; 4 nodes = $c4kind}. Medians of $reps runs, [min-max], in"
    echo "seconds from srun's start to its exit; the variants interleaved run by run. Raw runs:"
    echo "\`$name.csv\`; measured in ${elapsed} s. Load average (1/5/15 min) at the start:"
    echo "$load0; at the end: $load1 (other work on the machine shows here: compare the"
    echo "columns of one run, not runs)."
    autogroup_note
    [ -n "$no4" ] && { echo; echo "**$no4: one node only.**"; }
    echo
    echo "Rerun: \`bench/mpi_launchers.sh\` (as root; LOOM_BUILD_DIR=the build, \`-r REPS\`,"
    echo "\`-1\` for one node only, \`-n NAME\`), or \`make -C BUILD/bench bench-launchers\`."
    echo
    echo "Variants: **a** Loom-MPI hello (\`mpi/hello\`: init, 2 allreduce, bcast, 10 barriers,"
    echo "reduce, finalize) under \`srun --mpi=pmix\` (Slurm's PMIx plugin, Loom's PMIx client);"
    echo "**b** the same under \`srun --mpi=loom\` (PMI-2); **c** Open MPI's hello"
    echo "(\`tests/programs/ompi_hello\`: init, 1 allreduce, finalize) under \`srun --mpi=pmix\`;"
    echo "**d** a with \`LOOM_MPI_PMIX_COLLECT=0\` (direct modex); **e** b with \`LOOM_MPI_PMI=pmix\`"
    echo "(Loom's PMIx client against the PMIx server of Loom's plugin). A run counts only when"
    echo "its output shows one job of size N. The interface each Loom variant wired up"
    echo "through (rank 0's line under LOOM_MPI_DEBUG=1, one run at N = 2, nodes:variant):"
    echo "$(echo "$ifaces" | sed 's/^ //; s/ /, /g')."
    case $ifaces in *expected*) echo "**A variant ran on the wrong path: its column does not measure what it says.**" ;; esac
    echo
    echo "## Launch to exit (s)"
    echo "Goals (issue 25): a/b <= 1.2, a/c < 1; **bold**: missed."
    echo
    echo "| nodes | N | a: loom, pmix | b: loom, loom | c: ompi, pmix | d: loom, pmix, direct | e: loom, loom, PMIx | a/b | a/c | d/a | e/b |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for nodes in $node_counts; do
        for n in $sizes; do
            a=$(med "$(d loom-pmix "$nodes")" "$n") b=$(med "$(d loom-loom "$nodes")" "$n")
            c=$(med "$(d ompi-pmix "$nodes")" "$n") dd=$(med "$(d loom-pmix-direct "$nodes")" "$n")
            e=$(med "$(d loom-loom-pmix "$nodes")" "$n")
            row="| $nodes | $n"
            for v in loom-pmix loom-loom ompi-pmix loom-pmix-direct loom-loom-pmix; do
                row="$row | $(cellfmt "$(d "$v" "$nodes")" "$n")"
            done
            echo "$row | $(goal "$(ratio "$a" "$b")" "<=" 1.2) | $(goal "$(ratio "$a" "$c")" "<" 1) |" \
                "$(ratio "$dd" "$a") | $(ratio "$e" "$b") |"
        done
    done
    echo
    echo "## The plugins' floors and the MPI library's share above them (s), same runs"
    echo "floor = \`srun --mpi=X /bin/true\`: the step, the plugin's server and N tasks that do"
    echo "nothing. a - floor(pmix) and b - floor(loom) (medians) are what Loom's MPI adds under"
    echo "each plugin: PMI-2 against the PMIx client path, each beside its own server."
    echo
    echo "floor(pmix) / b is the a/b that a client costing nothing would reach under Slurm's plugin."
    echo
    echo "| nodes | N | floor, pmix | floor, loom | floor(pmix) / b | a - floor(pmix) | b - floor(loom) | e - floor(loom) | (a - floor) / (b - floor) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for nodes in $node_counts; do
        for n in $sizes; do
            a=$(med "$(d loom-pmix "$nodes")" "$n") b=$(med "$(d loom-loom "$nodes")" "$n")
            e=$(med "$(d loom-loom-pmix "$nodes")" "$n")
            fp=$(med "$(d floor-pmix "$nodes")" "$n") fl=$(med "$(d floor-loom "$nodes")" "$n")
            echo "| $nodes | $n | $(cellfmt "$(d floor-pmix "$nodes")" "$n") | $(cellfmt "$(d floor-loom "$nodes")" "$n") |" \
                "$(ratio "$fp" "$b") | $(diff "$a" "$fp") | $(diff "$b" "$fl") | $(diff "$e" "$fl") |" \
                "$(ratio "$(diff "$a" "$fp")" "$(diff "$b" "$fl")") |"
        done
    done
    if [ -n "$cputime" ]; then
        ncpu=$(nproc)
        echo
        echo "## The tasks' CPU time (s, summed over the N tasks; one more run of each)"
        echo "Every task under bench/cputime.c (its own CPU time, user + system). With more ranks"
        echo "than the $ncpu CPUs, what a's tasks burn beyond b's cannot take less wall time than"
        echo "(a - b) / $ncpu: the last column, beside the measured a - b (medians above). At N <= $ncpu"
        echo "every rank has a CPU and polls while it waits for the others: its CPU time holds that"
        echo "waiting, and these rows bound nothing (-)."
        echo
        echo "| nodes | N | a: loom, pmix | b: loom, loom | c: ompi, pmix | d: direct | e: loom, PMIx | floor, pmix | per task a - b (ms) | (a - b) / $ncpu CPUs | measured a - b |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|"
        for nodes in $node_counts; do
            for n in $sizes; do
                ca=$(med "$(dc loom-pmix "$nodes")" "$n") cb=$(med "$(dc loom-loom "$nodes")" "$n")
                row="| $nodes | $n"
                for v in loom-pmix loom-loom ompi-pmix loom-pmix-direct loom-loom-pmix floor-pmix; do
                    row="$row | $(med "$(dc "$v" "$nodes")" "$n")"
                done
                per=$(awk -v a="$ca" -v b="$cb" -v n="$n" -v c="$ncpu" 'BEGIN { if (a == "" || b == "" || a == "NaN" || b == "NaN" || n <= c) print "-"; else printf "%.1f", (a - b) * 1000 / n }')
                bound=$(awk -v a="$ca" -v b="$cb" -v n="$n" -v c="$ncpu" 'BEGIN { if (a == "" || b == "" || a == "NaN" || b == "NaN" || n <= c) print "-"; else printf "%.3f", (a - b) / c }')
                echo "$row | $per | $bound | $(diff "$(med "$(d loom-pmix "$nodes")" "$n")" "$(med "$(d loom-loom "$nodes")" "$n")") |"
            done
        done
    fi
} >"$md"
log "table in $md"
cat "$md"

if command -v gnuplot >/dev/null 2>&1; then
    if gnuplot -e "name='$outdir/$name'; panels='$node_counts'" "$here/mpi_launchers.gp" 2>"$tmp/gp.err"; then
        log "plot in $outdir/$name.png"
    else
        log "gnuplot failed:"; cat "$tmp/gp.err" >&2
    fi
fi
