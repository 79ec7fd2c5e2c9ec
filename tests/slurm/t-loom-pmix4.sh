#!/bin/sh
# t-loom-pmix4.sh - PMIx server mode under real srun --mpi=loom across four nodes.
#
# Usage: t-loom-pmix4.sh [BUILDDIR]     (environment: see lib.sh)
# On a private cluster of four network-namespace nodes (cluster.sh -n 4: own IP, hostname,
# IPC and /dev/shm per node, so fences, direct modex and Open MPI's TCP traffic really
# cross a network) runs, each bounded and checked: Debian Open MPI hello at -N 4 -n 8 and
# -n 64 and ring at -n 16 cyclic; our PMIx client test with data collection (-n 16 and
# -n 13 plane=3), with direct modex (-n 16 cyclic: every remote get is a routed request),
# PMIx_Abort by a rank of node 1 and a rank of node 1 exiting without PMIx_Finalize (the
# step ends, srun's stderr names rank 1); Debian MPICH hello with PMIx on (with the
# finalize shim of lib.sh); and one sbatch script running an MPICH and an Open MPI step.
# Skips (77) without root, Slurm, the plugin, libpmix or network namespaces.
me=t-loom-pmix4
T_TIMEOUT=${T_TIMEOUT:-120}
. "$(dirname "$0")/lib.sh"
. "$here/pmix_cases.sh"
need_plugin
need_pmix
start_cluster -n 4

ompi ompi_hello 8 "-N 4 -n 8" -N 4 -n 8 --ntasks-per-node=2
ompi ompi_ring 16 "-N 4 -n 16 cyclic" -N 4 -n 16 --ntasks-per-node=4 -m cyclic
ompi ompi_hello 64 "-N 4 -n 64" -N 4 -n 64 --ntasks-per-node=16
pmixc data 16 "-N 4 -n 16" -N 4 -n 16 --ntasks-per-node=4
pmixc data 13 "-N 4 -n 13 plane=3" -N 4 -n 13 -m plane=3
pmixc dmodex 16 "-N 4 -n 16 cyclic" -N 4 -n 16 --ntasks-per-node=4 -m cyclic
pmixc unsup 4 "-N 4 -n 4" -N 4 -n 4 --ntasks-per-node=1
pmixc publish 8 "-N 4 -n 8" -N 4 -n 8 --ntasks-per-node=2
case_fail "PMIx_Abort on node 1 ends the step naming the rank (-N 4)" \
    "rank 1 called PMIx_Abort \(status 7\): pmix_client rank 1 aborts on purpose" \
    --mpi="$mpi" -N 4 -n 4 --ntasks-per-node=1 "$prog/pmix_client" -m abort
case_fail "a rank of node 1 exiting without PMIx_Finalize ends the step (-N 4)" \
    "rank 1 exited without PMIx_Finalize" \
    --mpi="$mpi" -N 4 -n 8 --ntasks-per-node=2 -m cyclic "$prog/pmix_client" -m die
if build_shim; then
    mpich mpich_hello 8 "-N 4 -n 8, PMIx on" -N 4 -n 8 --ntasks-per-node=2 \
        --export="ALL,LD_PRELOAD=$shim"
    pmix_batch 4 --export="ALL,LD_PRELOAD=$shim"
else
    skip_case "MPICH across nodes" "no C compiler for the finalize shim"
fi
finish
