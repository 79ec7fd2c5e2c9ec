# tests/security/fsroot_lib.sh - helpers of the t-fsroot-*.sh tests (sourced after
# ../integration/lib.sh, never run): a second local user (uid 65534 through setpriv,
# no account made), a victim directory of that user whose files must survive, and a
# racer that swaps a directory for a symlink to the victim in a bounded loop.

FS_UID=65534
FS_SECDIR=${LOOM_SECDIR:-$(pwd)}

[ "$(id -u)" -eq 0 ] || skip "needs root (a second uid and root's view of the files)"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
command -v perl >/dev/null || skip "no perl (the racer)"
# the attacker must reach our test directory
chmod 755 "$TEST_TMP"

# as_user CMD ARGS...: run as uid/gid 65534 with no supplementary groups
as_user() {
    setpriv --reuid=$FS_UID --regid=$FS_UID --clear-groups "$@"
}

# make_victim DIR: a directory of uid 65534, mode 0755, with f0..f3 = "precious"
make_victim() {
    mkdir -p "$1" && printf 'precious\n' | tee "$1"/f0 "$1"/f1 "$1"/f2 "$1"/f3 >/dev/null
    chown -R $FS_UID:$FS_UID "$1" && chmod 755 "$1" && chmod 644 "$1"/f*
}

# assert_victim DIR WHAT: DIR and its files unchanged (owner, mode, content)
assert_victim() {
    local bad="" f
    [ "$(stat -c '%u %a %F' "$1" 2>/dev/null)" = "$FS_UID 755 directory" ] ||
        bad="the directory is now: $(stat -c '%u %a %F' "$1" 2>&1)"
    for f in f0 f1 f2 f3; do
        [ "$(stat -c '%u %a' "$1/$f" 2>/dev/null)" = "$FS_UID 644" ] &&
            [ "$(cat "$1/$f" 2>/dev/null)" = precious ] || bad="$bad $f changed or gone;"
    done
    if [ -z "$bad" ]; then
        ok "$2: $1 untouched"
    else
        fail "$2: $bad"
        ls -la "$1" 2>&1 | sed 's/^/    | /'
    fi
}

# start_racer DIR NAME VICTIM: as uid 65534, swap DIR/NAME for a symlink to VICTIM and
# back, at most 2000 times or 5 s; sets racer_pid
start_racer() {
    as_user perl -e '
        my ($d, $n, $v) = @ARGV; my $end = time + 5;
        for (my $i = 0; $i < 2000 && time <= $end; $i++) {
            if (rename("$d/$n", "$d/$n.h")) {
                symlink($v, "$d/$n"); select(undef, undef, undef, 0.0005);
                unlink("$d/$n"); rename("$d/$n.h", "$d/$n");
            } else { select(undef, undef, undef, 0.001); }
        }' "$1" "$2" "$3" &
    racer_pid=$!
}

stop_racer() {
    kill "$racer_pid" 2>/dev/null
    wait "$racer_pid" 2>/dev/null
}

# srv_start ARGS...: start the pmixsrv driver (fsroot_pmixsrv ARGS) in the background,
# its stdin a fifo; waits (30 s at most) for "ready".  Sets srv_pid, srv_dir, srv_out
# and srv_ready (1 or 0).
_nsrv=0
srv_start() {
    _nsrv=$((_nsrv + 1))
    local fifo=$TEST_TMP/srv$_nsrv.in i
    srv_out=$TEST_TMP/srv$_nsrv.out
    mkfifo "$fifo"
    "$FS_SECDIR/fsroot_pmixsrv" "$@" <"$fifo" >"$srv_out" 2>&1 &
    srv_pid=$!
    exec {srv_fd}>"$fifo"
    srv_ready=0
    for ((i = 0; i < 300; i++)); do
        grep -qx ready "$srv_out" && { srv_ready=1; break; }
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.1
    done
    srv_dir=$(sed -n 's/^dir=//p' "$srv_out")
}

# srv_stop: tell the driver to destroy its server; waits for it (30 s at most).
srv_stop() {
    local i
    echo go >&"$srv_fd" 2>/dev/null
    exec {srv_fd}>&-
    for ((i = 0; i < 300; i++)); do
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$srv_pid" 2>/dev/null
    wait "$srv_pid" 2>/dev/null
}
