#!/usr/bin/env python3
"""report.py - tables (markdown) and plot data from bench/tcp/run.sh's raw file.

Usage: report.py RAW BASE REPS NETNS_NOTE KERNEL
Writes BASE.md and BASE_{loopback,netns}_{lat,bw}.tsv (columns: bytes, then floor, loom,
mpich, ompi; '-' where missing) and BASE_{loopback,netns}_pair.tsv (size, then Loom's,
MPICH's and Open MPI's latency over the floor in the same job, from pairlat).  Values are medians over rounds of each run's median.
Ratios are paired: each round's Loom run is divided by the floor (or by one MPI's run) of
the same round, and the table gives the median of those ratios.  Loom / best MPI is the
worse for Loom of Loom / MPICH and Loom / Open MPI: picking the better MPI inside each
round would compare one noisy run of Loom with the best of two noisy runs, a bias against
Loom as large as the noise (on an idle machine here: 2x between rounds).  This machine's
speed flips between two states (the floor's 8 B latency 3.9 or 5.7 us) for seconds to
minutes at a time; runs next to each other in one round mostly share a state, and a ratio
of medians taken from different rounds can mix them.
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
    vals[(path, test, int(f[5]))].append((impl, float(f[6]), rnd))


def med(path, test, size, impl):
    v = [x for i, x, _ in vals.get((path, test, size), []) if i == impl]
    return statistics.median(v) if v else None


def paired(path, test, size, against):
    """Median over rounds of Loom / (what `against` picks from that round's values)."""
    rounds = defaultdict(dict)
    for i, x, r in vals.get((path, test, size), []):
        rounds[r][i] = x
    ratios = []
    for v in rounds.values():
        other = against(v)
        if v.get("loom") and other:
            ratios.append(v["loom"] / other)
    return statistics.median(ratios) if ratios else None


# The state a run saw: its own 8 B latency against the best that implementation had on
# that path in any round.  The two states are 1.35-1.45x apart; within one state a
# run's 8 B latency varies by a few percent.
SLOW_FACTOR = 1.2


def run_state(path, impl, rnd):
    lat8 = {r: x for i, x, r in vals.get((path, "lat", 8), []) if i == impl}
    if rnd not in lat8:
        return None
    return "fast" if lat8[rnd] <= SLOW_FACTOR * min(lat8.values()) else "slow"


def by_state(path, test, size, state):
    """Medians over the rounds whose run of each implementation saw `state`."""
    row = {}
    for impl in IMPLS:
        v = [x for i, x, r in vals.get((path, test, size), [])
             if i == impl and run_state(path, impl, r) == state]
        row[impl] = (statistics.median(v), len(v)) if v else (None, 0)
    return row


def vs_best_mpi(path, test, size, lower_is_better):
    """The worse for Loom of its paired ratios against each MPI."""
    r = [paired(path, test, size, lambda v, m=m: v.get(m)) for m in ("mpich", "ompi")]
    r = [x for x in r if x]
    if not r:
        return None
    return max(r) if lower_is_better else min(r)


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
           "and Loom / floor, each the median over rounds of that round's ratio (runs of "
           "one round are next to each other in time; this machine's speed flips between "
           "two states between rounds); Loom / best MPI is the worse for Loom of the "
           "medians of Loom / MPICH and Loom / Open MPI.\n")
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
                p1 = vs_best_mpi(path, test, s, test == "lat")
                p2 = paired(path, test, s, lambda v: v.get("floor"))
                r1 = f"{p1:.2f}" if p1 else "-"
                r2 = f"{p2:.2f}" if p2 else "-"
                label = ("latency" if test == "lat" else "bandwidth") + \
                    f" {size_str(s)} ({'µs' if unit == 'us' else unit})"
                out.append(f"| {label} | " + " | ".join(fmt(x, unit) for x in row) +
                           f" | {r1} | {r2} |")
