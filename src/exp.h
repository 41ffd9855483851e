/*
 * Experiment files: INI (parsed with libinih) naming a population, a layer
 * and the sweep axes. Every axis is a list and the sweep is their cartesian
 * product; anything left out takes the embedded default (the published
 * headline). Errors name the file and line, or the --set override.
 *
 *   [experiment]  description = TEXT, table = COLUMN ...
 *   [population]  rows = N, seed = S, feature = NAME MEAN SD RHO (repeat)
 *   [layer]       gamma, beta, eps; lists: momentum, momentum_weights,
 *                 variance, estimator
 *   [sweep]       lists: batch_size, order, seed, epochs, partial,
 *                 precise_batches
 * Lists are separated by spaces or commas; integer lists take ranges A..B.
 */
#ifndef BN_EXP_H
#define BN_EXP_H

#include <stdint.h>

#include "bn.h"
#include "common.h"
#include "pop.h"
#include "run.h"

#define EXP_MAX_VALUES 10000
#define EXP_MAX_COLUMNS 32
#define EXP_MAX_CONFIGS 10000000

typedef struct {
    size_t n;
    uint64_t v[EXP_MAX_VALUES];
} exp_ints;

typedef struct {
    size_t n;
    double v[64];
} exp_reals;

typedef struct {
    size_t n;
    char v[16][64];
} exp_names;

typedef struct {
    char source[256]; /* file name as given, for messages */
    char stem[64];    /* file name without directory and .ini */
    char description[512];
    pop_spec pop;
    double gamma, beta, eps;
    exp_reals momentum;
    exp_names momentum_weights, variance, estimator;
    exp_ints batch_size, seed, epochs, precise_batches;
    exp_names order, partial;
    exp_names table; /* reading-table columns */
    /* where each setting was given ("FILE:LINE" or "--set ..."; empty for
     * a default), for the messages of checks that need the whole file */
    char from_rows[300], from_features[300], from_batch_size[300];
    char from_order[300], from_partial[300], from_momentum[300];
    char from_precise[300];
} exp_t;

/* Defaults, then the file, then each override "section.key=value". */
int exp_load(exp_t *e, const char *path, char *const *sets, size_t n_sets,
             bn_error *err);
/* Number of configurations in the product. */
size_t exp_count(const exp_t *e);
/* The k-th configuration, k < exp_count(e). */
void exp_config(const exp_t *e, size_t k, run_config *cfg);
/* The index k of the configuration with batch size number ib and seed
 * number is among the configurations that share everything else (group
 * r < exp_count / (batch sizes x seeds)): batch size varies fastest, then
 * the seed, so a group's seeds of one batch size are easy to gather. */
size_t exp_index(const exp_t *e, size_t r, size_t is, size_t ib);

#endif
