#!/usr/bin/python3
"""Record what every batch-norm layer of a PyTorch model sees, for bnstudy.

A forward hook on each BatchNorm layer (1d, 2d, 3d, sync: every subclass
of torch.nn.modules.batchnorm._BatchNorm) keeps the layer's input of each
training-mode call, in the order the batches arrive. write() then puts,
per layer NAME (the module's path in the model, e.g. `layer1.0.bn1`):

  NAME.npy          the inputs, one row per value the layer normalises
                    together: rows x channels, float64 or float32 as the
                    layer ran (float16 and bfloat16 widened to float32).
                    An input (N, C) is its own N rows; an input
                    (N, C, *spatial) is moved to channels last and
                    flattened to (N * prod(spatial), C), rows in the order
                    sample, then each spatial axis (for (N, C, H, W): n,
                    then h, then w), which is how BatchNorm2d pools them.
  NAME.stats.tsv    per channel: running_mean, running_var and
                    num_batches_tracked when write() was called, and the
                    running statistics when recording began
                    (initial_mean, initial_var, initial_batches_tracked).
  NAME.batches.tsv  per recorded call: batch, first_row, rows, shape.
  NAME.layer.tsv    the layer's settings and the layout above in words
                    (key, value).

Every real is written as the shortest decimal that reads back as the same
double. `bnstudy diagnose --dump OUT/NAME` reads the four files of a layer
back (docs/diagnose.md). As a library, in your own training script:

    from dump_bn_inputs import BNRecorder
    rec = BNRecorder(model)          # hooks every batch-norm layer
    train(model)                     # as usual
    rec.write("bn-dump")             # then rec.close() to remove the hooks

As a command, for a whole model saved with torch.save(model, FILE) and its
inputs as one .npy (first axis: samples), in consecutive batches:

    dump_bn_inputs.py --model model.pt --inputs x.npy --batch-size 64 \\
        --out bn-dump [--epochs 1] [--eval]

which runs the batches through the model in training mode (so the running
statistics move as in training, without any parameter update), or with
--eval in evaluation mode (the running statistics stay the checkpoint's,
and the recorded inputs are what evaluation feeds each layer).

Memory: the inputs are kept in memory until write(), one copy per layer.
"""

import argparse
import os
import sys

import numpy as np
import torch
from torch.nn.modules.batchnorm import _BatchNorm


def real(v):
    return repr(float(v))


