#!/bin/bash
# t0140-kill.sh - ending a job from outside: --timeout kills a hung job, SIGTERM and
# SIGINT to mpiexec kill every rank, --fence-timeout ends a fence a rank never joins;
# no rank outlives the launcher.
. "$(dirname "$0")/lib.sh"
need_mpiexec

# A unique sleep duration marks the ranks in argv, so pgrep finds exactly ours.
mark="3$RANDOM.$$"

# count_left: ranks still alive, allowing the kernel up to 2 s to finish
# delivering SIGKILL (mpiexec has exited; its children were already signalled)
count_left() {
    local i n
    for i in $(seq 20); do
        n=$(pgrep -f "^sleep $mark" | wc -l)
        [ "$n" -eq 0 ] && break
        sleep 0.1
    done
    echo "$n"
}

# --timeout: the job is killed after the limit, with a non-zero status and a message
run_job -t 30 --timeout 2 -n 4 sleep "$mark"
assert_failed_not_hung "--timeout 2 on ranks that sleep"
assert_grep -i "time" "$err" "stderr says the job timed out"
assert_eq "$(count_left)" 0 "ranks alive after --timeout"

# signals to mpiexec: every rank dies, mpiexec exits non-zero promptly
for sig in TERM INT; do
    LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout -k 5 30 "$LOOM_MPIEXEC" -n 8 sleep "$mark" \
        >"$TEST_TMP/sig.out" 2>"$TEST_TMP/sig.err" </dev/null &
    tpid=$!
    # wait until all 8 ranks run (bounded; generous for a loaded machine)
    for _ in $(seq 300); do
        [ "$(pgrep -f "^sleep $mark" | wc -l)" -ge 8 ] && break
        sleep 0.1
    done
    assert_eq "$(pgrep -f "^sleep $mark" | wc -l)" 8 "ranks running before SIG$sig"
    mpid=$(pgrep -P "$tpid" | head -n1)
    if [ -z "$mpid" ]; then
        fail "cannot find the mpiexec process under timeout pid $tpid"
    else
        kill -"$sig" "$mpid"
    fi
    wait "$tpid"
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "mpiexec did not exit after SIG$sig (killed by the test's timeout)"
    elif [ "$rc" -eq 0 ]; then
        fail "mpiexec exited 0 after SIG$sig"
    else
        ok "mpiexec exited with status $rc after SIG$sig"
    fi
    left=$(count_left)
    assert_eq "$left" 0 "ranks left after SIG$sig to mpiexec"
    [ "$left" -eq 0 ] || kill -9 $(pgrep -f "^sleep $mark") 2>/dev/null
done

# --fence-timeout: rank 1 never reaches the fence (it is not even a PMI client); the
# fence fails in bounded time, naming the missing rank, and the job ends
if [ -x "$LOOM_PROGDIR/pmi2_kvstest_loom" ]; then
    run_job -t 30 --fence-timeout 2 -n 1 "$LOOM_PROGDIR/pmi2_kvstest_loom" : -n 1 sleep "$mark"
    assert_failed_not_hung "--fence-timeout 2 with rank 1 absent from the fence"
    assert_grep -E -i 'fence.*tim' "$err" "stderr says the fence timed out"
    assert_grep -E -i 'ranks?[^0-9]*1([^0-9]|$)' "$err" "stderr names the missing rank 1"
    assert_eq "$(count_left)" 0 "ranks alive after the fence timeout"
fi

# a rank that ignores SIGTERM is still killed (escalation to SIGKILL)
run_job -t 40 --timeout 2 -n 2 sh -c "trap '' TERM; sleep $mark"
assert_failed_not_hung "--timeout on ranks ignoring SIGTERM"
assert_eq "$(count_left)" 0 "ranks alive after --timeout (SIGTERM ignored)"

finish
