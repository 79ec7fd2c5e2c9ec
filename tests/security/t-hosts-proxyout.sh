#!/bin/bash
# t-hosts-proxyout.sh - rank output through a proxy (mpiexec -hosts h1,h2, fork launcher)
# while mpiexec's own stdout is not read: rank 0 writes 64 MiB as fast as it can.  The proxy
# must stop reading the rank's pipe once 4 MiB wait for mpiexec (the old proxy queued
# everything it read): its peak RSS (VmHWM) stays within 32 MiB of its start, and
# once the reader drains, every byte arrives and the job exits 0.
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec

MIB=64
BOUND_MIB=32
status_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }

fifo=$TEST_TMP/out.fifo
mkfifo "$fifo"
out=$TEST_TMP/out
err=$TEST_TMP/err
# rank 0: MIB MiB of 'x' in lines of 999, then one "END" line; rank 1 says nothing
rank_cmd="[ \"\$PMI_RANK\" = 0 ] || exit 0
    head -c $((MIB * 1024 * 1024)) /dev/zero | tr '\\0' x | fold -w 999; echo; echo END"
say "run: $LOOM_MPIEXEC -launcher fork -hosts h1,h2 -n 2 sh -c '...' > fifo (read late)"
LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout -k 5 120 "$LOOM_MPIEXEC" -launcher fork \
    -hosts h1,h2 -n 2 sh -c "$rank_cmd" >"$fifo" 2>"$err" </dev/null &
tpid=$!
exec 3<"$fifo" # open the reading end, read nothing yet
proxy=
for ((i = 0; i < 50; i++)); do
    for p in $(pgrep -x mpiexec); do
        tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q -- '--proxy --node 0 ' &&
            grep -qaF "LOOM_TEST_MARKER=$LOOM_TEST_MARKER" "/proc/$p/environ" 2>/dev/null &&
            proxy=$p
    done
    [ -n "$proxy" ] && break
    sleep 0.1
done
[ -n "$proxy" ] || fail "no proxy of node 0 (mpiexec --proxy --node 0) found"
base=$(status_kb "$proxy" VmRSS)
sleep 4 # the rank writes; mpiexec's stdout is full; the proxy must not queue it all
peak=$(status_kb "$proxy" VmHWM)
say "proxy (pid ${proxy:-?}) VmRSS at start ${base:-?} kB, VmHWM after 4 s unread: ${peak:-?} kB"
if [ -n "$base" ] && [ -n "$peak" ] && [ $((peak - base)) -lt $((BOUND_MIB * 1024)) ]; then
    ok "the proxy grew by $(((peak - base) / 1024)) MiB (< $BOUND_MIB MiB) while mpiexec's stdout was not read"
else
    fail "the proxy grew from ${base:-?} kB to a peak of ${peak:-?} kB (bound: +$BOUND_MIB MiB)"
fi
cat <&3 >"$out"
exec 3<&-
wait "$tpid"
rc=$?
assert_rc 0 "the job ends normally once its output is read"
assert_eq "$(tail -n 1 "$out")" "END" "the last line"
assert_eq "$(grep -c '^x' "$out")" "$(((MIB * 1024 * 1024 + 998) / 999))" "lines of output"
finish
