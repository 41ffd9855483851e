# The house style every figure script loads first, so the figures read as
# one family: the same font, colours, line widths, grid and output sizes,
# and the same two outputs (PNG and SVG) for each figure, with the few
# helpers the scripts share. `bnstudy plot` runs every script and tells it
# what to draw (src/figure/plot.c) and where; it draws an experiment's
# figures in one gnuplot, each script loaded after its assignments
# (src/cli/plot_draw.c), as one figure is drawn by hand with
#     gnuplot -e "...; name = 'stats-err'; figdir = 'DIR'" scripts/curves.gp
# which writes DIR/stats-err.png and DIR/stats-err.svg. A script loads
# this with
#     load scriptdir . "style.gp"
# and names what it loads so, quoted on a `load` line: the figures' stamp
# hashes the scripts they load, found that way.

# The TSVs have a header row; names keep the scripts correct if columns are
# added or reordered (docs/definitions.md fixes the names, not positions).
set datafile separator tab
set datafile columnheaders

# 1200x800 shrinks to about 0.55 in a blog column. Cairo takes the font
# size in points at 96 dpi, so 20 is drawn 26.7 px high and stays near 15 px
# there. The SVG terminal takes it in pixels, hence its fontscale 4/3; and
# its points are drawn twice the size of cairo's, hence pointscale 2 on the
# PNG. With both, the two files show the same picture.
font_name = "DejaVu Sans"
font_size = 20
# A figure of two rows of panels sets canvas_height (1100) before it loads
# this file.
if (!exists("canvas_height")) canvas_height = 800
png_terminal = sprintf("set terminal pngcairo size 1200,%d enhanced color font '%s,%d' linewidth 1.5 pointscale 2 rounded", canvas_height, font_name, font_size)
svg_terminal = sprintf("set terminal svg size 1200,%d enhanced font '%s,%d' fontscale 1.3333 linewidth 1.5 rounded background rgb 'white'", canvas_height, font_name, font_size)
# `eval png_output` and `eval svg_output` open the two outputs; the names
# are expressions, not text pasted into a command, so a path may hold any
# character.
png_output = "set output figdir . '/' . name . '.png'"
svg_output = "set output figdir . '/' . name . '.svg'"
# `eval save_texts(k)` after panel k's plot does nothing here. With
# tables='DIR' (`bnstudy plot --tables DIR`) every plot writes instead of
# an image the points it would draw, through gnuplot's own `set table`, to
# DIR/NAME.png.tab and DIR/NAME.svg.tab, and save_texts writes the
# panel's settings (its titles, labels and axis labels) to DIR/NAME.k.set:
# tests/figures.sh reads both, to check that each figure draws what the
# TSVs say and says only what they bear out. The tables take their number
# format from the axes' tic labels, so no panel hides its y tic labels,
# and every script sets a tic format as tic_format: "%g" on a figure,
# "%.17g" in the tables, which then hold every number gnuplot drew to
# the last bit (six digits would not do: a point of (1 - p)^T at T near
# 1000 moves in its fourth digit when T is rounded to six).
save_texts(k) = ""
tic_format = "%g"
if (exists("tables")) {
    png_terminal = "set terminal dumb; set output '/dev/null'"
    svg_terminal = png_terminal
    png_output = "set table tables . '/' . name . '.png.tab'"
    svg_output = "set table tables . '/' . name . '.svg.tab'"
    save_texts(k) = sprintf("save set tables . '/' . name . '.%d.set'", k)
    tic_format = "%.17g"
    set format x tic_format; set format y tic_format
    set format x2 tic_format; set format y2 tic_format
}

set border 3 lw 1.2
set tics nomirror out scale 0.6
set grid xtics ytics lc rgb "#d8d8d8" lw 1 dt 1
set key nobox noopaque Left reverse samplen 2.5 spacing 1.15
set bars small
set samples 500

# Okabe-Ito: told apart under the common colour-vision deficiencies, which
# gnuplot's default purple/green/blue set is not.
c_blue      = "#0072B2"
c_vermilion = "#D55E00"
c_green     = "#009E73"
c_orange    = "#E69F00"
c_sky       = "#56B4E9"
c_purple    = "#CC79A7"
c_grey      = "#999999"
c_black     = "#000000"
set linetype 1 lc rgb c_blue      lw 3 pt 7  ps 0.8
set linetype 2 lc rgb c_vermilion lw 3 pt 5  ps 0.75
set linetype 3 lc rgb c_green     lw 3 pt 9  ps 0.9
set linetype 4 lc rgb c_orange    lw 3 pt 11 ps 0.9
set linetype 5 lc rgb c_sky       lw 3 pt 13 ps 0.9
set linetype 6 lc rgb c_purple    lw 3 pt 15 ps 0.8
set linetype 7 lc rgb c_grey      lw 3 pt 6  ps 0.8
set linetype 8 lc rgb c_black     lw 3 pt 4  ps 0.8

# An ordered parameter (the new-value weight p) gets an ordered colour:
# matplotlib's plasma, cut before its pale yellow end, which vanishes on
# white. Its dark end is blue, not black, so it stays apart from the black
# published curve. seq_colour(i, n) is the colour of the i-th of n values.
seq_stops = "#0D0887 #4C02A1 #7E03A8 #A92395 #CC4778 #E56B5D #F89441"
seq_colour(i, n) = word(seq_stops, n < 2 ? 1 : 1 + int((i - 1) * (words(seq_stops) - 1.0) / (n - 1) + 0.5))

