#!/usr/bin/env python3
"""Check that each figure draws what the TSVs say, and says only what they
bear out.

Usage: figures_content.py RESULTS_DIR TABLES_DIR [--kind KIND]...
                           [--order ORDER]...

TABLES_DIR is what `bnstudy plot RESULTS_DIR --tables TABLES_DIR` wrote:
for each experiment E and each figure NAME it drew, the points gnuplot
itself would draw (`set table`), TABLES_DIR/E/NAME.png.tab and .svg.tab,
and each panel's settings (`save set`: titles, labels, axis labels),
TABLES_DIR/E/NAME.K.set. Independently of bnstudy, from RESULTS_DIR's
files alone, this script works out which figures each experiment supports
(docs/architecture.md states the rules) and what each must draw, and
checks:
  - the figures drawn are exactly those;
  - every series has the right points (the tables hold 17 significant
    digits, scripts/style.gp's tic_format, so a point agrees with the
    number it was drawn from to rounding: 1e-12 relative);
  - the axis labels give the rows, epochs and momentum of the manifest
    and the files;
  - every title, panel title and note is a form this script knows, and a
    finding ("stats_err 11.5x higher at B = 256 than at B = 8", "only
    precise reaches the truth", ...) only where the numbers bear it out.
Prints one line per check and "N passed, N failed"; exits 1 if any check
failed. Each KIND named (the figure kinds `bnstudy plot --help` lists,
its figure-kind table's) must have a checker here, and each ORDER (the
orders `bnstudy run --help` lists, its order table's) its words.
"""

import csv
import math
import re
import shlex
import sys
from pathlib import Path

REL = 1e-12
EXACT = 1e-12
X_KEYS = ["batch_size", "devices", "epochs", "precise_batches", "new_weight",
          "eps", "gamma", "beta"]
X_SYM = {"batch_size": "B", "devices": "K", "epochs": "E",
         "precise_batches": "K",
         "new_weight": "p", "eps": "eps", "gamma": "gamma", "beta": "beta"}
X_NOUN = {"batch_size": "batch size", "devices": "number of devices",
          "epochs": "number of epochs",
          "precise_batches": "number of pooled batches",
          "new_weight": "new-value weight", "eps": "eps", "gamma": "gamma",
          "beta": "beta"}
NUMERIC = {"gamma", "beta", "eps", "momentum", "new_weight", "batch_size",
           "seed", "epochs", "precise_batches", "hidden", "freeze_after",
           "lr", "sgd_momentum", "weight_decay", "init_seed", "shift",
           "scale", "offset", "drift_size", "depth", "adam_beta1",
           "adam_beta2", "adam_eps", "warmup", "step_epochs", "step_factor",
           "devices"}
# The words a numeric key takes besides its numbers (the key table's
# `word`).
KEY_WORDS = {"freeze_after": ("start",)}
# The orders in words, as a figure states them (src/model/order.c's phrases).
ORDER_WORDS = {"as-is": "batches in the enumerated order",
               "shuffled": "shuffled batches",
               "sorted": "batches sorted by {}",
               "sorted-desc": "batches sorted by {}, descending",
               "grouped": "batches cut from {} contiguous groups",
               "interleaved": "interleaved batches",
               "by-label": "batches grouped by class",
               "by-group": "batches grouped by the group column",
               "shuffled-samples": "shuffled batches of whole samples"}


# ---- reading ----

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
            if int(m.group(1)) == 0 and curves:
                plots.append(curves)
                curves = []
            cur = {"title": None, "columns": [], "points": []}
            curves.append(cur)
        elif line.startswith("# Curve title:"):
            cur["title"] = unmark(line.split(":", 1)[1].strip().strip('"'))
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


def gp_string(s):
    """The text of a string as `save set` writes it: C escapes, bytes in
    octal."""
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n in "01234567":
                j = i + 1
                while j < len(s) and j < i + 4 and s[j] in "01234567":
                    j += 1
                out.append(int(s[i + 1:j], 8))
                i = j
                continue
            out += {"n": b"\n", "t": b"\t"}.get(n, n.encode())
            i += 2
            continue
        out += c.encode()
        i += 1
    return out.decode()


def unmark(s):
    """Enhanced-mode text as it reads: markup removed, escapes undone."""
    s = re.sub(r"\{/:Bold ((?:[^{}\\]|\\.)*)\}", r"\1", s)
    return re.sub(r"\\(.)", r"\1", s)


def read_set(path):
    """The texts of a `save set` file: labels by tag, title, axis labels."""
    texts = {"labels": {}}
    q = r'"((?:[^"\\]|\\.)*)"'
    for line in Path(path).read_text().splitlines():
        m = re.match(r"set label (\d+) " + q, line)
        if m:
            texts["labels"][int(m.group(1))] = unmark(gp_string(m.group(2)))
        m = re.match(r"set (title|xlabel|ylabel|x2label) " + q, line)
        if m:
            texts[m.group(1)] = unmark(gp_string(m.group(2)))
    return texts


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


def unique(seq):
    return list(dict.fromkeys(seq))


def g(v):
    return "%g" % v


class Checker:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, what, ok, detail=""):
        what = what.replace("\n", " / ")
        if ok:
            self.passed += 1
            print(f"ok - {what}")
        else:
            self.failed += 1
            print(f"not ok - {what}" + (f": {detail}" if detail else ""))
        return ok

    def series(self, what, curve, want, cols=("x", "y"), rel=REL):
        """curve's points, in order, against want: a list of tuples of
        numbers (or strings, compared exactly) for the columns cols."""
        if curve is None:
            return self.check(what, False, "no such curve")
        got = [tuple(p.get(c) for c in cols) for p in curve["points"]]
        if len(got) != len(want):
            return self.check(what, False,
                              f"{len(got)} points, want {len(want)}")
        for gv_, wv_ in zip(got, want):
            for gv, wv in zip(gv_, wv_):
                ok = gv == wv if isinstance(wv, str) else (
                    gv is not None and close(float(gv), wv, rel))
                if not ok:
                    return self.check(what, False, f"point {gv_}, want {wv_}")
        return self.check(what, True)


# ---- an experiment and the roles of its axes ----

class Experiment:
    def __init__(self, d):
        self.dir, self.name = d, d.name
        self.manifest = {}
        for r in read_tsv(d / "manifest.tsv"):
            self.manifest.setdefault(r["key"], []).append(r["value"])
        # The settings a file's columns may vary: the sections of the
        # experiment file that set a run (the population's are the rows
        # themselves, named by the population column).
        self.keys = {k.split(".", 1)[1] for k in self.manifest
                     if k.startswith(("layer.", "sweep.", "model.",
                                      "evaluation.", "sequence."))} | {"new_weight"}
        self.files = {}
        for f in ("summary", "features", "distribution", "expectation",
                  "curve", "effective"):
            p = d / f"{f}.tsv"
            self.files[f] = read_tsv(p) if p.exists() else None
        # The rows trained on: a held-out split's, else the population's.
        rows = (self.manifest.get("train_rows") or
                self.manifest.get("population.rows") or
                self.manifest.get("population.file_rows"))
        self.rows = int(rows[0]) if rows else None
        held = self.manifest.get("held_out_rows")
        self.held = int(held[0]) if held else None

    def scales_differ(self):
        f = self.files["features"]
        if f:
            v = [float(r["true_var"]) for r in f if float(r["true_var"]) > 0]
        else:
            v = [float(x.split()[-2]) ** 2
                 for x in self.manifest.get("population.feature", [])
                 if float(x.split()[-2]) > 0]
            if not v:
                return "population.file" in self.manifest
        return bool(v) and max(v) / min(v) > 100


def distinct(rows, key):
    # "-": a setting of the other model, in a file of both; no value.
    vals = unique(r[key] for r in rows if r[key] != "-")
    # A key's word among its numbers (freeze_after's "start") makes the
    # axis one of names, in the file's order.
    if key in NUMERIC and not any(v in KEY_WORDS.get(key, ()) for v in vals):
        return sorted(vals, key=float)
    return vals


def varying(E, rows):
    cols = list(rows[0].keys()) if rows else []
    # The model is no axis: each figure draws its own model's rows.
    return [c for c in cols if c in E.keys and c != "type"
            and len(distinct(rows, c)) > 1]


def roles(E, rows, nscores):
    """x, panel, series: the rules of docs/architecture.md."""
    vary = varying(E, rows)
    cols = rows[0].keys()
    x = next((k for k in X_KEYS if k in vary), None)
    others = [k for k in vary if k not in (x, "seed")
              and not (k == "momentum" and "new_weight" in cols)
              and not (k == "momentum_weights" and "new_weight" in vary)]
    panel = None
    if len(others) >= 2 and nscores > 0:
        p = "order" if "order" in others else others[0]
        if len(distinct(rows, p)) * nscores <= 6:
            panel = p
    return x, panel, [k for k in others if k != panel]


