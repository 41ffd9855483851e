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

static int score_is(const table_t *tb, size_t row, const void *ctx)
{
    int c = column(tb, "score");
    return c >= 0 && strcmp(tsv_cell(&tb->t, row, (size_t)c), ctx) == 0;
}

/* The score the figure draws across the seeds. */
static const char *const score = "stats_err";

/* The shuffles figure as kind_shuffles builds it. */
typedef struct {
    const plot_exp *x;
    int have_d, have_e;  /* distribution.tsv's and expectation.tsv's */
    const table_t *main; /* the first of them there */
    roles_t r;
    grid_t g05, g50, g95; /* the percentiles (the closed form's: p50) */
    size_t nx, lo, hi;    /* the batch sizes, the first and the last */
    size_t one;           /* the published series, else the first */
    double nseeds;
    /* The first seed's run among the seeds (overlay), from summary.tsv:
     * the most seeds below it at any B in percent, its ratio of the
     * largest B to the smallest, and how many seeds' ratios reach it. */
    int overlay;
    const axis_t *seed;
    double pct_max, one_ratio, reach, runs;
} shuffles_t;

/* The files, their rows by batch size and series, and the percentiles'
 * grids: 0 when the experiment has no such figure, -1 on a failure. */
static int shuffles_make(const plot_exp *x, shuffles_t *s, bn_error *err)
{
    memset(s, 0, sizeof *s);
    s->x = x;
    s->have_d = column(&x->dist, "p05") >= 0 &&
                column(&x->dist, "p50") >= 0 && column(&x->dist, "p95") >= 0;
    s->have_e = column(&x->expect, "expected_mean_err") >= 0 &&
                column(&x->expect, "mc_mean_err") >= 0 &&
                column(&x->expect, "z") >= 0;
    if (!s->have_d && !s->have_e)
        return 0;
    s->main = s->have_d ? &x->dist : &x->expect;
    roles_of(s->main, 1, 0, &s->r);
    if (!s->r.x || s->r.x->key != KEY_BATCH_SIZE)
        return 0;
    int (*keep)(const table_t *, size_t, const void *) =
        s->have_d ? score_is : NULL;
    if (grid_make(s->main, &s->r, "p50", keep, score, &s->g50, err) != 0 ||
        grid_make(s->main, &s->r, "p05", keep, score, &s->g05, err) != 0 ||
        grid_make(s->main, &s->r, "p95", keep, score, &s->g95, err) != 0)
        return -1;
    s->nx = s->g50.nx;
    s->hi = s->nx - 1;
    int cs = column(s->main, "seeds");
    s->nseeds = cs >= 0 && s->main->t.nrow ? cell_num(s->main, 0, cs) : NAN;
    return 1;
}

static void shuffles_free(shuffles_t *s)
{
    grid_free(&s->g05);
    grid_free(&s->g50);
    grid_free(&s->g95);
}

/* The first seed's run of the published series (else the first), from
 * summary.tsv, and the share of seeds below it at each B, into pct:
 * drawn when summary.tsv has the seeds' runs by the same axes. -1 when
 * out of memory. */
static int seed_overlay(shuffles_t *s, bn_buf *t, strlist *pct)
{
    const table_t *sum = &s->x->sum;
    roles_t rs;
    roles_of(sum, 1, 0, &rs);
    s->seed = axis_of(sum, KEY_SEED);
    int cy = column(sum, score);
    s->overlay = s->have_d && sum->ok && s->seed && cy >= 0 && rs.x &&
                 rs.x->key == KEY_BATCH_SIZE && rs.nsa == s->r.nsa &&
                 rs.x->n == s->nx;
    if (!s->overlay)
        return 0;
    size_t nx = s->nx, nseed = s->seed->n;
    double *y1 = malloc(nx * sizeof *y1);
    size_t *below = calloc(nx, sizeof *below), *seen = calloc(nx, sizeof *seen);
    double *lo_err = malloc(nseed * sizeof *lo_err);
    double *hi_err = malloc(nseed * sizeof *hi_err);
    int rc = -1;
    if (!y1 || !below || !seen || !lo_err || !hi_err)
        goto done;
    for (size_t i = 0; i < nx; i++)
        y1[i] = NAN;
    for (size_t i = 0; i < nseed; i++)
        lo_err[i] = hi_err[i] = NAN;
    const char *s1 = s->seed->val[0];
    for (int pass = 0; pass < 2; pass++)
        for (size_t row = 0; row < sum->t.nrow; row++) {
            row_series(&sum->t, row, &rs, t);
            if (strcmp(sb_str(t), s->g50.skey.v[s->one]) != 0)
                continue;
            size_t xi = val_index(rs.x, cell_of(&sum->t, row, rs.x));
            double y = cell_num(sum, row, cy);
            const char *sd = cell_of(&sum->t, row, s->seed);
            if (pass == 0) {
                if (strcmp(sd, s1) == 0)
                    y1[xi] = y;
                size_t k = val_index(s->seed, sd);
                if (xi == s->lo)
                    lo_err[k] = y;
                if (xi == s->hi)
                    hi_err[k] = y;
            } else {
                below[xi] += y < y1[xi];
                seen[xi]++;
            }
        }
    for (size_t i = 0; i < nx; i++) {
        double share = seen[i] ? 100.0 * (double)below[i] / (double)seen[i]
                               : NAN;
        s->pct_max = share > s->pct_max ? share : s->pct_max;
        buf_clear(t);
        buf_printf(t, "%.0f%%", share);
        sl_push(pct, sb_str(t));
    }
    s->one_ratio = y1[s->hi] / y1[s->lo];
    for (size_t k = 0; k < nseed; k++)
        if (!isnan(lo_err[k]) && !isnan(hi_err[k])) {
            s->runs++;
            s->reach += hi_err[k] / lo_err[k] >= s->one_ratio;
        }
    rc = 0;
done:
    free(y1);
    free(lo_err);
    free(hi_err);
    free(below);
    free(seen);
    return rc;
}

