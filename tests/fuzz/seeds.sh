#!/usr/bin/env bash
# Seeds for the fuzz targets, made with this build (make fuzz): inputs a
# user's files would be, each a valid one of its kind, for libFuzzer to
# start its mutations from. A target's input format is in its file's
# opening comment.
#   seeds.sh BNSTUDY DIR   writes DIR/TARGET for each target (exp's
#                          empty: experiments/ seeds it)
set -euo pipefail
bin=$(realpath "$1")
out=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out" && mkdir -p "$out"/{exp,popfile,diagnose,shard,verify}
out=$(realpath "$out")
cd "$work"

# popfile: a format byte (0 auto, 1 CSV, 2 TSV, 3 .npy; 4 a label column
# "label", 8 a group column "group"), then the file.
"$bin" population --population "$repo/data/wine.csv" --label class > pop.tsv 2> /dev/null || "$bin" population > pop.tsv
{ printf '\x02'; head -n 40 pop.tsv; } > "$out/popfile/tsv"
{ printf '\x05'; echo 'a,b,label'; for i in 1 2 3 4 5 6; do echo "0.$i,-$i,c$((i % 2))"; done; } \
    > "$out/popfile/label"
{ printf '\x01'; head -n 30 "$repo/data/wine.csv"; } > "$out/popfile/wine"

# diagnose: a byte for the input (0 a checkpoint's files, 1 a dump
# folder, 3 with --layer a), then the statistics, the activations (CSV),
# the batches and the layer, cut at lines %%; or the folder's files, each
# its name on a line and its bytes, cut at lines %%.
{
    printf '\x00running_mean\trunning_var\tnum_batches_tracked\n0.1\t0.9\t4\n-0.2\t1.1\t4\n%%%%\n'
    echo 'a,b'; for i in $(seq 1 12); do echo "0.$i,-$i"; done
    printf '%%%%\nfirst_row\trows\n0\t3\n3\t3\n6\t3\n9\t3\n%%%%\nkey\tvalue\nmomentum\t0.1\neps\t1e-05\n'
} > "$out/diagnose/checkpoint"

python3 - "$out/diagnose/folder" <<'PY'
import struct, sys
# One layer "a" of 2 features: 8 training rows in 2 batches of 4, 6
# evaluation rows; its statistics are the rows' own.
tr = [[0.1 * i, 1.0 - 0.2 * i] for i in range(8)]
ev = [[0.15 * i + 0.3, 0.5 - 0.1 * i] for i in range(6)]
def npy(rows):
    head = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), 2)
    head += " " * (63 - (10 + len(head)) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode()
            + b"".join(struct.pack("<d", v) for r in rows for v in r))
def moments(rows, j):
    m = sum(r[j] for r in rows) / len(rows)
    return m, sum((r[j] - m) ** 2 for r in rows) / len(rows)
files = {
    "model.tsv": "key\tvalue\nformat\tbnstudy-dump 2\nkind\tdump\nmodel\tm.pt\n"
                 "loaded\ta whole pickled model\nnotes\t-\nlayers\t1\nbatch_size\t4\n"
                 "train_rows\t8\neval_rows\t6\ntrain_mode_accuracy\t0.95\n"
                 "eval_mode_accuracy\t0.9\nbatch_dependence\t0\n",
    "layers.tsv": "layer\ttype\tfeatures\na\tBatchNorm1d\t2\n",
    "fixes.tsv": "fix\teval_mode_accuracy\twhat\nrecompute-train\t0.95\t-\n",
    "a.layer.tsv": "key\tvalue\nlayer\ta\ntype\tBatchNorm1d\nfeatures\t2\nmomentum\t0.1\n"
                   "eps\t1e-05\nnum_batches_tracked\t2\nbatch_size\t4\nrows_per_sample\t1\n"
                   "train_samples\t8\neval_samples\t6\ndtype\tfloat32\n",
    "a.batches.tsv": "batch\trows\tsamples\n0\t4\t4\n1\t4\t4\n",
}
stats = ("feature\trunning_mean\trunning_var\tnum_batches_tracked\ttrain_mean\t"
         "train_var\ttrain_batch_var\ttrain_unit_var\ttrain_eval_mode_mean\t"
         "train_eval_mode_var\teval_mean\teval_var\n")
for j in range(2):
    tm, tv = moments(tr, j)
    em, evv = moments(ev, j)
    bv = sum(moments(tr[4 * k:4 * k + 4], j)[1] for k in range(2)) / 2
    stats += "f%d\t%.17g\t%.17g\t2\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n" % (
        j, 0.9 * tm, 0.9 * tv + 0.1, tm, tv, bv, tv, tm, tv, em, evv)
files["a.stats.tsv"] = stats
out = b"\x01"
pieces = [(n, t.encode()) for n, t in files.items()]
means = [[moments(tr[4 * k:4 * k + 4], j)[0] for j in range(2)] for k in range(2)]
pieces += [("a.train.npy", npy(tr)), ("a.train-eval.npy", npy(tr)),
           ("a.eval.npy", npy(ev)), ("a.batchmeans.npy", npy(means))]
out += b"\n%%\n".join(n.encode() + b"\n" + t for n, t in pieces)
open(sys.argv[1], "wb").write(out)
PY

# shard: a byte for the shard (bit 0) and the file (1 summary, 2
# features, 3 manifest, times 2), then the file: tests/fuzz/shard.ini's.
cp "$repo/tests/fuzz/shard.ini" .
for k in 1 2; do
    "$bin" sweep shard.ini --out sh --shard "$k/2" --jobs 1
done
f=0
for file in summary.tsv features.tsv manifest.tsv; do
    for k in 0 1; do
        { printf "\\x$(printf %02x $((f * 2 + k)))"; cat "sh/shard.shard-$((k + 1))-of-2/$file"; } \
            > "$out/shard/$k-$file"
    done
    f=$((f + 1))
done

# verify: a byte for the claim (fuzz_verify.c's, 0 to 7), then
# summary.tsv, a line %%, features.tsv, of a small sweep.
printf '[population]\nrows = 32\nfeature = a 0 1 0\nfeature = b 1 2 0.5\n[sweep]\nbatch_size = 8 16\norder = shuffled sorted\nseed = 1 2\n' > e.ini
"$bin" sweep e.ini --out r
for c in 0 1 2 3 4 5 6 7; do
    { printf "\\x0$c"; cat r/e/summary.tsv; printf '%%%%\n'; cat r/e/features.tsv; } > "$out/verify/$c"
done
