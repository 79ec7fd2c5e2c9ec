# tests/integration/lib.sh - common helpers for the integration tests (sourced, bash).
#
# Contract: each test script sources this file, calls the assert_* helpers (which print
# what failed and go on), and ends with `finish`, which exits 0, 1 (some assertion
# failed) or 77 (skip).  `skip REASON` exits 77 at once: a test that needs a missing
# peer program must skip, never pass silently.
#
# Paths come from the environment set by Makefile.am's AM_TESTS_ENVIRONMENT
# (LOOM_BUILDDIR, LOOM_MPIEXEC, LOOM_PROGDIR, ...); defaults allow running one test by
# hand from the build tree: `cd build/tests/integration && bash ../../../tests/integration/t0100-launch.sh`.
#
# Every job runs under `timeout` and carries a unique LOOM_TEST_MARKER in its
# environment; at exit, any process still carrying it is reported (a failure) and
# killed by pid, and new files in /dev/shm are reported (a failure when CI=true,
# where nothing else runs; a warning elsewhere, since other jobs may share the machine).
#
# Notes: no timed assertions; time bounds are only upper limits (timeouts) that mean
# "hung", never "slow".

set -u

: "${LOOM_BUILDDIR:=$(pwd)/../..}"
: "${LOOM_MPIEXEC:=$LOOM_BUILDDIR/launcher/mpiexec}"
: "${LOOM_PROGDIR:=$LOOM_BUILDDIR/tests/programs}"
: "${LOOM_MPICC_MPICH:=}"
: "${LOOM_HAVE_HWLOC:=unknown}"
: "${LOOM_TEST_QUICK:=0}"
: "${LOOM_JOB_TIMEOUT:=60}"

TEST_NAME=$(basename "$0" .sh)
unset LOOM_TEST_MARKER # never exported: only the jobs started by run_cmd carry it
LOOM_TEST_MARKER="loomtest-$TEST_NAME-$$-$RANDOM-m"
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/loom-$TEST_NAME.XXXXXX")
_failures=0
_checks=0
_shm_before=$(ls -A /dev/shm 2>/dev/null | sort)

say() { printf '%s: %s\n' "$TEST_NAME" "$*"; }

skip() {
    say "SKIP: $*"
    _cleanup
    exit 77
}

fail() {
    _failures=$((_failures + 1))
    say "FAIL: $*"
}

ok() {
    _checks=$((_checks + 1))
    say "ok: $*"
}

# pids of processes that still carry this test's marker in their environment
marker_pids() {
    grep -lsaF "LOOM_TEST_MARKER=$LOOM_TEST_MARKER" /proc/[0-9]*/environ 2>/dev/null |
        sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}

_cleanup() {
    trap - EXIT
    local pids
    pids=$(marker_pids)
    if [ -n "$pids" ]; then
        fail "processes left behind: $(echo $pids | tr '\n' ' ')"
        ps -o pid,ppid,stat,args -p "$(echo $pids | tr ' \n' ',,' | sed 's/,*$//')" 2>/dev/null
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null
    fi
    local after new
    after=$(ls -A /dev/shm 2>/dev/null | sort)
    # Open MPI's vader_segment.* files are ignored: no test here runs Open MPI's own
    # ranks (t0310 runs Loom's under its mpirun), and on a shared machine other
    # people's Open MPI jobs create them at any time
    new=$(comm -13 <(printf '%s\n' "$_shm_before") <(printf '%s\n' "$after") |
        grep -v -e '^$' -e '^vader_segment\.')
    if [ -n "$new" ]; then
        if [ "${CI:-}" = true ]; then
            fail "files left in /dev/shm: $(echo $new)"
        else
            say "warning: new files in /dev/shm (maybe another job's): $(echo $new)"
        fi
    fi
    rm -rf "$TEST_TMP"
}
trap '_cleanup' EXIT
trap 'say "interrupted"; exit 1' INT TERM

finish() {
    _cleanup
    if [ "$_failures" -gt 0 ]; then
        say "$_failures of $((_checks + _failures)) checks failed"
        exit 1
    fi
    if [ "$_checks" -eq 0 ]; then
        say "no checks ran"
        exit 1
    fi
    say "all $_checks checks passed"
    exit 0
}

