#!/usr/bin/env bash
# The command line as an adversarial user meets it: each kind of bad input
# and fault of docs/errors.md (and each example of the hardening issue),
# with what bnstudy must say, its exit status and what it leaves on disk.
#   cli.sh [BNSTUDY]
# Prints one line per case and "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-./bnstudy}")
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$work/run
mkdir "$run"
cd "$run" || exit 2
# shellcheck source=tests/case.sh
. "$repo/tests/case.sh"

# A small experiment: one order, one batch size, the seeds given.
small() {
    printf '[population]\nrows = 64\n[sweep]\nbatch_size = 8\nseed = %s\n' \
        "$1"
}

# diagnose's checkpoint files: twelve rows of three features.
checkpoint() {
    { echo 'a,b,c'; for i in $(seq 1 12); do echo "0.$i,-$i,$((i % 3))"; done; } > act.csv
    printf 'running_mean\trunning_var\tnum_batches_tracked\n' > act.stats.tsv
    printf '0.1\t0.9\t3\n' >> act.stats.tsv
    printf '0.1\t0.9\t3\n' >> act.stats.tsv
    printf '0.1\t0.9\t3\n' >> act.stats.tsv
}

# TEXT as an extended regular expression that matches it literally.
ere() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }

# Every name in DIR, hidden ones included, on one line.
listing() { ls -A "$1" | tr '\n' ' '; }

# ---- silent truncation and silent acceptance ----

long_set() {
    cp "$repo/experiments/headline.ini" .
    "$bin" sweep headline.ini --out o --set "sweep.seed=$(seq -s ' ' 1000 1299)" ||
        return 1
    # 300 seeds of two orders, and the manifest records the list whole.
    [ "$(($(wc -l < o/headline/summary.tsv) - 1))" -eq 600 ] &&
        grep -qx "configurations	600" o/headline/manifest.tsv &&
        grep -qx "sweep.seed	1000..1299" o/headline/manifest.tsv &&
        grep -qx "set	sweep.seed=$(seq -s ' ' 1000 1299)" o/headline/manifest.tsv
}
case_ "a --set of 1500 characters is read whole (300 seeds, 600 rows)" long_set

long_description() {
    local d
    d=$(printf 'word%.0s ' $(seq 1 600))
    d=${d% }
    { echo "[experiment]"; echo "description = $d"; small 1; } > d.ini
    "$bin" sweep d.ini --out o && grep -qxF "experiment.description	$d" o/d/manifest.tsv
}
case_ "a description of 3000 characters reaches the manifest whole" long_description

ambiguous_option() {
    refused "ambiguous option '--b' \(.*--batch-size.*\)" "$bin" run --b 5 || return 1
    refused "ambiguous option '--b' \(.*--beta.*\)" "$bin" run --b 5 || return 1
    refused "ambiguous option '--ma'" "$bin" sweep x.ini --ma 1 || return 1
    # A prefix of one option is that option.
    [ "$("$bin" run --batch 8)" = "$("$bin" run --batch-size 8)" ]
}
case_ "run --b 5 is ambiguous (--batch-size, --beta); --batch is --batch-size" ambiguous_option

repeated_option() {
    refused "option --seed given twice" "$bin" run --seed 1 --seed 2 &&
        refused "option --batch-size given twice" "$bin" run --batch-size 8 --batch 16 &&
        refused "option --out given twice" "$bin" sweep x.ini --out a --out b &&
        refused "option --order given twice" "$bin" population --order sorted --order as-is &&
        refused "option --claims given twice" "$bin" verify --claims a --claims b &&
        small 1 > s.ini &&
        refused "--set sweep.seed given twice" "$bin" sweep s.ini --out o --set sweep.seed=1 --set sweep.seed=2
}
case_ "a repeated option (--seed 1 --seed 2, --out, --set of one key) is refused" repeated_option

header_text() {
    printf '[sweep] junk\nseed = 1\n' > j.ini
    refused "j.ini:1: text after the section header: 'junk'" "$bin" sweep j.ini --out o || return 1
    # A comment after a header is not text.
    printf '[sweep] ; the shuffle\nbatch_size = 8\n[population]\nrows = 64\n' > c.ini
    "$bin" sweep c.ini --out o
}
case_ "[sweep] junk is refused; [sweep] ; comment is not" header_text

same_output() {
    refused "--write-outputs: 'F' is the file --write-features writes too" \
        "$bin" run --write-features F --write-outputs F &&
        refused "--write-outputs: './F' is the file --write-features writes too" \
            "$bin" run --write-features F --write-outputs ./F
}
case_ "run --write-features F --write-outputs F is refused, nothing written" same_output

# ---- paths and names ----

dots_stem() {
    mkdir -p o/x
    cp "$repo/experiments/headline.ini" ...ini
    refused "\\.\\.\\.ini: '\\.\\.' cannot name a results directory" "$bin" sweep ...ini --out o/x &&
        [ -z "$(ls -A o/x)" ] && [ "$(ls -A o)" = x ] &&
        cp ...ini ..ini && refused "'\\.' cannot name" "$bin" sweep ..ini --out o/x
}
case_ "...ini (stem '..') is refused and nothing is written outside --out" dots_stem

control_names() {
    small 1 > "$(printf 'a\tb.ini')"
    small 1 > "$(printf 'a\nb.ini')"
    refused 'a\\tb.ini: a tab in the file name' "$bin" sweep "$(printf 'a\tb.ini')" --out o &&
        refused 'a\\nb.ini: a newline in the file name' "$bin" sweep "$(printf 'a\nb.ini')" --out o &&
        small 1 > s.ini &&
        refused 'a newline \(the manifest records every --set on one line\)' \
            "$bin" sweep s.ini --out o --set "$(printf 'experiment.description=x\nconfigurations\t1')" &&
        refused 'a tab' "$bin" sweep s.ini --out o --set "$(printf 'experiment.description=a\tb')" &&
        printf '[experiment]\ndescription = a\tb\n' > t.ini &&
        refused 't.ini:2: description: a tab in the value' "$bin" sweep t.ini --out o &&
        printf '[population]\nfeature = a\x1b 0 1 0\n' > f.ini &&
        refused 'f.ini:2: feature: byte 0x1b in the value' "$bin" sweep f.ini --out o
}
case_ "tabs, newlines and control bytes in names and values are refused" control_names

