# Figure effective: how many independent values a batch statistic of
# feature maps is worth. BatchNorm2d pools B H W values per channel, but
# the values of one image move together (or offset each other), so the
# batch mean varies as the mean of n_eff independent values would, not
# of B H W. Each channel's n_eff (v over the exact variance of the batch
# mean over orderings) is drawn against the batch size, with the count
# B H W and the count with the finite-population correction, which is
# what independent values would give: a channel under that line carries
# less information than its count, one over it more. On log axes the
# channels run parallel to it, apart by their ratio (docs/convolution.md).
# bnstudy plot (src/figure/plot_effective.c) gives what to draw and every
# text:
#   f the file; sel(d) the configuration's rows; nc, cn, cl the channels
#   (names, key entries with their ratio); xv, xlog the batch sizes;
#   ylo, yhi the range; title, xlabel.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

# The channels' rows alternate in the file: another channel's row is NaN
# here and must not break this channel's line.
set datafile missing NaN
is_c(i) = sel(0) && strcol("feature") eq cn[i]

eval x_axis
set logscale y
# A decade of headroom holds the key.
set yrange [ylo / 1.5 : yhi * 10]
eval log_ytics(ylo, yhi)
set xlabel xlabel
set ylabel "values behind a batch mean (log scale)"
eval canvas_title
set key top left samplen 2

# The count and the independent values' line are the same for every
# channel: channel 1's rows draw them.
cmd = "plot f using 'batch_size':(is_c(1) ? column('count_fpc') : NaN) " . \
      "with lines dt 2 lw 3 lc rgb c_black title 'independent values: B·H·W, finite-population corrected', " . \
      "f using 'batch_size':(is_c(1) ? column('count') : NaN) " . \
      "with lines dt 3 lw 3 lc rgb c_grey title 'the count B·H·W', " . \
      "for [i = 1:nc] f using 'batch_size':(is_c(i) ? column('n_eff') : NaN) " . \
      "with linespoints lw 3 pt series_pt(i) lc rgb index_colour(i) title 'n_{eff}, ' . cl[i]"

eval png_terminal
eval png_output
eval cmd
eval svg_terminal
eval svg_output
eval cmd
eval save_texts(1)
unset output
