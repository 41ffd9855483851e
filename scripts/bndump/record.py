"""BNRecorder: forward hooks on every batch-norm layer of a model being
trained, for a training script:

    import sys
    sys.path.insert(0, "path/to/bnstudy/scripts")
    from dump_bn_inputs import BNRecorder
    rec = BNRecorder(model)          # hooks every batch-norm layer
    train(model)                     # as usual
    rec.write("bn-record")           # the folder for bnstudy diagnose
    rec.close()                      # removes the hooks

Every call is counted, in training mode (the calls that update the
running statistics) and in evaluation mode, the latter apart when autograd
was on (a layer frozen in evaluation mode inside the training loop) and
when it was off (a validation pass); so are the training-mode calls that
left the buffers exactly as they were (momentum 0, or tracking switched
off), which a checkpoint cannot show. The inputs of the training-mode
calls are kept, in order, up to max_rows rows a layer. Every call notes
the weights' version (PyTorch counts in-place changes of every
parameter), so the recording says whether the weights moved while it
recorded, even when every call was in evaluation mode: batch statistics
taken under moving weights are not exchangeable draws, and bnstudy does
not read them as such.

What the dumper takes as options, the recorder takes too:

  * padded sequences (the dumper's --train-lengths, --eval-lengths):
    each forward of a padded batch inside `with rec.batch(lengths):`,
    lengths the batch's samples' lengths (real at the first lengths[i]
    positions of the model input's last axis, padding after). Every
    layer whose input is (N, C, L) of the model input's L then keeps its
    real positions and padding apart, in training-mode calls (their
    statistics over the batches the diagnosis reads as training's end)
    and in evaluation-mode ones (their padded share).
  * data-parallel training without SyncBatchNorm (--devices K):
    BNRecorder(model, devices=K). The training-mode calls made under one
    weights version are then one step's, as are the evaluation-mode
    calls under autograd (all K device shares where one
    process runs them, as DataParallel or a loop over the shares does;
    one under DistributedDataParallel, each process recording its own
    device), a step that moved no buffer is an unmoved one, and only the
    calls that moved the buffers keep their rows (device 0's, whose
    statistics the buffers average).
  * the scores the per-device cause reads (and every verdict's
    accuracies): rec.write(DIR, eval_inputs=x, eval_labels=y,
    batch_size=B) scores the model as it is then, on copies, in both
    modes (training mode on each device's B/K rows, and with devices on
    whole batches of B too), as the dumper's --eval-inputs and
    --eval-labels do.

write(DIR) puts, per layer NAME: NAME.npy (the training-mode rows,
channels last), NAME.stats.tsv (the running statistics now and when
recording began; with lengths the real positions' and padding's),
NAME.batches.tsv (per kept call: batch, first_row, rows, shape,
weights), NAME.layer.tsv (settings and counts); and model.tsv and
layers.tsv for the whole model.
"""

import contextlib
import copy
import math
import os

import numpy as np
import torch

from . import fixes, tsv
from .passes import Padding, as_rows, stored_dtype

MAX_ROWS = 4_000_000

COUNTS = ("train_calls", "unmoved_calls", "eval_grad_calls",
          "eval_nograd_calls")


