/*
 * A checkpoint's running statistics, read from a TSV and matched to the
 * population's features by name (initial.h). Names, not positions: a
 * checkpoint of another population or of some features only is then an
 * experiment, and one that names a feature the population lacks is a
 * mistake the user hears about.
 */
#include "model/initial.h"

#include <stdlib.h>
#include <string.h>

#include "base/tsv.h"

void bn_initial_free(bn_initial *ini)
{
    for (size_t i = 0; ini->names && i < ini->n; i++)
        free(ini->names[i]);
    free(ini->names);
    free(ini->mean);
    free(ini->file);
    memset(ini, 0, sizeof *ini);
}

static int read_row(const tsv_table *t, const char *name, size_t r,
                    const int *col, bn_initial *out, bn_error *err)
{
    const char *f = tsv_cell(t, r, (size_t)col[0]);
    for (size_t i = 0; i < r; i++)
        if (strcmp(out->names[i], f) == 0)
            return bn_fail(err, "%s:%zu: feature '%s' is named twice (first "
                                "on line %zu)",
                           name, r + 2, f, i + 2);
    if (tsv_number(t, name, r, col[1], &out->mean[r], err) != 0 ||
        tsv_number(t, name, r, col[2], &out->var[r], err) != 0)
        return -1;
    if (out->var[r] < 0.0)
        return bn_fail(err, "%s:%zu: column running_var: a variance below "
                            "0",
                       name, r + 2);
    size_t len = strlen(f) + 1;
    out->names[r] = malloc(len);
    if (!out->names[r])
        return bn_fail(err, "%s: out of memory", name);
    memcpy(out->names[r], f, len);
    return 0;
}

int bn_initial_parse(const char *name, const char *bytes, size_t len,
                     bn_initial *out, bn_error *err)
{
    memset(out, 0, sizeof *out);
    tsv_table t;
    if (tsv_parse(name, bytes, len, &t, err) != 0)
        return -1;
    int col[3];
    int rc = -1;
    if (tsv_need_column(&t, name, "feature", &col[0], err) != 0 ||
        tsv_need_column(&t, name, "running_mean", &col[1], err) != 0 ||
        tsv_need_column(&t, name, "running_var", &col[2], err) != 0)
        goto done;
    if (t.nrow == 0 || t.nrow > BN_INITIAL_MAX_ROWS) {
        bn_fail(err, "%s: %zu rows: a checkpoint's features are 1 to %d",
                name, t.nrow, BN_INITIAL_MAX_ROWS);
        goto done;
    }
    out->names = calloc(t.nrow, sizeof *out->names);
    out->mean = malloc(2 * t.nrow * sizeof *out->mean);
    out->file = malloc(strlen(name) + 1);
    if (!out->names || !out->mean || !out->file) {
        bn_fail(err, "%s: out of memory", name);
        goto done;
    }
    strcpy(out->file, name);
    out->var = out->mean + t.nrow;
    out->n = t.nrow;
    for (size_t r = 0; r < t.nrow; r++)
        if (read_row(&t, name, r, col, out, err) != 0)
            goto done;
    rc = 0;
done:
    tsv_free(&t);
    if (rc != 0)
        bn_initial_free(out);
    return rc;
}

size_t bn_initial_find(const bn_initial *ini, const char *name)
{
    size_t i = 0;
    while (i < ini->n && strcmp(ini->names[i], name) != 0)
        i++;
    return i;
}

static size_t feature_of(const pop_t *pop, const char *f)
{
    size_t j = 0;
    while (j < pop->f && strcmp(pop->names[j], f) != 0)
        j++;
    return j;
}

int bn_initial_check(const bn_initial *ini, const pop_t *pop, bn_error *err)
{
    for (size_t i = 0; i < ini->n; i++)
        if (feature_of(pop, ini->names[i]) == pop->f)
            return bn_fail(err, "%s:%zu: feature '%s' is not one of the "
                                "population's %zu",
                           ini->file, i + 2, ini->names[i], pop->f);
    return 0;
}

void bn_initial_apply(const bn_initial *ini, const pop_t *pop, double *rm,
                      double *rv)
{
    for (size_t j = 0; j < pop->f; j++)
        rm[j] = 0.0, rv[j] = 1.0;
    for (size_t i = 0; i < ini->n; i++) {
        size_t j = feature_of(pop, ini->names[i]);
        if (j < pop->f)
            rm[j] = ini->mean[i], rv[j] = ini->var[i];
    }
}
