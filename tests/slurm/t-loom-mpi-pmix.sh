#!/bin/sh
# t-loom-mpi-pmix.sh - Loom's own MPI under Slurm's own PMIx plugin (srun --mpi=pmix,
# mpi_pmix.so), one node; and the launches it must refuse rather than run as N
# singletons (issue 25).
#
# Usage: t-loom-mpi-pmix.sh [BUILDDIR]      (environment: see lib.sh)
# Cases, each srun bounded (lib.sh):
#   one job   mpi/hello at -n 1, 4, 16, 64, mpi/ring and mpi/coll_basic at -n 1, 4, 16
#             under --mpi=pmix: "No Errors" once and, with LOOM_MPI_DEBUG=1, ranks 0 to
#             N-1 once each, all on one node of N (loom_mpi_cases.sh one_job); the same
#             with LOOM_MPI_PMIX_COLLECT=0 (a fence without data, cards fetched on
#             demand: direct modex); and under --mpi=loom with LOOM_MPI_PMI=pmix (Loom
#             MPI through its PMIx path, served by Loom's plugin); there a client library
#             that cannot be loaded must refuse (so the PMIx path is the one taken).
#   refused   every task's whole message (mpi/core/boot_launch.c, boot.c, boot_pmix.c),
#             a non-zero exit, and the step over by itself:
#             --mpi=none -n 4 ("task K of a Slurm step of 4 tasks (SLURM_STEP_NUM_TASKS=4)
#             ..."; Slurm 22.05 sets no SLURM_MPI_TYPE for --mpi=none); --mpi=pmix -n 4
#             with every PMIX_* variable removed by a wrapper (the same message with
#             SLURM_MPI_TYPE=pmix); --mpi=pmix with every PMIX_SERVER_URI* overwritten
#             with garbage by a wrapper ("PMIx launch (...), but PMIx is unusable:
#             PMIx_Init: UNREACHABLE; ..."); --mpi=pmix with LOOM_MPI_PMIX_LIB naming a
#             missing file ("OpenPMIx's client library could not be loaded ...").
#   alone     --mpi=none -n 1 runs as a singleton; LOOM_MPI_PMI=singleton --mpi=none -n 2
#             runs two (each prints No Errors): the explicit opt-in.
#   abort     rank 1 of a Loom-MPI program calls MPI_Abort(7) under --mpi=pmix -n 4
#             while the others wait for it in MPI_Recv: the step must end by itself
#             (30 s bound; the waiting ranks can only be ended by the launcher), srun
#             exit 7, the abort message once, no rank returning from MPI_Recv.
#             The program is written into the test's directory, built with mpi/mpicc.
# On the old libmpi (before the PMIx client path) --mpi=pmix -n 4 ran 4 singletons
# ("No Errors" 4 times, rank 0 four times) and --mpi=none -n 4 only warned.
# Skips (77) without root, Slurm or Slurm's mpi_pmix.so; the --mpi=loom cases without
# Loom's plugin.
me=t-loom-mpi-pmix
. "$(dirname "$0")/lib.sh"
. "$here/loom_mpi_cases.sh"
need_loom_mpi
start_cluster -N 1
need_slurm_pmix

for n in 1 4 16 64; do
    one_job "hello, --mpi=pmix -n $n" $n $n "" hello --mpi=pmix -N 1 -n $n
done
for p in ring coll_basic; do
    for n in 1 4 16; do
        one_job "$p, --mpi=pmix -n $n" $n $n "" $p --mpi=pmix -N 1 -n $n
    done
done
one_job "coll_basic, --mpi=pmix -n 16, LOOM_MPI_PMIX_COLLECT=0 (direct modex)" 16 16 \
    LOOM_MPI_PMIX_COLLECT=0 coll_basic --mpi=pmix -N 1 -n 16
one_job "ring, --mpi=pmix -n 16, LOOM_MPI_PMIX_COLLECT=0 (direct modex)" 16 16 \
    LOOM_MPI_PMIX_COLLECT=0 ring --mpi=pmix -N 1 -n 16

