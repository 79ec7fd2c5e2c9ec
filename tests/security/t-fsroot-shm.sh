#!/bin/bash
# t-fsroot-shm.sh - libmpi's shared segment in /dev/shm against another local user
# (uid 65534) who makes its name first.  The job runs as root in a fresh pid namespace
# (mpiexec is pid 2, the ranks 3 and 4), so the old name form
# (/dev/shm/loom-mpi-<job>-<rank>-<pid>) is predictable:
#   - files and symlinks of the attacker at those names: the job still runs (its
#     segment has a fresh random name) and they are untouched;
#   - with the random part made predictable (getrandom interposed in the ranks), a
#     symlink at the name: a clear error naming the segment, nothing followed, the
#     job ends (no hang), the symlink's target untouched.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/fsroot_lib.sh"
need_mpiexec
PROG=$FS_SECDIR/fsroot_mpi
[ -x "$PROG" ] || skip "fsroot_mpi not built"
command -v unshare >/dev/null || skip "no unshare (util-linux)"
unshare --pid --fork true 2>/dev/null || skip "cannot make a pid namespace here"

run_ns() {
    run_cmd -t 60 unshare --pid --fork bash -c '("$@"); exit $?' _ "$LOOM_MPIEXEC" "$@"
}
squats=()
cleanup_squats() { rm -f "${squats[@]}"; squats=(); }

# -- the old predictable names, taken first
make_victim "$TEST_TMP/v"
for pid in $(seq 3 12); do
    s=/dev/shm/loom-mpi-20-0-$pid
    squats+=("$s")
    if [ "$pid" -le 4 ]; then
        as_user ln -s "$TEST_TMP/v/f$((pid - 3))" "$s"
    else
        as_user sh -c "printf squat > $s; chmod 666 $s"
    fi
done
run_ns -n 2 "$PROG"
assert_rc 0 "a job whose old segment names were taken first"
assert_grep "fsroot_mpi: 2 ranks OK" "$out"
assert_victim "$TEST_TMP/v" "symlinks at the old names"
bad=0
for s in "${squats[@]}"; do
    if [ -L "$s" ]; then
        [ "$(stat -c %u "$s")" = $FS_UID ] || bad=1
    elif [ "$(stat -c '%u %a' "$s" 2>/dev/null)" != "$FS_UID 666" ] ||
        [ "$(cat "$s" 2>/dev/null)" != squat ]; then
        bad=1
    fi
done
[ $bad -eq 0 ] && ok "the squatted names are untouched" ||
    fail "a squatted name changed: $(ls -la "${squats[@]}" 2>&1)"
cleanup_squats

# -- the new name made predictable, and taken first
CC=${CC:-cc}
if command -v "$CC" >/dev/null &&
    "$CC" -shared -fPIC -o "$TEST_TMP/fixrand.so" "$(dirname "$0")/fsroot_fixrand.c" 2>"$TEST_TMP/cc.err"; then
    s=/dev/shm/loom-mpi-20-0-abababababababab
    squats+=("$s")
    as_user ln -s "$TEST_TMP/v/f0" "$s"
    run_ns -n 2 env LD_PRELOAD="$TEST_TMP/fixrand.so" "$PROG"
    assert_failed_not_hung "the segment's only possible name taken by a symlink"
    assert_grep -E "loom-mpi-20-0-abababababababab.*(taken|exists)" "$err" \
        "the error names the segment"
    assert_victim "$TEST_TMP/v" "a symlink at the segment's name"
    [ -L "$s" ] && [ "$(stat -c %u "$s")" = $FS_UID ] && ok "the symlink left alone" ||
        fail "the symlink changed"
    cleanup_squats
else
    say "note: no C compiler ($CC): the predictable-name case is not run"
fi
left=$(ls /dev/shm | grep '^loom-mpi-20-' || true)
[ -z "$left" ] && ok "no segment left in /dev/shm" || fail "left in /dev/shm: $left"
finish
