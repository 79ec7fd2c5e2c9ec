#!/bin/bash
# t-quotas-logs.sh - what a task can make the server core log: 10 000 bad requests
# (unknown commands and puts without a key, PMI-2 and PMI-1) make a bounded number of
# lines; with LOOM_PMI_TRACE=1 the trace stops after LoomMaxTraceLines (10 000) with one
# line; control bytes in an abort message and in an unknown command reach mpiexec's
# stderr escaped (\xNN), never raw.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/quotas_lib.sh"
need_qc
MAXLINES=40

# assert_no_ctl FILE: no control byte but newline and tab in FILE
assert_no_ctl() {
    if LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n\t' <"$1"); then
        fail "control bytes in $(basename "$1"):"
        LC_ALL=C grep -n '[[:cntrl:]]' "$1" | head -n 3 | cat -v | sed 's/^/    | /'
    else
        ok "no control bytes in $(basename "$1")"
    fi
}

for v in "" -1; do
    run_job -t 180 -n 1 "$QC" $v badreqs 10000
    assert_rc 0 "10 000 unknown commands and 10 000 keyless puts (PMI${v:--2})"
    assert_grep "sent 20000 bad requests" "$out"
    n=$(wc -l <"$err")
    if [ "$n" -le "$MAXLINES" ]; then
        ok "20 000 bad requests made $n lines on mpiexec's stderr (<= $MAXLINES)"
    else
        fail "20 000 bad requests made $n lines on mpiexec's stderr (> $MAXLINES)"
        head -n 5 "$err" | sed 's/^/    | /'
    fi
    assert_grep -E "rank 0: 999[0-9] more unknown command warnings were suppressed" "$err" \
        "the suppressed warnings are counted"
done

LOOM_PMI_TRACE=1 run_job -t 180 -n 1 "$QC" badreqs 10000
assert_rc 0 "LOOM_PMI_TRACE=1 and 20 000 requests"
n=$(wc -l <"$err")
if [ "$n" -le $((10000 + 100)) ]; then
    ok "the trace made $n lines (cap 10 000)"
else
    fail "the trace made $n lines (cap 10 000)"
fi
assert_grep "trace stopped after 10000 lines" "$err"

LOOM_PMI_TRACE=1 LOOM_PMI_MAX_TRACE_LINES=100 run_job -n 1 "$QC" badreqs 100
assert_grep "trace stopped after 100 lines" "$err" "LOOM_PMI_MAX_TRACE_LINES=100"

for v in "" -1; do
    run_job -n 1 "$QC" $v abortctl
    assert_failed_not_hung "abort with control bytes (PMI${v:--2})"
    # (PMI-1 has no newline or space inside a value: the client's codec sends '_')
    assert_grep -E 'evil\\x1b\[31mRED\\x0d(\\x0a|_)mpiexec.*LINE\\x07\\x7f\\xc3\\xa9' "$err" \
        "the abort message is escaped"
    assert_no_grep -x "mpiexec: FAKE LOG LINE" "$err" "no forged log line"
    assert_no_ctl "$err"

    run_job -n 1 "$QC" $v unknownctl
    assert_rc 0 "unknown command with control bytes (PMI${v:--2})"
    assert_grep "command 'ev\x1b[2Jil\x07'" "$err" "the unknown command is escaped"
    assert_no_ctl "$err"
done
finish
