#!/usr/bin/env bash
# Test `bnstudy plot` by what its figures draw and say, not by their bytes:
# PNG and SVG bytes depend on the gnuplot, cairo and font versions.
# Everything runs on copies in a temporary directory; the committed files
# are never touched.
#   - On a copy of results/: plot exits 0 and prints nothing on stderr
#     (gnuplot reports warnings there and still exits 0, and a warning
#     usually means a wrong picture); it leaves a PNG (checked by its magic
#     bytes) and a well-formed SVG for every figure it names, and nothing
#     else; it runs one gnuplot per experiment, and each figure drawn
#     alone, in a gnuplot of its own, gives the same bytes.
#   - What each figure draws and says: with --tables every plot writes the
#     points it would draw (gnuplot's own `set table`) and each panel its
#     texts (`save set`), and tests/figures_content.py works out from the
#     TSVs alone which figures each experiment supports and checks every
#     series, axis label and title against the numbers.
#   - results/figures/ holds exactly those figures, and a committed SVG
#     drawn by this very gnuplot version matches a fresh render byte for
#     byte (another version says so and skips only that comparison).
#   - On doctored results where the published findings are false, the
#     titles come out neutral.
#   - On a user's experiment (a file named anything, three epochs, another
#     momentum, another population size) plot draws the figures its axes
#     support, with the right labels.
#   - Nothing to plot, or no gnuplot: one clear message, exit status 2, and
#     nothing written.
#   - In the one gnuplot of an experiment: an error in its second figure
#     is told of that figure (exit 2, the old figures kept), so is a
#     warning (exit 1), and no variable of one figure is left to the next;
#     the figures' stamp moves with the scripts they run and no other.
# Prints one line per check and a final "N passed, N failed"; exits 1 if
# any check failed, 2 if it could not run.
set -uo pipefail
cd "$(dirname "$0")/.."

gnuplot=${GNUPLOT:-gnuplot}
if ! command -v "$gnuplot" >/dev/null 2>&1; then
    echo "gnuplot not found: run make deps" >&2
    exit 2
fi
export GNUPLOT=$gnuplot
python=${PYTHON:-python3}
bn=${BNSTUDY:-./bnstudy}
[ -x "$bn" ] || { echo "$bn not built: run make" >&2; exit 2; }

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
# The figure kinds bnstudy draws and its orders, its figure-kind and order
# tables': each kind needs a checker in tests/figures_content.py, each
# order its words there.
tables=() nk=0 no=0
for k in $("$bn" plot --help | sed -n 's|^  \([a-z][a-z-]*\) (scripts/.*$|\1|p'); do
    tables+=(--kind "$k") nk=$((nk + 1))
done
for o in $("$bn" run --help | sed -n 's|^  --order ORDER  *[^:]*: \(.*\) (shuffled)$|\1|p' |
           tr ',' '\n' | sed 's/^ *//; s/:.*//' | sort -u); do
    tables+=(--order "$o") no=$((no + 1))
done
check "plot --help and run --help list the figure kinds and the orders" \
    [ $((nk * no)) -gt 0 ]
