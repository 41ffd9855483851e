/*
 * The batch-dependence figure (scripts/dependence.gp): from summary.tsv,
 * how far a row's training-mode output moves with the rows it is batched
 * with (batch_dependence, its largest; batch_dependence_mean, the mean
 * over rows) against the batch size, beside evaluation mode's, which
 * moves by nothing; and for a classifier, under it, training mode's
 * accuracy on random held-out batches and on batches of one class,
 * (and of one group, where the population file has groups) against
 * evaluation mode's: how much a metric made in training mode moves with
 * the way the test rows are batched. Every other varying
 * axis is held at its first value (select_first).
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const dep_cols[] = {
    "batch_dependence", "batch_dependence_mean", "batch_dependence_eval",
    "acc_train_mode", "acc_train_by_class", "acc_eval_mode",
    "acc_train_by_group",
};
#define N_DEP COUNT(dep_cols)

/* Column c of the selected rows at each batch size (NaN where none). */
static void values_at(const table_t *tb, const selection *sel,
                      const axis_t *bx, const char *name, double *y)
{
    int c = column(tb, name), cb = bx->ci;
    for (size_t xi = 0; xi < bx->n; xi++)
        y[xi] = NAN;
    for (size_t r = 0; c >= 0 && r < tb->t.nrow; r++)
        if (selected(tb, r, sel))
            y[val_index(bx, tsv_cell(&tb->t, r, (size_t)cb))] =
                cell_num(tb, r, c);
}

/* The largest of y's n values, NaN when there is none. */
static double largest(const double *y, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        if (!isnan(y[i]) && (isnan(m) || y[i] > m))
            m = y[i];
    return m;
}

/* The title: the two ends of the mean and of the largest move, and
 * evaluation mode's. */
static void as_title(const axis_t *bx, const double *y, int clf, bn_buf *a,
                     bn_buf *t)
{
    size_t n = bx->n, hi = n - 1;
    const double *w = y, *m = y + n, *e = y + 2 * n;
    double ev = largest(e, n);
    buf_clear(t);
    txf(t, "In training mode a row's %s with its batch by up to "
           "%.3g (mean %.3g) at B = %s\nand %.3g (mean %.3g) at B = %s; ",
        clf ? "logits move" : "output moves", w[0], m[0], bx->val[0], w[hi],
        m[hi], bx->val[hi]);
    if (ev == 0.0)
        tx(t, "in evaluation mode by 0 at every B");
    else
        txf(t, "in evaluation mode by up to %.3g", ev);
    as_str(a, "title", sb_str(t));
}

/* The classifier's panel: where one-class batches move training mode's
 * accuracy most. */
static void as_accuracy(const axis_t *bx, const double *y, bn_buf *a,
                        bn_buf *t)
{
    size_t n = bx->n, at = 0;
    const double *tr = y + 3 * n, *bc = y + 4 * n, *ev = y + 5 * n;
    for (size_t i = 1; i < n; i++)
        if (fabs(bc[i] - tr[i]) > fabs(bc[at] - tr[at]))
            at = i;
    buf_clear(t);
    txf(t, "Held-out batches of one class take training mode's accuracy "
           "from %.3g to %.3g at B = %s\n(evaluation mode: %.3g, whatever "
           "the batches)",
        tr[at], bc[at], bx->val[at], ev[at]);
    as_str(a, "st2", sb_str(t));
}

static void as_labels(const plot_exp *x, const selection *sel, bn_buf *a,
                      bn_buf *t)
{
    buf_clear(t);
    tx(t, "batch size B (");
    if (!isnan(x->rows))
        txf(t, "%.0f rows trained on; ", x->rows);
    const char *m = manifest_value(x, "sweep.compositions");
    txf(t, "%s shuffles", m ? m : "?");
    for (size_t i = 0; i < sel->nfix; i++)
        txf(t, "; %s %s", sel->fix[i]->col, first_value(sel->tb, sel->fix[i]));
    tx(t, ")");
    as_str(a, "xlabel", sb_str(t));
    as_str(a, "st1", "the range of a row's output over the batches it was "
                     "in: the largest, and the mean over rows of a row's "
                     "largest");
}

int kind_batch_dependence(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->sum;
    const axis_t *bx = axis_of(tb, KEY_BATCH_SIZE);
    if (!tb->ok || !one_seed(tb) || !varies(bx) ||
        column(tb, "batch_dependence") < 0 ||
        column(tb, "batch_dependence_mean") < 0 ||
        column(tb, "batch_dependence_eval") < 0)
        return 0;
    int clf = column(tb, "acc_train_by_class") >= 0;
    size_t n = bx->n;
    double *y = malloc(N_DEP * n * sizeof *y), *xv = malloc(n * sizeof *xv);
    if (!y || !xv) {
        free(y);
        free(xv);
        return bn_fail(err, "%s: out of memory", tb->path);
    }
    selection sel;
    select_first(tb, &sel);
    for (size_t k = 0; k < N_DEP; k++)
        values_at(tb, &sel, bx, dep_cols[k], y + k * n);
    for (size_t i = 0; i < n; i++)
        xv[i] = num(bx->val[i]);
    bn_buf t = {0};
    bn_buf *a = &o->assign;
    as_num(a, "nx", (double)n);
    as_num(a, "clf", clf);
    x_axis(a, bx);
    as_nums(a, "w", y, n);
    as_nums(a, "m", y + n, n);
    as_nums(a, "e", y + 2 * n, n);
    if (clf) {
        int grp = column(tb, "acc_train_by_group") >= 0;
        as_nums(a, "at", y + 3 * n, n);
        as_nums(a, "ac", y + 4 * n, n);
        as_nums(a, "ae", y + 5 * n, n);
        as_num(a, "grp", grp);
        if (grp)
            as_nums(a, "ag", y + 6 * n, n);
        as_accuracy(bx, y, a, &t);
    }
    as_title(bx, y, clf, a, &t);
    as_labels(x, &sel, a, &t);
    int rc = t.failed || a->failed ? -1 : 1;
    buf_free(&t);
    free(y);
    free(xv);
    if (rc < 0)
        return bn_fail(err, "%s: out of memory", tb->path);
    buf_printf(&o->what, "batch_dependence against the batch size%s%s",
               clf ? ", and the accuracy on one-class batches" : "",
               column(tb, "acc_train_by_group") >= 0 ? " and one-group ones"
                                                     : "");
    return 1;
}
