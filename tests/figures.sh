#!/usr/bin/env bash
# Test the figure scripts (scripts/*.gp) by what they draw, not by their
# bytes: PNG and SVG bytes depend on the gnuplot, cairo and font versions.
# Each script is rendered from a copy of results/ in a temporary
# directory, so the committed files are never touched, and must:
#   - finish with status 0 and print nothing at all: gnuplot reports
#     warnings (an empty plot, a bad range, a missing column) on stderr and
#     still exits 0, and a warning usually means a wrong picture;
#   - leave a PNG (checked by its magic bytes) and a well-formed SVG named
#     after the script, and nothing else; a second render gives the same
#     bytes (regenerating results/ changes nothing on one machine);
#   - draw what the TSVs say: rendered again with tables='DIR', every plot
#     writes the points it would draw through gnuplot's own `set table`
#     (scripts/style.gp), silently, and tests/figures_content.py checks each
#     series against the TSVs;
#   - when the committed SVG was drawn by this very gnuplot version, match
#     it byte for byte, so a changed script or TSV without re-rendered
#     figures is caught where the figures are made; another version says so
#     and skips only that comparison.
# Prints one line per check and a final "N passed, N failed"; exits 1 if
# any check failed, 2 if it could not run.
set -uo pipefail
cd "$(dirname "$0")/.."

gnuplot=${GNUPLOT:-gnuplot}
if ! command -v "$gnuplot" >/dev/null 2>&1; then
    echo "gnuplot not found: run make deps" >&2
    exit 2
fi
python=${PYTHON:-python3}

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
mkdir -p "$tmp/tables"

scripts=()
for s in scripts/*.gp; do
    [ "$s" = scripts/style.gp ] || scripts+=("$s")
done
if [ ${#scripts[@]} -eq 0 ]; then
    echo "no figure scripts in scripts/" >&2
    exit 2
fi

render() { # render SCRIPT GNUPLOT_ARGS LOG: status 0 and no output at all
    "$gnuplot" -e "$2" "$1" >"$3" 2>&1 && [ ! -s "$3" ]
}
is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() {
    [ -s "$1" ] && "$python" -c 'import sys, xml.etree.ElementTree as E
sys.exit(E.parse(sys.argv[1]).getroot().tag != "{http://www.w3.org/2000/svg}svg")' "$1"
}
# "Produced by GNUPLOT 5.4 patchlevel 4": the gnuplot that drew an SVG.
drawn_by() { sed -n 's/.*<desc>Produced by \(GNUPLOT [^<]*[^ <]\) *<\/desc>.*/\1/p' "$1" | head -n 1; }
this_gnuplot="GNUPLOT $("$gnuplot" --version | sed "s/^gnuplot //")"

expected=()
for s in "${scripts[@]}"; do
    name=$(basename "$s" .gp)
    expected+=("$name.png" "$name.svg")
    log="$tmp/$name.log"
    check "$name: gnuplot exits 0 with no output" render "$s" "results='$tmp/first'" "$log"
    [ -s "$log" ] && sed 's/^/    /' "$log"
    check "$name: PNG written" is_png "$tmp/first/figures/$name.png"
    check "$name: SVG written and well-formed" is_svg "$tmp/first/figures/$name.svg"
    render "$s" "results='$tmp/second'" "$log.2" >/dev/null 2>&1
    for ext in png svg; do
        check "$name.$ext: a second render is byte-identical" \
            cmp -s "$tmp/first/figures/$name.$ext" "$tmp/second/figures/$name.$ext"
    done
    check "$name: the tables render with no output" \
        render "$s" "results='$tmp/first'; tables='$tmp/tables'" "$log.t"
    [ -s "$log.t" ] && sed 's/^/    /' "$log.t"
    committed=results/figures/$name.svg
    by=$([ -f "$committed" ] && drawn_by "$committed")
    if [ "$by" = "$this_gnuplot" ]; then
        check "$committed matches a fresh render (both $by)" \
            cmp -s "$tmp/first/figures/$name.svg" "$committed"
    else
        echo "note: $committed was drawn by ${by:-no gnuplot}, this is $this_gnuplot: bytes not compared"
    fi
done

# What each figure draws, series by series, against the TSVs.
"$python" tests/figures_content.py "$tmp/first" "$tmp/tables" > "$tmp/content.log"
content_rc=$?
grep -v '^[0-9]* passed, [0-9]* failed$' "$tmp/content.log"
line=$(tail -n 1 "$tmp/content.log")
if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
fi
[ "$content_rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=$((failed + 1))

# Nothing but the expected files: a script writing under a wrong name would
# otherwise leave its real figure stale.
listed=$(cd "$tmp/first/figures" && ls | sort)
wanted=$(printf '%s\n' "${expected[@]}" | sort)
check "figures/ holds exactly one PNG and one SVG per script" [ "$listed" = "$wanted" ]
committed=$(cd results/figures 2>/dev/null && ls | sort)
check "results/figures/ holds exactly one PNG and one SVG per script" [ "$committed" = "$wanted" ]

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
