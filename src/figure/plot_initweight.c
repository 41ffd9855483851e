/*
 * The init-weight figure (scripts/init-weight.gp): the weight (1 - p)^T
 * the initial values keep after T updates for each p of the ema runs,
 * and the runs' measured init_weight on it.
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the initial values' weight ---- */

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

/* (1 - p)^T for each p of the ema runs, and their measured init_weight
 * against their update counts T. */
int kind_init_weight(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->sum;
    int cu = column(tb, "updates"), cw = column(tb, "init_weight"),
        cp = column(tb, "new_weight"), cb = column(tb, "batch_size");
    if (!tb->ok || cu < 0 || cw < 0 || cp < 0 || predictions(x))
        return 0;
    size_t n = tb->t.nrow, nT = 0, np = 0;
    t_and_b *ts = malloc((n ? n : 1) * sizeof *ts);
    double *pv = malloc((n ? n : 1) * sizeof *pv);
    bn_buf t = {0};
    strlist pl = {0}, pr = {0};
    int rc = -1, one_b = cb >= 0;
    if (!ts || !pv) {
        bn_fail(err, "out of memory");
        goto done;
    }
    for (size_t row = 0; row < n; row++) {
        if (!is_ema(tb, row, NULL))
            continue;
        double T = cell_num(tb, row, cu), p = cell_num(tb, row, cp);
        double B = cell_num(tb, row, cb);
        size_t i = 0;
        while (i < nT && ts[i].T != T)
            i++;
        if (i == nT) {
            ts[nT++] = (t_and_b){T, B};
        } else if (ts[i].B != B) {
            one_b = 0;
        }
        for (i = 0; i < np && pv[i] != p; i++)
            ;
        if (i == np)
            pv[np++] = p;
    }
    if (nT < 2) {
        rc = 0;
        goto done;
    }
    qsort(pv, np, sizeof *pv, cmp_double);
    /* Tics: each T, and over it the batch size that gives it when one
     * does. */
    for (size_t i = 0; i < nT; i++)
        for (size_t j = i + 1; j < nT; j++)
            if (ts[j].B == ts[i].B)
                one_b = 0;
    qsort(ts, nT, sizeof *ts, cmp_t);
    double Tmin = ts[0].T, Tmax = ts[nT - 1].T, BTmin = ts[0].B;
    bn_buf *a = &o->assign;
    as_str(a, "f", tb->path);
    as_num(a, "Tmin", Tmin);
    as_num(a, "Tmax", Tmax);
    buf_clear(&t);
    for (size_t i = 0; i < nT; i++)
        buf_printf(&t, "%s%g", i ? ", " : "", ts[i].T);
    as_str(a, "Ttics", sb_str(&t));
    buf_clear(&t);
    for (size_t i = 0; one_b && i < nT; i++)
        buf_printf(&t, "%s\"%g\" %g", i ? ", " : "", ts[i].B, ts[i].T);
    as_str(a, "x2tics", sb_str(&t));
    /* The curves: one per p, the published one black. */
    as_num(a, "np", (double)np);
    as_nums(a, "pv", pv, np);
    for (size_t i = 0; i < np; i++) {
        buf_clear(&t);
        if (same(pv[i], x->published_p))
            txf(&t, "published: %g old = %g new", 1 - pv[i], pv[i]);
        else
            txf(&t, "p = %g  (%g old)", pv[i], 1 - pv[i]);
        sl_push(&pl, sb_str(&t));
        sl_push(&pr, same(pv[i], x->published_p) ? "published" : "seq");
    }
    as_strs(a, "pl", pl.v, np);
    as_strs(a, "prole", pr.v, np);
    /* The weight left after the fewest updates, for the published p when
     * it is there, else the first. */
    double p = pv[0], w = NAN;
    for (size_t i = 0; i < np; i++)
        if (same(pv[i], x->published_p))
            p = pv[i];
    for (size_t row = 0; row < n; row++)
        if (is_ema(tb, row, NULL) && cell_num(tb, row, cu) == Tmin &&
            same(cell_num(tb, row, cp), p))
            w = cell_num(tb, row, cw);
    as_num(a, "p_at", p);
    as_num(a, "w_at", w);
    buf_clear(&t);
    txf(&t, "%.2f at T = %g", w, Tmin);
    if (one_b)
        txf(&t, " (B = %g)", BTmin);
    txf(&t, ", p = %g", p);
    as_str(a, "wlabel", sb_str(&t));
    buf_clear(&t);
    txf(&t, "After %g update%s the initial values still carry %.2g%% of "
            "the weight",
        Tmin, Tmin == 1 ? "" : "s", 100 * w);
    if (np > 1)
        txf(&t, " (p = %g)", p);
    as_str(a, "title", sb_str(&t));
    /* T as the runs count it: E epochs of ⌊N / B⌋ batches (⌈N / B⌉ with
     * a last partial batch kept). */
    buf_clear(&t);
    const axis_t *ep = axis_of(tb, KEY_EPOCHS), *pa = axis_of(tb, KEY_PARTIAL);
    int keep = pa && pa->n == 1 && strcmp(pa->val[0], "keep") == 0;
    const char *frac = keep ? "⌈N / B⌉" : "⌊N / B⌋";
    if (ep && ep->n == 1 && (!pa || pa->n == 1) && !isnan(x->rows)) {
        double e = num(ep->val[0]);
        if (e == 1)
            txf(&t, "EMA updates in one epoch, T = %s, N = %.0f rows", frac,
                x->rows);
        else
            txf(&t, "EMA updates in %g epochs, T = %g %s, N = %.0f rows", e,
                e, frac, x->rows);
    } else {
        tx(&t, "EMA updates T");
        if (!isnan(x->rows))
            txf(&t, ", N = %.0f rows", x->rows);
    }
    tx(&t, " (log₂ scale)");
    as_str(a, "xlabel", sb_str(&t));
    buf_printf(&o->what, "(1 - p)^T for p in the ema runs, and their "
                         "init_weight against updates");
    rc = t.failed || pl.oom || pr.oom ? bn_fail(err, "out of memory") : 1;
done:
    free(ts);
    free(pv);
    buf_free(&t);
    sl_free(&pl);
    sl_free(&pr);
    return rc;
}
