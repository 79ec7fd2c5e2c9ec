#!/bin/bash
# t-design-parts.sh - doc/design.md names what the tree has, no more and no less:
#   - the tables of "Parts and the one rule about them" name every top-level folder
#     that git tracks, and every folder they name exists;
#   - the file table of "The launcher" names every launcher/*.c, and every file it
#     names (`x.c`, `x.c/h` for x.c and x.h) exists in launcher/;
#   - in "The picture" and "The two data paths", every C identifier with an underscore
#     (function, type, constant) occurs in a tracked *.c or *.h file, and every source
#     or document file named (`x.c`, `dir/x.h`, `x.md`) is a tracked file.
# So a folder, a launcher file or a function renamed or added without the page fails here.
. "$(dirname "$0")/lib.sh"

page=doc/design.md
[ -f "$page" ] || { bad "$page is missing"; exit 1; }

# section TITLE-PREFIX: the lines of the "## " section whose title starts with it
section() {
    awk -v t="## $1" 'index($0, t) == 1 { on = 1; next } /^## / { on = 0 } on' "$page"
}

# ---- the parts tables --------------------------------------------------------------
parts=$(section "Parts and the one rule" | sed -n 's/^| *`\([^`/]*\)\/` *|.*/\1/p' | sort -u)
[ -n "$parts" ] || bad "no parts table found in $page (rows '| \`folder/\` | ...')"
folders=$(tree_files | sed -n 's,^\([^./][^/]*\)/.*,\1,p' | sort -u)
for d in $folders; do
    printf '%s\n' "$parts" | grep -qx -F "$d" || bad "folder $d/ is in the tree but not in $page's parts tables"
done
for d in $parts; do
    printf '%s\n' "$folders" | grep -qx -F "$d" || bad "$page names folder $d/, which the tree does not have"
done

# ---- the launcher's file table -----------------------------------------------------
named=$(section "The launcher" | grep '^| `' | cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' |
    sed 's,^\(.*\)\.c/h$,\1.c\n\1.h,' | sort -u)
[ -n "$named" ] || bad "no launcher file table found in $page"
lfiles=$(tree_files | sed -n 's,^launcher/\([^/]*\)$,\1,p')
for f in $named; do
    printf '%s\n' "$lfiles" | grep -qx -F "$f" || bad "$page's launcher table names $f, which launcher/ does not have"
done
for f in $(printf '%s\n' "$lfiles" | grep '\.c$'); do
    printf '%s\n' "$named" | grep -qx -F "$f" || bad "launcher/$f is not in $page's launcher table"
done

# ---- names in the picture and the data paths --------------------------------------
text=$(section "The picture"; section "The two data paths")
[ -n "$text" ] || bad "$page has no sections \"The picture\" and \"The two data paths\""
# files: a word ending in .c, .h or .md (built objects such as libmpi.so are not files)
files=$(printf '%s\n' "$text" | grep -o -E '[A-Za-z0-9_./-]+\.(c|h|md)\b' | sed 's,^\./,,' | sort -u)
all=$(tree_files)
nfiles=0
for f in $files; do
    nfiles=$((nfiles + 1))
    printf '%s\n' "$all" | grep -q -E "(^|/)${f//./\\.}\$" || bad "$page names $f, which no tracked file is"
done
# identifiers: words with an underscore, once file names and library names are taken out
ids=$(printf '%s\n' "$text" | sed -E 's/[A-Za-z0-9_./-]+\.(c|h|md|so|la)(\.[0-9]+)?\b//g' |
    grep -o -E '\b[A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]*\b' | sort -u)
nids=0
for id in $ids; do
    nids=$((nids + 1))
    git grep -q -w -F -e "$id" -- '*.c' '*.h' || bad "$page names $id, which no tracked C file has"
done

if [ "$fails" -eq 0 ]; then
    echo "PASS: $(printf '%s\n' "$parts" | wc -l) folders, $(printf '%s\n' "$named" | wc -l) launcher files," \
        "$nfiles files and $nids identifiers in the picture and data paths, all as in the tree"
fi
[ "$fails" -eq 0 ]
