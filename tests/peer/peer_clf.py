#!/usr/bin/python3
"""Peer check of bnstudy's classifier against PyTorch (issues 13 and 25).

For each configuration it runs `bnstudy run --type classifier
--write-weights W --write-curve C` on a population (the peer's own file,
the generated population with classes, or a shipped dataset) and takes
from `bnstudy population --part training|held-out` the rows the classifier
trains on and the held-out rows, in the orders bnstudy uses (the training
order, and `shuffled` with the run's seed for the training-mode scores).
It builds the same network from PyTorch's own modules (nn.Linear,
nn.Conv2d, nn.BatchNorm1d/2d, nn.LayerNorm, nn.GroupNorm, nn.ReLU, and
nn.Flatten's and nn.Unflatten's reshapes) in float64 or float32, loads
bnstudy's initial parameters into it, trains it on the same batches with
PyTorch's own optimiser (torch.optim.SGD with or without Nesterov, Adam,
AdamW) and learning rate (LambdaLR with the documented warm-up and
schedule, themselves checked against PyTorch's LinearLR, StepLR and
CosineAnnealingLR), F.cross_entropy, and compares:

  * the first batch's gradients (the weights file's stage grad);
  * the final parameters and buffers;
  * every accuracy, in training mode and in evaluation mode, on the
    held-out rows and on the training rows, after every epoch (curve.tsv)
    and at the end (the summary row): exactly in float64, as correct
    rows / rows (in float32 a row whose two best logits are within
    rounding of each other may go either way);
  * every loss of those scores, the share of the held-out rows both
    modes give the same class (agreement), the largest difference the two
    modes make to a logit (logit_gap: exactly 0 without batch norm);
  * the buffers' error against the moments of what each batch norm sees
    in evaluation mode (stats_err, stats_err_rel and its two parts,
    last_stats_err_rel), and the updates counted, at every epoch;
  * the radial part of the gradient of the weights right before a batch
    norm (radial, and radial_excess against its exact value) and those
    weights' norm;
  * with --compositions, the batch-dependence scores (issue 24): the
    network of bnstudy's final weights and buffers in PyTorch's modules,
    run on the batches docs/definitions.md defines (every subset, or the
    shuffles of PCG32 stream 24, made here from its own PCG32), each row's
    logits in training and in evaluation mode, their ranges, the rows
    whose class moves, and training mode's accuracy on held-out batches
    cut from the rows sorted by class, and by group where the file has a
    `user` column (acc_train_by_group): to 1e-12 of the logits' size.

Dropout has no seeded stream PyTorch could share: the peer draws the
masks from its own PCG32, as docs/definitions.md defines them, and
multiplies by them as torch.nn.functional.dropout does (mask times 1/(1-p)).
PyTorch's BatchNorm keeps its buffers itself only in PyTorch's own
convention (an EMA with unbiased variance, or momentum=None for the
cumulative average); for the others (biased variance, ema-debiased,
precise) the peer runs the layer with momentum 0 and updates the buffers
here from the batch's own statistics as docs/definitions.md defines them.

It prints one line per configuration, the largest difference per quantity,
and `N passed, N failed`; it exits 1 if any configuration fails.
"""

import argparse
import copy
import itertools
import math
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

import numpy as np

from peer_torch import rel_diff, run_checks

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# float64. The gradients of one batch are a few hundred operations from
# the shared initial weights: two correct implementations differ by
# rounding (~1e-15), a dropped term of a backward pass by 1e-3 or more.
# Training multiplies those rounding differences by the steps' Jacobians,
# hence the wider 1e-9 for final parameters; losses sit between.
TOL64 = {"grad": 1e-12, "loss": 1e-10, "param": 1e-9, "stats": 1e-8,
         "radial": 1e-12}
# float32: the same operations, each rounding 2^29 times coarser (2^-24
# against 2^-53), so every bound is float64's times 2^29 (5.4e8): a
# gradient to 5.4e-4 of its terms, trained weights to 0.54, which says
# nothing, so float32's configurations train ten steps or fewer, for
# which float64 agrees to 1e-13 (its own configurations show it, the
# `short` ones) and float32 therefore to 2^29 1e-13 = 5.4e-5.
U_RATIO = 2.0 ** 29
TOL32 = {"grad": U_RATIO * 1e-12, "loss": U_RATIO * 1e-13,
         "param": U_RATIO * 1e-13, "stats": U_RATIO * 1e-13,
         "radial": U_RATIO * 1e-12}
# The short float64 twins of the float32 configurations: ten steps or
# fewer amplify rounding (1e-16) by far less than 1e3.
TOL64_SHORT = dict(TOL64, param=1e-13, loss=1e-13, stats=1e-12)
# radial_excess is a residual of rounding (the dot product of a unit's
# few hundred weights and their gradient against its exact value), a few
# 1e-14 of |w||g| in float64 for either implementation; a wrong
# coefficient (eps / (v + eps) of radial, itself ~1e-6) is 1e-7 or more.
EXCESS64 = 1e-10
EXCESS32 = U_RATIO * 1e-10

PEER_F, PEER_K = 5, 3


def decimal_complement(x):
    """1 - x with x read as its shortest decimal, as bn_decimal_complement."""
    return float(Decimal(1) - Decimal(repr(x)))


# ---------------------------------------------------------------- PCG32

class PCG32:
    """PCG32 (O'Neill's pcg32_random_r) as src/base/pcg32.c seeds it."""
    MASK = (1 << 64) - 1

    def __init__(self, initstate, initseq):
        self.state = 0
        self.inc = ((initseq << 1) | 1) & self.MASK
        self.next()
        self.state = (self.state + initstate) & self.MASK
        self.next()

    def next(self):
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & self.MASK
        x = (((old >> 18) ^ old) >> 27) & 0xffffffff
        rot = old >> 59
        return ((x >> rot) | (x << ((-rot) & 31))) & 0xffffffff

    def uniform(self):
        """docs/definitions.md: 27 and 26 bits of two draws, / 2^53."""
        a, b = self.next() >> 5, self.next() >> 6
        return ((a << 26) | b) * 2.0 ** -53


PCG32_INITSEQ_DROPOUT = 16
PCG32_INITSEQ_COMPOSE = 24


# ---------------------------------------------------------------- data

def peer_population(n, seed):
    """Five features on different scales tied to a latent, and three
    classes by the latent's terciles with noise: learnable, not trivially."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    means = np.array([0.0, 1.0, -2.0, 0.5, 3.0])
    sds = np.array([1.0, 0.3, 2.0, 5.0, 0.5])
    rho = np.array([0.9, 0.7, 0.5, 0.3, 0.0])
    e = rng.standard_normal((n, PEER_F))
    x = means + sds * (rho * z[:, None] + np.sqrt(1 - rho ** 2) * e)
    noisy = z + 0.4 * rng.standard_normal(n)
    return x, np.digitize(noisy, [-0.43, 0.43])


def write_population(path, x, label, groups=0):
    """With groups, a column `user`: row i is user (7 i) mod groups's,
    named so that byte order is not the users' numbers ("u9" > "u10"),
    and its features moved by the user's own offset."""
    users = ["u%d" % (groups - 1 - g) for g in range(groups)]
    with open(path, "w") as fp:
        fp.write("\t".join(["x%d" % j for j in range(PEER_F)] + ["label"]
                           + (["user"] if groups else [])) + "\n")
        for i, (row, lab) in enumerate(zip(x, label)):
            g = 7 * i % groups if groups else 0
            row = row + (g - 1.0) * 0.5 if groups else row
            fp.write("\t".join(repr(float(v)) for v in row) + "\t%d" % lab
                     + ("\t" + users[g] if groups else "") + "\n")


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


def label_levels(values):
    """bnstudy's class numbering: integers in numeric order, any other
    labels in byte order (popfile.c)."""
    uniq = sorted(set(values))
    try:
        return {v: i for i, v in enumerate(sorted(uniq, key=int))}
    except ValueError:
        return {v: i for i, v in enumerate(sorted(uniq, key=lambda s: s.encode()))}


