#!/usr/bin/python3
"""Peer check of bnstudy's classifier against PyTorch (issue 13).

For each configuration it writes a labelled population file, runs
`bnstudy run --type classifier --write-weights W --write-curve C` on it and
takes from `bnstudy population --part training|held-out` the rows the
classifier trains on and the held-out rows, in the orders bnstudy uses (the
training order, and `shuffled` with the run's seed for the training-mode
scores). It loads bnstudy's initial parameters into an equivalent float64
PyTorch model (nn.Linear, nn.BatchNorm1d, ReLU, nn.Linear, F.cross_entropy,
torch.optim.SGD), trains it on the same batches and compares:

  * the first batch's gradients (the weights file's stage grad), to 1e-12
    relative;
  * the final parameters and buffers, to 1e-9 relative;
  * every accuracy, in training mode and in evaluation mode, on the
    held-out rows and on the training rows, after every epoch (curve.tsv)
    and at the end (the summary row): exactly, as correct rows / rows;
  * every loss of those scores, to 1e-10 relative;
  * the share of the held-out rows both modes give the same class
    (agreement), exactly;
  * the buffers' error against the moments of what batch norm sees
    (stats_err, stats_err_rel and its two parts), and the updates
    counted, at every epoch.

PyTorch's BatchNorm1d keeps its buffers itself only in PyTorch's own
convention (an EMA with unbiased variance, or momentum=None for the
cumulative average). For the settings it cannot express (biased variance,
ema-debiased, precise) the peer runs the layer with momentum 0, which leaves
the buffers untouched, and updates them here from the batch's own
statistics as docs/definitions.md defines them.

It prints one line per configuration, the largest difference per quantity,
and `N passed, N failed`; it exits 1 if any configuration fails.
"""

import argparse
import copy
import math
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

import numpy as np

from peer_torch import rel_diff, run_checks

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The gradients of one batch are a few hundred float64 operations from the
# shared initial weights: two correct implementations differ by rounding
# (~1e-15), a dropped term of the batch-norm backward by 1e-3 or more.
# Training multiplies those rounding differences by the steps' Jacobians,
# hence the wider 1e-9 for final parameters; losses sit between.
TOL = {"grad": 1e-12, "loss": 1e-10, "param": 1e-9, "stats": 1e-8}

F, K = 5, 3


def decimal_complement(x):
    """1 - x with x read as its shortest decimal, as bn_decimal_complement."""
    return float(Decimal(1) - Decimal(repr(x)))


# ---------------------------------------------------------------- data

