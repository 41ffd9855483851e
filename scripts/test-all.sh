#!/usr/bin/env bash
# `make test`: every suite in turn, each printing its own summary and its
# time, then one last line adding them up. TEST_FULL=1 (make test-full)
# runs the slow variants too; TEST_QUICK=1 (make test-quick) leaves out
# the sanitizers, fault injection, the peer tests, the diagnosis scenarios
# and the browser test. A suite that cannot run prints SKIPPED and why;
# a suite that fails makes the whole run fail.
set -uo pipefail
cd "$(dirname "$0")/.."

# The Python the tests run writes no bytecode into the source tree.
export PYTHONDONTWRITEBYTECODE=1

total_pass=0 total_fail=0 status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

suite() {
    local name=$1; shift
    echo "== $name"
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    echo "-- $name: $((SECONDS - start)) s"
    # A suite may run several checkers (the peer tests do), each ending
    # with its own summary line: add them all up.
    local counts
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" |
        awk '{p += $1; f += $3} END {if (NR) print p, f}')
    if [ -n "$counts" ]; then
        total_pass=$((total_pass + ${counts% *}))
        total_fail=$((total_fail + ${counts#* }))
    elif grep -q '^SKIPPED' "$log"; then
        :
    elif [ "$rc" -ne 0 ]; then
        total_fail=$((total_fail + 1))
    else
        total_pass=$((total_pass + 1))
    fi
    [ "$rc" -eq 0 ] || status=1
}

quick=${TEST_QUICK:-0}
suite "the include rule of src/" make --no-print-directory check-layers
suite "unit tests (cmocka)" make --no-print-directory unit-tests
# The sanitizer suites (one core's work each) run beside the others on a
# second lane in make test, their output printed when they end; make
# test-full (CI) and make test-quick keep one lane.
lanes=0
[ "$quick" != 1 ] && [ "${TEST_FULL:-0}" != 1 ] && lanes=1
sanitizers() {
    if [ "${TEST_FULL:-0}" = 1 ]; then
        suite "unit tests and the whole study under ASan and UBSan" \
            make --no-print-directory sanitize SAN_EXPERIMENTS=
    else
        suite "unit tests under ASan and UBSan" make --no-print-directory sanitize
    fi
    suite "fault injection under ASan and UBSan" make --no-print-directory test-faults
    suite "fuzz corpus replayed under ASan and UBSan" make --no-print-directory fuzz-replay
}
if [ "$lanes" = 1 ]; then
    lane_out=$(mktemp) lane_sum=$(mktemp)
    trap 'rm -f "$log" "$lane_out" "$lane_sum"' EXIT
    (
        total_pass=0 total_fail=0 status=0 log=$(mktemp)
        sanitizers
        rm -f "$log"
        echo "$total_pass $total_fail $status" >"$lane_sum"
    ) >"$lane_out" 2>&1 &
    lane_pid=$!
fi
[ "$quick" = 1 ] || [ "$lanes" = 1 ] || sanitizers
suite "command line: bad input and faults" make --no-print-directory test-cli
suite "sharded sweeps merged" make --no-print-directory test-shard
suite "figures (gnuplot)" bash tests/figures.sh
[ "$quick" = 1 ] ||
    suite "peer test (PyTorch, numpy)" make --no-print-directory test-peer-if-available
[ "$quick" = 1 ] ||
    suite "diagnosis scenarios (PyTorch models trained here)" make --no-print-directory test-scenarios-if-available
suite "README tables against results/" bash scripts/readme-tables.sh --check
suite "README examples" bash scripts/readme-examples.sh
suite "links of README.md and docs/" bash scripts/check-links.sh
[ "$quick" = 1 ] ||
    suite "browser test (the web page in Chromium)" make --no-print-directory test-web-if-available

if [ "$lanes" = 1 ]; then
    wait "$lane_pid"
    cat "$lane_out"
    read -r lp lf ls <"$lane_sum" || { lp=0 lf=1 ls=1; }
    total_pass=$((total_pass + lp)) total_fail=$((total_fail + lf))
    [ "$ls" -eq 0 ] || status=1
fi

echo
echo "$total_pass passed, $total_fail failed"
exit $status
