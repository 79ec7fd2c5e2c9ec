#!/bin/bash
# scripts/slurm-release.sh - build one Slurm release from its release tarball into a private
# prefix (once), for the plugin's release matrix (tests/slurm with LOOM_SLURM_PREFIX).
#
# Usage: scripts/slurm-release.sh VERSION [--env|--print]
#   VERSION  a release such as 26.05 or 26.05.3 (the newest matching tarball is taken).
#   (none)   build if needed, then print "prefix: P" and "source: S" on stdout.
#   --env    build if needed, then print shell assignments for eval:
#              eval "$(scripts/slurm-release.sh 26.05 --env)"
#            sets and exports LOOM_SLURM_PREFIX, LOOM_SLURM_SOURCE and LOOM_SLURM_VERSION.
#   --print  like --env but never builds: fails (exit 1) when the release is not built yet.
#
# Tarballs: $LOOM_SLURM_TARBALLS=DIR if set, else slurm-<version>.tar.* files in the
# directories beside the checkout (../*/ and ../*/*/ relative to the repository top).
# Cache: $LOOM_SLURM_CACHE (default /var/cache/loom/slurm); per release <cache>/<x.y.z>/ holds
# src/ (the unpacked tarball: the tree for configure --with-slurm-source), build/ (out-of-tree
# build), prefix/ (make install, plus contribs/pmi2 = Slurm's own libpmi2), build.log and
# build-seconds (wall time of configure+make+install).  The stamp file prefix/.loom-installed
# (with the configure flags) makes a second call instant; other flags rebuild; delete the
# release's directory to force a rebuild.
# The installed Debian Slurm (22.05 on Debian 12) has no tarball: for a VERSION that no tarball
# matches but the installed slurmd does, --env prints LOOM_SLURM_PREFIX= (empty: the system
# Slurm) and the Debian source from scripts/slurm-source.sh.
# Heavy work runs under nice -n 19; MAKE_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
say() { echo "slurm-release.sh: $*" >&2; }
die() { say "$*"; exit 1; }

