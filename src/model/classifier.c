/*
 * The classifier model: the labels as net.h wants them, training, and
 * the scores of score.h, after training and, for curve.tsv, after every
 * epoch as if training had stopped there.
 */
#include "model/classifier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/net.h"
#include "model/keyid.h"
#include "model/order.h"
#include "model/score.h"

int classifier_uses(const run_config *cfg, int key)
{
    static const int batch_norm_keys[] = {
        KEY_EPS, KEY_MOMENTUM, KEY_WEIGHTS, KEY_VARIANCE, KEY_ESTIMATOR,
        KEY_PRECISE, KEY_FREEZE_AFTER, KEY_NEW_WEIGHT,
    };
    if (cfg->clf.norm == CLF_NORM_NONE)
        for (size_t i = 0; i < sizeof batch_norm_keys / sizeof *batch_norm_keys;
             i++)
            if (key == batch_norm_keys[i])
                return 0;
    if (key == KEY_PRECISE)
        return bn_estimator_get(cfg->layer.estimator)->pools;
    return 1;
}

size_t classifier_bytes(const run_config *cfg, size_t n, size_t f, size_t k)
{
    size_t h = cfg->clf.hidden, b = cfg->batch_size < 3 ? 3 : cfg->batch_size;
    /* net_init's one block, its bn_layer, the rows' labels, the scores'
     * orders and classes, fc1's outputs over the rows (net_hidden_moments)
     * and a shifted copy of the evaluation rows; a weight matrix in pairs,
     * the net's and the moments'. */
    size_t np = h * f + h + k * h + k;
    size_t doubles = 3 * np + 4 * h + b * f + 5 * b * h + 3 * b * k + b +
                     3 * h + 8 * h + n * h + n * f + 2 * (f > k ? f : k) * h;
    return doubles * sizeof(double) + b * sizeof(int) +
           n * (4 * sizeof(int) + 2 * sizeof(size_t));
}

double classifier_row_work(const run_config *cfg, size_t f, size_t k)
{
    /* A row's pass through the weights, h (f + k) of them, takes about
     * what the layer's pass over a feature does (both measured: training,
     * the scores after each epoch and the moments together are about
     * eight multiply-adds a weight). */
    return (double)cfg->clf.hidden * (double)(f + k);
}

static int blamed(int *blame, int k0, int k1)
{
    if (blame)
        blame[0] = k0, blame[1] = k1;
    return -1;
}

int classifier_check(const run_config *cfg, const pop_t *pop, int *blame,
                     bn_error *err)
{
    if (!pop->label.column)
        return bn_fail(err, "the classifier needs class labels: "
                            "[population] classes = K for the generated "
                            "population, or label = COLUMN for a file"),
               blamed(blame, KEY_MODEL, KEY_POP_CLASSES);
    if (pop->label.n_levels < 2)
        return bn_fail(err, "the classifier needs at least two classes; "
                            "column '%s' has %zu",
                       pop->label.column, pop->label.n_levels),
               blamed(blame, KEY_POP_LABEL, KEY_MODEL);
    if (cfg->clf.hidden < 1 || cfg->clf.hidden > CLF_MAX_HIDDEN)
        return bn_fail(err, "hidden must be from 1 to %d, got %zu",
                       CLF_MAX_HIDDEN, cfg->clf.hidden),
               blamed(blame, KEY_HIDDEN, -1);
    if (!(isfinite(cfg->clf.lr) && cfg->clf.lr >= 0.0))
        return bn_fail(err, "lr must be finite and >= 0, got %g",
                       cfg->clf.lr),
               blamed(blame, KEY_LR, -1);
    if (!(cfg->clf.sgd_momentum >= 0.0 && cfg->clf.sgd_momentum < 1.0))
        return bn_fail(err, "sgd_momentum must be in [0, 1), got %g",
                       cfg->clf.sgd_momentum),
               blamed(blame, KEY_SGD_MOMENTUM, -1);
    if (!(isfinite(cfg->clf.weight_decay) && cfg->clf.weight_decay >= 0.0))
        return bn_fail(err, "weight_decay must be finite and >= 0, got %g",
                       cfg->clf.weight_decay),
               blamed(blame, KEY_WEIGHT_DECAY, -1);
    if (cfg->clf.norm != CLF_NORM_BATCH)
        return 0;
    /* Batch norm's settings as the layer checks them; gamma and beta are
     * learned from 1 and 0. */
    bn_config bn = cfg->layer;
    bn.gamma = 1.0;
    bn.beta = 0.0;
    bn_field field;
    if (bn_check(&bn, &field, err) != 0) {
        static const int key_of[] = {
            [BN_FIELD_MOMENTUM] = KEY_MOMENTUM,
            [BN_FIELD_ESTIMATOR] = KEY_ESTIMATOR,
            [BN_FIELD_GAMMA] = KEY_MODEL,
            [BN_FIELD_BETA] = KEY_MODEL,
            [BN_FIELD_EPS] = KEY_EPS,
        };
        return blamed(blame, key_of[field], KEY_ESTIMATOR);
    }
    return 0;
}

