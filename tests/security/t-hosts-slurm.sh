#!/bin/sh
# t-hosts-slurm.sh - the plugin's agent in slurmstepd (root) against hostile tasks,
# under real srun --mpi=loom on a private one-node cluster (tests/slurm/cluster.sh).
#
#   flood   hosts_flood: rank 0 pipelines 4 MiB of kvs-get requests for a 1 KiB value
#           and never reads.  slurmstepd's peak RSS (VmHWM) must stay within 32 MiB of
#           its RSS before the flood (the old agent queued every reply: ~180 MiB), rank
#           1 must still be served, and the step must end when srun is told to stop.
#   logesc  hosts_flood abort: a fullinit job id, an unknown command and an abort
#           message carrying newlines and escape bytes.  Neither srun's stderr nor
#           slurmd's log (where slurmstepd writes) may show a raw control byte or a line
#           forged by an embedded newline in the plugin's lines; the abort line shows the
#           bytes escaped and names rank 0.
#   logflood  hosts_flood logflood 5000: 5000 requests with unknown commands, each a
#           warning of the server; slurmd's log must get at most 400 of them (the
#           plugin's own limit: 200 lines at once, 20 a second; the core may limit more).
#           With LOOM_PMI_DEBUG=error in the job's env the warnings still reach slurmd's
#           log: a job cannot lower mpi.conf's level to hide from the administrator.
#   trace   LOOM_PMI_TRACE=1 in the job's env: the trace lines reach the job's own stderr
#           (srun's), and slurmd's log gets none of them.
# Skips (77) without root, Slurm or the plugin, like tests/slurm/t-*.sh.
me=t-hosts-slurm
: "${LOOM_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$LOOM_SRCDIR/tests/slurm/lib.sh"
here=$LOOM_SRCDIR/tests/slurm # lib.sh finds cluster.sh beside itself
need_plugin
sec=$bdir/tests/security
[ -x "$sec/hosts_flood" ] || { echo "SKIP: $me: hosts_flood not built"; exit 77; }
start_cluster -N 1
slog=$(ls "$cdir"/c/log/slurmd.*.log 2>/dev/null | head -n 1)

BOUND_MIB=32
status_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }
wait_for() { # PATH SECS
    _i=0
    while [ $_i -lt $(($2 * 10)) ]; do
        [ -e "$1" ] && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}
pass() { echo "PASS: $1"; npass=$((npass + 1)); }
failc() { echo "FAIL: $1"; nfail=$((nfail + 1)); }

# ---- flood ---------------------------------------------------------------------
export HOSTS_FLOOD_READY=$cdir/ready HOSTS_FLOOD_GO=$cdir/go HOSTS_FLOOD_DONE=$cdir/done
timeout -k 5 120 srun --mpi=loom -N 1 -n 2 "$sec/hosts_flood" 4 >"$out.flood.stdout" \
    2>"$out.flood.stderr" </dev/null &
spid=$!
if wait_for "$HOSTS_FLOOD_READY" 40; then
    pass "flood: both tasks initialized and fenced under srun --mpi=loom"
else
    failc "flood: the tasks did not get through init and the fence"
fi
stepd=
for task in $(pgrep -f "$sec/hosts_flood 4"); do # a task's parent is its slurmstepd
    p=$(awk '$1 == "PPid:" { print $2 }' "/proc/$task/status" 2>/dev/null)
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmstepd ] && stepd=$p && break
done
base=$(status_kb "$stepd" VmRSS)
echo "# slurmstepd (pid ${stepd:-?}) VmRSS before the flood: ${base:-?} kB"
touch "$HOSTS_FLOOD_GO"
wait_for "$HOSTS_FLOOD_DONE" 60 || failc "flood: rank 0 did not finish flooding in 60 s"
_i=0
while [ $_i -lt 100 ] && ! grep -q 'rank 1: .* OK' "$out.flood.stdout"; do
    sleep 0.1
    _i=$((_i + 1))
done
sleep 1
peak=$(status_kb "$stepd" VmHWM)
echo "# slurmstepd VmHWM after the flood: ${peak:-?} kB; $(grep -h wrote "$out.flood.stdout")"
if [ -n "$base" ] && [ -n "$peak" ] && [ $((peak - base)) -lt $((BOUND_MIB * 1024)) ]; then
    pass "flood: slurmstepd grew by $(((peak - base) / 1024)) MiB (< $BOUND_MIB MiB) under a 4 MiB flood"
else
    failc "flood: slurmstepd grew from ${base:-?} kB to a peak of ${peak:-?} kB (bound: +$BOUND_MIB MiB)"
fi
if grep -q "rank 1: 200 gets served while rank 0 flooded OK" "$out.flood.stdout"; then
    pass "flood: the other task is served while rank 0 does not read"
else
    failc "flood: the other task was not served"
