#!/bin/bash
# t-fsroot-pmixsrv.sh - the PMIx server's directory, made by root for another user as
# the stepd's plugin makes it (tests/security/fsroot_pmixsrv drives the real pmixsrv
# and libpmix), against that user (uid 65534) and against squatters:
#   - a world-writable base (/tmp: the plugin's old fallback) is refused with a clear
#     error, and nothing is made there;
#   - the directory is made by root with a fresh random name and handed over 0700;
#   - a name squatted first (symlink to a victim, a foreign directory) is never used,
#     chowned or removed (root serving root, as mpiexec run by root in /tmp);
#   - at teardown, with libpmix's store directories swapped for symlinks to a victim,
#     a symlink planted beside them and a racer swapping a subdirectory for a
#     symlink, nothing outside the directory is removed or chowned, and the
#     directory is gone.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/fsroot_lib.sh"
DRV=$FS_SECDIR/fsroot_pmixsrv
[ -x "$DRV" ] || skip "fsroot_pmixsrv not built (no libpmix)"

base=$TEST_TMP/base
mkdir -m 755 "$base"

# -- /tmp as the base of root's directory for another user
tag=loom-pmix.fsroot-$$
run_cmd -t 60 "$DRV" "/tmp/$tag.0" $FS_UID $FS_UID
assert_rc 2 "pmixsrv refuses /tmp as root for uid $FS_UID"
assert_grep -E "/tmp.*(writable by other users|not sticky)" "$err" "the error names /tmp and why"
if ls -d /tmp/"$tag"* >/dev/null 2>&1; then
    fail "something was made in /tmp: $(ls -d /tmp/"$tag"*)"
    rm -rf /tmp/"$tag"*
else
    ok "nothing made in /tmp"
fi

# -- squatted names in /tmp (root serving root: mpiexec as root)
make_victim "$TEST_TMP/v1"
sq=/tmp/$tag.sq
as_user ln -s "$TEST_TMP/v1" "$sq.0"
as_user mkdir -m 777 "$sq.1"
for k in 0 1; do
    srv_start "$sq.$k" 0 0
    if [ "$srv_ready" = 1 ] && [ -n "$srv_dir" ] && [ "$srv_dir" != "$sq.$k" ]; then
        ok "squatted $sq.$k: the server made $srv_dir instead"
    else
        fail "squatted $sq.$k: the server used it: $(tr '\n' ' ' <"$srv_out")"
    fi
    srv_stop
    [ "$srv_dir" != "$sq.$k" ] && [ -e "$srv_dir" ] && fail "$srv_dir left after destroy"
done
assert_victim "$TEST_TMP/v1" "a symlink squatting the name"
if [ "$(stat -c '%u %a' "$sq.1")" = "$FS_UID 777" ] && [ -z "$(ls -A "$sq.1")" ]; then
    ok "a foreign directory squatting the name: untouched and unused"
else
    fail "the foreign directory $sq.1 changed: $(stat -c '%u %a' "$sq.1"; ls -A "$sq.1")"
fi
rm -rf "$sq.0" "$sq.1"

# -- hand-over and teardown against the job's own user
make_victim "$TEST_TMP/v2"
srv_start "$base/loom-pmix.fsroot.0" $FS_UID $FS_UID
dir=$srv_dir
if [ "$srv_ready" != 1 ] || [ ! -d "$dir" ]; then
    fail "the server did not start: $(cat "$srv_out")"
    srv_stop
    finish
fi
ok "the server runs in $dir"
[ "$(stat -c '%u %g %a' "$dir")" = "$FS_UID $FS_UID 700" ] &&
    ok "handed to uid $FS_UID, mode 0700" ||
    fail "owner/mode $(stat -c '%u %g %a' "$dir"), expected $FS_UID $FS_UID 700"
# what the user does before the step ends: swap libpmix's store directories for
# symlinks to the victim, plant a symlink, and race a subdirectory against teardown
as_user bash -c '
    cd "$1" || exit 1
    for x in pmix_dstor_*; do [ -d "$x" ] && mv "$x" "$x.away" && ln -s "$2" "$x"; done
    ln -s "$2" evil; ln -s "$2/f0" evilfile
    mkdir sub && for f in f0 f1 f2 f3; do echo junk > sub/$f; done' _ "$dir" "$TEST_TMP/v2"
ls -la "$dir" | sed 's/^/    | /'
start_racer "$dir" sub "$TEST_TMP/v2"
sleep 0.2
srv_stop
stop_racer
grep -q destroyed "$srv_out" && ok "the server ended" ||
    fail "the server did not end: $(cat "$srv_out")"
assert_victim "$TEST_TMP/v2" "teardown raced by the job's user"
if [ -e "$dir" ]; then
    fail "$dir left after teardown: $(ls -la "$dir")"
else
    ok "$dir removed"
fi
[ -z "$(ls -A "$base")" ] && ok "nothing else left in the base" ||
    fail "left in the base: $(ls -A "$base")"
finish
