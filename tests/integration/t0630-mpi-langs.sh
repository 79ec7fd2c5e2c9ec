#!/bin/bash
# t0630-mpi-langs.sh - build systems find Loom's C, C++ and Fortran wrappers (build
# tree, mpi/mpiwrap.in): CMake's find_package(MPI COMPONENTS C CXX Fortran) given the
# wrappers as MPI_<LANG>_COMPILER, and again finding them first in PATH; mpif.h, USE mpi
# and USE mpi_f08 are detected, and a C, a C++ and a Fortran 2008 program built by CMake
# run under mpiexec.  Meson's dependency('mpi'): t0631-mpi-meson.sh.
. "$(dirname "$0")/lib.sh"
command -v cmake >/dev/null || skip "cmake not installed"
mpi=$LOOM_BUILDDIR/mpi
[ -f "$mpi/.libs/libmpi.so" ] || skip "MPI library not built"
[ -f "$mpi/fortran-disabled" ] && skip "configured without a usable Fortran compiler"
need_mpiexec
for w in mpicc mpicxx mpifort; do
    [ -x "$mpi/$w" ] && ok "build tree has $w" || fail "no $mpi/$w"
done
[ "$_failures" -eq 0 ] || finish

src=$TEST_TMP/src
mkdir -p "$src"
cat >"$src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.10)
project(loomlangs C CXX Fortran)
find_package(MPI REQUIRED COMPONENTS C CXX Fortran)
message(STATUS "loom: F77_HEADER=\${MPI_Fortran_HAVE_F77_HEADER} F90_MODULE=\${MPI_Fortran_HAVE_F90_MODULE} F08_MODULE=\${MPI_Fortran_HAVE_F08_MODULE}")
message(STATUS "loom: MPI_Fortran_LIBRARIES=\${MPI_Fortran_LIBRARIES}")
add_executable(c_hello $LOOM_SRCDIR/tests/mpi/hello.c)
target_link_libraries(c_hello MPI::MPI_C)
add_executable(cxx_basic $LOOM_SRCDIR/tests/mpi/cxx_basic.cc)
target_link_libraries(cxx_basic MPI::MPI_CXX)
add_executable(f_f08 $LOOM_SRCDIR/tests/mpi/f_f08.f90)
target_link_libraries(f_f08 MPI::MPI_Fortran)
CMAKE

# 1. the wrappers named explicitly; CC/CXX/FC unset so that CMake picks the system ones
run_cmd -t 300 env -u CC -u CXX -u FC cmake -S "$src" -B "$TEST_TMP/b1" \
    -DMPI_C_COMPILER="$mpi/mpicc" -DMPI_CXX_COMPILER="$mpi/mpicxx" \
    -DMPI_Fortran_COMPILER="$mpi/mpifort"
assert_rc 0 "cmake find_package(MPI COMPONENTS C CXX Fortran) with MPI_<LANG>_COMPILER"
assert_grep "found components: C CXX Fortran" "$out" "FindMPI found C, CXX and Fortran"
assert_grep "F77_HEADER=TRUE F90_MODULE=TRUE F08_MODULE=TRUE" "$out" \
    "FindMPI sees mpif.h, USE mpi and USE mpi_f08"
assert_grep -E "MPI_Fortran_LIBRARIES=.*libmpifort.so;.*libmpi.so" "$out" \
    "FindMPI links libmpifort and libmpi"
run_cmd -t 300 cmake --build "$TEST_TMP/b1"
assert_rc 0 "cmake --build"
for p in c_hello cxx_basic f_f08; do
    run_job -n 3 "$TEST_TMP/b1/$p"
    assert_grep -x "No Errors" "$out" "$p built by CMake says No Errors"
done

# 2. the wrappers (and mpiexec: FindMPI looks beside the first mpiexec first) first in
# PATH, nothing named
run_cmd -t 300 env -u CC -u CXX -u FC PATH="$(dirname "$LOOM_MPIEXEC"):$mpi:$PATH" \
    cmake -S "$src" -B "$TEST_TMP/b2"
assert_rc 0 "cmake find_package(MPI) with the wrappers first in PATH"
assert_grep "Found MPI_Fortran: $mpi/.libs/libmpifort.so" "$out" \
    "FindMPI found Loom's Fortran library through PATH"

# 3. pkg-config files of the build tree are checked by t0600 (installed); Meson by t0631
finish
