#!/usr/bin/env bash
# Sweeps split into shards and merged (`sweep --shard K/N`, `bnstudy
# merge`): the merged files must be the unsharded sweep's, byte for byte,
# every file, the many-seed summaries and the manifest included; shards
# that do not belong together are refused with one line and exit status 2,
# and the merge's directory is replaced whole or not at all. Then the
# README's recipes: GNU parallel with this machine as its one host, and
# the Slurm array script with the variables Slurm would set.
#   shard.sh [BNSTUDY]
#   shard.sh --walk FAULT_BNSTUDY   (make test-faults) only the merge's
#       fault walk, with the BN_FAULT build (src/base/fault.h): each of its
#       allocations and file-system changes failed in turn
# Prints one line per case and "N passed, N failed". Without GNU parallel
# its case prints SKIPPED (a failure with REQUIRE_ALL=1, as CI runs it).
set -uo pipefail
cd "$(dirname "$0")/.."
walk_only=0
if [ "${1:-}" = --walk ]; then
    walk_only=1
    shift
fi
bin=$(realpath "${1:-./bnstudy}")
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$work/run
# shellcheck source=tests/case.sh
. "$repo/tests/case.sh"

# The output files of the file table (src/study/outfile.c), as bnstudy
# lists them when refusing one it does not know, but those named: every
# file a sweep of the kind can write without them.
outputs_but() {
    printf '[experiment]\noutputs = no-such-file\n' > "$work/outputs.ini"
    "$bin" sweep "$work/outputs.ini" --out "$work/no-out" 2>&1 |
        sed -n 's/.*unknown value .no-such-file. (\(.*\))$/\1/p' | tr -d ',' |
        tr ' ' '\n' | grep -vxF -f <(printf '%s\n' "$@") | tr '\n' ' '
}
# Feature maps alone have effective.tsv; the classifier alone curve.tsv.
every_file=$(outputs_but effective)
layer_files=$(outputs_but effective curve)
[ -n "$layer_files" ] || { echo "no output files listed by $bin" >&2; exit 2; }

# one_digit_more FILE LINE COLUMN: FILE with one digit appended to the
# cell of COLUMN (by its header name, never its place) on LINE, on
# stdout; status 1 and a line naming it when FILE has no such column.
one_digit_more() {
    awk -F '\t' -v OFS='\t' -v line="$2" -v name="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i
                  if (!c) { print FILENAME ": no column " name > "/dev/stderr"; exit 1 } }
        NR == line { $c = $c "1" } 1' "$1"
}

# split INI N [OPTIONS...]: the sweep whole into full/, in N shards into
# shards/, merged into merged/; the two result sets compared.
split_merge() {
    local ini=$1 n=$2 stem
    shift 2
    stem=$(basename "$ini" .ini)
    "$bin" sweep "$ini" --out full "$@" || return 1
    for k in $(seq 1 "$n"); do
        "$bin" sweep "$ini" --out shards --shard "$k/$n" "$@" || return 1
    done
    "$bin" merge "$ini" shards/"$stem".shard-*-of-"$n" --out merged "$@" ||
        return 1
    same full/"$stem" merged/"$stem"
}

