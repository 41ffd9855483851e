/*
 * Which figures an experiment's results support, and what each one draws
 * and says (plot.h): the figure-kind table, and what every figure kind
 * shares (plot_parts.h). The table at the end declares every figure: its
 * name, its script, what it needs and a function (one family of figures
 * a file: plot_curves.c, plot_features.c, ...) that reads the
 * experiment's axes and columns and, when they support the figure,
 * writes the gnuplot assignments that say what to draw. Here are the
 * files read as tables and their axes (the key columns, exp.h's table,
 * whose values vary in the file), the roles the axes take in a figure
 * (the x axis, one panel per value, one series per value: they follow
 * from which of them vary, never from the experiment's name), the grids
 * of values by panel, series and x, the words, and the writers of the
 * assignments.
 *
 * Every text a figure shows is made from the numbers: a finding
 * ("stats_err 11.5x higher at B = 256 than at B = 8", "only precise
 * reaches the truth") is worded only when the values in the file bear it
 * out, and a neutral description is given otherwise; axis labels give
 * the rows, epochs and momentum the manifest and the files record.
 * tests/figures_content.py checks each finding against the files.
 */
#include "figure/plot.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/numread.h"
#include "figure/plot_parts.h"
#include "model/order.h"
#include "model/run.h"
#include "study/exp.h"
#include "study/out.h"

/* ---- text ---- */

/* A buffer's text ("" before anything is added). */
const char *sb_str(const bn_buf *b) { return b->p ? b->p : ""; }

/* s as text of gnuplot's enhanced mode that prints as itself: the
 * characters it reads as markup are escaped. Markup of our own ("{/:Bold
 * ...}") is added with buf_printf around it. */
void tx(bn_buf *b, const char *s)
{
    for (; *s; s++) {
        if (strchr("^_@&~{}\\", *s))
            buf_putc(b, '\\');
        buf_putc(b, *s);
    }
}

void txf(bn_buf *b, const char *fmt, ...)
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
void gp_str(bn_buf *b, const char *text)
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

void as_str(bn_buf *a, const char *name, const char *value)
{
    buf_printf(a, "%s = ", name);
    gp_str(a, value);
    buf_printf(a, "; ");
}

void as_num(bn_buf *a, const char *name, double v)
{
    buf_printf(a, "%s = ", name);
    gp_num(a, v);
    buf_printf(a, "; ");
}

/* An array of n strings (gnuplot's arrays hold at least one: an empty
 * list is one empty string). */
void as_strs(bn_buf *a, const char *name, char *const *v, size_t n)
{
    buf_printf(a, "array %s[%zu] = [", name, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        buf_printf(a, i ? ", " : "");
        gp_str(a, v[i]);
    }
    buf_printf(a, n ? "]; " : "\"\"]; ");
}

void as_nums(bn_buf *a, const char *name, const double *v, size_t n)
{
    buf_printf(a, "array %s[%zu] = [", name, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        buf_printf(a, i ? ", " : "");
        gp_num(a, v[i]);
    }
    buf_printf(a, n ? "]; " : "NaN]; ");
}

void sl_push(strlist *l, const char *s)
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
size_t str_index(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return i;
    return n;
}

size_t sl_find(const strlist *l, const char *s)
{
    return str_index((const char *const *)l->v, l->n, s);
}

void sl_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

double num(const char *s)
{
    double v;
    return numread_g17(s, NUMREAD_DASH | NUMREAD_INF, &v) == 0 ? v : NAN;
}

int same(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b));
}

/* ---- an experiment's files and axes ---- */

int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_num(const void *a, const void *b)
{
    double x = num(*(const char *const *)a), y = num(*(const char *const *)b);
    return (x > y) - (x < y);
}

size_t val_index(const axis_t *a, const char *cell)
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
        /* An axis holding its key's word (freeze_after's start) is one
         * of names, in the file's order. */
        for (size_t r = 0; d->word && r < t->nrow; r++)
            if (strcmp(tsv_cell(t, r, c), d->word) == 0)
                a->numeric = 0;
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

/* Every cell of a column of numbers is one as bnstudy writes it (or the
 * writers' "-" or "inf" where they put one): a figure drawn from a cell
 * that is not would plot what no run measured. */
