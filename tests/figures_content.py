#!/usr/bin/env python3
"""Check that each figure draws what the TSVs say.

Usage: figures_content.py RESULTS_DIR TABLES_DIR

TABLES_DIR holds, for each figure script, the points gnuplot itself would
draw (`set table`, switched on by `tables=` in scripts/style.gp):
NAME.png.tab and NAME.svg.tab. For every figure the expected series are
recomputed here from RESULTS_DIR's TSV files, independently of the
scripts, and each must be present with the right values (gnuplot writes
six significant digits, so values agree to 1e-5 relative). Prints one
line per check and "N passed, N failed"; exits 1 if any check failed.
"""

import csv
import math
import re
import shlex
import sys
from pathlib import Path

REL = 1e-5


def read_tsv(path):
    with open(path, newline="") as fp:
        return list(csv.DictReader(fp, delimiter="\t"))


def read_tables(path):
    """The plots of a table file: a list of plots, each a list of curves
    {title, columns, points}, points without the undefined ones."""
    plots, curves, cur = [], [], None
    for line in Path(path).read_text().splitlines():
        m = re.match(r"# Curve (\d+) of \d+", line)
        if m:
            index = int(m.group(1))
            if index == 0 and curves:
                plots.append(curves)
                curves = []
            cur = {"title": None, "columns": [], "points": []}
            curves.append(cur)
        elif line.startswith("# Curve title:"):
            cur["title"] = line.split(":", 1)[1].strip().strip('"')
        elif line.startswith("# "):
            cur["columns"] = line[2:].split()
        elif line.strip() and cur is not None:
            fields = shlex.split(line)
            row = dict(zip(cur["columns"], fields))
            if row.get("type") == "u" or any(
                    f in ("NaN", "nan") for f in fields[:2]):
                continue
            cur["points"].append(row)
    if curves:
        plots.append(curves)
    return plots


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


class Checker:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, what, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"ok - {what}")
        else:
            self.failed += 1
            print(f"not ok - {what}" + (f": {detail}" if detail else ""))

    def series(self, what, curve, want, cols=("x", "y"), rel=REL):
        """curve's points, in order, against want: a list of tuples of
        numbers (or strings, compared exactly) for the columns cols."""
        if curve is None:
            self.check(what, False, "no such curve")
            return
        got = [tuple(p.get(c) for c in cols) for p in curve["points"]]
        if len(got) != len(want):
            self.check(what, False, f"{len(got)} points, want {len(want)}")
            return
        for g, w in zip(got, want):
            for gv, wv in zip(g, w):
                ok = gv == wv if isinstance(wv, str) else (
                    gv is not None and close(float(gv), wv, rel))
                if not ok:
                    self.check(what, False, f"point {g}, want {w}")
                    return
        self.check(what, True)


def titled(plot, start):
    """The curve whose title starts with start, or None."""
    for c in plot:
        if c["title"] and c["title"].startswith(start):
            return c
    return None


def by(rows, **where):
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def xy(rows, x, y):
    return [(float(r[x]), float(r[y])) for r in rows]


def fig_batch_size(ck, res, plots):
    rows = read_tsv(res / "batch-size/summary.tsv")
    (plot,) = plots
    ck.series("batch-size: stats_err by batch size",
              titled(plot, "running statistics"), xy(rows, "batch_size", "stats_err"))
    ck.series("batch-size: batch_mean_err by batch size",
              titled(plot, "one batch's mean"), xy(rows, "batch_size", "batch_mean_err"))


def fig_estimators(ck, res, plots):
    rows = read_tsv(res / "estimators/summary.tsv")
    ck.check("estimators: two panels", len(plots) == 2, f"{len(plots)} plots")
    ests = list(dict.fromkeys(r["estimator"] for r in rows))
    for plot, order in zip(plots, ("shuffled", "sorted")):
        ck.check(f"estimators/{order}: one curve per estimator",
                 len(plot) == len(ests), f"{len(plot)} curves, {len(ests)} estimators")
        for curve, est in zip(plot, ests):
            sel = by(rows, order=order, estimator=est)
            want = xy(sel, "batch_size", "stats_err")
            if all(y < 1e-12 for _, y in want):
                # An exact estimator is drawn on a floor below the data.
                floor = float(curve["points"][0]["y"]) if curve["points"] else math.nan
                ys = [y for _, y in want]
                want = [(x, floor) for x, _ in want]
                lowest = min(y for r in rows for y in [float(r["stats_err"])] if y >= 1e-12)
                ck.check(f"estimators/{order}: {est} is exact, drawn below every real value",
                         floor < lowest and max(ys) < 1e-12, f"floor {floor}")
            ck.check(f"estimators/{order}: curve titled {est}",
                     bool(curve["title"]) and curve["title"].startswith(est), str(curve["title"]))
            ck.series(f"estimators/{order}: {est} stats_err by batch size", curve, want)


