# Figure features: per feature, the population's true variance beside the
# running variance eval mode would use after one epoch at the smallest and
# at the largest batch size. With many updates (small B) the running
# variance tracks the truth; with two (B = 256) it has barely left its
# initial value 1, drawn as a dashed line, so the feature whose variance is
# farthest from 1 is the one left worst. That feature, picked from the data
# as the largest |running_var - true_var| at the largest B, is marked with
# its error.
# Reads results/batch-size/features.tsv; writes figures/features.{png,svg}.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

f = results . "/batch-size/features.tsv"

Bmin = 1e300; Bmax = 0; flist = ""; ymax = 0
stats f using (B = column("batch_size"), Bmin = B < Bmin ? B : Bmin, Bmax = B > Bmax ? B : Bmax, \
               flist = add_unique(flist, strcol("feature")), \
               ymax = column("true_var") > ymax ? column("true_var") : ymax, \
               ymax = column("running_var") > ymax ? column("running_var") : ymax, 0) nooutput
nf = words(flist)

worst_err = -1
stats f using (column("batch_size") == Bmax && abs(column("running_var") - column("true_var")) > worst_err ? \
                   (worst_err = abs(column("running_var") - column("true_var")), worst = strcol("feature"), \
                    worst_true = column("true_var"), worst_run = column("running_var")) : 0, 0) nooutput
wk = word_pos(flist, worst, 1)

fx(name) = word_pos(flist, name, 1)
tic_list(i) = i > nf ? "" : sprintf("%s\"%s\" %d", i > 1 ? ", " : "", word(flist, i), i) . tic_list(i + 1)
eval "set xtics (" . tic_list(1) . ") scale 0"

bw = 0.26
set boxwidth bw absolute
set style fill solid 1.0 border rgb "white"
set xrange [0.4 : nf + 0.6]
set yrange [0 : ymax * 1.12]
set grid noxtics ytics
set xlabel "feature"
set ylabel "variance"
set key top left samplen 1.5

# The error of the worst feature as a double arrow from the running value
# up to the truth, just right of its group, and its reading beside it on
# whichever side has more features (their bars are short next to the worst).
arrow_x = wk + 1.6 * bw
set arrow 1 from arrow_x, worst_run to arrow_x, worst_true heads size 0.12, 25 lw 3 lc rgb c_black front
worst_text = sprintf("worst feature at B = %d: %s\n|running − true| = %.2f", Bmax, worst, worst_err)
if (wk > nf / 2.0) {
    set label 1 worst_text at wk - 0.6, (worst_run + worst_true) / 2 right front
} else {
    set label 1 worst_text at arrow_x + 0.15, (worst_run + worst_true) / 2 left front
}

# features.tsv carries no update count, so the title and key read it from
# the same experiment's summary rather than assume N / B.
summary = results . "/batch-size/summary.tsv"
stats summary using (column("batch_size") == Bmax ? Tmax = column("updates") : 0, \
               column("batch_size") == Bmin ? Tmin = column("updates") : 0, 0) nooutput
eval canvas_title(sprintf("%d updates (B = %d) leave running variances near 1, not the truth", Tmax, Bmax))

# The reference line is the constant 1 because docs/definitions.md fixes the
# initial running variance at 1 and no results file records it.
eval png_terminal
eval png_output("features")
plot f using (fx(strcol("feature")) - bw):(column("batch_size") == Bmin ? column("true_var") : NaN) \
         with boxes lc rgb c_grey title "true variance of the population", \
     f using (fx(strcol("feature"))):(column("batch_size") == Bmin ? column("running_var") : NaN) \
         with boxes lc rgb c_blue title sprintf("running variance, B = %d (%d updates)", Bmin, Tmin), \
     f using (fx(strcol("feature")) + bw):(column("batch_size") == Bmax ? column("running_var") : NaN) \
         with boxes lc rgb c_vermilion title sprintf("running variance, B = %d (%d updates)", Bmax, Tmax), \
     1 with lines dt 2 lw 3 lc rgb c_black title "initial running variance, 1"

eval svg_terminal
eval svg_output("features")
replot
unset output
