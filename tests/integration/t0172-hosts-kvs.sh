#!/bin/bash
# t0172-hosts-kvs.sh - the on-demand KVS under multi-host mpiexec (`-launcher fork
# -hosts`, one proxy and one PMI server core per virtual host): LOOM_PMI_KVS_MODE=ondemand
# leaves every rank's 1000-byte value on its own node (the fences carry a few bytes, the
# full mode the whole KVS) and every get still finds every value: PMI-2 (our libpmi2 and
# Slurm's when built), PMI-1 and a Loom MPI ring; a bad mode is an error message.
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom pmi1_kvstest

F=(-launcher fork)

# The largest "N bytes travel" of this node's fences in the debug log of job $err.
max_travel() {
    sed -n "s/.*fence [0-9]*: $1 KVS (\([0-9]*\) bytes travel).*/\1/p" "$err" |
        sort -n | tail -n 1
}

for prog in pmi2_kvstest_loom pmi2_kvstest_slurm pmi1_kvstest; do
    [ -x "$LOOM_PROGDIR/$prog" ] || { say "no $prog: skipped"; continue; }
    LOOM_PMI_KVS_MODE=ondemand LOOM_PMI_LOGLEVEL=debug \
        run_job "${F[@]}" -hosts a:2,b:2,c:2 -n 6 "$LOOM_PROGDIR/$prog" -r 3
    assert_kvstest 6
    assert_no_grep "full KVS" "$err" "$prog: no fence went full"
    t=$(max_travel on-demand)
    [ -n "$t" ] && [ "$t" -lt 200 ] && ok "$prog: on-demand fences carry at most $t bytes" ||
        fail "$prog: on-demand fences carry '$t' bytes (want < 200)"

    LOOM_PMI_KVS_MODE=full LOOM_PMI_LOGLEVEL=debug \
        run_job "${F[@]}" -hosts a:2,b:2,c:2 -n 6 "$LOOM_PROGDIR/$prog" -r 3
    assert_kvstest 6
    assert_no_grep "on-demand KVS" "$err" "$prog: full mode stays full"
    t=$(max_travel full)
    [ -n "$t" ] && [ "$t" -ge 2000 ] && ok "$prog: full fences carry $t bytes from a node" ||
        fail "$prog: full fences carry '$t' bytes (want >= 2000)"
done

# auto with a tiny threshold goes on-demand; the default keeps this small job full
LOOM_PMI_KVS_MODE=auto LOOM_PMI_KVS_AUTO_BYTES=1000 LOOM_PMI_LOGLEVEL=debug \
    run_job "${F[@]}" -hosts a,b,c,d -ppn 2 -n 8 "$LOOM_PROGDIR/pmi2_kvstest_loom"
assert_kvstest 8
assert_grep "on-demand KVS" "$err" "auto above its threshold goes on-demand"
LOOM_PMI_LOGLEVEL=debug run_job "${F[@]}" -hosts a,b,c,d -ppn 2 -n 8 \
    "$LOOM_PROGDIR/pmi2_kvstest_loom"
assert_kvstest 8
assert_no_grep "on-demand KVS" "$err" "auto by default: a small job stays full"

# a bad mode: an error naming the variable, and the job runs in the default mode
LOOM_PMI_KVS_MODE=fastest run_job "${F[@]}" -hosts a,b -n 4 "$LOOM_PROGDIR/pmi2_kvstest_loom"
assert_kvstest 4
assert_grep "LOOM_PMI_KVS_MODE=fastest is not one of auto, full, ondemand" "$err" \
    "a bad LOOM_PMI_KVS_MODE is reported"

# Loom's MPI: its wire-up keys name the rank ("xm-host-3"), gets pass the rank as srcid
mpicc=$LOOM_BUILDDIR/mpi/mpicc
if [ -x "$mpicc" ]; then
    run_cmd -t 120 "$mpicc" -o "$TEST_TMP/ring" "$(dirname "$0")/../programs/mpi_ring.c"
    assert_rc 0 "mpi_ring built with Loom's mpicc"
    LOOM_PMI_KVS_MODE=ondemand LOOM_PMI_LOGLEVEL=debug \
        run_job "${F[@]}" -hosts a:2,b:2,c:2 -n 6 "$TEST_TMP/ring"
    assert_rc 0 "Loom MPI ring on 3 hosts, on-demand KVS"
    assert_grep -E "ring: 6 ranks, [0-9]+ laps OK" "$out" "the ring went round"
    assert_grep "on-demand KVS" "$err" "its fences were on-demand"
else
    say "no mpicc in the build: Loom MPI part skipped"
fi
finish