def fig_features(ck, res, plots):
    rows = read_tsv(res / "batch-size/features.tsv")
    (plot,) = plots
    feats = list(dict.fromkeys(r["feature"] for r in rows))
    bs = sorted({int(r["batch_size"]) for r in rows})
    lo, hi = str(bs[0]), str(bs[-1])
    at = {b: {r["feature"]: r for r in by(rows, batch_size=b)} for b in (lo, hi)}
    # Bars at each feature's position: the truth left, B small centre,
    # B large right, bw apart.
    true_curve = titled(plot, "true variance")
    bw = 1 - float(true_curve["points"][0]["x"]) if true_curve and true_curve["points"] else 0
    ck.check("features: bars side by side", 0 < bw < 0.5, f"bar offset {bw}")
    for start, b, col, dx in (("true variance", lo, "true_var", -1),
                              (f"running variance, B = {lo}", lo, "running_var", 0),
                              (f"running variance, B = {hi}", hi, "running_var", 1)):
        ck.series(f"features: {start}", titled(plot, start),
                  [(i + 1 + dx * bw, float(at[b][f][col])) for i, f in enumerate(feats)])
    ones = titled(plot, "initial running variance")
    ck.check("features: the initial running variance 1 drawn across",
             ones is not None and ones["points"] and
             all(close(float(p["y"]), 1.0) for p in ones["points"]))


def fig_init_weight(ck, res, plots):
    bs = read_tsv(res / "batch-size/summary.tsv")
    mom = read_tsv(res / "momentum/summary.tsv")
    (plot,) = plots
    ps = list(dict.fromkeys(float(r["new_weight"]) for r in mom))
    published = float(bs[0]["new_weight"])
    curves = [c for c in plot if c["points"] and c["title"] != "measured, batch-size runs"]
    ck.check("init-weight: a curve per new-value weight, the published one drawn again",
             len(curves) == len(ps) + 1, f"{len(curves)} curves for {len(ps)} weights")
    for p, curve in zip(ps + [published], curves):
        # The sampled T is printed to six digits too, which moves (1 - p)^T
        # by up to T |log(1 - p)| 5e-6 relative.
        want = [(float(q["x"]), (1 - p) ** float(q["x"])) for q in curve["points"]]
        ck.series(f"init-weight: (1 - p)^T for p = {p:g}", curve, want, rel=1e-4)
    ck.series("init-weight: measured init_weight against updates",
              titled(plot, "measured"), xy(bs, "updates", "init_weight"))


def fig_momentum(ck, res, plots):
    rows = read_tsv(res / "momentum/summary.tsv")
    (plot,) = plots
    ps = list(dict.fromkeys(float(r["new_weight"]) for r in rows))
    curves = [c for c in plot if c["title"] and c["title"].startswith(("p = ", "published"))]
    ck.check("momentum: a titled curve per new-value weight", len(curves) == len(ps),
             f"{len(curves)} curves for {len(ps)} weights")
    published = float(read_tsv(res / "batch-size/summary.tsv")[0]["new_weight"])
    again = [c for c in plot if not c["title"] and c["points"]]
    for p, curve in zip(ps + [published], curves + again[:1]):
        sel = [r for r in rows if close(float(r["new_weight"]), p)]
        ck.series(f"momentum: stats_err by batch size at p = {p:g}", curve,
                  xy(sel, "batch_size", "stats_err"))
    best = {}
    for r in rows:
        b, y = float(r["batch_size"]), float(r["stats_err"])
        best[b] = min(best.get(b, math.inf), y)
    ck.series("momentum: the lowest error at each batch size",
              titled(plot, "lowest error"), sorted(best.items()))


