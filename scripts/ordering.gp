# Figure ordering: how far train mode and eval mode disagree on the same
# rows with the same weights (train_eval_rmse), against batch size, once
# for shuffled batches and once for batches sorted by the first feature.
# Sorted batches are not exchangeable, so each batch's statistics describe
# its own slice of the data; the label over each sorted point is its ratio
# to the shuffled run at the same batch size, so "worse at every B, and by
# how much" can be read off without the table.
# Reads results/ordering/summary.tsv; writes figures/ordering.{png,svg}.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

f = results . "/ordering/summary.tsv"
baseline = "shuffled"

# One pass to learn the batch sizes and the orders, a second for the
# baseline's score at each batch size (indexed by its position in Blist).
Bmin = 1e300; Bmax = 0; Blist = ""; orders = ""; ymin = 1e300; ymax = 0
stats f using (B = column("batch_size"), Blist = add_unique(Blist, sprintf("%d", B)), \
               y = column("train_eval_rmse"), ymin = y < ymin ? y : ymin, ymax = y > ymax ? y : ymax, \
               orders = add_unique(orders, strcol("order")), \
               Bmin = B < Bmin ? B : Bmin, Bmax = B > Bmax ? B : Bmax, 0) nooutput
B_index(B) = word_pos(Blist, sprintf("%d", B), 1)
array base[words(Blist)]
do for [i = 1:words(Blist)] { base[i] = NaN }
stats f using (strcol("order") eq baseline ? base[B_index(column("batch_size"))] = column("train_eval_rmse") : 0, 0) nooutput

order_title(o) = o eq "shuffled" ? "shuffled batches" : (o eq "sorted" ? "batches sorted by the first feature" : o)
# shuffled keeps linetype 1 (blue) and sorted 2 (vermilion) in every figure
order_lt(o) = o eq "shuffled" ? 1 : (o eq "sorted" ? 2 : 2 + word_pos(orders, o, 1))

eval batch_axis(Blist, Bmin, Bmax)
# The sorted score spans more than a decade; on a linear axis the shuffled
# curve would be a flat line along the bottom.
set logscale y
# Room above the top point for its ratio label and the key.
set yrange [ymin / 1.6 : ymax * 4]
eval log_ytics
set xlabel "batch size B (log₂ scale)"
set ylabel "train-mode vs eval-mode output, RMSE (log scale)"
eval canvas_title("Sorted batches widen the train/eval gap at every batch size")
set key top right
set label 1 sprintf("labels: sorted ÷ %s at the same B", baseline) at graph 0.98, graph 0.78 right tc rgb c_vermilion

eval png_terminal
eval png_output("ordering")
plot for [o in orders] f using "batch_size":(strcol("order") eq o ? column("train_eval_rmse") : NaN) \
         with linespoints lt order_lt(o) title order_title(o), \
     for [o in orders] f using "batch_size":(strcol("order") eq o && o ne baseline ? column("train_eval_rmse") : NaN): \
         (sprintf("×%.1f", column("train_eval_rmse") / base[B_index(column("batch_size"))])) \
         with labels offset 0, 1.2 tc rgb c_vermilion notitle

eval svg_terminal
eval svg_output("ordering")
replot
unset output
