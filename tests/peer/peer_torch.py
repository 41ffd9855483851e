#!/usr/bin/python3
"""Peer cross-check of bnstudy's batch-norm layer (issue 5).

bnstudy's unit tests check the layer against itself; this script checks it
against implementations it shares no code with. For each configuration it
feeds `bnstudy population --order O --seed S` (the rows in training order)
to a peer, trains over the same consecutive batches, evaluates the rows
trained on in the last epoch, and compares with what `bnstudy run` wrote
to --write-features and --write-outputs:

  * PyTorch's float64 torch.nn.BatchNorm1d for the PyTorch convention
    (momentum as the new value's weight, unbiased running variance),
    including weight/bias/eps, momentum=None (cumulative average) and
    torch.optim.swa_utils.update_bn;
  * a plain-numpy float64 reference with its own loops for the published
    convention (momentum 0.9 on the old value, biased running variance).

It prints one line per configuration, the largest relative difference per
quantity over all of them, and `N passed, N failed`; it exits 1 if any
configuration fails. Run it from anywhere: paths are relative to the repo
root, which is found from this file's location.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N_FEATURES = 8
BATCH_SIZES = (8, 16, 32, 64, 128, 256)
ORDERS = ("shuffled", "sorted")

# Every quantity here is a handful of float64 operations away from its
# inputs (at most a few hundred updates of a contracting recurrence), so
# two correct implementations differ by rounding only: a few 1e-16. 1e-12
# leaves three orders of magnitude for summation order and formula shape
# (PyTorch computes y = x*a + (beta - mean*a), bnstudy
# gamma*((x - mean)/sd) + beta) while any real convention error (a missing
# B/(B-1) is >= 1/255 ~ 4e-3; a wrong momentum weight is larger) fails.
TOLERANCE = 1e-12

QUANTITIES = ("running_mean", "running_var", "train_out", "eval_out",
              "train_eval_rmse")


def rel_diff(got, ref, floor=None):
    """Largest |got - ref| / max(|ref|, floor) over the arrays.

    floor defaults to the RMS of ref over the whole array. A plain
    |a - b| / |b| is meaningless where a value crosses zero: a train output
    of 1e-17 (a row at its batch mean) or a running mean of f0 near 0 carries
    an absolute rounding error set by the magnitude of the terms it was
    computed from (~1), not by its own size, so the elementwise ratio can be
    1e-1 between two correct implementations. Flooring the denominator at
    the quantity's typical magnitude keeps the measure relative for every
    value at or above that magnitude and absolute-in-units-of-that-magnitude
    below it. The floor is itself floored at the smallest normal double so
    that an all-zero reference does not divide by zero.
    """
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return math.inf
    if floor is None:
        floor = math.sqrt(float(np.mean(ref * ref))) if ref.size else 0.0
    floor = np.maximum(floor, np.finfo(np.float64).tiny)  # may be an array
    denom = np.maximum(np.abs(ref), floor)
    d = np.abs(got - ref) / denom
    if not np.all(np.isfinite(d)):
        return math.inf
    return float(np.max(d)) if d.size else 0.0


class Bnstudy:
    """Runs the bnstudy binary and reads back what it wrote."""

    def __init__(self, path, workdir):
        self.path = path
        self.workdir = workdir
        self._pop = {}

    def population(self, order, seed):
        key = (order, seed)
        if key not in self._pop:
            out = subprocess.run(
                [self.path, "population", "--order", order, "--seed", str(seed)],
                check=True, capture_output=True, text=True).stdout
            lines = out.splitlines()
            header = lines[0].split("\t")
            if header[0] != "row" or len(header) != N_FEATURES + 1:
                raise RuntimeError("unexpected population header: %r" % header)
            rows = [l.split("\t") for l in lines[1:]]
            idx = np.array([int(r[0]) for r in rows], dtype=np.int64)
            x = np.array([[float(v) for v in r[1:]] for r in rows],
                         dtype=np.float64)
            self._pop[key] = (idx, x)
        return self._pop[key]

    def run(self, cfg):
        feat = os.path.join(self.workdir, "features.tsv")
        outs = os.path.join(self.workdir, "outputs.tsv")
        argv = [self.path, "run",
                "--batch-size", str(cfg["batch"]),
                "--order", cfg["order"],
                "--seed", str(cfg["seed"]),
                "--momentum", repr(cfg["momentum"]),
                "--momentum-weights", cfg["weights"],
                "--variance", cfg["variance"],
                "--estimator", cfg["estimator"],
                "--epochs", str(cfg["epochs"]),
                "--partial", cfg["partial"],
                "--gamma", repr(cfg["gamma"]),
                "--beta", repr(cfg["beta"]),
                "--eps", repr(cfg["eps"]),
                "--write-features", feat, "--write-outputs", outs]
        if cfg["devices"] != 1:
            argv += ["--set", "layer.devices=%d" % cfg["devices"]]
        if cfg["initial"]:
            ck = os.path.join(self.workdir, "checkpoint.tsv")
            with open(ck, "w") as fp:
                fp.write("feature\trunning_mean\trunning_var\n")
                for j, (m, v) in sorted(cfg["initial"].items()):
                    fp.write("f%d\t%r\t%r\n" % (j, m, v))
            argv += ["--set", "layer.initial=" + ck]
        out = subprocess.run(argv, check=True, capture_output=True,
                             text=True).stdout.splitlines()
        summary = dict(zip(out[0].split("\t"), out[1].split("\t")))
        with open(feat) as fp:
            lines = fp.read().splitlines()
        head = lines[0].split("\t")
        recs = [dict(zip(head, l.split("\t"))) for l in lines[1:]]
        names = [r["feature"] for r in recs]
        rm = np.array([float(r["running_mean"]) for r in recs])
        rv = np.array([float(r["running_var"]) for r in recs])
        with open(outs) as fp:
            lines = fp.read().splitlines()
        rows = [l.split("\t") for l in lines[1:]]
        idx = np.array([int(r[0]) for r in rows], dtype=np.int64)
        vals = np.array([[float(v) for v in r[1:]] for r in rows],
                        dtype=np.float64).reshape(len(rows), 2 * N_FEATURES)
        return {
            "argv": argv,
            "summary": summary,
            "names": names,
            "running_mean": rm,
            "running_var": rv,
            "rows": idx,
            "train_out": vals[:, :N_FEATURES],
            "eval_out": vals[:, N_FEATURES:],
        }


def batches_of(x, b, partial):
    """Consecutive chunks of b rows; the last partial one dropped or kept."""
    n = x.shape[0]
    full = n // b
    out = [x[i * b:(i + 1) * b] for i in range(full)]
    if partial == "keep" and n % b:
        out.append(x[full * b:])
    return out


# ---------------------------------------------------------------- peers

def peer_torch(x, cfg):
    """float64 torch.nn.BatchNorm1d trained over the batches, then eval."""
    import torch
    # Estimator initial never updates: momentum 0 keeps the buffers as they
    # were loaded, exactly.
    momentum = (None if cfg["estimator"] == "cumulative" else
                0.0 if cfg["estimator"] == "initial" else cfg["momentum"])
    bn = torch.nn.BatchNorm1d(N_FEATURES, momentum=momentum, eps=cfg["eps"],
                              dtype=torch.float64)
    with torch.no_grad():
        bn.weight.fill_(cfg["gamma"])
        bn.bias.fill_(cfg["beta"])
        # A checkpoint's buffers, loaded as load_state_dict would: the
        # features it names, the others left at 0 and 1.
        for j, (m, v) in (cfg["initial"] or {}).items():
            bn.running_mean[j] = m
            bn.running_var[j] = v
    bs = [torch.from_numpy(np.ascontiguousarray(b))
          for b in batches_of(x, cfg["batch"], cfg["partial"])]
    bn.train()
    with torch.no_grad():
        for _ in range(cfg["epochs"]):
            ys = [bn(b) if cfg["devices"] == 1 else by_devices(bn, b, cfg)
                  for b in bs]
        bn.eval()
        trained = torch.cat(bs)
        y_eval = bn(trained)
    return {
        "updates": int(bn.num_batches_tracked),
        "running_mean": bn.running_mean.numpy().copy(),
        "running_var": bn.running_var.numpy().copy(),
        "train_out": torch.cat(ys).numpy().copy(),
        "eval_out": y_eval.numpy().copy(),
        "n_rows": trained.shape[0],
    }


def by_devices(bn, b, cfg):
    """A batch split by hand across cfg's devices (torch.tensor_split):
    each share normalised by its own statistics, device 0's through bn
    (its buffers move), the others' with none (their buffers are dropped,
    as broadcasting rank 0's drops them)."""
    import torch
    parts = torch.tensor_split(b, cfg["devices"])
    ys = [bn(parts[0])]
    for p in parts[1:]:
        ys.append(torch.nn.functional.batch_norm(
            p, None, None, bn.weight, bn.bias, True, 0.0, bn.eps))
    return torch.cat(ys)


