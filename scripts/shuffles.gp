# Figure shuffles: how far one shuffle can be trusted, for an experiment
# run over many seeds. On the left (distribution.tsv), a score against the
# batch size as a band from the 5th to the 95th percentile over the seeds,
# with the median as a line, a series per value of the other settings that
# vary; the first seed's run (summary.tsv) is drawn over them as points,
# each labelled with the share of seeds below it, so a reader sees where
# in the spread a single run falls. On the right (expectation.tsv), the
# closed-form expectation of the running-mean error over all orderings
# (docs/expectation.md) as lines, against the root mean square over the
# seeds as points. Either panel is drawn alone when its file is the only
# one. bnstudy plot (src/figure/plot_shuffles.c) gives what to draw and
# every text:
#   dist, expect, summary the files ("" when absent); score; nseeds;
#   xv, xlog, xlabel the batch sizes; ns, skey(d), sv, sl, srole, sname the
#   series; overlay, seed1, one, pct the first seed's run of series one
#   and its share below at each batch size; title, bandtitle, rationote,
#   znote.

lastslash(s, i) = i < 1 ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
scriptdir = ARG0[1:lastslash(ARG0, strlen(ARG0))]
load scriptdir . "style.gp"

nx = |xv|
have_d = dist ne ""
have_e = expect ne ""
series_of(v, i) = i > ns ? 0 : (sv[i] eq v ? i : series_of(v, i + 1))
colour(i) = series_colour(srole[i], sname[i], i, ns)
alpha(i) = srole[i] eq "published" ? 0.22 : 0.3

if (have_d) {
    # The distribution's rows alternate between scores, so a filtered plot
    # would break every line: the chosen score's percentiles are copied into
    # a datablock first, one block per series (plotted with `index`), in the
    # order of the batch sizes. Each block has a header row because the
    # house style reads every block's first row as column names.
    array p05[ns * nx]; array p50[ns * nx]; array p95[ns * nx]
    do for [i = 1:ns * nx] { p05[i] = NaN; p50[i] = NaN; p95[i] = NaN }
    ymin = 1e300; ymax = 0
    stats dist using (strcol("score") eq score ? \
                      (i = series_of(skey(0), 1), j = x_index(column("batch_size"), 1), \
                       c = (i - 1) * nx + j, \
                       i > 0 && j > 0 ? (p05[c] = column("p05"), p50[c] = column("p50"), p95[c] = column("p95")) : 0, \
                       ymin = column("p05") < ymin ? column("p05") : ymin, \
                       ymax = column("p95") > ymax ? column("p95") : ymax) : 0, 0) nooutput
    set print $bands
    do for [i = 1:ns] {
        print "batch_size\tp05\tp50\tp95"
        do for [j = 1:nx] {
            c = (i - 1) * nx + j
            print sprintf("%.17g\t%.17g\t%.17g\t%.17g", xv[j], p05[c], p50[c], p95[c])
        }
        print ""; print ""
    }
    unset print
}
if (have_e) {
    emin = 1e300; emax = 0
    stats expect using (emin = column("expected_mean_err") < emin ? column("expected_mean_err") : emin, \
                        emin = column("mc_mean_err") < emin ? column("mc_mean_err") : emin, \
                        emax = column("expected_mean_err") > emax ? column("expected_mean_err") : emax, \
                        emax = column("mc_mean_err") > emax ? column("mc_mean_err") : emax, 0) nooutput
}

eval x_axis
set logscale y
set style fill transparent solid 1.0 noborder
set label 103 xlabel at screen 0.5, screen 0.035 center
set tmargin at screen 0.75
set bmargin at screen 0.15
if (have_d && have_e) {
    left_l = 0.125; left_r = 0.565; right_l = 0.70; right_r = 0.985
} else {
    left_l = 0.125; left_r = 0.985; right_l = 0.125; right_r = 0.985
}

do for [out = 1:2] {
    if (out == 1) { eval png_terminal; eval png_output } else { eval svg_terminal; eval svg_output }
    set multiplot
    set label 100 title at screen 0.5, screen 0.95 center font title_font
    if (have_d) {
        set lmargin at screen left_l; set rmargin at screen left_r
        set title bandtitle
        set ylabel sprintf("%s (log scale)", score eq "stats_err" ? "running statistics vs truth, stats\\_err" : score)
        set yrange [ymin / 4 : ymax * 10]
        eval log_ytics(ymin, ymax)
        # A decade of headroom holds the key above every curve; the ratio
        # note goes in the lower left, the one corner no band reaches.
        set key top left samplen 1.5 spacing 1.1
        set label 101 rationote at graph 0.03, graph 0.13 left font small_font
        cmd = "plot for [i = 1:ns] $bands index (i - 1) using 'batch_size':'p05':'p95' " . \
              "with filledcurves fc rgb colour(i) fs transparent solid alpha(i) notitle, " . \
              "for [i = 1:ns] $bands index (i - 1) using 'batch_size':'p50' " . \
              "with lines lw series_width(srole[i]) lc rgb colour(i) title sl[i]"
        if (overlay) {
            cmd = cmd . ", summary using 'batch_size':(strcol('seed') eq seed1 && skey(0) eq sv[one] ? column(score) : NaN) " . \
                  "with points pt 7 ps 1.1 lc rgb c_blue title sprintf('seed %s, %% of seeds below', seed1), " . \
                  "summary using 'batch_size':(strcol('seed') eq seed1 && skey(0) eq sv[one] ? column(score) : NaN):" . \
                  "(pct[x_index(column('batch_size'), 1)]) with labels offset 0, -1.1 tc rgb c_blue notitle"
        }
        eval cmd
        eval save_texts(1)
        unset label 100
        unset label 101
    }
    if (have_e) {
        set lmargin at screen right_l; set rmargin at screen right_r
        set title "{/:Bold closed form vs shuffles}\nmean\\_err averaged\nover all orderings"
        set ylabel "RMS of mean\\_err (log scale)"
        set yrange [emin / 1.8 : emax * 3]
        eval log_ytics(emin, emax)
        set key top left samplen 1.5
        set label 102 znote at graph 0.04, graph 0.1 left font small_font
        plot for [i = 1:ns] expect using "batch_size":(skey(0) eq sv[i] ? column("expected_mean_err") : NaN) \
                 with lines lw series_width(srole[i]) lc rgb colour(i) notitle, \
             for [i = 1:ns] expect using "batch_size":(skey(0) eq sv[i] ? column("mc_mean_err") : NaN) \
                 with points pt 6 ps 1.2 lw 2 lc rgb colour(i) notitle, \
             NaN with lines lw 3 lc rgb c_grey title "closed form", \
             NaN with points pt 6 ps 1.2 lw 2 lc rgb c_grey title sprintf("%g shuffles", nseeds)
        eval save_texts(have_d ? 2 : 1)
        unset label 102
    }
    unset multiplot
}
unset output
