#!/bin/bash
# t0680-debs.sh - the Debian packages of debian/, end to end on this machine (root only):
# scripts/deb.sh builds them (DEB_BUILD_OPTIONS="nocheck parallel=2") in a copy of the tree
# and rebuilds that copy as a newer version without cleaning (the upgrade); lintian has no
# error or warning about them; apt installs the first build (the opt-in drop-in too);
# an MPI hello built with the installed mpicc.loom runs under the installed mpiexec.loom -n 2
# and loads Loom's libmpi and libpmi2 from the private directory, while the loader's cache
# still gives every other program Slurm's libpmi2; with the installed module loaded (Lmod),
# CMake's find_package(MPI) finds Loom's private mpiexec and mpicc, not the system's, and
# the hello it builds runs under that mpiexec -n 2; on a private one-node cluster
# (tests/slurm/cluster.sh, Debian's PluginDir) srun --mpi=loom runs it from the installed
# mpi_loom.so and srun --mpi=pmi2 is served by the drop-in; the mpi and mpirun
# alternatives list the .loom links beside MPICH's and Open MPI's; apt upgrades to the
# second build and the job runs again; purging leaves nothing behind: no package files,
# the alternatives and diversions as they were, Slurm's own mpi_pmi2.so and libpmi2
# byte for byte as before.
# LOOM_DEB_DIR=DIR builds there (kept) instead of in the test's temporary directory.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (installs packages with apt and dpkg)"
[ "$LOOM_TEST_QUICK" = 1 ] && skip "LOOM_TEST_QUICK=1 (distcheck): the packages are built and tested by the full run"
for c in dpkg-buildpackage dh lintian apt-get; do
    command -v $c >/dev/null || skip "$c not installed (scripts/deps.sh installs it)"
done
[ -f "$LOOM_SRCDIR/debian/rules" ] || skip "no debian/ in $LOOM_SRCDIR"
[ -f "$LOOM_BUILDDIR/config.status" ] || skip "no build tree at $LOOM_BUILDDIR"
ssrc=$(sed -n 's/^S\["SLURM_SRC"\]="\(.*\)"$/\1/p' "$LOOM_BUILDDIR/config.status")
[ -n "$ssrc" ] || skip "this build has no Slurm plugin (no Slurm source to build the packages with)"
dpkg-query -W -f='${Version}\n' slurm-wlm-basic-plugins >/dev/null 2>&1 ||
    skip "Debian's Slurm (slurm-wlm-basic-plugins) is not installed"
pkgs="loom-slurm-plugin loom-slurm-pmi2-dropin libloom-pmi0 libloom-mpi0 loom-mpi libloom-dev"
for p in $pkgs; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    case $st in '' | not-installed) ;; *) skip "package $p is installed here ($st): not touching it" ;; esac
done

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
sdir=/usr/lib/$ma/slurm-wlm
APT=(apt-get -y -q --no-install-recommends -o DPkg::Lock::Timeout=600)
export DEBIAN_FRONTEND=noninteractive

