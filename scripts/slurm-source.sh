#!/bin/bash
# scripts/slurm-source.sh - make the Debian source of the installed Slurm available for the
# mpi plugin (configure --with-slurm-source) and print its directory on stdout.
#
# Best effort: prints nothing and exits 1 when it cannot (no slurmd installed, no network,
# not root); callers then build without the plugin.  Order: $LOOM_SLURM_SOURCE if it is
# a Slurm tree; else a cached tree in $LOOM_SLURM_SRC_CACHE (default build/slurm-src);
# else `apt-get source slurm-wlm=<installed version>` there, adding a deb-src entry (a
# copy of the Debian deb entries) when apt has none.  Messages go to stderr.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
is_tree() { [ -f "$1/src/slurmd/slurmstepd/slurmstepd_job.h" ]; }
say() { echo "slurm-source.sh: $*" >&2; }

if [ -n "${LOOM_SLURM_SOURCE:-}" ]; then
    if is_tree "$LOOM_SLURM_SOURCE"; then
        (cd "$LOOM_SLURM_SOURCE" && pwd); exit 0
    fi
    say "LOOM_SLURM_SOURCE=$LOOM_SLURM_SOURCE is not a Slurm source tree"; exit 1
fi

ver=$(dpkg-query -W -f='${source:Version}' slurmd 2>/dev/null) || { say "slurmd not installed"; exit 1; }
upstream=${ver%%-*}
cache=${LOOM_SLURM_SRC_CACHE:-$top/${LOOM_BUILD_DIR:-build}/slurm-src}
tree=$cache/slurm-wlm-$upstream
if is_tree "$tree"; then echo "$tree"; exit 0; fi

[ "$(id -u)" -eq 0 ] || { say "not root: cannot add a deb-src entry; set LOOM_SLURM_SOURCE"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    src=/etc/apt/sources.list.d/debian.sources
    if [ -f "$src" ]; then
        say "adding deb-src entries (loom-deb-src.sources)"
        sed 's/^Types: deb$/Types: deb-src/' "$src" >/etc/apt/sources.list.d/loom-deb-src.sources
    elif [ -f /etc/apt/sources.list ]; then
        say "adding deb-src lines (loom-deb-src.list)"
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/loom-deb-src.list
    fi
    apt-get update -q </dev/null >&2 || { say "apt-get update failed"; exit 1; }
fi
mkdir -p "$cache"
say "apt-get source slurm-wlm=$ver into $cache"
if ! (cd "$cache" && apt-get source -q "slurm-wlm=$ver" </dev/null >&2); then
    # the lists may predate the deb-src entry
    apt-get update -q </dev/null >&2
    (cd "$cache" && apt-get source -q "slurm-wlm=$ver" </dev/null >&2) || { say "apt-get source failed"; exit 1; }
fi
is_tree "$tree" || { say "no Slurm tree at $tree after apt-get source"; exit 1; }
echo "$tree"