/* The title: where the single run falls, when the numbers say. */
static void shuffles_title(const shuffles_t *s, bn_buf *t)
{
    buf_clear(t);
    if (s->overlay && s->pct_max <= 10)
        txf(t, "A single run (seed %s) is in the lowest 10%% of %g shuffles "
               "at every B",
            s->seed->val[0], s->nseeds);
    else if (s->overlay)
        txf(t, "A single run (seed %s) is one draw from %g shuffles",
            s->seed->val[0], s->nseeds);
    else if (s->have_d)
        txf(t, "stats_err over %g shuffles", s->nseeds);
    else
        txf(t, "The closed form against %g shuffles", s->nseeds);
}

/* The band subtitle: from which B on the published series' band is
 * narrower than its median line is thick (under 10 % on this canvas). */
static void band_title(const shuffles_t *s, bn_buf *t)
{
    buf_clear(t);
    if (!s->have_d)
        return;
    buf_printf(t, "{/:Bold ");
    txf(t, "%s over %g shuffles", score, s->nseeds);
    buf_printf(t, "}\nbands 5–95 %%, lines the median");
    size_t thin = s->nx;
    for (size_t k = s->nx; k-- > 0;) {
        if (gy(&s->g95, 0, s->one, k) / gy(&s->g05, 0, s->one, k) < 1.1)
            thin = k;
        else
            break;
    }
    if (thin < s->nx) {
        buf_printf(t, ";\nfrom ");
        at_x(t, &s->r, thin);
        buf_printf(t, " ");
        size_t at = t->len;
        series_words(t, s->x, &s->r, &s->g50, s->one, 1);
        buf_printf(t, t->len > at ? "'s band is thinner than its line"
                                  : "the band is thinner than its line");
    }
}

/* The single run's ratio of the largest B to the smallest, beside the
 * median's and the share of seeds that reach it. */
static void ratio_note(const shuffles_t *s, bn_buf *t)
{
    buf_clear(t);
    if (!s->overlay)
        return;
    series_words(t, s->x, &s->r, &s->g50, s->one, 1);
    if (t->len)
        buf_printf(t, ", ");
    txf(t, "B %s ÷ B %s:\n%.1f× for seed %s, %.1f× for the median;\n"
           "%.0f%% of shuffles reach %.1f×",
        s->r.x->val[s->hi], s->r.x->val[s->lo], s->one_ratio,
        s->seed->val[0],
        gy(&s->g50, 0, s->one, s->hi) / gy(&s->g50, 0, s->one, s->lo),
        s->runs > 0 ? 100.0 * s->reach / s->runs : NAN, s->one_ratio);
}

/* The closed form's worst disagreement, in standard errors. */
static void z_note(const shuffles_t *s, bn_buf *t)
{
    const table_t *e = &s->x->expect;
    double zmax = 0;
    if (s->have_e) {
        int cz = column(e, "z");
        for (size_t row = 0; row < e->t.nrow; row++) {
            double z = fabs(cell_num(e, row, cz));
            zmax = z > zmax ? z : zmax;
        }
    }
    buf_clear(t);
    if (s->have_e)
        txf(t, "agree within\n%.1f standard errors", zmax);
}

/* stats_err across the seeds (distribution.tsv: a band from the 5th to
 * the 95th percentile, the median as a line, and the first seed's run
 * set among them), and the closed form of the running mean's expected
 * error against the shuffles (expectation.tsv). */
int kind_shuffles(const plot_exp *x, figure_out *o, bn_error *err)
{
    shuffles_t s;
    int rc = shuffles_make(x, &s, err);
    if (rc <= 0) {
        shuffles_free(&s);
        return rc;
    }
    bn_buf *a = &o->assign, t = {0};
    strlist pct = {0};
    as_str(a, "dist", s.have_d ? x->dist.path : "");
    as_str(a, "expect", s.have_e ? x->expect.path : "");
    as_str(a, "score", score);
    as_num(a, "nseeds", s.nseeds);
    x_axis(a, s.r.x);
    x_label(&t, x, s.main, &s.r, x_is_log(s.r.x));
    as_str(a, "xlabel", sb_str(&t));
    int oom = as_series(a, x, s.main, &s.r, &s.g50, NULL, 0, &s.one) != 0 ||
              seed_overlay(&s, &t, &pct) != 0;
    if (!oom) {
        as_str(a, "seed1", s.overlay ? s.seed->val[0] : "");
        as_num(a, "overlay", s.overlay);
        as_num(a, "one", (double)(s.one + 1));
        as_strs(a, "pct", pct.v, pct.n);
        as_str(a, "summary", s.overlay ? x->sum.path : "");
        shuffles_title(&s, &t);
        as_str(a, "title", sb_str(&t));
        band_title(&s, &t);
        as_str(a, "bandtitle", sb_str(&t));
        ratio_note(&s, &t);
        as_str(a, "rationote", sb_str(&t));
        z_note(&s, &t);
        as_str(a, "znote", sb_str(&t));
        buf_printf(&o->what, "%s against batch_size",
                   s.have_d && s.have_e ? "stats_err across the seeds, and "
                                          "the closed form against them"
                   : s.have_d           ? "stats_err across the seeds"
                                        : "the closed form against the seeds");
        if (s.r.nsa)
            buf_printf(&o->what, ", a series per %s", s.r.series[0]->col);
    }
    rc = oom || t.failed || pct.oom ? bn_fail(err, "out of memory") : 1;
    buf_free(&t);
    sl_free(&pct);
    shuffles_free(&s);
    return rc;
}
