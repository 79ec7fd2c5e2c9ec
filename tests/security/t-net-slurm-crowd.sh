#!/bin/sh
# t-net-slurm-crowd.sh - 1 000 idle TCP connections on every tree port of a real step
# must not keep the real children out (issue 18 item 5), under srun --mpi=loom -N 4 on
# a private 4-slurmd cluster (tests/slurm/cluster.sh).  To reach the tree ports while
# they wait for children, node loom4's slurmd is stopped (SIGSTOP) before srun: the
# stepds of nodes 0-2 start, listen and wait at the rendezvous for node 3; the test
# finds their TCP listeners (ss), opens 1 000 idle connections on each (net_tool crowd),
# then resumes loom4's slurmd.  The step must pass.  Before the fix 64 idle connections
# filled the stepd's table of unauthenticated connections for the whole connect timeout
# and every real child was refused: the step failed.
me=t-net-slurm-crowd
. "$(dirname "$0")/../slurm/lib.sh" "${LOOM_BUILDDIR:-}"
here=$(cd "$(dirname "$0")/../slurm" && pwd) # lib.sh's helpers live there
need_plugin
tool=$bdir/tests/security/net_tool
[ -x "$tool" ] || { echo "SKIP: $me: net_tool not built ($tool)"; exit 77; }
command -v ss >/dev/null 2>&1 || { echo "SKIP: $me: ss (iproute2) not installed"; exit 77; }
start_cluster -N 4
pid4=$(cat "$cdir/c/run/slurmd.loom4.pid" 2>/dev/null)
[ -n "$pid4" ] && kill -0 "$pid4" 2>/dev/null || { echo "FAIL: $me: no slurmd for loom4"; exit 1; }
crowds=
resume() {
    kill -CONT "$pid4" 2>/dev/null
    for c in $crowds; do kill "$c" 2>/dev/null; done
}
kill -STOP "$pid4"
timeout -k 5 120 srun --mpi=loom -N 4 -n 8 "$prog/pmi2_kvstest_loom" >"$out" 2>"$cdir/srun.err" &
spid=$!
# the tree listeners of this cluster's stepds: a slurmstepd's TCP socket listening on
# every address (its PMIx tool listener, if any, is on 127.0.0.1), in a process that
# has this cluster's log open (other clusters may run on this machine)
step_ports() {
    ss -Hltnp 2>/dev/null | awk '/"slurmstepd"/ && ($4 ~ /^(0\.0\.0\.0|\*|\[::\]):/) {
        n = split($4, a, ":"); port = a[n]
        if (match($0, /pid=[0-9]+/)) print port, substr($0, RSTART + 4, RLENGTH - 4) }' |
        while read -r port pid; do
            ls -l /proc/"$pid"/fd 2>/dev/null | grep -qF "$cdir/c/" && echo "$port"
        done | sort -u
}
ports=
i=0
while [ $i -lt 200 ]; do
    ports=$(step_ports)
    [ -n "$ports" ] && break
    sleep 0.1
    i=$((i + 1))
done
sleep 0.5
ports=$(step_ports)
if [ -z "$ports" ]; then
    resume
    wait $spid
    echo "FAIL: $me: no stepd tree listener appeared while loom4 was stopped"
    sed 's/^/  srun: /' "$cdir/srun.err" | tail -n 10
    exit 1
fi
n=0
for p in $ports; do
    "$tool" crowd 127.0.0.1 "$p" 1000 100 2>"$cdir/crowd.$p" &
    crowds="$crowds $!"
    n=$((n + 1))
done
for p in $ports; do
    i=0
    while [ $i -lt 100 ] && ! grep -q open "$cdir/crowd.$p"; do sleep 0.1; i=$((i + 1)); done
    echo "# port $p: $(cat "$cdir/crowd.$p")"
done
kill -CONT "$pid4"
wait $spid
rc=$?
resume
if [ $rc -eq 0 ] && grep -q "rounds OK" "$out"; then
    echo "PASS: $me: srun -N 4 passed with 1000 idle connections on each of $n tree port(s)"
    npass=$((npass + 1))
else
    echo "FAIL: $me: srun -N 4 exit $rc with 1000 idle connections on each of $n tree port(s)"
    sed 's/^/  srun: /' "$cdir/srun.err" | tail -n 15
    nfail=$((nfail + 1))
fi
finish