/* What the scores need: the rows as net.h takes them and the orders the
 * training-mode scores cut their batches from. */
typedef struct {
    const run_config *cfg;
    net_data train, eval;
    const size_t *train_perm; /* the order trained on */
    size_t *fit_perm, *eval_perm;
    const run_observer *obs;
    bn_error *err;
    int failed;
    /* The scores after the last epoch, for an observer of the epochs:
     * the run's own, which are then not made a second time. */
    run_result last;
    int have_last;
} scoring;

static int *labels_of(const pop_t *pop)
{
    int *l = malloc((pop->n ? pop->n : 1) * sizeof *l);
    for (size_t i = 0; l && i < pop->n; i++)
        l[i] = (int)pop->label.of_row[i];
    return l;
}

static int shuffled(const pop_t *pop, uint64_t seed, size_t **perm,
                    bn_error *err)
{
    order_spec ord;
    *perm = malloc((pop->n ? pop->n : 1) * sizeof **perm);
    if (!*perm)
        return bn_fail(err, "out of memory");
    return order_parse("shuffled", pop, &ord, err) != 0 ||
                   order_make(&ord, pop, seed, *perm, err) != 0
               ? -1
               : 0;
}

/* Every classifier score of net into res (which holds no buffers). */
static int score(net_t *net, const scoring *s, run_result *res,
                 bn_error *err)
{
    net_score tr, ev, ftr, fev;
    size_t n = s->eval.n, same = 0;
    int *pred = malloc(2 * n * sizeof *pred);
    if (!pred)
        return bn_fail(err, "out of memory");
    int rc = net_score_train_mode(net, &s->eval, s->eval_perm, &tr, pred,
                                  err) != 0 ||
                     net_score_eval_mode(net, &s->eval, &ev, pred + n, err) !=
                         0 ||
                     net_score_train_mode(net, &s->train, s->fit_perm, &ftr,
                                          NULL, err) != 0 ||
                     net_score_eval_mode(net, &s->train, &fev, NULL, err) != 0
                 ? -1
                 : 0;
    for (size_t i = 0; i < n; i++)
        same += pred[i] == pred[n + i];
    free(pred);
    if (rc != 0)
        return -1;
    res->agreement = (double)same / (double)n;
    res->acc_train_mode = tr.accuracy;
    res->acc_eval_mode = ev.accuracy;
    res->loss_train_mode = tr.loss;
    res->loss_eval_mode = ev.loss;
    res->fit_acc_train_mode = ftr.accuracy;
    res->fit_acc_eval_mode = fev.accuracy;
    res->fit_loss_train_mode = ftr.loss;
    res->fit_loss_eval_mode = fev.loss;
    if (net->norm != CLF_NORM_BATCH)
        return 0;
    /* The buffers against the moments of fc1's outputs over the training
     * rows under the weights as they now are. */
    size_t h = net->h;
    double *mu = malloc(2 * h * sizeof *mu);
    if (!mu)
        return bn_fail(err, "out of memory");
    rc = net_hidden_moments(net, &s->train, NULL, s->train.n, mu, mu + h,
                            err);
    if (rc == 0) {
        score_buffers_t sb;
        score_buffers_of(h, mu, mu + h, net->bn.rm, net->bn.rv, &sb);
        res->stats_err = sb.stats_err;
        res->stats_err_rel = sb.stats_err_rel;
        res->mean_err_rel = sb.mean_err_rel;
        res->var_err_rel = sb.var_err_rel;
        res->updates = net->bn.updates;
        const bn_estimator_def *est =
            bn_estimator_get(s->cfg->layer.estimator);
        res->init_weight =
            est->init_weight
                ? est->init_weight(s->cfg->layer.keep, net->bn.updates)
                : 0.0;
    }
    free(mu);
    return rc;
}

