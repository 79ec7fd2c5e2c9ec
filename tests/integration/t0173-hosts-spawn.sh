#!/bin/bash
# t0173-hosts-spawn.sh - MPI_Comm_spawn from a multi-host mpiexec (-hosts, -f): the
# spawning rank's proxy hands the request to mpiexec, which runs the new job over the
# job's own hosts.  The hosts are fake: a stand-in for ssh (-launcher-exec) runs each
# proxy here, in a UTS namespace of its own named after the host, so a child's
# MPI_Get_processor_name says where it runs (skipped where unshare -u is not allowed).
#   - 4 children over -hosts ha,hb,hc go round-robin from the first host, and talk to
#     their parent; so with a host file, and with the info key "host" (a list);
#   - a host outside the job's list is refused with a message naming it, and the job
#     goes on; so is one in a hostfile info, and an unreadable hostfile;
#   - children that exit before MPI_Init end the spawn (or, once it was answered, the
#     job) with an error naming the spawned job, not a hang;
#   - PMI-2 and PMI-1 spawns (two commands, appnums, preput) and the hostile requests
#     of t0240 across 3 virtual hosts of -launcher fork.
# Before, a multi-host mpiexec refused every spawn ("not supported ... yet").
. "$(dirname "$0")/lib.sh"
need_mpiexec
need_prog pmi2_spawn pmi1_spawn
where=$LOOM_BUILDDIR/mpi/dyn_spawn_where
[ -x "$where" ] || skip "mpi/dyn_spawn_where not built"
unshare -u true 2>/dev/null || skip "unshare -u not allowed here (fake hosts need a UTS namespace)"

cat >"$TEST_TMP/fakessh" <<EOS
#!/bin/sh
# ssh HOST COMMAND...: COMMAND here, with HOST as its host name
h=\$1
shift
echo "\$h" >>"$TEST_TMP/ssh.log"
exec unshare -u sh -c 'hostname "\$0" && exec "\$@"' "\$h" "\$@"
EOS
chmod +x "$TEST_TMP/fakessh"
S=(-launcher ssh -launcher-exec "$TEST_TMP/fakessh")
children() { sed -n 's/^dyn_spawn_where: child [0-9]* on //p' "$out" | tr '\n' ' '; }

# round-robin over the job's hosts, from the first
run_job -t 90 "${S[@]}" -hosts ha,hb,hc -n 2 "$where" 4
assert_rc 0 "2 parents on ha,hb spawn 4 children"
assert_eq "$(children)" "ha hb hc ha " "children 0..3 on ha hb hc ha"
assert_grep -x "dyn_spawn_where: parent OK" "$out" "every child answered its parent"
assert_no_grep "not supported" "$err" "no refusal"

# a host file: its slots place the children as they place the job's ranks
printf 'ha:2\nhb\nhc:2\n' >"$TEST_TMP/hf"
run_job -t 90 "${S[@]}" -f "$TEST_TMP/hf" -n 1 "$where" 5
assert_rc 0 "host file job spawns 5"
assert_eq "$(children)" "ha ha hb hc hc " "children in blocks of the host file's slots"

# info "host": only the hosts asked, in their order
run_job -t 90 "${S[@]}" -hosts ha,hb,hc -n 2 "$where" 3 hc,hb
assert_rc 0 "spawn with info host=hc,hb"
assert_eq "$(children)" "hc hb hc " "children on hc, hb only"

# a host outside the job's list: refused, named, and the job goes on
run_job -t 90 "${S[@]}" -hosts ha,hb -n 2 "$where" 2 ha,elsewhere
assert_rc 0 "the job goes on after the refusal"
assert_grep -x "dyn_spawn_where: spawn refused" "$out" "MPI_Comm_spawn returned MPI_ERR_SPAWN"
assert_grep -E "host 'elsewhere' \(info \"host\" of .*dyn_spawn_where\) is not one of this job's hosts" "$err" "the refusal names the host"

# info "hostfile": its hosts, checked the same way; a file that cannot be read is named
printf 'hb\n' >"$TEST_TMP/hf.b"
run_job -t 90 "${S[@]}" -hosts ha,hb -n 1 "$where" 2 "file:$TEST_TMP/hf.b"
assert_rc 0 "spawn with info hostfile"
assert_eq "$(children)" "hb hb " "children on the host file's host"
printf 'hz\n' >"$TEST_TMP/hf.z"
run_job -t 90 "${S[@]}" -hosts ha,hb -n 1 "$where" 2 "file:$TEST_TMP/hf.z"
assert_grep -x "dyn_spawn_where: spawn refused" "$out" "a host file naming another host is refused"
assert_grep "host 'hz' (info \"hostfile\" of" "$err" "the refusal names the host"
run_job -t 90 "${S[@]}" -hosts ha,hb -n 1 "$where" 2 "file:$TEST_TMP/nosuch"
assert_rc 0 "the job goes on after a bad hostfile info"
assert_grep -E "info \"hostfile\" of .*: cannot read host file .*/nosuch" "$err" "the unreadable host file is named"

# children that exit with code 3 before MPI_Init: the spawn fails (or, when every
# child had started, the job fails) naming the spawned job; never a hang
run_job -t 90 "${S[@]}" -hosts ha,hb,hc -n 2 "$where" early 2
if [ "$rc" -eq 0 ]; then
    assert_grep -x "dyn_spawn_where: spawn refused" "$out" "early exit: the spawn failed"
    assert_grep -E "spawn failed: rank [01] of spawned job [0-9]+\.[0-9]+ on host h[ab] exited with code 3" "$err" "the spawn's error names the spawned job, rank and host"
else
    assert_rc 3 "early exit after the spawn was answered: the child's code ends the job"
    assert_grep -E "spawned job [0-9]+\.[0-9]+ failed \(its mpiexec exited with code 3\)" "$err" "the job's error names the spawned job"
fi
assert_grep -E "rank [01] of spawned job [0-9]+\.[0-9]+ on host h[ab] exited with code 3" "$err" "the failed child is named"

# PMI-2 and PMI-1 over 3 virtual hosts: two commands, appnums, preput pairs
for p in pmi2_spawn pmi1_spawn; do
    run_job -t 60 -launcher fork -hosts a,b,c -n 2 "$LOOM_PROGDIR/$p" parent 3
    assert_rc 0 "$p: -hosts a,b,c parent of 2 ranks spawns 1 + 2 processes"
    assert_grep -x "pmi_spawn: parent spawned 3 OK" "$out" "$p: spawn answered"
    assert_grep -x "pmi_spawn: child appnum 0 of 3 OK" "$out" "$p: first command's child"
    assert_grep -x "pmi_spawn: child appnum 1 of 3 OK" "$out" "$p: second command's children"
    run_job -t 60 -launcher fork -hosts a,b -n 2 "$LOOM_PROGDIR/$p" hostile
    assert_rc 0 "$p: hostile spawns refused across hosts, the job goes on"
    assert_grep -x "pmi_spawn: hostile requests refused OK" "$out" "$p: every hostile spawn failed cleanly"
    assert_grep "processes asked, 256 of at most 256 left for this job" "$err" "$p: the budget is named"
done

finish
