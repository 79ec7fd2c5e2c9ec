#!/bin/bash
# bench/mpi/io.sh - MPI-IO collective write and read bandwidth: Loom's MPI beside Debian's
# MPICH (ROMIO) and Open MPI (OMPIO) in one run, the same source (iobench.c) built by each
# MPI's own mpicc, against the file system's own `dd` as the floor.
#
# Usage: bench/mpi/io.sh [-r REPS] [-n "NP..."] [-k "KIND..."] [-s MIB] [-S MIB]
#                        [-b BLOCK] [-d DIR] [-H HINT=VALUE]... [-o NAME] [-q] [BUILDDIR]
#   KINDs (iobench.c's header has the method): array = a 2-D array of doubles of about
#   MIB MiB (default 64) block-distributed over a 2-D process grid (subarray filetypes);
#   strided = many small interleaved records, BLOCK bytes (default 1024) each, rank r
#   owning every NP-th one, S MIB (default 16) in all; slab = one contiguous row slab per
#   rank (not run by default).  Default kinds "array strided", ranks "4 16 64".
#   Every cell: MPI_File_write_all (timed to the page cache, and again including
#   MPI_File_sync: to the disk), then MPI_File_read_all warm (pages cached from the
#   write) and cold (the file's pages dropped with posix_fadvise first).
#   The floor, run between the MPI launches of every repetition with the same byte
#   count: `dd if=/dev/zero bs=16M` (timed to the page cache; then `sync -d`: to the
#   disk, the same fdatasync as MPI_File_sync), `dd of=/dev/null bs=16M` warm, and cold
#   after `dd iflag=nocache count=0` (the same posix_fadvise).  No O_DIRECT anywhere.
#   REPS repetitions (default 3), the MPIs interleaved inside each; medians [min-max].
#   -d DIR: where the files go (default BUILDDIR/iobench.tmp: the real disk; /dev/shm
#   measures the MPIs without a disk).  -H: a hint for all three MPIs (repeatable).
#   -q: smoke test (1 repetition, 16 MiB, 4 ranks).  -o NAME: results NAME.md (mpi-io).
# Output: bench/results/NAME.md, NAME.png, NAME_raw.dat and the panels NAME.*.tsv.
# Environment: see lib.sh (BENCH_TIMEOUT, MPICC_*, MPIEXEC_*, BENCH_OUTDIR).
# The files are removed after every launch and at exit.  About 12 minutes on 2 cores.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
reps=3 nps="4 16 64" kinds="array strided" mib=64 smib=16 block=1024 name=mpi-io dir=
hints=()
while getopts "r:n:k:s:S:b:d:H:o:qh" c; do
    case $c in
    r) reps=$OPTARG ;;
    n) nps=$OPTARG ;;
    k) kinds=$OPTARG ;;
    s) mib=$OPTARG ;;
    S) smib=$OPTARG ;;
    b) block=$OPTARG ;;
    d) dir=$OPTARG ;;
    H) hints+=("$OPTARG") ;;
    o) name=$OPTARG ;;
    q) reps=1 nps=4 mib=16 smib=16 ;;
    *) sed -n '2,27p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
. "$here/lib.sh"
bench_init iobench "${1:-build}"
IO_DIR=${dir:-$bdir/iobench.tmp}
mkdir -p "$IO_DIR" || exit 1
file=$IO_DIR/loom-iobench.$$.dat
bench_cleanup_extra='rm -f "$file" "$IO_DIR"/.loom-iobench.$$.dat.*; rmdir "$IO_DIR" 2>/dev/null'
bench_build "$here/iobench.c"
raw=$outdir/${name}_raw.dat
: >"$raw"

