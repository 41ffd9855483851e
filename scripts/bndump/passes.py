"""The layers' inputs on a set of data, batched as training batched them,
on a copy of the model: per layer the fresh statistics of every row
(float64), each batch's rows and mean, and a bounded sample of the rows
themselves. A pass in evaluation mode moves no buffer; a pass in training
mode (what training fed each layer: the layers before it normalising with
their batch's statistics) runs with every momentum set to 0, so that no
buffer moves there either, and with only the batch-norm layers in
training mode: dropout and every other layer stay in evaluation mode, so
that a pass, and the dump, is the same every time it is taken.

A layer's rows are what it normalises together: an input (N, C) is N
rows, an input (N, C, *spatial) is moved to channels last and flattened
to N * prod(spatial) rows, in the order sample, then each spatial axis.

Padded sequences (lengths given, one a sample): a layer whose input is
(N, C, L) with the model input's L along its last axis has, per batch,
its real positions (the first length of each sample) and its padding
apart: their statistics, and, from its output, which of the two sets
training mode normalised over (Padding below).
"""

import copy
import sys

import numpy as np
import torch

from . import tsv


def as_rows(x):
    c = x.shape[1]
    return x if x.dim() == 2 else x.movedim(1, -1).reshape(-1, c)


def stored_dtype(t):
    """float64 stays; float32, float16 and bfloat16 are kept as float32."""
    return np.float64 if t.dtype == torch.float64 else np.float32


