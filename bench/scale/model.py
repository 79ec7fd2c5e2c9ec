#!/usr/bin/env python3
"""bench/scale/model.py - a cost model of Loom's wire-up, fitted to the emulated cluster.

From the emulator's measurements (bench/results/scale-*.tsv, rows of bench/scale/run.sh) it
fits a few per-operation costs, then
  1. reproduces the emulator's own fence and start-up times at every measured N, with the
     emulator's CPU sharing in the model (N node processes on P cores), and prints the
     error of each row;
  2. predicts the fence (0 B and 1 KiB per rank, full and on-demand KVS) and the start-up
     of a real cluster: NODES x 64 ranks, one CPU per node server, for 1 000, 10 000 and
     50 000 nodes.

Costs fitted (all from the emulator, none guessed):
  h        one tree hop on a link (send, loopback TCP, wake-up, receive):
           fence0 = c + 2 * depth * h over chains of 2..16 nodes (width 1, scale-hop.tsv)
  c_node   a node server's fixed CPU per fence round, and
  c_rank   its CPU per local rank per round (a fence request and answer, one get):
           cpu0 = c_node + R * c_rank at 16 nodes, R = 1..64 (scale-ranks.tsv)
  c_byte   CPU per byte of the full exchange per node server (receive, store, forward):
           (cpu1k - cpu0) / (N * R * record) over the 1 KiB rows at width >= 4
  record   bytes per 1 KiB put on the wire (key, value, framing): from the busiest link's
           bytes at 16 nodes
  c_rdv    a node's CPU in the rendezvous (cookie HMAC handshake, table), c_link its CPU
           for its links and first fence (medians, scale-n.tsv)
Assumptions for the real cluster (arguments; not measured here):
  --net-us   one-way latency a real network adds to a hop (default 5 us)
  --gbps     link bandwidth (default 25 Gb/s: TCP on 25 GbE)
  --munge-us munged's CPU per credential encode or decode (default: scale-munge.tsv)
Emulator reproduction: a run's wall time for a round is its critical path (2 * depth * h)
plus the CPU every server spends in it shared over P cores (the fence: the sum of the
servers' CPU measured in that run, or N times the median server's in rows without the sum; the start-up: the per-node start-up CPU measured at N <= --fit-max),
scaled by one factor per quantity (alpha: the share of the cores other processes take and
the context switches a process's own CPU time does not count), fitted on the rows with
N <= --fit-max (default 256) and checked on all rows.

Usage: bench/scale/model.py [--dir bench/results] [--fit-max 256] [--cores 2] ...
No packages beyond python3.
"""
import argparse
import csv
import math
import os
import statistics as st


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    out = []
    for r in rows:
        if any(v == k for k, v in r.items()):  # a header line repeated by run.sh -o
            continue
        d = {}
        for k, v in r.items():
            try:
                d[k] = float(v)
            except (TypeError, ValueError):
                d[k] = v
        out.append(d)
    return out


def depth(n, w):
    """Levels below the root of the k-ary tree of n nodes (root 0, parent (i-1)/w)."""
    if n <= 1:
        return 0
    if w == 1:
        return n - 1
    d, first, size = 0, 0, 1
    while first + size < n:
        first += size
        size *= w
        d += 1
    return d


def linfit(xs, ys):
    """Least squares y = a + b x; returns a, b."""
    mx, my = st.mean(xs), st.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def ratio_fit(xs, ys):
    """y = k x through the origin, minimising relative error: k = median of y/x."""
    return st.median(y / x for x, y in zip(xs, ys) if x > 0)


def group_median(rows, keys, field):
    g = {}
    for r in rows:
        g.setdefault(tuple(r[k] for k in keys), []).append(r[field])
    return {k: st.median(v) for k, v in g.items()}


DAT_FIELDS = ("fence0_ms", "fence1k_ms", "cpu0_ms", "cpu1k_ms", "rss_kb", "hwm_kb",
              "busy1k_B", "startup_ms", "rdv_ms", "cpu_rdv_ms", "cpu_start_ms")


