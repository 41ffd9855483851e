/*
 * The weight-norm figure (scripts/weight-norm.gp): from curve.tsv, the
 * norm of the weights right before a batch norm after every epoch, over
 * its initial value (w_norm_ratio), a series per configuration, and under
 * it the radial part of their gradient so far (radial, on a log axis):
 * the write-up's claim that batch norm's gradient has no radial part,
 * and what weight decay's radial step does to the norm.
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Series past this many: the last axes are held at their first value. */
#define NORM_SERIES 4

/* The last epoch's w_norm_ratio of series s. */
static double last_ratio(const cview *v, const double *wn, size_t s)
{
    double r = NAN;
    for (size_t xi = 0; xi < v->nx; xi++)
        if (!isnan(wn[s * v->nx + xi]))
            r = wn[s * v->nx + xi];
    return r;
}

/* The title: with a series of weight decay 0, the norm it ends at and
 * the one the largest weight decay ends at; else what it draws. */
static void as_title(const plot_exp *x, const cview *v, const double *wn,
                     bn_buf *a, bn_buf *t)
{
    const axis_t *wd = v->nsa == 1 && v->sa[0]->key == KEY_WEIGHT_DECAY
                           ? v->sa[0]
                           : NULL;
    size_t s0 = wd ? str_index((const char **)v->sk.v, v->sk.n, "0") : 0;
    buf_clear(t);
    if (wd && s0 < v->sk.n && v->sk.n > 1) {
        size_t big = s0 == 0 ? 1 : 0;
        for (size_t s = 0; s < v->sk.n; s++)
            if (s != s0 && num(v->sk.v[s]) > num(v->sk.v[big]))
                big = s;
        txf(t, "Without weight decay the weights before batch norm end at "
               "%.3g× their initial norm,\nwith weight decay %g at %.3g×",
            last_ratio(v, wn, s0), num(v->sk.v[big]), last_ratio(v, wn, big));
    } else {
        tx(t, "w_norm_ratio and radial after each epoch");
        for (size_t i = 0; i < v->nsa; i++)
            txf(t, "%s%s", i ? " and " : ", by ", v->sa[i]->col);
    }
    (void)x;
    as_str(a, "title", sb_str(t));
}

/* The series' key entries, and the points of both panels. */
static int as_points(const plot_exp *x, const cview *v, const double *wn,
                     const double *rd, bn_buf *a, bn_buf *t)
{
    size_t ns = v->sk.n, nx = v->nx;
    strlist sl = {0};
    for (size_t s = 0; s < ns; s++) {
        buf_clear(t);
        key_words(t, x, v->sa, v->nsa, v->sk.v[s]);
        sl_push(&sl, sb_str(t));
    }
    as_num(a, "ns", (double)ns);
    as_num(a, "nx", (double)nx);
    as_nums(a, "ep", v->xp, nx);
    as_nums(a, "wn", wn, ns * nx);
    as_nums(a, "rd", rd, ns * nx);
    as_strs(a, "sl", sl.v, ns);
    int oom = sl.oom;
    sl_free(&sl);
    return oom ? -1 : 0;
}

/* radial's scale and the panel's words: the largest over every series. */
static void as_radial(const cview *v, const double *rd, bn_buf *a,
                      bn_buf *t)
{
    double hi = 0.0, lo = INFINITY;
    for (size_t i = 0; i < v->sk.n * v->nx; i++)
        if (rd[i] > 0.0) {
            hi = rd[i] > hi ? rd[i] : hi;
            lo = rd[i] < lo ? rd[i] : lo;
        }
    as_num(a, "rlo", isfinite(lo) ? lo : 1e-16);
    as_num(a, "rhi", hi > 0.0 ? hi : 1.0);
    buf_clear(t);
    txf(t, "radial part of the gradient so far\nat most %.2g of |w| |g|", hi);
    as_str(a, "st2", sb_str(t));
}

/* The x label: the epochs and the settings no axis shows, as the
 * classifier's figures give them; the panels' titles. */
static void as_labels(const plot_exp *x, const cview *v, bn_buf *a,
                      bn_buf *t)
{
    bn_buf f = {0};
    roles_t r = {0};
    clf_facts(&f, x, v, &r);
    buf_clear(t);
    txf(t, "epoch (%s)", sb_str(&f));
    as_str(a, "xlabel", sb_str(t));
    t->failed |= f.failed;
    buf_free(&f);
    as_str(a, "st1", "norm of the weights before batch norm, over its initial");
}

int kind_weight_norm(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->curve;
    /* A figure of what weight decay does: it must vary. */
    if (!tb->ok || column(tb, "epoch") < 0 ||
        column(tb, "w_norm_ratio") < 0 || column(tb, "radial") < 0 ||
        !one_seed(tb) || !varies(axis_of(tb, KEY_WEIGHT_DECAY)))
        return 0;
    cview v;
    cv_curve_init(&v, tb, 1, NORM_SERIES);
    int rc = cv_build(&v, err);
    double *wn = rc == 0 ? cv_values(&v, "w_norm_ratio") : NULL;
    double *rd = rc == 0 ? cv_values(&v, "radial") : NULL;
    int any = 0;
    for (size_t i = 0; wn && i < v.sk.n * v.nx; i++)
        any |= !isnan(wn[i]);
    if (rc == 0 && (!wn || !rd))
        rc = bn_fail(err, "%s: out of memory", tb->path);
    if (rc == 0 && any && v.nx >= 2) {
        bn_buf t = {0};
        bn_buf *a = &o->assign;
        as_str(a, "f", tb->path);
        as_title(x, &v, wn, a, &t);
        as_labels(x, &v, a, &t);
        as_radial(&v, rd, a, &t);
        rc = as_points(x, &v, wn, rd, a, &t) == 0 && !t.failed ? 1 : -1;
        buf_free(&t);
        if (rc < 0)
            bn_fail(err, "%s: out of memory", tb->path);
        else
            buf_printf(&o->what, "w_norm_ratio and radial after each epoch%s",
                       v.nsa ? ", a series per configuration" : "");
    }
    free(wn);
    free(rd);
    cv_free(&v);
    return rc;
}
