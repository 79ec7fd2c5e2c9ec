# tests/slurm/lib.sh - shared part of the srun tests (t-*.sh); sourced, never run.
#
# Contract: a test sets `me` (its name), sources this file with the build directory as
# "$1" (or $LOOM_BUILDDIR), then calls
#   need_plugin                 skip (77) unless mpi_loom.so was built, or the test was
#                               forced onto another plugin with LOOM_SLURM_MPI=pmi2
#   start_cluster ARGS...       cluster.sh start in a private temporary directory with
#                               our plugin directory first in PluginDir; exits 77 only if
#                               cluster.sh says the machine forbids it, else FAIL (1)
#   case_ok NAME WANT_LINE SRUN_ARGS...     srun must exit 0 and print WANT_LINE
#   case_fail NAME STDERR_ERE SRUN_ARGS...  srun must exit non-zero, within the timeout,
#                               and its stderr must match STDERR_ERE (grep -E)
#   mpi_conf_set LINE           set Option=value in the cluster's mpi.conf, reconfigure
#   conf_shows NAME OPTION VALUE            `scontrol show config` must list OPTION = VALUE
#   skip_case NAME WHY
#   finish                      prints "ME: P passed, F failed, S skipped", exits 0/1
# and tears the cluster down on exit whatever happens (trap).
# Every srun runs under `timeout -k 5 $T_TIMEOUT` (default 60 s): a hang is a FAIL.
#
# Environment:
#   LOOM_BUILDDIR      top build directory (default: argument 1, else . or the source tree)
#   LOOM_PLUGIN_DIR    where mpi_loom.so was built (default BUILDDIR/plugin/.libs)
#   LOOM_DROPIN_DIR    where the drop-in mpi_pmi2.so was built (default LOOM_PLUGIN_DIR)
#   LOOM_SLURM_MPI     the --mpi type the matrix runs under (default loom)
#   T_TIMEOUT          seconds per srun
#   LOOM_SLURM_PREFIX  run the Slurm release installed there (release_env.sh): its
#                      commands and daemons, and $prog's pmi2_kvstest_slurm and
#                      pmi_misbehave_slurm built against its libpmi2
# Variables for the tests: $prog (tests/programs), $mpi, $cdir (private dir), $shim
# (LD_PRELOAD for Debian MPICH across nodes, see below), $pdir (our plugin dir copy).
#
# Notes: the plugin is copied (install, never cp over) into $cdir/plugins so that a
#   rebuild during a test cannot change a mapped file, and only mpi_loom.so is listed.
#   Debian's MPICH 4.0.2 can hang in MPI_Finalize when ranks talked over UCX TCP (fixed
#   upstream in 4.2.0); $shim is mpich_finalize_shim.c built into $cdir: it makes
#   ucp_disconnect_nb a no-op. MPICH cases across nodes use it; it is a workaround for the
#   peer's bug, not for ours (see the shim's header).

set -u
here=$(cd "$(dirname "$0")" && pwd)
# LOOM_SLURM_PREFIX: which Slurm release (PATH, its libpmi2); see release_env.sh, beside
# this file: the tests of tests/slurm/ run from here, tests/security/'s source this file
# from their own folder
for _loom_re in "$here/release_env.sh" "$here/../slurm/release_env.sh" \
    "${LOOM_SRCDIR:-$here/../..}/tests/slurm/release_env.sh"; do
    [ -f "$_loom_re" ] && break
done
. "$_loom_re"
T_TIMEOUT=${T_TIMEOUT:-60}
mpi=${LOOM_SLURM_MPI:-loom}
npass=0
nfail=0
nskip=0