def write_dat(path, rows):
    """Medians per (N, width, mode) of 4 ranks per node; NaN where a phase was skipped."""
    g = {}
    for r in rows:
        if r["ranks_per_node"] != 4:
            continue
        g.setdefault((int(r["N"]), int(r["width"]), r.get("mode", "full")), []).append(r)
    with open(path, "w") as f:
        f.write("# N width mode runs " + " ".join(DAT_FIELDS) + "\n")
        for (n, w, m), v in sorted(g.items()):
            cells = []
            for k in DAT_FIELDS:
                xs = [r[k] for r in v if not (k in ("fence1k_ms", "cpu1k_ms", "busy1k_B")
                                              and r["big_B"] == 0)]
                cells.append(f"{st.median(xs):.4g}" if xs else "NaN")
            f.write(f"{n} {w} {m} {len(v)} " + " ".join(cells) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "..", "results"))
    ap.add_argument("--fit-max", type=int, default=256)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--net-us", type=float, default=5.0)
    ap.add_argument("--gbps", type=float, default=25.0)
    ap.add_argument("--munge-us", type=float, default=None,
                    help="CPU per credential operation (default: scale-munge.tsv)")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--width", type=int, default=None, help="tree width (default: best)")
    ap.add_argument("--dat", default=None,
                    help="also write the medians per N, width and mode here (for plot.gp)")
    a = ap.parse_args()
    P = a.cores

    hop = read_rows(os.path.join(a.dir, "scale-hop.tsv"))
    ranks = read_rows(os.path.join(a.dir, "scale-ranks.tsv"))
    nrows = read_rows(os.path.join(a.dir, "scale-n.tsv")) + read_rows(
        os.path.join(a.dir, "scale-width.tsv"))
    munge = read_rows(os.path.join(a.dir, "scale-munge.tsv"))
    # full and on-demand side by side (the same binary, the core with KVS modes)
    modes = read_rows(os.path.join(a.dir, "scale-modes.tsv"))
    if a.dat:
        write_dat(a.dat, nrows + modes)

    # ---- fitted costs --------------------------------------------------------------
    hx = [2 * depth(int(r["N"]), 1) for r in hop]
    c_f, h = linfit(hx, [r["fence0_ms"] for r in hop])
    rk = group_median(ranks, ("ranks_per_node",), "cpu0_ms")
    c_node, c_rank = linfit([k[0] for k in rk], list(rk.values()))
    rk1 = [r for r in ranks if r["big_B"] > 0 and r["N"] == 16]
    rec16 = [r for r in nrows if r["N"] == 16 and r["width"] == 2 and r["big_B"] > 0
             and r["ranks_per_node"] == 4]
    # busiest link at width 2, 16 nodes: the down blob (N R records) and the up subtree
    # (depth-1 subtree of nodes 1.., about half the ranks): (N R + N R / 2) records
    if rec16:
        record = st.median(r["busy1k_B"] for r in rec16) / (16 * 4 * 1.5)
    else:
        record = 1024 + 33
    big = [r for r in nrows if r["big_B"] > 0 and r["width"] >= 4 and r["mode"] == "full"]
    c_byte = st.median((r["cpu1k_ms"] - r["cpu0_ms"]) / (r["N"] * r["ranks_per_node"] * record)
                       for r in big) if big else 3e-6
    c_byte_rk = None
    if rk1:
        g = group_median(rk1, ("ranks_per_node",), "cpu1k_ms")
        _, slope = linfit([k[0] * 16 * record for k in g], list(g.values()))
        c_byte_rk = slope
    c_rdv = st.median(r["cpu_rdv_ms"] for r in nrows) if nrows else 0.1
    c_link = st.median(r["cpu_start_ms"] - r["cpu0_ms"] for r in nrows if r["N"] <= 256)
    if a.munge_us is None:
        # munged CPU per credential operation, and the client's own CPU per operation
        a.munge_us = st.median(r["munged_cpu_us_per_op"] + (r["encode_cpu_us"] +
                                                            r["decode_cpu_us"]) / 2
                               for r in munge) if munge else 100.0

    print("# Costs fitted from the emulator")
    print(f"hop h                 {h * 1e3:8.1f} us   (chains of 2..16 nodes, {len(hop)} runs;"
          f" intercept {c_f * 1e3:.1f} us)")
    print(f"node CPU per round    {c_node * 1e3:8.1f} us   (16 nodes, R = 1..64)")
    print(f"CPU per rank per round{c_rank * 1e3:8.2f} us   (a fence request and answer, one get)")
    print(f"record of a 1 KiB put {record:8.0f} B")
    print(f"CPU per byte, full    {c_byte * 1e6:8.2f} ns   (N x R records, width >= 4; "
          + (f"from R = 1..64 at 16 nodes: {c_byte_rk * 1e6:.2f} ns)" if c_byte_rk else ")"))
    print(f"CPU per byte, used    {max(c_byte, c_byte_rk or 0) * 1e6:8.2f} ns   (the larger)")
    print(f"rendezvous CPU / node {c_rdv * 1e3:8.1f} us   links + first fence {c_link * 1e3:.1f} us")
    print(f"munge per credential  {a.munge_us:8.1f} us   CPU (munged + client)")
    print()

    # ---- the emulator reproduced ---------------------------------------------------
    # the CPU all the servers spend in a round: their sum where the emulator reports it
    # (rows of run.sh since the cpu*_sum_ms columns), else N times the median server's
    def total(r, med, sm):
        v = r.get(sm)
        return v if isinstance(v, float) else r["N"] * r[med]

    def emu_fence0(r):
        return (2 * depth(int(r["N"]), int(r["width"])) * h,
                total(r, "cpu0_ms", "cpu0_sum_ms") / P)

    def emu_fence1(r):
        return (2 * depth(int(r["N"]), int(r["width"])) * h,
                total(r, "cpu1k_ms", "cpu1k_sum_ms") / P)

    # start-up: the node's work (rendezvous handshake; links, server and first fence) as
    # measured where the machine is not yet crowded (N <= fit-max); at larger N the
    # per-node CPU of the start grows with the time it waits (loop wake-ups while the
    # others are still starting), which is not on the critical path
    small = [r for r in nrows if r["N"] <= a.fit_max and r["ranks_per_node"] == 4]
    c_up = st.median(r["cpu_rdv_ms"] + r["cpu_start_ms"] for r in small) if small else 0.4

    def emu_start(r):
        return (2 * depth(int(r["N"]), int(r["width"])) * h, r["N"] * c_up / P)

    # the real cluster's store-and-forward runs through interior nodes: the larger of
    # the leaf's (N x R fit) and the interior's (R fit at width 2) per-byte cost
    c_byte_real = max(c_byte, c_byte_rk or 0)

    print("# The emulator reproduced: model = critical path + alpha * (CPU of all servers) / "
          f"{P} cores; alpha fitted on N <= {a.fit_max}")
    worst = {}
    for name, field, f, sel in (
            ("fence 0 B, full", "fence0_ms", emu_fence0, lambda r: r["mode"] == "full"),
            ("fence 0 B, on demand", "fence0_ms", emu_fence0, lambda r: r["mode"] == "ondemand"),
            ("fence 1 KiB, full", "fence1k_ms", emu_fence1,
             lambda r: r["big_B"] > 0 and r["mode"] == "full"),
            ("fence 1 KiB, on demand", "fence1k_ms", emu_fence1,
             lambda r: r["big_B"] > 0 and r["mode"] == "ondemand"),
            ("start-up", "startup_ms", emu_start, lambda r: True)):
        rows = [r for r in nrows + modes if sel(r) and r["ranks_per_node"] == 4]
        fit = [r for r in rows if r["N"] <= a.fit_max]
        if not fit:
            continue
        alpha = ratio_fit([f(r)[1] for r in fit], [r[field] - f(r)[0] for r in fit])
        print(f"\n{name}: alpha = {alpha:.2f}")
        print("N\twidth\tmeasured_ms\tmodel_ms\terror_%\tload1")
        g = {}
        for r in rows:
            path, cpu = f(r)
            g.setdefault((int(r["N"]), int(r["width"])), []).append(
                (r[field], path + alpha * cpu, r.get("load1", float("nan"))))
        errs = []
        for (n, w), v in sorted(g.items()):
            meas = st.median(x[0] for x in v)
            mod = st.median(x[1] for x in v)
            err = (mod - meas) / meas * 100 if meas > 0 else float("nan")
            errs.append(abs(err))
            print(f"{n}\t{w}\t{meas:.2f}\t{mod:.2f}\t{err:+.0f}\t{st.median(x[2] for x in v):.1f}")
        # the same form with alpha fitted on every row: does the form fit at all?
        alpha_all = ratio_fit([f(r)[1] for r in rows], [r[field] - f(r)[0] for r in rows])
        errs_all = []
        for (n, w), v in sorted(g.items()):
            meas = st.median(x[0] for x in v)
            mod = st.median(f(r)[0] + alpha_all * f(r)[1] for r in rows
                            if (int(r["N"]), int(r["width"])) == (n, w))
            errs_all.append(abs((mod - meas) / meas * 100))
        worst[name] = (max(errs), st.median(errs), alpha_all, max(errs_all),
                       st.median(errs_all))
    print("\nerror (|model - measured| / measured, medians of runs per N and width); right:"
          " alpha fitted on every N instead")
    for k, (mx, md, aa, mxa, mda) in worst.items():
        print(f"  {k:22s} worst {mx:5.0f} %   median {md:5.0f} %    |  alpha {aa:4.2f}:"
              f" worst {mxa:5.0f} %   median {mda:5.0f} %")
    print()

    # ---- a real cluster ------------------------------------------------------------
    R = a.ranks
    bw = a.gbps * 1e9 / 8 / 1e3  # bytes per ms
    hr = h + a.net_us / 1e3      # a hop on a real network
    local = R * c_rank           # the node's own ranks, once per fence

    def fence0(n, w):
        d = depth(n, w)
        # per level: the hop, and the parent's CPU for its w children's messages
        return 2 * d * (hr + w * c_node / 2) + local

    def fence_full(n, w, val):
        s = n * R * (val + (record - 1024))  # the job's KVS, bytes
        d = depth(n, w)
        # up: the root's subtree links carry almost all of it once; down: store and
        # forward of the whole blob at every level, w copies per parent
        up = s / bw + s * c_byte_real
        down = d * (w * s / bw + s * c_byte_real)
        return fence0(n, w) + up + down, s

    def get_remote(n, w):
        # asked of the owner node through the tree: up to the common ancestor and down
        return 2 * 2 * depth(n, w) * hr + 2 * c_rank

    def start(n, w):
        # srun's rendezvous: one handshake per node in turn (its CPU and a credential
        # each way), then to every node a table of its own, its parent's and its
        # children's addresses (~26 B each: "<node> ip:port")
        rdv = n * (c_rdv + 2 * a.munge_us / 1e3) + n * (w + 2) * 26 / bw
        # a node's links: w children and a parent, each a TCP connect and a credential
        # each way (in parallel across nodes), then the first fence with 32 B cards
        links = (w + 1) * (2 * hr + 2 * a.munge_us / 1e3) + c_link
        f, _ = fence_full(n, w, 32)
        return rdv + links + f, rdv

    widths = [a.width] if a.width else [2, 4, 8, 16, 32, 50]
    print(f"# A real cluster: NODES x {R} ranks, one CPU per node server, hop = {h * 1e3:.1f} us"
          f" + {a.net_us} us network, {a.gbps} Gb/s links")
    print("nodes\twidth\tdepth\tfence0_ms\tfull1k_ms\tfull1k_KVS_MB\tondemand1k_ms\t"
          "get_remote_ms\tall_cards_ondemand_s\tstartup_ms\tof_it_rdv_ms")
    for n in (1000, 10000, 50000):
        best = None
        for w in widths:
            f0 = fence0(n, w)
            f1, s = fence_full(n, w, 1024)
            od = f0  # puts stay home; the fence synchronizes only
            g = get_remote(n, w)
            # MPICH over PMI-2 gets every peer's card: n R keys per node, each asked of its
            # owner once per node and cached; the root relays about half of all requests
            # (a request and its answer: one message each way, c_node / 2 per message)
            allc = (n * R * 2 * c_rank + n * n * R / 2 * (2 * c_node / 2)) / 1e3
            su, rdv = start(n, w)
            print(f"{n}\t{w}\t{depth(n, w)}\t{f0:.2f}\t{f1:.0f}\t{s / 1e6:.0f}\t{od:.2f}\t{g:.2f}\t"
                  f"{allc:.1f}\t{su:.0f}\t{rdv:.0f}")
            if best is None or f0 < best[1]:
                best = (w, f0)
        print(f"# {n} nodes: the fastest 0 B fence at width {best[0]}")


if __name__ == "__main__":
    main()
