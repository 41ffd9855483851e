/*
 * Reading a population file into a popfile (see popfile.h; the rules are in
 * docs/population-files.md). The text formats are split here rather than by
 * a CSV library because every refusal must name its line and column and the
 * parser must work on bytes the caller already holds; the .npy header is a
 * Python literal that no C library reads. Both are small.
 */
#include "pop/popfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/input.h"
#include "pop/pop.h"

/* What a label or group cell costs while it is read and numbered, for
 * the reading budget: its pointer, its string's allocation, and its
 * share of the numbering (factorize). */
#define CATEGORY_BYTES 64

/* Why a value past POP_MAX_SCALE is refused, as a generated feature's
 * |mean| + 64 sd is (pop.h). */
static const char too_large_why[] =
    "the most a population's value may be (its variances and their "
    "squared errors would overflow)";

/* ------------------------------------------------------------ small pieces */

/* A piece of input quoted in a message: printable ASCII as is (a
 * backslash doubled), any other byte as \xNN, and past SHOW_MAX
 * characters an ellipsis that says it was cut. Only messages are cut; data
 * never is. */
enum { SHOW_MAX = 40, SHOW_BUF = 4 * SHOW_MAX + 8 };

static const char *show(char *out, const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == SHOW_MAX) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)sprintf(out + o, "\\x%02x", c);
    }
    out[o] = '\0';
    return out;
}

/* Names and category values end up as cells of our TSV output, where a
 * tab, a newline or any other control character would break the row. */
static const char *control_char(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return s + i;
    }
    return NULL;
}

static char *memdup0(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* A growing byte buffer: one cell's text, unquoted. */
typedef struct {
    char *s;
    size_t len, cap;
} strbuf;

/* Empty the buffer, keeping it allocated so that s is a string. */
static int sb_clear(strbuf *b)
{
    if (!b->s) {
        b->s = malloc(64);
        if (!b->s)
            return -1;
        b->cap = 64;
    }
    b->len = 0;
    b->s[0] = '\0';
    return 0;
}

static int sb_put(strbuf *b, char c)
{
    if (b->len + 1 >= b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        char *s = realloc(b->s, cap);
        if (!s)
            return -1;
        b->s = s;
        b->cap = cap;
    }
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
    return 0;
}

/* The decimal syntax Python's float() and C's strtod agree on:
 * [+-] digits [. digits] [e [+-] digits], with digits on at least one side
 * of the point. Hex floats, "nan", "inf" and embedded bytes fail it. */
static int decimal_syntax(const char *s, size_t len)
{
    size_t i = 0, digits = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp = 0;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            exp++;
        if (exp == 0)
            return 0;
    }
    return i == len;
}

/* ----------------------------------------------------------- categories */

typedef struct {
    const char *s;
    long long v;
    size_t row;
} cat_entry;

static int cmp_int(const void *a, const void *b)
{
    long long x = ((const cat_entry *)a)->v, y = ((const cat_entry *)b)->v;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(((const cat_entry *)a)->s, ((const cat_entry *)b)->s);
}

