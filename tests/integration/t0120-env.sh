#!/bin/bash
# t0120-env.sh - environment and working directory options: -genv K V (all ranks),
# -env K V (one MPMD section), -x VAR and -x VAR=VALUE (export), -wdir DIR; the ranks'
# timer slack on a host with more ranks than CPUs (LOOM_TIMER_SLACK, default 1 ms).
. "$(dirname "$0")/lib.sh"
need_mpiexec

run_job -genv LOOM_T_G "global value" -n 2 sh -c 'echo "g=$LOOM_T_G"'
assert_rc 0 "-genv"
assert_eq "$(grep -c '^g=global value$' "$out")" 2 "ranks seeing -genv LOOM_T_G"

run_job -n 2 -env LOOM_T_E one sh -c 'echo "e=$LOOM_T_E"'
assert_rc 0 "-env"
assert_eq "$(grep -c '^e=one$' "$out")" 2 "ranks seeing -env LOOM_T_E"

# -env applies to its own MPMD section only; -genv to all
run_job -genv LOOM_T_G all -n 1 -env LOOM_T_E a sh -c 'echo "s0 e=$LOOM_T_E g=$LOOM_T_G"' \
    : -n 1 -env LOOM_T_E b sh -c 'echo "s1 e=$LOOM_T_E g=$LOOM_T_G"' \
    : -n 1 sh -c 'echo "s2 e=${LOOM_T_E-unset} g=$LOOM_T_G"'
assert_rc 0 "-env per MPMD section"
assert_grep -x "s0 e=a g=all" "$out" "section 0 sees its -env"
assert_grep -x "s1 e=b g=all" "$out" "section 1 sees its -env"
assert_grep -x "s2 e=unset g=all" "$out" "section 2 sees no -env of the others"

# -x VAR exports the launcher's value; -x VAR=VALUE sets it
LOOM_T_X="from launcher" run_job -x LOOM_T_X -x LOOM_T_Y=set -n 2 \
    sh -c 'echo "x=$LOOM_T_X y=$LOOM_T_Y"'
assert_rc 0 "-x"
assert_eq "$(grep -c '^x=from launcher y=set$' "$out")" 2 "ranks seeing -x exports"

# -wdir
mkdir -p "$TEST_TMP/wd with space"
run_job -wdir "$TEST_TMP/wd with space" -n 2 sh -c 'pwd'
assert_rc 0 "-wdir"
assert_eq "$(sort -u "$out")" "$TEST_TMP/wd with space" "working directory of the ranks"

run_job -wdir "$TEST_TMP/does-not-exist" -n 2 sh -c 'pwd'
assert_failed_not_hung "-wdir of a missing directory"
assert_grep "does-not-exist" "$err" "stderr names the missing directory"

# Timer slack, read by each rank from /proc: 1 ms once the ranks outnumber the CPUs
# (our affinity); otherwise what they inherit from us.
slack='echo "slack=$(cat /proc/$$/timerslack_ns)"'
mine="slack=$(cat /proc/self/timerslack_ns)"
over=$(($(nproc) + 1))
run_job -n "$over" sh -c "$slack"
assert_rc 0 "timer slack, $over ranks"
assert_eq "$(sort -u "$out")" "slack=1000000" "timer slack of $over ranks on $(nproc) CPUs"
run_job -n 1 sh -c "$slack"
assert_rc 0 "timer slack, 1 rank"
assert_eq "$(sort -u "$out")" "$mine" "timer slack of 1 rank (inherited)"
LOOM_TIMER_SLACK=250 run_job -n "$over" sh -c "$slack"
assert_eq "$(sort -u "$out")" "slack=250000" "timer slack with LOOM_TIMER_SLACK=250"
LOOM_TIMER_SLACK=0 run_job -n "$over" sh -c "$slack"
assert_eq "$(sort -u "$out")" "$mine" "timer slack with LOOM_TIMER_SLACK=0 (inherited)"
LOOM_TIMER_SLACK=2000000 run_job -n "$over" sh -c "$slack"
assert_rc 0 "LOOM_TIMER_SLACK out of range"
assert_eq "$(sort -u "$out")" "slack=1000000" "timer slack with LOOM_TIMER_SLACK=2000000 (refused)"
assert_grep "ignoring LOOM_TIMER_SLACK=2000000" "$err" "mpiexec warns about LOOM_TIMER_SLACK"

finish
