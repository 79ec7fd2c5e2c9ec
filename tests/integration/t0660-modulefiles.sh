#!/bin/bash
# t0660-modulefiles.sh - `make install` installs loom-info, its table, every man page and
# the environment modules (Tcl $(datadir)/modulefiles/loom/VERSION and Lmod VERSION.lua)
# naming the configured prefix; the Tcl file evaluates in tclsh and sets what it should;
# with Lmod (Debian's lmod package), `module load loom/VERSION` of each format puts the
# installed mpicc, mpiexec, libraries, pkg-config files (mpi.pc too: `pkg-config mpi`
# is Loom's) and man pages first and sets
# MPI_HOME, MPICC, MPICXX, MPIFC, and from that shell `mpicc --version` works, an MPI
# hello built with mpicc runs under mpiexec, loom-info reads its installed table, and
# `module unload` takes it all back.
# The install goes into a DESTDIR (libtool installs a build's libraries only under the
# configured prefix), so the modules loaded are copies with the prefix moved under the
# DESTDIR, which is what relocating an installation does; the installed files
# themselves are checked to name the configured prefix.
. "$(dirname "$0")/lib.sh"
command -v make >/dev/null || skip "make not installed"
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
for f in bin/loom-info share/loom/envvars.txt share/modulefiles/loom/$version \
    share/modulefiles/loom/$version.lua share/man/man1/mpicc.1 share/man/man1/loom-info.1 \
    share/man/man3/libpmi2.3 share/man/man3/libpmi.3 share/man/man7/loom-mpi.7 \
    share/man/man8/mpi_loom.8 bin/mpicc bin/mpiexec; do
    if [ -e "$p/$f" ]; then ok "installed $f"; else fail "$f not installed"; fi
