/*
 * Which figures an experiment's results support, and what each one draws
 * and says (plot.h). The figure-kind table at the end declares every
 * figure: its name, its script, what it needs and a function that reads
 * the experiment's axes and columns and, when they support the figure,
 * writes the gnuplot assignments that say what to draw. The axes are the
 * key columns (exp.h's table) whose values vary in the file; their roles
 * in a figure (the x axis, one panel per value, one series per value)
 * follow from which of them vary, never from the experiment's name.
 *
 * Every text a figure shows is made here from the numbers: a finding
 * ("stats_err 11.5x higher at B = 256 than at B = 8", "only precise
 * reaches the truth") is worded only when the values in the file bear it
 * out, and a neutral description is given otherwise; axis labels give
 * the rows, epochs and momentum the manifest and the files record.
 * tests/figures_content.py checks each finding against the files.
 */
#include "figure/plot.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "study/exp.h"
#include "model/order.h"
#include "model/run.h"
#include "base/tsv.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))
/* At most this many panels in a figure (a grid of up to 3 x 2). */
#define MAX_PANELS 6
/* A features figure names each feature on the x axis. */
#define MAX_FEATURES 100
/* Below this a score is 0 up to rounding: the scores are sums of squares
 * of numbers of order 1 or more, in double precision. */
#define EXACT 1e-12
/* Features whose true variances span more than this factor are on
 * different scales: an absolute score then measures the largest ones, so
 * the figures add the relative score and draw variances as ratios. */
#define SCALES_DIFFER 100.0
/* A score spanning more than this factor is drawn on a log axis. */
#define LOG_SPAN 20.0

/* ---- text ---- */

/* A buffer's text ("" before anything is added). */
static const char *sb_str(const bn_buf *b) { return b->p ? b->p : ""; }

/* s as text of gnuplot's enhanced mode that prints as itself: the
 * characters it reads as markup are escaped. Markup of our own ("{/:Bold
 * ...}") is added with buf_printf around it. */
static void tx(bn_buf *b, const char *s)
{
    for (; *s; s++) {
        if (strchr("^_@&~{}\\", *s))
            buf_putc(b, '\\');
        buf_putc(b, *s);
    }
}

static void txf(bn_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void txf(bn_buf *b, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *t = n < 0 ? NULL : malloc((size_t)n + 1);
    if (t) {
        vsnprintf(t, (size_t)n + 1, fmt, ap);
        tx(b, t);
    } else {
        b->failed = 1;
    }
    va_end(ap);
    free(t);
}

/* text as a gnuplot double-quoted string, byte for byte. */
static void gp_str(bn_buf *b, const char *text)
{
    buf_printf(b, "\"");
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\')
            buf_printf(b, "\\%c", *c);
        else if (*c == '\n')
            buf_printf(b, "\\n");
        else if (*c == '\t')
            buf_printf(b, "\\t");
        else
            buf_printf(b, "%c", *c);
    }
    buf_printf(b, "\"");
}

static void gp_num(bn_buf *b, double v)
{
    if (isnan(v))
        buf_printf(b, "NaN");
    else
        buf_printf(b, "%.17g", v);
}

static void as_str(bn_buf *a, const char *name, const char *value)
{
    buf_printf(a, "%s = ", name);
    gp_str(a, value);
    buf_printf(a, "; ");
}

static void as_num(bn_buf *a, const char *name, double v)
{
    buf_printf(a, "%s = ", name);
    gp_num(a, v);
    buf_printf(a, "; ");
}

/* An array of n strings (gnuplot's arrays hold at least one: an empty
 * list is one empty string). */
static void as_strs(bn_buf *a, const char *name, char *const *v, size_t n)
{
    buf_printf(a, "array %s[%zu] = [", name, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        buf_printf(a, i ? ", " : "");
        gp_str(a, v[i]);
    }
    buf_printf(a, n ? "]; " : "\"\"]; ");
}

static void as_nums(bn_buf *a, const char *name, const double *v, size_t n)
{
    buf_printf(a, "array %s[%zu] = [", name, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        buf_printf(a, i ? ", " : "");
        gp_num(a, v[i]);
    }
    buf_printf(a, n ? "]; " : "NaN]; ");
}

/* A list of texts built one by one. */
typedef struct {
    char **v;
    size_t n, cap;
    int oom;
} strlist;

static void sl_push(strlist *l, const char *s)
{
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    char *c = strdup(s);
    if (!c) {
        l->oom = 1;
        return;
    }
    l->v[l->n++] = c;
}

/* The index of s among the n texts v, or n when it is not there. */
static size_t str_index(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return i;
    return n;
}

static size_t sl_find(const strlist *l, const char *s)
{
    return str_index((const char *const *)l->v, l->n, s);
}

static void sl_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static double num(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return end == s || *end ? NAN : v;
}

static int same(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b));
}

/* ---- an experiment's files and axes ---- */

/* A key column of a file and its distinct values: ascending for a number,
 * in the file's order (the experiment's) otherwise. */
typedef struct {
    int key;         /* key_id */
    const char *col; /* its name */
    int ci;          /* its column in the file */
    int numeric;
    size_t n;
    const char **val;
} axis_t;

typedef struct {
    int ok; /* the file exists */
    char path[1100];
    tsv_table t;
    axis_t ax[KEY_COUNT];
    size_t nax;
} table_t;

typedef struct {
    const char *dir, *name;
    table_t sum, feat, dist, expect, manifest, curve, eff;
    double rows;       /* the population's rows, NaN when unknown */
    double published_p; /* the key table's default new-value weight */
    int scales_differ;
} plot_exp;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_num(const void *a, const void *b)
{
    double x = num(*(const char *const *)a), y = num(*(const char *const *)b);
    return (x > y) - (x < y);
}

static size_t val_index(const axis_t *a, const char *cell)
{
    return str_index(a->val, a->n, cell);
}

static int find_axes(table_t *tb, bn_error *err)
{
    const tsv_table *t = &tb->t;
    for (size_t c = 0; c < t->ncol; c++) {
        int k = exp_key_column(t->names[c]);
        /* The model is no axis of a figure: each figure kind is of one
         * model and draws that model's rows of a file of both. */
        if (k < 0 || k == KEY_EXPERIMENT || k == KEY_POPULATION ||
            k == KEY_MODEL)
            continue;
        const key_def *d = exp_key((key_id)k);
        axis_t *a = &tb->ax[tb->nax++];
        a->key = k;
        a->col = d->name;
        a->ci = (int)c;
        a->numeric = d->type == KT_REALS || d->type == KT_UINTS ||
                     k == KEY_NEW_WEIGHT;
        a->val = malloc((t->nrow ? t->nrow : 1) * sizeof *a->val);
        if (!a->val)
            return bn_fail(err, "%s: out of memory", tb->path);
        for (size_t r = 0; r < t->nrow; r++) {
            const char *cell = tsv_cell(t, r, c);
            if (a->numeric && isnan(num(cell)) && strcmp(cell, "-") != 0)
                return bn_fail(err, "%s:%zu: %s is '%s', not a number",
                               tb->path, r + 2, a->col, cell);
            /* "-": the setting is not one of this row's model (a file
             * of both models), so no value of the axis. */
            if (strcmp(cell, "-") != 0 && val_index(a, cell) == a->n)
                a->val[a->n++] = cell;
        }
        if (a->numeric)
            qsort(a->val, a->n, sizeof *a->val, cmp_num);
    }
    return 0;
}

static void table_free(table_t *tb)
{
    for (size_t i = 0; i < tb->nax; i++)
        free(tb->ax[i].val);
    if (tb->ok)
        tsv_free(&tb->t);
    memset(tb, 0, sizeof *tb);
}

/* dir/file read into tb; tb->ok stays 0 when there is no such file. */
static int load_table(const char *dir, const char *file, table_t *tb,
                      bn_error *err)
{
    memset(tb, 0, sizeof *tb);
    snprintf(tb->path, sizeof tb->path, "%s/%s", dir, file);
    FILE *fp = fopen(tb->path, "rb");
    if (!fp)
        return errno == ENOENT ? 0
                               : bn_fail(err, "%s: cannot open: %s",
                                         tb->path, strerror(errno));
    fclose(fp);
    if (tsv_read(tb->path, &tb->t, err) != 0)
        return -1;
    tb->ok = 1;
    return find_axes(tb, err);
}

static const axis_t *axis_of(const table_t *tb, int key)
{
    for (size_t i = 0; i < tb->nax; i++)
        if (tb->ax[i].key == key)
            return &tb->ax[i];
    return NULL;
}

static int varies(const axis_t *a) { return a && a->n > 1; }

static int column(const table_t *tb, const char *name)
{
    return tb->ok ? tsv_column(&tb->t, name) : -1;
}

static double cell_num(const table_t *tb, size_t row, int col)
{
    return col < 0 ? NAN : num(tsv_cell(&tb->t, row, (size_t)col));
}