def order_words(name):
    base, _, arg = name.partition(":")
    w = ORDER_WORDS.get(base)
    if w is None or ("{}" in w and not arg and base != "sorted"):
        return name
    return w.format(arg or "the first feature")


def value_words(key, v):
    """A value in a sentence, as a figure states it."""
    if key == "new_weight":
        return "p = " + g(float(v))
    if key == "order":
        return order_words(v)
    if key == "estimator":
        return v
    if key in NUMERIC and v not in KEY_WORDS.get(key, ()):
        return f"{key} = {g(float(v))}"
    return f"{key} {v}"


def facts_ok(ck, where, E, rows, label, x=None):
    """The settings no axis shows, in an axis label."""
    # Padded sequences of one length L: the population in whole sequences.
    lengths = distinct(rows, "length") if "length" in rows[0] else ["0"]
    if E.rows is not None and len(lengths) == 1 and int(lengths[0]) > 0:
        n = int(lengths[0])
        want = f"{E.rows // n} sequences of {n} positions"
        ck.check(f"{where}: the label gives the sequences", want in label,
                 f"{label!r} lacks {want!r}")
    elif E.rows is not None:
        ck.check(f"{where}: the label gives the rows", f"{E.rows} rows" in label,
                 label)
    if "epochs" in rows[0] and len(distinct(rows, "epochs")) == 1 and x != "epochs":
        e = float(rows[0]["epochs"])
        want = f"{g(e)} epoch{'' if e == 1 else 's'}"
        ck.check(f"{where}: the label gives the epochs", want in label,
                 f"{label!r} lacks {want!r}")
    if ("momentum" in rows[0] and len(distinct(rows, "momentum")) == 1
            and len(distinct(rows, "momentum_weights")) == 1):
        want = f"momentum {g(float(rows[0]['momentum']))} {rows[0]['momentum_weights']}"
        ck.check(f"{where}: the label gives the momentum", want in label,
                 f"{label!r} lacks {want!r}")


def expected_figures(E):
    """The figure kinds an experiment supports, by its axes and columns."""
    want = []
    s = E.files["summary"]
    # A classifier's statistics are drawn beside its accuracies, not in
    # the layer's figures.
    clf = bool(s) and "acc_eval_mode" in s[0]
    if s:
        x, _, _ = roles(E, s, 1)
        one_seed = "seed" not in varying(E, s)
        if x and one_seed and "stats_err" in s[0] and not clf:
            want.append("stats-err")
        if x and one_seed and "train_eval_rmse" in s[0]:
            want.append("train-eval")
    f = E.files["features"]
    if f and {"feature", "true_var", "running_var", "batch_size"} <= set(f[0]):
        if len(selected_features(E, f)[0]) <= 100:
            want.append("features")
    if s and {"updates", "init_weight", "new_weight"} <= set(s[0]) and not clf:
        ema = [r for r in s if r.get("estimator", "ema") == "ema"]
        if len(unique(r["updates"] for r in ema)) >= 2:
            want.append("init-weight")
    d, e = E.files["distribution"], E.files["expectation"]
    many = d if d and "p05" in d[0] else e if e and "z" in e[0] else None
    if many and "batch_size" in varying(E, many):
        want.append("shuffles")
    ef = E.files["effective"]
    if ef and {"feature", "n_eff", "ratio", "count", "count_fpc",
               "batch_size"} <= set(ef[0]) and \
            len(distinct(ef, "batch_size")) > 1 and \
            len(selected_features(E, ef)[0]) <= 8:
        want.append("effective")
    if accuracy_view(E) is not None:
        want.append("accuracy")
    if fit_view(E) is not None:
        want.append("fit-accuracy")
    if curve_view(E) is not None:
        want.append("curve")
    if norm_view(E) is not None:
        want.append("weight-norm")
    if dependence_rows(E) is not None:
        want.append("batch-dependence")
    return want


# ---- the findings a figure may state ----

class Panel:
    """One panel's data: per series (a tuple of the series axes' values),
    its (x, y) points in ascending x."""

    def __init__(self, x, series, data):
        self.x, self.series, self.data = x, series, data
        xs = sorted({p[0] for pts in data.values() for p in pts})
        self.lo, self.hi = (xs[0], xs[-1]) if xs else (None, None)

    def y(self, s, xv):
        return next((y for x, y in self.data[s] if x == xv), math.nan)

    def words(self, s):
        return ", ".join(value_words(k, v) for k, v in zip(self.series, s))

    def noun(self):
        if len(self.series) == 1:
            return "p" if self.series[0] == "new_weight" else self.series[0]
        return "series"


def fmt_x(v):
    return g(v)


def verify_line(ck, where, line, P, score):
    """A finding of a panel of several series, checked on its data."""
    sym = X_SYM[P.x]
    at = rf"at {sym} = (\S+) than at {sym} = (\S+)"
    keys = list(P.data)
    worse = [s for s in keys if P.y(s, P.hi) > P.y(s, P.lo)]
    ends_ok = lambda m: m.group(1) == fmt_x(P.hi) and m.group(2) == fmt_x(P.lo)
    m = re.fullmatch(r"only (.+) (?:is|are) worse " + at, line)
    if m:
        who = [P.words(s) for s in worse]
        return ck.check(f"{where}: '{line}'",
                        ends_ok(re.search(at, line)) and who == [m.group(1)],
                        f"worse: {who}")
    m = re.fullmatch(r"every (.+) is worse " + at, line)
    if m:
        return ck.check(f"{where}: '{line}'", len(worse) == len(keys) and
                        m.group(1) == P.noun() and ends_ok(re.search(at, line)),
                        f"{len(worse)} of {len(keys)} worse")
    m = re.fullmatch(r"no (.+) is worse " + at, line)
    if m:
        return ck.check(f"{where}: '{line}'", not worse and m.group(1) == P.noun()
                        and ends_ok(re.search(at, line)), f"worse: {worse}")
    m = re.fullmatch(r"only (.+) (?:reaches|reach) the truth|"
                     r"only (.+) (?:makes|make) train and eval agree", line)
    if m:
        exact = [s for s in keys
                 if P.data[s] and all(y < EXACT for _, y in P.data[s])]
        return ck.check(f"{where}: '{line}'",
                        [P.words(s) for s in exact] == [m.group(1) or m.group(2)],
                        f"exact: {exact}")
    m = re.fullmatch(r"(.+) (widen the train/eval gap|worsen the running "
                     r"statistics) at every (.+)", line)
    if m:
        base = ("shuffled",)
        rest = [s for s in keys if s != base]
        above = P.series == ["order"] and base in P.data and all(
            y > P.y(base, x) for s in rest for x, y in P.data[s]
            if not math.isnan(P.y(base, x)))
        subject = "the other orders" if len(rest) > 1 else (
            P.words(rest[0]) if rest else "")
        verb = ("widen the train/eval gap" if score == "train_eval_rmse"
                else "worsen the running statistics")
        return ck.check(f"{where}: '{line}'",
                        above and m.group(1) == subject and m.group(2) == verb
                        and m.group(3) == X_NOUN[P.x],
                        "not above shuffled at every x")
    return ck.check(f"{where}: '{line}' is a finding this test knows", False)


def verify_ends(ck, where, text, P, score):
    """A lone series at its two ends: 'stats_err 11.5x higher\\nat B = 256
    than at B = 8' (or lower, or within 5 %)."""
    sym = X_SYM[P.x]
    (s,) = P.data
    ylo, yhi = P.y(s, P.lo), P.y(s, P.hi)
    m = re.fullmatch(rf"(\S+) ([\d.]+)× (higher|lower)\nat {sym} = (\S+) "
                     rf"than at {sym} = (\S+)", text)
    if m:
        r = yhi / ylo if m.group(3) == "higher" else ylo / yhi
        return ck.check(f"{where}: '{text}'",
                        m.group(1) == score and r >= 1.05 and
                        m.group(2) == "%.1f" % r and m.group(4) == fmt_x(P.hi)
                        and m.group(5) == fmt_x(P.lo), f"ratio {r}")
    m = re.fullmatch(rf"(\S+) within 5% at {sym} = (\S+) and {sym} = (\S+)", text)
    if m:
        return ck.check(f"{where}: '{text}'", m.group(1) == score and
                        max(yhi / ylo, ylo / yhi) < 1.05, f"{ylo} {yhi}")
    return ck.check(f"{where}: '{text}' is a note this test knows", False)