done
tcl=$p/share/modulefiles/loom/$version
lua=$p/share/modulefiles/loom/$version.lua
libdir=$(dirname "$(find "$root" -name libmpi.so | head -n 1)")
libdir=${libdir#"$root"}
# mpi.pc (`pkg-config mpi`) is in Loom's own directory, which the modules add after
# libdir/pkgconfig when it is another one (configure --with-mpi-pcdir)
mpipcdir=$(dirname "$(find "$root" -name mpi.pc | head -n 1)")
mpipcdir=${mpipcdir#"$root"}
[ -f "$root$mpipcdir/mpi.pc" ] && ok "installed mpi.pc ($mpipcdir)" || fail "mpi.pc not installed"
pcpath=$libdir/pkgconfig
cfglibdir=$libdir
[ "$mpipcdir" = "$libdir/pkgconfig" ] || pcpath=$pcpath:$mpipcdir
[ "$_failures" -eq 0 ] || finish
assert_grep -x "table=\${LOOM_ENVVARS:-'$prefix/share/loom/envvars.txt'}" "$p/bin/loom-info" \
    "the installed loom-info reads the installed table"

# ---- the Tcl modulefile, evaluated by tclsh with the module commands recorded ----------
if command -v tclsh >/dev/null; then
    cat >"$TEST_TMP/eval.tcl" <<'TCL'
proc prepend-path {var val} { puts "prepend $var $val" }
proc setenv {var val} { puts "setenv $var $val" }
proc module-whatis {args} { puts "whatis $args" }
source [lindex $argv 0]
ModulesHelp
TCL
    run_cmd tclsh "$TEST_TMP/eval.tcl" "$tcl"
    assert_rc 0 "tclsh evaluates the Tcl modulefile"
    head -n 1 "$tcl" | grep -q '^#%Module' && ok "Tcl modulefile starts with #%Module" ||
        fail "Tcl modulefile lacks the #%Module magic line"
    for l in "prepend PATH $prefix/bin" "prepend MANPATH $prefix/share/man" \
        "prepend PKG_CONFIG_PATH $pcpath" "prepend LD_LIBRARY_PATH $libdir" \
        "setenv MPI_HOME $prefix" "setenv MPICC $prefix/bin/mpicc" \
        "setenv MPICXX $prefix/bin/mpicxx" "setenv MPIFC $prefix/bin/mpifort"; do
        assert_grep -x "$l" "$out" "Tcl: $l"
    done
    assert_grep "Loom $version" "$err" "Tcl: ModulesHelp names Loom $version"
else
    say "no tclsh: the Tcl modulefile is checked only through Lmod"
fi

# ---- Lmod: load each format, use the MPI, unload ---------------------------------------
init=$(ls /usr/share/lmod/lmod/init/bash /usr/share/lmod/*/init/bash 2>/dev/null | head -n 1)
[ -n "$init" ] || { say "Lmod not installed (apt-get install lmod): no module load test"; finish; }
mkdir -p "$TEST_TMP/mods-tcl/loom" "$TEST_TMP/mods-lua/loom"
# the copies that are loaded: the prefix moved under the DESTDIR
sed "s|$prefix|$p|g" "$tcl" >"$TEST_TMP/mods-tcl/loom/$version"
sed "s|$prefix|$p|g" "$lua" >"$TEST_TMP/mods-lua/loom/$version.lua"
assert_grep -x "setenv(\"MPI_HOME\", \"$prefix\")" "$lua" "Lmod file sets MPI_HOME to the prefix"
libdir=$root$libdir
cp "$LOOM_SRCDIR/tests/mpi/hello.c" "$TEST_TMP/hello.c"
cat >"$TEST_TMP/use.sh" <<'SH'
# use.sh MODDIR VERSION LIBDIR: load loom/VERSION from MODDIR in a clean Lmod and use it
set -u
cd "$(dirname "$0")" || exit 2
unset MODULEPATH LOADEDMODULES _LMFILES_ MPI_HOME MPICC MPICXX MPIFC
export LMOD_PAGER=none
. "$LMOD_INIT"
module use "$1"
module load "loom/$2" || { echo "module load failed"; exit 3; }
echo "loaded: $(module -t list 2>&1 | tr '\n' ' ')"
echo "mpicc=$(command -v mpicc)"
echo "mpiexec=$(command -v mpiexec)"
echo "MPI_HOME=$MPI_HOME"
echo "MPICC=$MPICC"
echo "MPICXX=$MPICXX"
echo "MPIFC=$MPIFC"
echo "PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
echo "MANPATH=$MANPATH"
echo "man=$(man -w mpi_loom 2>/dev/null)"
echo "pc=$(pkg-config --modversion loom-mpi)"
echo "pcmpi=$(pkg-config --modversion mpi) $(pkg-config --variable=libdir mpi)"
mpicc --version >version.out 2>&1 && echo "mpicc --version: rc 0, $(head -n 1 version.out)"
# (the wrapper names the configured prefix: the moved one's directories go first)
mpicc -I"$MPI_HOME/include" -L"$3" -o hello hello.c && mpiexec -n 2 ./hello >hello.out 2>&1 && echo "hello: $(tail -n 1 hello.out)"
echo "info=$(loom-info --parsable | grep '^prefix:')"
# (it names the configured prefix and reads the table there: point it at the moved one)
echo "infoenv=$(LOOM_ENVVARS=$MPI_HOME/share/loom/envvars.txt loom-info --env --parsable | grep -c '^var:')"
home=$MPI_HOME
module unload loom
# (Lmod also drops duplicate PATH entries: compare what the module added, not the whole)
case ":$PATH:${LD_LIBRARY_PATH:-}:${MANPATH:-}:${PKG_CONFIG_PATH:-}:" in
*"$home"*) echo "after unload: still in a path: $PATH ${LD_LIBRARY_PATH:-} ${MANPATH:-} ${PKG_CONFIG_PATH:-}" ;;
*) echo "after unload: no path names the prefix" ;;
esac
echo "after unload: MPI_HOME=${MPI_HOME:-unset} MPICC=${MPICC:-unset}"
SH
nrows=$(grep -v '^#' "$LOOM_SRCDIR/tools/envvars.txt" | grep -c '|')
for fmt in tcl lua; do
    run_cmd -t 120 env LMOD_INIT="$init" bash "$TEST_TMP/use.sh" "$TEST_TMP/mods-$fmt" "$version" "$libdir"
    assert_rc 0 "$fmt: the shell that loads the module"
    assert_grep "loaded: loom/$version" "$out" "$fmt: module load loom/$version"
    for l in "mpicc=$p/bin/mpicc" "mpiexec=$p/bin/mpiexec" "MPI_HOME=$p" "MPICC=$p/bin/mpicc" \
        "MPICXX=$p/bin/mpicxx" "MPIFC=$p/bin/mpifort" "man=$p/share/man/man8/mpi_loom.8" \
        "pc=$version" "pcmpi=$version $cfglibdir" "info=prefix:$prefix" "infoenv=$nrows" "hello: No Errors" \
        "after unload: no path names the prefix" "after unload: MPI_HOME=unset MPICC=unset"; do
        assert_grep -x "$l" "$out" "$fmt: $l"
    done
    assert_grep -E "^PKG_CONFIG_PATH=$libdir/pkgconfig(:|\$)" "$out" "$fmt: PKG_CONFIG_PATH starts with the prefix's"
    assert_grep -E "^LD_LIBRARY_PATH=$libdir(:|\$)" "$out" "$fmt: LD_LIBRARY_PATH starts with the prefix's libdir"
    assert_grep -E "^MANPATH=$p/share/man(:|\$)" "$out" "$fmt: MANPATH starts with the prefix's"
    assert_grep -E "^mpicc --version: rc 0, .+" "$out" "$fmt: mpicc --version from the module"
done
finish
