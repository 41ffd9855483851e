/*
 * Generating the enumerated population and its truth. See pop.h for the
 * formula; the order of random draws (row by row, feature by feature, one
 * draw even when rho is 1) is part of the definition. This is where every
 * platform difference would start, so the quantile and the noise come from
 * num.h and rand.h, never from libm or GSL.
 */
#include "pop/pop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "base/num.h"
#include "base/pcg32.h"

int pop_default_spec(pop_spec *spec)
{
    static const struct {
        const char *name;
        double mean, sd, rho;
    } def[] = {
        {.name = "f0", .mean = 0.0, .sd = 1.00, .rho = 1.0},
        {.name = "f1", .mean = 0.5, .sd = 0.80, .rho = 0.8},
        {.name = "f2", .mean = -0.5, .sd = 1.20, .rho = 0.6},
        {.name = "f3", .mean = 0.3, .sd = 0.90, .rho = 0.5},
        {.name = "f4", .mean = 0.2, .sd = 1.10, .rho = 0.3},
        {.name = "f5", .mean = -0.3, .sd = 0.70, .rho = 0.2},
        /* variance ~7.6: nowhere near the running variance's initial 1 */
        {.name = "f6", .mean = 0.4, .sd = 2.76, .rho = 0.4},
        {.name = "f7", .mean = 0.1, .sd = 1.00, .rho = 0.0},
    };
    pop_spec_init(spec);
    spec->n_rows = 512;
    spec->seed = 1;
    for (size_t j = 0; j < sizeof def / sizeof def[0]; j++)
        if (pop_spec_add(spec, def[j].name, def[j].mean, def[j].sd,
                         def[j].rho) != 0)
            return -1;
    return 0;
}

void pop_spec_init(pop_spec *spec) { memset(spec, 0, sizeof *spec); }

void pop_spec_clear(pop_spec *spec)
{
    for (size_t j = 0; j < spec->n_features; j++)
        free(spec->features[j].name);
    spec->n_features = 0;
}

void pop_spec_free(pop_spec *spec)
{
    pop_spec_clear(spec);
    free(spec->features);
    memset(spec, 0, sizeof *spec);
}

static char *copy_name(const char *s)
{
    size_t len = strlen(s) + 1;
    char *c = malloc(len);
    return c ? memcpy(c, s, len) : NULL;
}

int pop_spec_add(pop_spec *spec, const char *name, double mean, double sd,
                 double rho)
{
    if (spec->n_features == spec->cap) {
        size_t cap = spec->cap ? 2 * spec->cap : 8;
        pop_feature *nf = realloc(spec->features, cap * sizeof *nf);
        if (!nf)
            return -1;
        spec->features = nf;
        spec->cap = cap;
    }
    pop_feature *ft = &spec->features[spec->n_features];
    ft->name = copy_name(name);
    if (!ft->name)
        return -1;
    ft->mean = mean;
    ft->sd = sd;
    ft->rho = rho;
    spec->n_features++;
    return 0;
}

int pop_spec_copy(pop_spec *dst, const pop_spec *src)
{
    pop_spec_init(dst);
    dst->n_rows = src->n_rows;
    dst->seed = src->seed;
    dst->classes = src->classes;
    dst->label_noise = src->label_noise;
    for (size_t j = 0; j < src->n_features; j++) {
        const pop_feature *ft = &src->features[j];
        if (pop_spec_add(dst, ft->name, ft->mean, ft->sd, ft->rho) != 0) {
            pop_spec_free(dst);
            return -1;
        }
    }
    return 0;
}

int pop_feature_index(const pop_spec *spec, const char *name)
{
    for (size_t j = 0; j < spec->n_features; j++)
        if (strcmp(spec->features[j].name, name) == 0)
            return (int)j;
    return -1;
}

int pop_name_index(const pop_t *pop, const char *name)
{
    for (size_t j = 0; j < pop->f; j++)
        if (strcmp(pop->names[j], name) == 0)
            return (int)j;
    return -1;
}

int pop_constant_feature(const pop_t *pop)
{
    for (size_t j = 0; j < pop->f; j++)
        if (pop->var[j] == 0.0)
            return (int)j;
    return -1;
}

