# Figure init-weight: the closed form behind the batch-size figure. After T
# EMA updates with new-value weight p, the running statistics' initial
# values (mean 0, variance 1) still carry weight (1 - p)^T. Each p of the
# experiment's ema runs is a curve, the published one thick and black, and
# the runs' measured init_weight is drawn on them as a check that the runs
# and the formula agree; the batch size that gives each T is marked along
# the top when one does. bnstudy plot (src/figure/plot_initweight.c) gives
# what to draw and every text:
#   f the file (the ema rows are drawn); Tmin, Tmax, Ttics the update
#   counts; x2tics the batch sizes over them; pv, pl, prole the weights,
#   their key entries and colour roles; p_at, w_at, wlabel the weight left
#   after the fewest updates; title, xlabel.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

np = |pv|
is_ema(d) = strcol("estimator") eq "ema"

# T = 1 is the first update; the axis starts just before it so the curves
# can be read there, and each T of the runs gets a tic.
set logscale x 2
set xrange [0.85 : Tmax * 1.25]
eval "set xtics (1, " . Ttics . ")"
set format x tic_format
set mxtics 1
if (x2tics ne "") {
    set logscale x2 2
    set x2range [0.85 : Tmax * 1.25]
    eval "set x2tics (" . x2tics . ") out nomirror"
    set x2label "batch size B that gives T updates"
    set grid x2tics ytics noxtics
}
# Headroom above 1 holds the annotation, the one place no curve passes.
set yrange [0 : 1.3]
set ytics 0, 0.2, 1
set xlabel xlabel
set ylabel "weight the initial values still carry, (1 − p)^T"
eval canvas_title

# The key gets a column of its own, as many weights do not fit among the
# curves.
set rmargin at screen 0.60
set key at screen 0.615, graph 0.85 left top title "new-value weight p" left samplen 1.5

set label 1 wlabel at first Tmin * 0.6, first 1.18 left front
set arrow 1 from first Tmin, first 1.13 to first Tmin, first w_at + 0.03 \
    lw 2 lc rgb c_black size screen 0.012, 25 front

cmd = "plot for [i = 1:np] (x >= 1 ? (1 - pv[i]) ** x : NaN) with lines " . \
      "lw series_width(prole[i]) lc rgb series_colour(prole[i], '', i, np) title pl[i]"
# The published curve is drawn a second time, untitled, so no other curve
# crosses over it.
do for [i = 1:np] {
    if (prole[i] eq "published") {
        cmd = cmd . sprintf(", (x >= 1 ? (1 - pv[%d]) ** x : NaN) with lines lw published_lw lc rgb published_colour notitle", i)
    }
}
cmd = cmd . ", f using 'updates':(is_ema(0) ? column('init_weight') : NaN) with points pt 7 ps 1 lc rgb c_vermilion title 'measured, the runs'"

eval png_terminal
eval png_output
eval cmd
eval svg_terminal
eval svg_output
eval cmd
eval save_texts(1)
unset output
