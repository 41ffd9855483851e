# Figure estimators: what fixes the running statistics. The error of the
# statistics eval mode uses (stats_err) against batch size for each
# estimator, once for shuffled batches and once for batches sorted by the
# first feature, side by side on one y axis. Under shuffled order only ema
# gets worse as the batch grows: debiasing it, or weighing every update
# equally, removes the penalty of having few updates. Under sorted order a
# batch's variance misses the spread between batches, so every estimator
# that averages batch statistics stays far from the truth, and only
# precise, which pools the rows themselves, reaches it. precise is exact
# (0 up to rounding), which a log axis cannot show, so it is drawn on a
# floor below the axis's last decade, labelled 0.
# Reads results/estimators/summary.tsv and, for the published p, the
# batch-size experiment's; writes figures/estimators.{png,svg}.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

f = results . "/estimators/summary.tsv"
panels = "shuffled sorted"

stats results . "/batch-size/summary.tsv" using "new_weight" nooutput
published_p = STATS_min

# Below this a score is rounding noise on an exact answer: the scores are
# sums of squares of order 1 computed in double precision.
exact_tol = 1e-12
shown(o) = seen(panels, o)

Bmin = 1e300; Bmax = 0; Blist = ""; elist = ""; ymin = 1e300; ymax = 0
exact_max = 0; inexact = ""; p_ema = NaN
stats f using (o = strcol("order"), B = column("batch_size"), e = strcol("estimator"), y = column("stats_err"), \
               elist = add_unique(elist, e), \
               shown(o) ? (Blist = add_unique(Blist, sprintf("%d", B)), \
                           Bmin = B < Bmin ? B : Bmin, Bmax = B > Bmax ? B : Bmax, \
                           y < exact_tol ? (exact_max = y > exact_max ? y : exact_max) \
                                         : (ymin = y < ymin ? y : ymin, ymax = y > ymax ? y : ymax, \
                                            inexact = add_unique(inexact, o . ":" . e))) : 0, \
               e eq "ema" ? p_ema = column("new_weight") : 0, 0) nooutput
ne = words(elist)
# An estimator is labelled exact only if every one of its points is, in
# every panel.
exact_in(o, e) = !seen(inexact, o . ":" . e)
is_exact(e) = exact_in(word(panels, 1), e) && exact_in(word(panels, 2), e)

# Each panel's subtitle states its point only when the data bear it out:
# which estimators end worse at the largest B than at the smallest, and
# which are exact.
np = words(panels)
array at_lo[np * ne]; array at_hi[np * ne]
pe(o, e) = (word_pos(panels, o, 1) - 1) * ne + word_pos(elist, e, 1)
stats f using (o = strcol("order"), shown(o) ? \
               (column("batch_size") == Bmin ? at_lo[pe(o, strcol("estimator"))] = column("stats_err") : 0, \
                column("batch_size") == Bmax ? at_hi[pe(o, strcol("estimator"))] = column("stats_err") : 0) : 0, 0) nooutput
worse_in(o, i) = i > ne ? "" : (at_hi[pe(o, word(elist, i))] > at_lo[pe(o, word(elist, i))] ? word(elist, i) . " " : "") . worse_in(o, i + 1)
exact_list(o, i) = i > ne ? "" : (exact_in(o, word(elist, i)) ? word(elist, i) . " " : "") . exact_list(o, i + 1)
only(list) = words(list) == 1 ? word(list, 1) : ""

# Half a decade under the decade that holds the smallest real value, so
# the floor sits apart from the data and below the lowest numbered tic.
floor_y = 10 ** (floor(log10(ymin)) - 0.5)
plot_y(y) = y < exact_tol ? floor_y : y

est_colour(e) = e eq "ema" && same(p_ema, published_p) ? published_colour : \
                e eq "ema-debiased" ? c_vermilion : e eq "cumulative" ? c_blue : \
                e eq "precise" ? c_green : word(c_orange . " " . c_purple . " " . c_sky, 1 + word_pos(elist, e, 1) % 3)
