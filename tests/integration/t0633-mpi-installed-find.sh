#!/bin/bash
# t0633-mpi-installed-find.sh - build systems find an INSTALLED Loom (make install into a
# DESTDIR, as t0600) and not another MPI installed beside it (Debian's MPICH and Open
# MPI: /usr/bin/mpiexec and the system's mpi.pc name one of them):
#  - CMake's find_package(MPI COMPONENTS C): MPIEXEC_EXECUTABLE is Loom's installed
#    mpiexec with the installed bin first in PATH, and with MPI_C_COMPILER naming the
#    installed mpicc plus MPI_HOME (which the environment module sets).  FindMPI looks
#    for mpiexec in MPI_HOME, then PATH, before and apart from the compiler (never beside
#    MPI_C_COMPILER), so MPI_C_COMPILER alone finds the first mpiexec in PATH, for any
#    MPI: that case is shown in the log, not asserted.  The hello CMake built runs as
#    ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 through ctest.
#  - `pkg-config mpi` (and mpi-c, mpi-cxx, mpi-fort): Loom installs them in its own
#    directory (configure --with-mpi-pcdir; not one pkg-config searches by default), and
#    with that directory in PKG_CONFIG_PATH (what the module does) they give Loom's flags;
#    a hello built with $(pkg-config --cflags --libs mpi) runs under the installed mpiexec.
# The installed wrappers name the configured prefix: the test moves the copy it uses
# under the DESTDIR (relocating an installation), and pkg-config gets the DESTDIR as
# sysroot.  Skipped (77) without cmake and pkg-config.
. "$(dirname "$0")/lib.sh"
command -v make >/dev/null || skip "make not installed"
have_cmake=yes have_pc=yes
command -v cmake >/dev/null || have_cmake=no
command -v pkg-config >/dev/null || have_pc=no
[ $have_cmake = yes ] || [ $have_pc = yes ] || skip "neither cmake nor pkg-config installed"
[ -f "$LOOM_BUILDDIR/Makefile" ] || skip "no build tree at $LOOM_BUILDDIR"
[ -x "$LOOM_MPIEXEC" ] || skip "no mpiexec built (configured --with-pm=none?)"
[ -f "$LOOM_BUILDDIR/mpi/Makefile" ] || skip "no MPI library in this build"
cs() { sed -n "s/^S\[\"$1\"\]=\"\(.*\)\"\$/\1/p" "$LOOM_BUILDDIR/config.status"; }
version=$(cs PACKAGE_VERSION)
prefix=$(cs prefix)
[ -n "$version" ] && [ -n "$prefix" ] || fail "no version or prefix in config.status"

root=$TEST_TMP/root
run_cmd -t 600 make -s -C "$LOOM_BUILDDIR" install DESTDIR="$root"
assert_rc 0 "make install DESTDIR=..."
[ "$rc" -eq 0 ] || finish
p=$root$prefix
libdir=$(dirname "$(find "$root" -name libmpi.so | head -n 1)")
for f in "$p/bin/mpicc" "$p/bin/mpiexec" "$libdir/libmpi.so"; do
    [ -e "$f" ] && ok "installed ${f#"$root"}" || fail "${f#"$root"} not installed"
done
[ "$_failures" -eq 0 ] || finish
# the relocated copy: the installed mpicc names the configured prefix
sed -i "s|$prefix|$p|g" "$p/bin/mpicc"
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cp "$LOOM_SRCDIR/tests/mpi/hello.c" "$TEST_TMP/hello.c"

# ---- CMake's FindMPI ---------------------------------------------------------------------
if [ $have_cmake = yes ]; then
    src=$TEST_TMP/cm
    mkdir -p "$src"
    cp "$TEST_TMP/hello.c" "$src/"
    cat >"$src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.10)
project(loomexec C)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "loom: MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
message(STATUS "loom: MPI_C_COMPILER=${MPI_C_COMPILER}")
add_executable(c_hello hello.c)
target_link_libraries(c_hello MPI::MPI_C)
enable_testing()
add_test(NAME hello2 COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
    ${MPIEXEC_PREFLAGS} $<TARGET_FILE:c_hello> ${MPIEXEC_POSTFLAGS})
