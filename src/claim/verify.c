/* Evaluating claims against results; the format is in verify.h. */
#include "claim/verify.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/input.h"
#include "base/numread.h"
#include "base/tsv.h"
#include "io/inifile.h"
#include "study/out.h"

#define MAX_CLAIMS 256
#define VERIFY_MAX_CLAIMS_FILE (1u << 20)
#define MAX_FILTERS 8

typedef enum { OP_GE, OP_GT, OP_LE, OP_LT, OP_EQ, OP_COUNT } op_t;
static const char *const op_names[OP_COUNT] = {">=", ">", "<=", "<", "=="};

typedef enum { EACH_OP, EACH_INCREASING, EACH_DECREASING } each_t;

/* A selector, "EXPERIMENT: COLUMN @ key=value, key=value". */
typedef struct {
    char text[256];
    char experiment[64], column[64];
    size_t nf;
    char key[MAX_FILTERS][64], val[MAX_FILTERS][64];
} selector;

/* The keys a claim section may have, as bits of what a test reads. */
enum {
    F_A = 1 << 0, F_B = 1 << 1, F_OP = 1 << 2, F_VALUE = 1 << 3,
    F_TOLERANCE = 1 << 4, F_OVER = 1 << 5, F_AT = 1 << 6, F_EACH = 1 << 7,
    F_FACTOR = 1 << 8, F_BY = 1 << 9,
};
/* Their names, in the bits' order. */
static const struct {
    const char *name;
    unsigned bit;
} claim_keys[] = {
    {.name = "a", .bit = F_A},
    {.name = "b", .bit = F_B},
    {.name = "op", .bit = F_OP},
    {.name = "value", .bit = F_VALUE},
    {.name = "tolerance", .bit = F_TOLERANCE},
    {.name = "over", .bit = F_OVER},
    {.name = "at", .bit = F_AT},
    {.name = "each", .bit = F_EACH},
    {.name = "factor", .bit = F_FACTOR},
    {.name = "by", .bit = F_BY},
};
#define N_CLAIM_KEYS (sizeof claim_keys / sizeof *claim_keys)

struct test_kind;

typedef struct {
    char id[64];
    int line;
    char claim[512], published[256];
    const struct test_kind *kind;
    unsigned given; /* F_* */
    selector a, b;
    op_t op;
    double value, tolerance, factor;
    char over[128], at[256], by[64];
    each_t each;
    op_t each_op;
} claim;

typedef int (*test_fn)(const claim *c, const char *dir, bn_buf *measured,
                       bn_error *err);

typedef struct test_kind {
    const char *name;
    unsigned needs, allows; /* F_*: keys it must have, keys it reads */
    test_fn eval;
} test_kind;

static const test_kind *find_kind(const char *name);
static const char *kind_list(char *buf, size_t cap);

/* ---- reading the claims file ---- */

typedef struct {
    claim c[MAX_CLAIMS];
    size_t n;
    const char *path;
} claim_set;

static int on_section(void *user, const char *section, int line,
                      bn_error *err)
{
    claim_set *s = user;
    if (s->n == MAX_CLAIMS)
        return bn_fail(err, "%s:%d: more than %d claims", s->path, line,
                       MAX_CLAIMS), 0;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->c[i].id, section) == 0)
            return bn_fail(err, "%s:%d: claim [%s] given twice", s->path,
                           line, section), 0;
    claim *c = &s->c[s->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", section);
    c->line = line;
    c->factor = 1.0;
    strcpy(c->over, "batch_size");
    strcpy(c->by, "seed");
    return 1;
}

