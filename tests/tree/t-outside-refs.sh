#!/bin/bash
# t-outside-refs.sh - no tracked file points to what a clone does not have: notes kept
# beside the checkout (../shared, reference.md), paths of one machine's work
# directories (/work/..., git worktrees), or notes on who works on what.  Every fact the
# code relies on belongs in doc/ with its public source (doc/wire.md, doc/clients.md).
# Prints each offending line; the patterns are in the list below.
. "$(dirname "$0")/lib.sh"

# extended regexps, matched case-insensitively on every tracked text file but this one
patterns=(
    '\.\./shared'                     # notes beside the checkout
    'reference\.md'                   # a reference file that is not in the tree
    '(^|[^a-z0-9_.])/work/'           # one machine's work directory
    '/wt-[a-z0-9]+'                   # a git worktree of a work directory
    'engineer'                        # who works on what
    'who owns (this|which|what) file' # ownership notes
    '\(area [A-Z]\)'                  # a work assignment's label
)

self=tests/tree/t-outside-refs.sh
for p in "${patterns[@]}"; do
    hits=$(git grep -n -I -i -E -e "$p" -- . ":!$self" 2>/dev/null)
    [ -z "$hits" ] && continue
    bad "pattern '$p':"
    printf '%s\n' "$hits" | head -n 20 | sed 's/^/    /'
done
[ "$fails" -eq 0 ] && echo "PASS: no pointers outside the tree (${#patterns[@]} patterns, $(tree_files | wc -l) files)"
[ "$fails" -eq 0 ]
