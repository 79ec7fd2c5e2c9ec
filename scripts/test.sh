#!/bin/bash
# scripts/test.sh - the whole test suite: dependencies, build, unit and integration
# tests (`make check`), a short run of every fuzz target (tests/fuzz/run.sh), the same
# `make check` again in a second build dir configured --enable-sanitizers (ASan +
# UBSan), then `make distcheck`, then the srun suite on the newest Slurm release when
# release tarballs are at hand.
#
# Prints, as its very last line, "N passed, N failed, N skipped" counting every test
# (each automake test from its .trs file - the sanitizer build's under "asan:" names -,
# each fuzz target as fuzz/results/<name>, a sanitizer report no test caught as
# asan:report/<file>, plus `distcheck` as one test, each srun test script on the newest
# release as slurm-X.Y/<script>; a build that fails counts as one
# failed test), and exits non-zero when anything failed.
# Environment: LOOM_DISTCHECK=yes|no (default yes), LOOM_BUILD_DIR (default build),
# LOOM_SKIP_DEPS=1 to skip scripts/deps.sh, LOOM_FUZZ_SECONDS (per target, default 15;
# 0 skips the fuzz step), LOOM_SANITIZERS=yes|no (default yes: the sanitizer pass, in
# LOOM_ASAN_BUILD_DIR, default "$LOOM_BUILD_DIR-asan"), LOOM_ASAN_LEAKS=1 (LeakSanitizer
# on in that pass; default off, see doc/security.md), LOOM_SLURM_NEWEST=yes|no (default
# yes: the newest release's srun suite).  Works without a TTY and without
# stdin.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bdir=${LOOM_BUILD_DIR:-build}
export LOOM_BUILD_DIR=$bdir
t0=$(date +%s)
exec </dev/null

step() { printf '\n=== test.sh: %s (%ds)\n' "$*" $(( $(date +%s) - t0 )); }

# Tests that cannot run in the sanitizer build, with the reason.  An uninstrumented
# program cannot load an instrumented library (ASan's runtime must come first), and
# slurmstepd loads the plugin, which that build does not make.
declare -A ASAN_SKIP=(
    [tests/integration/t0600-install.sh]="builds programs from the installed headers with the system's cc, without -fsanitize: uninstrumented programs linking the instrumented libpmi2/libmpi"
    [tests/integration/t0660-modulefiles.sh]="builds an MPI program with the installed mpicc, without -fsanitize (as t0600): an uninstrumented program linking the instrumented libmpi"
    [tests/unit/abi-libpmi2.sh]="checks that libpmi2.so.0 and libpmi.so.0 need nothing but libc; a sanitizer build links libasan and libubsan into them"
    [tests/integration/t0620-mpich-suite.sh]="builds MPICH's test programs (not our code) with the sanitizer build's mpicc; a report from their code would count against libmpi, and the pass costs CI minutes twice; the main build runs it"
    [tests/unit/check_slurm_libpmi2]="runs Debian Slurm's own libpmi2.so.0 against malformed replies, and that library reads past a heap buffer (strncmp in its reply parser, under PMI2_KVS_Fence): a bug of the peer, not ours"
)

