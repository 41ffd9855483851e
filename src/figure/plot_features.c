/*
 * The features figure (scripts/features.gp): each feature's true variance
 * and its running variance at the smallest and the largest batch size of
 * one configuration, or their ratio when the features' scales differ.
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A features figure names each feature on the x axis. */
#define MAX_FEATURES 100

/* The features' truth and running variances at the smallest and the
 * largest batch size of one configuration. */
int kind_features(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->feat;
    int cf = column(tb, "feature"), ct = column(tb, "true_var"),
        cr = column(tb, "running_var");
    const axis_t *ba = axis_of(tb, KEY_BATCH_SIZE);
    if (!tb->ok || cf < 0 || ct < 0 || cr < 0 || !ba || tb->t.nrow == 0)
        return 0;
    selection sel;
    select_first(tb, &sel);
    const char *B[2] = {ba->val[0], ba->val[ba->n - 1]};
    strlist fn = {0}, fl = {0};
    double *tv = NULL, *rv[2] = {NULL, NULL};
    size_t cap = tb->t.nrow;
    int rc = -1;
    bn_buf t = {0}, w = {0};
    tv = malloc(cap * sizeof *tv);
    rv[0] = malloc(cap * sizeof *rv[0]);
    rv[1] = malloc(cap * sizeof *rv[1]);
    if (!tv || !rv[0] || !rv[1]) {
        bn_fail(err, "out of memory");
        goto done;
    }
    for (size_t row = 0; row < tb->t.nrow; row++) {
        if (!selected(tb, row, &sel))
            continue;
        const char *f = tsv_cell(&tb->t, row, (size_t)cf);
        size_t i = sl_find(&fn, f);
        if (i == fn.n) {
            if (fn.n == MAX_FEATURES) {
                rc = 0;
                goto done;
            }
            sl_push(&fn, f);
            buf_clear(&t);
            tx(&t, f);
            sl_push(&fl, sb_str(&t));
            tv[i] = rv[0][i] = rv[1][i] = NAN;
        }
        const char *b = cell_of(&tb->t, row, ba);
        for (int k = 0; k < 2; k++)
            if (strcmp(b, B[k]) == 0) {
                tv[i] = cell_num(tb, row, ct);
                rv[k][i] = cell_num(tb, row, cr);
            }
    }
    size_t nf = fn.n;
    if (nf == 0) {
        rc = 0;
        goto done;
    }
    /* The updates of those runs, from summary.tsv's rows of the same
     * configuration. */
    double T[2] = {NAN, NAN};
    int uc = column(&x->sum, "updates");
    const axis_t *sb = axis_of(&x->sum, KEY_BATCH_SIZE);
    for (size_t row = 0; uc >= 0 && sb && row < x->sum.t.nrow; row++)
        if (selected(&x->sum, row, &sel))
            for (int k = 0; k < 2; k++)
                if (strcmp(cell_of(&x->sum.t, row, sb), B[k]) == 0)
                    T[k] = cell_num(&x->sum, row, uc);

    int ratio = x->scales_differ;
    bn_buf *a = &o->assign;
    as_str(a, "f", tb->path);
    as_num(a, "ratio", ratio);
    as_num(a, "nf", (double)nf);
    as_strs(a, "fn", fn.v, nf);
    as_strs(a, "fl", fl.v, nf);
    as_str(a, "Blo", B[0]);
    as_str(a, "Bhi", B[1]);
    as_num(a, "nb", ba->n > 1 ? 2 : 1);
    as_selection(a, &sel);
    for (int k = 0; k < 2; k++) {
        buf_clear(&t);
        if (!ratio)
            buf_printf(&t, "running variance, ");
        txf(&t, "B = %s", B[k]);
        if (!isnan(T[k]))
            txf(&t, " (%g update%s)", T[k], T[k] == 1 ? "" : "s");
        as_str(a, k ? "khi" : "klo", sb_str(&t));
    }
    /* The worst feature at the largest batch size: the largest error,
     * or in a ratio the farthest from 1 on a log scale. */
    size_t worst = 0;
    double wv = -1, lo = INFINITY, hi = 0, near1 = 0, neartrue = 0;
    for (size_t i = 0; i < nf; i++) {
        double e = ratio ? fabs(log(rv[1][i] / tv[i]))
                         : fabs(rv[1][i] - tv[i]);
        if (e > wv) {
            wv = e;
            worst = i;
        }
        near1 += fabs(rv[1][i] - 1);
        neartrue += fabs(rv[1][i] - tv[i]);
        for (int k = 0; k < 2; k++) {
            double v = ratio ? rv[k][i] / tv[i] : rv[k][i];
            lo = v > 0 && v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        hi = !ratio && tv[i] > hi ? tv[i] : hi;
    }
    as_num(a, "ylo", lo);
    as_num(a, "yhi", hi);
    as_num(a, "worst", (double)(worst + 1));
    as_num(a, "worst_true", tv[worst]);
    as_num(a, "worst_run", rv[1][worst]);
    buf_clear(&t);
    txf(&t, "%s at B = %s: %s\n", ratio ? "farthest" : "worst feature", B[1],
        fn.v[worst]);
    if (ratio)
        buf_printf(&t, "running %.2g × its truth", rv[1][worst] / tv[worst]);
    else
        buf_printf(&t, "|running − true| = %.2f",
                   fabs(rv[1][worst] - tv[worst]));
    as_str(a, "worst_text", sb_str(&t));

    buf_clear(&t);
    if (!ratio && near1 < neartrue && !isnan(T[1]))
        txf(&t, "%g updates (B = %s) leave running variances near 1, not "
                "the truth", T[1], B[1]);
    else if (ratio)
        buf_printf(&t, "Running variance against the truth, per feature");
    else
        buf_printf(&t, "Running and true variances, per feature");
    as_str(a, "title", sb_str(&t));
    buf_clear(&t);
    buf_printf(&t, "feature (");
    for (size_t i = 0; i < sel.nfix; i++) {
        value_words(&t, x, sel.fix[i], first_value(tb, sel.fix[i]), 1);
        buf_printf(&t, "; ");
    }
    facts(&w, x, tb, NULL);
    buf_printf(&t, "%s)", sb_str(&w));
    as_str(a, "xlabel", sb_str(&t));
    buf_printf(&o->what, "%s per feature at B = %s",
               ratio ? "running variance / true variance" : "running and true "
                                                            "variance",
               B[0]);
    if (ba->n > 1)
        buf_printf(&o->what, " and %s", B[1]);
    rc = t.failed || w.failed || fn.oom || fl.oom
             ? bn_fail(err, "out of memory")
             : 1;
done:
    sl_free(&fn);
    sl_free(&fl);
    free(tv);
    free(rv[0]);
    free(rv[1]);
    buf_free(&t);
    buf_free(&w);
    return rc;
}
