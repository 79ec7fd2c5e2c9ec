#!/bin/bash
# scripts/main.sh - install dependencies, build Loom, and run the main job:
# `mpiexec -n 64` of the PMI-2 key-value exchange test (every rank puts a key, fences,
# reads every other rank's key), then print its result and the wall time.
#
# Environment: LOOM_NP (default 64), LOOM_BUILD_DIR (default build), LOOM_SKIP_DEPS=1.
# Exit status: that of the job.
set -euo pipefail
cd "$(dirname "$0")/.."
bdir=${LOOM_BUILD_DIR:-build}
np=${LOOM_NP:-64}
exec </dev/null

[ "${LOOM_SKIP_DEPS:-0}" = 1 ] || ./scripts/deps.sh
./scripts/build.sh

mpiexec=$bdir/launcher/mpiexec
prog=
for p in pmi2_kvstest_loom pmi2_kvstest pmi1_kvstest; do
    if [ -x "$bdir/tests/programs/$p" ]; then prog=$bdir/tests/programs/$p; break; fi
done
if [ ! -x "$mpiexec" ] || [ -z "$prog" ]; then
    echo "main.sh: $mpiexec or the example program (tests/programs/pmi2_kvstest_loom) was not built" >&2
    exit 1
fi

echo "main.sh: $mpiexec -n $np $prog"
start=$(date +%s.%N)
set +e
timeout -k 5 120 "$mpiexec" -n "$np" "$prog"
rc=$?
set -e
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
if [ "$rc" -eq 0 ]; then
    echo "main.sh: OK: $np ranks, launch to exit ${secs}s"
else
    echo "main.sh: FAILED: exit status $rc after ${secs}s" >&2
fi
exit "$rc"
