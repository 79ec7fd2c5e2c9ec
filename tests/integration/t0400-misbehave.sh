#!/bin/bash
# t0400-misbehave.sh - shared body of the failure tests t041x-*.sh: run
# `pmi_misbehave SCENARIO` (tests/programs/pmi_misbehave.c) and check the outcome:
#   fatal scenarios (rank 1 does die-before-fence, abort, garbage, no-finalize):
#   non-zero exit well before the test's timeout (exit status != 124), mpiexec's own
#   stderr names rank 1, and no rank is left;
#   bigkey, bigval: rank 0's oversized put gets an error reply, and the job still
#   exits cleanly (status 0).
# Sourced by t0410-*.sh with SCENARIO set; run directly, it runs every scenario.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi_misbehave
prog=$LOOM_PROGDIR/pmi_misbehave

misbehave() {
    local sc=$1 n=${2:-4}
    run_job -t 30 -n "$n" "$prog" "$sc"
    # the program's own lines ("pmi_misbehave: rank R: ...") must not count as the
    # launcher's message
    grep -v '^pmi_misbehave:' "$err" >"$err.launcher"
    case "$sc" in
        bigkey | bigval)
            assert_rc 0 "$sc at $n ranks: the job exits cleanly after the error reply"
            assert_grep -E "$sc: rejected by the server rc=-?[0-9]+ OK" "$out" \
                "$sc: the server answered the oversized put with an error"
            ;;
        *)
            assert_failed_not_hung "$sc at $n ranks"
            assert_grep -E 'rank 1([^0-9]|$)' "$err.launcher" "$sc: mpiexec's message names rank 1"
            ;;
    esac
}

if [ -n "${SCENARIO:-}" ]; then
    misbehave "$SCENARIO"
    # also at a size where the other ranks are many and blocked in a fence
    [ "$LOOM_TEST_QUICK" = 1 ] || misbehave "$SCENARIO" 16
else
    for sc in die-before-fence abort garbage bigkey bigval no-finalize; do
        misbehave "$sc"
    done
fi
finish
