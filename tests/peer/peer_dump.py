#!/usr/bin/python3
"""Round trip of scripts/dump_bn_inputs.py on a small model built here.

A float64 model with a BatchNorm2d (momentum 0.1, PyTorch's default), a
BatchNorm1d on 3-D input (momentum 0.3, starting from running statistics
that are not 0 and 1, as a checkpoint's would be) and a BatchNorm1d with
momentum=None (the cumulative average) trains for a few SGD steps on
batches of unequal size, with an evaluation pass in between. Then:

  * the dumped running statistics are the model's own buffers, bit for bit;
  * NumPy, from the dumped inputs and batch boundaries alone, replays
    PyTorch's rule (new-value weight = momentum, or 1/t for None; the
    unbiased batch variance) from the dumped initial values and reproduces
    the running mean and variance to 1e-12 relative, and the number of
    batches tracked exactly;
  * the evaluation pass is not recorded, and BatchNorm2d's rows are the
    input with channels last, in the order sample, row, column;
  * `bnstudy population` reads every dump as the same doubles NumPy does;
  * `bnstudy diagnose --dump` on every layer's files reports the model's
    own running statistics as the checkpoint's, bit for bit, and its
    replay of the batches (bnstudy's layer, PyTorch's convention, from the
    dumped initial values) reproduces them to 1e-12 relative, with the
    updates the layer counted;
  * the command-line form, on a model saved with torch.save and on its
    state_dict with --module, moves nothing: the file's bytes and the
    buffers stay, the dumped statistics are the buffers bit for bit, and
    the fresh statistics are what NumPy computes from the inputs PyTorch
    feeds each layer in training mode and in evaluation mode (hooked here
    on a copy of the model);
  * `bnstudy diagnose DIR` reads that folder and opens with a verdict;
  * a model with dropout before a batch-norm layer, dumped twice with
    labels, gives the same bytes in every file (the training-mode passes
    put only the batch-norm layers in training mode, dropout stays off),
    and the layer's training-mode statistics are NumPy's of the linear
    layer's output without dropout;
  * BNRecorder.batch(lengths): the real positions' and padding's
    statistics over the last ceil(3/p) kept batches are NumPy's from the
    recorded rows and the lengths, the padded shares the counts', and
    bad lengths, devices or scores raise a ValueError.

Prints one line per check and `N passed, N failed`; exits 1 on a failure.
"""

import argparse
import copy
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from dump_bn_inputs import BNRecorder, unchanged  # noqa: E402
from bndump import passes  # noqa: E402

# The replay is a few dozen float64 moving-average updates of batch means
# and variances that NumPy and PyTorch compute by different summations:
# they differ by rounding, a few 1e-16. A wrong convention is far larger:
# the biased variance is off by 1/(rows - 1) >= 1/68, a momentum on the
# wrong side by a factor of 9 in the new value's weight, a batch split at
# the wrong row by the difference of two batches' means.
TOLERANCE = 1e-12


def build_model():
    torch.manual_seed(12)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 3, padding=1),
        torch.nn.BatchNorm2d(3),
        torch.nn.ReLU(),
        torch.nn.Flatten(2),                # (N, 3, 36): BatchNorm1d on 3-D
        torch.nn.BatchNorm1d(3, momentum=0.3),
        torch.nn.Flatten(1),
        torch.nn.Linear(3 * 36, 5),
        torch.nn.BatchNorm1d(5, momentum=None),
    ).to(torch.float64)
    with torch.no_grad():
        model[4].running_mean.copy_(torch.tensor([0.5, -2.0, 3.0]))
        model[4].running_var.copy_(torch.tensor([4.0, 0.25, 9.0]))
        model[4].num_batches_tracked.fill_(7)
    return model


def batches(n, sizes, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 2, 6, 6, generator=g, dtype=torch.float64) * 1.5 + 0.7
    out, i = [], 0
    for b in sizes:
        out.append(x[i:i + b])
        i += b
    return x, out


def read_tsv(path):
    with open(path) as fp:
        lines = fp.read().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, l.split("\t"))) for l in lines[1:]]