# Add a content checker's counts to ours.
content() { # content NAME RESULTS TABLES
    "$python" tests/figures_content.py "$2" "$3" "${tables[@]}" > "$tmp/$1.content.log"
    local rc=$? line
    grep -v '^[0-9]* passed, [0-9]* failed$' "$tmp/$1.content.log" | sed "s/^\(not \)\{0,1\}ok - /&$1: /"
    line=$(tail -n 1 "$tmp/$1.content.log")
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
    fi
    [ "$rc" -eq 0 ] || [[ $line =~ [1-9][0-9]*\ failed$ ]] || failed=$((failed + 1))
}
# plot exits with status $1 and prints nothing on stderr (or, with status
# 2, exactly one line).
plots() { # plots STATUS LOG ARGS...
    local want=$1 log=$2
    shift 2
    "$bn" plot "$@" >"$log.out" 2>"$log.err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { echo "    status $rc, want $want"; sed 's/^/    /' "$log.err"; return 1; }
    if [ "$want" -eq 0 ]; then
        [ ! -s "$log.err" ] || { sed 's/^/    /' "$log.err"; return 1; }
    else
        [ "$(wc -l <"$log.err")" -eq 1 ] || { sed 's/^/    /' "$log.err"; return 1; }
    fi
}
is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() {
    [ -s "$1" ] && "$python" -c 'import sys, xml.etree.ElementTree as E
sys.exit(E.parse(sys.argv[1]).getroot().tag != "{http://www.w3.org/2000/svg}svg")' "$1"
}
# "Produced by GNUPLOT 5.4 patchlevel 4": the gnuplot that drew an SVG.
drawn_by() { sed -n 's/.*<desc>Produced by \(GNUPLOT [^<]*[^ <]\) *<\/desc>.*/\1/p' "$1" | head -n 1; }
this_gnuplot="GNUPLOT $("$gnuplot" --version | sed "s/^gnuplot //")"
# The files a figures directory holds, one "experiment/file" a line.
listing() { (cd "$1" && find . -type f | sed 's|^\./||' | sort); }

# ---- the study's results ----

# A gnuplot that counts the runs that draw (all but --version) in
# $tmp/drawn.log. One that draws each figure of plot's command file in a
# process of its own, as if no other figure were drawn in it: the file is
# cut before each figure's commands (which open with `unset table`) and
# the pieces run one after the other, each counted in $tmp/alone.log.
printf '#!/bin/sh\n[ "$1" = --version ] || echo drawn >> "%s"\nexec "%s" "$@"\n' \
    "$tmp/drawn.log" "$gnuplot" > "$tmp/counts"
cat > "$tmp/alone" <<EOF
#!/usr/bin/env bash
[ "\$1" = --version ] && exec "$gnuplot" "\$@"
d=\$(mktemp -d) || exit 2
trap 'rm -rf "\$d"' EXIT
awk -v d="\$d" '/^unset table\$/ { n++ } { print > (d "/" n ".gp") }' "\$1"
for f in \$(ls "\$d" | sort -n); do
    echo run >> "$tmp/alone.log"
    "$gnuplot" "\$d/\$f" || exit \$?
done
EOF
chmod +x "$tmp/counts" "$tmp/alone"

# Two independent copies of the results, without the committed figures, so
# every figure checked below was drawn by this run: the first as plot
# draws them, an experiment's in one gnuplot, the second each figure in a
# gnuplot of its own.
for copy in first second; do
    mkdir -p "$tmp/$copy"
    cp -R results/. "$tmp/$copy/" || exit 2
    rm -rf "$tmp/$copy/figures"
done
: > "$tmp/drawn.log"
check "plot draws the study's figures, exit 0, nothing on stderr" \
    plots 0 "$tmp/first" "$tmp/first" --gnuplot "$tmp/counts"
: > "$tmp/alone.log"
plots 0 "$tmp/second" "$tmp/second" --gnuplot "$tmp/alone" >/dev/null 2>&1
# Each line it prints names a figure: DIR/figures/E/NAME.png, .svg: what.
sed -n 's|^.*/figures/\([^/]*\)/\([^/]*\)\.png, \.svg: .*$|\1/\2|p' "$tmp/first.out" | sort > "$tmp/named"
each_line_names() { [ -s "$tmp/named" ] && [ "$(wc -l < "$tmp/named")" -eq "$(wc -l < "$tmp/first.out")" ]; }
check "plot names a figure on each line it prints" each_line_names
check "plot runs one gnuplot per experiment" \
    [ "$(wc -l < "$tmp/drawn.log")" -eq "$(sed 's|/.*||' "$tmp/named" | sort -u | wc -l)" ]
check "... and the second copy's figures were each drawn alone" \
    [ "$(wc -l < "$tmp/alone.log")" -eq "$(wc -l < "$tmp/named")" ]
