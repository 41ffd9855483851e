/*
 * The estimators of the evaluation statistics: how the running mean and
 * variance follow the batch statistics during training, and what they
 * become after it. Each is one row of a table (estimator.c) that says
 * everything the rest of bnstudy needs to know of it: its name and help
 * text, its update, the weight the initial values 0 and 1 keep, whether
 * it recomputes the buffers after training, what the closed form of
 * expect.h needs, and the settings it refuses. Adding an estimator is one
 * enum value in bnlayer.h and one row in estimator.c (a recursive one:
 * its update and its step, which the closed form runs), and its reference
 * in the tests (docs/architecture.md, "Recipes"); the experiment keys,
 * the command line, the sweep, the writers and expect.c read the table.
 *
 * This module depends on libm and num.c only (no GSL, libinih or
 * nettle), so that a build without them (the web page) has the same
 * table.
 */
#ifndef BN_ESTIMATOR_H
#define BN_ESTIMATOR_H

#include <stddef.h>

#include "base/common.h"
#include "base/num.h"
#include "model/bnlayer.h"


/* What the closed form (expect.h) is given to weigh the batches with. */
typedef struct {
    size_t n;              /* population rows */
    size_t b;              /* batch size (the last batch may be shorter) */
    size_t nb;             /* batches per epoch */
    size_t updates;        /* epochs x nb */
    size_t pooled_batches; /* the pooling estimators' K, 1..nb */
    double p, keep;        /* new-value and old-value weights */
    /* Optional (NULL: none): frac[t - 1], the share of a drift update t
     * trains on (drift.h). The weights function then also returns, in
     * *shifted, the weight the drift's offset carries in the final
     * running mean: the same recursion run on frac. */
    const double *frac;
} bn_weights_in;

/* A recursive estimator's step: the weights (*keep_t, *p_t) that update
 * t = 1, 2, ... gives the old value and the new, in double-double, from
 * in->keep and in->p. The update applies the same weights in double
 * (update_ema's keep and p, update_cumulative's 1 - 1/t and 1/t): the
 * closed form runs the step on the batches' coefficients. */
typedef void (*bn_step_fn)(size_t t, const bn_weights_in *in, num_dd *keep_t,
                           num_dd *p_t);

typedef struct {
    const char *name;
    const char *help; /* one line, for --help and the docs */
    /* One update of the buffers l->rm and l->rv from a batch's mean and
     * variance (already biased or unbiased as configured), after
     * l->updates and l->acc_w have counted it. */
    void (*update)(bn_layer *l, const double *mean, const double *var);
    /* Optional (NULL: update one batch at a time): nb updates as nb calls
     * of update make them, batch q's mean and var q stride further, for
     * an update that reads neither l->updates nor l->acc_w (bn.c's
     * bn_update_batches counts all nb first). */
    void (*update_batches)(bn_layer *l, size_t nb, size_t stride,
                           const double *mean, const double *var);
    /* A recursive estimator's step (its buffers are the recursion's
     * after the last update, and its closed form's weights follow from
     * the step); NULL for the others. */
    bn_step_fn step;
    /* The weight the initial values 0 and 1 keep after T updates with
     * old-value weight keep; NULL when they keep none. */
    double (*init_weight)(double keep, size_t updates);
    /* After training the buffers become the pooled mean and variance of
     * the rows of the order's first precise_batches batches (run.c). */
    int pools;
    /* After training the buffers become the mean and variance of the rows
     * the model is evaluated on (the layer's evaluation rows, the
     * classifier's hidden units over its held-out rows), whatever the
     * training did: statistics recomputed on the data evaluation sees. */
    int adapts;
    /* The closed form's weights w[0..nb-1] (all zero on entry), in
     * double-double, when they are not a step's recursion (that of
     * bn_estimator_weights): the final running mean is sum_b w_b m_b
     * plus (1 - sum w) times the initial 0. shifted is written when
     * in->frac is set; a pooling estimator, recomputed after training,
     * leaves it at 0. Without weights or a step no closed form is known,
     * and expect.c refuses the estimator. */
    void (*weights)(const bn_weights_in *in, num_dd *w, num_dd *shifted);
    /* Settings the estimator cannot work with; NULL accepts all. */
    int (*validate)(const bn_config *cfg, bn_error *err);
} bn_estimator_def;

/* The row of estimator e (e < BN_EST_COUNT). */
const bn_estimator_def *bn_estimator_get(bn_estimator e);
/* Whether est has a closed form (weights, or a step). */
int bn_estimator_closed_form(const bn_estimator_def *est);
/* Its closed form's weights: its weights function's, else its step's
 * recursion (est must have one, bn_estimator_closed_form). */
void bn_estimator_weights(const bn_estimator_def *est, const bn_weights_in *in,
                          num_dd *w, num_dd *shifted);
const char *bn_estimator_name(bn_estimator e);
/* 0 and *e set when s names an estimator, else -1. */
int bn_estimator_parse(const char *s, bn_estimator *e);
/* Estimator i's name, NULL past the last (for bn_join and choices). */
const char *bn_estimator_name_at(int i);

#endif
