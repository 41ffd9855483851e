/*
 * The init-weight figure (scripts/init-weight.gp): the weight (1 - p)^T
 * the initial values keep after T updates for each p of the ema runs,
 * and the runs' measured init_weight on it.
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_ema(const table_t *tb, size_t row, const void *ctx)
{
    (void)ctx;
    int c = column(tb, "estimator");
    return c < 0 || strcmp(tsv_cell(&tb->t, row, (size_t)c), "ema") == 0;
}

/* An update count T and the batch size of its runs. */
typedef struct {
    double T, B;
} t_and_b;

static int cmp_t(const void *a, const void *b)
{
    return cmp_double(&((const t_and_b *)a)->T, &((const t_and_b *)b)->T);
}

/* The init-weight figure as kind_init_weight builds it. */
typedef struct {
    const plot_exp *x;
    const table_t *tb;   /* summary.tsv */
    int cu, cw, cp, cb;  /* its updates, init_weight, new_weight, batch_size */
    t_and_b *ts;         /* the ema runs' update counts, ascending */
    size_t nT;
    double *pv;          /* their new-value weights, ascending */
    size_t np;
    int one_b;           /* each T from one batch size, each its own */
} init_t;

/* The ema runs' update counts (with their batch size) and weights p. */
static void collect(init_t *w)
{
    const table_t *tb = w->tb;
    w->one_b = w->cb >= 0;
    for (size_t row = 0; row < tb->t.nrow; row++) {
        if (!is_ema(tb, row, NULL))
            continue;
        double T = cell_num(tb, row, w->cu), p = cell_num(tb, row, w->cp);
        double B = cell_num(tb, row, w->cb);
        size_t i = 0;
        while (i < w->nT && w->ts[i].T != T)
            i++;
        if (i == w->nT) {
            w->ts[w->nT++] = (t_and_b){T, B};
        } else if (w->ts[i].B != B) {
            w->one_b = 0;
        }
        for (i = 0; i < w->np && w->pv[i] != p; i++)
            ;
        if (i == w->np)
            w->pv[w->np++] = p;
    }
}

/* Tics: each T, and over it the batch size that gives it when one
 * does. */
static void as_tics(init_t *w, bn_buf *a, bn_buf *t)
{
    for (size_t i = 0; i < w->nT; i++)
        for (size_t j = i + 1; j < w->nT; j++)
            if (w->ts[j].B == w->ts[i].B)
                w->one_b = 0;
    qsort(w->ts, w->nT, sizeof *w->ts, cmp_t);
    as_num(a, "Tmin", w->ts[0].T);
    as_num(a, "Tmax", w->ts[w->nT - 1].T);
    buf_clear(t);
    for (size_t i = 0; i < w->nT; i++)
        buf_printf(t, "%s%g", i ? ", " : "", w->ts[i].T);
    as_str(a, "Ttics", sb_str(t));
    buf_clear(t);
    for (size_t i = 0; w->one_b && i < w->nT; i++)
        buf_printf(t, "%s\"%g\" %g", i ? ", " : "", w->ts[i].B, w->ts[i].T);
    as_str(a, "x2tics", sb_str(t));
}

/* The curves: one per p, the published one black. -1 when out of
 * memory. */
static int as_weights(const init_t *w, bn_buf *a, bn_buf *t)
{
    double pub = w->x->published_p;
    strlist pl = {0}, pr = {0};
    as_num(a, "np", (double)w->np);
    as_nums(a, "pv", w->pv, w->np);
    for (size_t i = 0; i < w->np; i++) {
        buf_clear(t);
        if (same(w->pv[i], pub))
            txf(t, "published: %g old = %g new", 1 - w->pv[i], w->pv[i]);
        else
            txf(t, "p = %g  (%g old)", w->pv[i], 1 - w->pv[i]);
        sl_push(&pl, sb_str(t));
        sl_push(&pr, same(w->pv[i], pub) ? "published" : "seq");
    }
    as_strs(a, "pl", pl.v, w->np);
    as_strs(a, "prole", pr.v, w->np);
    int oom = pl.oom || pr.oom;
    sl_free(&pl);
    sl_free(&pr);
    return oom ? -1 : 0;
}

/* The weight left after the fewest updates, for the published p when it
 * is there, else the first: its label, and the title that states it. */
