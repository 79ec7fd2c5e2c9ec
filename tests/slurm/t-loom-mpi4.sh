#!/bin/sh
# t-loom-mpi4.sh - Loom's own MPI across four network-namespace nodes under
# `srun --mpi=loom -N4` and under `mpiexec -hosts`: shared memory inside a node, the TCP
# netmod between nodes.
#
# Usage: t-loom-mpi4.sh [BUILDDIR]      (environment: see lib.sh)
# Cases (the first four each a run of tests/mpi/runtests with -launcher srun or
# mpiexec, so every test program must print "No Errors" and exit 0):
#   1/node   every program of tests/mpi/testlist once per distinct line (the list's rank
#            count is replaced by 4), except coll_shm_barrier (it checks the
#            barrier with a shared-memory counter of its own, so it needs one host) and
#            the LOOM_SHM_LMT variants (shm-only: the same run when all peers are remote);
#   16/node  64 ranks on the 2-core test machine: a representative subset (below; the
#            whole list at 64 oversubscribed ranks takes too long for the suite):
#            point-to-point on every path, ordering/wildcards across transports,
#            collectives (node-aware ones use shm inside a node, TCP between leaders);
#   5 ranks  srun -N4 -n5 (nodes of 2, 1, 1, 1 ranks): the collectives and ordering
#            tests on nodes of unequal size;
#   MPI-IO   srun -N4 --ntasks-per-node=4: io_view at 16 ranks (a strided view written
#            collectively and read back byte for byte); every case puts the MPI-IO
#            tests' files in LOOM_MPI_TEST_IODIR, a directory all nodes share;
#   hosts    the testlist (each line's own rank count) under mpiexec -hosts loom1,...,loom4
#            -launcher-exec netns-exec.sh: no Slurm on the path, ranks round-robin over
#            the hosts; the lines asserting one host's facts are left out (below);
#   sndbuf   2 nodes: both ends of the TCP connection say "another host" and use the
#            link send buffer (LOOM_MPI_DEBUG=1);
#   killed   a rank whose TCP connections die mid-transfer: srun must end within the
#            timeout and its output must say "rank 0: connection to rank 1 lost".
#   silent   a link that goes silent (no reset): once rank 0 (loom1) has a byte from
#            rank 1 (loom2), a blackhole route in loom2's namespace drops everything
#            loom2 sends to loom1; rank 1 sleeps outside MPI, rank 0 waits for a second
#            byte.  With LOOM_MPI_TCP_TIMEOUT=3 rank 0 must give up on its own
#            ("connection to rank 1 lost (Connection timed out)") and srun end well
#            before its timeout; without the timeout it waited until killed.
#   silent connect  the same before the two ranks ever talked: rank 0's first send must
#            fail its connect the same way.
# Skips (77) like the other t-loom-*.sh (no root, Slurm, plugin, or network namespaces).
me=t-loom-mpi4
. "$(dirname "$0")/lib.sh"
need_plugin
runtests=$here/../mpi/runtests
list=$here/../mpi/testlist
[ -x "$bdir/mpi/tcp_mixed" ] || {
    echo "FAIL: $me: $bdir/mpi/tcp_mixed not built (make -C mpi check builds the tests)"
    exit 1
}
start_cluster -n 4
# MPI-IO test programs (io_*, f_io) put their files in LOOM_MPI_TEST_IODIR: one
# directory every node sees (a node's TMPDIR may be its own TmpFS), so that a file
# written by ranks on four nodes is read back whole
export LOOM_MPI_TEST_IODIR="$cdir/io"
mkdir -p "$LOOM_MPI_TEST_IODIR" && chmod 1777 "$LOOM_MPI_TEST_IODIR"

