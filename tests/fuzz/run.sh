#!/bin/bash
# tests/fuzz/run.sh - build every libFuzzer target of tests/fuzz/ and run each for a while.
#
# Usage: tests/fuzz/run.sh [SECONDS_PER_TARGET] [NAME...]
#   SECONDS_PER_TARGET  default 60 (`make fuzz` passes FUZZ_SECONDS, default 600)
#   NAME...             only these targets (fuzz_NAME.c); default: every fuzz_*.c
#
# Contract:
#   - Targets are found, never listed: every tests/fuzz/fuzz_<name>.c is one target.  Its
#     first comment block carries the lines the build reads (README.md; a field may take
#     several lines, each starting with its name, so that lines stay within 90 columns): `fuzz-sources:`
#     (files compiled with it, relative to the top of the tree), `fuzz-cflags:` (`-I`
#     paths relative to the top), optional `fuzz-libs:` (link flags) and `fuzz-options:`
#     (extra libFuzzer flags, e.g. -max_len=65536).  A `<name>.dict` beside it is passed
#     as -dict.
#   - Build: clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
#     -g -O1, with config.h from the configured build dir ($LOOM_BUILD_DIR, default
#     build; run scripts/build.sh first), into $LOOM_BUILD_DIR/fuzz/.  A target is
#     rebuilt only when its flags or a file it includes changed (clang -MD).
#   - Run: on a fresh copy of corpus/<name>/ (the repo's seeds are never written), for
#     the given time, one target at a time (the machine is small), each under an outer
#     timeout.  Per target it prints executions, coverage (cov: and ft: of libFuzzer's
#     last status line), corpus size (inputs, bytes) and the result; then the totals.
#   - A crash, leak, UBSan report, per-input timeout (-timeout=$FUZZ_INPUT_TIMEOUT, 10 s)
#     or a target that does not build fails the run: the reproducer is kept in
#     $LOOM_BUILD_DIR/fuzz/crashes/ (replay it with `$LOOM_BUILD_DIR/fuzz/bin/fuzz_<name>
#     FILE`) and the report's first lines are printed.
#   - With FUZZ_TRS=1 (scripts/test.sh) each target also leaves an automake-style
#     $LOOM_BUILD_DIR/fuzz/results/<name>.trs and .log, so the test summary counts one
#     test per target ("fuzz/results/<name>").
#   Exit status: 0 all targets ran clean, 1 a finding or a build failure, 77 no clang.
#
# Environment: LOOM_BUILD_DIR, FUZZ_CC (default clang), FUZZ_INPUT_TIMEOUT (s, 10),
#   FUZZ_RSS_MB (libFuzzer -rss_limit_mb, 2048), FUZZ_DETECT_LEAKS (1; 0 turns LSan off),
#   FUZZ_MERGE=1 (after the run, merge the inputs that add coverage into the repo's
#   corpus/<name>/: a deliberate step, to grow the seeds; review before committing).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-60}
shift || true
case $secs in '' | *[!0-9]*) echo "run.sh: SECONDS_PER_TARGET must be a number, not '$secs'" >&2; exit 2 ;; esac
bdir=${LOOM_BUILD_DIR:-build}
case $bdir in /*) ;; *) bdir=$top/$bdir ;; esac
cc=${FUZZ_CC:-clang}
in_to=${FUZZ_INPUT_TIMEOUT:-10}
rss=${FUZZ_RSS_MB:-2048}
out=$bdir/fuzz

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "run.sh: SKIP: no $cc (apt-get install clang llvm; scripts/deps.sh does)" >&2
    exit 77
fi
if [ ! -f "$bdir/config.h" ]; then
    echo "run.sh: no $bdir/config.h: configure first (scripts/build.sh)" >&2
    exit 2
fi
mkdir -p "$out/bin" "$out/obj" "$out/runs" "$out/crashes" "$out/logs"
[ "${FUZZ_TRS:-0}" = 1 ] && mkdir -p "$out/results"

# the targets: arguments, or every fuzz_*.c
targets=()
if [ $# -gt 0 ]; then
    for n in "$@"; do
        n=${n#fuzz_}; n=${n%.c}
        [ -f "$here/fuzz_$n.c" ] || { echo "run.sh: no target tests/fuzz/fuzz_$n.c" >&2; exit 2; }
        targets+=("$n")
    done
else
    for f in "$here"/fuzz_*.c; do
        [ -e "$f" ] || continue
        n=${f##*/fuzz_}; targets+=("${n%.c}")
    done
