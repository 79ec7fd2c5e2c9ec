#!/bin/bash
# tests/mpich/run.sh - measure Loom's libmpi with MPICH's own test suite (test/mpi of
# Debian's mpich source package), against Debian's MPICH as the reference.
#
# Owns: fetching MPICH's source at test time (apt-get source, never committed), the
# two standalone configurations of test/mpi (Loom's build tree: its mpicc and mpiexec;
# Debian's MPICH: mpicc.mpich, mpiexec.mpich), running MPICH's runtests per directory
# with a per-test timeout, and handing the JUnit files to report.py, which prints the
# per-directory table and compares with tests/mpich/expected-fail.
#
# Usage: tests/mpich/run.sh [--quick] [--dirs "init pt2pt ..."] [--build DIR]
#          [--cache DIR] [--out DIR] [--timeout SECS] [--mpich auto|run|skip]
#          [--lists testlist[,testlist.dtp]] [--write-expected]
#   --quick       only the tests listed in tests/mpich/quick (the CI subset), Loom only
#   --dirs        directories of test/mpi (default: the 13 of the full comparison);
#                 io and cxx are accepted too (issue 22): a run naming either of them
#                 configures its own suites (build-<name>-iocxx) with MPI-IO and C++
#                 enabled and the C++ wrappers (mpicxx, mpicxx.mpich) as MPICXX
#                 the Fortran ones (f77 f90 f08) run in a second configuration of the
#                 suite with Fortran on (the wrappers mpif77 and mpifort beside mpicc);
#                 a list naming one of them runs all its directories in that one
#   --build       Loom's build directory (default: $LOOM_BUILD_DIR or build)
#   --cache       where MPICH's source and the configured suites live (default:
#                 $LOOM_MPICH_CACHE, else /var/cache/loom/mpich when writable, else
#                 ${XDG_CACHE_HOME:-~/.cache}/loom/mpich)
#   --out         results (default: <build>/mpich-suite, or <build>/mpich-suite-quick)
#   --timeout     seconds per test (default 60; a testlist timeLimit above it is cut
#                 to it, one below it is kept)
#   --mpich       reference run: auto (default: reuse the cached results for a
#                 directory, run it when there are none), run (always), skip
#   --fetch-only  only make sure MPICH's source is in the cache; print test/mpi's path
#   --loom        run (default), or skip: no Loom run, report the results in --out
#                 (and MPICH's cached ones; with --mpich run: run only the reference,
#                 which may go at once with a Loom run)
#   --write-expected  rewrite tests/mpich/expected-fail from this run (keeps the
#                 reasons already written for tests that still fail)
# Exit: 0 no regression; 1 a test fails on Loom that expected-fail does not list (MPICH
# passes it, or MPICH was not run), or the harness broke; 77 MPICH's source cannot be
# had (no network, no apt) or Loom is not built.
# Runs under nice -n 10 (re-executes itself so), one test at a time.
set -uo pipefail
# The whole script is one function, read before it runs: editing this file while a
# (long) run is going does not change what that run executes.
main() {
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

if [ "$(nice)" -lt 10 ] && [ -z "${LOOM_MPICH_NICED:-}" ]; then
    export LOOM_MPICH_NICED=1
    exec nice -n $((10 - $(nice))) "$0" "$@"
fi

ALL_DIRS="init pt2pt coll comm group datatype attr info errhan topo rma spawn threads"
FORT_DIRS="f77 f90 f08"
dirs=$ALL_DIRS
quick=no
bdir=${LOOM_BUILD_DIR:-build}
cache=${LOOM_MPICH_CACHE:-}
out=
timeout=60
mpich=auto
loom=run
lists=testlist
write_expected=no
fetch_only=no
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=yes; shift ;;
    --dirs) dirs=$2; shift 2 ;;
    --build) bdir=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --mpich) mpich=$2; shift 2 ;;
    --loom) loom=$2; shift 2 ;;
    --lists) lists=$2; shift 2 ;;
    --write-expected) write_expected=yes; shift ;;
    --fetch-only) fetch_only=yes; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
