#!/bin/sh
# t-loom-mpi-pmix4.sh - Loom's own MPI under Slurm's own PMIx plugin (srun --mpi=pmix,
# mpi_pmix.so) across four network-namespace nodes: shared memory inside a node, the
# TCP netmod between nodes (issue 25).
#
# Usage: t-loom-mpi-pmix4.sh [BUILDDIR]     (environment: see lib.sh)
# On a private cluster of four network-namespace nodes (cluster.sh -n 4: own IP,
# hostname, IPC and /dev/shm per node) runs mpi/hello, mpi/ring and mpi/coll_basic under
# srun --mpi=pmix -N 4 with -n 4 (one rank per node), -n 16 block, -n 16 cyclic and
# -n 64, and ring -n 16 cyclic with LOOM_MPI_PMIX_COLLECT=0 (direct modex: each card a
# request to the owner's node).  Each must print "No Errors" once and be ONE job
# (LOOM_MPI_DEBUG=1: ranks 0 to N-1 once each, every rank seeing N/4 ranks on its node,
# and sockets to ranks on another host; see loom_mpi_cases.sh one_job): the programs
# check the data they received, so a pass means it really moved over shm and TCP.
# On the old libmpi (before the PMIx client path) every task ran as a singleton.
# Skips (77) without root, Slurm, Slurm's mpi_pmix.so or network namespaces.
me=t-loom-mpi-pmix4
. "$(dirname "$0")/lib.sh"
. "$here/loom_mpi_cases.sh"
need_loom_mpi
start_cluster -n 4
need_slurm_pmix

for p in hello ring coll_basic; do
    one_job "$p, --mpi=pmix -N 4 -n 4" 4 1 "" $p --mpi=pmix -N 4 -n 4 --ntasks-per-node=1
    one_job "$p, --mpi=pmix -N 4 -n 16 block" 16 4 "" $p --mpi=pmix -N 4 -n 16 \
        --ntasks-per-node=4 -m block
    one_job "$p, --mpi=pmix -N 4 -n 16 cyclic" 16 4 "" $p --mpi=pmix -N 4 -n 16 \
        --ntasks-per-node=4 -m cyclic
    one_job "$p, --mpi=pmix -N 4 -n 64" 64 16 "" $p --mpi=pmix -N 4 -n 64 \
        --ntasks-per-node=16
done
one_job "ring, --mpi=pmix -N 4 -n 16 cyclic, LOOM_MPI_PMIX_COLLECT=0 (direct modex)" 16 4 \
    LOOM_MPI_PMIX_COLLECT=0 ring --mpi=pmix -N 4 -n 16 --ntasks-per-node=4 -m cyclic
finish
