#!/usr/bin/env python3
"""tests/mpich/report.py - the bookkeeping half of tests/mpich/run.sh.

Owns: the test identity used everywhere ("dir/prog np [args] [env values]", as
MPICH's runtests names a test in its JUnit output), reading the JUnit files of a
run, the per-directory table (tests, Loom passed, MPICH passed, passed by MPICH but
not by Loom), the comparison with tests/mpich/expected-fail (a new failure is a
regression; a listed test that passes is to be removed from the list), and the
filtered testlists of the quick (CI) subset.

  report.py filter --src TSRC --build B --dir D --quick FILE --name NAME
  report.py report --dirs "..." --loom DIR [--mpich DIR] --expected FILE --out DIR
                   [--quick FILE] [--write-expected] [--loom-unbuilt WHY]
"""
import argparse
import os
import re
import sys
import time
from xml.etree import ElementTree

SEP = "  # "
CAP = 0  # the per-test bound of the run (--timeout)


def norm(s):
    return " ".join(s.split())


# ---- testlists -------------------------------------------------------------------
def line_id(prefix, line):
    """The id runtests gives the test of one testlist line, or None (comment,
    empty, support-build line); ("dir", name) for a line naming a directory."""
    line = re.sub(r"#.*", "", line).strip()
    if not line or line.startswith("!"):
        return None
    f = line.split()
    prog = f[0]
    np = f[1] if len(f) > 1 and "=" not in f[1] else "2"
    args, envs = [], []
    for kv in f[2:]:
        if kv.startswith("arg="):
            args.append(kv[4:])
        elif kv.startswith("env="):
            envs.append(kv[4:])
    return norm(" ".join([prefix + "/" + prog, np] + args + envs))


def list_path(tsrc, build, rel, name="testlist"):
    for base in (build, tsrc):
        p = os.path.join(base, rel, name)
        if os.path.isfile(p) and os.path.getsize(p) > 0:
            return p
    return None


def cmd_filter(a):
    """Write NAME into BUILD/DIR (and its listed subdirectories) holding only the
    lines whose test id the quick file names."""
    want = set()
    for l in open(a.quick):
        l = l.split(SEP)[0].split("#")[0].strip()
        if l:
            want.add(norm(l))

    def keep(tid):
        return tid in want

    def walk(rel):
        src = list_path(a.src, a.build, rel)
        if not src:
            return 0
        outl, n = [], 0
        for line in open(src):
            body = re.sub(r"#.*", "", line).strip()
            if not body or body.startswith("!"):
                continue
            first = body.split()[0]
            if os.path.isdir(os.path.join(a.build, rel, first)) and len(body.split()) == 1:
                k = walk(os.path.join(rel, first))
                if k:
                    outl.append(first + "\n")
                    n += k
                continue
            if keep(line_id(rel, line)):
                outl.append(body + "\n")
                n += 1
        os.makedirs(os.path.join(a.build, rel), exist_ok=True)
        with open(os.path.join(a.build, rel, a.name), "w") as f:
            f.writelines(outl)
        return n

    walk(a.dir)
    return 0


# ---- results ---------------------------------------------------------------------
def list_ids(tsrc, build, rel, name):
    """The ids of the tests a testlist (and the lists of the directories it names)
    holds, in runtests' order: [(id, id without the rank count)]."""
    ids = []
    for nm in name.split(","):
        src = list_path(tsrc, build, rel, nm)
        if not src:
            continue
        for line in open(src):
            body = re.sub(r"#.*", "", line).strip()
            if not body or body.startswith("!"):
                continue
            f = body.split()
            if len(f) == 1 and os.path.isdir(os.path.join(build, rel, f[0])):
                ids += list_ids(tsrc, build, os.path.join(rel, f[0]), name)
                continue
            tid = line_id(rel, line)
            w = tid.split(" ")
            ids.append((tid, " ".join(w[:1] + w[2:])))
    return ids