if [ $# -ge 1 ] && [ -n "$1" ]; then
    bdir=$1
elif [ -n "${LOOM_BUILDDIR:-}" ]; then
    bdir=$LOOM_BUILDDIR
elif [ -f tests/programs/Makefile ]; then
    bdir=.
else
    bdir=$here/../..
fi
bdir=$(cd "$bdir" 2>/dev/null && pwd) || { echo "FAIL: $me: no build directory '$bdir'"; exit 1; }
prog=$bdir/tests/programs
[ -x "$prog/pmi2_kvstest_loom" ] || {
    echo "FAIL: $me: $prog/pmi2_kvstest_loom not built (run make first)"
    exit 1
}
plugin_src=${LOOM_PLUGIN_DIR:-$bdir/plugin/.libs}
dropin_src=${LOOM_DROPIN_DIR:-$plugin_src}

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: $me: needs root to run slurmd"
    exit 77
fi
for c in srun slurmd slurmctld sbatch; do
    command -v $c >/dev/null 2>&1 || { echo "SKIP: $me: $c not installed"; exit 77; }
done

# Keep an outer allocation (if any) from leaking into our srun.
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done

cdir=$(mktemp -d "${TMPDIR:-/tmp}/loom-srun.XXXXXX") || exit 1
out=$cdir/out
pdir=$cdir/plugins
# With LOOM_SLURM_PREFIX, the Slurm-libpmi2 clients are that release's (release_env.sh).
prog=$(slurm_release_programs "$prog" "$cdir") || {
    echo "FAIL: $me: cannot build the Slurm-libpmi2 clients against ${LOOM_SLURM_PREFIX:-}"
    rm -rf "$cdir"
    exit 1
}
shim=
cluster_up=0
cleanup() {
    [ $cluster_up -eq 1 ] && "$here/cluster.sh" stop "$cdir/c" >/dev/null 2>&1
    if [ -n "${LOOM_TEST_KEEP:-}" ]; then
        echo "# kept $cdir" >&2
    else
        rm -rf "$cdir"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

have_plugin() {
    [ -f "$plugin_src/mpi_loom.so" ]
}

need_plugin() {
    [ "$mpi" != loom ] && return 0
    have_plugin && return 0
    echo "SKIP: $me: the Slurm plugin was not built ($plugin_src/mpi_loom.so missing:" \
        "configure --with-slurm-source=DIR, or set LOOM_PLUGIN_DIR)"
    exit 77
}

# Copy mpi_loom.so (and optionally, $1 = dropin, the drop-in mpi_pmi2.so) into $pdir.
install_plugins() {
    mkdir -p "$pdir" || return 1
    if have_plugin; then
        install -m 0755 "$plugin_src/mpi_loom.so" "$pdir/mpi_loom.so" || return 1
    fi
    if [ "${1:-}" = dropin ]; then
        install -m 0755 "$dropin_src/mpi_pmi2.so" "$pdir/mpi_pmi2.so" || return 1
    fi
    [ -z "${LOOM_MPI_CONF:-}" ] || cp "$LOOM_MPI_CONF" "$cdir/mpi.conf.in"
    return 0
}

# start_cluster [dropin] CLUSTER_SH_ARGS...
start_cluster() {
    _drop=
    [ "${1:-}" = dropin ] && { _drop=dropin; shift; }
    install_plugins $_drop || { echo "FAIL: $me: cannot install the plugin into $pdir"; exit 1; }
    cluster_up=1
    _env=$("$here/cluster.sh" start "$cdir/c" -P "$pdir" "$@" 2>"$cdir/cluster.err")
    _rc=$?
    if [ $_rc -eq 77 ]; then
        echo "SKIP: $me: $(grep -m1 'skip:' "$cdir/cluster.err" | sed 's/^.*skip: //')"
        exit 77
    fi
    if [ $_rc -ne 0 ]; then
        sed 's/^/  cluster: /' "$cdir/cluster.err" | tail -n 30
        echo "FAIL: $me: the test cluster did not start (cluster.sh $* rc=$_rc)"
        exit 1
    fi
    eval "$_env"
    # mpi.conf for our plugin (options of the plugin; see plugin/README.md).
    if [ -f "$cdir/mpi.conf.in" ]; then
        cp "$cdir/mpi.conf.in" "$cdir/c/mpi.conf"
        "$here/cluster.sh" reconfigure "$cdir/c" 2>/dev/null
    fi
    return 0
}

build_shim() {
    [ -n "$shim" ] && return 0
    command -v cc >/dev/null 2>&1 || return 1
    cc -shared -fPIC -O2 -o "$cdir/mpich_finalize_shim.so" "$here/mpich_finalize_shim.c" \
        2>"$cdir/shim.err" || { cat "$cdir/shim.err" >&2; return 1; }
    shim=$cdir/mpich_finalize_shim.so
}

# Run srun with the given arguments, bounded; sets rc, dt (seconds, one decimal) and
# hung (1 if `timeout` had to end it). srun itself exits 137 when a task was killed
# (SIGKILL), so the exit code alone cannot tell a hang: the elapsed time does.
run_srun() {
    _t0=$(date +%s%N)
    timeout -k 5 "$T_TIMEOUT" srun "$@" >"$out.stdout" 2>"$out.stderr" </dev/null
    rc=$?
    _t1=$(date +%s%N)
    dt=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    hung=0
    case $rc in
    124|137) awk -v d="$dt" -v t="$T_TIMEOUT" 'BEGIN { exit !(d >= t - 0.5) }' && hung=1 ;;
    esac
}

show_output() {
    sed 's/^/  stdout: /' "$out.stdout" | tail -n 5
    # the first lines too: the cause is often there, before the step's kill floods the tail
    if [ "$(wc -l <"$out.stderr")" -gt 20 ]; then
        sed 's/^/  stderr: /' "$out.stderr" | head -n 5
        echo "  stderr: ..."
    fi
    sed 's/^/  stderr: /' "$out.stderr" | tail -n 15
}

# assert_last PASS_TEXT FAIL_TEXT: the verdict of the command run just before (its exit
# status): PASS_TEXT, or FAIL_TEXT with the last run's output.  Usage:
#   [ $rc -ne 0 ] && grep -q 'ERE' "$out.stderr"
#   assert_last "what held" "what did not"
assert_last() {
    _st=$?
    if [ $_st -eq 0 ]; then
        echo "PASS: $1"
        npass=$((npass + 1))
        return 0
    fi
    echo "FAIL: $2"
    show_output
    nfail=$((nfail + 1))
    return 1
}

# case_ok NAME WANT_LINE SRUN_ARGS...
case_ok() {
    _name=$1 _want=$2
    shift 2
    run_srun "$@"
    if [ $rc -eq 0 ] && grep -qxF "$_want" "$out.stdout"; then
        echo "PASS: $_name (${dt}s)"
        npass=$((npass + 1))
        return 0
    fi
    if [ $hung -eq 1 ]; then
        _why="timed out after ${T_TIMEOUT}s"
    elif [ $rc -ne 0 ]; then
        _why="exit code $rc"
    else
        _why="missing line '$_want'"
    fi
    echo "FAIL: $_name: $_why (srun $*)"
    show_output
    nfail=$((nfail + 1))
    return 1
}

# case_fail NAME STDERR_ERE SRUN_ARGS...
case_fail() {
    _name=$1 _ere=$2
    shift 2
    run_srun "$@"
    if [ $hung -eq 1 ]; then
        echo "FAIL: $_name: the step did not end within ${T_TIMEOUT}s (srun $*)"
        show_output
        nfail=$((nfail + 1))
        return 1
    fi
    if [ $rc -eq 0 ]; then
        echo "FAIL: $_name: srun exited 0, expected a failed step (srun $*)"
        show_output
        nfail=$((nfail + 1))
        return 1
    fi
    if ! grep -Eq "$_ere" "$out.stderr"; then
        echo "FAIL: $_name: srun's stderr does not match /$_ere/ (srun $*)"
        show_output
        nfail=$((nfail + 1))
        return 1
    fi
    echo "PASS: $_name (rc $rc, ${dt}s: $(grep -Em1 "$_ere" "$out.stderr" | cut -c1-100))"
    npass=$((npass + 1))
    return 0
}

# mpi_conf_set LINE: set LINE (Option=value) in the running cluster's mpi.conf, replacing
# an earlier line for the same option, and reconfigure, so that the next steps see it.
mpi_conf_set() {
    touch "$cdir/c/mpi.conf"
    grep -v "^${1%%=*}=" "$cdir/c/mpi.conf" >"$cdir/c/mpi.conf.new"
    echo "$1" >>"$cdir/c/mpi.conf.new"
    mv "$cdir/c/mpi.conf.new" "$cdir/c/mpi.conf"
    "$here/cluster.sh" reconfigure "$cdir/c" >/dev/null 2>&1
    sleep 1
}

# conf_shows NAME OPTION VALUE: PASS if `scontrol show config` lists OPTION = VALUE.
conf_shows() {
    timeout 20 scontrol show config 2>/dev/null | grep -Eq "^$2 *= *$3\$"
    assert_last "$1" "$1: scontrol show config has no '$2 = $3'"
}

skip_case() {
    echo "SKIP: $1: $2"
    nskip=$((nskip + 1))
}

finish() {
    echo "$me: $npass passed, $nfail failed, $nskip skipped"
    [ $nfail -eq 0 ] && [ $npass -gt 0 ] && exit 0
    [ $nfail -eq 0 ] && exit 77
    exit 1
}

# ---- the interoperability matrix (issue 3 item 3), shared by the t-loom-*.sh -------
# matrix_node1: one node. matrix_nodes4: four nodes (whatever cluster.sh made them).
kv_slurm() { # NAME_SUFFIX N SRUN_ARGS...
    _s=$1 _n=$2
    shift 2
    if [ -x "$prog/pmi2_kvstest_slurm" ]; then
        case_ok "Slurm libpmi2 client, --mpi=$mpi $_s" "pmi2_kvstest: $_n ranks, 3 rounds OK" \
            --mpi="$mpi" "$@" "$prog/pmi2_kvstest_slurm" -r 3
    else
        skip_case "Slurm libpmi2 client $_s" "pmi2_kvstest_slurm not built (libpmi2-0-dev)"
    fi
}
kv_loom() { # NAME_SUFFIX N MPI SRUN_ARGS...
    _s=$1 _n=$2 _m=$3
    shift 3
    case_ok "our libpmi2 client, --mpi=$_m $_s" "pmi2_kvstest: $_n ranks, 3 rounds OK" \
        --mpi="$_m" "$@" "$prog/pmi2_kvstest_loom" -r 3
}
kv_pmi1() { # NAME_SUFFIX N MPI SRUN_ARGS...
    _s=$1 _n=$2 _m=$3
    shift 3
    # -v 900: Slurm's pmi2 plugin reads a PMI-1 request with one read() of <= 1024 bytes.
    case_ok "our libpmi (PMI-1) client, --mpi=$_m $_s" "pmi1_kvstest: $_n ranks, 3 rounds OK" \
        --mpi="$_m" "$@" "$prog/pmi1_kvstest" -r 3 -v 900
}
mpich() { # PROGRAM N NAME_SUFFIX SRUN_ARGS...
    _p=$1 _n=$2 _s=$3
    shift 3
    if [ ! -x "$prog/$_p" ]; then
        skip_case "MPICH $_p $_s" "$_p not built (no mpicc.mpich)"
        return
    fi
    case $_p in
    mpich_hello) _want="hello: $_n ranks OK" ;;
    *) _want="ring: $_n ranks, 3 laps OK" ;;
    esac
    case_ok "Debian MPICH $_p, --mpi=$mpi $_s" "$_want" --mpi="$mpi" "$@" "$prog/$_p"
}