def population(n, seed, shift=0.0):
    """Five features on different scales tied to a latent, and three
    classes by the latent's terciles with noise: learnable, not trivially."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    means = np.array([0.0, 1.0, -2.0, 0.5, 3.0]) + shift
    sds = np.array([1.0, 0.3, 2.0, 5.0, 0.5])
    rho = np.array([0.9, 0.7, 0.5, 0.3, 0.0])
    e = rng.standard_normal((n, F))
    x = means + sds * (rho * z[:, None] + np.sqrt(1 - rho ** 2) * e)
    noisy = z + 0.4 * rng.standard_normal(n)
    label = np.digitize(noisy, [-0.43, 0.43])
    return x, label


def write_population(path, x, label):
    with open(path, "w") as fp:
        fp.write("\t".join(["x%d" % j for j in range(F)] + ["label"]) + "\n")
        for row, lab in zip(x, label):
            fp.write("\t".join(repr(float(v)) for v in row)
                     + "\t%d\n" % lab)


def parse_tsv(text):
    lines = text.splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, l.split("\t"))) for l in lines[1:]]


def read_tsv(path):
    with open(path) as fp:
        return parse_tsv(fp.read())


def read_tensors(path):
    """{stage: {name: array}} from a weights file (--write-weights)."""
    cells = {}
    for r in read_tsv(path):
        cells.setdefault(r["stage"], {}).setdefault(r["tensor"], []).append(
            (int(r["i"]), int(r["j"]), float(r["value"])))
    out = {}
    for stage, ts in cells.items():
        out[stage] = {}
        for name, vals in ts.items():
            rows = max(v[0] for v in vals) + 1
            cols = max(v[1] for v in vals) + 1
            a = np.zeros((rows, cols))
            for i, j, v in vals:
                a[i, j] = v
            out[stage][name] = a if cols > 1 else a[:, 0]
    return out


# ---------------------------------------------------------------- peer

def batches(perm, b, partial):
    n = len(perm)
    full = n // b
    out = [perm[k * b:(k + 1) * b] for k in range(full)]
    if partial == "keep" and n % b:
        out.append(perm[full * b:])
    return out


def score_batches(perm, b):
    """A training-mode score's batches (docs/definitions.md): every row,
    in nb = min(ceil(n / B), floor(n / 2)) consecutive batches, the first
    n mod nb of them one row larger."""
    n = len(perm)
    nb = min(-(-n // b), n // 2)
    q, r = divmod(n, nb)
    out, at = [], 0
    for k in range(nb):
        size = q + (k < r)
        out.append(perm[at:at + size])
        at += size
    return out


class Peer:
    """The classifier in PyTorch, float64, trained as bnstudy trains it."""

    def __init__(self, cfg, init):
        import torch
        import torch.nn as nn
        self.torch = torch
        self.cfg = cfg
        h = cfg["hidden"]
        p = cfg["momentum"] if cfg["weights"] == "new" else \
            decimal_complement(cfg["momentum"])
        self.p, self.keep = p, decimal_complement(p)
        # Which buffer updates PyTorch can do itself.
        est, var = cfg["estimator"], cfg["variance"]
        self.native = var == "unbiased" and est in ("ema", "cumulative",
                                                    "precise")
        bn_momentum = (None if est == "cumulative" else p) if self.native else 0.0
        self.fc1 = nn.Linear(F, h, dtype=torch.float64)
        self.bn = (nn.BatchNorm1d(h, eps=cfg["eps"], momentum=bn_momentum,
                                  dtype=torch.float64)
                   if cfg["norm"] == "batch" else None)
        self.fc2 = nn.Linear(h, K, dtype=torch.float64)
        mods = [self.fc1] + ([self.bn] if self.bn else []) + [self.fc2]
        self.model = nn.ModuleList(mods)
        with torch.no_grad():
            state = self.model.state_dict()
            names = {"fc1": "0", "bn": "1", "fc2": "2" if self.bn else "1"}
            for name, a in init.items():
                mod, attr = name.split(".")
                key = names[mod] + "." + attr
                t = torch.from_numpy(np.array(a, dtype=np.float64))
                if attr == "num_batches_tracked":
                    t = t.to(torch.long)
                state[key].copy_(t.reshape(state[key].shape))
        self.acc_m = np.zeros(h)
        self.acc_v = np.zeros(h)
        self.acc_w = 0.0
        self.opt = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"],
                                   momentum=cfg["sgd_momentum"],
                                   weight_decay=cfg["weight_decay"])

    def logits(self, x, keep_h=False):
        torch = self.torch
        h = self.fc1(x)
        a = self.bn(h) if self.bn is not None else h
        if keep_h:
            self.x, self.h, self.a = x, h, a
            a.retain_grad()
        return self.fc2(torch.relu(a))

    def update_buffers(self, h):
        """The buffer update PyTorch cannot do, from the batch's own
        statistics, as docs/definitions.md defines it."""
        b = h.shape[0]
        m = h.mean(axis=0)
        v = h.var(axis=0)  # divisor b
        if self.cfg["variance"] == "unbiased":
            v = v * b / (b - 1)
        rm = self.bn.running_mean.numpy()
        rv = self.bn.running_var.numpy()
        est = self.cfg["estimator"]
        if est == "ema-debiased":
            self.acc_m = self.keep * self.acc_m + self.p * m
            self.acc_v = self.keep * self.acc_v + self.p * v
            self.acc_w = self.keep * self.acc_w + self.p
            rm[:] = self.acc_m / self.acc_w
            rv[:] = self.acc_v / self.acc_w
        elif est == "cumulative":
            a = 1.0 / int(self.bn.num_batches_tracked)
            rm[:] = (1.0 - a) * rm + a * m
            rv[:] = (1.0 - a) * rv + a * v
        else:  # ema, and precise while it trains
            rm[:] = self.keep * rm + self.p * m
            rv[:] = self.keep * rv + self.p * v

    def train(self, x, y, perm, on_epoch):
        torch = self.torch
        cfg = self.cfg
        xs = torch.from_numpy(x)
        ys = torch.from_numpy(y.astype(np.int64))
        losses, grads = [], None
        for ep in range(cfg["epochs"]):
            frozen = (self.bn is not None and cfg["freeze_after"] > 0
                      and ep >= cfg["freeze_after"])
            self.model.train()
            if frozen:
                self.bn.eval()
            for rows in batches(perm, cfg["batch"], cfg["partial"]):
                idx = torch.from_numpy(np.asarray(rows))
                self.opt.zero_grad()
                z = self.logits(xs[idx], keep_h=grads is None)
                loss = torch.nn.functional.cross_entropy(z, ys[idx])
                loss.backward()
                losses.append(float(loss))
                if grads is None:
                    grads = self.gradients()
                if self.bn is not None and not frozen and not self.native:
                    self.update_buffers(self.h_of(xs[idx]))
                self.opt.step()
            on_epoch(ep)
        self.apply_precise(xs, perm)
        return losses, grads

    def apply_precise(self, xs, perm):
        """The estimator precise after training: the buffers become the
        pooled moments of fc1's outputs over the first precise_batches
        batches of the training order."""
        cfg = self.cfg
        if self.bn is None or cfg["estimator"] != "precise":
            return
        k = cfg["precise_batches"] or len(batches(perm, cfg["batch"],
                                                  cfg["partial"]))
        rows = perm[:min(k * cfg["batch"], len(perm))]
        h = self.h_of(xs[self.torch.from_numpy(np.asarray(rows))])
        self.bn.running_mean.copy_(self.torch.from_numpy(h.mean(axis=0)))
        self.bn.running_var.copy_(self.torch.from_numpy(h.var(axis=0)))

    def stats(self, x):
        """(updates, stats_err, stats_err_rel, mean_err_rel, var_err_rel):
        the buffers against the moments (divisor n) of fc1's outputs over
        the rows x."""
        h = self.h_of(self.torch.from_numpy(x))
        mu, v = h.mean(axis=0), h.var(axis=0)
        dm = self.bn.running_mean.numpy() - mu
        dv = self.bn.running_var.numpy() - v
        h = len(mu)
        m2 = float(np.sum((dm / np.sqrt(v)) ** 2))
        v2 = float(np.sum((dv / v) ** 2))
        return (int(self.bn.num_batches_tracked),
                math.sqrt(float(np.sum(dm * dm) + np.sum(dv * dv)) / (2 * h)),
                math.sqrt((m2 + v2) / (2 * h)), math.sqrt(m2 / h),
                math.sqrt(v2 / h))

    def h_of(self, x):
        with self.torch.no_grad():
            return self.fc1(x).numpy().copy()

    def gradients(self):
        g = {}
        for name, mod in (("fc1", self.fc1), ("bn", self.bn), ("fc2", self.fc2)):
            if mod is None:
                continue
            g[name + ".weight"] = mod.weight.grad.numpy().copy()
            g[name + ".bias"] = mod.bias.grad.numpy().copy()
        self.fc1_floor = self.fc1_terms() if self.bn is not None else {}
        return g

    def fc1_terms(self):
        """The size of the terms fc1's gradients are sums of, under batch
        norm in training mode. The backward there subtracts two
        projections from dy, and the result can be far smaller than the
        terms: fc1.bias's gradient is zero but for rounding (the batch mean
        removes any shift), and with B = 2 every gradient reaching fc1 is
        eps / (var + eps) times its terms (two rows normalise to about -1
        and +1 whatever they are). Two correct implementations then agree
        only relative to the terms, as any summation error bound says, so
        these are the floors fc1's gradients are judged against."""
        h = self.h.detach().numpy()
        dy = self.a.grad.numpy()
        x = self.x.numpy()
        mean, var = h.mean(axis=0), h.var(axis=0)
        sd = np.sqrt(var + self.cfg["eps"])
        xhat = (h - mean) / sd
        gamma = self.bn.weight.detach().numpy()
        t = np.abs(gamma / sd) * (np.abs(dy) + np.abs(dy.mean(axis=0))
                                  + np.abs(xhat) * np.abs((dy * xhat).mean(axis=0)))
        return {"fc1.weight": t.T @ np.abs(x), "fc1.bias": t.sum(axis=0)}

    def tensors(self):
        t = {}
        for name, mod in (("fc1", self.fc1), ("bn", self.bn), ("fc2", self.fc2)):
            if mod is None:
                continue
            t[name + ".weight"] = mod.weight.detach().numpy().copy()
            t[name + ".bias"] = mod.bias.detach().numpy().copy()
        if self.bn is not None:
            t["bn.running_mean"] = self.bn.running_mean.numpy().copy()
            t["bn.running_var"] = self.bn.running_var.numpy().copy()
            t["bn.num_batches_tracked"] = np.array(
                [float(self.bn.num_batches_tracked)])
        return t

    def score(self, x, y, perm):
        """(train-mode, eval-mode) as (rows, correct, mean loss), and the
        share of the rows the two modes give the same class."""
        torch = self.torch
        F_ = torch.nn.functional
        xs = torch.from_numpy(x)
        ys = torch.from_numpy(y.astype(np.int64))
        scratch = copy.deepcopy(self.model)  # its buffers may move
        scratch.train()
        bn_scratch = scratch[1] if self.bn is not None else None
        out = []
        pred = np.zeros(len(y), dtype=np.int64)
        with torch.no_grad():
            rows = correct = 0
            loss = 0.0
            for b in score_batches(perm, self.cfg["batch"]):
                idx = torch.from_numpy(np.asarray(b))
                h = scratch[0](xs[idx])
                if bn_scratch is not None:
                    h = bn_scratch(h)
                z = scratch[-1](torch.relu(h))
                correct += int((z.argmax(1) == ys[idx]).sum())
                pred[np.asarray(b)] = z.argmax(1).numpy()
                loss += float(F_.cross_entropy(z, ys[idx], reduction="sum"))
                rows += len(b)
            out.append((rows, correct, loss / rows))
            self.model.eval()
            z = self.logits(xs)
            out.append((len(y), int((z.argmax(1) == ys).sum()),
                        float(F_.cross_entropy(z, ys))))
            same = int((z.argmax(1).numpy() == pred).sum())
        return out, same / len(y)


