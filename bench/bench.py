#!/usr/bin/python3
"""`make bench`: how fast bnstudy is beside a bare kernel, numpy and PyTorch,
and how its cost per value and its memory grow with the population.

Instructions first, counted by valgrind (callgrind, only inside the
function timed) or, where valgrind is missing and the machine has
counters, by perf stat: they do not move when a neighbour is busy, as
times do. Then tables, in Markdown, on standard output:

  * instructions per configuration of the default study for bnstudy and
    the two bare kernels of bench/kernel.c (the complete one computes
    every number bnstudy writes of the configuration by default, the
    scores-only one
    leaves out the self-checks, the gap per feature and the buffers'
    errors), and per run of the classifier (its epoch and its scores in
    epochs' worth), and a sweep's instructions per configuration against
    its runs' alone;
  * one configuration of the default study (512 rows of 8 features,
    shuffled, one epoch, the ema estimator) at B 8, 64 and 256: bnstudy's
    layer, both kernels (which compute the same bits; the driver checks
    them here and a unit test holds them there), numpy
    (vectorised) and PyTorch (BatchNorm1d, float64, one thread), each
    timed in turn within every round so that the machine's drift touches
    them alike; the median of the rounds and, for every ratio, its range
    over the rounds;
  * one epoch of the classifier of experiments/clf-batch-size.ini against
    the same network in PyTorch (nn.Linear, BatchNorm1d, ReLU, nn.Linear,
    cross-entropy, SGD with momentum), float64, one thread;
  * bnstudy's layer from 512 x 8 to 10^6 x 64 and 65536 x 1024 rows x
    features: nanoseconds per value and its ratio to 512 x 8's, and peak
    memory beside the population's own size (one process per size, so the
    peak is its own), in interleaved rounds.

Times are CPU time of the thread (time.thread_time here, the thread's
clock in the driver), which a busy neighbour disturbs less than the wall
clock. numpy and PyTorch are timed when this Python has them; the lines
say when it has not. Numbers depend on the machine and on what else runs
on it; nothing here fails a test.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# One thread everywhere: bnstudy's configuration runs on one.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

BATCHES = (8, 64, 256)
N, F = 512, 8  # the default population
P, EPS = 0.1, 1e-5  # the default layer: momentum 0.1 on the new value
SCALE = ((512, 8), (8192, 8), (131072, 8), (1000000, 8), (8192, 64),
         (131072, 64), (1000000, 64), (4096, 1024), (65536, 1024))
SCALE_B = 64


def optional(name):
    try:
        return __import__(name)
    except ImportError as e:
        print(f"({name} not timed: {e})")
        return None


class Driver:
    """bench/driver.c serve: one command a line, one answer a line."""

    def __init__(self, path):
        self.p = subprocess.Popen([path, "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def per_call(fn, reps):
    t0 = time.thread_time()
    for _ in range(reps):
        fn()
    return (time.thread_time() - t0) / reps


def counter():
    """How instructions are counted here: "valgrind", "perf" (a machine
    with counters) or None."""
    if shutil.which("valgrind"):
        return "valgrind"
    if shutil.which("perf"):
        out = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u",
                              "true"], capture_output=True, text=True)
        if out.returncode == 0 and "<not" not in out.stderr:
            return "perf"
    return None


def instructions(how, argv, stdin, fn):
    """Instructions the program executes: inside fn (and what it calls)
    with valgrind, the whole process with perf."""
    if how == "valgrind":
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               "--collect-atstart=no", f"--toggle-collect={fn}"] + argv
    else:
        cmd = ["perf", "stat", "-x,", "-e", "instructions:u"] + argv
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if how == "valgrind":
        m = re.search(r"Collected : (\d+)", out.stderr)
        return int(m.group(1)) if m else None
    for line in out.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2].startswith("instructions") and f[0].isdigit():
            return int(f[0])
    return None


def per_rep(how, driver, cmd, fn, lo=2, hi=6):
    """Instructions per repetition of a driver command: the difference of
    two counts, so that the driver's own start (a population made, the
    first call's lazy binding) does not count."""
    a = instructions(how, [driver, "serve"], f"{cmd} {lo}\n", fn)
    b = instructions(how, [driver, "serve"], f"{cmd} {hi}\n", fn)
    return None if a is None or b is None else (b - a) / (hi - lo)


