#!/bin/bash
# t-net-crowd.sh - 1 000 idle TCP connections (no byte sent) on a listener must not keep
# the real peers out (issue 18 item 5): the rendezvous server (net_tool rdvcrowd: three
# real nodes must get their tables within 5 s), and mpiexec's port with -hosts and the
# fork launcher (the crowd connects before the proxies, which a wrapper delays by 2 s;
# the job must pass).  MPIEXEC_PORT_RANGE holds three ports, one for each listener of
# the job (mpiexec's port, its tree rendezvous, node 0's tree links), each taken from a
# random one on: a crowd sits on every port, and the one on the port `mpiexec -v` names
# must have got in.  Before the fix both listeners refused newcomers once 64 / 256
# strangers waited (10 s each), and the proxy never retried.
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
tool=$LOOM_SECDIR/net_tool
[ -x "$tool" ] || skip "net_tool not built ($tool)"

run_cmd -t 60 "$tool" rdvcrowd 1000
cat "$err" | sed 's/^/    | /'
assert_rc 0 "rendezvous: every node got its table past 1000 idle connections"

port=$("$tool" freeport) || skip "no free port"
cat >"$TEST_TMP/slowproxy" <<EOS
#!/bin/sh
# the proxies come after the crowd
sleep 2
exec "$LOOM_MPIEXEC" "\$@"
EOS
chmod +x "$TEST_TMP/slowproxy"
# a crowd on every port of the range: the listeners take theirs from a random one on
crowds=()
for i in 0 1 2; do
    "$tool" crowd 127.0.0.1 $((port + i)) 1000 60 2>"$TEST_TMP/crowd$i.err" &
    crowds+=($!)
done
MPIEXEC_PORT_RANGE=$port:$((port + 2)) LOOM_MPIEXEC_PROXY=$TEST_TMP/slowproxy \
    run_job -t 60 -v -launcher fork -hosts h1,h2,h3 -n 6 "$LOOM_PROGDIR/pmi2_kvstest_loom"
kill "${crowds[@]}" 2>/dev/null
wait "${crowds[@]}" 2>/dev/null
fport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$err" | head -n 1)
if [ -n "$fport" ] && [ "$fport" -ge "$port" ] && [ "$fport" -le $((port + 2)) ]; then
    assert_grep "crowd: 1000 open" "$TEST_TMP/crowd$((fport - port)).err" \
        "1000 idle connections were open on mpiexec's port $fport"
else
    fail "mpiexec -v did not name a port in $port:$((port + 2)) ('$fport')"
fi
assert_rc 0 "mpiexec -hosts: the three proxies got in past the crowd"
assert_grep "3 rounds OK" "$out" "the job's fences passed"
finish