t_start=$(date +%s)
say() { printf 'mpich-suite: %s\n' "$*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

case $bdir in /*) ;; *) bdir=$top/$bdir ;; esac
loom_mpicc=$bdir/mpi/mpicc
loom_mpiexec=$bdir/launcher/mpiexec
[ -x "$loom_mpicc" ] && [ -x "$loom_mpiexec" ] || skip "Loom is not built in $bdir (no mpi/mpicc or launcher/mpiexec)"
if [ "$quick" = yes ]; then
    [ "$mpich" = auto ] && mpich=skip
    out=${out:-$bdir/mpich-suite-quick}
    # the directories named in the quick list, in the order of the full list (when no
    # --dirs: io too, whose quick tests make the run use the io/cxx configuration, and
    # the Fortran ones if Loom was built with its Fortran wrappers)
    [ "$dirs" = "$ALL_DIRS" ] && dirs="$ALL_DIRS io"
    [ "$dirs" = "$ALL_DIRS io" ] && [ -x "$bdir/mpi/mpifort" ] && dirs="$dirs $FORT_DIRS"
    dirs=$(for d in $dirs; do grep -q "^$d/" "$here/quick" && echo "$d"; done | tr '\n' ' ')
else
    out=${out:-$bdir/mpich-suite}
fi
if [ -z "$cache" ]; then
    if mkdir -p /var/cache/loom/mpich 2>/dev/null && [ -w /var/cache/loom/mpich ]; then
        cache=/var/cache/loom/mpich
    else
        cache=${XDG_CACHE_HOME:-$HOME/.cache}/loom/mpich
    fi
fi
# a relative --out names a directory under the caller's working directory (runtests
# runs inside the configured suite, where a relative path would point elsewhere)
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$cache" "$out" || exit 1
# runtests writes its log and JUnit file from inside the configured suite: a relative
# --out (or --cache) would land there, not where the caller meant
out=$(cd "$out" && pwd) && cache=$(cd "$cache" && pwd) || exit 1
command -v perl >/dev/null || skip "perl not installed (MPICH's runtests is a perl script)"
command -v python3 >/dev/null || skip "python3 not installed (report.py)"

# ---- MPICH's source: apt-get source, cached --------------------------------------
# The version of the installed mpich (the reference), else the candidate.
ver=$(dpkg-query -W -f='${source:Version}' mpich 2>/dev/null) ||
    ver=$(apt-cache policy mpich 2>/dev/null | sed -n 's/^ *Candidate: //p')
[ -n "$ver" ] && [ "$ver" != "(none)" ] || skip "no mpich package known to apt (Debian's MPICH is the reference)"
upstream=${ver#*:}; upstream=${upstream%-*}
srcroot=$cache/src
tsrc=$srcroot/mpich-$upstream/test/mpi
lock=$cache/.lock
exec 8>"$lock"
flock -w 1800 8 || say "waited 30 min for $lock; going on"

fetch_source() {
    mkdir -p "$srcroot"
    command -v dpkg-source >/dev/null || { say "dpkg-source missing (package dpkg-dev)"; return 1; }
    # 1. the system's apt, if it has deb-src entries (LOOM_MPICH_APT_PRIVATE=1: skip)
    : >"$srcroot/apt.log"
    if [ "${LOOM_MPICH_APT_PRIVATE:-0}" != 1 ] &&
            (cd "$srcroot" && apt-get source -q "mpich=$ver" </dev/null >"$srcroot/apt.log" 2>&1); then
        return 0
    fi
    # 2. a private apt state: deb-src entries copied from the system's deb entries, its
    #    own lists; nothing under /etc/apt changes
    local a=$cache/apt
    rm -rf "$a"; mkdir -p "$a/parts" "$a/lists/partial" "$a/archives/partial"
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; ORS = "\n\n" } /(^|\n)Types:[^\n]*deb([ \n]|$)/ {
                 sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >"$a/parts/$(basename "$f")"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >>"$a/parts/from-lists.list"
    done
    local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$a/parts"
        -o "Dir::State::Lists=$a/lists" -o "Dir::Cache::Archives=$a/archives"
        -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root")
    [ "$(id -u)" -eq 0 ] || opts=("${opts[@]:0:${#opts[@]}-2}")
    say "apt-get source through a private source list in $a"
    apt-get "${opts[@]}" update -q </dev/null >>"$srcroot/apt.log" 2>&1 || true
    (cd "$srcroot" && apt-get "${opts[@]}" source -q "mpich=$ver" </dev/null >>"$srcroot/apt.log" 2>&1)
}
if [ ! -x "$tsrc/configure" ]; then
    say "fetching MPICH's source (mpich=$ver) into $srcroot"
    # apt-get source does not unpack over a tree that is there (a partial one)
    rm -rf "$srcroot/mpich-$upstream"
    fetch_source || { tail -n 5 "$srcroot/apt.log" >&2; skip "apt-get source mpich=$ver failed (network? deb-src?); log: $srcroot/apt.log"; }
    [ -x "$tsrc/configure" ] || skip "no $tsrc/configure after apt-get source"
    # test/mpi configures on its own: the rest of MPICH (400 MB unpacked) goes
    find "$srcroot/mpich-$upstream" -mindepth 1 -maxdepth 1 ! -name test -exec rm -rf {} +
    find "$srcroot/mpich-$upstream/test" -mindepth 1 -maxdepth 1 ! -name mpi -exec rm -rf {} +
    rm -f "$srcroot"/mpich_*
fi
exec 8>&-
if [ "$fetch_only" = yes ]; then echo "$tsrc"; exit 0; fi

# ---- the two configured suites -------------------------------------------------------
# mpiexec wrapper: a hard bound over each job (MPIEXEC_TIMEOUT, which both mpiexecs
# honour, capped to --timeout), and the environment each implementation needs
write_wrapper() { # FILE REAL-MPIEXEC ENV...
    local f=$1 real=$2; shift 2
    {
        echo '#!/bin/sh'
        echo "# generated by tests/mpich/run.sh: one MPICH test job under a hard bound"
        echo "t=\${MPIEXEC_TIMEOUT:-$timeout}"
        echo "[ \"\$t\" -gt $timeout ] && t=$timeout"
        echo 'MPIEXEC_TIMEOUT=$t; export MPIEXEC_TIMEOUT'
        for e in "$@"; do echo "export $e"; done
        echo "exec timeout -k 5 \$((t + 15)) $real \"\$@\""
    } >"$f.tmp" && chmod +x "$f.tmp" && mv "$f.tmp" "$f"
}
# ---- the harness shim ------------------------------------------------------------
# MPICH's util/mtest.c (linked into every test) calls intercommunicator and window
# functions that an incomplete MPI may not declare yet; without them no test builds.
# For each of those the MPI's mpi.h lacks (probed with its mpicc), mtest.c alone gets a
# declaration (-include shim.h) and every test links a definition that returns
# MPI_ERR_OTHER: the tests that need the feature fail, the others run.  A test that
# calls such a function itself still fails to build.  The table names what was shimmed;
# once mpi.h has them all the shim is empty.
SHIM_ITEMS=(
    "type|MPI_Win_copy_attr_function|typedef int MPI_Win_copy_attr_function(MPI_Win, int, void *, void *, void *, int *);"
    "type|MPI_Win_delete_attr_function|typedef int MPI_Win_delete_attr_function(MPI_Win, int, void *, void *);"
    "const|MPI_WIN_NULL_COPY_FN|#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)"
    "const|MPI_WIN_NULL_DELETE_FN|#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)"
    "const|MPI_WIN_BASE|#define MPI_WIN_BASE 0x7fff4c01"
    "func|MPI_Intercomm_create|int MPI_Intercomm_create(MPI_Comm a, int b, MPI_Comm c, int d, int e, MPI_Comm *f)"
    "func|MPI_Intercomm_merge|int MPI_Intercomm_merge(MPI_Comm a, int b, MPI_Comm *c)"
    "func|MPI_Win_create_keyval|int MPI_Win_create_keyval(MPI_Win_copy_attr_function *a, MPI_Win_delete_attr_function *b, int *c, void *d)"
    "func|MPI_Win_create|int MPI_Win_create(void *a, MPI_Aint b, int c, MPI_Info d, MPI_Comm e, MPI_Win *f)"
    "func|MPI_Win_free_keyval|int MPI_Win_free_keyval(int *a)"
    "func|MPI_Win_free|int MPI_Win_free(MPI_Win *a)"
    "func|MPI_Win_get_attr|int MPI_Win_get_attr(MPI_Win a, int b, void *c, int *d)"
    "func|MPI_Win_set_attr|int MPI_Win_set_attr(MPI_Win a, int b, void *c)"
)
# make_shim BUILD MPICC: writes BUILD/loomshim/{shim.h,libloomshim.a,symbols}; returns
# 0, or 2 when its content changed since the last run (the tests must relink)
make_shim() {
    local b=$1 cc=$2 s=$1/loomshim it kind name text probe
    mkdir -p "$s"
    : >"$s/shim.h.new"; : >"$s/shim.c.new"; : >"$s/symbols.new"
    echo '#include <mpi.h>' >>"$s/shim.h.new"
    for it in "${SHIM_ITEMS[@]}"; do
        IFS='|' read -r kind name text <<<"$it"
        case $kind in
        type) probe="$name *loom_probe;" ;;
        const) probe="long loom_probe(void) { return (long)($name); }" ;;
        func) probe="void *loom_probe(void) { return (void *)&$name; }" ;;
        esac
        printf '#include <mpi.h>
#include "shim.h.new"
%s
' "$probe" >"$s/probe.c"
        # the probe sees what the shim already added (a constant needs its type)
        if (cd "$s" && "$cc" -Werror=implicit-function-declaration -c probe.c -o probe.o) >/dev/null 2>&1; then
            continue
        fi
        echo "$name" >>"$s/symbols.new"
        if [ "$kind" = func ]; then
            echo "$text;" >>"$s/shim.h.new"
            printf '%s
{
    (void)a;
    return MPI_ERR_OTHER;
}
' "$text" |
                sed 's/(void)a;/(void)a; (void)__func__;/' >>"$s/shim.c.new"
        else
            echo "$text" >>"$s/shim.h.new"
        fi
    done
    rm -f "$s/probe.c" "$s/probe.o"
    # the definitions: every parameter unused on purpose
    { echo '/* generated by tests/mpich/run.sh: MPI functions mtest.c needs and this MPI lacks */'
      echo '#include "shim.h"'
      echo '#pragma GCC diagnostic ignored "-Wunused-parameter"'
      cat "$s/shim.c.new"; } >"$s/shim.c.gen"
    local changed=0
    if ! cmp -s "$s/shim.h.new" "$s/shim.h" || ! cmp -s "$s/shim.c.gen" "$s/shim.c"; then
        changed=2
        mv "$s/shim.h.new" "$s/shim.h"; mv "$s/shim.c.gen" "$s/shim.c"
        rm -f "$s/libloomshim.a"
    fi
    mv "$s/symbols.new" "$s/symbols"; rm -f "$s/shim.h.new" "$s/shim.c.gen" "$s/shim.c.new"
    if [ ! -f "$s/libloomshim.a" ]; then
        if [ -s "$s/symbols" ]; then
            (cd "$s" && "$cc" -c shim.c -o shim.o && ar rc libloomshim.a shim.o) >"$s/build.log" 2>&1 || return 1
        else
            (cd "$s" && rm -f shim.o && ar rc libloomshim.a) >"$s/build.log" 2>&1 || return 1
        fi
    fi
    return $changed
}