def lower_first(s):
    return s[:1].lower() + s[1:]


# ---- the figures ----

def curves_check(ck, E, name, tabs, scores):
    # The layer's rows: a file of both models has the classifier's too.
    rows = [r for r in E.files["summary"]
            if r.get("type", "layer") == "layer"]
    scores = [s for s in scores if s in rows[0]]
    x, panel, series = roles(E, rows, len(scores))
    skeys = unique(tuple(r[c] for c in series) for r in rows)
    pvals = unique(r[panel] for r in rows) if panel else [None]
    ns, np_, nsc = len(skeys), len(pvals), len(scores)
    npan = nsc * np_
    plots = read_tables(tabs / f"{name}.png.tab")
    where = f"{E.name}/{name}"
    ck.check(f"{where}: a plot per panel" + (", and the key" if npan > 1 else ""),
             len(plots) == npan + (npan > 1), f"{len(plots)} plots")
    single = npan == 1 and ns == 1
    comp = (single and x == "batch_size" and name == "stats-err"
            and "batch_mean_err" in rows[0])
    best = len(series) == 1 and series[0] in NUMERIC and ns > 1
    base = ("shuffled",) if series == ["order"] and ("shuffled",) in skeys \
        and ns > 1 else None
    texts = [read_set(tabs / f"{name}.{j + 1}.set") for j in range(npan)]
    data = {}
    for k, score in enumerate(scores):
        vals = [float(r[score]) for r in rows]
        pos = [v for v in vals if v >= EXACT]
        zero = bool(pos) and len(pos) < len(vals)
        floor = 10 ** (math.floor(math.log10(min(pos))) - 0.5) if zero else None
        for p, pv in enumerate(pvals):
            j = k * np_ + p
            if j >= len(plots):
                break
            plot = plots[j]
            pdata = {}
            for i, sk in enumerate(skeys):
                sel = [r for r in rows if tuple(r[c] for c in series) == sk
                       and (panel is None or r[panel] == pv)]
                pts = [(float(r[x]), float(r[score])) for r in sel]
                pdata[sk] = sorted(pts)
                want = [(a, floor if zero and b < EXACT else b) for a, b in pts]
                ck.series(f"{where}: {score} of {sk or 'the runs'}"
                          + (f" in the {pv} panel" if panel else ""),
                          plot[i] if i < len(plot) else None, want)
            nxt = ns
            if comp:
                ck.series(f"{where}: batch_mean_err beside it",
                          plot[nxt] if nxt < len(plot) else None,
                          [(float(r[x]), float(r["batch_mean_err"])) for r in rows])
                nxt += 1
            if best:
                low = {}
                for r in rows:
                    if panel is None or r[panel] == pv:
                        a, b = float(r[x]), float(r[score])
                        low[a] = min(low.get(a, math.inf), b)
                want = [(float(r[x]), float(r[score])) for r in rows
                        if (panel is None or r[panel] == pv)
                        and float(r[score]) == low[float(r[x])]]
                want = [(a, floor if zero and b < EXACT else b) for a, b in want]
                ck.series(f"{where}: a ring on the lowest at each {x}",
                          plot[nxt] if nxt < len(plot) else None, want)
                nxt += 1
            if base:
                labels = [c for c in plot if "label" in c["columns"]]
                ck.check(f"{where}: a label curve per series", len(labels) == ns)
                for i, sk in enumerate(skeys):
                    if sk == base or i >= len(labels):
                        continue
                    want = []
                    for r in rows:
                        if tuple(r[c] for c in series) != sk or (panel and r[panel] != pv):
                            continue
                        b = [float(q[score]) for q in rows
                             if q["order"] == "shuffled" and q[x] == r[x]
                             and (panel is None or q[panel] == pv)][0]
                        y = float(r[score])
                        if y >= EXACT and b >= EXACT:
                            want.append((float(r[x]), y, "×%.1f" % (y / b)))
                    ck.series(f"{where}: {sk[0]} ÷ shuffled labels", labels[i],
                              want, cols=("x", "y", "label"))
            data[(k, p)] = Panel(x, series, pdata)
    if len(plots) != npan + (npan > 1):
        return
    # The key: one entry per series, each naming its series.
    keyplot = plots[-1] if npan > 1 else plots[0]
    titles = [c["title"] for c in keyplot[:ns]]
    if ns > 1:
        ok = len(set(titles)) == ns and all(
            all(value_words(c, v).split(" (")[0].split(",")[0] in t
                or (c == "new_weight" and g(float(v)) in t)
                for c, v in zip(series, sk)) for sk, t in zip(skeys, titles))
        ck.check(f"{where}: a key entry naming each series", ok, str(titles))
    # The axis label, the title, the panels' titles and the note.
    t0 = texts[0]
    xlabel = t0["labels"].get(101) if npan > 1 else t0.get("xlabel", "")
    facts_ok(ck, where, E, rows, xlabel or "", x)
    title = t0["labels"].get(100, "")
    note = t0["labels"].get(1)
    P0 = data[(0, 0)]
    if comp:
        m0, m1 = (float(next(r["batch_mean_err"] for r in rows if float(r[x]) == v))
                  for v in (P0.lo, P0.hi))
        s0, s1 = P0.y(skeys[0], P0.lo), P0.y(skeys[0], P0.hi)
        if title == "Bigger batches estimate better, yet eval-mode statistics get worse":
            ck.check(f"{where}: '{title}'", m1 < m0 and s1 > s0,
                     f"batch_mean_err {m0} -> {m1}, stats_err {s0} -> {s1}")
        else:
            ck.check(f"{where}: a neutral title", title ==
                     "stats_err and batch_mean_err against batch size", title)
    elif npan == 1 and ns > 1 and not neutral(title, x, scores, series, panel):
        line = lower_first(title)
        if title == "Fewer updates need a larger EMA weight p":
            best_p = []
            for xv in sorted({a for pts in P0.data.values() for a, _ in pts}):
                sk = min(P0.data, key=lambda s: P0.y(s, xv))
                best_p.append(float(sk[0]))
            ck.check(f"{where}: '{title}'", series == ["new_weight"] and
                     x == "batch_size" and best_p == sorted(best_p) and
                     best_p[-1] > best_p[0], f"best p {best_p}")
        else:
            verify_line(ck, where, line, P0, scores[0])
    else:
        ck.check(f"{where}: a neutral title", neutral(title, x, scores, series,
                                                      panel), title)
    if note is not None:
        verify_ends(ck, where + " note", note, P0, scores[0])
    else:
        ck.check(f"{where}: a note only on a lone series",
                 not (single and min(v for pts in P0.data.values() for _, v in pts) >= EXACT))
    if npan > 1:
        for k, score in enumerate(scores):
            for p, pv in enumerate(pvals):
                st = texts[k * np_ + p].get("title", "")
                head, _, rest = st.partition("\n")
                want = ", ".join(([value_words(panel, pv)] if panel else [])
                                 + ([score] if nsc > 1 else []))
                ck.check(f"{where}: panel {k * np_ + p + 1} is titled {want!r}",
                         head == want, head)
                P = data[(k, p)]
                if not rest:
                    continue
                if ns == 1:
                    verify_ends(ck, f"{where} panel {k * np_ + p + 1}", rest, P, score)
                else:
                    # A line from " at " on is its finding's end, broken
                    # off in a panel of three to a row.
                    lines = []
                    for line in rest.split("\n"):
                        if line.startswith("at ") and lines:
                            lines[-1] += " " + line
                        else:
                            lines.append(line)
                    for line in lines:
                        verify_line(ck, f"{where} panel {k * np_ + p + 1}",
                                    line, P, score)


def neutral(title, x, scores, series, panel):
    want = " and ".join(scores) + " against " + X_NOUN[x]
    if series:
        want += ", by " + " and ".join("p" if s == "new_weight" else s
                                       for s in series)
    if panel:
        want += ", a panel per " + panel
    return title == want or (len(scores) == 1 and not series and not panel
                             and title == scores[0] + " against " + X_NOUN[x])


def fig_stats_err(ck, E, tabs):
    curves_check(ck, E, "stats-err", tabs,
                 ["stats_err"] + (["stats_err_rel"] if E.scales_differ() else []))


def fig_train_eval(ck, E, tabs):
    curves_check(ck, E, "train-eval", tabs, ["train_eval_rmse"])


