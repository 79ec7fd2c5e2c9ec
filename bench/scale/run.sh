#!/bin/bash
# bench/scale/run.sh - build bench/scale/emu.c against a build's libraries (the PMI
# server core, treenet, common) and run the emulated cluster at each N: N node server
# processes on 127.0.0.1, cookie-mode rendezvous and tree links, R emulated PMI-2 ranks
# per node driving the core directly.  One TSV row per N (columns: see the header line);
# every run under nice and a timeout, a failed or timed-out N is reported and skipped.
#
# Usage: bench/scale/run.sh [-N "16 64 256"] [-r RANKS] [-f FENCES] [-w WIDTH]
#                           [-t TIMEOUT_S] [-b BYTES] [-o OUT.tsv]
#   -b: bytes each rank puts per round of the second phase (0 skips it); -o appends
#   (the header only when OUT.tsv is new)
# Environment: LOOM_BUILD_DIR (default build).  Not part of `make check`.
set -uo pipefail
NS="16 64 256" R=4 F=10 W=2 T=120 B=1024 OUT=
while getopts "N:r:f:w:t:b:o:h" c; do
    case $c in
        N) NS=$OPTARG ;;
        r) R=$OPTARG ;;
        f) F=$OPTARG ;;
        w) W=$OPTARG ;;
        t) T=$OPTARG ;;
        b) B=$OPTARG ;;
        o) OUT=$OPTARG ;;
        *) sed -n '2,13p' "$0"; exit 2 ;;
    esac
done
src=$(cd "$(dirname "$0")/../.." && pwd)
bdir=$(cd "${LOOM_BUILD_DIR:-$src/build}" && pwd) || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
munge=
grep -q '^MUNGE_LIBS = -lmunge' "$bdir/Makefile" && munge=-lmunge
nice -n 19 cc -O2 -g -Wall -Wextra -I"$bdir" -I"$src/common" -I"$src/pmiserv" \
    -I"$src/treenet" -o "$tmp/emu" "$src/bench/scale/emu.c" \
    "$bdir/pmiserv/.libs/libpmiserv.a" "$bdir/treenet/.libs/libtreenet.a" \
    "$bdir/common/.libs/libloomcommon.a" $munge -lpthread || exit 2
hdr='N	ranks_per_node	fences	width	big_B	nodes_ok	wrong_gets	rdv_ms	startup_ms	fence0_ms	get0_us	cpu0_ms	busy0_B	fence1k_ms	get1k_us	cpu1k_ms	busy1k_B	rss_kb	hwm_kb	fds	wall_ms	load1'
[ -n "$OUT" ] && [ ! -s "$OUT" ] && echo "$hdr" >"$OUT"
echo "$hdr"
rc=0
for n in $NS; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    # the full exchange puts the whole KVS into every node (measured: about 7 copies of
    # it at the peak); past half of the free memory the big phase is skipped (big_B 0)
    b=$B
    avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    need_kb=$((n * (2048 + 7 * n * R * (B + 40) / 1024)))
    if [ "$B" -gt 0 ] && [ "$need_kb" -gt $((avail_kb / 2)) ]; then
        echo "N=$n: the ${B}-byte phase would need ~$((need_kb / 1024)) MiB in all;" \
            "skipped (MemAvailable $((avail_kb / 1024)) MiB)" >&2
        b=0
    fi
    if row=$(timeout -k 5 $((T + 30)) nice -n 19 "$tmp/emu" -n "$n" -r "$R" -f "$F" \
        -w "$W" -t "$T" -b "$b" 2>"$tmp/err"); then
        row="$row	$load"
        echo "$row"
        [ -n "$OUT" ] && echo "$row" >>"$OUT"
    else
        echo "N=$n failed (exit $?):" >&2
        head -20 "$tmp/err" >&2
        rc=1
    fi
done
exit $rc