KERNELS = (
    "The complete kernel computes every number bnstudy writes of the "
    "configuration by default (not effective.tsv's per-feature batch "
    "errors, which bnstudy computes in every run); the scores-only kernel leaves out the self-checks "
    "(props_pass, props_total: the sums of each train output and of its "
    "square, two checks a batch and feature, two on the last row), the gap "
    "per feature and the final buffers' errors, and makes its outputs row "
    "by row where the complete kernel goes column pair by column pair to "
    "keep the sums per feature in registers. The complete kernel is the "
    "yardstick (the same numbers); the scores-only one is the floor for the "
    "scores alone.")


def instruction_tables(driver, bnstudy):
    how = counter()
    if how is None:
        print("(instructions not counted: no valgrind here, and perf has no "
              "counters on this machine)")
        return
    print(f"Instructions per configuration of the default study (512 x 8, "
          f"shuffled, one epoch), counted by {how}; they do not move with "
          "the machine's load:")
    print()
    print("| B | bnstudy | complete kernel | bnstudy ÷ complete kernel "
          "| scores-only kernel | bnstudy ÷ scores-only kernel |")
    print("|---|---|---|---|---|---|")
    for b in BATCHES:
        ours = per_rep(how, driver, f"layer {b}", "run_execute")
        whole = per_rep(how, driver, f"kernelall {b}", "kernel_run_all")
        scores = per_rep(how, driver, f"kernel {b}", "kernel_run")
        if ours is None or whole is None or scores is None:
            print(f"| {b} | not counted | | | | |")
            continue
        print(f"| {b} | {ours / 1e3:.1f}k | {whole / 1e3:.1f}k | "
              f"{ours / whole:.3f}x | {scores / 1e3:.1f}k | "
              f"{ours / scores:.3f}x |")
    print()
    print(KERNELS)
    print()
    print("The classifier of experiments/clf-batch-size.ini, instructions "
          "per run (a run of two epochs less a run of one is an epoch; the "
          "rest of a one-epoch run is its scores):")
    print()
    print("| B | one-epoch run | an epoch | the scores, in epochs |")
    print("|---|---|---|---|")
    for b in BATCHES:
        one = per_rep(how, driver, f"clf {b} 1", "run_execute_on", 1, 3)
        two = per_rep(how, driver, f"clf {b} 2", "run_execute_on", 1, 3)
        if one is None or two is None:
            print(f"| {b} | not counted | | |")
            continue
        epoch = two - one
        print(f"| {b} | {one / 1e6:.2f}M | {epoch / 1e6:.2f}M | "
              f"{(one - epoch) / epoch:.2f} |")
    if how == "valgrind":
        sweep_instructions(bnstudy)
    sys.stdout.flush()


