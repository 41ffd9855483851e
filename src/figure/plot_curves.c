/*
 * The figures of scores against an x axis (stats-err, train-eval,
 * scripts/curves.gp): a panel per score and per value of the panel axis,
 * a series per value of the others, and the findings the numbers bear
 * out ("Bigger batches estimate better, yet eval-mode statistics get
 * worse", "only precise reaches the truth", an order's ratio to shuffled
 * batches).
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The findings of one panel of one score, with two or more series, as
 * lower-case phrases (nothing when the numbers support none): an order
 * against shuffled batches at every x; else a single exact series, and
 * which series are worse at the largest x than at the smallest. all: every
 * finding, a line each; else the first. */
static void panel_finding(bn_buf *b, const plot_exp *x, const roles_t *r,
                          const grid_t *g, size_t p, const char *score,
                          int all)
{
    size_t ns = g->ns, nx = g->nx, lo = 0, hi = nx - 1;
    size_t sw = score_word(score);
    if (ns < 2 || nx < 2)
        return;
    if (r->nsa == 1 && r->series[0]->key == KEY_ORDER) {
        size_t base = sl_find(&g->skey, "shuffled");
        int above = base < ns, compared = 0;
        for (size_t s = 0; s < ns && above; s++)
            for (size_t xi = 0; xi < nx && s != base; xi++) {
                double y = gy(g, p, s, xi), yb = gy(g, p, base, xi);
                if (isnan(y) || isnan(yb))
                    continue;
                compared = 1;
                above = above && y > yb;
            }
        if (above && compared && score_words[sw].worse) {
            if (ns == 2)
                series_words(b, x, r, g, base == 0, 1);
            else
                buf_printf(b, "the other orders");
            buf_printf(b, " %s at every %s",
                       score_words[sw].worse, x_words[x_word(r->x->key)].noun);
            return;
        }
    }
    size_t n_exact = 0, exact = 0, n_worse = 0, worse = 0;
    for (size_t s = 0; s < ns; s++) {
        int all = 1, any = 0;
        for (size_t xi = 0; xi < nx; xi++) {
            double y = gy(g, p, s, xi);
            if (isnan(y))
                continue;
            any = 1;
            all = all && y < EXACT;
        }
        if (any && all) {
            n_exact++;
            exact = s;
        }
        double ylo = gy(g, p, s, lo), yhi = gy(g, p, s, hi);
        if (yhi > ylo) {
            n_worse++;
            worse = s;
        }
    }
    /* An order is a plural noun ("batches sorted by f0"). */
    int plural = r->nsa == 1 && r->series[0]->key == KEY_ORDER;
    int zero = n_exact == 1 && score_words[sw].zero[0];
    if (zero) {
        buf_printf(b, "only ");
        series_words(b, x, r, g, exact, 1);
        buf_printf(b, " %s", score_words[sw].zero[plural]);
        if (!all)
            return;
    }
    const char *noun = r->nsa == 1 ? axis_noun(r->series[0]) : "series";
    if (n_worse == 1 || n_worse == ns || n_worse == 0)
        buf_printf(b, zero ? "\n" : "");
    if (n_worse == 1) {
        buf_printf(b, "only ");
        series_words(b, x, r, g, worse, 1);
        buf_printf(b, plural ? " are worse" : " is worse");
    } else if (n_worse == ns) {
        buf_printf(b, "every %s is worse", noun);
    } else if (n_worse == 0) {
        buf_printf(b, "no %s is worse", noun);
    } else {
        return;
    }
    buf_printf(b, " at ");
    at_x(b, r, hi);
    buf_printf(b, " than at ");
    at_x(b, r, lo);
}

/* How a single series compares at its two ends: "stats_err 11.5× higher
 * at B = 256 than at B = 8". */
static void ends_note(bn_buf *b, const roles_t *r, const grid_t *g, size_t p,
                      const char *score)
{
    size_t lo = 0, hi = g->nx - 1;
    double ylo = gy(g, p, 0, lo), yhi = gy(g, p, 0, hi);
    if (!(ylo >= EXACT) || !(yhi >= EXACT))
        return;
    tx(b, score);
    if (yhi >= 1.05 * ylo)
        buf_printf(b, " %.1f× higher\nat ", yhi / ylo);
    else if (ylo >= 1.05 * yhi)
        buf_printf(b, " %.1f× lower\nat ", ylo / yhi);
    else
        buf_printf(b, " within 5%% at ");
    at_x(b, r, hi);
    buf_printf(b, yhi >= 1.05 * ylo || ylo >= 1.05 * yhi ? " than at "
                                                         : " and ");
    at_x(b, r, lo);
}