static const char *manifest_value(const plot_exp *x, const char *key)
{
    const tsv_table *t = &x->manifest.t;
    if (!x->manifest.ok || t->ncol < 2)
        return NULL;
    for (size_t r = 0; r < t->nrow; r++)
        if (strcmp(tsv_cell(t, r, 0), key) == 0)
            return tsv_cell(t, r, 1);
    return NULL;
}

/* The true variances' spread: features.tsv's, else the manifest's
 * generated features (sd); a file's population without features.tsv is
 * taken to differ, which only adds the relative score. */
static int scales_differ(const plot_exp *x)
{
    double lo = INFINITY, hi = 0;
    int c = column(&x->feat, "true_var");
    if (c >= 0) {
        for (size_t r = 0; r < x->feat.t.nrow; r++) {
            double v = cell_num(&x->feat, r, c);
            if (v > 0) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    } else if (x->manifest.ok) {
        const tsv_table *t = &x->manifest.t;
        for (size_t r = 0; r < t->nrow; r++) {
            double mean, sd, rho;
            char name[256];
            if (strcmp(tsv_cell(t, r, 0), "population.feature") != 0 ||
                sscanf(tsv_cell(t, r, 1), "%255s %lf %lf %lf", name, &mean,
                       &sd, &rho) != 4 || !(sd > 0))
                continue;
            lo = sd * sd < lo ? sd * sd : lo;
            hi = sd * sd > hi ? sd * sd : hi;
        }
        if (hi == 0 && manifest_value(x, "population.file"))
            return 1;
    }
    return hi > 0 && hi / lo > SCALES_DIFFER;
}

static void exp_free_all(plot_exp *x)
{
    table_free(&x->sum);
    table_free(&x->feat);
    table_free(&x->dist);
    table_free(&x->expect);
    table_free(&x->manifest);
    table_free(&x->curve);
    table_free(&x->eff);
}

static int exp_open(plot_exp *x, const char *dir, const char *name,
                    bn_error *err)
{
    memset(x, 0, sizeof *x);
    x->dir = dir;
    x->name = name;
    if (load_table(dir, "manifest.tsv", &x->manifest, err) != 0 ||
        load_table(dir, "summary.tsv", &x->sum, err) != 0 ||
        load_table(dir, "features.tsv", &x->feat, err) != 0 ||
        load_table(dir, "distribution.tsv", &x->dist, err) != 0 ||
        load_table(dir, "expectation.tsv", &x->expect, err) != 0 ||
        load_table(dir, "curve.tsv", &x->curve, err) != 0 ||
        load_table(dir, "effective.tsv", &x->eff, err) != 0) {
        exp_free_all(x);
        return -1;
    }
    /* The rows trained on: a held-out split's, else the population's. */
    const char *rows = manifest_value(x, "train_rows");
    if (!rows)
        rows = manifest_value(x, "population.rows");
    if (!rows)
        rows = manifest_value(x, "population.file_rows");
    x->rows = rows ? num(rows) : NAN;
    run_config cfg;
    run_default_config(&cfg);
    x->published_p = cfg.layer.p;
    x->scales_differ = scales_differ(x);
    return 0;
}

/* ---- the roles of the axes in a figure ---- */

/* The x axis: the first of these that varies. */
static const int x_keys[] = {KEY_BATCH_SIZE, KEY_EPOCHS, KEY_PRECISE,
                             KEY_NEW_WEIGHT, KEY_EPS, KEY_GAMMA, KEY_BETA};

/* How each x axis is named and drawn. */
static const struct {
    int key;
    const char *noun;  /* "at every batch size" */
    const char *sym;   /* "B = 256" */
    const char *label; /* the axis label */
} x_words[] = {
    {KEY_BATCH_SIZE, "batch size", "B", "batch size B"},
    {KEY_EPOCHS, "number of epochs", "E", "epochs E"},
    {KEY_PRECISE, "number of pooled batches", "K", "pooled batches K"},
    {KEY_NEW_WEIGHT, "new-value weight", "p", "new-value weight p"},
    {KEY_EPS, "eps", "eps", "eps"},
    {KEY_GAMMA, "gamma", "gamma", "gamma"},
    {KEY_BETA, "beta", "beta", "beta"},
};

static size_t x_word(int key)
{
    for (size_t i = 0; i < COUNT(x_words); i++)
        if (x_words[i].key == key)
            return i;
    return 0;
}

typedef struct {
    const axis_t *x, *panel;
    const axis_t *series[KEY_COUNT];
    size_t nsa;
} roles_t;

/* The x axis is the first of x_keys that varies; of the other varying
 * axes (the seed aside: many seeds are the distribution's), one gives the
 * panels when two or more vary (the order if it does, else the first),
 * and the rest the series. The momentum is shown as its new-value weight
 * p, which says the same whatever its convention. nscores 0: no
 * panels. */
static void roles_of(const table_t *tb, int with_x, size_t nscores,
                     roles_t *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; with_x && i < COUNT(x_keys) && !r->x; i++)
        if (varies(axis_of(tb, x_keys[i])))
            r->x = axis_of(tb, x_keys[i]);
    const axis_t *nw = axis_of(tb, KEY_NEW_WEIGHT);
    const axis_t *others[KEY_COUNT];
    size_t no = 0;
    for (size_t i = 0; i < tb->nax; i++) {
        const axis_t *a = &tb->ax[i];
        if (!varies(a) || a == r->x || a->key == KEY_SEED)
            continue;
        if ((a->key == KEY_MOMENTUM && nw) ||
            (a->key == KEY_WEIGHTS && varies(nw)))
            continue;
        others[no++] = a;
    }
    if (no >= 2 && nscores > 0) {
        const axis_t *p = others[0];
        for (size_t i = 0; i < no; i++)
            if (others[i]->key == KEY_ORDER)
                p = others[i];
        if (p->n * nscores <= MAX_PANELS)
            r->panel = p;
    }
    for (size_t i = 0; i < no; i++)
        if (others[i] != r->panel)
            r->series[r->nsa++] = others[i];
}

/* A row's series: its cells of the series axes, joined by tabs. */
static void row_series(const tsv_table *t, size_t row, const roles_t *r,
                       bn_buf *b)
{
    buf_clear(b);
    for (size_t i = 0; i < r->nsa; i++)
        buf_printf(b, "%s%s", i ? "\t" : "",
                   tsv_cell(t, row, (size_t)r->series[i]->ci));
}

/* The values of one column by panel, series and x: y[(p ns + s) nx + xi]
 * (NaN where no row has them). */
typedef struct {
    size_t np, ns, nx;
    strlist skey; /* the series, in the file's order */
    double *y;
} grid_t;

static const char *cell_of(const tsv_table *t, size_t row, const axis_t *a)
{
    return tsv_cell(t, row, (size_t)a->ci);
}

static void grid_free(grid_t *g)
{
    sl_free(&g->skey);
    free(g->y);
    memset(g, 0, sizeof *g);
}

/* Column col of the rows that pass keep (NULL: all) by panel, series and
 * x; the series in the order their first rows come. */
static int grid_make(const table_t *tb, const roles_t *r, const char *col,
                     int (*keep)(const table_t *, size_t, const void *),
                     const void *ctx, grid_t *g, bn_error *err)
{
    memset(g, 0, sizeof *g);
    const tsv_table *t = &tb->t;
    size_t *series = malloc((t->nrow ? t->nrow : 1) * sizeof *series);
    bn_buf k = {0};
    for (size_t row = 0; series && row < t->nrow; row++) {
        series[row] = SIZE_MAX;
        if (keep && !keep(tb, row, ctx))
            continue;
        row_series(t, row, r, &k);
        series[row] = sl_find(&g->skey, sb_str(&k));
        if (series[row] == g->skey.n)
            sl_push(&g->skey, sb_str(&k));
    }
    g->ns = g->skey.n;
    g->np = r->panel ? r->panel->n : 1;
    g->nx = r->x ? r->x->n : 1;
    size_t n = g->np * (g->ns ? g->ns : 1) * g->nx;
    g->y = malloc(n * sizeof *g->y);
    int oom = !series || k.failed || g->skey.oom || !g->y;
    buf_free(&k);
    if (oom) {
        free(series);
        grid_free(g);
        return bn_fail(err, "%s: out of memory", tb->path);
    }
    for (size_t i = 0; i < n; i++)
        g->y[i] = NAN;
    int c = column(tb, col);
    for (size_t row = 0; c >= 0 && row < t->nrow; row++) {
        /* "-": a score of the other model, in a file of both */
        if (series[row] == SIZE_MAX ||
            strcmp(tsv_cell(t, row, (size_t)c), "-") == 0)
            continue;
        size_t p = r->panel ? val_index(r->panel, cell_of(t, row, r->panel))
                            : 0;
        size_t xi = r->x ? val_index(r->x, cell_of(t, row, r->x)) : 0;
        if (p < g->np && xi < g->nx)
            g->y[(p * g->ns + series[row]) * g->nx + xi] = cell_num(tb, row, c);
    }
    free(series);
    return 0;
}

