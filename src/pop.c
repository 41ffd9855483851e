/*
 * Generating the enumerated population and its truth. See pop.h for the
 * formula; the order of random draws (row by row, feature by feature, one
 * draw even when rho is 1) is part of the definition. This is where every
 * platform difference would start, so the quantile and the noise come from
 * num.h and draw.h, never from libm or GSL.
 */
#include "pop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "num.h"
#include "pcg32.h"

void pop_default_spec(pop_spec *spec)
{
    static const pop_feature def[] = {
        {"f0", 0.0, 1.00, 1.0},  {"f1", 0.5, 0.80, 0.8},
        {"f2", -0.5, 1.20, 0.6}, {"f3", 0.3, 0.90, 0.5},
        {"f4", 0.2, 1.10, 0.3},  {"f5", -0.3, 0.70, 0.2},
        /* variance ~7.6: nowhere near the running variance's initial 1 */
        {"f6", 0.4, 2.76, 0.4},  {"f7", 0.1, 1.00, 0.0},
    };
    memset(spec, 0, sizeof *spec);
    spec->n_rows = 512;
    spec->seed = 1;
    spec->n_features = sizeof def / sizeof def[0];
    memcpy(spec->features, def, sizeof def);
}

int pop_feature_index(const pop_spec *spec, const char *name)
{
    for (size_t j = 0; j < spec->n_features; j++)
        if (strcmp(spec->features[j].name, name) == 0)
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
    if (spec->n_features < 1 || spec->n_features > BN_MAX_FEATURES)
        return bn_fail(err, "features must number 1 to %d, got %zu",
                       BN_MAX_FEATURES, spec->n_features);
    for (size_t j = 0; j < spec->n_features; j++) {
        const pop_feature *ft = &spec->features[j];
        if (ft->name[0] == '\0')
            return bn_fail(err, "feature %zu has no name", j);
        for (size_t k = 0; k < j; k++)
            if (strcmp(spec->features[k].name, ft->name) == 0)
                return bn_fail(err, "feature name '%s' appears twice",
                               ft->name);
        if (!isfinite(ft->mean))
            return bn_fail(err, "feature %s: mean must be finite", ft->name);
        if (!isfinite(ft->sd) || ft->sd < 0)
            return bn_fail(err, "feature %s: sd must be finite and >= 0",
                           ft->name);
        if (!(ft->rho >= -1.0 && ft->rho <= 1.0))
            return bn_fail(err, "feature %s: rho must be in [-1, 1]",
                           ft->name);
    }
    return 0;
}

void pop_moments(size_t n, size_t stride, const double *v, double *mean,
                 double *var)
{
    double ss;
    num_moments(n, stride, v, mean, &ss);
    *var = ss / (double)n;
}

int pop_generate(const pop_spec *spec, pop_t *pop, bn_error *err)
{
    memset(pop, 0, sizeof *pop);
    if (pop_validate(spec, err) != 0)
        return -1;
    size_t n = spec->n_rows, f = spec->n_features;
    double *x = malloc(n * f * sizeof *x);
    if (!x)
        return bn_fail(err, "out of memory for %zu x %zu rows", n, f);
    pcg32_t rng;
    pcg32_seed(&rng, spec->seed, PCG32_INITSEQ_POPULATION);
    for (size_t i = 0; i < n; i++) {
        double z = num_norm_inv(((double)i + 0.5) / (double)n);
        for (size_t j = 0; j < f; j++) {
            const pop_feature *ft = &spec->features[j];
            double e = draw_gaussian(&rng);
            double mix = ft->rho * z + sqrt(1.0 - ft->rho * ft->rho) * e;
            x[i * f + j] = ft->mean + ft->sd * mix;
        }
    }
    pop->spec = *spec;
    pop->n = n;
    pop->f = f;
    pop->x = x;
    for (size_t j = 0; j < f; j++)
        pop_moments(n, f, x + j, &pop->mean[j], &pop->var[j]);
    return 0;
}

void pop_free(pop_t *pop)
{
    free(pop->x);
    pop->x = NULL;
}