fi
# the only job of this private cluster
scancel $(squeue -h -o %i) 2>/dev/null
wait $spid
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    failc "flood: the step did not end on scancel (timeout)"
else
    pass "flood: the step ended on scancel (exit $rc)"
fi

# ---- logesc ----------------------------------------------------------------------
ctl=$(printf '[\001-\010\013-\037\177]')
run_srun --mpi=loom -N 1 -n 2 "$sec/hosts_flood" abort
grep -av '^hosts_flood:' "$out.stderr" >"$out.stderr.plugin"
if [ $rc -ne 0 ] && [ $hung -eq 0 ] &&
    grep -qE 'mpi/loom: step [0-9.]+: rank 0[: ].*called PMI abort' "$out.stderr.plugin"; then
    pass "logesc: the abort ends the step, srun's stderr names rank 0"
else
    failc "logesc: no abort line naming rank 0 on srun's stderr (exit $rc)"
    show_output
fi
if LC_ALL=C grep -qa "$ctl" "$out.stderr.plugin" || grep -qa '^FORGED' "$out.stderr.plugin"; then
    failc "logesc: raw control bytes or a forged line on srun's stderr"
    LC_ALL=C grep -na -e "$ctl" -e '^FORGED' "$out.stderr.plugin" | head -n 5 | cat -v
else
    pass "logesc: no raw control byte and no forged line on srun's stderr"
fi
if grep -qF 'bye\x0aFORGED: all ranks exited normally\x0d\x1b[2J' "$out.stderr.plugin"; then
    pass "logesc: srun's stderr shows the abort message escaped"
else
    failc "logesc: srun's stderr does not show the abort message escaped"
    show_output
fi
sleep 1 # the stepd's last lines
if [ -z "$slog" ] || ! [ -s "$slog" ]; then
    failc "logesc: no slurmd log found in $cdir/c/log"
elif LC_ALL=C grep -a 'mpi/loom' "$slog" | grep -qa "$ctl" || grep -qa '^FORGED' "$slog"; then
    failc "logesc: raw control bytes or a forged line in slurmd's log"
    LC_ALL=C grep -na -e "$ctl" -e '^FORGED' "$slog" | head -n 5 | cat -v
else
    pass "logesc: no raw control byte and no forged line in slurmd's log"
fi
if [ -n "$slog" ] && grep -qF "fullinit claims pmijobid=job\\x0aFORGED" "$slog"; then
    pass "logesc: slurmd's log shows the task's job id escaped"
else
    failc "logesc: slurmd's log does not show the task's job id escaped"
fi

# ---- logflood --------------------------------------------------------------------
lines0=$(wc -l <"$slog" 2>/dev/null || echo 0)
run_srun --mpi=loom -N 1 -n 1 "$sec/hosts_flood" logflood 5000
sleep 1
n=$(tail -n +"$((lines0 + 1))" "$slog" 2>/dev/null | grep -c 'unknown PMI-2 command')
if [ $rc -eq 0 ] && [ "$n" -le 400 ]; then
    pass "logflood: 5000 bad requests left $n warning lines in slurmd's log (<= 400)"
else
    failc "logflood: 5000 bad requests left $n warning lines in slurmd's log (exit $rc)"
    show_output
fi

lines0=$(wc -l <"$slog" 2>/dev/null || echo 0)
run_srun --mpi=loom -N 1 -n 1 --export=ALL,LOOM_PMI_DEBUG=error "$sec/hosts_flood" logflood 3
sleep 1
n=$(tail -n +"$((lines0 + 1))" "$slog" 2>/dev/null | grep -c 'unknown PMI-2 command')
if [ $rc -eq 0 ] && [ "$n" -ge 1 ]; then
    pass "logflood: LOOM_PMI_DEBUG=error does not hide the warnings from slurmd's log ($n)"
else
    failc "logflood: with LOOM_PMI_DEBUG=error slurmd's log got $n warnings (exit $rc)"
fi

# ---- trace -----------------------------------------------------------------------
lines0=$(wc -l <"$slog" 2>/dev/null || echo 0)
run_srun --mpi=loom -N 1 -n 2 --export=ALL,LOOM_PMI_TRACE=1 "$prog/pmi2_kvstest_loom"
if [ $rc -eq 0 ] && grep -q 'trace: .*rank 1 -> ' "$out.stderr"; then
    pass "trace: LOOM_PMI_TRACE=1 traces the job's requests on its own stderr"
else
    failc "trace: no trace lines on the job's stderr (exit $rc)"
    show_output
fi
sleep 1
if [ -n "$slog" ] && tail -n +"$((lines0 + 1))" "$slog" | grep -q 'rank [0-9]* -> '; then
    failc "trace: the job's trace went to slurmd's log"
    tail -n +"$((lines0 + 1))" "$slog" | grep 'rank [0-9]* -> ' | head -n 3
else
    pass "trace: slurmd's log has none of the job's trace lines"
fi
finish
