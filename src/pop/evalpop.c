/* The held-out split, a second file's rows matched, and the shift; see
 * evalpop.h. */
#include "pop/evalpop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "base/pcg32.h"

static char *copy_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

/* dst = src's column and levels, and the levels of rows[0..n-1] (NULL:
 * every row), or nothing when src has no column. */
static int copy_factor(const pop_factor *src, const size_t *rows,
                       size_t n, pop_factor *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src->column)
        return 0;
    dst->column = copy_text(src->column);
    dst->levels = calloc(src->n_levels ? src->n_levels : 1,
                         sizeof *dst->levels);
    dst->of_row = malloc((n ? n : 1) * sizeof *dst->of_row);
    if (!dst->column || !dst->levels || !dst->of_row)
        return -1;
    dst->n_levels = src->n_levels;
    for (size_t c = 0; c < src->n_levels; c++)
        if (!(dst->levels[c] = copy_text(src->levels[c])))
            return -1;
    for (size_t i = 0; i < n; i++)
        dst->of_row[i] = src->of_row[rows ? rows[i] : i];
    return 0;
}

/* out = rows[0..n-1] of src (NULL: every row), each row's origin kept;
 * the truth is computed. */
static int take_rows(const pop_t *src, const size_t *rows, size_t n,
                     pop_t *out, bn_error *err)
{
    memset(out, 0, sizeof *out);
    size_t f = src->f;
    out->n = n;
    out->f = f;
    out->x = bn_alloc_large(n * f * sizeof *out->x);
    out->names = calloc(f, sizeof *out->names);
    out->origin = malloc(n * sizeof *out->origin);
    int bad = !out->x || !out->names || !out->origin;
    for (size_t j = 0; !bad && j < f; j++)
        bad = !(out->names[j] = copy_text(src->names[j]));
    if (!bad) {
        for (size_t i = 0; i < n; i++) {
            size_t r = rows ? rows[i] : i;
            memcpy(&out->x[i * f], &src->x[r * f], f * sizeof *out->x);
            out->origin[i] = src->origin ? src->origin[r] : r;
        }
        bad = copy_factor(&src->label, rows, n, &out->label) != 0 ||
              copy_factor(&src->group, rows, n, &out->group) != 0;
    }
    if (bad) {
        pop_free(out);
        return bn_fail(err, "out of memory for %zu rows of %zu features", n,
                       f);
    }
    if (pop_truth(out, err) != 0) {
        pop_free(out);
        return -1;
    }
    return 0;
}

size_t evalpop_held_count(size_t n, double holdout)
{
    return (size_t)floor(holdout * (double)n + 0.5);
}

int evalpop_split(const pop_t *pop, double holdout, uint64_t seed,
                  pop_t *train, pop_t *held, bn_error *err)
{
    memset(train, 0, sizeof *train);
    memset(held, 0, sizeof *held);
    size_t n = pop->n;
    size_t k = pop->label.column ? pop->label.n_levels : 1;
    size_t *start = calloc(k + 1, sizeof *start);
    size_t *next = malloc(k * sizeof *next);
    size_t *byclass = malloc((n ? n : 1) * sizeof *byclass);
    unsigned char *out = calloc(n ? n : 1, 1);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    int rc = -1;
    if (!start || !next || !byclass || !out || !rows) {
        bn_fail(err, "out of memory for the held-out split");
        goto done;
    }
    /* The rows of each class in their order (a counting sort), then each
     * class shuffled in turn from one stream; its first rows are held
     * out. */
    for (size_t i = 0; i < n; i++)
        start[(pop->label.column ? pop->label.of_row[i] : 0) + 1]++;
    for (size_t c = 0; c < k; c++)
        start[c + 1] += start[c];
    memcpy(next, start, k * sizeof *next);
    for (size_t i = 0; i < n; i++)
        byclass[next[pop->label.column ? pop->label.of_row[i] : 0]++] = i;
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SPLIT);
    size_t n_held = 0;
    for (size_t c = 0; c < k; c++) {
        size_t nc = start[c + 1] - start[c];
        rand_shuffle(&rng, byclass + start[c], nc);
        size_t h = evalpop_held_count(nc, holdout);
        for (size_t i = 0; i < h; i++)
            out[byclass[start[c] + i]] = 1;
        n_held += h;
    }
    if (n_held < 2 || n - n_held < 2) {
        bn_fail(err,
                "holdout %g of %zu rows holds out %zu, leaving %zu to train "
                "on: each part needs at least two",
                holdout, n, n_held, n - n_held);
        goto done;
    }
    size_t a = 0, b = n_held;
    for (size_t i = 0; i < n; i++)
        rows[out[i] ? a++ : b++] = i;
    rc = take_rows(pop, rows, n_held, held, err) != 0 ||
                 take_rows(pop, rows + n_held, n - n_held, train, err) != 0
             ? -1
             : 0;
