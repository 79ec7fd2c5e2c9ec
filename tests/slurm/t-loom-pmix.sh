#!/bin/sh
# t-loom-pmix.sh - PMIx server mode under real srun --mpi=loom, one node.
#
# Usage: t-loom-pmix.sh [BUILDDIR]      (environment: see lib.sh)
# On a private one-node cluster (256 CPUs claimed) runs, each bounded and checked for its
# OK line or its failure message: Debian Open MPI 4.1.4 hello (MPI_Init, MPI_Allreduce,
# MPI_Finalize) at -n 4 and 64 and ring at -n 8 and 64; our PMIx client test
# (tests/programs/pmix_client.c) with data collection, with direct modex and with the
# not-supported calls; PMIx_Abort and a rank exiting without PMIx_Finalize (the step must
# end with srun's stderr naming rank 1); MPICH hello with PMIx on (one plugin serves both);
# PMIx off per job (LOOM_PMIX=0: no PMIX_* in the task env, PMI still served) and per
# cluster (mpi.conf LoomPMIx=no, shown by scontrol show config); and one
# sbatch script running an MPICH and an Open MPI step under the same --mpi=loom; and Open
# MPI hello/ring and the PMIx client under our mpiexec off Slurm (PMIx served by mpiexec);
# the node topology shared with the clients in hwloc shared memory (pmix_client -s), the
# one mpiexec shares loaded without I/O devices (its debug log says so); a node with more
# ranks than CPUs announced as oversubscribed (PMIX_NODE_OVERSUBSCRIBED, Open MPI told to
# yield unless the user says otherwise), under srun and mpiexec, and with --overcommit
# (fewer CPUs given to the job than ranks), not with one rank.
# Skips (77) without root, Slurm, the plugin or libpmix.
me=t-loom-pmix
T_TIMEOUT=${T_TIMEOUT:-120}
. "$(dirname "$0")/lib.sh"
. "$here/pmix_cases.sh"
need_plugin
need_pmix
start_cluster -N 1 -c 256

ompi ompi_hello 4 "-n 4" -N 1 -n 4
ompi ompi_ring 8 "-n 8" -N 1 -n 8
ompi ompi_hello 64 "-n 64" -N 1 -n 64
ompi ompi_ring 64 "-n 64" -N 1 -n 64
pmixc data 16 "-n 16" -N 1 -n 16
pmixc dmodex 16 "-n 16" -N 1 -n 16
pmixc unsup 4 "-n 4" -N 1 -n 4
pmixc publish 8 "-n 8" -N 1 -n 8
case_fail "PMIx_Abort ends the step naming the rank" \
    "rank 1 called PMIx_Abort \(status 7\): pmix_client rank 1 aborts on purpose" \
    --mpi="$mpi" -N 1 -n 8 "$prog/pmix_client" -m abort
case_fail "a rank exiting without PMIx_Finalize ends the step" \
    "rank 1 exited without PMIx_Finalize" \
    --mpi="$mpi" -N 1 -n 8 "$prog/pmix_client" -m die
mpich mpich_hello 8 "-n 8, PMIx on" -N 1 -n 8
case_ok "PMIx env present by default" "pmix-env=1" --mpi="$mpi" -N 1 -n 1 \
    sh -c 'echo "pmix-env=$(env | grep -c "^PMIX_RANK=")"'
case_ok "LOOM_PMIX=0 turns PMIx off for a job" "pmix-env=0" --mpi="$mpi" -N 1 -n 1 \
    --export=ALL,LOOM_PMIX=0 sh -c 'echo "pmix-env=$(env | grep -c "^PMIX_RANK=")"'
kv_loom "-n 16, LOOM_PMIX=0" 16 "$mpi" -N 1 -n 16 --export=ALL,LOOM_PMIX=0
pmix_batch 1
# Open MPI and our PMIx client under our mpiexec, off Slurm (no allocation here).
if [ -x "$prog/ompi_hello" ]; then
    mpiexec_ok "Open MPI hello under mpiexec -n 16" "hello: 16 ranks OK" -n 16 "$prog/ompi_hello"
    mpiexec_ok "Open MPI ring under mpiexec -n 8" "ring: 8 ranks, 3 laps OK" -n 8 "$prog/ompi_ring"
