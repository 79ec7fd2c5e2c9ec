#!/bin/bash
# scripts/deb.sh - build the Debian packages of debian/ (dpkg-buildpackage -us -uc -b) in a
# copy of this tree outside it, and collect the .deb files.
#
# Usage: scripts/deb.sh [OUTDIR]          (default: build/deb)
#   The copy is OUTDIR/src/loom; the packages land in OUTDIR/VERSION/, the opt-in
#   drop-in (loom-slurm-pmi2-dropin, which diverts Slurm's mpi_pmi2.so) in
#   OUTDIR/VERSION/opt-in/, the debug symbols (-dbgsym) in OUTDIR/VERSION/dbgsym/.
#   Prints the directory of the packages on stdout (progress goes to stderr).
# Environment:
#   DEB_BUILD_OPTIONS    passed on (e.g. "nocheck parallel=2")
#   LOOM_SLURM_SOURCE    Slurm source tree for the plugin; default: scripts/slurm-source.sh
#                        (the installed Slurm's Debian source, cached in build/slurm-src)
#   LOOM_DEB_VERSION=V   build version V instead of debian/changelog's (a new changelog
#                        entry in the copy, no dch needed): for upgrade tests
#   LOOM_DEB_REUSE=1     rebuild in the copy OUTDIR/src already holds, without cleaning
#                        (dpkg-buildpackage -nc: configure and make are not repeated, only
#                        install and packaging), e.g. with a bumped LOOM_DEB_VERSION
set -euo pipefail
out=${1:-$(dirname "$0")/../build/deb}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
top=$(pwd)
say() { echo "deb.sh: $*" >&2; }
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null \
    || { say "needs dpkg-dev and debhelper (scripts/deps.sh installs them)"; exit 1; }

if [ -z "${LOOM_SLURM_SOURCE:-}" ]; then
    LOOM_SLURM_SOURCE=$(scripts/slurm-source.sh) \
        || { say "no Slurm source for the plugin (set LOOM_SLURM_SOURCE)"; exit 1; }
fi
export LOOM_SLURM_SOURCE

src=$out/src/loom
if [ "${LOOM_DEB_REUSE:-0}" = 1 ]; then
    [ -f "$src/debian/rules" ] || { say "LOOM_DEB_REUSE=1 but no earlier build in $src"; exit 1; }
    nc=-nc
else
    # the tree without build directories, git metadata or generated autotools output
    rm -rf "$out/src" && mkdir -p "$src"
    tar -C "$top" --exclude=./build --exclude='./build-*' --exclude=./.git \
        --exclude='./loom-[0-9]*' --exclude=./autom4te.cache -cf - . | tar -C "$src" -xf -
    nc=
fi

if [ -n "${LOOM_DEB_VERSION:-}" ]; then
    case $LOOM_DEB_VERSION in *[!0-9A-Za-z.+~-]* | '') say "bad LOOM_DEB_VERSION"; exit 1 ;; esac
    cur=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
    if [ "$cur" != "$LOOM_DEB_VERSION" ]; then
        { printf 'loom (%s) unstable; urgency=medium\n\n  * Rebuild as %s (scripts/deb.sh).\n\n -- %s  %s\n\n' \
            "$LOOM_DEB_VERSION" "$LOOM_DEB_VERSION" \
            "$(dpkg-parsechangelog -l "$src/debian/changelog" -S Maintainer)" "$(date -R)"
          cat "$src/debian/changelog"; } > "$src/debian/changelog.new"
        mv "$src/debian/changelog.new" "$src/debian/changelog"
    fi
fi
ver=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)

say "dpkg-buildpackage -us -uc -b $nc (version $ver) in $src"
rm -f "$out/src/"*.deb "$out/src/"*.buildinfo "$out/src/"*.changes
(cd "$src" && dpkg-buildpackage -us -uc -b $nc) >&2
# the opt-in drop-in apart, so that `apt install DIR/*.deb` never installs it by accident
# and the debug symbols apart too (dbgsym/)
mkdir -p "$out/$ver/opt-in" "$out/$ver/dbgsym"
rm -f "$out/$ver/"*.deb "$out/$ver/opt-in/"*.deb "$out/$ver/dbgsym/"*.deb
mv "$out/src/"*-dbgsym_*.deb "$out/$ver/dbgsym/" 2>/dev/null || true
mv "$out/src/"loom-slurm-pmi2-dropin_*.deb "$out/$ver/opt-in/"
mv "$out/src/"*.deb "$out/$ver/"
rm -f "$out/src/"*.buildinfo "$out/src/"*.changes
echo "$out/$ver"