static int copy(char *dst, size_t cap, const char *v)
{
    return snprintf(dst, cap, "%s", v) < (int)cap;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* NULL, or what is wrong with the selector. */
static const char *parse_selector(const char *text, selector *sel)
{
    static const char form[] =
        "expected 'EXPERIMENT: COLUMN @ key=value, ...'";
    char buf[sizeof sel->text];
    memset(sel, 0, sizeof *sel);
    if (!copy(sel->text, sizeof sel->text, text))
        return "a selector is at most 255 characters";
    snprintf(buf, sizeof buf, "%s", text);
    char *colon = strchr(buf, ':');
    if (!colon)
        return form;
    *colon = '\0';
    char *at = strchr(colon + 1, '@');
    if (at)
        *at = '\0';
    if (!copy(sel->experiment, 64, trim(buf)) ||
        !copy(sel->column, 64, trim(colon + 1)))
        return "an experiment or a column name is at most 63 characters";
    if (!sel->experiment[0] || !sel->column[0])
        return form;
    char *save;
    for (char *f = at ? strtok_r(at + 1, ",", &save) : NULL; f;
         f = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(f, '=');
        if (!eq)
            return form;
        if (sel->nf == MAX_FILTERS)
            return "at most 8 filters";
        *eq = '\0';
        if (!copy(sel->key[sel->nf], 64, trim(f)) ||
            !copy(sel->val[sel->nf], 64, trim(eq + 1)))
            return "a filter's key or value is at most 63 characters";
        if (!sel->key[sel->nf][0])
            return form;
        sel->nf++;
    }
    return NULL;
}

static int parse_op(const char *s, op_t *op)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(s, op_names[i]) == 0) {
            *op = (op_t)i;
            return 0;
        }
    return -1;
}

static int parse_number(const char *s, double *x)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return -1;
    *x = v;
    return 0;
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value, int line, bn_error *err)
{
    claim_set *s = user;
    if (s->n == 0 || strcmp(s->c[s->n - 1].id, section) != 0)
        return bn_fail(err, "%s:%d: key '%s' outside a [claim] section",
                       s->path, line, name), 0;
    claim *c = &s->c[s->n - 1];
    unsigned bit = 0;
    for (size_t i = 0; i < N_CLAIM_KEYS; i++)
        if (strcmp(name, claim_keys[i].name) == 0)
            bit = claim_keys[i].bit;
    int ok = 1;
    const char *why = "bad value";
    char list[200], limit[64];
#define COPY(dst)                                                           \
    (snprintf(limit, sizeof limit, "at most %zu characters",                \
              sizeof c->dst - 1),                                           \
     why = limit, copy(c->dst, sizeof c->dst, value))
    if (strcmp(name, "claim") == 0) {
        ok = COPY(claim);
    } else if (strcmp(name, "published") == 0) {
        ok = COPY(published);
    } else if (strcmp(name, "test") == 0) {
        c->kind = find_kind(value);
        ok = c->kind != NULL;
        why = kind_list(list, sizeof list);
    } else if (bit == F_A || bit == F_B) {
        why = parse_selector(value, bit == F_A ? &c->a : &c->b);
        ok = why == NULL;
    } else if (bit == F_OP) {
        ok = parse_op(value, &c->op) == 0;
        why = "an op is one of >= > <= < ==";
    } else if (bit == F_EACH) {
        c->each = EACH_OP;
        if (strcmp(value, "increasing") == 0)
            c->each = EACH_INCREASING;
        else if (strcmp(value, "decreasing") == 0)
            c->each = EACH_DECREASING;
        else
            ok = parse_op(value, &c->each_op) == 0;
        why = "each is an op (>= > <= < ==), increasing or decreasing";
    } else if (bit == F_VALUE || bit == F_TOLERANCE || bit == F_FACTOR) {
        double *dst = bit == F_VALUE       ? &c->value
                      : bit == F_TOLERANCE ? &c->tolerance
                                           : &c->factor;
        ok = parse_number(value, dst) == 0;
        why = "expected a finite number";
        if (ok && bit == F_TOLERANCE && c->tolerance < 0)
            ok = 0, why = "a tolerance is >= 0";
    } else if (bit == F_OVER) {
        ok = COPY(over) && value[0];
    } else if (bit == F_AT) {
        ok = COPY(at);
    } else if (bit == F_BY) {
        ok = COPY(by) && value[0];
    } else {
        return bn_fail(err, "%s:%d: unknown key '%s' in claim [%s]", s->path,
                       line, name, section), 0;
    }
#undef COPY
    if (!ok)
        return bn_fail(err, "%s:%d: bad value '%s' for '%s' (%s)", s->path,
                       line, value, name, why), 0;
    if (bit && (c->given & bit))
        return bn_fail(err, "%s:%d: '%s' given twice in claim [%s]", s->path,
                       line, name, section), 0;
    c->given |= bit;
    return 1;
}

