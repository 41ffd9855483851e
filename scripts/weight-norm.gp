# Figure weight-norm: the gradient claims. The norm of the weights right
# before a batch norm after every epoch, over its initial value, a series
# per configuration (weight decay, most often): with batch norm after
# them the loss's gradient has no radial part but eps's, so plain SGD only
# lengthens them and weight decay's radial step pulls them back. Under it
# the radial part of their gradient so far (the largest |w.g| / (|w||g|)),
# on a log axis. bnstudy plot (src/figure/plot_norms.c) gives what to draw
# and every text:
#   ns, nx the series and the epochs; ep the epochs; wn, rd the values,
#   series by series (wn[(s - 1) nx + e]); sl the key entries; rlo, rhi
#   radial's scale; title, xlabel, st1, st2 the panels' titles.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
canvas_height = 1100
load scriptdir . "style.gp"

panel_font = sprintf("%s,%d", font_name, font_size - 5)
set xrange [0.5 : ep[nx] + 0.5]
set format x tic_format
set key off

# The points as a datablock, a block per series: epoch, w_norm_ratio,
# radial (0 drawn as nothing on the log axis), under a header row as
# style.gp's columnheaders expect.
set print $points
do for [s = 1:ns] {
    print "epoch\tw_norm_ratio\tradial"
    do for [e = 1:nx] {
        r = rd[(s - 1) * nx + e]
        print sprintf("%.17g\t%.17g\t%.17g", ep[e], wn[(s - 1) * nx + e], r > 0 ? r : NaN)
    }
    print ""
    print ""
}
set print
look = "with linespoints lw series_width('index') lc rgb series_colour('index', '', s, ns) pt series_pt(s) ps 0.7"
cmd1 = "plot for [s = 1:ns] $points index (s - 1) using 1:2 " . look . " notitle"
cmd2 = "plot for [s = 1:ns] $points index (s - 1) using 1:3 " . look . " notitle"

do for [out = 1:2] {
    if (out == 1) { eval png_terminal; eval png_output } else { eval svg_terminal; eval svg_output }
    set multiplot
    eval canvas_title
    set border 3; set tics nomirror out scale 0.6; set grid xtics ytics
    set xrange [0.5 : ep[nx] + 0.5]
    set lmargin at screen 0.15; set rmargin at screen 0.96
    # The norms on top, radial under them, the key in a strip at the foot.
    set tmargin at screen 0.84; set bmargin at screen 0.56
    unset logscale y
    set autoscale y
    set ytics autofreq
    set format y tic_format
    set ylabel "|w| over its initial |w|"
    set title st1 font panel_font
    eval cmd1
    eval save_texts(1)
    unset label 100
    set tmargin at screen 0.42; set bmargin at screen 0.2
    set logscale y
    set yrange [rlo / 3 : rhi * 3]
    eval log_ytics(rlo, rhi)
    set ylabel "|w·g| / (|w| |g|)"
    set title st2 font panel_font
    set label 101 xlabel at screen 0.5, screen 0.13 center
    eval cmd2
    eval save_texts(2)
    unset label 101
    if (ns > 1) {
        unset title; unset ylabel; unset logscale
        set border 0; unset tics; unset grid
        set xrange [0 : 1]; set yrange [0 : 1]
        set tmargin at screen 0.09; set bmargin at screen 0.02
        set key inside center center horizontal samplen 2 width 1
        plot for [s = 1:ns] NaN with linespoints lw series_width('index') lc rgb series_colour('index', '', s, ns) pt series_pt(s) ps 0.7 title sl[s]
        set border 3; set tics nomirror out scale 0.6; set grid xtics ytics
    }
    unset multiplot
}
unset output