static void as_weight_left(const init_t *w, bn_buf *a, bn_buf *t)
{
    const table_t *tb = w->tb;
    double Tmin = w->ts[0].T, p = w->pv[0], left = NAN;
    for (size_t i = 0; i < w->np; i++)
        if (same(w->pv[i], w->x->published_p))
            p = w->pv[i];
    for (size_t row = 0; row < tb->t.nrow; row++)
        if (is_ema(tb, row, NULL) && cell_num(tb, row, w->cu) == Tmin &&
            same(cell_num(tb, row, w->cp), p))
            left = cell_num(tb, row, w->cw);
    as_num(a, "p_at", p);
    as_num(a, "w_at", left);
    buf_clear(t);
    txf(t, "%.2f at T = %g", left, Tmin);
    if (w->one_b)
        txf(t, " (B = %g)", w->ts[0].B);
    txf(t, ", p = %g", p);
    as_str(a, "wlabel", sb_str(t));
    buf_clear(t);
    txf(t, "After %g update%s the initial values still carry %.2g%% of "
           "the weight",
        Tmin, Tmin == 1 ? "" : "s", 100 * left);
    if (w->np > 1)
        txf(t, " (p = %g)", p);
    as_str(a, "title", sb_str(t));
}

/* T as the runs count it: E epochs of ⌊N / B⌋ batches (⌈N / B⌉ with a
 * last partial batch kept). */
static void as_updates_label(const init_t *w, bn_buf *a, bn_buf *t)
{
    double rows = w->x->rows;
    buf_clear(t);
    const axis_t *ep = axis_of(w->tb, KEY_EPOCHS),
                 *pa = axis_of(w->tb, KEY_PARTIAL),
                 *ln = axis_of(w->tb, KEY_SEQ_LENGTH);
    int keep = pa && pa->n == 1 && strcmp(pa->val[0], "keep") == 0;
    const char *frac = keep ? "⌈N / B⌉" : "⌊N / B⌋", *unit = "rows";
    /* Padded sequences: a batch is B whole sequences of L rows. */
    int seq_varies = ln && ln->n > 1;
    if (ln && ln->n == 1 && num(ln->val[0]) > 0)
        rows /= num(ln->val[0]), unit = "sequences";
    if (ep && ep->n == 1 && (!pa || pa->n == 1) && !isnan(rows) &&
        !seq_varies) {
        double e = num(ep->val[0]);
        if (e == 1)
            txf(t, "EMA updates in one epoch, T = %s, N = %.0f %s", frac,
                rows, unit);
        else
            txf(t, "EMA updates in %g epochs, T = %g %s, N = %.0f %s", e,
                e, frac, rows, unit);
    } else {
        tx(t, "EMA updates T");
        if (!isnan(rows) && !seq_varies)
            txf(t, ", N = %.0f %s", rows, unit);
    }
    tx(t, " (log₂ scale)");
    as_str(a, "xlabel", sb_str(t));
}

/* (1 - p)^T for each p of the ema runs, and their measured init_weight
 * against their update counts T. */
int kind_init_weight(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->sum;
    init_t w = {.x = x, .tb = tb, .cu = column(tb, "updates"),
                .cw = column(tb, "init_weight"),
                .cp = column(tb, "new_weight"),
                .cb = column(tb, "batch_size")};
    if (!tb->ok || w.cu < 0 || w.cw < 0 || w.cp < 0 || predictions(x))
        return 0;
    size_t n = tb->t.nrow ? tb->t.nrow : 1;
    w.ts = malloc(n * sizeof *w.ts);
    w.pv = malloc(n * sizeof *w.pv);
    int rc = 0;
    bn_buf *a = &o->assign, t = {0};
    if (!w.ts || !w.pv) {
        rc = bn_fail(err, "out of memory");
        goto done;
    }
    collect(&w);
    if (w.nT < 2)
        goto done;
    qsort(w.pv, w.np, sizeof *w.pv, cmp_double);
    as_str(a, "f", tb->path);
    as_tics(&w, a, &t);
    int oom = as_weights(&w, a, &t) != 0;
    as_weight_left(&w, a, &t);
    as_updates_label(&w, a, &t);
    buf_printf(&o->what, "(1 - p)^T for p in the ema runs, and their "
                         "init_weight against updates");
    rc = oom || t.failed ? bn_fail(err, "out of memory") : 1;
done:
    free(w.ts);
    free(w.pv);
    buf_free(&t);
    return rc;
}
