/*
 * A classifier's figures (scripts/accuracy.gp): accuracy, fit-accuracy
 * and curve, both modes' accuracies against the x axis of each (or after
 * every epoch), a panel per value of the panel axes, a series per
 * combination of the others, and stats_err_rel under the accuracies when
 * it changes along x.
 */
#include "figure/plot_parts.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/exp.h"

/* At most this many series in an accuracy panel (two lines each), and
 * this many panels of curves over the epochs. */
#define CLF_SERIES 4
#define CURVE_PANELS 9

/* Both modes' accuracies on the held-out rows, and on the rows trained
 * on (fit). */
static const char *const acc_cols[2][2] = {
    {"acc_train_mode", "acc_eval_mode"},
    {"fit_acc_train_mode", "fit_acc_eval_mode"}};

/* The figure of view v: a row of accuracy panels, a panel per value of
 * the panel axes, and under it a row of stats_err_rel panels when
 * stats_row; a series per value of the series axes. */
static int clf_figure(const plot_exp *x, const cview *v, int stats_row,
                      const char *what, figure_out *o, bn_error *err)
{
    bn_buf *a = &o->assign, t = {0}, f = {0};
    strlist st = {0}, sl = {0}, sr = {0}, sn = {0};
    size_t np = v->pk.n, ns = v->sk.n, nx = v->nx, nrow = stats_row ? 2 : 1;
    const char *const *acol = acc_cols[v->fit];
    double *tr = cv_values(v, acol[0]), *ev = cv_values(v, acol[1]);
    double *se = stats_row ? cv_values(v, "stats_err_rel") : NULL;
    int rc = -1;
    if (!tr || !ev || (stats_row && !se)) {
        bn_fail(err, "out of memory");
        goto done;
    }
    const char *noun, *sym, *label;
    cx_words(v, &noun, &sym, &label);

    /* The x axis: a tic at each place, named as the file names it. */
    int log = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < nx; i++) {
        lo = v->xp[i] < lo ? v->xp[i] : lo;
        hi = v->xp[i] > hi ? v->xp[i] : hi;
    }
    if (v->kind == CX_K || (v->kind == CX_NUM && lo > 0 && hi / lo >= 8))
        log = v->kind == CX_K || !v->x || x_is_count(v->x) ? 2 : 10;
    as_str(a, "f", v->tb->path);
    as_str(a, "ctrain", acol[0]);
    as_str(a, "ceval", acol[1]);
    as_str(a, "xcol", v->xcol);
    as_num(a, "xnum", v->kind == CX_NUM);
    as_strs(a, "xc", (char *const *)v->xc, nx);
    as_nums(a, "xp", v->xp, nx);
    double *xj = malloc((nx ? nx : 1) * sizeof *xj);
    int anyj = 0, anyu = 0;
    for (size_t i = 0; xj && i < nx; i++) {
        xj[i] = v->xj[i];
        anyj |= v->xj[i];
        anyu |= !v->xj[i];
    }
    if (xj)
        as_nums(a, "xj", xj, nx);
    free(xj);
    as_num(a, "anyj", anyj);
    as_num(a, "anyu", anyu);
    as_num(a, "xlog", log);
    as_num(a, "xlo", log ? lo / 1.5 : v->kind == CX_CAT ? 0.5
                                                        : lo - 0.06 * (hi - lo));
    as_num(a, "xhi", log ? hi * 1.3 : v->kind == CX_CAT ? nx + 0.5
                                                        : hi + 0.06 * (hi - lo));
    /* Series side by side at a category, so their points do not hide
     * each other. */
    as_num(a, "dxw", v->kind == CX_CAT && ns > 1 ? 0.3 / (double)ns : 0);
    /* A tic at each place; past 8 numbers, at 1, 2 and 5 times the
     * powers of ten between the ends, and the ends. Names too long to
     * stand side by side in a panel (near 16 pixels a character, a panel
     * of 1050 / cols) go every other one a line lower. */
    size_t cols = nrow == 2 || np <= 3 ? np : np == 4 ? 2 : 3, chars = 0;
    for (size_t i = 0; v->kind == CX_CAT && i < nx; i++)
        chars += strlen(v->xc[i]) + 2;
    int stagger = 16.0 * (double)chars > 1050.0 / (double)cols;
    as_num(a, "stagger", stagger);
    buf_clear(&t);
    buf_printf(&t, "set xtics (");
    for (size_t i = 0, first = 1; i < nx; i++) {
        bn_buf c = {0};
        const char *cell = v->xc[i];
        if (v->kind == CX_NUM && nx > 8 && i > 0 && i + 1 < nx) {
            double m = v->xp[i], d = pow(10, floor(log10(fabs(m))));
            double lead = m / d;
            if (!(m > 0) || (lead != 1 && lead != 2 && lead != 5) ||
                (log ? hi / m < 1.6 : hi - m < 0.06 * (hi - lo)))
                continue;
        }
        if (v->kind == CX_NUM)
            txf(&c, "%g", num(cell));
        else if (v->kind == CX_K && strcmp(cell, "shuffled") == 0)
            buf_printf(&c, "shuffled");
        else if (v->kind == CX_K && grouped_k(cell) > 0)
            txf(&c, "%g", grouped_k(cell));
        else if (v->x->numeric)
            txf(&c, "%g", num(cell));
        else
            tx(&c, cell);
        buf_printf(&t, "%s\"%s%s\" %.17g", first ? "" : ", ",
                   stagger && i % 2 ? "\\n" : "", sb_str(&c), v->xp[i]);
        first = 0;
        t.failed |= c.failed;
        buf_free(&c);
    }
    buf_printf(&t, ")");
    as_str(a, "xticscmd", sb_str(&t));
    buf_clear(&t);
    tx(&t, label);
    roles_t r = {0};
    r.x = v->x;
    clf_facts(&f, x, v, &r);
    buf_printf(&t, " (");
    if (log)
        buf_printf(&t, log == 2 ? "log₂ scale; " : "log scale; ");
    buf_printf(&t, "%s)", sb_str(&f));
    as_str(a, "xlabel", sb_str(&t));

    /* The rows kept, the panels and the series. */
    buf_clear(&t);
    buf_printf(&t, "sel(d) = 1");
    if (column(v->tb, exp_key(KEY_MODEL)->name) >= 0)
        buf_printf(&t, " && strcol(\"%s\") eq \"%s\"",
                   exp_key(KEY_MODEL)->name, clf_model());
    for (size_t i = 0; i < v->nfa; i++) {
        buf_printf(&t, " && strcol(\"%s\") eq ", v->fa[i]->col);
        gp_str(&t, first_value(v->tb, v->fa[i]));
    }
    buf_printf(a, "%s; ", sb_str(&t));
    as_key_fn(a, "pkey", v->pa, v->npa);
    as_num(a, "np", (double)np);
    as_strs(a, "pv", v->pk.v, np);
    as_strs(a, "pe", v->pe.v, np);
    as_num(a, "nrow", (double)nrow);
    size_t npan = np * nrow;
    as_num(a, "cols", (double)cols);
    /* The series: their key entries, and colours by what they are (an
     * order or an estimator by its name, p on the ordered scale). */
    as_key_fn(a, "skey", v->sa, v->nsa);
    as_num(a, "ns", (double)ns);
    as_strs(a, "sv", v->sk.v, ns);
    const char *role = "index";
    if (v->nsa == 1)
        role = v->sa[0]->key == KEY_ORDER       ? "order"
               : v->sa[0]->key == KEY_ESTIMATOR ? "estimator"
               : v->sa[0]->key == KEY_NEW_WEIGHT ? "seq"
                                                 : "index";
    for (size_t i = 0; i < ns; i++) {
        char buf[600];
        buf_clear(&t);
        key_words(&t, x, v->sa, v->nsa, v->sk.v[i]);
        sl_push(&sl, sb_str(&t));
        sl_push(&sr, role);
        sl_push(&sn, key_field(v->sk.v[i], 0, buf, sizeof buf));
    }
    as_strs(a, "sl", sl.v, sl.n);
    as_strs(a, "srole", sr.v, sr.n);
    as_strs(a, "sname", sn.v, sn.n);

    /* stats_err_rel's scale: log over a span of more than LOG_SPAN, with
     * a floor for the values that are 0 up to rounding. */
    y_scale ss = y_scale_of(se, se ? np * ns * nx : 0);
    as_num(a, "slog", ss.log);
    as_num(a, "slo", ss.lo);
    as_num(a, "shi", ss.hi);
    as_num(a, "szero", ss.zero);
    buf_clear(&t);
    tx(&t, v->fit ? "accuracy on the rows trained on" : "held-out accuracy");
    as_str(a, "yacc", sb_str(&t));
    buf_clear(&t);
    tx(&t, "stats_err_rel");
    if (ss.log)
        tx(&t, " (log scale)");
    as_str(a, "ystats", sb_str(&t));
    buf_clear(&t);
    tx(&t, "eval: running stats");
    as_str(a, "keval", sb_str(&t));
    buf_clear(&t);
    tx(&t, "train: batch stats");
    as_str(a, "ktrain", sb_str(&t));

    /* The title: a finding on the gap where the numbers bear one out,
     * else what the figure draws. */
    gap_t all = gap_over(v, tr, ev, 0, np);
    buf_clear(&t);
    gap_words(&t, x, v, &all, 1);
    if (t.len && v->fit) { /* "On the rows trained on, eval mode ..." */
        bn_buf on = {0};
        buf_printf(&on, "On the rows trained on, %c%s",
                   tolower((unsigned char)t.p[0]), t.p + 1);
        buf_clear(&t);
        buf_printf(&t, "%s", sb_str(&on));
        t.failed |= on.failed;
        buf_free(&on);
    }
    if (!t.len) {
        txf(&t, "%s and %s ", acol[0], acol[1]);
        if (v->x)
            txf(&t, "against %s", noun);
        else
            buf_printf(&t, "after each epoch");
        for (size_t i = 0; i < v->nsa; i++) {
            buf_printf(&t, i ? " and " : ", by ");
            tx(&t, axis_noun(v->sa[i]));
        }
        for (size_t i = 0; i < v->npa; i++) {
            buf_printf(&t, i ? " and " : ", a panel per ");
            tx(&t, axis_noun(v->pa[i]));
        }
    }
    /* A long title (over 70 bytes as it reads, escapes undone) puts
     * where it happened on a line of its own. */
    size_t shown = 0;
    for (size_t i = 0; i < t.len; i++, shown++)
        i += t.p[i] == '\\';
    char *open = shown > 70 ? strstr(t.p, " (") : NULL;
    if (open)
        *open = '\n';
    as_str(a, "title", sb_str(&t));
    for (size_t k = 0; k < nrow; k++)
        for (size_t p = 0; p < np; p++) {
            buf_clear(&t);
            if (npan > 1) {
                buf_printf(&t, "{/:Bold ");
                key_words(&t, x, v->pa, v->npa, v->pk.v[p]);
                if (nrow > 1)
                    buf_printf(&t, "%s%s", v->npa ? ", " : "",
                               k ? "stats\\_err\\_rel" : "accuracy");
                buf_printf(&t, "}");
                if (k == 0 && np > 1) {
                    gap_t gp = gap_over(v, tr, ev, p, p + 1);
                    size_t at = t.len;
                    buf_printf(&t, "\n");
                    gap_words(&t, x, v, &gp, 0);
                    if (!v->x && !gp.near)
                        closes_words(&t, v, tr, ev, p);
                    if (t.len == at + 1)
                        t.len = at, t.p[at] = '\0';
                }
            }
            sl_push(&st, sb_str(&t));
        }
    as_strs(a, "st", st.v, st.n);

    buf_printf(&o->what, "%s", what);
    for (size_t i = 0; i < v->nsa; i++)
        buf_printf(&o->what, "%s %s", i ? " and" : ", a series per",
                   v->sa[i]->col);
    for (size_t i = 0; i < v->npa; i++)
        buf_printf(&o->what, "%s %s", i ? " and" : ", a panel per",
                   v->pa[i]->col);
    if (stats_row)
        buf_printf(&o->what, "; stats_err_rel under it");
    rc = t.failed || f.failed || st.oom || sl.oom || sr.oom || sn.oom
             ? bn_fail(err, "out of memory")
             : 1;
