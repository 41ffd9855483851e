/*
 * The exact expectation, over all N! equally likely orders, of the running
 * mean's squared error (mean_err^2) after training on a shuffled order.
 *
 * Whatever the estimator, the final running mean of a feature is
 *     rm = c0 * 0 + sum_b W_b m_b
 * where m_b is batch b's mean and W_b the total weight the updates from
 * batch b carry (a batch seen in E epochs contributes E terms). Under a
 * uniformly random order the batches are disjoint samples without
 * replacement, so with mu, v the population's mean and variance (divisor
 * N) and d_b = m_b - mu:
 *     E[d_b] = 0,  Var d_b = (v / B_b) (N - B_b) / (N - 1),
 *     Cov(d_b, d_c) = -v / (N - 1)  for b != c.
 * Writing W = sum_b W_b and a = (W - 1) mu (the initial 0 carries weight
 * c0 = 1 - W when the weights sum to one, and a vanishes),
 *     E[(rm - mu)^2] = a^2 + sum_b W_b^2 (Var d_b + v/(N-1)) - W^2 v/(N-1)
 * and E[mean_err^2] is its average over the features. The weights are
 * the estimator's (estimator.h: its recursion run on coefficients, or the
 * pooled rows' shares); an estimator without them, or an order under
 * which the permutations are not all equally likely (order.h), is
 * refused.
 */
#ifndef BN_EXPECT_H
#define BN_EXPECT_H

#include "base/common.h"
#include "pop/drift.h"
#include "pop/pop.h"
#include "model/run.h"

/* E[mean_err^2] for cfg on pop under a uniformly random order; -1 with a
 * message if the order is not uniform or the estimator has no closed
 * form. */
int expect_mean_err_sq(const pop_t *pop, const run_config *cfg,
                       double *out, bn_error *err);
/* Whether cfg has the closed form at all on pop (the layer, a uniform
 * order over rows, an estimator with weights, a running one under a
 * drift, evaluation on the stream itself), so that any other failure is
 * an error. */
int expect_applies(const run_config *cfg, const pop_t *pop);

/* The same closed form when the stream drifts (drift.h): update t trains on
 * its batch shifted by drift_fraction(drift, t) delta_j in feature j. Over
 * all orderings, mean[j] = E[rm_j] and *err_sq = E[mean_err^2] against the
 * truth after training, mu_j + drift_fraction(drift, T) delta_j, averaged
 * over the features (docs/expectation.md, "A drifting stream"). The
 * running estimators only (ema, ema-debiased, cumulative); a drift of
 * none gives expect_mean_err_sq. */
int expect_drift(const pop_t *pop, const run_config *cfg,
                 const drift_spec *drift, const double *delta, double *mean,
                 double *err_sq, bn_error *err);
/* What expectation.tsv writes for cfg: E[mean_err^2] under cfg's own
 * drift (run.h: delta_j = size sd_j; none gives expect_mean_err_sq), and
 * in *bias_sq the part of it no ordering removes, the average over the
 * features of (E[rm_j] - truth_j)^2: the initial values' bias and the
 * drift's lag. */
int expect_summary(const pop_t *pop, const run_config *cfg, double *err_sq,
                   double *bias_sq, bn_error *err);

#endif
