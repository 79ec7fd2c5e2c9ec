#!/bin/bash
# scripts/test.sh - the whole test suite: dependencies, build, unit and integration
# tests (`make check`), then `make distcheck`.
#
# Prints, as its very last line, "N passed, N failed, N skipped" counting every test
# (each automake test from its .trs file, plus `distcheck` as one test; a build that
# fails counts as one failed test), and exits non-zero when anything failed.
# Environment: LOOM_DISTCHECK=yes|no (default yes), LOOM_BUILD_DIR (default build),
# LOOM_SKIP_DEPS=1 to skip scripts/deps.sh. Works without a TTY and without stdin.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bdir=${LOOM_BUILD_DIR:-build}
export LOOM_BUILD_DIR=$bdir
t0=$(date +%s)
exec </dev/null

step() { printf '\n=== test.sh: %s (%ds)\n' "$*" $(( $(date +%s) - t0 )); }

extra_pass=0
extra_fail=0
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

step "build"
built=1
check_rc=0
if ! ./scripts/build.sh; then
    echo "test.sh: build failed" >&2
    extra_fail=$((extra_fail + 1)); failed_names+=("build")
    built=0
fi

if [ -d "$bdir" ]; then
    # stale results of an earlier run must not be counted
    find "$bdir" -path "$bdir/loom-*" -prune -o \( -name '*.trs' -o -name 'test-suite.log' \) \
        -type f -print0 | xargs -0 rm -f
fi

if [ "$built" -eq 1 ]; then
    step "make check"
    # -k: a failing unit test directory must not hide the integration results
    (cd "$bdir" && make -k -j2 check)
    check_rc=$?

    if [ "${LOOM_DISTCHECK:-yes}" = yes ]; then
        step "make distcheck"
        if (cd "$bdir" && LOOM_TEST_QUICK=1 make -j2 distcheck); then
            extra_pass=$((extra_pass + 1))
        else
            extra_fail=$((extra_fail + 1)); failed_names+=("distcheck")
        fi
    fi
fi

step "summary"
pass=0 fail=0 skip=0
if [ -d "$bdir" ]; then
    while IFS= read -r -d '' trs; do
        res=$(sed -n 's/^:test-result: *//p' "$trs" | head -n1)
        name=${trs#"$bdir"/}; name=${name%.trs}
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
    done < <(find "$bdir" -path "$bdir/loom-*" -prune -o -name '*.trs' -type f -print0 | sort -z)
fi
if [ "$check_rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
    # make check failed without a failing test result: something did not build
    echo "test.sh: make check exited $check_rc without a failing test: a test did not build?" >&2
    extra_fail=$((extra_fail + 1)); failed_names+=("make-check")
fi
pass=$((pass + extra_pass))
fail=$((fail + extra_fail))
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "test.sh: total time $(( $(date +%s) - t0 ))s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