# ---- what must be the same after the purge -------------------------------------------
snap() {
    local s=$1
    mkdir -p "$s"
    for a in mpi mpirun; do
        cat "/var/lib/dpkg/alternatives/$a" >"$s/alt-$a" 2>/dev/null || echo none >"$s/alt-$a"
    done
    dpkg-divert --list | sort >"$s/diversions"
    ls -A "$sdir" >"$s/plugindir"
    for f in "$sdir/mpi_pmi2.so" "$(readlink -f "/usr/lib/$ma/libpmi2.so.0")"; do
        [ -f "$f" ] && md5sum "$f"
    done >"$s/md5"
    ldconfig -p | grep -E 'libpmi2?\.so|libmpi\.so' | sort >"$s/ldcache"
    ls -d /usr/bin/*.loom /usr/lib/"$ma"/loom /usr/include/"$ma"/loom \
        /usr/share/modulefiles/loom 2>/dev/null >"$s/ours" || true
}
snap "$TEST_TMP/before"

cluster=
installed=0
debs_cleanup() {
    [ -n "$cluster" ] && bash "$LOOM_SRCDIR/tests/slurm/cluster.sh" stop "$cluster" >/dev/null 2>&1
    cluster=
    if [ "$installed" -eq 1 ]; then
        # shellcheck disable=SC2086
        "${APT[@]}" purge $pkgs >/dev/null 2>&1
        installed=0
    fi
}
trap 'debs_cleanup; _cleanup' EXIT

# ---- build, rebuild as the next version ----------------------------------------------
debdir=${LOOM_DEB_DIR:-$TEST_TMP/deb}
export LOOM_SLURM_SOURCE=$ssrc DEB_BUILD_OPTIONS="nocheck parallel=2"
run_cmd -t 5400 bash "$LOOM_SRCDIR/scripts/deb.sh" "$debdir"
assert_rc 0 "scripts/deb.sh builds the packages"
[ "$rc" -eq 0 ] || { tail -n 40 "$err"; finish; }
v1dir=$(tail -n 1 "$out")
v1=$(basename "$v1dir")
say "built $v1 in $elapsed s"
v2=$v1+t1
LOOM_DEB_REUSE=1 LOOM_DEB_VERSION=$v2 run_cmd -t 1800 bash "$LOOM_SRCDIR/scripts/deb.sh" "$debdir"
assert_rc 0 "scripts/deb.sh rebuilds the same tree as $v2 (no clean)"
[ "$rc" -eq 0 ] || { tail -n 40 "$err"; finish; }
v2dir=$(tail -n 1 "$out")
say "rebuilt as $v2 in $elapsed s"
for d in "$v1dir" "$v2dir"; do
    for p in $pkgs; do
        n=$(find "$d" -maxdepth 2 -name "${p}_*.deb" | wc -l)
        assert_eq "$n" 1 "$(basename "$d"): one ${p}_*.deb"
    done
done
[ "$_failures" -eq 0 ] || finish

# what goes where
c() { dpkg-deb -c "$(find "$v1dir" -name "$1_*.deb")" | awk '{ print $6 }' | sed 's|^\./|/|'; }
assert_grep -x "$sdir/mpi_loom.so" <(c loom-slurm-plugin) "mpi_loom.so in Debian's Slurm PluginDir"
assert_no_grep "mpi_pmi2" <(c loom-slurm-plugin) "loom-slurm-plugin has no mpi_pmi2.so"
assert_grep -x "$sdir/mpi_pmi2.so" <(c loom-slurm-pmi2-dropin) "the drop-in package has mpi_pmi2.so"
assert_eq "$(ls "$v1dir"/opt-in)" "$(basename "$v1dir"/opt-in/loom-slurm-pmi2-dropin_*.deb)" \
    "the drop-in alone in opt-in/ (apt install DIR/*.deb leaves it out)"
assert_grep -x "/usr/lib/$ma/loom/libpmi2.so.0" <(c libloom-pmi0) "libpmi2.so.0 in the private directory"
assert_no_grep -E "^/usr/lib/$ma/libpmi" <(c libloom-pmi0) "nothing beside Slurm's libpmi2/libpmi"
assert_grep -x "/usr/include/$ma/loom/mpi.h" <(c libloom-dev) "mpi.h in the -dev package"
assert_grep -x "/usr/lib/$ma/loom/pkgconfig/mpi.pc" <(c libloom-dev) \
    "mpi.pc (pkg-config mpi after module load loom) in the private pkg-config directory"
for p in $pkgs; do
    assert_no_grep -E "^/usr/(lib/$ma|lib|share)/pkgconfig/" <(c "$p") \
        "$p puts nothing in the system's pkg-config directories (mpi.pc there is Debian's mpi alternative's)"
done
assert_grep -x "/usr/share/modulefiles/loom/${v1%%-*}.lua" <(c loom-mpi) "the Lmod module in loom-mpi"

# lintian: nothing above info (each override in debian/*.lintian-overrides says why)
run_cmd -t 900 lintian --fail-on error,warning "$v1dir"/*.deb "$v1dir"/opt-in/*.deb
assert_rc 0 "lintian: no error or warning"
grep -E '^[EW]: ' "$out" | head -n 20

# ---- install the first build ------------------------------------------------------------
slurm_pmi2_md5=$(md5sum <"$sdir/mpi_pmi2.so")
installed=1
run_cmd -t 900 "${APT[@]}" install "$v1dir"/*.deb "$v1dir"/opt-in/*.deb
assert_rc 0 "apt-get install ./*.deb ($v1)"
[ "$rc" -eq 0 ] || { show_output; finish; }
for p in $pkgs; do
    assert_eq "$(dpkg-query -W -f='${Version}' "$p")" "$v1" "$p installed"
done
assert_grep -x "$sdir/mpi_pmi2.so.slurm-wlm" <(dpkg-divert --truename "$sdir/mpi_pmi2.so") \
    "the drop-in diverts Slurm's mpi_pmi2.so"
assert_eq "$(md5sum <"$sdir/mpi_pmi2.so.slurm-wlm")" "$slurm_pmi2_md5" \
    "Slurm's mpi_pmi2.so kept, byte for byte, under its diverted name"
assert_grep -x "/usr/bin/mpicc.loom - priority 30" <(update-alternatives --display mpi) \
    "mpicc.loom in the mpi alternative"
assert_grep -x "/usr/bin/mpirun.loom - priority 30" <(update-alternatives --display mpirun) \
    "mpirun.loom in the mpirun alternative"
assert_grep -x "  slave mpiexec: /usr/bin/mpiexec.loom" <(update-alternatives --display mpirun) \
    "mpiexec.loom a slave of it"

hello() { # hello TAG: build tests/mpi/hello.c with the installed mpicc.loom, run it -n 2
    run_cmd -t 120 /usr/bin/mpicc.loom -o "$TEST_TMP/hello-$1" "$LOOM_SRCDIR/tests/mpi/hello.c"
    assert_rc 0 "$1: mpicc.loom builds hello.c"
    run_cmd /usr/bin/mpiexec.loom -n 2 "$TEST_TMP/hello-$1"
    assert_rc 0 "$1: mpiexec.loom -n 2 hello"
    assert_grep -x "No Errors" "$out" "$1: hello says No Errors"
}
hello v1
ldd "$TEST_TMP/hello-v1" >"$TEST_TMP/ldd"
assert_grep -E "libmpi\.so\.0 => /usr/lib/$ma/loom/libmpi\.so\.0" "$TEST_TMP/ldd" "hello loads Loom's libmpi"
assert_grep -E "libpmi2\.so\.0 => /usr/lib/$ma/loom/libpmi2\.so\.0" "$TEST_TMP/ldd" \
    "hello loads Loom's libpmi2 (run path), not Slurm's"
assert_no_grep "/loom/" <(ldconfig -p) "the loader's cache has no Loom library: others keep Slurm's libpmi2"
run_cmd /usr/bin/loom-info --parsable
assert_grep -x "version:${v1%%-*}" "$out" "the installed loom-info runs"

# CMake's FindMPI with the installed module loaded (Lmod, as t0660): it looks for mpiexec
# in $MPI_HOME/bin before PATH, so the module's MPI_HOME is the private directory, whose
# bin/ holds mpiexec and the wrappers (MPI_HOME=/usr would give /usr/bin/mpiexec, the
# system's mpirun alternative: another MPI)
home=/usr/lib/$ma/loom
init=$(ls /usr/share/lmod/lmod/init/bash /usr/share/lmod/*/init/bash 2>/dev/null | head -n 1)
if [ -z "$init" ] || ! command -v cmake >/dev/null; then
    say "no Lmod or no cmake: FindMPI with the installed module not checked"