def fig_ordering(ck, res, plots):
    rows = read_tsv(res / "ordering/summary.tsv")
    (plot,) = plots
    orders = list(dict.fromkeys(r["order"] for r in rows))
    lines = [c for c in plot if c["title"]]
    ck.check("ordering: a titled curve per order", len(lines) == len(orders))
    base = {r["batch_size"]: float(r["train_eval_rmse"]) for r in by(rows, order=orders[0])}
    for o, curve in zip(orders, lines):
        ck.series(f"ordering: train_eval_rmse by batch size, {o}", curve,
                  xy(by(rows, order=o), "batch_size", "train_eval_rmse"))
    labels = [c for c in plot if "label" in c["columns"] and c["points"]]
    for o, curve in zip(orders[1:], labels):
        sel = by(rows, order=o)
        want = [(float(r["batch_size"]), float(r["train_eval_rmse"]),
                 "×%.1f" % (float(r["train_eval_rmse"]) / base[r["batch_size"]]))
                for r in sel]
        ck.series(f"ordering: {o} ÷ {orders[0]} labels", curve, want, cols=("x", "y", "label"))


def fig_shuffles(ck, res, plots):
    dist = by(read_tsv(res / "shuffles/distribution.tsv"), score="stats_err")
    expect = read_tsv(res / "shuffles/expectation.tsv")
    single = read_tsv(res / "batch-size/summary.tsv")
    ck.check("shuffles: two panels", len(plots) == 2, f"{len(plots)} plots")
    left, right = plots
    ests = list(dict.fromkeys(r["estimator"] for r in dist))
    bands = [c for c in left if "y1" in c["columns"]]
    for e, curve in zip(ests, bands):
        ck.series(f"shuffles: {e} 5-95 % band", curve,
                  [(float(r["batch_size"]), float(r["p05"]), float(r["p95"]))
                   for r in by(dist, estimator=e)], cols=("x", "y1", "y2"))
    ck.check("shuffles: a band per estimator", len(bands) == len(ests))
    for e in ests:
        ck.series(f"shuffles: {e} median", titled(left, e),
                  xy(by(dist, estimator=e), "batch_size", "p50"))
    seed1 = by(single, seed="1", estimator="ema")
    ck.series("shuffles: the seed-1 run", titled(left, "seed 1"),
              xy(seed1, "batch_size", "stats_err"))
    runs = by(read_tsv(res / "shuffles/summary.tsv"), estimator="ema")
    labels = [c for c in left if "label" in c["columns"]]
    want = []
    for r in seed1:
        ys = [float(q["stats_err"]) for q in by(runs, batch_size=r["batch_size"])]
        below = sum(y < float(r["stats_err"]) for y in ys)
        want.append((float(r["batch_size"]), float(r["stats_err"]),
                     "%.0f%%" % (100.0 * below / len(ys))))
    ck.series("shuffles: seed 1's percentile among the shuffles",
              labels[0] if labels else None, want, cols=("x", "y", "label"))
    drawn = [c for c in right if c["points"]]
    for i, e in enumerate(ests):
        sel = by(expect, estimator=e)
        ck.series(f"shuffles: {e} closed form", drawn[i] if i < len(drawn) else None,
                  xy(sel, "batch_size", "expected_mean_err"))
        k = len(ests) + i
        ck.series(f"shuffles: {e} RMS over the shuffles", drawn[k] if k < len(drawn) else None,
                  xy(sel, "batch_size", "mc_mean_err"))


FIGURES = {
    "batch-size": fig_batch_size,
    "estimators": fig_estimators,
    "features": fig_features,
    "init-weight": fig_init_weight,
    "momentum": fig_momentum,
    "ordering": fig_ordering,
    "shuffles": fig_shuffles,
}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    res, tabs = Path(sys.argv[1]), Path(sys.argv[2])
    ck = Checker()
    scripts = sorted(p.stem for p in Path("scripts").glob("*.gp") if p.stem != "style")
    ck.check("every figure script has a content check",
             sorted(FIGURES) == scripts, f"scripts {scripts}, checks {sorted(FIGURES)}")
    for name, fn in FIGURES.items():
        png, svg = tabs / f"{name}.png.tab", tabs / f"{name}.svg.tab"
        if not png.exists() or not svg.exists():
            ck.check(f"{name}: gnuplot wrote its tables", False)
            continue
        ck.check(f"{name}: the PNG and the SVG draw the same points",
                 png.read_text() == svg.read_text())
        fn(ck, res, read_tables(png))
    print(f"{ck.passed} passed, {ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
