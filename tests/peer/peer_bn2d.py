#!/usr/bin/python3
"""Peer cross-check of batch norm on feature maps against torch.nn.BatchNorm2d.

bnstudy normalises a feature-map population (src/pop/convpop.h) by running its
ordinary layer on rows = (sample, position) and features = channels. This
script checks that this is BatchNorm2d: for each configuration the driver
(tests/peer/bn2d_driver.c) builds the population, trains the layer on
batches of whole samples and writes the maps, the filters, the order of
samples, the buffers and both modes' outputs; the script rebuilds the maps
in NCHW (for images, from the images and the filters with
torch.nn.functional.conv2d, which checks the layout and the convolution),
trains a float64 torch.nn.BatchNorm2d on the same batches, and compares:

  * maps (images only): conv2d against the driver's maps;
  * running_mean, running_var, train_out, eval_out.

PyTorch's convention is momentum as the new value's weight and an unbiased
running variance (divisor B H W - 1). For the published convention
(momentum 0.9 on the old value) torch gets momentum 0.1. For the biased
running variance, which BatchNorm2d cannot store, the peer keeps its own
buffers from torch's biased var over (N, H, W) and evaluates with
torch.nn.functional.batch_norm on them; train-mode outputs do not depend
on the convention and still come from BatchNorm2d.

Prints one line per configuration, the largest relative difference per
quantity, and `N passed, N failed`; exits 1 if any configuration fails.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_torch import REPO, TOLERANCE, rel_diff, run_checks  # noqa: E402

QUANTITIES = ("maps", "running_mean", "running_var", "train_out", "eval_out")


def read_tsv(path):
    with open(path) as fp:
        lines = fp.read().splitlines()
    head = lines[0].split("\t")
    rows = [l.split("\t") for l in lines[1:]]
    return head, rows


def images_file(path, m, ih, iw, seed):
    """m images of ih x iw with values 0..16 like Digits, smoothed so that
    neighbouring pixels move together as strokes do."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 17, size=(m, ih + 1, iw + 1)).astype(np.float64)
    img = np.floor((raw[:, :-1, :-1] + raw[:, 1:, :-1] + raw[:, :-1, 1:]
                    + raw[:, 1:, 1:]) / 4.0)
    np.savetxt(path, img.reshape(m, ih * iw), fmt="%d")
    return img


def run_driver(driver, cfg, workdir):
    argv = [driver, "--out", workdir, "--batch", str(cfg["batch"]),
            "--epochs", str(cfg["epochs"]), "--momentum", repr(cfg["momentum"]),
            "--momentum-weights", cfg["weights"], "--variance", cfg["variance"],
            "--estimator", cfg["estimator"], "--eps", repr(cfg["eps"]),
            "--gamma", repr(cfg["gamma"]), "--beta", repr(cfg["beta"]),
            "--seed", str(cfg["seed"]), "--order-seed", str(cfg["order_seed"])]
    if cfg["source"] == "images":
        path = os.path.join(workdir, "images.txt")
        cfg["img"] = images_file(path, cfg["m"], 8, 8, cfg["seed"])
        argv += ["--source", "images", "--images", path, "--ih", "8",
                 "--iw", "8", "--kernel", str(cfg["k"]),
                 "--channels", str(cfg["c"])]
    else:
        argv += ["--source", "field", "--samples", str(cfg["m"]),
                 "--height", str(cfg["h"]), "--width", str(cfg["w"])]
        for ch in cfg["channels"]:
            argv += ["--channel", "%r,%r,%r" % ch]
    subprocess.run(argv, check=True, capture_output=True, text=True)

    head, rows = read_tsv(os.path.join(workdir, "maps.tsv"))
    c = len(head) - 3
    s = np.array([int(r[0]) for r in rows])
    y = np.array([int(r[1]) for r in rows])
    x = np.array([int(r[2]) for r in rows])
    vals = np.array([[float(v) for v in r[3:]] for r in rows])
    m, h, w = s.max() + 1, y.max() + 1, x.max() + 1
    # The layout claimed in convpop.h: row (s, y, x) = (s H + y) W + x.
    if not np.array_equal(np.arange(len(rows)), (s * h + y) * w + x):
        raise RuntimeError("maps.tsv rows are not in (sample, y, x) order")
    nchw = np.empty((m, c, h, w))
    nchw[s, :, y, x] = vals
    out = {"nchw": nchw}
    if cfg["source"] == "images":
        _, frows = read_tsv(os.path.join(workdir, "filters.tsv"))
        k = cfg["k"]
        filt = np.zeros((c, 1, k, k))
        for r in frows:
            filt[int(r[0]), 0, int(r[1]), int(r[2])] = float(r[3])
        out["filters"] = filt
    _, orows = read_tsv(os.path.join(workdir, "order.tsv"))
    out["order"] = np.array([int(r[0]) for r in orows])
    _, brows = read_tsv(os.path.join(workdir, "buffers.tsv"))
    out["running_mean"] = np.array([float(r[1]) for r in brows])
    out["running_var"] = np.array([float(r[2]) for r in brows])
    out["updates"] = int(brows[0][3])
    _, yrows = read_tsv(os.path.join(workdir, "outputs.tsv"))
    out["rows"] = np.array([int(r[0]) for r in yrows])
    yv = np.array([[float(v) for v in r[1:]] for r in yrows])
    out["train_out"], out["eval_out"] = yv[:, :c], yv[:, c:]
    return out


