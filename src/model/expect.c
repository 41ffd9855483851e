/* The closed forms of expect.h, in double-double (num.h): about 106 bits
 * whatever the platform, where long double would be 64 bits on x86-64 and
 * 113 on aarch64. */
#include "model/expect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/estimator.h"
#include "base/num.h"
#include "model/order.h"

#define D(x) num_dd_make(x)

int expect_applies(const run_config *cfg, const pop_t *pop)
{
    /* The closed form starts the buffers at 0 and 1. */
    return cfg->model == RUN_MODEL_LAYER && !cfg->initial &&
           bn_ghosts(&cfg->layer) == 1 &&
           cfg->order.def->uniform &&
           pop->sample_rows <= 1 &&
           bn_estimator_closed_form(bn_estimator_get(cfg->layer.estimator)) &&
           (cfg->drift.profile.kind == DRIFT_NONE ||
            !bn_estimator_get(cfg->layer.estimator)->pools) &&
           cfg->eval.shift == 0.0 && cfg->eval.scale == 1.0 &&
           cfg->eval.offset == 0.0;
}

/* The checks both closed forms make, and the estimator's row. */
static const bn_estimator_def *closed_form_estimator(const pop_t *pop,
                                                     const run_config *cfg,
                                                     bn_error *err)
{
    if (run_validate(cfg, pop, err) != 0)
        return NULL;
    if (cfg->model != RUN_MODEL_LAYER)
        return bn_fail(err, "the closed form is of the layer's running "
                            "mean"), NULL;
    if (cfg->initial)
        return bn_fail(err, "the closed form starts the buffers at 0 and 1, "
                            "not at [layer] initial's"), NULL;
    if (bn_ghosts(&cfg->layer) != 1)
        return bn_fail(err, "the closed form is of one device's batches"),
               NULL;
    if (!cfg->order.def->uniform)
        return bn_fail(err, "the closed form needs every order equally "
                            "likely, and %s is not",
                       cfg->order.name), NULL;
    if (pop->sample_rows > 1)
        return bn_fail(err, "the closed form is over orderings of rows, "
                            "and batches of whole feature maps are not "
                            "that (convpop_effective is theirs)"), NULL;
    const bn_estimator_def *est = bn_estimator_get(cfg->layer.estimator);
    if (!bn_estimator_closed_form(est))
        return bn_fail(err, "estimator %s has no closed form", est->name),
               NULL;
    return est;
}

/* The batch weights W_b (w[0..nb-1], calloc'd: the caller frees) and, with
 * frac, the weight the drift's offset carries. */
static num_dd *batch_weights(const bn_estimator_def *est, const pop_t *pop,
                             const run_config *cfg, const double *frac,
                             num_dd *shifted, size_t *nb_out, bn_error *err)
{
    size_t n = pop->n, b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, b, cfg->partial);
    num_dd *w = calloc(nb, sizeof *w); /* all-zero bits are 0 + 0 */
    if (!w)
        return bn_fail(err, "out of memory"), NULL;
    bn_weights_in in = {n, b, nb, cfg->epochs * nb,
                        cfg->precise_batches == 0 ||
                                cfg->precise_batches > nb
                            ? nb
                            : cfg->precise_batches,
                        cfg->layer.p, cfg->layer.keep, frac};
    bn_estimator_weights(est, &in, w, shifted);
    *nb_out = nb;
    return w;
}

/* E[(rm - truth)^2] for one feature of variance v whose expected error is
 * a: a^2 plus the variance of sum_b W_b d_b (expect.h). *scale
 * accumulates the size of the terms, which the rounding is relative to. */
static num_dd feature_err_sq(num_dd a, num_dd v, const num_dd *w, size_t nb,
                             size_t n, size_t b, num_dd total, num_dd *scale)
{
    num_dd nm1 = D((double)(n - 1));
    num_dd aa = num_dd_mul(a, a);
    num_dd cross = num_dd_div(num_dd_mul(num_dd_mul(total, total), v), nm1);
    num_dd e = num_dd_sub(aa, cross);
    *scale = num_dd_add(*scale, num_dd_add(aa, cross));
    num_dd v_n = num_dd_div(v, nm1);
    for (size_t i = 0; i < nb; i++) {
        size_t bi = i * b + b <= n ? b : n - i * b;
        num_dd var_b = num_dd_div(
            num_dd_mul(num_dd_div(v, D((double)bi)), D((double)(n - bi))),
            nm1);
        num_dd term =
            num_dd_mul(num_dd_mul(w[i], w[i]), num_dd_add(var_b, v_n));
        e = num_dd_add(e, term);
        *scale = num_dd_add(*scale, term);
    }
    return e;
}