# The Fortran directories: the same suite configured with Fortran on (a configuration
# of its own, "-fort", so that the C-only one stays as it is); F77/FC are the MPI's
# wrappers, which configure takes from MPIF77 and MPIFC.
fort=no
for d in $dirs; do case " $FORT_DIRS " in *" $d "*) fort=yes ;; esac; done
CONF_FLAGS="--disable-fortran --disable-cxx --disable-romio --enable-strictmpi --enable-threads=multiple --disable-perftest --disable-ft-tests"
# ---- io and cxx (issue 22) ---------------------------------------------------------
# test/mpi builds io/ only with --enable-romio (which also defines HAVE_MPI_IO for the
# other directories) and cxx/ only when MPICXX links MPI::Init().  A run naming io or
# cxx uses suites of its own, configured so, in build-<name>-iocxx: the 13 directories'
# suites (and their configure stamps, which several worktrees share) stay as they are.
IOCXX_DIRS="io cxx"
sfx=
for d in $dirs; do case " $IOCXX_DIRS " in *" $d "*) sfx=-iocxx ;; esac; done
if [ -n "$sfx" ]; then
    CONF_FLAGS="--disable-fortran --enable-cxx --enable-romio --enable-strictmpi --enable-threads=multiple --disable-perftest --disable-ft-tests"
