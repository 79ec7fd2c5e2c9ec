#!/bin/bash
# bench/mpi/xjob.sh - ping-pong latency between two processes of one node: in one job
# over shared memory, in one job over TCP (LOOM_MPI_NETMOD=tcp), and in two jobs (two
# mpiexec runs joined by MPI_Comm_join), which is what traffic between jobs costs.
# Usage: bench/mpi/xjob.sh [BUILDDIR]   (default ./build); prints a markdown table of
# half round trips in microseconds (median of 7 timed runs, and the minimum).
set -u
b=$(cd "${1:-build}" && pwd) || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$b/mpi/mpicc" -O2 -o "$tmp/xjoblat" "$(dirname "$0")/xjoblat.c" || exit 2
mx=$b/launcher/mpiexec
timeout 120 "$mx" -n 2 "$tmp/xjoblat" one >"$tmp/shm" || exit 1
LOOM_MPI_NETMOD=tcp timeout 120 "$mx" -n 2 "$tmp/xjoblat" one >"$tmp/tcp" || exit 1
mkdir "$tmp/d"
timeout 120 "$mx" -n 1 "$tmp/xjoblat" a "$tmp/d" >"$tmp/xjob" &
timeout 120 "$mx" -n 1 "$tmp/xjoblat" b "$tmp/d" >/dev/null
wait $! || exit 1
echo "| bytes | one job, shm | one job, TCP | two jobs (join) |"
echo "|---:|---:|---:|---:|"
paste "$tmp/shm" "$tmp/tcp" "$tmp/xjob" |
    awk '{ printf "| %s | %s (%s) | %s (%s) | %s (%s) |\n", $1, $2, $3, $5, $6, $8, $9 }'
