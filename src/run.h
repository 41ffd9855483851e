/*
 * One run: one configuration (a plain value) trained for E epochs over its
 * order of the population, then scored. A run reads nothing but its
 * arguments and writes nothing but its result, so a sweep can run many of
 * them in any order, or in parallel, and get the same bytes.
 */
#ifndef BN_RUN_H
#define BN_RUN_H

#include <stdint.h>

#include "bn.h"
#include "common.h"
#include "pop.h"

typedef enum { RUN_PARTIAL_DROP, RUN_PARTIAL_KEEP } run_partial;

typedef struct {
    char experiment[64];
    char order[64]; /* an order name, see order.h */
    uint64_t seed;  /* the shuffle's initstate */
    size_t batch_size;
    unsigned long epochs;
    run_partial partial;
    size_t precise_batches; /* for estimator precise; 0 means all */
    bn_config layer;
} run_config;

typedef struct {
    size_t updates;
    double init_weight;
    double stats_err, mean_err, var_err, worst_var_err;
    size_t worst_var_feature;
    double train_eval_rmse, batch_mean_err, batch_var_err;
    size_t props_pass, props_total;
    double running_mean[BN_MAX_FEATURES], running_var[BN_MAX_FEATURES];
} run_result;

/* One training batch as the run saw it, after the buffers' update. */
typedef struct {
    size_t epoch, index, b, f;
    const size_t *rows;  /* population row indices */
    const double *x;     /* B x F inputs */
    const double *y;     /* B x F train-mode outputs */
    const double *mean;  /* the batch's mean */
    const double *var;   /* the batch's biased variance */
    const bn_layer *layer;
} run_batch;

/* Optional hooks, for tests and for writing per-row outputs. */
typedef struct {
    void (*on_batch)(void *ctx, const run_batch *batch);
    /* After training: the n rows trained on in the last epoch, in training
     * order, with their train-mode and eval-mode outputs (n x F). */
    void (*on_outputs)(void *ctx, size_t n, size_t f, const size_t *rows,
                       const double *y_train, const double *y_eval);
    void *ctx;
} run_observer;

void run_default_config(run_config *cfg);
/* Batches in one epoch: N / B, plus the partial one when it is kept. */
size_t run_batches_per_epoch(size_t n, size_t b, run_partial partial);
/* Check cfg against the population; names the offending setting. */
int run_validate(const run_config *cfg, const pop_t *pop, bn_error *err);
int run_execute(const pop_t *pop, const run_config *cfg,
                const run_observer *obs, run_result *res, bn_error *err);

const char *run_partial_name(run_partial p);
/* The estimator as the output files name it: "precise:K" when the precise
 * estimator pools only the first K batches, else bn_estimator_name. */
const char *run_estimator_label(const run_config *cfg, char *buf, size_t cap);
int run_partial_parse(const char *s, run_partial *p);

#endif
