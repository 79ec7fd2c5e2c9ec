#!/bin/bash
# t0150-bind.sh - -bind-to core pins each rank to one core (round robin), -bind-to none
# leaves the launcher's affinity.
. "$(dirname "$0")/lib.sh"
need_mpiexec
[ "$LOOM_HAVE_HWLOC" = no ] && skip "built without hwloc"

ncpu=$(nproc)
mine=$(grep Cpus_allowed_list /proc/self/status | awk '{ print $2 }')

run_job -bind-to none -n 2 sh -c 'grep Cpus_allowed_list /proc/self/status'
assert_rc 0 "-bind-to none"
assert_eq "$(awk '{ print $2 }' "$out" | sort -u)" "$mine" "affinity with -bind-to none"

run_job -bind-to core -n "$ncpu" sh -c 'echo "$PMI_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
assert_rc 0 "-bind-to core"
# each rank on exactly one cpu, all distinct
single=$(awk '$2 ~ /^[0-9]+$/' "$out" | wc -l)
assert_eq "$single" "$ncpu" "ranks bound to a single cpu"
assert_eq "$(awk '{ print $2 }' "$out" | sort -u | wc -l)" "$ncpu" "distinct cpus"

run_job -bind-to nonsense -n 1 true
assert_failed_not_hung "-bind-to nonsense is rejected"

finish
