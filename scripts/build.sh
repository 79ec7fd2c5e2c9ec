#!/bin/bash
# scripts/build.sh - regenerate, configure and build Loom out of tree in ./build.
#
# Idempotent: autogen runs only when ./configure is missing or older than configure.ac
# or a Makefile.am; configure runs only when build/config.status is missing or the
# configure flags changed; make always runs (and does nothing when up to date).
# Environment: LOOM_BUILD_DIR (default: build), LOOM_CONFIGURE_FLAGS (extra ./configure
# arguments, e.g. "--with-pmix=no"), MAKE_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bdir=${LOOM_BUILD_DIR:-build}
jobs=${MAKE_JOBS:-2}
flags=${LOOM_CONFIGURE_FLAGS:-}

regen=0
if [ ! -x configure ]; then
    regen=1
else
    for f in configure.ac $(find . -name Makefile.am -not -path "./$bdir/*" -not -path './loom-*'); do
        if [ "$f" -nt configure ]; then regen=1; break; fi
    done
fi
if [ "$regen" -eq 1 ]; then
    echo "build.sh: ./autogen.sh"
    ./autogen.sh
fi

mkdir -p "$bdir"
cd "$bdir"
stamp=.loom-configure-flags
if [ ! -f config.status ] || [ ! -f Makefile ] || [ "$(cat $stamp 2>/dev/null)" != "$flags" ] \
        || [ "$top/configure" -nt config.status ]; then
    echo "build.sh: configure $flags"
    # shellcheck disable=SC2086
    "$top/configure" $flags
    printf '%s' "$flags" > $stamp
fi
echo "build.sh: make -j$jobs"
make -j"$jobs"