# ------------------------------------------------------------ a comparison

def config(**kw):
    c = dict(n=320, seed=1, hidden=8, norm="batch", batch=32, epochs=5,
             partial="drop", momentum=0.1, weights="new", variance="unbiased",
             estimator="ema", precise_batches=0, eps=1e-5, freeze_after=0,
             lr=0.3, sgd_momentum=0.0, weight_decay=0.0, init_seed=1,
             order="shuffled")
    c.update(kw)
    return c


def configs():
    c = [
        config(),
        config(momentum=0.9, weights="old", variance="biased"),
        config(momentum=0.9, weights="old", variance="unbiased"),
        config(momentum=0.3, weights="new", variance="biased", batch=16),
        config(sgd_momentum=0.9),
        config(weight_decay=1e-3),
        config(sgd_momentum=0.9, weight_decay=0.05, momentum=0.99,
               weights="old", variance="biased", init_seed=7),
        config(norm="none"),
        config(norm="none", sgd_momentum=0.9, weight_decay=1e-3, batch=8),
        config(epochs=4, freeze_after=2),
        config(epochs=4, freeze_after=1, momentum=0.9, weights="old",
               variance="biased", sgd_momentum=0.9),
        config(batch=50, partial="keep"),
        config(batch=50, partial="keep", variance="biased", freeze_after=1,
               epochs=2),
        config(batch=50, partial="drop"),
        config(batch=64, order="sorted:x0"),
        config(batch=16, order="by-label", epochs=3),
        config(batch=2, epochs=1, lr=0.02, seed=3, hidden=3),
        config(estimator="ema-debiased", momentum=0.01, weights="new"),
        config(estimator="ema-debiased", variance="biased", epochs=2,
               freeze_after=1),
        config(estimator="cumulative"),
        config(estimator="cumulative", variance="biased", batch=50,
               partial="keep"),
        config(estimator="precise"),
        config(estimator="precise", precise_batches=2, variance="biased"),
        config(estimator="precise", epochs=3, freeze_after=2),
        config(hidden=64, batch=128, epochs=5, eps=1e-3, seed=2),
        config(hidden=2, batch=3, epochs=2, lr=0.02, seed=4),
    ]
    return c


