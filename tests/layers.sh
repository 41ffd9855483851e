#!/usr/bin/env bash
# The include rule (scripts/check-layers.sh) on the tree, and on scratch
# copies of src/ broken once each way it forbids: the check must pass on
# the first and fail, naming the culprit, on every other.
set -uo pipefail
cd "$(dirname "$0")/.."

layers=$(sed -n 's/^LAYERS *:= *//p' Makefile)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }

# shellcheck disable=SC2086
if bash scripts/check-layers.sh $layers; then ok; else ko "the tree breaks the rule"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# broken NAME WANT EDIT...: a fresh copy, one edit, the check must fail
# and print WANT.
broken() {
    local name=$1 want=$2
    shift 2
    rm -rf "$tmp/src"
    cp -r src "$tmp/src"
    (cd "$tmp" && eval "$*")
    local out rc
    # shellcheck disable=SC2086
    out=$(bash scripts/check-layers.sh --src "$tmp/src" $layers 2>&1)
    rc=$?
    if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -qF -- "$want"; then
        ok
    else
        ko "$name: exit $rc, expected 1 and '$want' in: $out"
    fi
}
# allowed NAME EDIT...: a fresh copy, one edit the rule allows: the check
# must pass.
allowed() {
    local name=$1
    shift
    rm -rf "$tmp/src"
    cp -r src "$tmp/src"
    (cd "$tmp" && eval "$*")
    local out
    # shellcheck disable=SC2086
    if out=$(bash scripts/check-layers.sh --src "$tmp/src" $layers 2>&1); then
        ok
    else
        ko "$name: the check refused: $out"
    fi
}
broken "an include upward" 'base/ includes "model/bn.h", from model/' \
    'echo "#include \"model/bn.h\"" >> src/base/num.c'
broken "a header including upward" 'pop/ includes "study/exp.h"' \
    'echo "#include \"study/exp.h\"" >> src/pop/pop.h'
broken "a circle in a folder" 'in a circle: ' \
    'echo "#include \"model/run.h\"" >> src/model/bn.h'
# The pieces of one module (X_PART.c beside X.h) share a header that
# includes X.h: one module, no circle. A piece that includes a module
# which includes X.h is in a circle, as X.c would be.
allowed "pieces of a module sharing a header" \
    'echo "#include \"study/exp.h\"" > src/study/exp_pieces.h &&
     echo "#include \"study/exp_pieces.h\"" > src/study/exp_piece.c &&
     echo "#include \"study/exp_pieces.h\"" > src/study/exp_other.c &&
     echo "#include \"study/exp_pieces.h\"" >> src/study/exp.h'
broken "a piece of a module in a circle" 'in a circle: ' \
    'echo "#include \"study/out.h\"" > src/study/exp_piece.c'
broken "an include without its folder" '"num.h" names no folder' \
    'echo "#include \"num.h\"" >> src/base/tsv.c'
broken "a file outside the stages" 'directly in' \
    'touch src/loose.c'
broken "a folder that is no stage" 'is not a stage' \
    'mkdir src/extra && touch src/extra/x.c'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