# ---- result sets replaced whole ----

fewer_seeds() {
    small 1..5 > s.ini
    "$bin" sweep s.ini --out o || return 1
    [ -e o/s/distribution.tsv ] || { echo "no distribution.tsv"; return 1; }
    small 1 > s.ini
    "$bin" sweep s.ini --out o || return 1
    "$bin" sweep s.ini --out fresh || return 1
    [ "$(listing o/s)" = "$(listing fresh/s)" ] ||
        { echo "left: $(listing o/s), a fresh sweep: $(listing fresh/s)"; return 1; }
    [ ! -e o/s/distribution.tsv ] || { echo "distribution.tsv left"; return 1; }
    [ "$(listing o)" = "s " ]
}
case_ "a sweep with fewer seeds leaves exactly its own files" fewer_seeds

foreign_target() {
    small 1 > s.ini
    mkdir -p o/s && echo mine > o/s/notes.txt
    refused "o/s holds 'notes.txt', which is not a result file of bnstudy" "$bin" sweep s.ini --out o &&
        [ "$(cat o/s/notes.txt)" = mine ] &&
        mkdir -p p/s && cp s.ini p/s/s.ini &&
        refused "p/s/s.ini is the input file p/s/s.ini: the sweep replaces p/s as a whole" \
            "$bin" sweep p/s/s.ini --out p
}
case_ "a target holding other files, or the experiment file itself, is refused" foreign_target

# A result set holds one sweep's files: no other set in it, no file of
# the user's, with a manifest or without.
nested_sets() {
    small 1 > s.ini
    "$bin" sweep s.ini --out rs > /dev/null || return 1
    refused '^bnstudy sweep: --out rs/s is a result set \(it holds manifest.tsv\)' \
        "$bin" sweep s.ini --out rs/s || return 1
    refused '^bnstudy sweep: --out rs/s/deeper/still is inside the result set rs/s \(it holds manifest.tsv\)' \
        "$bin" sweep s.ini --out rs/s/deeper/still || return 1
    # From inside the set, --out . and a relative --out are in it too.
    (cd rs/s && refused 'is inside the result set .*/rs/s \(it holds manifest.tsv\)' "$bin" sweep ../../s.ini --out new) ||
        return 1
    # A set written without its manifest is a set all the same.
    printf '[experiment]\noutputs = summary\n' > m.ini
    small 1 >> m.ini
    "$bin" sweep m.ini --out bare > /dev/null || return 1
    refused '^bnstudy sweep: --out bare/m is a result set \(it holds summary.tsv\)' \
        "$bin" sweep s.ini --out bare/m || return 1
    # The outer set is still a set a sweep replaces.
    "$bin" sweep s.ini --out rs > /dev/null
}
case_ "sweep --out inside a result set (or one itself) is refused; the outer set is left a set" nested_sets

user_file() {
    small 1 > s.ini
    "$bin" sweep s.ini --out o > /dev/null || return 1
    echo mine > o/s/notes.txt
    refused "^bnstudy sweep: o/s holds 'notes.txt', which is not a result file of bnstudy" \
        "$bin" sweep s.ini --out o || return 1
    [ "$(cat o/s/notes.txt)" = mine ] && [ -e o/s/manifest.tsv ]
}
case_ "a user's notes.txt in a result set with a manifest is refused and kept" user_file

# A sweep of about three seconds on one thread.
slow_ini() {
    printf '[experiment]\noutputs = summary manifest\n[sweep]\n'
    printf 'batch_size = 8 16 32 64 128 256\nseed = 1..%s\n' "${1:-8000}"
}

# Wait (at most 20 s) until path exists.
wait_for() {
    local i
    for i in $(seq 1 200); do
        compgen -G "$1" > /dev/null && return 0
        sleep 0.1
    done
    return 1
}

concurrent() {
    slow_ini > slow.ini
    "$bin" sweep slow.ini --out o --jobs 1 &
    local pid=$!
    wait_for o/.slow.lock || { kill "$pid"; return 1; }
    # The first sweep writes meanwhile: what it writes is its own.
    watched() { ls -A o; }
    refused "o/slow: another sweep \(process $pid\) is writing it" \
        "$bin" sweep slow.ini --out o --jobs 1 || { kill "$pid"; watched() { watch_all; }; return 1; }
    watched() { watch_all; }
    wait "$pid" && [ "$(listing o)" = "slow " ]
}
case_ "a second sweep into the same target is refused, naming the first" concurrent

interrupted() {
    local sig=$1 status=$2
    small 1 > slow.ini
    "$bin" sweep slow.ini --out o || return 1
    cp -r o/slow old
    slow_ini > slow.ini
    "$bin" sweep slow.ini --out o --jobs 1 &
    local pid=$!
    wait_for 'o/.slow.tmp-*/summary.tsv' || { kill "$pid"; return 1; }
    kill "-$sig" "$pid"
    wait "$pid"
    local st=$?
    [ "$st" -eq "$status" ] || { echo "exit status $st, want $status"; return 1; }
    diff -r old o/slow && [ "$(listing o)" = "slow " ] ||
        { echo "left: $(listing o)"; return 1; }
}
sigint() { interrupted INT 130; }
sigterm() { interrupted TERM 143; }
case_ "SIGINT during a sweep: exit 130, the temporary directory gone, the old set whole" sigint
case_ "SIGTERM during a sweep: exit 143, the temporary directory gone, the old set whole" sigterm

