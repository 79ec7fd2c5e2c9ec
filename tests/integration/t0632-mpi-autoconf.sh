#!/bin/bash
# t0632-mpi-autoconf.sh - autoconf's AX_MPI (autoconf-archive's ax_mpi.m4) finds Loom's
# mpicc (build tree, mpi/mpiwrap.in) and not another MPI's mpicc installed beside it
# (Debian's /usr/bin/mpicc, an alternative naming MPICH's or Open MPI's wrapper here).
# AX_MPI takes $MPICC when it is set, else the first of mpicc, hcc, ... in PATH; it then
# checks that MPI_Init links and mpi.h compiles with that compiler and substitutes
# @MPICC@ and @MPILIBS@.  A project whose configure.ac calls AX_MPI is configured twice
# as users do it: with Loom's directory first in PATH (an environment module), and with
# MPICC naming Loom's wrapper; each time the substituted MPICC is Loom's, the hello built
# with it links Loom's libmpi (no Open MPI or MPICH library) and runs on 2 ranks under
# Loom's mpiexec.  Skipped (77) when autoreconf or ax_mpi.m4 is missing.
. "$(dirname "$0")/lib.sh"
command -v autoreconf >/dev/null || skip "autoreconf not installed (Debian: apt-get install autoconf)"
command -v make >/dev/null || skip "make not installed"
axdir=
for d in $(aclocal --print-ac-dir 2>/dev/null) /usr/share/aclocal /usr/local/share/aclocal; do
    [ -f "$d/ax_mpi.m4" ] && { axdir=$d; break; }
done
[ -n "$axdir" ] || skip "ax_mpi.m4 not found (Debian: apt-get install autoconf-archive; scripts/deps.sh installs it)"
[ -f "$LOOM_BUILDDIR/mpi/.libs/libmpi.so" ] || skip "MPI library not built"
mpi=$(cd "$LOOM_BUILDDIR/mpi" && pwd -P) # as ldd prints it
[ -x "$mpi/mpicc" ] || skip "no $mpi/mpicc"
need_mpiexec

src=$TEST_TMP/src
mkdir -p "$src"
cp "$LOOM_SRCDIR/tests/mpi/hello.c" "$src/"
cat >"$src/configure.ac" <<'AC'
AC_INIT([axhello], [1.0])
AC_CONFIG_SRCDIR([hello.c])
AC_PROG_CC
AX_MPI([], [AC_MSG_ERROR([no MPI C compiler found])])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
AC
# the usual AX_MPI use: the MPI compiler builds the program, MPILIBS links it
cat >"$src/Makefile.in" <<'MK'
hello: hello.c
	@MPICC@ -o hello hello.c @MPILIBS@
MK
run_cmd -t 120 env -C "$src" autoreconf -i -I "$axdir"
assert_rc 0 "autoreconf a configure.ac calling AX_MPI"
[ "$rc" -eq 0 ] || finish
assert_no_grep "AX_MPI" "$src/configure" "configure has AX_MPI expanded (ax_mpi.m4 found)"

# check NAME WANT_MPICC ENV...: configure, build and run a copy of the project
check() {
    local name=$1 want=$2 b=$TEST_TMP/$1
    shift 2
    cp -r "$src" "$b"
    run_cmd -t 120 env -C "$b" -u CC -u MPICC -u LOOM_MPICC_CC -u MPICH_CC "$@" ./configure
    assert_rc 0 "$name: ./configure with AX_MPI"
    [ "$rc" -eq 0 ] || { show_output; return; }
    assert_grep -x "MPICC='$want'" "$b/config.log" "$name: AX_MPI chose $want"
    run_cmd -t 120 env -C "$b" "$@" make
    assert_rc 0 "$name: make builds hello with the substituted MPICC"
    run_cmd ldd "$b/hello"
    assert_grep -E "libmpi\.so.* => $mpi/\.libs/libmpi\.so" "$out" "$name: hello links Loom's libmpi"
    assert_no_grep -E "libopen-(pal|rte)|libmpi\.so\.40|libmpich" "$out" \
        "$name: hello links no Open MPI or MPICH library"
    run_job -n 2 "$b/hello"
    assert_rc 0 "$name: hello runs on 2 ranks under Loom's mpiexec"
    assert_grep -x "No Errors" "$out" "$name: hello says No Errors"
}

# 1. Loom's wrappers first in PATH (as `module load loom` does): AX_MPI's mpicc is Loom's
run_cmd env PATH="$mpi:$PATH" sh -c 'command -v mpicc'
assert_grep -x "$mpi/mpicc" "$out" "with Loom first in PATH, mpicc is Loom's"
check path mpicc PATH="$mpi:$PATH"

# 2. MPICC names Loom's wrapper, PATH untouched (whatever mpicc the system has stays first)
check mpicc-var "$mpi/mpicc" MPICC="$mpi/mpicc"
finish
