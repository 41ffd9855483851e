/* A TSV reader for files (and texts) whose every row has the header's
 * column count. */
#include "base/tsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/input.h"

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A header's names (split in place) each once: sorted, a name twice
 * stands beside itself, and the message names both its columns. */
static int unique_names(const char *path, const tsv_table *t, bn_error *err)
{
    size_t bytes = t->ncol * sizeof(char *);
    if (input_charge(path, bytes, "its header's names", err) != 0)
        return -1;
    char **sorted = malloc(bytes);
    int rc = 0;
    if (!sorted) {
        input_release(bytes);
        return bn_fail(err, "%s: out of memory", path);
    }
    memcpy(sorted, t->names, bytes);
    qsort(sorted, t->ncol, sizeof *sorted, cmp_name);
    for (size_t i = 1; rc == 0 && i < t->ncol; i++) {
        if (strcmp(sorted[i], sorted[i - 1]) != 0)
            continue;
        size_t first = 0, second;
        while (strcmp(t->names[first], sorted[i]) != 0)
            first++;
        second = first + 1;
        while (strcmp(t->names[second], sorted[i]) != 0)
            second++;
        rc = bn_fail(err, "%s:1: column '%s' named twice (columns %zu and "
                          "%zu)",
                     path, sorted[i], first + 1, second + 1);
    }
    free(sorted);
    input_release(bytes);
    return rc;
}

/* The table of the len bytes buf (a NUL after them, held by the budget),
 * which t takes. */
static int split(const char *path, char *buf, size_t len, tsv_table *t,
                 bn_error *err)
{
    t->buf = buf;
    t->held = len + 1;

    size_t lines = 0, tabs = 0;
    for (size_t i = 0; i < len; i++) {
        lines += buf[i] == '\n';
        tabs += buf[i] == '\t';
    }
    if (lines == 0 || buf[len - 1] != '\n') {
        tsv_free(t);
        return bn_fail(err, "%s: not a TSV file with a header line", path);
    }
    size_t bytes = (lines + tabs) * sizeof(char *);
    if (input_charge(path, bytes, "its fields", err) != 0) {
        tsv_free(t);
        return -1;
    }
    t->held += bytes;
    char **fields = malloc(bytes);
    if (!fields) {
        tsv_free(t);
        return bn_fail(err, "%s: out of memory", path);
    }
    t->names = fields;
    /* Split in place: every tab and newline ends a field. */
    size_t nf = 0, line = 0, in_line = 0;
    char *start = buf;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\t' && buf[i] != '\n')
            continue;
        int eol = buf[i] == '\n';
        if ((size_t)(buf + i - start) > TSV_MAX_FIELD) {
            tsv_free(t);
            return bn_fail(err, "%s:%zu: a field of %zu bytes, more than the "
                                "limit of %d",
                           path, line + 1, (size_t)(buf + i - start),
                           TSV_MAX_FIELD);
        }
        buf[i] = '\0';
        fields[nf++] = start;
        start = buf + i + 1;
        in_line++;
        if (eol) {
            if (line == 0) {
                t->ncol = in_line;
                if (unique_names(path, t, err) != 0) {
                    tsv_free(t);
                    return -1;
                }
            } else if (in_line != t->ncol) {
                size_t ncol = t->ncol;
                tsv_free(t);
                return bn_fail(err, "%s:%zu: %zu fields, the header has %zu",
                               path, line + 1, in_line, ncol);
            }
            line++;
            in_line = 0;
        }
    }
    t->cells = fields + t->ncol;
    t->nrow = lines - 1;
    return 0;
}

int tsv_read(const char *path, tsv_table *t, bn_error *err)
{
    memset(t, 0, sizeof *t);
    char *buf;
    size_t len;
    if (input_read(path, TSV_MAX_BYTES, 1, &buf, &len, err) != 0)
        return -1;
    return split(path, buf, len, t, err);
}

int tsv_parse(const char *name, const char *text, size_t len, tsv_table *t,
              bn_error *err)
{
    memset(t, 0, sizeof *t);
    if (len > TSV_MAX_BYTES)
        return bn_fail(err, "%s: more than %u bytes", name, TSV_MAX_BYTES);
    if (memchr(text, '\0', len))
        return bn_fail(err, "%s: a NUL byte in the text", name);
    if (input_charge(name, len + 1, "its copy", err) != 0)
        return -1;
    char *buf = malloc(len + 1);
    if (!buf) {
        input_release(len + 1);
        return bn_fail(err, "%s: out of memory", name);
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    return split(name, buf, len, t, err);
}

void tsv_free(tsv_table *t)
{
    free(t->names);
    free(t->buf);
    input_release(t->held);
    memset(t, 0, sizeof *t);
}

int tsv_column(const tsv_table *t, const char *name)
{
    for (size_t c = 0; c < t->ncol; c++)
        if (strcmp(t->names[c], name) == 0)
            return (int)c;
    return -1;
}

const char *tsv_cell(const tsv_table *t, size_t row, size_t col)
{
    return t->cells[row * t->ncol + col];
}

/* A cell of a TSV that must be a finite number. */
int tsv_number(const tsv_table *t, const char *path, size_t row,
                      int col, double *out, bn_error *err)
{
    const char *cell = tsv_cell(t, row, (size_t)col);
    char *end;
    double v = strtod(cell, &end);
    if (end == cell || *end || !isfinite(v))
        return bn_fail(err, "%s:%zu: column %s: '%s' is not a finite number",
                       path, row + 2, t->names[col], cell);
    *out = v;
    return 0;
}

int tsv_count(const tsv_table *t, const char *path, size_t row,
                     int col, size_t *out, bn_error *err)
{
    double v;
    if (tsv_number(t, path, row, col, &v, err) != 0)
        return -1;
    if (v < 0 || v != floor(v) || v > 1e15)
        return bn_fail(err, "%s:%zu: column %s: '%s' is not a count", path,
                       row + 2, t->names[col], tsv_cell(t, row, (size_t)col));
    *out = (size_t)v;
    return 0;
}

int tsv_need_column(const tsv_table *t, const char *path,
                       const char *name, int *col, bn_error *err)
{
    *col = tsv_column(t, name);
    if (*col < 0)
        return bn_fail(err, "%s: no column '%s'", path, name);
    return 0;
}