run_interrupted() {
    # run's output files are open while it trains: a signal removes them.
    "$bin" run --epochs 100000 --write-features f.tsv --write-outputs o.tsv > /dev/null &
    local pid=$!
    wait_for 'o.tsv.tmp.*' || { kill "$pid"; return 1; }
    kill -INT "$pid"
    wait "$pid"
    local st=$?
    [ "$st" -eq 130 ] || { echo "exit status $st, want 130"; return 1; }
    [ -z "$(ls -A)" ] || { echo "left: $(ls -A)"; return 1; }
}
case_ "SIGINT during run --write-features --write-outputs: exit 130, no temporary left" run_interrupted

killed() {
    # kill -9 at ten moments of a sweep: the old set or the new, whole,
    # and the next sweep cleans up what the killed one left.
    small 1 > s.ini
    "$bin" sweep s.ini --out o || return 1
    cp -r o/s old
    slow_ini 1500 > s.ini
    "$bin" sweep s.ini --out ref || return 1
    local t
    for t in 0.05 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9; do
        small 1 > s.ini
        "$bin" sweep s.ini --out o || return 1
        slow_ini 1500 > s.ini
        "$bin" sweep s.ini --out o --jobs 1 &
        local pid=$!
        sleep "$t"
        kill -9 "$pid" 2> /dev/null
        wait "$pid" 2> /dev/null
        diff -rq old o/s > /dev/null || diff -rq ref/s o/s > /dev/null ||
            { echo "killed at $t s: neither the old set nor the new"; return 1; }
        "$bin" sweep s.ini --out o || return 1
        [ "$(listing o)" = "s " ] || { echo "left: $(listing o)"; return 1; }
    done
}
case_ "kill -9 at any moment leaves the old set or the new; the next sweep cleans up" killed

jobs_bytes() {
    # Rows are written in order whatever the threads: the same bytes.
    "$bin" sweep "$repo/experiments/estimators.ini" --out one --jobs 1 &&
        "$bin" sweep "$repo/experiments/estimators.ini" --out many --jobs 7 &&
        "$bin" sweep "$repo/experiments/shuffles.ini" --out one --jobs 1 &&
        "$bin" sweep "$repo/experiments/shuffles.ini" --out many --jobs 3 &&
        diff -r one many
}
case_ "the files are the same bytes on 1, 3 and 7 threads" jobs_bytes

# ---- inputs that never end, and inputs read once ----

endless() {
    local dev
    for dev in /dev/zero /dev/urandom; do
        timeout 10 "$bin" sweep "$dev" --out o > "$work/stdout" 2> "$work/stderr"
        local st=$?
        [ "$st" -eq 2 ] || { echo "$dev: exit status $st"; return 1; }
        grep -Eq "$dev(:[0-9]+: a NUL byte|: larger than the limit of 1 MiB)" "$work/stderr" ||
            { cat "$work/stderr"; return 1; }
    done
    # A text that never ends stops at the limit.
    yes '; a comment' | timeout 10 "$bin" sweep /dev/stdin --out o 2> "$work/stderr"
    grep -q '/dev/stdin: larger than the limit of 1 MiB' "$work/stderr" && [ ! -e o ]
}
case_ "/dev/zero, /dev/urandom and an endless pipe are refused quickly" endless

read_once() {
    cp "$repo/experiments/headline.ini" h.ini
    local sha
    sha=$(sha256sum h.ini | cut -d' ' -f1)
    "$bin" sweep /dev/stdin --out o < h.ini || return 1
    grep -qx "experiment_sha256	$sha" o/stdin/manifest.tsv || return 1
    mkfifo fifo.ini
    cat h.ini > fifo.ini &
    timeout 20 "$bin" sweep fifo.ini --out o || return 1
    grep -qx "experiment_sha256	$sha" o/fifo/manifest.tsv &&
        cmp o/stdin/summary.tsv <("$bin" sweep h.ini --out p && sed 's/^h	/stdin	/' p/h/summary.tsv)
}
case_ "a FIFO and /dev/stdin are read once: rows and SHA-256 of the bytes given" read_once

# ---- unbounded work ----

work_limits() {
    printf '[population]\nrows = 100000000\n' > rows.ini
    refused 'rows.ini: the sweep would hold about .* GiB at once .* more than the limit of 2 GiB; --max-memory raises it' \
        "$bin" sweep rows.ini --out o || return 1
    printf '[sweep]\nepochs = 1..1000\nseed = 1..1000\n' > ep.ini
    refused 'ep.ini: the sweep would take 2.05e\+12 row passes .*more than the limit of 1e\+09; --max-work raises it' \
        "$bin" sweep ep.ini --out o || return 1
    refused 'the run would take 4.1e\+09 row passes' "$bin" run --epochs 1000000 --batch-size 2 || return 1
    printf '[sweep]\nseed = 1..10000\nbatch_size = 2..1000\n[population]\nrows = 1000\n' > many.ini
    refused 'more than the limit of 1e\+09' "$bin" sweep many.ini --out o || return 1
    # The limits are options: the default run is 512 x 8 row passes.
    "$bin" run --max-work 4096 > /dev/null &&
        refused 'the run would take 4.1e\+03 row passes .*more than the limit of 4.1e\+03' "$bin" run --max-work 4095 &&
        refused 'more than the limit of 1 KiB' "$bin" run --max-memory 1K &&
        "$bin" run --max-memory 1G > /dev/null &&
        refused "--max-memory: must be a size in bytes" "$bin" run --max-memory 12Q &&
        refused "--max-work: must be a number of at least 1" "$bin" sweep x.ini --max-work 0
}
case_ "work and memory are estimated first and refused past their limits" work_limits

