#!/bin/sh
# dyn_xjob.sh - connect/accept between two jobs: two mpiexec runs of dyn_xjob, the
# port name passed in a file.  Usage: dyn_xjob.sh MPIEXEC BINDIR NP_A NP_B [VAR=VALUE...]
# (the variables go to both jobs, e.g. LOOM_MPI_NETMOD=tcp).  DYN_XJOB_PROG=dyn_xjob_flood
# runs that program instead (another job's process dropped for passing its quota).  Exit 0 when both jobs
# exit 0 and print "No Errors".
set -u
mpiexec=$1 bindir=$2 na=$3 nb=$4
prog=${DYN_XJOB_PROG:-dyn_xjob} # dyn_xjob_flood: the quota's drop (expects its line)
shift 4
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
env "$@" timeout -k 5 60 "$mpiexec" -n "$na" "$bindir/$prog" accept "$tmp/port" \
    >"$tmp/a" 2>&1 &
apid=$!
env "$@" timeout -k 5 60 "$mpiexec" -n "$nb" "$bindir/$prog" connect "$tmp/port" \
    >"$tmp/b" 2>&1
brc=$?
wait $apid
arc=$?
ok=0
[ $arc -eq 0 ] && [ $brc -eq 0 ] && grep -q "^No Errors" "$tmp/a" &&
    grep -q "^No Errors" "$tmp/b" && ok=1
# legitimate traffic between the jobs is never refused (core/xsec.c's warning)
grep -q "dropped a message from process" "$tmp/a" "$tmp/b" && ok=0
if [ "$prog" = dyn_xjob_flood ]; then
    grep -q 'dropped process .*(job ".*" rank 0): too many unexpected messages' "$tmp/a" || ok=0
else
    grep -q "dropped process" "$tmp/a" "$tmp/b" && ok=0
fi
label="$prog $na+$nb${*:+ $*}"
if [ $ok -eq 1 ]; then
    echo "PASS $label"
    exit 0
fi
echo "FAIL $label (accept rc=$arc, connect rc=$brc)"
sed 's/^/    A: /' "$tmp/a" | head -20
sed 's/^/    B: /' "$tmp/b" | head -20
exit 1
