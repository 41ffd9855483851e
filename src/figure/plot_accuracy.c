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

/* One figure of a classifier's view, as clf_figure builds it. */
typedef struct {
    const plot_exp *x;
    const cview *v;
    size_t np, ns, nx;       /* panels a row, series, places on x */
    size_t nrow, cols;       /* rows of panels, and panels a row drawn */
    const char *const *acol; /* the two modes' accuracy columns */
    double *tr, *ev, *se;    /* their values, and stats_err_rel's */
    const char *noun, *sym, *label; /* the x axis's words */
    int log;                 /* the x axis's log base, 0 for linear */
    double lo, hi;           /* its ends */
} clf_fig;

/* The x axis's ends and scale: log when it spans a factor of 8 or more
 * (always for a K), base 2 for a count. */
static void clf_x_scale(clf_fig *c)
{
    const cview *v = c->v;
    c->lo = INFINITY;
    c->hi = -INFINITY;
    for (size_t i = 0; i < c->nx; i++) {
        c->lo = v->xp[i] < c->lo ? v->xp[i] : c->lo;
        c->hi = v->xp[i] > c->hi ? v->xp[i] : c->hi;
    }
    if (v->kind == CX_K ||
        (v->kind == CX_NUM && c->lo > 0 && c->hi / c->lo >= 8))
        c->log = v->kind == CX_K || !v->x || x_is_count(v->x) ? 2 : 10;
}

/* A tic at place i: every place, but past 8 numbers only 1, 2 and 5
 * times the powers of ten between the ends, and the ends. */
static int clf_tic_shown(const clf_fig *c, size_t i)
{
    if (c->v->kind != CX_NUM || c->nx <= 8 || i == 0 || i + 1 == c->nx)
        return 1;
    double m = c->v->xp[i], d = pow(10, floor(log10(fabs(m))));
    double lead = m / d;
    return m > 0 && (lead == 1 || lead == 2 || lead == 5) &&
           !(c->log ? c->hi / m < 1.6 : c->hi - m < 0.06 * (c->hi - c->lo));
}

/* Its name at place i, as the file names it. */
static void clf_tic_name(const clf_fig *c, size_t i, bn_buf *b)
{
    const cview *v = c->v;
    const char *cell = v->xc[i];
    if (v->kind == CX_NUM)
        txf(b, "%g", num(cell));
    else if (v->kind == CX_K && strcmp(cell, "shuffled") == 0)
        buf_printf(b, "shuffled");
    else if (v->kind == CX_K && grouped_k(cell) > 0)
        txf(b, "%g", grouped_k(cell));
    else if (v->x->numeric)
        txf(b, "%g", num(cell));
    else
        tx(b, cell);
}

/* gnuplot's "set xtics (...)": a tic at each place shown. Names too long
 * to stand side by side in a panel (near 16 pixels a character, a panel
 * of 1050 / cols) go every other one a line lower. */
static void as_clf_tics(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    size_t chars = 0;
    for (size_t i = 0; c->v->kind == CX_CAT && i < c->nx; i++)
        chars += strlen(c->v->xc[i]) + 2;
    int stagger = 16.0 * (double)chars > 1050.0 / (double)c->cols;
    as_num(a, "stagger", stagger);
    buf_clear(t);
    buf_printf(t, "set xtics (");
    for (size_t i = 0, first = 1; i < c->nx; i++) {
        if (!clf_tic_shown(c, i))
            continue;
        bn_buf name = {0};
        clf_tic_name(c, i, &name);
        buf_printf(t, "%s\"%s%s\" %.17g", first ? "" : ", ",
                   stagger && i % 2 ? "\\n" : "", sb_str(&name),
                   c->v->xp[i]);
        first = 0;
        t->failed |= name.failed;
        buf_free(&name);
    }
    buf_printf(t, ")");
    as_str(a, "xticscmd", sb_str(t));
}