def replay(dump, name):
    """PyTorch's update rule in NumPy, from the dump alone."""
    x = np.load(os.path.join(dump, name + ".npy"))
    stats = read_tsv(os.path.join(dump, name + ".stats.tsv"))
    layer = {r["key"]: r["value"] for r in
             read_tsv(os.path.join(dump, name + ".layer.tsv"))}
    rm = np.array([float(r["initial_mean"]) for r in stats])
    rv = np.array([float(r["initial_var"]) for r in stats])
    t = int(stats[0]["initial_batches_tracked"])
    for b in read_tsv(os.path.join(dump, name + ".batches.tsv")):
        first, rows = int(b["first_row"]), int(b["rows"])
        chunk = x[first:first + rows]
        t += 1
        p = 1.0 / t if layer["momentum"] == "None" else float(layer["momentum"])
        rm = (1 - p) * rm + p * chunk.mean(axis=0)
        rv = (1 - p) * rv + p * chunk.var(axis=0, ddof=1)
    return x, stats, rm, rv, t


def rel(got, want, floor):
    got, want, floor = map(np.asarray, (got, want, floor))
    d = np.abs(got - want) / np.maximum(np.maximum(np.abs(want), floor),
                                        np.finfo(np.float64).tiny)
    return float(np.max(d))


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=""):
        print("%s  %-60s %s" % ("ok  " if ok else "FAIL", what, detail))
        self.passed += bool(ok)
        self.failed += not ok


def check_dump(c, dump, model, names, exe, label):
    for name, idx in names:
        bn = model[idx]
        x, stats, rm, rv, t = replay(dump, name)
        want_m = bn.running_mean.numpy()
        want_v = bn.running_var.numpy()
        dumped_m = np.array([float(r["running_mean"]) for r in stats])
        dumped_v = np.array([float(r["running_var"]) for r in stats])
        c.check(np.array_equal(dumped_m, want_m) and
                np.array_equal(dumped_v, want_v) and
                int(stats[0]["num_batches_tracked"]) ==
                int(bn.num_batches_tracked),
                "%s %s: dumped statistics are the model's" % (label, name))
        # The mean is judged on the scale of the spread (sqrt of the
        # variance), where a mean near zero keeps its meaning.
        dm = rel(rm, dumped_m, np.sqrt(dumped_v))
        dv = rel(rv, dumped_v, 0.0)
        c.check(dm <= TOLERANCE and dv <= TOLERANCE and
                t == int(bn.num_batches_tracked),
                "%s %s: NumPy replay reproduces them" % (label, name),
                "mean %.2e var %.2e updates %d" % (dm, dv, t))
        out = subprocess.run([exe, "population", "--population",
                              os.path.join(dump, name + ".npy")],
                             check=True, capture_output=True,
                             text=True).stdout.splitlines()
        got = np.array([[float(v) for v in l.split("\t")[1:]]
                        for l in out[1:]])
        c.check(got.shape == x.shape and
                np.array_equal(got.view(np.uint64), x.view(np.uint64)),
                "%s %s: bnstudy reads the %d x %d dump" % (label, name,
                                                           *x.shape))
        # The dump fed to bnstudy diagnose: the checkpoint's statistics as
        # they are, and bnstudy's layer replaying the batches gives them.
        out = subprocess.run([exe, "diagnose", "--dump",
                              os.path.join(dump, name), "--tsv"],
                             check=True, capture_output=True,
                             text=True).stdout.splitlines()
        head = out[0].split("\t")
        rows = [dict(zip(head, l.split("\t"))) for l in out[1:]]
        col = lambda k: np.array([float(r[k]) for r in rows])
        same = np.array_equal(col("running_mean"), want_m) and \
            np.array_equal(col("running_var"), want_v)
        rm, rv = col("replay_mean"), col("replay_var")
        dm = rel(rm, want_m, np.sqrt(want_v))
        dv = rel(rv, want_v, 0.0)
        updates = {int(r["updates"]) for r in rows}
        want_t = int(bn.num_batches_tracked) - \
            int(stats[0]["initial_batches_tracked"])
        c.check(same and dm <= TOLERANCE and dv <= TOLERANCE and
                updates == {want_t},
                "%s %s: bnstudy diagnose replays the model's statistics"
                % (label, name),
                "mean %.2e var %.2e updates %s" % (dm, dv, sorted(updates)))


