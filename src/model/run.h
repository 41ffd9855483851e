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

#include "base/common.h"
#include "model/config.h"
#include "pop/pop.h"

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
 * takes the population stage's; free res with run_result_free
 * (config.h). */
int run_execute(const pop_t *pop, const run_config *cfg,
                const run_observer *obs, run_result *res, bn_error *err);
int run_execute_on(const run_pops *p, const run_config *cfg,
                   const run_observer *obs, run_result *res, bn_error *err);
/* What a run of cfg trains and is evaluated on, checked: the training
 * rows, the evaluation rows (eval is train itself or shifted), cfg with
 * its batch in rows, and the order's permutation of the training rows.
 * Free with run_setup_free, also after a failure. */
typedef struct {
    const pop_t *train, *eval;
    pop_t shifted;
    run_config rows;
    size_t *perm;
} run_setup;
int run_setup_make(const run_pops *p, const run_config *cfg, int *blame,
                   run_setup *s, bn_error *err);
void run_setup_free(run_setup *s);
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


#endif