done:
    free(start);
    free(next);
    free(byclass);
    free(out);
    free(rows);
    if (rc != 0) {
        pop_free(train);
        pop_free(held);
    }
    return rc;
}

int evalpop_match(const pop_t *train, pop_t *eval, const char *name,
                  bn_error *err)
{
    if (eval->f != train->f)
        return bn_fail(err, "%s: %zu features, the training rows have %zu",
                       name, eval->f, train->f);
    for (size_t j = 0; j < train->f; j++)
        if (strcmp(eval->names[j], train->names[j]) != 0)
            return bn_fail(err,
                           "%s: feature %zu is '%s', the training rows' is "
                           "'%s'",
                           name, j + 1, eval->names[j], train->names[j]);
    if (!train->label.column)
        return 0;
    pop_factor *fac = &eval->label;
    size_t *to = malloc((fac->n_levels ? fac->n_levels : 1) * sizeof *to);
    if (!to)
        return bn_fail(err, "out of memory");
    for (size_t c = 0; c < fac->n_levels; c++) {
        size_t t = 0;
        while (t < train->label.n_levels &&
               strcmp(train->label.levels[t], fac->levels[c]) != 0)
            t++;
        if (t == train->label.n_levels) {
            free(to);
            return bn_fail(err,
                           "%s: class '%s' of column '%s' is not a class of "
                           "the training rows",
                           name, fac->levels[c], fac->column);
        }
        to[c] = t;
    }
    pop_factor renum;
    if (copy_factor(&train->label, NULL, 0, &renum) != 0) {
        free(to);
        pop_factor_free(&renum);
        return bn_fail(err, "out of memory");
    }
    /* The rows' levels renumbered, the levels list the training rows'. */
    free(renum.of_row);
    renum.of_row = fac->of_row;
    for (size_t i = 0; i < eval->n; i++)
        renum.of_row[i] = to[renum.of_row[i]];
    fac->of_row = NULL;
    pop_factor_free(fac);
    *fac = renum;
    free(to);
    return 0;
}

int evalpop_shift(const pop_t *base, double shift, double scale,
                  double offset, pop_t *out, bn_error *err)
{
    if (take_rows(base, NULL, base->n, out, err) != 0)
        return -1;
    /* take_rows gives each row its own index as origin when base has
     * none; a shifted population is still base's rows. */
    if (!base->origin) {
        free(out->origin);
        out->origin = NULL;
    }
    out->sample_rows = base->sample_rows;
    size_t f = base->f;
    for (size_t j = 0; j < f; j++) {
        double mu = base->mean[j], sd = sqrt(base->var[j]);
        for (size_t i = 0; i < base->n; i++) {
            double *x = &out->x[i * f + j];
            *x = mu + shift * sd + scale * (*x - mu) + offset;
        }
    }
    if (pop_truth(out, err) != 0) {
        pop_free(out);
        return -1;
    }
    return 0;
}