set_tests_properties(hello2 PROPERTIES PASS_REGULAR_EXPRESSION "No Errors")
CMAKE
    # cmake_case NAME ENV...: configure, build and ctest one copy; ENV as for env(1)
    cmake_case() {
        local name=$1 b=$TEST_TMP/cm-$1
        shift
        run_cmd -t 300 env -u CC -u MPI_HOME -u MPICC -u I_MPI_ROOT "$@" \
            LDFLAGS="-Wl,-rpath-link,$libdir" cmake -S "$src" -B "$b" "${cmake_args[@]}"
        assert_rc 0 "$name: cmake find_package(MPI COMPONENTS C)"
        [ "$rc" -eq 0 ] || { show_output; return; }
        assert_grep -E "^-- loom: MPIEXEC_EXECUTABLE=$p/bin/mpiexec\$" "$out" \
            "$name: MPIEXEC_EXECUTABLE is Loom's installed mpiexec (not /usr/bin/mpiexec)"
        assert_grep -E "^-- loom: MPI_C_COMPILER=$p/bin/mpicc\$" "$out" \
            "$name: MPI_C_COMPILER is Loom's installed mpicc"
        run_cmd -t 300 cmake --build "$b"
        assert_rc 0 "$name: cmake --build"
        run_cmd -t 120 env -C "$b" ctest --output-on-failure
        assert_rc 0 "$name: ctest runs \${MPIEXEC_EXECUTABLE} \${MPIEXEC_NUMPROC_FLAG} 2 c_hello: No Errors"
        [ "$rc" -eq 0 ] || show_output
    }
    # 1. the installed bin first in PATH (module load loom), nothing named
    cmake_args=()
    cmake_case path PATH="$p/bin:$PATH"
    # 2. MPI_C_COMPILER names the installed mpicc, MPI_HOME its prefix (as the module sets)
    cmake_args=(-DMPI_C_COMPILER="$p/bin/mpicc")
    cmake_case compiler+home MPI_HOME="$p"
    # 3. MPI_C_COMPILER alone: FindMPI takes the first mpiexec in PATH (not asserted)
    run_cmd -t 300 env -u MPI_HOME -u I_MPI_ROOT cmake -S "$src" -B "$TEST_TMP/cm-alone" \
        -DMPI_C_COMPILER="$p/bin/mpicc"
    say "MPI_C_COMPILER alone (no MPI_HOME, PATH unchanged): $(grep 'loom: MPIEXEC_EXECUTABLE' "$out")"
else
    say "cmake not installed: no FindMPI checks"
fi

# ---- pkg-config mpi ----------------------------------------------------------------------
if [ $have_pc = yes ]; then
    mpipc=$(find "$root" -name mpi.pc | head -n 1)
    [ -n "$mpipc" ] && ok "installed mpi.pc (${mpipc#"$root"})" || fail "mpi.pc not installed"
    [ -n "$mpipc" ] || finish
    pcdir=$(dirname "$mpipc")
    # never where pkg-config looks by default: there it would shadow the system's mpi.pc
    # (Debian's mpi alternative) for every user of the machine
    run_cmd env -u PKG_CONFIG_PATH pkg-config --variable pc_path pkg-config
    assert_rc 0 "pkg-config's default search path"
    assert_no_grep -x "${pcdir#"$root"}" <(tr ':' '\n' <"$out") \
        "mpi.pc's directory ${pcdir#"$root"} is not on pkg-config's default path"
    for n in mpi mpi-c mpi-cxx $([ -n "$(find "$root" -name libmpifort.so)" ] && echo mpi-fort); do
        run_cmd env PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --modversion "$n"
        assert_grep -x "$version" "$out" "pkg-config --modversion $n is Loom's $version"
    done
    run_cmd env PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --cflags --libs mpi
    assert_grep -E "^-I$root/[^ ]+ .*-L$libdir -lmpi" "$out" "pkg-config --cflags --libs mpi gives Loom's flags"
    flags=$(cat "$out")
    # shellcheck disable=SC2086
    run_cmd -t 120 ${CC:-cc} -o "$TEST_TMP/pc-hello" "$TEST_TMP/hello.c" $flags -Wl,-rpath-link,"$libdir"
    assert_rc 0 "compile hello.c with \$(pkg-config --cflags --libs mpi)"
    run_cmd ldd "$TEST_TMP/pc-hello"
    assert_grep -E "libmpi\.so.* => $libdir/libmpi\.so" "$out" "the pkg-config hello loads the installed libmpi"
    run_cmd "$p/bin/mpiexec" -n 2 "$TEST_TMP/pc-hello"
    assert_rc 0 "the pkg-config hello runs on 2 ranks under the installed mpiexec"
    assert_grep -x "No Errors" "$out" "the pkg-config hello says No Errors"
else
    say "pkg-config not installed: no pkg-config mpi checks"
fi
finish