def label(cfg):
    base = config()
    parts = ["%s=%s" % (k, cfg[k]) for k in cfg if cfg[k] != base[k]]
    return "defaults" if not parts else " ".join(parts)


def options(cfg):
    """bnstudy run's options for cfg: only the settings a configuration
    uses (bnstudy refuses the others rather than ignore them)."""
    o = ["--type", "classifier", "--hidden", str(cfg["hidden"]),
         "--norm", cfg["norm"], "--batch-size", str(cfg["batch"]),
         "--epochs", str(cfg["epochs"]), "--partial", cfg["partial"],
         "--lr", repr(cfg["lr"]), "--sgd-momentum", repr(cfg["sgd_momentum"]),
         "--weight-decay", repr(cfg["weight_decay"]),
         "--init-seed", str(cfg["init_seed"]), "--order", cfg["order"],
         "--seed", str(cfg["seed"])]
    if cfg["norm"] == "batch":
        o += ["--momentum", repr(cfg["momentum"]),
              "--momentum-weights", cfg["weights"],
              "--variance", cfg["variance"], "--estimator", cfg["estimator"],
              "--eps", repr(cfg["eps"]),
              "--freeze-after", str(cfg["freeze_after"])]
        if cfg["estimator"] == "precise":
            o += ["--precise-batches", str(cfg["precise_batches"])]
    return o


