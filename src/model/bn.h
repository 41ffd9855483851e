/*
 * The batch-norm layer, per feature j: scale gamma_j, shift beta_j, eps, and
 * the two buffers (running mean rm_j, running variance rv_j) that training
 * fills and evaluation uses. Training mode normalises with the batch's own
 * mean and biased variance and then updates the buffers; evaluation mode
 * normalises with the buffers. Batches are row-major B x F arrays.
 *
 * Momentum has two conventions under one name: `old` (Keras/TF, the
 * published study: momentum 0.9 keeps 0.9 of the old value) and `new`
 * (PyTorch: momentum 0.1 gives the new value weight 0.1). The complement
 * is taken in decimal (bn_decimal_complement) so that 0.9 old and 0.1 new
 * are the same layer to the bit.
 */
#ifndef BN_BN_H
#define BN_BN_H

#include <math.h>
#include <stddef.h>

#include "base/common.h"
#include "model/bnlayer.h"
#include "model/estimator.h"

/* Set momentum and convention and derive p and keep; checks (0, 1]. */
int bn_set_momentum(bn_config *cfg, double momentum, bn_weights w,
                    bn_error *err);
/* The setting a failed check is about. */
typedef enum {
    BN_FIELD_MOMENTUM, BN_FIELD_ESTIMATOR, BN_FIELD_GAMMA, BN_FIELD_BETA,
    BN_FIELD_EPS
} bn_field;
/* The layer's own checks, the estimator's (estimator.h) included; on
 * failure *field (when not NULL) says which setting is at fault. */
int bn_check(const bn_config *cfg, bn_field *field, bn_error *err);
int bn_validate(const bn_config *cfg, bn_error *err);
/* 1 - x with x first rounded to its shortest round-trip decimal. */
double bn_decimal_complement(double x);

/* The names of the conventions, by value; NULL past the last, so that a
 * list of the allowed names can be made from them. */
const char *bn_weights_name(int w);
const char *bn_variance_name(int v);
/* [layer] sync's names: no, yes. */
const char *bn_sync_name(int v);
/* The devices whose shares have statistics of their own: 1 when synced. */
static inline size_t bn_ghosts(const bn_config *cfg)
{
    return cfg->sync || cfg->devices < 1 ? 1 : cfg->devices;
}
int bn_weights_parse(const char *s, bn_weights *w);
int bn_variance_parse(const char *s, bn_variance *v);

/* gamma, beta and eps from cfg, rm 0 and rv 1; -1 when out of memory
 * (the layer then holds nothing to free). */
int bn_init(bn_layer *layer, size_t f, const bn_config *cfg);
/* dst becomes an independent copy of src (-1 when out of memory). */
int bn_copy(bn_layer *dst, const bn_layer *src);
void bn_free(bn_layer *layer);
/* Mean and biased variance of each column of a B x F batch. */
void bn_batch_stats(size_t b, size_t f, const double *x, double *mean,
                    double *var);
/* The same of a batch whose row i is x + rows[i] f, each feature j
 * moved by shift[j] (none when shift is NULL): the rows of a population
 * in an order, read where they are, as a drift moves them. rows has
 * ahead more entries past the batch (the next batch's), which are
 * fetched early. */
void bn_batch_stats_rows(size_t b, size_t ahead, size_t f, const double *x,
                         const size_t *rows, const double *shift,
                         double *mean, double *var);
/* y (B x F) = gamma ((x - mean) / sqrt(var + eps)) + beta for the rows of
 * x (row i is x + rows[i] f, or x + i f when rows is NULL; moved by shift
 * as above): the train-mode output given the batch's own statistics, or
 * with the buffers the eval-mode output. */
void bn_normalize_rows(const bn_layer *layer, size_t b, const double *x,
                       const size_t *rows, const double *shift,
                       const double *mean, const double *var, double *y);
/* The buffers' update from a batch of b rows with this mean and biased
 * variance: the estimator's, after counting the update. */
void bn_update(bn_layer *layer, size_t b, const double *mean,
               const double *var);
/* nb updates of bn_update from batches of b rows, batch q's mean and var
 * q stride further, with the same bits: the estimator's update_batches
 * where it has one, without a call a batch. */
void bn_update_batches(bn_layer *layer, size_t b, size_t nb, size_t stride,
                       const double *mean, const double *var);
/* Normalise x with its own statistics into y and return them in mean and
 * var (biased): train mode without the buffers' update. */
void bn_batch_forward(const bn_layer *layer, size_t b, const double *x,
                      double *y, double *mean, double *var);
/* Train mode: bn_batch_forward, then update the buffers. */
void bn_train_forward(bn_layer *layer, size_t b, const double *x, double *y,
                      double *mean, double *var);
/* Eval mode: normalise x with the buffers. */
void bn_eval_forward(const bn_layer *layer, size_t b, const double *x,
                     double *y);

#endif
