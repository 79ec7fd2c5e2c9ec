#!/bin/sh
# t-fsroot-slurm.sh - the PMIx server directory that slurmstepd (our plugin, as root)
# makes for a job of uid 65534, under real srun --mpi=loom on a private one-node
# cluster (tests/slurm/cluster.sh):
#   - PMIx clients of uid 65534 run (the directory, in SlurmdSpoolDir with a random
#     name, is theirs, 0700, once the server is set up), and read the node topology
#     libpmix shares (hwloc.sm, root's, 0644: readable, never writable by them);
#   - the job's own task swaps libpmix's store directories for symlinks to a victim
#     directory and plants symlinks beside them; when the step ends nothing outside
#     the directory is removed or chowned, and the directory is gone.
# Before the fix the stepd's libpmix teardown deleted the victim's files.
me=t-fsroot-slurm
. "$(dirname "$0")/../slurm/lib.sh" "${LOOM_BUILDDIR:-}"
here=$(cd "$(dirname "$0")/../slurm" && pwd) # lib.sh's helpers live there
need_plugin
[ -x "$prog/pmix_client" ] || { echo "SKIP: $me: pmix_client not built (no libpmix)"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: $me: no setpriv"; exit 77; }
U=65534
# the job's user must reach its PMIx directory under SlurmdSpoolDir and its files here
chmod 755 "$cdir"
start_cluster -N 1 -c 16
spool=$cdir/c/spool # SlurmdSpoolDir=$spool/%n
chmod 755 "$cdir/c" "$spool" "$spool"/* 2>/dev/null

# -- PMIx clients as uid 65534
case_ok "PMIx as uid $U: pmix_client -n 4" "pmix_client: 4 ranks, 3 rounds OK" \
    --mpi=loom --uid=$U --gid=$U --chdir=/tmp -N 1 -n 4 "$prog/pmix_client"
case_ok "PMIx as uid $U: the shared topology readable (pmix_client -s)" \
    "pmix_client: 2 ranks, 3 rounds OK" \
    --mpi=loom --uid=$U --gid=$U --chdir=/tmp -N 1 -n 2 "$prog/pmix_client" -s

# -- the task attacks the teardown of its own directory
victim=$cdir/victim
mkdir -p "$victim" && for f in f0 f1 f2 f3; do echo precious >"$victim/$f"; done
chown -R $U:$U "$victim" && chmod 755 "$victim" && chmod 644 "$victim"/f*
task=$cdir/attack.sh
cat >"$task" <<'EOF'
#!/bin/sh
d=$PMIX_SERVER_TMPDIR
echo "dir=$d owner=$(stat -c '%u %a' "$d")"
cd "$d" || exit 1
[ -e hwloc.sm ] && echo "hwloc=$(stat -c '%u %a' hwloc.sm) $( (: >>hwloc.sm) 2>/dev/null && echo writable)"
for x in pmix_dstor_*; do
    [ -d "$x" ] && mv "$x" "$x.away" && ln -s "$1" "$x"
done
ln -s "$1" evil; ln -s "$1/f0" evilfile
mkdir sub && ln -s "$1" sub/link
ls -la "$d"
EOF
chmod 755 "$task"
run_srun --mpi=loom --uid=$U --gid=$U --chdir=/tmp -N 1 -n 1 "$task" "$victim"
dir=$(sed -n 's/^dir=\([^ ]*\) .*/\1/p' "$out.stdout")
[ $rc -eq 0 ] && [ -n "$dir" ]
assert_last "the attacking step ran (its directory: $dir)" "the attacking step did not run"
case $dir in
"$spool"/*/loom-pmix.*.[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) true ;;
*) false ;;
esac
assert_last "the directory is in SlurmdSpoolDir with a random name" \
    "unexpected directory '$dir' (spool $spool)"
# (no command substitution in assert_last's arguments: bash would take its status)
seen=$(grep owner= "$out.stdout")
grep -q "owner=$U 700" "$out.stdout"
assert_last "handed to uid $U with mode 0700" "not handed over: $seen"
seen=$(grep hwloc= "$out.stdout")
! grep -q "hwloc=.*writable" "$out.stdout"
assert_last "the shared topology is not writable by the job ($seen)" \
    "the job can write libpmix's topology: $seen"
# the stepd removes it when the step ends, which may come after srun returns: wait
# for that (30 s at most)
i=0
while [ -n "$dir" ] && [ -e "$dir" ] && [ $i -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
seen=$(ls -la "$dir" 2>&1)
[ -n "$dir" ] && [ ! -e "$dir" ]
assert_last "the stepd removed the directory (after $i polls of 0.1 s)" \
    "$dir left after 30 s: $seen"
bad=
[ "$(stat -c '%u %a' "$victim")" = "$U 755" ] || bad="the directory changed;"
for f in f0 f1 f2 f3; do
    [ "$(stat -c '%u %a' "$victim/$f" 2>/dev/null)" = "$U 644" ] &&
        [ "$(cat "$victim/$f" 2>/dev/null)" = precious ] || bad="$bad $f changed or gone;"
done
[ -z "$bad" ]
assert_last "teardown after the task's symlink swaps: the victim untouched" \
    "teardown after the task's symlink swaps: $bad"
finish