# The merge under every fault it can meet: both models, many seeds,
# every file; each allocation, then each change to the file system,
# failed in turn. Each failure must exit 2 with one line and leave the
# merged set of before as it was, and nothing beside it.
fault_walk() {
    local kind n k st problems=0
    printf '%s\n' '[experiment]' \
        "outputs = $every_file" \
        '[population]' 'rows = 64' 'classes = 2' \
        '[model]' 'type = layer classifier' \
        '[sweep]' 'batch_size = 8 32' 'order = shuffled sorted' 'seed = 1..3' \
        'epochs = 2' > walk.ini
    for k in 1 2 3; do
        "$bin" sweep walk.ini --out shards --shard "$k/3" --jobs 1 || return 1
    done
    "$bin" merge walk.ini shards/walk.shard-* --out merged &&
        cp -r merged/walk old &&
        BN_FAULT_COUNT=count "$bin" merge walk.ini shards/walk.shard-* --out merged ||
        return 1
    for kind in alloc io; do
        n=$(awk -v k="$kind" '$1 == k {print $2}' count)
        for k in $(seq 1 "$n"); do
            env "BN_FAULT_$(echo "$kind" | tr a-z A-Z)=$k" "$bin" merge walk.ini \
                shards/walk.shard-* --out merged > /dev/null 2> err
            st=$?
            if [ "$st" -ne 2 ] || [ "$(wc -l < err)" -ne 1 ] ||
                ! diff -rq old merged/walk > /dev/null ||
                [ "$(ls -A merged)" != walk ]; then
                echo "$kind $k: status $st, $(head -c 300 err), merged/ holds $(ls -A merged | tr '\n' ' ')"
                problems=$((problems + 1))
            fi
        done
        echo "$kind: $n faults"
    done
    [ "$problems" -eq 0 ]
}
if [ "$walk_only" = 1 ]; then
    case_ "merge: every allocation and file-system change failed in turn" fault_walk
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
fi

# Every file a layer sweep can write, many seeds: the distribution, the
# closed forms, the reading table of means and percentiles.
SEEDS=(--set 'sweep.seed=1..24' --set "experiment.outputs=$layer_files")
n_layer_files=$(wc -w <<< "$layer_files")

many_seeds() {
    split_merge "$repo/experiments/shuffles.ini" 4 "${SEEDS[@]}" &&
        [ "$(ls merged/shuffles | wc -l)" -eq "$n_layer_files" ]
}
case_ "shuffles, 24 seeds, in 4 shards: every layer file as the whole sweep's" many_seeds

uneven() {
    split_merge "$repo/experiments/estimators.ini" 7
}
case_ "estimators in 7 shards (an uneven split): the same bytes" uneven

classifier() {
    # Both models in one file, several seeds and epochs: curve.tsv's
    # rows go with their configuration.
    split_merge "$repo/experiments/clf-batch-size.ini" 4 \
        --set 'sweep.seed=1..3' --set 'sweep.epochs=1 2' \
        --set 'model.type=layer classifier' &&
        [ -s merged/clf-batch-size/curve.tsv ] &&
        [ -s merged/clf-batch-size/distribution.tsv ]
}
case_ "the classifier and the layer, 3 seeds, curve.tsv: the same bytes" classifier

maps_and_moved_rows() {
    # Feature maps' effective.tsv, and the layer evaluated on rows moved
    # by an offset under a drift (features.tsv's truth and train/eval
    # RMS are then the moved rows'): every row read back as written.
    split_merge "$repo/experiments/maps-field.ini" 4 &&
        [ -s merged/maps-field/effective.tsv ] &&
        split_merge "$repo/experiments/drift.ini" 3 --set 'sweep.seed=1..4' \
            --set 'evaluation.offset=0 0.5'
}
case_ "feature maps' effective.tsv, a drift and moved evaluation rows: the same bytes" maps_and_moved_rows

empty_shard() {
    # Two configurations in three shards: the third has none.
    split_merge "$repo/experiments/headline.ini" 3 &&
        [ "$(wc -l < shards/headline.shard-3-of-3/summary.tsv)" -eq 1 ]
}
case_ "a shard with no configuration (2 in 3 shards) merges" empty_shard

# The claims the many-seed rows carry read the merged set as the whole.
verify_merged() {
    split_merge "$repo/experiments/shuffles.ini" 4 --set 'sweep.seed=1..40' ||
        return 1
    awk '/^\[/ { keep = ($0 == "[worse-in-every-shuffle]" ||
                         $0 == "[debiased-penalty-gone-every-shuffle]") }
         keep' "$repo/experiments/claims.ini" > claims.ini
    "$bin" verify merged --claims claims.ini > merged.txt
    local st=$?
    "$bin" verify full --claims claims.ini > full.txt
    cat merged.txt
    [ "$st" -eq 0 ] && cmp merged.txt full.txt && grep -q '^2 passed, 0 failed' merged.txt
}
case_ "verify passes on the merged shuffles as on the whole sweep" verify_merged

