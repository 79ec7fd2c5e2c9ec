#!/bin/bash
# t0610-mpicc.sh - the build tree's mpicc chooses its compiler without ever calling
# itself: it ignores $CC (so `CC=mpicc mpicc` and `./configure CC=mpicc` terminate),
# takes LOOM_MPICC_CC, then MPICH_CC, and refuses a compiler that is mpicc again
# (the same file by path or symlink, or a script that runs mpicc) with a message.
# Every compile runs under a timeout: on a wrapper that took $CC these hung for ever.
. "$(dirname "$0")/lib.sh"

mpicc=$LOOM_BUILDDIR/mpi/mpicc
[ -x "$mpicc" ] || skip "mpicc not built ($mpicc)"
bindir=$(cd "$(dirname "$mpicc")" && pwd)
d=$TEST_TMP
cat >"$d/x.c" <<'EOF'
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    return rank;
}
EOF
cd "$d" || exit 99
# mpicc found in PATH, as a build system finds it; no compiler variables from outside
export PATH="$bindir:$PATH"
unset LOOM_MPICC_CC MPICH_CC LOOM_MPICC_ACTIVE

run_cmd -t 30 env CC=mpicc mpicc -c x.c
assert_rc 0 "CC=mpicc mpicc -c x.c ends (\$CC is not the wrapper's compiler)"
[ -s x.o ] && ok "x.o written" || fail "no x.o"
run_cmd -t 30 env CC=mpicc mpicc -o x x.c
assert_rc 0 "CC=mpicc mpicc -o x x.c links"
[ -x x ] && ok "x linked" || fail "no program x"
run_cmd -t 30 env CC=/nonexistent/cc mpicc -show x.c
assert_no_grep "/nonexistent/cc" "$out" "\$CC does not reach the command line"

run_cmd -t 30 env MPICH_CC=cc mpicc -show x.c
assert_grep -E "^cc -I" "$out" "MPICH_CC chooses the compiler"
run_cmd -t 30 env LOOM_MPICC_CC=gcc MPICH_CC=cc mpicc -show x.c
assert_grep -E "^gcc -I" "$out" "LOOM_MPICC_CC wins over MPICH_CC"
run_cmd -t 30 env LOOM_MPICC_CC="cc -O1" mpicc -c x.c
assert_rc 0 "a compiler with flags (LOOM_MPICC_CC=\"cc -O1\")"

# the compiler is mpicc itself: by name in PATH, by path, through a symlink
for c in mpicc "$mpicc" "$d/link-cc"; do
    [ "$c" = "$d/link-cc" ] && ln -s "$mpicc" "$d/link-cc"
    run_cmd -t 30 env LOOM_MPICC_CC="$c" mpicc -c x.c
    assert_rc 1 "LOOM_MPICC_CC=$c is refused"
    assert_grep "is this mpicc itself" "$err" "the message says why (LOOM_MPICC_CC=$c)"
done
run_cmd -t 30 env MPICH_CC=mpicc mpicc -c x.c
assert_rc 1 "MPICH_CC=mpicc is refused"
assert_grep "(from MPICH_CC)" "$err" "the message names MPICH_CC"
# a script that runs mpicc again: the -ef check cannot see it, the marker can
printf '#!/bin/sh\nexec mpicc "$@"\n' >"$d/again-cc"
chmod +x "$d/again-cc"
run_cmd -t 30 env LOOM_MPICC_CC="$d/again-cc" mpicc -c x.c
assert_rc 1 "a compiler script that calls mpicc is refused"
assert_grep "ran mpicc again" "$err" "the message names the loop"

# a real configure, as MPICH's test suite and most packages run it
if command -v autoconf >/dev/null 2>&1; then
    mkdir -p "$d/ac" && cd "$d/ac" || exit 99
    cat >configure.ac <<'EOF'
AC_INIT([mpicctest], [1])
AC_PROG_CC
AC_CHECK_FUNC([MPI_Init], [], [AC_MSG_ERROR([MPI_Init not found])])
AC_OUTPUT
EOF
    run_cmd -t 120 autoconf
    assert_rc 0 "autoconf"
    run_cmd -t 120 ./configure CC=mpicc
    assert_rc 0 "./configure CC=mpicc ends and finds MPI_Init"
    cd "$d" || exit 99
else
    say "autoconf not installed: the configure case is not run"
fi
finish
