#!/usr/bin/python3
"""Peer check of bnstudy's classifier (src/clf.c) against PyTorch (issue 13).

For each configuration it writes a labelled population, a held-out one and
their orders as TSV, runs the classifier through tests/peer/clf_driver
(the stand-in for `bnstudy run` until the classifier is wired in), loads
the driver's initial parameters into an equivalent float64 PyTorch model
(nn.Linear, nn.BatchNorm1d, ReLU, nn.Linear, F.cross_entropy,
torch.optim.SGD), trains it on the same batches and compares:

  * the first batch's gradients, to 1e-12 relative;
  * every batch's loss, and the losses of every score, to 1e-10 relative;
  * the final parameters and buffers, to 1e-9 relative;
  * every accuracy (correct rows out of rows), in training mode and in
    evaluation mode, after every epoch and at the end: exactly.

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
TOL = {"grad": 1e-12, "loss": 1e-10, "param": 1e-9}

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


def write_order(path, perm):
    with open(path, "w") as fp:
        fp.write("row\n")
        for r in perm:
            fp.write("%d\n" % r)


def read_tsv(path):
    with open(path) as fp:
        lines = fp.read().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, l.split("\t"))) for l in lines[1:]]


def read_tensors(path):
    """{stage: {name: array}} from the driver's weights.tsv."""
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
        if self.bn is not None and cfg["estimator"] == "precise":
            k = cfg["precise_batches"] or len(batches(perm, cfg["batch"],
                                                      cfg["partial"]))
            rows = perm[:min(k * cfg["batch"], len(perm))]
            h = self.h_of(xs[torch.from_numpy(np.asarray(rows))])
            self.bn.running_mean.copy_(torch.from_numpy(h.mean(axis=0)))
            self.bn.running_var.copy_(torch.from_numpy(h.var(axis=0)))
        return losses, grads

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

    def score(self, x, y, perm, partial):
        """(train-mode, eval-mode) as (rows, correct, mean loss)."""
        torch = self.torch
        F_ = torch.nn.functional
        xs = torch.from_numpy(x)
        ys = torch.from_numpy(y.astype(np.int64))
        scratch = copy.deepcopy(self.model)  # its buffers may move
        scratch.train()
        bn_scratch = scratch[1] if self.bn is not None else None
        out = []
        with torch.no_grad():
            rows = correct = 0
            loss = 0.0
            for b in batches(perm, self.cfg["batch"], partial):
                idx = torch.from_numpy(np.asarray(b))
                h = scratch[0](xs[idx])
                if bn_scratch is not None:
                    h = bn_scratch(h)
                z = scratch[-1](torch.relu(h))
                correct += int((z.argmax(1) == ys[idx]).sum())
                loss += float(F_.cross_entropy(z, ys[idx], reduction="sum"))
                rows += len(b)
            out.append((rows, correct, loss / rows))
            self.model.eval()
            z = self.logits(xs)
            out.append((len(y), int((z.argmax(1) == ys).sum()),
                        float(F_.cross_entropy(z, ys))))
        return out


# ------------------------------------------------------------ a comparison

def config(**kw):
    c = dict(n=240, holdout=150, seed=1, hidden=8, norm="batch", batch=32,
             epochs=5, partial="drop", momentum=0.1, weights="new",
             variance="unbiased", estimator="ema", precise_batches=0,
             eps=1e-5, freeze_after=0, lr=0.3, sgd_momentum=0.0,
             weight_decay=0.0, init_seed=1)
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
        config(hidden=2, batch=2, epochs=1, lr=0.02, seed=3),
    ]
    return c


def label(cfg):
    base = config()
    parts = ["%s=%s" % (k, cfg[k]) for k in cfg if cfg[k] != base[k]]
    return "defaults" if not parts else " ".join(parts)


def run_driver(driver, cfg, tmp):
    x, y = population(cfg["n"], cfg["seed"])
    hx, hy = population(cfg["holdout"], cfg["seed"] + 1000)
    rng = np.random.default_rng(cfg["seed"] + 2000)
    perm = rng.permutation(cfg["n"])
    score_perm = rng.permutation(cfg["n"])
    hold_perm = rng.permutation(cfg["holdout"])
    files = {k: os.path.join(tmp, k + ".tsv")
             for k in ("pop", "hold", "order", "sorder", "horder")}
    write_population(files["pop"], x, y)
    write_population(files["hold"], hx, hy)
    write_order(files["order"], perm)
    write_order(files["sorder"], score_perm)
    write_order(files["horder"], hold_perm)
    argv = [driver, "--population", files["pop"], "--classes", str(K),
            "--out", tmp, "--train-order", files["order"],
            "--score-order", files["sorder"], "--holdout", files["hold"],
            "--holdout-order", files["horder"],
            "--hidden", str(cfg["hidden"]), "--norm", cfg["norm"],
            "--batch-size", str(cfg["batch"]), "--epochs", str(cfg["epochs"]),
            "--partial", cfg["partial"], "--momentum", repr(cfg["momentum"]),
            "--momentum-weights", cfg["weights"],
            "--variance", cfg["variance"], "--estimator", cfg["estimator"],
            "--precise-batches", str(cfg["precise_batches"]),
            "--eps", repr(cfg["eps"]),
            "--freeze-after", str(cfg["freeze_after"]),
            "--lr", repr(cfg["lr"]), "--sgd-momentum", repr(cfg["sgd_momentum"]),
            "--weight-decay", repr(cfg["weight_decay"]),
            "--init-seed", str(cfg["init_seed"])]
    subprocess.run(argv, check=True, capture_output=True, text=True)
    data = dict(x=x, y=y, hx=hx, hy=hy, perm=perm, score_perm=score_perm,
                hold_perm=hold_perm)
    return data, read_tensors(os.path.join(tmp, "weights.tsv")), \
        read_tsv(os.path.join(tmp, "steps.tsv")), \
        read_tsv(os.path.join(tmp, "scores.tsv"))


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