# asan_check DIR: `make -k check` in the sanitizer build DIR with every report fatal
# and also written under DIR/sanitizer-reports/ (a report from a process whose exit
# nobody checks still counts: asan_reports turns each file into a failed test).
asan_check() {
    local d=$1 sub t bad=0
    local rep=$top/$d/sanitizer-reports
    mkdir -p "$rep"
    (
        # verify_asan_link_order=0: tests that LD_PRELOAD a small shim of their own into
        # an instrumented program; quarantine_size_mb: freed memory ASan holds back, kept
        # small so that the tests' RSS bounds stay meaningful
        export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=${LOOM_ASAN_LEAKS:-0}:log_path=$rep/asan:log_exe_name=1:strict_string_checks=1:detect_stack_use_after_return=0:verify_asan_link_order=0:quarantine_size_mb=16"
        export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$rep/ubsan:log_exe_name=1"
        cd "$d" || exit 1
        # the skipped tests: a SKIP result with the reason, and the rest of their folder
        for t in "${!ASAN_SKIP[@]}"; do
            sub=$(dirname "$t")
            [ -f "$sub/Makefile" ] || continue
            mkdir -p "$sub"
            printf 'SKIP: sanitizer build: %s\n' "${ASAN_SKIP[$t]}" >"$sub/$(basename "$t" .sh).log"
            printf ':test-result: SKIP\n:global-test-result: SKIP\n:recheck: no\n:copy-in-global-log: no\n' \
                >"$sub/$(basename "$t" .sh).trs"
        done
        make -k -j2 all >/dev/null 2>&1
        # the folders in make check's own order (mpi's test programs before the
        # integration tests that run them); a folder with skipped tests runs the rest
        for sub in $(sed -n 's/^SUBDIRS = //p' Makefile); do
            if [ "$sub" = tests ]; then
                for t in $(sed -n 's/^SUBDIRS = //p' tests/Makefile); do
                    asan_check_dir "tests/$t" || bad=1
                done
            else
                asan_check_dir "$sub" || bad=1
            fi
        done
        exit $bad
    )
}

# asan_check_dir SUB (in the build dir): make check in SUB, without the ASAN_SKIP tests
asan_check_dir() {
    local sub=$1 list keep t skipped=0
    for t in "${!ASAN_SKIP[@]}"; do [ "$(dirname "$t")" = "$sub" ] && skipped=1; done
    if [ "$skipped" -eq 0 ]; then
        make -k -j2 -C "$sub" check
        return
    fi
    list=$(make -s -C "$sub" -f Makefile -f - print-loom-tests <<<'print-loom-tests: ; @echo $(TESTS)' 2>/dev/null)
    keep=
    for t in $list; do [ -n "${ASAN_SKIP[$sub/$t]:-}" ] || keep="$keep $t"; done
    make -k -C "$sub" check TESTS="$keep"
}

# asan_reports DIR: every sanitizer report file is a failure (named after the program)
asan_reports() {
    local f
    for f in "$top/$1"/sanitizer-reports/*; do
        [ -f "$f" ] || continue
        fail=$((fail + 1)); failed_names+=("asan:report/${f##*/}")
        echo "----- FAIL: sanitizer report ${f#"$top"/} (no test's result caught it or it came with one):"
        grep -m1 -E 'ERROR|runtime error|SUMMARY' "$f" | sed 's/^/    /'
        grep -E '^ +#[0-9]+ ' "$f" | head -n 8 | sed 's/^/    /'
    done
}

extra_pass=0
extra_fail=0
extra_skip=0
asan_make_failed=0
failed_names=()

if [ "${LOOM_SKIP_DEPS:-0}" != 1 ]; then
    step "dependencies"
    if ! ./scripts/deps.sh; then
        echo "test.sh: scripts/deps.sh failed" >&2
        extra_fail=$((extra_fail + 1)); failed_names+=("deps")
    fi
fi

# munged is a machine-wide daemon the Slurm tests share: start it here, outside any
# test, so that no test owns it (or is blamed for leaving it running)
if [ "$(id -u)" = 0 ] && command -v munged >/dev/null 2>&1; then
    step "munge"
    sh tests/slurm/cluster.sh munge || echo "test.sh: munged did not start; Slurm tests will say why" >&2
fi

