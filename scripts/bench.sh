#!/usr/bin/env bash
# `make bench`: how fast and how big. Runs the largest published sweep
# (experiments/shuffles.ini) with one thread and with every CPU, and
# reports configurations per second and peak resident memory. Numbers
# depend on the machine; nothing here is a pass/fail test.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./bnstudy}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

configs=$(awk -F'\t' '$1 == "configurations" {print $2}' results/shuffles/manifest.tsv 2>/dev/null || true)
for jobs in 1 "$(nproc)"; do
    start=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$out/rss" "$bin" sweep experiments/shuffles.ini --out "$out" --jobs "$jobs"
        rss="$(cat "$out/rss") KiB peak RSS"
    else
        "$bin" sweep experiments/shuffles.ini --out "$out" --jobs "$jobs"
        rss="(install the time package for peak RSS)"
    fi
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" -v n="${configs:-0}" -v j="$jobs" -v r="$rss" \
        'BEGIN { t = e - s; printf "shuffles.ini, %d configurations, --jobs %s: %.2f s, %.0f configurations/s, %s\n", n, j, t, (t > 0 ? n / t : 0), r }'
done
