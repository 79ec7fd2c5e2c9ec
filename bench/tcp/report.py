#!/usr/bin/env python3
"""report.py - tables (markdown) and plot data from bench/tcp/run.sh's raw file.

Usage: report.py RAW BASE REPS NETNS_NOTE KERNEL
Writes BASE.md and BASE_{loopback,netns}_{lat,bw}.tsv (columns: bytes, then floor, loom,
mpich, ompi; '-' where missing).  Values are medians over rounds of each run's median.
"""
import statistics
import sys
from collections import defaultdict

raw, base, reps, note, kernel = sys.argv[1:6]
IMPLS = ["floor", "loom", "mpich", "ompi"]
NAMES = {"floor": "polling floor", "loom": "Loom", "mpich": "MPICH", "ompi": "Open MPI"}
vals = defaultdict(list)
fails = []
for line in open(raw):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    impl, path, rnd, test = f[0], f[1], f[2], f[3]
    if test == "FAIL":
        fails.append(f"{NAMES.get(impl, impl)} {path} round {rnd}: exit {f[6]}")
        continue
    vals[(path, test, int(f[5]))].append((impl, float(f[6])))


def med(path, test, size, impl):
    v = [x for i, x in vals.get((path, test, size), []) if i == impl]
    return statistics.median(v) if v else None


def size_str(b):
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1 << 10:
        return f"{b >> 10} KiB"
    return f"{b} B"


def fmt(x, unit):
    if x is None:
        return "-"
    return f"{x:,.0f}".replace(",", " ") if unit == "MB/s" else f"{x:.2f}"


out = []
out.append("# TCP netmod: Loom vs MPICH and Open MPI over TCP, and the polling floor\n")
out.append(f"Rounds: {reps} (medians of rounds; each round is a median of 5 repetitions). "
           f"Kernel {kernel}. Network namespaces: {note}.\n")
out.append("Ratios: Loom / best MPI (latency: < 1 is better; bandwidth: > 1 is better) "
           "and Loom / floor.\n")
for path, title in (("loopback", "TCP forced on one node (loopback), 2 ranks"),
                    ("netns", "Across two network-namespace nodes, 2 ranks")):
    sizes_l = sorted({s for (p, t, s) in vals if p == path and t == "lat"})
    sizes_b = sorted({s for (p, t, s) in vals if p == path and t == "bw"})
    if not sizes_l and not sizes_b:
        continue
    out.append(f"\n## {title}\n")
    out.append("| metric | " + " | ".join(NAMES[i] for i in IMPLS) +
               " | Loom / best MPI | Loom / floor |")
    out.append("|---" * (len(IMPLS) + 3) + "|")
    for test, unit, sizes in (("lat", "us", sizes_l), ("bw", "MB/s", sizes_b)):
        with open(f"{base}_{path}_{test}.tsv", "w") as t:
            for s in sizes:
                row = [med(path, test, s, i) for i in IMPLS]
                t.write(f"{s} " + " ".join("-" if x is None else f"{x:.3f}" for x in row)
                        + "\n")
                mpis = [x for x in row[2:] if x is not None]
                best = (min(mpis) if test == "lat" else max(mpis)) if mpis else None
                r1 = f"{row[1] / best:.2f}" if row[1] and best else "-"
                r2 = f"{row[1] / row[0]:.2f}" if row[1] and row[0] else "-"
                label = ("latency" if test == "lat" else "bandwidth") + \
                    f" {size_str(s)} ({'µs' if unit == 'us' else unit})"
                out.append(f"| {label} | " + " | ".join(fmt(x, unit) for x in row) +
                           f" | {r1} | {r2} |")
sizes = sorted({s for (p, t, s) in vals if p == "allreduce4x4"})
if sizes:
    out.append("\n## MPI_Allreduce, 4 nodes x 4 ranks (shm inside a node, TCP between)\n")
    out.append("| size | Loom (µs) | MPICH (µs) | Open MPI (µs) | Loom / best MPI |")
    out.append("|---|---|---|---|---|")
    for s in sizes:
        row = [med("allreduce4x4", "allreduce", s, i) for i in ("loom", "mpich", "ompi")]
        mpis = [x for x in row[1:] if x is not None]
        r = f"{row[0] / min(mpis):.3g}" if row[0] and mpis else "-"
        out.append(f"| {size_str(s)} | " + " | ".join(fmt(x, "us") for x in row) +
                   f" | {r} |")
if fails:
    out.append("\n## Failed cells\n")
    out.extend(f"- {x}" for x in fails)
out.append("\nThe MPICH and Open MPI allreduce rows are 16 spinning ranks on 2 cores (4 per "
           "node): they busy-poll and starve each other, Loom's idle policy yields and "
           "sleeps (see bench/results/mpi.md for the one-node picture).")
out.append(f"\nPlot: `{base.split('/')[-1]}.png` (latency and bandwidth against size).\n")
open(f"{base}.md", "w").write("\n".join(out) + "\n")