class Rows:
    """A part of the population as bnstudy hands it out: its rows in the
    part's own order, and permutations of them by bnstudy's orders."""

    def __init__(self, bnstudy, pop, part):
        self.bnstudy, self.pop, self.part = bnstudy, pop, part
        rows = self.query([])
        self.origin = [int(r["row"]) for r in rows]
        self.at = {o: i for i, o in enumerate(self.origin)}
        self.x = np.array([[float(r["x%d" % j]) for j in range(F)]
                           for r in rows])
        self.y = np.array([int(r["label"]) for r in rows])

    def query(self, extra):
        out = subprocess.run(
            [self.bnstudy, "population", "--population", self.pop,
             "--label", "label", "--part", self.part] + extra,
            check=True, capture_output=True, text=True).stdout
        return parse_tsv(out)

    def order(self, name, seed):
        rows = self.query(["--order", name, "--seed", str(seed)])
        return [self.at[int(r["row"])] for r in rows]


def run_bnstudy(bnstudy, cfg, tmp):
    x, y = population(cfg["n"], cfg["seed"])
    pop = os.path.join(tmp, "pop.tsv")
    write_population(pop, x, y)
    weights, curve = (os.path.join(tmp, f) for f in ("w.tsv", "curve.tsv"))
    out = subprocess.run(
        [bnstudy, "run", "--population", pop, "--label", "label",
         "--write-weights", weights, "--write-curve", curve] + options(cfg),
        check=True, capture_output=True, text=True).stdout
    summary = parse_tsv(out)
    train = Rows(bnstudy, pop, "training")
    held = Rows(bnstudy, pop, "held-out")
    data = dict(train=train, held=held,
                perm=train.order(cfg["order"], cfg["seed"]),
                fit_perm=train.order("shuffled", cfg["seed"]),
                held_perm=held.order("shuffled", cfg["seed"]))
    return data, read_tensors(weights), read_tsv(curve), summary[0]


def check_initial(cfg, init, problems):
    """PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
    weight and bias; batch norm from gamma 1, beta 0, buffers 0 and 1."""
    for name, fan_in in (("fc1", F), ("fc2", cfg["hidden"])):
        bound = 1.0 / math.sqrt(fan_in)
        for part in ("weight", "bias"):
            a = init[name + "." + part]
            if not (np.all(a >= -bound) and np.all(a < bound)):
                problems.append("initial %s.%s outside [-%g, %g)"
                                % (name, part, bound, bound))
    if cfg["norm"] == "batch":
        want = {"bn.weight": 1.0, "bn.bias": 0.0, "bn.running_mean": 0.0,
                "bn.running_var": 1.0, "bn.num_batches_tracked": 0.0}
        for name, v in want.items():
            if not np.all(init[name] == v):
                problems.append("initial %s is not %g" % (name, v))


# The scores bnstudy writes, by the population and mode they are of.
SCORES = {("held", "train_mode"): ("acc_train_mode", "loss_train_mode"),
          ("held", "eval_mode"): ("acc_eval_mode", "loss_eval_mode"),
          ("train", "train_mode"): ("fit_acc_train_mode",
                                    "fit_loss_train_mode"),
          ("train", "eval_mode"): ("fit_acc_eval_mode", "fit_loss_eval_mode")}


