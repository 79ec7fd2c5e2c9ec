# tests/slurm/pmix_cases.sh - PMIx server mode cases shared by t-loom-pmix.sh (one node)
# and t-loom-pmix4.sh (four network-namespace nodes); sourced after lib.sh, never run.
#
# Contract: functions that add cases through lib.sh's case_ok / case_fail / skip_case:
#   need_pmix               skip (77) unless the plugin serves PMIx (pmix_client built)
#   ompi PROG N SUFFIX SRUN_ARGS...   Debian Open MPI hello/ring (tests/programs/ompi_*)
#   pmixc MODE N SUFFIX SRUN_ARGS...  our PMIx client test in MODE (data|dmodex|unsup|publish)
#   pmix_batch NODES SRUN_ARGS...     one sbatch script with an MPICH and an Open MPI
#                           step under the same --mpi; asserts both OK lines
# Open MPI runs with its defaults: under srun it needs no MCA setting here (64 ranks on
# 2 cores included). ompi_env is the --export value of its steps.

ompi_env="ALL"

need_pmix() {
    [ -x "$prog/pmix_client" ] && return 0
    echo "SKIP: $me: tests/programs/pmix_client not built (configure found no libpmix)"
    exit 77
}

ompi() { # PROGRAM N NAME_SUFFIX SRUN_ARGS...
    _p=$1 _n=$2 _s=$3
    shift 3
    if [ ! -x "$prog/$_p" ]; then
        skip_case "Open MPI $_p $_s" "$_p not built (no mpicc.openmpi)"
        return
    fi
    case $_p in
    ompi_hello) _want="hello: $_n ranks OK" ;;
    *) _want="ring: $_n ranks, 3 laps OK" ;;
    esac
    case_ok "Debian Open MPI $_p, --mpi=$mpi $_s" "$_want" --mpi="$mpi" \
        --export="$ompi_env" "$@" "$prog/$_p"
}

pmixc() { # MODE N NAME_SUFFIX SRUN_ARGS...
    _m=$1 _n=$2 _s=$3
    shift 3
    case_ok "PMIx client ($_m), --mpi=$mpi $_s" "pmix_client: $_n ranks, 3 rounds OK" \
        --mpi="$mpi" "$@" "$prog/pmix_client" -m "$_m" -v 200
}

pmix_batch() { # NODES SRUN_ARGS_FOR_MPICH...
    _nodes=$1
    shift
    if [ ! -x "$prog/mpich_hello" ] || [ ! -x "$prog/ompi_hello" ]; then
        skip_case "MPICH + Open MPI in one batch job" "mpich_hello or ompi_hello not built"
        return
    fi
    cat >"$cdir/pmix_job.sh" <<JOB
#!/bin/sh
#SBATCH -N $_nodes
#SBATCH -n 8
#SBATCH --ntasks-per-node=$((8 / _nodes))
srun --mpi=$mpi $* $prog/mpich_hello || exit 1
srun --mpi=$mpi --export=$ompi_env $prog/ompi_hello || exit 2
echo "batch: both steps done"
JOB
    _t0=$(date +%s)
    timeout -k 5 "$T_TIMEOUT" sbatch --wait -o "$cdir/pmix_job.out" "$cdir/pmix_job.sh" \
        >"$out.stdout" 2>"$out.stderr"
    rc=$?
    dt=$(($(date +%s) - _t0))
    if [ $rc -eq 0 ] && grep -qxF "hello: 8 ranks OK" "$cdir/pmix_job.out" &&
        [ "$(grep -cxF "hello: 8 ranks OK" "$cdir/pmix_job.out")" -eq 2 ] &&
        grep -qxF "batch: both steps done" "$cdir/pmix_job.out"; then
        echo "PASS: MPICH and Open MPI steps in one sbatch, --mpi=$mpi, $_nodes node(s) (${dt}s)"
        npass=$((npass + 1))
    else
        echo "FAIL: MPICH and Open MPI steps in one sbatch, $_nodes node(s): rc $rc"
        sed 's/^/  job: /' "$cdir/pmix_job.out" 2>/dev/null | tail -n 10
        show_output
        nfail=$((nfail + 1))
    fi
}

# mpiexec_ok NAME WANT_LINE MPIEXEC_ARGS...: our mpiexec off Slurm (no allocation: it
# launches locally and serves PMIx itself), bounded, exit 0 and WANT_LINE on stdout.
mpiexec_ok() {
    _name=$1 _want=$2
    shift 2
    _mx=$bdir/launcher/mpiexec
    if [ ! -x "$_mx" ]; then
        skip_case "$_name" "launcher/mpiexec not built"
        return
    fi
    _t0=$(date +%s)
    timeout -k 5 "$T_TIMEOUT" "$_mx" "$@" >"$out.stdout" 2>"$out.stderr" </dev/null
    rc=$?
    dt=$(($(date +%s) - _t0))
    [ $rc -eq 0 ] && grep -qxF "$_want" "$out.stdout"
    assert_last "$_name (${dt}s)" "$_name: rc $rc (mpiexec $*)"
}
