/*
 * A classifier's results as its figures see them (cview): which rows are
 * kept (the held axes at their first value, a curve's longest run of
 * each configuration), where each row's x value is drawn (a number, the
 * K of grouped:K orders, or a category), and each row's panel and
 * series. plot_accuracy.c draws the figures.
 */
#include "figure/plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/exp.h"

/* Past the last K of a K axis, each other order is drawn this factor
 * further along. */
#define K_STEP 4.0

void cv_free(cview *v)
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
const char *key_field(const char *key, size_t i, char *buf,
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
double grouped_k(const char *cell)
{
    if (strncmp(cell, "grouped:", 8) != 0)
        return 0;
    double k = num(cell + 8);
    return k >= 1 ? k : 0;
}

/* Which of the file's axes count: those that vary, the seed aside, and
 * the momentum as its new-value weight, as roles_of says. */
size_t clf_axes(const table_t *tb, const axis_t **out)
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
void cv_hold(cview *v, const axis_t **a, size_t *n, size_t max)
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

void cv_curve_init(cview *v, const table_t *tb, int as_series, size_t max)
{
    const axis_t *ax[KEY_COUNT];
    size_t n = clf_axes(tb, ax);
    memset(v, 0, sizeof *v);
    v->tb = tb;
    v->kind = CX_NUM;
    v->xcol = "epoch";
    v->longest = 1;
    const axis_t **to = as_series ? v->sa : v->pa;
    size_t *nto = as_series ? &v->nsa : &v->npa;
    for (size_t i = 0; i < n; i++)
        if (ax[i]->key != KEY_EPOCHS)
            to[(*nto)++] = ax[i];
    cv_hold(v, to, nto, max);
}

/* The classifier's rows: a file of both models has the layer's too. */
const char *clf_model(void) { return run_model_name(RUN_MODEL_CLASSIFIER); }

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

/* The x categories (a curve's epochs: those of the rows kept), and
 * where each is drawn: a number at itself, a category at its rank, a K
 * at K (shuffled at 1) and any other order K_STEP further past the last
 * K each, unjoined. */
static void cv_places(cview *v, int xci)
{
    const tsv_table *t = &v->tb->t;
    if (v->x) {
        v->nx = v->x->n;
        memcpy(v->xc, v->x->val, v->nx * sizeof *v->xc);
    } else {
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
}

/* The panels, in the order their first rows come, into at[] (a row's
 * panel, SIZE_MAX for a row not kept); a curve's panel keeps its longest
 * run (epochs column ec). -1 when out of memory. */
static int cv_panels(cview *v, int ec, bn_buf *k)
{
    const tsv_table *t = &v->tb->t;
    for (size_t r = 0; r < t->nrow; r++) {
        v->at[r] = SIZE_MAX;
        if (!cv_kept(v, r))
            continue;
        cv_key(t, r, v->pa, v->npa, k);
        size_t p = sl_find(&v->pk, sb_str(k));
        const char *e = ec >= 0 ? tsv_cell(t, r, (size_t)ec) : "";
        if (p == v->pk.n) {
            sl_push(&v->pk, sb_str(k));
            sl_push(&v->pe, v->longest ? e : "");
        } else if (v->longest && p < v->pe.n && num(e) > num(v->pe.v[p])) {
            char *c = strdup(e);
            if (!c)
                return -1;
            free(v->pe.v[p]);
            v->pe.v[p] = c;
        }
        v->at[r] = p;
    }
    return k->failed || v->pk.oom || v->pe.oom ? -1 : 0;
}

/* The series, in the order their first rows come, then each row's place
 * (p ns + s) nx + xi in at[] (a run shorter than its panel's longest is
 * not kept). -1 when out of memory. */
static int cv_series(cview *v, int xci, int ec, bn_buf *k)
{
    const tsv_table *t = &v->tb->t;
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
            cv_key(t, r, v->sa, v->nsa, k);
            size_t s = sl_find(&v->sk, sb_str(k));
            if (pass == 0) {
                if (s == v->sk.n)
                    sl_push(&v->sk, sb_str(k));
                continue;
            }
            const char *c = tsv_cell(t, r, (size_t)xci);
            size_t xi = str_index(v->xc, v->nx, c);
            v->at[r] = xi < v->nx ? (p * v->sk.n + s) * v->nx + xi
                                  : SIZE_MAX;
        }
    return k->failed || v->sk.oom ? -1 : 0;
}

/* The x categories, then each row's place. */
int cv_build(cview *v, bn_error *err)
{
    const tsv_table *t = &v->tb->t;
    size_t n = t->nrow ? t->nrow : 1;
    int xci = column(v->tb, v->xcol), ec = column(v->tb, "epochs");
    v->xc = malloc(n * sizeof *v->xc);
    v->xp = malloc(n * sizeof *v->xp);
    v->xj = malloc(n * sizeof *v->xj);
    v->at = malloc(n * sizeof *v->at);
    bn_buf k = {0};
    int rc = -1;
    if (v->xc && v->xp && v->xj && v->at && xci >= 0) {
        cv_places(v, xci);
        rc = cv_panels(v, ec, &k) == 0 && cv_series(v, xci, ec, &k) == 0
                 ? 0
                 : -1;
    }
    buf_free(&k);
    return rc == 0 ? 0 : bn_fail(err, "%s: out of memory", v->tb->path);
}

/* Column col by panel, series and x: y[(p ns + s) nx + xi], NaN where no
 * row kept has it. */
double *cv_values(const cview *v, const char *col)
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
