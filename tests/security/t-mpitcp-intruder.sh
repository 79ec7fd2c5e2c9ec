#!/bin/bash
# t-mpitcp-intruder.sh - libmpi's TCP netmod holds against intruders (doc/security.md,
# "MPI TCP"; mpi/tcp/conn.c handshake, mpi/core/p2p.c xm_pkt_check).
#
# 1. A stranger: a 3-rank job forced to TCP (mpitcp_victim: checked messages from rank 1
#    to rank 0, received with MPI_ANY_SOURCE) while mpitcp_intruder, not a rank, tries
#    rank 0's port: the old unauthenticated hello with forged packets as rank 2, no
#    secret, a wrong secret, bad hellos, garbage, 100 idle connections.  Every attack
#    is refused, rank 0 logs a refusal, the job's every byte checks out and rank 2's
#    late connection gets through.
# 2. A rank of the job gone bad: mpitcp_intruder as rank 2 (MPMD), knowing the secret,
#    replays a proof on a fresh challenge (refused), then sends one malformed packet per
#    run (forged src, payload longer than len, len 2^40, fragment without a message,
#    a cookie it was never given, unknown type, RTS without payload).  The job ends with
#    rank 0's "protocol error" naming rank 2 and the field; never a crash or a
#    sanitizer report.
# LOOM_TEST_QUICK=1 runs part 2 for three modes only.
. "$(dirname "$0")/../integration/lib.sh"
need_mpiexec
V=$LOOM_SECDIR/mpitcp_victim
I=$LOOM_SECDIR/mpitcp_intruder
[ -x "$V" ] && [ -x "$I" ] || skip "mpitcp_victim / mpitcp_intruder not built"
command -v ss >/dev/null || skip "no ss (iproute2) to find the rank's port"

# ---- 1. a stranger -------------------------------------------------------------------
pidf=$TEST_TMP/rank0.pid
LOOM_TEST_MARKER=$LOOM_TEST_MARKER MPITCP_PIDFILE=$pidf MPITCP_SECONDS=7 \
    timeout -k 5 90 "$LOOM_MPIEXEC" -n 3 -genv LOOM_MPI_NETMOD tcp \
    -genv LOOM_MPI_TCP_MAX_PENDING 16 "$V" >"$TEST_TMP/job.out" 2>"$TEST_TMP/job.err" &
job=$!
for _ in $(seq 100); do [ -s "$pidf" ] && break; sleep 0.1; done
pid=$(cat "$pidf" 2>/dev/null)
port=
for _ in $(seq 50); do
    [ -n "$pid" ] || break
    port=$(ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | sed 's/.*://' | head -n1)
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    kill "$job" 2>/dev/null
    wait "$job"
    cat "$TEST_TMP/job.err"
    fail "could not find rank 0's listening port (pid '$pid')"
    finish
fi
jobid=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^PMI_JOBID=//p')
say "rank 0 is pid $pid, listening on port $port, job id '$jobid'"
run_cmd -t 60 "$I" ext "$port" "${jobid:-x}"
cat "$out"
assert_rc 0 "every stranger's attack refused"
assert_no_grep ACCEPTED "$out" "no attack accepted"
wait "$job"
jrc=$?
say "job: exit $jrc"
sed 's/^/    | /' "$TEST_TMP/job.out" | tail -n 5
assert_eq "$jrc" 0 "victim job's exit status"
assert_grep "No Errors" "$TEST_TMP/job.out" "every message of the job checked out"
assert_grep "refused a TCP connection" "$TEST_TMP/job.err" "rank 0 logged a refusal"
assert_no_grep -E "AddressSanitizer|runtime error|Segmentation|core dumped" "$TEST_TMP/job.err"
n=$(grep -c "refused a TCP connection" "$TEST_TMP/job.err")
[ "$n" -le 2 ] && ok "refusals rate-limited ($n lines)" || fail "$n refusal lines: not rate-limited"

# ---- 2. a rank of the job gone bad -------------------------------------------------------
declare -A field=(
    [replay]="src: not the rank this connection authenticated"
    [src]="src: not the rank this connection authenticated"
    [long]="EAGER: payload longer than len"
    [huge]="EAGER: len above the eager limit"
    [frag]="FRAG: no message in flight"
    [cookie]="RDATA: cookie names no receive"
    [type]="type: unknown packet type"
    [rts]="RTS: payload size"
)
modes="replay src long huge frag cookie type rts"
[ "$LOOM_TEST_QUICK" = 1 ] && modes="replay long cookie"
for m in $modes; do
    run_job -t 60 -genv LOOM_MPI_NETMOD tcp -genv MPITCP_SECONDS 30 -n 2 "$V" : -n 1 "$I" int "$m"
    assert_failed_not_hung "malformed packet '$m' ends the job"
    assert_grep -E "rank 0: connection to rank 2 lost \(protocol error: ${field[$m]}" "$err" \
        "'$m': rank 0 names rank 2 and the field"
    assert_no_grep -E "AddressSanitizer|runtime error|Segmentation|core dumped" "$err" \
        "'$m': no memory error"
    assert_no_grep "FAIL:" "$out" "'$m': no forged message reached the victim"
    if [ "$m" = replay ]; then
        assert_grep "replayed proof refused" "$out" "a replayed proof is refused"
        assert_grep "fresh proof accepted" "$out" "the proof for its own challenge is accepted"
        assert_grep "acceptor's proof valid" "$out" "rank 0 proved the secret to the connector"
    fi
done
finish