# runtests output -> case verdicts of lib.sh
run_list() { # NAME RUNTESTS_ARGS...
    _n=$1
    shift
    _t0=$(date +%s)
    LOOM_MPI_TESTS_TIMEOUT=${LOOM_MPI_TESTS_TIMEOUT:-90} \
        "$runtests" -bindir "$bdir/mpi" -srcdir "$here/../mpi" "$@" >"$out.rt" 2>&1
    _rc=$?
    _dt=$(($(date +%s) - _t0))
    _sum=$(tail -n 1 "$out.rt")
    if [ $_rc -eq 0 ] && grep -q ' passed, 0 failed$' "$out.rt"; then
        echo "PASS: $_n ($_sum, ${_dt}s)"
        npass=$((npass + 1))
    else
        echo "FAIL: $_n ($_sum, ${_dt}s)"
        grep -A12 '^FAIL' "$out.rt" | sed 's/^/  /' | head -n 60
        nfail=$((nfail + 1))
    fi
}

# shm-only variants (LOOM_SHM_LMT: how shm moves large messages) are the same run
# when every peer is on another node: keep one of each program there
awk '!/^#/ && NF && $1 != "coll_shm_barrier" && !/LOOM_SHM_LMT/' "$list" >"$cdir/list1"
run_list "testlist, srun --mpi=$mpi -N4, 1 rank per node" \
    -launcher "srun --mpi=$mpi -N4 --ntasks-per-node=1" -list "$cdir/list1"

cat >"$cdir/list16" <<'EOF'
hello 64
ring 64
p2p_basic 64
pingpong 64
p2p_large 64 env=LOOM_P2P_LARGE_MIB=4
p2p_order 64
p2p_order 64 env=LOOM_MPI_SHM_CELLS=2 env=LOOM_MPI_SHM_CELL=256
coll_basic 64
p2p_mprobe 64
barrier_heavy 64
coll_nb 64
tcp_mixed 64
dt_sendrecv 64
comm_basic 64 timeout=180
coll_shm_reduce 64 timeout=180
EOF
run_list "testlist subset, srun --mpi=$mpi -N4, 16 ranks per node" \
    -launcher "srun --mpi=$mpi -N4 --ntasks-per-node=16" -list "$cdir/list16"

# Nodes of unequal size (2, 1, 1, 1 ranks): every rank must still pick the same
# collective algorithm (a lone rank has no shared-memory slot).  This hung.
cat >"$cdir/list5" <<'EOF'
coll_basic 5
coll_nb 5
coll_shm_reduce 5
barrier_heavy 5
p2p_order 5
tcp_mixed 5
EOF
run_list "collectives on unequal nodes, srun --mpi=$mpi -N4 -n5" \
    -launcher "srun --mpi=$mpi -N4 -n5" -list "$cdir/list5"

# MPI-IO across nodes at 16 ranks (4 per node, so an aggregator on every node): a
# strided view written collectively (two-phase, several cb_nodes, and independent
# writes) and read back byte for byte by other decompositions (io_view)
cat >"$cdir/listio" <<'EOF'
io_view 16 timeout=120
EOF
run_list "MPI-IO strided view, srun --mpi=$mpi -N4, 4 ranks per node" \
    -launcher "srun --mpi=$mpi -N4 --ntasks-per-node=4" -list "$cdir/listio"

# The same nodes without Slurm on the path: mpiexec with a host list, each proxy started
# in its node's namespaces by netns-exec.sh (hydra users' ssh), ranks dealt round-robin
# over the four hosts, so ranks 0 and 1 always talk over TCP and from 5 ranks on some
# share a node.  Every line keeps its own rank count and its expect=fail checks (a
# killed peer on another host); left out are the lines that assert one host's facts:
# shm-only ones (needs=shm), bindings on a fake topology, coll_shm_barrier, the
# loopback send buffer ("this host") and the loopback fallback of an unknown
# LOOM_MPI_TCP_IF (across hosts that run must fail, and does, naming the variable).
# The spawning programs (every dyn_spawn*, f_spawn) run here too: mpiexec runs each
# spawned job over the same four hosts through the same -launcher-exec, its ranks
# connecting back to their parents across the nodes.
awk "!/^#/ && NF && \$1 != \"coll_shm_barrier\" && !/needs=shm/ && !/LOOM_REPORT_BINDINGS/ &&
    !/this.host/ && !/nosuchif0/" "$list" >"$cdir/listh"
