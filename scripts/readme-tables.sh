#!/usr/bin/env bash
# Keep the result tables of README.md and docs/*.md equal to the files in
# results/. A table sits between two markers:
#     <!-- begin results/NAME/table.md -->
#     ...
#     <!-- end results/NAME/table.md -->
# `<!-- begin code FILE -->` puts the file in a fenced code block instead,
# and `<!-- begin script FILE -->` puts what `bash FILE` prints.
# With no argument the text between them is replaced by the file; with
# --check nothing is written and the exit status is 1 if any table drifted.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
for page in README.md docs/*.md; do
    grep -q '^<!-- begin ' "$page" || continue
    new=$(mktemp "$page.tmp.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -f '$new'" EXIT
    awk '
/^<!-- begin ((code|script) )?[^ ]+ -->$/ {
    print
    code = $3 == "code"
    script = $3 == "script"
    file = code || script ? $4 : $3
    if (code) print "```text"
    if (script) {
        cmd = "bash " file
        while ((r = (cmd | getline line)) > 0) print line
        if (r < 0 || close(cmd) != 0) { print "readme-tables: " cmd " failed" > "/dev/stderr"; exit 2 }
    } else {
        while ((r = (getline line < file)) > 0) print line
        if (r < 0) { print "readme-tables: cannot read " file > "/dev/stderr"; exit 2 }
        close(file)
    }
    if (code) print "```"
    skipping = 1
    next
}
/^<!-- end ((code|script) )?[^ ]+ -->$/ { skipping = 0 }
!skipping { print }
' "$page" > "$new"
    if [ "${1:-}" = --check ]; then
        if ! cmp -s "$page" "$new"; then
            echo "$page: result tables differ from results/ (run: bash scripts/readme-tables.sh)" >&2
            diff "$page" "$new" >&2 || true
            status=1
        fi
        rm -f "$new"
    else
        chmod --reference="$page" "$new" 2>/dev/null || chmod 644 "$new"
        mv "$new" "$page"
    fi
done
if [ "${1:-}" = --check ] && [ "$status" -eq 0 ]; then
    echo "the tables of README.md and docs/ match results/"
fi
exit "$status"
