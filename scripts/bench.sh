#!/usr/bin/env bash
# `make bench`: how the sweep uses the machine's CPUs. Runs the largest
# published sweep (experiments/shuffles.ini) with one thread and with
# every CPU, in alternating rounds so that whatever else the machine does
# falls on both alike, and reports the median time of each, the median
# speed-up and its range over the rounds, and peak resident memory. Each
# round also runs one one-thread sweep per CPU at once, as separate
# processes: the work of that many sweeps in the time they take is the
# most the machine itself gives (shared caches, memory, a virtual CPU's
# host), so the threads' speed-up is set beside that ceiling too.
# Numbers depend on the machine; nothing here is a pass/fail test.
#   scripts/bench.sh [BINARY] [ROUNDS]   (defaults ./bnstudy, 9)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./bnstudy}
rounds=${2:-9}
cpus=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

configs=$(awk -F'\t' '$1 == "configurations" {print $2}' results/shuffles/manifest.tsv 2>/dev/null || true)
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%M' -o "$out/rss")
for ((r = 1; r <= rounds; r++)); do
    for jobs in 1 "$cpus"; do
        start=$(date +%s.%N)
        "${timer[@]}" "$bin" sweep experiments/shuffles.ini --out "$out/res" \
            --jobs "$jobs" > /dev/null
        end=$(date +%s.%N)
        rss=0
        [ -s "$out/rss" ] && rss=$(cat "$out/rss")
        echo "$jobs $start $end $rss" >> "$out/times"
    done
    start=$(date +%s.%N)
    for ((c = 1; c <= cpus; c++)); do
        "$bin" sweep experiments/shuffles.ini --out "$out/apart$c" --jobs 1 \
            > /dev/null &
    done
    wait
    end=$(date +%s.%N)
    echo "apart $start $end 0" >> "$out/times"
done
awk -v n="${configs:-0}" -v cpus="$cpus" -v rounds="$rounds" '
function median(a, k,    i, j, t) {
    for (i = 2; i <= k; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{
    t = $3 - $2
    if ($1 == "apart") { ceil[++ka] = cpus * one[k1] / t; next }
    if ($1 == 1) { one[++k1] = t; rss1 = $4 > rss1 ? $4 : rss1 }
    else { many[++km] = t; rssm = $4 > rssm ? $4 : rssm; ratio[km] = one[k1] / t }
}
END {
    m1 = median(one, k1); mm = median(many, km)
    lo = hi = ratio[1]
    for (i = 2; i <= km; i++) { if (ratio[i] < lo) lo = ratio[i]; if (ratio[i] > hi) hi = ratio[i] }
    printf "shuffles.ini, %d configurations, %d rounds (median):\n", n, rounds
    printf "  --jobs 1: %.3f s, %.0f configurations/s, %s KiB peak RSS\n", m1, n / m1, rss1 ? rss1 : "?"
    printf "  --jobs %d: %.3f s, %.0f configurations/s, %s KiB peak RSS\n", cpus, mm, n / mm, rssm ? rssm : "?"
    printf "  speed-up %.2fx (%.2f-%.2f over the rounds)\n", median(ratio, km), lo, hi
    clo = chi = ceil[1]
    for (i = 2; i <= ka; i++) { if (ceil[i] < clo) clo = ceil[i]; if (ceil[i] > chi) chi = ceil[i] }
    printf "  the machine'"'"'s ceiling: %d one-thread sweeps at once do %.2fx the work of one in its time (%.2f-%.2f)\n", cpus, median(ceil, ka), clo, chi
}' "$out/times"
