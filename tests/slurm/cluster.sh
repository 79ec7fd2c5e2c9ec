#!/bin/sh
# cluster.sh - start/stop a private Slurm cluster on loopback for tests.
#
# Usage:
#   cluster.sh start DIR [-N NODES] [-P PLUGINDIR] [-p BASEPORT] [-c CPUS]
#   cluster.sh stop DIR
#   cluster.sh status DIR
#   cluster.sh reconfigure DIR    (scontrol reconfigure: after installing a plugin)
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
#   -P PLUGINDIR  LOOM_SLURM_PLUGINDIR  extra plugin directory listed before the system one
#                                       (a mpi_*.so there overrides Debian's of that name)
#   -p BASEPORT   LOOM_SLURM_PORT       slurmctld port; slurmds use BASEPORT+1..+N.
#                                       Default: first free block from 17400 upwards.
#   -c CPUS       LOOM_SLURM_CPUS       CPUs claimed per node (config_overrides), default 64
#   LOOM_SLURM_WAIT  seconds to wait for the nodes to become idle (default 30)
#
# Needs root (slurmd runs tasks as any user) and munge. Exit codes: 0 ok, 1 failure,
# 77 when the cluster cannot run here (not root, slurm not installed) so callers can skip.
#
# Notes: munged is shared by the whole machine and is left running by `stop`.
#   Everything is bounded: no wait in here lasts longer than LOOM_SLURM_WAIT seconds.

set -u

me=$(basename "$0")
log() { echo "$me: $*" >&2; }
die() { log "error: $*"; exit 1; }
skip() { log "skip: $*"; exit 77; }

usage() {
    sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2

nodes=${LOOM_SLURM_NODES:-1}
extra_plugindir=${LOOM_SLURM_PLUGINDIR:-}
baseport=${LOOM_SLURM_PORT:-}
cpus=${LOOM_SLURM_CPUS:-64}
waitmax=${LOOM_SLURM_WAIT:-30}

while [ $# -gt 0 ]; do
    case $1 in
    -N) nodes=$2; shift 2 ;;
    -P) extra_plugindir=$2; shift 2 ;;
    -p) baseport=$2; shift 2 ;;
    -c) cpus=$2; shift 2 ;;
    *) usage ;;
    esac
done

case $nodes in ''|*[!0-9]*|0) die "-N wants a positive number, not '$nodes'" ;; esac
case $cpus in ''|*[!0-9]*|0) die "-c wants a positive number, not '$cpus'" ;; esac

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
    rm -rf "$dir/run" "$dir/state" "$dir/spool"
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
    su -s /bin/sh munge -c /usr/sbin/munged >&2 9>&- || true
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

sys_plugindir() {
    if [ -n "${LOOM_SLURM_SYSPLUGINDIR:-}" ]; then echo "$LOOM_SLURM_SYSPLUGINDIR"; return; fi
    for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/aarch64-linux-gnu/slurm-wlm \
             /usr/lib64/slurm /usr/lib/slurm /usr/local/lib/slurm; do
        [ -f "$d/mpi_pmi2.so" ] && { echo "$d"; return; }
    done
    echo /usr/lib/x86_64-linux-gnu/slurm-wlm
}

write_conf() {
    host=$(hostname -s 2>/dev/null || hostname)
    pdir=$(sys_plugindir)
    [ -n "$extra_plugindir" ] && pdir="$extra_plugindir:$pdir"
    cat >"$conf" <<EOF
# slurm.conf - private test cluster written by $me; do not edit, it is regenerated.
ClusterName=loomtest
SlurmctldHost=$host(127.0.0.1)
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
    i=1
    while [ "$i" -le "$nodes" ]; do
        echo "NodeName=loom$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((baseport + i)) CPUs=$cpus State=UNKNOWN" >>"$conf"
        i=$((i + 1))
    done
    echo "PartitionName=loom Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$conf"
    # An empty cgroup.conf keeps slurmd from complaining where cgroups are odd.
    [ -f "$dir/cgroup.conf" ] || echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
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

    # Safe to repeat: stop a previous cluster of this directory first.
    do_stop

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
    write_conf
    ensure_munge

    export SLURM_CONF="$conf"
    log "starting slurmctld (port $baseport) with $conf"
    slurmctld -c >"$dir/log/slurmctld.start" 2>&1 9>&- || fail_start "slurmctld did not start"
    i=1
    while [ "$i" -le "$nodes" ]; do
        mkdir -p "$dir/spool/loom$i"
        slurmd -N "loom$i" >"$dir/log/slurmd.loom$i.start" 2>&1 9>&- || fail_start "slurmd -N loom$i did not start"
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
    log "cluster up: $nodes node(s), $cpus CPUs each, ports $baseport..$((baseport + nodes))"
    echo "export SLURM_CONF=$conf"
}

case $cmd in
start) do_start ;;
stop) do_stop; log "stopped cluster in $dir" ;;
status) do_status ;;
reconfigure)
    [ -f "$conf" ] || die "no cluster in $dir"
    SLURM_CONF=$conf timeout 30 scontrol reconfigure || die "scontrol reconfigure failed"
    ;;
*) usage ;;
esac