class BNRecorder:
    """Forward hooks on every batch-norm layer of model.

    Records the calls made in training mode (the ones that update the
    running statistics), or with record_eval the calls made in evaluation
    mode instead. Layers without running statistics
    (track_running_stats=False) are skipped: there is nothing to compare.
    """

    def __init__(self, model, record_eval=False):
        self.record_eval = record_eval
        self.layers = []
        self._handles = []
        for name, mod in model.named_modules():
            if not isinstance(mod, _BatchNorm) or not mod.track_running_stats:
                continue
            entry = {
                "name": name or "bn",
                "module": mod,
                "chunks": [],
                "shapes": [],
                "initial": (mod.running_mean.detach().cpu().clone(),
                            mod.running_var.detach().cpu().clone(),
                            int(mod.num_batches_tracked)),
            }
            self.layers.append(entry)
            self._handles.append(mod.register_forward_hook(self._hook(entry)))

    def _hook(self, entry):
        def hook(mod, inputs, output):
            if mod.training == self.record_eval:
                return
            x = inputs[0].detach()
            c = x.shape[1]
            rows = x if x.dim() == 2 else x.movedim(1, -1).reshape(-1, c)
            if rows.dtype not in (torch.float64, torch.float32):
                rows = rows.to(torch.float32)
            entry["chunks"].append(rows.cpu().clone())
            entry["shapes"].append(tuple(x.shape))
        return hook

    def close(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def write(self, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        for e in self.layers:
            self._write_layer(out_dir, e)

    def _write_layer(self, out_dir, e):
        mod = e["module"]
        base = os.path.join(out_dir, e["name"])
        c = mod.num_features
        if e["chunks"]:
            x = torch.cat(e["chunks"]).numpy()
        else:
            x = np.zeros((0, c), dtype=np.float64)
        np.save(base + ".npy", np.ascontiguousarray(x))

        rm = mod.running_mean.detach().cpu()
        rv = mod.running_var.detach().cpu()
        nbt = int(mod.num_batches_tracked)
        im, iv, inbt = e["initial"]
        with open(base + ".stats.tsv", "w") as fp:
            fp.write("feature\trunning_mean\trunning_var\tnum_batches_tracked"
                     "\tinitial_mean\tinitial_var\tinitial_batches_tracked\n")
            for j in range(c):
                fp.write("f%d\t%s\t%s\t%d\t%s\t%s\t%d\n" % (
                    j, real(rm[j]), real(rv[j]), nbt, real(im[j]),
                    real(iv[j]), inbt))

        with open(base + ".batches.tsv", "w") as fp:
            fp.write("batch\tfirst_row\trows\tshape\n")
            first = 0
            for k, (chunk, shape) in enumerate(zip(e["chunks"], e["shapes"])):
                fp.write("%d\t%d\t%d\t%s\n" % (
                    k, first, chunk.shape[0], "x".join(str(s) for s in shape)))
                first += chunk.shape[0]

        spatial = sorted({len(s) - 2 for s in e["shapes"]}) or [0]
        if spatial == [0]:
            rows_are = "one row per sample: the input (N, C) as it is"
        else:
            rows_are = ("one row per sample and position: the input (N, C, "
                        "*spatial) with channels last, rows in the order "
                        "sample then each spatial axis, as the layer pools "
                        "them")
        momentum = mod.momentum
        settings = [
            ("layer", e["name"]),
            ("type", type(mod).__name__),
            ("features", str(c)),
            ("rows", str(x.shape[0])),
            ("rows_are", rows_are),
            ("recorded", "evaluation-mode calls" if self.record_eval
             else "training-mode calls, which update the running statistics"),
            ("batches", str(len(e["chunks"]))),
            ("dtype", str(x.dtype)),
            ("momentum", "None" if momentum is None else real(momentum)),
            ("momentum_means",
             "cumulative average: the new value's weight is 1/t at update t"
             if momentum is None else
             "the new value's weight (PyTorch): running = (1 - momentum) * "
             "running + momentum * batch"),
            ("running_var_update",
             "unbiased: the batch variance times rows/(rows - 1), rows = "
             "the batch's rows in NAME.npy"),
            ("eps", real(mod.eps)),
            ("affine", str(bool(mod.affine))),
        ]
        with open(base + ".layer.tsv", "w") as fp:
            fp.write("key\tvalue\n")
            for k, v in settings:
                fp.write("%s\t%s\n" % (k, v))


def main():
    ap = argparse.ArgumentParser(
        description="Dump every batch-norm layer's inputs and running "
                    "statistics for bnstudy (see the module's docstring).")
    ap.add_argument("--model", required=True,
                    help="a whole model saved with torch.save(model, FILE)")
    ap.add_argument("--inputs", required=True,
                    help="a .npy of inputs, first axis the samples")
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--eval", action="store_true",
                    help="record an evaluation pass instead of a training one")
    ap.add_argument("--out", required=True, help="output folder")
    args = ap.parse_args()
    if args.batch_size < 1 or args.epochs < 1:
        ap.error("--batch-size and --epochs must be at least 1")

    # --model is a whole pickled model (torch.save(model)), which PyTorch
    # 2.6 and later refuse to unpickle unless asked: the user names a file
    # they trust.
    model = torch.load(args.model, map_location="cpu", weights_only=False)
    x = torch.from_numpy(np.load(args.inputs))
    rec = BNRecorder(model, record_eval=args.eval)
    if not rec.layers:
        print("dump_bn_inputs: the model has no batch-norm layer with "
              "running statistics", file=sys.stderr)
        return 2
    model.train(not args.eval)
    with torch.no_grad():
        for _ in range(args.epochs):
            for i in range(0, x.shape[0], args.batch_size):
                model(x[i:i + args.batch_size])
    rec.close()
    rec.write(args.out)
    for e in rec.layers:
        print("%s: %d batches" % (e["name"], len(e["chunks"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