class BNRecorder:
    def __init__(self, model, max_rows=MAX_ROWS, devices=None):
        if devices is not None and (int(devices) != devices or devices < 1):
            raise ValueError("BNRecorder: devices=%r is not a whole number "
                             "of at least 1" % (devices,))
        self.model = model
        self.max_rows = max_rows
        self.devices = int(devices) if devices else None
        self.layers = []
        self._versions = {}
        self._lengths = None  # the padded batch's, inside batch()
        self._length = None   # the model input's last axis
        self._handles = [model.register_forward_pre_hook(self._model_hook)]
        for name, mod in tsv.bn_layers(model):
            if mod.running_mean is None:
                continue  # track_running_stats=False: nothing to compare
            e = {"name": name, "module": mod, "chunks": [], "shapes": [],
                 "weights": [], "versions": set(), "rows": 0,
                 "before": None, "step": {}, "padding": None,
                 "eval_real": 0, "eval_pad": 0,
                 "initial": (mod.running_mean.detach().cpu().clone(),
                             mod.running_var.detach().cpu().clone(),
                             int(mod.num_batches_tracked))}
            e.update((k, 0) for k in COUNTS)
            self.layers.append(e)
            self._handles.append(
                mod.register_forward_pre_hook(self._pre_hook(e)))
            self._handles.append(mod.register_forward_hook(self._hook(e)))

    @contextlib.contextmanager
    def batch(self, lengths):
        """The forwards inside are of one padded batch whose samples'
        lengths these are (one a sample, as pack_padded_sequence takes
        them)."""
        v = torch.as_tensor(np.asarray(lengths)).reshape(-1)
        if v.is_floating_point() and not torch.equal(v, v.floor()):
            raise ValueError("BNRecorder.batch: lengths that are not whole "
                             "numbers")
        self._lengths = v.long()
        try:
            yield self
        finally:
            self._lengths = None

    def _model_hook(self, model, inputs):
        """The model input's positions, and the lengths checked against
        it."""
        x = inputs[0] if inputs and torch.is_tensor(inputs[0]) else None
        self._length = x.shape[-1] if x is not None and x.dim() >= 3 \
            else None
        lens = self._lengths
        if lens is None or x is None:
            return
        if lens.numel() != x.shape[0] or x.dim() < 3:
            raise ValueError("BNRecorder.batch: %d lengths for an input of "
                             "shape %s (one a sample, the positions its "
                             "last axis after the channels)"
                             % (lens.numel(), tuple(x.shape)))
        if int(lens.min()) < 1 or int(lens.max()) > x.shape[-1]:
            raise ValueError("BNRecorder.batch: a length outside 1..%d, the "
                             "input's last axis" % x.shape[-1])

    def _weights(self):
        """An index that moves on whenever a parameter is changed in place
        (an optimiser step)."""
        v = tuple(p._version for p in self.model.parameters())
        return self._versions.setdefault(v, len(self._versions))

    def _pre_hook(self, e):
        """The buffers before a training-mode call, to see whether it
        moved them: the recorded module's own, which DataParallel's
        device-0 replica shares and its other replicas do not."""
        def pre_hook(mod, inputs):
            m = e["module"]
            e["before"] = ((m.running_mean.detach().clone(),
                            m.running_var.detach().clone())
                           if mod.training else None)
        return pre_hook

    def _count(self, e, kind, weights, moved=True):
        """Count a call of one kind; with devices, the calls of a step
        (training mode, or evaluation mode under autograd) under one
        weights version are that step's, which moved the buffers if any
        of them did; a validation pass's calls each count. True where the
        call begins a step."""
        step = e["step"].get(kind)
        if self.devices and kind != "eval_nograd_calls" and \
                step is not None and step[0] == weights:
            if moved and not step[1]:
                e["step"][kind] = (weights, True)
                e["unmoved_calls"] -= 1
            return False
        e["step"][kind] = (weights, moved)
        e[kind] += 1
        e["unmoved_calls"] += not moved
        return True

    def _over_positions(self, x):
        """The layer's input is (N, C, L) of the model input's L, inside a
        padded batch."""
        return (self._lengths is not None and x.dim() == 3 and
                x.shape[2] == self._length)

    def _hook(self, e):
        def hook(mod, inputs, output):
            weights = self._weights()
            e["versions"].add(weights)
            x = inputs[0].detach()
            if not mod.training:
                self._count(e, "eval_grad_calls" if torch.is_grad_enabled()
                            else "eval_nograd_calls", weights)
                if self._over_positions(x):
                    real = int(self._lengths.clamp(max=x.shape[2]).sum())
                    e["eval_real"] += real
                    e["eval_pad"] += x.shape[0] * x.shape[2] - real
                return
            m = e["module"]
            moved = not (e["before"] is not None and
                         torch.equal(e["before"][0], m.running_mean) and
                         torch.equal(e["before"][1], m.running_var))
            e["before"] = None
            self._count(e, "train_calls", weights, moved)
            if self.devices and not moved:
                return  # another device's share: the buffers never saw it
            self._keep(e, mod, x, output, weights)
        return hook

    def _keep(self, e, mod, x, output, weights):
        rows = as_rows(x)
        if e["rows"] + rows.shape[0] > self.max_rows:
            return
        if self._over_positions(x) and e["padding"] is not False:
            e["padding"] = e["padding"] or Padding()
            e["padding"].add(x, self._lengths, output, mod)
        else:
            e["padding"] = False  # a kept call without its positions
        e["chunks"].append(rows.cpu().numpy().astype(stored_dtype(rows)))
        e["shapes"].append(tuple(x.shape))
        e["weights"].append(weights)
        e["rows"] += rows.shape[0]

    def close(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def write(self, out_dir, eval_inputs=None, eval_labels=None,
              batch_size=None):
        """The recording into out_dir; with eval_inputs and eval_labels
        (arrays, first axis the samples) and batch_size (training's
        batch, before any split over devices), the model as it is now
        scored in both modes, on copies."""
        acc = self._scores(eval_inputs, eval_labels, batch_size)
        os.makedirs(out_dir, exist_ok=True)
        for e in self.layers:
            self._write_layer(out_dir, e)
        tsv.write_rows(os.path.join(out_dir, "layers.tsv"),
                       ["layer", "type", "features"],
                       [(e["name"], tsv.layer_kind(e["module"]),
                         int(e["module"].num_features)) for e in self.layers])
        moved = any(len(e["versions"]) > 1 for e in self.layers)
        tsv.write_keys(os.path.join(out_dir, "model.tsv"), [
            ("format", "bnstudy-dump 2"),
            ("kind", "recording"),
            ("layers", len(self.layers)),
            ("weights_moved", moved),
            ("max_rows", self.max_rows),
            ("devices", self.devices),
        ] + [(k, acc.get(k)) for k in (
            "train_mode_accuracy", "eval_mode_accuracy", "batch_dependence",
            "majority_rate", "sync_mode_accuracy")])

    def _scores(self, x, y, batch_size):
        if x is None and y is None:
            return {}
        if x is None or y is None or batch_size is None or batch_size < 2:
            raise ValueError("BNRecorder.write: eval_inputs, eval_labels and "
                             "batch_size (at least 2) come together")
        if len(y) != len(x):
            raise ValueError("BNRecorder.write: %d eval_labels for %d "
                             "eval_inputs" % (len(y), len(x)))
        # The copy keeps the user's hooks, not the recorder's: its scoring
        # calls are not the training's.
        model = copy.deepcopy(self.model)
        ours = {h.id for h in self._handles}
        for m in model.modules():
            for hooks in (m._forward_pre_hooks, m._forward_hooks):
                for k in ours.intersection(hooks):
                    del hooks[k]
        return fixes.modes(model, np.asarray(x), np.asarray(y),
                           int(batch_size), self.devices or 1)

    def _write_layer(self, out_dir, e):
        mod = e["module"]
        base = os.path.join(out_dir, tsv.safe_name(e["name"]))
        c = mod.num_features
        x = (np.concatenate(e["chunks"]) if e["chunks"]
             else np.zeros((0, c), dtype=np.float64))
        np.save(base + ".npy", np.ascontiguousarray(x))
        rm = mod.running_mean.detach().cpu()
        rv = mod.running_var.detach().cpu()
        nbt = int(mod.num_batches_tracked)
        im, iv, inbt = e["initial"]
        head = ["feature", "running_mean", "running_var",
                "num_batches_tracked", "initial_mean", "initial_var",
                "initial_batches_tracked"]
        table = [("f%d" % j, float(rm[j]), float(rv[j]), nbt, float(im[j]),
                  float(iv[j]), inbt) for j in range(c)]
        pad = self._window(e)
        if pad:
            # The real positions and padding over the batches the
            # diagnosis reads as training's end, as the dumper's columns.
            head += ["train_real_mean", "train_real_var", "train_pad_mean",
                     "train_pad_var", "train_real_batch_var"]
            cols = pad.fresh() + (pad.recomputed()[1],)
            table = [r + tuple(float(a[j]) for a in cols)
                     for j, r in enumerate(table)]
        tsv.write_rows(base + ".stats.tsv", head, table)
        rows, first = [], 0
        for k, (chunk, shape, w) in enumerate(zip(e["chunks"], e["shapes"],
                                                  e["weights"])):
            rows.append((k, first, chunk.shape[0],
                         "x".join(str(s) for s in shape), w))
            first += chunk.shape[0]
        tsv.write_rows(base + ".batches.tsv",
                       ["batch", "first_row", "rows", "shape", "weights"],
                       rows)
        spatial = sorted({len(s) - 2 for s in e["shapes"]}) or [0]
        tsv.write_keys(base + ".layer.tsv", tsv.settings(e["name"], mod) + [
            ("rows", x.shape[0]),
            ("rows_are", "one row per sample: the input (N, C) as it is"
             if spatial == [0] else
             "one row per sample and position: channels last, rows in the "
             "order sample then each spatial axis, as the layer pools them"),
            ("recorded", "training-mode calls, which update the running "
             "statistics"),
            ("batches", len(e["chunks"])),
            ("training_calls", e["train_calls"]),
            ("training_calls_unmoved", e["unmoved_calls"]),
            ("eval_calls_with_grad", e["eval_grad_calls"]),
            ("eval_calls_without_grad", e["eval_nograd_calls"]),
            ("truncated", len(e["chunks"]) < e["train_calls"]),
            ("weights_moved", len(e["versions"]) > 1),
            ("weights_moved_between_kept", len(set(e["weights"])) > 1),
            ("rows_dtype", str(x.dtype)),
        ] + self._padding_keys(e, pad))

    @staticmethod
    def _window(e):
        """The layer's Padding over its last ceil(3/p) kept batches (every
        one for a cumulative average or a momentum of 0): the window
        bnstudy reads a recording's statistics over (dumpdir.c's
        recording_evidence). None without padded batches."""
        full = e["padding"]
        if not full:
            return None
        p = e["module"].momentum
        w = min(math.ceil(3.0 / p) if p else len(full.real), len(full.real))
        win = Padding()
        win.real, win.pad = full.real[-w:], full.pad[-w:]
        win.z_real, win.z_all = full.z_real, full.z_all
        win.z_known = full.z_known
        return win

    @staticmethod
    def _padding_keys(e, pad):
        if not pad:
            return []
        seen = e["eval_real"] + e["eval_pad"]
        return [("pad_train_share", pad.share()),
                ("pad_eval_share", e["eval_pad"] / seen if seen else None),
                ("train_mode_positions", pad.positions())]
