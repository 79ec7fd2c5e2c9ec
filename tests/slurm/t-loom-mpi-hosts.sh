#!/bin/sh
# t-loom-mpi-hosts.sh - Loom's MPI across the four nodes of a network-namespace cluster
# (cluster.sh -n 4: own IP, hostname, IPC and /dev/shm each) started by other MPIs'
# launchers with a host list, the way users reach their hosts with ssh: Open MPI's
# mpirun (PMIx served by an orted on every node) and MPICH's mpiexec.hydra (PMI-2
# through PMI_FD from a hydra_pmi_proxy on every node). Slurm only provides the
# namespaces here: no srun is involved.
#
# Usage: t-loom-mpi-hosts.sh [BUILDDIR]     (environment: see lib.sh)
# Cases: hello, ring and coll_basic at 8 ranks (2 per node) and 16 (4 per node) under
#   mpirun --host loom1:K,...,loom4:K --mca plm_rsh_agent AGENT, under the same with
#   -x LOOM_MPI_PMIX_COLLECT=0 (direct modex: a card of a rank on another node is fetched
#   from that node's orted), and under mpiexec.hydra -hosts loom1:K,... -launcher ssh
#   -launcher-exec AGENT. A run passes when it exits 0, prints "No Errors" once (8
#   singletons print it 8 times: what Loom's MPI did under mpirun before issue 25),
#   every rank 0..N-1 says (LOOM_MPI_DEBUG=1) that K ranks share its node and N its
#   machine (one job, its ranks on 4 nodes, shared memory inside a node, TCP between),
#   and rank 0 names the interface (PMIx, PMI-2) and a node map from the launcher.
# Notes:
#   - AGENT (written into the test's directory) is ssh-like: it drops the options before
#     the host (hydra passes -x), and runs the remaining words joined by a shell on the
#     host through netns-exec.sh, as sshd would (both launchers quote their arguments
#     for a remote shell).
#   - The launchers run on loom1 (netns-exec.sh loom1 ...), as on a login node: every
#     node name resolves there from the cluster's /etc/hosts. In the root namespace the
#     names are not in /etc/hosts, mpirun asks DNS for them, and one lookup in a few
#     dozen waited 5 s for the resolver's timeout.
#   - Open MPI's session directory is in the test's directory (orte_tmpdir_base).
# Each PASS line gives the run's launch-to-exit time (information, not an assertion).
me=t-loom-mpi-hosts
. "$(dirname "$0")/lib.sh"
for p in hello ring coll_basic; do
    [ -x "$bdir/mpi/$p" ] || {
        echo "FAIL: $me: $bdir/mpi/$p not built (make -C mpi check builds the tests)"
        exit 1
    }