# Every command under an address-space cap a little above the limit it
# is given (--max-memory 64M; the cap 16 MiB more, for the program, its
# libraries and its stack): each input that would take more is refused
# with the limit or the estimate, never "out of memory", and reading
# stops at the limit. Inputs that never end are FIFOs in in/, fed by a
# process the reader's exit ends.
CAP_LIMIT=64
capped() { (ulimit -v $(( (CAP_LIMIT + 16) * 1024 )); exec "$@"); }
# feed PATH COMMAND...: PATH a FIFO that COMMAND writes into.
feed() { rm -f "$1" && mkfifo "$1" && { "${@:2}" > "$1" 2> /dev/null & }; }
memory_cap() {
    watched() { watch_all | grep -v ' \./in'; }
    local lim="larger than the limit of 64 MiB(, with the [0-9]+ bytes the inputs read before hold)? \(--max-memory raises it\)$"
    local m=--max-memory
    mkdir in
    feed in/rows.csv yes 1,2
    refused "in/rows.csv: $lim" capped "$bin" population --population in/rows.csv $m 64M || return 1
    feed in/rows.csv yes 1,2
    refused "in/rows.csv: $lim" capped "$bin" run --population in/rows.csv $m 64M || return 1
    feed in/rows.csv yes 1,2
    refused "in/rows.csv: $lim" capped "$bin" diagnose --population in/rows.csv $m 64M || return 1
    feed in/rows.csv yes 1,2
    printf '[population]\nfile = in/rows.csv\n' > f.ini
    refused "f.ini:2: in/rows.csv: $lim" capped "$bin" sweep f.ini --out o $m 64M || return 1
    ln -s /dev/zero in/zero.npy
    refused "in/zero.npy: $lim" capped "$bin" run --population in/zero.npy $m 64M || return 1
    # A regular file's size is known first: 1 GiB (sparse) is not read.
    truncate -s 1G in/big.npy
    refused "in/big.npy: reading it would hold about 1 GiB, more than the limit of 64 MiB \(--max-memory raises it\)$" \
        capped "$bin" run --population in/big.npy $m 64M || return 1
    # What is parsed counts: 2-byte values (4 bytes a pair with its comma
    # and newline) are 8-byte doubles, 4 times the file.
    { echo a,b; yes 0,0 | head -c 31457280; } > in/zeros.csv
    refused "in/zeros.csv: its values would hold about 120 MiB beside the 30 MiB the inputs hold already, more than the limit of 64 MiB" \
        capped "$bin" run --population in/zeros.csv $m 64M || return 1
    checkpoint
    refused "in/zeros.csv: its values would hold about 120 MiB beside the 30 MiB the inputs hold already" \
        capped "$bin" diagnose --stats act.stats.tsv --activations in/zeros.csv --batch-size 2 $m 64M || return 1
    # verify and plot: a results table that never ends, one that is all
    # fields, one too large to read.
    mkdir -p r/e in/r/e
    printf '[c]\nclaim = x\npublished = y\ntest = value\na = e: b\nop = >\nvalue = 0\n' > c.ini
    feed in/r/e/summary.tsv yes "1	2"
    refused "in/r/e/summary.tsv: $lim" capped "$bin" verify in/r --claims c.ini $m 64M || return 1
    { printf 'a\n'; head -c 41943040 /dev/zero | tr '\0' '\t'; printf '\n'; } > r/e/summary.tsv
    refused "r/e/summary.tsv: its fields would hold about 320 MiB beside the 40 MiB the inputs hold already" \
        capped "$bin" verify r --claims c.ini $m 64M || return 1
    small 1 > s.ini
    "$bin" sweep s.ini --out pr > /dev/null && truncate -s 100M pr/s/summary.tsv || return 1
    refused "pr/s/summary.tsv: reading it would hold about 100 MiB( beside the [0-9.]+ KiB the inputs hold already)?, more than the limit of 64 MiB" \
        capped "$bin" plot pr --gnuplot false $m 64M || return 1
    # merge: a shard's row that never ends stops at the line's limit.
    "$bin" sweep s.ini --out sh --shard 1/1 > /dev/null || return 1
    rm sh/s.shard-1-of-1/summary.tsv
    mkfifo sh/s.shard-1-of-1/summary.tsv
    { tr '\0' a < /dev/zero > sh/s.shard-1-of-1/summary.tsv 2> /dev/null & }
    watched() { watch_all | grep -v ' \./in\| \./sh'; }
    refused "sh/s.shard-1-of-1/summary.tsv:1: a line longer than the limit of 1 MiB" \
        capped "$bin" merge s.ini sh/s.shard-1-of-1 --out m $m 64M || return 1
    watched() { watch_all; }
}
case_ "every command under ulimit -v (--max-memory 64M, 16 MiB more): refused with the limit or the estimate" memory_cap

memory_flat() {
    # Ten times the configurations, the same memory: rows are written as
    # they finish. Peak RSS from the kernel's accounting of the child.
    printf '[experiment]\noutputs = summary manifest\n[population]\nrows = 16\n[sweep]\nbatch_size = 2..16\nseed = 1..%s\n' 300 > a.ini
    printf '[experiment]\noutputs = summary manifest\n[population]\nrows = 16\n[sweep]\nbatch_size = 2..16\nseed = 1..%s\n' 3000 > b.ini
    local rss
    rss=$(python3 - "$bin" <<'EOF'
import resource, subprocess, sys
peaks = []
for ini in ("a.ini", "b.ini"):
    subprocess.run([sys.argv[1], "sweep", ini, "--out", "o", "--jobs", "2"], check=True)
    peaks.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(peaks[0], peaks[1])
EOF
) || return 1
    set -- $rss
    echo "peak RSS: $1 KiB at 4500 configurations, $2 KiB at 45000"
    # The old sweep held 1.35 KB per configuration: 55 MiB more at 45000.
    [ "$2" -lt $(($1 + 8192)) ]
}
case_ "memory does not grow with the number of configurations" memory_flat