# A job array's tasks start at once, all into the same new --out: each
# must make or find the directories on its way, never refuse one another
# made between its look and its mkdir. The window is narrow, so many
# rounds, on a path of five new directories.
at_once() {
    local r k st pids
    printf '%s\n' '[sweep]' 'batch_size = 8 16 32 64' > t.ini
    for r in $(seq 150); do
        rm -rf out
        pids=()
        for k in 1 2 3 4; do
            "$bin" sweep t.ini --out out/a/b/c/d --shard "$k/4" --jobs 1 2>> err &
            pids+=($!)
        done
        st=0
        for k in "${pids[@]}"; do wait "$k" || st=1; done
        [ "$st" = 0 ] && [ ! -s err ] ||
            { echo "round $r: $(sort -u err | head -n 3)"; return 1; }
    done
    "$bin" merge t.ini out/a/b/c/d/t.shard-*-of-4 --out merged &&
        "$bin" sweep t.ini --out full && same full/t merged/t
}
case_ "four shards started at once into one new --out directory, 150 times: none refused" at_once

# ---- refusals ----

# refused (tests/case.sh) holds merged/ as it was, every file in it.
watched() { ls -AlR merged 2>/dev/null | md5sum; }

# Four shards of the headline (two configurations; two shards hold none
# but their headers), three of a split in three, one of another setting.
bad_shards() {
    local ini=$repo/experiments/batch-size.ini s=shards/batch-size.shard
    for k in 1 2 3 4; do
        "$bin" sweep "$ini" --out shards --shard "$k/4" || return 1
    done
    "$bin" sweep "$ini" --out three --shard 2/3 &&
        "$bin" sweep "$ini" --out other --shard 2/4 --set layer.momentum=0.5 &&
        "$bin" sweep "$ini" --out whole || return 1
    for k in 1 2; do
        "$bin" sweep "$repo/experiments/headline.ini" --out shards2 --shard "$k/2" || return 1
    done
    # A merged set from before, which every refusal must leave alone.
    "$bin" merge "$ini" $s-{1,2,3,4}-of-4 --out merged &&
        same whole/batch-size merged/batch-size || return 1

    refused "shard 3/4 is missing \(3 of 4 shards given\)" \
        "$bin" merge "$ini" $s-{1,2,4}-of-4 --out merged &&
        refused "$s-2-of-4 and $s-2-of-4 are both shard 2/4" \
            "$bin" merge "$ini" $s-{1,2,2,3,4}-of-4 --out merged &&
        refused "$s-1-of-4 is shard 1/4 but three/batch-size.shard-2-of-3 is shard 2/3" \
            "$bin" merge "$ini" $s-1-of-4 three/batch-size.shard-2-of-3 --out merged &&
        refused "other/batch-size.shard-2-of-4/manifest.tsv line [0-9]+: 'set.tlayer.momentum=0.5' where this experiment file and these settings give .*: the shard is of another sweep" \
            "$bin" merge "$ini" $s-1-of-4 other/batch-size.shard-2-of-4 $s-{3,4}-of-4 --out merged &&
        refused "manifest.tsv line [0-9]+: 'experiment_file.theadline.ini' where .* give 'experiment_file.tbatch-size.ini': the shard is of another sweep" \
            "$bin" merge "$ini" shards2/headline.shard-{1,2}-of-2 --out merged &&
        mkdir edited && { cat "$ini"; echo "; a comment changes the file"; } > edited/batch-size.ini &&
        refused "$s-1-of-4/manifest.tsv line [0-9]+: 'experiment_sha256.t[0-9a-f]{64}' where .* give 'experiment_sha256.t[0-9a-f]{64}': the shard is of another sweep" \
            "$bin" merge edited/batch-size.ini $s-{1,2,3,4}-of-4 --out merged &&
        refused "whole/batch-size/manifest.tsv: no shard line: whole/batch-size is not a shard" \
            "$bin" merge "$ini" whole/batch-size --out merged &&
        refused "nowhere/manifest.tsv: cannot open" \
            "$bin" merge "$ini" nowhere --out merged &&
        refused "no shard directories given" "$bin" merge "$ini" --out merged &&
        refused "a path of 4100 bytes, more than the limit of 4064 for a shard directory" \
            "$bin" merge "$ini" "$(printf 'd%.0s' $(seq 4100))" --out merged &&
        refused "--jobs: a merge runs nothing" "$bin" merge "$ini" $s-1-of-4 --jobs 2 &&
        refused "--shard: '0/4' is not K/N with 1 <= K <= N <= 256" \
            "$bin" sweep "$ini" --shard 0/4 &&
        refused "--shard: '5/4' is not K/N" "$bin" sweep "$ini" --shard 5/4 &&
        refused "--shard: '1/257' is not K/N" "$bin" sweep "$ini" --shard 1/257 &&
        refused "--shard: '1/4x' is not K/N" "$bin" sweep "$ini" --shard 1/4x &&
        refused "--shard: '-1/4' is not K/N" "$bin" sweep "$ini" --shard -1/4 &&
        [ ! -e shards/batch-size.shard-0-of-4 ]
}
case_ "missing, duplicate, other-split, other-setting and other-experiment shards are refused" bad_shards

