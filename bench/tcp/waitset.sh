#!/bin/bash
# bench/tcp/waitset.sh - two Loom builds side by side in one run, on the cases where a
# rank's idle sleep matters: how an idle rank sleeps on shared memory and TCP at once
# (one poll set with shm's wake eventfd, against the former helper thread), and the
# shm-only futex path next to it.
#
# Usage: bench/tcp/waitset.sh [-r ROUNDS] OLD_BUILDDIR NEW_BUILDDIR
#   ROUNDS    rounds, alternating the builds (default 5); the table gives the median of
#             the rounds' values and their range
# Cases (each one launch per build per round):
#   shm-pp    2 ranks, shm only: mpibench lat, 0 B and 8 B half round trip (us)
#   shm-ovs   4 ranks, shm only (oversubscribed: waits sleep on the futex): mixpp, 8 B
#             ping-pong 0 <-> 1, ranks 2-3 asleep
#   mix-shm   4 ranks, LOOM_MPI_FAKE_NODES=2 (oversubscribed on 2 cores): mixpp, 8 B
#             ping-pong 0 <-> 1 over shm while the job also uses TCP, ranks 2-3 asleep
#   mix-tcp   the same job, 0 <-> 2 over TCP, ranks 1 and 3 asleep
#   bar8mix   8 ranks, LOOM_MPI_FAKE_NODES=4: mpibench barrier (us per call)
#   bar64     64 ranks, shm only, oversubscribed: mpibench barrier (us per call)
# Environment: BENCH_TIMEOUT (seconds per launch, default 120).
# Not part of make check: speed is measured here, never asserted.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=5
while getopts "r:h" c; do
    case $c in
    r) rounds=$OPTARG ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,20p' "$0"; exit 2; }
TMO=${BENCH_TIMEOUT:-120}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
builds=(old new)
declare -A B=([old]=$1 [new]=$2)
for b in "${builds[@]}"; do
    "${B[$b]}/mpi/mpicc" -O2 -o "$tmp/mpibench.$b" "$top/bench/mpi/mpibench.c" -lm &&
        "${B[$b]}/mpi/mpicc" -O2 -o "$tmp/mixpp.$b" "$here/mixpp.c" || exit 1
done
run() { # build case np env... -- prog args...
    local b=$1 case=$2 np=$3
    shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout -k 5 "$TMO" "${B[$b]}/launcher/mpiexec" -n "$np" "$@" \
        2>/dev/null | awk -v b="$b" -v c="$case" '/^RESULT/ { print b, c, $0 }'
}
for ((i = 0; i < rounds; i++)); do
    for b in "${builds[@]}"; do
        run $b shm-pp 2 -- "$tmp/mpibench.$b" -r 5 lat
        run $b shm-ovs 4 -- "$tmp/mixpp.$b" 1
        run $b mix 4 LOOM_MPI_FAKE_NODES=2 -- "$tmp/mixpp.$b" 1 2
        run $b bar8mix 8 LOOM_MPI_FAKE_NODES=4 -- "$tmp/mpibench.$b" -r 5 barrier
        run $b bar64 64 -- "$tmp/mpibench.$b" -r 3 -T 0.2 barrier
    done
done >"$tmp/raw"
# one value per (build, case, size): the lat lines give 0 B and 8 B, mixpp peer 1 = shm
# and peer 2 = TCP
awk '
    $2 == "shm-pp" && $4 == "lat" && ($6 == 0 || $6 == 8) { k = "shm-pp " $6 " B"; v = $7 }
    $2 == "shm-ovs" && $4 == "mixpp" { k = "shm-ovs 8 B"; v = $8 }
    $2 == "mix" && $4 == "mixpp" { k = ($6 == 1 ? "mix-shm" : "mix-tcp") " 8 B"; v = $8 }
    $2 == "bar8mix" && $4 == "barrier" { k = "bar8mix"; v = $7 }
    $2 == "bar64" && $4 == "barrier" { k = "bar64"; v = $7 }
    k != "" { print $1 "\t" k "\t" v; k = "" }
' "$tmp/raw" | sort -t$'\t' -k2,2 -k1,1 -k3,3g | awk -F'\t' '
    { key = $2 "\t" $1; vals[key] = vals[key] " " $3; n[key]++ }
    END {
        printf "%-14s %-5s %10s %20s %s\n", "case", "build", "median", "range", "(us)"
        for (key in vals) {
            m = split(substr(vals[key], 2), a, " ")
            split(key, kb, "\t")
            printf "%-14s %-5s %10.3f %9.3f-%-10.3f n=%d\n", kb[1], kb[2], a[int((m + 1) / 2)],
                a[1], a[m], m
        }
    }' | sort
