#!/bin/bash
# scripts/build.sh - regenerate, configure and build Loom out of tree in ./build.
#
# Idempotent: autogen runs only when ./configure is missing or older than configure.ac
# or a Makefile.am; configure runs only when build/config.status is missing or the
# configure flags changed; make always runs (and does nothing when up to date).
# Environment: LOOM_BUILD_DIR (default: build), LOOM_CONFIGURE_FLAGS (extra ./configure
# arguments, e.g. "--with-pmix=no"), MAKE_JOBS (default 2), LOOM_WITH_PLUGIN=no to skip
# the Slurm plugin (otherwise scripts/slurm-source.sh fetches the Slurm source for it;
# LOOM_SLURM_SOURCE=DIR uses a tree you have).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bdir=${LOOM_BUILD_DIR:-build}
jobs=${MAKE_JOBS:-2}
flags=${LOOM_CONFIGURE_FLAGS:-}

# The Slurm mpi plugin needs the source of the installed Slurm: fetch it (best effort)
# unless LOOM_WITH_PLUGIN=no or the flags already name one.
if [ "${LOOM_WITH_PLUGIN:-auto}" != no ] && [[ "$flags" != *--with-slurm-source* ]]; then
    if ssrc=$(./scripts/slurm-source.sh); then
        flags="${flags:+$flags }--with-slurm-source=$ssrc --enable-slurm-pmi2-dropin"
    else
        echo "build.sh: no Slurm source: building without the Slurm plugin"
    fi
fi

# Regenerate when configure is missing or older than configure.ac or a Makefile.am (or
# a *.mk fragment they include).  Several builds may share one source tree (build dirs
# side by side): regeneration takes an exclusive lock and checks again once it has it,
# and a tree that was generated before is refreshed with `autoreconf --install` without
# --force, which never removes the aux files (config/missing, ...) that another build's
# make may be running at that moment.
need_regen() {
    [ -x configure ] && [ -f config/missing ] || return 0
    [ configure.ac -nt configure ] && return 0
    local f
    # a Makefile.am or a fragment it includes, against the Makefile.in of its folder
    for f in $(find . \( -name Makefile.am -o -name '*.mk' \) -not -path './build*' \
            -not -path './loom-*' -not -path './.git/*'); do
        [ "$f" -nt "$(dirname "$f")/Makefile.in" ] && return 0
    done
    return 1
}
if need_regen; then
    exec 9>"$top/.loom-autogen.lock"
    flock -w 600 9 || echo "build.sh: waited 600 s for $top/.loom-autogen.lock; regenerating anyway" >&2
    if need_regen; then
        if [ -x configure ] && [ -f config/missing ]; then
            echo "build.sh: autoreconf --install"
            autoreconf --install
        else
            echo "build.sh: ./autogen.sh"
            ./autogen.sh
        fi
    fi
    exec 9>&-
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