fi
# the C++ wrapper beside a C one (mpicc -> mpicxx, mpicc.mpich -> mpicxx.mpich)
cxx_of() { local c=$1; printf '%s' "${c%/*}/$(basename "$c" | sed 's/^mpicc/mpicxx/')"; }
[ "$fort" = yes ] && CONF_FLAGS=${CONF_FLAGS/--disable-fortran/--enable-fortran=all}
[ "$fort" = yes ] && sfx=$sfx-fort
# fortran_wrappers MPICC: "MPIF77=... MPIFC=..." for configure (names as the MPI's
# mpicc is named: mpicc -> mpif77/mpifort, mpicc.mpich -> mpif77.mpich/mpifort.mpich)
fortran_wrappers() {
    local d b
    d=$(dirname "$1"); b=$(basename "$1")
    echo "MPIF77=$d/${b/mpicc/mpif77} MPIFC=$d/${b/mpicc/mpifort}"
}
# configure_suite NAME MPICC MPIEXEC SHIM ENV...: (re)configure when the stamp differs;
# SHIM=yes probes for the harness shim; returns 1 when configure or the support
# libraries fail
configure_suite() {
    local name=$1 cc=$2 mx=$3 shim=$4; shift 4
    local b=$cache/build-$name$sfx libs= ucpp= d cxxarg= fw=
    case $sfx in *-iocxx*) [ -x "$(cxx_of "$cc")" ] && cxxarg=MPICXX=$(cxx_of "$cc") ;; esac
    [ "$fort" = yes ] && fw=$(fortran_wrappers "$cc")
    mkdir -p "$b"
    write_wrapper "$b/mpiexec-wrap" "$mx" "$@"
    if [ "$shim" = yes ]; then
        make_shim "$b" "$cc"
        case $? in
        0) ;;
        2) # other shim content: objects and programs built against the old one go
           if [ -f "$b/Makefile" ]; then
               say "$name: the harness shim changed ($(tr '\n' ' ' <"$b/loomshim/symbols")): relinking"
               for d in util $ALL_DIRS $IOCXX_DIRS $FORT_DIRS; do make -C "$b/$d" clean >/dev/null 2>&1; done
           fi ;;
        *) say "$name: the harness shim does not compile (see $b/loomshim/build.log)"; return 1 ;;
        esac
        libs=$b/loomshim/libloomshim.a
        [ -s "$b/loomshim/symbols" ] && ucpp="-include $b/loomshim/shim.h"
    fi
    local stamp="$tsrc $cc $CONF_FLAGS $libs${cxxarg:+ $cxxarg}${fw:+ $fw}"
    if [ "$(cat "$b/.loom-stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$b/runtests" ]; then
        say "configure test/mpi for $name (MPICC=$cc) in $b"
        rm -f "$b/.loom-stamp"
        if ! (cd "$b" && "$tsrc/configure" MPICC="$cc" MPIEXEC="$b/mpiexec-wrap" ${libs:+LIBS="$libs"} ${cxxarg:+"$cxxarg"} \
                $fw $CONF_FLAGS >configure.log 2>&1 </dev/null); then
            say "$name: configure failed (see $b/configure.log)"; return 1
        fi
        echo "$stamp" >"$b/.loom-stamp"
    fi
    # the support libraries every test links (make: rebuilt only when out of date)
    if ! (cd "$b" && make -C dtpools -j2 && make -C util -j2 ${ucpp:+CPPFLAGS="$ucpp"}) \
            >"$b/support.log" 2>&1 </dev/null; then
        say "$name: the suite's support libraries (util, dtpools) do not build (see $b/support.log)"
        return 1
    fi
    # test/mpi configured on its own (not from MPICH's configure: FROM_MPICH unset) leaves
    # util's f08 library empty (HAS_F08 off) and every f08 test fails to link
    # (mtest_init_ undefined, MPICH's own too): build it with its one source
    if [ "$fort" = yes ] && ! (cd "$b/util" && make libmtest_f08.la am_libmtest_f08_la_OBJECTS=mtest_f08.lo) \
            >>"$b/support.log" 2>&1 </dev/null; then
        say "$name: util's libmtest_f08 does not build (see $b/support.log)"
        return 1
    fi
    return 0
}

