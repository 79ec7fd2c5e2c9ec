#!/bin/sh
# cluster.sh - start/stop a private Slurm cluster for tests: on loopback, or on network
# namespaces (one per node, on a bridge).
#
# Usage:
#   cluster.sh start DIR [-N NODES | -n NODES | --netns] [-P PLUGINDIR] [-p BASEPORT]
#                        [-c CPUS] [-s SUBNET]
#   cluster.sh stop DIR
#   cluster.sh status DIR
#   cluster.sh reconfigure DIR    (scontrol reconfigure: after installing a plugin)
#   cluster.sh munge              (start munged if it is not answering, then exit)
#
# `start` writes DIR/slurm.conf (every path inside DIR, non-default ports), starts munged
# if it is not answering, then `slurmctld -c` and one `slurmd -N loomN` per node, waits
# (bounded) until every node is idle and prints `export SLURM_CONF=DIR/slurm.conf` on
# stdout; all progress goes to stderr. Typical use:
#       eval "$(tests/slurm/cluster.sh start /tmp/c1)" && srun -n 4 hostname
#       tests/slurm/cluster.sh stop /tmp/c1
# `start` on a DIR whose cluster runs already stops it first, so it is safe to repeat.
# `stop` kills the daemons (and stray slurmstepds of this cluster) by pid, then removes
# the daemons' state but keeps the logs (DIR/log/) for post-mortems.
#
# Options (each also as an environment variable):
#   -N NODES      LOOM_SLURM_NODES      number of slurmd (node names loom1..loomN), default 1
#   -n NODES      (= -N NODES --netns)  NODES nodes, each in its own network namespace
#   --netns       LOOM_SLURM_NETNS=1    network-namespace mode (see below)
#   -s SUBNET     LOOM_SLURM_SUBNET     netns mode: first three octets of the private /24
#                                       (e.g. 10.77.5); default: the first 10.77.X.0/24
#                                       (X = 1..254) no interface or route of the host uses
#   -P PLUGINDIR  LOOM_SLURM_PLUGINDIR  extra plugin directory listed before the system one
#                                       (a mpi_*.so there overrides Debian's of that name)
#   -p BASEPORT   LOOM_SLURM_PORT       slurmctld port; slurmds use BASEPORT+1..+N.
#                                       Default: first free block from 17400 upwards.
#   -c CPUS       LOOM_SLURM_CPUS       CPUs claimed per node (config_overrides), default 64
#   LOOM_SLURM_WAIT  seconds to wait for the nodes to become idle (default 30)
#   LOOM_SLURM_PREFIX=P  run the Slurm release installed in P (scripts/slurm-release.sh):
#                     its daemons and commands, P/lib/slurm as the system PluginDir
#                     (release_env.sh). Unset: the installed Debian Slurm.
#
# Network-namespace mode (-n / --netns): cross-node traffic really crosses a network.
#   A Linux bridge lmbrX in the root namespace owns SUBNET.1 (slurmctld runs in the root
#   namespace and listens there); node loomK lives in netns loomXnK, joined to the bridge by
#   a veth pair (lmXvK outside, eth0 inside) with address SUBNET.(10+K), lo up, IPv6 off.
#   Its slurmd is started as
#       ip netns exec loomXnK unshare --uts --ipc --mount --propagation private sh -c '...'
#   which gives it (and every stepd and task under it) the UTS hostname loomK, a private
#   IPC namespace and /dev/shm tmpfs (so shared-memory transports see separate machines),
#   and a bind-mounted DIR/netns/hosts as /etc/hosts listing every node. srun works from
#   the root namespace. The choice is recorded in DIR/netns.env; the bridge's alias names
#   DIR, so that `start` can recognise and remove debris of a run whose directory is gone.
#   `stop` kills every process left in the namespaces, then deletes the namespaces, veths
#   and bridge (the mounts live in the daemons' mount namespaces and go with them).
#
# Needs root (slurmd runs tasks as any user) and munge. Exit codes: 0 ok, 1 failure,
# 77 when the cluster cannot run here (not root, slurm not installed; netns mode: no
# `ip netns`, no bridge/veth, no unshare) so callers can skip.
#
# Notes: munged is shared by the whole machine and is left running by `stop`.
#   Everything is bounded: no wait in here lasts longer than LOOM_SLURM_WAIT seconds.

