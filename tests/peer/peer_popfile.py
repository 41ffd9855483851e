#!/usr/bin/python3
"""Peer cross-check of the population-file reader (src/pop/popfile.c) on the
shipped data (data/*.csv), with NumPy and Python's csv module, which share
no code with it.

For each data file:
  * its SHA-256 is the one in data/SHA256SUMS;
  * every value the reader keeps is the double Python's float() reads from
    the same cell, bit for bit, and the classes of the `label` column are
    the distinct labels in the documented order with the same counts;
  * the truth (the reader's values through pop_moments) agrees with
    NumPy's mean and variance (divisor N) to 1e-12 relative;
  * the same rows saved by NumPy as .npy in C and Fortran order, little-
    and big-endian, float64 and float32, read back as the same values
    (float32: the float32 values widened) and the same truth.

The reader is driven through bnstudy itself: `bnstudy population` prints
the values it read (and, ordered by-label, the classes in their order),
`bnstudy run --write-features -` the truth. Prints one line per check and
`N passed, N failed`; exits 1 if any check fails.
"""

import argparse
import csv
import hashlib
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "data")

# Both sides compute a mean and a variance of at most 1797 doubles: NumPy
# with pairwise summation, bnstudy with a compensated sum and the corrected
# two-pass formula. Each is within a few 1e-16 relative of the exact value
# on these data (no feature's mean is near zero against its spread), so
# 1e-12 leaves room for summation order while a wrong divisor (N - 1:
# 1/568 for Breast Cancer), a dropped or shifted row, or a misread value
# of one unit in its last printed digit (about 1e-4 relative to one of 569
# rows) fails.
TOLERANCE = 1e-12


def bnstudy(exe, *args):
    return subprocess.run([exe] + list(args), check=True,
                          capture_output=True, text=True).stdout


def table(text):
    lines = text.splitlines()
    return lines[0].split("\t"), [l.split("\t") for l in lines[1:]]


def population(exe, path, *args):
    """The rows as bnstudy read them: header and cells, `row` first."""
    return table(bnstudy(exe, "population", "--population", path, *args))


def truth(exe, path, *args):
    """features.tsv's feature, true_mean and true_var, from a run's
    --write-features on standard output (after the summary and a blank
    line)."""
    out = bnstudy(exe, "run", "--population", path, "--batch-size", "2",
                  "--write-features", "-", *args)
    head, rows = table(out.split("\n\n", 1)[1])
    cols = [head.index(c) for c in ("feature", "true_mean", "true_var")]
    return [[r[c] for c in cols] for r in rows]


def read_csv(path):
    with open(path, newline="") as fp:
        rows = list(csv.reader(fp))
    header = rows[0]
    li = header.index("label")
    names = [h for k, h in enumerate(header) if k != li]
    x = np.array([[float(v) for k, v in enumerate(r) if k != li]
                  for r in rows[1:]], dtype=np.float64)
    labels = [r[li] for r in rows[1:]]
    return names, x, labels


def expected_levels(labels):
    """docs/population-files.md: integers in numeric order (as integers),
    anything else in byte order."""
    def is_int(s):
        t = s[1:] if s[:1] in "+-" else s
        return t.isdigit() and t.isascii()
    if all(is_int(s) for s in labels):
        vals = [int(s) for s in labels]
        order = sorted(set(vals))
        return [(str(v), vals.count(v)) for v in order]
    order = sorted(set(labels), key=lambda s: s.encode("utf-8"))
    return [(s, labels.count(s)) for s in order]


def rel(got, want, floor):
    return abs(got - want) / max(abs(want), floor, np.finfo(np.float64).tiny)


