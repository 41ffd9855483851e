/*
 * The estimator table. The updates are the loops bn.c used to switch
 * over; the closed-form weights are the recursions expect.c used to run,
 * in the same order of operations, in double-double (num.h) so that they
 * round the same on every platform.
 */
#include "model/estimator.h"

#include <stdio.h>
#include <string.h>

#include "base/pair.h"


/* The frameworks' moving average, two features at a time (the same
 * bits), every operand a local: the buffers' stores reach nothing the
 * loop reads again. */
static void update_ema(bn_layer *l, const double *mean, const double *var)
{
    double keep = l->keep, p = l->p;
    double *restrict rm = l->rm, *restrict rv = l->rv;
    pair_t k2 = pair_dup(keep), p2 = pair_dup(p);
    size_t j = 0, f = l->f;
    for (; j + 1 < f; j += 2) {
        pair_store(rm + j, pair_add(pair_mul(k2, pair_load(rm + j)),
                                    pair_mul(p2, pair_load(mean + j))));
        pair_store(rv + j, pair_add(pair_mul(k2, pair_load(rv + j)),
                                    pair_mul(p2, pair_load(var + j))));
    }
    for (; j < f; j++) {
        rm[j] = keep * rm[j] + p * mean[j];
        rv[j] = keep * rv[j] + p * var[j];
    }
}

/* update_ema_batches' np pairs of features from j (np a constant, at
 * most 4): each feature's recursion in its batches' order, the block's
 * in registers side by side, so that no one chain of a multiply and an
 * add a batch sets the pace. */
PAIR_INLINE void ema_block(size_t np, double *restrict rm,
                           double *restrict rv, size_t nb, size_t stride,
                           const double *mean, const double *var,
                           pair_t k2, pair_t p2)
{
    pair_t m[4], v[4];
    pair_block_start(np, m, rm);
    pair_block_start(np, v, rv);
    for (size_t q = 0; q < nb; q++, mean += stride, var += stride) {
        PAIR_UNROLL4
        for (size_t c = 0; c < np; c++) {
            m[c] = pair_add(pair_mul(k2, m[c]),
                            pair_mul(p2, pair_load(mean + 2 * c)));
            v[c] = pair_add(pair_mul(k2, v[c]),
                            pair_mul(p2, pair_load(var + 2 * c)));
        }
    }
    pair_block_store(np, rm, m);
    pair_block_store(np, rv, v);
}

/* nb updates of update_ema, batch q's mean and var q stride further, as
 * nb calls leave the buffers, without a call and the buffers' loads and
 * stores a batch. */
static void update_ema_batches(bn_layer *l, size_t nb, size_t stride,
                               const double *mean, const double *var)
{
    double keep = l->keep, p = l->p;
    double *restrict rm = l->rm, *restrict rv = l->rv;
    pair_t k2 = pair_dup(keep), p2 = pair_dup(p);
    size_t j = 0, f = l->f;
    for (; j + 8 <= f; j += 8)
        ema_block(4, rm + j, rv + j, nb, stride, mean + j, var + j, k2, p2);
    for (; j + 1 < f; j += 2)
        ema_block(1, rm + j, rv + j, nb, stride, mean + j, var + j, k2, p2);
    for (; j < f; j++)
        for (size_t q = 0; q < nb; q++) {
            rm[j] = keep * rm[j] + p * mean[q * stride + j];
            rv[j] = keep * rv[j] + p * var[q * stride + j];
        }
}

static void update_debiased(bn_layer *l, const double *mean,
                            const double *var)
{
    /* Adam's correction: the average starts from zero and is divided by
     * the weight the updates have, 1 - keep^t. That weight (l->acc_w) is
     * summed by the same recursion rather than computed as 1 - keep^t,
     * which cancels to nothing when p is tiny. */
    for (size_t j = 0; j < l->f; j++) {
        l->acc_m[j] = l->keep * l->acc_m[j] + l->p * mean[j];
        l->acc_v[j] = l->keep * l->acc_v[j] + l->p * var[j];
        l->rm[j] = l->acc_m[j] / l->acc_w;
        l->rv[j] = l->acc_v[j] / l->acc_w;
    }
}

