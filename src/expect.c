/* The closed form of expect.h, in long double. */
#include "expect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimator.h"
#include "order.h"

int expect_mean_err_sq(const pop_t *pop, const run_config *cfg,
                       double *out, bn_error *err)
{
    if (run_validate(cfg, pop, err) != 0)
        return -1;
    if (cfg->model != RUN_MODEL_LAYER)
        return bn_fail(err, "the closed form is of the layer's running "
                            "mean");
    if (!cfg->order.def->uniform)
        return bn_fail(err, "the closed form needs every order equally "
                            "likely, and %s is not",
                       cfg->order.name);
    const bn_estimator_def *est = bn_estimator_get(cfg->layer.estimator);
    if (!est->weights)
        return bn_fail(err, "estimator %s has no closed form", est->name);
    size_t n = pop->n, b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, b, cfg->partial);
    long double *w = calloc(nb, sizeof *w);
    if (!w)
        return bn_fail(err, "out of memory");
    bn_weights_in in = {n, b, nb, cfg->epochs * nb,
                        cfg->precise_batches == 0 ||
                                cfg->precise_batches > nb
                            ? nb
                            : cfg->precise_batches,
                        cfg->layer.p, cfg->layer.keep};
    est->weights(&in, w);
    long double total = 0.0L;
    for (size_t i = 0; i < nb; i++)
        total += w[i];
    long double sum = 0.0L, scale = 0.0L, nm1 = (long double)(n - 1);
    for (size_t j = 0; j < pop->f; j++) {
        long double v = pop->var[j], mu = pop->mean[j];
        long double a = (total - 1.0L) * mu;
        long double cross = total * total * v / nm1;
        long double e = a * a - cross;
        scale += a * a + cross;
        for (size_t i = 0; i < nb; i++) {
            size_t bi = i * b + b <= n ? b : n - i * b;
            long double var_b = v / (long double)bi *
                                (long double)(n - bi) / nm1;
            e += w[i] * w[i] * (var_b + v / nm1);
            scale += w[i] * w[i] * (var_b + v / nm1);
        }
        sum += e;
    }
    free(w);
    /* When every row is pooled once (cumulative over whole epochs, precise
     * over all batches) the terms cancel exactly and what is left is
     * rounding, whose size depends on the long double format: anything
     * within 1e-14 of the terms' own size is that zero. */
    *out = sum > 1e-14L * scale ? (double)(sum / (long double)pop->f) : 0.0;
    return 0;
}

int expect_drift(const pop_t *pop, const run_config *cfg,
                 const drift_spec *drift, const double *delta, double *mean,
                 double *err_sq, bn_error *err)
{
    order_spec ord;
    if (run_validate(cfg, pop, err) != 0)
        return -1;
    order_parse(cfg->order, &pop->spec, &ord, err);
    if (ord.kind != ORDER_SHUFFLED)
        return bn_fail(err, "the drift closed form is for shuffled order "
                            "only");
    if (cfg->layer.estimator == BN_EST_PRECISE)
        return bn_fail(err, "the drift closed form covers the running "
                            "estimators, not precise (recomputed after "
                            "training)");
    for (size_t j = 0; j < pop->f; j++)
        if (!isfinite(delta[j]))
            return bn_fail(err, "drift: the offset of feature %zu is not "
                                "finite",
                           j);
    size_t n = pop->n, b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, b, cfg->partial);
    long double *w = calloc(nb, sizeof *w);
    if (!w)
        return bn_fail(err, "out of memory");
    long double shifted;
    batch_weights(cfg, n, nb, drift, w, &shifted);
    long double total = 0.0L;
    for (size_t i = 0; i < nb; i++)
        total += w[i];
    long double last = drift_fraction(drift, cfg->epochs * nb);
    long double sum = 0.0L, scale = 0.0L;
    for (size_t j = 0; j < pop->f; j++) {
        long double v = pop->var[j], mu = pop->mean[j], dj = delta[j];
        mean[j] = (double)(total * mu + shifted * dj);
        /* E[rm] - truth, the truth being mu + last dj. */
        long double a = (total - 1.0L) * mu + (shifted - last) * dj;
        sum += feature_err_sq(a, v, w, nb, n, b, total, &scale);
    }
    free(w);
    *err_sq = average_or_zero(sum, scale, pop->f);
    return 0;
}