static double gy(const grid_t *g, size_t p, size_t s, size_t xi)
{
    return g->y[(p * g->ns + s) * g->nx + xi];
}

/* One value of each series axis of series s (its key split at tabs). */
static const char *series_cell(const grid_t *g, size_t s, size_t i,
                               char *buf, size_t cap)
{
    const char *c = g->skey.v[s];
    for (size_t j = 0; j < i && c; j++) {
        c = strchr(c, '\t');
        c = c ? c + 1 : NULL;
    }
    if (!c)
        return "";
    size_t len = strcspn(c, "\t");
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, c, len);
    buf[len] = '\0';
    return buf;
}

/* ---- words ---- */

/* The scores the figures draw, as they name them. */
static const struct {
    const char *name;
    const char *axis;  /* the y axis label */
    const char *worse; /* what a higher value does, a plural verb phrase */
    const char *zero[2]; /* what a 0 means, singular and plural */
} score_words[] = {
    {"stats_err", "running statistics vs truth, stats_err",
     "worsen the running statistics", {"reaches the truth", "reach the truth"}},
    {"stats_err_rel", "in each feature's own scale, stats_err_rel",
     "worsen the running statistics", {"reaches the truth", "reach the truth"}},
    {"train_eval_rmse", "train/eval gap, train_eval_rmse",
     "widen the train/eval gap",
     {"makes train and eval agree", "make train and eval agree"}},
    {"batch_mean_err", "one batch's mean vs truth, batch_mean_err", NULL,
     {NULL, NULL}},
};

static size_t score_word(const char *name)
{
    for (size_t i = 0; i < COUNT(score_words); i++)
        if (strcmp(score_words[i].name, name) == 0)
            return i;
    return 0;
}

/* What the series of an axis are called: "every estimator". */
static const char *axis_noun(const axis_t *a)
{
    switch (a->key) {
    case KEY_NEW_WEIGHT:
        return "p";
    default:
        return a->col;
    }
}

/* A value of an axis in words: in a sentence ("p = 0.1", "batches sorted
 * by f0"), or as a key entry, which marks the published p. */
static void value_words(bn_buf *b, const plot_exp *x, const axis_t *a,
                        const char *cell, int sentence)
{
    char buf[600];
    double v = num(cell);
    if (a->key == KEY_NEW_WEIGHT) {
        if (sentence)
            txf(b, "p = %g", v);
        else if (same(v, x->published_p))
            txf(b, "published: %g old = %g new", 1 - v, v);
        else
            txf(b, "p = %g  (%g old)", v, 1 - v);
    } else if (a->key == KEY_ORDER) {
        tx(b, order_phrase(cell, buf, sizeof buf));
    } else if (a->key == KEY_ESTIMATOR) {
        tx(b, cell);
    } else if (a->numeric) {
        txf(b, "%s = %g", a->col, v);
    } else {
        txf(b, "%s %s", a->col, cell);
    }
}

static void series_words(bn_buf *b, const plot_exp *x, const roles_t *r,
                         const grid_t *g, size_t s, int sentence)
{
    char buf[600];
    if (r->nsa == 0)
        return;
    for (size_t i = 0; i < r->nsa; i++) {
        buf_printf(b, i ? ", " : "");
        value_words(b, x, r->series[i], series_cell(g, s, i, buf, sizeof buf),
                    sentence);
    }
}

/* The new-value weight of a file when it does not vary, else NaN. */
static double fixed_p(const table_t *tb)
{
    const axis_t *nw = axis_of(tb, KEY_NEW_WEIGHT);
    return nw && nw->n == 1 ? num(nw->val[0]) : NAN;
}

/* How a series is coloured (scripts/style.gp's series_colour): the
 * published setting black, a new-value weight on the ordered scale, an
 * order or an estimator by its name, anything else by its place. */
static const char *series_role(const plot_exp *x, const table_t *tb,
                               const roles_t *r, const char *cell)
{
    if (r->nsa != 1)
        return "index";
    int k = r->series[0]->key;
    if (k == KEY_NEW_WEIGHT)
        return same(num(cell), x->published_p) ? "published" : "seq";
    if (k == KEY_ORDER)
        return "order";
    if (k == KEY_ESTIMATOR)
        return strcmp(cell, "ema") == 0 && same(fixed_p(tb), x->published_p)
                   ? "published"
                   : "estimator";
    return "index";
}

/* "512 rows, 1 epoch, momentum 0.9 old (p = 0.1)": what the manifest and
 * the file say of the settings no axis of the figure shows. */
static void facts(bn_buf *b, const plot_exp *x, const table_t *tb,
                  const roles_t *r)
{
    const char *sep = "";
    if (!isnan(x->rows)) {
        txf(b, "%.0f rows", x->rows);
        sep = ", ";
    }
    const axis_t *ep = axis_of(tb, KEY_EPOCHS);
    if (ep && ep->n == 1 && (!r || ep != r->x)) {
        double e = num(ep->val[0]);
        txf(b, "%s%g epoch%s", sep, e, e == 1 ? "" : "s");
        sep = ", ";
    }
    const axis_t *m = axis_of(tb, KEY_MOMENTUM);
    const axis_t *w = axis_of(tb, KEY_WEIGHTS);
    if (m && m->n == 1 && w && w->n == 1) {
        txf(b, "%smomentum %g %s", sep, num(m->val[0]), w->val[0]);
        double p = fixed_p(tb);
        if (!isnan(p) && strcmp(w->val[0], "new") != 0)
            txf(b, ", p = %g", p);
        sep = ", ";
    }
    const axis_t *pa = axis_of(tb, KEY_PARTIAL);
    if (pa && pa->n == 1 && strcmp(pa->val[0], "keep") == 0)
        txf(b, "%sa last partial batch kept", sep);
}

/* An x axis is drawn on a log scale when it is positive and spans a
 * factor of 8 or more: base 2 for the counts, 10 for the reals. */
static int x_is_log(const axis_t *x)
{
    double lo = num(x->val[0]), hi = num(x->val[x->n - 1]);
    return lo > 0 && hi / lo >= 8;
}

static int x_is_count(const axis_t *x)
{
    return exp_key((key_id)x->key)->type == KT_UINTS;
}

/* Its scale and a tic at each value. */
static void x_axis(bn_buf *a, const axis_t *x)
{
    size_t n = x->n;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        a->failed = 1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = num(x->val[i]);
    as_num(a, "xlog", x_is_log(x) ? (x_is_count(x) ? 2 : 10) : 0);
    as_nums(a, "xv", v, n);
    free(v);
}

static void x_label(bn_buf *t, const plot_exp *x, const table_t *tb,
                    const roles_t *r, int log)
{
    buf_clear(t);
    tx(t, x_words[x_word(r->x->key)].label);
    if (log)
        tx(t, x_is_count(r->x) ? " (log₂ scale" : " (log scale");
    bn_buf f = {0};
    facts(&f, x, tb, r);
    if (f.len)
        buf_printf(t, "%s%s)", log ? "; " : " (", sb_str(&f));
    else if (log)
        buf_printf(t, ")");
    t->failed |= f.failed;
    buf_free(&f);
}

/* "B = 256" for x index xi. */
static void at_x(bn_buf *b, const roles_t *r, size_t xi)
{
    txf(b, "%s = %g", x_words[x_word(r->x->key)].sym, num(r->x->val[xi]));
}

static void capitalise(bn_buf *b, size_t from)
{
    if (b->p && b->len > from && b->p[from] >= 'a' && b->p[from] <= 'z')
        b->p[from] = (char)(b->p[from] - 'a' + 'A');
}

/* A series exact (0 up to rounding) wherever it has a value. */
static int series_exact(const grid_t *const *gs, size_t n, size_t s)
{
    int any = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t p = 0; p < gs[k]->np; p++)
            for (size_t xi = 0; xi < gs[k]->nx; xi++) {
                double y = gy(gs[k], p, s, xi);
                if (isnan(y))
                    continue;
                if (!(y < EXACT))
                    return 0;
                any = 1;
            }
    return any;
}

/* The series of a figure for its script: ns, skey(d) (a row's series),
 * sv (each series' key), sl (its key entry), srole and sname (its colour's
 * role and name). A series that is 0 up to rounding wherever the grids gs
 * have it says so in its entry; *published (when given) is the index of
 * the published series, else 0. -1 when out of memory. */
