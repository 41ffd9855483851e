#!/usr/bin/python3
"""Peer check of the layer on padded sequences (issue 24,
docs/definitions.md "Padded sequences") against PyTorch.

For each configuration it writes a population file of positions, runs
`bnstudy run --population F --length L --min-length L0 --mask POLICY
--write-features W` and trains the same layer here, from the same
sequence lengths (PCG32 stream 25 from the run's seed, uniform on
L0..L by rand.c's rule) and the same shuffle of the sequences (stream 2,
Fisher-Yates from the last element down), both made here from
peer_clf.py's PCG32:

  * padded: PyTorch's own nn.BatchNorm1d on the batch as (B, C, L), the
    padding 0, in training mode: its output and its running statistics
    (momentum p on the new value, unbiased variance, as bnstudy's
    `momentum_weights = new`, `variance = unbiased`);
  * real: the masked statistics computed by hand in PyTorch over the
    real positions (biased variance to normalise, the unbiased one of
    the real positions into the buffers);
  * mismatch: training normalises by hand over the real positions while
    nn.BatchNorm1d's buffers take the padded batch.

Then evaluation mode, nn.BatchNorm1d with the buffers, on every real
position of the last epoch's batches.

With a source other than `generated`, the real positions come from a
file bnstudy reads (`[sequence] file`, --set sequence.file=F): the
lengths made here written as a TSV column (`lengths`), their mask as a
(N, L) float64 .npy as PyTorch exports one (`mask`), or a mask made
here with holes, not a prefix of each sequence (`holes`, PCG32 stream
99), which the peer then uses for its own real positions. The buffers (features.tsv), the
train/eval RMS over the real positions, the padded share and the closed
form of the padding's effect must agree to 1e-12.

Prints one line per configuration and `N passed, N failed`; exits 1 if
any check fails.
"""

import math
import os
import subprocess
import sys

import numpy as np

from peer_clf import PCG32, parse_tsv, rand_index
from peer_dependence import run_configs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Sums of a few hundred values of size ~1 in another order: a few 1e-16;
# a wrong mask, divisor or buffer update is 1e-3 or more.
TOLERANCE = 1e-12
PCG32_INITSEQ_SHUFFLE, PCG32_INITSEQ_SEQ_LENGTHS = 2, 25

# (sequences, length, min_length, batch, epochs, mask, momentum, seed,
# where the real positions come from)
CONFIGS = [
    (24, 8, 2, 4, 1, "padded", 0.1, 1, "generated"),
    (24, 8, 2, 4, 2, "real", 0.1, 1, "generated"),
    (24, 8, 2, 4, 1, "mismatch", 0.1, 1, "generated"),
    (30, 10, 1, 5, 3, "padded", 0.3, 4, "generated"),
    (30, 10, 1, 6, 1, "mismatch", 0.3, 4, "generated"),
    (16, 5, 5, 4, 1, "real", 0.1, 2, "generated"),
    (24, 8, 2, 4, 2, "real", 0.1, 1, "lengths"),
    (24, 8, 2, 4, 1, "mismatch", 0.1, 1, "mask"),
    (30, 10, 1, 5, 2, "padded", 0.3, 4, "mask"),
    (30, 10, 1, 5, 2, "real", 0.3, 4, "holes"),
    (30, 10, 1, 6, 1, "mismatch", 0.3, 4, "holes"),
]


def shuffle(rng, v):
    for i in range(len(v) - 1, 0, -1):
        j = rand_index(rng, i + 1)
        v[i], v[j] = v[j], v[i]
    return v


def population(path, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)) * [1.0, 2.0, 0.5] + [0.5, -1.0, 2.0]
    with open(path, "w") as fp:
        fp.write("a\tb\tc\n")
        for r in x:
            fp.write("\t".join(repr(float(v)) for v in r) + "\n")
    return x


def real_positions(cfg):
    """The (ns, L) mask of real positions: a prefix of the generated
    length of each sequence, or for `holes` each position real with
    probability 0.7 (at least the first), from PCG32 stream 99."""
    ns, L, L0, seed, source = cfg[0], cfg[1], cfg[2], cfg[7], cfg[8]
    real = np.zeros((ns, L), dtype=bool)
    if source == "holes":
        rng = PCG32(seed, 99)
        for i in range(ns):
            for t in range(L):
                real[i, t] = t == 0 or rand_index(rng, 10) < 7
        return real
    rng = PCG32(seed, PCG32_INITSEQ_SEQ_LENGTHS)
    for i in range(ns):
        real[i, :L0 + rand_index(rng, L - L0 + 1)] = True
    return real