def hooked_rows(model, x, batch, train_mode):
    """Each batch-norm layer's inputs, as channels-last rows, hooked here
    on a copy of the model in the given mode (every momentum 0)."""
    m = copy.deepcopy(model)
    rows = {}
    for name, mod in m.named_modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            mod.momentum = 0.0
            mod.register_forward_hook(
                lambda mod, inp, out, name=name: rows.setdefault(
                    name, []).append(inp[0].movedim(1, -1).reshape(
                        -1, inp[0].shape[1]).numpy()))
    m.train(train_mode)
    with torch.no_grad():
        for i in range(0, x.shape[0], batch):
            m(x[i:i + batch])
    return {k: np.concatenate(v) for k, v in rows.items()}


def check_cli(c, tmp, x, exe, env):
    """The command line on a model saved whole and as a state_dict."""
    model = build_model()
    model.train()
    with torch.no_grad():
        for i in range(0, 101, 30):
            model(x[i:i + 30])  # a checkpoint whose buffers have moved
    model.eval()
    mpath = os.path.join(tmp, "model.pt")
    torch.save(model, mpath)
    spath = os.path.join(tmp, "state.pt")
    torch.save(model.state_dict(), spath)
    ipath = os.path.join(tmp, "inputs.npy")
    np.save(ipath, x.numpy())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    digest = {p: open(p, "rb").read() for p in (mpath, spath)}
    want_tr = hooked_rows(model, x, 30, True)
    want_ev = hooked_rows(model, x, 30, False)
    for label, extra in (("cli", ["--model", mpath]),
                         ("cli state_dict", ["--model", spath, "--module",
                                             "peer_dump:build_model",
                                             "--source", os.path.dirname(
                                                 os.path.abspath(__file__))])):
        dump = os.path.join(tmp, label.replace(" ", "-"))
        r = subprocess.run([sys.executable,
                            os.path.join(REPO, "scripts", "dump_bn_inputs.py"),
                            "--train-inputs", ipath, "--eval-inputs", ipath,
                            "--batch-size", "30", "--out", dump] + extra,
                           capture_output=True, text=True, env=env)
        c.check(r.returncode == 0, "%s: dumped" % label, r.stderr[-200:])
        if r.returncode != 0:
            continue
        c.check(open(extra[1], "rb").read() == digest[extra[1]] and
                all(torch.equal(before[k], v)
                    for k, v in model.state_dict().items()),
                "%s: the checkpoint's file and buffers are as they were"
                % label)
        for name, idx in (("1", 1), ("4", 4), ("7", 7)):
            stats = read_tsv(os.path.join(dump, name + ".stats.tsv"))
            col = lambda k: np.array([float(r[k]) for r in stats])
            bn = model[idx]
            c.check(np.array_equal(col("running_mean"),
                                   bn.running_mean.numpy()) and
                    np.array_equal(col("running_var"),
                                   bn.running_var.numpy()) and
                    int(stats[0]["num_batches_tracked"]) ==
                    int(bn.num_batches_tracked),
                    "%s %s: the dumped buffers are the model's" % (label,
                                                                   name))
            tr, ev = want_tr[name], want_ev[name]
            d = max(rel(col("train_mean"), tr.mean(0), tr.std(0)),
                    rel(col("train_var"), tr.var(0), 0.0),
                    rel(col("train_eval_mode_mean"), ev.mean(0), ev.std(0)),
                    rel(col("train_eval_mode_var"), ev.var(0), 0.0))
            c.check(d <= TOLERANCE, "%s %s: fresh statistics as NumPy "
                    "computes them" % (label, name), "%.2e" % d)
            kept = np.load(os.path.join(dump, name + ".train.npy"))
            c.check(np.array_equal(kept, tr),
                    "%s %s: the training-mode rows kept are PyTorch's"
                    % (label, name))
        out = subprocess.run([exe, "diagnose", dump], capture_output=True,
                             text=True)
        c.check(out.returncode == 0 and out.stdout.startswith("verdict: "),
                "%s: bnstudy diagnose DIR opens with the verdict" % label,
                (out.stdout + out.stderr).splitlines()[:1])


