/*
 * One run: one configuration (a plain value) as a pipeline, population ->
 * order -> model -> scores. The population stage gives the model the rows
 * it trains on and the rows it is evaluated on (run_pops: the layer uses
 * the population itself, the classifier a training part and its held-out
 * rows, moved by [evaluation]'s shift and scale); the order makes the
 * permutation the batches are cut from; the model (a row of the model
 * table in run.c: the batch-norm layer of layer.c, the classifier of
 * classifier.c) trains on it for E epochs and fills the scores it
 * produces (score.h declares them). A run reads nothing but its arguments
 * and writes nothing but its result and what its observer asks for, so a
 * sweep can run many of them in any order, or in parallel, and get the
 * same bytes.
 */
#ifndef BN_RUN_H
#define BN_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "bn.h"
#include "common.h"
#include "drift.h"
#include "order.h"
#include "pop.h"

typedef enum { RUN_PARTIAL_DROP, RUN_PARTIAL_KEEP } run_partial;

/* The models, rows of the table in run.c. */
typedef enum {
    RUN_MODEL_LAYER, RUN_MODEL_CLASSIFIER, RUN_MODEL_COUNT
} run_model_id;
/* Sets of models, as the key, score and file tables give them. */
#define RUN_MODEL_BIT(m) (1u << (m))
#define RUN_MODELS_ALL ((1u << RUN_MODEL_COUNT) - 1u)

/* The classifier's own settings (clf.h); its batch norm is the layer's
 * bn_config, and the batches, epochs and order are the run's. */
typedef enum { CLF_NORM_BATCH, CLF_NORM_NONE } clf_norm;
typedef struct {
    size_t hidden; /* H */
    clf_norm norm;
    /* Epochs 1..E0 train batch norm as usual; from epoch E0 + 1 on it
     * normalises with its buffers and stops updating them. 0: never. */
    unsigned long freeze_after;
    double lr, sgd_momentum, weight_decay;
    uint64_t init_seed; /* PCG32(init_seed, PCG32_INITSEQ_WEIGHTS) */
} clf_settings;

/* [evaluation]: each feature of the rows a model is evaluated on becomes
 * mu + shift sd + scale (x - mu) + offset, mu and sd its own mean and
 * standard deviation (evalpop.h): shift moves it in its own units, offset
 * in absolute ones (a constant feature moves only by offset). shift 0,
 * scale 1 and offset 0 leave the rows as they are. */
typedef struct {
    double shift, scale, offset;
} run_eval;

/* [drift]: the training stream moves while the buffers fill (drift.h):
 * update t trains on its batch with feature j moved by
 * drift_fraction(profile, t) size sd_j, sd_j the feature's standard
 * deviation over the population. The layer is then evaluated on the
 * stream as it is at the last update. */
typedef struct {
    drift_spec profile;
    char name[48]; /* drift_name's, for the files: a copy, so that a
                    * configuration outlives the experiment it came from */
    double size;
} run_drift;

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
    bn_config layer; /* the batch-norm settings (the classifier's too) */
    clf_settings clf; /* RUN_MODEL_CLASSIFIER's */
    run_eval eval;
    run_drift drift;  /* RUN_MODEL_LAYER's */
} run_config;

/* What the population stage hands a run: every row (the layer trains on
 * them), the classifier's training rows and held-out rows, and
 * [evaluation] file's rows (before [evaluation]'s shift, scale and
 * offset, which the run applies). A population without a held-out part
 * has held_out NULL, one without an evaluation file eval_file NULL. */
typedef struct {
    const pop_t *pop;
    const pop_t *train;
    const pop_t *held_out;
    const pop_t *eval_file;
} run_pops;

