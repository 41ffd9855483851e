#!/usr/bin/python3
"""The scenario suite: `bnstudy diagnose` on models it did not train.

Small PyTorch models (an MLP with BatchNorm1d, a CNN with BatchNorm2d, a
small ResNet, and the architectures an outside evaluation found missing:
a three-layer MLP with dropout, a Conv1d with BatchNorm1d on (N, C, L),
batch norm after ReLU, a pre-activation residual MLP; and eight blocks
with dropout directly before each batch norm; models.py) are
trained here on the shipped Digits data,
seeded, on one thread, each with one cause of a train/eval disagreement
injected (and healthy ones, the dropout MLP and the BN-after-ReLU MLP
also 256 wide on a training set that leaves a last batch of 3, where a
mostly-zero feature's rare row can crowd that batch); a 1-D CNN over
seeded padded sequences
(models.SeqCNN) with its masked batch norm right, with its buffers over
the padded tensor, and as nn.BatchNorm1d with the evaluation sequences
padded longer, dumped with the lengths; and the MLP trained on 8 devices
by hand, dumped with --devices. Each is then saved as a researcher would,
dumped and diagnosed exactly as README "Your model, then bnstudy" says,
and the suite asserts, against its own measurements rather than the
dump's:

  * the verdict (the report's first line) names the injected cause and no
    other, and a healthy model comes out healthy (a healthy ResNet trained
    with SGD, whose buffers trail its moving weights a little, too: unless
    the suite measures that lag costing evaluation mode more than 0.03,
    when the verdict must be lagging and its fix must close the gap; and
    an injected cause found by its size that the suite measures costing
    no more than 0.03, the modes within 0.03 and its own fix raising
    evaluation mode by 0.03 or less, is healthy with the cause in a
    note);
  * where the model's evaluation mode trails its training mode by more
    than 0.03, the fix the verdict recommends first, applied here by the
    suite itself (torch.optim.swa_utils.update_bn for recomputed
    statistics, the buffers copied back, eps raised), brings evaluation
    mode within 0.03 of training mode; where no fix exists (sorted
    batches) the report says that none closes the gap; where evaluation
    mode already scores at or above training mode, the report says to
    keep it where the suite measures that recomputing would not raise it
    by more than 0.03, and where it would, the fix the report recommends
    raises it by more than 0.03;
  * where the checkpoint cannot tell frozen from lagging (a momentum of 0
    set back before saving, a layer frozen through a fine-tune of a
    pretrained model), the report says so; a recording tells frozen;
  * the dump leaves the checkpoint's file and its buffers byte-identical,
    and a state_dict loads with --module;
  * a float32 recording of a healthy model replays to float32 rounding;
  * the per-device model's training mode at B/K, not at B, is what
    differs from evaluation mode (the suite's own measurement), and the
    report names SyncBatchNorm; recompute-real is applied by the suite
    from the mask the model carries, by hand.
  * a recording of the padded-sequence and per-device runs, given
    BNRecorder's forms of the dumper's options (batch(lengths),
    devices=K, write's scores), names the cause a dump of the same model
    names;
  * a model trained on a stream whose contrast drifts over the last
    epochs, batches shuffled, dumped in training's order, is not called
    not-exchangeable (whatever else the drift leaves true), and the
    dump's label_exchange matches the suite's own Monte Carlo of random
    batches, beyond 4 exactly for batches grouped by class; one whose
    input offset drifts over every step under a slow momentum
    (drift-offset) leaves evaluation mode more than 0.03 behind, is
    lagging, and the fix recommended closes the gap;
  * the dump measures what draws at random before each layer: a model
    with F.dropout in its forward (no module) gets dropout-shift as the
    nn.Dropout one does, and models.RandomNet's F.dropout, nothing and
    noise in both modes are told apart.

Prints a line per check and `N passed, N failed`; exits 1 on a failure.
--only NAME runs the scenarios whose name contains NAME; --keep DIR
keeps every checkpoint and dump there.
"""

import argparse
import contextlib
import copy
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))
import models  # noqa: E402
from dump_bn_inputs import BNRecorder  # noqa: E402

DUMPER = os.path.join(REPO, "scripts", "dump_bn_inputs.py")
# The bar: a working fix leaves evaluation mode within 0.03 of
# training mode.
CLOSE = 0.03
BATCH = 50
N_TRAIN = 1400


# ------------------------------------------------------------- the data

def digits():
    d = np.loadtxt(os.path.join(REPO, "data", "digits.csv"), delimiter=",",
                   skiprows=1)
    x, y = d[:, :64].astype(np.float32), d[:, 64].astype(np.int64)
    perm = np.random.default_rng(2026).permutation(len(x))
    tr, ev = perm[:N_TRAIN], perm[N_TRAIN:]
    return x[tr], y[tr], x[ev], y[ev]


def as_images(x, mask=None):
    img = x.reshape(-1, 1, 8, 8)
    if mask is None:
        return img
    return np.concatenate([img, mask.reshape(-1, 1, 8, 8)], axis=1)


SEQ_LEN = 32


def sequences(n, seed, padded_to=None):
    """Padded sequences of 4 classes told by their period, lengths 4 to
    SEQ_LEN, a level of 2 beside the wave (so that padding's zeros sit
    away from the real positions' mean); (N, 2, L): the values, 0 at
    padding, and the mask; the labels; the lengths."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    lens = rng.integers(4, SEQ_LEN + 1, n)
    t = np.arange(SEQ_LEN)
    period = np.array([3.0, 4.5, 7.0, 11.0])[y]
    x = np.sin(2 * np.pi * t[None] / period[:, None] +
               rng.uniform(0, 2 * np.pi, n)[:, None])
    x = x + 0.5 * rng.standard_normal((n, SEQ_LEN)) + 2.0
    mask = (t[None] < lens[:, None]).astype(np.float32)
    if padded_to:
        x = np.pad(x, ((0, 0), (0, padded_to - SEQ_LEN)))
        mask = np.pad(mask, ((0, 0), (0, padded_to - SEQ_LEN)))
    return (np.stack([(x * mask).astype(np.float32), mask], 1),
            y.astype(np.int64), lens.astype(np.int64))


# ------------------------------------------------------------ training

def orders(y, epochs, how, seed):
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        if how == "sorted":
            yield np.argsort(y, kind="stable")
        else:
            yield rng.permutation(len(y))


def train(model, x, y, epochs, batch=BATCH, how="shuffled", lr=3e-3,
          seed=0, at_epoch=None, sgd=False, chunks=None, around=None):
    """Adam (or SGD with momentum 0.9) on cross-entropy; at_epoch(epoch,
    model) runs before each epoch (where a fault is injected); chunks(rng)
    gives an epoch's batches where they are not cut from an order;
    around(rows), a context each step runs in (a recorder's). Returns
    the last epoch's order (and its batches' sizes, with chunks)."""
    opt = (torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9) if sgd
           else torch.optim.Adam(model.parameters(), lr=lr))
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    rng = np.random.default_rng(seed)
    last = None
    for e, order in enumerate(orders(y, epochs, how, seed)):
        model.train()
        if at_epoch:
            at_epoch(e, model)
        cut = chunks(rng) if chunks else [order[i:i + batch] for i in
                                          range(0, len(order), batch)]
        for rows in cut:
            b = torch.from_numpy(rows)
            with around(rows) if around else contextlib.nullcontext():
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(xt[b]),
                                                  yt[b]).backward()
                opt.step()
        last = np.concatenate(cut) if chunks else order
        sizes = [len(rows) for rows in cut]
    model.eval()
    return (last, sizes) if chunks else last


def train_devices(model, x, y, epochs, batch, k, lr=1e-3, seed=0):
    """Data-parallel training on k devices without SyncBatchNorm, in one
    process: each shuffled batch split into k consecutive shards (as
    np.array_split cuts them), each normalised by its own rows, the
    buffers moved by device 0's shard only (the others' tracking off for
    their pass, as a replica's buffers are dropped for device 0's), the
    gradient the shards' mean loss (what DistributedDataParallel
    averages). Returns the last epoch's order."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    bns = bn_modules(model)
    model.train()
    for order in orders(y, epochs, "shuffled", seed):
        for i in range(0, len(order), batch):
            opt.zero_grad()
            loss = 0.0
            for d, rows in enumerate(np.array_split(order[i:i + batch], k)):
                for b in bns:
                    b.track_running_stats = d == 0
                b = torch.from_numpy(rows)
                loss = loss + torch.nn.functional.cross_entropy(
                    model(xt[b]), yt[b]) / k
            loss.backward()
            opt.step()
    for b in bns:
        b.track_running_stats = True
    model.eval()
    return order


