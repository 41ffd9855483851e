/*
 * The classifier as a model of the run pipeline (run.h): net.h's network
 * trained on the training rows in the order's permutation, then scored in
 * both modes on the evaluation rows and on the training rows, with its
 * batch norm's buffers set against the exact moments of what that layer
 * sees over the training rows under the final weights. The scores'
 * training-mode batches come from the order `shuffled` with the run's
 * seed, cut as net_score_train_mode cuts them.
 */
#ifndef BN_CLASSIFIER_H
#define BN_CLASSIFIER_H

#include "model/config.h"
#include "model/net.h"

/* classifier_run, keeping the network as trained and scored in *net for
 * the caller to free with net_free (nothing to free after a failure). */
int classifier_train(const pop_t *train, const pop_t *eval,
                     const size_t *perm, const run_config *cfg,
                     const run_observer *obs, net_t *net, run_result *res,
                     bn_error *err);
int classifier_run(const pop_t *train, const pop_t *eval, const size_t *perm,
                   const run_config *cfg, const run_observer *obs,
                   run_result *res, bn_error *err);
/* The classifier's settings and what it needs of the population (class
 * labels, two classes at least); blame as run_check's. */
int classifier_check(const run_config *cfg, const pop_t *pop, int *blame,
                     bn_error *err);
/* Without batch norm (norm = none) a configuration uses none of batch
 * norm's keys; precise_batches only with a pooling estimator. */
int classifier_uses(const run_config *cfg, int key);
/* The model table's bytes and row work (run.h): the network's arrays and
 * the run's copies of the rows; per row and epoch, its weights, each
 * about one of the layer's feature passes. */
size_t classifier_bytes(const run_config *cfg, size_t n, size_t f,
                        size_t k);
double classifier_row_work(const run_config *cfg, size_t f, size_t k);

#endif
