#!/bin/bash
# bench/mpi/io.sh - MPI-IO collective buffering: Loom's MPI beside Debian's MPICH (ROMIO)
# and Open MPI (OMPIO) in one run, same source (iobench.c) built by each MPI's mpicc.
#
# Usage: bench/mpi/io.sh [-r REPS] [-n NP] [-s MIB] [-b BLOCK] [-o NAME] [-q] [BUILDDIR]
#   NP ranks (default 16) each write BLOCK-byte pieces (default 1024) strided over one
#   MIB MiB file (default 256) with one MPI_File_write_all, collective buffering on and
#   off: Loom and MPICH through the hint romio_cb_write=enable|disable, Open MPI through
#   its fcoll component (default = on, OMPI_MCA_fcoll=individual = off).  REPS runs per
#   cell, interleaved (default 3); the table gives the median [min-max] bandwidth and
#   the ratio Loom/peer.  Then one run per cell under `strace -f -c` counts the write
#   system calls (pwrite64/pwritev/write; every process of the job, launchers included).
#   -q: 1 run, 64 MiB, no strace (smoke test).  -o NAME: results in NAME.md (mpi-io).
# Environment: IO_DIR (default /dev/shm: the file system is not what is measured),
#   BENCH_TIMEOUT (seconds per launch, default 300), MPICC_MPICH, MPICC_OMPI.
# Output: bench/results/NAME.md (and the raw lines in bench/results/NAME_raw.dat).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=3 np=16 mib=256 block=1024 quick=0 name=mpi-io
while getopts "r:n:s:b:o:qh" c; do
    case $c in
    r) reps=$OPTARG ;;
    n) np=$OPTARG ;;
    s) mib=$OPTARG ;;
    b) block=$OPTARG ;;
    o) name=$OPTARG ;;
    q) quick=1; reps=1; mib=64 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