/* What a claim's test needs and reads, checked once the file is read. */
static int check_claim(const claim *c, bn_error *err)
{
    char list[200];
    if (!c->kind)
        return bn_fail(err, "no test (%s)", kind_list(list, sizeof list));
    const test_kind *k = c->kind;
    unsigned needs = k->needs;
    if (k->needs & F_EACH && c->each == EACH_OP)
        needs |= F_B;
    for (size_t i = 0; i < N_CLAIM_KEYS; i++) {
        unsigned bit = claim_keys[i].bit;
        if ((needs & bit) && !(c->given & bit))
            return bn_fail(err, "test %s needs '%s'", k->name,
                           claim_keys[i].name);
        if ((c->given & bit) && !(k->allows & bit))
            return bn_fail(err, "test %s does not read '%s'", k->name,
                           claim_keys[i].name);
    }
    if ((c->given & F_TOLERANCE) && c->op != OP_EQ)
        return bn_fail(err, "tolerance is for op ==");
    if (k->needs & F_EACH && c->each != EACH_OP && (c->given & F_B))
        return bn_fail(err, "each = increasing or decreasing reads a only");
    return 0;
}

/* ---- selecting rows ---- */

/* Cells match when equal as text or, the cell being a number as
 * bnstudy writes one and the wanted value a number as a person writes it
 * (0.9 for 0.90000000000000002), as numbers. */
static int one_matches(const char *cell, const char *want)
{
    if (strcmp(cell, want) == 0)
        return 1;
    double a, b;
    return numread_g17(cell, NUMREAD_INF, &a) == 0 &&
           parse_number(want, &b) == 0 && a == b;
}

/* want may list alternatives: "f0|f1|f2". */
static int cell_matches(const char *cell, const char *want)
{
    char w[BN_LINE_MAX + 1];
    for (const char *p = want; *p;) {
        size_t n = strcspn(p, "|");
        if (n > 0 && n < sizeof w) {
            memcpy(w, p, n);
            w[n] = '\0';
            if (one_matches(cell, w))
                return 1;
        }
        p += n + (p[n] == '|');
    }
    return 0;
}

typedef struct {
    tsv_table t;
    char path[BN_PATH_MAX + 128];
    const char *text; /* the selector, for messages */
    int col;
    size_t n;
    size_t *rows;
} selection;

static int select_rows(const char *dir, const selector *sel, selection *s,
                       bn_error *err)
{
    memset(s, 0, sizeof *s);
    s->text = sel->text;
    /* "EXP" is EXP/summary.tsv; "EXP/NAME" is EXP/NAME.tsv. */
    if (snprintf(s->path, sizeof s->path, "%s/%s%s.tsv", dir, sel->experiment,
                 strchr(sel->experiment, '/') ? "" : "/summary") >=
        (int)sizeof s->path)
        return bn_fail(err, "a results directory of %zu bytes, more than the "
                            "limit of %d",
                       strlen(dir), BN_PATH_MAX - 1);
    if (tsv_read(s->path, &s->t, err) != 0)
        return -1;
    s->col = tsv_column(&s->t, sel->column);
    int fcol[MAX_FILTERS];
    for (size_t k = 0; k < sel->nf; k++)
        if ((fcol[k] = tsv_column(&s->t, sel->key[k])) < 0)
            return bn_fail(err, "%s: no column '%s'", s->path, sel->key[k]);
    if (s->col < 0)
        return bn_fail(err, "%s: no column '%s'", s->path, sel->column);
    s->rows = malloc((s->t.nrow + 1) * sizeof *s->rows);
    if (!s->rows)
        return bn_fail(err, "out of memory");
    for (size_t r = 0; r < s->t.nrow; r++) {
        int ok = 1;
        for (size_t k = 0; k < sel->nf && ok; k++)
            ok = cell_matches(tsv_cell(&s->t, r, (size_t)fcol[k]),
                              sel->val[k]);
        if (ok)
            s->rows[s->n++] = r;
    }
    if (s->n == 0)
        return bn_fail(err, "selector '%s' matches no row of %s", sel->text,
                       s->path);
    return 0;
}

static void free_selection(selection *s)
{
    free(s->rows);
    tsv_free(&s->t);
}