# A wrapper srun runs in place of the program: it writes what the task got (namespace,
# PMIx URI variables) into $cdir/task.K, then breaks its PMIx environment as told
# (garbage: every PMIX_SERVER_URI* overwritten; strip: every PMIX_* removed; keep) and
# execs the program.
wrap=$cdir/pmix-wrap.sh
cat >"$wrap" <<'EOF'
#!/bin/sh
# pmix-wrap.sh DIR MODE PROGRAM... - record, then break, the task's PMIx environment
d=$1 mode=$2
shift 2
uris=$(env | sed -n 's/^\(PMIX_SERVER_URI[0-9]*\)=.*/\1/p')
{ echo "${PMIX_NAMESPACE:-}"; echo $uris; } >"$d/task.${SLURM_PROCID:-x}"
case $mode in
garbage) for v in $uris; do export "$v=loom-test-garbage"; done ;;
strip) for v in $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done ;;
esac
exec "$@"
EOF
chmod +x "$wrap"

# The launch as the PMIx path names it (boot_launch.c pmix_seen) for task $1, from
# what the wrapper recorded: the first URI variable in OpenPMIx's order it had.
pmix_launch() {
    _ns=$(sed -n 1p "$cdir/task.$1")
    _have=" $(sed -n 2p "$cdir/task.$1") "
    _uri="no PMIX_SERVER_URI*"
    for _v in PMIX_SERVER_URI51 PMIX_SERVER_URI5 PMIX_SERVER_URI41 PMIX_SERVER_URI4 \
        PMIX_SERVER_URI3 PMIX_SERVER_URI21 PMIX_SERVER_URI2 PMIX_SERVER_URI; do
        case $_have in *" $_v "*) _uri=$_v; break ;; esac
    done
    echo "PMIx launch (PMIX_NAMESPACE=$_ns, PMIX_RANK=$1, $_uri)"
}
# want_pmix N TEXT: $cdir/want gets, for tasks 0 to N-1, "loom-mpi: MPI_Init: LAUNCH,
# but PMIx is unusable: TEXT"; a task the wrapper has no record of gets a line that
# cannot be on stderr (so that refused fails, naming it).
want_pmix() {
    : >"$cdir/want"
    _k=0
    while [ $_k -lt "$1" ]; do
        if [ -f "$cdir/task.$_k" ]; then
            echo "loom-mpi: MPI_Init: $(pmix_launch $_k), but PMIx is unusable: $2" \
                >>"$cdir/want"
        else
            echo "(task $_k never ran the wrapper)" >>"$cdir/want"
        fi
        _k=$((_k + 1))
    done
}
pmix_tail="; start the program with a launcher whose PMIx server it can reach (srun \
--mpi=pmix, Open MPI's mpirun) or with srun --mpi=loom"
# dlerror()'s text is glibc's
nolib_text="OpenPMIx's client library could not be loaded (/nonexistent/libpmix.so: cannot \
open shared object file: No such file or directory); install it (Debian: libpmix2) or name \
it in LOOM_MPI_PMIX_LIB$pmix_tail"
multi_tail="found no PMI server to wire up with and would run alone as rank 0 of 1; \
launch it with srun --mpi=loom (or --mpi=pmi2 or --mpi=pmix), or set \
LOOM_MPI_PMI=singleton to run every task alone"

run_srun --mpi=none -N 1 -n 4 "$lmpi/hello"
: >"$cdir/want"
for k in 0 1 2 3; do
    echo "loom-mpi: MPI_Init: task $k of a Slurm step of 4 tasks (SLURM_STEP_NUM_TASKS=4)" \
        "$multi_tail" >>"$cdir/want"
done
refused "srun --mpi=none -n 4: every task refuses to run alone"

rm -f "$cdir"/task.*
run_srun --mpi=pmix -N 1 -n 4 "$wrap" "$cdir" strip "$lmpi/hello"
: >"$cdir/want"
for k in 0 1 2 3; do
    echo "loom-mpi: MPI_Init: task $k of a Slurm step of 4 tasks (SLURM_STEP_NUM_TASKS=4," \
        "SLURM_MPI_TYPE=pmix) $multi_tail" >>"$cdir/want"
done
refused "srun --mpi=pmix -n 4, PMIX_* removed: every task refuses, naming SLURM_MPI_TYPE"

rm -f "$cdir"/task.*
run_srun --mpi=pmix -N 1 -n 4 "$wrap" "$cdir" garbage "$lmpi/hello"
want_pmix 4 "PMIx_Init: UNREACHABLE$pmix_tail"
refused "srun --mpi=pmix -n 4, PMIX_SERVER_URI* garbage: every task says PMIx is unusable"

