# Figure momentum: the running-statistics error (stats_err) against batch
# size, one curve per EMA new-value weight p. The published setting
# (momentum 0.9 on the old value, p = 0.1) is the thick black curve; a ring
# marks the p with the lowest error at each batch size, which moves to
# larger p as the batch grows: fewer updates need each update to count for
# more. The p values are read from the file, not listed here.
# Reads results/momentum/summary.tsv and, for the published p, the
# batch-size experiment's; writes figures/momentum.{png,svg}.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

f = results . "/momentum/summary.tsv"

# new_weight is p whichever convention a row's momentum was written in.
stats results . "/batch-size/summary.tsv" using "new_weight" nooutput
published_p = STATS_min

Bmin = 1e300; Bmax = 0; Blist = ""; plist = ""; ymin = 1e300; ymax = 0
stats f using (B = column("batch_size"), Blist = add_unique(Blist, sprintf("%d", B)), \
               y = column("stats_err"), ymin = y < ymin ? y : ymin, ymax = y > ymax ? y : ymax, \
               plist = add_unique(plist, sprintf("%.15g", column("new_weight"))), \
               Bmin = B < Bmin ? B : Bmin, Bmax = B > Bmax ? B : Bmax, 0) nooutput
nB = words(Blist); np = words(plist)

# The lowest error at each batch size, indexed by the batch size's position
# in Blist.
array best[nB]
do for [i = 1:nB] { best[i] = 1e300 }
stats f using (k = word_pos(Blist, sprintf("%d", column("batch_size")), 1), \
               best[k] = column("stats_err") < best[k] ? column("stats_err") : best[k], 0) nooutput
# == is safe here: both sides are the same column parsed the same way.
is_best(B, e) = e == best[word_pos(Blist, sprintf("%d", B), 1)]

is_published(p) = same(p, published_p)
p_title(p) = is_published(p) ? sprintf("published: %g old = %g new", 1 - p, p) \
                             : sprintf("p = %g  (%g old)", p, 1 - p)
p_colour(i) = is_published(real(word(plist, i))) ? published_colour : seq_colour(i, np)
p_width(i) = is_published(real(word(plist, i))) ? published_lw : 3

eval batch_axis(Blist, Bmin, Bmax)
# The errors span two decades, and the small-p curves would flatten the
# interesting low end on a linear axis.
set logscale y
set yrange [ymin / 1.4 : ymax * 1.4]
eval log_ytics
set xlabel "batch size B (log₂ scale)"
set ylabel "running statistics vs truth, stats\\_err (log scale)"
eval canvas_title("Fewer updates need a larger EMA weight p")
# Eight entries do not fit among the curves without covering some, so the
# key gets its own column; gnuplot's own outside key reserves twice the
# width the text needs, hence the fixed margin.
set rmargin at screen 0.60
set key at screen 0.615, graph 0.85 left top title "new-value weight p" left samplen 1.5

# The published curve is drawn a second time, untitled, after the loop so
# no later curve crosses over it.
eval png_terminal
eval png_output("momentum")
plot for [i = 1:np] f using "batch_size":(same(column("new_weight"), real(word(plist, i))) ? column("stats_err") : NaN) \
         with linespoints lw p_width(i) lc rgb p_colour(i) pt 7 ps 0.6 title p_title(real(word(plist, i))), \
     f using "batch_size":(is_published(column("new_weight")) ? column("stats_err") : NaN) \
         with linespoints lw published_lw lc rgb published_colour pt 7 ps 0.7 notitle, \
     f using "batch_size":(is_best(column("batch_size"), column("stats_err")) ? column("stats_err") : NaN) \
         with points pt 6 ps 1.6 lw 2.5 lc rgb c_black title "lowest error at this B"

eval svg_terminal
eval svg_output("momentum")
replot
unset output