progress() {
    slow_ini 10000 > slow.ini
    # Not a terminal: nothing on stderr.
    "$bin" sweep slow.ini --out o --jobs 1 2> "$work/stderr" || return 1
    [ ! -s "$work/stderr" ] || { echo "stderr not empty"; return 1; }
    # A terminal (script gives the sweep one): done, total, rate, time left.
    # Progress waits two seconds, so this sweep must run well past them:
    # four times slow.ini's 60000 configurations, which the layer runs in
    # about two seconds on a 2-core machine.
    command -v script > /dev/null || { echo "SKIPPED: no script(1)"; return 0; }
    { slow_ini 10000; printf '[layer]\nmomentum = 0.5 0.9 0.99 0.999\n'; } > long.ini
    script -qec "$bin sweep long.ini --out o2 --jobs 1" /dev/null > "$work/tty" || return 1
    grep -aEq 'bnstudy sweep long: [0-9]+/240000 configurations, [0-9]+/s, [0-9]+ s left' "$work/tty"
}
case_ "progress on stderr only when it is a terminal" progress

# ---- the verifier ----

# claim COLUMN OP VALUE: a claims file of one value claim on COLUMN of
# r/e/summary.tsv's row at batch_size 256.
claim() {
    printf '[c]\nclaim = x\npublished = y\ntest = value\na = e: %s @ batch_size=256\nop = %s\nvalue = %s\n' \
        "$1" "$2" "$3"
}

verifier() {
    mkdir -p r/e
    printf 'batch_size\tstats_err\n8\t0.10000000000000001\n256\tBROKEN\n' > r/e/summary.tsv
    claim stats_err '>' 0 > c.ini
    refused "r/e/summary.tsv:3: column stats_err: 'BROKEN' is not a number" "$bin" verify r --claims c.ini || return 1
    printf 'batch_size\tstats_err\n8\t0.10000000000000001\n256\t0.2\t9\n' > r/e/summary.tsv
    refused "r/e/summary.tsv:3: 3 fields, the header has 2" "$bin" verify r --claims c.ini
}
case_ "verify: a non-numeric cell and a row with an extra column name the file and line" verifier

# What %.17g never writes is not bnstudy's, however a reader of decimals
# would take it: bad input (2), not a failed claim (1).
verifier_strict() {
    mkdir -p r/e
    claim stats_err '>' 0 > c.ini
    local v
    for v in nan NaN inf -inf infinity 1e400 0x10 ' 0.5' '0.5 ' +0.5 0.1 1e-05; do
        printf 'batch_size\tstats_err\n256\t%s\n' "$v" > r/e/summary.tsv
        refused "r/e/summary.tsv:2: column stats_err: '$(ere "$v")' is not a number as bnstudy writes one" \
            "$bin" verify r --claims c.ini || { echo "for '$v'"; return 1; }
    done
    # What %.17g writes is read: 0.1 is written 0.10000000000000001.
    printf 'batch_size\tstats_err\n256\t0.10000000000000001\n' > r/e/summary.tsv
    "$bin" verify r --claims c.ini > out || return 1
    grep -q '^PASS c' out || return 1
    # inf where a writer writes it: a relative score of a constant feature.
    claim stats_err_rel '<' 1 > i.ini
    printf 'batch_size\tstats_err_rel\n256\tinf\n' > r/e/summary.tsv
    "$bin" verify r --claims i.ini > out
    [ $? -eq 1 ] && grep -q '^FAIL c' out || { echo "inf in a relative score is no failed claim"; return 1; }
    # '-' is a row without the value: a claim cannot read it.
    printf 'batch_size\tstats_err\n256\t-\n' > r/e/summary.tsv
    refused "r/e/summary.tsv:2: column stats_err: '-': this row has no value there" "$bin" verify r --claims c.ini
}
case_ "verify: nan, inf, 1e400, 0x10, ' 0.5', 0.1 in a claim's cell are bad input (2); inf only in a relative score" verifier_strict

verifier_files() {
    mkdir -p r/e
    printf 'batch_size\tstats_err\tstats_err\n256\t1\t2\n' > r/e/summary.tsv
    claim stats_err '>' 0 > c.ini
    refused "r/e/summary.tsv:1: column 'stats_err' named twice \(columns 2 and 3\)" "$bin" verify r --claims c.ini || return 1
    : > empty.ini
    refused "empty.ini: no claims" "$bin" verify r --claims empty.ini || return 1
    printf '; only a comment\n' > comment.ini
    refused "comment.ini: no claims" "$bin" verify r --claims comment.ini
}
case_ "verify: a column named twice, an empty claims file are refused" verifier_files

# ---- messages ----

overflow() {
    refused '^bnstudy run: --gamma: the scores overflowed \(train_eval_rmse is not finite\): gamma and beta' \
        "$bin" run --gamma 1e200 || return 1
    printf '[layer]\ngamma = 1 1e200\n' > g.ini
    refused '^bnstudy sweep: g.ini:2: gamma 1e\+200: the scores overflowed' "$bin" sweep g.ini --out o || return 1
    printf '[population]\nfeature = a 0 1 0\nfeature = b 0 1e200 0\n' > f.ini
    refused '^bnstudy sweep: f.ini:3: feature b: \|mean\| \+ 64 sd is 6.4e\+201, more than the limit of 1e\+75' \
        "$bin" sweep f.ini --out o
}
case_ "overflow names the setting and its line (--gamma 1e200, a feature's sd 1e200)" overflow