static void update_cumulative(bn_layer *l, const double *mean,
                              const double *var)
{
    /* PyTorch's momentum=None: factor 1/t, so the first update replaces
     * the initial values outright. */
    double a = 1.0 / (double)l->updates;
    for (size_t j = 0; j < l->f; j++) {
        l->rm[j] = (1.0 - a) * l->rm[j] + a * mean[j];
        l->rv[j] = (1.0 - a) * l->rv[j] + a * var[j];
    }
}

/* Never updated: the buffers keep the initial 0 and 1, as a checkpoint
 * loaded without its buffers (or evaluated before any training step)
 * has them. */
static void update_none(bn_layer *l, const double *mean, const double *var)
{
    (void)l, (void)mean, (void)var;
}

static double init_weight_all(double keep, size_t updates)
{
    (void)keep, (void)updates;
    return 1.0;
}

/* keep^T by T multiplications, as the updates apply it: libm's pow is
 * not the same bits everywhere. */
static double init_weight_ema(double keep, size_t updates)
{
    double w = 1.0;
    for (size_t t = 0; w != 0.0 && t < updates; t++)
        w *= keep;
    return w;
}

/* The steps of the recursive estimators: the weights (keep_t, p_t) update
 * t = 1, 2, ... gives the old value and the new, in double-double, as
 * the estimator's update applies them. */

/* The same weights at every update: the frameworks' moving average. */
static void step_fixed(size_t t, const bn_weights_in *in, num_dd *keep_t,
                       num_dd *p_t)
{
    (void)t;
    *keep_t = num_dd_make(in->keep);
    *p_t = num_dd_make(in->p);
}

/* Factor 1/t: every batch the same weight. */
static void step_cumulative(size_t t, const bn_weights_in *in,
                            num_dd *keep_t, num_dd *p_t)
{
    (void)in;
    *p_t = num_dd_div(num_dd_make(1.0), num_dd_make((double)t));
    *keep_t = num_dd_sub(num_dd_make(1.0), *p_t);
}

/* The weights of a recursive estimator: its step run on coefficients,
 * batch cur = (t - 1) mod nb at update t; and on the drift's fractions
 * when there are any. */
static void recursive_weights(const bn_weights_in *in, bn_step_fn step,
                              num_dd *w, num_dd *shifted)
{
    num_dd d = num_dd_make(0.0);
    for (size_t t = 1; t <= in->updates; t++) {
        size_t cur = (t - 1) % in->nb;
        num_dd keep_now, p_now;
        step(t, in, &keep_now, &p_now);
        for (size_t i = 0; i < in->nb; i++)
            w[i] = num_dd_mul(w[i], keep_now);
        w[cur] = num_dd_add(w[cur], p_now);
        if (in->frac)
            d = num_dd_add(num_dd_mul(keep_now, d),
                           num_dd_mul(p_now, num_dd_make(in->frac[t - 1])));
    }
    if (in->frac)
        *shifted = d;
}

/* The moving average from zero, divided by the weights' own sum,
 * 1 - keep^T, as the debiased update divides by acc_w. */
static void weights_debiased(const bn_weights_in *in, num_dd *w,
                             num_dd *shifted)
{
    num_dd d = num_dd_make(0.0);
    recursive_weights(in, step_fixed, w, in->frac ? &d : NULL);
    num_dd wsum = num_dd_make(0.0);
    for (size_t i = 0; i < in->nb; i++)
        wsum = num_dd_add(wsum, w[i]);
    for (size_t i = 0; i < in->nb; i++)
        w[i] = num_dd_div(w[i], wsum);
    if (in->frac)
        *shifted = num_dd_div(d, wsum);
}