static int check_numbers(const table_t *tb, bn_error *err)
{
    const tsv_table *t = &tb->t;
    for (size_t c = 0; c < t->ncol; c++) {
        unsigned allow = out_column_cells(t->names[c]);
        if (allow & OUT_CELL_TEXT)
            continue;
        for (size_t r = 0; r < t->nrow; r++) {
            double v;
            const char *cell = tsv_cell(t, r, c);
            if (numread_g17(cell, allow, &v) < 0)
                return bn_fail(err, "%s:%zu: column %s: '%s' is not a "
                                    "number as bnstudy writes one",
                               tb->path, r + 2, t->names[c], cell);
        }
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

/* Where an experiment's files are: a directory, or texts in memory. */
typedef struct {
    const char *dir;
    const plot_file *files;
    size_t n;
} plot_source;

/* dir/file into tb; tb->ok stays 0 when there is no such file. */
static int read_table(const char *dir, const char *file, table_t *tb,
                      bn_error *err)
{
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
    return 0;
}

/* The text named file among the source's into tb, named so; tb->ok stays
 * 0 when there is none. */
static int parse_table(const plot_source *src, const char *file, table_t *tb,
                       bn_error *err)
{
    for (size_t i = 0; i < src->n; i++) {
        const plot_file *f = &src->files[i];
        if (strcmp(f->name, file) != 0)
            continue;
        snprintf(tb->path, sizeof tb->path, "%s", file);
        if (tsv_parse(file, f->text, f->len, &tb->t, err) != 0)
            return -1;
        tb->ok = 1;
        return 0;
    }
    return 0;
}

static int load_table(const plot_source *src, const char *file, table_t *tb,
                      bn_error *err)
{
    memset(tb, 0, sizeof *tb);
    int rc = src->files ? parse_table(src, file, tb, err)
                        : read_table(src->dir, file, tb, err);
    if (rc != 0 || !tb->ok)
        return rc;
    if (strcmp(file, "manifest.tsv") != 0 && check_numbers(tb, err) != 0)
        return -1;
    return find_axes(tb, err);
}

const axis_t *axis_of(const table_t *tb, int key)
{
    for (size_t i = 0; i < tb->nax; i++)
        if (tb->ax[i].key == key)
            return &tb->ax[i];
    return NULL;
}

int varies(const axis_t *a) { return a && a->n > 1; }

int column(const table_t *tb, const char *name)
{
    return tb->ok ? tsv_column(&tb->t, name) : -1;
}

double cell_num(const table_t *tb, size_t row, int col)
{
    return col < 0 ? NAN : num(tsv_cell(&tb->t, row, (size_t)col));
}

const char *manifest_value(const plot_exp *x, const char *key)
{
    const tsv_table *t = &x->manifest.t;
    if (!x->manifest.ok || t->ncol < 2)
        return NULL;
    for (size_t r = 0; r < t->nrow; r++)
        if (strcmp(tsv_cell(t, r, 0), key) == 0)
            return tsv_cell(t, r, 1);
    return NULL;
}

/* The sd of a manifest's generated feature, "NAME MEAN SD RHO", as the
 * manifest writes it. */
static int feature_sd(const char *v, double *sd)
{
    char buf[BN_LINE_MAX + 1], *word[4], *save;
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *w = strtok_r(buf, " ", &save); w && n < 4;
         w = strtok_r(NULL, " ", &save))
        word[n++] = w;
    return n == 4 && numread_g17(word[2], 0, sd) == 0 ? 0 : -1;
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
            double sd;
            if (strcmp(tsv_cell(t, r, 0), "population.feature") != 0 ||
                feature_sd(tsv_cell(t, r, 1), &sd) != 0 || !(sd > 0))
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

static int exp_open(plot_exp *x, const plot_source *src, const char *name,
                    bn_error *err)
{
    memset(x, 0, sizeof *x);
    x->name = name;
    if (load_table(src, "manifest.tsv", &x->manifest, err) != 0 ||
        load_table(src, "summary.tsv", &x->sum, err) != 0 ||
        load_table(src, "features.tsv", &x->feat, err) != 0 ||
        load_table(src, "distribution.tsv", &x->dist, err) != 0 ||
        load_table(src, "expectation.tsv", &x->expect, err) != 0 ||
        load_table(src, "curve.tsv", &x->curve, err) != 0 ||
        load_table(src, "effective.tsv", &x->eff, err) != 0) {
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

/* The x axes, the first that varies taken, and how each is named and
 * drawn. */
const x_word_row x_words[] = {
    {.key = KEY_BATCH_SIZE, .noun = "batch size", .sym = "B",
     .label = "batch size B"},
    {.key = KEY_DEVICES, .noun = "number of devices", .sym = "K",
     .label = "devices K (B/K rows each)"},
    {.key = KEY_EPOCHS, .noun = "number of epochs", .sym = "E",
     .label = "epochs E"},
    {.key = KEY_PRECISE, .noun = "number of pooled batches", .sym = "K",
     .label = "pooled batches K"},
    {.key = KEY_NEW_WEIGHT, .noun = "new-value weight", .sym = "p",
     .label = "new-value weight p"},
    {.key = KEY_EPS, .noun = "eps", .sym = "eps", .label = "eps"},
    {.key = KEY_GAMMA, .noun = "gamma", .sym = "gamma", .label = "gamma"},
    {.key = KEY_BETA, .noun = "beta", .sym = "beta", .label = "beta"},
};

size_t x_word(int key)
{
    for (size_t i = 0; i < COUNT(x_words); i++)
        if (x_words[i].key == key)
            return i;
    return 0;
}

/* The x axis is the first of x_words that varies; of the other varying
 * axes (the seed aside: many seeds are the distribution's), one gives the
 * panels when two or more vary (the order if it does, else the first),
 * and the rest the series. The momentum is shown as its new-value weight
 * p, which says the same whatever its convention. nscores 0: no
 * panels. */
void roles_of(const table_t *tb, int with_x, size_t nscores,
              roles_t *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; with_x && i < COUNT(x_words) && !r->x; i++)
        if (varies(axis_of(tb, x_words[i].key)))
            r->x = axis_of(tb, x_words[i].key);
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
void row_series(const tsv_table *t, size_t row, const roles_t *r,
                bn_buf *b)
{
    buf_clear(b);
    for (size_t i = 0; i < r->nsa; i++)
        buf_printf(b, "%s%s", i ? "\t" : "",
                   tsv_cell(t, row, (size_t)r->series[i]->ci));
}

const char *cell_of(const tsv_table *t, size_t row, const axis_t *a)
{
    return tsv_cell(t, row, (size_t)a->ci);
}

void grid_free(grid_t *g)
{
    sl_free(&g->skey);
    free(g->y);
    memset(g, 0, sizeof *g);
}

/* Column col of the rows that pass keep (NULL: all) by panel, series and
 * x; the series in the order their first rows come. */
int grid_make(const table_t *tb, const roles_t *r, const char *col,
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

double gy(const grid_t *g, size_t p, size_t s, size_t xi)
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
const score_word_row score_words[] = {
    {.name = "stats_err", .axis = "running statistics vs truth, stats_err",
     .worse = "worsen the running statistics",
     .zero = {"reaches the truth", "reach the truth"}},
    {.name = "stats_err_rel",
     .axis = "in each feature's own scale, stats_err_rel",
     .worse = "worsen the running statistics",
     .zero = {"reaches the truth", "reach the truth"}},
    {.name = "train_eval_rmse", .axis = "train/eval gap, train_eval_rmse",
     .worse = "widen the train/eval gap",
     .zero = {"makes train and eval agree", "make train and eval agree"}},
    {.name = "batch_mean_err",
     .axis = "one batch's mean vs truth, batch_mean_err"},
};

size_t score_word(const char *name)
{
    for (size_t i = 0; i < COUNT(score_words); i++)
        if (strcmp(score_words[i].name, name) == 0)
            return i;
    return 0;
}

/* What the series of an axis are called: "every estimator". */
const char *axis_noun(const axis_t *a)
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
void value_words(bn_buf *b, const plot_exp *x, const axis_t *a,
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
    } else if (a->numeric || (exp_key((key_id)a->key)->word && !isnan(v))) {
        /* A number of an axis that also holds its key's word is still
         * one: "freeze_after = 1" beside "freeze_after start". */
        txf(b, "%s = %g", a->col, v);
    } else {
        txf(b, "%s %s", a->col, cell);
    }
}

void series_words(bn_buf *b, const plot_exp *x, const roles_t *r,
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
void facts(bn_buf *b, const plot_exp *x, const table_t *tb,
           const roles_t *r)
{
    const char *sep = "";
    /* Padded sequences: B counts whole sequences of L positions, so the
     * population is said in sequences too. */
    const axis_t *ln = axis_of(tb, KEY_SEQ_LENGTH);
    double len = ln && ln->n == 1 ? num(ln->val[0]) : 0.0;
    if (!isnan(x->rows) && len > 0) {
        txf(b, "%.0f sequences of %g positions", x->rows / len, len);
        sep = ", ";
    } else if (!isnan(x->rows)) {
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
int x_is_log(const axis_t *x)
{
    double lo = num(x->val[0]), hi = num(x->val[x->n - 1]);
    return lo > 0 && hi / lo >= 8;
}

int x_is_count(const axis_t *x)
{
    return exp_key((key_id)x->key)->type == KT_UINTS;
}

/* Its scale and a tic at each value. */
void x_axis(bn_buf *a, const axis_t *x)
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

void x_label(bn_buf *t, const plot_exp *x, const table_t *tb,
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
void at_x(bn_buf *b, const roles_t *r, size_t xi)
{
    txf(b, "%s = %g", x_words[x_word(r->x->key)].sym, num(r->x->val[xi]));
}

void capitalise(bn_buf *b, size_t from)
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
int as_series(bn_buf *a, const plot_exp *x, const table_t *tb,
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

int one_seed(const table_t *tb)
{
    return !varies(axis_of(tb, KEY_SEED));
}

y_scale y_scale_of(const double *y, size_t n)
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

/* A classifier's results: its statistics are drawn beside its
 * accuracies (kind_accuracy), and the layer's figures of them alone
 * (stats-err, init-weight) would read a model whose batch norm sees
 * inputs that change as it learns as if it were the layer. */
int predictions(const plot_exp *x)
{
    return column(&x->sum, "acc_eval_mode") >= 0;
}

/* ---- features ---- */

void select_first(const table_t *tb, selection *s)
{
    memset(s, 0, sizeof *s);
    s->tb = tb;
    for (size_t i = 0; i < tb->nax; i++)
        if (varies(&tb->ax[i]) && tb->ax[i].key != KEY_BATCH_SIZE)
            s->fix[s->nfix++] = &tb->ax[i];
}

/* The first value of axis a in file order (a numeric axis's values are
 * sorted, so its first row is asked for). */
const char *first_value(const table_t *tb, const axis_t *a)
{
    return tb->t.nrow ? cell_of(&tb->t, 0, a) : "";
}

/* Row row of table tb agrees with the selection made on s->tb. */
int selected(const table_t *tb, size_t row, const void *ctx)
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
void as_selection(bn_buf *a, const selection *s)
{
    buf_printf(a, "sel(d) = 1");
    for (size_t i = 0; i < s->nfix; i++) {
        buf_printf(a, " && strcol(\"%s\") eq ", s->fix[i]->col);
        gp_str(a, first_value(s->tb, s->fix[i]));
    }
    buf_printf(a, "; ");
}

/* ---- the figure-kind table ---- */

static const struct {
    plot_kind k;
    kind_fn make;
} kinds[] = {
    {.k = {.name = "stats-err", .script = "curves.gp",
           .needs = "summary.tsv with stats_err and not a classifier's "
                    "accuracies; an x axis that varies (batch_size, else "
                    "epochs, precise_batches, the momentum, eps, gamma or "
                    "beta); one seed",
           .draws = "stats_err against the x axis, a series per value of the "
                    "other varying axes (a panel per order when two or more "
                    "vary); beside it stats_err_rel when the features' "
                    "variances span more than 100x; one batch's mean error "
                    "too when nothing else varies"},
     .make = kind_stats_err},
    {.k = {.name = "train-eval", .script = "curves.gp",
           .needs = "summary.tsv with train_eval_rmse; an x axis that "
                    "varies; one seed",
           .draws = "train_eval_rmse against the x axis, series and panels "
                    "as stats-err; each order's ratio to shuffled batches "
                    "over its points"},
     .make = kind_train_eval},
    {.k = {.name = "features", .script = "features.gp",
           .needs = "features.tsv with true_var and running_var, at most 100 "
                    "features",
           .draws = "per feature, the true variance and the running variance "
                    "at the smallest and the largest batch size, of the "
                    "first value of every other varying axis; as running / "
                    "true on a log axis when the variances span more than "
                    "100x"},
     .make = kind_features},
    {.k = {.name = "init-weight", .script = "init-weight.gp",
           .needs = "summary.tsv with updates, init_weight and new_weight "
                    "and not a classifier's accuracies; two or more update "
                    "counts among the ema runs",
           .draws = "the initial values' weight (1 - p)^T for each p of the "
                    "ema runs, and their measured init_weight"},
     .make = kind_init_weight},
    {.k = {.name = "shuffles", .script = "shuffles.gp",
           .needs = "distribution.tsv or expectation.tsv (many seeds); "
                    "batch_size varies",
           .draws = "stats_err across the seeds, a band from the 5th to the "
                    "95th percentile and the median, the first seed's run "
                    "among them; the closed-form expected running-mean error "
                    "against the seeds"},
     .make = kind_shuffles},
    {.k = {.name = "accuracy", .script = "accuracy.gp",
           .needs = "summary.tsv with acc_train_mode and acc_eval_mode (a "
                    "classifier's); a setting that varies; one seed",
           .draws = "both accuracies against the first of batch_size, "
                    "epochs, the K of grouped:K orders, the held-out rows' "
                    "shift or scale that varies, else the estimators (or the "
                    "first setting that varies) side by side; train mode "
                    "dashed, eval mode solid; a series per value of the "
                    "other settings, at most 4 (the last held at their first "
                    "value past that), a panel per order when two or more "
                    "vary; stats_err_rel under it when it changes along the "
                    "x axis"},
     .make = kind_accuracy},
    {.k = {.name = "fit-accuracy", .script = "accuracy.gp",
           .needs = "summary.tsv with fit_acc_train_mode and "
                    "fit_acc_eval_mode (a classifier's); a setting that "
                    "varies; one seed",
           .draws = "the accuracy figure's panels and series for the rows "
                    "trained on, without stats_err_rel"},
     .make = kind_fit_accuracy},
    {.k = {.name = "curve", .script = "accuracy.gp",
           .needs = "curve.tsv with epoch, acc_train_mode and acc_eval_mode; "
                    "two or more epochs; one seed",
           .draws = "both accuracies after every epoch of each "
                    "configuration's longest run, a panel per configuration, "
                    "at most 9 (the last settings held at their first value "
                    "past that)"},
     .make = kind_curve},
    {.k = {.name = "effective", .script = "effective.gp",
           .needs = "effective.tsv with n_eff, ratio, count and count_fpc "
                    "(feature maps); batch_size varies; at most 8 channels",
           .draws = "per channel, the effective number of values behind a "
                    "batch mean against the batch size, beside the count B H "
                    "W and the count with the finite-population correction "
                    "(what independent values give), of the first value of "
                    "every other varying axis; each channel's ratio to "
                    "independent values in its key entry"},
     .make = kind_effective},
    {.k = {.name = "weight-norm", .script = "weight-norm.gp",
           .needs = "curve.tsv with epoch, w_norm_ratio and radial (a "
                    "declared network with a linear or conv layer right "
                    "before a batch norm); weight_decay varies; two or more "
                    "epochs; one seed",
           .draws = "after every epoch of each configuration's longest run, "
                    "the norm of the weights right before batch norm over its "
                    "initial value, and under it the radial part of their "
                    "gradient so far on a log axis; a series per "
                    "configuration, at most 4 (the last settings held at "
                    "their first value past that)"},
     .make = kind_weight_norm},
    /* Issue 24's. */
    {.k = {.name = "batch-dependence", .script = "dependence.gp",
           .needs = "summary.tsv with batch_dependence, "
                    "batch_dependence_mean and batch_dependence_eval "
                    "([sweep] compositions); batch_size varies; one seed",
           .draws = "a row's largest and mean range of training-mode "
                    "output over its batches, and evaluation mode's, against "
                    "the batch size; a classifier's accuracy under it, in "
                    "training mode on random and on one-class held-out "
                    "batches and in evaluation mode; every other varying "
                    "axis at its first value"},
     .make = kind_batch_dependence},
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

/* Append the figures the source's files support to list. */
static int plot_source_figures(const plot_source *src, const char *name,
                               plot_list *list, bn_error *err)
{
    plot_exp x;
    if (exp_open(&x, src, name, err) != 0)
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

int plot_experiment(const char *dir, const char *name, plot_list *list,
                    bn_error *err)
{
    plot_source src = {.dir = dir};
    return plot_source_figures(&src, name, list, err);
}

int plot_tables(const plot_file *files, size_t n, const char *name,
                plot_list *list, bn_error *err)
{
    plot_source src = {.files = files, .n = n};
    return plot_source_figures(&src, name, list, err);
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