def check_refusals(c, tmp, env):
    """Bad input: status 2, one line naming the file or option, no
    folder left behind."""
    src = os.path.join(tmp, "usercode")
    os.makedirs(src)
    with open(os.path.join(src, "usermodels.py"), "w") as fp:
        fp.write("import torch\n\nclass Net(torch.nn.Module):\n"
                 "    def __init__(self):\n        super().__init__()\n"
                 "        self.fc = torch.nn.Linear(3, 4)\n"
                 "        self.bn = torch.nn.BatchNorm1d(4)\n\n"
                 "    def forward(self, x):\n        return self.bn(self.fc(x))\n")
    sys.path.insert(0, src)
    import usermodels  # noqa: E402
    sys.path.remove(src)
    net = usermodels.Net().eval()
    other = os.path.join(tmp, "elsewhere")
    os.makedirs(other)
    pickled = os.path.join(other, "net.pt")
    torch.save(net, pickled)
    state = os.path.join(other, "net.state.pt")
    torch.save(net.state_dict(), state)
    # A diverged checkpoint: one NaN weight, named with its file.
    with torch.no_grad():
        net.fc.weight[1, 2] = float("nan")
    diverged = os.path.join(other, "diverged.pt")
    torch.save(net, diverged)
    x = os.path.join(other, "x.npy")
    np.save(x, np.random.default_rng(1).standard_normal((40, 3)))
    y = os.path.join(other, "y.npy")
    np.save(y, np.zeros(39, dtype=np.int64))
    full = os.path.join(tmp, "full")
    os.makedirs(full)
    open(os.path.join(full, "f"), "w").close()
    script = os.path.join(REPO, "scripts", "dump_bn_inputs.py")
    cases = [
        ("a pickle whose class is not importable", [pickled], "--source"),
        ("a state_dict without --module", [state], "--module"),
        ("labels that do not match", [pickled, "--source", src,
                                      "--eval-inputs", x, "--eval-labels",
                                      y], "39 labels for 40 samples"),
        ("an --out folder that is not empty", [pickled, "--source", src,
                                               "--out", full], "--out"),
        ("a checkpoint whose weights hold a NaN", [diverged, "--source",
                                                   src],
         "diverged.pt: fc.weight holds 1 non-finite value"),
    ]
    for what, extra, needle in cases:
        out = os.path.join(tmp, "refused")
        args = [sys.executable, script, "--model", extra[0],
                "--train-inputs", x, "--batch-size", "10"] + extra[1:]
        if "--out" not in extra:
            args += ["--out", out]
        r = subprocess.run(args, capture_output=True, text=True, env=env,
                           cwd=tmp)
        lines = r.stderr.strip().splitlines()
        c.check(r.returncode == 2 and len(lines) == 1 and needle in lines[0]
                and not os.path.exists(out) and
                not os.path.exists(out + ".part"),
                "dump refuses %s" % what, r.stderr.strip()[-160:])
    # The moved-checkpoint check compares bits: a NaN is itself there,
    # and a NaN of the other sign is not.
    w = net.state_dict()
    same = {k: v.clone() for k, v in w.items()}
    flipped = {k: v.clone() for k, v in w.items()}
    flipped["fc.weight"][1, 2] = -flipped["fc.weight"][1, 2]
    c.check(unchanged(w, same) and not unchanged(w, flipped),
            "the dump's unchanged-check is bitwise, NaN-safe")
    r = subprocess.run([sys.executable, script, "--model", pickled,
                        "--source", src, "--train-inputs", x,
                        "--batch-size", "10", "--out",
                        os.path.join(tmp, "usernet")],
                       capture_output=True, text=True, env=env, cwd=tmp)
    c.check(r.returncode == 0, "dump loads a user's class with --source",
            r.stderr.strip()[-160:])