set -u

me=$(basename "$0")
# LOOM_SLURM_PREFIX: which Slurm release (PATH, PluginDir); see release_env.sh
. "$(dirname "$0")/release_env.sh"
log() { echo "$me: $*" >&2; }
die() { log "error: $*"; exit 1; }
skip() { log "skip: $*"; exit 77; }

usage() {
    sed -n '5,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ "${1:-}" = munge ] && set -- munge -
[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2

nodes=${LOOM_SLURM_NODES:-1}
extra_plugindir=${LOOM_SLURM_PLUGINDIR:-}
baseport=${LOOM_SLURM_PORT:-}
cpus=${LOOM_SLURM_CPUS:-64}
waitmax=${LOOM_SLURM_WAIT:-30}
netns=${LOOM_SLURM_NETNS:-0}
subnet=${LOOM_SLURM_SUBNET:-}
tag=

while [ $# -gt 0 ]; do
    case $1 in
    -N) nodes=$2; shift 2 ;;
    -n) nodes=$2; netns=1; shift 2 ;;
    --netns) netns=1; shift ;;
    -s) subnet=$2; shift 2 ;;
    -P) extra_plugindir=$2; shift 2 ;;
    -p) baseport=$2; shift 2 ;;
    -c) cpus=$2; shift 2 ;;
    *) usage ;;
    esac
done

case $nodes in ''|*[!0-9]*|0) die "-N wants a positive number, not '$nodes'" ;; esac
case $cpus in ''|*[!0-9]*|0) die "-c wants a positive number, not '$cpus'" ;; esac
case $netns in 1|yes|true) netns=1 ;; *) netns=0 ;; esac
if [ -n "$subnet" ]; then
    echo "$subnet" | grep -Eq '^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$' ||
        die "-s wants the first three octets of a /24 (e.g. 10.77.5), not '$subnet'"
fi
[ "$netns" -eq 0 ] || [ "$nodes" -le 200 ] || die "netns mode supports at most 200 nodes"

mkdir -p "$dir" || die "cannot create $dir"
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf

# Is pid $1 running? A zombie (not yet reaped by init) counts as dead.
alive() {
    kill -0 "$1" 2>/dev/null || return 1
    case $(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) in
    Z|X) return 1 ;;
    esac
    return 0
}

# Read a pid file; print the pid only if that process is alive and still a Slurm
# daemon (a stale pid file must not make us kill whatever reused the pid).
live_pid() {
    [ -s "$1" ] || return 1
    _p=$(cat "$1" 2>/dev/null)
    case $_p in ''|*[!0-9]*) return 1 ;; esac
    alive "$_p" || return 1
    case $(cat "/proc/$_p/comm" 2>/dev/null) in
    slurmctld|slurmd) ;;
    *) return 1 ;;
    esac
    echo "$_p"
}