/* One pooled sample of the first K batches' rows. */
static void weights_pooled(const bn_weights_in *in, num_dd *w,
                           num_dd *shifted)
{
    if (in->frac)
        *shifted = num_dd_make(0.0);
    size_t k = in->pooled_batches, b = in->b, n = in->n;
    size_t rows = k * b < n ? k * b : n;
    for (size_t i = 0; i < k; i++) {
        size_t bi = i * b + b <= n ? b : n - i * b;
        w[i] = num_dd_div(num_dd_make((double)bi), num_dd_make((double)rows));
    }
}

/* The initial 0 carries all the weight: every W_b is 0, and nothing
 * follows the drift. */
static void weights_none(const bn_weights_in *in, num_dd *w, num_dd *shifted)
{
    (void)w;
    if (in->frac)
        *shifted = num_dd_make(0.0);
}

static int validate_debiased(const bn_config *cfg, bn_error *err)
{
    if (!(cfg->p > 0.0))
        return bn_fail(err, "ema-debiased needs a new-value weight above 0 "
                            "(momentum 1 old never updates, and 0/0 is no "
                            "estimate)");
    return 0;
}

/* The estimators' rows: a recursive one (its buffers follow each update
 * and nothing after) is its update and the step its closed form runs;
 * the others say how the buffers are made after training (pools,
 * adapts) and give their closed form's weights, if any. */
static const bn_estimator_def table[BN_EST_COUNT] = {
    [BN_EST_EMA] = {.name = "ema",
                    .help = "the frameworks' exponential moving average",
                    .update = update_ema,
                    .update_batches = update_ema_batches,
                    .step = step_fixed, .init_weight = init_weight_ema},
    [BN_EST_EMA_DEBIASED] = {.name = "ema-debiased",
                             .help = "the same average from zero, divided "
                                     "by 1 - (1-p)^t as Adam does",
                             .update = update_debiased,
                             .weights = weights_debiased,
                             .validate = validate_debiased},
    [BN_EST_CUMULATIVE] = {.name = "cumulative",
                           .help = "equal weights, factor 1/t (PyTorch's "
                                   "momentum=None)",
                           .update = update_cumulative,
                           .step = step_cumulative},
    /* Trains like ema; the buffers are replaced after training. */
    [BN_EST_PRECISE] = {.name = "precise",
                        .help = "after training, the pooled mean and "
                                "variance of the first precise_batches "
                                "batches (0 all)",
                        .update = update_ema,
                        .update_batches = update_ema_batches, .pools = 1,
                        .weights = weights_pooled},
    [BN_EST_INITIAL] = {.name = "initial",
                        .help = "never updated: the initial 0 and 1, as a "
                                "checkpoint loaded without its buffers has "
                                "them",
                        .update = update_none, .init_weight = init_weight_all,
                        .weights = weights_none},
    /* Trains like ema; the buffers are replaced after training. No
     * closed form over orderings: the result does not depend on one. */
    [BN_EST_ADAPTIVE] = {.name = "adaptive",
                         .help = "after training, the mean and variance of "
                                 "the rows evaluation sees (adaptive batch "
                                 "norm)",
                         .update = update_ema, .adapts = 1},
};

const bn_estimator_def *bn_estimator_get(bn_estimator e)
{
    return &table[e];
}

int bn_estimator_closed_form(const bn_estimator_def *est)
{
    return est->weights || est->step;
}

void bn_estimator_weights(const bn_estimator_def *est, const bn_weights_in *in,
                          num_dd *w, num_dd *shifted)
{
    if (est->weights)
        est->weights(in, w, shifted);
    else
        recursive_weights(in, est->step, w, shifted);
}

const char *bn_estimator_name(bn_estimator e) { return table[e].name; }

int bn_estimator_parse(const char *s, bn_estimator *e)
{
    for (int i = 0; i < BN_EST_COUNT; i++)
        if (strcmp(s, table[i].name) == 0) {
            *e = (bn_estimator)i;
            return 0;
        }
    return -1;
}

const char *bn_estimator_name_at(int i)
{
    return i >= 0 && i < BN_EST_COUNT ? table[i].name : NULL;
}