/* The x axis: a tic at each place, named as the file names it. */
static void as_clf_x(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    const cview *v = c->v;
    as_str(a, "f", v->tb->path);
    as_str(a, "ctrain", c->acol[0]);
    as_str(a, "ceval", c->acol[1]);
    as_str(a, "xcol", v->xcol);
    as_num(a, "xnum", v->kind == CX_NUM);
    as_strs(a, "xc", (char *const *)v->xc, c->nx);
    as_nums(a, "xp", v->xp, c->nx);
    double *xj = malloc((c->nx ? c->nx : 1) * sizeof *xj);
    int anyj = 0, anyu = 0;
    for (size_t i = 0; xj && i < c->nx; i++) {
        xj[i] = v->xj[i];
        anyj |= v->xj[i];
        anyu |= !v->xj[i];
    }
    if (xj)
        as_nums(a, "xj", xj, c->nx);
    free(xj);
    as_num(a, "anyj", anyj);
    as_num(a, "anyu", anyu);
    as_num(a, "xlog", c->log);
    double lo = c->lo, hi = c->hi;
    as_num(a, "xlo", c->log ? lo / 1.5 : v->kind == CX_CAT ? 0.5
                                                         : lo - 0.06 * (hi - lo));
    as_num(a, "xhi", c->log ? hi * 1.3 : v->kind == CX_CAT ? c->nx + 0.5
                                                         : hi + 0.06 * (hi - lo));
    /* Series side by side at a category, so their points do not hide
     * each other. */
    as_num(a, "dxw", v->kind == CX_CAT && c->ns > 1 ? 0.3 / (double)c->ns : 0);
    as_clf_tics(c, a, t);
}

/* The x axis's label: its words, its scale and the settings no axis
 * shows. */
static void as_clf_xlabel(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    bn_buf f = {0};
    buf_clear(t);
    tx(t, c->label);
    roles_t r = {0};
    r.x = c->v->x;
    clf_facts(&f, c->x, c->v, &r);
    buf_printf(t, " (");
    if (c->log)
        buf_printf(t, c->log == 2 ? "log₂ scale; " : "log scale; ");
    buf_printf(t, "%s)", sb_str(&f));
    as_str(a, "xlabel", sb_str(t));
    t->failed |= f.failed;
    buf_free(&f);
}

/* The rows kept and the panels. */
static void as_clf_panels(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    const cview *v = c->v;
    const char *model = exp_key(KEY_MODEL)->name;
    buf_clear(t);
    buf_printf(t, "sel(d) = 1");
    if (column(v->tb, model) >= 0)
        buf_printf(t, " && strcol(\"%s\") eq \"%s\"", model, clf_model());
    for (size_t i = 0; i < v->nfa; i++) {
        buf_printf(t, " && strcol(\"%s\") eq ", v->fa[i]->col);
        gp_str(t, first_value(v->tb, v->fa[i]));
    }
    buf_printf(a, "%s; ", sb_str(t));
    as_key_fn(a, "pkey", v->pa, v->npa);
    as_num(a, "np", (double)c->np);
    as_strs(a, "pv", v->pk.v, c->np);
    as_strs(a, "pe", v->pe.v, c->np);
    as_num(a, "nrow", (double)c->nrow);
    as_num(a, "cols", (double)c->cols);
}

/* The series: their key entries, and colours by what they are (an
 * order or an estimator by its name, p on the ordered scale). -1 when out
 * of memory. */
