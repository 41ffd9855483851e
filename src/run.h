/*
 * One run: one configuration (a plain value) as a pipeline, population ->
 * order -> model -> scores. The order makes the permutation the batches
 * are cut from; the model (a row of the model table in run.c: the
 * batch-norm layer of layer.c is the first) trains on it for E epochs and
 * fills the scores it produces (score.h declares them). A run reads
 * nothing but its arguments and writes nothing but its result, so a sweep
 * can run many of them in any order, or in parallel, and get the same
 * bytes.
 */
#ifndef BN_RUN_H
#define BN_RUN_H

#include <stdint.h>

#include "bn.h"
#include "common.h"
#include "order.h"
#include "pop.h"

typedef enum { RUN_PARTIAL_DROP, RUN_PARTIAL_KEEP } run_partial;

/* The models, rows of the table in run.c. */
typedef enum { RUN_MODEL_LAYER, RUN_MODEL_COUNT } run_model_id;

typedef struct {
    char experiment[64];
    char population[17]; /* pop_id of the population it runs on */
    order_spec order;
    uint64_t seed;  /* the shuffle's initstate */
    size_t batch_size;
    unsigned long epochs;
    run_partial partial;
    size_t precise_batches; /* for the pooling estimators; 0 means all */
    run_model_id model;
    bn_config layer; /* RUN_MODEL_LAYER's settings */
} run_config;

typedef struct {
    size_t updates;
    double init_weight;
    double stats_err, mean_err, var_err, worst_var_err;
    size_t worst_var_feature;
    double train_eval_rmse, batch_mean_err, batch_var_err;
    size_t props_pass, props_total;
    double stats_err_rel, worst_var_rel;
    /* The final buffers, F values each, in one allocation the result owns
     * (run_result_free); NULL for a model without them. */
    double *running_mean, *running_var;
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

/* A model: one row of the table in run.c. */
typedef struct {
    const char *name;
    const char *help;
    /* Train on the rows of pop in the order perm and fill res with the
     * model's scores. cfg has passed run_check. */
    int (*run)(const pop_t *pop, const size_t *perm, const run_config *cfg,
               const run_observer *obs, run_result *res, bn_error *err);
    /* The checks of the model's own settings; blame as for run_check. */
    int (*check)(const run_config *cfg, const pop_t *pop, int *blame,
                 bn_error *err);
    /* The most bytes run holds at once on n rows of f features. */
    size_t (*bytes)(const run_config *cfg, size_t n, size_t f);
} run_model;

const run_model *run_model_get(run_model_id m);

/* The defaults of every experiment key (exp.h's key table). */
void run_default_config(run_config *cfg);
/* Batches in one epoch: N / B, plus the partial one when it is kept. */
size_t run_batches_per_epoch(size_t n, size_t b, run_partial partial);
/* Check cfg against the population; the message names the offending
 * setting, and when blame is not NULL, blame[0] and blame[1] receive the
 * experiment keys (exp.h's key_id) to hold responsible, most specific
 * first (-1 for none), so that an experiment file can name their lines. */
int run_check(const run_config *cfg, const pop_t *pop, int *blame,
              bn_error *err);
int run_validate(const run_config *cfg, const pop_t *pop, bn_error *err);
/* Fills res, which then owns memory: free it with run_result_free (also
 * after a failure, when it holds nothing). */
int run_execute(const pop_t *pop, const run_config *cfg,
                const run_observer *obs, run_result *res, bn_error *err);
void run_result_free(run_result *res);
/* The same, blaming keys as run_check does, also when the scores
 * overflow (the keys whose values scale the score, score.h). */
int run_execute_blamed(const pop_t *pop, const run_config *cfg,
                       const run_observer *obs, run_result *res, int *blame,
                       bn_error *err);
/* The most bytes a run of cfg holds at once on n rows of f features. */
size_t run_bytes(const run_config *cfg, size_t n, size_t f);

/* "drop" and "keep" by value, NULL past the last. */
const char *run_partial_name(int p);
int run_partial_parse(const char *s, run_partial *p);

#endif
