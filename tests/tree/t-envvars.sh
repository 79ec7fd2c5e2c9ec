#!/bin/bash
# t-envvars.sh - tools/envvars.txt, the one table of LOOM_* environment variables that
# loom-info prints, matches the tree and the man pages:
#   - every "LOOM_..." string in the C sources of the installed parts (not tests/, not
#     plugin/test/), every LOOM_ variable a shipped script reads (the compiler wrapper
#     template, loom-info) and every wrapper variable mpi/Makefile.am substitutes is a
#     row of the table;
#   - every row is read somewhere (no stale row);
#   - every row but the "internal" ones is documented in a page of doc/man, and every
#     LOOM_ variable a page names is a row (a page names no variable that went away).
# So a getenv("LOOM_NEW") added without its row and its documentation fails here.
. "$(dirname "$0")/lib.sh"

table=tools/envvars.txt
[ -f "$table" ] || { bad "$table is missing"; exit 1; }
rows=$(grep -v '^#' "$table" | cut -d'|' -f1 | sed '/^$/d' | sort)
dups=$(printf '%s\n' "$rows" | uniq -d)
[ -z "$dups" ] || bad "$table has rows twice: $dups"

src_dirs=(common pmiserv pmixsrv treenet libpmi2 launcher plugin mpi)
used=$( {
    git grep -h -o -E '"LOOM_[A-Z0-9_]+' -- "${src_dirs[@]/%//*.c}" "${src_dirs[@]/%//*.h}" \
        ':!plugin/test/*' | tr -d '"'
    git grep -h -o -E '\$\{?LOOM_[A-Z0-9_]+' -- mpi/mpiwrap.in tools/loom-info.in | tr -d '${'
    git grep -h -o -E '%ENV1%\|LOOM_[A-Z0-9_]+' -- mpi/Makefile.am | sed 's/.*|//'
} | sort -u)
[ -n "$used" ] || bad "found no LOOM_ variable in the sources (did the search break?)"

for v in $used; do
    printf '%s\n' "$rows" | grep -qx -F "$v" ||
        bad "$v is read in the tree ($(git grep -l -F "$v" -- "${src_dirs[@]}" tools | head -n 3 | tr '\n' ' ')) but is not a row of $table"
done
for v in $rows; do
    printf '%s\n' "$used" | grep -qx -F "$v" || bad "$table has $v, which nothing in the tree reads"
done

# the man pages: every row users may set is documented; every variable named is a row
pages=(doc/man/*.[1-8])
documented=$(cat "${pages[@]}" | grep -o -E 'LOOM_[A-Z0-9_]*[A-Z0-9]_?' | sort -u)
public=$(grep -v '^#' "$table" | awk -F'|' 'NF >= 4 && $2 != "internal" { print $1 }' | sort)
for v in $public; do
    printf '%s\n' "$documented" | grep -qx -F "$v" ||
        bad "$v ($(grep "^$v|" "$table" | cut -d'|' -f2)) is in $table but no page of doc/man documents it"
done
for v in $documented; do
    case $v in *_) continue ;; esac # a family written as LOOM_PMI_MAX_* in prose
    printf '%s\n' "$rows" | grep -qx -F "$v" ||
        bad "$(grep -l -w -F "$v" "${pages[@]}" | tr '\n' ' ')names $v, which is not a row of $table"
done

if [ "$fails" -eq 0 ]; then
    echo "PASS: $(printf '%s\n' "$rows" | wc -l) variables in $table, $(printf '%s\n' "$used" | wc -l) read in the tree," \
        "$(printf '%s\n' "$public" | wc -l) documented in ${#pages[@]} pages"
fi
[ "$fails" -eq 0 ]
