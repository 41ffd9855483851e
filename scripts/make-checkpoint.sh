#!/bin/bash
# Writes experiments/checkpoint-shifted.tsv, the checkpoint
# experiments/checkpoint.ini loads: the running statistics of another
# population (the default one with every feature moved by one standard
# deviation and spread twice as wide, estimator adaptive: the buffers are
# those rows' own mean and variance), of its first four features only, as a
# state_dict loaded partly leaves them. Run from the repository's root
# after make; the file it writes is committed, and tests/cli.sh checks that
# this script still writes the same bytes.
set -euo pipefail
bin=${BNSTUDY:-./bnstudy}
out=${1:-experiments/checkpoint-shifted.tsv}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$bin" run --estimator adaptive --batch-size 512 \
    --set evaluation.shift=1 --set evaluation.scale=2 \
    --write-features "$tmp" > /dev/null
awk -F '\t' -v OFS='\t' '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
              print "feature", "running_mean", "running_var"; next }
    $c["feature"] ~ /^f[0-3]$/ {
        print $c["feature"], $c["running_mean"], $c["running_var"] }
' "$tmp" > "$out.tmp"
mv "$out.tmp" "$out"