# A value that would overflow names the option, or the key and its line,
# or the file: never "the features' values", never two prefixes.
range_names() {
    refused '^bnstudy run: --scale: scale 1e\+300 puts feature f0.s evaluation rows at about .*, beyond 1e\+75' \
        "$bin" run --scale 1e300 || return 1
    refused '^bnstudy run: --offset: offset 1e\+308 puts feature f0.s evaluation rows' \
        "$bin" run --offset 1e308 || return 1
    refused '^bnstudy run: --shift: shift 1e\+300 puts' "$bin" run --shift 1e300 || return 1
    refused '^bnstudy run: --drift-size: drift_size 1e\+300 puts feature f0.s training rows' \
        "$bin" run --drift step:1 --drift-size 1e300 || return 1
    printf '[population]\nrows = 64\n[sweep]\nbatch_size = 8\n[evaluation]\nshift = 1e300\n' > sh.ini
    refused '^bnstudy sweep: sh.ini:6: shift 1e\+300 puts feature f0.s evaluation rows' \
        "$bin" sweep sh.ini --out o || return 1
    # A default blamed is its option, not "run: run:".
    refused '^bnstudy run: --batch-size: batch size must be from 2 to the population.s 20 rows, got 256$' \
        "$bin" run --set population.rows=20 --batch-size 256 || return 1
    refused '^bnstudy run: --set population.rows=20: batch size must be from 2' \
        "$bin" run --set population.rows=20
}
case_ "--scale 1e300, --offset 1e308, --drift-size 1e300, [evaluation] shift = 1e300 name the setting, one prefix" range_names

# A population file's values near 1e300 are refused where they are.
huge_values() {
    { echo 'a,b'; for i in $(seq 1 12); do echo "$i.5e200,$i"; done; } > big.csv
    refused '^bnstudy diagnose: --population: big.csv:2:1: column .a.: 1.5e200 is beyond 1e\+75 in magnitude' \
        "$bin" diagnose --population big.csv --batch-size 4 || return 1
    refused '^bnstudy run: --population: big.csv:2:1: column .a.: 1.5e200 is beyond 1e\+75' \
        "$bin" run --population big.csv --batch-size 4 || return 1
    printf '[population]\nfile = big.csv\n[sweep]\nbatch_size = 4\n' > f.ini
    refused '^bnstudy sweep: f.ini:2: big.csv:2:1: column .a.: 1.5e200 is beyond' \
        "$bin" sweep f.ini --out o
}
case_ "diagnose, run and sweep on a population of values near 1e200 name the file, line and column" huge_values

diagnose_files() {
    checkpoint
    "$bin" diagnose --stats act.stats.tsv --activations act.csv --batch-size 4 > /dev/null || return 1
    refused '^bnstudy diagnose: --batch-size: 13 is more than the 12 rows of act.csv$' \
        "$bin" diagnose --stats act.stats.tsv --activations act.csv --batch-size 13 || return 1
    printf 'key\tvalue\nmomentum\t0.1\neps\t1e-05\neps\t0.001\n' > twice.tsv
    refused "^bnstudy diagnose: twice.tsv:4: key 'eps' already given on line 3$" \
        "$bin" diagnose --stats act.stats.tsv --activations act.csv --batch-size 4 --layer twice.tsv || return 1
    printf 'key\tvalue\nmomentum\t0.1\nmomentum\tNone\neps\t1e-05\n' > twice.tsv
    refused "^bnstudy diagnose: twice.tsv:3: key 'momentum' already given on line 2$" \
        "$bin" diagnose --stats act.stats.tsv --activations act.csv --batch-size 4 --layer twice.tsv || return 1
    printf 'key\tvalue\nmomentum\t0.1\neps\t-1e-05\n' > neg.tsv
    refused '^bnstudy diagnose: neg.tsv:3: eps must be >= 0, got -1e-05$' \
        "$bin" diagnose --stats act.stats.tsv --activations act.csv --batch-size 4 --layer neg.tsv || return 1
    printf 'key\tvalue\nmomentum\t0.1\neps\t0\n' > zero.tsv
    refused '^bnstudy diagnose: zero.tsv: eps must be finite and > 0, got 0$' \
        "$bin" diagnose --stats act.stats.tsv --activations act.csv --batch-size 4 --layer zero.tsv
}
case_ "diagnose: --batch-size past the rows, a --layer key twice, a negative eps name the option or file and line" diagnose_files

# --dump takes one layer of a recording (NAME.npy); given a dump's folder
# or one of its layers (NAME.train.npy), it says what reads them.
dump_not_recording() {
    checkpoint
    mkdir -p dumped
    printf 'key\tvalue\nformat\tbnstudy-dump 2\nkind\tdump\n' > dumped/model.tsv
    cp act.stats.tsv dumped/net.1.stats.tsv
    : > dumped/net.1.train.npy
    refused "^bnstudy diagnose: --dump dumped/net.1: a layer of a dump_bn_inputs.py dump .net.1.train.npy, no net.1.npy.; --dump takes one layer of a BNRecorder recording: run .bnstudy diagnose dumped --layer net.1.$" \
        "$bin" diagnose --dump dumped/net.1 || return 1
    refused "^bnstudy diagnose: --dump dumped: a folder, which .bnstudy diagnose dumped. reads whole" \
        "$bin" diagnose --dump dumped || return 1
    # A stem with neither file is still the missing file's to name.
    refused "nowhere.stats.tsv" "$bin" diagnose --dump dumped/nowhere
}
case_ "diagnose --dump on a dump's folder or layer names the command that reads it" dump_not_recording

