/*
 * The population: N enumerated rows of F features, the whole data set a run
 * trains on and every score is an exact mean over. Row i has the latent
 * value z_i = Phi^-1((i + 0.5) / N) and feature j is
 *     x_ij = mean_j + sd_j * (rho_j * z_i + sqrt(1 - rho_j^2) * e_ij)
 * with e_ij standard normal from PCG32(seed, initseq 1) by the polar
 * method (rand.h), drawn row by row, and Phi^-1 from num.h. The same spec
 * gives the same rows, bit for bit, on every machine. The truth is the
 * population's own mean and variance (divisor N).
 *
 * With K classes, row i's label is its rank among t_i = z_i + s eta_i
 * (eta_i standard normal from PCG32(seed, initseq 4), s the label noise)
 * cut into K equal parts: floor(K r_i / N). A second draw of the same
 * recipe, the held-out rows, takes its noise from initseqs 5 (features)
 * and 6 (labels) instead.
 */
#ifndef BN_POP_H
#define BN_POP_H

#include <stdint.h>

#include "base/common.h"

/* A column of categories: each row's level, and each level's name. */
typedef struct {
    char *column;     /* the column's name; NULL when the file has none */
    size_t n_levels;
    char **levels;    /* n_levels names, in index order */
    size_t *of_row;   /* n entries, each < n_levels */
} pop_factor;
/* Free a factor's column name, levels and row indices, leaving it empty
 * (column NULL). */
void pop_factor_free(pop_factor *fac);

/* Nothing here has a fixed size: a spec holds as many features as it is
 * given, and names are kept whole, whatever their length. */
typedef struct {
    char *name; /* owned by the spec */
    double mean, sd, rho;
} pop_feature;

typedef struct {
    size_t n_rows;
    size_t n_features;
    uint64_t seed;
    size_t classes;     /* K, or 0 for no labels */
    double label_noise; /* s */
    pop_feature *features; /* n_features of them, owned */
    size_t cap;
} pop_spec;

/* The rows a run trains on, generated from a spec or read from a file
 * (pop_from_file), and their truth. A population from a file may carry a
 * label and a group column (popfile.h reads them); a generated one has neither
 * (column NULL). */
typedef struct {
    size_t n, f;
    double *x;    /* row-major n x f */
    char **names; /* f feature names */
    double *mean; /* f values */
    double *var;  /* f values: the population variance, divisor n */
    pop_factor label, group;
    /* Each row's index in the population it was taken from (a held-out
     * split's parts), or NULL: its own. */
    size_t *origin;
    /* A population of feature maps (convpop.h): each sample's H W
     * positions are this many consecutive rows, and batches hold whole
     * samples. 0 for a population of plain rows. */
    size_t sample_rows;
} pop_t;

/* The published study's shape: 512 rows, the eight features f0..f7. An
 * empty spec (pop_spec_init) and any spec can be freed with
 * pop_spec_free; the functions that fill one return -1 only when out of
 * memory. */
int pop_default_spec(pop_spec *spec);
void pop_spec_init(pop_spec *spec);
void pop_spec_free(pop_spec *spec);
/* Drop every feature (for a list that replaces the default). */
void pop_spec_clear(pop_spec *spec);
/* Append a feature (the name is copied). */
int pop_spec_add(pop_spec *spec, const char *name, double mean, double sd,
                 double rho);
/* dst becomes a copy of src, sharing nothing with it. */
int pop_spec_copy(pop_spec *dst, const pop_spec *src);
int pop_validate(const pop_spec *spec, bn_error *err);
/* One feature's own checks (name, finite mean, sd >= 0, rho in [-1, 1],
 * and |mean| + 64 sd at most POP_MAX_SCALE: the values stay below it, so
 * their variances and the squared errors of those stay finite). */
#define POP_MAX_SCALE 1e75
int pop_check_feature(const pop_feature *f, bn_error *err);
int pop_generate(const pop_spec *spec, pop_t *pop, bn_error *err);
/* The label column of K generated classes, "label" with the classes "0"
 * to "K-1" and no rows yet (fac is freed with pop_factor_free, also
 * after a failure). */
int pop_class_levels(size_t k, pop_factor *fac);
/* The second draw of the spec: its held-out rows. */
int pop_generate_held_out(const pop_spec *spec, pop_t *pop, bn_error *err);
/* The truth of pop's rows into its mean and var (allocated here), after
 * its rows were made or changed. */
int pop_truth(pop_t *pop, bn_error *err);
void pop_free(pop_t *pop);
/* Index of the feature called name, or -1. */
int pop_feature_index(const pop_spec *spec, const char *name);
/* The same, among a population's features. */
int pop_name_index(const pop_t *pop, const char *name);
/* A feature of zero variance, or -1: the relative scores are infinite on
 * such a population (score.h). */
int pop_constant_feature(const pop_t *pop);

/* Mean and population variance of n values spaced stride apart, by a
 * compensated sum and the corrected two-pass formula: exact to rounding
 * even when the mean dwarfs the spread. */
void pop_moments(size_t n, size_t stride, const double *v, double *mean,
                 double *var);

#endif