def sweep_instructions(bnstudy):
    """The largest published sweep on one thread under callgrind: its
    instructions per configuration against those of its runs alone
    (run_execute_blamed, inclusive), the rest being the decoding of each
    configuration, the rows' formatting and the summaries."""
    if not shutil.which("callgrind_annotate"):
        return
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind",
                        f"--callgrind-out-file={prof}", bnstudy, "sweep",
                        "experiments/shuffles.ini", "--out",
                        os.path.join(tmp, "res"), "--jobs", "1"],
                       capture_output=True)
        ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", prof],
                             capture_output=True, text=True).stdout
        man = os.path.join(tmp, "res", "shuffles", "manifest.tsv")
        n = 0
        if os.path.exists(man):
            for line in open(man):
                f = line.rstrip("\n").split("\t")
                if f[0] == "configurations":
                    n = int(f[1])
    total = runs = None
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \(", line)
        if not m:
            continue
        v = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = v
        elif runs is None and ":run_execute_blamed " in line:
            runs = v
    if not (total and runs and n):
        print("\n(the sweep's instructions were not counted)")
        return
    print()
    print(f"experiments/shuffles.ini on one thread ({n} configurations), "
          "instructions per configuration (callgrind):")
    print()
    print("| the whole sweep | its runs alone | sweep ÷ runs |")
    print("|---|---|---|")
    # Four places: the target is 1.1x, and 1.0999x is neither 1.100x
    # nor over it.
    print(f"| {total / n / 1e3:.1f}k | {runs / n / 1e3:.1f}k | "
          f"{total / runs:.4f}x |")


def numpy_config(np, x, mu, var, b, rng):
    """One configuration, vectorised: the batches' statistics at once, the
    buffers' ema as a weighted sum, both modes' outputs and the scores."""
    n, f = x.shape
    nb = n // b
    xs = x[rng.permutation(n)[:nb * b]].reshape(nb, b, f)
    m = xs.mean(axis=1)
    v = xs.var(axis=1)
    w = P * (1.0 - P) ** np.arange(nb - 1, -1, -1)
    rm = w @ m
    rv = (1.0 - P) ** nb + w @ v
    t = (xs - m[:, None, :]) / np.sqrt(v + EPS)[:, None, :]
    e = (xs - rm) / np.sqrt(rv + EPS)
    return (np.sqrt(np.mean((t - e) ** 2)),
            np.sqrt(np.mean((m - mu) ** 2)), np.sqrt(np.mean((v - var) ** 2)))


def torch_config(torch, bn, x, mu, var, b, gen):
    """One configuration as a PyTorch user writes it: BatchNorm1d in train
    mode over the shuffled batches, then in eval mode over them again."""
    n, f = x.shape
    nb = n // b
    with torch.no_grad():
        perm = torch.randperm(n, generator=gen)[:nb * b]
        bn.reset_running_stats()
        bn.train()
        batches = [x[perm[k * b:(k + 1) * b]] for k in range(nb)]
        t = torch.cat([bn(xb) for xb in batches])
        bn.eval()
        e = torch.cat([bn(xb) for xb in batches])
        xs = torch.stack(batches)
        m = xs.mean(dim=1)
        v = xs.var(dim=1, unbiased=False)
        return (torch.sqrt(torch.mean((t - e) ** 2)),
                torch.sqrt(torch.mean((m - mu) ** 2)),
                torch.sqrt(torch.mean((v - var) ** 2)))


def reps_for(seconds):
    """Calls of one that takes this long to fill about 20 ms."""
    return max(1, int(0.02 / max(seconds, 1e-7)))


def us(samples):
    m = 1e6 * statistics.median(samples)
    return f"{m:.1f} µs" if m < 1000 else f"{m / 1000:.2f} ms"


def ratio_cell(num, den):
    """num / den per round: the median and, in brackets, the range."""
    r = [a / b for a, b in zip(num, den)]
    return (f"{statistics.median(r):.2f}x "
            f"({min(r):.2f}-{max(r):.2f})")


def config_table(drv, np, torch, rounds):
    for b in BATCHES:
        same = drv.ask(f"same {b}")
        print(f"B {b}: both kernels' bits are bnstudy's: {same}")
    impls = {}
    impls["bnstudy"] = lambda b, r: float(drv.ask(f"layer {b} {r}"))
    impls["complete kernel"] = lambda b, r: float(
        drv.ask(f"kernelall {b} {r}"))
    impls["scores-only kernel"] = lambda b, r: float(
        drv.ask(f"kernel {b} {r}"))
    if np is not None:
        rng = np.random.default_rng(1)
        x = rng.standard_normal((N, F))
        mu, var = x.mean(axis=0), x.var(axis=0)
        impls["numpy"] = lambda b, r: per_call(
            lambda: numpy_config(np, x, mu, var, b, rng), r)
    if torch is not None:
        torch.set_num_threads(1)
        xt = torch.randn(N, F, dtype=torch.float64)
        mt, vt = xt.mean(dim=0), xt.var(dim=0, unbiased=False)
        bn = torch.nn.BatchNorm1d(F, eps=EPS, momentum=P,
                                  dtype=torch.float64)
        gen = torch.Generator().manual_seed(1)
        impls["PyTorch"] = lambda b, r: per_call(
            lambda: torch_config(torch, bn, xt, mt, vt, b, gen), r)
    names = list(impls)
    # A first call of each sizes the repetitions; then every round times
    # each in turn, starting with a different one each round.
    reps = {(n, b): reps_for(impls[n](b, 1)) for n in names for b in BATCHES}
    t = {(n, b): [] for n in names for b in BATCHES}
    for r in range(rounds):
        for b in BATCHES:
            for i in range(len(names)):
                n = names[(i + r) % len(names)]
                t[n, b].append(impls[n](b, reps[n, b]))
    print()
    print("One configuration of the default study (512 x 8, shuffled, one "
          f"epoch), the median of {rounds} interleaved rounds; each ratio "
          "is the median of the rounds' (their range in brackets):")
    print()
    head = ["B", "bnstudy"]
    for n in names[1:3]:
        head += [n, f"bnstudy ÷ {n}"]
    for n in names[3:]:
        head += [n, f"{n} ÷ bnstudy"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for b in BATCHES:
        ours = t["bnstudy", b]
        cells = [str(b), us(ours)]
        for n in names[1:3]:
            cells += [us(t[n, b]), ratio_cell(ours, t[n, b])]
        for n in names[3:]:
            cells += [us(t[n, b]), ratio_cell(t[n, b], ours)]
        print("| " + " | ".join(cells) + " |")


def torch_clf(torch, shape):
    n, f, h, k = shape
    nn = torch.nn
    model = nn.Sequential(nn.Linear(f, h, dtype=torch.float64),
                          nn.BatchNorm1d(h, momentum=0.1,
                                         dtype=torch.float64),
                          nn.ReLU(), nn.Linear(h, k, dtype=torch.float64))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(n, f, dtype=torch.float64)
    y = torch.randint(0, k, (n,))
    gen = torch.Generator().manual_seed(1)

    def epoch(b):
        model.train()
        perm = torch.randperm(n, generator=gen)
        for s in range(0, n - b + 1, b):
            idx = perm[s:s + b]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
    return epoch


def clf_table(drv, torch, rounds):
    if torch is None:
        print("\n(the classifier not timed: it is set against PyTorch)")
        return
    shape = tuple(int(v) for v in drv.ask("clfshape").split())
    epoch = torch_clf(torch, shape)
    # bnstudy's epoch: a run of four epochs less a run of one, over three,
    # so that the scores computed once per run do not count.
    def ours(b):
        return (float(drv.ask(f"clf {b} 4 3")) -
                float(drv.ask(f"clf {b} 1 3"))) / 3
    t = {(n, b): [] for n in ("bnstudy", "PyTorch") for b in BATCHES}
    for r in range(rounds):
        for b in BATCHES:
            pair = [("bnstudy", lambda: ours(b)),
                    ("PyTorch", lambda: per_call(lambda: epoch(b), 3))]
            for name, fn in pair[r % 2:] + pair[:r % 2]:
                t[name, b].append(fn())
    print()
    print(f"One epoch of the classifier ({shape[0]} rows of {shape[1]} "
          f"features, {shape[2]} hidden units, {shape[3]} classes), median "
          f"of {rounds} interleaved rounds:")
    print()
    print("| B | bnstudy | PyTorch | PyTorch ÷ bnstudy |")
    print("|---|---|---|---|")
    for b in BATCHES:
        print(f"| {b} | {us(t['bnstudy', b])} | {us(t['PyTorch', b])} | "
              f"{ratio_cell(t['PyTorch', b], t['bnstudy', b])} |")


def scale_table(driver, sizes, rounds, tsv=None):
    """Every size in a process of its own (so that its peak is its own),
    each round running every size in turn, so that the machine's drift
    falls on all of them alike; the median cost per value over the rounds,
    its range, and its ratio to the first size's median. Each process's
    first sample is left out of its median and shown apart: a big
    population's first run maps pages that later runs reuse, where a
    small one's sample of thousands of runs spreads that cost thin."""
    print()
    print(f"bnstudy's layer by size (B {SCALE_B}, shuffled, one epoch; "
          f"the median of {rounds} interleaved rounds, one process per size "
          "and round, its first sample shown apart):")
    print()
    ns = {s: [] for s in sizes}
    cold = {s: [] for s in sizes}
    peak = {s: 0 for s in sizes}
    pop = {}
    failed = {}
    for _ in range(rounds):
        for n, f in sizes:
            if (n, f) in failed:
                continue
            out = subprocess.run([driver, "scale", str(n), str(f),
                                  str(SCALE_B), "3"], capture_output=True,
                                 text=True)
            if out.returncode != 0:
                failed[n, f] = out.stderr.strip()
                continue
            _, _, _, t, rss, popk, t1 = out.stdout.split()
            ns[n, f].append(float(t))
            cold[n, f].append(float(t1))
            peak[n, f] = max(peak[n, f], int(rss))
            pop[n, f] = float(popk)
    # Each size is set against the first's median over all rounds: on a
    # shared machine a run of a few seconds can take 1.5x its usual time
    # when a neighbour is busy, in any round.
    # Each size's median, least and greatest over the rounds.
    got = {s: (statistics.median(ns[s]), min(ns[s]), max(ns[s]))
           for s in sizes if ns[s]}
    first = sizes[0]
    base = got[first][0] if first in got else None
    print(f"| rows x features | ns per value (range) | ÷ {first[0]} x "
          f"{first[1]} | a process's first sample | peak memory "
          "| of which the population |")
    print("|---|---|---|---|---|---|")
    for s in sizes:
        n, f = s
        if s in failed:
            print(f"| {n} x {f} | failed: {failed[s]} | | | | |")
            continue
        m, lo, hi = got[s]
        ratio = f"{m / base:.2f}x" if base else ""
        print(f"| {n} x {f} | {m:.2f} ({lo:.2f}-{hi:.2f}) "
              f"| {ratio} | {statistics.median(cold[s]):.2f} "
              f"| {peak[s] / 1024:.0f} MiB | {pop[s] / 1024:.0f} MiB |")
    if tsv:
        # For scripts/scaling.gp: the figure of the same numbers.
        with open(tsv, "w") as out:
            out.write("rows\tfeatures\tns_per_value\tns_min\tns_max\t"
                      "base_ns\tpeak_mib\tpopulation_mib\n")
            for s, (m, lo, hi) in got.items():
                out.write(f"{s[0]}\t{s[1]}\t{m}\t{lo}\t{hi}\t{base}\t"
                          f"{peak[s] / 1024:.1f}\t{pop[s] / 1024:.1f}\n")
    sys.stdout.flush()


def scale_sizes(text):
    """--sizes: ROWSxFEATURES,... (the first the one the others are set
    against)."""
    sizes = []
    for item in text.split(","):
        n, sep, f = item.strip().partition("x")
        if not (sep and n.isdecimal() and f.isdecimal()
                and int(n) > 0 and int(f) > 0):
            raise argparse.ArgumentTypeError(
                f"'{item}' is not ROWSxFEATURES (positive integers, "
                "as in 512x8)")
        if (int(n), int(f)) in sizes:
            raise argparse.ArgumentTypeError(f"'{item}' is given twice")
        sizes.append((int(n), int(f)))
    return tuple(sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--driver", default="build/bench/driver")
    ap.add_argument("--bnstudy", default="./bnstudy")
    ap.add_argument("--no-count", action="store_true",
                    help="skip the instruction counts (valgrind's runs)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--no-scale", action="store_true",
                    help="skip the scaling table (the longest part)")
    ap.add_argument("--scale-rounds", type=int, default=5,
                    help="rounds of the scaling table (about 35 s each)")
    ap.add_argument("--scale-only", action="store_true",
                    help="the scaling table alone (no instruction counts, "
                         "configurations or classifier)")
    ap.add_argument("--sizes", type=scale_sizes, default=SCALE,
                    metavar="NxF,...",
                    help="the scaling table's sizes, each set against "
                         "the first (default: "
                         + ",".join(f"{n}x{f}" for n, f in SCALE) + ")")
    ap.add_argument("--scale-tsv", metavar="FILE",
                    help="also write the scaling table to FILE, for "
                         "scripts/scaling.gp")
    a = ap.parse_args()
    if a.scale_only and a.no_scale:
        ap.error("--scale-only and --no-scale leave nothing to run")
    if a.no_scale and a.sizes != SCALE:
        ap.error("--sizes with --no-scale: there is no scaling table")
    if not os.access(a.driver, os.X_OK):
        ap.error(f"no driver at {a.driver} (make build/bench/driver)")
    if a.scale_only:
        scale_table(a.driver, a.sizes, max(1, a.scale_rounds), a.scale_tsv)
        return
    if not a.no_count:
        instruction_tables(a.driver, a.bnstudy)
        print()
    np = optional("numpy")
    torch = optional("torch")
    drv = Driver(a.driver)
    config_table(drv, np, torch, a.rounds)
    sys.stdout.flush()
    clf_table(drv, torch, max(3, a.rounds // 3))
    drv.close()
    if not a.no_scale:
        scale_table(a.driver, a.sizes, max(1, a.scale_rounds), a.scale_tsv)


if __name__ == "__main__":
    main()
