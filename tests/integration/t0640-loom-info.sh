#!/bin/bash
# t0640-loom-info.sh - loom-info (tools/loom-info.in) from the build tree: the build
# summary names this build (version, PMI client, Slurm release, hwloc/munge/PMIx as
# configure found them), --all and --env list every row of tools/envvars.txt with its
# default and the current value (a value set here shows, an unset one says so),
# --parsable gives one key:value line per item and one var: line per row, --version and
# --help exit 0 on stdout, an unknown option exits 2.
. "$(dirname "$0")/lib.sh"
info=$LOOM_BUILDDIR/tools/loom-info
table=$LOOM_SRCDIR/tools/envvars.txt
[ -x "$info" ] || skip "no loom-info in the build tree ($info)"
status=$LOOM_BUILDDIR/config.status
nrows=$(grep -v '^#' "$table" | grep -c '|')

run_cmd "$info"
assert_rc 0 "loom-info"
version=$(sed -n "s/^S\[\"PACKAGE_VERSION\"\]=\"\(.*\)\"$/\1/p" "$status")
assert_grep -E "^ *Loom: $version\$" "$out" "names version $version"
assert_grep -E '^ *Configured with: ' "$out" "shows the configure line"
assert_grep -E '^ *Transports: shm.*, tcp$' "$out" "names the transports"
pmi=$(sed -n 's/^S\["with_pmi"\]="\(.*\)"$/\1/p' "$status")
assert_grep -E "^ *PMI client: .*--with-pmi=$pmi\)" "$out" "names the PMI client (--with-pmi=$pmi)"
for k in hwloc munge pmix-server slurm-plugin; do
    assert_grep -E "^ *(hwloc|munge|PMIx server|Slurm plugin): " "$out" "has a $k line"
done
slurm=$(sed -n 's/^S\["LOOM_SLURM_RELEASE"\]="\(.*\)"$/\1/p' "$status")
if [ "$slurm" != no ]; then
    assert_grep -E "^ *Slurm plugin: mpi_loom.so for Slurm $slurm\$" "$out" "names the plugin's Slurm release $slurm"
fi
hw=$(sed -n 's/^S\["LOOM_HWLOC_VERSION"\]="\(.*\)"$/\1/p' "$status")
assert_grep -E "^ *hwloc: $hw\$" "$out" "hwloc $hw as configure found it"
assert_no_grep LOOM_ "$out" "no variables without --all"

# --all: every row, with a set value shown and an unset one marked
LOOM_MPI_NETMOD=tcp LOOM_MPI_TCP_IF='eth0 x' run_cmd "$info" --all
assert_rc 0 "loom-info --all"
assert_grep -E "^LOOM_MPI_NETMOD +libmpi +auto +tcp\$" "$out" "LOOM_MPI_NETMOD: reader, default and the value set"
assert_grep -E "^LOOM_MPI_TCP_IF +libmpi +all +eth0 x\$" "$out" "a value with a space is shown as is"
assert_grep -E "^LOOM_MPI_EAGER_MAX +libmpi +32768 +\(unset\)\$" "$out" "an unset variable says so"
missing=0
while IFS='|' read -r name _; do
    case $name in '#'* | '') continue ;; esac
    grep -q -E "^$name " "$out" || { missing=$((missing + 1)); say "  $name missing"; }
done <"$table"
assert_eq "$missing" 0 "rows of envvars.txt missing from --all"
assert_grep -E '^ *Loom: ' "$out" "--all also shows the build"

# --env --parsable: one var: line per row, the value last (may hold ':')
LOOM_MPI_TCP_IF=10.0.0.0/8 LOOM_BIND=core run_cmd "$info" --env --parsable
assert_rc 0 "loom-info --env --parsable"
assert_eq "$(grep -c '^var:' "$out")" "$nrows" "var: lines (one per row of envvars.txt)"
assert_eq "$(grep -c -v '^var:' "$out")" 0 "lines other than var: with --env"
assert_grep -x "var:LOOM_MPI_TCP_IF:libmpi:all:10.0.0.0/8" "$out" "parsable line of a set variable"
assert_grep -x "var:LOOM_BIND:libmpi:none:core" "$out" "parsable LOOM_BIND"
assert_grep -x "var:LOOM_MPI_EAGER_MAX:libmpi:32768:" "$out" "parsable line of an unset variable"

run_cmd "$info" --parsable
assert_rc 0 "loom-info --parsable"
assert_grep -x "version:$version" "$out" "parsable version"
assert_grep -E "^pmi-client:.*--with-pmi=$pmi\)\$" "$out" "parsable pmi-client"
bad=$(grep -c -v -E '^[a-z0-9-]+:' "$out")
assert_eq "$bad" 0 "lines not of the form key:value"

run_cmd "$info" --version
assert_rc 0 "loom-info --version"
assert_grep -x "loom-info (Loom) $version" "$out" "--version on stdout"
run_cmd "$info" --help
assert_rc 0 "loom-info --help"
assert_grep "--parsable" "$out" "--help names --parsable"
run_cmd "$info" --bogus
assert_rc 2 "unknown option"
assert_grep "unknown option '--bogus'" "$err" "says which option"
LOOM_ENVVARS=/nonexistent run_cmd "$info" --env
assert_rc 1 "unreadable table"
finish
