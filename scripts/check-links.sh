#!/usr/bin/env bash
# Every relative link of README.md and docs/*.md names a file that exists
# (and, with #anchor, a heading of that page), so moving a page or a
# section cannot leave a dead link behind. Prints each dead link and
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

# The anchors of a page: its headings as GitHub spells them.
anchors() {
    sed -n 's/^#\{1,6\} \(.*\)$/\1/p' "$1" | tr 'A-Z' 'a-z' |
        sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
pass=0 fail=0
for page in README.md docs/*.md; do
    dir=$(dirname "$page")
    while IFS= read -r target; do
        case $target in http:* | https:* | mailto:*) continue ;; esac
        path=${target%%#*}
        frag=
        [ "$path" != "$target" ] && frag=${target#*#}
        if [ -z "$path" ]; then file=$page; else file=$dir/$path; fi
        if [ ! -e "$file" ]; then
            echo "$page: dead link ($target): no $file"
            fail=$((fail + 1))
        elif [ -n "$frag" ] && [[ $file == *.md ]] &&
             ! anchors "$file" | grep -qxF -- "$frag"; then
            echo "$page: dead link ($target): no heading #$frag in $file"
            fail=$((fail + 1))
        else
            pass=$((pass + 1))
        fi
    done < <(grep -o '\](\([^)[:space:]]*\))' "$page" | sed 's/^](//; s/)$//')
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
