# The house style every figure script loads first, so the figures read as
# one family: the same font, colours, line widths, grid and output sizes,
# and the same two outputs (PNG and SVG) for each figure. It also holds the
# few helpers the scripts share for reading results/*/summary.tsv and
# features.tsv by column name. A script loads it with
#     load scriptdir . "style.gp"
# and the results directory comes from the command line,
#     gnuplot -e "results='DIR'" scripts/NAME.gp
# defaulting to results/, so a test can render into a copy.

if (!exists("results")) results = "results"
figdir = results . "/figures"

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
png_terminal = sprintf("set terminal pngcairo size 1200,800 enhanced color font '%s,%d' linewidth 1.5 pointscale 2 rounded", font_name, font_size)
svg_terminal = sprintf("set terminal svg size 1200,800 enhanced font '%s,%d' fontscale 1.3333 linewidth 1.5 rounded background rgb 'white'", font_name, font_size)
png_output(name) = sprintf("set output '%s/%s.png'", figdir, name)
svg_output(name) = sprintf("set output '%s/%s.svg'", figdir, name)
# With tables='DIR' on the command line, every plot writes the points it
# would draw, through gnuplot's own `set table`, to DIR/NAME.png.tab and
# DIR/NAME.svg.tab instead of an image: tests/figures.sh reads them to check
# that each figure draws what the TSVs say.
# The tables take their number format from the axes' tic labels, so a
# panel that hides its labels does so with `eval no_ytic_labels`, which in
# table mode keeps them.
no_ytic_labels = "set format y ''"
if (exists("tables")) {
    png_terminal = "set terminal dumb; set output '/dev/null'"
    svg_terminal = png_terminal
    no_ytic_labels = ""
    png_output(name) = sprintf("set table '%s/%s.png.tab'", tables, name)
    svg_output(name) = sprintf("set table '%s/%s.svg.tab'", tables, name)
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

# Batch sizes go on a log2 axis with a tic at each size the sweep ran, so a
# reader finds "B = 64" without interpolating. Call as
#     eval batch_axis(list, Bmin, Bmax)
# with list the distinct batch sizes (see add_unique below). The margin on
# the left leaves room for labels centred on the smallest size.
batch_lo(lo) = lo / 1.5
batch_hi(hi) = hi * 1.3
batch_axis(list, lo, hi) = sprintf("set logscale x 2; set xrange [%g:%g]; set xtics (%s) format '%%g'; set mxtics 1", batch_lo(lo), batch_hi(hi), commas(list, 1))
commas(list, i) = i > words(list) ? "" : (i > 1 ? ", " : "") . word(list, i) . commas(list, i + 1)

# Helpers to read a whole column into a space-separated list of its
# distinct values, in the order the file has them:
#     list = ""
#     stats FILE using (list = add_unique(list, sprintf("%g", column("x"))), 0) nooutput
seen(list, v) = strstrt(" " . list . " ", " " . v . " ") > 0
add_unique(list, v) = seen(list, v) ? list : (list eq "" ? v : list . " " . v)
# position of word w in list (0 if absent)
word_pos(list, w, i) = i > words(list) ? 0 : (word(list, i) eq w ? i : word_pos(list, w, i + 1))
# TSV numbers are %.17g, so 0.1 arrives as 0.10000000000000001; compare
# parameters with a relative tolerance, never with ==.
same(a, b) = abs(a - b) <= 1e-9 * (abs(a) + abs(b))

# Log y axes get tics at 1, 2 and 5 per decade: gnuplot's default of one
# tic per decade leaves a reader guessing whether a point is 0.3 or 0.6.
log_ytics = "set ytics (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000); set format y '%g'; set mytics 1"

# Titles are centred on the canvas, not on the plot area: figures whose key
# sits in a column of its own have an off-centre plot area, and a title
# centred on it runs off the left edge. `set title " "` keeps the row free.
canvas_title(t) = sprintf("set title ' ' font '%s,%d'; set label 100 \"%s\" at screen 0.5, screen 0.955 center font '%s,%d'", font_name, font_size + 4, t, font_name, font_size + 4)