/* Adaptive batch norm: the buffers become the moments of what batch norm
 * sees over the evaluation rows, under the weights as they are. */
static int adapt(net_t *net, const scoring *s, bn_error *err)
{
    if (net->norm != CLF_NORM_BATCH ||
        !bn_estimator_get(s->cfg->layer.estimator)->adapts)
        return 0;
    return net_hidden_moments(net, &s->eval, NULL, s->eval.n, net->bn.rm,
                              net->bn.rv, err);
}

static void on_step(void *ctx, const net_step *st)
{
    scoring *s = ctx;
    if (st->epoch == 0 && st->index == 0 && s->obs->weights)
        net_write_grads(s->obs->weights, "grad", (net_t *)st->net);
}

/* The scores the run would have if it stopped after this epoch: the
 * estimator's recompute on the buffers, which are then put back. */
static void on_epoch(void *ctx, unsigned long epoch, net_t *net)
{
    scoring *s = ctx;
    if (s->failed || !s->obs->on_epoch)
        return;
    size_t h = net->h;
    double *keep = malloc(2 * h * sizeof *keep);
    run_result r;
    memset(&r, 0, sizeof r);
    if (!keep) {
        s->failed = bn_fail(s->err, "out of memory");
        return;
    }
    memcpy(keep, net->bn.rm, h * sizeof *keep);
    memcpy(keep + h, net->bn.rv, h * sizeof *keep);
    if (net_finish(net, s->cfg, &s->train, s->train_perm, s->err) != 0 ||
        adapt(net, s, s->err) != 0 || score(net, s, &r, s->err) != 0)
        s->failed = -1;
    memcpy(net->bn.rm, keep, h * sizeof *keep);
    memcpy(net->bn.rv, keep + h, h * sizeof *keep);
    free(keep);
    if (s->failed)
        return;
    s->obs->on_epoch(s->obs->ctx, epoch, &r);
    /* After the last epoch training ends, and net_train's own net_finish
     * and the run's adapt leave the net as this did: these are the run's
     * scores (score fills a zeroed result, as the run's is). */
    if (epoch + 1 == s->cfg->epochs)
        s->last = r, s->have_last = 1;
}

int classifier_train(const pop_t *train, const pop_t *eval,
                     const size_t *perm, const run_config *cfg,
                     const run_observer *obs, net_t *net, run_result *res,
                     bn_error *err)
{
    static const run_observer none = {NULL, NULL, NULL, NULL, NULL};
    size_t f = train->f, k = train->label.n_levels;
    int *ltrain = labels_of(train), *leval = labels_of(eval);
    scoring s = {.cfg = cfg,
                 .train = {train->n, f, k, train->x, ltrain},
                 .eval = {eval->n, f, k, eval->x, leval},
                 .train_perm = perm,
                 .obs = obs ? obs : &none,
                 .err = err};
    memset(net, 0, sizeof *net);
    memset(res, 0, sizeof *res); /* the scores fill it from zero, whichever
                                  * of the two ways they are made */
    int rc = -1;
    if (!ltrain || !leval) {
        bn_fail(err, "out of memory");
        goto done;
    }
    if (shuffled(train, cfg->seed, &s.fit_perm, err) != 0 ||
        shuffled(eval, cfg->seed, &s.eval_perm, err) != 0 ||
        net_init(net, cfg, f, k, err) != 0)
        goto done;
    if (s.obs->weights)
        net_write_weights(s.obs->weights, "initial", net);
    net_observer co = {on_step, on_epoch, &s};
    if (net_train(net, cfg, &s.train, perm, &co, err) != 0 || s.failed ||
        adapt(net, &s, err) != 0)
        goto done;
    if (s.have_last)
        *res = s.last;
    else if (score(net, &s, res, err) != 0)
        goto done;
    if (s.obs->weights)
        net_write_weights(s.obs->weights, "final", net);
    rc = 0;
done:
    if (rc != 0)
        net_free(net);
    free(ltrain);
    free(leval);
    free(s.fit_perm);
    free(s.eval_perm);
    return rc;
}

int classifier_run(const pop_t *train, const pop_t *eval, const size_t *perm,
                   const run_config *cfg, const run_observer *obs,
                   run_result *res, bn_error *err)
{
    net_t net;
    int rc = classifier_train(train, eval, perm, cfg, obs, &net, res, err);
    if (rc == 0)
        net_free(&net);
    return rc;
}
