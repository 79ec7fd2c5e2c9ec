#!/bin/sh
# t-loom-portrange.sh - Loom's listeners honour slurm.conf's SrunPortRange: srun's rendezvous
# server and the stepds' tree-link listeners bind inside the range, and a range whose every
# port is taken ends the step with a line naming the range instead of hanging.
#
# Usage: t-loom-portrange.sh [BUILDDIR]      (environment: see lib.sh)
# Cluster: 4 network-namespace nodes (cluster.sh -n 4) whose slurm.conf gets, through
# LOOM_SLURM_CONF_EXTRA, SrunPortRange=LO-HI (12 ports from 61000 upwards that nothing in
# the root namespace uses: above Linux's default ephemeral range 32768-60999, so outgoing
# connections never take them) and a Prolog that holds loom4's part of a job while the
# file $cdir/hold exists (30 s at most).
# Cases:
#   listeners  srun -v --mpi=loom -N 4 -n 4 with LOOM_TREE_WIDTH=1 (a chain: nodes 0, 1 and
#              2 listen, node 3 is a leaf) while the Prolog holds loom4: the stepds of
#              loom1..loom3 have made their listeners and wait in the rendezvous, and srun's
#              rendezvous server waits for node 3. Then every listening TCP socket of that
#              srun (`ss -ltnp`, root namespace, by pid; Slurm's own are in the range too)
#              and every one of the slurmstepds in loom1..3 (`ip netns exec NS ss -ltnp`)
#              not bound to loopback (libpmix's, for the node's own tasks, is on 127.0.0.1)
#              must be inside the range, each of the three namespaces must have one, and
#              the rendezvous port srun -v names must be one of srun's. The hold goes, the
#              step must pass, and the tree ports the nodes published (srun -v:
#              "registered at IP:PORT") must be inside the range too.
#   full       every port of the range held by listeners (perl) in loom1's namespace:
#              node 0's stepd cannot listen: srun must exit non-zero before T_TIMEOUT,
#              loom1's slurmd log say "node 0: cannot listen for tree links: every port of
#              SrunPortRange=LO-HI is in use", and srun's stderr "node 0 cannot join the
#              tree: " with that line (node 0 tells srun's rendezvous, which answers the
#              other nodes with the failure: none of them waits for LoomConnectTimeout;
#              how many were answered before the kill reached them is printed). Then,
#              the ports freed, a step must pass.
# Why the hold: the listeners are short-lived by design (srun's closes once every node has
# its table, a stepd's once its children are in); holding one node keeps all of them open
# for a look, with no timing involved.
# Loom only: under LOOM_SLURM_MPI=pmi2 the test skips (Slurm's pmi2 has no stepd listener).
# A 23.11 slurmstepd is not told SrunPortRange by its slurmd (doc/plugin.md, "Ports"): on
# that release the stepd parts are reported as SKIP, srun's rendezvous is still checked.
me=t-loom-portrange
. "$(dirname "$0")/lib.sh"
need_plugin
[ "$mpi" = loom ] || { echo "SKIP: $me: only for --mpi=loom"; exit 77; }
for c in ss ip perl; do
    command -v $c >/dev/null 2>&1 || { echo "SKIP: $me: $c not installed"; exit 77; }
done
perl -MIO::Socket::INET -e 1 2>/dev/null || { echo "SKIP: $me: perl has no IO::Socket::INET"; exit 77; }

# A block of 12 ports nothing in the root namespace uses (any state), from 61000 upwards.
nports=12
lo=61000
while [ $lo -le 64900 ]; do
    ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' |
        awk -v lo=$lo -v hi=$((lo + nports - 1)) '$1 >= lo && $1 <= hi { f = 1 } END { exit !f }' ||
        break
    lo=$((lo + 100))
done
[ $lo -le 64900 ] || { echo "FAIL: $me: no free block of $nports ports in 61000-64999"; exit 1; }
hi=$((lo + nports - 1))
range=$lo-$hi

# The Prolog: loom4 (the UTS hostname of its namespace) waits while the hold file exists.
cat >"$cdir/prolog.sh" <<EOF
#!/bin/sh
# t-loom-portrange's Prolog: hold loom4's part of a job while $cdir/hold exists (30 s at most)
[ "\$(hostname)" = loom4 ] || exit 0
i=0
while [ -e "$cdir/hold" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
exit 0
EOF
chmod 0755 "$cdir/prolog.sh"
printf 'LoomConnectTimeout=20\n' >"$cdir/mpi.conf.in"
LOOM_SLURM_CONF_EXTRA="SrunPortRange=$range
Prolog=$cdir/prolog.sh"
export LOOM_SLURM_CONF_EXTRA
start_cluster -n 4
unset LOOM_SLURM_CONF_EXTRA
tag=$(sed -n 's/^NS_TAG=//p' "$cdir/c/netns.env")
echo "# SrunPortRange=$range, namespaces loom${tag}n1..4"

# 23.11: the stepd's slurm_conf has no SrunPortRange (its slurmd does not ship it).
stepd_knows=1
case $(slurm_release) in 23.*) stepd_knows=0 ;; esac

