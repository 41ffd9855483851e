/*
 * Training one batch-norm layer and scoring it. The last epoch's outputs
 * are kept so that each row's train-mode output can be set against its
 * eval-mode output under the final buffers.
 */
#include "layer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "order.h"
#include "score.h"

int layer_check(const run_config *cfg, const pop_t *pop, int *blame,
                bn_error *err)
{
    (void)pop;
    bn_field field;
    if (bn_check(&cfg->layer, &field, err) != 0) {
        static const int key_of[] = {
            [BN_FIELD_MOMENTUM] = KEY_MOMENTUM,
            [BN_FIELD_ESTIMATOR] = KEY_ESTIMATOR,
            [BN_FIELD_GAMMA] = KEY_GAMMA,
            [BN_FIELD_BETA] = KEY_BETA,
            [BN_FIELD_EPS] = KEY_EPS,
        };
        if (blame)
            blame[0] = key_of[field], blame[1] = KEY_ESTIMATOR;
        return -1;
    }
    return 0;
}

size_t layer_bytes(const run_config *cfg, size_t n, size_t f, size_t k)
{
    (void)k;
    /* layer_run's buffers (a batch x, y and scratch; the last epoch's
     * inputs and both outputs), the pooled rows of the recompute and the
     * per-feature arrays of the result. */
    size_t b = cfg->batch_size;
    return (4 * b * f + 1 + 4 * n * f + 10 * f) * sizeof(double) +
           n * sizeof(size_t);
}

double layer_row_work(const run_config *cfg, size_t f, size_t k)
{
    (void)cfg, (void)k;
    return (double)f;
}

/* The pooling estimators: after training, the buffers become the mean and
 * variance of every sample in the first k batches of the order, pooled,
 * so the spread between batch means counts as it does in the population;
 * under a drift, the mean as the stream has moved by the last update
 * (shift[j], NULL for none). */
static int recompute_pooled(bn_layer *layer, const pop_t *pop,
                            const size_t *perm, size_t b, size_t nb,
                            size_t k, const double *shift, bn_error *err)
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
    for (size_t j = 0; j < f; j++) {
        pop_moments(rows, f, x + j, &layer->rm[j], &layer->rv[j]);
        if (shift)
            layer->rm[j] += shift[j];
    }
    free(x);
    return 0;
}

/* The evaluation rows' train-mode and eval-mode outputs when they are not
 * the rows trained on: batches of b rows in the training order when there
 * are as many rows (the training rows moved, row for row), else in a
 * shuffled order from the run's seed; the rows of full batches (and of a
 * kept partial one) go to xs, ytr and yev, their indices to *rows. */
static int eval_outputs(const bn_layer *layer, const pop_t *pop,
                        const pop_t *eval, const size_t *perm,
                        const run_config *cfg, double *x, double *mean,
                        double *var, double *ytr, double *yev,
                        size_t **rows, size_t *kept, bn_error *err)
{
    size_t n = eval->n, f = eval->f, bmax = cfg->batch_size;
    *rows = malloc(n * sizeof **rows);
    if (!*rows)
        return bn_fail(err, "out of memory");
    if (n == pop->n) {
        memcpy(*rows, perm, n * sizeof **rows);
    } else {
        order_spec ord;
        if (order_parse("shuffled", eval, &ord, err) != 0 ||
            order_make(&ord, eval, cfg->seed, *rows, err) != 0)
            return -1;
    }
    size_t nb = run_batches_per_epoch(n, bmax, cfg->partial);
    *kept = 0;
    for (size_t k = 0; k < nb; k++) {
        size_t start = k * bmax;
        size_t b = start + bmax <= n ? bmax : n - start;
        if (b < 2)
            break; /* a kept partial batch of one row has no variance */
        for (size_t i = 0; i < b; i++)
            memcpy(&x[i * f], &eval->x[(*rows)[start + i] * f],
                   f * sizeof *x);
        bn_batch_forward(layer, b, x, &ytr[start * f], mean, var);
        bn_eval_forward(layer, b, x, &yev[start * f]);
        *kept = start + b;
    }
    return 0;
}