def check_dropout(c, tmp, env):
    """Dropout stays in evaluation mode in every pass: two dumps of the
    same checkpoint are the same bytes, and what the batch-norm layer saw
    in training mode is the linear layer's output, no unit dropped."""
    torch.manual_seed(5)
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.Dropout(0.5),
        torch.nn.BatchNorm1d(6), torch.nn.ReLU(),
        torch.nn.Linear(6, 3)).to(torch.float64)
    g = torch.Generator().manual_seed(6)
    x = torch.randn(90, 4, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (90,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for i in range(0, 90, 15):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[i:i + 15]),
                                          y[i:i + 15]).backward()
        opt.step()
    model.eval()
    mpath = os.path.join(tmp, "dropout.pt")
    torch.save(model, mpath)
    xpath, ypath = (os.path.join(tmp, "dropout-" + n + ".npy")
                    for n in ("x", "y"))
    np.save(xpath, x.numpy())
    np.save(ypath, y.numpy())
    dumps = []
    for k in range(2):
        out = os.path.join(tmp, "dropout-dump%d" % k)
        r = subprocess.run([sys.executable,
                            os.path.join(REPO, "scripts", "dump_bn_inputs.py"),
                            "--model", mpath, "--train-inputs", xpath,
                            "--eval-inputs", xpath, "--eval-labels", ypath,
                            "--batch-size", "15", "--out", out],
                           capture_output=True, text=True, env=env)
        c.check(r.returncode == 0, "dropout: dump %d" % (k + 1),
                r.stderr[-200:])
        if r.returncode != 0:
            return
        dumps.append(out)
    files = sorted(os.listdir(dumps[0]))
    differ = [f for f in files
              if open(os.path.join(dumps[0], f), "rb").read() !=
              open(os.path.join(dumps[1], f), "rb").read()]
    c.check(files == sorted(os.listdir(dumps[1])) and not differ,
            "dropout: two dumps of one checkpoint are the same bytes",
            "differ: %s" % ", ".join(differ) if differ else "")
    with torch.no_grad():
        lin = model[0](x).numpy()
    stats = read_tsv(os.path.join(dumps[0], "2.stats.tsv"))
    got_m = np.array([float(r["train_mean"]) for r in stats])
    got_v = np.array([float(r["train_var"]) for r in stats])
    d = max(rel(got_m, lin.mean(0), lin.std(0)), rel(got_v, lin.var(0), 0.0))
    c.check(d <= TOLERANCE, "dropout: training mode fed the layer with no "
            "unit dropped", "%.2e" % d)


