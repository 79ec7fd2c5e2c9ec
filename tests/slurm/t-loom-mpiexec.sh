#!/bin/sh
# t-loom-mpiexec.sh - our mpiexec inside a Slurm allocation launches through srun.
#
# Usage: t-loom-mpiexec.sh [BUILDDIR]    (environment: see lib.sh)
# On a private two-node cluster (two slurmd on this host) runs BUILDDIR/launcher/mpiexec
# as the command of `salloc -N 2 -n 8` (so SLURM_JOB_ID is set and srun is in PATH) and
# asserts: the ranks really are tasks of an srun step (SLURM_STEP_ID set, PMI_RANK 0..3);
# without -n the allocation's 8 tasks run; PMI works (Slurm-libpmi2, our PMI-1 and PMI-2
# clients: the OK lines); MPMD through --multi-prog (ranks 0-1 one program, 2-3 another;
# a PMI-2 + PMI-1 job of 8); -l gives srun's "N: " labels; -genv and -wdir reach the
# ranks (and -genvnone keeps the rest out); a rank exiting 3 makes mpiexec exit non-zero;
# -v prints the srun command; --timeout kills srun (exit 255); `-launcher slurm` without
# salloc lets srun allocate; and `-launcher fork` (and LOOM_MPIEXEC_LAUNCHER=fork) inside the allocation runs the ranks
# locally (no SLURM_STEP_ID, PMI served by mpiexec itself). Also a batch job (sbatch
# --wait) whose script runs mpiexec twice (two steps, 8 and 4 ranks). Each salloc and
# the batch job are bounded by T_TIMEOUT (default 60 s).
me=t-loom-mpiexec
. "$(dirname "$0")/lib.sh"
need_plugin
mpiexec=$bdir/launcher/mpiexec
[ -x "$mpiexec" ] || { echo "SKIP: $me: $mpiexec not built (configure --with-pm=loom)"; exit 77; }
start_cluster -N 2
export LOOM_MPI_TYPE=$mpi

# Run "salloc -N 2 -n 8 mpiexec ARGS...", bounded; sets rc, dt and hung like run_srun.
run_alloc() {
    _t0=$(date +%s%N)
    timeout -k 5 "$T_TIMEOUT" salloc -N 2 -n 8 "$mpiexec" "$@" \
        >"$out.stdout" 2>"$out.stderr" </dev/null
    rc=$?
    _t1=$(date +%s%N)
    dt=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    hung=0
    [ $rc -eq 124 ] && hung=1
}

pass() { echo "PASS: $1 (${dt}s)"; npass=$((npass + 1)); }
fail() {
    echo "FAIL: $1 (salloc -N 2 -n 8 mpiexec $2)"
    show_output
    nfail=$((nfail + 1))
}

# ok NAME "EXPECTED STDOUT (sorted, newline-separated)" MPIEXEC_ARGS...
ok_sorted() {
    _name=$1 _want=$2
    shift 2
    run_alloc "$@"
    _got=$(grep -v '^salloc:' "$out.stdout" | sort)
    if [ $rc -eq 0 ] && [ "$_got" = "$_want" ]; then
        pass "$_name"
    else
        [ $hung -eq 1 ] && _name="$_name: timed out"
        fail "$_name: exit code $rc, want output '$_want'" "$*"
    fi
}

# ok_line NAME WANT_LINE MPIEXEC_ARGS...
ok_line() {
    _name=$1 _want=$2
    shift 2
    run_alloc "$@"
    if [ $rc -eq 0 ] && grep -qxF "$_want" "$out.stdout"; then
        pass "$_name"
    else
        fail "$_name: exit code $rc, want line '$_want'" "$*"
    fi
}

step='echo step=${SLURM_STEP_ID:-none} rank=$PMI_RANK size=$PMI_SIZE'
ok_sorted "ranks are tasks of an srun step" "$(printf 'step=0 rank=%d size=4\n' 0 1 2 3)" \
    -n 4 sh -c "$step"
ok_sorted "no -n: the allocation's 8 tasks" \
    "$(printf 'step=0 rank=%d size=8\n' 0 1 2 3 4 5 6 7)" sh -c "$step"
if [ -x "$prog/pmi2_kvstest_slurm" ]; then
    ok_line "Slurm libpmi2 client through mpiexec -n 8" "pmi2_kvstest: 8 ranks, 3 rounds OK" \
        -n 8 "$prog/pmi2_kvstest_slurm" -r 3
else
    skip_case "Slurm libpmi2 client through mpiexec" "pmi2_kvstest_slurm not built"
fi
ok_line "our PMI-1 client through mpiexec (no -n)" "pmi1_kvstest: 8 ranks, 3 rounds OK" \
    "$prog/pmi1_kvstest" -r 3
ok_line "MPMD (--multi-prog): PMI-2 and PMI-1 clients, 8 ranks" \
    "pmi2_kvstest: 8 ranks, 3 rounds OK" \
    -n 4 "$prog/pmi2_kvstest_loom" -r 3 : -n 4 "$prog/pmi1_kvstest" -r 3