/* When every row is pooled once (cumulative over whole epochs, precise
 * over all batches) the terms cancel exactly and what is left is
 * rounding: anything within 1e-14 of the terms' own size is that zero. */
static double average_or_zero(num_dd sum, num_dd scale, size_t f)
{
    return num_dd_value(sum) > 1e-14 * num_dd_value(scale)
               ? num_dd_value(num_dd_div(sum, D((double)f)))
               : 0.0;
}

static num_dd sum_of(const num_dd *w, size_t nb)
{
    num_dd total = D(0.0);
    for (size_t i = 0; i < nb; i++)
        total = num_dd_add(total, w[i]);
    return total;
}

/* Both closed forms: without a drift (drift NULL) a is (W - 1) mu; with
 * one, E[rm] = W mu + D delta and a is measured from the stream's truth at
 * the last update. bias_sq (optional) receives the average over the
 * features of a^2, the part of the error no ordering removes. */
static int closed_form(const pop_t *pop, const run_config *cfg,
                       const drift_spec *drift, const double *delta,
                       double *mean, double *err_sq, double *bias_sq,
                       bn_error *err)
{
    const bn_estimator_def *est = closed_form_estimator(pop, cfg, err);
    if (!est)
        return -1;
    double *frac = NULL;
    size_t t_count = cfg->epochs *
                     run_batches_per_epoch(pop->n, cfg->batch_size,
                                           cfg->partial);
    if (drift) {
        if (est->pools)
            return bn_fail(err, "the drift closed form covers the running "
                                "estimators, not %s (recomputed after "
                                "training)",
                           est->name);
        for (size_t j = 0; j < pop->f; j++)
            if (!isfinite(delta[j]))
                return bn_fail(err, "drift: the offset of feature %zu is "
                                    "not finite",
                               j);
        frac = malloc(t_count * sizeof *frac);
        if (!frac)
            return bn_fail(err, "out of memory");
        for (size_t t = 1; t <= t_count; t++)
            frac[t - 1] = drift_fraction(drift, t);
    }
    size_t nb;
    num_dd shifted = D(0.0);
    num_dd *w = batch_weights(est, pop, cfg, frac, drift ? &shifted : NULL,
                              &nb, err);
    free(frac);
    if (!w)
        return -1;
    num_dd total = sum_of(w, nb);
    num_dd last = D(drift ? drift_fraction(drift, t_count) : 0.0);
    num_dd sum = D(0.0), scale = D(0.0), bias = D(0.0);
    for (size_t j = 0; j < pop->f; j++) {
        num_dd v = D(pop->var[j]), mu = D(pop->mean[j]);
        num_dd a = num_dd_mul(num_dd_sub(total, D(1.0)), mu);
        if (drift) {
            num_dd dj = D(delta[j]);
            mean[j] = num_dd_value(
                num_dd_add(num_dd_mul(total, mu), num_dd_mul(shifted, dj)));
            /* E[rm] - truth, the truth being mu + last dj. */
            a = num_dd_add(a, num_dd_mul(num_dd_sub(shifted, last), dj));
        }
        bias = num_dd_add(bias, num_dd_mul(a, a));
        sum = num_dd_add(sum, feature_err_sq(a, v, w, nb, pop->n,
                                             cfg->batch_size, total, &scale));
    }
    free(w);
    *err_sq = average_or_zero(sum, scale, pop->f);
    if (bias_sq)
        *bias_sq = num_dd_value(num_dd_div(bias, D((double)pop->f)));
    return 0;
}

int expect_mean_err_sq(const pop_t *pop, const run_config *cfg,
                       double *out, bn_error *err)
{
    return closed_form(pop, cfg, NULL, NULL, NULL, out, NULL, err);
}

int expect_drift(const pop_t *pop, const run_config *cfg,
                 const drift_spec *drift, const double *delta, double *mean,
                 double *err_sq, bn_error *err)
{
    return closed_form(pop, cfg, drift, delta, mean, err_sq, NULL, err);
}

int expect_summary(const pop_t *pop, const run_config *cfg, double *err_sq,
                   double *bias_sq, bn_error *err)
{
    if (cfg->drift.profile.kind == DRIFT_NONE)
        return closed_form(pop, cfg, NULL, NULL, NULL, err_sq, bias_sq, err);
    double *delta = malloc(2 * pop->f * sizeof *delta);
    if (!delta)
        return bn_fail(err, "out of memory");
    for (size_t j = 0; j < pop->f; j++)
        delta[j] = cfg->drift.size * sqrt(pop->var[j]);
    int rc = closed_form(pop, cfg, &cfg->drift.profile, delta,
                         delta + pop->f, err_sq, bias_sq, err);
    free(delta);
    return rc;
}
