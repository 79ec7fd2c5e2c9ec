#!/bin/bash
# t-hosts-flood.sh - a task that floods mpiexec's PMI server with pipelined kvs-get
# requests and never reads the replies (hosts_flood.c, 2 ranks under mpiexec).
#
# Holds when: mpiexec's peak RSS (VmHWM) grows by less than BOUND_MIB (32 MiB) over
# its RSS before the flood (the old code queued every reply: about 1 KiB per
# 24-byte request, 180 MiB for 4 MiB of requests); the other rank is still served
# while rank 0 is stuck; and the job still ends on SIGTERM, with mpiexec's clear
# "caught signal" line, well before the test's timeout.
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
prog=$LOOM_SECDIR/hosts_flood
[ -x "$prog" ] || skip "hosts_flood not built ($prog)"

FLOOD_MIB=${HOSTS_FLOOD_MIB:-4}
BOUND_MIB=32

# kB value of a /proc/PID/status field
status_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }

# wait_for PATH SECS: 0 once PATH exists
wait_for() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

out=$TEST_TMP/flood.out
err=$TEST_TMP/flood.err
export HOSTS_FLOOD_READY=$TEST_TMP/ready HOSTS_FLOOD_GO=$TEST_TMP/go \
    HOSTS_FLOOD_DONE=$TEST_TMP/done
say "run: $LOOM_MPIEXEC -n 2 $prog $FLOOD_MIB (background)"
LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout -k 5 120 "$LOOM_MPIEXEC" -n 2 "$prog" \
    "$FLOOD_MIB" >"$out" 2>"$err" </dev/null &
tpid=$!
# mpiexec is the child of timeout
mpid=
for ((i = 0; i < 50; i++)); do
    mpid=$(pgrep -P "$tpid" -x mpiexec | head -n 1)
    [ -n "$mpid" ] && break
    sleep 0.1
done
[ -n "$mpid" ] || { fail "mpiexec did not start"; kill "$tpid" 2>/dev/null; finish; }

if wait_for "$HOSTS_FLOOD_READY" 30; then
    ok "both ranks initialized and fenced"
else
    fail "the ranks did not get through init and the fence"
fi
base=$(status_kb "$mpid" VmRSS)
say "mpiexec (pid $mpid) VmRSS before the flood: ${base:-?} kB"
touch "$HOSTS_FLOOD_GO"
wait_for "$HOSTS_FLOOD_DONE" 60 || fail "rank 0 did not finish flooding in 60 s"
# rank 1's round trips, then let the last replies queue
for ((i = 0; i < 100; i++)); do
    grep -q 'rank 1: .* OK' "$out" 2>/dev/null && break
    sleep 0.1
done
sleep 1
peak=$(status_kb "$mpid" VmHWM)
say "mpiexec VmHWM after the flood: ${peak:-?} kB; $(grep -h 'wrote' "$out")"
if [ -n "$base" ] && [ -n "$peak" ] && [ $((peak - base)) -lt $((BOUND_MIB * 1024)) ]; then
    ok "mpiexec grew by $(((peak - base) / 1024)) MiB (< $BOUND_MIB MiB) under a ${FLOOD_MIB} MiB flood"
else
    fail "mpiexec grew from ${base:-?} kB to a peak of ${peak:-?} kB (bound: +$BOUND_MIB MiB)"
fi
assert_grep "rank 1: 200 gets served while rank 0 flooded OK" "$out" \
    "the other rank is served while rank 0 does not read"

kill -TERM "$mpid" 2>/dev/null
wait "$tpid"
rc=$?
say "mpiexec exit $rc"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    fail "the job did not end on SIGTERM (killed by the test's timeout)"
else
    ok "the job ended on SIGTERM (exit $rc)"
fi
assert_grep "mpiexec: caught signal 15" "$err" "mpiexec says why the job ended"
finish