def read_junit(path, order=None):
    """{id: (status, seconds, text)}; status pass|fail|build|timeout|skip.
    runtests names a test that failed to build without its rank count: ORDER (from
    list_ids) gives such a test its full id."""
    res = {}
    nonp = {}
    for tid, short in order or []:
        nonp.setdefault(short, []).append(tid)
    if not os.path.isfile(path):
        return None
    # program output lands in the file as is: drop what XML cannot carry
    txt = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "?", open(path, errors="replace").read())
    try:
        root = ElementTree.fromstring(txt)
    except ElementTree.ParseError:
        # runtests died before closing the file: take what is complete
        txt = txt[: txt.rfind("</testcase>") + len("</testcase>")] if "</testcase>" in txt else ""
        txt = re.sub(r"^.*?(<testcase)", r"\1", txt, count=1, flags=re.S)
        try:
            root = ElementTree.fromstring("<r>" + txt + "</r>")
        except ElementTree.ParseError:
            return res
    for tc in root.iter("testcase"):
        name = tc.get("name", "")
        name = re.sub(r"^\s*\d*\s*-\s*", "", name)
        tid = norm(name.replace("./", "", 1))
        secs = float(tc.get("time") or 0)
        fail = tc.find("failure")
        skip = tc.find("skipped")
        if skip is not None:
            st, text = "skip", ""
        elif fail is not None:
            text = fail.text or ""
            m = re.search(r"Timeout: (\d+)", text)
            lim = int(m.group(1)) if m else 0
            if CAP and (not lim or lim > CAP):
                lim = CAP  # run.sh's wrapper cuts a longer timeLimit to --timeout
            if "Failed to build" in text:
                st = "build"
            elif lim and secs >= lim - 1:
                st = "timeout"
            else:
                st = "fail"
        else:
            st, text = "pass", ""
        if st == "build" and nonp.get(tid):
            tid = nonp[tid].pop(0)
        k, i = tid, 2
        while k in res:
            k, i = "%s (%d)" % (tid, i), i + 1
        res[k] = (st, secs, text)
    return res


NOISE = re.compile(r"^\s*(not ok|---|\.\.\.|(Directory|File|Num-procs|Timeout|Date):|Test output \(expected|$)")


def reason(st, text):
    """One line saying why a test failed, from runtests' record of it."""
    lines = [l[3:] if l.startswith("## ") else l for l in text.splitlines()]
    lines = [l.strip() for l in lines if not NOISE.match(l)]
    if st == "build":
        for pat in (r"(undefined reference to .*)", r"error: (.*)"):
            for l in lines:
                m = re.search(pat, l)
                if m:
                    return "build: " + m.group(1)[:110]
        return "build failed"
    if st == "timeout":
        first = next((l for l in lines if l and "Failed to build" not in l), "")
        return "timeout" + (": " + first[:100] if first else "")
    lines = [l for l in lines if l and l != "No Errors"]
    for l in lines:
        if "loom-mpi:" in l or "MPI_ERR" in l:
            return l[:120]
    return (lines[0][:120] if lines else "no 'No Errors' and no output")


def read_expected(path):
    exp = {}
    if os.path.isfile(path):
        for l in open(path):
            if l.startswith("#") or not l.strip():
                continue
            tid, _, why = l.rstrip("\n").partition(SEP)
            exp[norm(tid)] = why.strip()
    return exp


HEADER = """\
# tests/mpich/expected-fail - tests of MPICH's test suite (test/mpi of Debian's mpich
# source) known to fail on Loom's libmpi, one per line:
#     <dir>/<program> <ranks> [arguments] [environment values]  # <one-line reason>
# The id is the name MPICH's runtests gives the test (its JUnit output); the reason is
# free text (written by hand, or by `tests/mpich/run.sh --write-expected`, which keeps
# the reasons already here).  tests/mpich/run.sh fails when a test that is not listed
# fails on Loom (and MPICH passes it, or MPICH was not run), and says "remove from the
# list" for a listed test that passes.  Tests MPICH fails too are listed with a reason
# starting "MPICH fails it too".
"""