static int as_series(bn_buf *a, const plot_exp *x, const table_t *tb,
                     const roles_t *r, const grid_t *g,
                     const grid_t *const *gs, size_t ngs, size_t *published)
{
    size_t ns = g->ns;
    as_num(a, "ns", (double)ns);
    buf_printf(a, "skey(d) = ");
    for (size_t i = 0; i < r->nsa; i++)
        buf_printf(a, "%sstrcol(\"%s\")", i ? " . \"\\t\" . " : "",
                   r->series[i]->col);
    buf_printf(a, r->nsa ? "; " : "\"\"; ");
    as_strs(a, "sv", g->skey.v, ns);
    strlist sl = {0}, role = {0}, sname = {0};
    bn_buf t = {0};
    char cbuf[600];
    if (published)
        *published = 0;
    for (size_t s = 0; s < ns; s++) {
        buf_clear(&t);
        /* A combination of values is named shortly, "p = 0.1, ema". */
        series_words(&t, x, r, g, s, r->nsa > 1);
        if (r->nsa == 1 && r->series[0]->key == KEY_ESTIMATOR &&
            strcmp(g->skey.v[s], "ema") == 0 &&
            same(fixed_p(tb), x->published_p))
            txf(&t, ", p = %g (published)", x->published_p);
        if (ns > 1 && gs && series_exact(gs, ngs, s))
            buf_printf(&t, ": exact, drawn at 0");
        sl_push(&sl, sb_str(&t));
        const char *cell =
            r->nsa ? series_cell(g, s, 0, cbuf, sizeof cbuf) : "";
        const char *ro = series_role(x, tb, r, cell);
        if (published && strcmp(ro, "published") == 0)
            *published = s;
        sl_push(&role, ro);
        sl_push(&sname, cell);
    }
    as_strs(a, "sl", sl.v, sl.n);
    as_strs(a, "srole", role.v, role.n);
    as_strs(a, "sname", sname.v, sname.n);
    int oom = t.failed || sl.oom || role.oom || sname.oom;
    buf_free(&t);
    sl_free(&sl);
    sl_free(&role);
    sl_free(&sname);
    return oom ? -1 : 0;
}

/* ---- the figure kinds ---- */

typedef struct {
    bn_buf assign, what;
} figure_out;

typedef int (*kind_fn)(const plot_exp *x, figure_out *o, bn_error *err);

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

static int one_seed(const table_t *tb)
{
    return !varies(axis_of(tb, KEY_SEED));
}

/* Scores against the x axis: one figure per kind, scores[] its panels'
 * rows, series and panels by the roles; the published look of
 * batch-size, momentum, ordering and estimators for their experiments. */
/* A score's y axis over its n values (NaN: no value there): the least
 * and the greatest value above rounding (lo NaN when there is none),
 * whether a value is 0 up to rounding, and a log scale when one is (a
 * floor then draws it) or the values span more than LOG_SPAN. */
typedef struct {
    double lo, hi;
    int zero, log;
} y_scale;

static y_scale y_scale_of(const double *y, size_t n)
{
    double lo = INFINITY, hi = 0;
    int zero = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(y[i]))
            continue;
        if (y[i] < EXACT)
            zero = 1;
        else {
            lo = y[i] < lo ? y[i] : lo;
            hi = y[i] > hi ? y[i] : hi;
        }
    }
    /* Every value 0 up to rounding: a linear axis shows them as they
     * are, and no floor is needed. */
    if (isinf(lo)) {
        zero = 0;
        hi = hi > 0 ? hi : 1;
    }
    return (y_scale){isinf(lo) ? NAN : lo, hi, zero,
                     zero || (hi > 0 && hi / lo > LOG_SPAN)};
}

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

/* A classifier's results: its statistics are drawn beside its
 * accuracies (kind_accuracy), and the layer's figures of them alone
 * (stats-err, init-weight) would read a model whose batch norm sees
 * inputs that change as it learns as if it were the layer. */
static int predictions(const plot_exp *x)
{
    return column(&x->sum, "acc_eval_mode") >= 0;
}

static int kind_stats_err(const plot_exp *x, figure_out *o, bn_error *err)
{
    const char *scores[2] = {"stats_err", "stats_err_rel"};
    if (predictions(x))
        return 0;
    return curves(x, o, scores, x->scales_differ ? 2 : 1,
                  x->scales_differ ? "stats_err and stats_err_rel"
                                   : "stats_err",
                  err);
}

static int kind_train_eval(const plot_exp *x, figure_out *o, bn_error *err)
{
    const char *scores[1] = {"train_eval_rmse"};
    return curves(x, o, scores, 1, "train_eval_rmse", err);
}

/* ---- features ---- */

/* The rows of one configuration but for the batch size: each other
 * varying axis at its first value (the experiment file's first). */
typedef struct {
    const table_t *tb;
    const axis_t *fix[KEY_COUNT];
    size_t nfix;
} selection;

static void select_first(const table_t *tb, selection *s)
{
    memset(s, 0, sizeof *s);
    s->tb = tb;
    for (size_t i = 0; i < tb->nax; i++)
        if (varies(&tb->ax[i]) && tb->ax[i].key != KEY_BATCH_SIZE)
            s->fix[s->nfix++] = &tb->ax[i];
}

/* The first value of axis a in file order (a numeric axis's values are
 * sorted, so its first row is asked for). */
static const char *first_value(const table_t *tb, const axis_t *a)
{
    return tb->t.nrow ? cell_of(&tb->t, 0, a) : "";
}

/* Row row of table tb agrees with the selection made on s->tb. */
static int selected(const table_t *tb, size_t row, const void *ctx)
{
    const selection *s = ctx;
    for (size_t i = 0; i < s->nfix; i++) {
        int c = column(tb, s->fix[i]->col);
        if (c >= 0 && strcmp(tsv_cell(&tb->t, row, (size_t)c),
                             first_value(s->tb, s->fix[i])) != 0)
            return 0;
    }
    return 1;
}

/* sel(d) for a script: the row is of the selection. */
static void as_selection(bn_buf *a, const selection *s)
{
    buf_printf(a, "sel(d) = 1");
    for (size_t i = 0; i < s->nfix; i++) {
        buf_printf(a, " && strcol(\"%s\") eq ", s->fix[i]->col);
        gp_str(a, first_value(s->tb, s->fix[i]));
    }
    buf_printf(a, "; ");
}

/* The features' truth and running variances at the smallest and the
 * largest batch size of one configuration. */
static int kind_features(const plot_exp *x, figure_out *o, bn_error *err)
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
static int kind_init_weight(const plot_exp *x, figure_out *o, bn_error *err)
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

/* ---- many seeds ---- */

static int score_is(const table_t *tb, size_t row, const void *ctx)
{
    int c = column(tb, "score");
    return c >= 0 && strcmp(tsv_cell(&tb->t, row, (size_t)c), ctx) == 0;
}

/* stats_err across the seeds (distribution.tsv: a band from the 5th to
 * the 95th percentile, the median as a line, and the first seed's run
 * set among them), and the closed form of the running mean's expected
 * error against the shuffles (expectation.tsv). */
