# Figures stats-err and train-eval: one or two scores of summary.tsv
# against a swept setting (the batch size, else the epochs, the pooled
# batches, ...), a series per value of the other settings that vary and a
# panel per value of one of them (the order) when two or more vary. It is
# the published batch-size, momentum, ordering and estimators figures, and
# the real-data one, for whichever experiment has the axes. Which columns,
# which series, which panels, and every title, label and annotation come
# from bnstudy plot (src/figure/plot_curves.c), worded from the numbers:
#   f the file; xcol, xv, xlog, xlabel, x2tics the x axis;
#   sc, yl, ys, ylog, ylo, yhi, yzero a row of panels per score (y label,
#     short label, log scale, the smallest value that is not 0 and the
#     largest, whether some value is 0 up to rounding);
#   np, pcol, pv, pkey(d) the panels; ns, skey(d), sv, sl, srole, sname
#     the series (their key, key entry, colour role and name);
#   comp, comptitle, mtitle one batch's mean error beside a lone series;
#   best, bestlabel rings on the lowest series at each x; base, lab,
#     labnote each point's ratio to a baseline series;
#   title, note, st the canvas title, a note, the panels' titles.
# A score that is 0 up to rounding cannot go on a log axis: it is drawn on
# a floor half a decade under the smallest other value, labelled 0.

npan = nsc * np
cols = npan <= 3 ? npan : (nsc == 2 ? np : (npan == 4 ? 2 : 3))
rows = (npan + cols - 1) / cols
canvas_height = rows > 1 ? 1100 : 800

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

exact_tol = 1e-12
panel_font = sprintf("%s,%d", font_name, font_size - 5)
# A finding wider than its panel ("no series is worse at B = 128 than at
# B = 8" over a third of the canvas) runs into its neighbour's or off the
# canvas: it breaks before its first " at " (the panel's name, its first
# line, is kept whole). The finding with an " at " is the last line; its
# width is taken as 10 px a byte at panel_font, which overstates it (a
# byte is at most a character).
last_line(s) = (wk = strstrt(s, "\n"), wk == 0 ? s : last_line(s[wk + 1:]))
wrap_rest(r) = (wi = strstrt(r, " at "), wi == 0 ? r : r[1:wi - 1] . "\n" . r[wi + 1:])
panel_title(s) = (wn = strstrt(s, "\n"), wn == 0 || strlen(last_line(s)) * 10 <= pw * 1200 ? s : s[1:wn] . wrap_rest(s[wn + 1:]))
nx = |xv|

# Each score's floor and its value on the plot.
array floor_y[nsc]
do for [k = 1:nsc] { floor_y[k] = yzero[k] ? 10 ** (floor(log10(ylo[k])) - 0.5) : NaN }
yv(v, k) = v < exact_tol && yzero[k] ? floor_y[k] : v

panel_of(v, i) = i > np ? 0 : (pv[i] eq v ? i : panel_of(v, i + 1))
sel(i, p) = skey(0) eq sv[i] && pkey(0) eq pv[p]
line_colour(i) = comp ne "" ? c_vermilion : series_colour(srole[i], sname[i], i, ns)
key_title(i) = comp ne "" ? mtitle : sl[i]
# the label of point (score k, panel p, series i, x index j)
lab_at(k, p, i, j) = lab[(((k - 1) * np + (p - 1)) * ns + (i - 1)) * nx + j]

# The lowest value at each panel and x, for the rings.
array lowest[nsc * np * nx]
if (best) {
    do for [k = 1:nsc] {
        do for [j = 1:np * nx] { lowest[(k - 1) * np * nx + j] = 1e300 }
        stats f using (p = panel_of(pkey(0), 1), j = x_index(column(xcol), 1), \
                       c = (k - 1) * np * nx + (p - 1) * nx + j, v = column(sc[k]), \
                       p > 0 && j > 0 && v < lowest[c] ? lowest[c] = v : 0, 0) nooutput
    }
}
# == is safe: both sides are the same column parsed the same way.
is_lowest(k, v) = v == lowest[(k - 1) * np * nx + (panel_of(pkey(0), 1) - 1) * nx + x_index(column(xcol), 1)]

axes = "eval x_axis; if (x2tics ne '') { eval 'set x2tics (' . x2tics . ') out nomirror'; if (xlog) { set logscale x2 xlog } else { unset logscale x2 }; set x2range [x_lo(xv[1], xv[nx]) : x_hi(xv[1], xv[nx])]; set x2label 'EMA updates T' }"

# Where panel j of the grid (0-based, a row per score when there are two)
# sits on the canvas: the title on top, the shared x label and a strip
# for the key below. Sizes in pixels, as the canvas has two heights.
px(n) = n / (1.0 * canvas_height)
# The key's strip holds as many rows as its entries need: four to a row,
# fewer when they are long.
longest = 0
do for [i = 1:ns] { longest = strlen(sl[i]) > longest ? strlen(sl[i]) : longest }
key_cols = longest > 30 ? 2 : (longest > 18 ? 3 : 4)
key_rows = (ns + best + key_cols - 1) / key_cols
key_h = px(12 + 32 * key_rows)
left0 = 0.125; right0 = 0.985; top0 = 1 - px(175); bottom0 = key_h + px(110)
hgap = 0.085; vgap = px(165)
pw = (right0 - left0 - (cols - 1) * hgap) / cols
ph = (top0 - bottom0 - (rows - 1) * vgap) / rows
panel_x(j) = left0 + (j % cols) * (pw + hgap)
panel_y(j) = top0 - int(j / cols) * (ph + vgap)

