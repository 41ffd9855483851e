#!/usr/bin/env bash
# Compare two results directories byte for byte: the same files, the same
# bytes, except figures/ (PNG and SVG bytes depend on the gnuplot, cairo
# and font versions; tests/figures.sh checks what they draw) and the
# manifest rows whose key starts with "build." (they name the build that
# wrote the files, not the results; src/io/provenance.h).
#   compare-results.sh WANT GOT   prints a diff of what differs, exit 1
set -uo pipefail
[ $# -eq 2 ] && [ -d "$1" ] && [ -d "$2" ] || {
    echo "usage: compare-results.sh WANT_DIR GOT_DIR" >&2
    exit 2
}
want=$1 got=$2

files() { (cd "$1" && find . -path ./figures -prune -o -type f -print | sort); }
status=0
if ! diff <(files "$want") <(files "$got") >/dev/null; then
    echo "the two directories hold different files:"
    diff <(files "$want") <(files "$got") | grep '^[<>]'
    status=1
fi
while read -r f; do
    [ -f "$got/$f" ] || continue
    if [ "$(basename "$f")" = manifest.tsv ]; then
        diff -u --label "$want/$f" --label "$got/$f" \
            <(grep -v '^build\.' "$want/$f") <(grep -v '^build\.' "$got/$f") || status=1
    else
        diff -u "$want/$f" "$got/$f" || status=1
    fi
done < <(files "$want")
exit $status