# two_shards: the batch-size sweep in shards/ as two shards, merged into
# merged/ (the set every refusal must leave), and ini and s set for the
# case.
two_shards() {
    ini=$repo/experiments/batch-size.ini s=shards/batch-size.shard
    for k in 1 2; do
        "$bin" sweep "$ini" --out shards --shard "$k/2" || return 1
    done
    "$bin" merge "$ini" $s-{1,2}-of-2 --out merged
}

# A damaged shard is found at its line, after the merge began: the
# temporary set goes and merged/ keeps the old one.
damaged() {
    local ini s
    two_shards || return 1
    cp -r shards good
    # One digit of one score changed.
    one_digit_more good/batch-size.shard-2-of-2/summary.tsv 3 stats_err \
        > $s-2-of-2/summary.tsv || return 1
    refused "$s-2-of-2/summary.tsv line 3: not configuration 3's row" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    # A running variance changed in features.tsv.
    cp good/batch-size.shard-2-of-2/summary.tsv $s-2-of-2/
    one_digit_more good/batch-size.shard-2-of-2/features.tsv 12 running_var \
        > $s-2-of-2/features.tsv || return 1
    refused "$s-2-of-2/features.tsv lines [0-9]+ to [0-9]+: not configuration [0-9]+'s rows" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    # A file cut short, and one with a row too many.
    cp good/batch-size.shard-2-of-2/features.tsv $s-2-of-2/
    head -n 2 good/batch-size.shard-1-of-2/summary.tsv > $s-1-of-2/summary.tsv
    refused "$s-1-of-2/summary.tsv: ends before configuration 2's row" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    { cat good/batch-size.shard-1-of-2/summary.tsv; tail -n 1 good/batch-size.shard-1-of-2/summary.tsv; } \
        > $s-1-of-2/summary.tsv
    refused "$s-1-of-2/summary.tsv line 5: a row past the shard's last configuration" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    [ -z "$(ls -A merged | grep -v '^batch-size$')" ]
}
case_ "a damaged, cut or overlong shard is refused at its line; merged/ keeps its old set" damaged

