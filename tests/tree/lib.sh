# shellcheck shell=bash
# tests/tree/lib.sh - sourced by the tree checks: LOOM_SRCDIR (the checkout), `cd`
# there, and tree_files (the tracked files, one per line).  A source directory that is
# not the top of a git checkout (a dist tarball, or a copy) skips the test: the checks
# compare what git tracks.
set -u
top=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 99
if ! command -v git >/dev/null 2>&1; then
    echo "SKIP: no git"
    exit 77
fi
gtop=$(git rev-parse --show-toplevel 2>/dev/null) || gtop=
if [ -z "$gtop" ] || [ "$(cd "$gtop" && pwd -P)" != "$(pwd -P)" ]; then
    echo "SKIP: $top is not the top of a git checkout (a dist tarball?): nothing to compare"
    exit 77
fi

tree_files() { git ls-files; }

fails=0
bad() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
