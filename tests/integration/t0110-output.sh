#!/bin/bash
# t0110-output.sh - output forwarding: -l/--tag-output prefixes name the rank, stdout
# and stderr stay apart, and lines written concurrently by many ranks (longer than a
# pipe buffer, written in pieces) arrive whole, never interleaved.
. "$(dirname "$0")/lib.sh"
need_mpiexec

for opt in -l --tag-output; do
    run_job $opt -n 3 sh -c 'echo "hello from $PMI_RANK"; echo "err from $PMI_RANK" >&2'
    assert_rc 0 "$opt"
    for r in 0 1 2; do
        line=$(grep "hello from $r\$" "$out")
        if [ -z "$line" ]; then
            fail "$opt: no line of rank $r on stdout"; show_output
        elif [ "$line" = "hello from $r" ]; then
            fail "$opt: rank $r line has no prefix: '$line'"
        elif ! printf '%s' "${line%hello from $r}" | grep -qE "(^|[^0-9])$r([^0-9]|$)"; then
            fail "$opt: prefix of rank $r's line does not name rank $r: '$line'"
        else
            ok "$opt: rank $r line prefixed: '$line'"
        fi
        assert_grep -E "err from $r\$" "$err" "$opt: rank $r stderr on stderr"
    done
    assert_no_grep "err from" "$out" "$opt: no stderr lines on stdout"
done

# without -l, lines are forwarded unchanged
run_job -n 2 sh -c 'echo "plain $PMI_RANK"'
assert_rc 0 "no prefix"
assert_eq "$(sort "$out" | tr '\n' '|')" "plain 0|plain 1|" "unprefixed output"

# a last line without a newline is still delivered; empty lines are kept (and tagged)
run_job -n 2 sh -c 'printf "tail-$PMI_RANK"'
assert_rc 0 "unterminated last line"
assert_grep "tail-0" "$out" "rank 0's unterminated line arrived"
assert_grep "tail-1" "$out" "rank 1's unterminated line arrived"
run_job -l -n 2 sh -c 'printf "a\n\nb-$PMI_RANK\n"'
assert_rc 0 "-l with an empty line"
assert_eq "$(wc -l <"$out")" 6 "lines forwarded (empty ones included)"

# Concurrency: N ranks each print L lines of W characters; awk's stdio writes a line in
# 4 KiB pieces, so the launcher must reassemble each rank's lines before writing them.
n=16 lines=100 width=6000
[ "$LOOM_TEST_QUICK" = 1 ] && lines=50
gen='BEGIN { c = substr("abcdefghijklmnopqrstuvwxyz", r % 26 + 1, 1); s = "";
             while (length(s) < w) s = s c c c c c c c c c c c c c c c c;
             s = substr(s, 1, w);
             for (i = 0; i < l; i++) printf "R%d:%d:%s:E\n", r, i, s }'
run_job -n $n sh -c "awk -v r=\$PMI_RANK -v l=$lines -v w=$width '$gen'; awk -v r=\$PMI_RANK -v l=$lines -v w=$width '$gen' >&2"
assert_rc 0 "$n ranks printing $lines lines of $width characters"
for stream in "$out" "$err"; do
    bad=$(awk -F: -v w=$width '
        BEGIN { alpha = "abcdefghijklmnopqrstuvwxyz" }
        { if (NF != 4 || $1 !~ /^R[0-9]+$/ || $4 != "E" || length($3) != w) { bad++; next }
          r = substr($1, 2) + 0; body = $3
          gsub(substr(alpha, r % 26 + 1, 1), "", body)
          if (body != "") { bad++; next }
          seen[$1 ":" $2]++ }
        END { n = 0; for (k in seen) { n++; if (seen[k] != 1) bad++ } print bad + 0, n }' "$stream")
    set -- $bad
    assert_eq "$1" 0 "$(basename "$stream"): mangled or duplicated lines"
    assert_eq "$2" $((n * lines)) "$(basename "$stream"): distinct intact lines"
done
# per rank, lines keep their order
order=$(awk -F: '{ r = $1; i = $2 + 0; if (r in last && i != last[r] + 1) bad++; last[r] = i }
                 END { print bad + 0 }' "$out")
assert_eq "$order" 0 "lines out of order within a rank"

finish