/* The number in row i's column col (the selected column when col < 0);
 * a cell that is not one is an error naming the file, line and column. */
static int num(const selection *s, size_t i, int col, double *x,
               bn_error *err)
{
    size_t c = (size_t)(col < 0 ? s->col : col);
    const char *cell = tsv_cell(&s->t, s->rows[i], c), *name = s->t.names[c];
    unsigned allow = out_column_cells(name);
    int r = numread_g17(cell, (allow & NUMREAD_INF) | NUMREAD_DASH, x);
    if (r == 1)
        return bn_fail(err, "%s:%zu: column %s: '-': this row has no value "
                            "there (a setting or a score of another model)",
                       s->path, s->rows[i] + 2, name);
    if (r != 0)
        return bn_fail(err, "%s:%zu: column %s: '%s' is not a number as "
                            "bnstudy writes one (%%.17g%s)",
                       s->path, s->rows[i] + 2, name, cell,
                       allow & OUT_CELL_TEXT ? "; the column holds names"
                       : allow & NUMREAD_INF ? ", or inf"
                                             : "");
    return 0;
}

/* Every selected value of the selected column, checked. */
static double *numbers(const selection *s, bn_error *err)
{
    double *x = malloc((s->n + 1) * sizeof *x);
    if (!x) {
        bn_fail(err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++)
        if (num(s, i, -1, &x[i], err) != 0) {
            free(x);
            return NULL;
        }
    return x;
}

static int compare(double a, op_t op, double b, double tol)
{
    switch (op) {
    case OP_GE: return a >= b;
    case OP_GT: return a > b;
    case OP_LE: return a <= b;
    case OP_LT: return a < b;
    default: return fabs(a - b) <= tol;
    }
}

/* The columns of a space- or comma-separated list, each checked. */
static int over_columns(const selection *s, const char *over, int *cols,
                        size_t max, size_t *n, bn_error *err)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", over);
    *n = 0;
    char *save;
    for (char *w = strtok_r(buf, " ,", &save); w;
         w = strtok_r(NULL, " ,", &save)) {
        int c = tsv_column(&s->t, w);
        if (c < 0)
            return bn_fail(err, "%s: no column '%s' to order or pair by",
                           s->path, w);
        if (*n == max)
            return bn_fail(err, "more than %zu columns in '%s'", max, over);
        cols[(*n)++] = c;
    }
    if (*n == 0)
        return bn_fail(err, "no column to order or pair by");
    return 0;
}

/* The key a row is paired or ordered by: its cells in cols, appended to
 * key with a NUL after it. */
static void row_key(const selection *s, size_t i, const int *cols, size_t nc,
                    bn_buf *key)
{
    for (size_t k = 0; k < nc; k++) {
        if (k)
            buf_putc(key, ' ');
        buf_puts(key, tsv_cell(&s->t, s->rows[i], (size_t)cols[k]));
    }
    buf_add(key, "", 1);
}

/* Keep only the rows whose over value is listed in at. */
static int filter_at(selection *s, const char *over, const char *at,
                     bn_error *err)
{
    if (!at[0])
        return 0;
    int cols[8];
    size_t nc;
    if (over_columns(s, over, cols, 8, &nc, err) != 0)
        return -1;
    size_t m = 0;
    bn_buf key = {0};
    for (size_t i = 0; i < s->n; i++) {
        char buf[256]; /* claim.at's size */
        buf_clear(&key);
        row_key(s, i, cols, nc, &key);
        if (key.failed) {
            buf_free(&key);
            return bn_fail(err, "out of memory");
        }
        snprintf(buf, sizeof buf, "%s", at);
        int keep = 0;
        char *save;
        for (char *w = strtok_r(buf, " ,", &save); w && !keep;
             w = strtok_r(NULL, " ,", &save))
            keep = cell_matches(key.p, w);
        if (keep)
            s->rows[m++] = s->rows[i];
    }
    buf_free(&key);
    s->n = m;
    if (m == 0)
        return bn_fail(err, "selector '%s' has no row at %s = %s", s->text,
                       over, at);
    return 0;
}

static int single(const selection *s, bn_error *err)
{
    if (s->n != 1)
        return bn_fail(err, "selector '%s' matches %zu rows, not one",
                       s->text, s->n);
    return 0;
}