int pop_validate(const pop_spec *spec, bn_error *err)
{
    if (spec->n_rows < 2)
        return bn_fail(err, "rows must be at least 2, got %zu", spec->n_rows);
    if (spec->n_rows > 100000000u)
        return bn_fail(err, "rows must be at most 100000000, got %zu",
                       spec->n_rows);
    if (spec->n_features < 1)
        return bn_fail(err, "a population needs at least one feature");
    if (spec->classes == 1 || spec->classes > spec->n_rows)
        return bn_fail(err,
                       "classes must be 0 (none) or from 2 to the %zu rows, "
                       "got %zu",
                       spec->n_rows, spec->classes);
    if (!(spec->label_noise >= 0.0 && isfinite(spec->label_noise)))
        return bn_fail(err, "label_noise must be finite and >= 0, got %g",
                       spec->label_noise);
    if (spec->n_features > SIZE_MAX / sizeof(double) / spec->n_rows)
        return bn_fail(err, "%zu rows of %zu features do not fit in memory",
                       spec->n_rows, spec->n_features);
    for (size_t j = 0; j < spec->n_features; j++) {
        const pop_feature *ft = &spec->features[j];
        if (!ft->name || ft->name[0] == '\0')
            return bn_fail(err, "feature %zu has no name", j);
        for (size_t k = 0; k < j; k++)
            if (strcmp(spec->features[k].name, ft->name) == 0)
                return bn_fail(err, "feature name '%s' appears twice",
                               ft->name);
        if (pop_check_feature(ft, err) != 0)
            return -1;
    }
    return 0;
}

int pop_check_feature(const pop_feature *ft, bn_error *err)
{
    if (!ft->name || ft->name[0] == '\0')
        return bn_fail(err, "a feature has no name");
    if (!isfinite(ft->mean))
        return bn_fail(err, "feature %s: mean must be finite", ft->name);
    if (!isfinite(ft->sd) || ft->sd < 0)
        return bn_fail(err, "feature %s: sd must be >= 0 and finite",
                       ft->name);
    if (!(ft->rho >= -1.0 && ft->rho <= 1.0))
        return bn_fail(err, "feature %s: rho must be in [-1, 1]", ft->name);
    /* z is at most 6 in magnitude at 10^8 rows, a Gaussian draw of PCG32
     * below 10: 64 sd bounds every value with room to spare. */
    if (!(fabs(ft->mean) + 64.0 * ft->sd <= POP_MAX_SCALE))
        return bn_fail(err,
                       "feature %s: |mean| + 64 sd is %g, more than the "
                       "limit of %g (the variances and their squared errors "
                       "would overflow)",
                       ft->name, fabs(ft->mean) + 64.0 * ft->sd,
                       POP_MAX_SCALE);
    return 0;
}

void pop_moments(size_t n, size_t stride, const double *v, double *mean,
                 double *var)
{
    double ss;
    num_moments(n, stride, v, mean, &ss);
    *var = ss / (double)n;
}

/* Each feature's mean and variance (divisor n) into new arrays. */
static int truth_of(size_t n, size_t f, const double *x, double **mean,
                    double **var)
{
    *mean = malloc(f * sizeof **mean);
    *var = malloc(f * sizeof **var);
    if (!*mean || !*var) {
        free(*mean);
        free(*var);
        *mean = *var = NULL;
        return -1;
    }
    num_moments_cols(n, f, f, x, NULL, *mean, *var);
    for (size_t j = 0; j < f; j++)
        (*var)[j] /= (double)n; /* as pop_moments divides */
    return 0;
}

int pop_truth(pop_t *pop, bn_error *err)
{
    free(pop->mean);
    free(pop->var);
    pop->mean = pop->var = NULL;
    if (truth_of(pop->n, pop->f, pop->x, &pop->mean, &pop->var) != 0)
        return bn_fail(err, "out of memory for the truth of %zu features",
                       pop->f);
    return 0;
}

typedef struct {
    double t;
    size_t i;
} ranked;

