# Figure batch-size: the published study's central claim in one picture.
# As the batch grows, one batch estimates the population mean better
# (batch_mean_err falls) while the running statistics that eval mode uses
# get worse (stats_err rises), because a bigger batch means fewer EMA
# updates in an epoch. The top axis gives the update count at each batch
# size so the cause is on the figure, not only in the text.
# Reads results/batch-size/summary.tsv; writes figures/batch-size.{png,svg}.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

f = results . "/batch-size/summary.tsv"

# The range, the population size and the headline ratio come from the file,
# so the figure stays true if the sweep or the population changes.
Bmin = 1e300; Bmax = 0; N = 0; err_at_min = NaN; err_at_max = NaN; Blist = ""; x2 = ""
stats f using (B = column("batch_size"), momentum = column("momentum"), convention = strcol("momentum_weights"), \
               Blist = add_unique(Blist, sprintf("%d", B)), \
               x2 = x2 . sprintf("%s\"%d updates\" %g", x2 eq "" ? "" : ", ", column("updates"), B), \
               N = (B * column("updates") > N ? B * column("updates") : N), \
               B < Bmin ? (Bmin = B, err_at_min = column("stats_err")) : 0, \
               B > Bmax ? (Bmax = B, err_at_max = column("stats_err")) : 0, 0) nooutput

eval batch_axis(Blist, Bmin, Bmax)
# The update count goes on the top axis, one label per batch size: on the
# curve itself the labels collide with the lines where the two cross.
eval "set x2tics (" . x2 . ") out nomirror"
set logscale x2 2
set x2range [batch_lo(Bmin):batch_hi(Bmax)]
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set xlabel sprintf("batch size B (log₂ scale; one epoch over N = %d rows, momentum %g %s)", N, momentum, convention)
set ylabel "RMS error against the population's true statistics"
eval canvas_title("Bigger batches estimate better, yet eval-mode statistics get worse")
set key top left

# The ratio sits in the empty lower right, under the rising curve.
set label 1 sprintf("stats\\_err %.1f× higher\nat B = %d than at B = %d", err_at_max / err_at_min, Bmax, Bmin) \
    at first Bmax, graph 0.4 right tc rgb c_vermilion

eval png_terminal
eval png_output("batch-size")
plot f using "batch_size":"stats_err" with linespoints lt 2 \
         title "running statistics after training: stats\\_err (used in eval)", \
     f using "batch_size":"batch_mean_err" with linespoints lt 1 \
         title "one batch's mean: batch\\_mean\\_err (used in train)", \

eval svg_terminal
eval svg_output("batch-size")
replot
unset output