# A value edited into another the writers would also write (%.17g of
# another double) reads back to itself: only the digests the manifest
# records of the rows find it, at its line.
edited() {
    local ini s
    two_shards || return 1
    cp -r shards good
    grep -c '^rows_sha256	' $s-2-of-2/manifest.tsv | grep -qx 6 || { echo "not 6 digest lines"; return 1; }
    # stats_err of configuration 1, 0.0713 in the study, made 0.14251.
    awk -F '\t' -v OFS='\t' 'NR == 2 { $13 = "0.14251" } 1' good/batch-size.shard-2-of-2/summary.tsv \
        > $s-2-of-2/summary.tsv
    cmp -s good/batch-size.shard-2-of-2/summary.tsv $s-2-of-2/summary.tsv && { echo "no edit"; return 1; }
    refused "^bnstudy merge: $s-2-of-2/summary.tsv line 2: not the row the shard's manifest records \(its SHA-256 differs\): an edited or damaged shard$" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    # A running variance, written as %.17g writes another one.
    cp good/batch-size.shard-2-of-2/summary.tsv $s-2-of-2/
    awk -F '\t' -v OFS='\t' 'NR == 12 { $14 = sprintf("%.17g", $14 * 2) } 1' \
        good/batch-size.shard-2-of-2/features.tsv > $s-2-of-2/features.tsv
    refused "^bnstudy merge: $s-2-of-2/features.tsv lines 10 to 17: not the rows the shard's manifest records for configurations 3 to 3 \(their SHA-256 differs\)" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    # The manifest's digests edited, or gone: the rows are no longer held
    # to anything, which is refused too.
    cp good/batch-size.shard-2-of-2/features.tsv $s-2-of-2/
    sed -i '/^rows_sha256	summary.tsv 3 3 /s/ [0-9a-f]*$/ 0000000000000000000000000000000000000000000000000000000000000000/' \
        $s-2-of-2/manifest.tsv
    refused "^bnstudy merge: $s-2-of-2/summary.tsv line 3: not the row the shard's manifest records" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    grep -v '^rows_sha256	features.tsv' good/batch-size.shard-2-of-2/manifest.tsv > $s-2-of-2/manifest.tsv
    refused "^bnstudy merge: $s-2-of-2/manifest.tsv: no digest of features.tsv's rows of configuration 1: written by an older bnstudy, or edited" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    # merged/ still holds the merge of before, the whole sweep's bytes.
    "$bin" sweep "$ini" --out full > /dev/null && same full/batch-size merged/batch-size
}
case_ "a value edited into another %.17g value, or an edited digest, is refused at its line; merged/ keeps its old set" edited

# A merge never destroys what it reads: not a shard renamed to its own
# target, not a shard it would write into.
own_inputs() {
    local ini s
    two_shards || return 1
    cp -r shards good
    mv $s-2-of-2 shards/batch-size
    watched() { ls -AlR shards 2>/dev/null | md5sum; }
    refused "^bnstudy merge: shards/batch-size is the shard directory shards/batch-size this merge reads: it replaces shards/batch-size as a whole, so it will not" \
        "$bin" merge "$ini" $s-1-of-2 shards/batch-size --out shards || return 1
    mv shards/batch-size $s-2-of-2
    refused "^bnstudy merge: --out $s-1-of-2 is a result set \(it holds manifest.tsv\)" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out $s-1-of-2 || return 1
    refused "^bnstudy merge: --out $s-1-of-2/sub is inside the result set $s-1-of-2" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out $s-1-of-2/sub || return 1
    watched() { ls -AlR merged 2>/dev/null | md5sum; }
    diff -r good shards
}
case_ "a shard renamed to the merge's target, --out inside a shard: refused, every shard as it was" own_inputs

# What a shard's file may be is bounded as any input is: no NUL, no
# endless line, and a device behind a name is read no further than that.
unbounded() {
    local ini s
    two_shards || return 1
    cp $s-2-of-2/summary.tsv kept.tsv
    ln -sf /dev/zero $s-2-of-2/summary.tsv
    refused "^bnstudy merge: $s-2-of-2/summary.tsv:1: a NUL byte: not a text file" \
        timeout 10 "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    rm $s-2-of-2/summary.tsv && truncate -s 600M $s-2-of-2/summary.tsv
    refused "^bnstudy merge: $s-2-of-2/summary.tsv:1: a NUL byte: not a text file" \
        timeout 10 "$bin" merge "$ini" $s-{1,2}-of-2 --out merged || return 1
    { head -n 1 kept.tsv; head -c 2000000 /dev/zero | tr '\0' 7; echo; } > $s-2-of-2/summary.tsv
    refused "^bnstudy merge: $s-2-of-2/summary.tsv:2: a line longer than the limit of 1 MiB" \
        timeout 10 "$bin" merge "$ini" $s-{1,2}-of-2 --out merged
}
case_ "a shard's summary.tsv behind /dev/zero, 600 MB of NULs, a line of 2 MB: refused at once" unbounded