def compare_scores(where, row, want, problems, worst):
    """One curve.tsv or summary row against the peer's scores there."""
    for key, (acc, loss) in SCORES.items():
        rows, correct, peer_loss = want[key]
        if float(row[acc]) != correct / rows:
            problems.append("%s: %s %s, peer %d of %d = %r"
                            % (where, acc, row[acc], correct, rows,
                               correct / rows))
        worst["score_loss"] = max(worst["score_loss"],
                                  rel_diff(float(row[loss]), peer_loss,
                                           floor=0.0))
    if float(row["agreement"]) != want["agreement"]:
        problems.append("%s: agreement %s, peer %r"
                        % (where, row["agreement"], want["agreement"]))
    if "stats" in want:
        updates = want["stats"][0]
        if int(row["updates"]) != updates:
            problems.append("%s: updates %s, peer %d"
                            % (where, row["updates"], updates))
        # Against 1 as well: with precise the errors are rounding.
        for name, v in zip(("stats_err", "stats_err_rel", "mean_err_rel",
                            "var_err_rel"), want["stats"][1:]):
            worst["stats"] = max(worst["stats"],
                                 rel_diff(float(row[name]), v, 1.0))
    elif row["stats_err"] != "-":
        problems.append("%s: stats_err %s without batch norm"
                        % (where, row["stats_err"]))


def compare(bnstudy, cfg, tmp):
    data, tensors, curve, summary = run_bnstudy(bnstudy, cfg, tmp)
    train, held = data["train"], data["held"]
    problems = []
    init = tensors["initial"]
    check_initial(cfg, init, problems)
    peer = Peer(cfg, init)

    def score_all():
        s = {}
        for name, rows, perm in (("held", held, data["held_perm"]),
                                 ("train", train, data["fit_perm"])):
            (tr, ev), same = peer.score(rows.x, rows.y, perm)
            s[(name, "train_mode")] = tr
            s[(name, "eval_mode")] = ev
            if name == "held":
                s["agreement"] = same
        if peer.bn is not None:
            s["stats"] = peer.stats(train.x)
        return s

    peer_curve = []

    def on_epoch(ep):
        # The scores had training stopped here: precise on a copy.
        keep = None
        if peer.bn is not None:
            keep = (peer.bn.running_mean.clone(), peer.bn.running_var.clone())
        peer.apply_precise(peer.torch.from_numpy(train.x), data["perm"])
        peer_curve.append(score_all())
        if keep is not None:
            peer.bn.running_mean.copy_(keep[0])
            peer.bn.running_var.copy_(keep[1])

    losses, grads = peer.train(train.x, train.y, data["perm"], on_epoch)
    final_scores = score_all()

    d = {}
    # Gradients of the first batch.
    got = tensors["grad"]
    if set(got) != set(grads):
        problems.append("gradient tensors %s, peer %s"
                        % (sorted(got), sorted(grads)))
    worst = 0.0
    for name in grads:
        floor = peer.fc1_floor.get(name)
        worst = max(worst, rel_diff(got.get(name, []), grads[name], floor))
    d["grad"] = worst
    # Final parameters and buffers.
    final, ref = tensors["final"], peer.tensors()
    if set(final) != set(ref):
        problems.append("final tensors %s, peer %s"
                        % (sorted(final), sorted(ref)))
    d["param"] = max([rel_diff(final.get(n, []), ref[n]) for n in ref]
                     or [0.0])
    if "bn.num_batches_tracked" in ref and not np.array_equal(
            final.get("bn.num_batches_tracked"), ref["bn.num_batches_tracked"]):
        problems.append("num_batches_tracked %s, peer %s"
                        % (final.get("bn.num_batches_tracked"),
                           ref["bn.num_batches_tracked"]))
    # Every epoch's scores and the run's.
    worst = {"score_loss": 0.0, "stats": 0.0}
    if len(curve) != cfg["epochs"] or len(peer_curve) != cfg["epochs"]:
        problems.append("%d curve rows, peer %d, epochs %d"
                        % (len(curve), len(peer_curve), cfg["epochs"]))
    for row, want in zip(curve, peer_curve):
        compare_scores("epoch %s" % row["epoch"], row, want, problems, worst)
    compare_scores("summary", summary, final_scores, problems, worst)
    if curve and any(curve[-1][k] != summary[k] for k in summary
                     if k in curve[-1]):
        problems.append("the last curve row is not the summary row")
    d.update(worst)
    return d, problems


LIMITS = {"grad": TOL["grad"], "param": TOL["param"],
          "score_loss": TOL["loss"], "stats": TOL["stats"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"),
                    help="the bnstudy binary (make)")
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError as e:
        print("peer test needs torch: %s" % e, file=sys.stderr)
        return 2

    def check(cfg):
        with tempfile.TemporaryDirectory(prefix="bnstudy-clf-peer-") as tmp:
            return compare(args.bnstudy, cfg, tmp)

    return run_checks(configs(), check, LIMITS, label)


if __name__ == "__main__":
    sys.exit(main())