/* A row's key, its index and a number, for sorting and pairing. The
 * keys of an array live in one block after it (keyed_rows). */
typedef struct {
    const char *key;
    double order; /* the over value, within a key */
    double x;
    size_t i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return (x->order > y->order) - (x->order < y->order);
}

/* Rows of s keyed by the columns of `by` (and ordered by the number in
 * column order_col when >= 0), sorted; values checked. */
static keyed *keyed_rows(const selection *s, const char *by, int order_col,
                         bn_error *err)
{
    int cols[8];
    size_t nc;
    if (over_columns(s, by, cols, 8, &nc, err) != 0)
        return NULL;
    /* The array, then its keys' text, in one block the caller frees. */
    bn_buf block = {0};
    size_t *off = malloc((s->n + 1) * sizeof *off);
    buf_zeros(&block, (s->n + 1) * sizeof(keyed));
    for (size_t i = 0; off && i < s->n; i++) {
        off[i] = block.len;
        row_key(s, i, cols, nc, &block);
    }
    if (!off || block.failed) {
        free(off);
        buf_free(&block);
        bn_fail(err, "out of memory");
        return NULL;
    }
    keyed *k = (keyed *)(void *)block.p;
    for (size_t i = 0; i < s->n; i++) {
        k[i].key = block.p + off[i];
        k[i].i = i;
        k[i].order = 0.0;
        if (num(s, i, -1, &k[i].x, err) != 0 ||
            (order_col >= 0 && num(s, i, order_col, &k[i].order, err) != 0)) {
            free(off);
            buf_free(&block);
            return NULL;
        }
    }
    free(off);
    qsort(k, s->n, sizeof *k, cmp_keyed);
    return k;
}

/* ---- the tests ---- */

#define SELECT_A()                                                          \
    selection a, b;                                                         \
    memset(&b, 0, sizeof b);                                                \
    int rc = -1;                                                            \
    if (select_rows(dir, &c->a, &a, err) != 0 ||                            \
        filter_at(&a, c->over, c->at, err) != 0)                            \
        goto done;                                                          \
    if ((c->given & F_B) && (select_rows(dir, &c->b, &b, err) != 0 ||       \
                             filter_at(&b, c->over, c->at, err) != 0))      \
        goto done

#define DONE()                                                              \
    done:                                                                   \
    free_selection(&a);                                                     \
    free_selection(&b);                                                     \
    return rc

static int test_value(const claim *c, const char *dir, bn_buf *measured,
                      bn_error *err)
{
    SELECT_A();
    double x, y = 1.0;
    if (single(&a, err) || num(&a, 0, -1, &x, err))
        goto done;
    if (c->given & F_B) {
        if (single(&b, err) || num(&b, 0, -1, &y, err))
            goto done;
        x /= y;
    }
    buf_printf(measured, "%s%s = %.4g, want %s %g",
             c->given & F_B ? "ratio " : "", a.t.names[a.col], x,
             op_names[c->op], c->value);
    rc = compare(x, c->op, c->value, c->tolerance);
    DONE();
}

static int every_row(const claim *c, const char *dir, bn_buf *measured,
                     bn_error *err, int within)
{
    SELECT_A();
    double *x = numbers(&a, err);
    if (!x)
        goto done;
    rc = 1;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < a.n; i++) {
        rc &= within ? fabs(x[i]) <= c->value
                     : compare(x[i], c->op, c->value, c->tolerance);
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    free(x);
    if (within)
        buf_printf(measured, "%s from %.4g to %.4g in %zu rows, want "
                                "|x| <= %g",
                 a.t.names[a.col], lo, hi, a.n, c->value);
    else
        buf_printf(measured, "%s from %.4g to %.4g in %zu rows, want "
                                "each %s %g",
                 a.t.names[a.col], lo, hi, a.n, op_names[c->op], c->value);
    DONE();
}

static int test_all(const claim *c, const char *dir, bn_buf *measured,
                    bn_error *err)
{
    return every_row(c, dir, measured, err, 0);
}

static int test_within(const claim *c, const char *dir, bn_buf *measured,
                       bn_error *err)
{
    return every_row(c, dir, measured, err, 1);
}