def bn_modules(model):
    return [m for m in model.modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


# ------------------------------------------------- the suite's own score

def spans(n, batch):
    """Consecutive batches, a last one of a single row joined to the one
    before (training mode cannot normalise one row)."""
    cuts = list(range(0, n, batch)) + [n]
    if len(cuts) > 2 and cuts[-1] - cuts[-2] == 1:
        del cuts[-2]
    return zip(cuts[:-1], cuts[1:])


def outputs(model, x, train_mode, batch=BATCH):
    """Training mode is the batch-norm layers' only, as the dump's: a
    dropout mask would make every training-mode score a draw."""
    m = copy.deepcopy(model)
    m.eval()
    for b in bn_modules(m):
        b.train(train_mode)
    with torch.no_grad():
        return torch.cat([m(torch.from_numpy(x[i:j]))
                          for i, j in spans(len(x), batch)])


def accuracy(model, x, y, train_mode, batch=BATCH):
    return float((outputs(model, x, train_mode, batch).argmax(1).numpy() ==
                  y).mean())


def update_bn(model, x):
    """PyTorch's own recomputation of the statistics, with dropout off:
    update_bn puts the whole model in training mode, and a dropout left on
    would put its noise back into the variances (dropout's variance
    shift), so the copy's dropout modules (and FuncDropMLP, whose
    F.dropout reads its p) are given a rate of 0 while it runs."""
    m = copy.deepcopy(model)
    drops = [d for d in m.modules()
             if isinstance(d, (torch.nn.modules.dropout._DropoutNd,
                               models.FuncDropMLP))]
    rates = [d.p for d in drops]
    for d in drops:
        d.p = 0.0
    loader = [torch.from_numpy(x[i:i + BATCH]) for i in
              range(0, len(x), BATCH)]
    torch.optim.swa_utils.update_bn(loader, m)
    for d, r in zip(drops, rates):
        d.p = r
    return m


def real_recompute(model, x):
    """The masked layers' statistics recomputed over the real positions
    only, by hand from the mask the model carries: for each training
    batch the real positions' mean and unbiased variance at each layer's
    input (training mode, momentum 0 on a copy), averaged over batches."""
    m = copy.deepcopy(model)
    layers = [b for b in bn_modules(m) if isinstance(b, models.MaskedBN)]
    got = {id(b): [] for b in layers}

    def hook(b, inputs, output):
        h, mask = inputs
        keep = mask[:, 0].bool()
        r = h.detach().double().movedim(1, -1)[keep]
        got[id(b)].append((r.mean(0), r.var(0, unbiased=True)))
    handles = [b.register_forward_hook(hook) for b in layers]
    m.train()
    for b in layers:
        b.momentum = 0.0
    with torch.no_grad():
        for i, j in spans(len(x), BATCH):
            m(torch.from_numpy(x[i:j]))
    for h in handles:
        h.remove()
    for b in layers:
        b.running_mean.copy_(torch.stack([a for a, _ in got[id(b)]]).mean(0))
        b.running_var.copy_(torch.stack([v for _, v in got[id(b)]]).mean(0))
        b.momentum = 0.1
    m.eval()
    return m


def apply_fix(fix, s):
    m = s["model"]
    if fix == "recompute-real":
        return real_recompute(m, s["xtr"])
    if fix == "recompute-train":
        return update_bn(m, s["xtr"])
    if fix == "adapt-eval":
        return update_bn(m, s["xev"])
    if fix == "reload":
        r = copy.deepcopy(m)
        sd = torch.load(s["reload"])
        r.load_state_dict({k: v for k, v in sd.items()
                           if "running" in k or "num_batches" in k},
                          strict=False)
        return r
    if fix == "eps":
        r = copy.deepcopy(m)
        for b in bn_modules(r):
            b.eps = max(b.eps, 1e-3)
        return r
    raise ValueError(fix)


# ---------------------------------------------------------- the scenarios

# The architectures of an outside evaluation (models.py), by name.
MORE = {"drop": models.DropMLP, "conv1d": models.Conv1dNet,
        "postbn": models.PostBNMLP, "preres": models.PreResMLP}
MORE_T = tuple(MORE)


def build(arch, momentum=0.1, channels=1, head_bn=False, dropout=0.1,
          buffers="real", hidden=64):
    torch.manual_seed(7)
    if arch == "seq":
        return models.SeqCNN(buffers=buffers, momentum=momentum)
    if arch == "mlp":
        return models.MLP(momentum=momentum)
    if arch == "res":
        return models.ResNet(momentum=momentum)
    if arch == "drop":
        return models.DropMLP(hidden=hidden, p=dropout, momentum=momentum)
    if arch == "postbn":
        return models.PostBNMLP(hidden=hidden, momentum=momentum)
    if arch == "fdrop":
        return models.FuncDropMLP(p=dropout, momentum=momentum)
    if arch == "deepdrop":
        return models.DeepDropMLP(p=dropout, momentum=momentum)
    if arch in MORE:
        return MORE[arch](momentum=momentum)
    return models.CNN(channels=channels, momentum=momentum, head_bn=head_bn)


def shaped(arch, x):
    """The MLP's rows, the CNN's raw images, the ResNet's scaled to [0, 1]
    (its plain SGD step wants inputs of order 1)."""
    if arch == "res":
        return as_images(x / np.float32(16))
    if arch == "conv1d":
        return x.reshape(-1, 8, 8) / np.float32(16)
    if arch in MORE or arch in ("fdrop", "deepdrop"):
        return x / np.float32(16)
    return x if arch == "mlp" else as_images(x)


def scenario(m, arch, data, order, epochs, **extra):
    """What a scenario hands on: model m trained on data's training rows
    in the order order (shaped for arch) for epochs, the evaluation rows,
    and any extra keys (batch, sizes, devices)."""
    xtr, ytr, xev, yev = data
    return dict(model=m, xtr=shaped(arch, xtr)[order], ytr=ytr[order],
                xev=shaped(arch, xev), yev=yev, epochs=epochs, **extra)


def healthy(arch, data):
    xtr, ytr = data[:2]
    m = build(arch)
    order = train(m, shaped(arch, xtr), ytr, 10)
    return scenario(m, arch, data, order, 10)


# Wide: 1353 training rows, 27 batches of BATCH and a last one of 3.
WIDE_HIDDEN, WIDE_ROWS = 256, 27 * BATCH + 3


def healthy_wide(arch, data):
    """An outside red team's healthy model: hidden layers of 256, whose
    ReLU and dropout leave a few of the next layer's features mostly
    zero (a heavy-tailed, high-kurtosis feature), on a training set that
    leaves a small last batch, where one rare nonzero row moves that
    batch's mean far from the feature's."""
    xtr, ytr, xev, yev = data
    data = (xtr[:WIDE_ROWS], ytr[:WIDE_ROWS], xev, yev)
    m = build(arch, hidden=WIDE_HIDDEN)
    order = train(m, shaped(arch, data[0]), data[1], 10)
    return scenario(m, arch, data, order, 10)


def never_filled(arch, data):
    """The weights loaded into a new model without the running
    statistics (a filter on the state_dict's keys)."""
    s = healthy(arch, data)
    full = s["model"].state_dict()
    weights = {k: v for k, v in full.items()
               if "running" not in k and "num_batches" not in k}
    fresh = build(arch)
    fresh.load_state_dict(weights, strict=False)
    fresh.eval()
    s["model"], s["full"] = fresh, full
    return s


def few_updates(arch, data):
    """A momentum of 0.01 (the Keras habit of 0.99, written the other way
    round) over one epoch: 28 updates keep 0.99^28 = 0.75 of the initial
    0 and 1."""
    xtr, ytr = data[:2]
    m = build(arch, momentum=0.01)
    order = train(m, shaped(arch, xtr), ytr, 1, lr=1e-2)
    return scenario(m, arch, data, order, 1)


LOW_CONTRAST = np.float32(0.3)


def frozen(arch, data):
    """Pretrained for two epochs on low-contrast images, then fine-tuned
    for eight on the real ones with the buffers frozen
    (track_running_stats off: the layers normalise with the batch's
    statistics and leave the buffers be), tracking turned back on to
    save."""
    xtr, ytr = data[:2]
    m = build(arch)
    train(m, shaped(arch, xtr) * LOW_CONTRAST, ytr, 2, lr=1e-2)

    def freeze(e, model):
        for b in bn_modules(model):
            b.track_running_stats = False
    order = train(m, shaped(arch, xtr), ytr, 8, lr=1e-2, seed=1,
                  at_epoch=freeze)
    for b in bn_modules(m):
        b.track_running_stats = True
    return scenario(m, arch, data, order, 10)


def lagging(arch, data):
    """Ten epochs with an augmentation that lowers the contrast, then one
    without it, with a momentum of 0.01: the data moved in the last 28
    updates, and the buffers keep 0.99^28 = 0.75 of before (and of the
    initial values 0.99^308 = 0.045)."""
    xtr, ytr = data[:2]
    m = build(arch, momentum=0.01)
    train(m, shaped(arch, xtr) * LOW_CONTRAST, ytr, 10, lr=1e-2)
    order = train(m, shaped(arch, xtr), ytr, 1, lr=1e-2, seed=1)
    return scenario(m, arch, data, order, 11)


def healthy_sgd(arch, data):
    """Healthy, with SGD: six epochs of batches of 32 at a learning rate of
    0.05 with momentum 0.9 move the weights fast enough that a feature or
    two of the buffers trail the final weights' activations a little."""
    xtr, ytr = data[:2]
    m = build(arch)
    order = train(m, shaped(arch, xtr), ytr, 6, batch=32, lr=0.05, sgd=True)
    return scenario(m, arch, data, order, 6, batch=32)


def momentum0(arch, data, restore=False):
    """Pretrained for two epochs on low-contrast images, then fine-tuned
    for eight on the real ones with every momentum set to 0 ("freeze the
    statistics": PyTorch accepts it, and num_batches_tracked still counts
    every step); saved so, or with the momentum set back to 0.1."""
    xtr, ytr = data[:2]
    m = build(arch)
    train(m, shaped(arch, xtr) * LOW_CONTRAST, ytr, 2, lr=1e-2)
    for b in bn_modules(m):
        b.momentum = 0.0
    order = train(m, shaped(arch, xtr), ytr, 8, lr=1e-2, seed=1)
    for b in bn_modules(m):
        b.momentum = 0.1 if restore else 0.0
    return scenario(m, arch, data, order, 10)


def momentum0_restored(arch, data):
    return momentum0(arch, data, restore=True)


def inverted(x):
    return np.float32(16) - x


def freeze_bn(e, model):
    for b in bn_modules(model):
        b.eval()


def frozen_finetune(arch, data):
    """The fine-tuning recipe that keeps a pretrained model's batch norm
    frozen: four epochs on the images, then three on inverted ones with
    every batch-norm layer in evaluation mode, dumped with the fine-tune's
    epochs. The weights learn the frozen statistics, so evaluation mode
    beats training mode, whose batch statistics they never saw."""
    xtr, ytr, xev, yev = data
    m = build(arch)
    train(m, shaped(arch, xtr), ytr, 4)
    order = train(m, shaped(arch, inverted(xtr)), ytr, 3, seed=1,
                  at_epoch=freeze_bn)
    return dict(model=m, xtr=shaped(arch, inverted(xtr))[order],
                ytr=ytr[order], xev=shaped(arch, inverted(xev)), yev=yev,
                epochs=3)


def class_chunks(y, batch, rng):
    """A class-balanced sampler gone wrong: each batch is of one class,
    the classes cut into batches of up to `batch`, in a random order."""
    def epoch(_):
        out = []
        for k in range(10):
            rows = rng.permutation(np.where(y == k)[0])
            out += [rows[i:i + batch] for i in range(0, len(rows), batch)]
        return [out[i] for i in rng.permutation(len(out))]
    return epoch


def grouped_batches(arch, data):
    """Every batch of one class, of unequal sizes (each class's remainder
    a smaller batch): dumped with the batches' sizes (--batches)."""
    xtr, ytr = data[:2]
    m = build(arch)
    order, sizes = train(m, shaped(arch, xtr), ytr, 10,
                         chunks=class_chunks(ytr, BATCH,
                                             np.random.default_rng(3)))
    return scenario(m, arch, data, order, 10, sizes=sizes)


def drift_train(m, x, y, epochs, move, first=0, batch=BATCH, seed=0):
    """Adam on a stream whose inputs drift smoothly: from epoch `first` on,
    move(xb, t) moves each step's inputs by t, which rises in equal steps
    to 1 at the last step; every epoch's batches shuffled. Returns the
    last epoch's inputs and labels as training fed them, moved, in its
    order."""
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    rng = np.random.default_rng(seed)
    nb = -(-len(x) // batch)
    start, last = first * nb, epochs * nb
    m.train()
    for e in range(epochs):
        order = rng.permutation(len(x))
        fed = []
        for k, i in enumerate(range(0, len(order), batch)):
            rows = order[i:i + batch]
            t = max(e * nb + k + 1 - start, 0) / (last - start)
            xb = move(x[rows], t)
            fed.append(xb)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(
                m(torch.from_numpy(xb)), torch.from_numpy(y[rows])).backward()
            opt.step()
    m.eval()
    return np.concatenate(fed), y[order]


def drift_shuffled(arch, data, drifting=3):
    """An outside red team's drift: the inputs' contrast rises smoothly
    from 0.3 to 1 over the last `drifting` of ten epochs (an augmentation
    schedule, a sensor that ages), every epoch's batches shuffled; dumped
    with the last epoch's inputs as training fed them, in its order, and
    the evaluation images at the final contrast. The batch means under
    the final weights follow the drift in the dump's order, far beyond
    what random batches give, but a smooth trend over the epoch explains
    them, and the batches' classes are as random batches' (the labels):
    not not-exchangeable."""
    xtr, ytr, xev, yev = data
    m = build(arch)
    x, y = drift_train(
        m, shaped(arch, xtr), ytr, 10,
        lambda xb, t: xb * np.float32(LOW_CONTRAST + (1 - LOW_CONTRAST) * t),
        first=10 - drifting)
    return dict(model=m, xtr=x, ytr=y, xev=shaped(arch, xev), yev=yev,
                epochs=10)


def drift_shuffled_faster(arch, data):
    """drift_shuffled in the last epoch alone: the whole drift, 0.3 to 1,
    in its 28 steps, which the buffers (momentum 0.1) trail."""
    return drift_shuffled(arch, data, drifting=1)


# drift_offset's offset at the last step, in standard deviations of the
# inputs as the architecture takes them.
DRIFT_OFFSET = 8.0


def drift_offset(arch, data):
    """The outside evaluation's drift with a gap (its lag-drift-conv1d-m002
    and lag-drift-cnn2d-m002): a sensor offset growing linearly over every
    step of twelve epochs of shuffled batches of 32, from 0 to
    DRIFT_OFFSET standard deviations of the inputs, a momentum of 0.02;
    dumped with the last epoch's inputs as fed, the evaluation data at
    the final offset. The buffers, a moving average over about 50 steps,
    trail the drift by (1 - p) / p = 49 steps of it, which costs
    evaluation mode more than 0.03: lagging, not not-exchangeable (the
    dump's batch means follow the drift over the epoch), and recomputing
    under the final weights closes the gap."""
    xtr, ytr, xev, yev = data
    m = build(arch, momentum=0.02)
    x = shaped(arch, xtr)
    off = np.float32(DRIFT_OFFSET * x.std())
    fed, y = drift_train(m, x, ytr, 12, lambda xb, t: xb + off * np.float32(t),
                         batch=32)
    return dict(model=m, xtr=fed, ytr=y, xev=shaped(arch, xev) + off,
                yev=yev, epochs=12, batch=32)


def shift(arch, data):
    """Evaluation images at half the contrast of the training ones."""
    s = healthy(arch, data)
    s["xev"] = s["xev"] * np.float32(0.5)
    return s


def not_exchangeable(arch, data):
    """Every epoch in class order, the evaluation set kept in class order
    too (a loader without shuffling)."""
    xtr, ytr, xev, yev = data
    m = build(arch)
    order = train(m, shaped(arch, xtr), ytr, 10, how="sorted")
    ev = np.argsort(yev, kind="stable")
    return dict(model=m, xtr=shaped(arch, xtr)[order], ytr=ytr[order],
                xev=shaped(arch, xev)[ev], yev=yev[ev], epochs=10)


def near_constant(arch, data):
    """Inputs constant in training that vary in evaluation: the MLP's
    three always-blank pixels pick up sensor noise; the CNN's validity
    mask, all ones in training, marks a tenth of the pixels missing."""
    xtr, ytr, xev, yev = data
    rng = np.random.default_rng(5)
    if arch == "mlp":
        m = build(arch)
        order = train(m, xtr, ytr, 10)
        blank = np.where(xtr.var(0) == 0)[0]
        noisy = xev.copy()
        noisy[:, blank] = rng.integers(0, 2, (len(xev), len(blank)))
        return dict(model=m, xtr=xtr[order], ytr=ytr[order], xev=noisy,
                    yev=yev, epochs=10)
    m = build(arch, channels=2)
    itr = as_images(xtr, np.ones_like(xtr))
    order = train(m, itr, ytr, 10)
    mask = (rng.random(xev.shape) > 0.1).astype(np.float32)
    return dict(model=m, xtr=itr[order], ytr=ytr[order],
                xev=as_images(xev * mask, mask), yev=yev, epochs=10)


def batch_dependence(arch, data):
    """Batches of 4: each row's training-mode output carries its three
    neighbours' statistics (the CNN's with a batch-norm head on its pooled
    features: its 2-D layers pool 64 positions of each image, which makes
    them depend little on the neighbours)."""
    xtr, ytr = data[:2]
    m = build(arch, head_bn=arch == "cnn")
    order = train(m, shaped(arch, xtr), ytr, 4, batch=4, lr=1e-3)
    return scenario(m, arch, data, order, 4, batch=4)


def batch_verdict(tr, ev, fixed=None):
    """Healthy statistics and a batch-dependent training mode: the cause
    where the modes differ by more than CLOSE, either way (where
    evaluation mode scores above, with the drop said beside it)."""
    return "batch-dependence" if abs(tr - ev) > CLOSE else "healthy"


def few_updates_moving(arch, data):
    """A momentum of 0.01 over three epochs at a learning rate of 0.003:
    84 updates keep 0.99^84 = 0.43 of the initial 0 and 1, and the weights
    move all the while, leaving their early activations in the buffers
    with about the initial values' weight: few-updates, no lag beside
    it."""
    xtr, ytr = data[:2]
    m = build(arch, momentum=0.01)
    order = train(m, shaped(arch, xtr), ytr, 3)
    return scenario(m, arch, data, order, 3)


def few_updates_still(arch, data):
    """few_updates at a small learning rate: one epoch of 28 steps at
    3e-4 with a momentum of 0.01 keeps 0.99^28 = 0.75 of the initial 0
    and 1 while the weights barely move (the MLP's weight matrices by
    0.07 of their norm at most, the CNN's by 0.14): the initial values
    are all there is, and no lag beside them (the shape an outside red
    team saw the lag line on)."""
    xtr, ytr = data[:2]
    m = build(arch, momentum=0.01)
    order = train(m, shaped(arch, xtr), ytr, 1, lr=3e-4)
    return scenario(m, arch, data, order, 1)


def dropout_shift(arch, data):
    """Dropout of 0.5 before the second and third batch-norm layers (the
    drop MLP's; directly before each of the eight of deepdrop): their
    running variances hold its noise, which evaluation mode's inputs do
    not. On the Digits data the shallow placements cost evaluation mode
    nothing measured (the drop MLP's 0.947 against training mode's
    0.945; at 0.3 to 0.7 directly before two to six layers, within
    0.03 too); the shift that accumulates through eight layers costs
    0.11 (0.463 against 0.574)."""
    xtr, ytr = data[:2]
    m = build(arch, dropout=0.5)
    order = train(m, shaped(arch, xtr), ytr, 10)
    return scenario(m, arch, data, order, 10)


def full_batch(arch, data):
    """Every training row in one batch, 15 steps at a learning rate of
    0.01: 15 updates keep 0.9^15 = 0.21 of the initial 0 and 1, and the
    dump has one batch mean per layer."""
    xtr, ytr = data[:2]
    m = build(arch)
    order = train(m, shaped(arch, xtr), ytr, 15, batch=len(xtr), lr=1e-2)
    return scenario(m, arch, data, order, 15, batch=len(xtr))


def switch_partway(arch, data):
    """A momentum of 0.01 and the low-contrast augmentation for seven
    epochs, then one without it: 224 updates keep 0.99^224 = 0.11 of the
    initial values (few-updates), and the last 28 moved the data, which
    the buffers trail beyond what the initial values explain (the lag
    beside it)."""
    xtr, ytr = data[:2]
    m = build(arch, momentum=0.01)
    train(m, shaped(arch, xtr) * LOW_CONTRAST, ytr, 7, lr=1e-2)
    order = train(m, shaped(arch, xtr), ytr, 1, lr=1e-2, seed=1)
    return scenario(m, arch, data, order, 8)


def recorded_train(m, x, y, lens, record, epochs=10):
    """Train m; with record (a function of the model giving a
    BNRecorder), every step inside the recorder's batch() with the
    batch's lengths. Returns the last epoch's order and the recorder."""
    rec = record(m) if record else None
    around = (lambda rows: rec.batch(lens[rows])) if rec else None
    return train(m, x, y, epochs, around=around), rec


def padded(arch, data, buffers="real", record=None):
    """A 1-D CNN over padded sequences whose hand-written masked batch
    norm normalises a training batch over its real positions and averages
    into its buffers the real positions too (buffers="real", healthy) or
    the padded tensor's, padding included ("all"): dumped with the
    lengths (--train-lengths, --eval-lengths)."""
    xtr, ytr, ltr = sequences(1200, 1)
    xev, yev, lev = sequences(400, 2)
    m = build(arch, buffers=buffers)
    order, rec = recorded_train(m, xtr, ytr, ltr, record)
    return dict(model=m, xtr=xtr[order], ytr=ytr[order], xev=xev, yev=yev,
                epochs=10, lengths=(ltr[order], lev), rec=rec)


def padded_all(arch, data, record=None):
    return padded(arch, data, buffers="all", record=record)


def padding_share(arch, data, record=None, padded_to=2 * SEQ_LEN):
    """nn.BatchNorm1d on the padded tensor in both modes, the evaluation
    sequences padded to twice the training length (another loader's
    collate): evaluation mode normalises the real positions as training
    did, training mode on the evaluation batches at their padded share."""
    xtr, ytr, ltr = sequences(1200, 1)
    xev, yev, lev = sequences(400, 2, padded_to=padded_to)
    m = build(arch, buffers="padded")
    order, rec = recorded_train(m, xtr, ytr, ltr, record)
    return dict(model=m, xtr=xtr[order], ytr=ytr[order], xev=xev, yev=yev,
                epochs=10, lengths=(ltr[order], lev), rec=rec)


def padding_share_512(arch, data, record=None):
    """padding_share with the evaluation sequences padded to 512
    positions, BERT's max_length (padded share 0.96 against training's
    0.42): training mode on the evaluation batches normalises the real
    positions with statistics mostly of padding."""
    return padding_share(arch, data, record, padded_to=512)


DEVICES = 8
DEVICE_BATCH = 32


def per_device(arch, data, record=None):
    """Batches of 32 split over 8 devices without synchronised batch
    norm: each normalises 4 rows; dumped with --devices 8."""
    xtr, ytr, xev, yev = data
    m = build(arch)
    rec = record(m) if record else None
    order = train_devices(m, shaped(arch, xtr), ytr, 4, DEVICE_BATCH,
                          DEVICES)
    return dict(model=m, xtr=shaped(arch, xtr)[order], ytr=ytr[order],
                xev=shaped(arch, xev), yev=yev, epochs=4, batch=DEVICE_BATCH,
                devices=DEVICES, rec=rec)


def healthy_unless_measured(tr, ev, fixed):
    """A healthy model's buffers trail its moving weights a little; the
    verdict is healthy unless the suite measures that costing evaluation
    mode more than the tolerance, when it is lagging."""
    return "lagging" if tr - ev > CLOSE else "healthy"


def unless_harmless(cause, fix="recompute-train"):
    """An injected cause found by its size (lagging, dropout-shift,
    masking-mismatch) is the verdict's cause unless the suite measures it
    costing no more than the tolerance: the modes within 0.03 of each
    other and the cause's own fix, applied here (PyTorch's update_bn with
    dropout off; the real positions' statistics by hand), raising
    evaluation mode by 0.03 or less (a fix that lowers it gains
    nothing); then the verdict is healthy, with the cause in a note
    (docs/diagnose.md, "unless measured to cost nothing")."""
    def expect(tr, ev, fixed):
        if abs(tr - ev) <= CLOSE and fixed(fix) - ev <= CLOSE:
            return "healthy"
        return cause
    expect.noted = cause
    expect.fix = fix
    return expect


lagging_unless_harmless = unless_harmless("lagging")
dropout_shift_unless_harmless = unless_harmless("dropout-shift")


def padding_verdict(tr, ev, fixed):
    """nn.BatchNorm1d over sequences padded longer for evaluation:
    masking-mismatch unless measured to cost nothing (a note), as
    unless_harmless; then the buffers' lag behind the final weights,
    where the suite measures update_bn raising evaluation mode by more
    than 0.03, is the verdict, and healthy where it does not."""
    if abs(tr - ev) > CLOSE or fixed("recompute-real") - ev > CLOSE:
        return "masking-mismatch"
    return "lagging" if fixed("recompute-train") - ev > CLOSE else "healthy"


padding_verdict.noted = "masking-mismatch"
padding_verdict.fix = "recompute-real"


def drift_verdict(tr, ev, fixed):
    """A smooth drift under shuffled batches is no grouping: any verdict
    the drift leaves true but not-exchangeable. The evaluation images, at
    the final contrast, differ from the dumped epoch's (shift) where a
    layer's distribution tells them apart; the buffers, which followed
    the drift, trail it or not (lagging, healthy). Where the modes
    disagree, the fix recommended must close the gap (check_fix)."""
    return ("healthy", "shift", "lagging")


BOTH = ("mlp", "cnn")
# name, the verdict expected (or a function of both modes' accuracies),
# how the model is made, the architectures.
SCENARIOS = [
    ("healthy", "healthy", healthy, BOTH),
    ("never-filled", "never-filled", never_filled, BOTH),
    ("few-updates", "few-updates", few_updates, BOTH),
    ("frozen", "frozen", frozen, BOTH),
    ("lagging", lagging_unless_harmless, lagging, BOTH),
    ("shift", "shift", shift, BOTH),
    ("not-exchangeable", "not-exchangeable", not_exchangeable, BOTH),
    ("near-constant", "near-constant", near_constant, BOTH),
    ("batch-dependence", batch_verdict, batch_dependence, BOTH),
    ("healthy-sgd", healthy_unless_measured, healthy_sgd, ("res",)),
    ("momentum0", "frozen", momentum0, ("mlp",)),
    ("momentum0-restored", "lagging", momentum0_restored, ("mlp",)),
    ("frozen-finetune", "lagging", frozen_finetune, ("cnn",)),
    ("grouped-batches", "not-exchangeable", grouped_batches, ("mlp",)),
    ("healthy", "healthy", healthy, ("drop", "conv1d", "postbn", "preres")),
    ("healthy-wide", "healthy", healthy_wide, ("drop", "postbn")),
    ("dropout-shift", dropout_shift_unless_harmless, dropout_shift,
     ("drop",)),
    # F.dropout in the forward: no module, the dump measures it.
    ("dropout-shift", dropout_shift_unless_harmless, dropout_shift,
     ("fdrop",)),
    ("dropout-shift", "dropout-shift", dropout_shift, ("deepdrop",)),
    ("full-batch", "few-updates", full_batch, ("postbn",)),
    ("few-updates-moving", "few-updates", few_updates_moving, MORE_T),
    ("few-updates-still", "few-updates", few_updates_still, BOTH),
    ("switch-partway", "few-updates", switch_partway, ("conv1d",)),
    ("not-exchangeable", "not-exchangeable", not_exchangeable, ("preres",)),
    ("padded-healthy", "healthy", padded, ("seq",)),
    ("masking-mismatch", "masking-mismatch", padded_all, ("seq",)),
    ("padding-share", padding_verdict, padding_share, ("seq",)),
    ("padding-share-512", padding_verdict, padding_share_512, ("seq",)),
    ("per-device", "per-device", per_device, ("mlp",)),
    ("drift-shuffled", drift_verdict, drift_shuffled, BOTH),
    ("drift-shuffled-faster", drift_verdict, drift_shuffled_faster, BOTH),
    ("drift-offset", "lagging", drift_offset, ("cnn", "conv1d")),
]
# Scenarios made to leave a gap: evaluation mode must trail training mode
# by more than 0.03, so that the fix's check runs.
GAP = ("drift-offset",)
# Few-updates with the lag beside it, which the report's second line
# says; and without it, where the weights' own movement over few updates
# is all there is, or where they barely move (a full batch's weights
# that move further than the initial values sit from the truth can still
# show it: not checked).
LAGS_TOO = ("switch-partway",)
NO_LAG = ("few-updates", "few-updates-moving", "few-updates-still")
LAGS_TOO_WORDS = "  and lagging, in "
# The checkpoint cannot tell these frozen layers from lagging ones.
CANNOT_TELL = ("momentum0-restored", "frozen-finetune")
CANNOT_TELL_WORDS = "frozen or lagging: the checkpoint cannot tell; a " \
    "recording can"
BATCH_DROP_WORDS = "the batch dependence evaluation mode removes"


# --------------------------------------------------- save, dump, diagnose

def sha256(path):
    with open(path, "rb") as fp:
        return hashlib.sha256(fp.read()).hexdigest()


def save(s, arch, cause, tmp):
    """A pickled whole model, except the never-filled CNN: a state_dict
    loaded with --module, with the full checkpoint as --reload."""
    base = os.path.join(tmp, "%s-%s" % (arch, cause))
    files = {}
    for k in ("xtr", "ytr", "xev", "yev"):
        files[k] = base + "." + k + ".npy"
        np.save(files[k], s[k])
    args = []
    if "lengths" in s:
        for k, v in zip(("ltr", "lev"), s["lengths"]):
            files[k] = base + "." + k + ".npy"
            np.save(files[k], v)
        args = ["--train-lengths", files["ltr"], "--eval-lengths",
                files["lev"]]
    if "devices" in s:
        args += ["--devices", str(s["devices"])]
    if "sizes" in s:
        with open(base + ".batches.txt", "w") as fp:
            fp.write("\n".join(str(b) for b in s["sizes"]) + "\n")
        args = ["--batches", base + ".batches.txt"]
    if cause == "never-filled" and arch == "cnn":
        files["model"] = base + ".state.pt"
        torch.save(s["model"].state_dict(), files["model"])
        s["reload"] = base + ".full.pt"
        torch.save(s["full"], s["reload"])
        args = ["--module", "models:CNN", "--source", HERE, "--module-args",
                '{"channels": %d}' % s["model"].inp.num_features,
                "--reload", s["reload"]]
    else:
        files["model"] = base + ".pt"
        torch.save(s["model"], files["model"])
    return files, args


def dump(s, files, args, out, env):
    cmd = [sys.executable, DUMPER, "--model", files["model"],
           "--train-inputs", files["xtr"], "--labels", files["ytr"],
           "--eval-inputs", files["xev"], "--eval-labels", files["yev"],
           "--batch-size", str(s.get("batch", BATCH)),
           "--epochs", str(s["epochs"]), "--out", out] + args
    return subprocess.run(cmd, capture_output=True, text=True, env=env,
                          cwd=HERE)


def verdict_of(report):
    first = report.splitlines()[0] if report else ""
    m = re.match(r"verdict: (\S+?)(,|$)", first)
    return m.group(1) if m else None


def recommended_fix(report):
    """The fix the verdict recommends: the first it says it measured,
    when it says that one closes the gap."""
    for line in report.splitlines():
        if line.startswith("  measured: "):
            m = re.match(r"  measured: (\S+) gives .*: it (closes the gap|"
                         r"raises evaluation mode)$", line)
            return m.group(1) if m else None
    return None


KEEP_WORDS = "  fix: none: keep evaluation mode as it is"


class Checks:
    def __init__(self):
        self.passed = self.failed = 0
        self.failures = []

    def check(self, ok, what, detail=""):
        print("%s  %-58s %s" % ("ok  " if ok else "FAIL", what, detail),
              flush=True)
        self.passed += bool(ok)
        self.failed += not ok
        if not ok:
            self.failures.append(what)


def dumped(c, label, s, files, args, out, env):
    """Dump, and check that the dump left the checkpoint as it was."""
    before = sha256(files["model"])
    buffers = {k: v.clone() for k, v in s["model"].state_dict().items()}
    shutil.rmtree(out, ignore_errors=True)
    r = dump(s, files, args, out, env)
    if r.returncode != 0:
        c.check(False, "%s: dumped" % label, r.stderr.strip()[-300:])
        return False
    reloaded = torch.load(files["model"]) if "--module" not in args \
        else None
    same_buffers = all(torch.equal(buffers[k], v) for k, v in
                       s["model"].state_dict().items())
    if reloaded is not None:
        same_buffers &= all(torch.equal(buffers[k], v) for k, v in
                            reloaded.state_dict().items())
    c.check(sha256(files["model"]) == before and same_buffers,
            "%s: the dump left the checkpoint as it was" % label)
    return True


def dumped_key(out, key):
    """A value of the dump's model.tsv."""
    with open(os.path.join(out, "model.tsv")) as fp:
        rows = dict(r.split("\t", 1) for r in fp.read().splitlines())
    return rows[key]


def dumped_sizes(out):
    """The samples of each training batch the dump's first layer saw."""
    with open(os.path.join(out, "layers.tsv")) as fp:
        first = fp.read().splitlines()[1].split("\t")[0]
    with open(os.path.join(out, first + ".batches.tsv")) as fp:
        rows = [r.split("\t") for r in fp.read().splitlines()]
    col = rows[0].index("samples")
    return [int(r[col]) for r in rows[1:]]


def class_chi2(y, sizes, k):
    """The chi-square of consecutive batches' class counts."""
    p = np.bincount(y, minlength=k) / len(y)
    chi, i = 0.0, 0
    for b in sizes:
        c = np.bincount(y[i:i + b], minlength=k)
        chi += float(np.sum((c - b * p) ** 2 / (b * p)))
        i += b
    return chi


def check_label_exchange(c, label, s, out, grouped):
    """The dump's label_exchange against the suite's own: the batches'
    class chi-square over its mean over 400 random orders of the same
    labels (a Monte Carlo of random batches, not the dumper's closed
    form: a chi-square of about 240 degrees of freedom varies by 0.09 of
    itself, its mean over 400 by 0.005, so 0.02 is four standard errors,
    and the finite-population factor (n - b)/(n - 1), 0.035 here, shows);
    beyond 4 exactly where the batches are grouped by class (not the
    drifts)."""
    if "devices" in s:
        return
    y = np.unique(s["ytr"], return_inverse=True)[1]
    sizes = dumped_sizes(out)
    rng = np.random.default_rng(11)
    k = int(y.max()) + 1
    mean = np.mean([class_chi2(rng.permutation(y), sizes, k)
                    for _ in range(400)])
    want = class_chi2(y, sizes, k) / mean
    got = float(dumped_key(out, "label_exchange"))
    c.check(abs(got - want) <= 0.02 * want and (got > 4) == grouped,
            "%s: label_exchange is the classes' chi-square over random "
            "batches'" % label, "dump %.3f, suite %.3f" % (got, want))


def check_fix(c, label, cause, s, report, tr, ev):
    """The fix against the suite's own measurement: where evaluation mode
    trails, the one recommended first closes the gap (none for sorted
    batches); where it scores at or above training mode and the cause
    has a statistics fix, the report keeps it, and recomputing would not
    raise it."""
    stats_fix = cause not in ("healthy", "batch-dependence",
                              "not-exchangeable", "per-device")
    if ev >= tr and stats_fix:
        again = accuracy(update_bn(s["model"], s["xtr"]), s["xev"], s["yev"],
                         False)
        if again <= ev + CLOSE:
            c.check(KEEP_WORDS in report,
                    "%s: keeps evaluation mode as it is" % label,
                    "evaluation mode %.3f, training mode %.3f, recomputed "
                    "%.3f" % (ev, tr, again))
            return
        # Recomputing raises it beyond the tolerance: training mode is no
        # ceiling, and the fix recommended must raise it too.
        fix = recommended_fix(report)
        fixed = accuracy(apply_fix(fix, s), s["xev"], s["yev"], False) \
            if fix else float("nan")
        c.check(fixed > ev + CLOSE,
                "%s: %s raises evaluation mode" % (label, fix),
                "evaluation mode %.3f -> %.3f, recomputed %.3f, training "
                "mode %.3f" % (ev, fixed, again, tr))
        return
    if not stats_fix or tr - ev <= CLOSE:
        if cause == "not-exchangeable" and tr - ev > CLOSE:
            fix = recommended_fix(report)
            c.check(fix is None and "no measured fix closes the gap" in
                    report, "%s: says no fix closes the gap" % label,
                    "fix %s" % fix)
        return
    fix = recommended_fix(report)
    if fix is None:
        c.check(False, "%s: recommends a fix that closes the gap" % label,
                "none")
        return
    fixed = accuracy(apply_fix(fix, s), s["xev"], s["yev"], False)
    c.check(fixed >= tr - CLOSE, "%s: %s closes the gap" % (label, fix),
            "evaluation mode %.3f -> %.3f, training mode %.3f"
            % (ev, fixed, tr))
    if cause == "near-constant":
        eps = accuracy(apply_fix("eps", s), s["xev"], s["yev"], False)
        said = re.search(r"measured: eps gives .*: it (does NOT close|"
                         r"closes) the gap", report)
        c.check(said is not None and (eps >= tr - CLOSE) ==
                (said.group(1) == "closes"),
                "%s: says whether eps closes the gap" % label,
                "eps gives %.3f here" % eps)


def run_scenario(c, arch, name, expect, make, data, tmp, exe, env):
    torch.manual_seed(0)
    s = make(arch, data)
    s["model"].eval()
    files, args = save(s, arch, name, tmp)
    out = os.path.join(tmp, "%s-%s.dump" % (arch, name))
    label = "%s %s" % (arch, name)
    if not dumped(c, label, s, files, args, out, env):
        return
    rep = subprocess.run([exe, "diagnose", out], capture_output=True,
                         text=True)
    report = rep.stdout
    if "not-exchangeable" in name or "grouped" in name or "drift" in name:
        check_label_exchange(c, label, s, out, "drift" not in name)
    got = verdict_of(report)
    batch = s.get("batch", BATCH)
    # Training mode as it trained: on a device's share of the batch.
    tr = accuracy(s["model"], s["xev"], s["yev"], True,
                  batch // s.get("devices", 1))
    ev = accuracy(s["model"], s["xev"], s["yev"], False)
    fixed = lambda fix: accuracy(apply_fix(fix, s), s["xev"],  # noqa
                                 s["yev"], False)
    cause = expect(tr, ev, fixed) if callable(expect) else expect
    if isinstance(cause, tuple):
        # Any of these: the one named is checked as the verdict below.
        cause = got if got in cause else "/".join(cause)
    c.check(rep.returncode == 0 and got == cause,
            "%s: the verdict names %s" % (label, cause),
            "got %s; training mode %.3f, evaluation mode %.3f" % (got, tr,
                                                                 ev))
    if name in GAP:
        c.check(tr - ev > CLOSE, "%s: evaluation mode trails by more than "
                "%.2f" % (label, CLOSE), "training mode %.3f, evaluation "
                "mode %.3f" % (tr, ev))
    dep = dumped_key(out, "batch_dependence")
    if got == "batch-dependence" and ev - tr > CLOSE and dep != "-" and \
            float(dep) > CLOSE:
        c.check(BATCH_DROP_WORDS in report,
                "%s: says the drop is the batch dependence evaluation mode "
                "removes" % label)
    if name in LAGS_TOO + NO_LAG:
        c.check((LAGS_TOO_WORDS in report) == (name in LAGS_TOO),
                "%s: %s the lag beside few-updates" % (
                    label, "says" if name in LAGS_TOO else "does not say"))
    if "devices" in s:
        sync = accuracy(s["model"], s["xev"], s["yev"], True, batch)
        c.check(abs(sync - ev) <= CLOSE and abs(tr - ev) > CLOSE and
                "SyncBatchNorm" in report,
                "%s: training mode at B/K, not at B, is what differs; "
                "the report names SyncBatchNorm" % label,
                "training mode at %d rows %.3f, at %d %.3f, evaluation "
                "mode %.3f" % (batch // s["devices"], tr, batch, sync, ev))
    noted = getattr(expect, "noted", None)
    if noted and cause != noted:
        c.check("\n  note: %s in " % noted in report,
                "%s: notes the %s measured to cost nothing" % (label, noted),
                "%s gives %.3f" % (expect.fix, fixed(expect.fix)))
    if name in CANNOT_TELL:
        c.check(CANNOT_TELL_WORDS in report,
                "%s: says it cannot tell frozen from lagging" % label)
    if "sizes" in s:
        c.check(dumped_sizes(out) == s["sizes"],
                "%s: the dump batched as training did" % label,
                "%d batches" % len(s["sizes"]))
    check_fix(c, label, cause, s, report, tr, ev)


def recorded_lagging(arch, data, rec_dir):
    """The lagging scenario recorded as it trains (BNRecorder)."""
    xtr, ytr, _, _ = data
    m = build(arch, momentum=0.01)
    rec = BNRecorder(m)
    train(m, shaped(arch, xtr) * LOW_CONTRAST, ytr, 10, lr=1e-2)
    train(m, shaped(arch, xtr), ytr, 1, lr=1e-2, seed=1)
    rec.close()
    rec.write(rec_dir)


def recorded_frozen(arch, data, rec_dir):
    """The common fine-tuning recipe, recorded: after two epochs every
    batch-norm layer is put in evaluation mode inside the training loop
    while the weights go on training."""
    xtr, ytr, _, _ = data
    m = build(arch)
    rec = BNRecorder(m)

    def freeze(e, model):
        for b in bn_modules(model):
            b.train(e < 2)
    train(m, shaped(arch, xtr), ytr, 10, lr=1e-2, at_epoch=freeze)
    rec.close()
    rec.write(rec_dir)


def recorded_finetune(arch, data, rec_dir, frozen_from=0):
    """frozen_finetune recorded from the start of the fine-tune: its
    layers (their count at 4 epochs' batches already) in evaluation mode
    from epoch frozen_from of 3 (from the first: no training-mode call at
    all)."""
    xtr, ytr, _, _ = data
    m = build(arch)
    train(m, shaped(arch, xtr), ytr, 4)
    rec = BNRecorder(m)

    def freeze(e, model):
        for b in bn_modules(model):
            b.train(e < frozen_from)
    train(m, shaped(arch, inverted(xtr)), ytr, 3, seed=1, at_epoch=freeze)
    rec.write(rec_dir)
    rec.close()


def recorded_finetune_late(arch, data, rec_dir):
    recorded_finetune(arch, data, rec_dir, frozen_from=1)


def recorded_momentum0(arch, data, rec_dir):
    """momentum0_restored recorded: the momentum 0 for eight epochs of
    ten, set back to 0.1 before the recording is written."""
    xtr, ytr, _, _ = data
    m = build(arch)
    rec = BNRecorder(m)
    train(m, shaped(arch, xtr) * LOW_CONTRAST, ytr, 2, lr=1e-2)
    for b in bn_modules(m):
        b.momentum = 0.0
    train(m, shaped(arch, xtr), ytr, 8, lr=1e-2, seed=1)
    for b in bn_modules(m):
        b.momentum = 0.1
    rec.write(rec_dir)
    rec.close()


# name, the verdict, how it is recorded, the architectures.
RECORDINGS = [
    ("lagging", "lagging", recorded_lagging, BOTH),
    ("frozen", "frozen", recorded_frozen, BOTH),
    ("frozen-finetune", "frozen", recorded_finetune, ("cnn",)),
    ("frozen-finetune-late", "frozen", recorded_finetune_late, ("cnn",)),
    ("momentum0", "frozen", recorded_momentum0, ("mlp",)),
]


def recordings(c, data, tmp, exe, only):
    for name, cause, make, archs in RECORDINGS:
        for arch in archs:
            if only not in "recording %s %s" % (arch, name):
                continue
            out = os.path.join(tmp, "%s-%s.recording" % (arch, name))
            shutil.rmtree(out, ignore_errors=True)
            make(arch, data, out)
            rep = subprocess.run([exe, "diagnose", out], capture_output=True,
                                 text=True)
            got = verdict_of(rep.stdout)
            c.check(rep.returncode == 0 and got == cause,
                    "%s %s recording: the verdict names %s" % (arch, name,
                                                               cause),
                    "got %s %s" % (got, rep.stderr.strip()))
            # A recording scores no fix, and recomputing a layer frozen
            # while the weights trained can lower evaluation mode (the
            # cnn frozen-finetune dump measures it doing so): nothing is
            # recommended unmeasured.
            if cause == "frozen":
                c.check("  fix: none until measured: keep evaluation mode"
                        in rep.stdout and "  fix: recompute" not in
                        rep.stdout,
                        "%s %s recording: recommends nothing unmeasured, "
                        "keeps evaluation mode" % (arch, name))
            # The weights moved (every fine-tune does), even where every
            # call was in evaluation mode.
            with open(os.path.join(out, "model.tsv")) as fp:
                moved = "weights_moved\tyes\n" in fp.read()
            c.check(moved, "%s %s recording: says the weights moved"
                    % (arch, name))


# The dumper's --train-lengths and --devices runs, recorded as they train
# with BNRecorder's own options: name, the cause, the scenario, the
# recorder it is given. padding-share at twice the length is not here: its
# masking-mismatch costs nothing only by its own fix's measured score,
# which a dump makes and a recording does not.
RECORDED_OPTIONS = [
    ("padded-healthy", "healthy", padded, BNRecorder),
    ("masking-mismatch", "masking-mismatch", padded_all, BNRecorder),
    ("padding-share-512", "masking-mismatch", padding_share_512, BNRecorder),
    ("per-device", "per-device", per_device,
     lambda m: BNRecorder(m, devices=DEVICES)),
]


def validate(s):
    """A validation pass as a training script makes one: evaluation mode,
    no autograd, each padded batch inside the recorder's batch()."""
    m, rec = s["model"], s["rec"]
    lev = s["lengths"][1] if "lengths" in s else None
    m.eval()
    with torch.no_grad():
        for i, j in spans(len(s["xev"]), BATCH):
            with rec.batch(lev[i:j]) if lev is not None else \
                    contextlib.nullcontext():
                m(torch.from_numpy(s["xev"][i:j]))


def recorded_options(c, data, tmp, exe, env, only):
    """A recording of a padded-sequence or a multi-device run (the
    lengths given each batch, the devices to the recorder) gives the
    cause the dump of the same model gives, and both the cause the run
    was made with."""
    for name, cause, make, record in RECORDED_OPTIONS:
        arch = "mlp" if make is per_device else "seq"
        label = "%s %s recording" % (arch, name)
        if only not in label:
            continue
        torch.manual_seed(0)
        s = make(arch, data, record=record)
        validate(s)
        out = os.path.join(tmp, "%s-%s.recording" % (arch, name))
        shutil.rmtree(out, ignore_errors=True)
        s["rec"].write(out, eval_inputs=s["xev"], eval_labels=s["yev"],
                       batch_size=s.get("batch", BATCH))
        s["rec"].close()
        rep = subprocess.run([exe, "diagnose", out], capture_output=True,
                             text=True)
        got = verdict_of(rep.stdout)
        files, args = save(s, arch, name + "-rec", tmp)
        dump_out = os.path.join(tmp, "%s-%s-rec.dump" % (arch, name))
        if not dumped(c, label, s, files, args, dump_out, env):
            continue
        want = verdict_of(subprocess.run([exe, "diagnose", dump_out],
                                         capture_output=True,
                                         text=True).stdout)
        c.check(rep.returncode == 0 and got == want == cause,
                "%s: the verdict names %s, as the dump's" % (label, cause),
                "recording %s, dump %s %s" % (got, want,
                                              rep.stderr.strip()[-200:]))
        if make is per_device:
            c.check("SyncBatchNorm" in rep.stdout,
                    "%s: the report names SyncBatchNorm" % label)


def torchscript(c, data, tmp, exe, env):
    """A TorchScript module takes no forward hooks: its dump holds the
    buffers, whose own causes still show (here buffers never loaded)."""
    s = never_filled("mlp", data)
    files, _ = save(s, "mlp", "torchscript", tmp)
    torch.jit.script(s["model"]).save(files["model"])
    out = os.path.join(tmp, "mlp-torchscript.dump")
    shutil.rmtree(out, ignore_errors=True)
    r = dump(s, files, [], out, env)
    rep = subprocess.run([exe, "diagnose", out], capture_output=True,
                         text=True)
    c.check(r.returncode == 0 and verdict_of(rep.stdout) == "never-filled"
            and "no layer's inputs could be taken" in rep.stdout,
            "mlp torchscript: buffers diagnosed, never-filled",
            (r.stderr + rep.stderr).strip()[-200:])
    # Both modes are scored all the same, as the suite scores them.
    want = "accuracy on the evaluation data: training mode %.3f, " \
        "evaluation mode %.3f" % (accuracy(s["model"], s["xev"], s["yev"],
                                           True),
                                  accuracy(s["model"], s["xev"], s["yev"],
                                           False))
    c.check(want in rep.stdout, "mlp torchscript: both modes scored",
            want)


def dropout_count(c, data, tmp, env):
    """The dump counts the dropout modules that run before a batch-norm
    layer (model.tsv's dropout_before_bn: what update_bn recomputes with
    on, and the report says so): here one before the layer and one after
    it, which update_bn's recompute does not reach, counted by the
    suite from the Sequential's own order."""
    xtr, ytr, xev, yev = data
    torch.manual_seed(7)
    m = nn.Sequential(nn.Linear(64, 32), nn.Dropout(0.3),
                      nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5),
                      nn.Linear(32, 10))
    order = train(m, xtr, ytr, 2)
    s = dict(model=m, xtr=xtr[order], ytr=ytr[order], xev=xev, yev=yev,
             epochs=2)
    files, args = save(s, "mlp", "dropout", tmp)
    out = os.path.join(tmp, "mlp-dropout.dump")
    shutil.rmtree(out, ignore_errors=True)
    r = dump(s, files, args, out, env)
    mods = list(m)
    last_bn = max(i for i, x in enumerate(mods)
                  if isinstance(x, nn.modules.batchnorm._BatchNorm))
    want = sum(isinstance(x, nn.modules.dropout._DropoutNd)
               for x in mods[:last_bn])
    got = None
    if r.returncode == 0:
        with open(os.path.join(out, "model.tsv")) as fp:
            keys = dict(line.rstrip("\n").split("\t", 1) for line in fp)
        got = keys.get("dropout_before_bn")
    c.check(got == str(want), "mlp dropout: the dump counts the dropout "
            "before batch norm", "%s, want %d %s"
            % (got, want, r.stderr.strip()[-200:]))


def read_keys(path):
    with open(path) as fp:
        return dict(line.rstrip("\n").split("\t", 1) for line in fp)


def random_before(c, data, tmp, env):
    """The dump measures what draws at random before each layer, with no
    module to find (models.RandomNet, by construction): F.dropout of 0.3
    before bn1, its rate read from the call; nothing new before bn2,
    whose input carries bn1's draw only through bn1; noise in both
    modes before bn3, no dropout."""
    xtr, ytr, xev, yev = data
    torch.manual_seed(7)
    m = models.RandomNet(p=0.3)
    order = train(m, xtr / np.float32(16), ytr, 2)
    s = dict(model=m, xtr=xtr[order] / np.float32(16), ytr=ytr[order],
             xev=xev / np.float32(16), yev=yev, epochs=2)
    files, args = save(s, "random", "before", tmp)
    out = os.path.join(tmp, "random-before.dump")
    if not dumped(c, "random before", s, files, args, out, env):
        return
    want = {"bn1": ("0.3", "training"), "bn2": ("0.0", "no"),
            "bn3": ("0.0", "both")}
    for name, (rate, how) in want.items():
        k = read_keys(os.path.join(out, name + ".layer.tsv"))
        got = (k.get("dropout_before"), k.get("random_before"))
        c.check(got == (rate, how), "random before %s: dropout_before %s, "
                "random %s" % (name, rate, how), "got %s %s" % got)
    k = read_keys(os.path.join(out, "model.tsv"))
    c.check(k.get("dropout_before_bn") == "1" and "random in evaluation "
            "mode too before bn3" in k.get("notes", ""),
            "random before: one dropout call counted, bn3's noise noted",
            "%s; %s" % (k.get("dropout_before_bn"), k.get("notes")))


def float32_recording(c, arch, data, tmp, exe):
    """A healthy float32 model recorded while it trains: the replay of
    every layer's recording reproduces the checkpoint's statistics to
    float32 rounding, and the folder's verdict is healthy."""
    xtr, ytr, _, _ = data
    m = build(arch)
    rec = BNRecorder(m)
    train(m, shaped(arch, xtr), ytr, 3)
    rec.close()
    out = os.path.join(tmp, "%s-healthy.recording" % arch)
    shutil.rmtree(out, ignore_errors=True)
    rec.write(out)
    for name in ("inp", "bn1", "bn2"):
        rep = subprocess.run([exe, "diagnose", "--dump",
                              os.path.join(out, name)],
                             capture_output=True, text=True)
        c.check(rep.returncode == 0 and
                "reproduces them to float32 rounding" in rep.stdout,
                "%s float32 recording: %s replays to float32 rounding"
                % (arch, name),
                " ".join((rep.stdout + rep.stderr).splitlines()[1:4]))
    rep = subprocess.run([exe, "diagnose", out], capture_output=True,
                         text=True)
    c.check(rep.returncode == 0 and verdict_of(rep.stdout) == "healthy",
            "%s float32 recording: the folder's verdict is healthy" % arch,
            verdict_of(rep.stdout))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"))
    ap.add_argument("--only", default="")
    ap.add_argument("--keep")
    args = ap.parse_args()
    torch.set_num_threads(1)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    data = digits()
    c = Checks()
    with tempfile.TemporaryDirectory(prefix="bnstudy-scenarios-") as tmp:
        tmp = args.keep or tmp
        os.makedirs(tmp, exist_ok=True)
        for name, expect, make, archs in SCENARIOS:
            for arch in archs:
                if args.only in "%s %s" % (arch, name):
                    run_scenario(c, arch, name, expect, make, data, tmp,
                                 args.bnstudy, env)
        recordings(c, data, tmp, args.bnstudy, args.only)
        recorded_options(c, data, tmp, args.bnstudy, env, args.only)
        if args.only in "mlp torchscript":
            torchscript(c, data, tmp, args.bnstudy, env)
        if args.only in "mlp dropout":
            dropout_count(c, data, tmp, env)
        if args.only in "random before":
            random_before(c, data, tmp, env)
        for arch in ("mlp", "cnn"):
            if args.only in "%s float32 recording" % arch:
                float32_recording(c, arch, data, tmp, args.bnstudy)
    if c.failures:
        print("failed: " + "; ".join(c.failures))
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