done:
    free(tr);
    free(ev);
    free(se);
    buf_free(&t);
    buf_free(&f);
    sl_free(&st);
    sl_free(&sl);
    sl_free(&sr);
    sl_free(&sn);
    return rc;
}

/* The classifier's accuracy in both modes against its x axis: of the
 * batch size and the epochs the one with more values, else the K of
 * grouped:K orders, else the held-out rows' shift, else their scale,
 * else the estimator, else the first axis that varies, as categories. */
static int accuracies(const plot_exp *x, figure_out *o, bn_error *err,
                      int fit)
{
    const table_t *tb = &x->sum;
    if (!tb->ok || column(tb, acc_cols[fit][0]) < 0 ||
        column(tb, acc_cols[fit][1]) < 0 || !one_seed(tb))
        return 0;
    const axis_t *ax[KEY_COUNT];
    size_t n = clf_axes(tb, ax);
    if (n == 0)
        return 0;
    cview v = {0};
    v.tb = tb;
    v.kind = CX_CAT;
    static const int num_then[] = {KEY_EVAL_SHIFT, KEY_EVAL_SCALE};
    /* Of the batch size and the epochs, the one with more values: the
     * other is fewer series. */
    const axis_t *bs = axis_of(tb, KEY_BATCH_SIZE),
                 *ep = axis_of(tb, KEY_EPOCHS);
    if (varies(bs) || varies(ep)) {
        v.x = varies(bs) && (!varies(ep) || bs->n >= ep->n) ? bs : ep;
        v.kind = CX_NUM;
    }
    const axis_t *o_ax = axis_of(tb, KEY_ORDER);
    size_t nk = 0;
    for (size_t i = 0; o_ax && i < o_ax->n; i++)
        nk += grouped_k(o_ax->val[i]) > 0;
    if (!v.x && varies(o_ax) && nk >= 2)
        v.x = o_ax, v.kind = CX_K;
    for (size_t i = 0; !v.x && i < COUNT(num_then); i++)
        if (varies(axis_of(tb, num_then[i])))
            v.x = axis_of(tb, num_then[i]), v.kind = CX_NUM;
    if (!v.x)
        v.x = varies(axis_of(tb, KEY_ESTIMATOR)) ? axis_of(tb, KEY_ESTIMATOR)
                                                  : ax[0];
    v.xcol = v.x->col;
    const axis_t *others[KEY_COUNT];
    size_t no = 0;
    for (size_t i = 0; i < n; i++)
        if (ax[i] != v.x)
            others[no++] = ax[i];

    /* stats_err_rel under the accuracies when it changes along x
     * anywhere: a series per combination of every other axis. */
    int stats_row = 0;
    if (column(tb, "stats_err_rel") >= 0) {
        memcpy(v.sa, others, no * sizeof *others);
        v.nsa = no;
        if (cv_build(&v, err) != 0) {
            cv_free(&v);
            return -1;
        }
        double *se = cv_values(&v, "stats_err_rel");
        if (!se) {
            cv_free(&v);
            return bn_fail(err, "out of memory");
        }
        for (size_t s = 0; s < v.sk.n; s++)
            for (size_t xi = 1; xi < v.nx; xi++) {
                double y0 = se[s * v.nx], y = se[s * v.nx + xi];
                if (!isnan(y0) && !isnan(y) && !same(y0, y))
                    stats_row = 1;
            }
        free(se);
        const axis_t *xa = v.x;
        int kind = v.kind;
        cv_free(&v);
        v.tb = tb;
        v.x = xa;
        v.kind = kind;
        v.xcol = xa->col;
    }
    /* A panel per value of one other axis (the order if it is one) when
     * two or more vary; a series per combination of the rest, at most
     * CLF_SERIES: past that the last of them are held at their first
     * value. */
    const axis_t *panel = NULL;
    if (no >= 2) {
        panel = others[0];
        for (size_t i = 0; i < no; i++)
            if (others[i]->key == KEY_ORDER)
                panel = others[i];
        if (panel->n * (stats_row ? 2 : 1) > MAX_PANELS)
            panel = NULL;
    }
    if (panel)
        v.pa[v.npa++] = panel;
    for (size_t i = 0; i < no; i++)
        if (others[i] != panel)
            v.sa[v.nsa++] = others[i];
    cv_hold(&v, v.sa, &v.nsa, CLF_SERIES);
    v.fit = fit;
    bn_buf what = {0};
    buf_printf(&what, "%s and %s against %s", acc_cols[fit][0],
               acc_cols[fit][1], v.xcol);
    int rc = what.failed ? bn_fail(err, "out of memory") : cv_build(&v, err);
    if (rc == 0)
        rc = clf_figure(x, &v, fit ? 0 : stats_row, sb_str(&what), o, err);
    buf_free(&what);
    cv_free(&v);
    return rc;
}

