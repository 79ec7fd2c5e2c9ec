#!/bin/sh
# t-quotas-slurm.sh - the server core's quotas in the plugin, under real srun --mpi=loom
# on a private one-node cluster (tests/slurm/cluster.sh):
#   conf     scontrol show config lists every LoomMax* key with its default, and an
#            mpi.conf value once set (LoomMaxKvsKeysPerRank=100; LoomMaxNames=0: none)
#   kvs      quotas_client puts 1000: put 100 is refused with rc 2 naming the limit,
#            the step ends and srun's stderr names rank 0 and LoomMaxKvsKeysPerRank
#   names    LoomMaxNames=0 lifts the limit: 5000 publications are all accepted
#   env      LOOM_PMI_MAX_KVS_KEYS_PER_RANK in the job's environment does not raise
#            mpi.conf's quota (only mpiexec reads it)
#   good     a good job still runs
# Skips (77) without root, Slurm or the plugin, like tests/slurm/t-*.sh.
me=t-quotas-slurm
: "${LOOM_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$LOOM_SRCDIR/tests/slurm/lib.sh"
here=$LOOM_SRCDIR/tests/slurm # lib.sh finds cluster.sh beside itself
need_plugin
qc=$bdir/tests/security/quotas_client
[ -x "$qc" ] || { echo "SKIP: $me: quotas_client not built"; exit 77; }
start_cluster -N 1

conf_shows "conf: default KVS bytes per rank" LoomMaxKvsBytesPerRank 16777216
conf_shows "conf: default KVS keys per job" LoomMaxKvsKeysPerJob 4194304
conf_shows "conf: default node attributes" LoomMaxNodeAttrs 4096
conf_shows "conf: default trace lines" LoomMaxTraceLines 10000
mpi_conf_set LoomMaxKvsKeysPerRank=100
mpi_conf_set LoomMaxNames=0
conf_shows "conf: mpi.conf's LoomMaxKvsKeysPerRank" LoomMaxKvsKeysPerRank 100
conf_shows "conf: mpi.conf's LoomMaxNames=0 (no limit)" LoomMaxNames 0

case_fail "kvs: 1000 puts against LoomMaxKvsKeysPerRank=100" \
    'rank 0 exceeded the KVS quota of one rank: 100 keys \(LoomMaxKvsKeysPerRank\)' \
    --mpi=loom -N 1 -n 1 "$qc" puts 1000
grep -q 'quotas_client: puts 100 refused rc=2 msg=.*LoomMaxKvsKeysPerRank' "$out.stdout"
assert_last "kvs: the task got rc 2 naming the limit at its 101st put" \
    "kvs: the task did not see the refusal at its 101st put"

case_fail "env: a job's LOOM_PMI_MAX_KVS_KEYS_PER_RANK does not raise mpi.conf's quota" \
    'LoomMaxKvsKeysPerRank' \
    --mpi=loom -N 1 -n 1 --export=ALL,LOOM_PMI_MAX_KVS_KEYS_PER_RANK=0 "$qc" puts 1000

run_srun --mpi=loom -N 1 -n 1 --export=ALL,QC_VALLEN=1 "$qc" names 5000
grep -q 'quotas_client: all 5000 names accepted' "$out.stdout"
assert_last "names: LoomMaxNames=0 accepts 5000 names" "names: LoomMaxNames=0 refused a name"

case_ok "good: a PMI-2 job still runs" "pmi2_kvstest: 4 ranks, 1 rounds OK" \
    --mpi=loom -N 1 -n 4 "$prog/pmi2_kvstest_loom" -r 1
finish