static int integer_text(const char *s, long long *v)
{
    size_t i = (s[0] == '+' || s[0] == '-');
    if (s[i] == '\0')
        return 0;
    for (; s[i]; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    errno = 0;
    *v = strtoll(s, NULL, 10);
    return errno != ERANGE;
}

/* Number the distinct values of vals[0..n-1]: when every value is an
 * integer, in ascending numeric order (so "2" before "10", and "01" is the
 * level "1"); otherwise in ascending byte order (strcmp). */
static int factorize(const char *column, char *const *vals, size_t n,
                     pop_factor *fac)
{
    memset(fac, 0, sizeof *fac);
    cat_entry *e = malloc(n * sizeof *e);
    fac->of_row = malloc(n * sizeof *fac->of_row);
    fac->column = memdup0(column, strlen(column));
    if (!e || !fac->of_row || !fac->column)
        goto oom;
    int numeric = 1;
    for (size_t i = 0; i < n; i++) {
        e[i].s = vals[i];
        e[i].row = i;
        if (numeric && !integer_text(vals[i], &e[i].v))
            numeric = 0;
    }
    qsort(e, n, sizeof *e, numeric ? cmp_int : cmp_str);
    size_t levels = 0;
    for (size_t i = 0; i < n; i++)
        levels += i == 0 || (numeric ? e[i].v != e[i - 1].v
                                     : strcmp(e[i].s, e[i - 1].s) != 0);
    fac->levels = calloc(levels, sizeof *fac->levels);
    if (!fac->levels)
        goto oom;
    for (size_t i = 0, k = 0; i < n; i++) {
        int first = i == 0 || (numeric ? e[i].v != e[i - 1].v
                                       : strcmp(e[i].s, e[i - 1].s) != 0);
        if (first) {
            if (numeric) {
                char num[32];
                int len = snprintf(num, sizeof num, "%lld", e[i].v);
                fac->levels[k] = memdup0(num, (size_t)len);
            } else {
                fac->levels[k] = memdup0(e[i].s, strlen(e[i].s));
            }
            fac->n_levels = ++k;
            if (!fac->levels[k - 1])
                goto oom;
        }
        fac->of_row[e[i].row] = k - 1;
    }
    free(e);
    return 0;
oom:
    free(e);
    pop_factor_free(fac);
    return -1;
}

/* -------------------------------------------------------------- text */

typedef struct {
    const char *path;
    char sep;
    size_t line;                   /* 1-based number of the current line */
    const unsigned char *cur, *eol; /* the rest of the current line */
    strbuf cell;
    int quoted;                    /* the last cell was quoted */
} text_reader;

/* Read the next cell of the current line into r->cell, unquoted, with
 * the spaces around an unquoted cell trimmed. *more is set when a
 * separator followed it (so another cell comes). col is the cell's 1-based
 * column, for messages. */
static int next_cell(text_reader *r, size_t col, int *more, bn_error *err)
{
    const unsigned char *p = r->cur, *eol = r->eol;
    if (sb_clear(&r->cell) != 0)
        return bn_fail(err, "%s: out of memory", r->path);
    while (p < eol && *p == ' ')
        p++;
    r->quoted = p < eol && *p == '"';
    if (r->quoted) {
        for (p++;; p++) {
            if (p == eol)
                return bn_fail(err,
                               "%s:%zu:%zu: the quote is not closed on this "
                               "line (a cell cannot span lines)",
                               r->path, r->line, col);
            if (*p == '"') {
                if (p + 1 < eol && p[1] == '"')
                    p++;
                else
                    break;
            }
            if (sb_put(&r->cell, (char)*p) != 0)
                return bn_fail(err, "%s: out of memory", r->path);
        }
        for (p++; p < eol && *p == ' '; p++)
            ;
        if (p < eol && *p != (unsigned char)r->sep)
            return bn_fail(err, "%s:%zu:%zu: text after the closing quote",
                           r->path, r->line, col);
    } else {
        const unsigned char *start = p;
        while (p < eol && *p != (unsigned char)r->sep) {
            if (*p == '"')
                return bn_fail(err,
                               "%s:%zu:%zu: a quote inside an unquoted cell "
                               "(quote the whole cell and double the quote)",
                               r->path, r->line, col);
            p++;
        }
        const unsigned char *stop = p;
        while (stop > start && stop[-1] == ' ')
            stop--;
        for (const unsigned char *q = start; q < stop; q++)
            if (sb_put(&r->cell, (char)*q) != 0)
                return bn_fail(err, "%s: out of memory", r->path);
    }
    *more = p < eol;
    r->cur = *more ? p + 1 : eol;
    return 0;
}

/* Move to line number r->line + 1 starting at p: set cur and eol (a
 * trailing CR dropped) and return where the line after it starts. */
static const unsigned char *line_at(text_reader *r, const unsigned char *p,
                                    const unsigned char *end)
{
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    const unsigned char *eol = nl ? nl : end;
    r->line++;
    r->cur = p;
    r->eol = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
    return nl ? nl + 1 : end;
}

static int only_blank(const unsigned char *p, const unsigned char *end)
{
    for (; p < end; p++)
        if (*p != '\n' && *p != '\r' && *p != ' ')
            return 0;
    return 1;
}

typedef enum { ROLE_FEATURE, ROLE_LABEL, ROLE_GROUP, ROLE_BOTH } col_role;

/* Header names: present, distinct, free of control characters. */
static int check_names(const char *path, char **names, size_t ncol,
                       bn_error *err)
{
    char buf[SHOW_BUF];
    for (size_t c = 0; c < ncol; c++) {
        if (names[c][0] == '\0')
            return bn_fail(err, "%s:1:%zu: column %zu has no name", path,
                           c + 1, c + 1);
        const char *bad = control_char(names[c], strlen(names[c]));
        if (bad)
            return bn_fail(err,
                           "%s:1:%zu: the column name '%s' holds the control "
                           "character 0x%02x, which would break a TSV row",
                           path, c + 1, show(buf, names[c], strlen(names[c])),
                           (unsigned char)*bad);
    }
    size_t first = 0, again = 0;
    int rep = bn_find_repeat((const char *const *)names, ncol, &first, &again);
    if (rep < 0)
        return bn_fail(err, "%s: out of memory", path);
    if (rep == 0)
        return 0;
    return bn_fail(err,
                   "%s:1:%zu: the column name '%s' is already the name of "
                   "column %zu",
                   path, again + 1,
                   show(buf, names[again], strlen(names[again])), first + 1);
}

static int find_column(const char *path, char **names, size_t ncol,
                       const char *key, const char *want, size_t *col,
                       bn_error *err)
{
    for (size_t c = 0; c < ncol; c++)
        if (strcmp(names[c], want) == 0) {
            *col = c;
            return 0;
        }
    char buf[SHOW_BUF], first[SHOW_BUF];
    return bn_fail(err,
                   "%s:1: there is no column named '%s' for the %s; the "
                   "header has %zu columns, the first '%s'",
                   path, show(buf, want, strlen(want)), key, ncol,
                   show(first, names[0], strlen(names[0])));
}

static int parse_number(const text_reader *r, size_t col, const char *name,
                        double *out, bn_error *err)
{
    const char *s = r->cell.s;
    size_t len = r->cell.len;
    char vbuf[SHOW_BUF], nbuf[SHOW_BUF];
    show(nbuf, name, strlen(name));
    if (decimal_syntax(s, len)) {
        double v = strtod(s, NULL);
        /* Underflow is no error: the value rounds correctly to a
         * subnormal or to zero, as any decimal rounds. */
        if (!isfinite(v))
            return bn_fail(err,
                           "%s:%zu:%zu: column '%s': %s is beyond the range "
                           "of a double",
                           r->path, r->line, col, nbuf, show(vbuf, s, len));
        if (fabs(v) > POP_MAX_SCALE)
            return bn_fail(err,
                           "%s:%zu:%zu: column '%s': %s is beyond %g in "
                           "magnitude, %s",
                           r->path, r->line, col, nbuf, show(vbuf, s, len),
                           POP_MAX_SCALE, too_large_why);
        *out = v;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s + len && !isspace((unsigned char)s[0]) && !isfinite(v))
        return bn_fail(err,
                       "%s:%zu:%zu: column '%s': %s is %s; a population "
                       "needs every value finite",
                       r->path, r->line, col, nbuf, show(vbuf, s, len),
                       isnan(v) ? "not a number (NaN)" : "infinite");
    return bn_fail(err, "%s:%zu:%zu: column '%s': '%s' is not a number",
                   r->path, r->line, col, nbuf, show(vbuf, s, len));
}

static int parse_category(const text_reader *r, size_t col, const char *name,
                          char **out, bn_error *err)
{
    const char *s = r->cell.s;
    size_t len = r->cell.len;
    char vbuf[SHOW_BUF], nbuf[SHOW_BUF];
    show(nbuf, name, strlen(name));
    const char *bad = control_char(s, len);
    if (bad)
        return bn_fail(err,
                       "%s:%zu:%zu: column '%s': '%s' holds the control "
                       "character 0x%02x, which would break a TSV row",
                       r->path, r->line, col, nbuf, show(vbuf, s, len),
                       (unsigned char)*bad);
    *out = memdup0(s, len);
    return *out ? 0 : bn_fail(err, "%s: out of memory", r->path);
}

typedef struct {
    size_t ncol;
    char **names;
    col_role *role;
    char **label_vals, **group_vals;
} text_state;

/* The value arrays are calloc'd, so all max_rows entries can be freed. */
static void text_state_free(text_state *t, size_t rows)
{
    for (size_t c = 0; c < t->ncol; c++)
        free(t->names[c]);
    free(t->names);
    free(t->role);
    for (size_t i = 0; i < rows; i++) {
        if (t->label_vals)
            free(t->label_vals[i]);
        if (t->group_vals && t->group_vals != t->label_vals)
            free(t->group_vals[i]);
    }
    if (t->group_vals != t->label_vals)
        free(t->group_vals);
    free(t->label_vals);
}

static int read_header(text_reader *r, text_state *t, bn_error *err)
{
    size_t cap = 0;
    int more = 1;
    while (more) {
        if (next_cell(r, t->ncol + 1, &more, err) != 0)
            return -1;
        if (t->ncol == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(t->names, cap * sizeof *nn);
            if (!nn)
                return bn_fail(err, "%s: out of memory", r->path);
            t->names = nn;
        }
        t->names[t->ncol] = memdup0(r->cell.s, r->cell.len);
        if (!t->names[t->ncol])
            return bn_fail(err, "%s: out of memory", r->path);
        t->ncol++;
    }
    return check_names(r->path, t->names, t->ncol, err);
}

/* The text after a UTF-8 byte-order mark, into *p; a UTF-16 file and
 * one of blanks refused. */
static int text_start(const char *path, const unsigned char *bytes,
                      size_t len, const unsigned char **p, bn_error *err)
{
    const unsigned char *s = bytes;
    if (len >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
        s += 3;
    else if (len >= 2 && ((s[0] == 0xff && s[1] == 0xfe) ||
                          (s[0] == 0xfe && s[1] == 0xff)))
        return bn_fail(err, "%s: the file is UTF-16; save it as UTF-8",
                       path);
    if (only_blank(s, bytes + len))
        return bn_fail(err, "%s: empty file", path);
    *p = s;
    return 0;
}

/* The header's columns and their roles: the label's and the group's
 * columns (*label_col, *group_col) and the features (*f of them, at
 * least one). */
static int text_columns(text_reader *r, text_state *t,
                        const popfile_options *opt, size_t *label_col,
                        size_t *group_col, size_t *f, bn_error *err)
{
    const char *path = r->path;
    if (r->cur == r->eol)
        return bn_fail(err, "%s:1: the header line is empty", path);
    if (read_header(r, t, err) != 0)
        return -1;
    t->role = calloc(t->ncol, sizeof *t->role);
    if (!t->role)
        return bn_fail(err, "%s: out of memory", path);
    if (opt->label) {
        if (find_column(path, t->names, t->ncol, "label", opt->label,
                        label_col, err) != 0)
            return -1;
        t->role[*label_col] = ROLE_LABEL;
    }
    if (opt->group) {
        if (find_column(path, t->names, t->ncol, "group", opt->group,
                        group_col, err) != 0)
            return -1;
        t->role[*group_col] =
            t->role[*group_col] == ROLE_LABEL ? ROLE_BOTH : ROLE_GROUP;
    }
    for (size_t c = 0; c < t->ncol; c++)
        *f += t->role[c] == ROLE_FEATURE;
    if (*f == 0)
        return bn_fail(err, "%s:1: no feature columns: every column is the "
                            "label or the group",
                       path);
    return 0;
}

/* One data row's cells, the header's number of them: its features into
 * x, its label and group into the state's values of row. */
static int text_row(text_reader *r, text_state *t, size_t row, double *x,
                    bn_error *err)
{
    const char *path = r->path;
    size_t c = 0, j = 0;
    int more = 1;
    while (more) {
        if (c == t->ncol)
            return bn_fail(err,
                           "%s:%zu:%zu: more cells than the header's %zu "
                           "columns",
                           path, r->line, c + 1, t->ncol);
        if (next_cell(r, c + 1, &more, err) != 0)
            return -1;
        if (r->cell.len == 0) {
            char nbuf[SHOW_BUF];
            return bn_fail(err, "%s:%zu:%zu: column '%s': empty cell", path,
                           r->line, c + 1,
                           show(nbuf, t->names[c], strlen(t->names[c])));
        }
        int rc = 0;
        switch (t->role[c]) {
        case ROLE_FEATURE:
            rc = parse_number(r, c + 1, t->names[c], &x[j++], err);
            break;
        case ROLE_LABEL:
        case ROLE_BOTH:
            rc = parse_category(r, c + 1, t->names[c], &t->label_vals[row],
                                err);
            break;
        case ROLE_GROUP:
            rc = parse_category(r, c + 1, t->names[c], &t->group_vals[row],
                                err);
            break;
        }
        if (rc != 0)
            return -1;
        c++;
    }
    if (c < t->ncol)
        return bn_fail(err,
                       "%s:%zu:%zu: the row ends after %zu cell%s; the "
                       "header has %zu columns",
                       path, r->line, c + 1, c, c == 1 ? "" : "s", t->ncol);
    return 0;
}

/* The fewest rows opt accepts (popfile.h). */
static size_t min_rows_of(const popfile_options *opt)
{
    return opt->min_rows ? opt->min_rows : 2;
}

/* Who needs the rows, for the refusal: a population its 2. */
static const char *who_needs(size_t need)
{
    return need == 2 ? "a population needs" : "the table needs";
}

/* Every data row from p to end into x (max_rows rows of f features at
 * most), *rows of them, at least need; trailing blank lines end the
 * rows. */
static int text_rows(text_reader *r, text_state *t, const unsigned char *p,
                     const unsigned char *end, double *x, size_t f,
                     size_t need, size_t *rows, bn_error *err)
{
    while (p < end) {
        const unsigned char *line_start = p;
        p = line_at(r, p, end);
        if (r->cur == r->eol) {
            if (only_blank(line_start, end))
                break;
            return bn_fail(err, "%s:%zu: empty line", r->path, r->line);
        }
        if (text_row(r, t, *rows, &x[*rows * f], err) != 0)
            return -1;
        (*rows)++;
    }
    if (*rows < need)
        return bn_fail(err, "%s: %zu data row%s; %s at least %zu", r->path,
                       *rows, *rows == 1 ? "" : "s", who_needs(need), need);
    return 0;
}

/* The label and group columns' classes, numbered (a label of two or
 * more), and the features' names, taken from the state into pf. */
static int text_finish(const char *path, text_state *t,
                       const popfile_options *opt, size_t label_col,
                       size_t group_col, size_t rows, size_t f, popfile *pf,
                       bn_error *err)
{
    if ((opt->label &&
         factorize(t->names[label_col], t->label_vals, rows, &pf->label) !=
             0) ||
        (opt->group &&
         factorize(t->names[group_col], t->group_vals, rows, &pf->group) !=
             0))
        return bn_fail(err, "%s: out of memory", path);
    if (opt->label && pf->label.n_levels < 2) {
        char buf[SHOW_BUF], lv[SHOW_BUF];
        const char *name = t->names[label_col], *level = pf->label.levels[0];
        return bn_fail(err,
                       "%s: the label column '%s' has one class ('%s') in "
                       "all %zu rows; a label needs at least two",
                       path, show(buf, name, strlen(name)),
                       show(lv, level, strlen(level)), rows);
    }
    pf->names = malloc(f * sizeof *pf->names);
    if (!pf->names)
        return bn_fail(err, "%s: out of memory", path);
    for (size_t c = 0, j = 0; c < t->ncol; c++)
        if (t->role[c] == ROLE_FEATURE) {
            pf->names[j++] = t->names[c];
            t->names[c] = NULL;
        }
    return 0;
}

static int parse_text(const char *path, const unsigned char *bytes,
                      size_t len, char sep, const popfile_options *opt,
                      popfile *pf, bn_error *err)
{
    const unsigned char *p = bytes, *end = bytes + len;
    if (text_start(path, bytes, len, &p, err) != 0)
        return -1;
    text_reader r = {path, sep, 0, NULL, NULL, {NULL, 0, 0}, 0};
    text_state t;
    memset(&t, 0, sizeof t);
    size_t rows = 0, f = 0, max_rows = 0, label_col = 0, group_col = 0;
    size_t held = 0;
    double *x = NULL;
    int rc = -1;
    p = line_at(&r, p, end);
    if (text_columns(&r, &t, opt, &label_col, &group_col, &f, err) != 0)
        goto done;
    /* Every data row ends at a newline or at the end: that bounds the
     * rows, so the values need one allocation. */
    max_rows = 1;
    for (const unsigned char *q = p; q < end; q++)
        max_rows += *q == '\n';
    if (max_rows > SIZE_MAX / (f * sizeof(double) + 2 * CATEGORY_BYTES)) {
        bn_fail(err, "%s: too many values for memory", path);
        goto done;
    }
    /* The values, and for a label or group column a string a row. */
    held = max_rows * (f * sizeof *x + ((opt->label != NULL) +
                                        (opt->group != NULL)) *
                                           CATEGORY_BYTES);
    if (input_charge(path, held, "its values", err) != 0) {
        held = 0;
        goto done;
    }
    x = bn_alloc_large(max_rows * f * sizeof *x);
    if (opt->label)
        t.label_vals = calloc(max_rows, sizeof *t.label_vals);
    if (opt->group)
        t.group_vals = label_col == group_col && opt->label
                           ? t.label_vals
                           : calloc(max_rows, sizeof *t.group_vals);
    if (!x || (opt->label && !t.label_vals) ||
        (opt->group && !t.group_vals)) {
        bn_fail(err, "%s: out of memory for %zu rows of %zu features", path,
                max_rows, f);
        goto done;
    }
    if (text_rows(&r, &t, p, end, x, f, min_rows_of(opt), &rows, err) != 0 ||
        text_finish(path, &t, opt, label_col, group_col, rows, f, pf, err) !=
            0)
        goto done;
    pf->n = rows;
    pf->f = f;
    pf->x = x;
    pf->held = held;
    x = NULL;
    rc = 0;
done:
    if (rc != 0) {
        input_release(held);
        pop_factor_free(&pf->label);
        pop_factor_free(&pf->group);
        free(pf->names);
        memset(pf, 0, sizeof *pf);
    }
    free(x);
    free(r.cell.s);
    text_state_free(&t, max_rows);
    return rc;
}

/* --------------------------------------------------------------- .npy */

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

typedef struct {
    const char *path;
    const char *s; /* the header text */
    size_t len, i;
} npy_header;

static void npy_skip_space(npy_header *h)
{
    while (h->i < h->len && (h->s[h->i] == ' ' || h->s[h->i] == '\n' ||
                             h->s[h->i] == '\t' || h->s[h->i] == '\r'))
        h->i++;
}

static int npy_bad(const npy_header *h, const char *what, bn_error *err)
{
    char buf[SHOW_BUF];
    size_t at = h->i < h->len ? h->i : h->len;
    return bn_fail(err,
                   "%s: .npy header, character %zu: expected %s, found '%s'",
                   h->path, at + 1, what,
                   show(buf, h->s + at, h->len - at));
}

static int npy_expect(npy_header *h, char c, bn_error *err)
{
    npy_skip_space(h);
    if (h->i < h->len && h->s[h->i] == c) {
        h->i++;
        return 0;
    }
    char what[4] = {'\'', c, '\'', '\0'};
    return npy_bad(h, what, err);
}

/* A Python string literal without escapes: the only kind NumPy writes. */
static int npy_string(npy_header *h, const char **s, size_t *len,
                      bn_error *err)
{
    npy_skip_space(h);
    if (h->i >= h->len || (h->s[h->i] != '\'' && h->s[h->i] != '"'))
        return npy_bad(h, "a quoted string", err);
    char q = h->s[h->i++];
    size_t start = h->i;
    while (h->i < h->len && h->s[h->i] != q && h->s[h->i] != '\\')
        h->i++;
    if (h->i >= h->len || h->s[h->i] != q)
        return npy_bad(h, "the end of the string", err);
    *s = h->s + start;
    *len = h->i - start;
    h->i++;
    return 0;
}

static int npy_word(npy_header *h, const char *w)
{
    size_t n = strlen(w);
    if (h->len - h->i >= n && memcmp(h->s + h->i, w, n) == 0) {
        h->i += n;
        return 1;
    }
    return 0;
}

/* shape: a tuple of non-negative integers, "(569, 30)" or "(5,)". */
static int npy_shape(npy_header *h, size_t *dims, size_t *ndim, size_t max,
                     bn_error *err)
{
    if (npy_expect(h, '(', err) != 0)
        return -1;
    *ndim = 0;
    for (;;) {
        npy_skip_space(h);
        if (h->i < h->len && h->s[h->i] == ')') {
            h->i++;
            return 0;
        }
        if (h->i >= h->len || h->s[h->i] < '0' || h->s[h->i] > '9')
            return npy_bad(h, "a dimension", err);
        size_t v = 0;
        for (; h->i < h->len && h->s[h->i] >= '0' && h->s[h->i] <= '9';
             h->i++) {
            size_t d = (size_t)(h->s[h->i] - '0');
            if (v > (SIZE_MAX - d) / 10)
                return npy_bad(h, "a dimension that fits in memory", err);
            v = v * 10 + d;
        }
        if (h->i < h->len && h->s[h->i] == 'L') /* Python 2's long */
            h->i++;
        if (*ndim < max)
            dims[*ndim] = v;
        (*ndim)++;
        npy_skip_space(h);
        if (h->i < h->len && h->s[h->i] == ',')
            h->i++;
        else if (!(h->i < h->len && h->s[h->i] == ')'))
            return npy_bad(h, "',' or ')'", err);
    }
}

static void npy_shape_text(char *out, size_t size, const size_t *dims,
                           size_t ndim, size_t shown)
{
    size_t o = (size_t)snprintf(out, size, "(");
    for (size_t k = 0; k < ndim && k < shown && o < size; k++)
        o += (size_t)snprintf(out + o, size - o, "%s%zu", k ? ", " : "",
                              dims[k]);
    if (o < size)
        snprintf(out + o, size - o, "%s)",
                 ndim > shown ? ", ..." : ndim == 1 ? "," : "");
}

/* What a .npy header says: where the header text is, its dtype (descr),
 * the array's order and shape. */
typedef struct {
    size_t hstart, hlen;    /* the header text's start and length */
    const char *descr;
    size_t descr_len;
    size_t dims[3], ndim;   /* the shape (its first 3 dimensions) */
    int fortran, have_shape; /* fortran -1 until read */
    int big, size;          /* byte order and bytes per value */
} npy_info;

/* The version and the header's length, after the magic bytes. */
static int npy_preamble(const char *path, const unsigned char *b, size_t len,
                        npy_info *in, bn_error *err)
{
    unsigned major = b[6], minor = b[7];
    if (major == 1) {
        in->hstart = 10;
        if (len < in->hstart)
            return bn_fail(err, "%s: truncated in the .npy header", path);
        in->hlen = (size_t)b[8] | (size_t)b[9] << 8;
    } else if (major == 2 || major == 3) {
        in->hstart = 12;
        if (len < in->hstart)
            return bn_fail(err, "%s: truncated in the .npy header", path);
        in->hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
                   (size_t)b[11] << 24;
    } else {
        return bn_fail(err,
                       "%s: .npy format version %u.%u; bnstudy reads 1.0, "
                       "2.0 and 3.0",
                       path, major, minor);
    }
    if (in->hlen > len - in->hstart)
        return bn_fail(err,
                       "%s: truncated: the .npy header says it is %zu bytes "
                       "long, the file has %zu after the header length",
                       path, in->hlen, len - in->hstart);
    return 0;
}

/* One key of the header's dict and its value, each key once. */
static int npy_entry(npy_header *h, npy_info *in, bn_error *err)
{
    const char *key;
    size_t klen;
    if (npy_string(h, &key, &klen, err) != 0 || npy_expect(h, ':', err) != 0)
        return -1;
    npy_skip_space(h);
    int is_descr = klen == 5 && memcmp(key, "descr", 5) == 0;
    int is_fortran = klen == 13 && memcmp(key, "fortran_order", 13) == 0;
    int is_shape = klen == 5 && memcmp(key, "shape", 5) == 0;
    if ((is_descr && in->descr) || (is_fortran && in->fortran >= 0) ||
        (is_shape && in->have_shape) || !(is_descr || is_fortran || is_shape)) {
        char buf[SHOW_BUF];
        return bn_fail(err,
                       "%s: the .npy header has %s key '%s'; it must have "
                       "descr, fortran_order and shape once each",
                       h->path,
                       is_descr || is_fortran || is_shape ? "a second"
                                                          : "the unknown",
                       show(buf, key, klen));
    }
    if (is_descr) {
        if (h->i < h->len && h->s[h->i] == '[')
            return bn_fail(err,
                           "%s: the .npy array has a structured dtype; save "
                           "a plain 2-D float64 or float32 array",
                           h->path);
        return npy_string(h, &in->descr, &in->descr_len, err);
    }
    if (is_fortran) {
        if (npy_word(h, "True"))
            in->fortran = 1;
        else if (npy_word(h, "False"))
            in->fortran = 0;
        else
            return npy_bad(h, "True or False", err);
        return 0;
    }
    if (npy_shape(h, in->dims, &in->ndim, 3, err) != 0)
        return -1;
    in->have_shape = 1;
    return 0;
}

/* The header's dict: descr, fortran_order and shape, then its dtype. */
static int npy_dict(const char *path, const unsigned char *b, npy_info *in,
                    bn_error *err)
{
    npy_header h = {path, (const char *)b + in->hstart, in->hlen, 0};
    in->fortran = -1;
    if (npy_expect(&h, '{', err) != 0)
        return -1;
    for (;;) {
        npy_skip_space(&h);
        if (h.i < h.len && h.s[h.i] == '}') {
            h.i++;
            break;
        }
        if (npy_entry(&h, in, err) != 0)
            return -1;
        npy_skip_space(&h);
        if (h.i < h.len && h.s[h.i] == ',')
            h.i++;
        else if (!(h.i < h.len && h.s[h.i] == '}'))
            return npy_bad(&h, "',' or '}'", err);
    }
    npy_skip_space(&h);
    if (h.i != h.len)
        return npy_bad(&h, "the end of the header", err);
    if (!in->descr || in->fortran < 0 || !in->have_shape)
        return bn_fail(err,
                       "%s: the .npy header lacks %s; it must have descr, "
                       "fortran_order and shape",
                       path,
                       !in->descr         ? "descr"
                       : in->fortran < 0 ? "fortran_order"
                                         : "shape");
    const char *d = in->descr;
    if (in->descr_len == 3 && (d[0] == '<' || d[0] == '>') && d[1] == 'f' &&
        (d[2] == '8' || d[2] == '4')) {
        in->big = d[0] == '>';
        in->size = d[2] - '0';
        return 0;
    }
    char buf[SHOW_BUF];
    return bn_fail(err,
                   "%s: the .npy dtype is '%s'; bnstudy reads float64 and "
                   "float32 ('<f8', '>f8', '<f4', '>f4')",
                   path, show(buf, d, in->descr_len));
}

/* A 2-D array of rows by features, with exactly its data after the
 * header. */
static int npy_check_shape(const char *path, size_t len, const npy_info *in,
                           size_t need, bn_error *err)
{
    char shape[96];
    npy_shape_text(shape, sizeof shape, in->dims, in->ndim, 3);
    if (in->ndim != 2)
        return bn_fail(err,
                       "%s: the .npy array is %zu-D, shape %s; bnstudy "
                       "reads a 2-D array of rows by features%s",
                       path, in->ndim, shape,
                       in->ndim > 2 ? " (for convolutional activations, put "
                                      "the channels last and reshape to "
                                      "(rows, channels), as "
                                      "scripts/dump_bn_inputs.py does)"
                                    : "");
    size_t n = in->dims[0], f = in->dims[1], size = (size_t)in->size;
    if (f == 0)
        return bn_fail(err, "%s: the .npy array, shape %s, has no features",
                       path, shape);
    if (n < need)
        return bn_fail(err,
                       "%s: the .npy array, shape %s, has %zu row%s; %s at "
                       "least %zu",
                       path, shape, n, n == 1 ? "" : "s", who_needs(need),
                       need);
    size_t have = len - (in->hstart + in->hlen);
    if (n > SIZE_MAX / f / size || n * f * size > have)
        return bn_fail(err,
                       "%s: truncated: the .npy shape %s of %s needs "
                       "%zu x %zu x %d bytes of data, the file has %zu",
                       path, shape, size == 8 ? "float64" : "float32", n, f,
                       in->size, have);
    if (n * f * size < have)
        return bn_fail(err,
                       "%s: %zu bytes follow the .npy array's data; a .npy "
                       "file holds one array",
                       path, have - n * f * size);
    return 0;
}

/* The array's values into x, row by row whatever its order, each
 * finite. */
static int npy_values(const char *path, const unsigned char *b,
                      const npy_info *in, double *x, bn_error *err)
{
    size_t n = in->dims[0], f = in->dims[1];
    int size = in->size;
    const unsigned char *d = b + in->hstart + in->hlen;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < f; j++) {
            size_t k = in->fortran ? j * n + i : i * f + j;
            const unsigned char *e = d + k * (size_t)size;
            uint64_t u = 0;
            for (int m = 0; m < size; m++)
                u |= (uint64_t)e[in->big ? size - 1 - m : m] << (8 * m);
            double v;
            if (size == 8) {
                memcpy(&v, &u, sizeof v);
            } else {
                uint32_t u32 = (uint32_t)u;
                float fv;
                memcpy(&fv, &u32, sizeof fv);
                v = fv;
            }
            if (!isfinite(v))
                return bn_fail(err,
                               "%s: row %zu, column %zu: the value is %s; a "
                               "population needs every value finite",
                               path, i + 1, j + 1,
                               isnan(v) ? "NaN" : "infinite");
            if (fabs(v) > POP_MAX_SCALE)
                return bn_fail(err,
                               "%s: row %zu, column %zu: %g is beyond %g in "
                               "magnitude, %s",
                               path, i + 1, j + 1, v, POP_MAX_SCALE,
                               too_large_why);
            x[i * f + j] = v;
        }
    return 0;
}

/* The features' names of an array: f0, f1, ...; -1 when out of memory,
 * with none left allocated. */
static int npy_names(char **names, size_t f)
{
    for (size_t j = 0; j < f; j++) {
        char nm[32];
        int l = snprintf(nm, sizeof nm, "f%zu", j);
        names[j] = memdup0(nm, (size_t)l);
        if (!names[j]) {
            for (size_t k = 0; k < j; k++)
                free(names[k]);
            return -1;
        }
    }
    return 0;
}

static int parse_npy(const char *path, const unsigned char *b, size_t len,
                     const popfile_options *opt, popfile *pf, bn_error *err)
{
    if (len < 8 || memcmp(b, npy_magic, sizeof npy_magic) != 0)
        return bn_fail(err,
                       "%s: not a .npy file: it does not begin with the "
                       "bytes \\x93NUMPY",
                       path);
    if (opt->label || opt->group)
        return bn_fail(err,
                       "%s: a .npy array has no named columns, so it cannot "
                       "have a %s column; use a CSV or TSV file",
                       path, opt->label ? "label" : "group");
    npy_info in;
    memset(&in, 0, sizeof in);
    if (npy_preamble(path, b, len, &in, err) != 0 ||
        npy_dict(path, b, &in, err) != 0 ||
        npy_check_shape(path, len, &in, min_rows_of(opt), err) != 0)
        return -1;
    size_t n = in.dims[0], f = in.dims[1];
    memset(pf, 0, sizeof *pf);
    /* npy_check_shape bounds n x f by the data's bytes. */
    if (input_charge(path, n * f * sizeof(double), "its values", err) != 0)
        return -1;
    double *x = bn_alloc_large(n * f * sizeof *x);
    char **names = calloc(f, sizeof *names);
    if (!x || !names) {
        free(x);
        free(names);
        input_release(n * f * sizeof(double));
        return bn_fail(err, "%s: out of memory for %zu x %zu values", path,
                       n, f);
    }
    int rc = npy_values(path, b, &in, x, err);
    if (rc == 0 && npy_names(names, f) != 0)
        rc = bn_fail(err, "%s: out of memory", path);
    if (rc != 0) {
        free(x);
        free(names);
        input_release(n * f * sizeof(double));
        return -1;
    }
    pf->n = n;
    pf->f = f;
    pf->x = x;
    pf->names = names;
    pf->held = n * f * sizeof(double);
    return 0;
}

/* ------------------------------------------------------------ the API */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; i++) {
        char c = s[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != suffix[i])
            return 0;
    }
    return 1;
}