while read -r fig; do
    check "$fig: PNG written" is_png "$tmp/first/figures/$fig.png"
    check "$fig: SVG written and well-formed" is_svg "$tmp/first/figures/$fig.svg"
    for ext in png svg; do
        check "$fig.$ext: the same bytes drawn alone as among its experiment's" \
            cmp -s "$tmp/first/figures/$fig.$ext" "$tmp/second/figures/$fig.$ext"
    done
    committed=results/figures/$fig.svg
    by=$([ -f "$committed" ] && drawn_by "$committed")
    if [ "$by" = "$this_gnuplot" ]; then
        check "$committed matches a fresh render (both $by)" \
            cmp -s "$tmp/first/figures/$fig.svg" "$committed"
    elif [ -n "$by" ]; then
        echo "note: $committed was drawn by $by, this is $this_gnuplot: bytes not compared"
    fi
done < "$tmp/named"
sed 's/$/.png/' "$tmp/named" > "$tmp/wanted"
sed 's/$/.svg/' "$tmp/named" >> "$tmp/wanted"
sed 's|/.*$|/inputs.sha256|' "$tmp/named" | sort -u >> "$tmp/wanted"
sort -o "$tmp/wanted" "$tmp/wanted"
# Nothing but the figures named (and each experiment's inputs.sha256): a
# figure written under a wrong name would otherwise leave its real one
# stale.
check "figures/ holds exactly the figures plot names" \
    [ "$(listing "$tmp/first/figures")" = "$(cat "$tmp/wanted")" ]
check "results/figures/ holds exactly the figures plot draws from results/" \
    [ "$(listing results/figures)" = "$(cat "$tmp/wanted")" ]
check "the tables render with no output" \
    plots 0 "$tmp/tables" "$tmp/first" --tables "$tmp/tables"
content study "$tmp/first" "$tmp/tables"

# ---- findings the numbers do not bear out ----

# The batch-size, ordering and momentum experiments doctored so that each
# published finding is false: stats_err no higher at B 256 than at B 8
# (and batch_mean_err no lower), sorted batches below shuffled ones at
# B 64, the largest p best at B 8, and the running variances at B 256
# equal to the truth. Each number is written as bnstudy writes one
# (g17, %.17g): plot reads no other.
mkdir -p "$tmp/doctored"
for e in batch-size ordering momentum; do cp -R "results/$e" "$tmp/doctored/"; done
doctor() { # doctor FILE AWK-PROGRAM: edit a TSV by column name
    awk -F'\t' -v OFS='\t' 'function g17(x) { return sprintf("%.17g", x) }
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } '"$2" "$1" > "$1.new" &&
        mv "$1.new" "$1"
}
doctor "$tmp/doctored/batch-size/summary.tsv" \
    'NR > 1 && $c["batch_size"] == 256 { $c["stats_err"] = g17(0.05); $c["batch_mean_err"] = g17(0.9) } { print }'
doctor "$tmp/doctored/batch-size/features.tsv" \
    'NR > 1 && $c["batch_size"] == 256 { $c["running_var"] = $c["true_var"] } { print }'
doctor "$tmp/doctored/ordering/summary.tsv" \
    'NR > 1 && $c["batch_size"] == 64 && $c["order"] == "sorted" { $c["train_eval_rmse"] = g17(0.01); $c["stats_err"] = g17(0.01) } { print }'
doctor "$tmp/doctored/momentum/summary.tsv" \
    'NR > 1 && $c["batch_size"] == 8 && $c["new_weight"] + 0 == 0.5 { $c["stats_err"] = g17(0.001) } { print }'
check "plot draws the doctored results" \
    plots 0 "$tmp/doctored-plot" "$tmp/doctored" --tables "$tmp/doctored-tables"
content doctored "$tmp/doctored" "$tmp/doctored-tables"
finding_gone() { # finding_gone FIGURE TEXT: TEXT in none of its panels' texts
    ! grep -qF "$2" "$tmp/doctored-tables/$1".*.set
}
check "doctored: the batch-size finding is not stated" \
    finding_gone batch-size/stats-err "Bigger batches estimate better"
check "doctored: stats_err is not said higher at B 256" \
    finding_gone batch-size/stats-err "higher"
check "doctored: the features finding is not stated" \
    finding_gone batch-size/features "leave running variances near 1"
