#!/bin/sh
# t-loom-sbatch.sh - a batch job with several `srun --mpi=loom` steps.
#
# Usage: t-loom-sbatch.sh [BUILDDIR]     (environment: see lib.sh)
# On a private two-node cluster (two slurmd on this host) submits with sbatch a script
# (-N 2 -n 8) whose steps are: the Slurm-libpmi2 client on all 8 tasks, our PMI-1 client
# on all 8, our libpmi2 client on 4 tasks (a step smaller than the allocation), and
# Debian MPICH hello on 2 tasks (if built; with the MPICH finalize shim). Waits, bounded
# (T_TIMEOUT, default 90 s), for the job to end; asserts JobState=COMPLETED, ExitCode 0:0
# and every step's OK line in the job's output.
me=t-loom-sbatch
T_TIMEOUT=${T_TIMEOUT:-90}
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 2

hello=
if [ -x "$prog/mpich_hello" ] && build_shim; then
    hello="srun --mpi=$mpi -n 2 --export=ALL,LD_PRELOAD=$shim $prog/mpich_hello || exit 4"
else
    skip_case "MPICH step in the batch job" "mpich_hello or the shim not built"
fi
cat >"$cdir/job.sh" <<JOB
#!/bin/sh
#SBATCH -N 2
#SBATCH -n 8
#SBATCH --ntasks-per-node=4
#SBATCH -o $cdir/job.out
#SBATCH -e $cdir/job.err
srun --mpi=$mpi $prog/pmi2_kvstest_slurm -r 3 || exit 1
srun --mpi=$mpi $prog/pmi1_kvstest -r 3 -v 900 || exit 2
srun --mpi=$mpi -n 4 $prog/pmi2_kvstest_loom -r 3 || exit 3
$hello
echo "batch: all steps done"
JOB

jid=$(timeout 20 sbatch --parsable "$cdir/job.sh" 2>"$cdir/sbatch.err")
case $jid in
''|*[!0-9]*)
    echo "FAIL: sbatch did not accept the job: $(cat "$cdir/sbatch.err")"
    nfail=$((nfail + 1))
    finish
    ;;
esac
t0=$(date +%s)
state=
while :; do
    line=$(timeout 10 scontrol -o show job "$jid" 2>/dev/null)
    state=$(echo "$line" | sed -n 's/.* JobState=\([A-Z_]*\).*/\1/p')
    case $state in
    PENDING|RUNNING|CONFIGURING|COMPLETING|'') ;;
    *) break ;;
    esac
    if [ $(($(date +%s) - t0)) -ge "$T_TIMEOUT" ]; then
        echo "FAIL: batch job $jid still $state after ${T_TIMEOUT}s"
        nfail=$((nfail + 1))
        timeout 10 scancel "$jid"
        finish
    fi
    sleep 0.3
done
ec=$(echo "$line" | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p')
dt=$(($(date +%s) - t0))
if [ "$state" = COMPLETED ] && [ "$ec" = 0:0 ]; then
    echo "PASS: batch job $jid COMPLETED, exit code 0:0 (${dt}s)"
    npass=$((npass + 1))
else
    echo "FAIL: batch job $jid: JobState=$state ExitCode=$ec"
    sed 's/^/  job.out: /' "$cdir/job.out" 2>/dev/null | tail -n 10
    sed 's/^/  job.err: /' "$cdir/job.err" 2>/dev/null | tail -n 15
    nfail=$((nfail + 1))
fi
for want in "pmi2_kvstest: 8 ranks, 3 rounds OK" "pmi1_kvstest: 8 ranks, 3 rounds OK" \
    "pmi2_kvstest: 4 ranks, 3 rounds OK" ${hello:+"hello: 2 ranks OK"} \
    "batch: all steps done"; do
    if grep -qxF "$want" "$cdir/job.out" 2>/dev/null; then
        echo "PASS: batch output has '$want'"
        npass=$((npass + 1))
    else
        echo "FAIL: batch output lacks '$want'"
        nfail=$((nfail + 1))
    fi
done
finish