popfile_format popfile_detect(const char *path, const unsigned char *bytes,
                              size_t len)
{
    if (len >= sizeof npy_magic &&
        memcmp(bytes, npy_magic, sizeof npy_magic) == 0)
        return POPFILE_NPY;
    if (ends_with(path, ".npy"))
        return POPFILE_NPY;
    if (ends_with(path, ".csv"))
        return POPFILE_CSV;
    if (ends_with(path, ".tsv") || ends_with(path, ".tab"))
        return POPFILE_TSV;
    return POPFILE_AUTO;
}

const char *popfile_format_name(popfile_format f)
{
    static const char *const names[] = {
        [POPFILE_AUTO] = "auto", [POPFILE_CSV] = "csv",
        [POPFILE_TSV] = "tsv",   [POPFILE_NPY] = "npy"};
    return names[f];
}

int popfile_parse(const char *path, const unsigned char *bytes, size_t len,
                  const popfile_options *opt, popfile *pf, bn_error *err)
{
    static const popfile_options none = {.format = POPFILE_AUTO};
    if (!opt)
        opt = &none;
    memset(pf, 0, sizeof *pf);
    popfile_format fmt = opt->format;
    if (fmt == POPFILE_AUTO)
        fmt = popfile_detect(path, bytes, len);
    if (fmt == POPFILE_AUTO)
        return bn_fail(err,
                       "%s: cannot tell the format from the name: name "
                       "the file .csv, .tsv or .npy",
                       path);
    switch (fmt) {
    case POPFILE_NPY:
        return parse_npy(path, bytes, len, opt, pf, err);
    case POPFILE_CSV:
        return parse_text(path, bytes, len, ',', opt, pf, err);
    case POPFILE_TSV:
        return parse_text(path, bytes, len, '\t', opt, pf, err);
    case POPFILE_AUTO:
        break;
    }
    return bn_fail(err, "%s: unknown format", path);
}

