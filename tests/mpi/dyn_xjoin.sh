#!/bin/sh
# dyn_xjoin.sh - MPI_Comm_join between two jobs: two mpiexec runs of dyn_xjoin, whose
# pairs of ranks make their own loopback TCP connections (ports passed in files of a
# private directory).  Usage: dyn_xjoin.sh MPIEXEC BINDIR NP_A NP_B [VAR=VALUE...] (the
# variables go to both jobs, e.g. LOOM_MPI_NETMOD=tcp).  Exit 0 when both jobs exit 0
# and print "No Errors".
set -u
mpiexec=$1 bindir=$2 na=$3 nb=$4
shift 4
pairs=$na
[ "$nb" -lt "$pairs" ] && pairs=$nb
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dir" || exit 2
env "$@" timeout -k 5 90 "$mpiexec" -n "$na" "$bindir/dyn_xjoin" a "$tmp/dir" "$pairs" \
    >"$tmp/a" 2>&1 &
apid=$!
env "$@" timeout -k 5 90 "$mpiexec" -n "$nb" "$bindir/dyn_xjoin" b "$tmp/dir" "$pairs" \
    >"$tmp/b" 2>&1
brc=$?
wait $apid
arc=$?
ok=0
[ $arc -eq 0 ] && [ $brc -eq 0 ] && grep -q "^No Errors" "$tmp/a" &&
    grep -q "^No Errors" "$tmp/b" && ok=1
# legitimate traffic between the jobs is never refused (core/xsec.c's warning)
grep -q "dropped a message from process\|dropped process" "$tmp/a" "$tmp/b" && ok=0
label="dyn_xjoin $na+$nb${*:+ $*}"
if [ $ok -eq 1 ]; then
    echo "PASS $label"
    exit 0
fi
echo "FAIL $label (a rc=$arc, b rc=$brc)"
sed 's/^/    A: /' "$tmp/a" | head -20
sed 's/^/    B: /' "$tmp/b" | head -20
exit 1