# The format check (scripts/check-format.sh, run by make check as tests/tree/t-format.sh)
# compares with the base commit of scripts/format-base: a shallow clone (CI) lacks that
# history, so fetch it once; without it the check skips and says why.
if [ "${CI:-}" = true ] && [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
    step "history for the format check (git fetch --unshallow)"
    timeout 300 git fetch -q --unshallow ||
        echo "test.sh: git fetch --unshallow failed: the format check will skip" >&2
fi

step "build"
built=1
check_rc=0
if ! ./scripts/build.sh; then
    echo "test.sh: build failed" >&2
    extra_fail=$((extra_fail + 1)); failed_names+=("build")
    built=0
fi

adir=${LOOM_ASAN_BUILD_DIR:-$bdir-asan}
for d in "$bdir" "$adir"; do
    [ -d "$d" ] || continue
    # stale results of an earlier run must not be counted
    find "$d" -path "$d/loom-*" -prune -o \( -name '*.trs' -o -name 'test-suite.log' \) \
        -type f -print0 | xargs -0 rm -f
    rm -rf "$d/fuzz/results" "$d/sanitizer-reports"
done

if [ "$built" -eq 1 ]; then
    step "make check"
    # -k: a failing unit test directory must not hide the integration results
    (cd "$bdir" && make -k -j2 check)
    check_rc=$?

    fuzz_s=${LOOM_FUZZ_SECONDS:-15}
    if [ "$fuzz_s" != 0 ]; then
        step "fuzz targets, ${fuzz_s}s each"
        # one result per target (fuzz/results/<name>.trs); a missing clang is one skip
        FUZZ_TRS=1 LOOM_BUILD_DIR=$bdir ./tests/fuzz/run.sh "$fuzz_s"
        frc=$?
        if [ "$frc" -eq 77 ]; then
            extra_skip=$((extra_skip + 1))
            echo "SKIP: fuzz: no clang (scripts/deps.sh installs it)"
        elif [ "$frc" -ne 0 ] && [ -z "$(ls "$bdir"/fuzz/results/*.trs 2>/dev/null)" ]; then
            extra_fail=$((extra_fail + 1)); failed_names+=("fuzz")
        fi
    fi

    if [ "${LOOM_SANITIZERS:-yes}" = yes ]; then
        step "sanitizer build ($adir: --enable-sanitizers, no Slurm plugin)"
        t_asan=$(date +%s)
        if LOOM_BUILD_DIR=$adir LOOM_WITH_PLUGIN=no \
            LOOM_CONFIGURE_FLAGS="${LOOM_CONFIGURE_FLAGS:+$LOOM_CONFIGURE_FLAGS }--enable-sanitizers" \
            ./scripts/build.sh >"$top/$adir.build.log" 2>&1 || \
            { sleep 1; LOOM_BUILD_DIR=$adir LOOM_WITH_PLUGIN=no \
                LOOM_CONFIGURE_FLAGS="${LOOM_CONFIGURE_FLAGS:+$LOOM_CONFIGURE_FLAGS }--enable-sanitizers" \
                ./scripts/build.sh >>"$top/$adir.build.log" 2>&1; }; then
            step "make check under ASan + UBSan"
            asan_check "$adir" || asan_make_failed=1
        else
            echo "test.sh: the sanitizer build failed; last lines of $adir.build.log:" >&2
            tail -n 25 "$top/$adir.build.log" | sed 's/^/    /' >&2
            extra_fail=$((extra_fail + 1)); failed_names+=("asan-build")
        fi
        echo "test.sh: the sanitizer pass took $(( $(date +%s) - t_asan ))s"
    fi

    if [ "${LOOM_DISTCHECK:-yes}" = yes ]; then
        step "make distcheck"
        if (cd "$bdir" && LOOM_TEST_QUICK=1 make -j2 distcheck); then
            extra_pass=$((extra_pass + 1))
        else
            extra_fail=$((extra_fail + 1)); failed_names+=("distcheck")
        fi
    fi
fi

# The newest Slurm release beside Debian's: when release tarballs are at hand
# (LOOM_SLURM_TARBALLS, or slurm-X.Y.Z.tar.* in the directories beside the checkout),
# the newest is built (cached) and the whole srun suite runs on its private clusters
# (scripts/slurm-matrix.sh); each test script counts as one test, slurm-X.Y/<script>.
if [ "$built" -eq 1 ] && [ "${LOOM_SLURM_NEWEST:-yes}" = yes ]; then
    step "the newest Slurm release (scripts/slurm-matrix.sh)"
    if [ -n "${LOOM_SLURM_TARBALLS:-}" ]; then tdirs=("$LOOM_SLURM_TARBALLS")
    else tdirs=("$top"/../*/ "$top"/../*/*/); fi
    newest=$(for d in "${tdirs[@]}"; do ls "$d" 2>/dev/null; done |
        sed -n 's/^slurm-\([0-9]*\.[0-9]*\)\.[0-9]*\.tar\..*$/\1/p' | sort -uV | tail -n 1)
    if [ -z "$newest" ]; then
        extra_skip=$((extra_skip + 1))
        echo "SKIP: slurm-newest: no Slurm release tarball (LOOM_SLURM_TARBALLS, or slurm-X.Y.Z.tar.* beside the checkout): only Debian's Slurm was tested"
    elif [ "$(id -u)" != 0 ]; then
        extra_skip=$((extra_skip + 1))
        echo "SKIP: slurm-newest: Slurm $newest's clusters need root"
    else
        mlogs=$top/$bdir-slurm-newest
        rm -f "$mlogs/$newest.results"
        LOOM_MATRIX_LOGS=$mlogs ./scripts/slurm-matrix.sh -o "$mlogs/table.md" "$newest"
        cat "$mlogs/table.md" 2>/dev/null
        if [ ! -f "$mlogs/$newest.results" ] || ! grep -q '^cell' "$mlogs/$newest.results"; then
            extra_fail=$((extra_fail + 1)); failed_names+=("slurm-$newest/build")
        else
            # cell[REL\,script]=P/F/S\,\ T\ s
            while IFS='|' read -r name counts; do
                pf=${counts#*/}; pf=${pf%%/*}
                p=${counts%%/*}; sk=${counts##*/}
                if [ "$pf" != 0 ] || [ -z "$counts" ]; then
                    extra_fail=$((extra_fail + 1)); failed_names+=("slurm-$newest/$name")
                elif [ "$p" = 0 ] && [ "$sk" != 0 ]; then
                    extra_skip=$((extra_skip + 1))
                else
                    extra_pass=$((extra_pass + 1))
                fi
            done < <(sed -n 's/^cell\[[^,]*\\,\([^]]*\)\]=\([0-9]*\/[0-9]*\/[0-9]*\).*/\1|\2/p' \
                "$mlogs/$newest.results")
        fi
    fi
fi

step "summary"
pass=0 fail=0 skip=0
for d in "$bdir" "$adir"; do
    [ -d "$d" ] || continue
    pfx=
    [ "$d" = "$adir" ] && pfx=asan:
    while IFS= read -r -d '' trs; do
        res=$(sed -n 's/^:test-result: *//p' "$trs" | head -n1)
        name=$pfx${trs#"$d"/}; name=${name%.trs}
        case "$res" in
            PASS | XFAIL) pass=$((pass + 1)) ;;
            SKIP)
                skip=$((skip + 1))
                echo "SKIP: $name: $(grep -m1 -i 'skip' "${trs%.trs}.log" 2>/dev/null)"
                ;;
            *)
                fail=$((fail + 1)); failed_names+=("$name")
                echo "----- FAIL ($res): $name; last lines of ${trs%.trs}.log:"
                tail -n 25 "${trs%.trs}.log" 2>/dev/null | sed 's/^/    /'
                ;;
        esac
    done < <(find "$d" -path "$d/loom-*" -prune -o -name '*.trs' -type f -print0 | sort -z)
done
[ -d "$adir/sanitizer-reports" ] && asan_reports "$adir"
if [ "$asan_make_failed" -eq 1 ] && ! printf '%s\n' "${failed_names[@]}" | grep -q '^asan:'; then
    echo "test.sh: make check in $adir failed without a failing test: a test did not build?" >&2
    fail=$((fail + 1)); failed_names+=("asan:make-check")
fi
if [ "$check_rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
    # make check failed without a failing test result: something did not build
    echo "test.sh: make check exited $check_rc without a failing test: a test did not build?" >&2
    extra_fail=$((extra_fail + 1)); failed_names+=("make-check")
fi
pass=$((pass + extra_pass))
fail=$((fail + extra_fail))
skip=$((skip + extra_skip))
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "test.sh: total time $(( $(date +%s) - t0 ))s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
