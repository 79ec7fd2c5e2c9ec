#!/bin/sh
# t-loom-1node.sh - the interoperability matrix under real srun --mpi=loom, one node.
#
# Usage: t-loom-1node.sh [BUILDDIR]      (environment: see lib.sh)
# Starts a private one-node cluster (cluster.sh -N 1, our plugin directory first in
# PluginDir) and runs, each bounded by a timeout and checked for exit 0 and the
# program's OK line: Debian MPICH hello (-n 4, 64) and ring (-n 8); the PMI-2 test
# client linked with Slurm's libpmi2 (-n 16, 64); ours with our libpmi2 (-n 16, 64) and
# our libpmi (PMI-1 wire, -n 16) -- all under --mpi=loom; and our two clients under
# Slurm's own --mpi=pmi2 on the same cluster. Skips (77) without root, Slurm or the
# plugin (configure --with-slurm-source); LOOM_SLURM_MPI=pmi2 runs the matrix under
# Slurm's plugin instead (a check of the test itself).
me=t-loom-1node
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -N 1
matrix_node1
finish