static int as_clf_series(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    const cview *v = c->v;
    strlist sl = {0}, sr = {0}, sn = {0};
    as_key_fn(a, "skey", v->sa, v->nsa);
    as_num(a, "ns", (double)c->ns);
    as_strs(a, "sv", v->sk.v, c->ns);
    const char *role = "index";
    if (v->nsa == 1)
        role = v->sa[0]->key == KEY_ORDER       ? "order"
               : v->sa[0]->key == KEY_ESTIMATOR ? "estimator"
               : v->sa[0]->key == KEY_NEW_WEIGHT ? "seq"
                                                 : "index";
    for (size_t i = 0; i < c->ns; i++) {
        char buf[600];
        buf_clear(t);
        key_words(t, c->x, v->sa, v->nsa, v->sk.v[i]);
        sl_push(&sl, sb_str(t));
        sl_push(&sr, role);
        sl_push(&sn, key_field(v->sk.v[i], 0, buf, sizeof buf));
    }
    as_strs(a, "sl", sl.v, sl.n);
    as_strs(a, "srole", sr.v, sr.n);
    as_strs(a, "sname", sn.v, sn.n);
    int oom = sl.oom || sr.oom || sn.oom;
    sl_free(&sl);
    sl_free(&sr);
    sl_free(&sn);
    return oom ? -1 : 0;
}

/* The y axes: stats_err_rel's scale (log over a span of more than
 * LOG_SPAN, with a floor for the values that are 0 up to rounding), and
 * the labels of both rows and of the two modes. */
static void as_clf_y(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    y_scale ss = y_scale_of(c->se, c->se ? c->np * c->ns * c->nx : 0);
    /* The series that have stats_err_rel at all (a network without batch
     * norm has none): the row under the accuracies draws those. */
    double shas[KEY_COUNT * 8];
    size_t ns = c->ns < COUNT(shas) ? c->ns : COUNT(shas);
    for (size_t s = 0; s < ns; s++) {
        shas[s] = 0.0;
        for (size_t p = 0; c->se && p < c->np; p++)
            for (size_t xi = 0; xi < c->nx; xi++)
                shas[s] = shas[s] || !isnan(c->se[(p * c->ns + s) * c->nx + xi]);
    }
    as_nums(a, "shas", shas, ns);
    as_num(a, "slog", ss.log);
    as_num(a, "slo", ss.lo);
    as_num(a, "shi", ss.hi);
    as_num(a, "szero", ss.zero);
    buf_clear(t);
    tx(t, c->v->fit ? "accuracy on the rows trained on" : "held-out accuracy");
    as_str(a, "yacc", sb_str(t));
    buf_clear(t);
    tx(t, "stats_err_rel");
    if (ss.log)
        tx(t, " (log scale)");
    as_str(a, "ystats", sb_str(t));
    buf_clear(t);
    tx(t, "eval: running stats");
    as_str(a, "keval", sb_str(t));
    buf_clear(t);
    tx(t, "train: batch stats");
    as_str(a, "ktrain", sb_str(t));
}

/* What the figure draws, when no finding makes its title. */
static void clf_description(const clf_fig *c, bn_buf *t)
{
    const cview *v = c->v;
    txf(t, "%s and %s ", c->acol[0], c->acol[1]);
    if (v->x)
        txf(t, "against %s", c->noun);
    else
        buf_printf(t, "after each epoch");
    for (size_t i = 0; i < v->nsa; i++) {
        buf_printf(t, i ? " and " : ", by ");
        tx(t, axis_noun(v->sa[i]));
    }
    for (size_t i = 0; i < v->npa; i++) {
        buf_printf(t, i ? " and " : ", a panel per ");
        tx(t, axis_noun(v->pa[i]));
    }
}

/* The title: a finding on the gap where the numbers bear one out, else
 * what the figure draws. */
static void as_clf_title(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    gap_t all = gap_over(c->v, c->tr, c->ev, 0, c->np);
    buf_clear(t);
    gap_words(t, c->x, c->v, &all, 1);
    if (t->len && c->v->fit) { /* "On the rows trained on, eval mode ..." */
        bn_buf on = {0};
        buf_printf(&on, "On the rows trained on, %c%s",
                   tolower((unsigned char)t->p[0]), t->p + 1);
        buf_clear(t);
        buf_printf(t, "%s", sb_str(&on));
        t->failed |= on.failed;
        buf_free(&on);
    }
    if (!t->len)
        clf_description(c, t);
    /* A long title (over 70 bytes as it reads, escapes undone) puts
     * where it happened on a line of its own. */
    size_t shown = 0;
    for (size_t i = 0; i < t->len; i++, shown++)
        i += t->p[i] == '\\';
    char *open = shown > 70 ? strstr(t->p, " (") : NULL;
    if (open)
        *open = '\n';
    as_str(a, "title", sb_str(t));
}

