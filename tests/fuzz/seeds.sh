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

# diagnose: the statistics, the activations (CSV), the batches, the layer,
# cut at lines %%.
{
    printf 'running_mean\trunning_var\tnum_batches_tracked\n0.1\t0.9\t4\n-0.2\t1.1\t4\n%%%%\n'
    echo 'a,b'; for i in $(seq 1 12); do echo "0.$i,-$i"; done
    printf '%%%%\nfirst_row\trows\n0\t3\n3\t3\n6\t3\n9\t3\n%%%%\nkey\tvalue\nmomentum\t0.1\neps\t1e-05\n'
} > "$out/diagnose/checkpoint"

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
