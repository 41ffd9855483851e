"""The dump's files: key-value and column TSVs, every real the shortest
decimal that reads back as the same double, and the list of batch-norm
layers of a model in one place so that every part agrees on it."""

import os

from torch.nn.modules.batchnorm import _BatchNorm


def real(v):
    return repr(float(v))


def cell(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return real(v)
    return str(v)


def write_keys(path, pairs):
    with open(path, "w") as fp:
        fp.write("key\tvalue\n")
        for k, v in pairs:
            fp.write("%s\t%s\n" % (k, cell(v)))


def write_rows(path, head, rows):
    with open(path, "w") as fp:
        fp.write("\t".join(head) + "\n")
        for r in rows:
            fp.write("\t".join(cell(v) for v in r) + "\n")


def bn_layers(model):
    """(name, module) of every batch-norm layer (1d, 2d, 3d, SyncBatchNorm:
    every subclass of _BatchNorm), or of a TorchScript module whose
    original class is one, in the model's order."""
    out = []
    for name, mod in model.named_modules():
        kind = getattr(mod, "original_name", type(mod).__name__)
        if isinstance(mod, _BatchNorm) or (
                kind.endswith("BatchNorm1d") or kind.endswith("BatchNorm2d")
                or kind.endswith("BatchNorm3d") or kind == "SyncBatchNorm"):
            out.append((name or "bn", mod))
    return out


def layer_kind(mod):
    return getattr(mod, "original_name", type(mod).__name__)


def settings(name, mod):
    """The layer's settings as saved, for NAME.layer.tsv."""
    momentum = mod.momentum
    tracks = bool(mod.track_running_stats) and mod.running_mean is not None
    return [
        ("layer", name),
        ("type", layer_kind(mod)),
        ("features", int(mod.num_features)),
        ("momentum", "None" if momentum is None else real(momentum)),
        ("momentum_means",
         "cumulative average: the new value's weight is 1/t at update t"
         if momentum is None else
         "the new value's weight (PyTorch): running = (1 - momentum) * "
         "running + momentum * batch"),
        ("running_var_update",
         "unbiased: the batch variance times rows/(rows - 1)"),
        ("eps", real(mod.eps)),
        ("affine", bool(mod.affine)),
        ("track_running_stats", tracks),
        ("training_as_saved", bool(mod.training)),
        ("num_batches_tracked",
         int(mod.num_batches_tracked) if tracks else None),
        ("dtype", str(mod.running_mean.dtype).replace("torch.", "")
         if tracks else None),
    ]


def safe_name(name):
    """A file name for a module path: its dots stay, a slash cannot."""
    return name.replace(os.sep, "_")
