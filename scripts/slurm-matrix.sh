#!/bin/bash
# scripts/slurm-matrix.sh - the plugin's Slurm release matrix: for each release, build Slurm
# (scripts/slurm-release.sh), build Loom against it, check that the plugin compiles without
# warnings, run the whole srun suite (tests/slurm/t-loom-*.sh, t-slurm-pmi2-clients.sh) on
# private clusters of that release, and write a markdown table (release x test script).
#
# Usage: scripts/slurm-matrix.sh [-o FILE] [-t 'TEST ...'] [--report] [RELEASE ...]
#   RELEASE  e.g. 22.05 24.11 (default: the installed Debian Slurm, then every release
#            tarball slurm-X.Y.Z.tar.* that scripts/slurm-release.sh finds, oldest first)
#   -o FILE  write the table there (default: stdout)
#   -t LIST  only these test scripts (names without .sh, e.g. 't-loom-1node t-loom-dropin')
#   --report run nothing: write the table from the results the earlier runs left in the
#            logs directory (each release's run leaves <release>.results there)
# Environment: LOOM_SLURM_TARBALLS, LOOM_SLURM_CACHE (see slurm-release.sh);
#   LOOM_MATRIX_LOGS  directory for the build and test logs (default build-slurm-matrix);
#   LOOM_MATRIX_TEST_TIMEOUT  outer bound per test script in seconds (default 1800; every
#                     srun inside is bounded by the tests themselves).
# Per release, Loom is built in build-slurm-<X.Y> (LOOM_BUILD_DIR) with
# LOOM_SLURM_SOURCE=<that release's source> through scripts/build.sh (plus mpi/'s test
# programs: make -C mpi check TESTS=), under nice -n 19; the
# plugin directory is then rebuilt from clean (make -C plugin clean all) so that its log
# holds every compiler warning of mpi_loom.so and the drop-in mpi_pmi2.so.
# The installed Debian release runs with LOOM_SLURM_PREFIX unset (the system Slurm).
# Exit status: 0 when every release built and every test script passed (or skipped), else 1.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
out=-
tests=
report=0
while [ $# -gt 0 ]; do
    case $1 in
    -o) out=$2; shift 2 ;;
    -t) tests=$2; shift 2 ;;
    --report) report=1; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "slurm-matrix.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
logs=${LOOM_MATRIX_LOGS:-$top/build-slurm-matrix}
tmo=${LOOM_MATRIX_TEST_TIMEOUT:-1800}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
say() { echo "slurm-matrix.sh: $*" >&2; }

# Default releases: Debian's, then every tarball beside the checkout (or in LOOM_SLURM_TARBALLS).
if [ $# -eq 0 ]; then
    rels=()
    inst=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null || true); inst=${inst%%-*}
    [ -n "$inst" ] && rels+=("${inst%.*}")
    if [ -n "${LOOM_SLURM_TARBALLS:-}" ]; then dirs=("$LOOM_SLURM_TARBALLS")
    else dirs=("$top"/../*/ "$top"/../*/*/); fi
    for f in $(for d in "${dirs[@]}"; do ls "$d" 2>/dev/null | sed -n 's/^slurm-\([0-9]*\.[0-9]*\)\.[0-9]*\.tar\..*$/\1/p'; done | sort -uV); do
        [[ " ${rels[*]:-} " == *" $f "* ]] || rels+=("$f")
    done
    set -- "${rels[@]}"