class Rows:
    """A part of the population as bnstudy hands it out: its rows in the
    part's own order, and permutations of them by bnstudy's orders."""

    def __init__(self, bnstudy, source, part):
        self.bnstudy, self.source, self.part = bnstudy, source, part
        rows = self.query([])
        self.origin = [int(r["row"]) for r in rows]
        self.at = {o: i for i, o in enumerate(self.origin)}
        self.names = [k for k in rows[0] if k not in ("row", "label", "user")]
        self.x = np.array([[float(r[k]) for k in self.names] for r in rows])
        self.labels = [r["label"] for r in rows]
        self.groups = [r.get("user") for r in rows]

    def query(self, extra):
        out = subprocess.run([self.bnstudy, "population"] + self.source
                             + ["--part", self.part] + extra, check=True,
                             capture_output=True, text=True).stdout
        return parse_tsv(out)

    def order(self, name, seed):
        rows = self.query(["--order", name, "--seed", str(seed)])
        return [self.at[int(r["row"])] for r in rows]


# ---------------------------------------------------------------- the network

def default_layers(cfg):
    """The network of hidden and norm."""
    return ("linear:%d batch relu linear:K" if cfg["norm"] == "batch"
            else "linear:%d relu linear:K") % cfg["hidden"]


class SeededDropout:
    """docs/definitions.md's dropout: in a training step each value, in
    the row's PyTorch order, is kept when a uniform from the network's
    PCG32(init_seed, 16) is >= p, and multiplied by (1/(1-p)) as a tensor
    of the model's dtype, as F.dropout multiplies; else the identity."""

    def __init__(self, torch, p, rng, dtype):
        self.torch, self.p, self.rng, self.dtype = torch, p, rng, dtype
        self.active = False
        one = np.float32(1) if dtype == "float32" else np.float64(1)
        self.scale = float(one / type(one)(1.0 - p))

    def __call__(self, x):
        if not self.active or self.p == 0.0:
            return x
        flat = x.reshape(x.shape[0], -1)
        mask = np.zeros(tuple(flat.shape))
        for i in range(flat.shape[0]):
            for j in range(flat.shape[1]):
                mask[i, j] = self.scale if self.rng.uniform() >= self.p else 0.0
        m = self.torch.from_numpy(mask).to(x.dtype).reshape(x.shape)
        return x * m


def ghost_class(base, devices):
    """base (nn.BatchNorm1d or 2d) data parallel by hand over `devices`:
    in training mode the batch split as each device gets its share
    (torch.tensor_split), every share normalised by its own statistics,
    and only device 0's moving the buffers (the others' dropped, as
    broadcasting rank 0's buffers drops them)."""
    import torch

    class Ghost(base):
        def forward(self, x):
            if not self.training:
                return super().forward(x)
            parts = torch.tensor_split(x, devices)
            ys = [super().forward(parts[0])]
            for p in parts[1:]:
                ys.append(torch.nn.functional.batch_norm(
                    p, None, None, self.weight, self.bias, True, 0.0,
                    self.eps))
            return torch.cat(ys)
    return Ghost


class Net:
    """The layers of a spec as PyTorch modules, indexed as bnstudy names
    its tensors ("3.weight" is layer 3's weight)."""

    def __init__(self, torch, spec, f, k, cfg, dtype):
        import torch.nn as nn
        self.torch = torch
        self.layers, self.kinds = [], []
        self.dropouts = []
        # Devices with statistics of their own ([layer] devices, sync no).
        self.devices = 1 if cfg["sync"] == "yes" else cfg["devices"]
        shape = (f,)
        rng = PCG32(cfg["init_seed"], PCG32_INITSEQ_DROPOUT)
        self.rng = rng
        for tok in spec.split():
            name, _, arg = tok.partition(":")
            self.kinds.append(name)
            if name == "linear":
                out = k if arg == "K" else int(arg)
                m = nn.Linear(int(np.prod(shape)), out, dtype=dtype)
                shape = (out,)
            elif name == "conv":
                m = nn.Conv2d(shape[0], int(arg), 3, padding=1, dtype=dtype)
                shape = (int(arg),) + shape[1:]
            elif name == "batch":
                cls = nn.BatchNorm1d if len(shape) == 1 else nn.BatchNorm2d
                if self.devices > 1:
                    cls = ghost_class(cls, self.devices)
                m = cls(shape[0], eps=cfg["eps"], dtype=dtype)
            elif name == "layer":
                m = nn.LayerNorm(list(shape), eps=cfg["eps"], dtype=dtype)
            elif name == "group":
                m = nn.GroupNorm(int(arg), shape[0], eps=cfg["eps"],
                                 dtype=dtype)
            elif name == "relu":
                m = nn.ReLU()
            elif name == "dropout":
                m = SeededDropout(torch, float(arg), rng, cfg["dtype"])
                self.dropouts.append(m)
            elif name == "none":
                m = nn.Identity()
            elif name == "image":
                h, w = (int(v) for v in arg.split("x"))
                shape = (shape[0] // (h * w), h, w)
                m = nn.Unflatten(1, shape)
            else:
                raise ValueError("unknown layer %s" % tok)
            self.layers.append(m)
        self.modules = nn.ModuleList(
            [m if isinstance(m, nn.Module) else nn.Identity()
             for m in self.layers])

    def forward(self, x, keep=None):
        """keep: a dict filled with each batch norm's input, by index."""
        for i, m in enumerate(self.layers):
            if self.kinds[i] == "linear" and x.dim() > 2:
                x = x.flatten(1)  # nn.Flatten, in PyTorch's order
            if keep is not None and self.kinds[i] == "batch":
                keep[i] = x
            x = m(x)
        return x

    def bns(self):
        return [(i, m) for i, m in enumerate(self.layers)
                if self.kinds[i] == "batch"]

    def params(self):
        """(name, tensor) in bnstudy's order: layer by layer, weight then
        bias."""
        out = []
        for i, m in enumerate(self.layers):
            if hasattr(m, "weight") and m.weight is not None:
                out.append(("%d.weight" % i, m.weight))
                out.append(("%d.bias" % i, m.bias))
        return out

    def weighted_before(self, i):
        """The linear or conv layer a batch norm at i follows (none layers
        between are the identity), or None."""
        j = i - 1
        while j >= 0 and self.kinds[j] == "none":
            j -= 1
        return j if j >= 0 and self.kinds[j] in ("linear", "conv") else None

    def scale_invariant(self):
        """(weighted layer, batch norm, index, weighted index): a batch
        norm right after a linear or conv layer."""
        return [(self.layers[self.weighted_before(i)], m, i,
                 self.weighted_before(i)) for i, m in self.bns()
                if self.weighted_before(i) is not None]


def schedule_factor(cfg, t, epoch):
    """docs/definitions.md: lr x (warm-up(t) x schedule(epoch))."""
    w, s = 1.0, 1.0
    if cfg["warmup"] and t < cfg["warmup"]:
        w = (t + 1) / cfg["warmup"]
    if cfg["schedule"] == "step":
        s = cfg["step_factor"] ** (epoch // cfg["step_epochs"])
    elif cfg["schedule"] == "cosine":
        s = (1.0 + math.cos(math.pi * epoch / cfg["epochs"])) / 2.0
    return w * s


def check_schedules(torch, problems):
    """The documented warm-up and schedules are PyTorch's own LinearLR,
    StepLR and CosineAnnealingLR (their closed forms, to rounding)."""
    sched = torch.optim.lr_scheduler
    p = [torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))]
    cases = [("cosine", 12, lambda o: sched.CosineAnnealingLR(o, T_max=12)),
             ("step", 12, lambda o: sched.StepLR(o, step_size=3, gamma=0.5))]
    for kind, epochs, make in cases:
        o = torch.optim.SGD(p, lr=0.3)
        s = make(o)
        cfg = dict(warmup=0, schedule=kind, step_epochs=3, step_factor=0.5,
                   epochs=epochs)
        for e in range(epochs):
            want = 0.3 * schedule_factor(cfg, 0, e)
            if abs(o.param_groups[0]["lr"] - want) > 1e-12 * 0.3:
                problems.append("%s epoch %d: PyTorch lr %r, documented %r"
                                % (kind, e, o.param_groups[0]["lr"], want))
            o.step()
            s.step()
    o = torch.optim.SGD(p, lr=0.3)
    s = sched.LinearLR(o, start_factor=1.0 / 8, end_factor=1.0,
                       total_iters=7)
    cfg = dict(warmup=8, schedule="constant", epochs=1)
    for t in range(12):
        want = 0.3 * schedule_factor(cfg, t, 0)
        if abs(o.param_groups[0]["lr"] - want) > 1e-12 * 0.3:
            problems.append("warm-up step %d: PyTorch lr %r, documented %r"
                            % (t, o.param_groups[0]["lr"], want))
        o.step()
        s.step()


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


