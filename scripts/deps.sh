#!/bin/bash
# scripts/deps.sh - install every Debian 12 package Loom needs to build, test and benchmark.
#
# Idempotent: when every package is already installed it does nothing (no network).
# Otherwise it runs `apt-get update` (only when the package lists are missing or older
# than a day, or when a first install attempt fails) and `apt-get install -y`.
# Works as root without a TTY and without stdin (CI). Non-root: uses sudo if present.
#
# Notes: the list is the single source of truth for the project's system dependencies;
# add a package here when a build or a test needs it.
set -euo pipefail

PKGS=(
    # build
    build-essential autoconf automake libtool pkg-config dpkg-dev
    # unit tests
    check
    # optional features: binding, PMIx, munge
    libhwloc-dev hwloc libpmix-dev munge libmunge-dev
    # Slurm: the local test cluster, its libpmi2 (interop tests), headers for the plugin;
    # unpacking release tarballs (scripts/slurm-release.sh)
    slurmd slurmctld slurm-client libslurm-dev libpmi2-0-dev xz-utils bzip2
    # peers: MPICH (mpicc.mpich, mpiexec.hydra) and Open MPI
    mpich libmpich-dev openmpi-bin libopenmpi-dev
    # fuzz targets (tests/fuzz: clang's libFuzzer; llvm's llvm-symbolizer for reports)
    clang llvm
    # the format check of changed lines (scripts/check-format.sh: git clang-format)
    clang-format git
    # benchmarks: plots; scripts: pgrep/pkill, timeout, awk
    gnuplot-nox procps coreutils
    # MPICH's test suite on libmpi (tests/mpich/run.sh): apt-get source mpich needs
    # dpkg-dev (above); its runtests is perl (Time::HiRes), the report python3
    perl python3
    # build systems finding the MPI wrappers (tests/integration/t0630-mpi-langs.sh):
    # CMake's FindMPI, Meson's dependency('mpi'); gfortran for the Fortran bindings;
    # autoconf's AX_MPI (autoconf-archive's ax_mpi.m4: t0632-mpi-autoconf.sh)
    cmake meson gfortran autoconf-archive
    # man pages and environment modules (tests/integration/t0640-envvars.sh,
    # t0650-manpages.sh, t0660-modulefiles.sh): mandoc -T lint, tclsh, and Lmod, which
    # also reads Tcl modulefiles (Debian's environment-modules conflicts with it)
    mandoc tcl lmod
    # the Debian packages (scripts/deb.sh, tests/integration/t0680-debs.sh): dh, lintian
    debhelper lintian
)

export DEBIAN_FRONTEND=noninteractive
SUDO=
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo -n"
    else
        echo "deps.sh: not root and no sudo; install as root: ${PKGS[*]}" >&2
        exit 1
    fi
fi

missing=()
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps.sh: all ${#PKGS[@]} packages already installed"
    exit 0
fi

echo "deps.sh: installing ${missing[*]}"
APT_OPTS=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

lists_fresh() {
    # true when the package lists exist and were updated during the last day
    [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n1)" ]
}

if ! lists_fresh; then
    $SUDO apt-get update -q </dev/null
    updated=1
else
    updated=0
fi
if ! $SUDO apt-get install "${APT_OPTS[@]}" "${missing[@]}" </dev/null; then
    [ "$updated" -eq 1 ] && exit 1
    $SUDO apt-get update -q </dev/null
    $SUDO apt-get install "${APT_OPTS[@]}" "${missing[@]}" </dev/null
fi
echo "deps.sh: done"
