#!/bin/sh
# t-loom-netns.sh - the interoperability matrix under srun --mpi=loom on four nodes that
# are network namespaces on a bridge (cluster.sh -n 4): each node has its own IP,
# hostname, IPC namespace and /dev/shm, so every cross-node byte crosses a (virtual)
# network and MPICH cannot take a shared-memory short cut between nodes.
#
# Usage: t-loom-netns.sh [BUILDDIR]      (environment: see lib.sh)
# Cases: as t-loom-slurmd4.sh (lib.sh matrix_nodes4). Skips (77) where the machine
# forbids network namespaces (cluster.sh says why), without root, Slurm or the plugin.
me=t-loom-netns
. "$(dirname "$0")/lib.sh"
need_plugin
start_cluster -n 4
matrix_nodes4 "netns"
finish
