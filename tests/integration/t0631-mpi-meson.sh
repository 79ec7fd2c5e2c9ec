#!/bin/bash
# t0631-mpi-meson.sh - Meson's dependency('mpi') finds Loom's C, C++ and Fortran
# wrappers (build tree, mpi/mpiwrap.in) and not another MPI installed beside it (Debian's
# Open MPI here).  Meson (1.0) asks pkg-config for Open MPI's names only (ompi-c,
# ompi-cxx, ompi-fort), then the wrapper named by $MPICC / $MPICXX / $MPIFC (else mpicc,
# mpicxx, mpifort in PATH) with Open MPI's query options (--showme:version,
# --showme:compile, --showme:link), which Loom's wrappers answer; of the wrappers it
# finds it takes the one with the HIGHEST version, so every name it tries (mpicc; mpic++,
# mpicxx, mpiCC; mpifort, mpif90, mpif77) must be Loom's: Loom's directory goes first in
# PATH (as a user's environment module does) and $MPICC & co. name Loom's wrappers.  The
# project asks for method: 'config-tool' (the pkg-config step would find Open MPI's
# ompi-c.pc first on a machine that has it).  A C, a C++ and a Fortran 2008 program
# built by Meson run under Loom's mpiexec and link Loom's libmpi, no Open MPI library.
# Skipped (77) when meson is not installed.
. "$(dirname "$0")/lib.sh"
command -v meson >/dev/null || skip "meson not installed (Debian: apt-get install meson; scripts/deps.sh installs it)"
command -v ninja >/dev/null || skip "ninja not installed (meson's backend)"
mpi=$LOOM_BUILDDIR/mpi
[ -f "$mpi/.libs/libmpi.so" ] || skip "MPI library not built"
[ -f "$mpi/fortran-disabled" ] && skip "configured without a usable Fortran compiler"
need_mpiexec
for w in mpicc mpicxx mpic++ mpiCC mpifort mpif90 mpif77; do
    [ -x "$mpi/$w" ] || fail "no $mpi/$w"
done
[ "$_failures" -eq 0 ] || finish

# the query options Meson uses, by hand
run_cmd "$mpi/mpicc" --showme:version
assert_rc 0 "mpicc --showme:version"
assert_grep -E "Loom MPI [0-9]+\.[0-9]+\.[0-9]+" "$out" "mpicc --showme:version names Loom MPI and a version"
run_cmd "$mpi/mpifort" --showme:compile
assert_grep -E "^-I[^ ]+/include -I[^ ]+/fortran( -fallow-argument-mismatch)?\$" "$out" \
    "mpifort --showme:compile prints the include flags only (mpi.h, mpif.h and the modules; gfortran's -fallow-argument-mismatch)"
run_cmd "$mpi/mpifort" --showme:link
assert_grep -E "^-L[^ ]+ .*-lmpifort -lmpi\$" "$out" "mpifort --showme:link prints the library flags only"

src=$TEST_TMP/src
mkdir -p "$src"
cp "$LOOM_SRCDIR/tests/mpi/hello.c" "$LOOM_SRCDIR/tests/mpi/cxx_basic.cc" \
    "$LOOM_SRCDIR/tests/mpi/f_f08.f90" "$src/"
cat >"$src/meson.build" <<'MESON'
project('loomlangs', 'c', 'cpp', 'fortran')
mpi_c = dependency('mpi', language: 'c', method: 'config-tool')
mpi_cpp = dependency('mpi', language: 'cpp', method: 'config-tool')
mpi_f = dependency('mpi', language: 'fortran', method: 'config-tool')
message('loom: mpi c=' + mpi_c.version() + ' cpp=' + mpi_cpp.version() + ' fortran=' + mpi_f.version())
executable('c_hello', 'hello.c', dependencies: mpi_c)
executable('cxx_basic', 'cxx_basic.cc', dependencies: mpi_cpp)
executable('f_f08', 'f_f08.f90', dependencies: mpi_f)
MESON

# CC/CXX/FC unset: Meson picks the system compilers, the dependency brings the flags
run_cmd -t 300 env -u CC -u CXX -u FC -u MPIF90 -u MPIF77 PATH="$mpi:$PATH" \
    MPICC="$mpi/mpicc" MPICXX="$mpi/mpicxx" MPIFC="$mpi/mpifort" meson setup "$TEST_TMP/b" "$src"
assert_rc 0 "meson setup with dependency('mpi') for c, cpp and fortran"
for l in c cpp fortran; do
    assert_grep -i "dependency mpi for $l found: YES" "$out" "Meson found an MPI for $l"
done
v=$(sed -n 's/^\(.* \)\{0,1\}VERSION = \([0-9.]*\).*/\2/p' "$LOOM_BUILDDIR/Makefile" | head -n1)
assert_grep "loom: mpi c=$v cpp=$v fortran=$v" "$out" "Meson's MPI is Loom's (version $v from the wrappers) for all three"
run_cmd -t 300 ninja -C "$TEST_TMP/b"
assert_rc 0 "ninja builds the three programs"
for p in c_hello cxx_basic f_f08; do
    run_cmd ldd "$TEST_TMP/b/$p"
    assert_grep -E "libmpi\.so.* => $mpi/\.libs/libmpi\.so" "$out" "$p links Loom's libmpi"
    assert_no_grep -E "libopen-(pal|rte)|libmpi\.so\.40" "$out" "$p links no Open MPI library"
    run_job -n 3 "$TEST_TMP/b/$p"
    assert_grep -x "No Errors" "$out" "$p built by Meson says No Errors"
done
finish
