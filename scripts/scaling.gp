# Figure scaling: bnstudy's layer's cost per value (one configuration,
# B 64, shuffled, one epoch) against the number of rows, a line for each
# number of features, from `make bench`'s scaling table (bench/bench.py
# --scale-tsv). Each size is a point at its median over the rounds, with
# their range; the solid line is the default study's size (512 x 8), the
# dashed line 1.2 times it, the bound issue 22 sets on every size. Timings
# depend on the machine, so this figure is made by `make bench`, never by
# `make study`:
#   gnuplot -e "f = 'scaling.tsv'; figdir = 'DIR'" scripts/scaling.gp
# writes DIR/scaling.png and DIR/scaling.svg.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"
name = "scaling"

stats f using "base_ns" nooutput
base = STATS_min
stats f using "ns_max" nooutput
ytop = STATS_max > 1.2 * base ? STATS_max : 1.2 * base

set logscale x 10
set xrange [300 : 2e6]
set xtics ("512" 512, "4K" 4096, "8K" 8192, "64K" 65536, "128K" 131072, "10^6" 1000000)
set yrange [0 : ytop * 1.15]
set ytics format tic_format
set xlabel "rows"
set ylabel "ns per value"
set key bottom right
title = "The layer's cost per value by size (B 64, shuffled, one epoch)"

# A line per number of features, through its sizes.
set datafile missing NaN
widths = "8 64 1024"
of(c) = column("features") == c ? column("rows") : NaN
do for [out in "png svg"] {
    if (out eq "png") { eval png_terminal; eval png_output } else { eval svg_terminal; eval svg_output }
    eval canvas_title
    plot base with lines lc rgb c_black lw 2 title "512 x 8, the default study", \
         1.2 * base with lines lc rgb c_grey lw 2 dt 2 title "1.2 x 512 x 8", \
         for [i = 1:words(widths)] f using (of(int(word(widths, i)))):"ns_per_value":"ns_min":"ns_max" \
             with yerrorlines lt i title sprintf("%s features (median of the rounds, range)", word(widths, i))
}