def channel_moments(h):
    """Per channel: mean and variance (divisor: the values) over the rows
    and, for an image, its positions."""
    dims = (0,) if h.dim() == 2 else (0, 2, 3)
    return (h.mean(dim=dims).numpy().astype(np.float64).copy(),
            h.var(dim=dims, unbiased=False).numpy().astype(np.float64).copy())


class Peer:
    """The classifier in PyTorch, trained as bnstudy trains it."""

    def __init__(self, cfg, init, f, k):
        import torch
        self.torch = torch
        self.cfg = cfg
        self.dtype = torch.float32 if cfg["dtype"] == "float32" else torch.float64
        p = cfg["momentum"] if cfg["weights"] == "new" else \
            decimal_complement(cfg["momentum"])
        self.p, self.keep = p, decimal_complement(p)
        est, var = cfg["estimator"], cfg["variance"]
        self.native = var == "unbiased" and est in ("ema", "cumulative",
                                                    "precise")
        self.net = Net(torch, cfg["layers"], f, k, cfg, self.dtype)
        for _, bn in self.net.bns():
            bn.momentum = (None if est == "cumulative" else p) \
                if self.native else 0.0
        with torch.no_grad():
            mods = dict(enumerate(self.net.layers))
            for name, a in init.items():
                idx, attr = name.split(".", 1)
                t = getattr(mods[int(idx)], attr)
                v = torch.from_numpy(np.array(a, dtype=np.float64))
                if attr == "num_batches_tracked":
                    t.copy_(v.to(torch.long).reshape(t.shape))
                else:
                    t.copy_(v.reshape(t.shape).to(t.dtype))
        self.acc = {i: [np.zeros(bn.num_features), np.zeros(bn.num_features),
                        0.0] for i, bn in self.net.bns()}
        params = [t for _, t in self.net.params()]
        o = cfg["optimizer"]
        if o in ("sgd", "nesterov"):
            self.opt = torch.optim.SGD(params, lr=cfg["lr"],
                                       momentum=cfg["sgd_momentum"],
                                       weight_decay=cfg["weight_decay"],
                                       nesterov=o == "nesterov")
        else:
            cls = torch.optim.Adam if o == "adam" else torch.optim.AdamW
            self.opt = cls(params, lr=cfg["lr"],
                           betas=(cfg["adam_beta1"], cfg["adam_beta2"]),
                           eps=cfg["adam_eps"],
                           weight_decay=cfg["weight_decay"])
        self.steps = 0
        self.radial = self.radial_excess = 0.0
        self.w_norm0 = self.weights_norm()

    def tensor(self, x):
        return self.torch.from_numpy(np.asarray(x, dtype=np.float64)).to(self.dtype)

    def update_buffers(self, i, bn, h):
        """The buffer update PyTorch cannot do, from the batch's own
        statistics, as docs/definitions.md defines it: device 0's share's
        on devices of their own."""
        if self.cfg["estimator"] == "initial":
            return  # never updated: the buffers as loaded
        if self.net.devices > 1:
            h = self.torch.tensor_split(h, self.net.devices)[0]
        m, v = channel_moments(h.detach())
        n = h.shape[0] * (1 if h.dim() == 2 else h.shape[2] * h.shape[3])
        if self.cfg["variance"] == "unbiased":
            v = v * n / (n - 1)
        rm = bn.running_mean.numpy().astype(np.float64)
        rv = bn.running_var.numpy().astype(np.float64)
        est = self.cfg["estimator"]
        acc = self.acc[i]
        if est == "ema-debiased":
            acc[0] = self.keep * acc[0] + self.p * m
            acc[1] = self.keep * acc[1] + self.p * v
            acc[2] = self.keep * acc[2] + self.p
            rm, rv = acc[0] / acc[2], acc[1] / acc[2]
        elif est == "cumulative":
            a = 1.0 / int(bn.num_batches_tracked)
            rm, rv = (1.0 - a) * rm + a * m, (1.0 - a) * rv + a * v
        else:  # ema, and precise while it trains
            rm, rv = self.keep * rm + self.p * m, self.keep * rv + self.p * v
        bn.running_mean.copy_(self.torch.from_numpy(rm).to(self.dtype))
        bn.running_var.copy_(self.torch.from_numpy(rv).to(self.dtype))

    def set_mode(self, train, frozen=False, drop=False):
        self.net.modules.train(train)
        if frozen:
            for _, bn in self.net.bns():
                bn.eval()
        for d in self.net.dropouts:
            d.active = drop

    def measure_radial(self, keep):
        """The largest |w.g| / (|w||g|) over the units of the weights right
        before a batch norm, and of w.g - gamma dgamma eps / (v + eps)."""
        for prev, bn, i, _ in self.net.scale_invariant():
            w = prev.weight.detach().numpy().astype(np.float64)
            g = prev.weight.grad.numpy().astype(np.float64)
            w, g = w.reshape(w.shape[0], -1), g.reshape(g.shape[0], -1)
            _, v = channel_moments(keep[i].detach())
            gam = bn.weight.detach().numpy().astype(np.float64)
            dgam = bn.weight.grad.numpy().astype(np.float64)
            for j in range(w.shape[0]):
                scale = np.linalg.norm(w[j]) * np.linalg.norm(g[j])
                if not scale > 0:
                    continue
                dot = float(w[j] @ g[j])
                exact = gam[j] * dgam[j] * (bn.eps / (v[j] + bn.eps))
                self.radial = max(self.radial, abs(dot) / scale)
                self.radial_excess = max(self.radial_excess,
                                         abs(dot - exact) / scale)

    def weights_norm(self):
        s = 0.0
        for prev, _, _, _ in self.net.scale_invariant():
            w = prev.weight.detach().numpy().astype(np.float64)
            s += float(np.sum(w * w))
        return math.sqrt(s)

    def train(self, x, y, perm, on_epoch):
        torch = self.torch
        cfg = self.cfg
        xs, ys = self.tensor(x), torch.from_numpy(y.astype(np.int64))
        nb = len(batches(perm, cfg["batch"], cfg["partial"]))
        sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda t: schedule_factor(cfg, t, t // nb))
        grads = None
        for ep in range(cfg["epochs"]):
            e0 = cfg["freeze_after"]
            frozen = e0 == "start" or (e0 > 0 and ep >= e0)
            self.set_mode(True, frozen, drop=True)
            for rows in batches(perm, cfg["batch"], cfg["partial"]):
                idx = torch.from_numpy(np.asarray(rows))
                self.opt.zero_grad()
                keep = {}
                z = self.net.forward(xs[idx], keep)
                loss = torch.nn.functional.cross_entropy(z, ys[idx])
                loss.backward()
                if grads is None:
                    grads = self.gradients(keep)
                if not frozen:
                    self.measure_radial(keep)
                if not frozen and not self.native:
                    with torch.no_grad():
                        for i, bn in self.net.bns():
                            self.update_buffers(i, bn, keep[i])
                self.opt.step()
                sched.step()
            self.set_mode(True, drop=False)
            on_epoch(ep)
        self.apply_precise(xs, perm)
        return grads

    def bn_inputs(self, xs, i):
        """What batch norm i sees over the rows xs, in evaluation mode."""
        self.set_mode(False)
        keep = {}
        with self.torch.no_grad():
            self.net.forward(xs, keep)
        self.set_mode(True)
        return keep[i]

    def apply_precise(self, xs, perm):
        """The estimator precise after training: each batch norm's buffers
        become the pooled moments of its inputs, in evaluation mode up to
        it, over the first precise_batches batches, layer by layer."""
        cfg = self.cfg
        if cfg["estimator"] != "precise":
            return
        k = cfg["precise_batches"] or len(batches(perm, cfg["batch"],
                                                  cfg["partial"]))
        rows = perm[:min(k * cfg["batch"], len(perm))]
        sub = xs[self.torch.from_numpy(np.asarray(rows))]
        for i, bn in self.net.bns():
            m, v = channel_moments(self.bn_inputs(sub, i))
            bn.running_mean.copy_(self.torch.from_numpy(m).to(self.dtype))
            bn.running_var.copy_(self.torch.from_numpy(v).to(self.dtype))

    def stats(self, x):
        """(updates, stats_err, stats_err_rel, mean_err_rel, var_err_rel,
        last_stats_err_rel): every batch norm's buffers against the
        moments (divisor n) of what it sees in evaluation mode."""
        xs = self.tensor(x)
        dm, dv, mu, var, last = [], [], [], [], None
        for i, bn in self.net.bns():
            m, v = channel_moments(self.bn_inputs(xs, i))
            a = bn.running_mean.numpy().astype(np.float64) - m
            b = bn.running_var.numpy().astype(np.float64) - v
            dm.append(a), dv.append(b), mu.append(m), var.append(v)
            last = (a, b, v)
        dm, dv, var = (np.concatenate(t) for t in (dm, dv, var))

        def rel(a, b, v):
            m2 = float(np.sum((a / np.sqrt(v)) ** 2))
            v2 = float(np.sum((b / v) ** 2))
            return m2, v2, len(v)

        m2, v2, h = rel(dm, dv, var)
        lm2, lv2, lh = rel(*last)
        return (int(self.net.bns()[0][1].num_batches_tracked),
                math.sqrt(float(np.sum(dm * dm) + np.sum(dv * dv)) / (2 * h)),
                math.sqrt((m2 + v2) / (2 * h)), math.sqrt(m2 / h),
                math.sqrt(v2 / h), math.sqrt((lm2 + lv2) / (2 * lh)))

    def gradients(self, keep):
        g = {n: t.grad.numpy().astype(np.float64).copy()
             for n, t in self.net.params()}
        self.floors = self.cancellation_floors(keep)
        return g

    def cancellation_floors(self, keep):
        """The size of the terms the gradients of the weights right before
        a batch norm in training mode are sums of. The batch norm's
        backward subtracts two projections from dy, and the result can be
        far smaller than the terms: the bias's gradient is zero but for
        rounding (the batch mean removes any shift), and with B = 2 every
        gradient there is eps / (var + eps) times its terms. Two correct
        implementations then agree only relative to the terms, as any
        summation error bound says, so these are the floors those
        gradients are judged against."""
        torch = self.torch
        floors = {}
        for prev, bn, i, wi in self.net.scale_invariant():
            if not bn.training:
                continue
            h = keep[i].detach()
            dy = self.bn_output_grad(i)
            hn = h.numpy().astype(np.float64)
            dims = (0,) if h.dim() == 2 else (0, 2, 3)
            shape = (1, -1) if h.dim() == 2 else (1, -1, 1, 1)
            gam = bn.weight.detach().numpy().astype(np.float64).reshape(shape)
            ts = []
            # Per device share, whose statistics its backward projects on.
            for hs, ds in zip(np.array_split(hn, self.net.devices),
                              np.array_split(dy, self.net.devices)):
                mean = hs.mean(axis=dims).reshape(shape)
                var = hs.var(axis=dims).reshape(shape)
                sd = np.sqrt(var + bn.eps)
                xhat = (hs - mean) / sd
                ts.append(np.abs(gam / sd) * (
                    np.abs(ds) + np.abs(ds.mean(axis=dims).reshape(shape))
                    + np.abs(xhat) * np.abs((ds * xhat).mean(axis=dims).reshape(shape))))
            t = np.concatenate(ts)
            x_in = self.layer_input(wi)
            ax = np.abs(x_in)
            if self.net.kinds[wi] == "linear":
                ax = ax.reshape(ax.shape[0], -1)
                fw = t.T @ ax
            else:
                fw = torch.nn.grad.conv2d_weight(
                    torch.from_numpy(ax), prev.weight.shape,
                    torch.from_numpy(t), padding=1).numpy()
            floors["%d.weight" % wi] = fw
            floors["%d.bias" % wi] = t.sum(axis=dims)
        return floors

    def bn_output_grad(self, i):
        return self._bn_out_grad[i]

    def layer_input(self, i):
        return self._inputs[i]

    def tensors(self):
        t = {n: p.detach().numpy().astype(np.float64).copy()
             for n, p in self.net.params()}
        for i, bn in self.net.bns():
            t["%d.running_mean" % i] = bn.running_mean.numpy().astype(np.float64).copy()
            t["%d.running_var" % i] = bn.running_var.numpy().astype(np.float64).copy()
            t["%d.num_batches_tracked" % i] = np.array(
                [float(bn.num_batches_tracked)])
        return t

    def score(self, x, y, perm):
        """(train-mode, eval-mode) as (rows, correct, mean loss, near
        ties), the share of the rows the two modes give the same class, and
        the largest difference the modes make to a logit."""
        torch = self.torch
        F_ = torch.nn.functional
        xs, ys = self.tensor(x), torch.from_numpy(y.astype(np.int64))
        saved = copy.deepcopy(self.net.modules.state_dict())
        out = []
        pred = np.zeros(len(y), dtype=np.int64)
        zt = np.zeros((len(y), 0))
        with torch.no_grad():
            self.set_mode(True)
            rows = correct = ties = 0
            loss = 0.0
            for b in score_batches(perm, self.cfg["batch"]):
                idx = torch.from_numpy(np.asarray(b))
                z = self.net.forward(xs[idx])
                if zt.shape[1] == 0:
                    zt = np.zeros((len(y), z.shape[1]))
                zt[np.asarray(b)] = z.numpy()
                correct += int((z.argmax(1) == ys[idx]).sum())
                ties += near_ties(z.numpy())
                pred[np.asarray(b)] = z.argmax(1).numpy()
                loss += float(F_.cross_entropy(z.to(torch.float64), ys[idx],
                                               reduction="sum"))
                rows += len(b)
            # Training-mode passes must not move the buffers.
            self.net.modules.load_state_dict(saved)
            out.append((rows, correct, loss / rows, ties))
            self.set_mode(False)
            z = self.net.forward(xs)
            out.append((len(y), int((z.argmax(1) == ys).sum()),
                        float(F_.cross_entropy(z.to(torch.float64), ys)),
                        near_ties(z.numpy())))
            same = int((z.argmax(1).numpy() == pred).sum())
            gap = float(np.max(np.abs(zt - z.numpy()))) if len(y) else 0.0
            self.set_mode(True)
        return out, same / len(y), gap, float(np.max(np.abs(z.numpy())))


def near_ties(z):
    """Rows whose two best logits are within float32 rounding of each
    other (2^-21 of the largest): their class may go either way."""
    if z.dtype != np.float32:
        return 0
    s = np.sort(z.astype(np.float64), axis=1)
    tol = 2.0 ** -21 * np.max(np.abs(s), axis=1)
    return int(np.sum(s[:, -1] - s[:, -2] <= tol))


# ------------------------------------------------------------ a comparison

def config(**kw):
    c = dict(data="peer", n=320, seed=1, hidden=8, norm="batch", layers=None,
             batch=32, epochs=5, partial="drop", momentum=0.1, weights="new",
             variance="unbiased", estimator="ema", precise_batches=0, eps=1e-5,
             freeze_after=0, lr=0.3, sgd_momentum=0.0, weight_decay=0.0,
             init_seed=1, order="shuffled", dtype="float64", optimizer="sgd",
             adam_beta1=0.9, adam_beta2=0.999, adam_eps=1e-8, warmup=0,
             schedule="constant", step_epochs=10, step_factor=0.1,
             devices=1, sync="no", compositions=0, groups=0, initial=False,
             short=False)
    c.update(kw)
    return c


def float32_pair(**kw):
    """A short configuration in float32 and its float64 twin, which must
    agree with PyTorch to TOL64_SHORT (what the float32 bounds scale)."""
    kw.setdefault("epochs", 1)
    return [config(short=True, **kw),
            config(short=True, dtype="float32", **kw)]


def configs():
    c = [
        # The default network (issue 13's configurations).
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
        # Statistics per device: B 32 split across 4 devices by hand, the
        # buffers device 0's; synchronised, one device's.
        config(devices=4, epochs=3, sgd_momentum=0.9),
        config(devices=2, batch=16, momentum=0.9, weights="old",
               variance="biased", layers="linear:8 batch relu linear:8 "
               "batch relu linear:K", epochs=2),
        config(devices=4, sync="yes", epochs=2),
        # Frozen from the first step: the initial 0 and 1 throughout.
        config(epochs=3, freeze_after="start", sgd_momentum=0.9),
        config(layers="linear:8 batch relu linear:8 batch relu linear:K",
               epochs=2, freeze_after="start", momentum=0.9, weights="old",
               variance="biased"),
        config(epochs=4, freeze_after=1, momentum=0.9, weights="old",
               variance="biased", sgd_momentum=0.9),
        config(batch=50, partial="keep"),
        config(batch=50, partial="keep", variance="biased", freeze_after=1,
               epochs=2),
        config(batch=64, order="sorted:x0"),
        config(batch=16, order="by-label", epochs=3),
        config(batch=2, epochs=1, lr=0.02, seed=3, hidden=3),
        config(estimator="ema-debiased", momentum=0.01, weights="new"),
        config(estimator="cumulative", variance="biased", batch=50,
               partial="keep"),
        config(estimator="precise"),
        config(estimator="precise", precise_batches=2, variance="biased"),
        config(hidden=64, batch=128, epochs=5, eps=1e-3, seed=2),
        # Every layer kind.
        config(layers="linear:16 batch relu linear:12 batch relu linear:K",
               epochs=3, sgd_momentum=0.9, lr=0.1),
        config(layers="linear:8 batch relu linear:8 batch relu linear:8 "
                      "batch relu linear:K", epochs=2, lr=0.1,
               estimator="precise", freeze_after=1),
        config(layers="linear:16 layer relu linear:K", epochs=3),
        config(layers="linear:16 group:4 relu linear:8 group:2 relu linear:K",
               epochs=3, lr=0.1),
        config(layers="linear:16 relu batch linear:K", epochs=3,
               variance="biased", momentum=0.9, weights="old"),
        config(layers="linear:16 dropout:0.2 batch relu dropout:0.5 linear:K",
               epochs=2, init_seed=3),
        config(layers="none linear:8 none batch relu linear:K", epochs=2),
        config(data="digits", layers="image:8x8 conv:4 batch relu linear:K",
               batch=128, epochs=1, lr=0.1, sgd_momentum=0.9),
        config(data="digits", layers="image:8x8 conv:4 group:2 relu conv:4 "
                                     "batch relu linear:K",
               batch=256, epochs=1, lr=0.05, variance="biased",
               estimator="precise"),
        # The optimisers and schedules, on the shipped data.
        config(data="wine", optimizer="nesterov", sgd_momentum=0.9, lr=0.05,
               batch=16, epochs=4),
        config(data="wine", optimizer="adam", lr=0.01, weight_decay=1e-3,
               batch=16, epochs=4),
        config(data="breast-cancer", optimizer="adamw", lr=0.01,
               weight_decay=0.05, adam_beta1=0.8, adam_beta2=0.99,
               adam_eps=1e-6, batch=64, epochs=3),
        config(data="breast-cancer", optimizer="adam", lr=0.003, warmup=12,
               schedule="cosine", batch=64, epochs=4),
        config(data="generated", sgd_momentum=0.9, lr=0.1, warmup=5,
               schedule="step", step_epochs=2, step_factor=0.5, batch=64,
               epochs=5, hidden=16),
        config(data="generated", layers="linear:16 batch relu linear:16 "
                                        "layer relu linear:K",
               optimizer="adamw", lr=0.01, weight_decay=0.01, batch=32,
               epochs=2),
        # Batch dependence: shuffles, and every subset of a tiny part.
        config(compositions=3, batch=16, epochs=2),
        config(compositions=40, batch=2, n=40, epochs=1, lr=0.02),
        # ... and held-out batches of one user (acc_train_by_group).
        config(compositions=3, batch=8, epochs=3, groups=12),
        # A checkpoint's buffers for some units ([layer] initial), kept
        # (initial) and trained on (ema).
        config(initial=True, estimator="initial", epochs=2),
        config(initial=True, epochs=2),
    ]
    # float32, each beside its float64 twin.
    c += float32_pair()
    c += float32_pair(layers="linear:16 batch relu linear:12 batch relu "
                             "linear:K", sgd_momentum=0.9, lr=0.1)
    c += float32_pair(layers="linear:16 layer relu dropout:0.3 linear:K")
    c += float32_pair(data="wine", optimizer="adam", lr=0.01, batch=32)
    c += float32_pair(data="digits", layers="image:8x8 conv:4 batch relu "
                                            "group:2 linear:K",
                      batch=256, lr=0.1)
    return c


def label(cfg):
    base = config()
    parts = ["%s=%s" % (k, cfg[k]) for k in cfg if cfg[k] != base[k]
             and k != "short"]
    return "defaults" if not parts else " ".join(parts)


def options(cfg):
    """bnstudy run's options for cfg: only the settings a configuration
    uses (bnstudy refuses the others rather than ignore them)."""
    o = ["--type", "classifier", "--batch-size", str(cfg["batch"]),
         "--epochs", str(cfg["epochs"]), "--partial", cfg["partial"],
         "--lr", repr(cfg["lr"]), "--weight-decay", repr(cfg["weight_decay"]),
         "--init-seed", str(cfg["init_seed"]), "--order", cfg["order"],
         "--seed", str(cfg["seed"])]
    if cfg["layers"]:
        o += ["--layers", cfg["layers"]]
    else:
        o += ["--hidden", str(cfg["hidden"]), "--norm", cfg["norm"]]
    for key in ("dtype", "optimizer", "warmup", "schedule"):
        if cfg[key] != config()[key]:
            o += ["--" + key, str(cfg[key])]
    for key in ("devices", "sync"):
        if cfg[key] != config()[key]:
            o += ["--set", "layer.%s=%s" % (key, cfg[key])]
    if cfg["optimizer"] in ("sgd", "nesterov"):
        o += ["--sgd-momentum", repr(cfg["sgd_momentum"])]
    else:
        o += ["--adam-beta1", repr(cfg["adam_beta1"]),
              "--adam-beta2", repr(cfg["adam_beta2"]),
              "--adam-eps", repr(cfg["adam_eps"])]
    if cfg["compositions"]:
        o += ["--compositions", str(cfg["compositions"])]
    if cfg["schedule"] == "step":
        o += ["--step-epochs", str(cfg["step_epochs"]),
              "--step-factor", repr(cfg["step_factor"])]
    layers = cfg["layers"].split() if cfg["layers"] else \
        (["batch"] if cfg["norm"] == "batch" else [])
    kinds = {t.split(":")[0] for t in layers}
    if kinds & {"batch", "layer", "group"}:
        o += ["--eps", repr(cfg["eps"])]
    if "batch" in kinds:
        o += ["--momentum", repr(cfg["momentum"]),
              "--momentum-weights", cfg["weights"],
              "--variance", cfg["variance"], "--estimator", cfg["estimator"],
              "--freeze-after", str(cfg["freeze_after"])]
        if cfg["estimator"] == "precise":
            o += ["--precise-batches", str(cfg["precise_batches"])]
    return o


def sources(cfg, tmp):
    """bnstudy run's and bnstudy population's options for cfg's data."""
    if cfg["data"] == "peer":
        x, y = peer_population(cfg["n"], cfg["seed"])
        pop = os.path.join(tmp, "pop.tsv")
        write_population(pop, x, y, cfg["groups"])
        src = ["--population", pop, "--label", "label"] + \
            (["--group", "user"] if cfg["groups"] else [])
        return src, src
    if cfg["data"] == "generated":
        return ["--set", "population.classes=4"], ["--classes", "4"]
    path = os.path.join(REPO, "data", cfg["data"] + ".csv")
    return ["--population", path, "--label", "label"], \
        ["--population", path, "--label", "label"]


# [layer] initial's checkpoint for the default network: units 1.0 and
# 1.5 of its 8 (LAYER.UNIT, the weights file's names); the rest keep 0, 1.
CHECKPOINT = {"1.0": (-0.75, 2.5), "1.5": (1.25, 0.0625)}


def run_bnstudy(bnstudy, cfg, tmp):
    run_src, pop_src = sources(cfg, tmp)
    if cfg["initial"]:
        ck = os.path.join(tmp, "ck.tsv")
        with open(ck, "w") as fp:
            fp.write("feature\trunning_mean\trunning_var\n")
            for u, (m, v) in CHECKPOINT.items():
                fp.write("%s\t%r\t%r\n" % (u, m, v))
        run_src = run_src + ["--set", "layer.initial=" + ck]
    weights, curve = (os.path.join(tmp, f) for f in ("w.tsv", "curve.tsv"))
    out = subprocess.run(
        [bnstudy, "run"] + run_src + ["--write-weights", weights,
                                      "--write-curve", curve] + options(cfg),
        check=True, capture_output=True, text=True).stdout
    summary = parse_tsv(out)
    train = Rows(bnstudy, pop_src, "training")
    held = Rows(bnstudy, pop_src, "held-out")
    levels = label_levels(train.labels + held.labels)
    for r in (train, held):
        r.y = np.array([levels[v] for v in r.labels])
    data = dict(train=train, held=held, k=len(levels),
                perm=train.order(cfg["order"], cfg["seed"]),
                fit_perm=train.order("shuffled", cfg["seed"]),
                held_perm=held.order("shuffled", cfg["seed"]))
    return data, read_tensors(weights), read_tsv(curve), summary[0]


def check_initial(cfg, peer, init, problems):
    """PyTorch's default for nn.Linear and nn.Conv2d: U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) for weight and bias; the normalisations from weight 1,
    bias 0, buffers 0 and 1."""
    for i, m in enumerate(peer.net.layers):
        kind = peer.net.kinds[i]
        if kind in ("linear", "conv"):
            fan_in = int(np.prod(m.weight.shape[1:]))
            bound = 1.0 / math.sqrt(fan_in)
            for part in ("weight", "bias"):
                a = init["%d.%s" % (i, part)]
                if not (np.all(a >= -bound) and np.all(a < bound)):
                    problems.append("initial %d.%s outside [-%g, %g)"
                                    % (i, part, bound, bound))
        elif kind in ("batch", "layer", "group"):
            want = {"weight": 1.0, "bias": 0.0}
            if kind == "batch":
                want.update(running_mean=0.0, running_var=1.0,
                            num_batches_tracked=0.0)
            for part, v in want.items():
                v = np.full(np.shape(init["%d.%s" % (i, part)]), v)
                for u, mv in (CHECKPOINT.items() if cfg["initial"] else ()):
                    layer, unit = map(int, u.split("."))
                    if layer == i and part in ("running_mean", "running_var"):
                        v.reshape(-1)[unit] = mv[part == "running_var"]
                if not np.all(init["%d.%s" % (i, part)] == v):
                    problems.append("initial %d.%s is not %s" % (i, part, v))


# The scores bnstudy writes, by the population and mode they are of.
SCORES = {("held", "train_mode"): ("acc_train_mode", "loss_train_mode"),
          ("held", "eval_mode"): ("acc_eval_mode", "loss_eval_mode"),
          ("train", "train_mode"): ("fit_acc_train_mode",
                                    "fit_loss_train_mode"),
          ("train", "eval_mode"): ("fit_acc_eval_mode", "fit_loss_eval_mode")}


def compare_scores(where, row, want, problems, worst):
    """One curve.tsv or summary row against the peer's scores there."""
    for key, (acc, loss) in SCORES.items():
        rows, correct, peer_loss, ties = want[key]
        got = round(float(row[acc]) * rows)
        if float(row[acc]) != got / rows or abs(got - correct) > ties:
            problems.append("%s: %s %s, peer %d of %d = %r (%d near ties)"
                            % (where, acc, row[acc], correct, rows,
                               correct / rows, ties))
        worst["score_loss"] = max(worst["score_loss"],
                                  rel_diff(float(row[loss]), peer_loss,
                                           floor=0.0))
    if abs(float(row["agreement"]) - want["agreement"]) * want["rows"] > \
            want["ties"]:
        problems.append("%s: agreement %s, peer %r"
                        % (where, row["agreement"], want["agreement"]))
    if "logit_gap" in row:
        gap = float(row["logit_gap"])
        if not want["has_bn"] and gap != 0.0:
            problems.append("%s: logit_gap %r without batch norm" % (where, gap))
        worst["stats"] = max(worst["stats"], rel_diff(gap, want["gap"],
                                                      want["zmax"]))
    if "stats" in want:
        updates = want["stats"][0]
        if int(row["updates"]) != updates:
            problems.append("%s: updates %s, peer %d"
                            % (where, row["updates"], updates))
        names = ["stats_err", "stats_err_rel", "mean_err_rel", "var_err_rel"]
        if "last_stats_err_rel" in row:
            names.append("last_stats_err_rel")
        # Against 1 as well: with precise the errors are rounding.
        for name, v in zip(names, want["stats"][1:]):
            worst["stats"] = max(worst["stats"],
                                 rel_diff(float(row[name]), v, 1.0))
    elif row["stats_err"] != "-":
        problems.append("%s: stats_err %s without batch norm"
                        % (where, row["stats_err"]))
    if "radial" in want and "radial" in row:
        worst["radial"] = max(worst["radial"],
                              abs(float(row["radial"]) - want["radial"]))
        for name, v in (("w_norm", want["w_norm"]),
                        ("w_norm_ratio", want["w_norm_ratio"])):
            worst["param"] = max(worst["param"],
                                 rel_diff(float(row[name]), v))
        for name, v in (("radial_excess", float(row["radial_excess"])),
                        ("peer radial_excess", want["radial_excess"])):
            if not v <= want["excess_limit"]:
                problems.append("%s: %s %r over %g"
                                % (where, name, v, want["excess_limit"]))


def compare(bnstudy, cfg, tmp):
    import torch
    first_config = label(cfg) == "defaults"
    data, tensors, curve, summary = run_bnstudy(bnstudy, cfg, tmp)
    cfg = dict(cfg)
    if not cfg["layers"]:
        cfg["layers"] = default_layers(cfg)
    train, held = data["train"], data["held"]
    problems = []
    if first_config:
        check_schedules(torch, problems)
    init = tensors["initial"]
    peer = Peer(cfg, init, train.x.shape[1], data["k"])
    check_initial(cfg, peer, init, problems)
    f32 = cfg["dtype"] == "float32"
    tol = TOL32 if f32 else TOL64_SHORT if cfg["short"] else TOL64
    has_bn = bool(peer.net.bns())

    def score_all():
        s = {}
        for name, rows, perm in (("held", held, data["held_perm"]),
                                 ("train", train, data["fit_perm"])):
            (tr, ev), same, gap, zmax = peer.score(rows.x, rows.y, perm)
            s[(name, "train_mode")] = tr
            s[(name, "eval_mode")] = ev
            if name == "held":
                s.update(agreement=same, gap=gap, zmax=zmax, rows=len(rows.y),
                         ties=tr[3] + ev[3])
        s["has_bn"] = has_bn
        if has_bn:
            s["stats"] = peer.stats(train.x)
        if peer.net.scale_invariant():
            w = peer.weights_norm()
            s.update(radial=peer.radial, radial_excess=peer.radial_excess,
                     w_norm=w, w_norm_ratio=w / peer.w_norm0,
                     # The exact radial part is of one batch's
                     # statistics; devices of their own normalise several
                     # (docs/definitions.md): no bound then.
                     excess_limit=math.inf if peer.net.devices > 1 else
                     EXCESS32 if f32 else EXCESS64)
        return s

    peer_curve = []

    def on_epoch(ep):
        # The scores had training stopped here: precise on a copy.
        saved = [(bn.running_mean.clone(), bn.running_var.clone())
                 for _, bn in peer.net.bns()]
        peer.apply_precise(peer.tensor(train.x), data["perm"])
        peer_curve.append(score_all())
        for (_, bn), (m, v) in zip(peer.net.bns(), saved):
            bn.running_mean.copy_(m)
            bn.running_var.copy_(v)

    # The inputs of every layer and the gradient at each batch norm's
    # output, of the first batch, for the floors.
    first = {}
    hooks = []
    for i, m in enumerate(peer.net.modules):
        def fwd(mod, inp, out, i=i):
            if "done" in first:
                return
            first.setdefault("in", {})[i] = inp[0].detach().numpy().astype(np.float64)
            if peer.net.kinds[i] == "batch":
                out.register_hook(lambda g, i=i: first.setdefault("g", {}).__setitem__(
                    i, g.detach().numpy().astype(np.float64)))
        hooks.append(m.register_forward_hook(fwd))
    # Linear layers see flattened inputs: keep what each module got.
    peer._inputs = _Lazy(first, "in")
    peer._bn_out_grad = _Lazy(first, "g")
    orig_gradients = peer.gradients

    def gradients(keep):
        g = orig_gradients(keep)
        first["done"] = True
        for h in hooks:
            h.remove()
        return g

    peer.gradients = gradients
    grads = peer.train(train.x, train.y, data["perm"], on_epoch)
    final_scores = score_all()

    d = {}
    got = tensors["grad"]
    if set(got) != set(grads):
        problems.append("gradient tensors %s, peer %s"
                        % (sorted(got), sorted(grads)))
    worst = 0.0
    for name in grads:
        floor = peer.floors.get(name)
        worst = max(worst, rel_diff(np.asarray(got.get(name, [])).reshape(-1),
                                    grads[name].reshape(-1),
                                    None if floor is None
                                    else np.asarray(floor).reshape(-1)))
    d["grad"] = worst / (tol["grad"] / TOL64["grad"])
    final, ref = tensors["final"], peer.tensors()
    if set(final) != set(ref):
        problems.append("final tensors %s, peer %s"
                        % (sorted(final), sorted(ref)))
    per = {n: rel_diff(np.asarray(final.get(n, [])).reshape(-1),
                       ref[n].reshape(-1)) for n in ref}
    # A bias right before a batch norm in training mode has a gradient of
    # 0 up to rounding, and Adam divides that rounding by its own size: the
    # bias walks by up to lr a step in directions rounding alone sets (the
    # batch norm subtracts it again). Two correct implementations can then
    # be 2 lr steps apart, and no closer.
    if cfg["optimizer"] in ("adam", "adamw"):
        steps = cfg["epochs"] * len(batches(data["perm"], cfg["batch"],
                                            cfg["partial"]))
        for _, bn, i, wi in peer.net.scale_invariant():
            n = "%d.bias" % wi
            gap = float(np.max(np.abs(np.asarray(final[n]).reshape(-1)
                                      - ref[n].reshape(-1))))
            if not gap <= 2.0 * cfg["lr"] * steps:
                problems.append("%s walks %g apart, more than 2 lr steps"
                                % (n, gap))
            per.pop(n)
    if os.environ.get("PEER_VERBOSE"):
        print(cfg["layers"], {n: "%.2e" % v for n, v in per.items()})
    d["param"] = max(per.values() or [0.0])
    for n in ref:
        if n.endswith("num_batches_tracked") and not np.array_equal(
                final.get(n), ref[n]):
            problems.append("%s %s, peer %s" % (n, final.get(n), ref[n]))
    w = {"score_loss": 0.0, "stats": 0.0, "radial": 0.0, "param": 0.0}
    if len(curve) != cfg["epochs"] or len(peer_curve) != cfg["epochs"]:
        problems.append("%d curve rows, peer %d, epochs %d"
                        % (len(curve), len(peer_curve), cfg["epochs"]))
    for row, want in zip(curve, peer_curve):
        compare_scores("epoch %s" % row["epoch"], row, want, problems, w)
    compare_scores("summary", summary, final_scores, problems, w)
    if curve and any(curve[-1][k] != summary[k] for k in summary
                     if k in curve[-1]):
        problems.append("the last curve row is not the summary row: " + ", ".join("%s %s/%s" % (k, curve[-1][k], summary[k]) for k in summary if k in curve[-1] and curve[-1][k] != summary[k]))
    d["param"] = max(d["param"], w.pop("param"))
    # Every difference in units of its dtype's bound, against float64's.
    d["param"] /= tol["param"] / TOL64["param"]
    d["score_loss"] = w["score_loss"] / (tol["loss"] / TOL64["loss"])
    d["stats"] = w["stats"] / (tol["stats"] / TOL64["stats"])
    d["radial"] = w["radial"] / (tol["radial"] / TOL64["radial"])
    if cfg["compositions"]:
        compare_dependence(summary, dependence(cfg, final, held,
                                               data["held_perm"], data["k"]),
                           problems)
    return d, problems


def rand_index(rng, n):
    """Uniform on [0, n) by division and rejection, as rand.c's."""
    scale = 0xffffffff // n
    while True:
        k = rng.next() // scale
        if k < n:
            return k


def compositions(n, b, m, seed):
    """The batches of the batch-dependence scores (docs/definitions.md):
    every b-subset when C(n, b) <= m floor(n / b), else m shuffles from
    PCG32(seed, 24), Fisher-Yates from the last element down, each cut
    into floor(n / b) batches."""
    if b < 2 or b > n:
        return []
    per = n // b
    if math.comb(n, b) <= m * per:
        return [list(c) for c in itertools.combinations(range(n), b)]
    rng, v, out = PCG32(seed, PCG32_INITSEQ_COMPOSE), list(range(n)), []
    for _ in range(m):
        for i in range(n - 1, 0, -1):
            j = rand_index(rng, i + 1)
            v[i], v[j] = v[j], v[i]
        out += [v[k * b:(k + 1) * b] for k in range(per)]
    return out


def dependence(cfg, final, held, held_perm, k):
    """The batch-dependence scores of the network of bnstudy's final
    weights and buffers, in PyTorch, on the held-out rows."""
    peer = Peer(cfg, final, held.x.shape[1], k)
    torch = peer.torch
    n, b = len(held.y), cfg["batch"]
    batches = compositions(n, b, cfg["compositions"], cfg["seed"])
    xs = peer.tensor(held.x)
    saved = copy.deepcopy(peer.net.modules.state_dict())
    zt, ze = [], []
    with torch.no_grad():
        peer.set_mode(True)
        for bt in batches:
            zt.append(peer.net.forward(xs[torch.tensor(bt)]).numpy().astype(np.float64))
        # Training-mode passes must not move the buffers evaluation uses.
        peer.net.modules.load_state_dict(saved)
        peer.set_mode(False)
        for bt in batches:
            ze.append(peer.net.forward(xs[torch.tensor(bt)]).numpy().astype(np.float64))
        # One-class batches: the shuffled order, sorted by class.
        peer.set_mode(True)
        by = [i for c in range(k) for i in held_perm if held.y[i] == c]
        correct = one_level_correct(peer, xs, held.y, by, b)
        # One-user batches: the same, sorted by the user's index, which
        # docs/population-files.md numbers as it numbers classes.
        if held.groups[0] is not None:
            users = label_levels(held.groups)
            by = [i for g in range(len(users)) for i in held_perm
                  if users[held.groups[i]] == g]
            by_group = one_level_correct(peer, xs, held.y, by, b) / n
        peer.net.modules.load_state_dict(saved)
    out = output_ranges(batches, zt, ze)
    flips = sum(len(set(np.argmax(np.array([o[0] for o in outs]), axis=1))) > 1
                for outs in out.pop("seen").values())
    out.update(class_flips=flips / n, acc_train_by_class=correct / n)
    if held.groups[0] is not None:
        out.update(acc_train_by_group=by_group)
    return out


def one_level_correct(peer, xs, y, order, b):
    """Training mode's correct rows in the score batches cut from order."""
    correct = 0
    for bt in score_batches(order, b):
        z = peer.net.forward(xs[peer.torch.tensor(bt)])
        correct += int((z.argmax(1).numpy() == y[bt]).sum())
    return correct


def output_ranges(batches, yt, ye):
    """The batch-dependence ranges (docs/definitions.md) of the outputs
    yt (training mode) and ye (evaluation mode) of each batch's rows: the
    largest row's and the mean over rows seen twice or more, in training
    mode, and the largest in evaluation mode; size, the outputs' largest
    magnitude (at least 1), the scale they are compared in."""
    seen = {}
    for bt, t, e in zip(batches, yt, ye):
        for i, r in enumerate(bt):
            seen.setdefault(r, []).append((t[i], e[i]))
    worst = worst_e = total = 0.0
    twice = 0
    size = max([float(np.max(np.abs(t))) for t in yt] + [1.0])
    for outs in seen.values():
        if len(outs) < 2:
            continue
        t = np.array([o[0] for o in outs])
        e = np.array([o[1] for o in outs])
        row = float(np.max(t.max(axis=0) - t.min(axis=0)))
        worst, total, twice = max(worst, row), total + row, twice + 1
        worst_e = max(worst_e, float(np.max(e.max(axis=0) - e.min(axis=0))))
    return dict(dep_batches=len(batches), batch_dependence=worst,
                batch_dependence_mean=total / twice if twice else 0.0,
                batch_dependence_eval=worst_e, zmax=size, seen=seen)


def compare_dependence(summary, want, problems):
    """The summary row's batch-dependence scores against the peer's:
    the counts and accuracies exactly, the ranges to TOL64["grad"] of the
    logits' size."""
    worst = 0.0
    names = ["dep_batches", "class_flips", "acc_train_by_class",
             "batch_dependence_eval"]
    if "acc_train_by_group" in want:
        names.append("acc_train_by_group")
    elif "acc_train_by_group" in summary:
        problems.append("acc_train_by_group written without a group column")
    for name in names:
        if name not in summary:
            problems.append("no %s in the summary" % name)
        elif float(summary[name]) != want[name]:
            problems.append("%s %s, peer %r" % (name, summary[name], want[name]))
    for name in ("batch_dependence", "batch_dependence_mean"):
        worst = max(worst, rel_diff(float(summary[name]), want[name],
                                    want["zmax"]))
    if not worst <= TOL64["grad"]:
        problems.append("batch dependence %.2e of the logits apart" % worst)
    if want["dep_batches"] == 0:
        problems.append("no batch formed: the configuration checks nothing")


class _Lazy:
    def __init__(self, d, key):
        self.d, self.key = d, key

    def __getitem__(self, i):
        return self.d[self.key][i]


# ------------------------------------------------------------ the Jacobian

JACOBIAN_CASES = [(5, 3, 1, 1, 1e-5), (2, 2, 1, 1, 1e-5), (16, 1, 1, 1, 0.5),
                  (3, 2, 2, 3, 1e-5), (2, 1, 3, 2, 0.3)]


def check_jacobian(driver):
    """Training-mode batch norm's Jacobian, bnstudy's backward pass and the
    closed form of docs/definitions.md, against torch.autograd's of
    F.batch_norm in float64: to 1e-12 of gamma / sd, rounding's size for
    a handful of operations, where a missing 1/B term is 1/B off."""
    import torch
    F_ = torch.nn.functional
    worst, problems = 0.0, []
    rng = np.random.default_rng(5)
    for b, c, h, w, eps in JACOBIAN_CASES:
        x = 2.0 + rng.standard_normal((b, c, h, w)) * np.arange(1, c + 1)[None, :, None, None]
        gamma = 0.5 + rng.random(c)
        p = h * w
        ours = np.transpose(x, (0, 2, 3, 1)).reshape(-1)  # (b, p, c)
        text = "%d %d %d %d %r\n%s\n%s\n" % (
            b, c, h, w, eps, " ".join(repr(float(v)) for v in ours),
            " ".join(repr(float(v)) for v in gamma))
        out = subprocess.run([driver], input=text, check=True,
                             capture_output=True, text=True).stdout
        t = torch.from_numpy(x)
        g = torch.from_numpy(gamma)

        def f(inp):
            shaped = inp if h * w > 1 else inp.reshape(b, c)
            return F_.batch_norm(shaped, None, None, weight=g, bias=None,
                                 training=True, eps=eps).reshape(b, c, h, w)

        jac = torch.autograd.functional.jacobian(f, t).numpy()
        var = x.var(axis=(0, 2, 3))
        for line in out.splitlines():
            j, i, k, back, closed = line.split("\t")
            j, i, k = int(j), int(i), int(k)
            # Value i of channel j is row i // p, position i % p.
            bi, pi = divmod(i, p)
            bk, pk = divmod(k, p)
            want = jac[bi, j, pi // w, pi % w, bk, j, pk // w, pk % w]
            scale = gamma[j] / math.sqrt(var[j] + eps)
            for name, v in (("backward", float(back)), ("closed form", float(closed))):
                d = abs(v - want) / scale
                worst = max(worst, d)
                if not d <= 1e-12:
                    problems.append("B %d C %d %dx%d eps %g: %s dy%d/dx%d of "
                                    "channel %d %r, autograd %r"
                                    % (b, c, h, w, eps, name, i, k, j, v, want))
        # The channels do not mix.
        for j in range(c):
            for j2 in range(c):
                if j != j2 and np.any(jac[:, j, :, :, :, j2] != 0):
                    problems.append("autograd mixes channels %d and %d" % (j, j2))
    print("%s  %-62s jacobian=%.2e" % ("ok  " if not problems else "FAIL",
                                       "the training-mode Jacobian, %d batches"
                                       % len(JACOBIAN_CASES), worst))
    for q in problems[:10]:
        print("      " + q)
    return not problems


LIMITS = {"grad": TOL64["grad"], "param": TOL64["param"],
          "score_loss": TOL64["loss"], "stats": TOL64["stats"],
          "radial": TOL64["radial"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"),
                    help="the bnstudy binary (make)")
    ap.add_argument("--only", help="run the configurations whose label "
                                   "contains this text")
    ap.add_argument("--jacobian-driver",
                    default=os.path.join(REPO, "build", "jacobian_driver"),
                    help="tests/peer/jacobian_driver.c, built (make "
                         "build/jacobian_driver)")
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

    jac_ok = args.only or check_jacobian(args.jacobian_driver)
    cfgs = [c for c in configs() if not args.only or args.only in label(c)]
    print("Differences are in units of float64's bounds: a float32 "
          "configuration's are divided by 2^29, a short float64 one's by its "
          "own tighter bounds (TOL64_SHORT).")
    rc = run_checks(cfgs, check, LIMITS, label)
    if not jac_ok:
        print("the Jacobian check failed")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
