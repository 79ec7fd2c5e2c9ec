#!/bin/bash
# t0620-mpich-suite.sh - the CI subset of MPICH's own test suite on Loom's libmpi:
# tests/mpich/run.sh --quick (the tests listed in tests/mpich/quick, built with this
# build's mpicc and run under its mpiexec).  Fails when a listed test fails that
# tests/mpich/expected-fail does not name; skips when MPICH's source cannot be had
# (apt-get source needs the network and a deb-src entry, see doc/mpich-suite.md).
# Skipped in the distcheck pass (LOOM_TEST_QUICK=1): the main build's check runs it,
# and a distcheck tree would configure the suite again for a build dir that vanishes.
. "$(dirname "$0")/lib.sh"
need_mpiexec
[ "$LOOM_TEST_QUICK" = 1 ] && skip "quick/distcheck pass: the main build's make check runs the MPICH suite"
[ -x "$LOOM_BUILDDIR/mpi/mpicc" ] || skip "mpicc not built"
command -v mpicc.mpich >/dev/null 2>&1 || say "note: MPICH not installed; apt-get source does not need it"

# the suite's own per-test bound is 60 s; the whole quick run took about 3 minutes here
run_cmd -t 1100 "$LOOM_SRCDIR/tests/mpich/run.sh" --quick --build "$LOOM_BUILDDIR"
cat "$err" "$out"
case $rc in
0) ok "the quick subset of MPICH's suite: no regression" ;;
77) skip "$(grep 'SKIP:' "$err" | tail -n 1)" ;;
*) fail "tests/mpich/run.sh --quick exited $rc (a regression: see the REGRESSION lines above)" ;;
esac
finish
