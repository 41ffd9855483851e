#!/usr/bin/env bash
# Test the figure scripts (scripts/*.gp). Each one is rendered into a copy of
# results/ in a temporary directory, so the committed files are never
# touched, and must:
#   - finish with status 0 and print nothing at all: gnuplot reports warnings
#     (an empty plot, a bad range, a missing column) on stderr and still
#     exits 0, and a warning usually means a wrong picture;
#   - leave a non-empty PNG (checked by its magic bytes) and SVG (containing
#     <svg) named after the script, and nothing else;
#   - give byte-identical files when rendered a second time, because results/
#     must regenerate byte for byte;
#   - match the figure committed in results/figures/, so a changed script or
#     TSV without re-rendered figures is caught. This one depends on the
#     installed gnuplot, cairo and fonts, as the committed PNGs do.
# Prints one line per check and a final "N passed, N failed"; exits 1 if any
# check failed, 2 if it could not run.
set -uo pipefail
cd "$(dirname "$0")/.."

gnuplot=${GNUPLOT:-gnuplot}
if ! command -v "$gnuplot" >/dev/null 2>&1; then
    echo "gnuplot not found: run make deps" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bnstudy-figures.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok - $what"
    else
        failed=$((failed + 1))
        echo "not ok - $what"
    fi
}

# Two independent copies of the inputs, without the committed figures, so
# every file checked below was written by this run.
for copy in first second; do
    mkdir -p "$tmp/$copy"
    cp -R results/. "$tmp/$copy/" || exit 2
    rm -rf "$tmp/$copy/figures"
    mkdir -p "$tmp/$copy/figures"
done

scripts=()
for s in scripts/*.gp; do
    [ "$s" = scripts/style.gp ] || scripts+=("$s")
done
if [ ${#scripts[@]} -eq 0 ]; then
    echo "no figure scripts in scripts/" >&2
    exit 2
fi

render() { # render SCRIPT RESULTS_DIR LOG: status 0 and no output at all
    "$gnuplot" -e "results='$2'" "$1" >"$3" 2>&1 && [ ! -s "$3" ]
}
is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1"; }

expected=()
for s in "${scripts[@]}"; do
    name=$(basename "$s" .gp)
    expected+=("$name.png" "$name.svg")
    log="$tmp/$name.log"
    check "$name: gnuplot exits 0 with no output" render "$s" "$tmp/first" "$log"
    [ -s "$log" ] && sed 's/^/    /' "$log"
    check "$name: PNG written" is_png "$tmp/first/figures/$name.png"
    check "$name: SVG written" is_svg "$tmp/first/figures/$name.svg"
    render "$s" "$tmp/second" "$log.2" >/dev/null 2>&1
    for ext in png svg; do
        f="figures/$name.$ext"
        check "$name.$ext: a second render is byte-identical" \
            cmp -s "$tmp/first/$f" "$tmp/second/$f"
        check "$name.$ext: results/$f matches a fresh render" \
            cmp -s "$tmp/first/$f" "results/$f"
    done
done

# Nothing but the expected files: a script writing under a wrong name would
# otherwise leave its real figure stale.
listed=$(cd "$tmp/first/figures" && ls | sort)
wanted=$(printf '%s\n' "${expected[@]}" | sort)
check "figures/ holds exactly one PNG and one SVG per script" [ "$listed" = "$wanted" ]
committed=$(cd results/figures 2>/dev/null && ls | sort)
check "results/figures/ holds exactly one PNG and one SVG per script" [ "$committed" = "$wanted" ]

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
