#!/bin/bash
# t0171-hosts-stranded.sh - proxies waiting at the tree rendezvous when mpiexec goes
# away or ends the job (-launcher fork -hosts h1,h2,h3; a wrapper holds the proxy of
# node 2, so the proxies of nodes 0 and 1 wait for it at the rendezvous):
#   - mpiexec SIGKILLed: both proxies end at once, saying they lost mpiexec, not at
#     the rendezvous timeout (LOOM_PROXY_TIMEOUT=60 here; the check gives them 10 s,
#     a liveness bound, not a measure);
#   - mpiexec SIGTERMed: it ends the job, both proxies answer its kill (no "no answer
#     from the proxy ... giving up"), and everything is gone.
# Before the fix a proxy in the rendezvous watched nothing but the rendezvous: it
# stayed until its timeout, and mpiexec's kill went unanswered.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom

cat >"$TEST_TMP/holdproxy" <<EOS
#!/bin/sh
# every proxy leaves its pid (exec keeps it); node 2's is held (60 s at most)
echo \$\$ >"$TEST_TMP/proxy.\$3.pid"
if [ "\$3" = 2 ]; then
    i=0
    while [ ! -e "$TEST_TMP/go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exec "$LOOM_MPIEXEC" "\$@"
EOS
chmod +x "$TEST_TMP/holdproxy"

nsockets() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'socket:'; }
# alive and not a zombie
alive() { [ -r "/proc/$1/stat" ] && ! sed 's/^.*) //' "/proc/$1/stat" | grep -q '^Z'; }

# start_job TAG: mpiexec in the background ($mpx), its proxies 0 and 1 ($p0, $p1)
# waiting at the rendezvous (node 0: its link to mpiexec, its tree listener and the
# rendezvous; node 1, a leaf: its link and the rendezvous), $held the wrapper of node 2
start_job() {
    rm -f "$TEST_TMP"/proxy.*.pid
    mpx_err=$TEST_TMP/$1.err
    (LOOM_TEST_MARKER=$LOOM_TEST_MARKER LOOM_MPIEXEC_PROXY=$TEST_TMP/holdproxy \
        LOOM_PROXY_TIMEOUT=60 exec "$LOOM_MPIEXEC" -launcher fork -hosts h1,h2,h3 -n 3 \
        "$LOOM_PROGDIR/pmi2_kvstest_loom" >"$TEST_TMP/$1.out" 2>"$mpx_err" </dev/null) &
    mpx=$!
    p0= p1= held=
    for _ in $(seq 1 300); do
        p0=$(cat "$TEST_TMP/proxy.0.pid" 2>/dev/null)
        p1=$(cat "$TEST_TMP/proxy.1.pid" 2>/dev/null)
        held=$(cat "$TEST_TMP/proxy.2.pid" 2>/dev/null)
        if [ -n "$p0" ] && [ -n "$p1" ] && [ -n "$held" ] &&
            [ "$(nsockets "$p0")" -ge 3 ] && [ "$(nsockets "$p1")" -ge 2 ]; then
            say "$1: mpiexec $mpx, proxies $p0 $p1 at the rendezvous, node 2 held ($held)"
            return 0
        fi
        sleep 0.1
    done
    fail "$1: the proxies did not reach the rendezvous (pids '$p0' '$p1' '$held')"
    sed 's/^/    | /' "$mpx_err"
    return 1
}

# wait_gone WHAT PID...: every PID gone within 10 s, else fail (and kill them)
wait_gone() {
    local what=$1 p left
    shift
    for _ in $(seq 1 100); do
        left=
        for p in "$@"; do alive "$p" && left="$left $p"; done
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -n "$left" ]; then
        fail "$what: still running 10 s later:$left"
        ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')" 2>/dev/null | sed 's/^/    | /'
        # shellcheck disable=SC2086
        kill -9 $left 2>/dev/null
    else
        ok "$what: gone"
    fi
}

# the held wrapper is the test's own: end it by pid
end_held() {
    [ -n "$held" ] && kill -9 "$held" 2>/dev/null
    sleep 0.3 # its last "sleep 0.1"
}

# 1. mpiexec killed outright: nobody will ever answer at the rendezvous
if start_job kill9; then
    kill -9 "$mpx"
    wait "$mpx" 2>/dev/null
    out=$TEST_TMP/kill9.out
    err=$mpx_err
    wait_gone "after SIGKILL of mpiexec, the proxies of nodes 0 and 1" "$p0" "$p1"
    end_held
    assert_grep "host h1 (node 0): lost the connection to mpiexec" "$mpx_err" \
        "the proxy of node 0 says it lost mpiexec"
    assert_grep "host h2 (node 1): lost the connection to mpiexec" "$mpx_err" \
        "the proxy of node 1 says it lost mpiexec"
    grep 'proxy on' "$mpx_err" | sed 's/^/    | /'
fi

# 2. mpiexec ends the job (SIGTERM) while two proxies wait at the rendezvous
if start_job term; then
    kill -TERM "$mpx"
    for _ in $(seq 1 300); do
        kill -0 "$mpx" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$mpx" 2>/dev/null; then
        fail "SIGTERM: mpiexec still running 30 s later"
        kill -9 "$mpx"
    fi
    wait "$mpx"
    rc=$?
    err=$mpx_err
    out=$TEST_TMP/term.out
    assert_rc 143 "SIGTERM: mpiexec exits 128+15"
    wait_gone "after SIGTERM of mpiexec, the proxies of nodes 0 and 1" "$p0" "$p1"
    end_held
    assert_no_grep "no answer from the proxy on host h1" "$mpx_err" \
        "the proxy of node 0 answered the kill from the rendezvous"
    assert_no_grep "no answer from the proxy on host h2" "$mpx_err" \
        "the proxy of node 1 answered the kill from the rendezvous"
    sed 's/^/    | /' "$mpx_err"
fi
finish
