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

/* The features figure as kind_features builds it. */
typedef struct {
    const plot_exp *x;
    const table_t *tb; /* features.tsv */
    selection sel;     /* its configuration */
    const char *B[2];  /* the smallest and the largest batch size */
    strlist fn, fl;    /* the features' names, and as labels */
    double *tv, *rv[2]; /* each feature's truth and running variances */
    size_t nf;
    double T[2];       /* the runs' updates at each B */
    int ratio;         /* running / true, the scales being different */
} features_t;

/* The configuration's features and their variances at both batch sizes:
 * 0 when there are none or more than MAX_FEATURES, -1 when out of
 * memory. */
static int read_features(features_t *f, const axis_t *ba, int cf, int ct,
                         int cr)
{
    const table_t *tb = f->tb;
    bn_buf t = {0};
    for (size_t row = 0; row < tb->t.nrow; row++) {
        if (!selected(tb, row, &f->sel))
            continue;
        const char *name = tsv_cell(&tb->t, row, (size_t)cf);
        size_t i = sl_find(&f->fn, name);
        if (i == f->fn.n) {
            if (f->fn.n == MAX_FEATURES) {
                buf_free(&t);
                return 0;
            }
            sl_push(&f->fn, name);
            buf_clear(&t);
            tx(&t, name);
            sl_push(&f->fl, sb_str(&t));
            f->tv[i] = f->rv[0][i] = f->rv[1][i] = NAN;
        }
        const char *b = cell_of(&tb->t, row, ba);
        for (int k = 0; k < 2; k++)
            if (strcmp(b, f->B[k]) == 0) {
                f->tv[i] = cell_num(tb, row, ct);
                f->rv[k][i] = cell_num(tb, row, cr);
            }
    }
    int oom = t.failed;
    buf_free(&t);
    f->nf = f->fn.n;
    return oom ? -1 : f->nf > 0;
}

/* The updates of those runs, from summary.tsv's rows of the same
 * configuration. */
static void runs_updates(features_t *f)
{
    const table_t *sum = &f->x->sum;
    f->T[0] = f->T[1] = NAN;
    int uc = column(sum, "updates");
    const axis_t *sb = axis_of(sum, KEY_BATCH_SIZE);
    for (size_t row = 0; uc >= 0 && sb && row < sum->t.nrow; row++)
        if (selected(sum, row, &f->sel))
            for (int k = 0; k < 2; k++)
                if (strcmp(cell_of(&sum->t, row, sb), f->B[k]) == 0)
                    f->T[k] = cell_num(sum, row, uc);
}

/* The key entries of the two batch sizes. */
static void as_batches(const features_t *f, bn_buf *a, bn_buf *t)
{
    for (int k = 0; k < 2; k++) {
        buf_clear(t);
        if (!f->ratio)
            buf_printf(t, "running variance, ");
        txf(t, "B = %s", f->B[k]);
        if (!isnan(f->T[k]))
            txf(t, " (%g update%s)", f->T[k], f->T[k] == 1 ? "" : "s");
        as_str(a, k ? "khi" : "klo", sb_str(t));
    }
}

/* The y range, and the worst feature at the largest batch size: the
 * largest error, or in a ratio the farthest from 1 on a log scale. The
 * title's finding: the running variances nearer 1 than their truths. */