def to_rows(t, hw):
    """NCHW -> rows (sample, position) x channels, as the driver lays out."""
    n, c = t.shape[0], t.shape[1]
    return t.reshape(n, c, hw).transpose(0, 2, 1).reshape(n * hw, c)


def peer(cfg, got):
    import torch
    import torch.nn.functional as F
    x = torch.from_numpy(got["nchw"])
    m, c, h, w = x.shape
    res = {}
    if cfg["source"] == "images":
        img = torch.from_numpy(cfg["img"]).unsqueeze(1)
        maps = F.conv2d(img, torch.from_numpy(got["filters"]))
        res["maps"] = maps.numpy()
    if cfg["weights"] == "old":
        # The decimal complement (bn.h): 0.9 old is 0.1 new.
        p = float(repr(round(1.0 - cfg["momentum"], 15)))
    else:
        p = cfg["momentum"]
    momentum = None if cfg["estimator"] == "cumulative" else p
    bn = torch.nn.BatchNorm2d(c, momentum=momentum, eps=cfg["eps"],
                              dtype=torch.float64)
    with torch.no_grad():
        bn.weight.fill_(cfg["gamma"])
        bn.bias.fill_(cfg["beta"])
    b = cfg["batch"]
    nb = m // b
    order = torch.from_numpy(got["order"])
    batches = [x[order[k * b:(k + 1) * b]] for k in range(nb)]
    rm_b = torch.zeros(c, dtype=torch.float64)
    rv_b = torch.ones(c, dtype=torch.float64)
    t = 0
    bn.train()
    with torch.no_grad():
        for _ in range(cfg["epochs"]):
            ys = []
            for xb in batches:
                ys.append(bn(xb))
                t += 1
                a = 1.0 / t if momentum is None else p
                var = xb.var(dim=(0, 2, 3), unbiased=False)
                rm_b = (1.0 - a) * rm_b + a * xb.mean(dim=(0, 2, 3))
                rv_b = (1.0 - a) * rv_b + a * var
        trained = torch.cat(batches)
        if cfg["variance"] == "unbiased":
            bn.eval()
            y_eval = bn(trained)
            rm, rv = bn.running_mean, bn.running_var
        else:
            rm, rv = rm_b, rv_b
            y_eval = F.batch_norm(trained, rm, rv, bn.weight, bn.bias,
                                  training=False, eps=cfg["eps"])
    res["updates"] = int(bn.num_batches_tracked)
    res["running_mean"] = rm.numpy().copy()
    res["running_var"] = rv.numpy().copy()
    res["train_out"] = to_rows(torch.cat(ys).numpy(), h * w)
    res["eval_out"] = to_rows(y_eval.numpy(), h * w)
    # The rows trained on, in training order, as the driver numbers them.
    res["rows"] = np.concatenate(
        [s * h * w + np.arange(h * w) for s in got["order"][:nb * b]])
    return res