want=${1:-}; mode=${2:-show}
[ -n "$want" ] || die "usage: $0 VERSION [--env|--print]"
case $mode in show|--env|--print) ;; *) die "unknown mode '$mode'" ;; esac
[[ "$want" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || die "VERSION must look like 26.05 or 26.05.3"
cache=${LOOM_SLURM_CACHE:-/var/cache/loom/slurm}
jobs=${MAKE_JOBS:-2}

# The newest tarball slurm-<want>[.micro].tar.* in the search directories.
find_tarball() {
    local dirs=() d f best="" bestv="" v
    if [ -n "${LOOM_SLURM_TARBALLS:-}" ]; then dirs=("$LOOM_SLURM_TARBALLS")
    else
        for d in "$top"/../*/ "$top"/../*/*/; do [ -d "$d" ] && dirs+=("$d"); done
    fi
    for d in "${dirs[@]}"; do
        for f in "$d"/slurm-"$want".tar.* "$d"/slurm-"$want".*.tar.*; do
            [ -f "$f" ] || continue
            v=$(basename "$f"); v=${v#slurm-}; v=${v%.tar.*}
            [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || continue
            if [ -z "$bestv" ] || [ "$(printf '%s\n%s\n' "$bestv" "$v" | sort -V | tail -1)" = "$v" ]; then
                best=$f; bestv=$v
            fi
        done
    done
    [ -n "$best" ] && printf '%s/%s\n' "$(cd "$(dirname "$best")" && pwd)" "$(basename "$best")"
}

emit() { # prefix source version
    case $mode in
    show) printf 'prefix: %s\nsource: %s\nversion: %s\n' "${1:-(system Slurm)}" "$2" "$3" ;;
    *) printf 'LOOM_SLURM_PREFIX=%q; LOOM_SLURM_SOURCE=%q; LOOM_SLURM_VERSION=%q; ' "$1" "$2" "$3"
       printf 'export LOOM_SLURM_PREFIX LOOM_SLURM_SOURCE LOOM_SLURM_VERSION\n' ;;
    esac
}

if ! tarball=$(find_tarball); then
    # No tarball: the installed (Debian) Slurm, if it is that release.
    inst=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null || true); inst=${inst%%-*}
    if [ -n "$inst" ] && { [ "$inst" = "$want" ] || [[ "$inst" == "$want".* ]]; }; then
        src=$(./scripts/slurm-source.sh) || die "no source for the installed Slurm $inst"
        emit "" "$src" "$inst"; exit 0
    fi
    die "no tarball slurm-$want[.N].tar.* found (set LOOM_SLURM_TARBALLS=DIR)"
fi
ver=$(basename "$tarball"); ver=${ver#slurm-}; ver=${ver%.tar.*}
rdir=$cache/$ver
prefix=$rdir/prefix
stamp=$prefix/.loom-installed
pmix=/usr/lib/x86_64-linux-gnu/pmix2
# Lean: what the private test clusters use (munge auth, hwloc, PMIx for Slurm's own mpi/pmix,
# libpmi2); nothing that needs absent packages (REST, sview, cgroup v2's bpf/dbus, x11);
# no -g (half the compile time; symbols stay). --enable-multiple-slurmd: tests/slurm runs
# several slurmd on one host (cluster.sh -N), which Debian's build allows; without it
# slurmctld drops all but one node of a shared NodeHostname ("Duplicated NodeHostName").
cfgflags="--with-pmix=$pmix --with-munge --with-hwloc --enable-multiple-slurmd --disable-debug \
--disable-slurmrestd --disable-sview --disable-x11 --enable-cgroupv2=no --without-rdkafka \
--disable-dependency-tracking"
built() { [ -f "$stamp" ] && [ "$(sed -n 's/^flags: //p' "$stamp")" = "$cfgflags" ]; }
src_of() { local d; for d in "$rdir"/src/*/; do [ -f "$d/META" ] && { (cd "$d" && pwd); return; }; done; }

if ! built; then
    [ "$mode" = --print ] && die "Slurm $ver is not built yet, or with other flags (run $0 $want)"
    mkdir -p "$rdir"
    exec 9>"$rdir/.lock"
    flock 9
    if ! built; then
        say "building Slurm $ver from $tarball into $prefix (log: $rdir/build.log)"
        start=$(date +%s)
        rm -rf "$rdir/src" "$rdir/build" "$prefix"
        mkdir -p "$rdir/src" "$rdir/build"
        tar -C "$rdir/src" -xf "$tarball"
        src=$(src_of) || true
        [ -n "$src" ] || die "no META in the unpacked $tarball"
        {
            cd "$rdir/build"
            # shellcheck disable=SC2086
            nice -n 19 "$src/configure" --prefix="$prefix" --sysconfdir="$prefix/etc" $cfgflags
            nice -n 19 make -j"$jobs"
            nice -n 19 make install
            nice -n 19 make -C contribs/pmi2 -j"$jobs" install
        } >"$rdir/build.log" 2>&1 || die "build of Slurm $ver failed; see $rdir/build.log"
        end=$(date +%s)
        echo $((end - start)) >"$rdir/build-seconds"
        for f in lib/slurm/mpi_pmi2.so lib/slurm/mpi_pmix.so lib/libpmi2.so sbin/slurmctld \
                 sbin/slurmd sbin/slurmstepd bin/srun; do
            [ -e "$prefix/$f" ] || die "Slurm $ver installed without $f (see $rdir/build.log)"
        done
        # the installed version header must agree with the tree (the plugin loader wants exact micro)
        IFS=. read -r a b c <<<"$ver"
        num=$(printf '0x%02x%02x%02x' "$((10#$a))" "$((10#$b))" "$((10#$c))")
        grep -q "SLURM_VERSION_NUMBER $num" "$prefix/include/slurm/slurm_version.h" \
            || die "$prefix/include/slurm/slurm_version.h is not $ver ($num)"
        printf 'built: %s\nflags: %s\n' "$(date -u +%FT%TZ)" "$cfgflags" >"$stamp"
        say "Slurm $ver built in $((end - start)) s"
    fi
    exec 9>&-
fi
emit "$prefix" "$(src_of)" "$ver"