# Loom's configured suite is keyed by its build tree (several worktrees may share a cache)
lkey=loom-$(printf '%s' "$bdir" | md5sum | cut -c1-8)
echo "$bdir" >"$cache/$lkey.builddir" 2>/dev/null || true
loom_env=(LOOM_MPIEXEC_LAUNCHER=fork)
# MPICH with UCX spins in its progress loop; on an oversubscribed node that costs time,
# not correctness: the timeout is the bound
mpich_env=(UCX_TLS=self,sm,tcp HYDRA_TOPO_DEBUG=0)

# quick: a testlist per directory holding the quick list's lines only (written into
# the build tree, next to the generated testlists)
write_quick_lists() { # BUILD
    local b=$1 d
    for d in $dirs; do
        python3 "$here/report.py" filter --src "$tsrc" --build "$b" --dir "$d" \
            --quick "$here/quick" --name testlist.loomquick || return 1
    done
}

# run_suite NAME BUILD RESULTS: runtests per directory, one JUnit file each
run_suite() {
    local name=$1 b=$2 r=$3 d t0 lst=$lists
    mkdir -p "$r"
    if [ "$quick" = yes ]; then
        write_quick_lists "$b" || return 1
        lst=testlist.loomquick
    fi
    for d in $dirs; do
        t0=$(date +%s)
        rm -f "$r/$d.junit.xml" "$r/$d.seconds"
        (cd "$b" && MPITEST_CLEANUP=0 MPITEST_TIMEOUT=$timeout MPITEST_TIMEOUT_MULTIPLIER=1 \
            ./runtests -srcdir="$tsrc" -tests="$lst" -testdirs="$d" \
            -mpiexec="$b/mpiexec-wrap" -junitfile="$r/$d.junit.xml" \
            >"$r/$d.log" 2>&1 </dev/null)
        echo $(($(date +%s) - t0)) >"$r/$d.seconds"
        say "$name $d: $(grep -c '<testcase' "$r/$d.junit.xml" 2>/dev/null || echo 0) tests, $(cat "$r/$d.seconds") s"
    done
}

