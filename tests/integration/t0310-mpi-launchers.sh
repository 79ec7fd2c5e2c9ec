#!/bin/bash
# t0310-mpi-launchers.sh - Loom's MPI started by the launchers a site has, on this
# machine (no Slurm): Open MPI's mpirun (the PMIx client path, with and without a
# collecting fence), MPICH's mpiexec.hydra (PMI-2 through PMI_FD) and Loom's mpiexec;
# and the refusals: a process that sees it is one task of several but has no server it
# can reach fails MPI_Init with one line naming what it saw and exits 1.
#
# A run of N ranks counts as one job when it exits 0, prints "No Errors" once (N
# singletons print it N times), every rank 0..N-1 says "N rank(s) on this node" and
# rank 0 names the interface it wired up through (LOOM_MPI_DEBUG=1).  Before issue 25,
# hello under mpirun -n 4 ran 4 jobs of size 1, each printing "No Errors", with no
# warning, and every refusal case below ran as a singleton and exited 0.
# Cases: mpirun -n 1/4/16 hello, ring, coll_basic; mpirun -x LOOM_MPI_PMIX_COLLECT=0;
# mpirun -x PMIX_MCA_gds=hash (a client without the collected data);
# mpiexec.hydra -n 4/16; Loom's mpiexec -n 4; the Open MPI environment without PMIx,
# PMI_SIZE without PMI_FD, LOOM_MPI_PMI=bogus|pmi2|pmix with nothing to match; every
# PMIX_SERVER_URI* that mpirun sets overwritten with garbage; a PMIx "server" (a perl
# listener) that accepts and never answers, with LOOM_MPI_PMI_TIMEOUT=3: libpmix gives
# up after 3 s (libmpi sets its handshake wait), and when the user's
# PMIX_MCA_ptl_base_handshake_wait_time keeps it waiting, libmpi's own watch ends the
# process 5 s later; a plain run and LOOM_MPI_PMI=singleton beside
# OMPI_COMM_WORLD_SIZE=4 run as singletons.
# The launchers are skipped case by case when not installed (Debian: openmpi-bin,
# mpich); the test skips when the MPI library's test programs were not built.
. "$(dirname "$0")/lib.sh"

mpibin=$LOOM_BUILDDIR/mpi
for p in hello ring coll_basic; do
    [ -x "$mpibin/$p" ] || skip "the MPI library's test programs were not built ($mpibin/$p)"
done
hello=$mpibin/hello