fi
if [ ${#targets[@]} -eq 0 ]; then
    echo "run.sh: no fuzz_*.c in $here" >&2
    exit 2
fi

# value of a "fuzz-KEY:" line in the first 60 lines of a target (empty if none)
field() { # every "fuzz-NAME:" line of the header, joined (long lists take several)
    head -n 60 "$1" | sed -n "s/^[ *#/]*fuzz-$2:[[:space:]]*//p" |
        sed 's/[[:space:]]*\*\/.*$//; s/[[:space:]]*$//' | tr '\n' ' ' | sed 's/[[:space:]]*$//'
}

# true when bin is missing, its recorded command differs, or a dependency is newer
stale() { # bin cmdfile depfile cmd
    local bin=$1 cmdf=$2 depf=$3 cmd=$4 d
    [ -x "$bin" ] && [ -f "$cmdf" ] && [ -f "$depf" ] || return 0
    [ "$(cat "$cmdf")" = "$cmd" ] || return 0
    # make-style dependency files: "x.o: a.c b.h \" ... ; every path after the colons
    for d in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$depf"); do
        [ "$d" -nt "$bin" ] && return 0
    done
    return 1
}

# automake-style result for scripts/test.sh's summary
trs() { # name result logfile
    [ "${FUZZ_TRS:-0}" = 1 ] || return 0
    cp "$3" "$out/results/$1.log" 2>/dev/null || : >"$out/results/$1.log"
    printf ':test-result: %s\n:global-test-result: %s\n:recheck: no\n:copy-in-global-log: no\n' \
        "$2" "$2" >"$out/results/$1.trs"
}

build() { # name -> 0 built/up to date, 1 failed (log in $out/logs/<name>.build)
    local n=$1 src=$here/fuzz_$1.c srcs cflags libs bin=$out/bin/fuzz_$1 blog=$out/logs/$1.build
    srcs=$(field "$src" sources)
    cflags=$(field "$src" cflags)
    libs=$(field "$src" libs)
    local base=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -g -O1 -D_GNU_SOURCE -DLOOM_FUZZ=1 -I"$bdir" -include "$bdir/config.h")
    local cmd="$cc ${base[*]} $cflags | $srcs | $libs"
    local objs=() f o deps=()
    if ! stale "$bin" "$out/obj/$n.cmd" "$out/obj/$n.deps" "$cmd"; then
        return 0
    fi
    : >"$blog"
    for f in "tests/fuzz/fuzz_$n.c" $srcs; do
        [ -f "$top/$f" ] || { echo "fuzz-sources of fuzz_$n.c: no file $f" >>"$blog"; return 1; }
        o=$out/obj/$n/${f//\//_}.o
        mkdir -p "$out/obj/$n"
        # shellcheck disable=SC2086  # cflags is a word list by design
        (cd "$top" && "$cc" "${base[@]}" -fno-sanitize=fuzzer -fsanitize=fuzzer-no-link $cflags \
            -MD -MF "$o.d" -c "$f" -o "$o") >>"$blog" 2>&1 || return 1
        objs+=("$o"); deps+=("$o.d")
    done
    # shellcheck disable=SC2086
    "$cc" -fsanitize=fuzzer,address,undefined -g "${objs[@]}" $libs -lpthread -o "$bin" \
        >>"$blog" 2>&1 || return 1
    # absolute paths in one deps file (clang writes paths as given: relative to $top)
    (cd "$top" && for d in "${deps[@]}"; do
        sed -e 's/^[^:]*://' -e 's/\\$//' "$d" | tr ' ' '\n' | sed -n '/./p' |
            while read -r p; do case $p in /*) echo "$p" ;; *) echo "$top/$p" ;; esac; done
    done) | sort -u | sed 's/^/x: /' >"$out/obj/$n.deps"
    printf '%s' "$cmd" >"$out/obj/$n.cmd"
    return 0
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=${FUZZ_DETECT_LEAKS:-1}:allocator_may_return_null=1:handle_abort=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
sym=$(command -v llvm-symbolizer || ls /usr/bin/llvm-symbolizer-* 2>/dev/null | head -n1)
[ -n "$sym" ] && export ASAN_SYMBOLIZER_PATH=$sym

tot_exec=0 tot_cov=0 tot_ft=0 nbad=0 nok=0
rows=()
t_start=$(date +%s)
for n in "${targets[@]}"; do
    log=$out/logs/$n.log
    if ! build "$n"; then
        echo "----- fuzz_$n: BUILD FAILED; last lines of $out/logs/$n.build:"
        tail -n 20 "$out/logs/$n.build" | sed 's/^/    /'
        rows+=("$(printf '%-22s %12s %7s %7s %14s  %s' "$n" - - - - 'BUILD FAILED')")
        trs "$n" FAIL "$out/logs/$n.build"
        nbad=$((nbad + 1))
        continue
    fi
    work=$out/runs/$n
    rm -rf "$work"
    mkdir -p "$work/corpus"
    [ -d "$here/corpus/$n" ] && cp -R "$here/corpus/$n/." "$work/corpus/" 2>/dev/null
    rm -f "$out/crashes/$n"-*
    extra=$(field "$here/fuzz_$n.c" options)
    dict=()
    [ -f "$here/$n.dict" ] && dict=(-dict="$here/$n.dict")
    # shellcheck disable=SC2086
    timeout -k 10 $((secs + in_to + 60)) "$out/bin/fuzz_$n" -max_total_time="$secs" \
        -timeout="$in_to" -rss_limit_mb="$rss" -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$n-" "${dict[@]}" $extra "$work/corpus" >"$log" 2>&1 </dev/null
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    # last status line: "#12345 DONE cov: 210 ft: 800 corp: 40/2345b ..."
    status=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -n1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$status")
    ninp=$(find "$work/corpus" -type f | wc -l)
    nbytes=$(find "$work/corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    crashes=$(ls "$out/crashes/$n"-* 2>/dev/null)
    if [ "$rc" -eq 0 ] && [ -z "$crashes" ]; then
        res=ok
        nok=$((nok + 1))
        trs "$n" PASS "$log"
    else
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then res="HUNG (outer timeout)"; else res="FINDING (exit $rc)"; fi
        nbad=$((nbad + 1))
        echo "----- fuzz_$n: $res; log $log"
        grep -m1 -E '^(==[0-9]+==ERROR|.*runtime error:|==[0-9]+== ERROR: libFuzzer|SUMMARY:)' "$log" | sed 's/^/    /'
        grep -A 14 -m1 -E '==ERROR|runtime error:|ERROR: libFuzzer' "$log" | grep -E '^ +#[0-9]+ ' | sed 's/^/    /'
        for c in $crashes; do
            echo "    reproducer: $c ($(stat -c %s "$c") bytes); replay: $out/bin/fuzz_$n $c"
        done
        trs "$n" FAIL "$log"
    fi
    rows+=("$(printf '%-22s %12s %7s %7s %14s  %s' "$n" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "$ninp/${nbytes:-?}b" "$res")")
    tot_exec=$((tot_exec + ${execs:-0}))
    tot_cov=$((tot_cov + ${cov:-0}))
    tot_ft=$((tot_ft + ${ft:-0}))
    if [ "${FUZZ_MERGE:-0}" = 1 ] && [ "$res" = ok ]; then
        mkdir -p "$here/corpus/$n"
        "$out/bin/fuzz_$n" -merge=1 "$here/corpus/$n" "$work/corpus" >"$out/logs/$n.merge" 2>&1 ||
            echo "run.sh: merge into corpus/$n failed (see $out/logs/$n.merge)" >&2
    fi
done

printf '\n%-22s %12s %7s %7s %14s  %s\n' target executions cov ft corpus result
printf '%s\n' "${rows[@]}"
printf '%-22s %12s %7s %7s\n' TOTAL "$tot_exec" "$tot_cov" "$tot_ft"
echo "fuzz: ${#targets[@]} targets x ${secs}s: $nok clean, $nbad with findings or build failures;" \
    "$tot_exec executions in $(($(date +%s) - t_start))s"
[ "$nbad" -eq 0 ]