def peer(torch, x, cfg, mask_np):
    ns, L, L0, B, E, mask, p, seed, _ = cfg
    C = x.shape[1]
    order = shuffle(PCG32(seed, PCG32_INITSEQ_SHUFFLE), list(range(ns)))
    real = torch.tensor(mask_np)
    # Padding is 0 wherever the mask says so, whatever the file's rows
    # hold there.
    seqs = torch.tensor(x.reshape(ns, L, C).transpose(0, 2, 1).copy()) * \
        real[:, None, :]
    lens = [int(r.sum()) for r in mask_np]
    bn = torch.nn.BatchNorm1d(C, momentum=p, eps=1e-5, affine=False,
                              dtype=torch.float64)
    out = []
    with torch.no_grad():
        for ep in range(E):
            out = []
            for k in range(ns // B):
                idx = order[k * B:(k + 1) * B]
                xb, mb = seqs[idx], real[idx]
                vals = xb.permute(0, 2, 1)[mb]  # the real positions, R x C
                m, v = vals.mean(0), vals.var(0, unbiased=False)
                if mask == "real":
                    r = vals.shape[0]
                    bn.running_mean.mul_(1 - p).add_(p * m)
                    bn.running_var.mul_(1 - p).add_(p * v * r / (r - 1))
                    yt = (vals - m) / torch.sqrt(v + bn.eps)
                else:
                    bn.train()
                    y = bn(xb)  # the padded batch: PyTorch's statistics
                    yt = y.permute(0, 2, 1)[mb] if mask == "padded" else \
                        (vals - m) / torch.sqrt(v + bn.eps)
                out.append((xb, mb, yt))
        bn.eval()
        sq, kept = 0.0, 0
        for xb, mb, yt in out:
            ye = bn(xb).permute(0, 2, 1)[mb]
            sq += float(((yt - ye) ** 2).sum())
            kept += yt.shape[0]
    allx = seqs.permute(0, 2, 1)[real]
    mu, var = allx.mean(0).numpy(), allx.var(0, unbiased=False).numpy()
    pad = 1.0 - sum(lens) / (ns * L)
    return dict(rm=bn.running_mean.numpy(), rv=bn.running_var.numpy(),
                train_eval_rmse=math.sqrt(sq / (kept * C)), pad_fraction=pad,
                closed_mean_err=math.sqrt(float(np.mean((pad * mu) ** 2))),
                closed_var_err=math.sqrt(float(np.mean(
                    (pad * ((1 - pad) * mu ** 2 - var)) ** 2))))


def sequence_file(tmp, cfg, real):
    """bnstudy's options for the real positions of cfg's source."""
    source, L0 = cfg[8], cfg[2]
    if source == "generated":
        return ["--min-length", str(L0)]
    if source == "lengths":
        path = os.path.join(tmp, "lengths.tsv")
        with open(path, "w") as fp:
            fp.write("length\n" + "".join("%d\n" % r.sum() for r in real))
    else:
        path = os.path.join(tmp, "mask.npy")
        np.save(path, real.astype(np.float64))
    return ["--set", "sequence.file=" + path]


def check(bnstudy, torch, cfg, tmp):
    ns, L, L0, B, E, mask, p, seed, source = cfg
    pop, feat = os.path.join(tmp, "pop.tsv"), os.path.join(tmp, "feat.tsv")
    x = population(pop, ns * L, seed)
    real = real_positions(cfg)
    out = subprocess.run(
        [bnstudy, "run", "--population", pop, "--length", str(L)] +
        sequence_file(tmp, cfg, real) +
        ["--mask", mask, "--batch-size", str(B),
         "--epochs", str(E), "--momentum", repr(p), "--momentum-weights",
         "new", "--variance", "unbiased", "--seed", str(seed),
         "--write-features", feat],
        check=True, capture_output=True, text=True).stdout
    row = parse_tsv(out)[0]
    with open(feat) as fp:
        fr = parse_tsv(fp.read())
    want = peer(torch, x, cfg, real)
    got = dict(rm=np.array([float(r["running_mean"]) for r in fr]),
               rv=np.array([float(r["running_var"]) for r in fr]))
    worst = max(float(np.max(np.abs(got[k] - want[k]) /
                             np.maximum(np.abs(want[k]), 1.0)))
                for k in ("rm", "rv"))
    for k in ("train_eval_rmse", "pad_fraction", "closed_mean_err",
              "closed_var_err"):
        worst = max(worst, abs(float(row[k]) - want[k]) / max(abs(want[k]), 1.0))
    return worst, [] if worst <= TOLERANCE else ["%.2e apart" % worst]


def main():
    return run_configs(__doc__, CONFIGS, check,
                       "sequences=%d length=%d min_length=%d B=%d epochs=%d "
                       "mask=%s p=%g seed=%d from %s", TOLERANCE)


if __name__ == "__main__":
    sys.exit(main())