typedef struct {
    size_t updates;
    double init_weight;
    double stats_err, mean_err, var_err, worst_var_err;
    size_t worst_var_feature;
    double train_eval_rmse, batch_mean_err, batch_var_err;
    size_t props_pass, props_total;
    double stats_err_rel, worst_var_rel;
    /* The classifier's, on the evaluation rows and on the training rows
     * (fit_); accuracies are correct rows / rows. */
    double mean_err_rel, var_err_rel;
    double acc_train_mode, acc_eval_mode, loss_train_mode, loss_eval_mode;
    double agreement; /* rows both modes predict alike / rows */
    double fit_acc_train_mode, fit_acc_eval_mode;
    double fit_loss_train_mode, fit_loss_eval_mode;
    /* Per feature, F values each, in one allocation the result owns
     * (run_result_free); NULL for a model without them: the final
     * buffers; the truth they are scored against (the evaluation rows');
     * the RMS over the evaluation rows of y_train - y_eval; and the mean
     * over the last epoch's batches of (batch mean - the stream's
     * mean)^2. */
    double *running_mean, *running_var, *true_mean, *true_var;
    double *train_eval, *batch_mean_sq;
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
    /* After training: the rows evaluated (the last epoch's, in training
     * order, or the evaluation rows' of their own), with their train-mode
     * and eval-mode outputs, a batch at a time: rows first .. first + n - 1
     * (n x F outputs). A run with no row to show calls it once with n 0. */
    void (*on_outputs)(void *ctx, size_t first, size_t n, size_t f,
                       const size_t *rows, const double *y_train,
                       const double *y_eval);
    /* The classifier: after epoch `epoch` (from 0), the scores it would
     * have if training stopped there (the estimator's recompute made on a
     * copy of the buffers); the last epoch's are the run's. res holds no
     * buffers. */
    void (*on_epoch)(void *ctx, unsigned long epoch, const run_result *res);
    void *ctx;
    /* The classifier writes its tensors here (--write-weights), or NULL. */
    FILE *weights;
} run_observer;

/* A model: one row of the table in run.c. */
typedef struct {
    const char *name;
    const char *help;
    /* Train on the rows of train in the order perm, evaluate on the rows
     * of eval and fill res with the model's scores. cfg has passed
     * run_check against train. */
    int (*run)(const pop_t *train, const pop_t *eval, const size_t *perm,
               const run_config *cfg, const run_observer *obs,
               run_result *res, bn_error *err);
    /* The checks of the model's own settings; blame as for run_check. */
    int (*check)(const run_config *cfg, const pop_t *pop, int *blame,
                 bn_error *err);
    /* Trains on a part of the rows and is evaluated on the rest
     * (run_pops.train and held_out), not on the population itself. */
    int held_out;
    /* The reading table's columns when the experiment names none. */
    const char *table;
    /* Whether a configuration of this model uses key k (exp.h's key_id)
     * at all, beyond the key table's models: a setting no configuration
     * uses is refused. NULL: every key of the model. */
    int (*uses)(const run_config *cfg, int key);
    /* The most bytes run holds at once on n rows of f features and k
     * classes. */
    size_t (*bytes)(const run_config *cfg, size_t n, size_t f, size_t k);
    /* The work of one epoch on one row, in the layer's units: one pass
     * over f features (the classifier's is its multiply-adds per
     * feature, forward, backward and the scores it keeps per epoch). */
    double (*row_work)(const run_config *cfg, size_t f, size_t k);
} run_model;

const run_model *run_model_get(run_model_id m);
/* Model i's name, NULL past the last (for the key's choices). */
const char *run_model_name(int i);
/* The rows configuration cfg trains on, of the population stage's: a
 * held-out model's training part, or the population. */
const pop_t *run_train_pop(const run_pops *p, const run_config *cfg);
/* The rows configuration cfg is evaluated on: a held-out model's held-out
 * rows, or the layer's (the evaluation file's, else its training rows as
 * the drift leaves them at the last update), moved by [evaluation]. *eval
 * is train itself when nothing moves them, else *made, which the caller
 * frees with pop_free (made is zeroed first). */
int run_eval_pop(const run_pops *p, const run_config *cfg, pop_t *made,
                 const pop_t **eval, bn_error *err);
/* cfg with the batch size in rows: a feature-map population (pop.h's
 * sample_rows) counts it in whole samples, every other in rows. */
run_config run_in_rows(const run_config *cfg, const pop_t *pop);

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
 * after a failure, when it holds nothing). run_execute runs on one
 * population as the layer does (it has no held-out rows); run_execute_on
 * takes the population stage's. */
int run_execute(const pop_t *pop, const run_config *cfg,
                const run_observer *obs, run_result *res, bn_error *err);
int run_execute_on(const run_pops *p, const run_config *cfg,
                   const run_observer *obs, run_result *res, bn_error *err);
void run_result_free(run_result *res);
/* run_execute_on, blaming keys as run_check does, also when the scores
 * overflow (the keys whose values scale the score, score.h). */
int run_execute_blamed(const run_pops *p, const run_config *cfg,
                       const run_observer *obs, run_result *res, int *blame,
                       bn_error *err);
/* The most bytes a run of cfg holds at once on n rows of f features and
 * k classes. */
size_t run_bytes(const run_config *cfg, size_t n, size_t f, size_t k);
/* The work of a run of cfg on n rows: epochs x n x the model's row work,
 * in row passes over f features. */
double run_work(const run_config *cfg, size_t n, size_t f, size_t k);

/* "drop" and "keep" by value, NULL past the last. */
const char *run_partial_name(int p);
int run_partial_parse(const char *s, run_partial *p);

#endif
