#!/bin/bash
# t-faults-io.sh - short writes, short reads and EAGAIN everywhere, EMFILE on accept:
# all legal behaviours of the kernel that a correct program absorbs.
#
# Holds when: with every write (or read) on a socket or pipe moving only half its bytes,
# or every 2nd/3rd one on a non-blocking fd failing with EAGAIN (faults_preload.so in
# mpiexec, its proxies and the ranks), PMI-2 and PMI-1 jobs under mpiexec, a multi-host
# mpiexec job (-hosts, fork launcher: proxies over TCP) whose first accept fails with
# EMFILE, and a 7-node treenet job all SUCCEED with the right results: a short count or
# an EAGAIN is not an error.  Never a crash or a hang either way.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/faults_lib.sh"
need_mpiexec
need_prog pmi2_kvstest_loom pmi1_kvstest
need_faults
p2=$LOOM_PROGDIR/pmi2_kvstest_loom
p1=$LOOM_PROGDIR/pmi1_kvstest
tool=$LOOM_SECDIR/faults_treenet
procs=LOOM_FAULT_PROC=mpiexec,pmi2_kvstest_loom,pmi1_kvstest,faults_treenet

# must_succeed WHAT GOOD_REGEX: fault_ok, and the run must have succeeded
must_succeed() {
    fault_ok "$1" "$2"
    if [ "$verdict" != "exit 0" ] && [ "$verdict" != "" ]; then
        fail "$1: legal kernel behaviour made the job fail ($verdict)"
    fi
    local nf
    nf=$(grep -vc ' exit ' "$flog")
    say "  ($nf faults injected)"
    [ "$nf" -gt 0 ] || fail "$1: no fault was injected: the test does not test"
}

for mode in short:1 eagain:2 eagain:3; do
    m=${mode%:*} k=${mode#*:}
    fault_run 60 "$procs" LOOM_FAULT_IO_MODE="$m" LOOM_FAULT_WRITE_EVERY="$k" -- \
        "$LOOM_MPIEXEC" -n 4 "$p2"
    must_succeed "PMI-2, writes $m every $k" 'kvstest: 4 ranks, [0-9]+ rounds OK'
    fault_run 60 "$procs" LOOM_FAULT_IO_MODE="$m" LOOM_FAULT_READ_EVERY="$k" -- \
        "$LOOM_MPIEXEC" -n 4 "$p2"
    must_succeed "PMI-2, reads $m every $k" 'kvstest: 4 ranks, [0-9]+ rounds OK'
done
fault_run 60 "$procs" LOOM_FAULT_IO_MODE=short LOOM_FAULT_WRITE_EVERY=1 \
    LOOM_FAULT_READ_EVERY=1 -- "$LOOM_MPIEXEC" -n 4 "$p1"
must_succeed "PMI-1, every write and read short" 'kvstest: 4 ranks, [0-9]+ rounds OK'

# proxies over TCP (fork launcher: one proxy per host name), first accept EMFILE
fault_run 90 "$procs" LOOM_FAULT_IO_MODE=short LOOM_FAULT_WRITE_EVERY=1 \
    LOOM_FAULT_READ_EVERY=2 LOOM_FAULT_ACCEPT=1 -- \
    "$LOOM_MPIEXEC" -hosts ha,hb -launcher fork -n 4 "$p2"
must_succeed "mpiexec -hosts, short I/O, EMFILE on the first accept" \
    'kvstest: 4 ranks, [0-9]+ rounds OK'

if [ -x "$tool" ]; then
    # every 2nd write: a connection whose first frame (the nonce) cannot go out whole is
    # dropped by the listener and retried by the connecting side, which needs a next try
    for mode in short:2:1 eagain:2:2; do
        IFS=: read -r m kw kr <<<"$mode"
        fault_run 60 "$procs" LOOM_FAULT_IO_MODE="$m" LOOM_FAULT_WRITE_EVERY="$kw" \
            LOOM_FAULT_READ_EVERY="$kr" -- "$tool" 7 none
        must_succeed "treenet, writes $m every $kw, reads every $kr" 'faults_treenet: 7 nodes OK'
    done
fi
finish
