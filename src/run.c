/*
 * Training one configuration and scoring it. The loop is: for each epoch,
 * for each batch of the order, a train-mode pass (which updates the
 * buffers) and the self-checks; the last epoch's outputs are kept so that
 * each row's train-mode output can be set against its eval-mode output
 * under the final buffers.
 */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "score.h"

void run_default_config(run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    strcpy(cfg->experiment, "run");
    strcpy(cfg->order, "shuffled");
    cfg->seed = 1;
    cfg->batch_size = 256;
    cfg->epochs = 1;
    cfg->partial = RUN_PARTIAL_DROP;
    cfg->precise_batches = 0;
    bn_default_config(&cfg->layer);
}

const char *run_partial_name(run_partial p)
{
    return p == RUN_PARTIAL_KEEP ? "keep" : "drop";
}

const char *run_estimator_label(const run_config *cfg, char *buf, size_t cap)
{
    if (cfg->layer.estimator != BN_EST_PRECISE || cfg->precise_batches == 0)
        return bn_estimator_name(cfg->layer.estimator);
    snprintf(buf, cap, "precise:%zu", cfg->precise_batches);
    return buf;
}

int run_partial_parse(const char *s, run_partial *p)
{
    if (strcmp(s, "drop") == 0)
        *p = RUN_PARTIAL_DROP;
    else if (strcmp(s, "keep") == 0)
        *p = RUN_PARTIAL_KEEP;
    else
        return -1;
    return 0;
}

size_t run_batches_per_epoch(size_t n, size_t b, run_partial partial)
{
    return n / b + (partial == RUN_PARTIAL_KEEP && n % b != 0);
}

int run_validate(const run_config *cfg, const pop_t *pop, bn_error *err)
{
    order_spec ord;
    if (cfg->batch_size < 2 || cfg->batch_size > pop->n)
        return bn_fail(err,
                       "batch size must be from 2 to the population's %zu "
                       "rows, got %zu",
                       pop->n, cfg->batch_size);
    if (cfg->partial == RUN_PARTIAL_KEEP && pop->n % cfg->batch_size == 1)
        return bn_fail(err,
                       "partial keep with batch size %zu leaves a last "
                       "batch of one row, whose variance is undefined",
                       cfg->batch_size);
    size_t nb = run_batches_per_epoch(pop->n, cfg->batch_size, cfg->partial);
    if (cfg->precise_batches > nb)
        return bn_fail(err,
                       "precise batches %zu is more than the %zu batches "
                       "of an epoch",
                       cfg->precise_batches, nb);
    if (cfg->epochs < 1)
        return bn_fail(err, "epochs must be at least 1");
    if (cfg->epochs > 1000000)
        return bn_fail(err, "epochs must be at most 1000000");
    if (order_parse(cfg->order, &pop->spec, &ord, err) != 0)
        return -1;
    return bn_validate(&cfg->layer, err);
}

/* The precise estimator: after training, the buffers become the mean and
 * variance of every sample in the first k batches of the order, pooled, so
 * the spread between batch means counts as it does in the population. */
static int recompute_precise(bn_layer *layer, const pop_t *pop,
                             const size_t *perm, size_t b, size_t nb,
                             size_t k, bn_error *err)
{
    if (k == 0)
        k = nb;
    size_t rows = k * b;
    if (rows > pop->n)
        rows = pop->n; /* the kept partial batch */
    size_t f = pop->f;
    double *x = malloc(rows * f * sizeof *x);
    if (!x)
        return bn_fail(err, "out of memory");
    for (size_t i = 0; i < rows; i++)
        memcpy(&x[i * f], &pop->x[perm[i] * f], f * sizeof *x);
    for (size_t j = 0; j < f; j++)
        pop_moments(rows, f, x + j, &layer->rm[j], &layer->rv[j]);
    free(x);
    return 0;
}