# ---- the same, split by the state of the machine each run saw ----
state_rows = []
for path in ("loopback", "netns"):
    for test in ("lat", "bw"):
        for s in sorted({s for (p, t, s) in vals if p == path and t == test}):
            cells = []
            for state in ("fast", "slow"):
                row = by_state(path, test, s, state)
                loom, n = row["loom"]
                mp = [row[i][0] for i in ("mpich", "ompi") if row[i][0]]
                best = (min(mp) if test == "lat" else max(mp)) if mp else None
                fl = row["floor"][0]
                cells.append(f"{loom / best:.2f}" if loom and best else "-")
                cells.append(f"{loom / fl:.2f}" if loom and fl else "-")
                cells.append(" ".join(str(row[i][1]) for i in IMPLS))
            label = ("latency" if test == "lat" else "bandwidth") + f" {size_str(s)}"
            state_rows.append(f"| {path} | {label} | " + " | ".join(cells) + " |")
if state_rows:
    out.append("\n## By machine state\n")
    out.append("Each run is put in the state its own 8 B latency shows (slow: more than "
               f"{SLOW_FACTOR}x that implementation's best on that path); ratios of the "
               "medians of the runs in one state.  Runs: how many rounds of floor, Loom, "
               "MPICH, Open MPI saw that state.  The state can change within a run (its "
               "bandwidth cases come seconds after its 8 B latency), so a bandwidth cell "
               "may mix states.\n")
    out.append("| path | metric | fast: Loom / best MPI | fast: Loom / floor | fast: runs "
               "| slow: Loom / best MPI | slow: Loom / floor | slow: runs |")
    out.append("|---" * 8 + "|")
    out.extend(state_rows)
# ---- pairlat: each MPI against the floor between the same two ranks, same moments ----
pair_rows = []
for path in ("loopback", "netns"):
    psizes = sorted({s for (p, t, s) in vals if p == path and t == "pratio"})
    if psizes:
        with open(f"{base}_{path}_pair.tsv", "w") as t:
            for s in psizes:
                t.write(size_str(s).replace(" ", "") + " " + " ".join(
                    fmt(med(path, "pratio", s, i), "x") for i in ("loom", "mpich", "ompi"))
                    + "\n")
    for s in psizes:
        ratio = {i: med(path, "pratio", s, i) for i in ("loom", "mpich", "ompi")}
        floor_us = med(path, "pfloor", s, "loom")
        rel = [ratio["loom"] / ratio[m] for m in ("mpich", "ompi")
               if ratio["loom"] and ratio[m]]
        def spread(i, path=path, s=s):
            v = [x for j, x, _ in vals.get((path, "pratio", s), []) if j == i]
            return f"{fmt(ratio[i], 'x')} ({min(v):.2f}-{max(v):.2f})" if v else "-"
        pair_rows.append(f"| {path} | {size_str(s)} | {fmt(floor_us, 'us')} | " +
                         " | ".join(spread(i) for i in ("loom", "mpich", "ompi")) +
                         f" | {fmt(max(rel) if rel else None, 'x')} |")
if pair_rows:
    out.append("\n## Latency against the floor in the same job (bench/tcp/pairlat.c)\n")
    out.append("Each MPI's job also opens a polling TCP connection between ranks 0 and 1 "
               "and alternates blocks of a few ms of raw round trips and MPI_Send/MPI_Recv "
               "round trips (order flipped every pair, 40 pairs per size); each MPI block "
               "is divided by the floor block next to it.  Cells: median over rounds of "
               "each job's median ratio (lowest-highest job in brackets).  Loom / best MPI here is (Loom / floor) / "
               "(MPI / floor), the worse for Loom of MPICH and Open MPI: the floor cancels "
               "the machine's state, which separate runs (the tables above) cannot.  "
               "Floor µs: the raw blocks in Loom's jobs.\n")
    out.append("| path | size | floor (µs) | Loom / floor | MPICH / floor | "
               "Open MPI / floor | Loom / best MPI |")
    out.append("|---" * 7 + "|")
    out.extend(pair_rows)
sizes = sorted({s for (p, t, s) in vals if p == "allreduce4x4"})
if sizes:
    out.append("\n## MPI_Allreduce, 4 nodes x 4 ranks (shm inside a node, TCP between)\n")
    out.append("| size | Loom (µs) | MPICH (µs) | Open MPI (µs) | Loom / best MPI |")
    out.append("|---|---|---|---|---|")
    for s in sizes:
        row = [med("allreduce4x4", "allreduce", s, i) for i in ("loom", "mpich", "ompi")]
        p = vs_best_mpi("allreduce4x4", "allreduce", s, True)
        r = f"{p:.3g}" if p else "-"
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