def peer_update_bn(x, cfg):
    """torch.optim.swa_utils.update_bn over one pass: it resets the buffers
    and averages with momentum=None. It yields no train-mode outputs, so
    only the buffers and the eval-mode outputs are compared."""
    import torch
    from torch.optim.swa_utils import update_bn
    # A momentum update_bn must restore afterwards, and buffers it must
    # reset: neither may leak into the result.
    bn = torch.nn.BatchNorm1d(N_FEATURES, momentum=0.3, eps=cfg["eps"],
                              dtype=torch.float64)
    with torch.no_grad():
        bn.weight.fill_(cfg["gamma"])
        bn.bias.fill_(cfg["beta"])
        bn.running_mean.fill_(5.0)
        bn.running_var.fill_(9.0)
    bs = [torch.from_numpy(np.ascontiguousarray(b))
          for b in batches_of(x, cfg["batch"], cfg["partial"])]
    bn.eval()
    update_bn(bs, bn)
    if bn.momentum != 0.3 or bn.training:
        raise RuntimeError("update_bn did not restore momentum/mode")
    with torch.no_grad():
        trained = torch.cat(bs)
        y_eval = bn(trained)
    return {
        "updates": int(bn.num_batches_tracked),
        "running_mean": bn.running_mean.numpy().copy(),
        "running_var": bn.running_var.numpy().copy(),
        "train_out": None,
        "eval_out": y_eval.numpy().copy(),
        "n_rows": trained.shape[0],
    }


