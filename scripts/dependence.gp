# Figure batch-dependence: how far a row's training-mode output moves with
# the rows it is batched with, against the batch size: its largest range
# over the batches it was in (batch_dependence), the mean over rows of a
# row's largest (batch_dependence_mean), and evaluation mode's
# (batch_dependence_eval), which is 0 wherever nothing but the buffers
# normalises a row. For a classifier, under it, the held-out accuracy in
# training mode on random batches and on batches of one class, and in
# evaluation mode. bnstudy plot (src/figure/plot_dependence.c) gives what
# to draw and every text:
#   nx the batch sizes; xv, xlog the x axis; w, m, e the three ranges;
#   clf 1 for the accuracies at, ac, ae; grp 1 for ag, on batches of one
#   group; title, xlabel, st1, st2 the panels' titles.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
canvas_height = clf ? 1100 : 800
load scriptdir . "style.gp"

panel_font = sprintf("%s,%d", font_name, font_size - 5)
set key top right

# The points as datablocks: B and the panel's columns, under a header row
# as style.gp's columnheaders expect.
set print $ranges
print "B\tbatch_dependence\tbatch_dependence_mean\tbatch_dependence_eval"
do for [i = 1:nx] { print sprintf("%.17g\t%.17g\t%.17g\t%.17g", xv[i], w[i], m[i], e[i]) }
set print
if (clf) {
    set print $acc
    if (grp) {
        print "B\tacc_train_mode\tacc_train_by_class\tacc_eval_mode\tacc_train_by_group"
        do for [i = 1:nx] { print sprintf("%.17g\t%.17g\t%.17g\t%.17g\t%.17g", xv[i], at[i], ac[i], ae[i], ag[i]) }
    } else {
        print "B\tacc_train_mode\tacc_train_by_class\tacc_eval_mode"
        do for [i = 1:nx] { print sprintf("%.17g\t%.17g\t%.17g\t%.17g", xv[i], at[i], ac[i], ae[i]) }
    }
    set print
}
cmd1 = "plot $ranges using 1:2 with linespoints lw 3 lc rgb c_vermilion pt 7 ps 0.7 title 'largest (training mode)', " . \
       "$ranges using 1:3 with linespoints lw 3 lc rgb c_blue pt 5 ps 0.7 title 'mean over rows (training mode)', " . \
       "$ranges using 1:4 with linespoints lw 3 lc rgb c_black pt 9 ps 0.7 title 'largest (evaluation mode)'"
cmd2 = "plot $acc using 1:2 with linespoints lw 3 dt 2 lc rgb c_blue pt 7 ps 0.7 title 'training mode, random batches', " . \
       "$acc using 1:3 with linespoints lw 3 dt 2 lc rgb c_vermilion pt 5 ps 0.7 title 'training mode, one-class batches', " . \
       "$acc using 1:4 with linespoints lw 3 lc rgb c_black pt 9 ps 0.7 title 'evaluation mode'"
if (clf && grp) {
    cmd2 = cmd2 . ", $acc using 1:5 with linespoints lw 3 dt 2 lc rgb c_green pt 13 ps 0.7 title 'training mode, one-group batches'"
}

do for [out = 1:2] {
    if (out == 1) { eval png_terminal; eval png_output } else { eval svg_terminal; eval svg_output }
    set multiplot
    eval canvas_title
    set border 3; set tics nomirror out scale 0.6; set grid xtics ytics
    eval x_axis
    set lmargin at screen 0.12; set rmargin at screen 0.96
    top = clf ? 0.84 : 0.8
    set tmargin at screen top; set bmargin at screen (clf ? 0.56 : 0.2)
    # Headroom above the highest point, so the key in the top right
    # corner covers no line.
    # The tics too: the accuracy panel's stop at 1, and the SVG's pass
    # comes after the PNG's.
    set yrange [0 : *]; set offsets 0, 0, graph 0.55, 0; set ytics autofreq
    set ylabel "range of an output"
    set title st1 font panel_font
    if (!clf) { set label 101 xlabel at screen 0.5, screen 0.1 center }
    eval cmd1
    eval save_texts(1)
    unset label 100
    unset label 101
    if (clf) {
        set tmargin at screen 0.42; set bmargin at screen 0.14
        # Accuracies reach 1, so the key gets its own band above them:
        # the axis runs past 1 with its tics stopping there.
        set offsets 0, 0, 0, 0
        set yrange [0 : (grp ? 1.65 : 1.45)]; set ytics 0, 0.2, 1
        set ylabel "held-out accuracy"
        set title st2 font panel_font
        set label 101 xlabel at screen 0.5, screen 0.06 center
        eval cmd2
        eval save_texts(2)
        unset label 101
    }
    unset multiplot
}
unset output