# an outer Slurm allocation would make mpirun and hydra launch through srun, and its
# variables are signs of a multi-task launch to libmpi
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
# variables of an outer launch (this suite run by mpirun, say) would change the cases
for v in $(env | sed -n 's/^\(\(PMIX_\|PMI_\|OMPI_\|LOOM_MPI_\)[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done

# one_job N IFACE WHAT: the last run was one job of N ranks wired up through IFACE
# (PMIx, PMI-2, "none (singleton)"; see the header)
one_job() {
    local n=$1 iface=$2 what=$3 want got
    assert_rc 0 "$what"
    assert_eq "$(grep -cx 'No Errors' "$out")" 1 "$what: 'No Errors' printed once"
    want=$(seq 0 $((n - 1)) | paste -sd' ')
    got=$(sed -n "s/^loom-mpi: rank \([0-9]*\): $n rank(s) on this node share .*/\1/p" "$err" |
        sort -n | paste -sd' ')
    assert_eq "$got" "$want" "$what: the ranks that see $n rank(s) on this node"
    assert_grep -x "loom-mpi: rank 0 of $n: process manager interface $iface, node map from the process manager" \
        "$err" "$what: rank 0 wired up through $iface"
}

# refused WANT WHAT: the last run failed (exit 1, not hung) and printed exactly WANT
# (one whole line) on stderr
refused() {
    assert_rc 1 "$2"
    assert_grep -x "$1" "$err" "$2: the message"
    assert_eq "$(wc -l <"$err")" 1 "$2: lines on stderr"
    assert_no_grep -x 'No Errors' "$out" "$2: did not run"
}

# refused_re ERE WHAT: like refused, the line matching ERE (grep -E)
refused_re() {
    assert_rc 1 "$2"
    assert_grep -E "$1" "$err" "$2: the message"
    assert_eq "$(wc -l <"$err")" 1 "$2: lines on stderr"
    assert_no_grep -x 'No Errors' "$out" "$2: did not run"
}

# ---- Open MPI's mpirun: the PMIx client path --------------------------------------
if command -v mpirun.openmpi >/dev/null 2>&1; then
    # its session directory (PMIx rendezvous and data store) in our temporary directory
    ompi=(mpirun.openmpi --oversubscribe --mca orte_tmpdir_base "$TEST_TMP")
    [ "$(id -u)" -eq 0 ] && ompi+=(--allow-run-as-root)
    for n in 1 4 16; do
        for p in hello ring coll_basic; do
            [ $n -eq 1 ] && [ $p != hello ] && continue
            run_cmd -t 120 "${ompi[@]}" -x LOOM_MPI_DEBUG=1 -n $n "$mpibin/$p"
            one_job $n PMIx "mpirun -n $n $p"
        done
    done
    for n in 4 16; do
        run_cmd -t 120 "${ompi[@]}" -x LOOM_MPI_DEBUG=1 -x LOOM_MPI_PMIX_COLLECT=0 -n $n "$hello"
        one_job $n PMIx "mpirun -x LOOM_MPI_PMIX_COLLECT=0 -n $n hello (direct modex)"
    done
    run_cmd -t 120 "${ompi[@]}" -x LOOM_MPI_DEBUG=1 -x LOOM_MPI_PMIX_COLLECT=0 -n 16 \
        "$mpibin/coll_basic"
    one_job 16 PMIx "mpirun -x LOOM_MPI_PMIX_COLLECT=0 -n 16 coll_basic (direct modex)"
    # a client that keeps no copy of the collected data (PMIX_MCA_gds=hash, a common site
    # setting): an optional get misses a remote key even after a collecting fence
    run_cmd -t 120 "${ompi[@]}" -x LOOM_MPI_DEBUG=1 -x PMIX_MCA_gds=hash -n 8 "$hello"
    one_job 8 PMIx "mpirun -x PMIX_MCA_gds=hash -n 8 hello (collecting fence, hash store)"

    # every PMIX_SERVER_URI* that mpirun hands its ranks, overwritten with garbage
    run_cmd -t 30 "${ompi[@]}" -n 1 env
    uris=$(sed -n 's/^\(PMIX_SERVER_URI[0-9]*\)=.*/\1/p' "$out" | sort)
    if [ -z "$uris" ]; then
        fail "mpirun -n 1 env: no PMIX_SERVER_URI* in a rank's environment"
        show_output
    else
        say "mpirun sets: $(echo $uris)"
        garbage=()
        for u in $uris; do garbage+=("$u=garbage"); done
        # the variable the message names: the first of libmpi's order that mpirun sets
        first=
        for u in PMIX_SERVER_URI41 PMIX_SERVER_URI4 PMIX_SERVER_URI3 PMIX_SERVER_URI21 \
            PMIX_SERVER_URI2 PMIX_SERVER_URI; do
            grep -qx "$u" <<<"$uris" && { first=$u; break; }
        done
        run_cmd -t 60 "${ompi[@]}" -n 2 env "${garbage[@]}" "$hello"
        assert_failed_not_hung "mpirun -n 2 with every PMIX_SERVER_URI* garbage"
        # mpirun may kill rank 1 before it gets to say anything; every line said is this
        re="^loom-mpi: MPI_Init: PMIx launch \(PMIX_NAMESPACE=[0-9]+, PMIX_RANK=[01], $first\),"
        re+=" but PMIx is unusable: PMIx_Init: [A-Z_-]+; start the program with a launcher"
        re+=" whose PMIx server it can reach \(srun --mpi=pmix, Open MPI's mpirun\) or with"
        re+=" srun --mpi=loom$"
        assert_grep -E "$re" "$err" "garbage PMIX_SERVER_URI*: the message"
        assert_eq "$(grep '^loom-mpi:' "$err" | grep -cvE "$re")" 0 \
            "garbage PMIX_SERVER_URI*: no other line from libmpi"
        assert_no_grep -x 'No Errors' "$out" "garbage PMIX_SERVER_URI*: did not run"
    fi
else
    say "no mpirun.openmpi (package openmpi-bin): the mpirun cases are not run"
fi

# ---- MPICH's mpiexec.hydra: PMI-2 through PMI_FD -----------------------------------
if command -v mpiexec.hydra >/dev/null 2>&1; then
    hydra=(mpiexec.hydra -launcher fork)
    run_cmd -t 30 "${hydra[@]}" -n 1 env
    assert_grep -E -x 'PMI_FD=[0-9]+' "$out" "mpiexec.hydra gives its ranks PMI_FD"
    for n in 4 16; do
        for p in hello ring coll_basic; do
            run_cmd -t 120 "${hydra[@]}" -genv LOOM_MPI_DEBUG 1 -n $n "$mpibin/$p"
            one_job $n PMI-2 "mpiexec.hydra -n $n $p"
        done
    done
else
    say "no mpiexec.hydra (package mpich): the hydra cases are not run"
fi

# ---- Loom's own mpiexec, for comparison ---------------------------------------------
if [ -x "$LOOM_MPIEXEC" ]; then
    run_job -genv LOOM_MPI_DEBUG 1 -n 4 "$hello"
    one_job 4 PMI-2 "Loom's mpiexec -n 4 hello"
fi

# ---- refusals: a task of several with no server ------------------------------------
hint="or set LOOM_MPI_PMI=singleton to run every task alone"
run_cmd -t 30 env OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=2 "$hello"
refused "loom-mpi: MPI_Init: process 2 of 4 started by Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=4) found no PMIx server to wire up with (no PMIX_SERVER_URI* in its environment) and would run alone as rank 0 of 1; start it with an mpirun that serves PMIx (Open MPI 2 or later, prterun) or with srun --mpi=pmix, $hint" \
    "Open MPI's variables without PMIx"

run_cmd -t 30 env PMI_SIZE=4 PMI_RANK=1 "$hello"
refused "loom-mpi: MPI_Init: process 1 of 4 of a PMI launch (PMI_SIZE=4) has neither PMI_FD nor PMI_PORT and would run alone as rank 0 of 1; start it with mpiexec or srun --mpi=loom (or --mpi=pmi2), $hint" \
    "PMI_SIZE=4 without PMI_FD"

run_cmd -t 30 env LOOM_MPI_PMI=bogus "$hello"
refused "loom-mpi: MPI_Init: LOOM_MPI_PMI=bogus: expected auto, pmi2, pmix or singleton" \
    "LOOM_MPI_PMI=bogus"

run_cmd -t 30 env LOOM_MPI_PMI=pmi2 "$hello"
refused "loom-mpi: MPI_Init: LOOM_MPI_PMI=pmi2 but neither PMI_FD nor PMI_PORT is set: this process was not started by a PMI-2 launcher" \
    "LOOM_MPI_PMI=pmi2 without PMI_FD"

run_cmd -t 30 env LOOM_MPI_PMI=pmix "$hello"
refused "loom-mpi: MPI_Init: LOOM_MPI_PMI=pmix but neither PMIX_NAMESPACE nor a PMIX_SERVER_URI* variable is set: this process was not started by a PMIx launcher" \
    "LOOM_MPI_PMI=pmix without a PMIx launch"

# ---- a PMIx server that accepts and never answers ----------------------------------
if command -v perl >/dev/null 2>&1; then
    port_file=$TEST_TMP/listener.port
    log=$TEST_TMP/listener.log
    # bounded by timeout, ended by pid below; logs each connection it takes
    LOOM_TEST_MARKER=$LOOM_TEST_MARKER timeout 120 perl -MIO::Socket::INET -e '
        my ($pf, $log) = @ARGV;
        my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0,
            Listen => 16, ReuseAddr => 1) or die "listen: $!\n";
        open(my $f, ">", "$pf.tmp") or die "$pf.tmp: $!\n";
        print $f $s->sockport, "\n";
        close $f;
        rename("$pf.tmp", $pf) or die "rename: $!\n";
        open(my $l, ">>", $log) or die "$log: $!\n";
        $l->autoflush(1);
        my @keep;
        while (my $c = $s->accept) { push @keep, $c; print $l "accepted\n"; }
    ' "$port_file" "$log" </dev/null 2>"$TEST_TMP/listener.err" &
    lpid=$!
    for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
    port=$(cat "$port_file" 2>/dev/null)
    if [ -z "$port" ]; then
        fail "the listener did not start: $(cat "$TEST_TMP/listener.err")"
    else
        silent=(env PMIX_NAMESPACE=loomtest PMIX_RANK=0 LOOM_MPI_PMI_TIMEOUT=3
            "PMIX_SERVER_URI41=loomtest-server.0;tcp4://127.0.0.1:$port"
            "PMIX_SERVER_URI4=loomtest-server.0;tcp4://127.0.0.1:$port")
        # libpmix's handshake wait, set by libmpi to LOOM_MPI_PMI_TIMEOUT
        run_cmd -t 30 "${silent[@]}" "$hello"
        what="a PMIx server that never answers, LOOM_MPI_PMI_TIMEOUT=3"
        assert_failed_not_hung "$what"
        re="^loom-mpi: MPI_Init: PMIx launch \(PMIX_NAMESPACE=loomtest, PMIX_RANK=0,"
        re+=" PMIX_SERVER_URI41\), but PMIx is unusable: PMIx_Init had no answer from the"
        re+=" server in 3 s \(LOOM_MPI_PMI_TIMEOUT=3; libpmix: [A-Z_-]+\); is"
        re+=" PMIX_SERVER_URI\* right\?; start the program with a launcher whose PMIx"
        re+=" server it can reach \(srun --mpi=pmix, Open MPI's mpirun\) or with srun"
        re+=" --mpi=loom$"
        refused_re "$re" "$what"
        assert_eq "$(grep -c accepted "$log")" 1 "$what: the client reached the server"
        # the user's own handshake wait (100 s) keeps libpmix waiting: libmpi's watch
        # ends the process 5 s after LOOM_MPI_PMI_TIMEOUT
        run_cmd -t 30 "${silent[@]}" PMIX_MCA_ptl_base_handshake_wait_time=100 "$hello"
        what="the same, PMIX_MCA_ptl_base_handshake_wait_time=100"
        refused "loom-mpi: MPI_Init: PMIx launch (PMIX_NAMESPACE=loomtest, PMIX_RANK=0, PMIX_SERVER_URI41), but PMIx_Init had no answer from the server in 8 s (LOOM_MPI_PMI_TIMEOUT=3, and 5 s more for libpmix to give up); is PMIX_SERVER_URI* right?" \
            "$what"
        assert_eq "$(grep -c accepted "$log")" 2 "$what: the client reached the server"
    fi
    kill "$lpid" 2>/dev/null
    wait "$lpid" 2>/dev/null
else
    say "no perl: the silent PMIx server case is not run"
fi

# ---- singletons stay possible --------------------------------------------------------
run_cmd -t 30 env LOOM_MPI_DEBUG=1 "$hello"
one_job 1 "none (singleton)" "a plain hello (singleton)"
run_cmd -t 30 env LOOM_MPI_DEBUG=1 LOOM_MPI_PMI=singleton OMPI_COMM_WORLD_SIZE=4 \
    OMPI_COMM_WORLD_RANK=2 "$hello"
one_job 1 "none (singleton)" "LOOM_MPI_PMI=singleton beside OMPI_COMM_WORLD_SIZE=4"

finish
