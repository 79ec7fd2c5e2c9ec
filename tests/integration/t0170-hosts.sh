#!/bin/bash
# t0170-hosts.sh - multi-host mpiexec on virtual hosts: `-launcher fork -hosts a,b,c`
# starts one proxy per host name on this machine, each a separate node of the job (its
# own PMI server core; the proxies link to each other over treenet, mpiexec is off the
# fence path: it sees as many frames for 40 fences as for 1). PMI-2 and PMI-1 key-value
# round trips across the nodes, PMI_process_mapping of the host split, rank placement
# (blocks of slots, -ppn, host files), exit codes, an abort on one host ending the
# others, and a proxy killed mid-job ending the job promptly with its host named.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom pmi1_kvstest pmi_misbehave

F=(-launcher fork)

# placement: 3 hosts with 2 slots each, 6 ranks -> blocks of 2 per host
run_job "${F[@]}" -hosts a:2,b:2,c:2 -n 6 sh -c 'echo "r$PMI_RANK size=$PMI_SIZE local=$MPI_LOCALRANKID/$MPI_LOCALNRANKS"'
assert_rc 0 "sh on 3 virtual hosts"
assert_eq "$(sort "$out" | tr '\n' ' ')" "r0 size=6 local=0/2 r1 size=6 local=1/2 r2 size=6 local=0/2 r3 size=6 local=1/2 r4 size=6 local=0/2 r5 size=6 local=1/2 " "ranks, sizes and local ranks"

# PMI-2 across 3 nodes: values round-trip; the mapping shows 3 nodes of 2 ranks each
LOOM_PMI_LOGLEVEL=debug run_job "${F[@]}" -hosts a:2,b:2,c:2 -n 6 "$LOOM_PROGDIR/pmi2_kvstest_loom"
assert_kvstest 6
assert_grep "mapping (vector,(0,3,2))" "$err" "PMI_process_mapping is 3 nodes x 2 ranks"
assert_eq "$(grep -c 'pmi debug: node [0-2] of 3:' "$err")" 3 "three server cores, one per host"

# the fences go proxy to proxy: mpiexec gets the same number of frames from the proxies
# for 40 fences as for 1 (when it relayed them: 2 tree frames per proxy and fence more)
for r in 1 40; do
    run_job "${F[@]}" -v -hosts a,b,c,d -ppn 2 -n 8 "$LOOM_PROGDIR/pmi2_kvstest_loom" -r $r
    assert_rc 0 "4 hosts, $r fences"
    frames[$r]=$(sed -n 's/.* \([0-9]*\) frames from the proxies.*/\1/p' "$err")
done
[ -n "${frames[1]}" ] && [ "${frames[1]}" = "${frames[40]}" ] &&
    ok "mpiexec saw ${frames[1]} frames for 1 fence and for 40" ||
    fail "frames seen by mpiexec: '${frames[1]}' for 1 fence, '${frames[40]}' for 40"

# PMI-1, one slot per host: ranks go round-robin; mapping (0,3,1) twice
LOOM_PMI_LOGLEVEL=debug run_job "${F[@]}" -hosts a,b,c -n 6 "$LOOM_PROGDIR/pmi1_kvstest"
assert_kvstest 6
assert_grep "mapping (vector,(0,3,1),(0,3,1))" "$err" "round-robin mapping over 3 hosts"

# the Slurm-compatible PMI-2 library too, and more ranks per host with -ppn
if [ -x "$LOOM_PROGDIR/pmi2_kvstest_slurm" ]; then
    LOOM_PMI_LOGLEVEL=debug run_job "${F[@]}" -hosts a,b,c -ppn 4 -n 12 "$LOOM_PROGDIR/pmi2_kvstest_slurm"
    assert_kvstest 12
    assert_grep "mapping (vector,(0,3,4))" "$err" "-ppn 4: blocks of 4"
fi

# without -n: one rank per slot
run_job -t 10 "${F[@]}" -hosts a:3,b "$LOOM_PROGDIR/pmi2_kvstest_loom"
assert_kvstest 4

# host file: comments, blank lines, host:n and "host slots=n"
hf=$TEST_TMP/hosts
printf '# virtual hosts\nh1:2\n\n  h2 slots=3   # three\nh3\n' >"$hf"
LOOM_PMI_LOGLEVEL=debug run_job "${F[@]}" -f "$hf" "$LOOM_PROGDIR/pmi2_kvstest_loom"
assert_kvstest 6
assert_grep "mapping (vector,(0,1,2),(1,1,3),(2,1,1))" "$err" "host file slots 2,3,1"
run_job "${F[@]}" -machinefile "$hf" -n 2 sh -c 'echo "r$PMI_RANK $MPI_LOCALNRANKS"'
assert_eq "$(sort "$out" | tr '\n' ' ')" "r0 2 r1 2 " "-machinefile, 2 ranks on the first host"
printf 'h1:0\n' >"$hf.bad"
run_job "${F[@]}" -f "$hf.bad" -n 2 true
assert_rc 2 "bad host file"
assert_grep "hosts.bad:1:" "$err" "the error names the file and line"
run_job "${F[@]}" -hosts 'a,-oProxyCommand=x' -n 2 true
assert_rc 2 "a host name that looks like an option is refused"

# output: whole lines, tagged with the rank (-l), from every host
run_job "${F[@]}" -hosts a,b -n 4 -l sh -c 'printf "one from %s\ntwo from %s\n" $PMI_RANK $PMI_RANK'
assert_rc 0 "-l on 2 hosts"
for r in 0 1 2 3; do
    assert_grep -x "[$r] one from $r" "$out" "rank $r first line tagged"
    assert_grep -x "[$r] two from $r" "$out" "rank $r second line tagged"