def peer_numpy(x, cfg):
    """The layer written out from docs/definitions.md, with correctly
    rounded sums (math.fsum) so that its own rounding is below both
    implementations it judges. Shares nothing with torch or bnstudy."""
    f = x.shape[1]
    if cfg["weights"] == "old":
        keep = cfg["momentum"]
        p = 1.0 - keep
    else:
        p = cfg["momentum"]
        keep = 1.0 - p
    # The decimal complement: momentum 0.9 means weight 0.1 on the new
    # value, and in binary 1 - 0.9 is not the double 0.1. Using the double
    # nearest the decimal the user wrote is what docs/definitions.md says;
    # the choice moves results by ~1e-17 relative, far below tolerance.
    p = float(repr(round(p, 15)))
    keep = float(repr(round(keep, 15)))
    rm = [0.0] * f
    rv = [1.0] * f
    gamma, beta, eps = cfg["gamma"], cfg["beta"], cfg["eps"]
    updates = 0
    bs = batches_of(x, cfg["batch"], cfg["partial"])
    train = None
    for _ in range(cfg["epochs"]):
        train = []
        for b in bs:
            nb = b.shape[0]
            y = np.empty_like(b)
            updates += 1
            for j in range(f):
                col = [float(v) for v in b[:, j]]
                m = math.fsum(col) / nb
                s = math.fsum((v - m) * (v - m) for v in col) / nb
                sd = math.sqrt(s + eps)
                for i, v in enumerate(col):
                    y[i, j] = gamma * ((v - m) / sd) + beta
                s_upd = s * nb / (nb - 1) if cfg["variance"] == "unbiased" else s
                if cfg["estimator"] == "cumulative":
                    a = 1.0 / updates
                    rm[j] = (1.0 - a) * rm[j] + a * m
                    rv[j] = (1.0 - a) * rv[j] + a * s_upd
                else:
                    rm[j] = keep * rm[j] + p * m
                    rv[j] = keep * rv[j] + p * s_upd
            train.append(y)
    trained = np.concatenate(bs)
    y_eval = np.empty_like(trained)
    for j in range(f):
        sd = math.sqrt(rv[j] + eps)
        for i in range(trained.shape[0]):
            y_eval[i, j] = gamma * ((trained[i, j] - rm[j]) / sd) + beta
    return {
        "updates": updates,
        "running_mean": np.array(rm),
        "running_var": np.array(rv),
        "train_out": np.concatenate(train),
        "eval_out": y_eval,
        "n_rows": trained.shape[0],
    }


PEERS = {"torch": peer_torch, "update_bn": peer_update_bn, "numpy": peer_numpy}


# ---------------------------------------------------------- configurations

def config(peer, batch, order, momentum, weights, variance, seed=1, epochs=1,
           estimator="ema", gamma=1.0, beta=0.0, eps=1e-5, partial="drop",
           initial=None, devices=1):
    return dict(peer=peer, batch=batch, order=order, seed=seed,
                momentum=momentum, weights=weights, variance=variance,
                epochs=epochs, estimator=estimator, gamma=gamma, beta=beta,
                eps=eps, partial=partial, initial=initial, devices=devices)


