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

/* One figure of scores against the x axis, as curves() builds it. */
typedef struct {
    const plot_exp *x;
    const table_t *tb;
    roles_t r;
    const char *scores[2];
    size_t nsc, ns, np, nx;
    grid_t g[2]; /* each score's values (a score alone is in both) */
    grid_t gc;   /* batch_mean_err beside a single stats_err line */
    int single;  /* one line of one score */
    int by_b;    /* against the batch size */
    int comp;    /* batch_mean_err drawn beside it */
} curves_t;

/* The update count over each batch size, when the batch size alone sets
 * it (one epoch count, one partial rule): gnuplot's x2tics, or nothing. */
static void update_tics(const curves_t *c, bn_buf *t)
{
    const table_t *tb = c->tb;
    const axis_t *ax = c->r.x;
    int uc = column(tb, "updates");
    if (!c->by_b || c->np * c->nsc != 1 || uc < 0)
        return;
    double *T = malloc(c->nx * sizeof *T);
    int ok = T != NULL;
    for (size_t i = 0; ok && i < c->nx; i++)
        T[i] = NAN;
    for (size_t row = 0; ok && row < tb->t.nrow; row++) {
        size_t xi = val_index(ax, cell_of(&tb->t, row, ax));
        double v = cell_num(tb, row, uc);
        if (!isnan(T[xi]) && T[xi] != v)
            ok = 0;
        T[xi] = v;
    }
    for (size_t i = 0; ok && i < c->nx; i++)
        buf_printf(t, "%s\"%g\" %s", i ? ", " : "", T[i], ax->val[i]);
    if (!ok)
        buf_clear(t);
    free(T);
}

/* The data and the axes. */
static void as_x(const curves_t *c, bn_buf *a, bn_buf *t)
{
    as_str(a, "f", c->tb->path);
    as_str(a, "xcol", c->r.x->col);
    x_axis(a, c->r.x);
    x_label(t, c->x, c->tb, &c->r, x_is_log(c->r.x));
    as_str(a, "xlabel", sb_str(t));
    buf_clear(t);
    update_tics(c, t);
    as_str(a, "x2tics", sb_str(t));
}

