# tests/security/faults_lib.sh - helpers of the fault-injection tests (t-faults-*.sh),
# sourced after ../integration/lib.sh.
#
# Contract: need_faults skips unless faults_preload.so and faults_run were built and the
# build is not a sanitizer build (ASan must be the first library of a process, so an
# LD_PRELOAD shim cannot go in front of it).  fault_run SECS VAR=VALUE... -- CMD ARGS...
# runs CMD under faults_run with the shim preloaded and the given variables, and sets
# $verdict ("exit N", "signal N NAME", "timeout"), $rc (N, or -1), $out, $err and
# $flog (the shim's log of this run).  fault_ok WHAT [GOOD_REGEX] counts the run: a
# signal or a timeout fails; exit 0 passes; another exit passes only with a non-empty
# stderr (the clear error), whose first line is recorded.  Failures show the output.
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
FAULTS_SO=$LOOM_SECDIR/.libs/faults_preload.so
FAULTS_RUN=$LOOM_SECDIR/faults_run

need_faults() {
    [ -f "$FAULTS_SO" ] || skip "faults_preload.so not built ($FAULTS_SO)"
    [ -x "$FAULTS_RUN" ] || skip "faults_run not built ($FAULTS_RUN)"
    if grep -q '^#define LOOM_SANITIZERS 1' "$LOOM_BUILDDIR/config.h" 2>/dev/null; then
        skip "sanitizer build: an LD_PRELOAD shim cannot precede ASan's runtime (the normal build runs these)"
    fi
}

_nfrun=0
fault_run() {
    local t=$1 vars=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    _nfrun=$((_nfrun + 1))
    out=$TEST_TMP/f$_nfrun.out
    err=$TEST_TMP/f$_nfrun.err
    flog=$TEST_TMP/f$_nfrun.flog
    : >"$flog"
    env LOOM_TEST_MARKER="$LOOM_TEST_MARKER" LD_PRELOAD="$FAULTS_SO" LOOM_FAULT_LOG="$flog" \
        "${vars[@]}" "$FAULTS_RUN" "$t" "$TEST_TMP/verdict" "$@" >"$out" 2>"$err" </dev/null
    verdict=$(cat "$TEST_TMP/verdict" 2>/dev/null)
    case $verdict in "exit "*) rc=${verdict#exit } ;; *) rc=-1 ;; esac
}

# fault_ok WHAT [STDOUT_REGEX_FOR_SUCCESS]
fault_ok() {
    local what=$1 good=${2:-}
    case $verdict in
        "exit 0")
            if [ -n "$good" ] && ! grep -qE "$good" "$out"; then
                fail "$what: exit 0 without '$good' on stdout"
                show_output
            else
                ok "$what: success"
            fi
            ;;
        "exit "*)
            if [ -s "$err" ]; then
                ok "$what: $verdict: $(head -n 1 "$err" | cut -c1-160)"
            else
                fail "$what: $verdict with nothing on stderr (no clear error)"
                show_output
            fi
            ;;
        *)
            fail "$what: ${verdict:-no verdict} (crash or hang)"
            show_output
            ;;
    esac
}

# fault_total OP: how many OP calls (malloc, write, read, accept) the processes the shim
# was active in made during the last run (the largest per-process count)
fault_total() {
    sed -n "s/.* exit .*$1=\([0-9]*\).*/\1/p" "$flog" | sort -n | tail -n 1
}

# sweep_points TOTAL: 1..20, then about 40 more points spread over 21..TOTAL
sweep_points() {
    local total=$1 i step
    for ((i = 1; i <= 20 && i <= total; i++)); do echo "$i"; done
    [ "$total" -gt 20 ] || return 0
    step=$(((total - 20) / 40))
    [ "$step" -ge 1 ] || step=1
    for ((i = 21; i <= total; i += step)); do echo "$i"; done
}
