#!/usr/bin/python3
"""Dump what every batch-norm layer of a PyTorch model holds and sees, for
`bnstudy diagnose DIR` (docs/diagnose.md, "The dump"). The checkpoint is
read, never moved: every pass runs on a deep copy (the one in training
mode with every momentum set to 0, so that no buffer moves even there),
and the dump checks at the end that the file's bytes and the loaded
buffers are what they were.

    dump_bn_inputs.py --model model.pt --train-inputs xtr.npy \\
        --eval-inputs xte.npy --labels ytr.npy --eval-labels yte.npy \\
        --batch-size 64 --epochs 20 --out dump
    bnstudy diagnose dump

--train-inputs are the training data in the order training fed them (one
epoch), batched by --batch-size as training batched them, or by --batches
FILE (the rows of each batch in turn) where training's batches were not
of one size; --epochs (or --steps) says how long training ran, which is
how a layer frozen part of the time shows. A model saved as a state_dict needs --module
package.module:Class (and --module-args JSON); --source DIR makes the
user's code importable. With --eval-labels the dump also scores, on
copies, each candidate fix (bndump/fixes.py).

Data-parallel training without synchronised batch norm: --devices K says
each batch of B was split over K devices, each normalising its own B/K
rows (the buffers from device 0's); training mode is then taken and
scored on those device batches, and also on whole batches of B, what
SyncBatchNorm gives.

Padded sequences: --train-lengths and --eval-lengths (.npy, one integer a
sample, the lengths a collate function pads from, as
pack_padded_sequence takes them) say that sample i is real at the first
lengths[i] positions of its last axis and padding after; every layer
whose input keeps that axis then has its real positions and its padding
apart in the dump.

In a training script, BNRecorder records every call instead
(bndump/record.py): put this folder on sys.path, then `from
dump_bn_inputs import BNRecorder`; rec.write(DIR), then rec.close().
Its forms of --train-lengths and --devices: `with rec.batch(lengths):`
around a padded batch's forward, BNRecorder(model, devices=K); of
--eval-inputs and --eval-labels, rec.write(DIR, eval_inputs=...,
eval_labels=..., batch_size=B).
"""

import argparse
import hashlib
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bndump import fixes, noise, passes, tsv  # noqa: E402
from bndump.load import LoadError, finite, load  # noqa: E402
from bndump.record import BNRecorder  # noqa: E402,F401

MAX_ROWS = 100_000


def parse():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="the checkpoint file")
    ap.add_argument("--module", help="package.module:Class for a state_dict")
    ap.add_argument("--module-args", help="the constructor's arguments, a "
                    "JSON list or object")
    ap.add_argument("--source", action="append", default=[],
                    help="a folder to import the model's code from")
    ap.add_argument("--train-inputs", required=True,
                    help=".npy, first axis the samples, in training's order")
    ap.add_argument("--eval-inputs", help=".npy of the evaluation data")
    ap.add_argument("--labels", help=".npy of the training labels")
    ap.add_argument("--eval-labels", help=".npy of the evaluation labels")
    ap.add_argument("--batch-size", type=int,
                    help="training's batch size (the evaluation data's "
                    "too); with --batches, the evaluation data's only "
                    "(default: the batches' mean)")
    ap.add_argument("--batches", help="the rows of each training batch in "
                    "turn, summing to --train-inputs' samples (.npy, or "
                    "text: whitespace-separated integers), for batches "
                    "training did not cut in one size")
    ap.add_argument("--epochs", type=int, help="epochs training ran over "
                    "--train-inputs")
    ap.add_argument("--steps", type=int, help="optimiser steps training "
                    "took (instead of --epochs)")
    ap.add_argument("--train-lengths", help=".npy of each training "
                    "sample's length: real at the first positions of its "
                    "last axis, padding after")
    ap.add_argument("--eval-lengths", help=".npy of each evaluation "
                    "sample's length (with --train-lengths)")
    ap.add_argument("--devices", type=int, help="devices training split "
                    "each batch over, each normalising its own share "
                    "(DataParallel or DistributedDataParallel without "
                    "SyncBatchNorm)")
    ap.add_argument("--reload", help="a checkpoint whose batch-norm buffers "
                    "to try as a fix")
    ap.add_argument("--max-rows", type=int, default=MAX_ROWS,
                    help="rows a layer keeps of each data set (%d)"
                    % MAX_ROWS)
    ap.add_argument("--out", required=True, help="the dump's folder, new")
    return ap.parse_args()


