#!/bin/sh
# t-loom-slurmd4.sh - the interoperability matrix under srun --mpi=loom on four nodes
# that are four slurmd (`slurmd -N`) on this host: steps really span nodes 0..3 (one
# stepd each, the cross-node fence path), but every node shares the host's IP.
#
# Usage: t-loom-slurmd4.sh [BUILDDIR]    (environment: see lib.sh)
# Cases (lib.sh matrix_nodes4): Debian MPICH hello -N 4 -n 8 and ring -n 16 cyclic (with
# the MPICH finalize shim, see mpich_finalize_shim.c); the Slurm-libpmi2 client at
# -n 16 block / cyclic / plane=3 (-n 13), -n 64 and -n 256; our libpmi2 client at -n 16
# and 256 and our PMI-1 client at -n 16 under --mpi=loom; our two clients under Slurm's
# --mpi=pmi2. Each bounded by a timeout; exit code 0 and the OK line are asserted.
# Second pass: the job's LOOM_PMI_KVS_MODE=ondemand (cards stay on their stepd, gets are
# asked across nodes): MPICH hello and ring, the Slurm-libpmi2, our PMI-2 and PMI-1
# clients at -n 16 and -n 64, and the stepds' debug lines saying the fences went
# on-demand.
me=t-loom-slurmd4
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 4
matrix_nodes4 "4 slurmd"

export LOOM_PMI_KVS_MODE=ondemand
if build_shim; then
    mpich mpich_hello 8 "-N 4 -n 8 (on-demand KVS)" -N 4 -n 8 --export="ALL,LD_PRELOAD=$shim"
    mpich mpich_ring 16 "-N 4 -n 16 cyclic (on-demand KVS)" -N 4 -n 16 -m cyclic \
        --export="ALL,LD_PRELOAD=$shim"
fi
kv_slurm "-N 4 -n 16 cyclic (on-demand KVS)" 16 -N 4 -n 16 --ntasks-per-node=4 -m cyclic
kv_loom "-N 4 -n 16 (on-demand KVS)" 16 "$mpi" -N 4 -n 16 --ntasks-per-node=4
kv_pmi1 "-N 4 -n 16 (on-demand KVS)" 16 "$mpi" -N 4 -n 16 --ntasks-per-node=4
kv_slurm "-N 4 -n 64 (on-demand KVS)" 64 -N 4 -n 64 --ntasks-per-node=16
if kv_loom "-N 4 -n 16, LOOM_PMI_DEBUG=debug (on-demand KVS)" 16 "$mpi" -N 4 -n 16 \
    --ntasks-per-node=4 --export=ALL,LOOM_PMI_DEBUG=debug; then
    if grep -q "on-demand KVS" "$out.stderr" && ! grep -q "full KVS" "$out.stderr"; then
        echo "PASS: the stepds' fences went on-demand"
        npass=$((npass + 1))
    else
        echo "FAIL: no 'on-demand KVS' fence line (or a full one) in the job's stderr"
        show_output
        nfail=$((nfail + 1))
    fi
fi
unset LOOM_PMI_KVS_MODE
finish
