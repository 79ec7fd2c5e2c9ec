#!/bin/bash
# t-faults-munge.sh - treenet with munge authentication when munged is stopped or slow.
#
# The machine's munged (shared with the Slurm tests) is never touched: the test starts
# its own munged (own key, socket, pid, log and seed files in its temporary directory)
# and faults_preload.so sends libmunge's connect() to that socket
# (LOOM_FAULT_MUNGE_SOCKET), since libmunge has no variable for it.
# Holds when: with the private munged up, a 3-node treenet job with munge auth succeeds;
# with it stopped (killed by pid) the job ends with a clear error naming munge, well
# inside the test's bound, never a crash or a hang; with it frozen (SIGSTOP) the job
# ends with a clear error or, if munged is thawed in time, succeeds; never a hang.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/faults_lib.sh"
need_faults
tool=$LOOM_SECDIR/faults_treenet
[ -x "$tool" ] || skip "faults_treenet not built ($tool)"
grep -q '^#define HAVE_MUNGE 1' "$LOOM_BUILDDIR/config.h" 2>/dev/null || skip "built without munge"
MUNGED=$(command -v munged || echo /usr/sbin/munged)
[ -x "$MUNGED" ] || skip "no munged (apt-get install munge)"

md=$TEST_TMP/munge
mkdir -m 0700 "$md"
head -c 1024 /dev/urandom >"$md/munge.key"
chmod 0400 "$md/munge.key"
sock=$md/munge.socket.2
mpid=
stop_munged() {
    if [ -n "$mpid" ] && kill -0 "$mpid" 2>/dev/null; then
        kill -CONT "$mpid" 2>/dev/null
        kill "$mpid" 2>/dev/null
        for ((i = 0; i < 50; i++)); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$mpid" 2>/dev/null
    fi
    mpid=
}
start_munged() {
    rm -f "$sock" "$md/munged.pid"
    "$MUNGED" -f -F --socket="$sock" --key-file="$md/munge.key" --pid-file="$md/munged.pid" \
        --log-file="$md/munged.log" --seed-file="$md/munged.seed" --num-threads=2 \
        </dev/null >>"$md/munged.out" 2>&1 &
    mpid=$!
    for ((i = 0; i < 50; i++)); do [ -S "$sock" ] && return 0; sleep 0.1; done
    return 1
}
trap 'stop_munged; _cleanup' EXIT

start_munged || { fail "private munged did not start:"; cat "$md/munged.out" "$md/munged.log" 2>/dev/null | tail -5; finish; }
ok "private munged started (pid $mpid, socket $sock)"

fault_run 60 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_MUNGE_SOCKET="$sock" -- "$tool" 3 munge
fault_ok "munged up" 'faults_treenet: 3 nodes OK'
[ "$verdict" = "exit 0" ] || fail "with the private munged up the job must succeed"

# frozen munged, thawed after 1 s: slow, not gone
kill -STOP "$mpid"
( sleep 1; kill -CONT "$mpid" 2>/dev/null ) &
thaw=$!
fault_run 60 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_MUNGE_SOCKET="$sock" -- "$tool" 3 munge
wait "$thaw"
fault_ok "munged frozen for 1 s" 'faults_treenet: 3 nodes OK'

# frozen for the whole job
kill -STOP "$mpid"
s0=$(date +%s)
fault_run 60 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_MUNGE_SOCKET="$sock" -- "$tool" 3 munge
say "  took $(($(date +%s) - s0)) s"
kill -CONT "$mpid"
fault_ok "munged frozen" 'faults_treenet: 3 nodes OK'
[ "$verdict" != "exit 0" ] || fail "munged frozen: the job cannot have authenticated"

# stopped
stop_munged
s0=$(date +%s)
fault_run 60 LOOM_FAULT_PROC=faults_treenet LOOM_FAULT_MUNGE_SOCKET="$sock" -- "$tool" 3 munge
say "  took $(($(date +%s) - s0)) s"
fault_ok "munged stopped" 'faults_treenet: 3 nodes OK'
[ "$verdict" != "exit 0" ] || fail "munged stopped: the job cannot have authenticated"
assert_grep -i munge "$err" "the error names munge"
finish