matrix_node1() {
    mpich mpich_hello 4 "-n 4" -N 1 -n 4
    mpich mpich_ring 8 "-n 8" -N 1 -n 8
    kv_slurm "-n 16" 16 -N 1 -n 16
    kv_loom "-n 16" 16 "$mpi" -N 1 -n 16
    kv_pmi1 "-n 16" 16 "$mpi" -N 1 -n 16
    kv_slurm "-n 64" 64 -N 1 -n 64
    kv_loom "-n 64" 64 "$mpi" -N 1 -n 64
    mpich mpich_hello 64 "-n 64" -N 1 -n 64
    # Our clients under Slurm's own plugin, the same cluster, for reference.
    kv_loom "-n 16" 16 pmi2 -N 1 -n 16
    kv_pmi1 "-n 16" 16 pmi2 -N 1 -n 16
}

matrix_nodes4() {
    _tag=$1
    if build_shim; then
        mpich mpich_hello 8 "-N 4 -n 8 ($_tag)" -N 4 -n 8 --export="ALL,LD_PRELOAD=$shim"
        mpich mpich_ring 16 "-N 4 -n 16 cyclic ($_tag)" -N 4 -n 16 -m cyclic \
            --export="ALL,LD_PRELOAD=$shim"
    else
        skip_case "MPICH across nodes ($_tag)" "no C compiler for the finalize shim"
    fi
    kv_slurm "-N 4 -n 16 ($_tag)" 16 -N 4 -n 16 --ntasks-per-node=4
    kv_slurm "-N 4 -n 16 cyclic ($_tag)" 16 -N 4 -n 16 --ntasks-per-node=4 -m cyclic
    kv_slurm "-N 4 -n 13 plane=3 ($_tag)" 13 -N 4 -n 13 -m plane=3
    kv_loom "-N 4 -n 16 ($_tag)" 16 "$mpi" -N 4 -n 16 --ntasks-per-node=4
    kv_pmi1 "-N 4 -n 16 ($_tag)" 16 "$mpi" -N 4 -n 16 --ntasks-per-node=4
    kv_slurm "-N 4 -n 64 ($_tag)" 64 -N 4 -n 64 --ntasks-per-node=16
    kv_slurm "-N 4 -n 256 ($_tag)" 256 -N 4 -n 256 --ntasks-per-node=64
    kv_loom "-N 4 -n 256 ($_tag)" 256 "$mpi" -N 4 -n 256 --ntasks-per-node=64
    # Our clients under Slurm's own plugin, across the same nodes.
    kv_loom "-N 4 -n 16 ($_tag)" 16 pmi2 -N 4 -n 16 --ntasks-per-node=4
    kv_pmi1 "-N 4 -n 16 ($_tag)" 16 pmi2 -N 4 -n 16 --ntasks-per-node=4
}
