# Figure init-weight: the closed form behind the batch-size figure. After T
# EMA updates with new-value weight p, the running statistics' initial
# values (mean 0, variance 1) still carry weight (1 - p)^T. One epoch over
# N rows gives T = N / B updates, so each batch size of the sweep is a
# point on the T axis, marked along the top. The published setting is the
# thick black curve, and the batch-size sweep's measured init_weight column
# is drawn on it as a check that the runs and the formula agree; 0.81 at
# T = 2 is the study's headline number.
# Reads results/batch-size/summary.tsv (T, N, the published p) and
# results/momentum/summary.tsv (the p values explored); writes
# figures/init-weight.{png,svg}.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

bs = results . "/batch-size/summary.tsv"
mom = results . "/momentum/summary.tsv"

# The sweep's update counts and batch sizes, the population size, and the
# row with the fewest updates (the one the headline quotes).
Tlist = ""; x2 = ""; N = 0; Tmin = 1e300; Tmax = 0
stats bs using (T = column("updates"), B = column("batch_size"), \
                Tlist = add_unique(Tlist, sprintf("%d", T)), \
                x2 = x2 . sprintf("%s\"%d\" %d", x2 eq "" ? "" : ", ", B, T), \
                N = B * T > N ? B * T : N, Tmax = T > Tmax ? T : Tmax, \
                T < Tmin ? (Tmin = T, B_at_Tmin = B, w_at_Tmin = column("init_weight"), \
                            published_p = column("new_weight")) : 0, 0) nooutput

plist = ""
stats mom using (plist = add_unique(plist, sprintf("%.15g", column("new_weight"))), 0) nooutput
np = words(plist)

is_published(p) = same(p, published_p)
p_title(p) = is_published(p) ? sprintf("published: %g old = %g new", 1 - p, p) \
                             : sprintf("p = %g  (%g old)", p, 1 - p)
p_colour(i) = is_published(real(word(plist, i))) ? published_colour : seq_colour(i, np)
p_width(i) = is_published(real(word(plist, i))) ? published_lw : 3

# T = 1 is the first update; the axis starts just before it so the curves
# can be read there, and each sweep's T gets a tic.
set logscale x 2
set xrange [0.85 : Tmax * 1.25]
eval "set xtics (1, " . commas(Tlist, 1) . ") format '%g'"
set mxtics 1
set logscale x2 2
set x2range [0.85 : Tmax * 1.25]
eval "set x2tics (" . x2 . ") out nomirror"
set x2label "batch size B that gives T updates"
set grid x2tics ytics noxtics
# Headroom above 1 holds the annotation, the one place no curve passes.
set yrange [0 : 1.3]
set ytics 0, 0.2, 1
set xlabel sprintf("EMA updates in one epoch, T = N / B, N = %d (log₂ scale)", N)
set ylabel "weight the initial values still carry, (1 − p)^T"
eval canvas_title(sprintf("After %d updates the initial guess still carries %.0f%% of the weight", Tmin, 100 * w_at_Tmin))

# The same key column as momentum.gp, so the p legend sits in the same
# place in both figures.
set rmargin at screen 0.60
set key at screen 0.615, graph 0.85 left top title "new-value weight p" left samplen 1.5

set label 1 sprintf("%.2f at T = %d (B = %d), p = %g", w_at_Tmin, Tmin, B_at_Tmin, published_p) \
    at first Tmin * 0.6, first 1.18 left front
set arrow 1 from first Tmin, first 1.13 to first Tmin, first w_at_Tmin + 0.03 \
    lw 2 lc rgb c_black size screen 0.012, 25 front

eval png_terminal
eval png_output("init-weight")
plot for [i = 1:np] (x >= 1 ? (1 - real(word(plist, i))) ** x : NaN) \
         with lines lw p_width(i) lc rgb p_colour(i) title p_title(real(word(plist, i))), \
     (x >= 1 ? (1 - published_p) ** x : NaN) with lines lw published_lw lc rgb published_colour notitle, \
     bs using "updates":"init_weight" with points pt 7 ps 1 lc rgb c_vermilion \
         title "measured, batch-size runs"

eval svg_terminal
eval svg_output("init-weight")
replot
unset output