# The study's published setting is drawn the same way in every figure that
# shows it: black and thicker than everything else.
published_lw = 6
published_colour = c_black

# A series' colour by the role bnstudy plot gives it with its name (the
# value it stands for) and its place i of n: "published" the published
# setting, "seq" a new-value weight (the ordered scale), "order" (shuffled
# keeps blue and sorted vermilion in every figure), "estimator"
# (ema-debiased vermilion, cumulative blue, precise green), and anything
# else by its place.
cycle_colours = c_blue . " " . c_vermilion . " " . c_green . " " . c_orange . " " . c_sky . " " . c_purple . " " . c_grey
index_colour(i) = word(cycle_colours, 1 + (i - 1) % words(cycle_colours))
order_colour(o, i) = o eq "shuffled" ? c_blue : (o[1:6] eq "sorted" ? c_vermilion : index_colour(i + 2))
estimator_colour(e, i) = e eq "ema-debiased" ? c_vermilion : e eq "cumulative" ? c_blue : \
                         e eq "precise" ? c_green : e eq "ema" ? c_orange : index_colour(i + 4)
series_colour(role, nm, i, n) = role eq "published" ? published_colour : \
                                role eq "seq" ? seq_colour(i, n) : \
                                role eq "order" ? order_colour(nm, i) : \
                                role eq "estimator" ? estimator_colour(nm, i) : index_colour(i)
series_width(role) = role eq "published" ? published_lw : 3
point_types = "7 5 9 11 13 15 6 4"
series_pt(i) = int(word(point_types, 1 + (i - 1) % words(point_types)))

# TSV numbers are %.17g, so 0.1 arrives as 0.10000000000000001; compare
# parameters with a relative tolerance, never with ==.
same(a, b) = abs(a - b) <= 1e-9 * (abs(a) + abs(b))

# The x axis of a figure over a swept setting, from xv (its values, in
# ascending order) and xlog (2 or 10 for a log scale, 0 for a linear one):
# a tic at each value the sweep ran, so a reader finds "B = 64" without
# interpolating, and a margin on the left for labels centred on the
# smallest value. `eval x_axis`. (A figure without xv cannot define
# them: gnuplot checks an array's name when a function is defined.)
if (exists("xv")) {
    x_commas(i) = i > |xv| ? "" : (i > 1 ? ", " : "") . sprintf("%.17g", xv[i]) . x_commas(i + 1)
    x_lo(lo, hi) = xlog ? lo / 1.5 : lo - 0.06 * (hi - lo)
    x_hi(lo, hi) = xlog ? hi * 1.3 : hi + 0.06 * (hi - lo)
    x_axis = "if (xlog) { set logscale x xlog } else { unset logscale x }; set xrange [x_lo(xv[1], xv[|xv|]) : x_hi(xv[1], xv[|xv|])]; eval 'set xtics (' . x_commas(1) . ') format tic_format'; set mxtics 1"
    # the place of v among xv, 0 when it is not there
    x_index(v, i) = i > |xv| ? 0 : (same(v, xv[i]) ? i : x_index(v, i + 1))
}

# Log y axes get tics at 1, 2 and 5 per decade from lo to hi (one per
# decade over more than four): gnuplot's default of one tic per decade
# leaves a reader guessing whether a point is 0.3 or 0.6.
# Past 24 decades (a relative error of a variance near a denormal's) a
# tic every span / 8 decades, so that the labels do not pile up.
decade_tics(d, d1, all, step) = d > d1 ? "" : (all ? sprintf("%g, %g, %g", 10.0 ** d, 2 * 10.0 ** d, 5 * 10.0 ** d) : sprintf("%g", 10.0 ** d)) . (d + step <= d1 ? ", " . decade_tics(d + step, d1, all, step) : "")
decade_step(span) = span > 24 ? ceil(span / 8.0) : 1
# (Joined with ".": gnuplot's sprintf cuts its result at 127 characters.)
log_ytics(lo, hi) = "set ytics (" . decade_tics(floor(log10(lo)), ceil(log10(hi)), ceil(log10(hi)) - floor(log10(lo)) <= 3, decade_step(ceil(log10(hi)) - floor(log10(lo)))) . "); set format y tic_format; set mytics 1"

# Titles are centred on the canvas, not on the plot area: figures whose key
# sits in a column of its own have an off-centre plot area, and a title
# centred on it runs off the left edge. `set title " "` keeps the row free.
# `eval canvas_title` shows the variable title.
# A long title is set smaller, so that it fits the canvas.
title_font = sprintf("%s,%d", font_name, font_size + 4)
fit_font(t) = sprintf("%s,%d", font_name, font_size + (strlen(t) > 78 ? 0 : 4))
small_font = sprintf("%s,%d", font_name, font_size - 4)
title_y = 1 - 36.0 / canvas_height
canvas_title = "set title ' ' font title_font; set label 100 title at screen 0.5, screen title_y center font fit_font(title)"
