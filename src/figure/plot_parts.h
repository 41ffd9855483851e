/*
 * What the pieces of the figure module share, and only they include
 * (plot.h is the module's interface): an experiment's files read as
 * tables and their axes, the roles the axes take in a figure, the grids
 * of values by panel, series and x, the words every figure uses, and the
 * writers of the gnuplot assignments a script reads. plot.c holds all of
 * that and the figure-kind table; each family of figures is a file of
 * its own (plot_curves.c, plot_features.c, plot_initweight.c,
 * plot_shuffles.c, plot_effective.c, plot_norms.c, plot_dependence.c,
 * and the classifier's in plot_accuracy.c on plot_accview.c and
 * plot_accwords.c), whose kind functions the table names.
 */
#ifndef BN_PLOT_PARTS_H
#define BN_PLOT_PARTS_H

#include <stddef.h>

#include "base/buf.h"
#include "base/common.h"
#include "base/tsv.h"
#include "figure/plot.h"
#include "model/keyid.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))
/* At most this many panels in a figure (a grid of up to 3 x 2). */
#define MAX_PANELS 6
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

/* A list of texts built one by one. */
typedef struct {
    char **v;
    size_t n, cap;
    int oom;
} strlist;

const char *sb_str(const bn_buf *b);
void tx(bn_buf *b, const char *s);
void txf(bn_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void as_str(bn_buf *a, const char *name, const char *value);
void as_num(bn_buf *a, const char *name, double v);
void as_strs(bn_buf *a, const char *name, char *const *v, size_t n);
void as_nums(bn_buf *a, const char *name, const double *v, size_t n);
void sl_push(strlist *l, const char *s);
size_t str_index(const char *const *v, size_t n, const char *s);
size_t sl_find(const strlist *l, const char *s);
void sl_free(strlist *l);
double num(const char *s);
int same(double a, double b);

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
    const char *name;
    table_t sum, feat, dist, expect, manifest, curve, eff;
    double rows;       /* the population's rows, NaN when unknown */
    double published_p; /* the key table's default new-value weight */
    int scales_differ;
} plot_exp;

int cmp_double(const void *a, const void *b);
size_t val_index(const axis_t *a, const char *cell);
const axis_t *axis_of(const table_t *tb, int key);
int varies(const axis_t *a);
int column(const table_t *tb, const char *name);
double cell_num(const table_t *tb, size_t row, int col);
const char *manifest_value(const plot_exp *x, const char *key);
/* The figures of one seed: many seeds are the shuffles figure's. */
int one_seed(const table_t *tb);
/* Whether the results are a classifier's (its accuracies): the layer's
 * figures of the statistics alone are not drawn of it. */
int predictions(const plot_exp *x);

/* ---- the roles of the axes in a figure ---- */

/* How an x axis is named and drawn. */
typedef struct {
    int key;
    const char *noun;  /* "at every batch size" */
    const char *sym;   /* "B = 256" */
    const char *label; /* the axis label */
} x_word_row;
extern const x_word_row x_words[];
size_t x_word(int key);

typedef struct {
    const axis_t *x, *panel;
    const axis_t *series[KEY_COUNT];
    size_t nsa;
} roles_t;

void roles_of(const table_t *tb, int with_x, size_t nscores, roles_t *r);
void row_series(const tsv_table *t, size_t row, const roles_t *r,
                bn_buf *b);

/* The values of one column by panel, series and x: y[(p ns + s) nx + xi]
 * (NaN where no row has them). */
typedef struct {
    size_t np, ns, nx;
    strlist skey; /* the series, in the file's order */
    double *y;
} grid_t;

const char *cell_of(const tsv_table *t, size_t row, const axis_t *a);
void grid_free(grid_t *g);
int grid_make(const table_t *tb, const roles_t *r, const char *col,
              int (*keep)(const table_t *, size_t, const void *),
              const void *ctx, grid_t *g, bn_error *err);
double gy(const grid_t *g, size_t p, size_t s, size_t xi);

/* ---- words ---- */

/* A score the figures draw, as they name it. */
typedef struct {
    const char *name;
    const char *axis;  /* the y axis label */
    const char *worse; /* what a higher value does, a plural verb phrase */
    const char *zero[2]; /* what a 0 means, singular and plural */
} score_word_row;
extern const score_word_row score_words[];
size_t score_word(const char *name);

const char *axis_noun(const axis_t *a);
void value_words(bn_buf *b, const plot_exp *x, const axis_t *a,
                 const char *cell, int sentence);
void series_words(bn_buf *b, const plot_exp *x, const roles_t *r,
                  const grid_t *g, size_t s, int sentence);
void facts(bn_buf *b, const plot_exp *x, const table_t *tb,
           const roles_t *r);
