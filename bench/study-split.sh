#!/usr/bin/env bash
# Where `make study`'s CPU time goes: every experiment of the study run
# into a temporary directory, the claims checked and the figures drawn,
# as make study-results does, each step timed by GNU time (user + system
# CPU seconds, a step's children such as gnuplot included), then summed by
# part: the layer's experiments, the classifier's, the check of the
# claims, the figures; then the classifier's experiments one by one,
# the costliest first. CPU time, not the wall clock: the machine may be
# shared. Numbers depend on the machine; this reports, it never fails.
#   bench/study-split.sh [BNSTUDY] [GNUPLOT]   (defaults ./bnstudy, gnuplot)
# EXPERIMENTS (the Makefile's list) says which experiments make the study.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-./bnstudy}")
gnuplot=${2:-gnuplot}
if [ ! -x /usr/bin/time ]; then
    echo "(the study's CPU time not measured: no /usr/bin/time here)"
    exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
experiments=${EXPERIMENTS:-$(ls experiments/*.ini | sed 's|.*/||; s|\.ini$||' | grep -v claims)}

# cpu PART CMD...: CMD's user + system seconds added to PART's sum (and
# left in $s).
declare -A sum count
cpu() {
    local part=$1
    shift
    /usr/bin/time -f '%U %S' -o "$out/t" "$@" >/dev/null 2>&1
    s=$(awk '{print $1 + $2}' "$out/t")
    sum[$part]=$(awk -v a="${sum[$part]:-0}" -v b="$s" 'BEGIN {print a + b}')
    count[$part]=$((${count[$part]:-0} + 1))
}

# Each classifier experiment's seconds too, for the table of where the
# classifier's part goes.
: >"$out/clf"
for e in $experiments; do
    part=layer
    grep -Eq '^[[:space:]]*type[[:space:]]*=[[:space:]]*classifier' \
        "experiments/$e.ini" && part=classifier
    cpu "$part" "$bin" sweep "experiments/$e.ini" --out "$out/res"
    [ "$part" = classifier ] && echo "$s $e" >>"$out/clf"
done
cpu verify "$bin" verify "$out/res"
cpu figures "$bin" plot "$out/res" --gnuplot "$gnuplot"

total=0
printf '| part of make study | runs | CPU seconds |\n|---|---|---|\n'
for part in layer classifier verify figures; do
    printf '| %s | %s | %.2f |\n' "$part" "${count[$part]:-0}" "${sum[$part]:-0}"
    total=$(awk -v a="$total" -v b="${sum[$part]:-0}" 'BEGIN {print a + b}')
done
printf '| total | | %.2f |\n' "$total"
printf '\nThe classifier'"'"'s experiments, the costliest first:\n\n'
printf '| experiment | CPU seconds |\n|---|---|\n'
sort -rn "$out/clf" | awk '{printf "| %s | %.2f |\n", $2, $1}'
