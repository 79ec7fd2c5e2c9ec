#!/bin/bash
# t0155-idle-policy.sh - the MPI library counts the CPUs a node's ranks share (the
# union of their affinity masks) before it picks how waits idle: ranks bound to a core
# each are not oversubscribed (they spin), ranks pinned to one CPU or more ranks than
# CPUs are (they yield and sleep).  Checked through LOOM_MPI_DEBUG's line
#   loom-mpi: rank R: N rank(s) on this node share C CPU(s)[, M rank(s) on this machine]
#             [: oversubscribed]; rank 0: ...
# Before, a rank counted only its own mask: under -bind-to core (or Slurm's per-task
# binding) every rank saw 1 CPU for N ranks and slept in every wait (8 B messages
# between ranks computing 8-128 us took 46-56 us more each).
. "$(dirname "$0")/lib.sh"
need_mpiexec
[ "$LOOM_HAVE_HWLOC" = no ] && skip "built without hwloc (no -bind-to core)"
hello=$LOOM_BUILDDIR/mpi/hello
[ -x "$hello" ] || skip "the MPI library's test programs were not built ($hello)"
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || skip "needs 2 CPUs (this machine has $ncpu)"

# policy_lines NP PATTERN: how many ranks printed a policy line matching PATTERN
policy_lines() { grep -cE "^loom-mpi: rank [0-9]+: $1 rank\(s\) on this node share $2\$" "$err"; }

run_job -bind-to core -genv LOOM_MPI_DEBUG 1 -n "$ncpu" "$hello"
assert_rc 0 "-bind-to core -n $ncpu"
assert_eq "$(sed -n 's/^loom-mpi: rank [0-9]*: .*share \([0-9]*\) CPU.*/\1/p' "$err" | sort -u)" \
    "$ncpu" "ranks bound to a core each count the node's $ncpu CPUs"
assert_eq "$(policy_lines "$ncpu" "$ncpu CPU\(s\); rank 0: no node oversubscribed")" "$ncpu" \
    "-bind-to core -n $ncpu: not oversubscribed, on every rank"

run_cmd taskset -c 0 "$LOOM_MPIEXEC" -genv LOOM_MPI_DEBUG 1 -n 2 "$hello"
assert_rc 0 "taskset -c 0 mpiexec -n 2"
assert_eq "$(policy_lines 2 "1 CPU\(s\): oversubscribed; rank 0: .*")" 2 \
    "two ranks pinned to one CPU: oversubscribed, on both"

n=$((ncpu + 1))
run_job -genv LOOM_MPI_DEBUG 1 -n "$n" "$hello"
assert_rc 0 "-n $n unbound"
assert_eq "$(policy_lines "$n" "$ncpu CPU\(s\): oversubscribed; rank 0: some node oversubscribed")" \
    "$n" "$n ranks on $ncpu CPUs: oversubscribed, and every rank has rank 0's view"

run_job -bind-to core -genv LOOM_MPI_DEBUG 1 -n "$n" "$hello"
assert_rc 0 "-bind-to core -n $n"
assert_eq "$(policy_lines "$n" "$ncpu CPU\(s\): oversubscribed; rank 0: some node oversubscribed")" \
    "$n" "-bind-to core -n $n (two ranks share a core): oversubscribed"

# Pretend nodes on one machine (as network-namespace nodes or several slurmd on a host):
# each has ncpu ranks on its ncpu CPUs, but the machine has twice that many ranks.
n=$((2 * ncpu))
run_job -genv LOOM_MPI_FAKE_NODES "$ncpu" -genv LOOM_MPI_DEBUG 1 -n "$n" "$hello"
assert_rc 0 "-n $n in pretend nodes of $ncpu"
assert_eq "$(policy_lines "$ncpu" "$ncpu CPU\(s\), $n rank\(s\) on this machine: oversubscribed; .*")" \
    "$n" "pretend nodes of $ncpu ranks on one $ncpu-CPU machine: oversubscribed"

# Sleeping and waking across nodes: a node leader's TCP wait leaves the netmod's helper
# thread asleep on the rank's futex word (tcp.c); when the leader then slept in a shm
# collective too, the one FUTEX_WAKE and the shared "sleeping" flag could serve the
# helper alone and the leader slept its whole 20 ms (Barrier across pretend nodes of 2
# took 3 ms on average, 20 ms with LOOM_MPI_COLL_YIELD=0; comm_basic 8 took 31 s).
# LOOM_MPI_DEBUG counts sleeps that timed out after what they waited for had come;
# before the fix each leader had about 100 in barrier_heavy 8.  Spins and yields off,
# so ranks sleep on any machine.
bh=$LOOM_BUILDDIR/mpi/barrier_heavy
if [ -x "$bh" ]; then
    run_job -genv LOOM_MPI_FAKE_NODES 2 -genv LOOM_MPI_DEBUG 1 -genv LOOM_MPI_COLL_YIELD 0 \
        -genv LOOM_MPI_COLL_SPIN_US 0 -genv LOOM_MPI_SPIN_US 0 -genv LOOM_MPI_YIELD 0 \
        -n 8 "$bh"
    assert_rc 0 "barrier_heavy 8 in pretend nodes of 2, sleeping at once"
    assert_grep "No Errors" "$out" "barrier_heavy 8: No Errors"
    assert_eq "$(grep -c 'shm sleep(s) outlived their wake-up' "$err")" 0 \
        "no rank slept past a wake-up that was due"
else
    say "barrier_heavy not built: sleep/wake case left out"
fi

finish