# slurmstepds of this cluster: re-parented to init, but they inherit SLURM_CONF=$conf
# from slurmd and keep log files open under $dir; match on either.
stray_stepds() {
    for _d in /proc/[0-9]*; do
        _c=$( (tr '\0' ' ' <"$_d/cmdline") 2>/dev/null) || continue
        case $_c in slurmstepd*) ;; *) continue ;; esac
        if ( tr '\0' '\n' <"$_d/environ" ) 2>/dev/null | grep -qx "SLURM_CONF=$conf"; then
            echo "${_d#/proc/}"
            continue
        fi
        for _f in "$_d"/fd/*; do
            case $(readlink "$_f" 2>/dev/null) in
            "$dir"/*) echo "${_d#/proc/}"; break ;;
            esac
        done
    done
}

# Kill a list of pids: TERM, wait up to 5 s, then KILL.
kill_pids() {
    [ -n "$*" ] || return 0
    kill -TERM "$@" 2>/dev/null
    _i=0
    while [ $_i -lt 50 ]; do
        _alive=
        for _p in "$@"; do alive "$_p" && _alive="$_alive $_p"; done
        [ -z "$_alive" ] && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    log "killing (KILL) pids:$_alive"
    # shellcheck disable=SC2086
    kill -KILL $_alive 2>/dev/null
    sleep 0.2
    return 0
}

# All descendants of the given pids (children first listed after their parents).
descendants() {
    ps -e -o pid=,ppid= 2>/dev/null | awk -v roots=" $* " '
        { pp[$1] = $2; all[NR] = $1 }
        END {
            n = split(roots, q, " "); for (i = 1; i <= n; i++) mark[q[i]] = 1
            changed = 1
            while (changed) {
                changed = 0
                for (k in all) { p = all[k]
                    if (!(p in mark) && (pp[p] in mark)) { mark[p] = 1; out[p] = 1; changed = 1 } }
            }
            for (p in out) print p
        }'
}

# ---- network-namespace mode --------------------------------------------------------
# Names derive from the third octet X of the subnet: bridge lmbrX, namespaces loomXnK,
# root-side veths lmXvK. DIR/netns.env records them for `stop`.

netns_supported() {
    command -v ip >/dev/null 2>&1 || skip "netns mode: iproute2 (ip) not installed"
    command -v unshare >/dev/null 2>&1 || skip "netns mode: unshare (util-linux) not installed"
    _t=loomprobe$$
    ip netns add "$_t" 2>/dev/null || skip "netns mode: 'ip netns add' is not permitted here"
    if ! ip netns exec "$_t" unshare --uts --ipc --mount --propagation private true 2>/dev/null; then
        ip netns del "$_t" 2>/dev/null
        skip "netns mode: unshare --uts --ipc --mount is not permitted here"
    fi
    ip netns del "$_t" 2>/dev/null
    if ! ip link add lmprobe$$ type bridge 2>/dev/null; then
        skip "netns mode: cannot create a Linux bridge here"
    fi
    ip link del lmprobe$$ 2>/dev/null
    if ! ip link add lmprobe$$ type veth peer name lmprobe$$p 2>/dev/null; then
        skip "netns mode: cannot create veth pairs here"
    fi
    ip link del lmprobe$$ 2>/dev/null
    return 0
}

# Tear down the namespaces/bridge of tag $1 (nodes loom$1n1..), killing what runs in them.
netns_teardown_tag() {
    _tag=$1
    _nss=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^loom${_tag}n[0-9]+\$")
    _pids=
    for _ns in $_nss; do
        _pids="$_pids $(ip netns pids "$_ns" 2>/dev/null | tr '\n' ' ')"
    done
    # shellcheck disable=SC2086
    [ -z "$(echo $_pids)" ] || { log "killing processes left in namespaces of lmbr$_tag:$_pids"; kill_pids $_pids; }
    for _ns in $_nss; do
        ip netns del "$_ns" 2>/dev/null || log "warning: could not delete netns $_ns"
    done
    for _v in $(ip -o link show 2>/dev/null | sed -n "s/^[0-9]*: \(lm${_tag}v[0-9]*\)[@:].*/\1/p"); do
        ip link del "$_v" 2>/dev/null
    done
    if ip link show "lmbr$_tag" >/dev/null 2>&1; then
        ip link del "lmbr$_tag" 2>/dev/null || log "warning: could not delete bridge lmbr$_tag"
    fi
    return 0
}

netns_stop() {
    [ -f "$dir/netns.env" ] || return 0
    _tag=$(sed -n 's/^NS_TAG=//p' "$dir/netns.env")
    case $_tag in ''|*[!0-9]*) log "warning: bad $dir/netns.env"; return 0 ;; esac
    # Only ours: the bridge alias names this directory (or the bridge is already gone).
    _al=$(ip -d link show "lmbr$_tag" 2>/dev/null | sed -n 's/^ *alias //p')
    if [ -n "$_al" ] && [ "$_al" != "loom-cluster:$dir" ]; then
        log "warning: lmbr$_tag belongs to '$_al' now, not touching it"
    else
        netns_teardown_tag "$_tag"
    fi
    rm -f "$dir/netns.env"
}

