/* Evaluating claims against results; the format is in verify.h. */
#include "verify.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inifile.h"
#include "tsv.h"

#define MAX_CLAIMS 64
#define MAX_FILTERS 8

typedef struct {
    char id[64];
    int line;
    char claim[512], published[256], test[32], a[256], b[256], op[4];
    char over[128], at[256];
    double value, tolerance;
    int has_value;
} claim;

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
    return 1;
}

static int copy(char *dst, size_t cap, const char *v)
{
    return snprintf(dst, cap, "%s", v) < (int)cap;
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value, int line, bn_error *err)
{
    claim_set *s = user;
    if (s->n == 0 || strcmp(s->c[s->n - 1].id, section) != 0)
        return bn_fail(err, "%s:%d: key '%s' outside a [claim] section",
                       s->path, line, name), 0;
    claim *c = &s->c[s->n - 1];
    int ok;
    if (strcmp(name, "claim") == 0)
        ok = copy(c->claim, sizeof c->claim, value);
    else if (strcmp(name, "published") == 0)
        ok = copy(c->published, sizeof c->published, value);
    else if (strcmp(name, "test") == 0)
        ok = copy(c->test, sizeof c->test, value);
    else if (strcmp(name, "a") == 0)
        ok = copy(c->a, sizeof c->a, value);
    else if (strcmp(name, "b") == 0)
        ok = copy(c->b, sizeof c->b, value);
    else if (strcmp(name, "op") == 0)
        ok = copy(c->op, sizeof c->op, value);
    else if (strcmp(name, "over") == 0)
        ok = copy(c->over, sizeof c->over, value);
    else if (strcmp(name, "at") == 0)
        ok = copy(c->at, sizeof c->at, value);
    else if (strcmp(name, "value") == 0 || strcmp(name, "tolerance") == 0) {
        char *end;
        double v = strtod(value, &end);
        ok = end != value && *end == '\0' && isfinite(v);
        if (name[0] == 'v')
            c->value = v, c->has_value = 1;
        else
            c->tolerance = v;
    } else
        return bn_fail(err, "%s:%d: unknown key '%s' in claim [%s]", s->path,
                       line, name, section), 0;
    if (!ok)
        return bn_fail(err, "%s:%d: bad value for '%s'", s->path, line,
                       name), 0;
    return 1;
}

/* A selector, "EXPERIMENT: COLUMN @ key=value, key=value". */
typedef struct {
    char experiment[64], column[64];
    size_t nf;
    char key[MAX_FILTERS][64], val[MAX_FILTERS][64];
} selector;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int parse_selector(const char *text, selector *sel)
{
    char buf[256];
    memset(sel, 0, sizeof *sel);
    snprintf(buf, sizeof buf, "%s", text);
    char *colon = strchr(buf, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    char *at = strchr(colon + 1, '@');
    if (at)
        *at = '\0';
    if (!copy(sel->experiment, 64, trim(buf)) ||
        !copy(sel->column, 64, trim(colon + 1)) || !sel->experiment[0] ||
        !sel->column[0])
        return -1;
    for (char *f = at ? strtok(at + 1, ",") : NULL; f; f = strtok(NULL, ",")) {
        char *eq = strchr(f, '=');
        if (!eq || sel->nf == MAX_FILTERS)
            return -1;
        *eq = '\0';
        if (!copy(sel->key[sel->nf], 64, trim(f)) ||
            !copy(sel->val[sel->nf], 64, trim(eq + 1)))
            return -1;
        sel->nf++;
    }
    return 0;
}

/* Cells match when equal as text or, both being numbers, as numbers. */
static int one_matches(const char *cell, const char *want)
{
    if (strcmp(cell, want) == 0)
        return 1;
    char *e1, *e2;
    double a = strtod(cell, &e1), b = strtod(want, &e2);
    return e1 != cell && !*e1 && e2 != want && !*e2 && a == b;
}

/* want may list alternatives: "f0|f1|f2". */
static int cell_matches(const char *cell, const char *want)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", want);
    for (char *save, *w = strtok_r(buf, "|", &save); w;
         w = strtok_r(NULL, "|", &save))
        if (one_matches(cell, w))
            return 1;
    return 0;
}