def compare(driver, cfg, workdir):
    """Return (differences per quantity, list of structural problems)."""
    got = run_driver(driver, cfg, workdir)
    ref = peer(cfg, got)
    d = {q: rel_diff(got[q], ref[q]) for q in QUANTITIES[1:]}
    if "maps" in ref:
        d["maps"] = rel_diff(got["nchw"], ref["maps"])
    problems = []
    if got["updates"] != ref["updates"]:
        problems.append("updates %d != peer %d"
                        % (got["updates"], ref["updates"]))
    if not np.array_equal(got["rows"], ref["rows"]):
        problems.append("rows are not whole samples in order")
    return d, problems


def config(source, batch, momentum, weights, variance, epochs=1,
           estimator="ema", eps=1e-5, gamma=1.0, beta=0.0, seed=1,
           order_seed=1):
    cfg = dict(source=source, batch=batch, momentum=momentum,
               weights=weights, variance=variance, epochs=epochs,
               estimator=estimator, eps=eps, gamma=gamma, beta=beta,
               seed=seed, order_seed=order_seed)
    if source == "images":
        cfg.update(m=30, k=3, c=4)
    else:
        cfg.update(m=24, h=5, w=4, channels=((0.6, 1.0, 2.0),
                                             (-0.6, -0.5, 0.5),
                                             (0.0, 3.0, 1.0)))
    return cfg


def configs():
    cfgs = []
    for source in ("field", "images"):
        for b in (1, 2, 5, 8):
            # Both momentum conventions, both variance conventions.
            cfgs.append(config(source, b, 0.1, "new", "unbiased"))
            cfgs.append(config(source, b, 0.9, "old", "biased"))
            cfgs.append(config(source, b, 0.9, "old", "unbiased"))
            cfgs.append(config(source, b, 0.01, "new", "biased"))
        cfgs.append(config(source, 4, 0.1, "new", "unbiased", epochs=3,
                           order_seed=7))
        cfgs.append(config(source, 3, 0.5, "new", "biased", epochs=2,
                           gamma=-1.5, beta=0.25, eps=1e-3, seed=5))
        cfgs.append(config(source, 4, 0.1, "new", "unbiased",
                           estimator="cumulative", epochs=2))
    return cfgs


def label(cfg):
    s = "%-6s B=%-2d m=%-4g %s/%s" % (cfg["source"], cfg["batch"],
                                      cfg["momentum"], cfg["weights"],
                                      cfg["variance"])
    extra = []
    if cfg["estimator"] != "ema":
        extra.append(cfg["estimator"])
    if cfg["epochs"] != 1:
        extra.append("E=%d" % cfg["epochs"])
    if (cfg["gamma"], cfg["beta"], cfg["eps"]) != (1.0, 0.0, 1e-5):
        extra.append("g=%g b=%g eps=%g" % (cfg["gamma"], cfg["beta"],
                                           cfg["eps"]))
    return s + (" " + ",".join(extra) if extra else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", default=os.path.join(REPO, "build",
                                                     "bn2d_driver"))
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError as e:
        print("peer test needs torch: %s" % e, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bnstudy-bn2d-") as tmp:
        return run_checks(configs(),
                          lambda cfg: compare(args.driver, cfg, tmp),
                          {q: TOLERANCE for q in QUANTITIES}, label)


if __name__ == "__main__":
    sys.exit(main())
