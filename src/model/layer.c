/*
 * Training one batch-norm layer and scoring it. The last epoch's batch
 * statistics are kept so that, once the final buffers exist, each row's
 * train-mode output can be made again and set against its eval-mode
 * output, a batch at a time (or, when the layer is evaluated on rows of
 * its own, theirs).
 */
#include "model/layer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/keyid.h"
#include "base/num.h"
#include "model/order.h"
#include "model/score.h"

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
    /* layer_run's buffers: a batch's train output (and its guard), its
     * eval output and its inputs for an observer; the statistics of every
     * batch of an epoch and its shares of the drift; nine arrays per
     * feature and the result's six; the evaluation rows' order. */
    size_t b = cfg->batch_size, nb = n / b + 1;
    return (3 * b * f + 1 + 2 * nb * f + nb + 15 * f) * sizeof(double) +
           n * sizeof(size_t);
}

double layer_row_work(const run_config *cfg, size_t f, size_t k)
{
    (void)cfg, (void)k;
    return (double)f;
}

/* The estimators that recompute: the buffers become each feature's mean
 * and variance (divisor n, as pop_moments divides) over n rows of x, row
 * i at rows[i] (at i when rows is NULL). */
static void set_buffers(bn_layer *layer, size_t n, const double *x,
                        const size_t *rows)
{
    num_moments_cols(n, layer->f, layer->f, x, rows, layer->rm, layer->rv);
    for (size_t j = 0; j < layer->f; j++)
        layer->rv[j] /= (double)n;
}

/* The pooling estimators: after training, the buffers become the mean and
 * variance of every sample in the first k batches of the order, pooled,
 * so the spread between batch means counts as it does in the population;
 * under a drift, the mean as the stream has moved by the last update
 * (shift[j], NULL for none). */
static void recompute_pooled(bn_layer *layer, const pop_t *pop,
                             const size_t *perm, size_t b, size_t nb,
                             size_t k, const double *shift)
{
    if (k == 0)
        k = nb;
    size_t rows = k * b;
    if (rows > pop->n)
        rows = pop->n; /* the kept partial batch */
    set_buffers(layer, rows, pop->x, perm);
    for (size_t j = 0; shift && j < pop->f; j++)
        layer->rm[j] += shift[j];
}

/* What one pass over a batch needs of a feature: its statistics' sd and
 * the buffers', the sums of its train outputs for the self-checks, and
 * the sum of (y_train - y_eval)^2 over the rows compared. */
typedef struct {
    double *sd, *sd_run, *s1, *s2, *sq;
} batch_work;

/* One batch's train-mode outputs from its own mean and var (rows of x,
 * each feature moved by shift unless it is NULL) and, with the final
 * buffers (gap not NULL; w->sd_run their sd), its eval-mode outputs: the
 * sums of y - beta and (y - beta)^2 per feature for the self-checks,
 * (y - e)^2 added to *gap over the rows and each row's features in order
 * (and to w->sq per feature), and the outputs into y and e when they are
 * not NULL. One loop, so that the study's comparison costs about what
 * the two outputs do (make bench sets it against a bare kernel). */
static void batch_outputs(const bn_layer *l, size_t b, size_t ahead,
                          const double *x, const size_t *rows,
                          const double *shift, const double *mean,
                          const double *var, batch_work *w, double *gap,
                          double *y, double *e)
{
    size_t f = l->f;
    const double *g = l->gamma, *be = l->beta, *rm = l->rm;
    for (size_t j = 0; j < f; j++) {
        w->sd[j] = bn_sd(var[j], l->eps);
        w->s1[j] = w->s2[j] = 0.0;
    }
    double sq = gap ? *gap : 0.0;
    for (size_t i = 0; i < b; i++) {
        const double *r = &x[rows[i] * f];
        /* A shuffled order reads rows at random: the rows 16 ahead are
         * asked for while these are worked on (bn_prefetch). */
        if (i + BN_PREFETCH_ROWS < b + ahead)
            bn_prefetch(&x[rows[i + BN_PREFETCH_ROWS] * f], f);
        for (size_t j = 0; j < f; j++) {
            double in = shift ? r[j] + shift[j] : r[j];
            double t = bn_normalize_value(in, mean[j], w->sd[j], g[j],
                                          be[j]);
            double d = t - be[j];
            w->s1[j] += d;
            w->s2[j] += d * d;
            if (y)
                y[i * f + j] = t;
            if (gap) {
                double v = bn_normalize_value(in, rm[j], w->sd_run[j],
                                              g[j], be[j]);
                double dd = (t - v) * (t - v);
                sq += dd;
                w->sq[j] += dd;
                if (e)
                    e[i * f + j] = v;
            }
        }
    }
    if (gap)
        *gap = sq;
}