bdir=${1:-build}
case "$bdir" in /*) ;; *) bdir=$PWD/$bdir ;; esac
TMO=${BENCH_TIMEOUT:-300}
IO_DIR=${IO_DIR:-/dev/shm}
out=$top/bench/results/$name.md
raw=$top/bench/results/${name}_raw.dat
exec </dev/null
tmp=$(mktemp -d /tmp/loom-iobench.XXXXXX) || exit 1
file=$IO_DIR/loom-iobench.$$.dat
trap 'rm -rf "$tmp"; rm -f "$file"' EXIT
trap 'exit 130' INT TERM

"$bdir/mpi/mpicc" -O2 -o "$tmp/loom" "$here/iobench.c" || exit 1
"${MPICC_MPICH:-mpicc.mpich}" -O2 -o "$tmp/mpich" "$here/iobench.c" || exit 1
"${MPICC_OMPI:-mpicc.openmpi}" -O2 -o "$tmp/ompi" "$here/iobench.c" || exit 1
ompi_root=()
[ "$(id -u)" = 0 ] && ompi_root=(--allow-run-as-root)

# run MPI MODE [PREFIX...]: one launch, prints the iobench line
run() {
    local mpi=$1 mode=$2
    shift 2
    local args=("$file" "$mib" "$block")
    case $mpi in
    loom) "$@" timeout -k 5 "$TMO" "$bdir/launcher/mpiexec" -n "$np" "$tmp/loom" "${args[@]}" \
            romio_cb_write=$mode ;;
    mpich) "$@" timeout -k 5 "$TMO" mpiexec.mpich -n "$np" "$tmp/mpich" "${args[@]}" \
            romio_cb_write=$mode ;;
    ompi) if [ "$mode" = disable ]; then export OMPI_MCA_fcoll=individual; else unset OMPI_MCA_fcoll; fi
        "$@" timeout -k 5 "$TMO" mpiexec.openmpi "${ompi_root[@]}" --oversubscribe -n "$np" \
            "$tmp/ompi" "${args[@]}"
        unset OMPI_MCA_fcoll ;;
    esac
    rm -f "$file"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
cells="loom:enable mpich:enable ompi:enable loom:disable mpich:disable ompi:disable"
: > "$raw"
for ((r = 1; r <= reps; r++)); do
    for cell in $cells; do
        mpi=${cell%:*} mode=${cell#*:}
        line=$(run "$mpi" "$mode" 2>"$tmp/err" | grep '^iobench ')
        if [ -z "$line" ]; then
            echo "io.sh: $mpi $mode failed: $(tail -2 "$tmp/err")" >&2
            echo "$mpi $mode FAIL" >> "$raw"
        else
            echo "$mpi $mode $line" >> "$raw"
            echo "io.sh: rep $r $mpi $mode: $line" >&2
        fi
    done
done

declare -A calls
if [ $quick = 0 ]; then
    for cell in $cells; do
        mpi=${cell%:*} mode=${cell#*:}
        run "$mpi" "$mode" strace -f -c -e trace=pwrite64,pwritev,pwritev2,write,writev \
            -o "$tmp/st" >/dev/null 2>&1
        # strace -c columns: % time, seconds, usecs/call, calls, [errors], syscall
        calls[$cell]=$(awk '$NF ~ /^(pwrite64|pwritev|pwritev2|write|writev)$/ {
            printf "%s%s %s", sep, $NF, $4; sep=", " }' "$tmp/st")
    done
fi

load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$raw" "$out" "$np" "$mib" "$block" "$reps" "$IO_DIR" "$load0 / $load1" \
    "${calls[loom:enable]:-}" "${calls[mpich:enable]:-}" "${calls[ompi:enable]:-}" \
    "${calls[loom:disable]:-}" "${calls[mpich:disable]:-}" "${calls[ompi:disable]:-}" <<'PY'
import sys, statistics, datetime
raw, out, np_, mib, block, reps, iodir, load = sys.argv[1:9]
calls = dict(zip(["loom:enable", "mpich:enable", "ompi:enable", "loom:disable",
                  "mpich:disable", "ompi:disable"], sys.argv[9:15]))
bw = {}
for l in open(raw):
    f = l.split()
    if len(f) >= 8:
        bw.setdefault((f[0], f[1]), []).append(float(f[7]))
def cell(k):
    v = bw.get(k)
    if not v:
        return "failed", None
    m = statistics.median(v)
    return "%.0f [%.0f-%.0f]" % (m, min(v), max(v)), m
names = {"loom": "Loom", "mpich": "MPICH (ROMIO)", "ompi": "Open MPI (OMPIO)"}
o = ["# MPI-IO: collective write of small interleaved pieces (bench/mpi/io.sh)", "",
     "%s ranks each write %s-byte pieces strided over one %s MiB file in %s with one "
     "MPI_File_write_all (a filetype of one block resized to %s blocks); time from a "
     "barrier to a barrier after the call.  Median [min-max] MiB/s of %s runs, "
     "interleaved; %s; load average (1/5/15 min) before / after: %s." % (np_, block, mib,
         iodir, np_, reps, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), load),
     "",
     "| collective buffering | Loom | MPICH (ROMIO) | Open MPI (OMPIO) | Loom/MPICH | Loom/Open MPI |",
     "|---|---|---|---|---|---|"]
for mode, label in (("enable", "on (romio_cb_write=enable; Open MPI default fcoll)"),
                    ("disable", "off (romio_cb_write=disable; Open MPI fcoll=individual)")):
    cs = [cell((m, mode)) for m in ("loom", "mpich", "ompi")]
    r = lambda a, b: "%.2f" % (a / b) if a and b else "-"
    o.append("| %s | %s | %s | %s | %s | %s |" % (label, cs[0][0], cs[1][0], cs[2][0],
             r(cs[0][1], cs[1][1]), r(cs[0][1], cs[2][1])))
if any(calls.values()):
    o += ["", "Write system calls of one run (`strace -f -c`, every process of the job):", "",
          "| collective buffering | Loom | MPICH (ROMIO) | Open MPI (OMPIO) |", "|---|---|---|---|"]
    for mode in ("enable", "disable"):
        o.append("| %s | %s | %s | %s |" % ("on" if mode == "enable" else "off",
                 *[calls.get("%s:%s" % (m, mode)) or "-" for m in ("loom", "mpich", "ompi")]))
open(out, "w").write("\n".join(o) + "\n")
print("\n".join(o))
PY
