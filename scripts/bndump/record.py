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

write(DIR) puts, per layer NAME: NAME.npy (the training-mode rows,
channels last), NAME.stats.tsv (the running statistics now and when
recording began), NAME.batches.tsv (per kept call: batch, first_row,
rows, shape, weights), NAME.layer.tsv (settings and counts); and
model.tsv and layers.tsv for the whole model.
"""

import os

import numpy as np
import torch

from . import tsv
from .passes import as_rows, stored_dtype

MAX_ROWS = 4_000_000


class BNRecorder:
    def __init__(self, model, max_rows=MAX_ROWS):
        self.model = model
        self.max_rows = max_rows
        self.layers = []
        self._handles = []
        self._versions = {}
        for name, mod in tsv.bn_layers(model):
            if mod.running_mean is None:
                continue  # track_running_stats=False: nothing to compare
            e = {"name": name, "module": mod, "chunks": [], "shapes": [],
                 "weights": [], "versions": set(), "rows": 0,
                 "train_calls": 0, "unmoved_calls": 0, "before": None,
                 "eval_grad_calls": 0, "eval_nograd_calls": 0,
                 "initial": (mod.running_mean.detach().cpu().clone(),
                             mod.running_var.detach().cpu().clone(),
                             int(mod.num_batches_tracked))}
            self.layers.append(e)
            self._handles.append(
                mod.register_forward_pre_hook(self._pre_hook(e)))
            self._handles.append(mod.register_forward_hook(self._hook(e)))

    def _weights(self):
        """An index that moves on whenever a parameter is changed in place
        (an optimiser step)."""
        v = tuple(p._version for p in self.model.parameters())
        return self._versions.setdefault(v, len(self._versions))

    def _pre_hook(self, e):
        """The buffers before a training-mode call, to see whether it
        moved them."""
        def pre_hook(mod, inputs):
            e["before"] = ((mod.running_mean.detach().clone(),
                            mod.running_var.detach().clone())
                           if mod.training else None)
        return pre_hook

    def _hook(self, e):
        def hook(mod, inputs, output):
            weights = self._weights()
            e["versions"].add(weights)
            if not mod.training:
                key = ("eval_grad_calls" if torch.is_grad_enabled()
                       else "eval_nograd_calls")
                e[key] += 1
                return
            e["train_calls"] += 1
            if e["before"] is not None and \
                    torch.equal(e["before"][0], mod.running_mean) and \
                    torch.equal(e["before"][1], mod.running_var):
                e["unmoved_calls"] += 1
            e["before"] = None
            rows = as_rows(inputs[0].detach())
            if e["rows"] + rows.shape[0] > self.max_rows:
                return
            e["chunks"].append(rows.cpu().numpy().astype(stored_dtype(rows)))
            e["shapes"].append(tuple(inputs[0].shape))
            e["weights"].append(weights)
            e["rows"] += rows.shape[0]
        return hook

    def close(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def write(self, out_dir):
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
        ])

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
        tsv.write_rows(base + ".stats.tsv",
                       ["feature", "running_mean", "running_var",
                        "num_batches_tracked", "initial_mean", "initial_var",
                        "initial_batches_tracked"],
                       [("f%d" % j, float(rm[j]), float(rv[j]), nbt,
                         float(im[j]), float(iv[j]), inbt)
                        for j in range(c)])
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
        ])