static int by_t(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

int pop_class_levels(size_t k, pop_factor *fac)
{
    memset(fac, 0, sizeof *fac);
    fac->column = copy_name("label");
    fac->levels = calloc(k ? k : 1, sizeof *fac->levels);
    if (!fac->column || !fac->levels)
        return -1;
    fac->n_levels = k;
    for (size_t c = 0; c < k; c++) {
        char name[24];
        snprintf(name, sizeof name, "%zu", c);
        if (!(fac->levels[c] = copy_name(name)))
            return -1;
    }
    return 0;
}

/* K classes by the ranks of t_i = z_i + s eta_i (ties by row), row r of
 * the ranking in class floor(K r / N): as equal in size as N allows. */
static int make_labels(const pop_spec *spec, uint64_t initseq, pop_t *pop)
{
    size_t n = spec->n_rows, k = spec->classes;
    pop_factor *fac = &pop->label;
    if (pop_class_levels(k, fac) != 0 ||
        !(fac->of_row = malloc(n * sizeof *fac->of_row)))
        return -1;
    ranked *r = malloc(n * sizeof *r);
    if (!r)
        return -1;
    pcg32_t rng;
    pcg32_seed(&rng, spec->seed, initseq);
    for (size_t i = 0; i < n; i++) {
        double z = num_norm_inv(((double)i + 0.5) / (double)n);
        r[i].t = z + spec->label_noise * rand_gaussian(&rng);
        r[i].i = i;
    }
    qsort(r, n, sizeof *r, by_t);
    for (size_t q = 0; q < n; q++)
        fac->of_row[r[q].i] = (size_t)((unsigned long long)q * k / n);
    free(r);
    return 0;
}

static int generate(const pop_spec *spec, uint64_t features,
                    uint64_t labels, pop_t *pop, bn_error *err)
{
    memset(pop, 0, sizeof *pop);
    if (pop_validate(spec, err) != 0)
        return -1;
    size_t n = spec->n_rows, f = spec->n_features;
    double *x = bn_alloc_large(n * f * sizeof *x);
    if (!x)
        return bn_fail(err, "out of memory for %zu x %zu rows", n, f);
    pcg32_t rng;
    pcg32_seed(&rng, spec->seed, features);
    for (size_t i = 0; i < n; i++) {
        double z = num_norm_inv(((double)i + 0.5) / (double)n);
        for (size_t j = 0; j < f; j++) {
            const pop_feature *ft = &spec->features[j];
            double e = rand_gaussian(&rng);
            double mix = ft->rho * z + sqrt(1.0 - ft->rho * ft->rho) * e;
            x[i * f + j] = ft->mean + ft->sd * mix;
        }
    }
    pop->n = n;
    pop->f = f;
    pop->x = x;
    pop->names = calloc(f, sizeof *pop->names);
    for (size_t j = 0; pop->names && j < f; j++)
        if (!(pop->names[j] = copy_name(spec->features[j].name)))
            break;
    if (!pop->names || !pop->names[f - 1] ||
        truth_of(n, f, x, &pop->mean, &pop->var) != 0 ||
        (spec->classes && make_labels(spec, labels, pop) != 0)) {
        pop_free(pop);
        return bn_fail(err, "out of memory for %zu x %zu rows", n, f);
    }
    return 0;
}

int pop_generate(const pop_spec *spec, pop_t *pop, bn_error *err)
{
    return generate(spec, PCG32_INITSEQ_POPULATION, PCG32_INITSEQ_LABELS,
                    pop, err);
}

int pop_generate_held_out(const pop_spec *spec, pop_t *pop, bn_error *err)
{
    return generate(spec, PCG32_INITSEQ_HELD_OUT,
                    PCG32_INITSEQ_HELD_OUT_LABELS, pop, err);
}

void pop_factor_free(pop_factor *fac)
{
    for (size_t k = 0; k < fac->n_levels; k++)
        free(fac->levels[k]);
    free(fac->levels);
    free(fac->of_row);
    free(fac->column);
    memset(fac, 0, sizeof *fac);
}

void pop_free(pop_t *pop)
{
    for (size_t j = 0; pop->names && j < pop->f; j++)
        free(pop->names[j]);
    free(pop->names);
    free(pop->x);
    free(pop->mean);
    free(pop->var);
    pop_factor_free(&pop->label);
    pop_factor_free(&pop->group);
    free(pop->origin);
    memset(pop, 0, sizeof *pop);
}
