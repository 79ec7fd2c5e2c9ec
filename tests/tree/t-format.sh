#!/bin/bash
# t-format.sh - the C lines changed since the base commit are as clang-format writes
# them: scripts/check-format.sh (its header says which lines and files, and what a
# shallow clone does).  Skips without clang-format or git history.
. "$(dirname "$0")/lib.sh"
exec ./scripts/check-format.sh
