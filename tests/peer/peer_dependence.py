#!/usr/bin/python3
"""Peer check of the layer's batch-dependence scores (issue 24,
docs/definitions.md "Batch dependence") against PyTorch.

For each configuration it writes a small population file, runs `bnstudy
run --population F --compositions M --write-features W` and makes the
same batches here, apart from src/model/compose.c: every B-subset by
itertools.combinations when C(n, B) <= M floor(n / B), else M shuffles
of PCG32 stream 24 (peer_clf.py's PCG32, Fisher-Yates from the last
element down). Each batch goes through PyTorch's own nn.BatchNorm1d in
training mode (its batch statistics, a fresh layer so no buffer moves)
and in evaluation mode (bnstudy's final buffers loaded), in float64; the
largest and the mean over rows of a row's largest range of an output, and
evaluation mode's range, must agree with summary.tsv's to 1e-12 of the
outputs' size, and the batches formed exactly. The classifier's scores,
with its accuracy on held-out batches of one class and of one group
(acc_train_by_group, a configuration with a `user` column), are
peer_clf.py's (--compositions configurations).

Prints one line per configuration and `N passed, N failed`; exits 1 if any
check fails.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from peer_clf import compositions, output_ranges, parse_tsv
from peer_torch import run_checks

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A range is a difference of two outputs of size up to a few: two correct
# implementations differ by a few ulps of those, a wrong batch or a wrong
# statistic by 1e-3 or more.
TOLERANCE = 1e-12

# (rows, batch size, compositions, eps, gamma, beta, seed): enumerated at
# the boundary (C(12, 2) = 66 = 11 x 6) and one shuffle short of it
# (10 x 6 = 60 < 66), sampled at B 4, and B = n (one composition: 0).
CONFIGS = [
    (12, 2, 11, 1e-5, 1.0, 0.0, 1),
    (12, 2, 10, 1e-5, 1.0, 0.0, 1),
    (12, 4, 5, 1e-3, 1.5, -0.25, 7),
    (30, 5, 7, 1e-5, 1.0, 0.0, 3),
    (12, 12, 3, 1e-5, 1.0, 0.0, 1),
]


def population(path, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    with open(path, "w") as fp:
        fp.write("a\tb\tc\n")
        for r in x:
            fp.write("\t".join(repr(float(v)) for v in r) + "\n")
    return x


def peer_scores(torch, x, b, m, eps, gamma, beta, seed, rm, rv):
    f = x.shape[1]
    batches = compositions(len(x), b, m, seed)
    train = torch.nn.BatchNorm1d(f, eps=eps, track_running_stats=False,
                                 dtype=torch.float64)
    ev = torch.nn.BatchNorm1d(f, eps=eps, dtype=torch.float64).eval()
    with torch.no_grad():
        for layer in (train, ev):
            layer.weight.fill_(gamma)
            layer.bias.fill_(beta)
        ev.running_mean.copy_(torch.tensor(rm, dtype=torch.float64))
        ev.running_var.copy_(torch.tensor(rv, dtype=torch.float64))
        xs = torch.tensor(x, dtype=torch.float64)
        yt = [train(xs[torch.tensor(bt)]).numpy() for bt in batches]
        ye = [ev(xs[torch.tensor(bt)]).numpy() for bt in batches]
    out = output_ranges(batches, yt, ye)
    return out, out["zmax"]


def check(bnstudy, torch, cfg, tmp):
    n, b, m, eps, gamma, beta, seed = cfg
    pop, feat = os.path.join(tmp, "pop.tsv"), os.path.join(tmp, "feat.tsv")
    x = population(pop, n, seed)
    out = subprocess.run(
        [bnstudy, "run", "--population", pop, "--batch-size", str(b),
         "--compositions", str(m), "--eps", repr(eps), "--gamma",
         repr(gamma), "--beta", repr(beta), "--seed", str(seed),
         "--write-features", feat],
        check=True, capture_output=True, text=True).stdout
    row = parse_tsv(out)[0]
    with open(feat) as fp:
        fr = parse_tsv(fp.read())
    rm = [float(r["running_mean"]) for r in fr]
    rv = [float(r["running_var"]) for r in fr]
    want, size = peer_scores(torch, x, b, m, eps, gamma, beta, seed, rm, rv)
    problems = []
    if int(row["dep_batches"]) != want["dep_batches"]:
        problems.append("dep_batches %s, peer %d" % (row["dep_batches"],
                                                     want["dep_batches"]))
    if float(row["batch_dependence_eval"]) != 0.0 or \
            want["batch_dependence_eval"] != 0.0:
        problems.append("batch_dependence_eval %s, peer %r"
                        % (row["batch_dependence_eval"],
                           want["batch_dependence_eval"]))
    worst = 0.0
    for name in ("batch_dependence", "batch_dependence_mean"):
        worst = max(worst, abs(float(row[name]) - want[name]) / size)
    if not worst <= TOLERANCE:
        problems.append("ranges %.2e of the outputs apart" % worst)
    return worst, problems


def run_configs(doc, configs, check, describe, tolerance=TOLERANCE):
    """check(bnstudy, torch, cfg, tmp), which returns (the largest
    difference, problems), for every configuration in a directory of its
    own, through peer_torch.run_checks: a line each (describe % cfg), the
    largest difference against tolerance, and `N passed, N failed`; the
    exit status."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"))
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError as e:
        print("peer test needs torch: %s" % e, file=sys.stderr)
        return 2

    def one(cfg):
        with tempfile.TemporaryDirectory(prefix="bnstudy-peer-") as tmp:
            worst, problems = check(args.bnstudy, torch, cfg, tmp)
        return {"difference": worst}, problems

    return run_checks(configs, one, {"difference": tolerance},
                      lambda cfg: describe % cfg)


def main():
    return run_configs(__doc__, CONFIGS, check,
                       "rows=%d B=%d compositions=%d eps=%g gamma=%g "
                       "beta=%g seed=%d")


if __name__ == "__main__":
    sys.exit(main())