done
command -v nsenter >/dev/null 2>&1 || { echo "SKIP: $me: nsenter not installed"; exit 77; }
have_ompi=0
command -v mpirun.openmpi >/dev/null 2>&1 && have_ompi=1
have_hydra=0
command -v mpiexec.hydra >/dev/null 2>&1 && have_hydra=1
[ $have_ompi -eq 1 ] || [ $have_hydra -eq 1 ] || {
    echo "SKIP: $me: neither mpirun.openmpi (openmpi-bin) nor mpiexec.hydra (mpich) installed"
    exit 77
}
# variables of an outer launch would be signs of another job to libmpi
for v in $(env | sed -n 's/^\(\(PMIX_\|PMI_\|OMPI_\|LOOM_MPI_\)[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
start_cluster -n 4 ${LOOM_SLURM_SUBNET:+-s "$LOOM_SLURM_SUBNET"}
export LOOM_NETNS_CLUSTER=$cdir/c

agent=$cdir/netns-ssh.sh
cat >"$agent" <<EOF
#!/bin/sh
# ssh-like agent of $me: [OPTIONS] HOST WORDS...; the words are run by sh on HOST
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
exec "$here/netns-exec.sh" "\$host" sh -c "\$*"
EOF
chmod 0755 "$agent"

# run_on1 ARGS...: ARGS on loom1, bounded; sets rc, dt, hung
run_on1() {
    _t0=$(date +%s%N)
    timeout -k 5 "$T_TIMEOUT" "$here/netns-exec.sh" loom1 "$@" >"$out.stdout" 2>"$out.stderr" \
        </dev/null
    rc=$?
    _t1=$(date +%s%N)
    dt=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    hung=0
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && hung=1
}

# one_job NAME N IFACE: the last run was one job of N ranks, N/4 on each node, wired up
# through IFACE (see the header)
one_job() {
    _name=$1 _n=$2 _if=$3
    _k=$((_n / 4))
    _want=$(seq 0 $((_n - 1)) | paste -sd' ' -)
    _got=$(sed -n "s/^loom-mpi: rank \([0-9]*\): $_k rank(s) on this node share [0-9]* CPU(s), $_n rank(s) on this machine.*/\1/p" \
        "$out.stderr" | sort -n | paste -sd' ' -)
    _noerr=$(grep -cx 'No Errors' "$out.stdout")
    _ifl="loom-mpi: rank 0 of $_n: process manager interface $_if, node map from the process manager"
    if [ $rc -eq 0 ] && [ "$_noerr" = 1 ] && [ "$_got" = "$_want" ] &&
        grep -qxF "$_ifl" "$out.stderr"; then
        echo "PASS: $_name (${dt}s)"
        npass=$((npass + 1))
        return 0
    fi
    if [ $hung -eq 1 ]; then
        _why="timed out after ${T_TIMEOUT}s"
    elif [ $rc -ne 0 ]; then
        _why="exit code $rc"
    elif [ "$_noerr" != 1 ] || [ "$_got" != "$_want" ]; then
        _why="'No Errors' $_noerr times; ranks with $_k on their node and $_n on the machine: '$_got'"
    else
        _why="no line '$_ifl'"
    fi
    echo "FAIL: $_name: $_why"
    show_output
    nfail=$((nfail + 1))
    return 1
}

hosts() { echo "loom1:$1,loom2:$1,loom3:$1,loom4:$1"; }

if [ $have_ompi -eq 1 ]; then
    ompi="mpirun.openmpi --oversubscribe --mca plm_rsh_agent $agent --mca orte_tmpdir_base $cdir"
    [ "$(id -u)" -eq 0 ] && ompi="$ompi --allow-run-as-root"
    for n in 8 16; do
        for p in hello ring coll_basic; do
            # shellcheck disable=SC2086
            run_on1 $ompi --host "$(hosts $((n / 4)))" -x LOOM_MPI_DEBUG=1 -n $n "$bdir/mpi/$p"
            one_job "Open MPI mpirun, $p, $n ranks on 4 hosts" $n PMIx
        done
    done
    for p in hello coll_basic; do
        # shellcheck disable=SC2086
        run_on1 $ompi --host "$(hosts 4)" -x LOOM_MPI_DEBUG=1 -x LOOM_MPI_PMIX_COLLECT=0 \
            -n 16 "$bdir/mpi/$p"
        one_job "Open MPI mpirun, $p, 16 ranks on 4 hosts, LOOM_MPI_PMIX_COLLECT=0" 16 PMIx
    done
else
    skip_case "Open MPI mpirun across hosts" "mpirun.openmpi not installed (openmpi-bin)"
fi

if [ $have_hydra -eq 1 ]; then
    for n in 8 16; do
        for p in hello ring coll_basic; do
            run_on1 mpiexec.hydra -hosts "$(hosts $((n / 4)))" -launcher ssh \
                -launcher-exec "$agent" -genv LOOM_MPI_DEBUG 1 -n $n "$bdir/mpi/$p"
            one_job "MPICH mpiexec.hydra, $p, $n ranks on 4 hosts" $n PMI-2
        done
    done
else
    skip_case "MPICH mpiexec.hydra across hosts" "mpiexec.hydra not installed (mpich)"
fi

finish