silent() {
    printf '[experiment]\noutputs = distribution\n[population]\nrows = 64\n[sweep]\nbatch_size = 8\n' > d.ini
    refused '^bnstudy sweep: d.ini:2: outputs: distribution summarises the seeds, and seed has one value \(the default\)' \
        "$bin" sweep d.ini --out o || return 1
    refused "^bnstudy: --version takes no argument, got 'extra'$" "$bin" --version extra || return 1
    refused "^bnstudy: --help takes no argument, got 'x'$" "$bin" --help x || return 1
    # A beta that swamps the outputs runs, and says what it measured.
    "$bin" run --beta 1e200 > out 2> err || return 1
    [ "$(wc -l < out)" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] &&
        grep -q '^bnstudy run: warning: --beta: beta 1e+200 is more than 2^52 times gamma 1: .* train_eval_rmse measures nothing$' err ||
        { cat err; return 1; }
    "$bin" run --beta 1e10 > out 2> err && [ ! -s err ] || { echo "beta 1e10 warned"; return 1; }
}
case_ "outputs = distribution with one seed, --version extra are refused; --beta 1e200 warns" silent

plot_cells() {
    small 1 > p.ini
    "$bin" sweep p.ini --out r > /dev/null || return 1
    awk -F '\t' -v OFS='\t' 'NR == 2 { $13 = "abc" } 1' r/p/summary.tsv > s && mv s r/p/summary.tsv
    refused "^bnstudy plot: r/p/summary.tsv:2: column stats_err: 'abc' is not a number as bnstudy writes one$" \
        "$bin" plot r --gnuplot false
}
case_ "plot refuses a figure from a cell holding abc" plot_cells

output_stream() {
    [ -w /dev/full ] || { echo "SKIPPED: no /dev/full"; return 0; }
    "$bin" population > /dev/full 2> err
    local st=$?
    [ "$st" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] &&
        grep -q '^bnstudy population: standard output: cannot write: No space left on device$' err ||
        { echo "status $st:"; cat err; return 1; }
    "$bin" run > /dev/full 2> err
    st=$?
    [ "$st" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] || { echo "status $st:"; cat err; return 1; }
    # A closed pipe: the Unix convention, the process dies of SIGPIPE
    # quietly (141 in a shell), as cat and grep do.
    "$bin" population 2> err | head -c 10 > /dev/null
    st=${PIPESTATUS[0]}
    [ "$st" -eq 141 ] && [ ! -s err ] || { echo "closed pipe: status $st"; cat err; return 1; }
    # Where SIGPIPE is ignored, the write fails: one message, status 2.
    (trap '' PIPE; "$bin" population 2> err | head -c 10 > /dev/null; exit "${PIPESTATUS[0]}")
    st=$?
    [ "$st" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] &&
        grep -q 'standard output: cannot write: Broken pipe$' err || { echo "ignored SIGPIPE: status $st"; cat err; return 1; }
}
case_ "standard output: /dev/full is one message (2); a closed pipe is SIGPIPE (141), or 2 when it is ignored" output_stream

bad_bytes() {
    printf '[sweep]\nseed = 1\n\n; \0\n' > nul.ini
    refused 'nul.ini:4: a NUL byte: not a text file' "$bin" sweep nul.ini --out o || return 1
    printf '[sweep]\nseed = %s\n' "$(seq -s ' ' 1 10001)" > list.ini
    refused 'list.ini:2: line of [0-9]+ characters, more than the limit of 4093' "$bin" sweep list.ini --out o || return 1
    printf '[sweep]\nseed = 1..10001\n' > range.ini
    refused 'range.ini:2: seed: more than 10000 values' "$bin" sweep range.ini --out o
}
case_ "a NUL byte, a long line and a long list name their limits" bad_bytes

long_paths() {
    small 1 > s.ini
    local long
    long=$(printf 'dddddddddd/%.0s' $(seq 1 370))
    refused "--out: a path of 4070 bytes; with '/.s.tmp-XXXXXX/' and a file name it passes the limit of 4095 bytes" \
        "$bin" sweep s.ini --out "$long" || return 1
    long=$(printf 'd%.0s' $(seq 1 4000))
    # A component longer than the file system allows: nothing is left of
    # the directories made before it.
    refused "a/b/$(printf 'e%.0s' $(seq 1 300))/c: cannot create: File name too long" \
        "$bin" sweep s.ini --out "a/b/$(printf 'e%.0s' $(seq 1 300))/c" || return 1
    # A message quoting a path of 4000 characters holds it whole.
    refused "^bnstudy sweep: $long\\.ini: cannot open: (File name too long|No such file or directory)\$" \
        "$bin" sweep "$long.ini" --out o
}
case_ "a long --out is refused with its limit, leaves no directories, and messages hold paths whole" long_paths

# ---- buffers from elsewhere, frozen from the start (issue 24) ----

checkpoint_file() {
    (cd "$repo" && BNSTUDY="$bin" bash scripts/make-checkpoint.sh "$run/ck.tsv") &&
        cmp -s ck.tsv "$repo/experiments/checkpoint-shifted.tsv"
}
case_ "scripts/make-checkpoint.sh still writes the committed checkpoint-shifted.tsv" checkpoint_file

users_file() {
    (cd "$repo" && BNSTUDY="$bin" bash scripts/make-users.sh "$run/users.tsv") &&
        cmp -s users.tsv "$repo/experiments/users.tsv"
}
case_ "scripts/make-users.sh still writes the committed users.tsv" users_file

# ---- sequences read from a file (issue 24) ----