def cmd_report(a):
    global CAP
    CAP = a.timeout
    dirs = a.dirs.split()
    quick = set()
    if a.quick:
        for l in open(a.quick):
            l = l.split(SEP)[0].split("#")[0].strip()
            if l:
                quick.add(norm(l))
    rows, allres = [], {}
    for d in dirs:
        order = list_ids(a.tsrc, a.tbuild, d, a.lists) if a.tsrc else []
        L = None if a.loom_unbuilt else read_junit(os.path.join(a.loom, d + ".junit.xml"), order)
        # a reference directory counts once its run has ended (run.sh writes .seconds)
        M = (read_junit(os.path.join(a.mpich, d + ".junit.xml"), order)
             if a.mpich and os.path.exists(os.path.join(a.mpich, d + ".seconds")) else None)
        ids = []
        # a test of the list that runtests never reached (it stops a directory after
        # many timeouts) counts as not run
        for tid, _ in order:
            for R in (L, M):
                if R is not None and R and tid not in R and not any(
                        k.startswith(tid + " (") for k in R):
                    R[tid] = ("notrun", 0.0, "")
        for R in (L, M):
            for k, v in (R or {}).items():
                if v[0] != "skip" and k not in ids:
                    ids.append(k)
        lp = sum(1 for k in ids if L and L.get(k, ("none",))[0] == "pass")
        mp = sum(1 for k in ids if M and M.get(k, ("none",))[0] == "pass")
        monly = [k for k in ids if M and M.get(k, ("none",))[0] == "pass"
                 and not (L and L.get(k, ("none",))[0] == "pass")]
        lb = sum(1 for k in ids if L and L.get(k, ("none",))[0] == "build")
        lt = sum(1 for k in ids if L and L.get(k, ("none",))[0] == "timeout")

        def secs(R, which):
            p = os.path.join(which, d + ".seconds") if which else None
            try:
                return int(open(p).read())
            except (TypeError, OSError, ValueError):
                return None
        note = ""
        if a.loom_unbuilt:
            note = "not built (configure failed)"
        elif L is None:
            note = "no Loom results (runtests did not start)"
        elif ids and lb == len(ids):
            note = "cannot build on Loom"
        elif not L and ids:
            note = "no Loom results"
        rows.append((d, len(ids), lp, mp if M is not None else None,
                     len(monly) if M is not None else None, lb, lt,
                     secs(L, a.loom), secs(M, a.mpich), note))
        for k in ids:
            ls = (L or {}).get(k, ("notrun", 0, ""))
            ms = (M or {}).get(k, ("n/a", 0, "")) if M is not None else ("n/a", 0, "")
            if ms[0] == "notrun":
                ms = ("n/a", 0, "")  # the reference did not get there: no verdict
            allres[k] = (ls, ms)

    # the table
    out = []
    hdr = "| dir | tests | Loom passed | MPICH passed | MPICH only | Loom build fail | Loom timeout | Loom s | MPICH s | note |"
    out.append(hdr)
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    tot = [0] * 7
    for r in rows:
        d, n, lp, mp, mo, lb, lt, ls_, ms_, note = r
        f = lambda v: "-" if v is None else str(v)
        out.append("| %s | %d | %d | %s | %s | %d | %d | %s | %s | %s |" % (
            d, n, lp, f(mp), f(mo), lb, lt, f(ls_), f(ms_), note))
        for i, v in enumerate((n, lp, mp or 0, mo or 0, lb, lt, ls_ or 0)):
            tot[i] += v
    out.append("| **total** | %d | %d | %s | %d | %d | %d | %d | | |" % (
        tot[0], tot[1], tot[2] if a.mpich else "-", tot[3], tot[4], tot[5], tot[6]))
    if a.shim:
        out.append("")
        out.append("Harness shim (Loom's mpi.h lacks what MPICH's util/mtest.c calls; mtest.c got "
                   "a declaration and the tests a definition returning MPI_ERR_OTHER): " + a.shim.strip())
    table = "\n".join(out)
    print(table)

    exp = read_expected(a.expected)
    regress, stale, both, monly = [], [], [], []
    for k, ((lst, lsec, ltext), (mst, _, _)) in allres.items():
        if quick and k not in quick:
            continue
        lfail = lst not in ("pass", "skip")
        if lfail:
            why = reason(lst, ltext) if lst != "notrun" else "not run (runtests stopped early)"
            if mst == "pass":
                monly.append((k, why))
            if k not in exp:
                if mst in ("pass", "n/a"):
                    regress.append((k, why))
                else:
                    both.append((k, why))
        elif lst == "pass" and k in exp:
            stale.append(k)

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(a.out, "mpich-pass-loom-fail.txt"), "w") as f:
        for k, why in sorted(monly):
            f.write(k + SEP + why + "\n")
    with open(os.path.join(a.out, "results.tsv"), "w") as f:
        f.write("test\tloom\tmpich\tloom_seconds\treason\n")
        for k, ((lst, lsec, ltext), (mst, _, _)) in sorted(allres.items()):
            why = reason(lst, ltext) if lst not in ("pass", "skip", "notrun") else ""
            f.write("%s\t%s\t%s\t%.1f\t%s\n" % (k, lst, mst, lsec, why))
    with open(os.path.join(a.out, "regressions.txt"), "w") as f:
        for k, why in sorted(regress):
            f.write(k + SEP + why + "\n")
    with open(os.path.join(a.out, "remove-from-expected.txt"), "w") as f:
        for k in sorted(stale):
            f.write(k + "\n")

    if a.write_expected:
        keep = {k: v for k, v in exp.items() if k.split("/")[0] not in dirs}
        for k, ((lst, _, ltext), (mst, _, _)) in allres.items():
            if lst in ("pass", "skip"):
                continue
            why = exp.get(k) or (reason(lst, ltext) if lst != "notrun" else "not run (runtests stopped early)")
            if mst not in ("pass", "n/a") and not why.startswith("MPICH fails it too"):
                why = "MPICH fails it too; " + why
            keep[k] = why
        with open(a.expected, "w") as f:
            f.write(HEADER)
            for k in sorted(keep, key=lambda s: (s.split("/")[0], s)):
                f.write(k + SEP + keep[k] + "\n")
        print("mpich-suite: wrote %d entries to %s" % (len(keep), a.expected))
        regress, stale = [], []

    print()
    print("mpich-suite: %d tests MPICH passes and Loom fails: %s" % (
        len(monly), os.path.join(a.out, "mpich-pass-loom-fail.txt")))
    if both:
        print("mpich-suite: %d tests fail on both and are not listed (not counted)" % len(both))
    for k in sorted(stale):
        print("mpich-suite: PASSES NOW, remove from %s: %s" % (os.path.basename(a.expected), k))
    for k, why in sorted(regress):
        print("mpich-suite: REGRESSION (fails on Loom, not in %s): %s%s%s" % (
            os.path.basename(a.expected), k, SEP, why))
    print("mpich-suite: Loom part %s s, whole run %s s; results in %s" % (
        a.loom_seconds, a.total_seconds, a.out))
    if a.loom_unbuilt:
        print("mpich-suite: " + a.loom_unbuilt)
        return 1
    return 1 if regress else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("filter")
    f.add_argument("--src", required=True)
    f.add_argument("--build", required=True)
    f.add_argument("--dir", required=True)
    f.add_argument("--quick", required=True)
    f.add_argument("--name", required=True)
    r = sub.add_parser("report")
    r.add_argument("--dirs", required=True)
    r.add_argument("--loom", required=True)
    r.add_argument("--mpich")
    r.add_argument("--expected", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--quick")
    r.add_argument("--write-expected", action="store_true")
    r.add_argument("--loom-unbuilt")
    r.add_argument("--shim")
    r.add_argument("--tsrc")
    r.add_argument("--tbuild")
    r.add_argument("--lists", default="testlist")
    r.add_argument("--timeout", type=int, default=0)
    r.add_argument("--loom-seconds", default="?")
    r.add_argument("--total-seconds", default="?")
    a = p.parse_args()
    return cmd_filter(a) if a.cmd == "filter" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
