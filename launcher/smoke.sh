#!/bin/sh
# smoke.sh - quick hand-run check of mpiexec's process management, with plain
# shell programs (no PMI client needed).  Usage: launcher/smoke.sh [MPIEXEC]
# Each check prints "ok" or "FAIL: ..."; the exit status is the failure count.
# The integration suite (tests/integration) is the real test; this is for
# launcher development.
M=${1:-./mpiexec}
# These checks are of the local launcher, also when run inside a Slurm job.
LOOM_MPIEXEC_LAUNCHER=fork
export LOOM_MPIEXEC_LAUNCHER
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

check() { # name, condition (a shell expression)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

$M -n 3 sh -c 'echo "$PMI_RANK/$PMI_SIZE $MPI_LOCALRANKID/$MPI_LOCALNRANKS $PMI_FD"' >"$out"
check "env of 3 ranks" '[ "$(sort "$out" | tr "\n" " ")" = "0/3 0/3 3 1/3 1/3 3 2/3 2/3 3 " ]'

$M -n 2 sh -c 'echo $PMI_JOBID' >"$out"
check "PMI_JOBID is <uint>.<uint>" 'grep -Eq "^[0-9]+\.[0-9]+$" "$out"'

$M -l -n 2 sh -c 'printf "a\nb"' >"$out"
check "-l tags lines, partial last line flushed" \
    '[ "$(grep -c "^\[[01]\] [ab]$" "$out")" = 4 ]'

$M -n 2 -genv G g -x X=x sh -c 'echo $G$X$E' : -env E e -n 1 sh -c 'echo $G$X$E' >"$out"
check "-genv/-x/-env and MPMD" '[ "$(sort "$out" | tr "\n" " ")" = "gx gx gxe " ]'

$M -genvnone -n 2 /usr/bin/env >"$out"
check "-genvnone: only the PMI variables" '[ "$(wc -l <"$out")" = 12 ] && grep -q "^PMI_RANK=1$" "$out"'

$M -wdir / -n 1 pwd >"$out"
check "-wdir" '[ "$(cat "$out")" = / ]'

$M -n 4 sh -c '[ $PMI_RANK = 2 ] && exit 3; sleep 30' 2>"$err"; rc=$?
check "failing rank: exit code and message" \
    '[ $rc = 3 ] && grep -q "^mpiexec: rank 2 exited with code 3$" "$err" &&
     grep -q "^mpiexec: killing 3 remaining ranks$" "$err"'

$M -n 2 sh -c '[ $PMI_RANK = 1 ] && kill -9 $$; sleep 30' 2>"$err"; rc=$?
check "signalled rank" '[ $rc = 9 ] && grep -q "rank 1 killed by signal 9" "$err"'

$M --timeout 1 -n 2 sleep 30 2>"$err"; rc=$?
check "--timeout" '[ $rc = 255 ] && grep -q "^mpiexec: timeout:" "$err"'

$M -n 2 sh -c 'trap "" TERM; sleep 30' 2>"$err" & pid=$!
sleep 0.5; kill -TERM $pid; wait $pid; rc=$?
check "SIGTERM to mpiexec, ranks ignoring SIGTERM" \
    '[ $rc = 143 ] && grep -q "caught signal 15" "$err"'

$M -n 1 ./no-such-program 2>"$err"; rc=$?
check "missing program" '[ $rc = 127 ] && grep -q "cannot start rank 0" "$err"'

$M -bogus 2>"$err"; rc=$?
check "unknown option" '[ $rc = 2 ] && grep -q "unknown option" "$err"'

$M -n 2 sh -c 'printf "cmd=abort exitcode=9 error_msg=bye\n" >&$PMI_FD; sleep 30' 2>"$err"; rc=$?
check "PMI-1 abort" '[ $rc = 9 ] && grep -q "^mpiexec: job aborted: rank" "$err"'

$M -n 2 sh -c '[ $PMI_RANK = 1 ] && echo garbage >&$PMI_FD; sleep 30' 2>"$err"; rc=$?
check "garbage on PMI_FD" '[ $rc != 0 ] && grep -q "job aborted: rank 1" "$err"'

echo "$fails failure(s)"
exit $fails