typedef struct {
    tsv_table t;
    int col;
    size_t n;
    size_t *rows;
} selection;

static int select_rows(const char *dir, const char *text, selection *s,
                       bn_error *err)
{
    selector sel;
    memset(s, 0, sizeof *s);
    if (parse_selector(text, &sel) != 0)
        return bn_fail(err, "selector '%s': expected 'EXPERIMENT: COLUMN @ "
                            "key=value, ...'", text);
    /* "EXP" is EXP/summary.tsv; "EXP/NAME" is EXP/NAME.tsv. */
    char path[4200];
    snprintf(path, sizeof path, "%s/%s%s.tsv", dir, sel.experiment,
             strchr(sel.experiment, '/') ? "" : "/summary");
    if (tsv_read(path, &s->t, err) != 0)
        return -1;
    s->col = tsv_column(&s->t, sel.column);
    int fcol[MAX_FILTERS];
    for (size_t k = 0; k < sel.nf; k++)
        if ((fcol[k] = tsv_column(&s->t, sel.key[k])) < 0)
            return bn_fail(err, "%s: no column '%s'", path, sel.key[k]);
    if (s->col < 0)
        return bn_fail(err, "%s: no column '%s'", path, sel.column);
    s->rows = malloc((s->t.nrow + 1) * sizeof *s->rows);
    if (!s->rows)
        return bn_fail(err, "out of memory");
    for (size_t r = 0; r < s->t.nrow; r++) {
        int ok = 1;
        for (size_t k = 0; k < sel.nf && ok; k++)
            ok = cell_matches(tsv_cell(&s->t, r, (size_t)fcol[k]), sel.val[k]);
        if (ok)
            s->rows[s->n++] = r;
    }
    if (s->n == 0)
        return bn_fail(err, "selector '%s' matches no row of %s", text, path);
    return 0;
}

static void free_selection(selection *s)
{
    free(s->rows);
    tsv_free(&s->t);
}

static double num(const selection *s, size_t i, int col)
{
    return strtod(tsv_cell(&s->t, s->rows[i], (size_t)(col < 0 ? s->col : col)),
                  NULL);
}

static int compare(double a, const char *op, double b, double tol)
{
    if (strcmp(op, ">=") == 0) return a >= b;
    if (strcmp(op, ">") == 0) return a > b;
    if (strcmp(op, "<=") == 0) return a <= b;
    if (strcmp(op, "<") == 0) return a < b;
    return fabs(a - b) <= tol; /* "==" */
}

static int valid_op(const char *op)
{
    return !strcmp(op, ">=") || !strcmp(op, ">") || !strcmp(op, "<=") ||
           !strcmp(op, "<") || !strcmp(op, "==");
}

/* The key a row is paired or ordered by: the over columns' cells. */
static void row_key(const selection *s, size_t i, const char *over,
                    char *key, size_t cap)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", over);
    key[0] = '\0';
    for (char *w = strtok(buf, " ,"); w; w = strtok(NULL, " ,")) {
        int c = tsv_column(&s->t, w);
        size_t len = strlen(key);
        snprintf(key + len, cap - len, "%s%s", len ? " " : "",
                 c < 0 ? "?" : tsv_cell(&s->t, s->rows[i], (size_t)c));
    }
}

/* Keep only the rows whose over value is listed in at. */
static void filter_at(selection *s, const char *over, const char *at)
{
    if (!at[0])
        return;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        char key[128], buf[256];
        row_key(s, i, over, key, sizeof key);
        snprintf(buf, sizeof buf, "%s", at);
        int keep = 0;
        for (char *w = strtok(buf, " ,"); w && !keep; w = strtok(NULL, " ,"))
            keep = cell_matches(key, w);
        if (keep)
            s->rows[m++] = s->rows[i];
    }
    s->n = m;
}

