/*
 * The scores of docs/definitions.md that are properties of one batch or of
 * the final buffers, and the four self-checks a BN implementation can run on
 * itself. Every score is an exact mean over the enumerated population: no
 * sampling enters here.
 */
#ifndef BN_SCORE_H
#define BN_SCORE_H

#include <stddef.h>

#include "bn.h"
#include "pop.h"

typedef struct {
    double stats_err, mean_err, var_err, worst_var_err;
    size_t worst_var_feature;
} score_buffers_t;

/* Running statistics against the population's truth. */
void score_buffers(const pop_t *pop, const double *rm, const double *rv,
                   score_buffers_t *out);

/* Fill y[0..n] (n + 1 values: one guard past the end) with a sentinel so
 * that score_checks can tell which outputs the layer wrote. */
void score_mark(double *y, size_t n);

/* The four self-checks on one training batch, per feature: the output's
 * mean is beta, its variance is gamma^2 s/(s + eps), eval twice gives the
 * same bits, and the output has the input's shape (every one of the B x F
 * values written, nothing past them). x is the batch, y the train output
 * (marked with score_mark before the forward pass), var the batch's biased
 * variance; scratch holds 2 B F doubles. Returns how many of 4 F passed. */
size_t score_checks(const bn_layer *layer, size_t b, const double *x,
                    const double *y, const double *var, double *scratch);

#endif