int run_execute(const pop_t *pop, const run_config *cfg,
                const run_observer *obs, run_result *res, bn_error *err)
{
    memset(res, 0, sizeof *res);
    if (run_validate(cfg, pop, err) != 0)
        return -1;
    order_spec ord;
    order_parse(cfg->order, &pop->spec, &ord, err);
    ord.batch_size = cfg->batch_size;

    size_t n = pop->n, f = pop->f, bmax = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, bmax, cfg->partial);
    size_t *perm = malloc(n * sizeof *perm);
    double *x = malloc(bmax * f * sizeof *x);
    double *y = malloc((bmax * f + 1) * sizeof *y);
    double *scratch = malloc(2 * bmax * f * sizeof *scratch);
    double *xs = malloc(n * f * sizeof *xs);  /* last epoch's inputs */
    double *ytr = malloc(n * f * sizeof *ytr); /* and train outputs */
    double *yev = malloc(n * f * sizeof *yev);
    int rc = -1;
    if (!perm || !x || !y || !scratch || !xs || !ytr || !yev) {
        bn_fail(err, "out of memory");
        goto done;
    }
    if (order_make(&ord, pop, cfg->seed, perm, err) != 0)
        goto done;

    bn_layer layer;
    bn_init(&layer, f, &cfg->layer);
    double mean[BN_MAX_FEATURES], var[BN_MAX_FEATURES];
    double sum_dm = 0.0, sum_dv = 0.0;
    size_t kept = 0;
    for (size_t ep = 0; ep < cfg->epochs; ep++) {
        int last = ep + 1 == cfg->epochs;
        for (size_t k = 0; k < nb; k++) {
            size_t start = k * bmax;
            size_t b = start + bmax <= n ? bmax : n - start;
            for (size_t i = 0; i < b; i++)
                memcpy(&x[i * f], &pop->x[perm[start + i] * f],
                       f * sizeof *x);
            score_mark(y, b * f);
            bn_train_forward(&layer, b, x, y, mean, var);
            res->props_pass += score_checks(&layer, b, x, y, var, scratch);
            res->props_total += 4 * f;
            if (last) {
                memcpy(&xs[start * f], x, b * f * sizeof *x);
                memcpy(&ytr[start * f], y, b * f * sizeof *y);
                kept = start + b;
                for (size_t j = 0; j < f; j++) {
                    double dm = mean[j] - pop->mean[j];
                    double dv = var[j] - pop->var[j];
                    sum_dm += dm * dm;
                    sum_dv += dv * dv;
                }
            }
            if (obs && obs->on_batch) {
                run_batch rb = {ep, k, b, f, &perm[start], x, y, mean, var,
                                &layer};
                obs->on_batch(obs->ctx, &rb);
            }
        }
    }
    if (cfg->layer.estimator == BN_EST_PRECISE &&
        recompute_precise(&layer, pop, perm, bmax, nb, cfg->precise_batches,
                          err) != 0)
        goto done;

    bn_eval_forward(&layer, kept, xs, yev);
    double sq = 0.0;
    for (size_t i = 0; i < kept * f; i++) {
        double d = ytr[i] - yev[i];
        sq += d * d;
    }
    if (obs && obs->on_outputs)
        obs->on_outputs(obs->ctx, kept, f, perm, ytr, yev);

    score_buffers_t sb;
    score_buffers(pop, layer.rm, layer.rv, &sb);
    res->updates = layer.updates;
    /* keep^T by T multiplications, as the updates apply it: libm's pow is
     * not the same bits everywhere. */
    res->init_weight = cfg->layer.estimator == BN_EST_EMA ? 1.0 : 0.0;
    for (size_t t = 0; res->init_weight != 0.0 && t < layer.updates; t++)
        res->init_weight *= cfg->layer.keep;
    res->stats_err = sb.stats_err;
    res->mean_err = sb.mean_err;
    res->var_err = sb.var_err;
    res->worst_var_err = sb.worst_var_err;
    res->worst_var_feature = sb.worst_var_feature;
    res->train_eval_rmse = sqrt(sq / (double)(kept * f));
    res->batch_mean_err = sqrt(sum_dm / (double)(nb * f));
    res->batch_var_err = sqrt(sum_dv / (double)(nb * f));
    memcpy(res->running_mean, layer.rm, f * sizeof(double));
    memcpy(res->running_var, layer.rv, f * sizeof(double));
    /* Overflow (gamma 1e300, say) must not pass for a measurement. */
    if (!isfinite(res->stats_err) || !isfinite(res->train_eval_rmse) ||
        !isfinite(res->batch_mean_err) || !isfinite(res->batch_var_err) ||
        !isfinite(res->worst_var_err)) {
        bn_fail(err, "the scores overflowed (not finite): the settings are "
                     "out of double range");
        goto done;
    }
    rc = 0;
done:
    free(perm);
    free(x);
    free(y);
    free(scratch);
    free(xs);
    free(ytr);
    free(yev);
    return rc;
}