void popfile_free(popfile *pf)
{
    for (size_t j = 0; pf->names && j < pf->f; j++)
        free(pf->names[j]);
    free(pf->names);
    free(pf->x);
    pop_factor_free(&pf->label);
    pop_factor_free(&pf->group);
    input_release(pf->held);
    memset(pf, 0, sizeof *pf);
}

void popfile_truth(const popfile *pf, double *mean, double *var)
{
    for (size_t j = 0; j < pf->f; j++)
        pop_moments(pf->n, pf->f, pf->x + j, &mean[j], &var[j]);
}

int popfile_slurp(const char *path, size_t max_bytes, unsigned char **bytes,
                  size_t *len, bn_error *err)
{
    char *text;
    int rc = input_read(path, max_bytes, 0, &text, len, err);
    *bytes = (unsigned char *)text;
    return rc;
}

int pop_from_file(popfile *pf, pop_t *pop, bn_error *err)
{
    memset(pop, 0, sizeof *pop);
    pop->n = pf->n;
    pop->f = pf->f;
    pop->x = pf->x;
    if (pop_truth(pop, err) != 0) {
        pop->x = NULL; /* still pf's */
        return -1;
    }
    pop->names = pf->names;
    pop->label = pf->label;
    pop->group = pf->group;
    memset(pf, 0, sizeof *pf);
    return 0;
}