damaged_curve() {
    local ini=$repo/experiments/clf-batch-size.ini s=shards/clf-batch-size.shard
    local opts=(--set 'sweep.epochs=2' --set 'sweep.batch_size=32 64')
    for k in 1 2; do
        "$bin" sweep "$ini" --out shards --shard "$k/2" "${opts[@]}" || return 1
    done
    cp -r shards good
    # Epoch 2's accuracy in train mode, one digit more.
    one_digit_more good/clf-batch-size.shard-1-of-2/curve.tsv 3 acc_train_mode \
        > $s-1-of-2/curve.tsv || return 1
    cmp -s good/clf-batch-size.shard-1-of-2/curve.tsv $s-1-of-2/curve.tsv &&
        { echo "the edit changed nothing"; return 1; }
    refused "$s-1-of-2/curve.tsv line 3: not configuration 0's row" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged "${opts[@]}" || return 1
    # Epoch 2 gone: the next configuration's first row is not epoch 2.
    sed 3d good/clf-batch-size.shard-1-of-2/curve.tsv > $s-1-of-2/curve.tsv
    refused "$s-1-of-2/curve.tsv: ends before configuration 0's rows" \
        "$bin" merge "$ini" $s-{1,2}-of-2 --out merged "${opts[@]}"
}
case_ "a damaged curve.tsv row of a classifier's shard is refused at its line" damaged_curve

# ---- the README's recipes ----

# GNU parallel, this machine as its one host (':'), four shards of the
# shuffles experiment cut to 24 seeds, every file written.
gnu_parallel() {
    mkdir experiments && ln -s "$bin" bnstudy || return 1
    sed -e 's/^seed = .*/seed = 1..24/' -e 's/^outputs = .*/& features/' \
        "$repo/experiments/shuffles.ini" > experiments/shuffles.ini
    parallel --will-cite -S 4/: --workdir . \
        --return 'shards/shuffles.shard-{}-of-4' --cleanup \
        ./bnstudy sweep experiments/shuffles.ini --out shards --shard {}/4 \
        ::: 1 2 3 4 || return 1
    ./bnstudy merge experiments/shuffles.ini shards/shuffles.shard-*-of-4 \
        --out results &&
        ./bnstudy sweep experiments/shuffles.ini --out whole &&
        same whole/shuffles results/shuffles &&
        [ "$(ls results/shuffles | wc -l)" -eq \
          "$(sed -n 's/^outputs = //p' experiments/shuffles.ini | wc -w)" ]
}
if parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
    case_ "GNU parallel, four shards on this machine, merged: the same bytes" gnu_parallel
elif [ "${REQUIRE_ALL:-0}" = 1 ]; then
    fail=$((fail + 1))
    echo "FAIL GNU parallel recipe: GNU parallel is not installed (REQUIRE_ALL=1; bash scripts/deps.sh test installs it)"
else
    echo "SKIPPED GNU parallel recipe: GNU parallel is not installed (bash scripts/deps.sh test installs it)"
fi

# The Slurm array script with the variables Slurm would set (tests/slurm.sh
# submits it to a real Slurm): task K of an array whose numbers run from
# MIN to MAX, COUNT of them (Slurm 20 on; "-" leaves it out, as older
# ones do).
#   task K MIN MAX COUNT [SCRIPT ARGS...]
task() {
    local k=$1 min=$2 max=$3 count=$4
    shift 4
    local vars=(SLURM_ARRAY_TASK_ID="$k" SLURM_ARRAY_TASK_MIN="$min"
        SLURM_ARRAY_TASK_MAX="$max" SLURM_ARRAY_TASK_STEP=1 SLURM_CPUS_PER_TASK=1)
    [ "$count" = - ] || vars+=(SLURM_ARRAY_TASK_COUNT="$count")
    env "${vars[@]}" bash "$repo/scripts/slurm-shards.sh" "$@"
}