do for [out = 1:2] {
    if (out == 1) { eval png_terminal; eval png_output } else { eval svg_terminal; eval svg_output }
    if (npan > 1) { set multiplot }
    eval axes
    eval canvas_title
    do for [k = 1:nsc] {
        do for [p = 1:np] {
            j = (k - 1) * np + (p - 1)
            keyhere = j == 0
            if (ylog[k]) {
                set logscale y
                lo = yzero[k] ? floor_y[k] : ylo[k]
                set yrange [lo / 1.6 : yhi[k] * (npan > 1 ? 2.5 : 4)]
                eval log_ytics(ylo[k], yhi[k])
                if (yzero[k]) { set ytics add ("0" floor_y[k]) }
            } else {
                unset logscale y
                set yrange [0 : yhi[k] * (npan > 1 ? 1.2 : 1.3)]
                set ytics autofreq
                set format y tic_format
            }
            if (npan > 1) {
                set lmargin at screen panel_x(j); set rmargin at screen panel_x(j) + pw
                set tmargin at screen panel_y(j); set bmargin at screen panel_y(j) - ph
                set title panel_title(st[j + 1]) font panel_font
                if (j % cols == 0) { set ylabel (rows > 1 ? ys[k] : yl[k]) } else { unset ylabel }
                unset xlabel
                if (j == 0) {
                    set label 101 xlabel at screen 0.5, screen key_h + px(30) center
                } else {
                    unset label 100; unset label 101
                }
                set key off
            } else {
                set xlabel xlabel
                set ylabel yl[k]
                if (ns > 5) {
                    # Many entries do not fit among the curves: the key gets
                    # a column of its own.
                    set rmargin at screen 0.60
                    set key at screen 0.615, graph 0.95 left top samplen 1.5
                } else {
                    set key top left samplen 2
                }
            }
            if (yzero[k]) {
                # A break on the y axis between the floor and the log scale,
                # so the 0 is not read as a value of the log axis.
                brk = floor_y[k] * 10 ** 0.25
                set arrow 10 from graph -0.018, first brk / 1.12 to graph 0.018, first brk nohead lw 1.5 lc rgb c_black front
                set arrow 11 from graph -0.018, first brk to graph 0.018, first brk * 1.12 nohead lw 1.5 lc rgb c_black front
            } else {
                unset arrow 10; unset arrow 11
            }
            if (keyhere && note ne "") {
                set label 1 note at graph 0.97, graph 0.3 right tc rgb c_vermilion
            } else {
                unset label 1
            }
            unset label 2
            if (keyhere && labnote ne "") {
                if (npan == 1) {
                    set label 2 labnote at graph 0.98, graph 0.04 right tc rgb c_vermilion font small_font
                } else {
                    set label 2 labnote at screen 0.5, screen 1 - px(72) center tc rgb c_vermilion font small_font
                }
            }
            cmd = "plot for [i = 1:ns] f using xcol:(sel(i, p) ? yv(column(sc[k]), k) : NaN) " . \
                  "with linespoints lw series_width(srole[i]) lc rgb line_colour(i) pt series_pt(i) ps 0.9 " . \
                  "title (keyhere ? key_title(i) : '')"
            if (comp ne "") {
                cmd = cmd . ", f using xcol:comp with linespoints lw 3 lc rgb c_blue pt 7 ps 0.9 title comptitle"
            }
            if (best) {
                cmd = cmd . ", f using xcol:(pkey(0) eq pv[p] && is_lowest(k, column(sc[k])) ? yv(column(sc[k]), k) : NaN) " . \
                      "with points pt 6 ps 1.6 lw 2.5 lc rgb c_black title (keyhere ? bestlabel : '')"
            }
            if (base) {
                cmd = cmd . ", for [i = 1:ns] f using xcol:(sel(i, p) && lab_at(k, p, i, x_index(column(xcol), 1)) ne '' ? yv(column(sc[k]), k) : NaN):" . \
                      "(lab_at(k, p, i, x_index(column(xcol), 1))) with labels offset 0, 1.2 tc rgb c_vermilion font small_font notitle"
            }
            eval cmd
            eval save_texts(j + 1)
        }
    }
    if (npan > 1) {
        # The key, in a strip of its own under the panels: a plot of
        # nothing whose key is the series'.
        unset label; unset arrow; unset title; unset xlabel; unset ylabel
        unset logscale; unset x2tics
        set border 0; unset tics; unset grid
        set xrange [0 : 1]; set yrange [0 : 1]
        set lmargin at screen 0.02; set rmargin at screen 0.98
        set tmargin at screen key_h; set bmargin at screen px(4)
        set key inside center center horizontal maxcols key_cols samplen 1.5 width 1
        cmd = "plot for [i = 1:ns] NaN with linespoints lw series_width(srole[i]) lc rgb line_colour(i) " . \
              "pt series_pt(i) ps 0.9 title key_title(i)"
        if (best) { cmd = cmd . ", NaN with points pt 6 ps 1.6 lw 2.5 lc rgb c_black title bestlabel" }
        eval cmd
        unset multiplot
        set border 3; set tics nomirror out scale 0.6; set grid xtics ytics
    }
    unset label 100; unset label 101
}
unset output
