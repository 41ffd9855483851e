"""What draws at random before each batch-norm layer, measured rather than
read from the module tree: a dropout called as a function
(`F.dropout(x, p, training=self.training)` in a forward) is no module,
and a dump that looked for nn.Dropout modules missed it.

On a deep copy of the model, with the batch-norm layers in evaluation
mode (so no buffer moves) and every other layer in training mode, one
batch is fed twice under two fixed seeds. Each batch-norm layer's
output is held at the first pass's in the second, so that a layer's
input differs between the two only through what draws at random since
the batch-norm layers before it (a skip connection around them
included), not through what a layer before it already normalised. The
same two seeds with every layer in evaluation mode tell a draw that
evaluation mode makes too (noise added in both modes) from dropout's,
which only training mode makes and whose variance the running
statistics then hold.

Dropout's rate is read where dropout is called: a torch function mode
sees every call of the dropout functions (nn.Dropout's forward calls
them too) with its p; a layer whose input is random in training mode
only with no such call before it (a mask drawn by hand) gets the rate
that would add the variance measured, q / (1 - q) of the input's mean
square.
"""

import copy
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from . import tsv
from .passes import model_dtype

SEEDS = (20261, 20262)

# The functions that drop at random in training mode only, and where
# their p and training arguments sit.
DROPOUTS = tuple(f for f in (
    F.dropout, getattr(F, "dropout1d", None), F.dropout2d, F.dropout3d,
    F.alpha_dropout, F.feature_alpha_dropout, torch.dropout,
    torch.alpha_dropout, torch.feature_dropout,
    torch.feature_alpha_dropout) if f is not None)

TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def call_rate(args, kwargs):
    """(p, on) of one dropout call, from its arguments."""
    p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
    on = kwargs.get("training", kwargs.get("train",
                                           args[2] if len(args) > 2
                                           else True))
    return float(p), bool(on)


def call_site():
    """The first frame outside PyTorch: the user's line that called."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(TORCH_DIR):
        f = f.f_back
    return None if f is None else (f.f_code.co_filename, f.f_lineno)


class Watch(TorchFunctionMode):
    """Every dropout call made with training on: its rate, since the last
    batch-norm call, and its source (the dropout module it runs in, or
    the line a function call came from)."""

    def __init__(self):
        super().__init__()
        self.pending = 0.0
        self.sources = []
        self.module = []  # the dropout modules whose forward is running

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in DROPOUTS:
            p, on = call_rate(args, kwargs)
            if on and p > 0.0:
                self.pending = max(self.pending, p)
                self.sources.append(id(self.module[-1]) if self.module
                                    else call_site())
        return func(*args, **kwargs)


class Pass:
    """One seeded pass of a batch: each batch-norm layer's inputs (one per
    call), the layers' outputs held at those of `hold` where given, and
    the dropout seen before each layer."""

    def __init__(self, model, xb, seed, train_mode, hold=None):
        self.inputs, self.outputs, self.rate = {}, {}, {}
        self.before = set()  # dropout sources called before some layer
        watch = Watch()
        handles = []

        def enter(m, inputs):
            watch.module.append(m)

        def leave(m, inputs, output):
            watch.module.pop()

        for mod in model.modules():
            if isinstance(mod, torch.nn.modules.dropout._DropoutNd):
                handles.append(mod.register_forward_pre_hook(enter))
                handles.append(mod.register_forward_hook(leave))
        for name, mod in tsv.bn_layers(model):
            def pre(m, inputs, name=name):
                self.rate[name] = max(self.rate.get(name, 0.0),
                                      watch.pending)
                watch.pending = 0.0
                self.before.update(watch.sources)

            def post(m, inputs, output, name=name):
                k = len(self.inputs.setdefault(name, []))
                self.inputs[name].append(inputs[0].detach().double().clone())
                self.outputs.setdefault(name, []).append(output.detach())
                if hold is not None and k < len(hold.outputs.get(name, [])):
                    # A clone: a layer after it may work in place.
                    return hold.outputs[name][k].clone()
                return None
            handles.append(mod.register_forward_pre_hook(pre))
            handles.append(mod.register_forward_hook(post))
        model.train(train_mode)
        for _, mod in tsv.bn_layers(model):
            mod.eval()
        try:
            with torch.random.fork_rng(devices=[]), torch.no_grad(), watch:
                torch.manual_seed(seed)
                model(xb)
        finally:
            for h in handles:
                h.remove()


def differs(a, b, name):
    xs, ys = a.inputs.get(name, []), b.inputs.get(name, [])
    return len(xs) != len(ys) or any(
        x.shape != y.shape or not torch.equal(x, y) for x, y in zip(xs, ys))


def added_rate(noisy, clean, name):
    """The rate whose dropout, right before the layer, adds the variance
    measured: q / (1 - q) of the clean input's mean square."""
    num = sum(float(((x - c) ** 2).sum()) for x, c in
              zip(noisy.inputs[name], clean.inputs[name]))
    den = sum(float((c ** 2).sum()) for c in clean.inputs[name])
    r = num / den if den > 0 else 0.0
    return r / (1.0 + r)


def measure(model, xb):
    """({layer: (dropout_before, random_before)}, the dropout sources
    called before some batch-norm layer). random_before: "no" (the input
    the same under both seeds), "training" (different in training mode
    only: dropout's), "both" (in evaluation mode too: no shift between
    the modes, and dropout_before 0)."""
    model = copy.deepcopy(model)
    x = torch.as_tensor(np.array(xb)).to(model_dtype(model))
    a = Pass(model, x, SEEDS[0], True)
    b = Pass(model, x, SEEDS[1], True, hold=a)
    e1 = Pass(model, x, SEEDS[0], False, hold=a)
    e2 = Pass(model, x, SEEDS[1], False, hold=a)
    out = {}
    for name, _ in tsv.bn_layers(model):
        if name not in a.inputs:
            out[name] = (0.0, "no")  # not called on this batch
        elif differs(e1, e2, name):
            out[name] = (0.0, "both")
        elif differs(a, b, name):
            rate = a.rate.get(name, 0.0) or added_rate(a, e1, name)
            out[name] = (rate, "training")
        else:
            out[name] = (0.0, "no")
    return out, len(a.before)