# The four nodes share this machine's CPUs: the library sees that (one kernel boot id)
# and does not spin long (before, barrier_heavy 8 took 17 s here with its spins on).
export LOOM_NETNS_CLUSTER="$cdir/c"
run_list "testlist, mpiexec -hosts loom1,...,loom4" \
    -launcher "$bdir/launcher/mpiexec -hosts loom1,loom2,loom3,loom4 -launcher ssh \
-launcher-exec $here/netns-exec.sh -n %N" -list "$cdir/listh"

# Across nodes the TCP send buffer is the one for a link, not the loopback one
# (mpi/tcp/conn.c: SNDBUF_DEFAULT vs SNDBUF_LOOPBACK; the loopback case is in testlist).
run_srun --mpi="$mpi" -N2 --ntasks-per-node=1 --export=ALL,LOOM_MPI_DEBUG=1 \
    "$bdir/mpi/pingpong"
[ $rc -eq 0 ] && grep -q 'No Errors' "$out.stdout" &&
    grep -q 'rank 0: TCP to rank 1 (another host): send buffer 131072' "$out.stderr" &&
    grep -q 'rank 1: TCP to rank 0 (another host): send buffer 131072' "$out.stderr"
assert_last "TCP between nodes: link send buffer on both ends (${dt}s)" \
    "TCP between nodes: rc $rc, no 'TCP to rank N (another host): send buffer 131072'"

# A peer whose connections die mid-transfer: one rank per node, so ranks 0 and 1 talk
# over TCP.  srun must end by itself, with the message.
run_srun --mpi="$mpi" -N4 --ntasks-per-node=1 "$bdir/mpi/tcp_peerdeath"
[ $hung -eq 0 ] && [ $rc -ne 0 ] &&
    grep -q 'rank 0: connection to rank 1 lost' "$out.stdout" "$out.stderr"
assert_last "killed peer across nodes ends the step (rc $rc, ${dt}s)" \
    "killed peer across nodes (rc $rc, hung $hung, ${dt}s)"

# A link that goes silent.  The route only touches traffic between the two nodes' own
# addresses (Slurm's goes to the bridge), and goes away with the namespace at the end.
. "$cdir/c/netns.env"
ip1=$NS_SUBNET.11
# TCP_PEERDEATH_MODE LABEL NODES: silence the link between node 1 and the last node once
# rank 0 says "ready" (one rank per node; the last rank is the peer that goes silent)
silent_case() {
    local nodes=$3 peer=$(($3 - 1))
    local ns2=loom${NS_TAG}n$nodes
    rm -f "$out.stdout"
    (
        export LOOM_MPI_TCP_TIMEOUT=3 TCP_PEERDEATH_MODE=$1
        run_srun --mpi="$mpi" -N"$nodes" --ntasks-per-node=1 "$bdir/mpi/tcp_peerdeath"
        echo "$rc $hung $dt" >"$cdir/silent.rc"
    ) &
    spid=$!
    i=0
    while [ $i -lt 300 ] && ! grep -q 'rank 0: ready' "$out.stdout" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    ip netns exec "$ns2" ip route add blackhole "$ip1/32"
    wait $spid
    ip netns exec "$ns2" ip route del blackhole "$ip1/32" 2>/dev/null
    read -r rc hung dt <"$cdir/silent.rc"
    [ $hung -eq 0 ] && [ $rc -ne 0 ] &&
        awk -v d="$dt" 'BEGIN { exit !(d < 30) }' &&
        grep -q "connection to rank $peer lost (Connection timed out)" "$out.stdout" \
            "$out.stderr"
    assert_last "$2 ends the step by the TCP timeout (rc $rc, ${dt}s)" \
        "$2 (rc $rc, hung $hung, ${dt}s)"
}
silent_case silent "silent link" 2
# MPI_Init connects the ranks its allreduce pairs; with 4 nodes, 0 and 3 are not a pair
silent_case silent_connect "silent link before the first connect" 4
finish