def fail(msg):
    print("dump_bn_inputs: %s" % msg, file=sys.stderr)
    return 2


def load_array(path, opt, n=None):
    try:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise LoadError("%s %s: %s" % (opt, path, e))
    if a.ndim < 1 or a.shape[0] < 2:
        raise LoadError("%s %s: at least 2 samples along the first axis"
                        % (opt, path))
    if n is not None and a.shape[0] != n:
        raise LoadError("%s %s: %d labels for %d samples"
                        % (opt, path, a.shape[0], n))
    return a


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fp:
        for block in iter(lambda: fp.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def buffers(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def unchanged(before, after):
    """The same tensors bit for bit: torch.equal calls a NaN unequal to
    itself, so a checkpoint holding one would look moved."""
    def bits(t):
        return t.contiguous().reshape(-1).view(torch.uint8)
    return before.keys() == after.keys() and all(
        before[k].dtype == after[k].dtype and
        before[k].shape == after[k].shape and
        torch.equal(bits(before[k]), bits(after[k])) for k in before)


def batch_sizes(path, n):
    """--batches FILE: the rows of each training batch in turn."""
    try:
        if path.endswith(".npy"):
            v = np.load(path, allow_pickle=False)
        else:
            with open(path) as fp:
                v = np.array(fp.read(1 << 24).split(), dtype=np.float64)
    except (OSError, ValueError) as e:
        raise LoadError("--batches %s: %s" % (path, e))
    v = np.asarray(v)
    if v.ndim != 1 or v.size < 1 or not np.all(v == np.floor(v)):
        raise LoadError("--batches %s: not a list of whole numbers" % path)
    v = v.astype(np.int64)
    for k, b in enumerate(v):
        if b < 2:
            raise LoadError("--batches %s: batch %d holds %d sample%s: "
                            "training mode cannot normalise a single row "
                            "(join it to a neighbour)"
                            % (path, k + 1, b, "" if b == 1 else "s"))
    if int(v.sum()) != n:
        raise LoadError("--batches %s: the batches hold %d samples, "
                        "--train-inputs %d" % (path, int(v.sum()), n))
    return [int(b) for b in v]


def lengths_of(path, opt, x):
    """--train-lengths or --eval-lengths: a whole number in 1..L for each
    of x's samples, L its last axis."""
    v = load_array(path, opt, x.shape[0])
    v = np.asarray(v)
    top = x.shape[-1]
    if v.ndim != 1 or not np.all(v == np.floor(v)):
        raise LoadError("%s %s: not one whole number a sample" % (opt, path))
    if x.ndim < 3:
        raise LoadError("%s %s: the inputs are %s, with no axis of "
                        "positions after the channels" % (opt, path,
                                                          x.shape))
    bad = np.where((v < 1) | (v > top))[0]
    if bad.size:
        raise LoadError("%s %s: sample %d has length %d, not in 1..%d (the "
                        "inputs' last axis)" % (opt, path, bad[0] + 1,
                                                int(v[bad[0]]), top))
    return v.astype(np.int64)


def device_sizes(sizes, k):
    """Each batch split into k consecutive device batches, as a sampler
    shards it (sizes differing by at most one), each of 2 rows at least."""
    out = []
    for b in sizes:
        if b < 2 * k:
            raise LoadError("--devices %d: a batch of %d samples leaves a "
                            "device fewer than 2, which training mode "
                            "cannot normalise" % (k, b))
        out += [b // k + (i < b % k) for i in range(k)]
    return out


def check_args(a):
    if a.devices is not None and a.devices < 1:
        raise LoadError("--devices must be at least 1")
    if a.batch_size is None and not a.batches:
        raise LoadError("--batch-size: give training's batch size (or "
                        "--batches FILE)")
    if (a.batch_size is not None and a.batch_size < 1) or a.max_rows < 2:
        raise LoadError("--batch-size must be at least 1, --max-rows 2")
    if a.epochs is not None and a.steps is not None:
        raise LoadError("--epochs and --steps: give one")
    if (a.epochs is not None and a.epochs < 1) or \
            (a.steps is not None and a.steps < 1):
        raise LoadError("--epochs and --steps must be at least 1")
    if os.path.exists(a.out) and (not os.path.isdir(a.out) or
                                  os.listdir(a.out)):
        raise LoadError("--out %s: exists and is not an empty folder" % a.out)
    if a.eval_labels and not a.eval_inputs:
        raise LoadError("--eval-labels needs --eval-inputs")
    if a.eval_lengths and not (a.train_lengths and a.eval_inputs):
        raise LoadError("--eval-lengths needs --train-lengths and "
                        "--eval-inputs")
    if a.train_lengths and a.eval_inputs and not a.eval_lengths:
        raise LoadError("--train-lengths: give --eval-lengths for "
                        "--eval-inputs too")


def stats_rows(mod, tr, te, ev):
    """NAME.stats.tsv: the checkpoint's buffers; the training data's fresh
    statistics as training fed the layer (training mode), with the mean
    of the batches' unbiased variances and the variance of the samples'
    means; the training and evaluation data's in evaluation mode."""
    c = int(mod.num_features)
    rm = mod.running_mean.detach().cpu().double().numpy()
    rv = mod.running_var.detach().cpu().double().numpy()
    nbt = int(mod.num_batches_tracked)
    tm, tv = tr.fresh()
    bv, uv = tr.batch_var(), tr.unit_var()
    em_t, ev_t = te.fresh()
    em, evv = ev.fresh() if ev else (None, None)
    head = ["feature", "running_mean", "running_var", "num_batches_tracked",
            "train_mean", "train_var", "train_batch_var", "train_unit_var",
            "train_eval_mode_mean", "train_eval_mode_var", "eval_mean",
            "eval_var"]
    rows = [("f%d" % j, float(rm[j]), float(rv[j]), nbt, float(tm[j]),
             float(tv[j]), float(bv[j]), float(uv[j]), float(em_t[j]),
             float(ev_t[j]), None if em is None else float(em[j]),
             None if em is None else float(evv[j])) for j in range(c)]
    if tr.padding:
        # The training data's real positions and padding, training mode.
        head += ["train_real_mean", "train_real_var", "train_pad_mean",
                 "train_pad_var", "train_real_batch_var"]
        pad = tr.padding.fresh() + (tr.padding.recomputed()[1],)
        rows = [r + tuple(float(a[j]) for a in pad)
                for j, r in enumerate(rows)]
    return head, rows


def padding_keys(tr, ev):
    """NAME.layer.tsv's padded sequences: the shares and the positions
    training mode normalised over."""
    if not tr.padding:
        return []
    return [("pad_train_share", tr.padding.share()),
            ("pad_eval_share", ev.padding.share() if ev and ev.padding
             else None),
            ("train_mode_positions", tr.padding.positions())]


def write_buffers(out, name, mod):
    """A layer whose inputs cannot be hooked (TorchScript): its settings
    and buffers alone."""
    base = os.path.join(out, tsv.safe_name(name))
    rm = mod.running_mean.detach().cpu().double().numpy()
    rv = mod.running_var.detach().cpu().double().numpy()
    nbt = int(mod.num_batches_tracked)
    tsv.write_rows(base + ".stats.tsv",
                   ["feature", "running_mean", "running_var",
                    "num_batches_tracked"],
                   [("f%d" % j, float(rm[j]), float(rv[j]), nbt)
                    for j in range(int(mod.num_features))])
    tsv.write_keys(base + ".layer.tsv", tsv.settings(name, mod))


def write_layer(out, name, mod, tr, te, ev, batch_size, largest=None,
                dropout=(0.0, "no")):
    base = os.path.join(out, tsv.safe_name(name))
    c = int(mod.num_features)
    np.save(base + ".train.npy", tr.rows_sample(c))
    np.save(base + ".train-eval.npy", te.rows_sample(c))
    if ev:
        np.save(base + ".eval.npy", ev.rows_sample(c))
    np.save(base + ".batchmeans.npy", np.array(tr.means, dtype=np.float64))
    tsv.write_rows(base + ".batches.tsv", ["batch", "rows", "samples"],
                   [(k, r, u) for k, (r, u) in enumerate(zip(tr.rows,
                                                             tr.units))])
    tsv.write_rows(base + ".stats.tsv", *stats_rows(mod, tr, te, ev))
    tsv.write_keys(base + ".layer.tsv", tsv.settings(name, mod) + [
        ("batch_size", batch_size),
        ("largest_batch", largest),
        ("rows_per_sample", tr.rows[0] // tr.units[0]),
        ("train_rows", tr.seen),
        ("train_samples", tr.total_samples),
        ("eval_rows", ev.seen if ev else None),
        ("eval_samples", ev.total_samples if ev else None),
        ("kept", "every %d-th row of each set, channels last: "
         "NAME.train.npy as training mode feeds the layer, "
         "NAME.train-eval.npy and NAME.eval.npy as evaluation mode does"
         % tr.stride),
        ("inputs_taken", "on copies of the model with every momentum 0: "
         "no buffer moved"),
        ("dropout_before", float(dropout[0])),
        ("random_before", dropout[1]),
        ("random_measured", "one batch twice on a copy under two seeds, "
         "the batch-norm layers in evaluation mode, every other layer in "
         "training mode and then in evaluation mode, each batch-norm "
         "output held at the first pass's: the input differs in "
         "training mode only (training), in both (both), or not (no)"),
    ] + padding_keys(tr, ev))


def dump(a):
    check_args(a)
    digest = sha256(a.model)
    model, how, notes = load(a.model, a.module, a.module_args, a.source)
    finite(model, a.model)
    before = buffers(model)
    layers = [(n, m) for n, m in tsv.bn_layers(model)
              if m.running_mean is not None]
    untracked = [n for n, m in tsv.bn_layers(model)
                 if m.running_mean is None]
    if untracked:
        # track_running_stats=False: both modes use the batch's
        # statistics, there are no buffers to diagnose.
        notes.append("without running statistics, not diagnosed: %s"
                     % ", ".join(untracked))
    if not layers:
        raise LoadError("%s: the model has no batch-norm layer with running "
                        "statistics" % a.model)
    xtr = load_array(a.train_inputs, "--train-inputs")
    xev = load_array(a.eval_inputs, "--eval-inputs") if a.eval_inputs \
        else None
    ytr = load_array(a.labels, "--labels", xtr.shape[0]) if a.labels \
        else None
    yev = load_array(a.eval_labels, "--eval-labels", xev.shape[0]) \
        if a.eval_labels else None
    sizes = batch_sizes(a.batches, xtr.shape[0]) if a.batches else None
    ltr = lengths_of(a.train_lengths, "--train-lengths", xtr) \
        if a.train_lengths else None
    lev = lengths_of(a.eval_lengths, "--eval-lengths", xev) \
        if a.eval_lengths else None
    # The moving average's noise over batches of unequal sizes is that of
    # their harmonic mean; Samuelson's bound is the largest batch's.
    train_batch = a.batch_size if sizes is None else \
        int(len(sizes) / sum(1.0 / b for b in sizes))
    largest = max(sizes) if sizes else None
    if a.batch_size is None:
        a.batch_size = int(round(xtr.shape[0] / len(sizes)))
    whole = sizes  # training's batches: SyncBatchNorm's
    if a.devices and a.devices > 1:
        # What each device normalised: the statistics, the noise floors
        # and training mode are the device batches'.
        c = passes.cuts(xtr.shape[0], a.batch_size, sizes)
        sizes = device_sizes([e - b for b, e in zip(c[:-1], c[1:])],
                             a.devices)
        train_batch = int(len(sizes) / sum(1.0 / b for b in sizes))
        largest = max(sizes)
    scripted = isinstance(model, torch.jit.ScriptModule)
    tmp = a.out.rstrip(os.sep) + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    cut = passes.cuts(xtr.shape[0], a.batch_size, whole)
    nb = len(cut) - 1
    # Whether training's batches grouped the classes (the exchange test's
    # evidence against a drift): the labels, as training batched them.
    label_exchange = passes.label_exchange(ytr, cut) if ytr is not None \
        else None
    steps = a.steps if a.steps is not None else \
        (a.epochs * nb if a.epochs is not None else None)
    order = [n for n, _ in layers]
    n_drop = None  # a TorchScript module takes no hooks
    if not scripted:
        tr, order = passes.run(model, xtr, a.batch_size, a.max_rows,
                               "training data, training mode",
                               train_mode=True, sizes=sizes, lengths=ltr)
        te = passes.run(model, xtr, a.batch_size, a.max_rows,
                        "training data, evaluation mode", sizes=sizes)[0]
        ev = passes.run(model, xev, a.batch_size, a.max_rows,
                        "evaluation data", lengths=lev)[0] \
            if xev is not None else None
        # A layer the forward never calls (a head left over, a branch not
        # taken) has no inputs to diagnose: said, and left out.
        unused = [n for n, _ in layers if not tr[n].rows]
        if unused:
            notes.append("never called by the forward on the training "
                         "data, so not diagnosed: %s" % ", ".join(unused))
            layers = [(n, m) for n, m in layers if n not in unused]
        if not layers:
            raise LoadError("%s: the forward calls none of the model's "
                            "batch-norm layers on the training data"
                            % a.model)
        names = {n for n, _ in layers}
        order = [n for n in order if n in names]
        order += [n for n, _ in layers if n not in order]
        drop, n_drop = noise.measure(model, xtr[:max(2, a.batch_size)])
        both = [n for n, _ in layers if drop[n][1] == "both"]
        if both:
            notes.append("random in evaluation mode too before %s: its "
                         "evaluation-mode passes are draws"
                         % ", ".join(both))
        for name, mod in layers:
            write_layer(tmp, name, mod, tr[name], te[name],
                        ev[name] if ev else None, train_batch, largest,
                        drop[name])
    else:
        for name, mod in layers:
            write_buffers(tmp, name, mod)
    acc, fx = {}, []
    real = {n: tr[n].padding.recomputed() for n, _ in layers
            if not scripted and tr[n].padding} if ltr is not None else None
    if xev is not None:
        reload_state = None
        if a.reload:
            r, _, _ = load(a.reload, a.module, a.module_args, a.source)
            finite(r, a.reload)
            reload_state = r.state_dict()
        acc, fx = fixes.score(model, tsv.bn_layers, xtr, xev, yev,
                              a.batch_size, reload_state, sizes, scripted,
                              real, a.devices or 1)
    kinds = {n: tsv.layer_kind(m) for n, m in layers}
    feats = {n: int(m.num_features) for n, m in layers}
    tsv.write_rows(os.path.join(tmp, "layers.tsv"),
                   ["layer", "type", "features"],
                   [(n, kinds[n], feats[n]) for n in order])
    tsv.write_rows(os.path.join(tmp, "fixes.tsv"),
                   ["fix", "eval_mode_accuracy", "what"], fx)
    tsv.write_keys(os.path.join(tmp, "model.tsv"), [
        ("format", "bnstudy-dump 2"),
        ("kind", "dump"),
        ("model", os.path.basename(a.model)),
        ("loaded", how),
        ("notes", "; ".join(notes) or None),
        ("inputs_hooked", not scripted),
        ("layers", len(layers)),
        ("batch_size", a.batch_size),
        ("batches_file", os.path.basename(a.batches) if a.batches
         else None),
        ("lengths_files", " ".join(os.path.basename(f) for f in
                                   (a.train_lengths, a.eval_lengths) if f)
         or None),
        ("train_rows", xtr.shape[0]),
        ("train_batches", nb),
        ("eval_rows", xev.shape[0] if xev is not None else None),
        ("steps", steps),
        ("max_rows", a.max_rows),
        ("train_mode_accuracy", acc.get("train_mode_accuracy")),
        ("eval_mode_accuracy", acc.get("eval_mode_accuracy")),
        ("batch_dependence", acc.get("batch_dependence")),
        ("majority_rate", acc.get("majority_rate")),
        ("devices", a.devices),
        ("sync_mode_accuracy", acc.get("sync_mode_accuracy")),
        ("dropout_before_bn", n_drop),
        ("label_exchange", label_exchange),
    ])
    after = buffers(model)
    if sha256(a.model) != digest or not unchanged(before, after):
        raise RuntimeError("the dump moved the checkpoint: a bug")
    os.makedirs(a.out, exist_ok=True)
    for f in sorted(os.listdir(tmp)):
        os.replace(os.path.join(tmp, f), os.path.join(a.out, f))
    os.rmdir(tmp)
    print("dump_bn_inputs: %d layers into %s (%s; every layer keeps at most "
          "%d rows of each data set)" % (len(layers), a.out, how,
                                         a.max_rows))
    return 0


def main():
    a = parse()
    try:
        return dump(a)
    except LoadError as e:
        return fail(str(e))
    finally:
        # Nothing half-written: the files go into OUT.part and are moved
        # into OUT only once all are there.
        shutil.rmtree(a.out.rstrip(os.sep) + ".part", ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
