#!/bin/sh
# t-loom-dropin.sh - the drop-in: `srun --mpi=pmi2` served by Loom's mpi_pmi2.so.
#
# Usage: t-loom-dropin.sh [BUILDDIR]     (environment: see lib.sh; LOOM_DROPIN_DIR is
#   where the drop-in was built, default the plugin directory; it is built with
#   `make -C plugin LOOM_SLURM_PMI2=mpi_pmi2.la`)
# Installs the drop-in mpi_pmi2.so into a private plugin directory listed first in
# PluginDir of a two-node cluster (two slurmd) and runs under plain --mpi=pmi2: the
# Slurm-libpmi2 client (-n 64 on one node, -N 2 -n 16), our libpmi2 and PMI-1 clients and
# Debian MPICH hello (-n 8); then asserts that the steps were served by Loom (the
# slurmd/stepd logs carry the drop-in's "mpi/pmi2(loom)" lines), not by Debian's plugin.
me=t-loom-dropin
. "$(dirname "$0")/lib.sh"
if [ ! -f "$dropin_src/mpi_pmi2.so" ]; then
    echo "SKIP: $me: the drop-in $dropin_src/mpi_pmi2.so was not built" \
        "(make -C plugin LOOM_SLURM_PMI2=mpi_pmi2.la, or set LOOM_DROPIN_DIR)"
    exit 77
fi
mpi=pmi2
# LoomDebug=info: every step served by the drop-in logs its start line ("mpi/pmi2(loom):
# step ...: node 0 of N ..."), so the check at the end does not hang on chance events
printf 'LoomDebug=info\n' >"$cdir/mpi.conf.in"
start_cluster dropin -N 2
kv_slurm "-n 64 (drop-in)" 64 -N 1 -n 64
kv_slurm "-N 2 -n 16 (drop-in)" 16 -N 2 -n 16 --ntasks-per-node=8
kv_loom "-N 2 -n 16 (drop-in)" 16 pmi2 -N 2 -n 16 --ntasks-per-node=8
kv_pmi1 "-n 16 (drop-in)" 16 pmi2 -N 1 -n 16
mpich mpich_hello 8 "-n 8 (drop-in)" -N 1 -n 8
if grep -qF 'mpi/pmi2(loom)' "$cdir"/c/log/*.log 2>/dev/null; then
    echo "PASS: the steps were served by Loom's drop-in (mpi/pmi2(loom) in the node logs)"
    npass=$((npass + 1))
else
    echo "FAIL: no 'mpi/pmi2(loom)' line in the node logs: Debian's mpi_pmi2.so served the steps?"
    grep -h 'mpi/pmi2\|plugin' "$cdir"/c/log/*.log 2>/dev/null | tail -n 10 | sed 's/^/  log: /'
    nfail=$((nfail + 1))
fi
finish