# Debris of earlier runs: a bridge lmbrX whose owner directory no longer records it, or
# whose slurmctld is dead. Called under the start lock, so no cluster is half-started.
netns_sweep_debris() {
    for _b in $(ip -o link show type bridge 2>/dev/null | sed -n 's/^[0-9]*: \(lmbr[0-9]*\)[@:].*/\1/p'); do
        _tag=${_b#lmbr}
        _al=$(ip -d link show "$_b" 2>/dev/null | sed -n 's/^ *alias //p')
        _od=${_al#loom-cluster:}
        if [ -n "$_al" ] && [ "$_od" != "$_al" ] && [ -f "$_od/netns.env" ] &&
           grep -qx "NS_TAG=$_tag" "$_od/netns.env" &&
           live_pid "$_od/run/slurmctld.pid" >/dev/null; then
            continue    # a live cluster of someone else
        fi
        log "removing debris of an earlier netns cluster: $_b (${_al:-no owner})"
        netns_teardown_tag "$_tag"
    done
    # Namespaces without their bridge.
    for _ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^loom[0-9]+n[0-9]+$'); do
        _tag=$(echo "$_ns" | sed 's/^loom\([0-9]*\)n.*/\1/')
        ip link show "lmbr$_tag" >/dev/null 2>&1 && continue
        log "removing debris namespace $_ns"
        netns_teardown_tag "$_tag"
    done
}

subnet_used() {
    ip -4 -o addr show 2>/dev/null | grep -q " $1\.[0-9]*/" && return 0
    ip -4 route show 2>/dev/null | grep -q "^$1\." && return 0
    return 1
}

netns_pick_subnet() {
    if [ -n "$subnet" ]; then
        subnet_used "$subnet" && die "subnet $subnet.0/24 is already in use on this host"
        ip link show "lmbr${subnet##*.}" >/dev/null 2>&1 &&
            die "bridge lmbr${subnet##*.} already exists (another cluster on a X=${subnet##*.} subnet)"
        return 0
    fi
    _x=1
    while [ $_x -le 254 ]; do
        if ! subnet_used "10.77.$_x" && ! ip link show "lmbr$_x" >/dev/null 2>&1; then
            subnet=10.77.$_x
            return 0
        fi
        _x=$((_x + 1))
    done
    die "no free 10.77.X.0/24 subnet"
}

netns_setup() {
    tag=${subnet##*.}
    br=lmbr$tag
    mkdir -p "$dir/netns" || die "cannot create $dir/netns"
    {
        echo "NS_TAG=$tag"
        echo "NS_SUBNET=$subnet"
        echo "NS_BRIDGE=$br"
        echo "NS_NODES=$nodes"
    } >"$dir/netns.env"
    ip link add "$br" type bridge || fail_start "cannot create bridge $br"
    ip link set "$br" alias "loom-cluster:$dir" 2>/dev/null ||
        fail_start "cannot set the alias of $br"
    ip addr add "$subnet.1/24" dev "$br" || fail_start "cannot address $br"
    ip link set "$br" up || fail_start "cannot bring $br up"
    # Every node's /etc/hosts: the controller (the host's name on the bridge) and all nodes.
    {
        echo "127.0.0.1 localhost"
        echo "$subnet.1 $host"
        _i=1
        while [ $_i -le "$nodes" ]; do
            echo "$subnet.$((10 + _i)) loom$_i"
            _i=$((_i + 1))
        done
    } >"$dir/netns/hosts"
    _i=1
    while [ $_i -le "$nodes" ]; do
        _ns=loom${tag}n$_i
        _v=lm${tag}v$_i
        ip netns add "$_ns" || fail_start "cannot create netns $_ns"
        ip link add "$_v" type veth peer name "${_v}p" || fail_start "cannot create veth $_v"
        ip link set "${_v}p" netns "$_ns" || fail_start "cannot move ${_v}p into $_ns"
        ip link set "$_v" master "$br" || fail_start "cannot attach $_v to $br"
        ip link set "$_v" up
        ip netns exec "$_ns" sh -c "
            ip link set lo up &&
            ip link set ${_v}p name eth0 &&
            ip addr add $subnet.$((10 + _i))/24 dev eth0 &&
            ip link set eth0 up" || fail_start "cannot configure the network of $_ns"
        # IPv6 off (Open MPI would pick link-local addresses); fine if it is off already.
        ip netns exec "$_ns" sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do
            echo 1 >"$f"; done' 2>/dev/null
        _i=$((_i + 1))
    done
    # The controller must answer from every namespace (bounded).
    _i=1
    while [ $_i -le "$nodes" ]; do
        _ok=0
        _k=0
        while [ $_k -lt 20 ]; do
            if ip netns exec "loom${tag}n$_i" ping -c 1 -W 1 "$subnet.1" >/dev/null 2>&1; then
                _ok=1
                break
            fi
            command -v ping >/dev/null 2>&1 || { _ok=1; break; }   # checked by slurmd then
            _k=$((_k + 1))
        done
        [ $_ok -eq 1 ] || fail_start "loom$_i (netns loom${tag}n$_i) cannot reach $subnet.1"
        _i=$((_i + 1))
    done
    log "netns: bridge $br $subnet.1/24, nodes loom1..loom$nodes at $subnet.11..$subnet.$((10 + nodes))"
}

# Start slurmd of node $1 inside its namespace with its own hostname, IPC, /dev/shm, hosts.
netns_start_slurmd() {
    _n=$1
    _ns=loom${tag}n$_n
    ip netns exec "$_ns" unshare --uts --ipc --mount --propagation private sh -c '
        set -e
        hostname "loom$1"
        mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm
        mount --bind "$2/netns/hosts" /etc/hosts
        exec slurmd -N "loom$1"' sh "$_n" "$dir"
}

do_stop() {
    # Gracefully first: cancel every job of this (private) cluster, bounded.
    if live_pid "$dir/run/slurmctld.pid" >/dev/null; then
        ids=$(SLURM_CONF=$conf timeout 5 squeue -h -o %A 2>/dev/null | tr '\n' ' ')
        if [ -n "$ids" ]; then
            log "cancelling jobs $ids"
            # shellcheck disable=SC2086
            SLURM_CONF=$conf timeout 10 scancel $ids 2>/dev/null
            i=0
            while [ $i -lt 50 ] &&
                  [ -n "$(SLURM_CONF=$conf timeout 5 squeue -h -o %A 2>/dev/null)" ]; do
                sleep 0.2
                i=$((i + 1))
            done
        fi
    fi
    pids=
    for f in "$dir"/run/slurmctld.pid "$dir"/run/slurmd.*.pid; do
        [ -e "$f" ] || continue
        p=$(live_pid "$f") && pids="$pids $p"
    done
    # shellcheck disable=SC2086
    kill_pids $pids
    # Stepds (and the tasks under them) that survived their slurmd.
    stepds=$(stray_stepds | tr '\n' ' ')
    if [ -n "$stepds" ]; then
        # shellcheck disable=SC2086
        tasks=$(descendants $stepds | tr '\n' ' ')
        log "killing leftover slurmstepd $stepds${tasks:+and tasks $tasks}"
        # shellcheck disable=SC2086
        kill_pids $tasks
        # shellcheck disable=SC2086
        kill_pids $stepds
    fi
    netns_stop
    rm -rf "$dir/run" "$dir/state" "$dir/spool" "$dir/tmp" "$dir/netns"
    return 0
}

do_status() {
    [ -f "$conf" ] || { log "no cluster in $dir"; return 1; }
    rc=0
    for f in "$dir"/run/slurmctld.pid "$dir"/run/slurmd.*.pid; do
        [ -e "$f" ] || { rc=1; continue; }
        if p=$(live_pid "$f"); then log "$(basename "$f" .pid) running (pid $p)"
        else log "$(basename "$f" .pid) not running"; rc=1; fi
    done
    SLURM_CONF=$conf timeout 10 sinfo -N -h -o '%N %t' >&2 || rc=1
    return $rc
}

port_busy() {
    ss -Htln 2>/dev/null | awk '{print $4}' | grep -q "[:.]$1\$"
}

ensure_munge() {
    if timeout 5 munge -n 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; then
        return 0
    fi
    log "munged not answering, starting it"
    command -v munged >/dev/null || skip "munged not installed"
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
    chmod 0755 /run/munge
    # munged outlives this script and is shared by the machine: it must not carry a
    # test's marker (tests/integration/lib.sh kills what does when the test ends)
    env -u LOOM_TEST_MARKER su -s /bin/sh munge -c /usr/sbin/munged >&2 9>&- || true
    i=0
    while [ $i -lt 50 ]; do
        if timeout 5 munge -n 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    die "munged does not work (see /var/log/munge/munged.log)"
}

write_conf() {
    ctldaddr=127.0.0.1
    [ "$netns" -eq 1 ] && ctldaddr=$subnet.1
    pdir=$(slurm_sys_plugindir)
    [ -n "$extra_plugindir" ] && pdir="$extra_plugindir:$pdir"
    cat >"$conf" <<EOF
# slurm.conf - private test cluster written by $me; do not edit, it is regenerated.
ClusterName=loomtest
SlurmctldHost=$host($ctldaddr)
SlurmctldPort=$baseport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MessageTimeout=30
KillWait=5
InactiveLimit=0
MinJobAge=10
MailProg=/bin/true
PluginDir=$pdir
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/run/slurmd.%n.pid
SlurmdLogFile=$dir/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
EOF
    # Every node's TmpFS inside DIR, in both modes: Slurm's own mpi/pmix makes its client
    # directory there (spmix_appdir_<uid>_<job>.<step>, /tmp by default), and job ids
    # restart at 1 in every private cluster, so a directory a killed step left in /tmp
    # fails the same step id of every later cluster ("Cannot create directory ... File exists").
    echo "TmpFS=$dir/tmp/%n" >>"$conf"
    i=1
    while [ "$i" -le "$nodes" ]; do
        if [ "$netns" -eq 1 ]; then
            echo "NodeName=loom$i NodeHostname=loom$i NodeAddr=$subnet.$((10 + i)) Port=$((baseport + i)) CPUs=$cpus State=UNKNOWN" >>"$conf"
        else
            echo "NodeName=loom$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((baseport + i)) CPUs=$cpus State=UNKNOWN" >>"$conf"
        fi
        i=$((i + 1))
    done
    echo "PartitionName=loom Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$conf"
    # LOOM_SLURM_CONF_EXTRA: more slurm.conf lines (newline-separated) a test wants, e.g.
    # SrunPortRange=61200-61209 (t-loom-portrange.sh); appended last, so they win.
    [ -z "${LOOM_SLURM_CONF_EXTRA:-}" ] || printf '%s\n' "$LOOM_SLURM_CONF_EXTRA" >>"$conf"
    # cgroup.conf: nothing here uses cgroups (proctrack/pgid, task/none), but slurmd loads
    # the cgroup plugin anyway; 24.11 and newer accept "disabled", older ones get cgroup/v1.
    if [ ! -f "$dir/cgroup.conf" ]; then
        if slurm_release_at_least 24 11; then
            echo "CgroupPlugin=disabled" >"$dir/cgroup.conf"
        else
            echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
        fi
    fi
}

tail_logs() {
    for f in "$dir"/log/*.start "$dir"/log/*.log; do
        [ -s "$f" ] || continue
        log "---- last lines of $f"
        tail -n 15 "$f" >&2
    done
}

fail_start() {
    log "error: $*"
    tail_logs
    do_stop
    exit 1
}

do_start() {
    [ "$(id -u)" -eq 0 ] || skip "not root: slurmd must run as root"
    for b in slurmctld slurmd srun sinfo scontrol munge; do
        command -v $b >/dev/null 2>&1 || skip "$b not installed"
    done

    [ "$netns" -eq 0 ] || netns_supported
    host=$(hostname -s 2>/dev/null || hostname)

    # Safe to repeat: stop a previous cluster of this directory first.
    do_stop
    # Interrupted half-way: tear down what exists, then leave.
    trap 'trap - INT TERM HUP; fail_start "interrupted"' INT TERM HUP

    # Two clusters starting at once must not pick the same ports: serialise the choice
    # of ports and the daemons' start (they bind their ports right away).
    lock=${TMPDIR:-/tmp}/loom-slurm-cluster.lock
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$lock"
        flock -w 60 9 || log "warning: could not lock $lock, going on"
    fi

    if [ -z "$baseport" ]; then
        baseport=17400
        while :; do
            busy=0
            i=0
            while [ $i -le "$nodes" ]; do
                port_busy $((baseport + i)) && busy=1
                i=$((i + 1))
            done
            [ $busy -eq 0 ] && break
            baseport=$((baseport + 100))
            [ $baseport -lt 30000 ] || die "no free port block found"
        done
    fi

    mkdir -p "$dir/run" "$dir/state" "$dir/spool" "$dir/log" || die "cannot populate $dir"
    if [ "$netns" -eq 1 ]; then
        netns_sweep_debris
        netns_pick_subnet
        netns_setup
    fi
    write_conf
    ensure_munge

    export SLURM_CONF="$conf"
    log "starting slurmctld (port $baseport) with $conf"
    slurmctld -c >"$dir/log/slurmctld.start" 2>&1 9>&- || fail_start "slurmctld did not start"
    i=1
    while [ "$i" -le "$nodes" ]; do
        mkdir -p "$dir/spool/loom$i" "$dir/tmp/loom$i"
        if [ "$netns" -eq 1 ]; then
            netns_start_slurmd "$i" >"$dir/log/slurmd.loom$i.start" 2>&1 9>&- ||
                fail_start "slurmd -N loom$i did not start in netns loom${tag}n$i"
        else
            slurmd -N "loom$i" >"$dir/log/slurmd.loom$i.start" 2>&1 9>&- || fail_start "slurmd -N loom$i did not start"
        fi
        i=$((i + 1))
    done

    exec 9>&-

    # Bounded wait for every node to be idle.
    t0=$(date +%s)
    while :; do
        states=$(timeout 10 sinfo -N -h -o '%t' 2>/dev/null | sort -u | tr '\n' ' ')
        ncnt=$(timeout 10 sinfo -N -h -o '%N' 2>/dev/null | wc -l)
        if [ "$states" = "idle " ] && [ "$ncnt" -eq "$nodes" ]; then
            break
        fi
        if [ $(($(date +%s) - t0)) -ge "$waitmax" ]; then
            fail_start "nodes not idle after ${waitmax}s (states: ${states:-none})"
        fi
        live_pid "$dir/run/slurmctld.pid" >/dev/null ||
            { [ $(($(date +%s) - t0)) -ge 3 ] && fail_start "slurmctld died"; }
        sleep 0.3
    done
    trap - INT TERM HUP
    log "cluster up: $nodes node(s)${tag:+ in netns on $subnet.0/24}, $cpus CPUs each, ports $baseport..$((baseport + nodes))"
    echo "export SLURM_CONF=$conf"
}

case $cmd in
start) do_start ;;
munge) ensure_munge; log "munged answers" ;;
stop) do_stop; log "stopped cluster in $dir" ;;
status) do_status ;;
reconfigure)
    [ -f "$conf" ] || die "no cluster in $dir"
    SLURM_CONF=$conf timeout 30 scontrol reconfigure || die "scontrol reconfigure failed"
    ;;
*) usage ;;
esac
