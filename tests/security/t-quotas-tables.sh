#!/bin/bash
# t-quotas-tables.sh - a task publishing 100 000 names (PMI-2 and PMI-1) or putting
# 100 000 node attributes is refused at the quota (4096 by default) with rc 2 and a
# message naming the limit, mpiexec's memory stays bounded, the knobs change the
# limits, and a good job still runs afterwards.  On the old lists, 100 000 node
# attributes took quadratic time (each put scanned the list).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/quotas_lib.sh"
need_qc

run_job -t 180 -n 1 "$QC" names 100000
assert_failed_not_hung "100 000 PMI-2 name publications"
assert_refused names LoomMaxNames
assert_grep "names 4096 refused" "$out" "the default is 4096 names"

run_job -t 180 -n 1 "$QC" -1 names 100000
assert_failed_not_hung "100 000 PMI-1 name publications"
assert_refused names LoomMaxNames

run_job -t 180 -n 1 "$QC" nodeattrs 100000
assert_failed_not_hung "100 000 node attributes"
assert_refused nodeattrs LoomMaxNodeAttrs
assert_grep "nodeattrs 4096 refused" "$out" "the default is 4096 node attributes"

LOOM_PMI_MAX_NODEATTR_BYTES=10000 run_job -n 1 "$QC" nodeattrs 100000
assert_failed_not_hung "LOOM_PMI_MAX_NODEATTR_BYTES=10000"
assert_refused nodeattrs LoomMaxNodeAttrBytes

LOOM_PMI_MAX_NAME_BYTES=10000 run_job -n 1 "$QC" names 100000
assert_failed_not_hung "LOOM_PMI_MAX_NAME_BYTES=10000"
assert_refused names LoomMaxNameBytes

LOOM_PMI_MAX_NAMES=abc run_job -n 1 env QC_VALLEN=1 "$QC" names 10
assert_grep "LOOM_PMI_MAX_NAMES=abc is not a number" "$err" "a bad value is refused by name"

assert_good_job
finish