/* The rows' move at an update that has come frac of the drift's way
 * (delta the full move of each feature): into shift, which is returned,
 * or NULL when they have not moved. */
static const double *moved(double frac, const double *delta, size_t f,
                           double *shift)
{
    if (frac == 0.0)
        return NULL;
    for (size_t j = 0; j < f; j++)
        shift[j] = frac * delta[j];
    return shift;
}

/* The order the evaluation rows are compared in when they are not the
 * rows trained on: the training order when there are as many rows (the
 * training rows moved, row for row), else a shuffled order from the run's
 * seed. */
static int eval_order(const pop_t *pop, const pop_t *eval, const size_t *perm,
                      const run_config *cfg, size_t *rows, bn_error *err)
{
    if (eval->n == pop->n) {
        memcpy(rows, perm, eval->n * sizeof *rows);
        return 0;
    }
    order_spec ord;
    if (order_parse("shuffled", eval, &ord, err) != 0 ||
        order_make(&ord, eval, cfg->seed, rows, err) != 0)
        return -1;
    return 0;
}

int layer_run(const pop_t *pop, const pop_t *eval, const size_t *perm,
              const run_config *cfg, const run_observer *obs,
              run_result *res, bn_error *err)
{
    size_t n = pop->n, f = pop->f, bmax = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, bmax, cfg->partial);
    const bn_estimator_def *est = bn_estimator_get(cfg->layer.estimator);
    int drifting = cfg->drift.profile.kind != DRIFT_NONE &&
                   cfg->drift.size != 0.0;
    /* Evaluated on the rows trained on, as the last epoch saw them, or on
     * rows of its own, in batches of their own. */
    int own = eval == pop;
    int watch = obs && obs->on_batch, outputs = obs && obs->on_outputs;
    /* Nothing of N x F: the rows are read where they are, and the outputs
     * compared are made once the final buffers exist, batch by batch, from
     * each batch's statistics (the last epoch's, kept). A batch's outputs
     * are held only for an observer and for the determinism check. */
    double *stats = malloc((2 * nb * f + nb) * sizeof *stats);
    double *work = malloc(9 * f * sizeof *work);
    double *y = malloc((bmax * f + 1) * sizeof *y);
    double *e = malloc(bmax * f * sizeof *e);
    double *x = watch ? malloc(bmax * f * sizeof *x) : NULL;
    size_t *erows = own ? NULL : malloc(eval->n * sizeof *erows);
    bn_layer layer;
    int rc = -1, have_layer = bn_init(&layer, f, &cfg->layer) == 0;
    res->running_mean = malloc(6 * f * sizeof *res->running_mean);
    if (!stats || !work || !y || !e || (watch && !x) || (!own && !erows) ||
        !have_layer || !res->running_mean) {
        bn_fail(err, "out of memory");
        goto done;
    }
    res->running_var = res->running_mean + f;
    res->true_mean = res->running_mean + 2 * f;
    res->true_var = res->running_mean + 3 * f;
    res->train_eval = res->running_mean + 4 * f;
    res->batch_mean_sq = res->running_mean + 5 * f;
    double *fracs = stats + 2 * nb * f; /* the last epoch's drift shares */
    batch_work w = {work, work + f, work + 2 * f, work + 3 * f, work + 4 * f};
    double *delta = work + 5 * f, *shift = work + 6 * f;
    double *emean = work + 7 * f, *evar = work + 8 * f;
    for (size_t j = 0; j < f; j++) {
        /* The drift's full move of each feature, in its own units. */
        delta[j] = drifting ? cfg->drift.size * sqrt(pop->var[j]) : 0.0;
        res->batch_mean_sq[j] = 0.0;
        w.sq[j] = 0.0;
    }
    double sum_dm = 0.0, sum_dv = 0.0, frac = 0.0;
    size_t pass = 0, t = 0;
    for (size_t ep = 0; ep < cfg->epochs; ep++) {
        int last = ep + 1 == cfg->epochs;
        for (size_t k = 0; k < nb; k++) {
            size_t start = k * bmax;
            size_t b = start + bmax <= n ? bmax : n - start;
            const size_t *rows = &perm[start];
            double *mean = stats + 2 * k * f, *var = mean + f;
            const double *sh = NULL; /* this update's move of the rows */
            if (drifting) {
                frac = drift_fraction(&cfg->drift.profile, ++t);
                sh = moved(frac, delta, f, shift);
            }
            bn_batch_stats_rows(b, n - start - b, f, pop->x, rows, sh, mean,
                                var);
            bn_update(&layer, b, mean, var);
            if (last) {
                fracs[k] = sh ? frac : 0.0;
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
            if (!last || !own) {
                /* The last epoch's outputs are checked below as they are
                 * compared, when they are; the others' here. */
                batch_outputs(&layer, b, n - start - b, pop->x, rows, sh,
                              mean, var, &w, NULL, NULL, NULL);
                pass += score_checks(&layer, b, w.s1, w.s2, var);
            }
            if (watch) {
                for (size_t i = 0; i < b; i++)
                    for (size_t j = 0; j < f; j++)
                        x[i * f + j] = sh ? pop->x[rows[i] * f + j] + sh[j]
                                          : pop->x[rows[i] * f + j];
                bn_normalize_rows(&layer, b, x, NULL, NULL, mean, var, y);
                run_batch rb = {ep, k, b, f, rows, x, y, mean, var, &layer};
                obs->on_batch(obs->ctx, &rb);
            }
        }
    }
    if (est->pools) {
        for (size_t j = 0; j < f; j++)
            shift[j] = delta[j] * frac; /* the stream at the last update */
        recompute_pooled(&layer, pop, perm, bmax, nb, cfg->precise_batches,
                         drifting ? shift : NULL);
    }
    /* Adaptive batch norm: the statistics of the rows evaluation sees. */
    if (est->adapts)
        set_buffers(&layer, eval->n, eval->x, NULL);

    /* Each row's train-mode output against its eval-mode output under the
     * final buffers: the last epoch's batches in training order, each as
     * the drift moved it, or the evaluation rows in batches of their own
     * (a kept partial batch of one row has no variance and is left out). */
    const double *ex = pop->x, *last_sh = NULL;
    const size_t *order = perm;
    size_t ne = n, nbe = nb;
    if (!own) {
        if (eval_order(pop, eval, perm, cfg, erows, err) != 0)
            goto done;
        ex = eval->x, order = erows, ne = eval->n;
        nbe = run_batches_per_epoch(ne, bmax, cfg->partial);
    }
    for (size_t j = 0; j < f; j++)
        w.sd_run[j] = bn_sd(layer.rv[j], layer.eps);
    double sq = 0.0;
    size_t kept = 0, b = 0;
    for (size_t k = 0; k < nbe; k++) {
        size_t start = k * bmax;
        size_t bk = start + bmax <= ne ? bmax : ne - start;
        const size_t *rows = &order[start];
        const double *sh = NULL, *mean = emean, *var = evar;
        if (own) {
            mean = stats + 2 * k * f, var = mean + f;
            sh = moved(fracs[k], delta, f, shift);
        } else {
            if (bk < 2)
                break;
            bn_batch_stats_rows(bk, ne - start - bk, f, ex, rows, NULL, emean,
                                evar);
        }
        /* The eval outputs are kept where an observer or the determinism
         * check below reads them: the last batch's (or the one before a
         * partial batch left out). */
        int keep = outputs || k + 2 >= nbe;
        batch_outputs(&layer, bk, ne - start - bk, ex, rows, sh, mean, var,
                      &w, &sq, outputs ? y : NULL, keep ? e : NULL);
        if (own)
            pass += score_checks(&layer, bk, w.s1, w.s2, var);
        if (outputs)
            obs->on_outputs(obs->ctx, start, bk, f, rows, y, e);
        kept = start + bk, b = bk, last_sh = sh;
    }
    if (outputs && kept == 0)
        obs->on_outputs(obs->ctx, 0, 0, f, order, y, e);
    /* The two self-checks that are properties of the code rather than of
     * a batch's values, made once and counted for every batch and feature
     * as the others are: the last row compared, evaluated again on its
     * own, fills exactly its F outputs, with the bits the pass above gave
     * it. With no row compared they are not made, and so not passed. */
    size_t counted = cfg->epochs * nb * f;
    if (kept > 0) {
        score_mark(y, f);
        bn_normalize_rows(&layer, 1, ex, &order[kept - 1], last_sh, layer.rm,
                          layer.rv, y);
        if (score_written(y, f))
            pass += counted;
        if (memcmp(y, &e[(b - 1) * f], f * sizeof *y) == 0)
            pass += counted;
    }
    res->props_pass = pass;
    res->props_total = 4 * counted;

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
        res->train_eval[j] = sqrt(w.sq[j] / (double)kept);
        res->batch_mean_sq[j] /= (double)nb;
    }
    rc = 0;
done:
    free(stats);
    free(work);
    free(y);
    free(e);
    free(x);
    free(erows);
    if (have_layer)
        bn_free(&layer);
    return rc;
}
