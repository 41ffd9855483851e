/*
 * The batch-norm layer as a model of the run pipeline (run.h): for each
 * epoch, for each batch of the order, the batch's statistics and the
 * buffers' update (and, except for the last epoch's batches when the
 * layer is evaluated on the rows it trained on, the self-checks of its
 * train-mode output); after training the estimator may recompute the
 * buffers; then the rows evaluated (the last epoch's batches made again
 * from their statistics, or the evaluation rows' own batches) are set in
 * both modes against each other under the final buffers, and every layer
 * score of score.h is filled. A run holds no N x F buffer: its memory is
 * a batch's and the last epoch's batch statistics.
 */
#ifndef BN_LAYER_H
#define BN_LAYER_H

#include "model/config.h"

int layer_run(const pop_t *pop, const pop_t *eval, const size_t *perm,
              const run_config *cfg, const run_observer *obs,
              run_result *res, bn_error *err);
/* The layer's own settings (bn_check). */
int layer_check(const run_config *cfg, const pop_t *pop, int *blame,
                bn_error *err);
/* The model table's bytes and row work (run.h). */
size_t layer_bytes(const run_config *cfg, size_t n, size_t f, size_t k);
double layer_row_work(const run_config *cfg, size_t f, size_t k);

#endif