int kind_accuracy(const plot_exp *x, figure_out *o, bn_error *err)
{
    return accuracies(x, o, err, 0);
}

/* The same figure of the rows trained on, laid out as the held-out one
 * (the same panels and series) so the two read side by side; the
 * statistics' error is the held-out figure's. */
int kind_fit_accuracy(const plot_exp *x, figure_out *o,
                             bn_error *err)
{
    return accuracies(x, o, err, 1);
}

/* curve.tsv: both accuracies after every epoch, a panel per
 * configuration's longest run. */
int kind_curve(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->curve;
    if (!tb->ok || column(tb, acc_cols[0][0]) < 0 ||
        column(tb, acc_cols[0][1]) < 0 || column(tb, "epoch") < 0 ||
        !one_seed(tb))
        return 0;
    const axis_t *ax[KEY_COUNT];
    size_t n = clf_axes(tb, ax);
    cview v = {0};
    v.tb = tb;
    v.kind = CX_NUM;
    v.xcol = "epoch";
    v.longest = 1;
    for (size_t i = 0; i < n; i++)
        if (ax[i]->key != KEY_EPOCHS)
            v.pa[v.npa++] = ax[i];
    cv_hold(&v, v.pa, &v.npa, CURVE_PANELS);
    int rc = cv_build(&v, err);
    if (rc == 0 && v.nx >= 2) /* one epoch is no curve */
        rc = clf_figure(x, &v, 0,
                        "acc_train_mode and acc_eval_mode after each epoch",
                        o, err);
    cv_free(&v);
    return rc;
}