est_width(e) = e eq "ema" && same(p_ema, published_p) ? published_lw : 3
est_pt(e) = e eq "ema" ? 7 : e eq "ema-debiased" ? 5 : e eq "cumulative" ? 9 : e eq "precise" ? 11 : 13
est_title(e) = e eq "ema" ? (same(p_ema, published_p) ? sprintf("ema, p = %g (published)", p_ema) : "ema") : \
               is_exact(e) ? sprintf("%s: exact, drawn at 0", e) : e

eval batch_axis(Blist, Bmin, Bmax)
set logscale y
set yrange [floor_y / 1.6 : ymax * 1.6]
set grid xtics ytics
set xlabel "batch size B (log₂ scale)"

# Two panels share the y axis, so their margins are fixed on the canvas
# and the right one carries no y labels.
left_l = 0.13; left_r = 0.535; right_l = 0.575; right_r = 0.985
set tmargin at screen 0.78
set bmargin at screen 0.15

# A break on the y axis between the floor and the log scale, so the 0 is
# not read as a value of the log axis.
brk_y = floor_y * 10 ** 0.25
set arrow 10 from graph -0.018, first brk_y / 1.12 to graph 0.018, first brk_y nohead lw 1.5 lc rgb c_black front
set arrow 11 from graph -0.018, first brk_y to graph 0.018, first brk_y * 1.12 nohead lw 1.5 lc rgb c_black front

# The rounding noise precise leaves is quoted, not hidden.
if (exact_max > 0) {
    exact_note = sprintf("all < %.0e: 0 up to rounding", 10 ** ceil(log10(exact_max)))
} else {
    exact_note = "0 at every B"
}

shuffled_point = only(worse_in("shuffled", 1)) ne "" ? sprintf("only %s gets worse as B grows", only(worse_in("shuffled", 1))) : "stats\\_err by estimator"
sorted_point = only(exact_list("sorted", 1)) ne "" ? sprintf("only %s reaches the truth", only(exact_list("sorted", 1))) : "stats\\_err by estimator"
panel_title(o, point) = sprintf("{/:Bold %s}\n%s", o eq "shuffled" ? "shuffled batches" : (o eq "sorted" ? "batches sorted by f0" : o), point)
panel_plot(o) = "plot for [i = 1:ne] f using \"batch_size\":(strcol(\"order\") eq \"" . o . "\" && strcol(\"estimator\") eq word(elist, i) ? plot_y(column(\"stats_err\")) : NaN) with linespoints lw est_width(word(elist, i)) lc rgb est_colour(word(elist, i)) pt est_pt(word(elist, i)) ps 0.9 title est_title(word(elist, i))"

# multiplot cannot be replotted, so each output draws both panels afresh.
do for [out = 1:2] {
    if (out == 1) { eval png_terminal; eval png_output("estimators") } else { eval svg_terminal; eval svg_output("estimators") }
    set multiplot
    set lmargin at screen left_l; set rmargin at screen left_r
    set label 100 "Which running statistics fix large batches, and which survive sorting?" at screen 0.5, screen 0.95 center font sprintf("%s,%d", font_name, font_size + 4)
    set title panel_title(word(panels, 1), shuffled_point)
    set ylabel "running statistics vs truth, stats\\_err (log scale)"
    eval log_ytics
    set ytics add ("0" floor_y)
    set key off
    set label 101 exact_note at graph 0.07, first floor_y * 1.7 left font sprintf("%s,%d", font_name, font_size - 4) tc rgb c_green
    eval panel_plot(word(panels, 1))
    unset label 100
    unset label 101
    set lmargin at screen right_l; set rmargin at screen right_r
    set title panel_title(word(panels, 2), sorted_point)
    unset ylabel
    eval log_ytics
    eval no_ytic_labels
    set ytics add ("" floor_y)
    set key at graph 0.04, graph 0.62 left top samplen 1.5
    eval panel_plot(word(panels, 2))
    unset multiplot
}
unset output
