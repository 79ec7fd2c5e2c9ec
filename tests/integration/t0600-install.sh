#!/bin/bash
# t0600-install.sh - `make install` (into a DESTDIR) installs what users build against:
# mpiexec, libpmi2.so.0, libpmi.so.0, pmi2.h, pmi.h, the pkg-config files, the man page;
# a PMI-2 and a PMI-1 program built from the installed headers and pkg-config flags
# alone run under the installed mpiexec; with the MPI library: mpi.h, libmpi, mpicc
# (whose -show/-compile-info/-link-info name the installed paths) and loom-mpi.pc, and
# an MPI hello built from them runs; mpicxx/mpic++ (and with a Fortran compiler
# mpifort/mpif77/mpif90, mpif.h, mpi.mod, mpi_f08.mod, loom-mpi-fort.pc) likewise.
. "$(dirname "$0")/lib.sh"
command -v make >/dev/null || skip "make not installed"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
[ -f "$LOOM_BUILDDIR/Makefile" ] || skip "no build tree at $LOOM_BUILDDIR"
[ -x "$LOOM_MPIEXEC" ] || skip "no mpiexec built (configured --with-pm=none?)"

dest=$TEST_TMP/root
run_cmd -t 300 make -s -C "$LOOM_BUILDDIR" install DESTDIR="$dest"
assert_rc 0 "make install DESTDIR=..."

# where is each file?  (prefix and libdir are whatever configure chose)
find_one() { find "$dest" -path "*/$1" \( -type f -o -type l \) | head -n1; }
for f in bin/mpiexec libpmi2.so.0 libpmi.so.0 include/pmi2.h include/pmi.h \
    pkgconfig/loom-pmi2.pc pkgconfig/loom-pmi.pc man1/mpiexec.1; do
    p=$(find_one "$f")
    if [ -n "$p" ]; then ok "installed $f (${p#"$dest"})"; else fail "$f not installed"; fi
done
mpiexec=$(find_one bin/mpiexec)
pcdir=$(dirname "$(find_one pkgconfig/loom-pmi2.pc)")
libdir=$(dirname "$(find_one libpmi2.so.0)")
[ "$_failures" -eq 0 ] || finish

# the libraries export the PMI API (and the loader finds it by soname)
for sym in PMI2_Init PMI2_KVS_Fence PMIX_Ring; do
    assert_grep -x "$sym" <(nm -D --defined-only "$libdir/libpmi2.so.0" | awk '{ print $3 }') \
        "libpmi2.so.0 exports $sym"
done
assert_grep -x PMI_Barrier <(nm -D --defined-only "$libdir/libpmi.so.0" | awk '{ print $3 }') \
    "libpmi.so.0 exports PMI_Barrier"

# build against the installed tree only: pkg-config with the DESTDIR as sysroot
export PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$dest
src=$LOOM_SRCDIR/tests/programs
for pc in loom-pmi2 loom-pmi; do
    case $pc in loom-pmi2) main=pmi2_kvstest.c ;; *) main=pmi1_kvstest.c ;; esac
    # shellcheck disable=SC2046
    run_cmd -t 120 ${CC:-cc} -o "$TEST_TMP/$pc-test" -I"$src" "$src/$main" "$src/kvstest_util.c" \
        $(pkg-config --cflags --libs "$pc")
    assert_rc 0 "compile $main with \$(pkg-config --cflags --libs $pc)"
    LD_LIBRARY_PATH=$libdir run_cmd "$mpiexec" -n 4 "$TEST_TMP/$pc-test"
    assert_kvstest 4
    assert_grep "$libdir/lib" <(LD_LIBRARY_PATH=$libdir ldd "$TEST_TMP/$pc-test") \
        "the $pc test program loads the installed library"
done

