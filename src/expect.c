/* The closed form of expect.h, in long double. */
#include "expect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimator.h"
#include "order.h"

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
    if (!cfg->order.def->uniform)
        return bn_fail(err, "the closed form needs every order equally "
                            "likely, and %s is not",
                       cfg->order.name), NULL;
    const bn_estimator_def *est = bn_estimator_get(cfg->layer.estimator);
    if (!est->weights)
        return bn_fail(err, "estimator %s has no closed form", est->name),
               NULL;
    return est;
}

/* The batch weights W_b (w[0..nb-1], calloc'd: the caller frees) and, with
 * frac, the weight the drift's offset carries. */
static long double *batch_weights(const bn_estimator_def *est,
                                  const pop_t *pop, const run_config *cfg,
                                  const double *frac, long double *shifted,
                                  size_t *nb_out, bn_error *err)
{
    size_t n = pop->n, b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, b, cfg->partial);
    long double *w = calloc(nb, sizeof *w);
    if (!w)
        return bn_fail(err, "out of memory"), NULL;
    bn_weights_in in = {n, b, nb, cfg->epochs * nb,
                        cfg->precise_batches == 0 ||
                                cfg->precise_batches > nb
                            ? nb
                            : cfg->precise_batches,
                        cfg->layer.p, cfg->layer.keep, frac};
    est->weights(&in, w, shifted);
    *nb_out = nb;
    return w;
}

/* E[(rm - truth)^2] for one feature of variance v whose expected error is
 * a: a^2 plus the variance of sum_b W_b d_b (expect.h). *scale
 * accumulates the size of the terms, which the rounding is relative to. */
static long double feature_err_sq(long double a, long double v,
                                  const long double *w, size_t nb, size_t n,
                                  size_t b, long double total,
                                  long double *scale)
{
    long double nm1 = (long double)(n - 1);
    long double cross = total * total * v / nm1;
    long double e = a * a - cross;
    *scale += a * a + cross;
    for (size_t i = 0; i < nb; i++) {
        size_t bi = i * b + b <= n ? b : n - i * b;
        long double var_b = v / (long double)bi * (long double)(n - bi) / nm1;
        e += w[i] * w[i] * (var_b + v / nm1);
        *scale += w[i] * w[i] * (var_b + v / nm1);
    }
    return e;
}

/* When every row is pooled once (cumulative over whole epochs, precise
 * over all batches) the terms cancel exactly and what is left is
 * rounding, whose size depends on the long double format: anything within
 * 1e-14 of the terms' own size is that zero. */
static double average_or_zero(long double sum, long double scale, size_t f)
{
    return sum > 1e-14L * scale ? (double)(sum / (long double)f) : 0.0;
}

static long double sum_of(const long double *w, size_t nb)
{
    long double total = 0.0L;
    for (size_t i = 0; i < nb; i++)
        total += w[i];
    return total;
}

int expect_mean_err_sq(const pop_t *pop, const run_config *cfg,
                       double *out, bn_error *err)
{
    const bn_estimator_def *est = closed_form_estimator(pop, cfg, err);
    size_t nb;
    long double *w =
        est ? batch_weights(est, pop, cfg, NULL, NULL, &nb, err) : NULL;
    if (!w)
        return -1;
    long double total = sum_of(w, nb), sum = 0.0L, scale = 0.0L;
    for (size_t j = 0; j < pop->f; j++) {
        long double a = (total - 1.0L) * pop->mean[j];
        sum += feature_err_sq(a, pop->var[j], w, nb, pop->n, cfg->batch_size,
                              total, &scale);
    }
    free(w);
    *out = average_or_zero(sum, scale, pop->f);
    return 0;
}

int expect_drift(const pop_t *pop, const run_config *cfg,
                 const drift_spec *drift, const double *delta, double *mean,
                 double *err_sq, bn_error *err)
{
    const bn_estimator_def *est = closed_form_estimator(pop, cfg, err);
    if (!est)
        return -1;
    if (est->pools)
        return bn_fail(err, "the drift closed form covers the running "
                            "estimators, not %s (recomputed after "
                            "training)",
                       est->name);
    for (size_t j = 0; j < pop->f; j++)
        if (!isfinite(delta[j]))
            return bn_fail(err, "drift: the offset of feature %zu is not "
                                "finite",
                           j);
    size_t t_count = cfg->epochs *
                     run_batches_per_epoch(pop->n, cfg->batch_size,
                                           cfg->partial);
    double *frac = malloc(t_count * sizeof *frac);
    if (!frac)
        return bn_fail(err, "out of memory");
    for (size_t t = 1; t <= t_count; t++)
        frac[t - 1] = drift_fraction(drift, t);
    size_t nb;
    long double shifted = 0.0L;
    long double *w = batch_weights(est, pop, cfg, frac, &shifted, &nb, err);
    free(frac);
    if (!w)
        return -1;
    long double total = sum_of(w, nb);
    long double last = drift_fraction(drift, t_count);
    long double sum = 0.0L, scale = 0.0L;
    for (size_t j = 0; j < pop->f; j++) {
        long double v = pop->var[j], mu = pop->mean[j], dj = delta[j];
        mean[j] = (double)(total * mu + shifted * dj);
        /* E[rm] - truth, the truth being mu + last dj. */
        long double a = (total - 1.0L) * mu + (shifted - last) * dj;
        sum += feature_err_sq(a, v, w, nb, pop->n, cfg->batch_size, total,
                              &scale);
    }
    free(w);
    *err_sq = average_or_zero(sum, scale, pop->f);
    return 0;
}