check "doctored: sorted batches are not said to widen the gap" \
    finding_gone ordering/train-eval "widen the train/eval gap"
check "doctored: fewer updates are not said to need a larger p" \
    finding_gone momentum/stats-err "Fewer updates need"

# ---- a user's experiment ----

mkdir -p "$tmp/user"
cat > "$tmp/user/my layer, take 2.ini" <<'EOF'
; Anything a user might try: a name like no published experiment's, three
; epochs, momentum 0.99, 400 rows (which 32, 64 and 128 do not divide), two
; orders.
[population]
rows = 400
[layer]
momentum = 0.99
[sweep]
batch_size = 16 32 64 128
order = shuffled sorted
epochs = 3
EOF
"$bn" sweep "$tmp/user/my layer, take 2.ini" --out "$tmp/user/out" >/dev/null 2>&1 || exit 2
check "plot draws a user's experiment" plots 0 "$tmp/user/plot" "$tmp/user/out"
# A batch of every sample: effective.tsv reads `-` where no ordering moves
# the batch mean, and the figure draws the counts there without n_eff.
mkdir -p "$tmp/whole"
cat > "$tmp/whole/whole.ini" <<'EOF'
[experiment]
outputs = summary effective manifest
[maps]
size = 4 4
samples = 32
channel = smooth 0 1 0.8
[sweep]
batch_size = 8 16 32
order = shuffled-samples
EOF
"$bn" sweep "$tmp/whole/whole.ini" --out "$tmp/whole/out" >/dev/null 2>&1 || exit 2
check "a batch of every sample: effective.tsv reads - there" \
    grep -q "	-	0	-	-	" "$tmp/whole/out/whole/effective.tsv"
check "... and plot draws it" plots 0 "$tmp/whole/plot" "$tmp/whole/out"
check "... the effective figure included" is_svg "$tmp/whole/out/figures/whole/effective.svg"
# Which figures they are is figures_content.py's to say (content user,
# below); here, that each is drawn under the experiment's own name.
user_figures() {
    local named
    named=$(sed -n 's|^.*/figures/\([^/]*\)/[^/]*\.png, .*$|\1|p' "$tmp/user/plot.out" | sort -u)
    [ "$named" = "my layer, take 2" ] &&
        [ "$(grep -c . "$tmp/user/plot.out")" -gt 1 ]
}
check "a user's experiment: its figures are drawn under its name" user_figures
check "a user's experiment: the tables render with no output" \
    plots 0 "$tmp/user/tab" "$tmp/user/out" --tables "$tmp/user/tables"
content user "$tmp/user/out" "$tmp/user/tables"
labels() { grep -h '^set xlabel\|^set label 10[12]' "$tmp/user/tables/my layer, take 2/$1".*.set; }
check "a user's experiment: the x label gives 400 rows, 3 epochs, momentum 0.99" \
    bash -c '[[ $0 == *"400 rows, 3 epochs, momentum 0.99 old, p = 0.01"* ]]' "$(labels stats-err)"
check "a user's experiment: the init-weight label gives three epochs of 400 rows" \
    bash -c '[[ $0 == *"EMA updates in 3 epochs, T = 3 ⌊N / B⌋, N = 400 rows"* ]]' "$(labels init-weight | sed 's/\\342\\214\\212/⌊/; s/\\342\\214\\213/⌋/')"

# Batch sizes spanning less than a factor of 8 (a linear axis, the
# update counts along the top of it) and an estimator exact at every one
# (no log axis can hold it, and nothing is worse or better to say).
cat > "$tmp/user/narrow.ini" <<'EOF'
[layer]
estimator = precise
[sweep]
batch_size = 8 16 32
EOF
"$bn" sweep "$tmp/user/narrow.ini" --out "$tmp/user/narrow" >/dev/null 2>&1 || exit 2
check "a narrow sweep, exact everywhere: plot draws it" plots 0 "$tmp/user/nplot" "$tmp/user/narrow"
check "... and its tables" plots 0 "$tmp/user/ntab" "$tmp/user/narrow" --tables "$tmp/user/ntables"
content narrow "$tmp/user/narrow" "$tmp/user/ntables"