class WithUnusedBN(torch.nn.Module):
    """A head declared and never called, as a model keeps a left-over
    auxiliary branch."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 6)
        self.bn = torch.nn.BatchNorm1d(6)
        self.aux_bn = torch.nn.BatchNorm1d(6)

    def forward(self, x):
        return self.bn(self.fc(x))


def check_unused_layer(c, tmp, env):
    """A batch-norm layer the forward never calls: the dump diagnoses the
    others and names it in the notes, not a ZeroDivisionError."""
    torch.manual_seed(8)
    model = WithUnusedBN().to(torch.float64).eval()
    mpath = os.path.join(tmp, "unused.state.pt")
    torch.save(model.state_dict(), mpath)
    xpath = os.path.join(tmp, "unused-x.npy")
    np.save(xpath, np.random.default_rng(9).standard_normal((40, 4)))
    out = os.path.join(tmp, "unused-dump")
    r = subprocess.run([sys.executable,
                        os.path.join(REPO, "scripts", "dump_bn_inputs.py"),
                        "--model", mpath, "--module",
                        "peer_dump:WithUnusedBN", "--source",
                        os.path.dirname(os.path.abspath(__file__)),
                        "--train-inputs", xpath, "--batch-size", "10",
                        "--out", out],
                       capture_output=True, text=True, env=env)
    c.check(r.returncode == 0, "unused layer: the dump is made",
            r.stderr.strip()[-200:])
    if r.returncode != 0:
        return
    layers = [row["layer"] for row in
              read_tsv(os.path.join(out, "layers.tsv"))]
    keys = dict(line.rstrip("\n").split("\t", 1) for line in
                open(os.path.join(out, "model.tsv")))
    c.check(layers == ["bn"] and "not diagnosed: aux_bn" in
            keys.get("notes", ""),
            "unused layer: left out of layers.tsv and named in the notes",
            "%s; notes %r" % (layers, keys.get("notes")))


def check_recorded_lengths(c, tmp):
    """BNRecorder.batch(lengths): the real positions' and the padding's
    statistics over the last ceil(3/p) kept batches are NumPy's from the
    recorded rows and the lengths; the shares are the counts'; and bad
    lengths, devices or scores are refused with a ValueError naming the
    call."""
    torch.manual_seed(4)
    net = torch.nn.Sequential(torch.nn.Conv1d(2, 3, 3, padding=1),
                              torch.nn.BatchNorm1d(3, momentum=0.5)
                              ).to(torch.float64)
    g = torch.Generator().manual_seed(8)
    rec = BNRecorder(net)
    net.train()
    lens = []
    with torch.no_grad():
        for k in range(10):
            b = 5 + k % 3
            n = torch.randint(2, 10, (b,), generator=g)
            lens.append(n.numpy())
            x = torch.randn(b, 2, 9, generator=g, dtype=torch.float64)
            x = x * (torch.arange(9)[None, None] < n[:, None, None])
            with rec.batch(n):
                net(x)
        net.eval()
        ev = torch.full((4,), 3)
        with rec.batch(ev):
            net(torch.zeros(4, 2, 9, dtype=torch.float64))
    out = os.path.join(tmp, "lengths")
    rec.write(out)
    rows = np.load(os.path.join(out, "1.npy"))
    stats = read_tsv(os.path.join(out, "1.stats.tsv"))
    keys = {r["key"]: r["value"] for r in
            read_tsv(os.path.join(out, "1.layer.tsv"))}
    w = math.ceil(3 / 0.5)
    per = [r.reshape(-1, 9, 3) for r in
           np.split(rows, np.cumsum([len(n) * 9 for n in lens])[:-1])]
    masks = [np.arange(9)[None] < n[:, None] for n in lens]
    real = np.concatenate([p[m] for p, m in zip(per[-w:], masks[-w:])])
    pad = np.concatenate([p[~m] for p, m in zip(per[-w:], masks[-w:])])
    bvar = np.mean([p[m].var(0, ddof=1) for p, m in
                    zip(per[-w:], masks[-w:])], 0)
    col = lambda k: np.array([float(r[k]) for r in stats])  # noqa: E731
    d = max(rel(col("train_real_mean"), real.mean(0), real.std(0)),
            rel(col("train_real_var"), real.var(0), 0.0),
            rel(col("train_pad_mean"), pad.mean(0), pad.std(0)),
            rel(col("train_pad_var"), pad.var(0), 0.0),
            rel(col("train_real_batch_var"), bvar, 0.0))
    share = len(pad) / float(len(pad) + len(real))
    c.check(d <= TOLERANCE and
            abs(float(keys["pad_train_share"]) - share) <= 1e-15 and
            float(keys["pad_eval_share"]) == 2 / 3.0 and
            keys["train_mode_positions"] == "all",
            "recorder lengths: the last %d batches' real and padded "
            "statistics, the shares" % w, "%.2e" % d)
    rec.close()
    bad = [("lengths for another batch", lambda: _forward_with(
        BNRecorder(net), net, [3, 3])),
        ("devices 0", lambda: BNRecorder(net, devices=0)),
        ("scores without labels", lambda: BNRecorder(net).write(
            os.path.join(tmp, "nolabels"), eval_inputs=np.zeros((4, 2, 9)),
            batch_size=4))]
    for what, call in bad:
        try:
            call()
            msg = None
        except ValueError as e:
            msg = str(e)
        c.check(msg is not None and msg.startswith("BNRecorder"),
                "recorder refuses %s" % what, msg or "accepted")


def check_label_shapes(c):
    """label_exchange counts one class a row. K batches of b rows, each
    of its own one of C = K classes: a batch's chi-square is b (C - 1)
    (its own class (b - b/C)^2 / (b/C), each other (b/C)), n (C - 1) in
    all, over the random batches' mean K (C - 1) (n - b) / (n - 1): b (n -
    1) / (n - b). A column of labels reads as the same labels; one-hot
    rows or a label per position, which are not one class a row, measure
    nothing (their flattened counts are not the batches' classes)."""
    n, b, k = 64, 16, 4
    y = np.repeat(np.arange(k), b)
    cut = list(range(0, n + 1, b))
    want = b * (n - 1) / (n - b)
    got = passes.label_exchange(y, cut)
    c.check(got is not None and abs(got - want) <= 1e-12 * want,
            "label_exchange of batches of one class each is b (n-1)/(n-b) "
            "(%r, want %r)" % (got, want))
    c.check(passes.label_exchange(y[:, None], cut) == got,
            "label_exchange: an (N, 1) column reads as its labels")
    c.check(passes.label_exchange(np.eye(k)[y], cut) is None and
            passes.label_exchange(np.stack([y, y], axis=1), cut) is None,
            "label_exchange: one-hot rows and a label per position "
            "measure nothing")


def _forward_with(rec, net, lengths):
    try:
        with rec.batch(lengths), torch.no_grad():
            net(torch.zeros(4, 2, 9, dtype=torch.float64))
    finally:
        rec.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bnstudy", default=os.path.join(REPO, "bnstudy"))
    args = ap.parse_args()
    # Bit-equal statistics from two processes need the same reduction
    # order: PyTorch splits its sums across threads (2.6 does on two
    # cores), so the dump script runs on one thread too.
    one_thread = dict(os.environ, OMP_NUM_THREADS="1")
    torch.set_num_threads(1)
    c = Checks()
    layers = [("1", 1), ("4", 4), ("7", 7)]

    with tempfile.TemporaryDirectory(prefix="bnstudy-peer-dump-") as tmp:
        model = build_model()
        x, bs = batches(101, (32, 32, 20, 17), seed=3)
        rec = BNRecorder(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for epoch in range(2):
            model.train()
            for b in bs:
                opt.zero_grad()
                model(b).pow(2).mean().backward()
                opt.step()
            model.eval()  # not recorded: no running-statistics update
            with torch.no_grad():
                model(x)
        rec.close()
        dump = os.path.join(tmp, "api")
        rec.write(dump)
        check_dump(c, dump, model, layers, args.bnstudy, "api")

        recorded = read_tsv(os.path.join(dump, "1.batches.tsv"))
        c.check([int(r["rows"]) for r in recorded] ==
                [b.shape[0] * 36 for b in bs] * 2 and
                recorded[0]["shape"] == "32x3x6x6",
                "api: 8 training batches recorded, the evaluations not")
        # BatchNorm2d's layout, on a lone layer fed a known input.
        probe = torch.nn.Sequential(torch.nn.BatchNorm2d(3)).to(torch.float64)
        prec = BNRecorder(probe)
        inp = torch.arange(2 * 3 * 2 * 4, dtype=torch.float64).reshape(2, 3, 2, 4)
        probe.train()
        probe(inp)
        prec.close()
        prec.write(os.path.join(tmp, "probe"))
        got = np.load(os.path.join(tmp, "probe", "0.npy"))
        want = inp.numpy().transpose(0, 2, 3, 1).reshape(-1, 3)
        c.check(np.array_equal(got, want),
                "BatchNorm2d rows: channels last, sample then h then w")

        check_cli(c, tmp, x, args.bnstudy, one_thread)
        check_refusals(c, tmp, one_thread)
        check_dropout(c, tmp, one_thread)
        check_unused_layer(c, tmp, one_thread)
        check_recorded_lengths(c, tmp)
    check_label_shapes(c)

    print("%d passed, %d failed" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