# the MPI library (built unless --with-pm=none ... it is built with the launcher here)
if [ -f "$LOOM_BUILDDIR/mpi/Makefile" ] && [ -n "$(find_one libmpi.so)" ]; then
    for f in bin/mpicc include/mpi.h pkgconfig/loom-mpi.pc; do
        p=$(find_one "$f")
        if [ -n "$p" ]; then ok "installed $f (${p#"$dest"})"; else fail "$f not installed"; fi
    done
    mpicc=$(find_one bin/mpicc)
    incdir=$(dirname "$(find_one include/mpi.h)"); incdir=${incdir#"$dest"}
    mlibdir=$(dirname "$(find_one libmpi.so)"); mlibdir=${mlibdir#"$dest"}
    # -show alone prints the whole command, as MPICH's and Open MPI's wrappers do
    run_cmd env LOOM_MPICC_CC=cc sh "$mpicc" -show
    assert_rc 0 "mpicc -show (no input files)"
    assert_grep "cc -I$incdir " "$out" "mpicc -show names the installed include dir"
    assert_grep -E "-L$mlibdir .*-lmpi\$" "$out" "mpicc -show links the installed libmpi"
    run_cmd env LOOM_MPICC_CC=cc sh "$mpicc" -show -c x.c
    assert_no_grep "-lmpi" "$out" "mpicc -show -c does not link"
    run_cmd env LOOM_MPICC_CC=cc sh "$mpicc" -compile-info
    assert_grep -x "cc -I$incdir" "$out" "mpicc -compile-info"
    assert_grep -E "^cc .*hello.c" <(LOOM_MPICC_CC=cc sh "$mpicc" -show hello.c) "mpicc honours LOOM_MPICC_CC"
    # shellcheck disable=SC2046
    run_cmd -t 120 ${CC:-cc} -o "$TEST_TMP/mpi-hello" "$LOOM_SRCDIR/tests/mpi/hello.c" \
        $(pkg-config --cflags --libs loom-mpi) -Wl,-rpath-link,"$libdir"
    assert_rc 0 "compile tests/mpi/hello.c with \$(pkg-config --cflags --libs loom-mpi)"
    LD_LIBRARY_PATH=$dest$mlibdir:$libdir run_cmd "$mpiexec" -n 4 "$TEST_TMP/mpi-hello"
    assert_rc 0 "installed MPI hello runs on 4 ranks"
    assert_grep -x "No Errors" "$out" "installed MPI hello says No Errors"
fi

# ---- C++ and Fortran (mpi/mpiwrap.in, libmpifort): the installed wrappers, headers,
# modules and pkg-config files; programs built from the installed tree run
if [ -f "$LOOM_BUILDDIR/mpi/Makefile" ] && [ -n "$(find_one libmpi.so)" ]; then
    for f in bin/mpicxx bin/mpic++ pkgconfig/loom-mpi-cxx.pc; do
        p=$(find_one "$f")
        if [ -n "$p" ]; then ok "installed $f (${p#"$dest"})"; else fail "$f not installed"; fi
    done
    mpicxx=$(find_one bin/mpicxx)
    run_cmd sh "$mpicxx" -show x.cc
    assert_grep -E "^[^ ]+ -I$incdir x.cc -L$mlibdir .*-lmpi\$" "$out" \
        "mpicxx -show names the installed include and library dirs"
    run_cmd env CXX=false LOOM_MPICXX_CXX=clang++ sh "$mpicxx" -compile-info
    assert_grep -x "clang++ -I$incdir" "$out" "mpicxx: LOOM_MPICXX_CXX wins, CXX is ignored"
    run_cmd env MPICH_CXX=my-g++ sh "$mpicxx" -link-info
    assert_grep -E "^my-g\+\+ -L$mlibdir " "$out" "mpicxx honours MPICH_CXX"
    run_cmd env LOOM_MPICXX_CXX="$mpicxx" sh "$mpicxx" -c x.cc
    assert_rc 1 "mpicxx refuses to call itself"
    assert_grep "would call itself" "$err" "mpicxx says why it refuses"
    if command -v "${CXX:-g++}" >/dev/null; then
        # shellcheck disable=SC2046
        run_cmd -t 120 "${CXX:-g++}" -std=c++11 -Wall -Wextra -pedantic -Werror \
            -o "$TEST_TMP/cxx-basic" "$LOOM_SRCDIR/tests/mpi/cxx_basic.cc" \
            $(pkg-config --cflags --libs loom-mpi-cxx) -Wl,-rpath-link,"$libdir"
        assert_rc 0 "compile tests/mpi/cxx_basic.cc with \$(pkg-config --cflags --libs loom-mpi-cxx)"
        LD_LIBRARY_PATH=$dest$mlibdir:$libdir run_cmd "$mpiexec" -n 3 "$TEST_TMP/cxx-basic"
        assert_grep -x "No Errors" "$out" "installed C++ program says No Errors"
    fi
    if [ -n "$(find_one libmpifort.so)" ]; then
        for f in bin/mpifort bin/mpif77 bin/mpif90 include/mpif.h include/mpi.mod \
            include/mpi_f08.mod pkgconfig/loom-mpi-fort.pc; do
            p=$(find_one "$f")
            if [ -n "$p" ]; then ok "installed $f (${p#"$dest"})"; else fail "$f not installed"; fi
        done
        run_cmd sh "$(find_one bin/mpifort)" -show x.f90
        assert_grep -E "^[^ ]+ -I$incdir( -fallow-argument-mismatch)? x.f90 -L$mlibdir .*-lmpifort -lmpi\$" "$out" \
            "mpifort -show links libmpifort then libmpi"
        run_cmd env FC=false LOOM_MPIFORT_FC=mpif90 sh "$(find_one bin/mpif77)" x.f
        assert_rc 1 "mpif77 refuses a wrapper as its compiler"
        fc=gfortran
        if command -v $fc >/dev/null; then
            for t in f_f08.f90 f_mpi.F90 f_fixed.f; do
                # shellcheck disable=SC2046
                # -J: the module files a program defines (f_f08's f08_userop.mod) go to
                # the test's directory, not the build tree (distcheck's distclean)
                run_cmd -t 120 $fc -J "$TEST_TMP" -o "$TEST_TMP/${t%.*}" "$LOOM_SRCDIR/tests/mpi/$t" \
                    $(pkg-config --cflags --libs loom-mpi-fort) -Wl,-rpath-link,"$libdir"
                assert_rc 0 "compile tests/mpi/$t with the installed mpif.h/modules (pkg-config loom-mpi-fort)"
                LD_LIBRARY_PATH=$dest$mlibdir:$libdir run_cmd "$mpiexec" -n 2 "$TEST_TMP/${t%.*}"
                assert_grep -x "No Errors" "$out" "installed Fortran program ${t%.*} says No Errors"
            done
        fi
    fi
fi
finish
