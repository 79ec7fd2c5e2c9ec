#!/bin/bash
# t-quotas-kvs.sh - a task putting 100 000 keys (PMI-2 with 1000-byte values, PMI-1
# with tiny ones) is refused at its per-rank KVS quota with rc 2 and a message naming
# the limit; mpiexec logs it once and ends the job; mpiexec's memory stays bounded;
# LOOM_PMI_MAX_KVS_BYTES_PER_RANK and LOOM_PMI_MAX_KVS_KEYS_PER_JOB change the
# limits; a good job still runs afterwards.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/quotas_lib.sh"
need_qc

run_job -t 180 -n 1 "$QC" puts 100000
assert_failed_not_hung "100 000 PMI-2 puts of 1000 bytes"
assert_refused puts 'LoomMaxKvs(Keys|Bytes)PerRank'

QC_VALLEN=1 run_job -t 180 -n 1 env QC_VALLEN=1 "$QC" -1 puts 100000
assert_failed_not_hung "100 000 PMI-1 puts of 1 byte"
assert_refused puts LoomMaxKvsKeysPerRank
assert_grep "puts 16384 refused" "$out" "the default is 16384 keys per rank"

LOOM_PMI_MAX_KVS_BYTES_PER_RANK=100000 run_job -n 1 "$QC" puts 100000
assert_failed_not_hung "LOOM_PMI_MAX_KVS_BYTES_PER_RANK=100000"
assert_refused puts LoomMaxKvsBytesPerRank
assert_grep "puts 99 refused" "$out" "100000 bytes hold 99 puts of 1002 bytes"

LOOM_PMI_MAX_KVS_KEYS_PER_JOB=50 run_job -n 1 "$QC" puts 100000
assert_failed_not_hung "LOOM_PMI_MAX_KVS_KEYS_PER_JOB=50"
assert_grep -E "quotas_client: puts 50 refused rc=2 msg=.*LoomMaxKvsKeysPerJob" "$out" \
    "the job's key quota"

LOOM_PMI_MAX_KVS_KEYS_PER_RANK=0 LOOM_PMI_MAX_KVS_BYTES_PER_RANK=0 \
    run_job -n 1 env QC_VALLEN=1 "$QC" puts 20000
assert_rc 1 "0 means no limit: all 20 000 puts accepted (the client exits 1)"
assert_grep "all 20000 puts accepted" "$out"

assert_good_job
finish
