#!/bin/bash
# Writes experiments/clf-checkpoint.tsv, the checkpoint
# experiments/clf-checkpoint.ini loads into the classifier: the final
# running statistics of another run (clf-initial.ini's network, trained
# from other initial weights, init_seed 2), of the first 8 of its 16
# batch-norm units only, named LAYER.UNIT as the weights file names them:
# buffers of another network, partly loaded. Run from the repository's
# root after make; the file it writes is committed, and tests/cli.sh
# checks that this script still writes the same bytes.
set -euo pipefail
bin=${BNSTUDY:-./bnstudy}
out=${1:-experiments/clf-checkpoint.tsv}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$bin" run --type classifier --set population.classes=4 --lr 0.1 \
    --sgd-momentum 0.9 --momentum 0.1 --momentum-weights new \
    --variance unbiased --batch-size 32 --epochs 10 --seed 1 --init-seed 2 \
    --write-weights "$tmp" > /dev/null
awk -F '\t' -v OFS='\t' '
    BEGIN { print "feature", "running_mean", "running_var" }
    $1 == "final" && $2 ~ /^[0-9]+\.running_(mean|var)$/ && $3 < 8 {
        split($2, p, "."); u = p[1] "." $3
        if (!(u in seen)) { seen[u] = 1; order[n++] = u }
        v[u, p[2]] = $5 }
    END { for (i = 0; i < n; i++)
              print order[i], v[order[i], "running_mean"],
                    v[order[i], "running_var"] }
' "$tmp" > "$out.tmp"
mv "$out.tmp" "$out"
