#!/usr/bin/env bash
# Memory flat in the number of configurations: the same sweep of 10^3
# and of 10^5 configurations (the shuffled layer on 256 rows, 1000 seeds,
# one momentum or a hundred; every file but features.tsv, the many-seed
# summaries included), and the merge of its four shards, each with its
# peak resident memory and the ratio of the two sizes'. A sweep writes
# rows in configuration order as they finish and holds one group of seeds
# for the summaries, and a merge reads one configuration of each shard at
# a time, so the two sizes should agree within 10% (issue 15); a
# 10^7-configuration sweep then needs no more. Numbers depend on the
# machine; this reports, it never fails a test.
#   bench/sweep-memory.sh [BNSTUDY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-./bnstudy}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cat > "$out/memory.ini" <<'INI'
[experiment]
outputs = summary table manifest distribution expectation
table = momentum batch_size stats_err

[population]
rows = 256

[sweep]
batch_size = 32
order = shuffled
seed = 1..1000
INI

# peak ARGS...: bnstudy ARGS' own peak RSS in KiB and its seconds, as GNU
# time reports them (the kernel's high-water mark of the process, no
# sampling). Not a Python parent's getrusage of its children: that counts
# the forked Python's own pages (about 14 MiB) before the exec, more than
# bnstudy ever holds.
peak() {
    local t=$out/time
    /usr/bin/time -f '%M %e' -o "$t" "$bin" "$@" || return 1
    cat "$t"
}
if [ ! -x /usr/bin/time ]; then
    echo "(sweep and merge memory not measured: no /usr/bin/time here)"
    exit 0
fi

# measure NAME MOMENTA: a row for the sweep and one for the merge.
measure() {
    local set="layer.momentum=$2" ini=$out/memory.ini
    local sweep merge n
    sweep=$(peak sweep "$ini" --out "$out/$1" --set "$set")
    n=$(awk -F'\t' '$1 == "configurations" {print $2}' "$out/$1/memory/manifest.tsv")
    for k in 1 2 3 4; do
        "$bin" sweep "$ini" --out "$out/$1-shards" --set "$set" --shard "$k/4"
    done
    merge=$(peak merge "$ini" "$out/$1-shards"/memory.shard-{1,2,3,4}-of-4 \
        --out "$out/$1-merged" --set "$set")
    cmp -s "$out/$1/memory/summary.tsv" "$out/$1-merged/memory/summary.tsv" ||
        echo "the merge of $1 differs from its sweep" >&2
    echo "$n $sweep $merge"
}

small=$(measure small 0.1)
large=$(measure large "$(seq -f '0.%02g' 1 99 | tr '\n' ' ')1")
printf '| configurations | sweep peak RSS (KiB) | seconds | merge of 4 shards peak RSS (KiB) | seconds |\n'
printf '|---|---|---|---|---|\n'
printf '| %s | %s | %s | %s | %s |\n' $small
printf '| %s | %s | %s | %s | %s |\n' $large
echo "$small $large" | awk '{
    s = $7 / $2; m = $9 / $4
    printf "peak memory of %d configurations / %d: sweep %.3f, merge %.3f (flat within 10%%: %s)\n",
        $6, $1, s, m, (s <= 1.1 && s >= 1 / 1.1 && m <= 1.1 && m >= 1 / 1.1) ? "yes" : "NO" }'
