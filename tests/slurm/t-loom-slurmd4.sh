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
me=t-loom-slurmd4
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 4
matrix_nodes4 "4 slurmd"
finish
