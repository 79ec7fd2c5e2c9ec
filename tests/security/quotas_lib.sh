# tests/security/quotas_lib.sh - helpers of the t-quotas-*.sh tests (sourced after
# ../integration/lib.sh).
#
# QC: the hostile client (quotas_client, see its header).  Server memory bound: the
# floods must leave mpiexec's peak RSS (VmHWM, as the client reads it from its
# parent's /proc status) under QUOTA_RSS_KB.  With the default quotas a single rank
# can make the server hold at most 16 MiB of KVS (LoomMaxKvsBytesPerRank) or 4 MiB of
# node attributes or names; mpiexec itself is a few MiB; 64 MiB leaves room for
# allocator slack and stays far below what 100 000 unrefused requests cost (over
# 100 MiB).
QC=${LOOM_SECDIR:-$(pwd)}/quotas_client
QUOTA_RSS_KB=${QUOTA_RSS_KB:-65536}

need_qc() {
    need_mpiexec
    [ -x "$QC" ] || skip "quotas_client not built ($QC)"
}

# assert_refused WHAT LIMITNAME: the last job's client saw WHAT refused with rc 2 and a
# message naming LIMITNAME, mpiexec's stderr names rank 0 and LIMITNAME, and the
# server's peak RSS stayed under QUOTA_RSS_KB
assert_refused() {
    assert_grep -E "quotas_client: $1 [0-9]+ refused rc=2 msg=.*$2" "$out" \
        "the task got rc 2 naming $2 for its $1"
    assert_grep -E "rank 0 exceeded .*\($2\)" "$err" "mpiexec's stderr names rank 0 and $2"
    local n
    n=$(grep -c "exceeded the" "$err")
    if [ "$n" -le 2 ]; then
        ok "the limit is reported in $n lines (the server's one line and the abort)"
    else
        fail "the limit is reported in $n lines"
    fi
    assert_hwm
}

assert_hwm() {
    local hwm
    hwm=$(sed -n 's/^quotas_client: server VmHWM=\([0-9-]*\) .*/\1/p' "$out" | tail -n 1)
    if [ -z "$hwm" ] || [ "$hwm" -lt 0 ]; then
        fail "no server memory report"
        show_output
    elif [ "$hwm" -lt "$QUOTA_RSS_KB" ]; then
        ok "mpiexec's peak RSS ${hwm} kB < ${QUOTA_RSS_KB} kB"
    else
        fail "mpiexec's peak RSS ${hwm} kB >= ${QUOTA_RSS_KB} kB"
    fi
}

# a good job in the same run still works
assert_good_job() {
    need_prog pmi2_kvstest_loom
    run_job -n 4 "$LOOM_PROGDIR/pmi2_kvstest_loom"
    assert_kvstest 4
}
