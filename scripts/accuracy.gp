# Figures accuracy, fit-accuracy and curve: a classifier's accuracy on held-out rows in
# training mode (each batch normalised by its own statistics, dashed,
# hollow points) and in evaluation mode (the running statistics, solid,
# filled points), so the gap between the modes reads at a glance.
# accuracy draws them against a setting of summary.tsv (the batch size,
# the epochs, the K of grouped:K orders, the held-out rows' shift, or the
# estimators side by side), with stats_err_rel under them when it changes
# along that axis; fit-accuracy draws the same of the rows trained on;
# curve draws them after every epoch of curve.tsv, a panel per
# configuration. bnstudy plot (src/figure/plot_accuracy.c) says what to
# draw and gives every text:
#   f the file; ctrain, ceval its columns of the two modes' accuracies
#     (held out, or fit-accuracy's of the rows trained on); xcol its x
#     column; xnum 1 when the column's values are
#     the places, else xc, xp, xj each cell's place and whether lines join
#     it (anyj, anyu: some are, some are not); xlog, xlo, xhi, xticscmd
#     the axis, stagger 1 when its names go every other one a line lower;
#     dxw how far apart the series stand at a category; xlabel;
#   sel(d) the rows kept (the settings held at their first value); np,
#     pkey(d), pv the panels, pe each one's run (epochs) when only its
#     longest is drawn; nrow 2 when a row of stats_err_rel panels goes
#     under the accuracies; cols the panels a row;
#   ns, skey(d), sv, sl, srole, sname the series (their key, key entry,
#     colour role and name);
#   slog, slo, shi, szero stats_err_rel's scale (log, the smallest value
#     that is not 0 and the largest, whether some value is 0 up to
#     rounding); shas 1 for each series that has stats_err_rel; yacc, ystats the y labels; keval, ktrain the modes' key
#     entries; title, st the canvas title and the panels' titles.
# With tables (bnstudy plot --tables) each panel's curves come in this
# order: the eval mode of every series joined, then their train mode
# joined, then both again for the places no line joins (each block only
# when some place is of its kind).

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
npan = np * nrow
grid_rows = (npan + cols - 1) / cols
canvas_height = grid_rows == 1 ? 800 : (grid_rows == 2 ? 1100 : 1300)
load scriptdir . "style.gp"
# A row of another panel or series is NaN here, and must not break the
# line through this series' rows: the file need not hold them together.
set datafile missing NaN

exact_tol = 1e-12
panel_font = sprintf("%s,%d", font_name, font_size - (cols > 2 ? 7 : 5))
sfloor = szero ? 10 ** (floor(log10(slo)) - 0.5) : NaN
yv(v) = v < exact_tol && szero ? sfloor : v

# A row's place on the x axis and whether a line joins it.
xat(c, j) = j > |xc| ? NaN : (xc[j] eq c ? xp[j] : xat(c, j + 1))
isj(c, j) = j > |xc| ? 0 : (xc[j] eq c ? xj[j] : isj(c, j + 1))
X(i) = (xnum ? column(xcol) : xat(strcol(xcol), 1)) + dxw * (i - (ns + 1) / 2.0)
# A row of panel p, series i, joined (j = 1) or not.
pick(p, i, j) = sel(0) && pkey(0) eq pv[p] && (pe[p] eq "" || strcol("epochs") eq pe[p]) && \
                skey(0) eq sv[i] && (xnum ? j == 1 : isj(strcol(xcol), 1) == j)

# With one series the modes take the colours; with several, the series.
mode_colour(i, m) = ns == 1 ? (m == 1 ? c_blue : c_vermilion) : series_colour(srole[i], sname[i], i, ns)
hollow(pt) = pt % 2 == 1 ? pt - 1 : pt

# Where panel j (0-based; a row of stats_err_rel panels under the
# accuracies when nrow is 2) sits: the title on top, the x label and a
# strip for the key below, in pixels as the canvas has three heights.
px(n) = n / (1.0 * canvas_height)
longest = strlen(keval) > strlen(ktrain) ? strlen(keval) : strlen(ktrain)
do for [i = 1:ns] { longest = strlen(sl[i]) > longest ? strlen(sl[i]) : longest }
nkey = (ns > 1 ? ns : 0) + 2
# As many columns as gnuplot fits across the canvas: it reserves 20
# pixels a character of an entry's text, and 90 for its sample.
key_cols = int(1150 / (20 * longest + 120))
key_cols = key_cols < 1 ? 1 : (key_cols > 4 ? 4 : key_cols)
key_rows = (nkey + key_cols - 1) / key_cols
key_h = px(12 + 32 * key_rows)
# A title of two lines takes room from the panels.
top0 = 1 - px(strstrt(title, "\n") ? 205 : 175)
left0 = 0.11; right0 = 0.985; bottom0 = key_h + px(stagger ? 140 : 110)
hgap = 0.07; vgap = px(150)
pw = (right0 - left0 - (cols - 1) * hgap) / cols
ph = (top0 - bottom0 - (grid_rows - 1) * vgap) / grid_rows
panel_x(j) = left0 + (j % cols) * (pw + hgap)
panel_y(j) = top0 - int(j / cols) * (ph + vgap)

