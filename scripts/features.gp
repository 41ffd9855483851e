# Figure features: per feature, the population's true variance beside the
# running variance evaluation would use, at the smallest and the largest
# batch size of one configuration (features.tsv). With many updates the
# running variance tracks the truth; with two it has barely left its
# initial value 1, drawn dashed, so the feature whose variance is farthest
# from 1 is left worst, and that feature is marked with its error. When
# the features' variances span orders of magnitude (real data), bars of
# variance would show only the largest, so the figure draws instead each
# running variance divided by its truth, on a log axis where 1 is exact.
# bnstudy plot (src/figure/plot_features.c) gives what to draw and every
# text:
#   f the file; sel(d) the configuration's rows; fn, fl the features
#   (names, and as labels); Blo, Bhi, nb the batch sizes; klo, khi their
#   key entries; ratio; ylo, yhi the range; worst, worst_true, worst_run,
#   worst_text the worst feature; title, xlabel.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

fx(s, i) = i > nf ? 0 : (fn[i] eq s ? i : fx(s, i + 1))
at_b(b) = sel(0) && strcol("batch_size") eq b
do for [i = 1:nf] { set xtics add (fl[i] i) }
set xtics scale 0
# Long or many names are turned, in a smaller font, so they do not collide.
longest = 0
do for [i = 1:nf] { longest = strlen(fn[i]) > longest ? strlen(fn[i]) : longest }
if (nf > 12 || longest * nf > 60) {
    set xtics rotate by 50 right font small_font offset 0.5, 0
    set bmargin at screen 0.1 + 0.0105 * (longest < 30 ? longest : 30)
    set rmargin at screen 0.97
    # gnuplot puts the axis label under unturned tic labels, off the canvas
    # here: it goes at the bottom instead.
    set label 102 xlabel at screen 0.5, screen 0.03 center
    xlabel = ""
}
set xrange [0.4 : nf + 0.6]
set grid noxtics ytics
set xlabel xlabel
eval canvas_title
set key top left samplen 1.5

if (ratio) {
    # Running / true per feature: a point for each batch size, 1 exact.
    set logscale y
    lo = ylo < 1 ? ylo : 1
    hi = yhi > 1 ? yhi : 1
    # Three decades of headroom hold the key and the note on the worst.
    set yrange [lo / 3 : hi * 1000]
    eval log_ytics(lo, hi)
    set ylabel "running variance ÷ true variance (log scale)"
    off = nb > 1 ? 0.15 : 0
    set label 1 worst_text at graph 0.98, graph 0.96 right front
    cmd = "plot f using (fx(strcol('feature'), 1) - off):(at_b(Blo) ? column('running_var') / column('true_var') : NaN) " . \
          "with points pt 7 ps 1.2 lc rgb c_blue title klo"
    if (nb > 1) {
        cmd = cmd . ", f using (fx(strcol('feature'), 1) + off):(at_b(Bhi) ? column('running_var') / column('true_var') : NaN) " . \
              "with points pt 5 ps 1.2 lc rgb c_vermilion title khi"
    }
    cmd = cmd . ", 1 with lines dt 2 lw 3 lc rgb c_black title 'the truth, running = true'"
} else {
    # Each feature's bars are centred on its tic: three, or two when the
    # experiment ran one batch size.
    bw = nb > 1 ? 0.26 : 0.36
    c0 = nb > 1 ? -bw : -bw / 2
    set boxwidth bw absolute
    set style fill solid 1.0 border rgb "white"
    set yrange [0 : yhi * 1.12]
    set ylabel "variance"
    # The worst feature's error as a double arrow from the running value to
    # the truth, just right of its group, its reading beside it on the side
    # with more features (their bars are short next to the worst).
    arrow_x = worst + c0 + (nb + 0.6) * bw
    set arrow 1 from arrow_x, worst_run to arrow_x, worst_true heads size 0.12, 25 lw 3 lc rgb c_black front
    if (worst > nf / 2.0) {
        set label 1 worst_text at worst - 0.6, (worst_run + worst_true) / 2 right front
    } else {
        set label 1 worst_text at arrow_x + 0.15, (worst_run + worst_true) / 2 left front
    }
    # The reference line is the constant 1 because docs/definitions.md
    # fixes the initial running variance at 1.
    cmd = "plot f using (fx(strcol('feature'), 1) + c0):(at_b(Blo) ? column('true_var') : NaN) " . \
          "with boxes lc rgb c_grey title 'true variance of the population', " . \
          "f using (fx(strcol('feature'), 1) + c0 + bw):(at_b(Blo) ? column('running_var') : NaN) " . \
          "with boxes lc rgb c_blue title klo"
    if (nb > 1) {
        cmd = cmd . ", f using (fx(strcol('feature'), 1) + c0 + 2 * bw):(at_b(Bhi) ? column('running_var') : NaN) " . \
              "with boxes lc rgb c_vermilion title khi"
    }
    cmd = cmd . ", 1 with lines dt 2 lw 3 lc rgb c_black title 'initial running variance, 1'"
}

eval png_terminal
eval png_output
eval cmd
eval svg_terminal
eval svg_output
eval cmd
eval save_texts(1)
unset output