now() { date +%s.%N; }
# floor KIND MIB: dd of about the bytes the MPI runs of KIND move
floor() {
    local kind=$1 bytes t0 t1 t2 t3 t4 t5
    case $kind in
    array|slab) bytes=$(python3 -c "
import math; w = $2 << 20; n = int(math.isqrt(w // 8)); print(n * n * 8)") ;;
    *) bytes=$(($2 << 20)) ;;
    esac
    rm -f "$file"
    t0=$(now)
    dd if=/dev/zero of="$file" bs=16M iflag=count_bytes count="$bytes" status=none
    t1=$(now)
    sync -d "$file"
    t2=$(now)
    dd if="$file" of=/dev/null bs=16M status=none
    t3=$(now)
    dd if="$file" iflag=nocache count=0 status=none
    t4=$(now)
    dd if="$file" of=/dev/null bs=16M status=none
    t5=$(now)
    rm -f "$file"
    awk -v k="$kind" -v b="$bytes" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" \
        -v t4="$t4" -v t5="$t5" 'BEGIN { m = b / 1048576
        printf "floor %s - write %.1f\nfloor %s - write+sync %.1f\n", k, m / (t1 - t0), k, m / (t2 - t0)
        printf "floor %s - read-warm %.1f\nfloor %s - read-cold %.1f\n", k, m / (t3 - t2), k, m / (t5 - t4) }'
}

load0=$(bench_load)
start=$(date +%s)
for ((r = 1; r <= reps; r++)); do
    for kind in $kinds; do
        m_=$mib
        [ "$kind" = strided ] && m_=$smib
        floor "$kind" "$m_" >>"$raw"
        for np in $nps; do
            for m in "${mpis[@]}"; do
                t=$(date +%s)
                line=$(bench_launch "$m" "$np" "$kind" "$file" "$m_" "$block" "${hints[@]}" \
                       2>"$tmp/err" | grep '^iobench ')
                rm -f "$file" "$IO_DIR"/.loom-iobench.$$.dat.*
                if [ -z "$line" ]; then
                    echo "io.sh: $m $kind $np failed: $(tail -2 "$tmp/err")" >&2
                    continue
                fi
                echo "io.sh: rep $r $m $kind np=$np ($(($(date +%s) - t)) s): $line" >&2
                # iobench KIND P BYTES BLOCK write writesync readwarm readcold
                echo "$line" | awk -v m="$m" '{ b = $4 / 1048576
                    printf "%s %s %s write %.1f\n", m, $2, $3, b / $6
                    printf "%s %s %s write+sync %.1f\n", m, $2, $3, b / $7
                    printf "%s %s %s read-warm %.1f\n", m, $2, $3, b / $8
                    printf "%s %s %s read-cold %.1f\n", m, $2, $3, b / $9 }' >>"$raw"
            done
        done
    done
done
load1=$(bench_load)
secs=$(($(date +%s) - start))

