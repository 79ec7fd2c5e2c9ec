#!/bin/bash
# t-net-fakempx.sh - a proxy (mpiexec --proxy) pointed at a fake mpiexec (net_tool
# fakempx: accepts, records every byte, answers with a job frame of either protocol
# version whose one rank would run "touch MARKER") must hand it nothing reusable (the
# cookie never on the wire) and run nothing it sends; it gives up with a clear error
# within its connect timeout (issue 18 item 8).  Before the fix the proxy sent the
# cookie in its first frame and ran the fake's job.
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
tool=$LOOM_SECDIR/net_tool
[ -x "$tool" ] || skip "net_tool not built ($tool)"

marker=$TEST_TMP/pwned
"$tool" fakempx "$TEST_TMP/port" "$TEST_TMP/record" "$marker" 15 &
fake=$!
for _ in $(seq 100); do [ -s "$TEST_TMP/port" ] && break; sleep 0.05; done
port=$(cat "$TEST_TMP/port" 2>/dev/null)
[ -n "$port" ] || { kill "$fake"; skip "the fake mpiexec did not start"; }
cookie=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$cookie" >"$TEST_TMP/cookie"
run_cmd -t 30 sh -c "exec \"\$0\" --proxy --node 0 --connect 127.0.0.1:$port \
    --connect-timeout 4 <\"\$1\"" "$LOOM_MPIEXEC" "$TEST_TMP/cookie"
sleep 1
kill "$fake" 2>/dev/null
wait "$fake" 2>/dev/null
sed 's/^/    | /' "$err"
assert_failed_not_hung "the proxy gives up on a listener that cannot prove the cookie"
if [ -e "$marker" ]; then
    fail "the proxy ran the fake mpiexec's job (marker created)"
else
    ok "the proxy ran nothing the fake sent"
fi
if [ -s "$TEST_TMP/record" ] && grep -qaF "$cookie" "$TEST_TMP/record"; then
    fail "the cookie went to the fake mpiexec"
else
    ok "the fake got no cookie ($(stat -c %s "$TEST_TMP/record" 2>/dev/null || echo 0) bytes recorded)"
fi
assert_grep "cannot reach the mpiexec of this job" "$err" "the proxy says why it gave up"
finish