else
    mkdir -p "$TEST_TMP/cm"
    cp "$LOOM_SRCDIR/tests/mpi/hello.c" "$TEST_TMP/cm/"
    cat >"$TEST_TMP/cm/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.10)
project(loomdeb C)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "loom: MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
message(STATUS "loom: MPI_C_COMPILER=${MPI_C_COMPILER}")
add_executable(c_hello hello.c)
target_link_libraries(c_hello MPI::MPI_C)
CMAKE
    cat >"$TEST_TMP/cmake.sh" <<'SH'
# cmake.sh SRC BUILD: load the installed loom module in a clean Lmod, configure and build
set -u
unset MODULEPATH LOADEDMODULES _LMFILES_ MPI_HOME MPICC MPICXX MPIFC CC I_MPI_ROOT
export LMOD_PAGER=none
. "$LMOD_INIT"
module use /usr/share/modulefiles
module load loom || { echo "module load failed"; exit 3; }
echo "MPI_HOME=$MPI_HOME"
cmake -S "$1" -B "$2" && cmake --build "$2"
SH
    run_cmd -t 300 env LMOD_INIT="$init" bash "$TEST_TMP/cmake.sh" "$TEST_TMP/cm" "$TEST_TMP/cm-build"
    assert_rc 0 "module load loom; cmake find_package(MPI REQUIRED COMPONENTS C) and build"
    [ "$rc" -eq 0 ] || show_output
    assert_grep -x "MPI_HOME=$home" "$out" "the installed module sets MPI_HOME=$home"
    assert_grep -E "^-- loom: MPIEXEC_EXECUTABLE=$home/bin/mpiexec\$" "$out" \
        "FindMPI: MPIEXEC_EXECUTABLE is Loom's private mpiexec (not /usr/bin/mpiexec)"
    assert_grep -E "^-- loom: MPI_C_COMPILER=$home/bin/mpicc\$" "$out" \
        "FindMPI: MPI_C_COMPILER is Loom's private mpicc"
    grep -E '^(MPI_HOME=|-- loom: )' "$out"
    cmexec=$(sed -n 's/^-- loom: MPIEXEC_EXECUTABLE=//p' "$out")
    if [ -n "$cmexec" ] && [ -x "$TEST_TMP/cm-build/c_hello" ]; then
        run_cmd -t 120 "$cmexec" -n 2 "$TEST_TMP/cm-build/c_hello"
        assert_rc 0 "\${MPIEXEC_EXECUTABLE} -n 2 c_hello"
        assert_grep -x "No Errors" "$out" "the CMake hello says No Errors"
    else
        fail "no MPIEXEC_EXECUTABLE or no c_hello built"
    fi