ok_sorted "MPMD ranks 0-1 and 2-3, per-app -env" "$(printf 'A 0 x\nA 1 x\nB 2 y z\nB 3 y z')" \
    -n 2 -env V x sh -c 'echo A $PMI_RANK $V' : -n 2 -env V "y z" sh -c 'echo B $PMI_RANK $V'
ok_sorted "-l labels lines with srun's 'N: '" "$(printf '0: hi\n1: hi\n2: hi')" \
    -n 3 -l sh -c 'echo hi'
ok_sorted "-genv and -wdir reach the ranks" "$(printf '/ bar\n/ bar')" \
    -n 2 -wdir / -genv FOO bar sh -c 'echo $PWD $FOO'
export LOOM_T_OUTER=outer
ok_sorted "-genvnone -x FOO=1: only FOO reaches the ranks" "$(printf '1 unset\n1 unset')" \
    -genvnone -x FOO=1 -n 2 sh -c 'echo ${FOO:-unset} ${LOOM_T_OUTER:-unset}'
ok_sorted "without -genvnone mpiexec's environment reaches the ranks" \
    "$(printf 'outer\nouter')" -n 2 sh -c 'echo ${LOOM_T_OUTER:-unset}'
unset LOOM_T_OUTER

run_alloc -n 4 sh -c '[ "$PMI_RANK" = 2 ] && exit 3; exit 0'
if [ $hung -eq 0 ] && [ $rc -ne 0 ]; then
    pass "a rank exiting 3: mpiexec exits non-zero (rc $rc)"
else
    fail "a rank exiting 3: exit code $rc" "-n 4 sh -c 'exit 3 on rank 2'"
fi

run_alloc -v -n 2 true
if [ $rc -eq 0 ] && grep -q "srun --mpi=$mpi --kill-on-bad-exit=1 -n2 true" "$out.stderr"; then
    pass "-v prints the srun command"
else
    fail "-v: exit code $rc or no srun command line on stderr" "-v -n 2 true"
fi

run_alloc --timeout 2 -n 2 sleep 30
if [ $hung -eq 0 ] && [ $rc -eq 255 ] && grep -q "timeout after 2 s" "$out.stderr" &&
    awk -v d="$dt" 'BEGIN { exit !(d < 15) }'; then
    pass "--timeout 2: srun killed, mpiexec exits 255"
else
    fail "--timeout 2: exit code $rc after ${dt}s, want 255 within 15 s" "--timeout 2 -n 2 sleep 30"
fi

# -launcher slurm without an allocation: srun makes one for the step.
_t0=$(date +%s)
timeout -k 5 "$T_TIMEOUT" "$mpiexec" -launcher slurm -n 3 sh -c "$step" \
    >"$out.stdout" 2>"$out.stderr" </dev/null
rc=$?
dt=$(($(date +%s) - _t0))
if [ $rc -eq 0 ] && [ "$(sort "$out.stdout")" = "$(printf 'step=0 rank=%d size=3\n' 0 1 2)" ]
then
    pass "-launcher slurm outside an allocation: srun allocates"
else
    fail "-launcher slurm: exit code $rc" "(no salloc) -launcher slurm -n 3"
fi

ok_sorted "-launcher fork inside the allocation runs locally" \
    "$(printf 'step=none rank=%d size=3\n' 0 1 2)" -launcher fork -n 3 sh -c "$step"
ok_line "--no-slurm: PMI served by mpiexec itself" "pmi2_kvstest: 4 ranks, 3 rounds OK" \
    --no-slurm -n 4 "$prog/pmi2_kvstest_loom" -r 3
export LOOM_MPIEXEC_LAUNCHER=fork
ok_sorted "LOOM_MPIEXEC_LAUNCHER=fork runs locally" \
    "$(printf 'step=none rank=%d size=2\n' 0 1)" -n 2 sh -c "$step"
unset LOOM_MPIEXEC_LAUNCHER

cat >"$cdir/job.sh" <<JOB
#!/bin/sh
"$mpiexec" "$prog/pmi1_kvstest" -r 3 || exit 1
"$mpiexec" -n 4 "$prog/pmi2_kvstest_loom" -r 3 || exit 2
echo "batch: SLURM_JOB_ID set, mpiexec steps done"
JOB
_t0=$(date +%s)
timeout -k 5 "$T_TIMEOUT" sbatch --wait -N 2 -n 8 -o "$cdir/job.out" "$cdir/job.sh" \
    >"$out.stdout" 2>"$out.stderr" </dev/null
rc=$?
dt=$(($(date +%s) - _t0))
if [ $rc -eq 0 ] && grep -qxF "pmi1_kvstest: 8 ranks, 3 rounds OK" "$cdir/job.out" &&
    grep -qxF "pmi2_kvstest: 4 ranks, 3 rounds OK" "$cdir/job.out" &&
    grep -qxF "batch: SLURM_JOB_ID set, mpiexec steps done" "$cdir/job.out"; then
    pass "sbatch: a batch script with two mpiexec steps"
else
    sed 's/^/  job.out: /' "$cdir/job.out" 2>/dev/null | tail -n 10
    fail "sbatch --wait: exit code $rc or missing OK lines" "(in a batch script)"
fi
finish