class LayerPass:
    """What one layer saw during one pass."""

    def __init__(self, max_rows, total_samples):
        self.max_rows = max_rows
        self.total_samples = total_samples
        self.stride = None
        self.seen = 0
        self.rows, self.means, self.vars, self.sample = [], [], [], []
        self.units = []
        self.unit_sum = self.unit_sq = 0.0
        self.dtype = np.float64
        self.padding = None  # a Padding, for sequences of the input's L

    def add_padding(self, x, lens, y, mod, length):
        """The batch's real positions and padding, where the layer's input
        is (N, C, L) of the model input's L; else the layer has none."""
        if lens is None or x.dim() != 3 or x.shape[2] != length:
            self.padding = False
        elif self.padding is not False:
            self.padding = self.padding or Padding()
            self.padding.add(x, lens, y, mod)

    def add(self, x):
        r = as_rows(x.detach())
        if self.stride is None:
            per_sample = r.shape[0] // max(1, x.shape[0])
            total = per_sample * self.total_samples
            self.stride = max(1, -(-total // self.max_rows))
            self.dtype = stored_dtype(r)
        d = r.to(torch.float64)
        self.rows.append(d.shape[0])
        self.means.append(d.mean(0).numpy())
        self.vars.append(d.var(0, unbiased=True).numpy() if d.shape[0] > 1
                         else np.full(d.shape[1], np.nan))
        # The units drawn at random are the samples: a feature map's rows
        # are not independent of each other.
        u = x.detach().to(torch.float64)
        u = u if u.dim() == 2 else u.flatten(2).mean(2)
        self.units.append(u.shape[0])
        self.unit_sum = self.unit_sum + u.sum(0).numpy()
        self.unit_sq = self.unit_sq + (u * u).sum(0).numpy()
        first = (-self.seen) % self.stride
        self.sample.append(r[first::self.stride].cpu().numpy()
                           .astype(self.dtype))
        self.seen += d.shape[0]

    def fresh(self):
        """The mean and variance (divisor n) of every row seen, from each
        batch's, combined exactly as one pass would give them."""
        b = np.array(self.rows, dtype=np.float64)[:, None]
        m = np.array(self.means)
        v = np.nan_to_num(np.array(self.vars))
        n = b.sum()
        mu = (b * m).sum(0) / n
        ss = ((b - 1) * v + b * (m - mu) ** 2).sum(0)
        return mu, ss / n

    def unit_var(self):
        """The variance (divisor n) of the samples' means."""
        n = float(sum(self.units))
        mu = self.unit_sum / n
        return np.maximum(self.unit_sq / n - mu * mu, 0.0)

    def batch_var(self):
        """The mean of the batches' unbiased variances: what a moving
        average of them settles on."""
        v = np.array(self.vars)
        return np.nanmean(v, 0)

    def rows_sample(self, features):
        if not self.sample:
            return np.zeros((0, features), dtype=self.dtype)
        return np.ascontiguousarray(np.concatenate(self.sample))


# A standardised output's mean over the positions a batch was normalised
# over is 0 to rounding (float32's 1e-7 relative); over another set it is
# the gap between the sets' means in units of the spread.
POSITIONS_TOL = 1e-3


class Padding:
    """One layer's real positions and padding over a pass: per batch the
    rows, mean and unbiased variance of each, and from the output,
    standardised by the layer's own affine weights, the largest mean over
    the real positions and over every one."""

    def __init__(self):
        self.real, self.pad = [], []
        self.z_real = self.z_all = 0.0
        self.z_known = False

    @staticmethod
    def _moments(r):
        n = r.shape[0]
        if n == 0:
            return (0, None, None)
        return (n, r.mean(0).numpy(),
                r.var(0, unbiased=True).numpy() if n > 1
                else np.zeros(r.shape[1]))

    def add(self, x, lens, y, mod):
        d = x.detach().to(torch.float64).movedim(1, -1)   # (N, L, C)
        mask = torch.arange(d.shape[1])[None, :] < lens[:, None]
        self.real.append(self._moments(d[mask]))
        self.pad.append(self._moments(d[~mask]))
        w = getattr(mod, "weight", None)
        if y is None or w is None or not mask.any() or mask.all():
            return
        w = w.detach().to(torch.float64)
        b = mod.bias.detach().to(torch.float64)
        keep = w.abs() > 1e-6
        if not keep.any():
            return
        z = ((y.detach().to(torch.float64).movedim(1, -1) - b) / w)[..., keep]
        self.z_real = max(self.z_real, float(z[mask].mean(0).abs().max()))
        self.z_all = max(self.z_all, float(z.mean((0, 1)).abs().max()))
        self.z_known = True

    @staticmethod
    def _pooled(parts):
        parts = [p for p in parts if p[0] > 0]
        if not parts:
            return None, None
        b = np.array([p[0] for p in parts], dtype=np.float64)[:, None]
        m = np.array([p[1] for p in parts])
        v = np.array([p[2] for p in parts])
        n = b.sum()
        mu = (b * m).sum(0) / n
        return mu, ((b - 1) * v + b * (m - mu) ** 2).sum(0) / n

    def share(self):
        """The padded share of the rows seen."""
        r = sum(p[0] for p in self.real)
        return sum(p[0] for p in self.pad) / float(r + sum(p[0] for p in
                                                           self.pad))

    def fresh(self):
        """(real mean, real variance, padding's mean, padding's variance),
        divisor n; the padding's 0 where there is none."""
        rm, rv = self._pooled(self.real)
        pm, pv = self._pooled(self.pad)
        if pm is None:
            pm, pv = np.zeros_like(rm), np.zeros_like(rv)
        return rm, rv, pm, pv

    def positions(self):
        """Which positions training mode normalised over: "real", "all",
        or "unknown" (no batch with both, or no affine weight to undo)."""
        if not self.z_known:
            return "unknown"
        if self.z_real < POSITIONS_TOL <= self.z_all:
            return "real"
        if self.z_all < POSITIONS_TOL <= self.z_real:
            return "all"
        return "unknown"

    def recomputed(self):
        """The real positions' cumulative average over the batches, as
        update_bn would give for a masked layer: the mean of the batches'
        means and of their unbiased variances."""
        parts = [p for p in self.real if p[0] > 1]
        return (np.mean([p[1] for p in parts], 0),
                np.mean([p[2] for p in parts], 0))


def cuts(n, batch_size, sizes=None):
    """The first row of each batch and the end: the sizes given (the
    batches training took, --batches), or consecutive batches of
    batch_size whose last, if of one sample, joins the one before it,
    since training mode cannot normalise a single row."""
    if sizes is not None:
        return [0] + [int(c) for c in np.cumsum(sizes)]
    starts = list(range(0, n, batch_size))
    if len(starts) > 1 and n - starts[-1] == 1:
        starts.pop()
    return starts + [n]


def label_exchange(y, cut):
    """The batches' classes against random batches': the chi-square of
    their class counts, sum over batches k and classes i of (c_ki - b_k
    p_i)^2 / (b_k p_i), over its mean under batches of the same sizes
    drawn at random without replacement (hypergeometric counts, variance
    b_k p_i (1 - p_i) (n - b_k) / (n - 1)): sum_k (C - 1) (n - b_k) /
    (n - 1) for C classes. About 1 for shuffled batches, whatever drifts
    through them; about b for batches of one class each. None where it
    is undefined (one class, one batch of every row) or where the labels
    are not one class a row (one-hot rows, a label per position: their
    flattened counts would not be the batches' classes)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        return None
    classes, idx = np.unique(y, return_inverse=True)
    n = len(y)
    p = np.bincount(idx, minlength=len(classes)) / n
    chi = expect = 0.0
    for i, end in zip(cut[:-1], cut[1:]):
        b = end - i
        c = np.bincount(idx[i:end], minlength=len(classes))
        chi += float(np.sum((c - b * p) ** 2 / (b * p)))
        expect += (len(classes) - 1) * (n - b) / (n - 1)
    return chi / expect if expect > 0 else None


def batches(x, batch_size, sizes=None):
    c = cuts(x.shape[0], batch_size, sizes)
    for i, end in zip(c[:-1], c[1:]):
        yield i, x[i:end]


def model_dtype(model):
    for t in list(model.parameters()) + list(model.buffers()):
        if t.is_floating_point():
            return t.dtype
    return torch.float32


def set_mode(model, train_mode):
    """Training mode for the batch-norm layers only (or evaluation mode
    for all): the batch's statistics are what training mode means here,
    and an unseeded dropout mask would make every training-mode score and
    statistic a draw."""
    model.eval()
    for _, mod in tsv.bn_layers(model):
        mod.train(train_mode)


def run(model, x, batch_size, max_rows, what, train_mode=False,
        progress=True, sizes=None, lengths=None):
    """One pass of x through a deep copy of model, in evaluation mode or,
    with train_mode, in training mode with every momentum 0, batched by
    batch_size or by the sizes given; returns {layer name: LayerPass} and
    the order the layers were first called in. With lengths (one a
    sample) each layer over the input's positions keeps a Padding."""
    model = copy.deepcopy(model)
    layers = tsv.bn_layers(model)
    seen = {name: LayerPass(max_rows, x.shape[0]) for name, _ in layers}
    order = []
    handles = []
    current = {}
    length = x.shape[-1]
    for name, mod in layers:
        def hook(m, inputs, output, name=name):
            if name not in order:
                order.append(name)
            seen[name].add(inputs[0])
            if lengths is not None:
                seen[name].add_padding(inputs[0], current["lens"], output,
                                       m, length)
        handles.append(mod.register_forward_hook(hook))
    dtype = model_dtype(model)
    nb = len(cuts(x.shape[0], batch_size, sizes)) - 1
    step = max(1, nb // 10)
    set_mode(model, train_mode)
    for _, mod in layers:
        mod.momentum = 0.0 if train_mode else mod.momentum
    try:
        with torch.no_grad():
            for k, (i, xb) in enumerate(batches(x, batch_size, sizes)):
                if lengths is not None:
                    current["lens"] = torch.as_tensor(
                        np.asarray(lengths[i:i + len(xb)]))
                model(torch.as_tensor(np.array(xb)).to(dtype))
                if progress and nb >= 50 and (k + 1) % step == 0:
                    print("dump_bn_inputs: %s: %d of %d batches" % (
                        what, k + 1, nb), file=sys.stderr, flush=True)
    finally:
        for h in handles:
            h.remove()
    return seen, order