# Other axes on x (the epochs, the momentum), three axes at once (a panel
# per order, a series per p and estimator), each many-seed file alone,
# a file's rows with an order on a feature whose name has a space, and
# 1024 updates, after which the initial values keep a weight near 1e-47
# (the tables must hold it to 17 digits, not as 0).
mkdir -p "$tmp/axes"
printf '[sweep]\nbatch_size = 64\nepochs = 1 2 4 8\n' > "$tmp/axes/by-epochs.ini"
printf '[layer]\nmomentum = 0.5 0.9 0.99\n[sweep]\nbatch_size = 128\n' > "$tmp/axes/by-momentum.ini"
printf '[layer]\nmomentum = 0.9 0.99\nestimator = ema cumulative\n[sweep]\nbatch_size = 8 32 128\norder = shuffled sorted\n' \
    > "$tmp/axes/three.ini"
printf '[experiment]\noutputs = summary manifest distribution\n[sweep]\nbatch_size = 8 64 256\nseed = 1..20\n' \
    > "$tmp/axes/bands.ini"
printf '[experiment]\noutputs = summary manifest expectation\n[layer]\nestimator = ema ema-debiased\n[sweep]\nbatch_size = 8 64 256\nseed = 1..20\n' \
    > "$tmp/axes/closed-form.ini"
printf '[population]\nfile = %s\nlabel = label\n[sweep]\nbatch_size = 16 128\norder = "sorted:worst area" by-label shuffled\n' \
    "$PWD/data/breast-cancer.csv" > "$tmp/axes/rows.ini"
