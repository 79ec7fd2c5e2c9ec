# tests/slurm/loom_mpi_cases.sh - Loom-MPI programs under srun, shared by
# t-loom-mpi-pmix.sh (one node) and t-loom-mpi-pmix4.sh (four network-namespace nodes);
# sourced after lib.sh, never run.
#
# Contract: functions that add cases through lib.sh's counters and run_srun:
#   need_loom_mpi           the build's MPI test programs ($lmpi/hello, ring, coll_basic):
#                           built with `make -C BUILDDIR/mpi` if missing, else FAIL (1)
#   need_slurm_pmix         after start_cluster: skip (77) unless the cluster's srun lists
#                           Slurm's own PMIx plugin (mpi_pmix.so)
#   one_job NAME N PER_NODE EXPORTS PROG SRUN_ARGS...
#                           PROG (a name in $lmpi) must exit 0 with exactly one
#                           "No Errors" line, and be ONE job of N ranks: with
#                           LOOM_MPI_DEBUG=1 every rank prints its line "loom-mpi: rank
#                           R: K rank(s) on this node ...", so the step must show ranks 0
#                           to N-1 once each, all with K = PER_NODE; N singletons print
#                           "rank 0: 1 rank(s)" N times (and "No Errors" N times).  When
#                           PER_NODE < N some data must have crossed TCP between hosts
#                           (at least one "TCP to rank R (another host)" line).  EXPORTS:
#                           more NAME=value,... for --export (or "").
#   refused NAME            the srun just run (run_srun) must have ended by itself,
#                           non-zero, with every line of $cdir/want once, whole, on its
#                           stderr, and no "No Errors"
# Variables: $lmpi (BUILDDIR/mpi).

lmpi=$bdir/mpi

need_loom_mpi() {
    _missing=
    for _p in hello ring coll_basic; do
        [ -x "$lmpi/$_p" ] || _missing="$_missing $_p"
    done
    [ -z "$_missing" ] && return 0
    # shellcheck disable=SC2086
    make -C "$lmpi" $_missing >"$cdir/make-mpi.log" 2>&1 || {
        tail -n 20 "$cdir/make-mpi.log" | sed 's/^/  make: /'
        echo "FAIL: $me: cannot build$_missing in $lmpi (make -C mpi check builds them)"
        exit 1
    }
}

need_slurm_pmix() {
    timeout 30 srun --mpi=list >"$cdir/mpi-list" 2>&1
    grep -qx '[[:space:]]*pmix' "$cdir/mpi-list" && return 0
    echo "SKIP: $me: Slurm's PMIx plugin (mpi_pmix.so) is not installed:" \
        "srun --mpi=list has no pmix"
    exit 77
}

one_job() {
    _name=$1 _n=$2 _per=$3 _exp=$4 _p=$5
    shift 5
    run_srun "$@" --export="ALL,LOOM_MPI_DEBUG=1${_exp:+,$_exp}" "$lmpi/$_p"
    _ne=$(grep -cx 'No Errors' "$out.stdout")
    # ranks seen: lines, distinct ranks in 0..N-1, lines whose K is not PER_NODE
    _seen=$(awk -v n="$_n" -v per="$_per" '
        /^loom-mpi: rank [0-9]+: [0-9]+ rank\(s\) on this node share / {
            r = $3 + 0; k = $4 + 0; lines++
            if (r < n && !(r in s)) { s[r] = 1; distinct++ }
            if (k != per) badk++
        }
        END { printf "%d %d %d", lines, distinct, badk }' "$out.stderr")
    read -r _lines _distinct _badk <<EOF
$_seen
EOF
    _tcp=$(grep -c '^loom-mpi: rank [0-9]*: TCP to rank [0-9]* (another host)' "$out.stderr")
    _why=
    if [ $hung -eq 1 ]; then
        _why="timed out after ${T_TIMEOUT}s"
    elif [ $rc -ne 0 ]; then
        _why="exit code $rc"
    elif [ "$_ne" -ne 1 ]; then
        _why="$_ne 'No Errors' lines, expected 1 (one job)"
    elif [ "$_lines" -ne "$_n" ] || [ "$_distinct" -ne "$_n" ]; then
        _why="ranks seen: $_lines debug lines, $_distinct distinct ranks of 0..$((_n - 1)), expected $_n"
    elif [ "$_badk" -ne 0 ]; then
        _why="$_badk rank(s) do not see $_per rank(s) on their node"
    elif [ "$_per" -lt "$_n" ] && [ "$_tcp" -eq 0 ]; then
        _why="no rank connected over TCP to another host"
    fi
    if [ -n "$_why" ]; then
        echo "FAIL: $_name: $_why (srun $* --export=ALL,LOOM_MPI_DEBUG=1${_exp:+,$_exp} $_p)"
        show_output
        nfail=$((nfail + 1))
        return 1
    fi
    _tcpmsg=
    [ "$_per" -lt "$_n" ] && _tcpmsg=", $_tcp TCP sockets to other hosts"
    echo "PASS: $_name (one job: ranks 0-$((_n - 1)) once each, $_per per node$_tcpmsg; ${dt}s)"
    npass=$((npass + 1))
}

refused() {
    _name=$1
    _why=
    if [ $hung -eq 1 ]; then
        _why="the step did not end within ${T_TIMEOUT}s"
    elif [ $rc -eq 0 ]; then
        _why="srun exited 0, expected a refused start"
    elif grep -q 'No Errors' "$out.stdout"; then
        _why="a task ran anyway (No Errors on stdout)"
    else
        while IFS= read -r _l; do
            _c=$(grep -cxF -- "$_l" "$out.stderr")
            if [ "$_c" -ne 1 ]; then
                _why="this line is on srun's stderr $_c times, expected once: $_l"
                break
            fi
        done <"$cdir/want"
    fi
    if [ -n "$_why" ]; then
        echo "FAIL: $_name: $_why"
        show_output
        nfail=$((nfail + 1))
        return 1
    fi
    echo "PASS: $_name (rc $rc, ${dt}s: $(head -n 1 "$cdir/want" | cut -c1-110)...)"
    npass=$((npass + 1))
}
