"""What the model scores, and what each candidate fix would make it score,
each on its own deep copy of the loaded model: the checkpoint is never
touched. Scores are evaluation-mode accuracies on the evaluation data,
beside training mode's on the same batches.

  recompute-train  every layer's statistics recomputed from the training
                   data as a cumulative average (PreciseBN;
                   torch.optim.swa_utils.update_bn does the same, with
                   dropout on: here only the batch-norm layers are in
                   training mode, as in every training-mode pass, so the
                   statistics describe the inputs evaluation mode gives)
  adapt-eval       the same from the evaluation data
  reload           the batch-norm buffers taken from --reload FILE, a
                   checkpoint that has them
  eps              eps raised to 1e-3 in every layer (Keras's default):
                   evaluation then amplifies a near-constant channel at
                   most 1/sqrt(1e-3) = 32 times instead of 316
  recompute-real   with --train-lengths: as recompute-train, the layers
                   over padded sequences taking the real positions only
                   (the mean of the training batches' real means and
                   unbiased variances, what update_bn gives a masked
                   layer)

And how much a row's training-mode prediction depends on its batch
neighbours: the share of evaluation rows whose predicted class changes
when the same rows are batched in another (seeded) order.

Trained on K devices without synchronised statistics (--devices K),
training mode is scored on device batches of B/K evaluation rows, as each
device normalised, and apart on whole batches of B (sync_mode_accuracy:
what SyncBatchNorm's training mode gives).
"""

import copy

import numpy as np
import torch

from .passes import batches, model_dtype, set_mode

FIX_EPS = 1e-3


def outputs(model, x, batch_size, train_mode, order=None):
    m = copy.deepcopy(model)
    set_mode(m, train_mode)
    dtype = model_dtype(m)
    idx = np.arange(x.shape[0]) if order is None else order
    out = []
    with torch.no_grad():
        for _, ib in batches(idx, batch_size):
            xb = torch.as_tensor(np.array(x[ib])).to(dtype)
            out.append(m(xb).double())
    y = torch.cat(out)
    if order is not None:
        back = torch.empty_like(y)
        back[torch.as_tensor(order)] = y
        y = back
    return y


def classes(y):
    return y.argmax(1).numpy() if y.dim() == 2 and y.shape[1] > 1 else None


def accuracy(y, labels):
    c = classes(y)
    if c is None or labels is None:
        return None
    return float(np.mean(c == np.asarray(labels)))


def recompute(model, layers_of, x, batch_size, sizes=None):
    """A copy whose batch-norm statistics are the cumulative average over
    x in batches (update_bn), of batch_size or of the sizes given."""
    m = copy.deepcopy(model)
    for _, mod in layers_of(m):
        mod.reset_running_stats()
        mod.momentum = None
    set_mode(m, True)
    dtype = model_dtype(m)
    with torch.no_grad():
        for _, xb in batches(x, batch_size, sizes):
            m(torch.as_tensor(np.array(xb)).to(dtype))
    return m


def reloaded(model, layers_of, state):
    m = copy.deepcopy(model)
    done = 0
    for name, mod in layers_of(m):
        for buf in ("running_mean", "running_var", "num_batches_tracked"):
            key = "%s.%s" % (name, buf)
            if key in state and getattr(mod, buf) is not None:
                getattr(mod, buf).copy_(state[key])
                done += 1
    return m, done


def real_only(model, layers_of, x, batch_size, sizes, real):
    """recompute-train, then each layer of `real` (name: the real
    positions' mean and variance) given those."""
    m = recompute(model, layers_of, x, batch_size, sizes)
    for name, mod in layers_of(m):
        if name in real:
            mean, var = real[name]
            mod.running_mean.copy_(torch.as_tensor(mean))
            mod.running_var.copy_(torch.as_tensor(var))
    return m


def raised_eps(model, layers_of):
    m = copy.deepcopy(model)
    for _, mod in layers_of(m):
        mod.eps = max(mod.eps, FIX_EPS)
    return m


def majority_rate(labels):
    """The share of the most common class: what always naming it scores,
    against which a model's accuracy is poor or not."""
    if labels is None or len(labels) == 0:
        return None
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    return float(counts.max() / counts.sum())


def batch_dependence(model, x, batch_size, seed=1):
    """The share of rows whose training-mode predicted class changes when
    the rows are batched in a seeded random order instead of as given."""
    a = classes(outputs(model, x, batch_size, True))
    if a is None:
        return None
    order = np.random.default_rng(seed).permutation(x.shape[0])
    b = classes(outputs(model, x, batch_size, True, order))
    return float(np.mean(a != b))


SCRIPTED = ("not applied: a TorchScript module's momentum and eps are "
            "constants; load the model whole or as a state_dict to score it")


def modes(model, eval_x, eval_y, batch_size, devices=1):
    """The model as it is in both modes on the evaluation data in batches
    of batch_size (training mode's on each device's share of one, with
    devices), how much training mode depends on the batch, and the
    labels' majority rate; with devices, training mode over whole
    batches too (sync_mode_accuracy)."""
    device = max(2, batch_size // devices)
    acc = {
        "eval_mode_accuracy": accuracy(outputs(model, eval_x, batch_size,
                                               False), eval_y),
        "train_mode_accuracy": accuracy(outputs(model, eval_x, device,
                                                True), eval_y),
        "batch_dependence": batch_dependence(model, eval_x, device),
        "majority_rate": majority_rate(eval_y),
    }
    if devices > 1:
        acc["sync_mode_accuracy"] = accuracy(outputs(model, eval_x,
                                                     batch_size, True),
                                             eval_y)
    return acc


def score(model, layers_of, train_x, eval_x, eval_y, batch_size,
          reload_state=None, sizes=None, scripted=False, real=None,
          devices=1):
    """(accuracies, fixes): the model as it is in both modes (modes), and
    a row per candidate fix: (name, evaluation-mode accuracy, what was
    done). The training data are batched as training batched them
    (sizes, or batch_size); the evaluation data in batches of
    batch_size. A TorchScript module is scored as it is and with
    --reload's buffers: the recomputed statistics need a momentum of
    None and eps raised, which its constants refuse."""
    acc = modes(model, eval_x, eval_y, batch_size, devices)
    if eval_y is None:
        return acc, []

    def ev(m):
        return accuracy(outputs(m, eval_x, batch_size, False), eval_y)

    if scripted:
        fixes = [(name, None, SCRIPTED)
                 for name in ("recompute-train", "adapt-eval", "eps")]
    else:
        fixes = [
            ("recompute-train", ev(recompute(model, layers_of, train_x,
                                             batch_size, sizes)),
             "statistics recomputed on the training data (update_bn)"),
            ("adapt-eval", ev(recompute(model, layers_of, eval_x,
                                        batch_size)),
             "statistics recomputed on the evaluation data"),
            ("eps", ev(raised_eps(model, layers_of)),
             "eps raised to %g in every layer" % FIX_EPS),
        ]
    if real and not scripted:
        fixes.append(("recompute-real",
                      ev(real_only(model, layers_of, train_x, batch_size,
                                   sizes, real)),
                      "statistics recomputed on the training data, over "
                      "the real positions only in %d layers" % len(real)))
    if reload_state is not None:
        m, done = reloaded(model, layers_of, reload_state)
        fixes.append(("reload", ev(m) if done else None,
                      "%d buffers reloaded from --reload" % done))
    return acc, fixes