def compare_truth(exe, path, x, extra=()):
    """Largest relative difference of the reader's truth from NumPy's."""
    rows = truth(exe, path, *extra)
    if len(rows) != x.shape[1]:
        raise RuntimeError("unexpected features for %s" % path)
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    worst = 0.0
    for j, r in enumerate(rows):
        m, v = float(r[1]), float(r[2])
        # The mean is measured on the scale of the spread too: a relative
        # error of a mean near zero means nothing.
        worst = max(worst, rel(m, mean[j], math.sqrt(var[j])),
                    rel(v, var[j], 0.0) if var[j] else abs(v))
    return worst, rows


def compare_values(exe, path, x, extra=()):
    head, rows = population(exe, path, *extra)
    f = x.shape[1]
    got = np.array([[float(v) for v in r[1:1 + f]] for r in rows],
                   dtype=np.float64)
    order = [int(r[0]) for r in rows]
    return head[1:1 + f], order == list(range(x.shape[0])) and \
        got.shape == x.shape and \
        np.array_equal(got.view(np.uint64), x.view(np.uint64))


def levels(exe, path):
    """The classes in their index order with their counts: the rows
    ordered by-label come class by class in that order."""
    head, rows = population(exe, path, "--label", "label", "--order",
                            "by-label")
    col = head.index("label")
    got = []
    for r in rows:
        if not got or got[-1][0] != r[col]:
            got.append([r[col], 0])
        got[-1][1] += 1
    return [tuple(g) for g in got]


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=""):
        print("%s  %-58s %s" % ("ok  " if ok else "FAIL", what, detail))
        self.passed += bool(ok)
        self.failed += not ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"))
    args = ap.parse_args()
    exe = args.bnstudy

    sums = {}
    with open(os.path.join(DATA, "SHA256SUMS")) as fp:
        for line in fp:
            digest, name = line.split()
            sums[name] = digest

    c = Checks()
    worst_all = 0.0
    with tempfile.TemporaryDirectory(prefix="bnstudy-peer-popfile-") as tmp:
        for name in sorted(sums):
            path = os.path.join(DATA, name)
            with open(path, "rb") as fp:
                digest = hashlib.sha256(fp.read()).hexdigest()
            c.check(digest == sums[name], "%s: SHA-256" % name)

            names, x, labels = read_csv(path)
            lab = ("--label", "label")
            head, same = compare_values(exe, path, x, lab)
            c.check(head == names and same,
                    "%s: %d x %d values, bit for bit" % (name, *x.shape))

            got = levels(exe, path)
            want = expected_levels(labels)
            c.check(got == want, "%s: %d classes in order, with counts"
                    % (name, len(want)), " ".join(n for n, _ in got))

            worst, csv_rows = compare_truth(exe, path, x, lab)
            worst_all = max(worst_all, worst)
            c.check(worst <= TOLERANCE, "%s: truth against NumPy" % name,
                    "max rel diff %.2e" % worst)

            # NumPy's own .npy files of the same features.
            layouts = [("<f8", "C"), ("<f8", "F"), (">f8", "C"), (">f8", "F"),
                       ("<f4", "C"), (">f4", "F")]
            for dtype, order in layouts:
                arr = np.asarray(x, dtype=np.dtype(dtype), order=order)
                npy = os.path.join(tmp, "%s-%s-%s.npy" % (
                    name, dtype.replace("<", "le").replace(">", "be"), order))
                np.save(npy, arr)
                widened = arr.astype(np.float64)
                _, same = compare_values(exe, npy, widened)
                worst, rows = compare_truth(exe, npy, widened)
                worst_all = max(worst_all, worst)
                if dtype.endswith("8"):
                    # The same doubles give the same truth, to the bit.
                    same_truth = [r[1:] for r in rows] == \
                        [r[1:] for r in csv_rows]
                else:
                    same_truth = worst <= TOLERANCE
                c.check(same and same_truth,
                        "%s as .npy %s order %s" % (name, dtype, order),
                        "max rel diff %.2e" % worst)

    print()
    print("largest relative difference of the truth from NumPy's: %.3e "
          "(tolerance %g)" % (worst_all, TOLERANCE))
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