/* The scores, their axes and their scales. */
static void as_scores(const curves_t *c, bn_buf *a)
{
    char *sc[2], *yl[2], *ys[2];
    double ylog[2], ylo[2], yhi[2], yzero[2];
    bn_buf ylb[2] = {{0}, {0}}, ysb[2] = {{0}, {0}};
    for (size_t k = 0; k < c->nsc; k++) {
        sc[k] = (char *)c->scores[k];
        tx(&ylb[k], score_words[score_word(c->scores[k])].axis);
        y_scale yk = y_scale_of(c->g[k].y, c->np * c->ns * c->nx);
        ylog[k] = yk.log;
        tx(&ysb[k], c->scores[k]);
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
    as_num(a, "nsc", (double)c->nsc);
    as_strs(a, "sc", sc, c->nsc);
    as_strs(a, "yl", yl, c->nsc);
    as_strs(a, "ys", ys, c->nsc);
    as_nums(a, "ylog", ylog, c->nsc);
    as_nums(a, "ylo", ylo, c->nsc);
    as_nums(a, "yhi", yhi, c->nsc);
    as_nums(a, "yzero", yzero, c->nsc);
    for (size_t k = 0; k < c->nsc; k++) {
        buf_free(&ylb[k]);
        buf_free(&ysb[k]);
    }
}

/* The panels and the series; -1 when out of memory. */
static int as_panels(const curves_t *c, bn_buf *a)
{
    const axis_t *pa = c->r.panel;
    as_num(a, "np", (double)c->np);
    buf_printf(a, "pkey(d) = %s; ", pa ? "strcol(pcol)" : "\"\"");
    as_str(a, "pcol", pa ? pa->col : "");
    as_strs(a, "pv", pa ? (char *const *)pa->val : NULL, pa ? c->np : 0);
    const grid_t *gs[2] = {&c->g[0], &c->g[1]};
    return as_series(a, c->x, c->tb, &c->r, &c->g[0], gs, c->nsc, NULL);
}

/* One line of one score alone: the published batch-size figure draws
 * one batch's mean error beside it, a finding only if both move as the
 * published claim says. */
static void as_companion(const curves_t *c, bn_buf *a, bn_buf *t)
{
    as_str(a, "comp", c->comp ? "batch_mean_err" : "");
    buf_clear(t);
    tx(t, "one batch's mean: batch_mean_err (used in train)");
    as_str(a, "comptitle", sb_str(t));
    buf_clear(t);
    tx(t, "running statistics after training: stats_err (used in eval)");
    as_str(a, "mtitle", c->comp ? sb_str(t) : "");
}

/* Rings on the lowest series at each x, when the series are the values
 * of one number. */
static void as_best(const curves_t *c, bn_buf *a, bn_buf *t)
{
    as_num(a, "best", c->r.nsa == 1 && c->r.series[0]->numeric && c->ns > 1);
    buf_clear(t);
    txf(t, "lowest at this %s", x_words[x_word(c->r.x->key)].noun);
    as_str(a, "bestlabel", sb_str(t));
}

/* Labels over each order's points: its ratio to shuffled batches at the
 * same x. -1 when out of memory. */
static int as_ratios(const curves_t *c, bn_buf *a, bn_buf *t)
{
    size_t ns = c->ns;
    size_t base = c->r.nsa == 1 && c->r.series[0]->key == KEY_ORDER
                      ? sl_find(&c->g[0].skey, "shuffled")
                      : ns;
    strlist lab = {0};
    as_num(a, "base", base < ns && ns > 1 ? (double)(base + 1) : 0);
    for (size_t k = 0; k < c->nsc; k++)
        for (size_t p = 0; p < c->np; p++)
            for (size_t s = 0; s < ns; s++)
                for (size_t xi = 0; xi < c->nx; xi++) {
                    double y = gy(&c->g[k], p, s, xi);
                    double yb = base < ns ? gy(&c->g[k], p, base, xi) : NAN;
                    buf_clear(t);
                    if (base < ns && s != base && yb >= EXACT && y >= EXACT)
                        buf_printf(t, "×%.1f", y / yb);
                    sl_push(&lab, sb_str(t));
                }
    as_strs(a, "lab", lab.v, lab.n);
    buf_clear(t);
    if (base < ns && ns > 1)
        txf(t, "labels: each order ÷ shuffled batches at the same %s",
            x_words[x_word(c->r.x->key)].sym);
    as_str(a, "labnote", sb_str(t));
    int oom = lab.oom;
    sl_free(&lab);
    return oom ? -1 : 0;
}

/* The title's finding, where the numbers bear one out, and the note on a
 * single line's two ends. */
static void finding(const curves_t *c, bn_buf *t, bn_buf *u)
{
    const roles_t *r = &c->r;
    const char *xnoun = x_words[x_word(r->x->key)].noun;
    if (c->comp) {
        double m0 = gy(&c->gc, 0, 0, 0), m1 = gy(&c->gc, 0, 0, c->nx - 1);
        double s0 = gy(&c->g[0], 0, 0, 0), s1 = gy(&c->g[0], 0, 0, c->nx - 1);
        if (m1 < m0 && s1 > s0)
            buf_printf(t, "Bigger batches estimate better, yet eval-mode "
                          "statistics get worse");
        else
            tx(t, "stats_err and batch_mean_err against batch size");
        ends_note(u, r, &c->g[0], 0, c->scores[0]);
    } else if (c->single) {
        tx(t, c->scores[0]);
        buf_printf(t, " against %s", xnoun);
        ends_note(u, r, &c->g[0], 0, c->scores[0]);
    } else if (c->np * c->nsc == 1) {
        if (r->nsa == 1 && r->series[0]->key == KEY_NEW_WEIGHT && c->by_b &&
            strcmp(c->scores[0], "stats_err") == 0 && best_p_grows(&c->g[0]))
            buf_printf(t, "Fewer updates need a larger EMA weight p");
        else
            panel_finding(t, c->x, r, &c->g[0], 0, c->scores[0], 0);
        if (t->len)
            capitalise(t, 0);
    }
}

/* What the figure draws, when no finding makes its title: "stats_err
 * against batch size, by estimator, a panel per order". */
static void description(const curves_t *c, bn_buf *t)
{
    const roles_t *r = &c->r;
    for (size_t k = 0; k < c->nsc; k++) {
        buf_printf(t, k ? " and " : "");
        tx(t, c->scores[k]);
    }
    buf_printf(t, " against %s", x_words[x_word(r->x->key)].noun);
    if (r->nsa) {
        buf_printf(t, ", by ");
        for (size_t i = 0; i < r->nsa; i++) {
            buf_printf(t, i ? " and " : "");
            tx(t, axis_noun(r->series[i]));
        }
    }
    if (r->panel) {
        buf_printf(t, ", a panel per ");
        tx(t, axis_noun(r->panel));
    }
}

/* Each panel's title, with its findings, when there are two or more
 * panels; -1 when out of memory. */
static int as_panel_titles(const curves_t *c, bn_buf *a, bn_buf *t)
{
    const roles_t *r = &c->r;
    strlist st = {0};
    for (size_t k = 0; k < c->nsc; k++)
        for (size_t p = 0; p < c->np; p++) {
            buf_clear(t);
            if (c->np * c->nsc > 1) {
                buf_printf(t, "{/:Bold ");
                if (r->panel)
                    value_words(t, c->x, r->panel, r->panel->val[p], 1);
                if (r->panel && c->nsc > 1)
                    buf_printf(t, ", ");
                if (c->nsc > 1)
                    tx(t, c->scores[k]);
                buf_printf(t, "}\n");
                if (c->ns > 1)
                    panel_finding(t, c->x, r, &c->g[k], p, c->scores[k], 1);
                else
                    ends_note(t, r, &c->g[k], p, c->scores[k]);
            }
            sl_push(&st, sb_str(t));
        }
    as_strs(a, "st", st.v, st.n);
    int oom = st.oom;
    sl_free(&st);
    return oom ? -1 : 0;
}

/* The title, the panels' titles and the note: findings where the
 * numbers bear them out. -1 when out of memory. */
static int as_titles(const curves_t *c, bn_buf *a, bn_buf *t)
{
    bn_buf u = {0};
    buf_clear(t);
    finding(c, t, &u);
    if (!t->len)
        description(c, t);
    as_str(a, "title", sb_str(t));
    as_str(a, "note", sb_str(&u));
    int oom = u.failed;
    buf_free(&u);
    return as_panel_titles(c, a, t) != 0 || oom ? -1 : 0;
}

static void what(const curves_t *c, bn_buf *w, const char *kind_words)
{
    const roles_t *r = &c->r;
    buf_printf(w, "%s against %s", kind_words, r->x->col);
    if (r->nsa) {
        buf_printf(w, ", a series per");
        for (size_t i = 0; i < r->nsa; i++)
            buf_printf(w, "%s %s", i ? " and" : "", r->series[i]->col);
    }
    if (r->panel)
        buf_printf(w, ", a panel per %s", r->panel->col);
}

/* The scores of want[] in the file, its roles and its grids: 0 when the
 * file supports no such figure, -1 on a failure. */
static int curves_make(const plot_exp *x, const char *const *want,
                       size_t nwant, curves_t *c, bn_error *err)
{
    memset(c, 0, sizeof *c);
    c->x = x;
    c->tb = &x->sum;
    for (size_t i = 0; i < nwant; i++)
        if (column(c->tb, want[i]) >= 0)
            c->scores[c->nsc++] = want[i];
    if (!c->tb->ok || c->nsc == 0 || !one_seed(c->tb))
        return 0;
    roles_of(c->tb, 1, c->nsc, &c->r);
    if (!c->r.x)
        return 0;
    for (size_t k = 0; k < 2; k++)
        if (grid_make(c->tb, &c->r, c->scores[k < c->nsc ? k : 0], NULL,
                      NULL, &c->g[k], err) != 0)
            return -1;
    c->ns = c->g[0].ns;
    c->np = c->g[0].np;
    c->nx = c->g[0].nx;
    c->single = c->ns == 1 && c->np == 1 && c->nsc == 1;
    c->by_b = c->r.x->key == KEY_BATCH_SIZE;
    c->comp = c->single && c->by_b && strcmp(c->scores[0], "stats_err") == 0 &&
              column(c->tb, "batch_mean_err") >= 0;
    if (c->comp && grid_make(c->tb, &c->r, "batch_mean_err", NULL, NULL,
                             &c->gc, err) != 0)
        return -1;
    return 1;
}

static void curves_free(curves_t *c)
{
    grid_free(&c->g[0]);
    grid_free(&c->g[1]);
    grid_free(&c->gc);
}

/* Scores against the x axis: one figure per kind, want[] its panels'
 * rows (those the file has), series and panels by the roles; the
 * published look of batch-size, momentum, ordering and estimators for
 * their experiments. */
static int curves(const plot_exp *x, figure_out *o, const char *const *want,
                  size_t nwant, const char *kind_words, bn_error *err)
{
    curves_t c;
    int rc = curves_make(x, want, nwant, &c, err);
    if (rc <= 0) {
        curves_free(&c);
        return rc;
    }
    bn_buf *a = &o->assign, t = {0};
    as_x(&c, a, &t);
    as_scores(&c, a);
    int oom = as_panels(&c, a) != 0;
    if (!oom) {
        as_companion(&c, a, &t);
        as_best(&c, a, &t);
        oom = as_ratios(&c, a, &t) != 0;
        oom |= as_titles(&c, a, &t) != 0;
        what(&c, &o->what, kind_words);
    }
    rc = oom || t.failed ? bn_fail(err, "out of memory") : 1;
    buf_free(&t);
    curves_free(&c);
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
