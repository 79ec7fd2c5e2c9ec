#!/bin/sh
# t-loom-mpiexec-hosts.sh - multi-host mpiexec across real (virtual) machines: the four
# nodes of a network-namespace cluster (cluster.sh -n 4: own IP, hostname, IPC and
# /dev/shm each), reached through netns-exec.sh as mpiexec's -launcher-exec, the way
# hydra users reach their hosts with ssh. Slurm only provides the namespaces here: no
# srun is involved; every proxy connects back to mpiexec over the bridge.
#
# Usage: t-loom-mpiexec-hosts.sh [BUILDDIR]     (environment: see lib.sh)
# Cases: ranks land on 4 distinct hosts (-ppn 2 blocks); PMI-2 and PMI-1 kvstests at 8 and
# 64 ranks with the mapping of 4 nodes; a PMI abort on one node ends the job on all with
# the rank named; a rank exit code; Debian MPICH hello across the hosts (with the
# finalize shim, see lib.sh); PMIx served by every proxy: our pmix_client (fence with
# data, direct modex, abort naming the rank) and Debian Open MPI hello at 8 and 64 ranks. Prints launch-to-exit times of pmi2_kvstest at 4x16 ranks
# against -n 64 on this host alone (information, not assertions).
me=t-loom-mpiexec-hosts
. "$(dirname "$0")/lib.sh"
mpiexec=$bdir/launcher/mpiexec
[ -x "$mpiexec" ] || { echo "SKIP: $me: $mpiexec not built (configure --with-pm=loom)"; exit 77; }
command -v nsenter >/dev/null 2>&1 || { echo "SKIP: $me: nsenter not installed"; exit 77; }
start_cluster -n 4 ${LOOM_SLURM_SUBNET:+-s "$LOOM_SLURM_SUBNET"}
export LOOM_NETNS_CLUSTER=$cdir/c
HOSTS="-hosts loom1,loom2,loom3,loom4 -launcher ssh -launcher-exec $here/netns-exec.sh"

# run_mpx ARGS...: mpiexec bounded; sets rc, dt, hung
run_mpx() {
    _t0=$(date +%s%N)
    # shellcheck disable=SC2086
    timeout -k 5 "$T_TIMEOUT" "$mpiexec" $HOSTS "$@" >"$out.stdout" 2>"$out.stderr" </dev/null
    rc=$?
    _t1=$(date +%s%N)
    dt=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    hung=0
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && hung=1
}
pass() { echo "PASS: $1 (${dt}s)"; npass=$((npass + 1)); }
bad() {
    echo "FAIL: $1 (mpiexec ... $2; rc $rc${3:+, $3})"
    show_output
    nfail=$((nfail + 1))
}

# ranks really run on four machines, two per machine
run_mpx -ppn 2 -n 8 sh -c 'echo "$PMI_RANK $(hostname) $MPI_LOCALRANKID"'
got=$(sort -n "$out.stdout" | tr '\n' ' ')
want="0 loom1 0 1 loom1 1 2 loom2 0 3 loom2 1 4 loom3 0 5 loom3 1 6 loom4 0 7 loom4 1 "
if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then pass "8 ranks on loom1..loom4, 2 each"
else bad "8 ranks on 4 hosts" "-ppn 2 -n 8 sh" "got '$got'"; fi

for n in 8 64; do
    ppn=$((n / 4))
    for p in pmi2_kvstest_loom pmi1_kvstest; do
        LOOM_PMI_LOGLEVEL=debug run_mpx -ppn $ppn -n $n "$prog/$p"
        name=${p%_loom}
        if [ $rc -eq 0 ] && grep -Eq "kvstest: $n ranks, [0-9]+ rounds OK" "$out.stdout" &&
            grep -qF "mapping (vector,(0,4,$ppn))" "$out.stderr"; then
            pass "$name across 4 hosts, $n ranks, mapping (vector,(0,4,$ppn))"
        else
            bad "$name across 4 hosts at $n ranks" "-ppn $ppn -n $n $p"
        fi
    done
done