slurm() {
    cp -r "$repo/experiments" . && ln -s "$bin" bnstudy || return 1
    local k
    for k in 1 2 3 4; do
        task "$k" 1 4 4 experiments/estimators.ini --out shards || return 1
    done
    ./bnstudy merge experiments/estimators.ini shards/estimators.shard-*-of-4 \
        --out results &&
        ./bnstudy sweep experiments/estimators.ini --out whole &&
        same whole/estimators results/estimators
}
case_ "scripts/slurm-shards.sh as an array of four tasks, merged: the same bytes" slurm

# A rerun of task 3 alone (--array=3, --of 4), and an array of Slurm 19,
# which has no SLURM_ARRAY_TASK_COUNT.
slurm_rerun_old() {
    cp -r "$repo/experiments" . && ln -s "$bin" bnstudy || return 1
    local k
    for k in 1 2 3 4; do
        task "$k" 1 4 - experiments/estimators.ini --out shards || return 1
    done
    ./bnstudy merge experiments/estimators.ini shards/estimators.shard-*-of-4 \
        --out whole && rm -r shards/estimators.shard-3-of-4 &&
        task 3 3 3 1 --of 4 experiments/estimators.ini --out shards &&
        ./bnstudy merge experiments/estimators.ini shards/estimators.shard-*-of-4 \
            --out results &&
        same whole/estimators results/estimators
}
case_ "scripts/slurm-shards.sh on Slurm 19, and task 3 rerun alone with --of 4: the same bytes" slurm_rerun_old

# Arrays not numbered 1 to N, and --of misused: the script's own line,
# status 2, no shard written.
slurm_refused() {
    cp -r "$repo/experiments" . && ln -s "$bin" bnstudy || return 1
    local e=experiments/estimators.ini
    local not1n="not 1 to N: submit --array=1-N \(any %limit\), or name N with --of N to rerun some tasks of an array 1-N"
    refused "^slurm-shards.sh: the array has tasks numbered 2 to 5 \(4 in all\), $not1n\$" \
        task 2 2 5 4 $e --out shards &&
        refused "^slurm-shards.sh: the array has tasks numbered 0 to 3 \(4 in all\), $not1n" \
            task 1 0 3 4 $e --out shards &&
        refused "^slurm-shards.sh: the array has tasks numbered 1 to 3 \(2 in all\), $not1n" \
            task 1 1 3 2 $e --out shards &&
        refused "^slurm-shards.sh: the array has tasks numbered 3 to 3 \(1 in all\), $not1n" \
            task 3 3 3 1 $e --out shards &&
        refused "^slurm-shards.sh: the array has tasks numbered 1 to 7 in steps of 2, $not1n" \
            env SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=7 \
            SLURM_ARRAY_TASK_STEP=2 bash "$repo/scripts/slurm-shards.sh" $e --out shards &&
        refused "^slurm-shards.sh: task 5 is not one of the 4 shards that --of 4 names\$" \
            task 5 5 5 1 --of 4 $e --out shards &&
        refused "^slurm-shards.sh: --of: 'x' is not a number of shards; usage: sbatch --array=1-N" \
            task 1 1 1 1 --of x $e &&
        refused "^slurm-shards.sh: no experiment file; usage: " task 1 1 4 4 &&
        refused "^slurm-shards.sh: not a task of a job array \(no SLURM_ARRAY_TASK_ID\); usage: " \
            bash "$repo/scripts/slurm-shards.sh" $e &&
        [ ! -e shards ]
}
case_ "scripts/slurm-shards.sh refuses an array not numbered 1-N, and a task past --of N, with its own line" slurm_refused

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