/* The lowest series at each x climbs with x (x the batch size, series
 * the new-value weight): fewer updates need a larger p. */
static int best_p_grows(const grid_t *g)
{
    double prev = -INFINITY, first = NAN, last = NAN;
    for (size_t xi = 0; xi < g->nx; xi++) {
        size_t best = g->ns;
        for (size_t s = 0; s < g->ns; s++) {
            double y = gy(g, 0, s, xi);
            if (!isnan(y) && (best == g->ns || y < gy(g, 0, best, xi)))
                best = s;
        }
        if (best == g->ns)
            return 0;
        double p = num(g->skey.v[best]);
        if (p < prev)
            return 0;
        prev = p;
        if (xi == 0)
            first = p;
        last = p;
    }
    return last > first;
}

/* Scores against the x axis: one figure per kind, scores[] its panels'
 * rows, series and panels by the roles; the published look of
 * batch-size, momentum, ordering and estimators for their experiments. */
static int curves(const plot_exp *x, figure_out *o, const char *const *want,
                  size_t nwant, const char *kind_words, bn_error *err)
{
    const table_t *tb = &x->sum;
    const char *scores[2];
    size_t nsc = 0;
    for (size_t i = 0; i < nwant; i++)
        if (column(tb, want[i]) >= 0)
            scores[nsc++] = want[i];
    if (!tb->ok || nsc == 0 || !one_seed(tb))
        return 0;
    roles_t r;
    roles_of(tb, 1, nsc, &r);
    if (!r.x)
        return 0;
    grid_t g[2];
    memset(g, 0, sizeof g);
    int rc = -1;
    bn_buf t = {0}, u = {0};
    strlist st = {0}, lab = {0};
    for (size_t k = 0; k < 2; k++)
        if (grid_make(tb, &r, scores[k < nsc ? k : 0], NULL, NULL, &g[k],
                      err) != 0)
            goto done;
    size_t ns = g[0].ns, np = g[0].np, nx = g[0].nx;
    bn_buf *a = &o->assign;
    int single = ns == 1 && np == 1 && nsc == 1;
    int by_b = r.x->key == KEY_BATCH_SIZE;

    /* The data and the axes. */
    as_str(a, "f", tb->path);
    as_str(a, "xcol", r.x->col);
    x_axis(a, r.x);
    x_label(&t, x, tb, &r, x_is_log(r.x));
    as_str(a, "xlabel", sb_str(&t));

    /* The update count over each batch size, when the batch size alone
     * sets it (one epoch count, one partial rule). */
    buf_clear(&t);
    int uc = column(tb, "updates");
    if (by_b && np * nsc == 1 && uc >= 0) {
        double *T = malloc(nx * sizeof *T);
        int ok = T != NULL;
        for (size_t i = 0; ok && i < nx; i++)
            T[i] = NAN;
        for (size_t row = 0; ok && row < tb->t.nrow; row++) {
            size_t xi = val_index(r.x, cell_of(&tb->t, row, r.x));
            double v = cell_num(tb, row, uc);
            if (!isnan(T[xi]) && T[xi] != v)
                ok = 0;
            T[xi] = v;
        }
        for (size_t i = 0; ok && i < nx; i++)
            buf_printf(&t, "%s\"%g\" %s", i ? ", " : "", T[i], r.x->val[i]);
        if (!ok)
            buf_clear(&t);
        free(T);
    }
    as_str(a, "x2tics", sb_str(&t));

    /* The scores, their axes and their scales. */
    char *sc[2], *yl[2], *ys[2];
    double ylog[2], ylo[2], yhi[2], yzero[2];
    bn_buf ylb[2] = {{0}, {0}}, ysb[2] = {{0}, {0}};
    for (size_t k = 0; k < nsc; k++) {
        sc[k] = (char *)scores[k];
        tx(&ylb[k], score_words[score_word(scores[k])].axis);
        y_scale yk = y_scale_of(g[k].y, np * ns * nx);
        ylog[k] = yk.log;
        tx(&ysb[k], scores[k]);
        if (ylog[k]) {
            tx(&ylb[k], " (log scale)");
            tx(&ysb[k], " (log scale)");
        }
        ylo[k] = yk.lo;
        yhi[k] = yk.hi;
        yzero[k] = yk.zero;
        yl[k] = (char *)sb_str(&ylb[k]);
        ys[k] = (char *)sb_str(&ysb[k]);
    }
    as_num(a, "nsc", (double)nsc);
    as_strs(a, "sc", sc, nsc);
    as_strs(a, "yl", yl, nsc);
    as_strs(a, "ys", ys, nsc);
    as_nums(a, "ylog", ylog, nsc);
    as_nums(a, "ylo", ylo, nsc);
    as_nums(a, "yhi", yhi, nsc);
    as_nums(a, "yzero", yzero, nsc);
    for (size_t k = 0; k < nsc; k++) {
        buf_free(&ylb[k]);
        buf_free(&ysb[k]);
    }

    /* The panels and the series. */
    as_num(a, "np", (double)np);
    buf_printf(a, "pkey(d) = %s; ", r.panel ? "strcol(pcol)" : "\"\"");
    as_str(a, "pcol", r.panel ? r.panel->col : "");
    as_strs(a, "pv", r.panel ? (char *const *)r.panel->val : NULL,
            r.panel ? np : 0);
    const grid_t *gs[2] = {&g[0], &g[1]};
    if (as_series(a, x, tb, &r, &g[0], gs, nsc, NULL) != 0) {
        bn_fail(err, "out of memory");
        goto done;
    }

    /* One line of one score alone: the published batch-size figure draws
     * one batch's mean error beside it, a finding only if both move as
     * the published claim says. */
    int comp = single && by_b && strcmp(scores[0], "stats_err") == 0 &&
               column(tb, "batch_mean_err") >= 0;
    grid_t gc = {0};
    if (comp && grid_make(tb, &r, "batch_mean_err", NULL, NULL, &gc, err))
        goto done;
    as_str(a, "comp", comp ? "batch_mean_err" : "");
    buf_clear(&t);
    tx(&t, "one batch's mean: batch_mean_err (used in train)");
    as_str(a, "comptitle", sb_str(&t));
    buf_clear(&t);
    tx(&t, "running statistics after training: stats_err (used in eval)");
    as_str(a, "mtitle", comp ? sb_str(&t) : "");

    /* Rings on the lowest series at each x, when the series are the
     * values of one number. */
    int best = r.nsa == 1 && r.series[0]->numeric && ns > 1;
    as_num(a, "best", best);
    buf_clear(&t);
    txf(&t, "lowest at this %s", x_words[x_word(r.x->key)].noun);
    as_str(a, "bestlabel", sb_str(&t));

    /* Labels over each order's points: its ratio to shuffled batches at
     * the same x. */
    size_t base = r.nsa == 1 && r.series[0]->key == KEY_ORDER
                      ? sl_find(&g[0].skey, "shuffled")
                      : ns;
    as_num(a, "base", base < ns && ns > 1 ? (double)(base + 1) : 0);
    for (size_t k = 0; k < nsc; k++)
        for (size_t p = 0; p < np; p++)
            for (size_t s = 0; s < ns; s++)
                for (size_t xi = 0; xi < nx; xi++) {
                    double y = gy(&g[k], p, s, xi);
                    double yb = base < ns ? gy(&g[k], p, base, xi) : NAN;
                    buf_clear(&t);
                    if (base < ns && s != base && yb >= EXACT && y >= EXACT)
                        buf_printf(&t, "×%.1f", y / yb);
                    sl_push(&lab, sb_str(&t));
                }
    as_strs(a, "lab", lab.v, lab.n);
    buf_clear(&t);
    if (base < ns && ns > 1)
        txf(&t, "labels: each order ÷ shuffled batches at the same %s",
            x_words[x_word(r.x->key)].sym);
    as_str(a, "labnote", sb_str(&t));

    /* The title, the panels' titles and the note: findings where the
     * numbers bear them out. */
    buf_clear(&t);
    buf_clear(&u);
    const char *xnoun = x_words[x_word(r.x->key)].noun;
    if (comp) {
        double m0 = gy(&gc, 0, 0, 0), m1 = gy(&gc, 0, 0, nx - 1);
        double s0 = gy(&g[0], 0, 0, 0), s1 = gy(&g[0], 0, 0, nx - 1);
        if (m1 < m0 && s1 > s0)
            buf_printf(&t, "Bigger batches estimate better, yet eval-mode "
                           "statistics get worse");
        else
            tx(&t, "stats_err and batch_mean_err against batch size");
        ends_note(&u, &r, &g[0], 0, scores[0]);
    } else if (single) {
        tx(&t, scores[0]);
        buf_printf(&t, " against %s", xnoun);
        ends_note(&u, &r, &g[0], 0, scores[0]);
    } else if (np * nsc == 1) {
        if (r.nsa == 1 && r.series[0]->key == KEY_NEW_WEIGHT && by_b &&
            strcmp(scores[0], "stats_err") == 0 && best_p_grows(&g[0]))
            buf_printf(&t, "Fewer updates need a larger EMA weight p");
        else
            panel_finding(&t, x, &r, &g[0], 0, scores[0], 0);
        if (t.len)
            capitalise(&t, 0);
    }
    if (!t.len) {
        for (size_t k = 0; k < nsc; k++) {
            buf_printf(&t, k ? " and " : "");
            tx(&t, scores[k]);
        }
        buf_printf(&t, " against %s", xnoun);
        if (r.nsa) {
            buf_printf(&t, ", by ");
            for (size_t i = 0; i < r.nsa; i++) {
                buf_printf(&t, i ? " and " : "");
                tx(&t, axis_noun(r.series[i]));
            }
        }
        if (r.panel) {
            buf_printf(&t, ", a panel per ");
            tx(&t, axis_noun(r.panel));
        }
    }
    as_str(a, "title", sb_str(&t));
    as_str(a, "note", sb_str(&u));
    for (size_t k = 0; k < nsc; k++)
        for (size_t p = 0; p < np; p++) {
            buf_clear(&t);
            if (np * nsc > 1) {
                buf_printf(&t, "{/:Bold ");
                if (r.panel)
                    value_words(&t, x, r.panel, r.panel->val[p], 1);
                if (r.panel && nsc > 1)
                    buf_printf(&t, ", ");
                if (nsc > 1)
                    tx(&t, scores[k]);
                buf_printf(&t, "}\n");
                if (ns > 1)
                    panel_finding(&t, x, &r, &g[k], p, scores[k], 1);
                else
                    ends_note(&t, &r, &g[k], p, scores[k]);
            }
            sl_push(&st, sb_str(&t));
        }
    as_strs(a, "st", st.v, st.n);

    buf_printf(&o->what, "%s against %s", kind_words, r.x->col);
    if (r.nsa) {
        buf_printf(&o->what, ", a series per");
        for (size_t i = 0; i < r.nsa; i++)
            buf_printf(&o->what, "%s %s", i ? " and" : "", r.series[i]->col);
    }
    if (r.panel)
        buf_printf(&o->what, ", a panel per %s", r.panel->col);
    grid_free(&gc);
    rc = 1;
    if (t.failed || u.failed || st.oom || lab.oom)
        rc = bn_fail(err, "out of memory");
done:
    grid_free(&g[0]);
    grid_free(&g[1]);
    buf_free(&t);
    buf_free(&u);
    sl_free(&st);
    sl_free(&lab);
    return rc;
}

int kind_stats_err(const plot_exp *x, figure_out *o, bn_error *err)
{
    const char *scores[2] = {"stats_err", "stats_err_rel"};
    if (predictions(x))
        return 0;
    return curves(x, o, scores, x->scales_differ ? 2 : 1,
                  x->scales_differ ? "stats_err and stats_err_rel"
                                   : "stats_err",
                  err);
}

int kind_train_eval(const plot_exp *x, figure_out *o, bn_error *err)
{
    const char *scores[1] = {"train_eval_rmse"};
    return curves(x, o, scores, 1, "train_eval_rmse", err);
}