fi

# srun through the installed plugins, on a private one-node cluster with Debian's PluginDir
cluster=$TEST_TMP/cluster
mkdir -p "$cluster"
run_cmd -t 180 bash "$LOOM_SRCDIR/tests/slurm/cluster.sh" start "$cluster" -N 1 -c 4
if [ "$rc" -eq 77 ]; then
    say "no cluster: $(tail -n 1 "$err")"
    cluster=
elif [ "$rc" -ne 0 ]; then
    fail "tests/slurm/cluster.sh start"
    show_output
    cluster=
else
    eval "$(cat "$out")"
    printf 'LoomDebug=info\n' >"$cluster/mpi.conf"
    bash "$LOOM_SRCDIR/tests/slurm/cluster.sh" reconfigure "$cluster" >/dev/null 2>&1
    run_cmd -t 120 srun --mpi=loom -n 2 "$TEST_TMP/hello-v1"
    assert_rc 0 "srun --mpi=loom -n 2 hello (the installed mpi_loom.so)"
    assert_grep -x "No Errors" "$out" "srun --mpi=loom: No Errors"
    run_cmd -t 120 srun --mpi=pmi2 -n 2 "$TEST_TMP/hello-v1"
    assert_rc 0 "srun --mpi=pmi2 -n 2 hello (the drop-in)"
    if grep -qF 'mpi/pmi2(loom)' "$cluster"/log/*.log 2>/dev/null; then
        ok "--mpi=pmi2 served by the installed drop-in (mpi/pmi2(loom) in the node log)"
    else
        fail "no mpi/pmi2(loom) line in the node logs: --mpi=pmi2 not served by the drop-in"
    fi
    bash "$LOOM_SRCDIR/tests/slurm/cluster.sh" stop "$cluster" >/dev/null 2>&1
    cluster=
fi

# ---- upgrade to the second build ----------------------------------------------------------
run_cmd -t 900 "${APT[@]}" install "$v2dir"/*.deb "$v2dir"/opt-in/*.deb
assert_rc 0 "apt-get install ./*.deb ($v2, upgrade)"
for p in $pkgs; do
    assert_eq "$(dpkg-query -W -f='${Version}' "$p")" "$v2" "$p upgraded"
done
assert_grep -x "$sdir/mpi_pmi2.so.slurm-wlm" <(dpkg-divert --truename "$sdir/mpi_pmi2.so") \
    "the diversion survives the upgrade"
assert_grep -x "/usr/bin/mpicc.loom - priority 30" <(update-alternatives --display mpi) \
    "mpicc.loom still in the mpi alternative after the upgrade"
hello v2

# ---- purge: nothing left behind -----------------------------------------------------------
# shellcheck disable=SC2086
run_cmd -t 900 "${APT[@]}" purge $pkgs
assert_rc 0 "apt-get purge (all six)"
installed=0
for p in $pkgs; do
    if dpkg -L "$p" >/dev/null 2>&1; then fail "dpkg -L $p still lists files"; else ok "dpkg -L $p: nothing"; fi
done
snap "$TEST_TMP/after"
for f in alt-mpi alt-mpirun diversions plugindir md5 ldcache ours; do
    if cmp -s "$TEST_TMP/before/$f" "$TEST_TMP/after/$f"; then
        ok "after the purge, $f as before"
    else
        fail "after the purge, $f differs:"
        diff "$TEST_TMP/before/$f" "$TEST_TMP/after/$f" | head -n 10
    fi
done
finish
