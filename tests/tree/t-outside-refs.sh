#!/bin/bash
# t-outside-refs.sh - no tracked file points to what a clone does not have: notes kept
# beside the checkout (../shared, reference.md), absolute paths of the machine the
# check runs on (the folder that holds this checkout, the other git worktrees of this
# repository: taken from git at run time, never written here), or notes on who works
# on what.  Every fact the
# code relies on belongs in doc/ with its public source (doc/wire.md, doc/clients.md).
# Prints each offending line; the patterns are in the list below.
. "$(dirname "$0")/lib.sh"

# extended regexps, matched case-insensitively on every tracked text file but this one
patterns=(
    '\.\./shared'                     # notes beside the checkout
    'reference\.md'                   # a reference file that is not in the tree
    'engineer'                        # who works on what
    'who owns (this|which|what) file' # ownership notes
    '\(area [A-Z]\)'                  # a work assignment's label
)
# this machine's paths: the folder holding the checkout, and every other worktree
ere_quote() { printf '%s' "$1" | sed 's/[][\.*^$(){}?+|]/\\&/g'; }
top=$(git rev-parse --show-toplevel)
parent=$(dirname "$top")
[ "$parent" != / ] && patterns+=("$(ere_quote "$parent")/")
while read -r kw wt; do
    [ "$kw" = worktree ] && [ "$wt" != "$top" ] && [ "$(dirname "$wt")" != "$parent" ] &&
        patterns+=("$(ere_quote "$wt")")
done < <(git worktree list --porcelain 2>/dev/null)

self=tests/tree/t-outside-refs.sh
for p in "${patterns[@]}"; do
    hits=$(git grep -n -I -i -E -e "$p" -- . ":!$self" 2>/dev/null)
    [ -z "$hits" ] && continue
    bad "pattern '$p':"
    printf '%s\n' "$hits" | head -n 20 | sed 's/^/    /'
done
[ "$fails" -eq 0 ] && echo "PASS: no pointers outside the tree (${#patterns[@]} patterns, $(tree_files | wc -l) files)"
[ "$fails" -eq 0 ]