static void as_worst(const features_t *f, bn_buf *a, bn_buf *t)
{
    size_t worst = 0;
    double wv = -1, lo = INFINITY, hi = 0, near1 = 0, neartrue = 0;
    const double *tv = f->tv;
    double *const *rv = f->rv;
    for (size_t i = 0; i < f->nf; i++) {
        double e = f->ratio ? fabs(log(rv[1][i] / tv[i]))
                            : fabs(rv[1][i] - tv[i]);
        if (e > wv) {
            wv = e;
            worst = i;
        }
        near1 += fabs(rv[1][i] - 1);
        neartrue += fabs(rv[1][i] - tv[i]);
        for (int k = 0; k < 2; k++) {
            double v = f->ratio ? rv[k][i] / tv[i] : rv[k][i];
            lo = v > 0 && v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        hi = !f->ratio && tv[i] > hi ? tv[i] : hi;
    }
    as_num(a, "ylo", lo);
    as_num(a, "yhi", hi);
    as_num(a, "worst", (double)(worst + 1));
    as_num(a, "worst_true", tv[worst]);
    as_num(a, "worst_run", rv[1][worst]);
    buf_clear(t);
    txf(t, "%s at B = %s: %s\n", f->ratio ? "farthest" : "worst feature",
        f->B[1], f->fn.v[worst]);
    if (f->ratio)
        buf_printf(t, "running %.2g × its truth", rv[1][worst] / tv[worst]);
    else
        buf_printf(t, "|running − true| = %.2f",
                   fabs(rv[1][worst] - tv[worst]));
    as_str(a, "worst_text", sb_str(t));
    buf_clear(t);
    if (!f->ratio && near1 < neartrue && !isnan(f->T[1]))
        txf(t, "%g updates (B = %s) leave running variances near 1, not "
               "the truth", f->T[1], f->B[1]);
    else if (f->ratio)
        buf_printf(t, "Running variance against the truth, per feature");
    else
        buf_printf(t, "Running and true variances, per feature");
    as_str(a, "title", sb_str(t));
}

/* The x axis's label: the configuration's values and the settings no
 * axis shows. */
static void as_features_xlabel(const features_t *f, bn_buf *a, bn_buf *t)
{
    bn_buf w = {0};
    buf_clear(t);
    buf_printf(t, "feature (");
    for (size_t i = 0; i < f->sel.nfix; i++) {
        value_words(t, f->x, f->sel.fix[i], first_value(f->tb, f->sel.fix[i]),
                    1);
        buf_printf(t, "; ");
    }
    facts(&w, f->x, f->tb, NULL);
    buf_printf(t, "%s)", sb_str(&w));
    as_str(a, "xlabel", sb_str(t));
    t->failed |= w.failed;
    buf_free(&w);
}

static void features_free(features_t *f)
{
    sl_free(&f->fn);
    sl_free(&f->fl);
    free(f->tv);
    free(f->rv[0]);
    free(f->rv[1]);
}

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
    features_t f = {.x = x, .tb = tb, .B = {ba->val[0], ba->val[ba->n - 1]},
                    .ratio = x->scales_differ};
    select_first(tb, &f.sel);
    size_t cap = tb->t.nrow;
    f.tv = malloc(cap * sizeof *f.tv);
    f.rv[0] = malloc(cap * sizeof *f.rv[0]);
    f.rv[1] = malloc(cap * sizeof *f.rv[1]);
    int rc = f.tv && f.rv[0] && f.rv[1] ? read_features(&f, ba, cf, ct, cr)
                                        : -1;
    if (rc <= 0) {
        features_free(&f);
        return rc < 0 ? bn_fail(err, "out of memory") : 0;
    }
    runs_updates(&f);
    bn_buf *a = &o->assign, t = {0};
    as_str(a, "f", tb->path);
    as_num(a, "ratio", f.ratio);
    as_num(a, "nf", (double)f.nf);
    as_strs(a, "fn", f.fn.v, f.nf);
    as_strs(a, "fl", f.fl.v, f.nf);
    as_str(a, "Blo", f.B[0]);
    as_str(a, "Bhi", f.B[1]);
    as_num(a, "nb", ba->n > 1 ? 2 : 1);
    as_selection(a, &f.sel);
    as_batches(&f, a, &t);
    as_worst(&f, a, &t);
    as_features_xlabel(&f, a, &t);
    buf_printf(&o->what, "%s per feature at B = %s",
               f.ratio ? "running variance / true variance"
                       : "running and true variance",
               f.B[0]);
    if (ba->n > 1)
        buf_printf(&o->what, " and %s", f.B[1]);
    rc = t.failed || f.fn.oom || f.fl.oom ? bn_fail(err, "out of memory") : 1;
    buf_free(&t);
    features_free(&f);
    return rc;
}