# need_mpiexec: skip unless our launcher was built
need_mpiexec() {
    [ -x "$LOOM_MPIEXEC" ] || skip "launcher not built ($LOOM_MPIEXEC)"
}

# need_prog NAME...: skip the test unless every tests/programs/NAME was built
# (use them as "$LOOM_PROGDIR/NAME")
need_prog() {
    local n
    for n in "$@"; do
        [ -x "$LOOM_PROGDIR/$n" ] || skip "program $n not built ($LOOM_PROGDIR/$n)"
    done
}

# run_job [-t SECS] ARGS...: run "$LOOM_MPIEXEC ARGS..." under timeout with the test
# marker in its environment.  Sets $rc, $elapsed (seconds, 3 decimals), $out and $err
# (files holding stdout and stderr).
run_job() {
    local t=$LOOM_JOB_TIMEOUT
    if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
    run_cmd -t "$t" "$LOOM_MPIEXEC" "$@"
}

# run_cmd [-t SECS] CMD ARGS...: like run_job for any command
_njob=0
run_cmd() {
    local t=$LOOM_JOB_TIMEOUT
    if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
    _njob=$((_njob + 1))
    out=$TEST_TMP/job$_njob.out
    err=$TEST_TMP/job$_njob.err
    say "run: $* (timeout ${t}s)"
    local s e
    s=$(date +%s%N)
    LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout -k 5 "$t" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    e=$(date +%s%N)
    elapsed=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    say "  exit $rc after ${elapsed}s, $(wc -l <"$out") lines on stdout, $(wc -l <"$err") on stderr"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        say "  (ended by the test's timeout)"
    fi
}

# show_output: print the last lines of the last job's stdout and stderr
show_output() {
    say "  --- stdout (last 15 lines):"
    tail -n 15 "$out" | sed 's/^/    | /'
    say "  --- stderr (last 15 lines):"
    tail -n 15 "$err" | sed 's/^/    | /'
}

assert_rc() {
    if [ "$rc" -eq "$1" ]; then
        ok "exit status $1${2:+ ($2)}"
    else
        fail "exit status $rc, expected $1${2:+ ($2)}"
        show_output
    fi
}

# assert_failed_not_hung: exit status non-zero, and not caused by the test's timeout
assert_failed_not_hung() {
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "job hung: killed by the test's timeout${1:+ ($1)}"
        show_output
    elif [ "$rc" -eq 0 ]; then
        fail "job exited 0, expected a failure${1:+ ($1)}"
        show_output
    else
        ok "job failed with exit status $rc${1:+ ($1)}"
    fi
}

# assert_grep [-E] [-x] [-i] PATTERN FILE [WHAT]: -E regex, -x whole line, -i any case,
# default: substring
assert_grep() {
    local opt=-F
    while :; do
        case "$1" in
            -E) opt=${opt/F/E}; shift ;;
            -x | -i) opt=$opt${1#-}; shift ;;
            *) break ;;
        esac
    done
    if grep -q $opt -e "$1" "$2"; then
        ok "${3:-found '$1' in $(basename "$2")}"
    else
        fail "${3:-'$1'}: pattern '$1' not found in $(basename "$2")"
        show_output
    fi
}

assert_no_grep() {
    local opt=-F
    while :; do
        case "$1" in
            -E) opt=${opt/F/E}; shift ;;
            -x | -i) opt=$opt${1#-}; shift ;;
            *) break ;;
        esac
    done
    if grep -q $opt -e "$1" "$2"; then
        fail "${3:-'$1'}: unexpected '$1' in $(basename "$2"):"
        grep $opt -e "$1" "$2" | head -n 5 | sed 's/^/    | /'
    else
        ok "${3:-no '$1' in $(basename "$2")}"
    fi
}

assert_eq() {
    if [ "$1" = "$2" ]; then
        ok "${3:-value} = '$2'"
    else
        fail "${3:-value}: got '$1', expected '$2'"
    fi
}

# assert_kvstest N: the last job was pmi2_kvstest/pmi1_kvstest at N ranks and passed
assert_kvstest() {
    assert_rc 0 "kvstest at $1 ranks"
    assert_grep -E "kvstest: $1 ranks, [0-9]+ rounds OK" "$out" "kvstest reports $1 ranks OK"
}
