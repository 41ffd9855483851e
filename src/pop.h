/*
 * The population: N enumerated rows of F features, the whole data set a run
 * trains on and every score is an exact mean over. Row i has the latent
 * value z_i = Phi^-1((i + 0.5) / N) and feature j is
 *     x_ij = mean_j + sd_j * (rho_j * z_i + sqrt(1 - rho_j^2) * e_ij)
 * with e_ij standard normal from PCG32(seed, initseq 1) by the polar
 * method (draw.h), drawn row by row, and Phi^-1 from num.h. The same spec
 * gives the same rows, bit for bit, on every machine. The truth is the population's own mean and
 * variance (divisor N).
 */
#ifndef BN_POP_H
#define BN_POP_H

#include <stdint.h>

#include "common.h"

typedef struct {
    char name[BN_NAME_MAX];
    double mean, sd, rho;
} pop_feature;

typedef struct {
    size_t n_rows;
    size_t n_features;
    uint64_t seed;
    pop_feature features[BN_MAX_FEATURES];
} pop_spec;

typedef struct {
    pop_spec spec;
    size_t n, f;
    double *x; /* row-major n x f */
    double mean[BN_MAX_FEATURES];
    double var[BN_MAX_FEATURES]; /* population variance, divisor n */
} pop_t;

/* The published study's shape: 512 rows, the eight features f0..f7. */
void pop_default_spec(pop_spec *spec);
int pop_validate(const pop_spec *spec, bn_error *err);
int pop_generate(const pop_spec *spec, pop_t *pop, bn_error *err);
void pop_free(pop_t *pop);
/* Index of the feature called name, or -1. */
int pop_feature_index(const pop_spec *spec, const char *name);

/* Mean and population variance of n values spaced stride apart, by a
 * compensated sum and the corrected two-pass formula: exact to rounding
 * even when the mean dwarfs the spread. */
void pop_moments(size_t n, size_t stride, const double *v, double *mean,
                 double *var);

#endif
