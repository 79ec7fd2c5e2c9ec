#!/bin/sh
# netns-exec.sh - a `-launcher-exec` for mpiexec that "logs into" a node of a test cluster
# started by cluster.sh in network-namespace mode (cluster.sh start DIR -n N).
#
# Usage: LOOM_NETNS_CLUSTER=DIR netns-exec.sh HOST COMMAND [ARGS...]
#   mpiexec -hosts loom1,loom2 -launcher-exec tests/slurm/netns-exec.sh -n 8 prog
# Runs COMMAND in the namespaces (network, UTS, IPC, mount) of HOST's slurmd, so it sees
# what a task of that node sees: the node's IP address, hostname, /etc/hosts and private
# /dev/shm. stdin, stdout and stderr are passed through (mpiexec writes its proxy's
# cookie to stdin), like ssh does. Exit codes: COMMAND's, 255 when HOST is not a running
# node of the cluster (as ssh when it cannot connect).
# A wrapper that runs anything written for "mpiexec -n N prog" (e.g. tests/mpi/runtests
# -mpiexec WRAPPER) across the nodes:
#   #!/bin/sh
#   exec mpiexec -hosts loom1,loom2,loom3,loom4 -launcher-exec .../netns-exec.sh "$@"
set -u
host=${1:-}
[ $# -ge 2 ] || { echo "usage: netns-exec.sh HOST COMMAND [ARGS...]" >&2; exit 255; }
shift
dir=${LOOM_NETNS_CLUSTER:-}
[ -n "$dir" ] && [ -d "$dir" ] || {
    echo "netns-exec.sh: set LOOM_NETNS_CLUSTER to the cluster directory" >&2
    exit 255
}
case $host in
'' | *[!A-Za-z0-9._-]*) echo "netns-exec.sh: bad host name '$host'" >&2; exit 255 ;;
esac
pid=$(cat "$dir/run/slurmd.$host.pid" 2>/dev/null)
case $pid in
'' | *[!0-9]*) echo "netns-exec.sh: $host: no such node in $dir" >&2; exit 255 ;;
esac
[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmd ] || {
    echo "netns-exec.sh: $host: its slurmd (pid $pid) is not running" >&2
    exit 255
}
exec nsenter -t "$pid" -n -u -i -m -- "$@"