def selected_features(E, rows):
    """The first configuration's rows (every varying axis but the batch
    size at its first value) and its features."""
    fix = [k for k in varying(E, rows) if k != "batch_size"]
    sel = [r for r in rows if all(r[k] == rows[0][k] for k in fix)]
    return unique(r["feature"] for r in sel), sel, fix


def fig_features(ck, E, tabs):
    rows = E.files["features"]
    feats, sel, fix = selected_features(E, rows)
    where = f"{E.name}/features"
    (plot,) = read_tables(tabs / "features.png.tab")
    texts = read_set(tabs / "features.1.set")
    bs = sorted({int(r["batch_size"]) for r in sel})
    lo, hi = str(bs[0]), str(bs[-1])
    at = {b: {r["feature"]: r for r in sel if r["batch_size"] == b} for b in (lo, hi)}
    ratio = E.scales_differ()
    nb = 2 if lo != hi else 1
    if ratio:
        off = 0.15 if nb > 1 else 0
        for i, (b, dx) in enumerate(((lo, -off), (hi, off))[:nb]):
            ck.series(f"{where}: running / true at B = {b}", plot[i],
                      [(k + 1 + dx, float(at[b][f]["running_var"]) /
                        float(at[b][f]["true_var"])) for k, f in enumerate(feats)])
    else:
        # Bars centred on each feature: the truth, then the running
        # variance at each batch size, bw apart.
        pts = [c["points"] for c in plot[:2]]
        bw = float(pts[1][0]["x"]) - float(pts[0][0]["x"]) if all(pts) else 0
        ck.check(f"{where}: bars side by side", 0 < bw < 0.5, f"bar offset {bw}")
        series = [(lo, "true_var"), (lo, "running_var"), (hi, "running_var")]
        for i, (b, col) in enumerate(series[:nb + 1]):
            dx = (i - nb / 2) * bw
            ck.series(f"{where}: {col} at B = {b}", plot[i],
                      [(k + 1 + dx, float(at[b][f][col]))
                       for k, f in enumerate(feats)])
    ones = plot[-1]
    ck.check(f"{where}: the line at 1", bool(ones["points"]) and all(
        close(float(p["y"]), 1.0) for p in ones["points"]))
    # The texts: the worst feature, the title, the axis label.
    tv = {f: float(at[hi][f]["true_var"]) for f in feats}
    rv = {f: float(at[hi][f]["running_var"]) for f in feats}
    if ratio:
        worst = max(feats, key=lambda f: abs(math.log(rv[f] / tv[f])))
        want = (f"farthest at B = {hi}: {worst}\nrunning "
                f"{'%.2g' % (rv[worst] / tv[worst])} × its truth")
    else:
        worst = max(feats, key=lambda f: abs(rv[f] - tv[f]))
        want = (f"worst feature at B = {hi}: {worst}\n|running − true| = "
                f"{'%.2f' % abs(rv[worst] - tv[worst])}")
    ck.check(f"{where}: the worst feature named", texts["labels"].get(1) == want,
             f"{texts['labels'].get(1)!r}, want {want!r}")
    title = texts["labels"].get(100, "")
    m = re.fullmatch(r"(\S+) updates \(B = (\S+)\) leave running variances "
                     r"near 1, not the truth", title)
    if m:
        s = E.files["summary"]
        T = [r["updates"] for r in s if r["batch_size"] == hi and
             all(r.get(k, rows[0][k]) == rows[0][k] for k in fix)]
        near1 = sum(abs(rv[f] - 1) for f in feats)
        neart = sum(abs(rv[f] - tv[f]) for f in feats)
        ck.check(f"{where}: '{title}'", not ratio and m.group(2) == hi and
                 T and g(float(T[0])) == m.group(1) and near1 < neart,
                 f"sum |rv - 1| {near1}, sum |rv - v| {neart}")
    else:
        ck.check(f"{where}: a neutral title", title == (
            "Running variance against the truth, per feature" if ratio
            else "Running and true variances, per feature"), title)
    label = texts.get("xlabel") or texts["labels"].get(102, "")
    for k in fix:
        ck.check(f"{where}: the label names the {k} shown",
                 value_words(k, rows[0][k]) in label, label)
    facts_ok(ck, where, E, rows, label)


