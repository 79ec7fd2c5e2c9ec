#!/bin/bash
# t-man-options.sh - the man pages of doc/man document every option the code has, and no
# option it does not have:
#   - mpi_loom(8): the mpi.conf keys of plugin/conf.c's option table (and no other
#     Loom* key named anywhere in the page);
#   - mpiexec(1): the option names of launcher/args.c's table against the tagged
#     paragraphs of the page's option sections;
#   - mpicc(1), mpicxx(1), mpifort(1): the options the wrapper template mpi/mpiwrap.in
#     handles itself;
#   - loom-info(1): the options of tools/loom-info.in;
#   - and each page names its program's options both ways.
# mandoc's lint of every page is tests/integration/t0650-manpages.sh (it needs mandoc).
. "$(dirname "$0")/lib.sh"

# heads FILE SECTION-REGEX: the option words (leading dashes kept, roff escapes undone) of
# the tagged paragraphs (.TP) of the .SH sections whose title matches
heads() {
    awk -v re="$2" '
        /^\.SH / { on = ($0 ~ re); next }
        on && /^\.TP/ { tp = 1; next }
        on && tp { print; tp = 0 }' "$1" |
        sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/"//g' |
        grep -o -E '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9:-]*' | tr -d ' ,' | sort -u
}
# compare WHAT CODE-LIST PAGE-LIST CODE-FILE PAGE
compare() {
    local n
    for n in $2; do
        printf '%s\n' "$3" | grep -qx -F -e "$n" || bad "$1: $n is in $4 but not documented in $5"
    done
    for n in $3; do
        printf '%s\n' "$2" | grep -qx -F -e "$n" || bad "$1: $5 documents $n, which $4 does not have"
    done
    echo "$1: $(printf '%s\n' "$2" | wc -w) options in $4, $(printf '%s\n' "$3" | wc -w) documented in $5"
}

# ---- mpi.conf keys -------------------------------------------------------------------
conf=$(sed -n 's/^ *{"\(Loom[A-Za-z0-9]*\)", S_P_[A-Z0-9]*},.*/\1/p' plugin/conf.c | sort -u)
[ -n "$conf" ] || bad "no option table found in plugin/conf.c"
page=doc/man/mpi_loom.8
pconf=$(grep -o -E '\bLoom[A-Z][A-Za-z0-9]*' "$page" | sort -u | grep -v -x 'LoomMax')
compare mpi.conf "$conf" "$pconf" plugin/conf.c "$page"

# ---- mpiexec -------------------------------------------------------------------------
opts=$(sed -n 's/^ *{"\([a-z][a-z-]*\)", O_[A-Z_]*, [0-2]},.*/\1/p' launcher/args.c | sort -u)
[ -n "$opts" ] || bad "no option table found in launcher/args.c"
page=doc/man/mpiexec.1
popts=$(heads "$page" 'OPTIONS|SEVERAL HOSTS' | sed 's/^--*//' | sort -u)
compare mpiexec "$opts" "$popts" launcher/args.c "$page"

# ---- compiler wrappers ---------------------------------------------------------------
# the case labels of the argument loop, but for the compile-only flags it merely notes,
# and -v, which it answers when alone
wopts=$( {
    sed -n '/^while \[ "\$n" -gt 0 \]/,/^done/p' mpi/mpiwrap.in | grep -E '^ *-[^)]*\) ' |
        grep -v 'link=no' | sed 's/).*//' | tr '|' '\n' | tr -d ' '
    grep -o -E '"\$1" = -[a-z]+' mpi/mpiwrap.in | sed 's/.*= //'
} | sort -u)
# (one template makes every wrapper: each wrapper's page lists them all; --version goes
# to the compiler by design, as MPICH's and Open MPI's wrappers do)
for w in mpicc mpicxx mpifort; do
    page=doc/man/$w.1
    pw=$(heads "$page" '^\.SH OPTIONS' | grep -v -x -e --version)
    compare "$w" "$wopts" "$pw" mpi/mpiwrap.in "$page"
done

# ---- loom-info -----------------------------------------------------------------------
iopts=$(sed -n '/^for a in "\$@"; do/,/^done/p' tools/loom-info.in | grep -E '^ *-[^)]*\) ' |
    sed 's/).*//' | tr '|' '\n' | tr -d ' ' | sort -u)
page=doc/man/loom-info.1
compare loom-info "$iopts" "$(heads "$page" '^\.SH OPTIONS')" tools/loom-info.in "$page"

[ "$fails" -eq 0 ] && echo "PASS: every option of the code is documented, and no other"
[ "$fails" -eq 0 ]
