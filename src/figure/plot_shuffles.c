/*
 * The shuffles figure (scripts/shuffles.gp): stats_err across many seeds
 * (distribution.tsv's percentiles), the first seed's run among them, and
 * the closed form of the expected running-mean error against the seeds
 * (expectation.tsv).
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- many seeds ---- */

static int score_is(const table_t *tb, size_t row, const void *ctx)
{
    int c = column(tb, "score");
    return c >= 0 && strcmp(tsv_cell(&tb->t, row, (size_t)c), ctx) == 0;
}

/* stats_err across the seeds (distribution.tsv: a band from the 5th to
 * the 95th percentile, the median as a line, and the first seed's run
 * set among them), and the closed form of the running mean's expected
 * error against the shuffles (expectation.tsv). */
int kind_shuffles(const plot_exp *x, figure_out *o, bn_error *err)
{
    static const char *const score = "stats_err";
    int have_d = column(&x->dist, "p05") >= 0 &&
                 column(&x->dist, "p50") >= 0 &&
                 column(&x->dist, "p95") >= 0;
    int have_e = column(&x->expect, "expected_mean_err") >= 0 &&
                 column(&x->expect, "mc_mean_err") >= 0 &&
                 column(&x->expect, "z") >= 0;
    if (!have_d && !have_e)
        return 0;
    const table_t *main = have_d ? &x->dist : &x->expect;
    roles_t r;
    roles_of(main, 1, 0, &r);
    if (!r.x || r.x->key != KEY_BATCH_SIZE)
        return 0;
    grid_t g05 = {0}, g50 = {0}, g95 = {0};
    bn_buf t = {0};
    strlist pct = {0};
    double *y1 = NULL, *lo_err = NULL, *hi_err = NULL;
    size_t *below = NULL, *seen = NULL;
    int rc = -1;
    const void *sc = score;
    int (*keep)(const table_t *, size_t, const void *) =
        have_d ? score_is : NULL;
    if (grid_make(main, &r, "p50", keep, sc, &g50, err) != 0 ||
        grid_make(main, &r, "p05", keep, sc, &g05, err) != 0 ||
        grid_make(main, &r, "p95", keep, sc, &g95, err) != 0)
        goto done;
    size_t nx = g50.nx, lo = 0, hi = nx - 1;
    int cs = column(main, "seeds");
    double nseeds = cs >= 0 && main->t.nrow ? cell_num(main, 0, cs) : NAN;

    bn_buf *a = &o->assign;
    as_str(a, "dist", have_d ? x->dist.path : "");
    as_str(a, "expect", have_e ? x->expect.path : "");
    as_str(a, "score", score);
    as_num(a, "nseeds", nseeds);
    x_axis(a, r.x);
    x_label(&t, x, main, &r, x_is_log(r.x));
    as_str(a, "xlabel", sb_str(&t));
    size_t one = 0;
    if (as_series(a, x, main, &r, &g50, NULL, 0, &one) != 0) {
        bn_fail(err, "out of memory");
        goto done;
    }

    /* The first seed's run of the published series (else the first),
     * from summary.tsv, and the share of seeds below it at each B. */
    const table_t *sum = &x->sum;
    roles_t rs;
    roles_of(sum, 1, 0, &rs);
    const axis_t *seed = axis_of(sum, KEY_SEED);
    int cy = column(sum, score);
    int overlay = have_d && sum->ok && seed && cy >= 0 && rs.x &&
                  rs.x->key == KEY_BATCH_SIZE && rs.nsa == r.nsa &&
                  rs.x->n == nx;
    double pct_max = 0, one_ratio = NAN, reach = 0, runs = 0;
    if (overlay) {
        size_t nseed = seed->n;
        y1 = malloc(nx * sizeof *y1);
        below = calloc(nx, sizeof *below);
        seen = calloc(nx, sizeof *seen);
        lo_err = malloc(nseed * sizeof *lo_err);
        hi_err = malloc(nseed * sizeof *hi_err);
        if (!y1 || !below || !seen || !lo_err || !hi_err) {
            bn_fail(err, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < nx; i++)
            y1[i] = NAN;
        for (size_t i = 0; i < nseed; i++)
            lo_err[i] = hi_err[i] = NAN;
        const char *s1 = seed->val[0];
        for (int pass = 0; pass < 2; pass++)
            for (size_t row = 0; row < sum->t.nrow; row++) {
                row_series(&sum->t, row, &rs, &t);
                if (strcmp(sb_str(&t), g50.skey.v[one]) != 0)
                    continue;
                size_t xi = val_index(rs.x, cell_of(&sum->t, row, rs.x));
                double y = cell_num(sum, row, cy);
                const char *sd = cell_of(&sum->t, row, seed);
                if (pass == 0) {
                    if (strcmp(sd, s1) == 0)
                        y1[xi] = y;
                    size_t k = val_index(seed, sd);
                    if (xi == lo)
                        lo_err[k] = y;
                    if (xi == hi)
                        hi_err[k] = y;
                } else {
                    below[xi] += y < y1[xi];
                    seen[xi]++;
                }
            }
        for (size_t i = 0; i < nx; i++) {
            double share = seen[i] ? 100.0 * (double)below[i] / (double)seen[i]
                                   : NAN;
            pct_max = share > pct_max ? share : pct_max;
            buf_clear(&t);
            buf_printf(&t, "%.0f%%", share);
            sl_push(&pct, sb_str(&t));
        }
        one_ratio = y1[hi] / y1[lo];
        for (size_t k = 0; k < nseed; k++)
            if (!isnan(lo_err[k]) && !isnan(hi_err[k])) {
                runs++;
                reach += hi_err[k] / lo_err[k] >= one_ratio;
            }
        as_str(a, "seed1", s1);
    } else {
        as_str(a, "seed1", "");
    }
    as_num(a, "overlay", overlay);
    as_num(a, "one", (double)(one + 1));
    as_strs(a, "pct", pct.v, pct.n);
    as_str(a, "summary", overlay ? sum->path : "");

    /* The title: where the single run falls, when the numbers say. */
    buf_clear(&t);
    if (overlay && pct_max <= 10)
        txf(&t, "A single run (seed %s) is in the lowest 10%% of %g shuffles "
                "at every B",
            seed->val[0], nseeds);
    else if (overlay)
        txf(&t, "A single run (seed %s) is one draw from %g shuffles",
            seed->val[0], nseeds);
    else if (have_d)
        txf(&t, "stats_err over %g shuffles", nseeds);
    else
        txf(&t, "The closed form against %g shuffles", nseeds);
    as_str(a, "title", sb_str(&t));

    /* The band subtitle: from which B on the published series' band is
     * narrower than its median line is thick (under 10 % on this canvas). */
    buf_clear(&t);
    if (have_d) {
        buf_printf(&t, "{/:Bold ");
        txf(&t, "%s over %g shuffles", score, nseeds);
        buf_printf(&t, "}\nbands 5–95 %%, lines the median");
        size_t thin = nx;
        for (size_t k = nx; k-- > 0;) {
            if (gy(&g95, 0, one, k) / gy(&g05, 0, one, k) < 1.1)
                thin = k;
            else
                break;
        }
        if (thin < nx) {
            buf_printf(&t, ";\nfrom ");
            at_x(&t, &r, thin);
            buf_printf(&t, " ");
            size_t at = t.len;
            series_words(&t, x, &r, &g50, one, 1);
            buf_printf(&t, t.len > at ? "'s band is thinner than its line"
                                      : "the band is thinner than its line");
        }
    }
    as_str(a, "bandtitle", sb_str(&t));
    buf_clear(&t);
    if (overlay) {
        series_words(&t, x, &r, &g50, one, 1);
        if (t.len)
            buf_printf(&t, ", ");
        txf(&t, "B %s ÷ B %s:\n%.1f× for seed %s, %.1f× for the median;\n"
                "%.0f%% of shuffles reach %.1f×",
            r.x->val[hi], r.x->val[lo], one_ratio, seed->val[0],
            gy(&g50, 0, one, hi) / gy(&g50, 0, one, lo),
            runs > 0 ? 100.0 * reach / runs : NAN, one_ratio);
    }
    as_str(a, "rationote", sb_str(&t));

    /* The closed form's worst disagreement, in standard errors. */
    double zmax = 0;
    if (have_e) {
        int cz = column(&x->expect, "z");
        for (size_t row = 0; row < x->expect.t.nrow; row++) {
            double z = fabs(cell_num(&x->expect, row, cz));
            zmax = z > zmax ? z : zmax;
        }
    }
    buf_clear(&t);
    if (have_e)
        txf(&t, "agree within\n%.1f standard errors", zmax);
    as_str(a, "znote", sb_str(&t));

    buf_printf(&o->what, "%s against batch_size",
               have_d && have_e ? "stats_err across the seeds, and the "
                                  "closed form against them"
               : have_d         ? "stats_err across the seeds"
                                : "the closed form against the seeds");
    if (r.nsa)
        buf_printf(&o->what, ", a series per %s", r.series[0]->col);
    rc = t.failed || pct.oom
             ? bn_fail(err, "out of memory")
             : 1;
done:
    grid_free(&g05);
    grid_free(&g50);
    grid_free(&g95);
    buf_free(&t);
    sl_free(&pct);
    free(y1);
    free(lo_err);
    free(hi_err);
    free(below);
    free(seen);
    return rc;
}
