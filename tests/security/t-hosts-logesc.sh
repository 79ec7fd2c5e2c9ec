#!/bin/bash
# t-hosts-logesc.sh - task-provided text (a fullinit's job id, an unknown command's
# name, an abort message) carrying newlines, carriage returns, ESC sequences, BEL and
# DEL reaches mpiexec's stderr only escaped (\xNN): no raw control byte in mpiexec's
# own lines, no line forged by an embedded newline, and the abort still ends the job
# naming rank 0.  Also with LOOM_PMI_TRACE=1 (every request in the trace) and across
# a proxy (-hosts with the fork launcher: the lines travel through mpiexec --proxy).
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
prog=$LOOM_SECDIR/hosts_flood
[ -x "$prog" ] || skip "hosts_flood not built ($prog)"

check_escaped() {
    local what=$1 launcher=$err.launcher
    # the program's own lines are rank output, forwarded as they are
    grep -av '^hosts_flood:' "$err" >"$launcher"
    assert_failed_not_hung "$what: the abort ends the job"
    assert_grep -E '^mpiexec: .*rank 0' "$launcher" "$what: mpiexec's line names rank 0"
    if LC_ALL=C grep -qa $'[\x01-\x08\x0b-\x1f\x7f]' "$launcher"; then
        fail "$what: raw control bytes in mpiexec's lines:"
        LC_ALL=C grep -na $'[\x01-\x08\x0b-\x1f\x7f]' "$launcher" | head -n 5 | cat -v | sed 's/^/    | /'
    else
        ok "$what: no raw control byte in mpiexec's lines"
    fi
    assert_no_grep -E '^FORGED' "$launcher" "$what: no line forged by an embedded newline"
    assert_grep 'bye\x0aFORGED: all ranks exited normally\x0d\x1b[2J\x1b]0:owned\x07\x7f' \
        "$launcher" "$what: the abort message shows its control bytes escaped"
}

run_job -t 30 -n 2 "$prog" abort
check_escaped "default"
assert_grep "unknown PMI-2 command 'nosuchcmd\x0aFORGED" "$err.launcher" \
    "the unknown command's name is shown escaped"

LOOM_PMI_TRACE=1 run_job -t 30 -n 2 "$prog" abort
check_escaped "LOOM_PMI_TRACE=1"

run_job -t 30 -launcher fork -hosts h1,h2 -n 2 "$prog" abort
check_escaped "through a proxy"
finish
