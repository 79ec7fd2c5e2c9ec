"""benchlib.py - the report side that bench/mpi's side-by-side benches share (with lib.sh):
raw result lines to medians, ratio cells, markdown tables and bars.gp panel files.

Raw lines (one per measured value): "MPI KEY... VALUE", the KEY fields chosen by each
bench; read_raw() groups them as {(KEY...): {MPI: [values]}}.
"""
import statistics

NAMES = {"loom": "Loom", "mpich": "MPICH", "ompi": "Open MPI", "ompi-yield": "Open MPI yield",
         "floor": "dd floor"}


def read_raw(path, nkey):
    """{key tuple: {mpi: [float]}} from lines "mpi k1 .. k_nkey value" (others skipped)"""
    d = {}
    for line in open(path):
        f = line.split()
        if len(f) != nkey + 2 or f[0].startswith("#"):
            continue
        try:
            v = float(f[-1])
        except ValueError:
            continue
        d.setdefault(tuple(f[1:-1]), {}).setdefault(f[0], []).append(v)
    return d


def med(vals):
    return statistics.median(vals) if vals else None


def cell(vals, fmt="%.0f", spread=True):
    """'median [min-max]' (or 'median'), 'fail' when nothing was measured"""
    if not vals:
        return "fail"
    m = statistics.median(vals)
    if spread and len(vals) > 1:
        return (fmt + " [" + fmt + "-" + fmt + "]") % (m, min(vals), max(vals))
    return fmt % m


def ratio(a, b, fmt="%.2f"):
    return fmt % (a / b) if a is not None and b else "-"


def table(header, rows):
    """markdown table lines"""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def panel(path, title, ylabel, columns, rows, log=False):
    """a bars.gp panel: columns = series names, rows = [(label, [value or None])]"""
    with open(path, "w") as f:
        f.write("# title: %s\n# ylabel: %s\n" % (title, ylabel))
        if log:
            f.write("# log: y\n")
        f.write("label " + " ".join('"%s"' % c for c in columns) + "\n")
        for label, vals in rows:
            f.write(label.replace(" ", "_") + " " +
                    " ".join("?" if v is None else "%.6g" % v for v in vals) + "\n")