# A partial checkpoint of another population ([layer] initial): three of
# the eight features, one with a variance of 0.
CHECKPOINT = {0: (1.25, 3.5), 3: (-0.5, 0.0), 6: (2.0, 0.125)}


def torch_configs():
    cfgs = []
    for m in (0.1, 0.01, 0.5):
        for order in ORDERS:
            for b in BATCH_SIZES:
                cfgs.append(config("torch", b, order, m, "new", "unbiased"))
    # Several epochs: the buffers carry over, the outputs are the last
    # epoch's.
    for order in ORDERS:
        cfgs.append(config("torch", 32, order, 0.1, "new", "unbiased", epochs=3))
        cfgs.append(config("torch", 128, order, 0.5, "new", "unbiased", epochs=2))
    # The affine parameters and eps reach both modes.
    for order in ORDERS:
        cfgs.append(config("torch", 64, order, 0.1, "new", "unbiased",
                           gamma=2.5, beta=-0.75, eps=1e-3))
        cfgs.append(config("torch", 16, order, 0.01, "new", "unbiased",
                           gamma=-0.4, beta=3.0, eps=0.5, epochs=2))
    # Another shuffle seed, and batch sizes that do not divide 512: the
    # partial batch dropped (default) or trained on.
    cfgs.append(config("torch", 64, "shuffled", 0.1, "new", "unbiased", seed=12345))
    cfgs.append(config("torch", 100, "shuffled", 0.1, "new", "unbiased"))
    cfgs.append(config("torch", 200, "sorted", 0.5, "new", "unbiased", epochs=2))
    cfgs.append(config("torch", 100, "shuffled", 0.1, "new", "unbiased",
                       partial="keep"))
    # momentum=None: factor 1/t, the first update replaces 0 and 1.
    for order in ORDERS:
        for b in (8, 64, 256):
            cfgs.append(config("torch", b, order, 0.1, "new", "unbiased",
                               estimator="cumulative"))
        cfgs.append(config("torch", 32, order, 0.1, "new", "unbiased",
                           estimator="cumulative", epochs=2))
        for b in (8, 64, 256):
            cfgs.append(config("update_bn", b, order, 0.1, "new", "unbiased",
                               estimator="cumulative", gamma=1.5, beta=0.25))
    # Started from a checkpoint: the buffers carry the loaded values'
    # weight (1 - p)^T; never updated (initial), they are the file's.
    for order in ORDERS:
        for b in (16, 256):
            cfgs.append(config("torch", b, order, 0.1, "new", "unbiased",
                               epochs=2, initial=CHECKPOINT))
        cfgs.append(config("torch", 64, order, 0.1, "new", "unbiased",
                           estimator="initial", initial=CHECKPOINT))
    # On devices of their own: each share normalised by its own rows, the
    # buffers device 0's.
    for order in ORDERS:
        for b, k in ((256, 4), (256, 32), (64, 2)):
            cfgs.append(config("torch", b, order, 0.1, "new", "unbiased",
                               epochs=2, devices=k))
    cfgs.append(config("torch", 128, "shuffled", 0.5, "new", "unbiased",
                       devices=8, gamma=1.5, beta=-0.5, eps=1e-3))
    return cfgs


def numpy_configs():
    cfgs = []
    for epochs in (1, 2):
        for order in ORDERS:
            for b in BATCH_SIZES:
                cfgs.append(config("numpy", b, order, 0.9, "old", "biased",
                                   epochs=epochs))
    # The published convention with the affine parameters, and bnstudy's
    # cumulative estimator with the biased variance PyTorch cannot express.
    cfgs.append(config("numpy", 256, "sorted", 0.9, "old", "biased",
                       gamma=0.5, beta=2.0, eps=1e-3))
    cfgs.append(config("numpy", 32, "shuffled", 0.9, "old", "biased",
                       estimator="cumulative", epochs=2))
    return cfgs


def label(cfg):
    s = "%-9s B=%-3d %-8s m=%-4g %s/%s" % (
        cfg["peer"], cfg["batch"], cfg["order"], cfg["momentum"],
        cfg["weights"], cfg["variance"])
    extra = []
    if cfg["estimator"] != "ema":
        extra.append(cfg["estimator"])
    if cfg["epochs"] != 1:
        extra.append("E=%d" % cfg["epochs"])
    if cfg["seed"] != 1:
        extra.append("seed=%d" % cfg["seed"])
    if (cfg["gamma"], cfg["beta"], cfg["eps"]) != (1.0, 0.0, 1e-5):
        extra.append("g=%g b=%g eps=%g" % (cfg["gamma"], cfg["beta"], cfg["eps"]))
    if cfg["partial"] != "drop":
        extra.append("partial=" + cfg["partial"])
    if cfg["initial"]:
        extra.append("from a checkpoint")
    if cfg["devices"] != 1:
        extra.append("devices=%d" % cfg["devices"])
    return s + (" " + ",".join(extra) if extra else "")