# The look of series i's curves, pasted into a plot command that sets i.
# Points no line joins are drawn larger.
eval_look = "lw series_width(srole[i]) lc rgb mode_colour(i, 2) dt 1 pt series_pt(i) ps (anyj ? 0.9 : 1.4) notitle"
train_look = "lw series_width(srole[i]) lc rgb mode_colour(i, 1) dt 2 pt hollow(series_pt(i)) ps (anyj ? 0.9 : 1.4) notitle"

do for [out = 1:2] {
    if (out == 1) { eval png_terminal; eval png_output } else { eval svg_terminal; eval svg_output }
    set multiplot
    if (xlog) { set logscale x xlog } else { unset logscale x }
    set xrange [xlo : xhi]
    eval xticscmd
    set format x tic_format
    unset mxtics
    eval canvas_title
    set label 101 xlabel at screen 0.5, screen key_h + px(30) center font (strlen(xlabel) > 85 ? small_font : "")
    set key off
    do for [j = 0:npan - 1] {
        k = j / np
        p = j % np + 1
        set lmargin at screen panel_x(j); set rmargin at screen panel_x(j) + pw
        set tmargin at screen panel_y(j); set bmargin at screen panel_y(j) - ph
        if (npan > 1) { set title st[j + 1] font panel_font }
        if (j > 0) { unset label 100; unset label 101 }
        if (k == 0) {
            unset logscale y
            set yrange [0 : 1.02]
            set ytics 0, 0.2, 1
            set format y tic_format
            set ylabel (j % cols == 0 ? yacc : "")
            cmd = ""
            if (anyj) {
                cmd = "for [i = 1:ns] f using (X(i)):(pick(p, i, 1) ? column(ceval) : NaN) " . \
                      "with linespoints " . eval_look . ", " . \
                      "for [i = 1:ns] f using (X(i)):(pick(p, i, 1) ? column(ctrain) : NaN) " . \
                      "with linespoints " . train_look
            }
            if (anyu) {
                cmd = cmd . (anyj ? ", " : "") . \
                      "for [i = 1:ns] f using (X(i)):(pick(p, i, 0) ? column(ceval) : NaN) " . \
                      "with points " . eval_look . ", " . \
                      "for [i = 1:ns] f using (X(i)):(pick(p, i, 0) ? column(ctrain) : NaN) " . \
                      "with points " . train_look
            }
        } else {
            if (slog) {
                set logscale y
                set yrange [(szero ? sfloor : slo) / 1.6 : shi * 2.5]
                eval log_ytics(slo, shi)
                if (szero) { set ytics add ("0" sfloor) }
            } else {
                unset logscale y
                set yrange [0 : shi * 1.2]
                set ytics autofreq
                set format y tic_format
            }
            set ylabel (j % cols == 0 ? ystats : "")
            # Only the series that have stats_err_rel (shas): a network
            # without batch norm has none to draw.
            cmd = ""
            do for [u = (anyj ? 1 : 0):(anyu ? 0 : 1):-1] {
                do for [i0 = 1:ns] {
                    if (shas[i0]) {
                        cmd = cmd . (cmd eq "" ? "" : ", ") . \
                              sprintf("for [i = %d:%d] f using (X(i)):(pick(p, i, %d) ? yv(column('stats_err_rel')) : NaN) ", i0, i0, u) . \
                              (u ? "with linespoints " : "with points ") . eval_look
                    }
                }
            }
        }
        cmd = "plot " . cmd
        eval cmd
        eval save_texts(j + 1)
    }
    # The key, in a strip of its own under the panels: the series by
    # colour, then the modes by line.
    unset label; unset arrow; unset title; unset xlabel; unset ylabel
    unset logscale; unset x2tics
    set border 0; unset tics; unset grid
    set xrange [0 : 1]; set yrange [0 : 1]
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set tmargin at screen key_h; set bmargin at screen px(4)
    set key inside center center horizontal maxcols key_cols samplen 3.5 width 1
    mc(m) = ns == 1 ? (m == 1 ? c_blue : c_vermilion) : c_black
    cmd = "plot "
    if (ns > 1) {
        cmd = cmd . "for [i = 1:ns] NaN with linespoints lw series_width(srole[i]) lc rgb mode_colour(i, 2) pt series_pt(i) ps 0.9 title sl[i], "
    }
    cmd = cmd . "NaN with linespoints lw 3 lc rgb mc(2) dt 1 pt 7 ps 0.9 title keval, " . \
          "NaN with linespoints lw 3 lc rgb mc(1) dt 2 pt 6 ps 0.9 title ktrain"
    eval cmd
    unset multiplot
    set border 3; set tics nomirror out scale 0.6; set grid xtics ytics
    unset label 100; unset label 101
}
unset output