int layer_run(const pop_t *pop, const pop_t *eval, const size_t *perm,
              const run_config *cfg, const run_observer *obs,
              run_result *res, bn_error *err)
{
    size_t n = pop->n, f = pop->f, bmax = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, bmax, cfg->partial);
    size_t ne = eval->n > n ? eval->n : n;
    const bn_estimator_def *est = bn_estimator_get(cfg->layer.estimator);
    int drifting = cfg->drift.profile.kind != DRIFT_NONE &&
                   cfg->drift.size != 0.0;
    double *x = malloc(bmax * f * sizeof *x);
    double *y = malloc((bmax * f + 1) * sizeof *y);
    double *scratch = malloc(2 * bmax * f * sizeof *scratch);
    double *xs = malloc(ne * f * sizeof *xs);  /* last epoch's inputs */
    double *ytr = malloc(ne * f * sizeof *ytr); /* and train outputs */
    double *yev = malloc(ne * f * sizeof *yev);
    double *mean = malloc(4 * f * sizeof *mean), *var = mean + f;
    double *delta = mean + 2 * f, *sq_j = mean + 3 * f;
    size_t *erows = NULL;
    bn_layer layer;
    int rc = -1, have_layer = bn_init(&layer, f, &cfg->layer) == 0;
    res->running_mean = malloc(6 * f * sizeof *res->running_mean);
    if (!x || !y || !scratch || !xs || !ytr || !yev || !mean ||
        !have_layer || !res->running_mean) {
        bn_fail(err, "out of memory");
        goto done;
    }
    res->running_var = res->running_mean + f;
    res->true_mean = res->running_mean + 2 * f;
    res->true_var = res->running_mean + 3 * f;
    res->train_eval = res->running_mean + 4 * f;
    res->batch_mean_sq = res->running_mean + 5 * f;
    for (size_t j = 0; j < f; j++) {
        /* The drift's full move of each feature, in its own units. */
        delta[j] = drifting ? cfg->drift.size * sqrt(pop->var[j]) : 0.0;
        res->batch_mean_sq[j] = 0.0;
        sq_j[j] = 0.0;
    }
    double sum_dm = 0.0, sum_dv = 0.0, frac = 0.0;
    size_t kept = 0, t = 0;
    for (size_t ep = 0; ep < cfg->epochs; ep++) {
        int last = ep + 1 == cfg->epochs;
        for (size_t k = 0; k < nb; k++) {
            size_t start = k * bmax;
            size_t b = start + bmax <= n ? bmax : n - start;
            for (size_t i = 0; i < b; i++)
                memcpy(&x[i * f], &pop->x[perm[start + i] * f],
                       f * sizeof *x);
            if (drifting && (frac = drift_fraction(&cfg->drift.profile,
                                                   ++t)) != 0.0)
                for (size_t i = 0; i < b; i++)
                    for (size_t j = 0; j < f; j++)
                        x[i * f + j] += frac * delta[j];
            score_mark(y, b * f);
            bn_train_forward(&layer, b, x, y, mean, var);
            res->props_pass += score_checks(&layer, b, x, y, var, scratch);
            res->props_total += 4 * f;
            if (last) {
                memcpy(&xs[start * f], x, b * f * sizeof *x);
                memcpy(&ytr[start * f], y, b * f * sizeof *y);
                kept = start + b;
                for (size_t j = 0; j < f; j++) {
                    /* Against the stream's mean at this update. */
                    double mu = drifting ? pop->mean[j] + frac * delta[j]
                                         : pop->mean[j];
                    double dm = mean[j] - mu;
                    double dv = var[j] - pop->var[j];
                    sum_dm += dm * dm;
                    sum_dv += dv * dv;
                    res->batch_mean_sq[j] += dm * dm;
                }
            }
            if (obs && obs->on_batch) {
                run_batch rb = {ep, k, b, f, &perm[start], x, y, mean, var,
                                &layer};
                obs->on_batch(obs->ctx, &rb);
            }
        }
    }
    if (est->pools) {
        for (size_t j = 0; j < f; j++)
            delta[j] *= frac; /* where the stream is at the last update */
        if (recompute_pooled(&layer, pop, perm, bmax, nb,
                             cfg->precise_batches, drifting ? delta : NULL,
                             err) != 0)
            goto done;
    }
    /* Adaptive batch norm: the statistics of the rows evaluation sees. */
    for (size_t j = 0; est->adapts && j < f; j++)
        pop_moments(eval->n, f, eval->x + j, &layer.rm[j], &layer.rv[j]);

    const size_t *rows = perm;
    if (eval == pop) {
        bn_eval_forward(&layer, kept, xs, yev);
    } else {
        if (eval_outputs(&layer, pop, eval, perm, cfg, x, mean, var, ytr,
                         yev, &erows, &kept, err) != 0)
            goto done;
        rows = erows;
    }
    double sq = 0.0;
    for (size_t i = 0; i < kept; i++)
        for (size_t j = 0; j < f; j++) {
            double d = ytr[i * f + j] - yev[i * f + j];
            sq += d * d;
            sq_j[j] += d * d;
        }
    if (obs && obs->on_outputs)
        obs->on_outputs(obs->ctx, kept, f, rows, ytr, yev);

    score_buffers_t sb;
    score_buffers(eval, layer.rm, layer.rv, &sb);
    res->updates = layer.updates;
    res->init_weight = est->init_weight
                           ? est->init_weight(cfg->layer.keep, layer.updates)
                           : 0.0;
    res->stats_err = sb.stats_err;
    res->mean_err = sb.mean_err;
    res->var_err = sb.var_err;
    res->worst_var_err = sb.worst_var_err;
    res->worst_var_feature = sb.worst_var_feature;
    res->stats_err_rel = sb.stats_err_rel;
    res->worst_var_rel = sb.worst_var_rel;
    res->train_eval_rmse = sqrt(sq / (double)(kept * f));
    res->batch_mean_err = sqrt(sum_dm / (double)(nb * f));
    res->batch_var_err = sqrt(sum_dv / (double)(nb * f));
    memcpy(res->running_mean, layer.rm, f * sizeof(double));
    memcpy(res->running_var, layer.rv, f * sizeof(double));
    memcpy(res->true_mean, eval->mean, f * sizeof(double));
    memcpy(res->true_var, eval->var, f * sizeof(double));
    for (size_t j = 0; j < f; j++) {
        res->train_eval[j] = sqrt(sq_j[j] / (double)kept);
        res->batch_mean_sq[j] /= (double)nb;
    }
    rc = 0;
done:
    free(x);
    free(y);
    free(scratch);
    free(xs);
    free(ytr);
    free(yev);
    free(mean);
    free(erows);
    if (have_layer)
        bn_free(&layer);
    return rc;
}
