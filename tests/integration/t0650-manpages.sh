#!/bin/bash
# t0650-manpages.sh - every page of doc/man renders and is clean: `mandoc -T lint` finds
# nothing at warning level or above, `man -l` renders a NAME and a SEE ALSO section, each
# page's SEE ALSO names only Loom pages that exist (another package's page may be absent), and
# doc/Makefile.am installs every page.  (That the pages document exactly the options
# and variables of the code is tests/tree/t-man-options.sh and t-envvars.sh.)
. "$(dirname "$0")/lib.sh"
command -v mandoc >/dev/null || skip "mandoc not installed (scripts/deps.sh installs it)"
command -v man >/dev/null || skip "man not installed"
mandir=$LOOM_SRCDIR/doc/man
pages=("$mandir"/*.[1-8])
[ "${#pages[@]}" -ge 9 ] || fail "only ${#pages[@]} pages in doc/man"
ours=$(for p in "${pages[@]}"; do b=${p##*/}; echo "${b%.*}(${b##*.})"; done)

for p in "${pages[@]}"; do
    b=${p##*/}
    run_cmd mandoc -T lint -W warning "$p"
    if [ "$rc" -eq 0 ] && [ ! -s "$out" ] && [ ! -s "$err" ]; then
        ok "mandoc -T lint: $b clean"
    else
        fail "mandoc -T lint $b (exit $rc):"
        cat "$out" "$err" | head -n 10 | sed 's/^/    | /'
    fi
    MANWIDTH=80 run_cmd man -l "$p"
    assert_rc 0 "man -l $b"
    assert_grep -x NAME "$out" "$b renders a NAME section"
    assert_grep -x "SEE ALSO" "$out" "$b renders a SEE ALSO section"
    # the references of SEE ALSO: ours, or a page this system has
    refs=$(awk '/^SEE ALSO$/ { on = 1; next } /^[A-Z]/ { on = 0 } on' "$out" |
        grep -o -E '[a-z_][a-z0-9_.-]*\([1-8]\)' | sort -u)
    for r in $refs; do
        if printf '%s\n' "$ours" | grep -qx -F "$r"; then
            continue
        fi
        case $r in
        loom* | libpmi* | mpi_loom* | mpicc* | mpicxx* | mpifort* | mpiexec\(*)
            fail "$b: SEE ALSO names $r, which doc/man does not have" ;;
        *) man -w "${r%(*}" >/dev/null 2>&1 || say "note: $b names $r, another package's page not installed here" ;;
        esac
    done
    grep -q -F "man/$b" "$LOOM_SRCDIR/doc/Makefile.am" && ok "doc/Makefile.am installs $b" ||
        fail "doc/Makefile.am does not install man/$b"
done
finish