static int single(const selection *s, const char *text, bn_error *err)
{
    if (s->n != 1)
        return bn_fail(err, "selector '%s' matches %zu rows, not one", text,
                       s->n);
    return 0;
}

/* Evaluate one claim; fills what was measured and returns 1 pass, 0 fail,
 * -1 on an error in the claim or the results. */
static int evaluate(const claim *c, const char *dir, char *measured,
                    size_t cap, bn_error *err)
{
    selection a = {0}, b = {0};
    int rc = -1;
    const char *op = c->op[0] ? c->op : ">=";
    if (!valid_op(op)) {
        bn_fail(err, "unknown op '%s'", op);
        return -1;
    }
    if (!c->a[0]) {
        bn_fail(err, "no selector a");
        return -1;
    }
    if (select_rows(dir, c->a, &a, err) != 0)
        goto done;
    if (c->b[0] && select_rows(dir, c->b, &b, err) != 0)
        goto done;
    const char *over = c->over[0] ? c->over : "batch_size";
    filter_at(&a, over, c->at);
    if (c->b[0])
        filter_at(&b, over, c->at);

    if (!strcmp(c->test, "value") || !strcmp(c->test, "ratio")) {
        int ratio = c->test[0] == 'r';
        if (!c->has_value || single(&a, c->a, err) ||
            (ratio && (!c->b[0] || single(&b, c->b, err)))) {
            if (!c->has_value)
                bn_fail(err, "test %s needs a value", c->test);
            else if (ratio && !c->b[0])
                bn_fail(err, "test ratio needs a selector b");
            goto done;
        }
        double x = num(&a, 0, -1);
        if (ratio)
            x /= num(&b, 0, -1);
        snprintf(measured, cap, "%s%s = %.4g, want %s %g",
                 ratio ? "ratio " : "", a.t.names[a.col], x, op, c->value);
        rc = compare(x, op, c->value, c->tolerance);
    } else if (!strcmp(c->test, "all") || !strcmp(c->test, "within")) {
        /* Every selected row: x op value, or |x| <= value for within. */
        int within = c->test[0] == 'w';
        if (!c->has_value) {
            bn_fail(err, "test %s needs a value", c->test);
            goto done;
        }
        rc = 1;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < a.n; i++) {
            double x = num(&a, i, -1);
            rc &= within ? fabs(x) <= c->value
                         : compare(x, op, c->value, c->tolerance);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        if (within)
            snprintf(measured, cap, "%s from %.4g to %.4g in %zu rows, "
                                    "want |x| <= %g",
                     a.t.names[a.col], lo, hi, a.n, c->value);
        else
            snprintf(measured, cap, "%s from %.4g to %.4g in %zu rows, "
                                    "want each %s %g",
                     a.t.names[a.col], lo, hi, a.n, op, c->value);
    } else if (!strcmp(c->test, "increasing") ||
               !strcmp(c->test, "decreasing")) {
        int up = c->test[0] == 'i';
        int oc = tsv_column(&a.t, over);
        if (oc < 0) {
            bn_fail(err, "no column '%s' to order by", over);
            goto done;
        }
        /* Insertion sort by the over column: a handful of rows. */
        for (size_t i = 1; i < a.n; i++)
            for (size_t j = i; j > 0 && num(&a, j - 1, oc) > num(&a, j, oc); j--) {
                size_t t = a.rows[j];
                a.rows[j] = a.rows[j - 1];
                a.rows[j - 1] = t;
            }
        rc = a.n >= 2;
        size_t len = (size_t)snprintf(measured, cap, "%s:", a.t.names[a.col]);
        for (size_t i = 0; i < a.n; i++) {
            if (i > 0 && (up ? !(num(&a, i, -1) > num(&a, i - 1, -1))
                             : !(num(&a, i, -1) < num(&a, i - 1, -1))))
                rc = 0;
            if (len < cap)
                len += (size_t)snprintf(measured + len, cap - len, " %.4g",
                                        num(&a, i, -1));
        }
        if (len < cap)
            snprintf(measured + len, cap - len, " (%s, strictly %s)", over,
                     c->test);
    } else if (!strcmp(c->test, "pairwise")) {
        if (!c->b[0]) {
            bn_fail(err, "test pairwise needs a selector b");
            goto done;
        }
        if (a.n != b.n) {
            bn_fail(err, "pairwise: a has %zu rows, b %zu", a.n, b.n);
            goto done;
        }
        rc = 1;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < a.n; i++) {
            char ka[128], kb[128];
            row_key(&a, i, over, ka, sizeof ka);
            size_t j;
            for (j = 0; j < b.n; j++) {
                row_key(&b, j, over, kb, sizeof kb);
                if (!strcmp(ka, kb))
                    break;
            }
            if (j == b.n) {
                bn_fail(err, "pairwise: no row of b with %s %s", over, ka);
                rc = -1;
                goto done;
            }
            double x = num(&a, i, -1), y = num(&b, j, -1);
            rc &= compare(x, op, y, c->tolerance);
            double r = x / y;
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
        }
        snprintf(measured, cap, "%s %s %s in %zu pairs by %s, a/b from %.4g "
                                "to %.4g",
                 a.t.names[a.col], op, b.t.names[b.col], a.n, over, lo, hi);
    } else if (!strcmp(c->test, "worst-feature")) {
        selector sel;
        parse_selector(c->a, &sel);
        char path[4200];
        tsv_table ft;
        snprintf(path, sizeof path, "%s/%s/features.tsv", dir, sel.experiment);
        if (tsv_read(path, &ft, err) != 0)
            goto done;
        int fc = tsv_column(&ft, "feature"), vc = tsv_column(&ft, "true_var");
        if (fc < 0 || vc < 0 || ft.nrow == 0) {
            tsv_free(&ft);
            bn_fail(err, "%s: no feature and true_var columns", path);
            goto done;
        }
        size_t best = 0;
        for (size_t r = 1; r < ft.nrow; r++)
            if (fabs(strtod(tsv_cell(&ft, r, (size_t)vc), NULL) - 1.0) >
                fabs(strtod(tsv_cell(&ft, best, (size_t)vc), NULL) - 1.0))
                best = r;
        const char *want = tsv_cell(&ft, best, (size_t)fc);
        rc = 1;
        for (size_t i = 0; i < a.n; i++)
            rc &= !strcmp(tsv_cell(&a.t, a.rows[i], (size_t)a.col), want);
        snprintf(measured, cap, "%s = %s in %zu rows; true variance farthest "
                                "from 1: %s (%.4g)",
                 a.t.names[a.col], tsv_cell(&a.t, a.rows[0], (size_t)a.col),
                 a.n, want, strtod(tsv_cell(&ft, best, (size_t)vc), NULL));
        tsv_free(&ft);
    } else {
        bn_fail(err, "unknown test '%s'", c->test);
    }
done:
    free_selection(&a);
    free_selection(&b);
    return rc;
}

int verify_claims(const char *claims_path, const char *results_dir,
                  FILE *out, verify_counts *counts, bn_error *err)
{
    claim_set *s = calloc(1, sizeof *s);
    if (!s)
        return bn_fail(err, "out of memory");
    s->path = claims_path;
    counts->passed = counts->failed = 0;
    int rc = inifile_parse(claims_path, on_key, on_section, s, err);
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        const claim *c = &s->c[i];
        char measured[512] = "";
        bn_error sub;
        int r = evaluate(c, results_dir, measured, sizeof measured, &sub);
        if (r < 0) {
            rc = bn_fail(err, "%s:%d: claim [%s]: %s", claims_path, c->line,
                         c->id, sub.msg);
            break;
        }
        fprintf(out, "%s %s: %s\n     %s (published: %s)\n",
                r ? "PASS" : "FAIL", c->id, c->claim, measured, c->published);
        if (r)
            counts->passed++;
        else
            counts->failed++;
    }
    free(s);
    return rc;
}