def fig_init_weight(ck, E, tabs):
    rows = [r for r in E.files["summary"] if r.get("estimator", "ema") == "ema"]
    where = f"{E.name}/init-weight"
    (plot,) = read_tables(tabs / "init-weight.png.tab")
    texts = read_set(tabs / "init-weight.1.set")
    ps = sorted({float(r["new_weight"]) for r in rows})
    curves = [c for c in plot if c["points"] and "label" not in c["columns"]]
    published = 0.1  # the key table's default, momentum 0.9 on the old value
    again = [p for p in ps if close(p, published, 1e-9)]
    ck.check(f"{where}: a curve per new-value weight, the published drawn again",
             len(curves) == len(ps) + len(again) + 1, f"{len(curves)} curves")
    for p, curve in zip(ps + again, curves):
        want = [(float(q["x"]), (1 - p) ** float(q["x"])) for q in curve["points"]]
        ck.series(f"{where}: (1 - p)^T for p = {p:g}", curve, want)
    ck.series(f"{where}: measured init_weight against updates", curves[-1],
              [(float(r["updates"]), float(r["init_weight"])) for r in rows])
    # The label states T's formula: check it on every run.
    label = texts.get("xlabel", "")
    # Padded sequences: a batch counts whole sequences of `length` rows.
    lengths = distinct(rows, "length") if "length" in rows[0] else ["0"]
    seq = len(lengths) == 1 and int(lengths[0]) > 0
    units = E.rows // int(lengths[0]) if seq and E.rows is not None else E.rows
    unit = "sequences" if seq else "rows"
    m = re.match(r"EMA updates in (one|\S+) epochs?, T = (\S+ )?([⌊⌈])N / B[⌋⌉], "
                 r"N = (\d+) (rows|sequences)", label)
    if m:
        e = 1 if m.group(1) == "one" else int(m.group(1))
        n = int(m.group(4))
        div = (lambda a, b: a // b) if m.group(3) == "⌊" else (lambda a, b: -(-a // b))
        ok = n == units and m.group(5) == unit and len(lengths) == 1 and \
            all(int(r["epochs"]) == e and int(r["updates"]) ==
                                 e * div(n, int(r["batch_size"])) for r in rows)
        ck.check(f"{where}: '{label}' holds for every run", ok)
    else:
        ck.check(f"{where}: a label this test knows", label.startswith("EMA updates T"), label)
    facts = {"rows": E.rows}
    if E.rows is not None and len(lengths) == 1:
        ck.check(f"{where}: the label gives the rows", f"N = {units} {unit}" in label, label)
    tmin = min(int(r["updates"]) for r in rows)
    p = next((q for q in ps if close(q, published, 1e-9)), ps[0])
    w = next(float(r["init_weight"]) for r in rows if int(r["updates"]) == tmin
             and close(float(r["new_weight"]), p, 1e-9))
    want = (f"After {tmin} update{'' if tmin == 1 else 's'} the initial values "
            f"still carry {'%.2g' % (100 * w)}% of the weight"
            + (f" (p = {g(p)})" if len(ps) > 1 else ""))
    ck.check(f"{where}: the title reads the weight left", texts["labels"].get(100) == want,
             f"{texts['labels'].get(100)!r}, want {want!r}")
    del facts


def fig_effective(ck, E, tabs):
    rows = E.files["effective"]
    chans, sel, fix = selected_features(E, rows)
    where = f"{E.name}/effective"
    (plot,) = read_tables(tabs / "effective.png.tab")
    texts = read_set(tabs / "effective.1.set")
    first = sorted((r for r in sel if r["feature"] == chans[0]),
                   key=lambda r: int(r["batch_size"]))
    ck.check(f"{where}: two reference lines and a curve per channel",
             len(plot) == 2 + len(chans), f"{len(plot)} curves")
    # What independent values give: the count with the finite-population
    # correction, count (N - 1) / (N - count) over the N = rows x H x W
    # values of the channel, worked out here from the count alone.
    hw = float(first[0]["count"]) / int(first[0]["batch_size"])
    samples = E.rows or int(E.manifest.get("maps.samples", ["0"])[0])
    n = samples * hw if samples else None
    for r in first:
        c = float(r["count"])
        ck.check(f"{where}: count is B H W at B = {r['batch_size']}",
                 c == int(r["batch_size"]) * hw)
        if n is not None:
            ck.check(f"{where}: count_fpc at B = {r['batch_size']}",
                     close(float(r["count_fpc"]), c * (n - 1) / (n - c), 1e-12),
                     r["count_fpc"])
    ck.series(f"{where}: the independent values' line", plot[0],
              [(float(r["batch_size"]), float(r["count_fpc"])) for r in first])
    ck.series(f"{where}: the count B H W", plot[1],
              [(float(r["batch_size"]), float(r["count"])) for r in first])
    # Each channel: n_eff, and in its key entry its ratio to independent
    # values, n_eff / count_fpc (one number when it is the same at every
    # batch size, else its range).
    ratio = {}
    for i, ch in enumerate(chans):
        mine = sorted((r for r in sel if r["feature"] == ch),
                      key=lambda r: int(r["batch_size"]))
        if not ck.series(f"{where}: n_eff of {ch}", plot[2 + i] if 2 + i < len(plot) else None,
                         [(float(r["batch_size"]), float(r["n_eff"])) for r in mine]):
            continue
        rs = [float(r["n_eff"]) / float(r["count_fpc"]) for r in mine]
        ratio[ch] = (min(rs), max(rs))
        lo, hi = ratio[ch]
        want = f"n_{{eff}}, {ch}: " + ("%.2g×" % lo if close(lo, hi, 1e-9)
                                       else "%.2g–%.2g×" % (lo, hi))
        ck.check(f"{where}: {ch}'s key entry gives its ratio",
                 plot[2 + i]["title"] == want,
                 f"{plot[2 + i]['title']!r}, want {want!r}")
    # The title names the farthest channel on each side of 1, or neither.
    title = texts["labels"].get(100, "")
    over = min((c for c in ratio if ratio[c][0] < 1),
               key=lambda c: ratio[c][0], default=None)
    under = max((c for c in ratio if ratio[c][1] > 1),
                key=lambda c: ratio[c][1], default=None)
    if over is None and under is None:
        want = "The effective number of values behind a batch mean, per channel"
    else:
        want = "The count B·H·W "
        if over is not None:
            want += ("overstates a batch mean's information up to "
                     f"{'%.2g' % (1 / ratio[over][0])}× ({over})")
        if under is not None:
            want += ("\nand understates it" if over is not None else
                     "understates a batch mean's information")
            want += f" up to {'%.2g' % ratio[under][1]}× ({under})"
    ck.check(f"{where}: the title", title == want, f"{title!r}, want {want!r}")
    label = texts.get("xlabel", "")
    for k in fix:
        ck.check(f"{where}: the label names the {k} shown",
                 value_words(k, rows[0][k]) in label, label)
    facts_ok(ck, where, E, rows, label)


def fig_shuffles(ck, E, tabs):
    where = f"{E.name}/shuffles"
    d, e = E.files["distribution"], E.files["expectation"]
    have_d = bool(d) and "p05" in d[0]
    have_e = bool(e) and "z" in e[0]
    plots = read_tables(tabs / "shuffles.png.tab")
    ck.check(f"{where}: a panel per file", len(plots) == have_d + have_e)
    many = d if have_d else e
    _, _, series = roles(E, many, 0)
    skeys = unique(tuple(r[c] for c in series) for r in many)
    if have_d:
        left = plots[0]
        texts = read_set(tabs / "shuffles.1.set")
        dist = [r for r in d if r["score"] == "stats_err"]
        bands = [c for c in left if "y1" in c["columns"]]
        ck.check(f"{where}: a band per series", len(bands) == len(skeys))
        for sk, curve in zip(skeys, bands):
            sel = [r for r in dist if tuple(r[c] for c in series) == sk]
            ck.series(f"{where}: {sk} 5-95 % band", curve,
                      [(float(r["batch_size"]), float(r["p05"]), float(r["p95"]))
                       for r in sel], cols=("x", "y1", "y2"))
        lines = [c for c in left if "y1" not in c["columns"] and "label" not in c["columns"]]
        for i, sk in enumerate(skeys):
            sel = [r for r in dist if tuple(r[c] for c in series) == sk]
            ck.series(f"{where}: {sk} median", lines[i] if i < len(lines) else None,
                      [(float(r["batch_size"]), float(r["p50"])) for r in sel])
        nseeds = int(float(dist[0]["seeds"]))
        title = texts["labels"].get(100, "")
        runs = E.files["summary"]
        if runs and "seed" in runs[0]:
            # The first seed's run of the published series (ema at p = 0.1),
            # else the first series, and its share of seeds below.
            one = next((sk for sk in skeys if series == ["estimator"] and sk == ("ema",)
                        and all(close(float(r["new_weight"]), 0.1, 1e-9) for r in runs)),
                       skeys[0])
            s1 = min(runs, key=lambda r: float(r["seed"]))["seed"]
            mine = [r for r in runs if tuple(r[c] for c in series) == one]
            first = [r for r in mine if r["seed"] == s1]
            ck.series(f"{where}: the seed-{s1} run", lines[len(skeys)] if len(lines) > len(skeys) else None,
                      [(float(r["batch_size"]), float(r["stats_err"])) for r in first])
            pct, want = [], []
            for r in first:
                ys = [float(q["stats_err"]) for q in mine if q["batch_size"] == r["batch_size"]]
                share = 100.0 * sum(y < float(r["stats_err"]) for y in ys) / len(ys)
                pct.append(share)
                want.append((float(r["batch_size"]), float(r["stats_err"]), "%.0f%%" % share))
            labels = [c for c in left if "label" in c["columns"]]
            ck.series(f"{where}: the share of seeds below the seed-{s1} run",
                      labels[0] if labels else None, want, cols=("x", "y", "label"))
            if title.endswith("at every B"):
                ck.check(f"{where}: '{title}'", max(pct) <= 10 and title ==
                         f"A single run (seed {s1}) is in the lowest 10% of {nseeds} "
                         "shuffles at every B", f"shares {pct}")
            else:
                ck.check(f"{where}: a neutral title", title ==
                         f"A single run (seed {s1}) is one draw from {nseeds} shuffles", title)
            # The note: the ratio of the ends for the run, the median, and
            # the share of seeds whose ratio reaches the run's.
            bs = sorted({float(r["batch_size"]) for r in first})
            yr = {float(r["batch_size"]): float(r["stats_err"]) for r in first}
            ratio = yr[bs[-1]] / yr[bs[0]]
            med = {float(r["batch_size"]): float(r["p50"]) for r in dist
                   if tuple(r[c] for c in series) == one}
            per = {}
            for r in mine:
                per.setdefault(r["seed"], {})[float(r["batch_size"])] = float(r["stats_err"])
            reach = sum(v[bs[-1]] / v[bs[0]] >= ratio for v in per.values())
            who = ", ".join(value_words(c, v) for c, v in zip(series, one))
            want = (f"{who + ', ' if who else ''}B {g(bs[-1])} ÷ B {g(bs[0])}:\n"
                    f"{'%.1f' % ratio}× for seed {s1}, {'%.1f' % (med[bs[-1]] / med[bs[0]])}× "
                    f"for the median;\n{'%.0f' % (100.0 * reach / len(per))}% of "
                    f"shuffles reach {'%.1f' % ratio}×")
            ck.check(f"{where}: the note on the ratios", texts["labels"].get(101) == want,
                     f"{texts['labels'].get(101)!r}, want {want!r}")
            # From which batch size the band is thinner than its line.
            st = texts.get("title", "")
            m = re.search(r"from B = (\S+) (?:.+'s|the) band is thinner than its line", st)
            thin = [float(r["p95"]) / float(r["p05"]) < 1.1 for r in dist
                    if tuple(r[c] for c in series) == one]
            bsd = [r["batch_size"] for r in dist if tuple(r[c] for c in series) == one]
            k = len(thin)
            while k > 0 and thin[k - 1]:
                k -= 1
            if m:
                ck.check(f"{where}: '{m.group(0)}'", k < len(thin) and m.group(1) == bsd[k])
            else:
                ck.check(f"{where}: no band said thin", k == len(thin))
        facts_ok(ck, where, E, many, texts["labels"].get(103, ""))
    if have_e:
        right = plots[-1]
        drawn = [c for c in right if c["points"]]
        for i, sk in enumerate(skeys):
            sel = [r for r in e if tuple(r[c] for c in series) == sk]
            ck.series(f"{where}: {sk} closed form", drawn[i] if i < len(drawn) else None,
                      [(float(r["batch_size"]), float(r["expected_mean_err"])) for r in sel])
            k = len(skeys) + i
            ck.series(f"{where}: {sk} RMS over the seeds", drawn[k] if k < len(drawn) else None,
                      [(float(r["batch_size"]), float(r["mc_mean_err"])) for r in sel])
        texts = read_set(tabs / f"shuffles.{2 if have_d else 1}.set")
        z = max(abs(float(r["z"])) for r in e)
        ck.check(f"{where}: the closed form's agreement",
                 texts["labels"].get(102) == f"agree within\n{'%.1f' % z} standard errors",
                 texts["labels"].get(102))


# ---- the classifier's figures: accuracy in both modes ----

GAP = 0.05            # train and eval mode this close agree
CLF_SERIES = 4        # series in an accuracy panel, at most
CURVE_PANELS = 9      # panels of a curve figure, at most
NORM_SERIES = 4
K_STEP = 4.0          # other orders past the last K of a K axis
CLF_X = {"batch_size": ("batch size", "B", "batch size B"),
         "epochs": ("number of epochs", "E", "epochs E"),
         "devices": ("number of devices", "K", "devices K (B/K rows each)"),
         "shift": ("shift", "shift", "held-out rows' shift, in sd"),
         "scale": ("scale", "scale", "held-out rows' spread, × sd")}


def grouped_k(cell):
    if not cell.startswith("grouped:"):
        return 0
    try:
        k = float(cell[8:])
    except ValueError:
        return 0
    return k if k >= 1 else 0


def clf_axes(E, rows):
    """The settings that vary, the seed aside, the momentum as p."""
    vary = varying(E, rows)
    cols = rows[0].keys()
    return [k for k in vary if k != "seed"
            and not (k == "momentum" and "new_weight" in cols)
            and not (k == "momentum_weights" and "new_weight" in vary)]


def clf_words(k, v):
    """A value as the classifier's figures say it: "B = 256", an order by
    its name, the rest as every figure does."""
    if k in CLF_X:
        return f"{CLF_X[k][1]} = {g(float(v))}"
    if k == "order":
        return v
    return value_words(k, v)


class View:
    """What a classifier figure draws: x, its categories (cell, place,
    joined), the panel, series and fixed axes, and the rows kept."""

    def __init__(self, E, rows, kind, x, pa, sa, fa, longest=False):
        self.E, self.kind, self.x, self.pa, self.sa, self.fa = E, kind, x, pa, sa, fa
        xcol = x or "epoch"
        self.xcol = xcol
        kept = [r for r in rows if all(r[f] == rows[0][f] for f in fa)]
        if x:
            self.xc = distinct(rows, x)
        else:
            self.xc = sorted(unique(r["epoch"] for r in kept), key=float)
        kmax = max([grouped_k(c) for c in self.xc] + [1])
        self.xp, self.xj, past = [], [], 1.0
        for i, c in enumerate(self.xc):
            joined = kind != "cat"
            if kind == "num":
                pos = float(c)
            elif kind == "cat":
                pos = float(i + 1)
            elif grouped_k(c):
                pos = grouped_k(c)
            elif c == "shuffled":
                pos = 1.0
            else:
                past *= K_STEP
                pos, joined = kmax * past, False
            self.xp.append(pos)
            self.xj.append(joined)
        key = lambda r, axes: tuple(r[a] for a in axes)
        self.pk = unique(key(r, pa) for r in kept)
        self.pe = {}
        if longest:
            for r in kept:
                p = key(r, pa)
                if p not in self.pe or float(r["epochs"]) > float(self.pe[p]):
                    self.pe[p] = r["epochs"]
            kept = [r for r in kept if r["epochs"] == self.pe[key(r, pa)]]
        self.rows = kept
        self.sk = unique(key(r, sa) for r in kept)
        self.ns = len(self.sk)
        self.dxw = 0.3 / self.ns if kind == "cat" and self.ns > 1 else 0
        self.fit = False

    def cols(self):
        """The columns of train-mode and eval-mode accuracy drawn."""
        pre = "fit_" if self.fit else ""
        return pre + "acc_train_mode", pre + "acc_eval_mode"

    def cat(self, r):
        return self.xc.index(r[self.xcol])

    def pos(self, r, i):
        return self.xp[self.cat(r)] + self.dxw * (i + 1 - (self.ns + 1) / 2.0)

    def sel(self, p, s):
        return [r for r in self.rows if tuple(r[a] for a in self.pa) == p
                and tuple(r[a] for a in self.sa) == s]

    def words(self):
        if not self.x:
            return "epoch", "epoch", "epoch"
        if self.kind == "k":
            return "K", "K", "K of grouped:K, shuffled = 1"
        if self.kind == "cat":
            return ("p" if self.x == "new_weight" else self.x), self.x, self.x
        return CLF_X[self.x]

    def at(self, r):
        c = r[self.xcol]
        if not self.x:
            return f"epoch {g(float(c))}"
        if self.kind == "k" and grouped_k(c):
            return f"K = {g(grouped_k(c))}"
        return clf_words(self.x, c)


def accuracy_view(E):
    rows = [r for r in E.files["summary"] or []
            if r.get("type", "classifier") == "classifier"]
    if not rows or not {"acc_train_mode", "acc_eval_mode"} <= set(rows[0]):
        return None
    if "seed" in varying(E, rows):
        return None
    ax = clf_axes(E, rows)
    if not ax:
        return None
    n = {a: len(distinct(rows, a)) for a in ax}
    orders = distinct(rows, "order") if "order" in rows[0] else []
    if "batch_size" in ax or "epochs" in ax:
        x = ("batch_size" if "batch_size" in ax and
             ("epochs" not in ax or n["batch_size"] >= n["epochs"]) else "epochs")
        kind = "num"
    elif "order" in ax and sum(grouped_k(o) > 0 for o in orders) >= 2:
        x, kind = "order", "k"
    elif "devices" in ax:
        x, kind = "devices", "num"
    elif "shift" in ax or "scale" in ax:
        x, kind = ("shift" if "shift" in ax else "scale"), "num"
    else:
        x, kind = ("estimator" if "estimator" in ax else ax[0]), "cat"
    others = [a for a in ax if a != x]
    # stats_err_rel under the accuracies when, some other setting held,
    # it differs from its value at the first x.
    stats = False
    if "stats_err_rel" in rows[0]:
        first = distinct(rows, x)[0]
        groups = {}
        for r in rows:
            groups.setdefault(tuple(r[o] for o in others), {})[r[x]] = r["stats_err_rel"]
        for grp in groups.values():
            y0 = num_or_nan(grp.get(first, "-"))
            for c, v in grp.items():
                y = num_or_nan(v)
                if c != first and not math.isnan(y0) and not math.isnan(y) \
                        and not close(y0, y, 1e-9):
                    stats = True
    panel = None
    if len(others) >= 2:
        panel = "order" if "order" in others else others[0]
        if n[panel] * (2 if stats else 1) > 6:
            panel = None
    series = [o for o in others if o != panel]
    fixed, combos = [], math.prod(n[a] for a in series)
    while series and combos > CLF_SERIES:
        f = series.pop()
        combos //= n[f]
        fixed.append(f)
    v = View(E, rows, kind, x, [panel] if panel else [], series, fixed)
    v.stats = stats
    return v


def fit_view(E):
    """The accuracy figure's panels and series, of the rows trained on,
    without stats_err_rel."""
    rows = E.files["summary"]
    if not rows or not {"fit_acc_train_mode", "fit_acc_eval_mode"} <= set(rows[0]):
        return None
    v = accuracy_view(E)
    if v is not None:
        v.stats, v.fit = False, True
    return v


def curve_view(E):
    rows = E.files["curve"]
    if not rows or not {"epoch", "acc_train_mode", "acc_eval_mode"} <= set(rows[0]):
        return None
    if "seed" in varying(E, rows):
        return None
    config = [a for a in clf_axes(E, rows) if a != "epochs"]
    n = {a: len(distinct(rows, a)) for a in config}
    fixed, combos = [], math.prod(n.values())
    while config and combos > CURVE_PANELS:
        f = config.pop()
        combos //= n[f]
        fixed.append(f)
    v = View(E, rows, "num", None, config, [], fixed, longest=True)
    v.stats = False
    return v if len(v.xc) >= 2 else None


def num_or_nan(s):
    try:
        return float(s)
    except ValueError:
        return math.nan


def gap_finding(v, panels, title):
    """The finding on train minus eval mode, as the figure words it."""
    worst, where, near, anyp = -math.inf, None, True, False
    for p in panels:
        for s in v.sk:
            for r in v.sel(p, s):
                tr, ev = (num_or_nan(r[c]) for c in v.cols())
                if math.isnan(tr) or math.isnan(ev):
                    continue
                anyp = True
                near = near and abs(tr - ev) <= GAP
                if tr - ev > worst:
                    worst, where = tr - ev, (p, s, r)
    if not anyp:
        return ""
    noun = v.words()[0]
    every = ("after every epoch" if not v.x else
             f"{'for' if v.kind == 'cat' else 'at'} every {noun}")
    if where:
        p, s, r = where
        loc = [v.at(r)] + [clf_words(a, c) for a, c in zip(v.sa, s)]
        if title:
            loc += [clf_words(a, c) for a, c in zip(v.pa, p)]
        loc = "(" + ", ".join(loc) + ")"
    if near:
        return (f"Eval-mode accuracy within {g(GAP)} of train-mode {every}" if title
                else f"eval within {g(GAP)} of train mode")
    if worst > GAP:
        return (f"Eval mode falls below train mode by up to {'%.2g' % worst} {loc}"
                if title else
                f"eval below train mode by up to {'%.2g' % worst}\n{loc}")
    if worst <= 0:
        return (f"Eval mode at or above train mode {every}" if title
                else "eval at or above train mode")
    return (f"Eval mode at most {'%.2g' % worst} below train mode {loc}" if title
            else f"eval at most {'%.2g' % worst} below train mode\n{loc}")


def closes(v, p):
    """A curve's panel: 'within 0.05 from epoch E on' when it is wider before
    and stays within over two epochs or more."""
    ctr, cev = v.cols()
    pts = [(v.cat(r), float(r[ctr]) - float(r[cev]))
           for r in v.sel(p, ())]
    gaps = dict(pts)
    frm = len(v.xc)
    for i in range(len(v.xc) - 1, -1, -1):
        if i not in gaps:
            continue
        if abs(gaps[i]) > GAP:
            break
        frm = i
    return f"\nwithin {g(GAP)} from epoch {g(float(v.xc[frm]))} on" \
        if 0 < frm < len(v.xc) - 1 else ""


def fig_clf(ck, E, tabs, name, v):
    where = f"{E.name}/{name}"
    np_, nrow = len(v.pk), 2 if v.stats else 1
    npan = np_ * nrow
    plots = read_tables(tabs / f"{name}.png.tab")
    if not ck.check(f"{where}: a plot per panel, and the key", len(plots) == npan + 1,
                    f"{len(plots)} plots, want {npan + 1}"):
        return
    anyj, anyu = any(v.xj), not all(v.xj)
    for j in range(npan):
        k, p = divmod(j, np_)
        pv = v.pk[p]
        blocks = []
        cols = list(reversed(v.cols())) if k == 0 else ["stats_err_rel"]
        # The row of stats_err_rel draws the series that have it (a
        # network without batch norm has none).
        has = [k == 0 or any(not math.isnan(num_or_nan(r["stats_err_rel"]))
                             for q in v.pk for r in v.sel(q, s))
               for s in v.sk]
        for joined in [True] * anyj + [False] * anyu:
            for col in cols:
                for i, s in enumerate(v.sk):
                    if has[i]:
                        blocks.append((joined, col, i, s))
        curves = [c for c in plots[j]]
        ck.check(f"{where}: panel {j + 1} draws {len(blocks)} curves",
                 len(curves) == len(blocks), f"{len(curves)} curves")
        floor = None
        if k == 1:
            vals = [num_or_nan(r["stats_err_rel"]) for r in v.rows]
            pos = [y for y in vals if y >= EXACT]
            if pos and len(pos) < len([y for y in vals if not math.isnan(y)]):
                floor = 10 ** (math.floor(math.log10(min(pos))) - 0.5)
        for (joined, col, i, s), curve in zip(blocks, curves):
            want = []
            for r in v.sel(pv, s):
                if v.xj[v.cat(r)] != joined:
                    continue
                y = num_or_nan(r[col])
                if math.isnan(y):
                    continue
                if floor is not None and y < EXACT:
                    y = floor
                want.append((v.pos(r, i), y))
            who = ", ".join(clf_words(a, c) for a, c in zip(v.sa, s)) or "the runs"
            ck.series(f"{where}: {col} of {who}" + (f" in panel {j + 1}" if npan > 1 else "")
                      + ("" if joined else ", unjoined"), curve, want)
    # The key: a named entry per series, then the modes.
    keys = [c["title"] for c in plots[-1]]
    want = ([", ".join(clf_words(a, c) for a, c in zip(v.sa, s)) for s in v.sk]
            if v.ns > 1 else []) + ["eval: running stats", "train: batch stats"]
    ck.check(f"{where}: the key names each series and the modes", keys == want,
             f"{keys}, want {want}")
    # The texts.
    texts = [read_set(tabs / f"{name}.{j + 1}.set") for j in range(npan)]
    title = texts[0]["labels"].get(100, "")
    want = gap_finding(v, v.pk, True)
    if want and v.fit:
        want = "On the rows trained on, " + want[0].lower() + want[1:]
    if not want:
        noun = v.words()[0]
        want = (" and ".join(v.cols()) + " " +
                (f"against {noun}" if v.x else "after each epoch") +
                ("".join((", by " if i == 0 else " and ") + ("p" if a == "new_weight" else a)
                         for i, a in enumerate(v.sa))) +
                ("".join((", a panel per " if i == 0 else " and ") + ("p" if a == "new_weight" else a)
                         for i, a in enumerate(v.pa))))
    if len(want.encode()) > 70 and " (" in want:
        want = want.replace(" (", "\n(", 1)
    ck.check(f"{where}: the title is {want!r}", title == want, repr(title))
    if npan > 1:
        for j in range(npan):
            k, p = divmod(j, np_)
            head = ", ".join([clf_words(a, c) for a, c in zip(v.pa, v.pk[p])] +
                             ([("stats_err_rel" if k else "accuracy")] if nrow > 1 else []))
            body = ""
            if k == 0 and np_ > 1:
                body = gap_finding(v, [v.pk[p]], False)
                if not v.x and not body.startswith("eval within"):
                    body += closes(v, v.pk[p])
            want = head + ("\n" + body if body else "")
            got = texts[j].get("title", "")
            ck.check(f"{where}: panel {j + 1}'s title is {want!r}", got == want, repr(got))
    label = texts[0]["labels"].get(101, "")
    ck.check(f"{where}: the x label names its axis",
             label.startswith(v.words()[2] + " ("), label)
    facts_ok(ck, where, E, E.files["curve" if name == "curve" else "summary"],
             label, v.x)
    if E.held is not None:
        ck.check(f"{where}: the label gives the rows held out",
                 f"{E.held} held out" in label, label)
    if v.fa:
        fixed = ", ".join(clf_words(f, v.rows[0][f]) for f in v.fa)
        ck.check(f"{where}: the label names the settings held", fixed in label,
                 f"{label!r} lacks {fixed!r}")


def norm_view(E):
    """The weight-norm figure's series: each configuration's longest run
    of curve.tsv, a series per combination of the settings but the run's
    length, at most NORM_SERIES (the last held past that); when weight
    decay varies and the network has weights before a batch norm."""
    rows = E.files["curve"]
    if not rows or not {"epoch", "w_norm_ratio", "radial"} <= set(rows[0]):
        return None
    if "seed" in varying(E, rows) or "weight_decay" not in varying(E, rows):
        return None
    if all(math.isnan(num_or_nan(r["w_norm_ratio"])) for r in rows):
        return None
    series = [a for a in clf_axes(E, rows) if a != "epochs"]
    n = {a: len(distinct(rows, a)) for a in series}
    fixed, combos = [], math.prod(n.values())
    while series and combos > NORM_SERIES:
        f = series.pop()
        combos //= n[f]
        fixed.append(f)
    v = View(E, rows, "num", None, [], series, fixed, longest=True)
    return v if len(v.xc) >= 2 else None


def fig_weight_norm(ck, E, tabs):
    v = norm_view(E)
    where = f"{E.name}/weight-norm"
    plots = read_tables(tabs / "weight-norm.png.tab")
    want_plots = 2 + (v.ns > 1)
    if not ck.check(f"{where}: the norms, radial and the key", len(plots) == want_plots,
                    f"{len(plots)} plots, want {want_plots}"):
        return
    for k, col in enumerate(("w_norm_ratio", "radial")):
        curves = plots[k]
        ck.check(f"{where}: {col}: a curve per series", len(curves) == v.ns,
                 f"{len(curves)} curves")
        for s, curve in zip(v.sk, curves):
            pts = sorted((float(r["epoch"]), num_or_nan(r[col])) for r in v.sel((), s))
            want = [(x, y) for x, y in pts if not math.isnan(y) and (col != "radial" or y > 0)]
            who = ", ".join(clf_words(a, c) for a, c in zip(v.sa, s)) or "the runs"
            ck.series(f"{where}: {col} of {who} after each epoch", curve, want)
    if v.ns > 1:
        keys = [c["title"] for c in plots[-1]]
        want = [", ".join(clf_words(a, c) for a, c in zip(v.sa, s)) for s in v.sk]
        ck.check(f"{where}: the key names each series", keys == want,
                 f"{keys}, want {want}")
    texts = [read_set(tabs / f"weight-norm.{j}.set") for j in (1, 2)]
    title = texts[0]["labels"].get(100, "")
    last = {s: sorted((float(r["epoch"]), float(r["w_norm_ratio"]))
                      for r in v.sel((), s))[-1][1] for s in v.sk}
    if v.sa == ["weight_decay"] and ("0",) in last and v.ns > 1:
        big = max((s for s in v.sk if s != ("0",)), key=lambda s: float(s[0]))
        want = (f"Without weight decay the weights before batch norm end at "
                f"{'%.3g' % last[('0',)]}× their initial norm,\nwith weight decay "
                f"{g(float(big[0]))} at {'%.3g' % last[big]}×")
    else:
        want = ("w_norm_ratio and radial after each epoch" +
                "".join((", by " if i == 0 else " and ") + a for i, a in enumerate(v.sa)))
    ck.check(f"{where}: the title is {want!r}", title == want, repr(title))
    hi = max(num_or_nan(r["radial"]) for r in v.rows)
    want = f"radial part of the gradient so far\nat most {'%.2g' % hi} of |w| |g|"
    ck.check(f"{where}: radial's panel states its largest", texts[1].get("title") == want,
             f"{texts[1].get('title')!r}, want {want!r}")
    label = texts[1]["labels"].get(101, "")
    ck.check(f"{where}: the x label names its axis", label.startswith("epoch ("), label)
    facts_ok(ck, where, E, E.files["curve"], label, None)
    if v.fa:
        fixed = ", ".join(clf_words(f, v.rows[0][f]) for f in v.fa)
        ck.check(f"{where}: the label names the settings held", fixed in label,
                 f"{label!r} lacks {fixed!r}")


DEP_COLS = ("batch_dependence", "batch_dependence_mean",
            "batch_dependence_eval")
DEP_ACC = ("acc_train_mode", "acc_train_by_class", "acc_eval_mode")


def dependence_rows(E):
    """The batch-dependence figure's rows, by batch size: summary.tsv's
    with the three ranges, one seed, every varying axis but the batch
    size at its first row's value; None when it draws nothing."""
    rows = E.files["summary"]
    if not rows or not set(DEP_COLS) <= set(rows[0]):
        return None
    vary = varying(E, rows)
    if "seed" in vary or "batch_size" not in vary:
        return None
    held = [k for k in vary if k != "batch_size"]
    keep = [r for r in rows if all(r[k] == rows[0][k] for k in held)]
    return sorted(keep, key=lambda r: float(r["batch_size"])), held


def fig_batch_dependence(ck, E, tabs):
    rows, held = dependence_rows(E)
    where = f"{E.name}/batch-dependence"
    clf = "acc_train_by_class" in rows[0]
    plots = read_tables(tabs / "batch-dependence.png.tab")
    want_plots = 2 if clf else 1
    if not ck.check(f"{where}: the ranges{' and the accuracies' if clf else ''}",
                    len(plots) == want_plots,
                    f"{len(plots)} plots, want {want_plots}"):
        return
    # Batches of one group too, where the population file has groups.
    acc = DEP_ACC + (("acc_train_by_group",)
                     if "acc_train_by_group" in rows[0] else ())
    for k, cols in enumerate((DEP_COLS, acc)[:want_plots]):
        ck.check(f"{where}: a series for each of {', '.join(cols)}",
                 len(plots[k]) == len(cols), f"{len(plots[k])} series")
        for curve, col in zip(plots[k], cols):
            want = [(float(r["batch_size"]), float(r[col])) for r in rows]
            ck.series(f"{where}: {col} at each batch size", curve, want)
    texts = [read_set(tabs / f"batch-dependence.{j}.set")
             for j in range(1, want_plots + 1)]
    lo, hi = rows[0], rows[-1]
    ev = max(float(r["batch_dependence_eval"]) for r in rows)
    what = "logits move" if clf else "output moves"
    f3 = lambda v: "%.3g" % float(v)
    want = (f"In training mode a row's {what} with its batch by up to "
            f"{f3(lo['batch_dependence'])} (mean {f3(lo['batch_dependence_mean'])}) "
            f"at B = {lo['batch_size']}\nand {f3(hi['batch_dependence'])} "
            f"(mean {f3(hi['batch_dependence_mean'])}) at B = {hi['batch_size']}; " +
            ("in evaluation mode by 0 at every B" if ev == 0
             else f"in evaluation mode by up to {f3(ev)}"))
    title = texts[0]["labels"].get(100, "")
    ck.check(f"{where}: the title states both ends and evaluation mode",
             title == want, f"{title!r}, want {want!r}")
    label = texts[-1]["labels"].get(101, "")
    m = E.manifest.get("sweep.compositions", ["?"])[0]
    ck.check(f"{where}: the label gives the shuffles", f"{m} shuffles" in label,
             label)
    for k in held:
        ck.check(f"{where}: the label names {k} held", f"{k} {rows[0][k]}" in label,
                 label)
    if clf:
        at = max(rows, key=lambda r: abs(float(r["acc_train_by_class"]) -
                                         float(r["acc_train_mode"])))
        want = (f"Held-out batches of one class take training mode's accuracy "
                f"from {f3(at['acc_train_mode'])} to {f3(at['acc_train_by_class'])} "
                f"at B = {at['batch_size']}\n(evaluation mode: "
                f"{f3(at['acc_eval_mode'])}, whatever the batches)")
        got = texts[1].get("title")
        ck.check(f"{where}: the accuracy panel states the largest move",
                 got == want, f"{got!r}, want {want!r}")


def fig_accuracy(ck, E, tabs):
    fig_clf(ck, E, tabs, "accuracy", accuracy_view(E))


def fig_fit_accuracy(ck, E, tabs):
    fig_clf(ck, E, tabs, "fit-accuracy", fit_view(E))


def fig_curve(ck, E, tabs):
    fig_clf(ck, E, tabs, "curve", curve_view(E))


FIGURES = {
    "stats-err": fig_stats_err,
    "train-eval": fig_train_eval,
    "features": fig_features,
    "init-weight": fig_init_weight,
    "shuffles": fig_shuffles,
    "accuracy": fig_accuracy,
    "fit-accuracy": fig_fit_accuracy,
    "curve": fig_curve,
    "effective": fig_effective,
    "weight-norm": fig_weight_norm,
    "batch-dependence": fig_batch_dependence,
}


def main():
    args, kinds, orders = sys.argv[1:], [], []
    while len(args) > 2 and args[-2] in ("--kind", "--order"):
        (kinds if args[-2] == "--kind" else orders).insert(0, args[-1])
        args = args[:-2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    res, tabs = Path(args[0]), Path(args[1])
    ck = Checker()
    for kind in kinds:
        ck.check(f"figure kind {kind} has its checker", kind in FIGURES,
                 f"bnstudy draws {kind} and this script has no rule for it: "
                 "add its rule to expected_figures and its checker to "
                 "FIGURES in tests/figures_content.py")
    for order in orders:
        ck.check(f"order {order} has its words", order in ORDER_WORDS,
                 f"bnstudy has the order {order} and this script does not "
                 "say it in words: add it to ORDER_WORDS in "
                 "tests/figures_content.py")
    exps = sorted(d for d in res.iterdir()
                  if d.is_dir() and (d / "manifest.tsv").exists())
    ck.check("the results hold experiments", bool(exps))
    for d in exps:
        E = Experiment(d)
        want = expected_figures(E)
        t = tabs / E.name
        drawn = sorted(p.name[:-len(".png.tab")] for p in t.glob("*.png.tab")) \
            if t.is_dir() else []
        ck.check(f"{E.name}: the figures its axes and files support",
                 drawn == sorted(want), f"drew {drawn}, want {sorted(want)}")
        for name in want:
            png, svg = t / f"{name}.png.tab", t / f"{name}.svg.tab"
            if not png.exists() or not svg.exists():
                ck.check(f"{E.name}/{name}: gnuplot wrote its tables", False)
                continue
            ck.check(f"{E.name}/{name}: the PNG and the SVG draw the same points",
                     png.read_text() == svg.read_text())
            FIGURES[name](ck, E, t)
    print(f"{ck.passed} passed, {ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