seq_files() {
    local out rc
    printf '[population]\nrows = 64\n[sweep]\nbatch_size = 4\n[sequence]\nlength = 4\nfile = s.tsv\n' > s.ini
    # 16 sequences of 4: lengths as a column, then the same as a mask.
    { echo length; for i in $(seq 16); do echo $((i % 4 + 1)); done; } > s.tsv
    "$bin" sweep s.ini --out a > /dev/null 2>&1 || return 1
    { echo a,b,c,d; for i in $(seq 16); do
        case $((i % 4 + 1)) in 1) echo 1,0,0,0;; 2) echo 1,1,0,0;;
                               3) echo 1,1,1,0;; 4) echo 1,1,1,1;; esac
      done; } > m.csv
    sed 's/file = s.tsv/file = m.csv/' s.ini > m.ini
    "$bin" sweep m.ini --out b > /dev/null 2>&1 || return 1
    cmp -s <(cut -f2- a/s/summary.tsv) \
           <(cut -f2- b/m/summary.tsv) || return 1
    # A length above L, a mask value not 0/1, a row short: exit 2, one
    # line naming the file, nothing written.
    local bad
    for bad in 'length=5' 'mask=2' 'rows'; do
        case $bad in
        length=5) { echo length; echo 5; for i in $(seq 15); do echo 1; done; } > bad.tsv ;;
        mask=2) { echo a,b,c,d; echo 1,2,0,0; for i in $(seq 15); do echo 1,0,0,0; done; } > bad.csv ;;
        rows) { echo length; echo 1; echo 2; } > bad.tsv ;;
        esac
        local f=bad.tsv; [ "$bad" = mask=2 ] && f=bad.csv
        sed "s/file = s.tsv/file = $f/" s.ini > bad.ini
        rm -rf c
        out=$("$bin" sweep bad.ini --out c 2>&1 >/dev/null); rc=$?
        [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
            [[ $out == *"$f: "* ]] && [ ! -e c ] || { echo "$bad: $rc $out"; return 1; }
    done
}
case_ "[sequence] file: lengths and the same as a mask give the same scores; bad files are refused naming them" seq_files

clf_checkpoint_file() {
    (cd "$repo" && BNSTUDY="$bin" bash scripts/make-clf-checkpoint.sh "$run/clf-ck.tsv") &&
        cmp -s clf-ck.tsv "$repo/experiments/clf-checkpoint.tsv"
}
case_ "scripts/make-clf-checkpoint.sh still writes the committed clf-checkpoint.tsv" clf_checkpoint_file

bad_initial() {
    local out rc
    cp "$repo/experiments/checkpoint.ini" .
    printf 'feature\trunning_mean\trunning_var\nf0\t1\t2\nf9\t0\t1\n' > checkpoint-shifted.tsv
    out=$("$bin" sweep checkpoint.ini --out o 2>&1); rc=$?
    [ "$rc" -eq 2 ] && [ ! -e o/checkpoint ] &&
        [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
        grep -q "checkpoint-shifted.tsv:3: feature 'f9' is not one of the population's 8" <<< "$out" || return 1
    printf 'feature\trunning_mean\trunning_var\nf0\t1\t-2\n' > checkpoint-shifted.tsv
    out=$("$bin" sweep checkpoint.ini --out o 2>&1); rc=$?
    [ "$rc" -eq 2 ] && [ ! -e o/checkpoint ] &&
        grep -q "checkpoint-shifted.tsv:2: column running_var" <<< "$out" || return 1
    out=$("$bin" run --set model.type=classifier --set population.classes=2 \
          --set model.freeze_after=begin 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "'begin' is not an integer or 'start'" <<< "$out"
}
case_ "[layer] initial naming a feature the population lacks, or a negative variance, and freeze_after = begin: one message, 2, nothing written" bad_initial

# The word start and a checkpoint as the files record them.
recorded() {
    printf '[population]\nrows = 64\nclasses = 2\n[model]\ntype = classifier\nfreeze_after = 0 start\n[sweep]\nbatch_size = 16\n' > fz.ini
    "$bin" sweep fz.ini --out o > /dev/null 2>&1 &&
        grep -qx "model.freeze_after	0 start" o/fz/manifest.tsv &&
        [ "$(cut -f "$(head -1 o/fz/summary.tsv | tr '\t' '\n' | grep -nx freeze_after | cut -d: -f1)" o/fz/summary.tsv | tr '\n' ' ')" = "freeze_after 0 start " ] ||
        return 1
    printf 'feature\trunning_mean\trunning_var\nf1\t1\t2\nf0\t0.5\t3\n' > ck2.tsv
    printf '[population]\nrows = 64\n[layer]\ninitial = ck2.tsv\n[sweep]\nbatch_size = 16\n' > ck.ini
    "$bin" sweep ck.ini --out o > /dev/null 2>&1 &&
        grep -qx "layer.initial	ck2.tsv" o/ck/manifest.tsv &&
        grep -qx "layer.initial_sha256	$(sha256sum < ck2.tsv | cut -d' ' -f1)" o/ck/manifest.tsv &&
        grep -qx "layer.initial_features	2" o/ck/manifest.tsv &&
        ! grep -q "layer.initial" o/fz/manifest.tsv
}
case_ "freeze_after = start is written as the word; [layer] initial's file, SHA-256 and features are in the manifest, and only where set" recorded

bad_devices() {
    local out rc
    printf '[layer]\ndevices = 2 3\n[sweep]\nbatch_size = 64\n' > dv.ini
    out=$("$bin" sweep dv.ini --out o 2>&1); rc=$?
    [ "$rc" -eq 2 ] && [ ! -e o/dv ] &&
        [ "$out" = "bnstudy sweep: dv.ini:2: devices 3: batch size 64 does not split into 3 equal shares of at least 2 rows" ] ||
        return 1
    # The diagnosis refuses what its tests do not describe.
    out=$("$bin" diagnose --batch-size 64 --devices 4 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "devices with statistics of their own are not diagnosed from a run.*--devices K" <<< "$out" || return 1
    out=$("$bin" diagnose --batch-size 8 --set sequence.length=16 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "padded sequences are not diagnosed from a run, only from a dump with their lengths" <<< "$out" || return 1
    printf 'feature\trunning_mean\trunning_var\nf0\t1\t2\n' > ck.tsv
    out=$("$bin" diagnose --batch-size 64 --set layer.initial=ck.tsv 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "starts the buffers at 0 and 1, not at a checkpoint's" <<< "$out"
}
case_ "devices that do not split the batch: one message naming the line, 2, nothing written; diagnose refuses devices of their own, [layer] initial and sequences" bad_devices

cd "$repo" || exit 2
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