static int kind_shuffles(const plot_exp *x, figure_out *o, bn_error *err)
{
    static const char *const score = "stats_err";
    int have_d = column(&x->dist, "p05") >= 0 &&
                 column(&x->dist, "p50") >= 0 &&
                 column(&x->dist, "p95") >= 0;
    int have_e = column(&x->expect, "expected_mean_err") >= 0 &&
                 column(&x->expect, "mc_mean_err") >= 0 &&
                 column(&x->expect, "z") >= 0;
    if (!have_d && !have_e)
        return 0;
    const table_t *main = have_d ? &x->dist : &x->expect;
    roles_t r;
    roles_of(main, 1, 0, &r);
    if (!r.x || r.x->key != KEY_BATCH_SIZE)
        return 0;
    grid_t g05 = {0}, g50 = {0}, g95 = {0};
    bn_buf t = {0};
    strlist pct = {0};
    double *y1 = NULL, *lo_err = NULL, *hi_err = NULL;
    size_t *below = NULL, *seen = NULL;
    int rc = -1;
    const void *sc = score;
    int (*keep)(const table_t *, size_t, const void *) =
        have_d ? score_is : NULL;
    if (grid_make(main, &r, "p50", keep, sc, &g50, err) != 0 ||
        grid_make(main, &r, "p05", keep, sc, &g05, err) != 0 ||
        grid_make(main, &r, "p95", keep, sc, &g95, err) != 0)
        goto done;
    size_t nx = g50.nx, lo = 0, hi = nx - 1;
    int cs = column(main, "seeds");
    double nseeds = cs >= 0 && main->t.nrow ? cell_num(main, 0, cs) : NAN;

    bn_buf *a = &o->assign;
    as_str(a, "dist", have_d ? x->dist.path : "");
    as_str(a, "expect", have_e ? x->expect.path : "");
    as_str(a, "score", score);
    as_num(a, "nseeds", nseeds);
    x_axis(a, r.x);
    x_label(&t, x, main, &r, x_is_log(r.x));
    as_str(a, "xlabel", sb_str(&t));
    size_t one = 0;
    if (as_series(a, x, main, &r, &g50, NULL, 0, &one) != 0) {
        bn_fail(err, "out of memory");
        goto done;
    }

    /* The first seed's run of the published series (else the first),
     * from summary.tsv, and the share of seeds below it at each B. */
    const table_t *sum = &x->sum;
    roles_t rs;
    roles_of(sum, 1, 0, &rs);
    const axis_t *seed = axis_of(sum, KEY_SEED);
    int cy = column(sum, score);
    int overlay = have_d && sum->ok && seed && cy >= 0 && rs.x &&
                  rs.x->key == KEY_BATCH_SIZE && rs.nsa == r.nsa &&
                  rs.x->n == nx;
    double pct_max = 0, one_ratio = NAN, reach = 0, runs = 0;
    if (overlay) {
        size_t nseed = seed->n;
        y1 = malloc(nx * sizeof *y1);
        below = calloc(nx, sizeof *below);
        seen = calloc(nx, sizeof *seen);
        lo_err = malloc(nseed * sizeof *lo_err);
        hi_err = malloc(nseed * sizeof *hi_err);
        if (!y1 || !below || !seen || !lo_err || !hi_err) {
            bn_fail(err, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < nx; i++)
            y1[i] = NAN;
        for (size_t i = 0; i < nseed; i++)
            lo_err[i] = hi_err[i] = NAN;
        const char *s1 = seed->val[0];
        for (int pass = 0; pass < 2; pass++)
            for (size_t row = 0; row < sum->t.nrow; row++) {
                row_series(&sum->t, row, &rs, &t);
                if (strcmp(sb_str(&t), g50.skey.v[one]) != 0)
                    continue;
                size_t xi = val_index(rs.x, cell_of(&sum->t, row, rs.x));
                double y = cell_num(sum, row, cy);
                const char *sd = cell_of(&sum->t, row, seed);
                if (pass == 0) {
                    if (strcmp(sd, s1) == 0)
                        y1[xi] = y;
                    size_t k = val_index(seed, sd);
                    if (xi == lo)
                        lo_err[k] = y;
                    if (xi == hi)
                        hi_err[k] = y;
                } else {
                    below[xi] += y < y1[xi];
                    seen[xi]++;
                }
            }
        for (size_t i = 0; i < nx; i++) {
            double share = seen[i] ? 100.0 * (double)below[i] / (double)seen[i]
                                   : NAN;
            pct_max = share > pct_max ? share : pct_max;
            buf_clear(&t);
            buf_printf(&t, "%.0f%%", share);
            sl_push(&pct, sb_str(&t));
        }
        one_ratio = y1[hi] / y1[lo];
        for (size_t k = 0; k < nseed; k++)
            if (!isnan(lo_err[k]) && !isnan(hi_err[k])) {
                runs++;
                reach += hi_err[k] / lo_err[k] >= one_ratio;
            }
        as_str(a, "seed1", s1);
    } else {
        as_str(a, "seed1", "");
    }
    as_num(a, "overlay", overlay);
    as_num(a, "one", (double)(one + 1));
    as_strs(a, "pct", pct.v, pct.n);
    as_str(a, "summary", overlay ? sum->path : "");

    /* The title: where the single run falls, when the numbers say. */
    buf_clear(&t);
    if (overlay && pct_max <= 10)
        txf(&t, "A single run (seed %s) is in the lowest 10%% of %g shuffles "
                "at every B",
            seed->val[0], nseeds);
    else if (overlay)
        txf(&t, "A single run (seed %s) is one draw from %g shuffles",
            seed->val[0], nseeds);
    else if (have_d)
        txf(&t, "stats_err over %g shuffles", nseeds);
    else
        txf(&t, "The closed form against %g shuffles", nseeds);
    as_str(a, "title", sb_str(&t));

    /* The band subtitle: from which B on the published series' band is
     * narrower than its median line is thick (under 10 % on this canvas). */
    buf_clear(&t);
    if (have_d) {
        buf_printf(&t, "{/:Bold ");
        txf(&t, "%s over %g shuffles", score, nseeds);
        buf_printf(&t, "}\nbands 5–95 %%, lines the median");
        size_t thin = nx;
        for (size_t k = nx; k-- > 0;) {
            if (gy(&g95, 0, one, k) / gy(&g05, 0, one, k) < 1.1)
                thin = k;
            else
                break;
        }
        if (thin < nx) {
            buf_printf(&t, ";\nfrom ");
            at_x(&t, &r, thin);
            buf_printf(&t, " ");
            size_t at = t.len;
            series_words(&t, x, &r, &g50, one, 1);
            buf_printf(&t, t.len > at ? "'s band is thinner than its line"
                                      : "the band is thinner than its line");
        }
    }
    as_str(a, "bandtitle", sb_str(&t));
    buf_clear(&t);
    if (overlay) {
        series_words(&t, x, &r, &g50, one, 1);
        if (t.len)
            buf_printf(&t, ", ");
        txf(&t, "B %s ÷ B %s:\n%.1f× for seed %s, %.1f× for the median;\n"
                "%.0f%% of shuffles reach %.1f×",
            r.x->val[hi], r.x->val[lo], one_ratio, seed->val[0],
            gy(&g50, 0, one, hi) / gy(&g50, 0, one, lo),
            runs > 0 ? 100.0 * reach / runs : NAN, one_ratio);
    }
    as_str(a, "rationote", sb_str(&t));

    /* The closed form's worst disagreement, in standard errors. */
    double zmax = 0;
    if (have_e) {
        int cz = column(&x->expect, "z");
        for (size_t row = 0; row < x->expect.t.nrow; row++) {
            double z = fabs(cell_num(&x->expect, row, cz));
            zmax = z > zmax ? z : zmax;
        }
    }
    buf_clear(&t);
    if (have_e)
        txf(&t, "agree within\n%.1f standard errors", zmax);
    as_str(a, "znote", sb_str(&t));

    buf_printf(&o->what, "%s against batch_size",
               have_d && have_e ? "stats_err across the seeds, and the "
                                  "closed form against them"
               : have_d         ? "stats_err across the seeds"
                                : "the closed form against the seeds");
    if (r.nsa)
        buf_printf(&o->what, ", a series per %s", r.series[0]->col);
    rc = t.failed || pct.oom
             ? bn_fail(err, "out of memory")
             : 1;
done:
    grid_free(&g05);
    grid_free(&g50);
    grid_free(&g95);
    buf_free(&t);
    sl_free(&pct);
    free(y1);
    free(lo_err);
    free(hi_err);
    free(below);
    free(seen);
    return rc;
}

/* ---- predictions: the classifier's accuracy in both modes ---- */

/* Train-mode and eval-mode accuracy this close read as agreement: the
 * "point or two" of the background essays, with room (5 rows in 100).
 * Gaps are worded to two significant digits. */
#define GAP_NEAR 0.05
/* At most this many series in an accuracy panel (two lines each), and
 * this many panels of curves over the epochs. */
#define CLF_SERIES 4
#define CURVE_PANELS 9
/* Past the last K of a K axis, each other order is drawn this factor
 * further along. */
#define K_STEP 4.0

/* Both modes' accuracies on the held-out rows, and on the rows trained
 * on (fit). */
static const char *const acc_cols[2][2] = {
    {"acc_train_mode", "acc_eval_mode"},
    {"fit_acc_train_mode", "fit_acc_eval_mode"}};

/* The x axis of a classifier's figure: a number (the batch size, the
 * epochs, the held-out rows' shift or scale, or a curve's epoch), the K of
 * grouped:K orders (shuffled is grouped:1; the other orders are placed
 * past the last K, unjoined), or categories (the estimators). */
enum { CX_NUM, CX_K, CX_CAT };

static const struct {
    int key;
    const char *noun, *sym, *label;
} clf_x_words[] = {
    {KEY_BATCH_SIZE, "batch size", "B", "batch size B"},
    {KEY_EPOCHS, "number of epochs", "E", "epochs E"},
    {KEY_EVAL_SHIFT, "shift", "shift", "held-out rows' shift, in sd"},
    {KEY_EVAL_SCALE, "scale", "scale", "held-out rows' spread, × sd"},
};

/* A classifier's results in a figure: the rows kept (the fixed axes at
 * their first value, a curve's longest run of each configuration), and
 * each row's panel, series and place on the x axis. */
typedef struct {
    const table_t *tb;
    int kind;
    const axis_t *x; /* NULL: curve.tsv's epoch column */
    const char *xcol;
    size_t nx;
    const char **xc; /* the x column's cells, in the axis's order */
    double *xp;      /* where each is drawn */
    int *xj;         /* joined to the others by a line */
    const axis_t *pa[KEY_COUNT], *sa[KEY_COUNT], *fa[KEY_COUNT];
    size_t npa, nsa, nfa;
    int longest;
    int fit; /* the accuracies on the rows trained on, not held out */
    strlist pk, sk, pe; /* panel and series keys; a panel's longest run */
    size_t *at;         /* per row: (p ns + s) nx + xi, or SIZE_MAX */
} cview;

static void cv_free(cview *v)
{
    free(v->xc);
    free(v->xp);
    free(v->xj);
    sl_free(&v->pk);
    sl_free(&v->sk);
    sl_free(&v->pe);
    free(v->at);
    memset(v, 0, sizeof *v);
}

static void cv_key(const tsv_table *t, size_t row, const axis_t *const *a,
                   size_t n, bn_buf *b)
{
    buf_clear(b);
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%s%s", i ? "\t" : "", cell_of(t, row, a[i]));
}

/* Field i of a key of tab-joined cells. */
static const char *key_field(const char *key, size_t i, char *buf,
                             size_t cap)
{
    for (size_t j = 0; j < i && key; j++) {
        key = strchr(key, '\t');
        key = key ? key + 1 : NULL;
    }
    size_t len = key ? strcspn(key, "\t") : 0;
    len = len < cap ? len : cap - 1;
    memcpy(buf, key ? key : "", len);
    buf[len] = '\0';
    return buf;
}

/* K of an order grouped:K, else 0. */
static double grouped_k(const char *cell)
{
    if (strncmp(cell, "grouped:", 8) != 0)
        return 0;
    double k = num(cell + 8);
    return k >= 1 ? k : 0;
}

/* Which of the file's axes count: those that vary, the seed aside, and
 * the momentum as its new-value weight, as roles_of says. */
static size_t clf_axes(const table_t *tb, const axis_t **out)
{
    const axis_t *nw = axis_of(tb, KEY_NEW_WEIGHT);
    size_t n = 0;
    for (size_t i = 0; i < tb->nax; i++) {
        const axis_t *a = &tb->ax[i];
        if (!varies(a) || a->key == KEY_SEED ||
            (a->key == KEY_MOMENTUM && nw) ||
            (a->key == KEY_WEIGHTS && varies(nw)))
            continue;
        out[n++] = a;
    }
    return n;
}

/* Past max combinations of the values of axes a[0 .. *n), the last of
 * them are held at their first value: v's fixed axes. */
static void cv_hold(cview *v, const axis_t **a, size_t *n, size_t max)
{
    size_t combos = 1;
    for (size_t i = 0; i < *n; i++)
        combos *= a[i]->n;
    while (*n > 0 && combos > max) {
        const axis_t *f = a[--*n];
        combos /= f->n;
        v->fa[v->nfa++] = f;
    }
}

/* The classifier's rows: a file of both models has the layer's too. */
static const char *clf_model(void) { return run_model_name(RUN_MODEL_CLASSIFIER); }

static int cv_kept(const cview *v, size_t row)
{
    int mc = column(v->tb, exp_key(KEY_MODEL)->name);
    if (mc >= 0 &&
        strcmp(tsv_cell(&v->tb->t, row, (size_t)mc), clf_model()) != 0)
        return 0;
    for (size_t i = 0; i < v->nfa; i++)
        if (strcmp(cell_of(&v->tb->t, row, v->fa[i]),
                   first_value(v->tb, v->fa[i])) != 0)
            return 0;
    return 1;
}

static int cmp_cell(const void *a, const void *b)
{
    double x = num(*(const char *const *)a), y = num(*(const char *const *)b);
    return (x > y) - (x < y);
}

/* The x categories, then each row's place. */
static int cv_build(cview *v, bn_error *err)
{
    const tsv_table *t = &v->tb->t;
    size_t n = t->nrow ? t->nrow : 1;
    int xci = column(v->tb, v->xcol), ec = column(v->tb, "epochs");
    v->xc = malloc(n * sizeof *v->xc);
    v->xp = malloc(n * sizeof *v->xp);
    v->xj = malloc(n * sizeof *v->xj);
    v->at = malloc(n * sizeof *v->at);
    bn_buf k = {0};
    if (!v->xc || !v->xp || !v->xj || !v->at || xci < 0)
        goto oom;
    if (v->x) {
        v->nx = v->x->n;
        memcpy(v->xc, v->x->val, v->nx * sizeof *v->xc);
    } else { /* a curve's epochs: those of the rows kept */
        for (size_t r = 0; r < t->nrow; r++) {
            const char *c = tsv_cell(t, r, (size_t)xci);
            if (str_index(v->xc, v->nx, c) == v->nx && cv_kept(v, r))
                v->xc[v->nx++] = c;
        }
        qsort(v->xc, v->nx, sizeof *v->xc, cmp_cell);
    }
    double kmax = 1, past = 1;
    for (size_t i = 0; i < v->nx; i++)
        kmax = grouped_k(v->xc[i]) > kmax ? grouped_k(v->xc[i]) : kmax;
    for (size_t i = 0; i < v->nx; i++) {
        const char *c = v->xc[i];
        v->xj[i] = v->kind != CX_CAT;
        if (v->kind == CX_NUM)
            v->xp[i] = num(c);
        else if (v->kind == CX_CAT)
            v->xp[i] = (double)(i + 1);
        else if (grouped_k(c) > 0)
            v->xp[i] = grouped_k(c);
        else if (strcmp(c, "shuffled") == 0)
            v->xp[i] = 1;
        else {
            past *= K_STEP;
            v->xp[i] = kmax * past;
            v->xj[i] = 0;
        }
    }
    /* Panels, then series, in the order their first rows come; a
     * curve's panel keeps its longest run. at[] holds a row's panel
     * until its series are known. */
    for (size_t r = 0; r < t->nrow; r++) {
        v->at[r] = SIZE_MAX;
        if (!cv_kept(v, r))
            continue;
        cv_key(t, r, v->pa, v->npa, &k);
        size_t p = sl_find(&v->pk, sb_str(&k));
        const char *e = ec >= 0 ? tsv_cell(t, r, (size_t)ec) : "";
        if (p == v->pk.n) {
            sl_push(&v->pk, sb_str(&k));
            sl_push(&v->pe, v->longest ? e : "");
        } else if (v->longest && p < v->pe.n && num(e) > num(v->pe.v[p])) {
            char *c = strdup(e);
            if (!c)
                goto oom;
            free(v->pe.v[p]);
            v->pe.v[p] = c;
        }
        v->at[r] = p;
    }
    if (k.failed || v->pk.oom || v->pe.oom)
        goto oom;
    for (int pass = 0; pass < 2; pass++)
        for (size_t r = 0; r < t->nrow; r++) {
            size_t p = v->at[r];
            if (p == SIZE_MAX)
                continue;
            if (v->longest && ec >= 0 &&
                strcmp(tsv_cell(t, r, (size_t)ec), v->pe.v[p]) != 0) {
                v->at[r] = SIZE_MAX;
                continue;
            }
            cv_key(t, r, v->sa, v->nsa, &k);
            size_t s = sl_find(&v->sk, sb_str(&k));
            if (pass == 0) {
                if (s == v->sk.n)
                    sl_push(&v->sk, sb_str(&k));
                continue;
            }
            const char *c = tsv_cell(t, r, (size_t)xci);
            size_t xi = str_index(v->xc, v->nx, c);
            v->at[r] = xi < v->nx ? (p * v->sk.n + s) * v->nx + xi
                                  : SIZE_MAX;
        }
    if (k.failed || v->sk.oom)
        goto oom;
    buf_free(&k);
    return 0;
oom:
    buf_free(&k);
    return bn_fail(err, "%s: out of memory", v->tb->path);
}

/* Column col by panel, series and x: y[(p ns + s) nx + xi], NaN where no
 * row kept has it. */
static double *cv_values(const cview *v, const char *col)
{
    size_t n = v->pk.n * v->sk.n * v->nx;
    double *y = malloc((n ? n : 1) * sizeof *y);
    int c = column(v->tb, col);
    for (size_t i = 0; y && i < n; i++)
        y[i] = NAN;
    for (size_t r = 0; y && c >= 0 && r < v->tb->t.nrow; r++)
        if (v->at[r] != SIZE_MAX)
            y[v->at[r]] = cell_num(v->tb, r, c);
    return y;
}

/* ---- its words ---- */

static void cx_words(const cview *v, const char **noun, const char **sym,
                     const char **label)
{
    *noun = *sym = *label = v->xcol;
    if (!v->x) {
        *noun = *sym = *label = "epoch";
    } else if (v->kind == CX_K) {
        *noun = *sym = "K";
        *label = "K of grouped:K, shuffled = 1";
    } else if (v->kind == CX_CAT) {
        *noun = axis_noun(v->x);
    } else {
        for (size_t i = 0; i < COUNT(clf_x_words); i++)
            if (clf_x_words[i].key == v->x->key) {
                *noun = clf_x_words[i].noun;
                *sym = clf_x_words[i].sym;
                *label = clf_x_words[i].label;
            }
    }
}

/* A value of an axis in words: "B = 256" for those of clf_x_words, an
 * order by its name ("grouped:8", short enough for a panel's title), the
 * rest as every figure says them. */
static void clf_value_words(bn_buf *b, const plot_exp *x, const axis_t *a,
                            const char *cell)
{
    for (size_t i = 0; i < COUNT(clf_x_words); i++)
        if (clf_x_words[i].key == a->key) {
            txf(b, "%s = %g", clf_x_words[i].sym, num(cell));
            return;
        }
    if (a->key == KEY_ORDER)
        tx(b, cell);
    else
        value_words(b, x, a, cell, 1);
}

/* "B = 256", "epoch 3", "K = 8", "batches grouped by class", "ema". */
static void cx_at(bn_buf *b, const plot_exp *x, const cview *v, size_t xi)
{
    const char *noun, *sym, *label, *c = v->xc[xi];
    cx_words(v, &noun, &sym, &label);
    if (!v->x)
        txf(b, "epoch %g", num(c));
    else if (v->kind == CX_K && grouped_k(c) > 0)
        txf(b, "K = %g", grouped_k(c));
    else
        clf_value_words(b, x, v->x, c);
}

/* The values of key (tab-joined cells of axes a) in words. */
static void key_words(bn_buf *b, const plot_exp *x, const axis_t *const *a,
                      size_t n, const char *key)
{
    char buf[600];
    for (size_t i = 0; i < n; i++) {
        buf_printf(b, i ? ", " : "");
        clf_value_words(b, x, a[i], key_field(key, i, buf, sizeof buf));
    }
}

/* name(d): a row's cells of axes a joined by tabs, as cv_key joins them. */
static void as_key_fn(bn_buf *b, const char *name, const axis_t *const *a,
                      size_t n)
{
    buf_printf(b, "%s(d) = ", name);
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%sstrcol(\"%s\")", i ? " . \"\\t\" . " : "", a[i]->col);
    buf_printf(b, n ? "; " : "\"\"; ");
}

/* The largest gap, train mode minus eval mode, over panels [p0, p1), and
 * whether every gap is within GAP_NEAR. */
typedef struct {
    int any, near;
    double worst;
    size_t p, s, xi;
} gap_t;

static gap_t gap_over(const cview *v, const double *tr, const double *ev,
                      size_t p0, size_t p1)
{
    gap_t g = {0, 1, -INFINITY, 0, 0, 0};
    size_t ns = v->sk.n, nx = v->nx;
    for (size_t p = p0; p < p1; p++)
        for (size_t s = 0; s < ns; s++)
            for (size_t xi = 0; xi < nx; xi++) {
                size_t i = (p * ns + s) * nx + xi;
                if (isnan(tr[i]) || isnan(ev[i]))
                    continue;
                double d = tr[i] - ev[i];
                g.any = 1;
                g.near = g.near && fabs(d) <= GAP_NEAR;
                if (d > g.worst) {
                    g.worst = d;
                    g.p = p;
                    g.s = s;
                    g.xi = xi;
                }
            }
    return g;
}

/* "(B = 256, epochs = 1)": where the largest gap is; a panel's title
 * leaves out the panel's own values. */
static void gap_at(bn_buf *b, const plot_exp *x, const cview *v,
                   const gap_t *g, int title)
{
    buf_printf(b, "(");
    cx_at(b, x, v, g->xi);
    if (v->nsa) {
        buf_printf(b, ", ");
        key_words(b, x, v->sa, v->nsa, v->sk.v[g->s]);
    }
    if (title && v->npa) {
        buf_printf(b, ", ");
        key_words(b, x, v->pa, v->npa, v->pk.v[g->p]);
    }
    buf_printf(b, ")");
}

/* The finding on the gap, train mode minus eval mode, of a figure
 * (title) or of one of its panels (lower case, shorter to fit a third of
 * the canvas: "eval below train mode by up to 0.53", then where):
 *   every gap within GAP_NEAR: "Eval-mode accuracy within 0.05 of
 *     train-mode at every batch size";
 *   else the largest above GAP_NEAR: "Eval mode falls below train mode by
 *     up to 0.53 (B = 256, epochs = 1)";
 *   else none above 0: "Eval mode at or above train mode at every ...";
 *   else: "Eval mode at most 0.03 below train mode (...)". */
static void gap_words(bn_buf *b, const plot_exp *x, const cview *v,
                      const gap_t *g, int title)
{
    const char *noun, *sym, *label;
    cx_words(v, &noun, &sym, &label);
    bn_buf every = {0};
    if (!v->x)
        buf_printf(&every, "after every epoch");
    else
        txf(&every, "%s every %s", v->kind == CX_CAT ? "for" : "at", noun);
    if (!g->any)
        ;
    else if (g->near && title)
        buf_printf(b, "Eval-mode accuracy within %g of train-mode %s", GAP_NEAR,
                   sb_str(&every));
    else if (g->near)
        buf_printf(b, "eval within %g of train mode", GAP_NEAR);
    else if (g->worst > GAP_NEAR) {
        buf_printf(b, title ? "Eval mode falls below train mode by up to %.2g "
                            : "eval below train mode by up to %.2g\n",
                   g->worst);
        gap_at(b, x, v, g, title);
    } else if (g->worst <= 0 && title)
        buf_printf(b, "Eval mode at or above train mode %s", sb_str(&every));
    else if (g->worst <= 0)
        buf_printf(b, "eval at or above train mode");
    else {
        buf_printf(b, title ? "Eval mode at most %.2g below train mode "
                            : "eval at most %.2g below train mode\n",
                   g->worst);
        gap_at(b, x, v, g, title);
    }
    b->failed |= every.failed;
    buf_free(&every);
}

/* How a curve's gap closes: "within 0.05 from epoch 12 on", when it is
 * wider before and stays within over two epochs or more. */
static void closes_words(bn_buf *b, const cview *v, const double *tr,
                         const double *ev, size_t p)
{
    size_t nx = v->nx, from = nx;
    for (size_t xi = nx; xi-- > 0;) {
        size_t i = p * v->sk.n * nx + xi;
        if (isnan(tr[i]) || isnan(ev[i]))
            continue;
        if (fabs(tr[i] - ev[i]) > GAP_NEAR)
            break;
        from = xi;
    }
    if (from > 0 && from + 1 < nx)
        buf_printf(b, "\nwithin %g from epoch %g on", GAP_NEAR,
                   num(v->xc[from]));
}

/* ---- the figure ---- */

/* "427 rows, 3 epochs, momentum 0.1 new, 142 held out; ema, shift = 0":
 * the settings the figure's axes do not show. */
static void clf_facts(bn_buf *b, const plot_exp *x, const cview *v,
                      const roles_t *r)
{
    facts(b, x, v->tb, r);
    const char *held = manifest_value(x, "held_out_rows");
    if (held)
        txf(b, "%s%s held out", b->len ? ", " : "", held);
    for (size_t i = 0; i < v->nfa; i++) {
        buf_printf(b, i ? ", " : b->len ? "; " : "");
        clf_value_words(b, x, v->fa[i], first_value(v->tb, v->fa[i]));
    }
}

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

static int kind_accuracy(const plot_exp *x, figure_out *o, bn_error *err)
{
    return accuracies(x, o, err, 0);
}

/* The same figure of the rows trained on, laid out as the held-out one
 * (the same panels and series) so the two read side by side; the
 * statistics' error is the held-out figure's. */
static int kind_fit_accuracy(const plot_exp *x, figure_out *o,
                             bn_error *err)
{
    return accuracies(x, o, err, 1);
}

/* curve.tsv: both accuracies after every epoch, a panel per
 * configuration's longest run. */
static int kind_curve(const plot_exp *x, figure_out *o, bn_error *err)
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

/* ---- the effective number of values behind a batch statistic ---- */

/* One series a channel, each its own colour and point type
 * (scripts/style.gp has 8 point types). */
#define MAX_CHANNELS 8

/* effective.tsv: per channel, the effective number of values behind a
 * batch mean against the batch size, beside the count B H W and what
 * independent values would give (the count with the finite-population
 * correction), of one configuration (every other varying axis at its
 * first value). */
static int kind_effective(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->eff;
    int cf = column(tb, "feature"), cn = column(tb, "n_eff"),
        cr = column(tb, "ratio");
    const axis_t *ba = axis_of(tb, KEY_BATCH_SIZE);
    int cc = column(tb, "count");
    if (!tb->ok || cf < 0 || cn < 0 || cr < 0 || cc < 0 ||
        column(tb, "count_fpc") < 0 || !varies(ba))
        return 0;
    selection sel;
    select_first(tb, &sel);
    strlist names = {0}, labels = {0};
    double rlo[MAX_CHANNELS], rhi[MAX_CHANNELS];
    double ylo = INFINITY, yhi = 0;
    for (size_t row = 0; row < tb->t.nrow; row++) {
        if (!selected(tb, row, &sel))
            continue;
        const char *f = tsv_cell(&tb->t, row, (size_t)cf);
        size_t i = sl_find(&names, f);
        if (i == names.n) {
            if (names.n == MAX_CHANNELS) {
                sl_free(&names);
                return 0;
            }
            sl_push(&names, f);
            rlo[i] = INFINITY;
            rhi[i] = 0;
        }
        double r = cell_num(tb, row, cr), n = cell_num(tb, row, cn);
        double cnt = cell_num(tb, row, cc);
        rlo[i] = r < rlo[i] ? r : rlo[i];
        rhi[i] = r > rhi[i] ? r : rhi[i];
        for (int k = 0; k < 2; k++) {
            double v = k ? cnt : n;
            ylo = v > 0 && v < ylo ? v : ylo;
            yhi = v > yhi ? v : yhi;
        }
    }
    size_t nc = names.n;
    int rc = -1;
    bn_buf t = {0}, w = {0};
    if (nc == 0 || names.oom) {
        rc = names.oom ? bn_fail(err, "out of memory") : 0;
        goto done;
    }
    /* Each channel's entry gives its ratio to independent values: one
     * number where it is the same at every B (whole samples shuffled
     * make it so), else its range. The farthest channel on each side of
     * 1 makes the title. */
    size_t over = nc, under = nc;
    for (size_t i = 0; i < nc; i++) {
        buf_clear(&t);
        tx(&t, names.v[i]);
        if (same(rlo[i], rhi[i]))
            buf_printf(&t, ": %.2g×", rlo[i]);
        else
            buf_printf(&t, ": %.2g–%.2g×", rlo[i], rhi[i]);
        sl_push(&labels, sb_str(&t));
        if (rlo[i] < 1 && (over == nc || rlo[i] < rlo[over]))
            over = i;
        if (rhi[i] > 1 && (under == nc || rhi[i] > rhi[under]))
            under = i;
    }
    bn_buf *a = &o->assign;
    as_str(a, "f", tb->path);
    as_num(a, "nc", (double)nc);
    as_strs(a, "cn", names.v, nc);
    as_strs(a, "cl", labels.v, nc);
    as_num(a, "ylo", ylo);
    as_num(a, "yhi", yhi);
    as_selection(a, &sel);
    x_axis(a, ba);

    buf_clear(&t);
    if (over < nc || under < nc) {
        tx(&t, "The count B·H·W ");
        if (over < nc) {
            txf(&t, "overstates a batch mean's information up to %.2g× (",
                1 / rlo[over]);
            tx(&t, names.v[over]);
            buf_printf(&t, ")");
        }
        if (under < nc) {
            buf_printf(&t, over < nc ? "\nand " : "");
            txf(&t, "understates %s up to %.2g× (",
                over < nc ? "it" : "a batch mean's information",
                rhi[under]);
            tx(&t, names.v[under]);
            buf_printf(&t, ")");
        }
    } else {
        tx(&t, "The effective number of values behind a batch mean, per "
               "channel");
    }
    as_str(a, "title", sb_str(&t));
    buf_clear(&t);
    tx(&t, "batch size B (samples");
    if (x_is_log(ba))
        tx(&t, "; log₂ scale");
    for (size_t i = 0; i < sel.nfix; i++) {
        buf_printf(&t, "; ");
        value_words(&t, x, sel.fix[i], first_value(tb, sel.fix[i]), 1);
    }
    facts(&w, x, tb, NULL);
    if (w.len)
        buf_printf(&t, "; %s", sb_str(&w));
    buf_printf(&t, ")");
    as_str(a, "xlabel", sb_str(&t));
    buf_printf(&o->what, "n_eff against batch_size per channel, beside count "
                         "and count_fpc");
    rc = t.failed || w.failed || labels.oom ? bn_fail(err, "out of memory") : 1;
done:
    sl_free(&names);
    sl_free(&labels);
    buf_free(&t);
    buf_free(&w);
    return rc;
}

/* ---- the figure-kind table ---- */

static const struct {
    plot_kind k;
    kind_fn make;
} kinds[] = {
    {{"stats-err", "curves.gp",
      "summary.tsv with stats_err and not a classifier's accuracies; an x "
      "axis that varies (batch_size, else epochs, precise_batches, the "
      "momentum, eps, gamma or beta); one seed",
      "stats_err against the x axis, a series per value of the other "
      "varying axes (a panel per order when two or more vary); beside it "
      "stats_err_rel when the features' variances span more than 100x; "
      "one batch's mean error too when nothing else varies"},
     kind_stats_err},
    {{"train-eval", "curves.gp",
      "summary.tsv with train_eval_rmse; an x axis that varies; one seed",
      "train_eval_rmse against the x axis, series and panels as stats-err; "
      "each order's ratio to shuffled batches over its points"},
     kind_train_eval},
    {{"features", "features.gp",
      "features.tsv with true_var and running_var, at most 100 features",
      "per feature, the true variance and the running variance at the "
      "smallest and the largest batch size, of the first value of every "
      "other varying axis; as running / true on a log axis when the "
      "variances span more than 100x"},
     kind_features},
    {{"init-weight", "init-weight.gp",
      "summary.tsv with updates, init_weight and new_weight and not a "
      "classifier's accuracies; two or more update counts among the ema "
      "runs",
      "the initial values' weight (1 - p)^T for each p of the ema runs, "
      "and their measured init_weight"},
     kind_init_weight},
    {{"shuffles", "shuffles.gp",
      "distribution.tsv or expectation.tsv (many seeds); batch_size varies",
      "stats_err across the seeds, a band from the 5th to the 95th "
      "percentile and the median, the first seed's run among them; the "
      "closed-form expected running-mean error against the seeds"},
     kind_shuffles},
    {{"accuracy", "accuracy.gp",
      "summary.tsv with acc_train_mode and acc_eval_mode (a classifier's); "
      "a setting that varies; one seed",
      "both accuracies against the first of batch_size, epochs, the K of "
      "grouped:K orders, the held-out rows' shift or scale that varies, "
      "else the estimators (or the first setting that varies) side by "
      "side; train mode dashed, eval mode solid; a series per value of "
      "the other settings, at most 4 (the last held at their first value "
      "past that), a panel per order when two or more vary; stats_err_rel "
      "under it when it changes along the x axis"},
     kind_accuracy},
    {{"fit-accuracy", "accuracy.gp",
      "summary.tsv with fit_acc_train_mode and fit_acc_eval_mode (a "
      "classifier's); a setting that varies; one seed",
      "the accuracy figure's panels and series for the rows trained on, "
      "without stats_err_rel"},
     kind_fit_accuracy},
    {{"curve", "accuracy.gp",
      "curve.tsv with epoch, acc_train_mode and acc_eval_mode; two or more "
      "epochs; one seed",
      "both accuracies after every epoch of each configuration's longest "
      "run, a panel per configuration, at most 9 (the last settings held "
      "at their first value past that)"},
     kind_curve},
    {{"effective", "effective.gp",
      "effective.tsv with n_eff, ratio, count and count_fpc (feature maps); "
      "batch_size varies; at most 8 channels",
      "per channel, the effective number of values behind a batch mean "
      "against the batch size, beside the count B H W and the count with "
      "the finite-population correction (what independent values give), "
      "of the first value of every other varying axis; each channel's "
      "ratio to independent values in its key entry"},
     kind_effective},
};

const plot_kind *plot_kind_get(size_t i)
{
    return i < COUNT(kinds) ? &kinds[i].k : NULL;
}

static int push(plot_list *l, const char *experiment, const plot_kind *k,
                figure_out *o)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        plot_figure *f = realloc(l->fig, cap * sizeof *f);
        if (!f)
            return -1;
        l->fig = f;
        l->cap = cap;
    }
    plot_figure *f = &l->fig[l->n];
    f->experiment = strdup(experiment);
    if (!f->experiment)
        return -1;
    f->name = k->name;
    f->script = k->script;
    f->assign = o->assign.p;
    f->what = o->what.p;
    memset(o, 0, sizeof *o);
    l->n++;
    return 0;
}

int plot_experiment(const char *dir, const char *name, plot_list *list,
                    bn_error *err)
{
    plot_exp x;
    if (exp_open(&x, dir, name, err) != 0)
        return -1;
    int added = 0;
    for (size_t i = 0; i < COUNT(kinds); i++) {
        figure_out o = {{0}, {0}};
        int r = kinds[i].make(&x, &o, err);
        if (r > 0 && (o.assign.failed || o.what.failed ||
                      push(list, name, &kinds[i].k, &o) != 0))
            r = bn_fail(err, "out of memory");
        buf_free(&o.assign);
        buf_free(&o.what);
        if (r < 0) {
            exp_free_all(&x);
            return -1;
        }
        added += r > 0;
    }
    exp_free_all(&x);
    return added;
}

void plot_list_free(plot_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->fig[i].experiment);
        free(l->fig[i].assign);
        free(l->fig[i].what);
    }
    free(l->fig);
    memset(l, 0, sizeof *l);
}