int x_is_log(const axis_t *x);
int x_is_count(const axis_t *x);
void x_axis(bn_buf *a, const axis_t *x);
void x_label(bn_buf *t, const plot_exp *x, const table_t *tb,
             const roles_t *r, int log);
void at_x(bn_buf *b, const roles_t *r, size_t xi);
void capitalise(bn_buf *b, size_t from);
int as_series(bn_buf *a, const plot_exp *x, const table_t *tb,
              const roles_t *r, const grid_t *g, const grid_t *const *gs,
              size_t ngs, size_t *published);

/* A score's y axis over its n values (NaN: no value there): the least
 * and the greatest value above rounding (lo NaN when there is none),
 * whether a value is 0 up to rounding, and a log scale when one is (a
 * floor then draws it) or the values span more than LOG_SPAN. */
typedef struct {
    double lo, hi;
    int zero, log;
} y_scale;

y_scale y_scale_of(const double *y, size_t n);

/* ---- one configuration's rows ---- */

/* The rows of one configuration but for the batch size: each other
 * varying axis at its first value (the experiment file's first). */
typedef struct {
    const table_t *tb;
    const axis_t *fix[KEY_COUNT];
    size_t nfix;
} selection;

void select_first(const table_t *tb, selection *s);
const char *first_value(const table_t *tb, const axis_t *a);
int selected(const table_t *tb, size_t row, const void *ctx);
void as_selection(bn_buf *a, const selection *s);

/* ---- the figure kinds ---- */

typedef struct {
    bn_buf assign, what;
} figure_out;

/* A row of the figure-kind table's function: 0 when the experiment's
 * axes and columns do not support the figure, 1 with o filled when they
 * do, -1 with err filled on a failure. */
typedef int (*kind_fn)(const plot_exp *x, figure_out *o, bn_error *err);

int kind_stats_err(const plot_exp *x, figure_out *o, bn_error *err);
int kind_train_eval(const plot_exp *x, figure_out *o, bn_error *err);
int kind_features(const plot_exp *x, figure_out *o, bn_error *err);
int kind_init_weight(const plot_exp *x, figure_out *o, bn_error *err);
int kind_shuffles(const plot_exp *x, figure_out *o, bn_error *err);
int kind_accuracy(const plot_exp *x, figure_out *o, bn_error *err);
int kind_fit_accuracy(const plot_exp *x, figure_out *o, bn_error *err);
int kind_curve(const plot_exp *x, figure_out *o, bn_error *err);
int kind_effective(const plot_exp *x, figure_out *o, bn_error *err);
int kind_weight_norm(const plot_exp *x, figure_out *o, bn_error *err);
int kind_batch_dependence(const plot_exp *x, figure_out *o, bn_error *err);

/* ---- the classifier's figures (plot_accview.c, plot_accwords.c) ---- */

/* The x axis of a classifier's figure: a number (the batch size, the
 * epochs, the held-out rows' shift or scale, or a curve's epoch), the K of
 * grouped:K orders (shuffled is grouped:1; the other orders are placed
 * past the last K, unjoined), or categories (the estimators). */
enum { CX_NUM, CX_K, CX_CAT };

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

void cv_free(cview *v);
const char *key_field(const char *key, size_t i, char *buf, size_t cap);
double grouped_k(const char *cell);
size_t clf_axes(const table_t *tb, const axis_t **out);
void cv_hold(cview *v, const axis_t **a, size_t *n, size_t max);
/* A view of curve.tsv: x its epochs, each configuration's longest run, the
 * settings but the run's length its panels (as_series 0) or its series,
 * at most max (cv_hold). */
void cv_curve_init(cview *v, const table_t *tb, int as_series, size_t max);
const char *clf_model(void);
int cv_build(cview *v, bn_error *err);
double *cv_values(const cview *v, const char *col);

/* The largest gap, train mode minus eval mode, over panels [p0, p1), and
 * whether every gap is within GAP_NEAR. */
typedef struct {
    int any, near;
    double worst;
    size_t p, s, xi;
} gap_t;

void cx_words(const cview *v, const char **noun, const char **sym,
              const char **label);
void key_words(bn_buf *b, const plot_exp *x, const axis_t *const *a,
               size_t n, const char *key);
void as_key_fn(bn_buf *b, const char *name, const axis_t *const *a,
               size_t n);
gap_t gap_over(const cview *v, const double *tr, const double *ev,
               size_t p0, size_t p1);
void gap_words(bn_buf *b, const plot_exp *x, const cview *v,
               const gap_t *g, int title);
void closes_words(bn_buf *b, const cview *v, const double *tr,
                  const double *ev, size_t p);
void clf_facts(bn_buf *b, const plot_exp *x, const cview *v,
               const roles_t *r);

#endif
