#!/bin/bash
# t0100-launch.sh - mpiexec basics: ranks start with the PMI environment, the job's exit
# status is the first failing rank's, and stderr names that rank.
. "$(dirname "$0")/lib.sh"
need_mpiexec

# every rank sees its own PMI_RANK, the size and a PMI_FD
run_job -n 4 sh -c 'echo "env rank=$PMI_RANK size=$PMI_SIZE fd=${PMI_FD:+set} lrank=$MPI_LOCALRANKID lsize=$MPI_LOCALNRANKS jobid=${PMI_JOBID:+set}"'
assert_rc 0 "four ranks of sh"
for r in 0 1 2 3; do
    assert_grep "env rank=$r size=4 fd=set lrank=$r lsize=4 jobid=set" "$out" "rank $r environment"
done
assert_eq "$(grep -c '^env ' "$out")" 4 "number of output lines"

# -np is a synonym of -n
run_job -np 3 sh -c 'echo "r$PMI_RANK"'
assert_rc 0 "-np 3"
assert_eq "$(sort "$out" | tr '\n' ' ')" "r0 r1 r2 " "ranks of -np 3"

# a single failing rank: its exit status is the job's, and stderr names it
run_job -n 4 sh -c 'if [ "$PMI_RANK" = 2 ]; then exit 7; fi; exit 0'
assert_rc 7 "rank 2 exits 7"
assert_grep -E 'rank 2([^0-9]|$)' "$err" "stderr names rank 2"

# two failing ranks: the first to fail decides the status and is named
run_job -n 4 sh -c 'case $PMI_RANK in 1) exit 5 ;; 3) sleep 1; exit 9 ;; *) sleep 2 ;; esac'
assert_rc 5 "rank 1 fails first with 5, rank 3 later with 9"
assert_grep -E 'rank 1([^0-9]|$)' "$err" "stderr names rank 1"

# a rank killed by a signal: non-zero exit, stderr names the rank
run_job -n 3 sh -c 'if [ "$PMI_RANK" = 1 ]; then kill -KILL $$; fi; sleep 0.2'
assert_failed_not_hung "rank 1 killed by SIGKILL"
assert_grep -E 'rank 1([^0-9]|$)' "$err" "stderr names rank 1"

# a program that does not exist: a clear error, no hang
run_job -n 2 ./no-such-program-"$$"
assert_failed_not_hung "missing executable"
assert_grep "no-such-program" "$err" "stderr names the missing program"

# stdin is not needed; 64 trivial ranks start and exit
run_job -n 64 true
assert_rc 0 "64 ranks of true"

finish
