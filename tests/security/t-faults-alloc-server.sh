#!/bin/bash
# t-faults-alloc-server.sh - allocation failures in the PMI server core's host (mpiexec)
# and in the PMI-2 client library, swept over the allocations of a real job.
#
# Holds when: mpiexec -n 2 pmi2_kvstest_loom, with the Nth allocation of mpiexec made to
# fail (faults_preload.so, LOOM_FAULT_MALLOC=N, for N over 1..20 and ~40 points up to
# the job's total), ends every time either with the job's success or with a non-zero
# exit and a message on stderr: never a crash (signal) or a hang (20 s; a clean run takes well under 1 s).  The same for
# the Nth allocation of the ranks (libpmi2), and for every allocation from N on
# (LOOM_FAULT_MALLOC=N:0, memory gone for good).
# PMIx is off (LOOM_PMIX=0): OpenPMIx's own PMIx_server_init (libpmix.so.2, Debian
# 4.2) dereferences failed allocations (pmix_mca_base_var_register,
# pmix_init_registered_attrs), which no code of ours can mend; this test is about ours.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/faults_lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom
need_faults
prog=$LOOM_PROGDIR/pmi2_kvstest_loom
export LOOM_PMIX=0
good='kvstest: 2 ranks, [0-9]+ rounds OK'

fault_run 20 LOOM_FAULT_PROC=mpiexec -- "$LOOM_MPIEXEC" -n 2 "$prog"
fault_ok "no fault (baseline)" "$good"
total=$(fault_total malloc)
[ -n "$total" ] && [ "$total" -gt 0 ] || { fail "the shim counted no allocation in mpiexec"; finish; }
say "mpiexec made $total allocations in the baseline run"

for n in $(sweep_points "$total"); do
    fault_run 20 LOOM_FAULT_PROC=mpiexec LOOM_FAULT_MALLOC="$n" -- "$LOOM_MPIEXEC" -n 2 "$prog"
    fault_ok "mpiexec allocation $n of $total fails" "$good"
done
for n in 1 5 $((total / 2)) $((total - 5)); do
    [ "$n" -ge 1 ] || continue
    fault_run 20 LOOM_FAULT_PROC=mpiexec LOOM_FAULT_MALLOC="$n:0" -- "$LOOM_MPIEXEC" -n 2 "$prog"
    fault_ok "mpiexec allocations $n.. all fail" "$good"
done

# the client side: libpmi2 in the ranks
fault_run 20 LOOM_FAULT_PROC=pmi2_kvstest_loom -- "$LOOM_MPIEXEC" -n 2 "$prog"
ctotal=$(fault_total malloc)
say "a rank made ${ctotal:-?} allocations"
for n in $(sweep_points "${ctotal:-0}" | awk 'NR % 2 == 1'); do
    fault_run 20 LOOM_FAULT_PROC=pmi2_kvstest_loom LOOM_FAULT_MALLOC="$n" -- \
        "$LOOM_MPIEXEC" -n 2 "$prog"
    fault_ok "rank allocation $n of $ctotal fails" "$good"
done
finish
