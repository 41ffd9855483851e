/*
 * Collapsed channels (issue 14, docs/collapse.md): a feature that is
 * constant, or nearly, in training, and moves at evaluation. Every
 * training batch of B rows is taken to have the same biased variance s
 * (s = 0: the feature is constant). After T updates the running variance
 * is, in closed form, with s' = s or s B / (B - 1) (unbiased):
 *   ema           keep^T + (1 - keep^T) s'
 *   ema-debiased  s'
 *   cumulative    s'
 *   precise       s   (the pooled rows' biased variance)
 * and the initial 1 for every estimator when T = 0 (buffers never
 * filled). Evaluation mode is affine in x with slope
 *     gain = gamma / sqrt(rv + eps)
 * so an input moved by delta moves the output by gain delta whatever the
 * size of delta: at collapse (rv -> 0) gamma / sqrt(eps), 316 gamma at
 * PyTorch's eps 1e-5 and 31.6 gamma at Keras's 1e-3. Training mode
 * renormalises each batch instead: one row of a constant batch moved by
 * delta moves its own output by
 *     gamma delta (1 - 1/B) / sqrt(delta^2 (B - 1) / B^2 + eps)
 * which is bounded by |gamma| sqrt(B - 1).
 */
#ifndef BN_COLLAPSE_H
#define BN_COLLAPSE_H

#include <stddef.h>

#include "model/bn.h"

/* keep^T by repeated squaring: the same products, so the same bits, on
 * every platform. */
double collapse_power(double keep, size_t t);
/* The running variance after t updates on batches of b rows of biased
 * variance s. */
double collapse_running_var(const bn_config *cfg, size_t t, size_t b,
                            double s);
/* The eval-mode slope gamma / sqrt(rv + eps). */
double collapse_gain(const bn_config *cfg, double rv);
/* The train-mode change of the one row moved by delta in a batch of b
 * rows that are otherwise constant. */
double collapse_train_response(const bn_config *cfg, size_t b, double delta);

#endif