# failures cross the hosts: an abort, an exit code
run_mpx -n 8 "$prog/pmi_misbehave" abort
if [ $hung -eq 0 ] && [ $rc -ne 0 ] && grep -Eq 'aborted: rank 1([^0-9]|$)' "$out.stderr"; then
    pass "PMI abort of rank 1 (host loom2) ends the job on 4 hosts, rc $rc"
else bad "PMI abort across hosts" "-n 8 pmi_misbehave abort"; fi
run_mpx -n 8 sh -c 'if [ "$PMI_RANK" = 6 ]; then exit 5; fi; sleep 30'
if [ $hung -eq 0 ] && [ $rc -eq 5 ] && grep -q 'rank 6 on host loom3 exited with code 5' "$out.stderr"; then
    pass "rank 6 on loom3 exits 5: mpiexec exits 5, the others are killed"
else bad "exit code across hosts" "-n 8 sh (rank 6 exits 5)"; fi

# Debian MPICH across the hosts (PMI-1 wire-up through our proxies, UCX over the bridge)
if [ -x "$prog/mpich_hello" ] && build_shim; then
    run_mpx -ppn 2 -n 8 -genv LD_PRELOAD "$shim" "$prog/mpich_hello"
    if [ $rc -eq 0 ] && grep -qx "hello: 8 ranks OK" "$out.stdout"; then
        pass "Debian MPICH hello, 8 ranks on 4 hosts"
    else bad "Debian MPICH hello across hosts" "-ppn 2 -n 8 mpich_hello"; fi
else
    skip_case "Debian MPICH hello across hosts" "mpich_hello not built or no C compiler"
fi

# PMIx across the hosts: every proxy serves PMIx to its ranks, fences and direct-modex
# requests cross the hosts through mpiexec
if [ -x "$prog/pmix_client" ]; then
    for m in data dmodex; do
        run_mpx -ppn 2 -n 8 "$prog/pmix_client" -m $m -v 200
        if [ $rc -eq 0 ] && grep -qx "pmix_client: 8 ranks, 3 rounds OK" "$out.stdout"; then
            pass "PMIx client ($m) across 4 hosts, 8 ranks"
        else bad "PMIx client ($m) across hosts" "-ppn 2 -n 8 pmix_client -m $m"; fi
    done
    run_mpx -ppn 2 -n 8 "$prog/pmix_client" -m abort
    if [ $hung -eq 0 ] && [ $rc -ne 0 ] &&
        grep -q 'rank 1 called PMIx_Abort (status 7)' "$out.stderr"; then
        pass "PMIx_Abort of rank 1 (host loom1) ends the job on 4 hosts, rc $rc"
    else bad "PMIx_Abort across hosts" "-ppn 2 -n 8 pmix_client -m abort"; fi
else
    skip_case "PMIx client across hosts" "pmix_client not built (configure found no libpmix)"
fi
if [ -x "$prog/ompi_hello" ]; then
    for n in 8 64; do
        run_mpx -ppn $((n / 4)) -n $n "$prog/ompi_hello"
        if [ $rc -eq 0 ] && grep -qx "hello: $n ranks OK" "$out.stdout"; then
            pass "Debian Open MPI hello (PMIx), $n ranks on 4 hosts"
        else bad "Debian Open MPI hello across hosts" "-ppn $((n / 4)) -n $n ompi_hello"; fi
    done
else
    skip_case "Debian Open MPI hello across hosts" "ompi_hello not built (no mpicc.openmpi)"
fi

# launch-to-exit: 4 hosts x 16 ranks against 64 ranks on this host (medians of 3)
med() { sort -n | sed -n 2p; }
t4=$(for i in 1 2 3; do run_mpx -ppn 16 -n 64 "$prog/pmi2_kvstest_loom"; echo "$dt"; done | med)
t1=$(for i in 1 2 3; do
    _t0=$(date +%s%N)
    timeout -k 5 "$T_TIMEOUT" "$mpiexec" -launcher fork -n 64 "$prog/pmi2_kvstest_loom" \
        >/dev/null 2>&1 </dev/null
    _t1=$(date +%s%N)
    awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.2f\n", (b - a) / 1e9 }'
done | med)
echo "INFO: pmi2_kvstest launch-to-exit, medians of 3: 4 hosts x 16 ranks ${t4}s," \
    "one host -n 64 ${t1}s"
finish
