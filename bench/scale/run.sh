#!/bin/bash
# bench/scale/run.sh - build bench/scale/emu.c against a build's libraries (the PMI
# server core, treenet, common) and run the emulated cluster at each N: N node server
# processes on 127.0.0.1, cookie-mode rendezvous and tree links, R emulated PMI-2 ranks
# per node driving the core directly.  One TSV row per run (columns: see the header
# line; load1 is the 1-minute load average just before the run); every run under nice
# and a timeout, a failed or timed-out run is reported and skipped.
#
# Usage: bench/scale/run.sh [-N "16 64 256"] [-r RANKS] [-f FENCES] [-w "WIDTHS"]
#                           [-m "MODES"] [-k REPEATS] [-t TIMEOUT_S] [-b BYTES] [-o OUT.tsv]
#                           [-e EMU] [-a "EMU ARGS"]
#   -w, -m: lists; every N x width x mode is run -k times (default 1).
#   -m: the core's KVS modes (full, ondemand, auto; default full)
#   -b: bytes each rank puts per round of the second phase (0 skips it); -o appends
#   (the header only when OUT.tsv is new); -e: run this emulator binary (e.g. the
#   build's tests/scale/emu) instead of building bench/scale/emu.c; -a: more arguments
#   for every run (e.g. "-H 60000", emu.c's header)
# Environment: LOOM_BUILD_DIR (default build).  Not part of `make check` (its test at a
# small N is tests/scale/t-scale-emu.sh).
set -uo pipefail
NS="16 64 256" R=4 F=10 W=2 T=120 B=1024 OUT= MODES=full K=1 EMU= ARGS=
while getopts "N:r:f:w:m:k:t:b:o:e:a:h" c; do
    case $c in
        N) NS=$OPTARG ;;
        r) R=$OPTARG ;;
        f) F=$OPTARG ;;
        w) W=$OPTARG ;;
        m) MODES=$OPTARG ;;
        k) K=$OPTARG ;;
        e) EMU=$OPTARG ;;
        a) ARGS=$OPTARG ;;
        t) T=$OPTARG ;;
        b) B=$OPTARG ;;
        o) OUT=$OPTARG ;;
        *) sed -n '2,21p' "$0"; exit 2 ;;
    esac
done
src=$(cd "$(dirname "$0")/../.." && pwd)
bdir=$(cd "${LOOM_BUILD_DIR:-$src/build}" && pwd) || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
munge=
grep -q '^MUNGE_LIBS = -lmunge' "$bdir/Makefile" && munge=-lmunge
if [ -n "$EMU" ]; then
    cp "$EMU" "$tmp/emu" || exit 2
else
    nice -n 19 cc -O2 -g -Wall -Wextra -I"$bdir" -I"$src/common" -I"$src/pmiserv" \
        -I"$src/treenet" -I"$src/nodesrv" -o "$tmp/emu" "$src/bench/scale/emu.c" \
        "$bdir/nodesrv/.libs/libnodesrv.a" \
        "$bdir/pmiserv/.libs/libpmiserv.a" "$bdir/treenet/.libs/libtreenet.a" \
        "$bdir/common/.libs/libloomcommon.a" $munge -lpthread || exit 2
fi
hdr='N	ranks_per_node	fences	width	big_B	nodes_ok	wrong_gets	rdv_ms	startup_ms	fence0_ms	get0_us	cpu0_ms	busy0_B	fence1k_ms	get1k_us	cpu1k_ms	busy1k_B	rss_kb	hwm_kb	fds	wall_ms	cpu_rdv_ms	cpu_start_ms	cpu0_sum_ms	cpu1k_sum_ms	cpu_up_sum_ms	mode	load1'
[ -n "$OUT" ] && [ ! -s "$OUT" ] && echo "$hdr" >"$OUT"
echo "$hdr"
rc=0
for n in $NS; do
    for w in $W; do
        for m in $MODES; do
            # the full exchange puts the whole KVS into every node (measured: about 7
            # copies of it at the peak); past half of the free memory the big phase is
            # skipped (big_B 0).  On demand, a node keeps its own ranks' values.
            b=$B
            avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
            need_kb=$((n * (2048 + 7 * n * R * (B + 40) / 1024)))
            [ "$m" = ondemand ] && need_kb=$((n * (2048 + 7 * R * (B + 40) / 1024)))
            if [ "$B" -gt 0 ] && [ "$need_kb" -gt $((avail_kb / 2)) ]; then
                echo "N=$n: the ${B}-byte phase would need ~$((need_kb / 1024)) MiB in all;" \
                    "skipped (MemAvailable $((avail_kb / 1024)) MiB)" >&2
                b=0
            fi
            for _ in $(seq "$K"); do
                load=$(cut -d' ' -f1 /proc/loadavg)
                if row=$(timeout -k 5 $((T + 30)) nice -n 19 "$tmp/emu" -n "$n" -r "$R" \
                    -f "$F" -w "$w" -t "$T" -b "$b" -m "$m" $ARGS 2>"$tmp/err"); then
                    row="$row	$load"
                    echo "$row"
                    [ -n "$OUT" ] && echo "$row" >>"$OUT"
                else
                    echo "N=$n width=$w mode=$m failed (exit $?): $row" >&2
                    grep -v 'treenet: refused connection' "$tmp/err" | head -20 >&2
                    rc=1
                fi
                sleep 1 # the last run's processes leave
            done
        done
    done
done
exit $rc