def rmse(a, b):
    return math.sqrt(float(np.mean((a - b) ** 2)))


def compare(bs, cfg):
    """Return (diffs per quantity, list of structural problems)."""
    idx, x = bs.population(cfg["order"], cfg["seed"])
    got = bs.run(cfg)
    ref = PEERS[cfg["peer"]](x, cfg)
    problems = []
    names = ["f%d" % j for j in range(N_FEATURES)]
    if got["names"] != names:
        problems.append("features file names %r" % got["names"])
    # Structure must match exactly: which rows, in what order, how many
    # updates. A tolerance has no meaning for these.
    n = ref["n_rows"]
    if not np.array_equal(got["rows"], idx[:n]):
        problems.append("outputs rows differ from the population order")
    if int(got["summary"]["updates"]) != ref["updates"]:
        problems.append("updates %s != peer %d"
                        % (got["summary"]["updates"], ref["updates"]))
    d = {
        "running_mean": rel_diff(got["running_mean"], ref["running_mean"]),
        "running_var": rel_diff(got["running_var"], ref["running_var"]),
        "eval_out": rel_diff(got["eval_out"], ref["eval_out"]),
    }
    if ref["train_out"] is not None:
        d["train_out"] = rel_diff(got["train_out"], ref["train_out"])
        # The score is a difference of two O(|y|) arrays, so its rounding
        # scales with |y|, not with the score: floor at the outputs' RMS.
        y_scale = math.sqrt(float(np.mean(ref["train_out"] ** 2)))
        d["train_eval_rmse"] = rel_diff(
            float(got["summary"]["train_eval_rmse"]),
            rmse(ref["train_out"], ref["eval_out"]), floor=y_scale)
    return d, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"),
                    help="the binary to test (default: bnstudy at the repo root)")
    ap.add_argument("--only", choices=("torch", "numpy"),
                    help="run one half only")
    args = ap.parse_args()

    try:
        import torch
        torch.set_num_threads(1)  # tiny tensors; threads only add noise
    except ImportError as e:
        if args.only != "numpy":
            print("peer test needs torch: %s" % e, file=sys.stderr)
            return 2

    cfgs = []
    if args.only != "numpy":
        cfgs += torch_configs()
    if args.only != "torch":
        cfgs += numpy_configs()

    with tempfile.TemporaryDirectory(prefix="bnstudy-peer-") as tmp:
        bs = Bnstudy(args.bnstudy, tmp)
        return run_checks(cfgs, lambda cfg: compare(bs, cfg),
                          {q: TOLERANCE for q in QUANTITIES}, label)


def run_checks(cfgs, check, limits, label):
    """Run check(cfg), which returns (differences by quantity, problems),
    for every configuration; print one line each, the largest difference
    per quantity against its limit, and `N passed, N failed`. Returns the
    exit status: 1 if any configuration failed. peer_clf.py uses it too."""
    worst = {q: (0.0, None) for q in limits}
    passed = failed = 0
    for cfg in cfgs:
        try:
            d, problems = check(cfg)
        except (subprocess.CalledProcessError, OSError, RuntimeError,
                ValueError, KeyError, IndexError) as e:
            detail = getattr(e, "stderr", None) or ""
            d, problems = {}, ["error: %s %s" % (e, detail.strip())]
        bad = [q for q, v in d.items() if not v <= limits[q]]
        ok = not bad and not problems
        passed += ok
        failed += not ok
        for q, v in d.items():
            if not v <= worst[q][0]:
                worst[q] = (v, label(cfg))
        cols = " ".join("%s=%.2e" % (q, d[q]) for q in limits if q in d)
        print("%s  %-62s %s" % ("ok  " if ok else "FAIL", label(cfg), cols))
        for p in problems:
            print("      " + p)
        for q in bad:
            print("      %s over %g" % (q, limits[q]))

    print()
    print("largest relative difference per quantity "
          "(|a-b| / max(|b|, floor), the floor as each check says):")
    for q in limits:
        v, where = worst[q]
        print("  %-16s %.3e  limit %g  (%s)" % (q, v, limits[q], where or "-"))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