/* Whether rows k[lo..hi) (one key, sorted by order) rise or fall
 * strictly; -1 when two share an order value or there are fewer than 2. */
static int monotone(const keyed *k, size_t lo, size_t hi, int up,
                    const char *over, bn_error *err)
{
    if (hi - lo < 2)
        return bn_fail(err, "%zu row%s to order by %s: a trend needs two",
                       hi - lo, hi - lo == 1 ? "" : "s", over);
    int ok = 1;
    for (size_t i = lo + 1; i < hi; i++) {
        if (k[i].order == k[i - 1].order)
            return bn_fail(err, "two rows with %s = %g: filter them apart",
                           over, k[i].order);
        ok &= up ? k[i].x > k[i - 1].x : k[i].x < k[i - 1].x;
    }
    return ok;
}

static int test_trend(const claim *c, const char *dir, bn_buf *measured,
                      bn_error *err)
{
    SELECT_A();
    int oc = tsv_column(&a.t, c->over);
    if (oc < 0) {
        bn_fail(err, "%s: no column '%s' to order by", a.path, c->over);
        goto done;
    }
    keyed *k = keyed_rows(&a, c->over, oc, err);
    if (!k)
        goto done;
    /* One key for all: the rows are ordered by over alone. */
    for (size_t i = 0; i < a.n; i++)
        k[i].key = "";
    qsort(k, a.n, sizeof *k, cmp_keyed);
    int up = strcmp(c->kind->name, "increasing") == 0;
    rc = monotone(k, 0, a.n, up, c->over, err);
    buf_printf(measured, "%s:", a.t.names[a.col]);
    for (size_t i = 0; i < a.n; i++)
        buf_printf(measured, " %.4g", k[i].x);
    buf_printf(measured, " (%s, strictly %s)", c->over,
                 c->kind->name);
    free(k);
    DONE();
}

/* Pair a's rows with b's by the key of the columns `by`: one row of each
 * per key, the same keys on both sides. */
static int pair_rows(const selection *a, const selection *b, const char *by,
                     keyed **ka, keyed **kb, bn_error *err)
{
    *ka = keyed_rows(a, by, -1, err);
    *kb = *ka ? keyed_rows(b, by, -1, err) : NULL;
    if (!*kb)
        return -1;
    const selection *side[2] = {a, b};
    keyed *ks[2] = {*ka, *kb};
    for (int s = 0; s < 2; s++)
        for (size_t i = 1; i < side[s]->n; i++)
            if (strcmp(ks[s][i].key, ks[s][i - 1].key) == 0)
                return bn_fail(err, "selector '%s' has two rows with %s %s: "
                                    "filter them apart",
                               side[s]->text, by, ks[s][i].key);
    for (size_t i = 0; i < a->n || i < b->n; i++) {
        int d = i >= a->n ? 1 : i >= b->n ? -1
                                          : strcmp((*ka)[i].key, (*kb)[i].key);
        if (d < 0)
            return bn_fail(err, "no row of b with %s %s", by, (*ka)[i].key);
        if (d > 0)
            return bn_fail(err, "no row of a with %s %s", by, (*kb)[i].key);
    }
    return 0;
}

static int test_pairwise(const claim *c, const char *dir, bn_buf *measured,
                         bn_error *err)
{
    SELECT_A();
    keyed *ka = NULL, *kb = NULL;
    if (pair_rows(&a, &b, c->over, &ka, &kb, err) == 0) {
        rc = 1;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < a.n; i++) {
            rc &= compare(ka[i].x, c->op, c->factor * kb[i].x, c->tolerance);
            double r = ka[i].x / kb[i].x;
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
        }
        char fb[40] = "";
        if (c->factor != 1.0)
            snprintf(fb, sizeof fb, "%g x ", c->factor);
        buf_printf(measured, "%s %s %s%s in %zu pairs by %s, a/b from "
                             "%.4g to %.4g",
                   a.t.names[a.col], op_names[c->op], fb, b.t.names[b.col],
                   a.n, c->over, lo, hi);
    }
    free(ka);
    free(kb);
    DONE();
}