printf '[population]\nrows = 8192\n[sweep]\nbatch_size = 8 64\n' > "$tmp/axes/tiny-weight.ini"
for f in "$tmp"/axes/*.ini; do
    "$bn" sweep "$f" --out "$tmp/axes/out" >/dev/null 2>&1 || exit 2
done
check "other axes: plot draws them" plots 0 "$tmp/axes/plot" "$tmp/axes/out"
check "... and their tables" plots 0 "$tmp/axes/tab" "$tmp/axes/out" --tables "$tmp/axes/tables"
content axes "$tmp/axes/out" "$tmp/axes/tables"

# Both models in one file: each figure draws its own model's rows, and a
# setting of one model ("-" in the other's rows) is no axis. Unfixed, the
# layer's gamma and beta ("-" for the classifier) made an x axis of
# values "-" and gnuplot failed on "undefined variable: nan".
mkdir -p "$tmp/both"
printf '[population]\nclasses = 2\n[model]\ntype = layer classifier\n[layer]\nestimator = ema precise\n[sweep]\nbatch_size = 32\n' \
    > "$tmp/both/by-estimator.ini"
printf '[population]\nclasses = 2\n[model]\ntype = layer classifier\n[evaluation]\nshift = 0 1\n[sweep]\nbatch_size = 8 32 128\n' \
    > "$tmp/both/by-batch.ini"
for f in "$tmp"/both/*.ini; do
    "$bn" sweep "$f" --out "$tmp/both/out" >/dev/null 2>&1 || exit 2
done
check "both models in one file: plot draws them" plots 0 "$tmp/both/plot" "$tmp/both/out"
check "... and their tables" plots 0 "$tmp/both/tab" "$tmp/both/out" --tables "$tmp/both/tables"
content both "$tmp/both/out" "$tmp/both/tables"

# ---- nothing to plot, and no gnuplot ----

mkdir -p "$tmp/empty"
check "a directory of no results: exit 2, one line" plots 2 "$tmp/empty" "$tmp/empty"
check "... which says there is nothing to plot" grep -q "nothing to plot in" "$tmp/empty.err"
check "... and writes nothing" [ -z "$(ls -A "$tmp/empty")" ]
mkdir -p "$tmp/bare"
cat > "$tmp/bare/one.ini" <<'EOF'
; One configuration and no features.tsv: no setting varies, nothing to draw.
[experiment]
outputs = summary manifest table
EOF
"$bn" sweep "$tmp/bare/one.ini" --out "$tmp/bare/out" >/dev/null 2>&1 || exit 2
check "an experiment that supports no figure: exit 2, one line" \
    plots 2 "$tmp/bare/plot" "$tmp/bare/out"
check "... which says no figure fits" grep -q "no figure fits" "$tmp/bare/plot.err"
check "... and writes nothing" [ ! -e "$tmp/bare/out/figures" ]
mkdir -p "$tmp/nognuplot"
cp -R results/batch-size "$tmp/nognuplot/"
check "no gnuplot: exit 2, one line" \
    plots 2 "$tmp/nognuplot/plot" "$tmp/nognuplot" --gnuplot "$tmp/no/such/gnuplot"
check "... which names it" grep -q "cannot run gnuplot" "$tmp/nognuplot/plot.err"
check "... and writes nothing" [ ! -e "$tmp/nognuplot/figures" ]
check "GNUPLOT naming no program: exit 2, one line" \
    env GNUPLOT="$tmp/no/such/gnuplot" bash -c '"$0" plot "$1" >/dev/null 2>"$2"; [ $? -eq 2 ] && [ "$(wc -l <"$2")" -eq 1 ]' \
    "$bn" "$tmp/nognuplot" "$tmp/nognuplot/env.err"
check "a bad option: exit 2, one line" plots 2 "$tmp/badopt" "$tmp/nognuplot" --bogus
check "one experiment's directory instead of the results': exit 2, one line" \
    plots 2 "$tmp/onedir" "$tmp/nognuplot/batch-size"

# A gnuplot that warns: the figures are drawn, the warning shown, exit 1.
# One that fails before drawing: exit 2, and the figures drawn before stay
# as they were, byte for byte.
printf '#!/bin/sh\n"%s" "$@"; rc=$?\n[ "$1" = --version ] || echo "warning: a test'"'"'s warning" >&2\nexit $rc\n' \
    "$gnuplot" > "$tmp/warns"
printf '#!/bin/sh\n[ "$1" = --version ] && exec "%s" "$@"\nexit 1\n' \
    "$gnuplot" > "$tmp/fails"
chmod +x "$tmp/warns" "$tmp/fails"
mkdir -p "$tmp/warned"
cp -R results/batch-size "$tmp/warned/"
"$bn" plot "$tmp/warned" --gnuplot "$tmp/warns" >/dev/null 2>"$tmp/warned.err"
check "a gnuplot that warns: exit 1" [ $? -eq 1 ]
check "... the warning shown" grep -q "a test's warning" "$tmp/warned.err"
check "... the figures drawn" is_png "$tmp/warned/figures/batch-size/stats-err.png"
"$bn" plot "$tmp/warned" >/dev/null 2>&1
tree_sum() { (cd "$1/figures" && find . -type f | sort | xargs cat | cksum; find . -type f | sort); }
tree_sum "$tmp/warned" > "$tmp/warned.before"
# Figures whose inputs did not change are kept, byte for byte, and not
# drawn again (the counting gnuplot says whether it was asked to draw).
: > "$tmp/drawn.log"
check "plot again, nothing changed: exit 0" plots 0 "$tmp/again" "$tmp/warned" --gnuplot "$tmp/counts"
check "... no figure drawn" [ ! -s "$tmp/drawn.log" ]
check "... every byte of the figures as it was" \
    [ "$(tree_sum "$tmp/warned")" = "$(cat "$tmp/warned.before")" ]
cut -c1-64 "$tmp/warned/figures/batch-size/inputs.sha256" > "$tmp/warned.stamp"
# One byte of the experiment's files moves (no number of a figure): its
# figures are drawn again, since the stamp names every byte they read.
sed -i.bak '1s/$/ /' "$tmp/warned/batch-size/table.md" && rm -f "$tmp/warned/batch-size/table.md.bak"
check "an input changed: exit 0" plots 0 "$tmp/changed" "$tmp/warned" --gnuplot "$tmp/counts"
check "... its figures drawn again" [ -s "$tmp/drawn.log" ]
check "... and stamped anew" \
    [ "$(cut -c1-64 "$tmp/warned/figures/batch-size/inputs.sha256")" != "$(cat "$tmp/warned.stamp")" ]
tree_sum "$tmp/warned" > "$tmp/warned.before"
sed -i.bak '1s/ $//' "$tmp/warned/batch-size/table.md" && rm -f "$tmp/warned/batch-size/table.md.bak"
check "a gnuplot that fails: exit 2" plots 2 "$tmp/failed" "$tmp/warned" --gnuplot "$tmp/fails"
check "... and the figures drawn before stay as they were" \
    [ "$(tree_sum "$tmp/warned")" = "$(cat "$tmp/warned.before")" ]
# One that says more than plot reads back (a megabyte): no figure can be
# told apart, so plot says so and exits 1, the figures drawn.
printf '#!/bin/sh\n"%s" "$@"; rc=$?\n[ "$1" = --version ] || head -c 2000000 /dev/zero | tr "\\0" x >&2\nexit $rc\n' \
    "$gnuplot" > "$tmp/floods"
chmod +x "$tmp/floods"
mkdir -p "$tmp/flooded"
cp -R results/batch-size "$tmp/flooded/"
"$bn" plot "$tmp/flooded" --gnuplot "$tmp/floods" >/dev/null 2>"$tmp/flooded.err"
check "a gnuplot that says too much to read back: exit 1" [ $? -eq 1 ]
says_once() { [ "$(wc -l < "$1")" -eq 1 ] && grep -q "$2" "$1"; }
check "... which plot says, in one line" \
    says_once "$tmp/flooded.err" "^bnstudy plot: batch-size: what gnuplot said cannot be read: "
check "... the figures drawn" is_png "$tmp/flooded/figures/batch-size/stats-err.png"
# An experiment that supports no figure beside one that does: no gnuplot
# is started for it.
mkdir -p "$tmp/mixed"
cp -R results/batch-size "$tmp/bare/out/one" "$tmp/mixed/"
: > "$tmp/drawn.log"
check "an experiment with no figure beside one with figures: exit 0" \
    plots 0 "$tmp/mixed-plot" "$tmp/mixed" --gnuplot "$tmp/counts"
check "... one gnuplot started, for the one with figures" [ "$(wc -l < "$tmp/drawn.log")" -eq 1 ]

# ---- one gnuplot per experiment ----

# batch-size's first two figures, stats-err and train-eval, are both
# curves.gp's: a copy of the scripts (--scripts) whose curves.gp opens
# with a probe's lines shows what one figure leaves the next in the one
# gnuplot that draws them.
mkdir -p "$tmp/one"
cp -R results/batch-size "$tmp/one/"
"$bn" plot "$tmp/one" >/dev/null 2>&1
tree_sum "$tmp/one" > "$tmp/one.before"
probe() { # probe DIR LINES: scripts/ copied to DIR, LINES first in curves.gp
    rm -rf "$1" && cp -R scripts "$1" &&
        { printf '%s\n' "$2"; cat scripts/curves.gp; } > "$1/curves.gp"
}
probe "$tmp/fails-second" 'if (name eq "train-eval") { x = no_such_function_probe(1) }'
"$bn" plot "$tmp/one" --scripts "$tmp/fails-second" >/dev/null 2>"$tmp/one-fails.err"
check "a script that fails on an experiment's second figure: exit 2" [ $? -eq 2 ]
check "... the message names that figure" \
    grep -qx "bnstudy plot: batch-size/train-eval: gnuplot failed:" "$tmp/one-fails.err"
check "... gnuplot's own message follows it" grep -q "no_such_function_probe" "$tmp/one-fails.err"
check "... no other figure named" [ "$(grep -c "^bnstudy plot:" "$tmp/one-fails.err")" -eq 1 ]
check "... the experiment's figures as they were, byte for byte" \
    [ "$(tree_sum "$tmp/one")" = "$(cat "$tmp/one.before")" ]
check "... and nothing left beside them" [ "$(ls -A "$tmp/one/figures")" = batch-size ]
probe "$tmp/warns-second" 'if (name eq "train-eval") { print "probe: a warning of train-eval" }'
"$bn" plot "$tmp/one" --scripts "$tmp/warns-second" >/dev/null 2>"$tmp/one-warns.err"
check "a warning in an experiment's second figure: exit 1" [ $? -eq 1 ]
check "... told of that figure, and of no other" \
    [ "$(cat "$tmp/one-warns.err")" = "bnstudy plot: batch-size/train-eval: gnuplot warned:
probe: a warning of train-eval" ]
probe "$tmp/leaks" 'if (exists("leak_probe")) { print "leak_probe is still set" }
leak_probe = 1'
check "a variable set by one figure is gone in the next: exit 0, nothing said" \
    plots 0 "$tmp/one-leaks" "$tmp/one" --scripts "$tmp/leaks"

# The stamp hashes the scripts the experiment's figures run (each one's
# own and what it loads), no other.
rm -rf "$tmp/stamp-scripts" && cp -R scripts "$tmp/stamp-scripts"
"$bn" plot "$tmp/one" --scripts "$tmp/stamp-scripts" >/dev/null 2>&1
stamp_of() { cut -c1-64 "$tmp/one/figures/batch-size/inputs.sha256"; }
stamp0=$(stamp_of)
echo "# an edit" >> "$tmp/stamp-scripts/scaling.gp"
echo "# an edit" >> "$tmp/stamp-scripts/shuffles.gp"
: > "$tmp/drawn.log"
check "scripts no figure of an experiment runs edited: exit 0" \
    plots 0 "$tmp/one-unused" "$tmp/one" --scripts "$tmp/stamp-scripts" --gnuplot "$tmp/counts"
check "... its figures not drawn" [ ! -s "$tmp/drawn.log" ]
check "... its stamp as it was" [ "$(stamp_of)" = "$stamp0" ]
echo "# an edit" >> "$tmp/stamp-scripts/style.gp"
check "style.gp, which every figure loads, edited: exit 0" \
    plots 0 "$tmp/one-style" "$tmp/one" --scripts "$tmp/stamp-scripts" --gnuplot "$tmp/counts"
check "... the figures drawn again" [ -s "$tmp/drawn.log" ]
check "... and stamped anew" [ "$(stamp_of)" != "$stamp0" ]
# A script loaded in a block ({ load ... }) is one the figures run; a
# name in a comment is none.
sed -i 's|^load scriptdir \. "style\.gp"$|& # once "no-such.gp"\nif (1) { load scriptdir . "extra.gp" }|' \
    "$tmp/stamp-scripts/curves.gp"
echo 'set xlabel "x"' > "$tmp/stamp-scripts/extra.gp"
check "a quoted NAME.gp in a load line's comment: exit 0" \
    plots 0 "$tmp/one-comment" "$tmp/one" --scripts "$tmp/stamp-scripts"
stamp1=$(stamp_of)
echo '# an edit' >> "$tmp/stamp-scripts/extra.gp"
: > "$tmp/drawn.log"
check "a script loaded in an if block edited: exit 0" \
    plots 0 "$tmp/one-block" "$tmp/one" --scripts "$tmp/stamp-scripts" --gnuplot "$tmp/counts"
check "... the figures drawn again" [ -s "$tmp/drawn.log" ]
check "... and stamped anew" [ "$(stamp_of)" != "$stamp1" ]

# gnuplot reads its commands a line at a time: a line break in a path
# must not cut one.
nl="$tmp/line
break"
mkdir -p "$nl"
cp -R results/batch-size "$nl/"
check "a results directory whose name holds a line break: exit 0, nothing said" \
    plots 0 "$tmp/nl" "$nl"
check "... its figures drawn" is_png "$nl/figures/batch-size/stats-err.png"

check "make figures RESULTS=DIR draws them too" \
    make --no-print-directory -s figures RESULTS="$tmp/nognuplot" >/dev/null 2>&1
check "... into DIR/figures/<experiment>/" is_png "$tmp/nognuplot/figures/batch-size/stats-err.png"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