rm -f "$cdir"/task.*
run_srun --mpi=pmix -N 1 -n 4 --export=ALL,LOOM_MPI_PMIX_LIB=/nonexistent/libpmix.so \
    "$wrap" "$cdir" keep "$lmpi/hello"
want_pmix 4 "$nolib_text"
refused "srun --mpi=pmix -n 4, LOOM_MPI_PMIX_LIB=/nonexistent/libpmix.so: every task says so"

# Alone: one task, or several behind the explicit opt-in.
run_srun --mpi=none -N 1 -n 1 "$lmpi/hello"
[ $rc -eq 0 ] && [ "$(grep -cx 'No Errors' "$out.stdout")" -eq 1 ] && [ ! -s "$out.stderr" ]
assert_last "srun --mpi=none -n 1: a singleton, No Errors, nothing on stderr (${dt}s)" \
    "srun --mpi=none -n 1 (rc $rc)"
run_srun --mpi=none -N 1 -n 2 --export=ALL,LOOM_MPI_PMI=singleton "$lmpi/hello"
[ $rc -eq 0 ] && [ "$(grep -cx 'No Errors' "$out.stdout")" -eq 2 ]
assert_last "LOOM_MPI_PMI=singleton srun --mpi=none -n 2: two singletons, No Errors twice (${dt}s)" \
    "LOOM_MPI_PMI=singleton srun --mpi=none -n 2 (rc $rc)"

# MPI_Abort through PMIx_Abort: rank 1 aborts, the others wait in MPI_Recv for it.
cat >"$cdir/abort.c" <<'EOF'
/* abort.c - rank 1 calls MPI_Abort(7); the others wait for a message it never sends */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    if (size > 1)
        MPI_Recv(&size, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("abort: rank %d of %d returned\n", rank, size);
    MPI_Finalize();
    return 0;
}
EOF
if [ ! -x "$lmpi/mpicc" ]; then
    skip_case "MPI_Abort under --mpi=pmix" "mpi/mpicc not built"
elif ! "$lmpi/mpicc" -o "$cdir/abort" "$cdir/abort.c" >"$cdir/abort.err" 2>&1; then
    sed 's/^/  mpicc: /' "$cdir/abort.err"
    echo "FAIL: MPI_Abort under --mpi=pmix: mpi/mpicc could not build the program"
    nfail=$((nfail + 1))
else
    _tt=$T_TIMEOUT
    T_TIMEOUT=30
    run_srun --mpi=pmix -N 1 -n 4 "$cdir/abort"
    T_TIMEOUT=$_tt
    [ $hung -eq 0 ] && [ $rc -eq 7 ] && ! grep -q 'returned' "$out.stdout" &&
        [ "$(grep -cxF 'loom-mpi: MPI_Abort(errorcode 7) called by rank 1' "$out.stderr")" -eq 1 ]
    assert_last "MPI_Abort(7) by rank 1 of 4 under --mpi=pmix ends the step, srun exit 7 (${dt}s)" \
        "MPI_Abort(7) by rank 1 of 4 under --mpi=pmix: rc $rc, hung $hung (${dt}s)"
fi

# Loom's plugin: Loom MPI through its PMIx path (the plugin serves PMI-2 and PMIx; auto
# would pick PMI-2).
if have_plugin; then
    for p in hello ring coll_basic; do
        one_job "$p, --mpi=loom -n 16, LOOM_MPI_PMI=pmix" 16 16 LOOM_MPI_PMI=pmix $p \
            --mpi=loom -N 1 -n 16
    done
    one_job "coll_basic, --mpi=loom -n 16, LOOM_MPI_PMI=pmix, LOOM_MPI_PMIX_COLLECT=0" \
        16 16 LOOM_MPI_PMI=pmix,LOOM_MPI_PMIX_COLLECT=0 coll_basic --mpi=loom -N 1 -n 16
    rm -f "$cdir"/task.*
    run_srun --mpi=loom -N 1 -n 2 \
        --export=ALL,LOOM_MPI_PMI=pmix,LOOM_MPI_PMIX_LIB=/nonexistent/libpmix.so \
        "$wrap" "$cdir" keep "$lmpi/hello"
    want_pmix 2 "$nolib_text"
    refused "--mpi=loom -n 2, LOOM_MPI_PMI=pmix, no client library: the PMIx path was taken"
else
    skip_case "--mpi=loom with LOOM_MPI_PMI=pmix" "Loom's plugin was not built"
fi
finish
