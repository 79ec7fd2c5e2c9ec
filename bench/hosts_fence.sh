#!/bin/bash
# bench/hosts_fence.sh - the PMI fence of a multi-host mpiexec job: `mpiexec -launcher
# fork -hosts h0,...,h(H-1) -ppn P pmi2_kvstest_loom -t -r R` (H virtual hosts on this
# machine, one proxy each, every proxy its own PMI server core; so the fence crosses
# the proxies' tree exactly as on H real hosts, minus the network).  Per run, rank 0's
# fence_median_us, fence_last_median_us (the fence as the servers deliver it) and
# round_median_us (put + fence + get-all); the table gives, over REPS runs, the median
# and [min-max] of each.
#
# Usage: bench/hosts_fence.sh [-H HOSTS] [-p PPN] [-r ROUNDS] [-n REPS] [-m MPIEXEC]
#   defaults: 4 hosts, 2 ranks per host, 50 rounds, 5 runs, $LOOM_BUILD_DIR/launcher/mpiexec
# Environment: LOOM_BUILD_DIR (default build), LOOM_PROGDIR (default
# $LOOM_BUILD_DIR/tests/programs), BENCH_TIMEOUT (seconds per run, default 60).
# Not part of `make check`; results by hand into bench/results/hosts-fence.md.
set -uo pipefail
H=4 P=2 R=50 N=5 M=
while getopts "H:p:r:n:m:h" c; do
    case $c in
        H) H=$OPTARG ;;
        p) P=$OPTARG ;;
        r) R=$OPTARG ;;
        n) N=$OPTARG ;;
        m) M=$OPTARG ;;
        *) sed -n '2,13p' "$0"; exit 2 ;;
    esac
done
bdir=${LOOM_BUILD_DIR:-build}
M=${M:-$bdir/launcher/mpiexec}
prog=${LOOM_PROGDIR:-$bdir/tests/programs}/pmi2_kvstest_loom
hosts=$(seq -s, -f 'h%g' 0 $((H - 1)))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$N"); do
    if ! timeout -k 5 "${BENCH_TIMEOUT:-60}" "$M" -launcher fork -hosts "$hosts" -ppn "$P" \
        -n $((H * P)) "$prog" -t -r "$R" >"$tmp/out" 2>"$tmp/err" </dev/null; then
        echo "run $i failed:" >&2
        cat "$tmp/err" >&2
        exit 1
    fi
    grep -o 'fence_median_us=[0-9.]*\|fence_last_median_us=[0-9.]*\|round_median_us=[0-9.]*' \
        "$tmp/out" | tr '\n' ' ' >>"$tmp/all"
    echo >>"$tmp/all"
done
echo "$H hosts x $P ranks, $R rounds, $N runs ($M)"
for k in fence_median_us fence_last_median_us round_median_us; do
    grep -o "\b$k=[0-9.]*" "$tmp/all" | cut -d= -f2 | sort -n |
        awk -v k="$k" '{v[NR]=$1} END {printf "%-22s median %8.1f  [%.1f-%.1f]\n", k, v[int((NR+1)/2)], v[1], v[NR]}'
done