/* Each panel's title when there are two or more: its values, its row's
 * score, and in the accuracies' row its own finding on the gap (and a
 * curve's where it closes). -1 when out of memory. */
static int as_clf_panel_titles(const clf_fig *c, bn_buf *a, bn_buf *t)
{
    const cview *v = c->v;
    strlist st = {0};
    for (size_t k = 0; k < c->nrow; k++)
        for (size_t p = 0; p < c->np; p++) {
            buf_clear(t);
            if (c->np * c->nrow > 1) {
                buf_printf(t, "{/:Bold ");
                key_words(t, c->x, v->pa, v->npa, v->pk.v[p]);
                if (c->nrow > 1)
                    buf_printf(t, "%s%s", v->npa ? ", " : "",
                               k ? "stats\\_err\\_rel" : "accuracy");
                buf_printf(t, "}");
                if (k == 0 && c->np > 1) {
                    gap_t gp = gap_over(v, c->tr, c->ev, p, p + 1);
                    size_t at = t->len;
                    buf_printf(t, "\n");
                    gap_words(t, c->x, v, &gp, 0);
                    if (!v->x && !gp.near)
                        closes_words(t, v, c->tr, c->ev, p);
                    if (t->len == at + 1)
                        t->len = at, t->p[at] = '\0';
                }
            }
            sl_push(&st, sb_str(t));
        }
    as_strs(a, "st", st.v, st.n);
    int oom = st.oom;
    sl_free(&st);
    return oom ? -1 : 0;
}

static void clf_what(const clf_fig *c, bn_buf *w, const char *what)
{
    const cview *v = c->v;
    buf_printf(w, "%s", what);
    for (size_t i = 0; i < v->nsa; i++)
        buf_printf(w, "%s %s", i ? " and" : ", a series per", v->sa[i]->col);
    for (size_t i = 0; i < v->npa; i++)
        buf_printf(w, "%s %s", i ? " and" : ", a panel per", v->pa[i]->col);
    if (c->nrow > 1)
        buf_printf(w, "; stats_err_rel under it");
}

/* The figure of view v: a row of accuracy panels, a panel per value of
 * the panel axes, and under it a row of stats_err_rel panels when
 * stats_row; a series per value of the series axes. */
static int clf_figure(const plot_exp *x, const cview *v, int stats_row,
                      const char *what, figure_out *o, bn_error *err)
{
    clf_fig c = {.x = x, .v = v, .np = v->pk.n, .ns = v->sk.n, .nx = v->nx,
                 .nrow = stats_row ? 2 : 1, .acol = acc_cols[v->fit]};
    c.cols = c.nrow == 2 || c.np <= 3 ? c.np : c.np == 4 ? 2 : 3;
    c.tr = cv_values(v, c.acol[0]);
    c.ev = cv_values(v, c.acol[1]);
    c.se = stats_row ? cv_values(v, "stats_err_rel") : NULL;
    int oom = !c.tr || !c.ev || (stats_row && !c.se);
    bn_buf *a = &o->assign, t = {0};
    if (!oom) {
        cx_words(v, &c.noun, &c.sym, &c.label);
        clf_x_scale(&c);
        as_clf_x(&c, a, &t);
        as_clf_xlabel(&c, a, &t);
        as_clf_panels(&c, a, &t);
        oom = as_clf_series(&c, a, &t) != 0;
        as_clf_y(&c, a, &t);
        as_clf_title(&c, a, &t);
        oom |= as_clf_panel_titles(&c, a, &t) != 0;
        clf_what(&c, &o->what, what);
    }
    int rc = oom || t.failed ? bn_fail(err, "out of memory") : 1;
    free(c.tr);
    free(c.ev);
    free(c.se);
    buf_free(&t);
    return rc;
}

