#!/bin/bash
# t-net-rdvrefuse.sh - a stranger at mpiexec's tree rendezvous (-hosts, -launcher fork)
# with a forged credential: the rendezvous refuses it, mpiexec's stderr says so (a
# warning naming the peer and the reason, as for its own port), and the job still
# passes.  A wrapper holds the proxy of node 2 until the stranger is done, so the
# rendezvous (which closes once every proxy got its table) is still listening; the
# test finds its port among mpiexec's listening sockets (the one that is not the port
# mpiexec -v names).  Before the fix the refusal was silent: mpiexec started the
# rendezvous without a log callback.
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
tool=$LOOM_SECDIR/net_tool
[ -x "$tool" ] || skip "net_tool not built ($tool)"

go=$TEST_TMP/go
cat >"$TEST_TMP/holdproxy" <<EOS
#!/bin/sh
# node 2's proxy waits for the test (60 s at most)
if [ "\$3" = 2 ]; then
    i=0
    while [ ! -e "$go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exec "$LOOM_MPIEXEC" "\$@"
EOS
chmod +x "$TEST_TMP/holdproxy"

# listening TCP ports of process $1 (decimal), from /proc/net/tcp and its fds
listen_ports() {
    local inodes
    inodes=$(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | tr '\n' ' ')
    [ -n "$inodes" ] || return 0
    local hex
    for hex in $(awk -v want=" $inodes" '$4 == "0A" && index(want, " " $10 " ") {
        split($2, a, ":"); print a[2] }' /proc/net/tcp); do
        echo $((16#$hex))
    done
}

mpx_out=$TEST_TMP/mpx.out
mpx_err=$TEST_TMP/mpx.err
(LOOM_TEST_MARKER=$LOOM_TEST_MARKER LOOM_MPIEXEC_PROXY=$TEST_TMP/holdproxy \
    LOOM_PROXY_TIMEOUT=60 exec "$LOOM_MPIEXEC" -v -launcher fork -hosts h1,h2,h3 -n 3 \
    "$LOOM_PROGDIR/pmi2_kvstest_loom" >"$mpx_out" 2>"$mpx_err" </dev/null) &
mpx=$!
say "mpiexec pid $mpx"

# mpiexec's own port (-v), then the other listener of mpiexec: the rendezvous
front=
rdv=
for _ in $(seq 1 200); do
    front=$(sed -n 's/.*listening on port \([0-9]*\) .*/\1/p' "$mpx_err" | head -n 1)
    if [ -n "$front" ]; then
        rdv=$(listen_ports "$mpx" | grep -vx "$front" | head -n 1)
        [ -n "$rdv" ] && break
    fi
    sleep 0.05
done
if [ -z "$rdv" ]; then
    touch "$go"
    kill -9 "$mpx" 2>/dev/null
    wait "$mpx" 2>/dev/null
    sed 's/^/    | /' "$mpx_err"
    fail "cannot find the rendezvous port of mpiexec (its port: '${front}')"
    finish
fi
say "mpiexec's port $front, its tree rendezvous $rdv"

run_cmd -t 30 "$tool" badcred 127.0.0.1 "$rdv"
sed 's/^/    | /' "$err"
assert_rc 0 "the rendezvous refused the forged credential"
touch "$go"

# the job goes on: bounded wait for mpiexec (it has LOOM_PROXY_TIMEOUT=60 of its own)
for _ in $(seq 1 600); do
    kill -0 "$mpx" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$mpx" 2>/dev/null; then
    kill -9 "$mpx" 2>/dev/null
    fail "mpiexec still running 60 s after the proxy was let go"
fi
wait "$mpx"
rc=$?
out=$mpx_out
err=$mpx_err
assert_rc 0 "the job passed after the stranger was refused"
assert_grep "3 rounds OK" "$out" "the job's fences passed"
assert_grep -E "^mpiexec: warning: tree rendezvous: refused connection from 127\.0\.0\.1: .+" \
    "$err" "mpiexec's stderr names the rendezvous' refusal, the peer and the reason"
grep 'tree rendezvous' "$err" | sed 's/^/    | /'
finish