fi
mpiexec_ok "PMIx client under mpiexec -n 8" "pmix_client: 8 ranks, 3 rounds OK" -n 8 \
    "$prog/pmix_client" -v 200
# the node topology reaches the clients in hwloc shared memory, loaded by us without I/O
# devices (the PCI scan was most of PMIx_server_init's cost)
case_ok "PMIx client: topology shared in hwloc shared memory (srun)" \
    "pmix_client: 4 ranks, 3 rounds OK" --mpi="$mpi" -N 1 -n 4 "$prog/pmix_client" -s
LOOM_PMI_LOGLEVEL=debug mpiexec_ok "PMIx client: topology shared (mpiexec)" \
    "pmix_client: 4 ranks, 3 rounds OK" -n 4 "$prog/pmix_client" -s
grep -q 'topology ours, without I/O devices' "$out.stderr"
assert_last "mpiexec's PMIx server shares its own I/O-less topology" \
    "mpiexec's debug log does not say 'topology ours, without I/O devices'"

# More ranks than CPUs: the node is announced as oversubscribed (PMIX_NODE_OVERSUBSCRIBED,
# and OMPI_MCA_mpi_yield_when_idle=1 unless the user set it), so that Open MPI yields
# instead of busy-polling; with no more ranks than CPUs, neither is set.
ncpu=$(nproc)
if [ "$ncpu" -lt 64 ]; then
    case_ok "64 ranks on $ncpu CPUs: node announced oversubscribed, Open MPI told to yield" \
        "pmix_client: 64 ranks, 3 rounds OK" --mpi="$mpi" -N 1 -n 64 \
        "$prog/pmix_client" -o 1 -y 1
    case_ok "oversubscribed: the user's OMPI_MCA_mpi_yield_when_idle=0 wins" \
        "pmix_client: 64 ranks, 3 rounds OK" --mpi="$mpi" -N 1 -n 64 \
        --export=ALL,OMPI_MCA_mpi_yield_when_idle=0 "$prog/pmix_client" -o 1 -y 0
    mpiexec_ok "mpiexec -n 64 on $ncpu CPUs: node announced oversubscribed" \
        "pmix_client: 64 ranks, 3 rounds OK" -n 64 "$prog/pmix_client" -o 1 -y 1
    mpiexec_ok "mpiexec, oversubscribed: -genv OMPI_MCA_mpi_yield_when_idle 0 wins" \
        "pmix_client: 64 ranks, 3 rounds OK" -genv OMPI_MCA_mpi_yield_when_idle 0 \
        -n 64 "$prog/pmix_client" -o 1 -y 0
else
    skip_case "oversubscription announced" "this machine has $ncpu CPUs (64 or more)"
fi
# srun --overcommit gives the job one CPU here: 2 ranks are then more than the job has
case_ok "srun --overcommit -n 2: more ranks than the job's CPUs, announced oversubscribed" \
    "pmix_client: 2 ranks, 3 rounds OK" --mpi="$mpi" -N 1 -n 2 --overcommit \
    "$prog/pmix_client" -o 1 -y 1
case_ok "1 rank: not announced oversubscribed, nothing set" \
    "pmix_client: 1 ranks, 3 rounds OK" --mpi="$mpi" -N 1 -n 1 "$prog/pmix_client" -o 0 -y -
mpiexec_ok "mpiexec -n 1: not announced oversubscribed" \
    "pmix_client: 1 ranks, 3 rounds OK" -n 1 "$prog/pmix_client" -o 0 -y -

# mpi.conf LoomPMIx: shown by scontrol show config; =no turns PMIx off for every step.
conf_shows "scontrol show config: LoomPMIx = yes by default" LoomPMIx yes
mpi_conf_set "LoomPMIx=no"
conf_shows "scontrol show config: LoomPMIx = no after mpi.conf LoomPMIx=no" LoomPMIx no
case_ok "mpi.conf LoomPMIx=no: no PMIx env" "pmix-env=0" --mpi="$mpi" -N 1 -n 1 \
    sh -c 'echo "pmix-env=$(env | grep -c "^PMIX_RANK=")"'
kv_loom "-n 16, LoomPMIx=no" 16 "$mpi" -N 1 -n 16
finish