# Listening TCP ports: of process PID in the root namespace / of slurmstepd in namespace NS.
ports_of_pid() { ss -Hltnp 2>/dev/null | grep "pid=$1," | awk '{ n = split($4, a, ":"); print a[n] }' | sort -un; }
# Not on loopback: libpmix's listener for the node's own tasks (LoomPMIx) is on 127.0.0.1,
# out of other hosts' reach; the range is about what the other hosts connect to.
ports_of_stepd() {
    ip netns exec "$1" ss -Hltnp 2>/dev/null | grep '"slurmstepd"' |
        awk '$4 !~ /^127\./ && $4 !~ /^\[::1\]/ { n = split($4, a, ":"); print a[n] }' | sort -un
}
# in_range PORT...: all inside LO-HI (and at least one)
in_range() {
    [ $# -gt 0 ] || return 1
    for _p in "$@"; do
        [ "$_p" -ge $lo ] && [ "$_p" -le $hi ] || return 1
    done
}
check() { # NAME WHY_IF_NOT COMMAND...
    _n=$1 _w=$2
    shift 2
    if "$@"; then
        echo "PASS: $_n"
        npass=$((npass + 1))
    else
        echo "FAIL: $_n: $_w"
        nfail=$((nfail + 1))
    fi
}

# ---- listeners ---------------------------------------------------------------------------
touch "$cdir/hold"
LOOM_TREE_WIDTH=1 timeout -k 5 "$T_TIMEOUT" srun -v --mpi=loom -N 4 -n 4 \
    "$prog/pmi2_kvstest_loom" -r 3 >"$out.stdout" 2>"$out.stderr" </dev/null &
tpid=$!
# Until loom1..3 each have a stepd listener (bounded: 300 x 0.1 s; the srun may end first).
i=0
seen=0
while [ $i -lt 300 ] && kill -0 $tpid 2>/dev/null; do
    seen=0
    for k in 1 2 3; do
        [ -n "$(ports_of_stepd "loom${tag}n$k")" ] && seen=$((seen + 1))
    done
    [ $seen -eq 3 ] && break
    sleep 0.1
    i=$((i + 1))
done
spid=$(ps -o pid= --ppid $tpid 2>/dev/null | tr -d ' ' | head -n 1)
lsn=$(for k in 1 2 3; do ip netns exec "loom${tag}n$k" ss -Hltnp 2>/dev/null |
    grep '"slurmstepd"' | awk -v k=$k '{ printf " loom%s:%s", k, $4 }'; done)
srun_ports=$(ports_of_pid "$spid" | tr '\n' ' ')
# shellcheck disable=SC2034  # s1..s3 are read through eval below
s1=$(ports_of_stepd "loom${tag}n1" | tr '\n' ' ')
# shellcheck disable=SC2034
s2=$(ports_of_stepd "loom${tag}n2" | tr '\n' ' ')
# shellcheck disable=SC2034
s3=$(ports_of_stepd "loom${tag}n3" | tr '\n' ' ')
rm -f "$cdir/hold"
wait $tpid
rc=$?
echo "# srun (pid $spid) listened on: $srun_ports; every slurmstepd listener:$lsn"
rdv_port=$(sed -n "s/.*rendezvous server on port \([0-9]*\) (SrunPortRange=$range).*/\1/p" "$out.stderr" | head -n 1)
published=$(sed -n 's/.*rdv: node [0-9]* registered at .*:\([0-9]*\)$/\1/p' "$out.stderr" | grep -v '^0$' | tr '\n' ' ')
echo "# srun -v: rendezvous port ${rdv_port:-none}; tree ports published: ${published:-none}"

# shellcheck disable=SC2086
check "srun's listening sockets are inside SrunPortRange=$range" \
    "srun listened on '$srun_ports'" in_range $srun_ports
check "srun -v names its rendezvous port, one of srun's listeners inside the range" \
    "rendezvous port '${rdv_port}', srun's listeners '$srun_ports'" \
    sh -c '[ -n "$1" ] && case " $2 " in *" $1 "*) exit 0 ;; esac; exit 1' sh "$rdv_port" "$srun_ports"
if [ $stepd_knows -eq 1 ]; then
    for k in 1 2 3; do
        eval "sp=\$s$k"
        # shellcheck disable=SC2086,SC2154
        check "loom$k's slurmstepd listens inside SrunPortRange=$range" \
            "its listening ports: '${sp}'" in_range $sp
    done
    # shellcheck disable=SC2086
    check "the tree ports the 3 listening nodes published are inside the range" \
        "published '$published'" sh -c 'lo=$1 hi=$2; shift 2; [ $# -eq 3 ] || exit 1
            for p; do [ "$p" -ge "$lo" ] && [ "$p" -le "$hi" ] || exit 1; done' sh $lo $hi $published
else
    skip_case "the stepds' listeners inside the range" "$(slurm_release)'s slurmstepd is not told SrunPortRange"
fi
if [ $rc -eq 0 ] && grep -qxF "pmi2_kvstest: 4 ranks, 3 rounds OK" "$out.stdout"; then
    echo "PASS: the held step ends well once loom4 goes on"
    npass=$((npass + 1))
else
    echo "FAIL: the held step: exit code $rc"
    show_output
    nfail=$((nfail + 1))
fi

# ---- full --------------------------------------------------------------------------------
if [ $stepd_knows -eq 1 ]; then
    ip netns exec "loom${tag}n1" perl -MIO::Socket::INET -e '
        my ($lo, $hi) = @ARGV; my @s;
        for my $p ($lo .. $hi) {
            push @s, IO::Socket::INET->new(LocalAddr => "0.0.0.0", LocalPort => $p,
                Listen => 5, ReuseAddr => 1, Proto => "tcp") or die "port $p: $!\n";
        }
        $| = 1; print "held\n"; sleep 120;' $lo $hi >"$cdir/holder.out" 2>&1 &
    hpid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -qx held "$cdir/holder.out" && kill -0 $hpid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    if grep -qx held "$cdir/holder.out"; then
        # The line goes to loom1's slurmd log, and through srun's rendezvous to srun's
        # stderr (its I/O with the stepds may never come up: the step dies in launch).
        name="every port of the range taken on loom1: the step fails and node 0 says why"
        want="node 0: cannot listen for tree links: every port of SrunPortRange=$range is in use"
        run_srun --mpi=loom -N 4 -n 4 "$prog/pmi2_kvstest_loom" -r 3
        told=0
        for k in 2 3 4; do
            grep -qF "node 0 cannot join the tree: $want" "$cdir/c/log/slurmd.loom$k.log" &&
                told=$((told + 1))
        done
        if [ $hung -eq 1 ]; then
            echo "FAIL: $name: the step did not end within ${T_TIMEOUT}s"
            show_output
            nfail=$((nfail + 1))
        elif [ $rc -eq 0 ]; then
            echo "FAIL: $name: srun exited 0 (node 0 listened outside the range)"
            show_output
            nfail=$((nfail + 1))
        elif ! grep -qF "$want" "$cdir/c/log/slurmd.loom1.log"; then
            echo "FAIL: $name: no line '$want' in loom1's slurmd log"
            show_output
            nfail=$((nfail + 1))
        elif ! grep -qF "rdv: node 0 cannot join the tree: $want" "$out.stderr"; then
            echo "FAIL: $name: srun's stderr has no line 'rdv: node 0 cannot join the tree: $want'"
            show_output
            nfail=$((nfail + 1))
        else
            echo "PASS: $name (rc $rc, ${dt}s: $(grep -m1 -F "cannot join the tree" "$out.stderr" | cut -c1-200))"
            npass=$((npass + 1))
            # a node the kill reaches before its agent asked the rendezvous never asks
            echo "# $told of the 3 other nodes were answered with the failure (slurmd logs)"
        fi
    else
        echo "FAIL: cannot hold the ports $range in loom1's namespace: $(head -c 200 "$cdir/holder.out")"
        nfail=$((nfail + 1))
    fi
    kill $hpid 2>/dev/null
    wait $hpid 2>/dev/null
    # The cluster is usable again once the ports are free.
    case_ok "a step after the ports were freed" "pmi2_kvstest: 4 ranks, 3 rounds OK" \
        --mpi=loom -N 4 -n 4 "$prog/pmi2_kvstest_loom" -r 3
else
    skip_case "every port of the range taken on loom1" "$(slurm_release)'s slurmstepd is not told SrunPortRange"
fi
finish