lres=$out/loom
mres=$cache/results-mpich
loom_ok=yes
# one run at a time per configured suite (the Loom and MPICH ones may run at once)
if [ "$loom" != skip ]; then
    exec 9>"$cache/build-$lkey$sfx.lock"
    flock -w 3600 9 || say "waited an hour for $cache/build-$lkey$sfx.lock; going on"
fi
if [ "$loom" = skip ]; then
    [ -f "$cache/build-$lkey$sfx/.loom-stamp" ] || loom_ok=no
elif ! configure_suite "$lkey" "$loom_mpicc" "$loom_mpiexec" yes "${loom_env[@]}"; then
    loom_ok=no
elif [ "$loom" = run ]; then
    run_suite loom "$cache/build-$lkey$sfx" "$lres"
fi
exec 9>&-
if [ "$loom_ok" = yes ]; then
    :
else
    mkdir -p "$lres"; for d in $dirs; do rm -f "$lres/$d.junit.xml"; done
    cp "$cache/build-$lkey$sfx/configure.log" "$lres/configure.log" 2>/dev/null
fi
t_loom=$(($(date +%s) - t_start))

mdirs=
# --loom skip reports what is there: the reference runs only when asked (--mpich run)
if [ "$mpich" = run ] || { [ "$mpich" = auto ] && [ "$loom" != skip ]; }; then
    for d in $dirs; do
        if [ "$mpich" = run ] || [ "$quick" = yes ] || [ ! -s "$mres/$d.junit.xml" ] ||
                [ "$(cat "$mres/$d.lists" 2>/dev/null)" != "$lists $timeout" ]; then
            mdirs="$mdirs $d"
        fi
    done
fi
if [ -n "$mdirs" ]; then
    if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null &&
            exec 9>"$cache/build-mpich$sfx.lock" && flock -w 3600 9 &&
            configure_suite mpich "$(command -v mpicc.mpich)" "$(command -v mpiexec.mpich)" no "${mpich_env[@]}"; then
        dirs_save=$dirs; dirs=$mdirs
        run_suite mpich "$cache/build-mpich$sfx" "$mres"
        for d in $mdirs; do echo "$lists $timeout" >"$mres/$d.lists"; done
        dirs=$dirs_save
        exec 9>&-
    else
        say "MPICH's suite could not be configured: no reference column"
    fi
fi
t_all=$(($(date +%s) - t_start))

rargs=(report --dirs "$dirs" --loom "$lres" --expected "$here/expected-fail" --out "$out"
    --loom-seconds "$t_loom" --total-seconds "$t_all")
rlists=$lists
[ "$quick" = yes ] && rlists=testlist.loomquick
rargs+=(--tsrc "$tsrc" --tbuild "$cache/build-$lkey$sfx" --lists "$rlists" --timeout "$timeout")
[ "$loom_ok" = yes ] || rargs+=(--loom-unbuilt "configure of test/mpi with Loom's mpicc failed: $cache/build-$lkey$sfx/configure.log")
[ "$mpich" != skip ] && rargs+=(--mpich "$mres")
[ "$write_expected" = yes ] && rargs+=(--write-expected)
[ "$quick" = yes ] && rargs+=(--quick "$here/quick")
[ -s "$cache/build-$lkey$sfx/loomshim/symbols" ] && rargs+=(--shim "$(tr '\n' ' ' <"$cache/build-$lkey$sfx/loomshim/symbols")")
python3 "$here/report.py" "${rargs[@]}"
}
main "$@"
exit $?