def compare(driver, cfg, tmp):
    data, tensors, steps, scores = run_driver(driver, cfg, tmp)
    problems = []
    init = tensors["initial"]
    check_initial(cfg, init, problems)
    peer = Peer(cfg, init)

    peer_scores = {}

    def on_epoch(ep):
        peer_scores[str(ep + 1)] = score_all()

    def score_all():
        s = {}
        for pop, x, y, perm in (("train", data["x"], data["y"], data["score_perm"]),
                                ("holdout", data["hx"], data["hy"], data["hold_perm"])):
            tr, ev = peer.score(x, y, perm, cfg["partial"])
            s[(pop, "train_mode")] = tr
            s[(pop, "eval_mode")] = ev
        return s

    losses, grads = peer.train(data["x"], data["y"], data["perm"], on_epoch)
    peer_scores["final"] = score_all()

    d = {}
    # Gradients of the first batch.
    got = tensors["grad"]
    if set(got) != set(grads):
        problems.append("gradient tensors %s, peer %s" % (sorted(got), sorted(grads)))
    worst = 0.0
    for name in grads:
        floor = peer.fc1_floor.get(name)
        worst = max(worst, rel_diff(got.get(name, []), grads[name], floor))
    d["grad"] = worst
    # Every batch's loss.
    if len(steps) != len(losses):
        problems.append("%d steps, peer %d" % (len(steps), len(losses)))
        d["step_loss"] = math.inf
    else:
        d["step_loss"] = rel_diff([float(s["loss"]) for s in steps], losses,
                                  floor=0.0)
    # Final parameters and buffers.
    final, ref = tensors["final"], peer.tensors()
    if set(final) != set(ref):
        problems.append("final tensors %s, peer %s" % (sorted(final), sorted(ref)))
    d["param"] = max([rel_diff(final.get(n, []), ref[n]) for n in ref] or [0.0])
    if "bn.num_batches_tracked" in ref and not np.array_equal(
            final.get("bn.num_batches_tracked"), ref["bn.num_batches_tracked"]):
        problems.append("num_batches_tracked %s, peer %s"
                        % (final.get("bn.num_batches_tracked"),
                           ref["bn.num_batches_tracked"]))
    # Scores: rows and correct rows exactly, losses to TOL["loss"].
    worst = 0.0
    seen = 0
    for r in scores:
        key = (r["population"], r["mode"])
        want = peer_scores.get(r["epoch"], {}).get(key)
        if want is None:
            problems.append("score %s %s %s has no peer" % (r["epoch"], *key))
            continue
        seen += 1
        rows, correct, loss = want
        if int(r["rows"]) != rows or int(r["correct"]) != correct:
            problems.append("epoch %s %s %s: %s of %s correct, peer %d of %d"
                            % (r["epoch"], key[0], key[1], r["correct"],
                               r["rows"], correct, rows))
        if float(r["accuracy"]) != correct / rows:
            problems.append("epoch %s %s %s: accuracy %s is not %d/%d"
                            % (r["epoch"], key[0], key[1], r["accuracy"],
                               correct, rows))
        worst = max(worst, rel_diff(float(r["loss"]), loss, floor=0.0))
    if seen != 4 * (cfg["epochs"] + 1):
        problems.append("%d scores, expected %d" % (seen, 4 * (cfg["epochs"] + 1)))
    d["score_loss"] = worst
    return d, problems


LIMITS = {"grad": TOL["grad"], "step_loss": TOL["loss"],
          "param": TOL["param"], "score_loss": TOL["loss"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", default=os.path.join(REPO, "build", "clf_driver"),
                    help="the classifier's test driver (make build/clf_driver)")
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError as e:
        print("peer test needs torch: %s" % e, file=sys.stderr)
        return 2

    def check(cfg):
        with tempfile.TemporaryDirectory(prefix="bnstudy-clf-peer-") as tmp:
            return compare(args.driver, cfg, tmp)

    return run_checks(configs(), check, LIMITS, label)


if __name__ == "__main__":
    sys.exit(main())
