#!/usr/bin/env bash
# Run every example in README.md and docs/*.md written as an indented
# "    $ command" followed by its indented output, and compare what the
# command prints now with what the page shows, so the examples cannot go
# stale. Prints one
# line per example and "N passed, N failed". The examples run in a scratch
# directory that sees the program, experiments/ and data/, so files they write
# land there.
set -uo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Split the pages into numbered example files: cmd.K and want.K.
awk -v dir="$work" '
/^    \$ / {
    k++
    sub(/^    \$ /, "")
    print > (dir "/cmd." k)
    printf "" > (dir "/want." k)
    inblock = 1
    next
}
inblock && /^    / { sub(/^    /, ""); print > (dir "/want." k); next }
{ inblock = 0 }
' README.md docs/*.md

pass=0 fail=0
repo=$(pwd)
mkdir "$work/run"
ln -s "$repo/bnstudy" "$repo/experiments" "$repo/data" "$work/run/"
n=$(ls "$work" | grep -c '^cmd\.' || true)
for k in $(seq 1 "$n"); do
    cmd="$work/cmd.$k"
    got="$work/got.$k"
    (cd "$work/run" && bash -c "$(cat "$cmd")") > "$got" 2>&1
    if cmp -s "$got" "$work/want.$k"; then
        pass=$((pass + 1))
        echo "ok   \$ $(cat "$cmd")"
    else
        fail=$((fail + 1))
        echo "FAIL \$ $(cat "$cmd")"
        diff "$work/want.$k" "$got" | head -20
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