static int test_worst_feature(const claim *c, const char *dir,
                              bn_buf *measured, bn_error *err)
{
    SELECT_A();
    selection ft;
    selector fs;
    memset(&fs, 0, sizeof fs);
    snprintf(fs.experiment, sizeof fs.experiment, "%.50s/features",
             c->a.experiment);
    strcpy(fs.column, "true_var");
    snprintf(fs.text, sizeof fs.text, "%s: true_var", fs.experiment);
    if (select_rows(dir, &fs, &ft, err) != 0) {
        free_selection(&ft);
        goto done;
    }
    int fc = tsv_column(&ft.t, "feature");
    double best_v = 0.0, v;
    size_t best = 0;
    for (size_t i = 0; fc >= 0 && i < ft.n; i++) {
        if (num(&ft, i, -1, &v, err) != 0) {
            fc = -2;
            break;
        }
        if (i == 0 || fabs(v - 1.0) > fabs(best_v - 1.0))
            best = i, best_v = v;
    }
    if (fc == -1)
        bn_fail(err, "%s: no column 'feature'", ft.path);
    if (fc >= 0) {
        const char *want = tsv_cell(&ft.t, ft.rows[best], (size_t)fc);
        rc = 1;
        for (size_t i = 0; i < a.n; i++)
            rc &= !strcmp(tsv_cell(&a.t, a.rows[i], (size_t)a.col), want);
        buf_printf(measured, "%s = %s in %zu rows; true variance "
                                "farthest from 1: %s (%.4g)",
                 a.t.names[a.col], tsv_cell(&a.t, a.rows[0], (size_t)a.col),
                 a.n, want, best_v);
    }
    free_selection(&ft);
    DONE();
}

/* A selector's column and the filters the other selector does not share,
 * "stats_err @ batch_size=256", to tell a from b in a message. */
static void distinct(const selector *s, const selector *other, bn_buf *b)
{
    buf_puts(b, s->column);
    const char *sep = " @ ";
    for (size_t i = 0; i < s->nf; i++) {
        int shared = 0;
        for (size_t j = 0; j < other->nf; j++)
            shared |= !strcmp(s->key[i], other->key[j]) &&
                      !strcmp(s->val[i], other->val[j]);
        if (!shared) {
            buf_printf(b, "%s%s=%s", sep, s->key[i], s->val[i]);
            sep = ", ";
        }
    }
}

/* In what share of the values of `by` (the seeds) the per-seed test
 * `each` holds. */
static int test_fraction(const claim *c, const char *dir, bn_buf *measured,
                         bn_error *err)
{
    SELECT_A();
    keyed *ka = NULL, *kb = NULL;
    size_t groups = 0, holds = 0;
    if (c->each == EACH_OP) {
        if (pair_rows(&a, &b, c->by, &ka, &kb, err) != 0)
            goto out;
        for (size_t i = 0; i < a.n; i++)
            holds += (size_t)compare(ka[i].x, c->each_op, c->factor * kb[i].x,
                                     0.0);
        groups = a.n;
    } else {
        int oc = tsv_column(&a.t, c->over);
        if (oc < 0) {
            bn_fail(err, "%s: no column '%s' to order by", a.path, c->over);
            goto out;
        }
        if (!(ka = keyed_rows(&a, c->by, oc, err)))
            goto out;
        for (size_t lo = 0, hi; lo < a.n; lo = hi) {
            for (hi = lo + 1; hi < a.n && !strcmp(ka[hi].key, ka[lo].key);)
                hi++;
            int r = monotone(ka, lo, hi, c->each == EACH_INCREASING, c->over,
                             err);
            if (r < 0) {
                char why[sizeof err->msg];
                memcpy(why, err->msg, sizeof why);
                bn_fail(err, "%s %s: %s", c->by, ka[lo].key, why);
                goto out;
            }
            holds += (size_t)r;
            groups++;
        }
    }
    double frac = (double)holds / (double)groups;
    if (c->each == EACH_OP) {
        distinct(&c->a, &c->b, measured);
        if (c->factor == 1.0)
            buf_printf(measured, " %s ", op_names[c->each_op]);
        else
            buf_printf(measured, " %s %g x ", op_names[c->each_op],
                       c->factor);
        distinct(&c->b, &c->a, measured);
    } else {
        buf_printf(measured, "%s strictly %s over %s", a.t.names[a.col],
                   c->each == EACH_INCREASING ? "increasing" : "decreasing",
                   c->over);
    }
    buf_printf(measured, " in %zu of %zu %ss: fraction = %.4g, want %s %g",
               holds, groups, c->by, frac, op_names[c->op], c->value);
    rc = compare(frac, c->op, c->value, c->tolerance);
out:
    free(ka);
    free(kb);
    DONE();
}