/* The x axis of a classifier's accuracies into v: of the batch size and
 * the epochs the one with more values (the other is fewer series), else
 * the K of grouped:K orders, else the devices, else the held-out rows'
 * shift, else their scale, else the estimator, else the first of the axes ax that vary,
 * as categories. */
static void accuracy_x(const table_t *tb, const axis_t *const *ax, cview *v)
{
    static const int num_then[] = {KEY_DEVICES, KEY_EVAL_SHIFT,
                                   KEY_EVAL_SCALE};
    v->kind = CX_CAT;
    const axis_t *bs = axis_of(tb, KEY_BATCH_SIZE),
                 *ep = axis_of(tb, KEY_EPOCHS);
    if (varies(bs) || varies(ep)) {
        v->x = varies(bs) && (!varies(ep) || bs->n >= ep->n) ? bs : ep;
        v->kind = CX_NUM;
    }
    const axis_t *o_ax = axis_of(tb, KEY_ORDER);
    size_t nk = 0;
    for (size_t i = 0; o_ax && i < o_ax->n; i++)
        nk += grouped_k(o_ax->val[i]) > 0;
    if (!v->x && varies(o_ax) && nk >= 2)
        v->x = o_ax, v->kind = CX_K;
    for (size_t i = 0; !v->x && i < COUNT(num_then); i++)
        if (varies(axis_of(tb, num_then[i])))
            v->x = axis_of(tb, num_then[i]), v->kind = CX_NUM;
    if (!v->x)
        v->x = varies(axis_of(tb, KEY_ESTIMATOR)) ? axis_of(tb, KEY_ESTIMATOR)
                                                   : ax[0];
    v->xcol = v->x->col;
}

/* Whether stats_err_rel changes along x anywhere, with a series per
 * combination of the other axes (others[0 .. no)): then a row of its
 * panels goes under the accuracies. 0 or 1, -1 on a failure. */
static int stats_changes(const table_t *tb, const cview *xv,
                         const axis_t *const *others, size_t no,
                         bn_error *err)
{
    if (column(tb, "stats_err_rel") < 0)
        return 0;
    cview v = {.tb = tb, .x = xv->x, .kind = xv->kind, .xcol = xv->xcol};
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
    int changes = 0;
    for (size_t s = 0; s < v.sk.n; s++)
        for (size_t xi = 1; xi < v.nx; xi++) {
            double y0 = se[s * v.nx], y = se[s * v.nx + xi];
            if (!isnan(y0) && !isnan(y) && !same(y0, y))
                changes = 1;
        }
    free(se);
    cv_free(&v);
    return changes;
}

/* The classifier's accuracy in both modes against its x axis
 * (accuracy_x), stats_err_rel under it when it changes along x, a panel
 * per value of one other axis and a series per combination of the
 * rest. */
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
    cview v = {.tb = tb};
    accuracy_x(tb, ax, &v);
    const axis_t *others[KEY_COUNT];
    size_t no = 0;
    for (size_t i = 0; i < n; i++)
        if (ax[i] != v.x)
            others[no++] = ax[i];
    int stats_row = stats_changes(tb, &v, others, no, err);
    if (stats_row < 0)
        return -1;
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
    cview v;
    cv_curve_init(&v, tb, 0, CURVE_PANELS);
    int rc = cv_build(&v, err);
    if (rc == 0 && v.nx >= 2) /* one epoch is no curve */
        rc = clf_figure(x, &v, 0,
                        "acc_train_mode and acc_eval_mode after each epoch",
                        o, err);
    cv_free(&v);
    return rc;
}