fi
[ $# -gt 0 ] || { say "no release to test"; exit 1; }
alltests=$(cd tests/slurm && ls t-loom-*.sh t-slurm-pmi2-clients.sh | sed 's/\.sh$//' | tr '\n' ' ')
[ -n "$tests" ] || tests=$alltests

declare -A cell ver sbuild lbuild warn
status=0
# save REL: what the table needs of release REL, for --report
save() {
    local r=$1 t
    {
        printf 'ver[%q]=%q; sbuild[%q]=%q; lbuild[%q]=%q; warn[%q]=%q\n' "$r" "${ver[$r]:-}" \
            "$r" "${sbuild[$r]:-}" "$r" "${lbuild[$r]:-}" "$r" "${warn[$r]:-}"
        for t in $alltests; do
            [ -n "${cell[$r,$t]:-}" ] && printf 'cell[%q]=%q\n' "$r,$t" "${cell[$r,$t]}"
        done
        printf 'stamp[%q]=%q\n' "$r" "$(date -u '+%F %H:%M UTC')"
    } >"$logs/$r.results"
}
declare -A stamp
if [ "$report" = 1 ]; then
    for rel in "$@"; do
        # shellcheck disable=SC1090
        if [ -f "$logs/$rel.results" ]; then . "$logs/$rel.results"; else ver[$rel]="$rel (no results)"; fi
    done
fi
for rel in "$@"; do
    [ "$report" = 1 ] && break
    # a run of some scripts (-t) keeps the other scripts' earlier results
    # shellcheck disable=SC1090
    [ -f "$logs/$rel.results" ] && . "$logs/$rel.results"
    say "== Slurm $rel"
    if ! envs=$(scripts/slurm-release.sh "$rel" --env 2>"$logs/$rel.release.err"); then
        say "Slurm $rel: no build (see $logs/$rel.release.err)"
        cat "$logs/$rel.release.err" >&2
        ver[$rel]="$rel (not built)"; status=1; save "$rel"; continue
    fi
    eval "$envs"
    ver[$rel]=$LOOM_SLURM_VERSION
    if [ -n "$LOOM_SLURM_PREFIX" ]; then
        sbuild[$rel]="$(cat "$(dirname "$LOOM_SLURM_PREFIX")/build-seconds" 2>/dev/null || echo '?') s"
    else
        sbuild[$rel]="installed (Debian)"
    fi
    bdir=build-slurm-$rel
    blog=$logs/$rel.loom-build.log
    t0=$(date +%s)
    if ! LOOM_BUILD_DIR=$bdir LOOM_SLURM_SOURCE=$LOOM_SLURM_SOURCE nice -n 19 ./scripts/build.sh >"$blog" 2>&1; then
        say "Loom did not build against Slurm $rel (see $blog)"
        lbuild[$rel]="FAILED"; status=1; save "$rel"; continue
    fi
    # Loom's MPI test programs (check_PROGRAMS of mpi/, which t-loom-mpi4 and -mpi-hosts run)
    if ! nice -n 19 make -C "$bdir/mpi" -j"${MAKE_JOBS:-2}" check TESTS= >>"$blog" 2>&1; then
        say "Loom's MPI test programs did not build against Slurm $rel (see $blog)"
        lbuild[$rel]="mpi tests FAILED"; status=1; save "$rel"; continue
    fi
    # The plugin from clean, so that every warning is in the log.
    plog=$logs/$rel.plugin-build.log
    if ! (nice -n 19 make -C "$bdir/plugin" clean && nice -n 19 make -C "$bdir/plugin" -j"${MAKE_JOBS:-2}") >"$plog" 2>&1; then
        say "the plugin did not build against Slurm $rel (see $plog)"
        lbuild[$rel]="plugin FAILED"; status=1; save "$rel"; continue
    fi
    lbuild[$rel]="$(($(date +%s) - t0)) s"
    nw=$(grep -c 'warning:' "$plog")
    warn[$rel]=$nw
    [ "$nw" -eq 0 ] || { say "Slurm $rel: $nw compiler warnings in the plugin (see $plog)"; status=1; }
    for so in mpi_loom.so mpi_pmi2.so; do
        [ -f "$bdir/plugin/.libs/$so" ] || { say "Slurm $rel: $so missing"; status=1; }
    done
    for t in $tests; do
        tlog=$logs/$rel.$t.log
        say "Slurm $rel: $t"
        t0=$(date +%s)
        LOOM_SLURM_PREFIX=$LOOM_SLURM_PREFIX timeout -k 10 "$tmo" \
            "tests/slurm/$t.sh" "$top/$bdir" >"$tlog" 2>&1 </dev/null
        rc=$?
        dt=$(($(date +%s) - t0))
        sum=$(sed -n 's/^.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$tlog" | tail -1)
        if [ -n "$sum" ]; then
            read -r p f s <<<"$sum"
        else
            p=$(grep -c '^PASS' "$tlog"); f=$(grep -c '^FAIL' "$tlog"); s=$(grep -c '^SKIP' "$tlog")
        fi
        case $rc in
        0) mark= ;;
        77) mark=" skip" ;;
        124|137) mark=" TIMEOUT"; status=1 ;;
        *) mark=" rc $rc"; status=1 ;;
        esac
        cell[$rel,$t]="$p/$f/$s, ${dt} s$mark"
        say "  $t: $p passed, $f failed, $s skipped, ${dt} s (rc $rc)"
    done
    save "$rel"
    . "$logs/$rel.results"
done

table() {
    local rel t row
    row="| | "; for rel in "$@"; do row+="$rel | "; done; echo "${row% }"
    row="|---|"; for rel in "$@"; do row+="---|"; done; echo "$row"
    row="| Slurm release | "; for rel in "$@"; do row+="${ver[$rel]:-?} | "; done; echo "${row% }"
    row="| Slurm build (configure+make+install) | "; for rel in "$@"; do row+="${sbuild[$rel]:--} | "; done; echo "${row% }"
    row="| Loom build (incremental) + plugin rebuild | "; for rel in "$@"; do row+="${lbuild[$rel]:--} | "; done; echo "${row% }"
    row="| plugin compiler warnings | "; for rel in "$@"; do row+="${warn[$rel]:--} | "; done; echo "${row% }"
    row="| run | "; for rel in "$@"; do row+="${stamp[$rel]:--} | "; done; echo "${row% }"
    for t in $alltests; do
        row="| $t | "; for rel in "$@"; do row+="${cell[$rel,$t]:--} | "; done; echo "${row% }"
    done
    echo
    echo "Cells: passed/failed/skipped cases, wall time of the script; 'rc N' = the script's exit status when not 0."
}
if [ "$out" = - ]; then table "$@"; else table "$@" >"$out"; say "table written to $out"; fi
exit $status