#define ROWS (F_A | F_OVER | F_AT)
static const test_kind kinds[] = {
    {.name = "value", .needs = F_A | F_OP | F_VALUE,
     .allows = ROWS | F_OP | F_VALUE | F_TOLERANCE, .eval = test_value},
    {.name = "ratio", .needs = F_A | F_B | F_OP | F_VALUE,
     .allows = ROWS | F_B | F_OP | F_VALUE | F_TOLERANCE, .eval = test_value},
    {.name = "all", .needs = F_A | F_OP | F_VALUE,
     .allows = ROWS | F_OP | F_VALUE | F_TOLERANCE, .eval = test_all},
    {.name = "within", .needs = F_A | F_VALUE, .allows = ROWS | F_VALUE,
     .eval = test_within},
    {.name = "increasing", .needs = F_A, .allows = ROWS, .eval = test_trend},
    {.name = "decreasing", .needs = F_A, .allows = ROWS, .eval = test_trend},
    {.name = "pairwise", .needs = F_A | F_B | F_OP,
     .allows = ROWS | F_B | F_OP | F_TOLERANCE | F_FACTOR,
     .eval = test_pairwise},
    {.name = "worst-feature", .needs = F_A, .allows = F_A,
     .eval = test_worst_feature},
    {.name = "fraction", .needs = F_A | F_OP | F_VALUE | F_EACH,
     .allows = ROWS | F_B | F_OP | F_VALUE | F_TOLERANCE | F_EACH |
               F_FACTOR | F_BY,
     .eval = test_fraction},
};
#define N_KINDS (sizeof kinds / sizeof *kinds)

static const test_kind *find_kind(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

static const char *kind_list(char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "a test is one of");
    for (size_t i = 0; i < N_KINDS && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, " %s", kinds[i].name);
    return buf;
}

const char *verify_kind_name(size_t i)
{
    return i < N_KINDS ? kinds[i].name : NULL;
}

int verify_claims(const char *claims_path, const char *results_dir,
                  FILE *out, verify_counts *counts, bn_error *err)
{
    claim_set *s = calloc(1, sizeof *s);
    if (!s)
        return bn_fail(err, "out of memory");
    s->path = claims_path;
    counts->passed = counts->failed = 0;
    char *text;
    size_t len;
    if (input_read(claims_path, VERIFY_MAX_CLAIMS_FILE, 1, &text, &len,
                   err) != 0) {
        free(s);
        return -1;
    }
    int rc = inifile_parse(claims_path, text, len, on_key, on_section, s,
                           err);
    input_free(text, len);
    /* A file of no claims checks nothing, which is no pass. */
    if (rc == 0 && s->n == 0)
        rc = bn_fail(err, "%s: no claims: a claims file has a [section] "
                          "per claim",
                     claims_path);
    bn_error sub;
    /* Every claim well-formed before any is evaluated. */
    for (size_t i = 0; rc == 0 && i < s->n; i++)
        if (check_claim(&s->c[i], &sub) != 0)
            rc = bn_fail(err, "%s:%d: claim [%s]: %s", claims_path,
                         s->c[i].line, s->c[i].id, sub.msg);
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        const claim *c = &s->c[i];
        bn_buf measured = {0};
        int r = c->kind->eval(c, results_dir, &measured, &sub);
        if (r >= 0 && measured.failed)
            r = bn_fail(&sub, "out of memory");
        if (r < 0) {
            buf_free(&measured);
            rc = bn_fail(err, "%s:%d: claim [%s]: %s", claims_path, c->line,
                         c->id, sub.msg);
            break;
        }
        fprintf(out, "%s %s: %s\n     %s (published: %s)\n",
                r ? "PASS" : "FAIL", c->id, c->claim,
                measured.p ? measured.p : "",
                c->published);
        buf_free(&measured);
        if (r)
            counts->passed++;
        else
            counts->failed++;
    }
    free(s);
    return rc;
}