# the report names the directory without this machine's paths: relative to the build
# directory (the real disk) or as given when elsewhere (/dev/shm)
io_shown=$IO_DIR
case $IO_DIR in "$bdir"/*) io_shown="the build directory's ${IO_DIR#"$bdir"/} (the real disk)" ;; esac
PYTHONPATH=$here python3 - "$raw" "$outdir/$name" "$reps" "$io_shown" "$load0 / $load1" \
    "$secs" "$kinds" "$nps" "$mib" "$smib" "$block" "${hints[*]:-}" <<'PY' || exit 1
import sys, datetime, benchlib as B
raw, base, reps, iodir, load, secs, kinds, nps, mib, smib, block, hints = sys.argv[1:13]
d = B.read_raw(raw, 3)
kinds, nps = kinds.split(), nps.split()
ops = [("write", "write_all, to the page cache"), ("write+sync", "write_all + File_sync, to the disk"),
       ("read-warm", "read_all, pages cached"), ("read-cold", "read_all, pages dropped first")]
what = {"array": "2-D block-distributed array (about %s MiB of doubles, subarray filetypes on a "
                 "MPI_Dims_create grid)" % mib,
        "slab": "one contiguous row slab per rank (about %s MiB)" % mib,
        "strided": "small interleaved records (%s MiB of %s-byte records, rank r owns every "
                   "P-th)" % (smib, block)}
o = ["# MPI-IO: collective write and read bandwidth (bench/mpi/io.sh)", "",
     "Loom beside MPICH 4.0.2 (ROMIO) and Open MPI 4.1.4 (OMPIO), each MPI at its own defaults%s, "
     "the same program (bench/mpi/iobench.c) built by each mpicc; the floor is `dd` of the same "
     "byte count with 16 MiB blocks (see io.sh's header: page cache, then `sync -d` = the "
     "fdatasync that MPI_File_sync does, warm read, cold read after dropping the file's pages; "
     "no O_DIRECT anywhere).  Files in %s.  MiB/s, median [min-max] of %s repetitions with "
     "the MPIs interleaved; %s; whole run %s s; load average (1/5/15 min) before / after: %s.  "
     "Machine: 2 cores, so 4, 16 and 64 ranks are all oversubscribed."
     % (" plus " + hints if hints else "", iodir, reps,
        datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), secs, load), ""]
panels = []
goal = []
for kind in kinds:
    o += ["## %s" % what.get(kind, kind), ""]
    rows = []
    for np_ in nps:
        for op, label in ops:
            c = d.get((kind, np_, op), {})
            fl = d.get((kind, "-", op), {}).get("floor")
            lm = B.med(c.get("loom"))
            peers = [B.med(c.get(m)) for m in ("mpich", "ompi") if c.get(m)]
            best = max(peers) if peers else None
            rows.append([np_, op, B.cell(c.get("loom")), B.cell(c.get("mpich")),
                         B.cell(c.get("ompi")), B.cell(fl), B.ratio(lm, best),
                         B.ratio(lm, B.med(fl))])
            if kind == "array" and op.startswith("write") and lm is not None:
                goal.append((np_, op, lm, best, B.med(fl)))
    o += B.table(["ranks", "operation", "Loom", "MPICH", "Open MPI", "dd floor",
                  "Loom / better peer", "Loom / floor"], rows) + [""]
    for op, label in ops:
        p = "%s.%s.%s.tsv" % (base, kind, op)
        series = []
        for np_ in nps:
            c = d.get((kind, np_, op), {})
            series.append(("P=%s" % np_, [B.med(c.get(m)) for m in ("loom", "mpich", "ompi")]
                           + [B.med(d.get((kind, "-", op), {}).get("floor"))]))
        B.panel(p, "%s: %s" % (kind, label), "MiB/s", ["Loom", "MPICH", "Open MPI", "dd floor"],
                series)
        panels.append(p)
if goal:
    o += ["## Goal (issue 22): at or ahead of the better peer, and at least 80 % of the floor "
          "for large contiguous collective writes (the 2-D array)", ""]
    o += B.table(["ranks", "operation", "Loom / better peer", "Loom / floor", "met"],
                 [[n, op, B.ratio(l, b), B.ratio(l, f),
                   "yes" if (b is None or l >= b) and (f is None or l >= 0.8 * f) else "no"]
                  for n, op, l, b, f in goal]) + [""]
o += ["Plot: %s.png (one panel per kind and operation; bars: Loom, MPICH, Open MPI, dd floor)."
      % base.rsplit("/", 1)[-1]]
open(base + ".md", "w").write("\n".join(o) + "\n")
open(base + ".panels", "w").write(" ".join(panels) + "\n")
print("\n".join(o))
PY
bench_plot "$outdir/$name.png" "MPI-IO collective bandwidth: Loom vs MPICH (ROMIO) vs Open MPI (OMPIO) vs dd" \
    "$(wc -w <"$outdir/$name.panels" | awk '{ print int(($1 + 3) / 4) }')x4" $(cat "$outdir/$name.panels")
rm -f "$outdir/$name.panels"