done

# environment: mpiexec's own (-genvall), -genv, and -env per MPMD segment
T0170_OWN=mine run_job "${F[@]}" -hosts a,b -genv G gval -n 1 -env A one sh -c 'echo "$PMI_RANK $T0170_OWN $G ${A:-} ${B:-}"' : -n 1 -env B two sh -c 'echo "$PMI_RANK $T0170_OWN $G ${A:-} ${B:-}"'
assert_rc 0 "MPMD on 2 hosts"
assert_grep -x "0 mine gval one " "$out" "rank 0 environment"
assert_grep -x "1 mine gval  two" "$out" "rank 1 environment"

# exit codes: the first failing rank decides and is named with its host
run_job "${F[@]}" -hosts a,b,c -n 6 sh -c 'if [ "$PMI_RANK" = 4 ]; then exit 7; fi; sleep 20'
assert_rc 7 "rank 4 exits 7, the others are killed"
assert_grep -E 'rank 4 on host b exited with code 7' "$err" "stderr names rank 4 and host b"
awk -v e="$elapsed" 'BEGIN { exit !(e < 15) }' && ok "the sleeping ranks were killed" ||
    fail "the job waited for the sleeping ranks (${elapsed}s)"

# a program that cannot start
run_job "${F[@]}" -hosts a,b -n 2 ./no-such-program-$$
assert_rc 127 "missing program"
assert_grep "no-such-program" "$err" "stderr names the program"

# PMI abort on one host kills the ranks on the others; the message names the rank
run_job "${F[@]}" -hosts a,b,c -n 6 "$LOOM_PROGDIR/pmi_misbehave" abort
assert_failed_not_hung "rank 1 aborts"
assert_grep -E 'aborted: rank 1([^0-9]|$)' "$err" "stderr names rank 1"
assert_eq "$(grep -c 'job aborted' "$err")" 1 "one abort message"

# a rank dying before the fence: the job ends, naming it
run_job "${F[@]}" -hosts a,b,c -n 6 "$LOOM_PROGDIR/pmi_misbehave" die-before-fence
assert_failed_not_hung "rank 1 dies before the fence"
assert_grep -E 'rank 1 on host b' "$err" "stderr names rank 1 on host b"

# a proxy killed mid-job: the job ends quickly, its host named, no rank left behind
mark="4$RANDOM.$$"
LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout -k 5 60 "$LOOM_MPIEXEC" "${F[@]}" -hosts a,b,c -n 6 \
    sleep "$mark" >"$TEST_TMP/kp.out" 2>"$TEST_TMP/kp.err" </dev/null &
tpid=$!
for _ in $(seq 300); do
    [ "$(pgrep -f "^sleep $mark" | wc -l)" -ge 6 ] && break
    sleep 0.1
done
assert_eq "$(pgrep -f "^sleep $mark" | wc -l)" 6 "ranks running before the proxy is killed"
ppid_b=$(pgrep -P "$(pgrep -P "$tpid" | head -n1)" -f "proxy --node 1 " | head -n1)
if [ -n "$ppid_b" ]; then
    kill -KILL "$ppid_b"
else
    fail "cannot find the proxy of node 1"
fi
wait "$tpid"
rc=$?
err=$TEST_TMP/kp.err
out=$TEST_TMP/kp.out
assert_failed_not_hung "proxy of host b killed"
assert_grep -E "lost the proxy on host b" "$err" "stderr names host b"
for _ in $(seq 20); do
    [ "$(pgrep -f "^sleep $mark" | wc -l)" -eq 0 ] && break
    sleep 0.1
done
assert_eq "$(pgrep -f "^sleep $mark" | wc -l)" 0 "ranks left after the proxy died"

# SIGTERM to mpiexec reaches the ranks on every host
LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout -k 5 60 "$LOOM_MPIEXEC" "${F[@]}" -hosts a,b -n 4 \
    sleep "$mark" >"$TEST_TMP/sg.out" 2>"$TEST_TMP/sg.err" </dev/null &
tpid=$!
for _ in $(seq 300); do
    [ "$(pgrep -f "^sleep $mark" | wc -l)" -ge 4 ] && break
    sleep 0.1
done
kill -TERM "$(pgrep -P "$tpid" | head -n1)"
wait "$tpid"
rc=$?
[ "$rc" -eq $((128 + 15)) ] && ok "exit status 143 after SIGTERM" || fail "exit status $rc after SIGTERM"
for _ in $(seq 20); do
    [ "$(pgrep -f "^sleep $mark" | wc -l)" -eq 0 ] && break
    sleep 0.1
done
assert_eq "$(pgrep -f "^sleep $mark" | wc -l)" 0 "ranks left after SIGTERM"

# --timeout covers every host
run_job -t 30 "${F[@]}" -hosts a,b --timeout 2 -n 4 sleep "$mark"
assert_rc 255 "--timeout 2"

# a proxy that never connects back (launcher that does nothing): bounded, host named
printf '#!/bin/sh\nexec sleep 20\n' >"$TEST_TMP/mute.sh"
chmod +x "$TEST_TMP/mute.sh"
LOOM_PROXY_TIMEOUT=2 run_job -t 30 -launcher ssh -launcher-exec "$TEST_TMP/mute.sh" -hosts x1,x2 -n 2 true
assert_failed_not_hung "proxies that never connect"
assert_grep -E "x1, x2 did not connect back within 2 s|x1 did not connect" "$err" "stderr names the hosts"

# a launcher that fails at once
run_job -launcher ssh -launcher-exec false -hosts x1,x2 -n 2 true
assert_rc 127 "launcher exits 1"
assert_grep -E "cannot start the proxy on host x[12]" "$err" "stderr names the host"

finish
